/**
 * `npm run bench` / `bun bench/run.ts` / `deno run -A bench/run.ts`.
 *
 * Runs each benchmark case in a fresh child process of the same runtime
 * (with a GC hook: `--expose-gc` on Node, `--v8-flags=--expose-gc` on Deno,
 * `Bun.gc` on Bun), one after another, then prints a table: the headline
 * figures (ratios, with their goals) first, absolute ns as secondary info.
 *
 *   --json <file>   also write every result as JSON to <file> (`-`: stdout, table to stderr)
 *   --only a,b      run only these cases (see --list)
 *   --quick         scale iteration counts down (a smoke test, not a measurement)
 *   --list          list the cases and exit
 *
 * @module
 */

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { formatValue, runtime, type CaseResult, type Figure } from './harness.ts';
import { machineInfo, type MachineInfo } from './support/machine.ts';

interface CaseSpec {
  id: string;
  file: string;
  what: string;
}

const CASES: readonly CaseSpec[] = [
  { id: 'zero-cost', file: 'cases/zero-cost', what: 'unsubscribed emit vs Map.get; agent loop with 15 hook sites vs its hook-free twin' },
  { id: 'import-cost', file: 'cases/import-cost', what: 'fresh-process import of nemo-relay-hooks/hooks and of the main entry vs @opentelemetry/api' },
  { id: 'per-event', file: 'cases/per-event', what: 'cost per event by hook kind: plugin+memory, plugin+native, bare native, OTel SDK, OTel no-op' },
  { id: 'memory-paths', file: 'cases/memory-paths', what: 'memory relay per event: ATOF only vs ATOF + ATIF vs the JSON.stringify floor' },
  { id: 'memory-steady', file: 'cases/memory-steady', what: 'memory relay, warm, whole 80-hook sessions: ATOF + ATIF vs ATOF only, CPU per event, drain included' },
  { id: 'cold', file: 'cases/cold', what: 'fresh process: 300 sessions x 13 hooks right after createNemoRelayPlugin, ATOF + ATIF, CPU per hook, memory vs native' },
  { id: 'throughput', file: 'cases/throughput', what: '1,000,000-event hook stream into ATOF + ATIF on the memory backend; events/s and peak RSS' },
  { id: 'memory-sessions', file: 'cases/memory-sessions', what: 'bytes per open session with 10,000 concurrent sessions' },
  { id: 'memory-cycles', file: 'cases/memory-cycles', what: 'heap after 1,000,000 session open/close cycles vs before' },
  { id: 'otlp-export', file: 'cases/otlp-export', what: 'a span exported over OTLP/HTTP by the memory relay vs the OTel SDK BatchSpanProcessor with the same exporter' },
  { id: 'memory-eviction', file: 'cases/memory-eviction', what: 'sessions never closed: maxSessions / idle TTL eviction keeps the heap bounded' },
  { id: 'ai-sdk-run', file: 'cases/ai-sdk-run', what: 'AI SDK generateText, 2 steps and a tool: instrumentAiSdk with and without its step binding vs the bare SDK' },
  { id: 'langchain-run', file: 'cases/langchain-run', what: 'LangChain runs: instrumentLangChain\'s configure hook vs the handler in callbacks; unrecorded runs in another context' },
  { id: 'viewer-large-atof', file: 'cases/viewer-large-atof', what: 'the viewer on a 100 MB ATOF file: view --serve\'s index, a page, a session opened, vs parsing every line; heap per file byte' },
];

export interface BenchRun {
  runtime: typeof runtime;
  machine: MachineInfo;
  date: string;
  scale: number;
  cases: CaseResult[];
  failures: { id: string; reason: string }[];
}

interface Args {
  json: string | null;
  only: string[] | null;
  quick: boolean;
  list: boolean;
}

function parseArgs(argv: readonly string[]): Args {
  const args: Args = { json: null, only: null, quick: false, list: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--json') {
      const next = argv[i + 1];
      if (next !== undefined && (next === '-' || !next.startsWith('--'))) {
        args.json = next;
        i += 1;
      } else {
        args.json = '-';
      }
    } else if (arg.startsWith('--json=')) {
      args.json = arg.slice('--json='.length) || '-';
    } else if (arg === '--only') {
      args.only = (argv[++i] ?? '').split(',').filter(Boolean);
    } else if (arg.startsWith('--only=')) {
      args.only = arg.slice('--only='.length).split(',').filter(Boolean);
    } else if (arg === '--quick') {
      args.quick = true;
    } else if (arg === '--list') {
      args.list = true;
    } else {
      throw new Error(`unknown argument ${JSON.stringify(arg)} (expected --json [file], --only a,b, --quick, --list)`);
    }
  }
  return args;
}

const here = path.dirname(fileURLToPath(import.meta.url));
// Node runs the compiled copy (.js), Bun and Deno the sources (.ts).
const extension = import.meta.url.endsWith('.ts') ? '.ts' : '.js';

