/**
 * Import cost: what `import` of our entry points costs a fresh process,
 * against `@opentelemetry/api` (what a host pays for the most common
 * observability API) measured in the same run.
 *
 * Each sample is a fresh child process of the same runtime that times one
 * dynamic `import()` of the target (and nothing else); targets are
 * interleaved round by round and each figure is the median of per-round
 * ratios. Every runtime imports the built `dist/` (what `npm install` gives
 * Node, Bun and Deno users alike: one bundled module per entry); Bun and
 * Deno also time the `.ts` sources (what a Deno user importing the
 * sources, or a Bun user running them, loads), reported beside the goal.
 *
 * @module
 */

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CaseReport, figure, iterations, median, runtime, scale } from '../harness.ts';

const report = new CaseReport('import-cost', 'Import cost of the entry points, fresh process');
const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, runtime.name === 'node' ? '../../../..' : '../..');
const dist = path.join(root, 'dist');
const fromSource = runtime.name !== 'node';

const targets = {
  hooks: pathToFileURL(path.join(dist, 'src/hooks/index.js')).href,
  main: pathToFileURL(path.join(dist, 'src/index.js')).href,
  otelApi: '@opentelemetry/api',
  ...(fromSource
    ? {
        hooksSource: pathToFileURL(path.join(root, 'src/hooks/index.ts')).href,
        mainSource: pathToFileURL(path.join(root, 'src/index.ts')).href,
      }
    : {}),
} as Record<'hooks' | 'main' | 'otelApi' | 'hooksSource' | 'mainSource', string>;
type Target = keyof typeof targets;

const warmDir = mkdtempSync(path.join(os.tmpdir(), 'import-cost-'));
const warmModule = pathToFileURL(path.join(warmDir, 'warm.mjs')).href;
writeFileSync(path.join(warmDir, 'warm.mjs'), 'export const warm = true;\n');

function sample(target: Target): number {
  // A host is already running module code when it imports us, so the runtime's one-time module-loader start
  // (about 5 ms on Node 20 for the first file module, even an empty one) is paid first, then the target alone is timed.
  const script = `await import(${JSON.stringify(warmModule)}); const t0 = performance.now(); await import(${JSON.stringify(targets[target])}); console.log(performance.now() - t0);`;
  const args =
    runtime.name === 'deno'
      ? ['eval', '--ext=ts', script]
      : runtime.name === 'bun'
        ? ['--eval', script]
        : ['--input-type=module', '--eval', script];
  const child = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  if (child.status !== 0) throw new Error(`import of ${target} failed: ${child.stderr}`);
  return Number(child.stdout.trim().split('\n').pop());
}

const ROUNDS = iterations(15, 2);
const order: Target[] = fromSource ? ['hooks', 'main', 'otelApi', 'hooksSource', 'mainSource'] : ['hooks', 'main', 'otelApi'];
for (const t of order) sample(t); // warm the file-system cache and the runtimes' compile caches
const times: Record<Target, number[]> = { hooks: [], main: [], otelApi: [], hooksSource: [], mainSource: [] };
const hooksOverApi: number[] = [];
const mainOverApi: number[] = [];
const sourceOverApi: { hooks: number[]; main: number[] } = { hooks: [], main: [] };
for (let round = 0; round < ROUNDS; round++) {
  const rotated = [...order.slice(round % order.length), ...order.slice(0, round % order.length)];
  const ms: Partial<Record<Target, number>> = {};
  for (const t of rotated) ms[t] = sample(t);
  for (const t of order) times[t].push(ms[t]!);
  hooksOverApi.push(ms.hooks! / ms.otelApi!);
  mainOverApi.push(ms.main! / ms.otelApi!);
  if (fromSource) {
    sourceOverApi.hooks.push(ms.hooksSource! / ms.otelApi!);
    sourceOverApi.main.push(ms.mainSource! / ms.otelApi!);
  }
}