function childCommand(file: string): string[] {
  const target = path.join(here, `${file}${extension}`);
  if (runtime.name === 'deno') return [process.execPath, 'run', '-A', '--v8-flags=--expose-gc', target];
  if (runtime.name === 'bun') return [process.execPath, target];
  return [process.execPath, '--expose-gc', target];
}

function runCase(spec: CaseSpec, scale: number, dir: string): CaseResult {
  const out = path.join(dir, `${spec.id}.json`);
  const [command, ...args] = childCommand(spec.file);
  process.stderr.write(`\n# ${spec.id} (${runtime.label}): ${spec.what}\n`);
  const started = Date.now();
  const child = spawnSync(command!, args, {
    cwd: path.resolve(here, '..'),
    env: { ...process.env, BENCH_OUT: out, BENCH_SCALE: String(scale) },
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 * 1024 * 1024,
    timeout: 60 * 60 * 1000,
  });
  const stdout = child.stdout?.toString() ?? '';
  if (stdout.trim() !== '') process.stderr.write(stdout);
  if (child.error) throw new Error(`could not run ${spec.id}: ${child.error.message}`);
  if (child.status !== 0) throw new Error(`${spec.id} exited with ${child.status ?? child.signal}`);
  const result = JSON.parse(readFileSync(out, 'utf8')) as CaseResult;
  process.stderr.write(`# ${spec.id} done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  return result;
}

function printTable(run: BenchRun, write: (line: string) => void): void {
  const m = run.machine;
  write('');
  write(`nemo-relay-hooks benchmarks: ${run.runtime.label}; ${m.cpu}, ${m.cores} cores, ${m.ramGiB} GiB RAM; ${run.date}${run.scale !== 1 ? `; QUICK (scale ${run.scale}), not a measurement` : ''}`);
  let pass = 0;
  let miss = 0;
  const missed: string[] = [];
  for (const result of run.cases) {
    write('');
    write(`${result.id}: ${result.title}`);
    for (const fig of result.figures) {
      write(`  ${fig.label.padEnd(66)} ${formatValue(fig.value, fig.unit).padStart(14)}  ${goalText(fig)}`);
      if (fig.pass === true) pass += 1;
      if (fig.pass === false) {
        miss += 1;
        missed.push(`${result.id}: ${fig.label}`);
      }
    }
    if (result.rows.length > 0) {
      write(`  ${'absolute (median of batches)'.padEnd(66)} ${'ns/op'.padStart(14)}  incl. drain`);
      for (const row of result.rows) {
        const drained = row.nsDrained !== row.ns ? formatValue(row.nsDrained, 'ns') : '';
        write(`    ${row.label.padEnd(64)} ${formatValue(row.ns, 'ns').padStart(14)}  ${drained}`);
      }
    }
  }
  for (const failure of run.failures) write(`\n${failure.id}: FAILED: ${failure.reason}`);
  write('');
  write(`goals: ${pass} pass, ${miss} miss${missed.length ? ` (${missed.join('; ')})` : ''}${run.failures.length ? `; ${run.failures.length} case(s) failed to run` : ''}`);
}

function goalText(fig: Figure): string {
  if (!fig.goal) return '';
  return `goal ${fig.goal.op} ${formatValue(fig.goal.target, fig.unit)}  ${fig.pass ? 'PASS' : 'MISS'}`;
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  if (args.list) {
    for (const spec of CASES) process.stdout.write(`${spec.id.padEnd(18)} ${spec.what}\n`);
    return 0;
  }
  const selected = args.only ? CASES.filter((spec) => args.only!.includes(spec.id)) : CASES;
  const unknown = args.only?.filter((id) => !CASES.some((spec) => spec.id === id)) ?? [];
  if (unknown.length > 0) throw new Error(`unknown case(s): ${unknown.join(', ')}; see --list`);
  const scale = args.quick ? 0.05 : Number(process.env.BENCH_SCALE) > 0 ? Number(process.env.BENCH_SCALE) : 1;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nemo-relay-bench-'));
  const run: BenchRun = { runtime, machine: machineInfo(), date: new Date().toISOString(), scale, cases: [], failures: [] };
  try {
    for (const spec of selected) {
      try {
        run.cases.push(runCase(spec, scale, dir));
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        process.stderr.write(`# ${spec.id} FAILED: ${reason}\n`);
        run.failures.push({ id: spec.id, reason });
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const toStdout = args.json === '-';
  printTable(run, (line) => (toStdout ? process.stderr : process.stdout).write(`${line}\n`));
  if (args.json !== null) {
    const json = `${JSON.stringify(run, null, 2)}\n`;
    if (toStdout) process.stdout.write(json);
    else writeFileSync(args.json, json);
  }
  return run.failures.length > 0 ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 2;
  },
);