report.figure(figure('hooks_over_otel_api', 'import nemo-relay-hooks/hooks / import @opentelemetry/api', median(hooksOverApi), 'x', { op: '<=', target: 0.25 }));
report.figure(figure('main_over_otel_api', 'import nemo-relay-hooks / import @opentelemetry/api', median(mainOverApi), 'x', { op: '<=', target: 1.0 }));
if (fromSource) {
  report.figure(figure('hooks_source_over_otel_api', 'import of the .ts sources of nemo-relay-hooks/hooks / import @opentelemetry/api', median(sourceOverApi.hooks), 'x'));
  report.figure(figure('main_source_over_otel_api', 'import of the .ts sources of nemo-relay-hooks / import @opentelemetry/api', median(sourceOverApi.main), 'x'));
}
const labels: Record<Target, string> = {
  hooks: 'nemo-relay-hooks/hooks',
  main: 'nemo-relay-hooks',
  otelApi: '@opentelemetry/api',
  hooksSource: 'nemo-relay-hooks/hooks from its .ts sources',
  mainSource: 'nemo-relay-hooks from its .ts sources',
};
/**
 * A second opinion that does not depend on the machine's load (Node only,
 * when `valgrind` is installed): the instructions callgrind counts for a
 * process that imports the warm module and then the target, minus the same
 * process without the target, the medians of three rounds interleaved.
 * Wall-clock imports on a busy two-core VM moved 3x between samples; these
 * counts move by about 1% (bench/RESULTS.md, "The main entry's import").
 */
function instructions(target: Target | null): number | null {
  const script = `await import(${JSON.stringify(warmModule)});${target === null ? '' : ` await import(${JSON.stringify(targets[target])});`}`;
  const child = spawnSync('valgrind', ['--tool=callgrind', '--callgrind-out-file=/dev/null', process.execPath, '--input-type=module', '--eval', script], { cwd: root, encoding: 'utf8' });
  const collected = /Collected : (\d+)/.exec(child.stderr ?? '');
  return child.status === 0 && collected ? Number(collected[1]) : null;
}
const valgrind = runtime.name === 'node' && scale >= 1 && spawnSync('valgrind', ['--version'], { encoding: 'utf8' }).status === 0;
if (valgrind) {
  const counts: Record<'none' | 'main' | 'otelApi', number[]> = { none: [], main: [], otelApi: [] };
  for (let round = 0; round < 3; round++) {
    for (const [key, target] of [['none', null], ['otelApi', 'otelApi'], ['main', 'main']] as const) {
      const count = instructions(target);
      if (count !== null) counts[key].push(count);
    }
  }
  if (counts.none.length > 0 && counts.main.length > 0 && counts.otelApi.length > 0) {
    const base = median(counts.none);
    const main = median(counts.main) - base;
    const api = median(counts.otelApi) - base;
    report.figure(figure('main_over_otel_api_instructions', 'import nemo-relay-hooks / import @opentelemetry/api, in instructions (callgrind, Node)', Math.round((main / api) * 1000) / 1000, 'x', { op: '<=', target: 1.0 }));
    report.figure(figure('main_instructions_m', 'import nemo-relay-hooks: instructions (callgrind, median of 3, millions)', Math.round(main / 1e5) / 10, 'M'));
    report.figure(figure('otel_api_instructions_m', 'import @opentelemetry/api: instructions (callgrind, median of 3, millions)', Math.round(api / 1e5) / 10, 'M'));
  } else {
    report.note('callgrind did not report instruction counts; only the wall-clock figures are given.');
  }
} else if (runtime.name === 'node') {
  report.note(scale < 1 ? 'Instruction counts (callgrind) are skipped in a --quick run.' : 'valgrind is not installed: no instruction counts (apt-get install valgrind), only the wall-clock figures.');
}
for (const t of order) report.figure(figure(`${t}_ms`, `import ${labels[t]} (median)`, Math.round(median(times[t]) * 100) / 100, 'ms'));
report.fact('rounds', ROUNDS);
report.note('Time of one dynamic import() inside a fresh child process, after the module loader has loaded one empty file module (runtime and loader start-up excluded); the ratio is the median of per-round ratios.');
rmSync(warmDir, { recursive: true, force: true });
report.write();
