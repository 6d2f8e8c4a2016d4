/**
 * `npm run bench:all`: the whole bench on Node, Bun and Deno in one command,
 * runtimes one after another (each `bench/run.ts` starts every case in a
 * fresh child of its runtime), then the tables for `bench/RESULTS.md`.
 *
 *   --only a,b|issue-21   these cases only (`issue-21`: the cases of issue 21's goals)
 *   --runtimes node,bun   these runtimes only (default node,bun,deno)
 *   --quick               tiny iteration counts: checks that everything runs, measures nothing
 *   --out <dir>           where the results go (default .tmp/bench/results)
 *
 * It writes `<runtime>.json` (each runtime's `--json`), `tables.md` (every
 * table of "All figures": `report.ts`'s output) and `issue-21.md` (issue
 * 21's goal lines and the figures beside them) into `--out`, and prints the
 * last one. Exit code 1 when a runtime or a case failed to run.
 *
 * @module
 */

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import type { RuntimeName } from './harness.ts';
import type { BenchRun } from './run.ts';
import { pickedFigures, resultTables, type FigurePick } from './tables.ts';

/** The cases issue 21's goals are measured by (including "everything that holds today keeps holding"). */
const ISSUE_21_CASES = ['zero-cost', 'import-cost', 'per-event', 'memory-steady', 'cold', 'throughput', 'memory-sessions', 'memory-cycles'];

/** Issue 21's goal lines, in the issue's order, with the figures that explain each beside it. */
const ISSUE_21_FIGURES: readonly FigurePick[] = [
  // Memory relay with ATOF + ATIF ≤ 2.0× ATOF only per event, steady state, flush included.
  { caseId: 'memory-steady', figureId: 'atif_over_atof' },
  { caseId: 'memory-steady', figureId: 'disk.atif_over_atof' },
  { caseId: 'memory-steady', figureId: 'atif_every_turn_over_atof' },
  // What the goal's budget holds before any trajectory code runs (the output's text and files).
  { caseId: 'memory-steady', figureId: 'stringify_floor_over_atof' },
  { caseId: 'memory-steady', figureId: 'atif_floor_over_atof' },
  { caseId: 'memory-steady', figureId: 'atif_over_floor' },
  // Item 1: what the byte path buys at the plugin level.
  { caseId: 'memory-steady', figureId: 'objects_over_bytes' },
  { caseId: 'memory-steady', figureId: 'atif_over_objects' },
  // Replay into ATOF + ATIF ≥ 100k events/s and ≥ 0.5× ATOF only; the file-creation floor beside it.
  { caseId: 'throughput', figureId: 'events_per_second' },
  { caseId: 'throughput', figureId: 'atif_rate_over_atof_rate' },
  { caseId: 'throughput', figureId: 'events_per_second_atof_only' },
  { caseId: 'throughput', figureId: 'events_per_second_warm' },
  { caseId: 'throughput', figureId: 'warm_atif_rate_over_atof_rate' },
  { caseId: 'throughput', figureId: 'events_per_second_tmpfs' },
  { caseId: 'throughput', figureId: 'atif_write_floor_seconds' },
  { caseId: 'throughput', figureId: 'ceiling_events_per_second' },
  { caseId: 'throughput', figureId: 'ceiling_events_per_second_pool' },
  { caseId: 'throughput', figureId: 'peak_rss_mib' },
  { caseId: 'throughput', figureId: 'lost_events' },
  // Cold process: native ≥ 3× memory's CPU per hook.
  { caseId: 'cold', figureId: 'native_over_memory_cold' },
  { caseId: 'cold', figureId: 'native_over_memory_cold_atof_only' },
  { caseId: 'cold', figureId: 'memory_cold_over_steady' },
  // Plugin + native ≤ 1.15× bare native per event.
  { caseId: 'per-event', figureId: '*.plugin_over_bare' },
  { caseId: 'per-event', figureId: '*.plugin_over_isolated_bare' },
  { caseId: 'per-event', figureId: '*.isolated_bare_over_bare' },
  // Main entry import ≤ 1.0× @opentelemetry/api's.
  { caseId: 'import-cost', figureId: 'main_over_otel_api' },
  { caseId: 'import-cost', figureId: 'main_over_otel_api_instructions' },
  { caseId: 'import-cost', figureId: 'hooks_over_otel_api' },
  // Everything that holds today keeps holding.
  { caseId: 'zero-cost', figureId: 'emit_over_map' },
  { caseId: 'zero-cost', figureId: 'bound_active_over_map' },
  { caseId: 'zero-cost', figureId: 'loop_over_plain' },
  { caseId: 'zero-cost', figureId: 'thunk_calls' },
  { caseId: 'per-event', figureId: '*.native_over_memory' },
  { caseId: 'memory-sessions', figureId: 'bytes_per_session' },
  { caseId: 'memory-sessions', figureId: 'bytes_per_session_atof_only' },
  { caseId: 'memory-cycles', figureId: 'heap_after_over_before' },
  { caseId: 'memory-cycles', figureId: 'files.heap_after_over_before' },
];

const RUNTIMES: readonly RuntimeName[] = ['node', 'bun', 'deno'];

interface Args {
  only: string[] | null;
  runtimes: RuntimeName[];
  quick: boolean;
  out: string | null;
}

function parseArgs(argv: readonly string[]): Args {
  const args: Args = { only: null, runtimes: [...RUNTIMES], quick: false, out: null };
  const value = (arg: string, i: number): [string, number] => {
    const eq = arg.indexOf('=');
    if (eq >= 0) return [arg.slice(eq + 1), i];
    const next = argv[i + 1];
    if (next === undefined || next.startsWith('--')) throw new Error(`${arg} needs a value`);
    return [next, i + 1];
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const name = arg.split('=')[0];
    if (name === '--only') {
      const [list, next] = value(arg, i);
      i = next;
      args.only = list.split(',').filter(Boolean).flatMap((id) => (id === 'issue-21' ? ISSUE_21_CASES : [id]));
    } else if (name === '--runtimes') {
      const [list, next] = value(arg, i);
      i = next;
      const names = list.split(',').filter(Boolean);
      const unknown = names.filter((n) => !RUNTIMES.includes(n as RuntimeName));
      if (unknown.length > 0) throw new Error(`unknown runtime(s) ${unknown.join(', ')} (expected ${RUNTIMES.join(', ')})`);
      args.runtimes = names as RuntimeName[];
    } else if (name === '--out') {
      const [dir, next] = value(arg, i);
      i = next;
      args.out = dir;
    } else if (arg === '--quick') {
      args.quick = true;
    } else {
      throw new Error(`unknown argument ${JSON.stringify(arg)} (expected --only a,b|issue-21, --runtimes node,bun,deno, --quick, --out <dir>)`);
    }
  }
  return args;
}

const here = path.dirname(fileURLToPath(import.meta.url));
// Node runs the compiled copy in .tmp/bench/bench/, Bun and Deno the sources in bench/.
const compiled = !import.meta.url.endsWith('.ts');
const root = compiled ? path.resolve(here, '../../..') : path.resolve(here, '..');

/** The project's own Bun and Deno (npm dev dependencies), else whatever is on the PATH. */
function binary(name: 'bun' | 'deno'): string {
  const local = path.join(root, 'node_modules', '.bin', name);
  return existsSync(local) ? local : name;
}

function runnerCommand(name: RuntimeName): string[] {
  const source = path.join(root, 'bench', 'run.ts');
  if (name === 'bun') return [binary('bun'), source];
  if (name === 'deno') return [binary('deno'), 'run', '-A', source];
  // Node 20 cannot run TypeScript: the compiled runner (npm run bench:all compiles bench/ first).
  const runner = path.join(root, '.tmp', 'bench', 'bench', 'run.js');
  if (!existsSync(runner)) throw new Error(`${runner} is missing: run npm run bench:all (it compiles bench/ first)`);
  return [process.execPath, runner];
}

function main(): number {
  const args = parseArgs(process.argv.slice(2));
  const out = path.resolve(root, args.out ?? path.join('.tmp', 'bench', 'results'));
  mkdirSync(out, { recursive: true });
  const runs: BenchRun[] = [];
  let failed = false;
  for (const name of args.runtimes) {
    const json = path.join(out, `${name}.json`);
    rmSync(json, { force: true });
    const [command, ...rest] = runnerCommand(name);
    const runnerArgs = [...rest, '--json', json];
    if (args.only) runnerArgs.push('--only', [...new Set(args.only)].join(','));
    if (args.quick) runnerArgs.push('--quick');
    const started = Date.now();
    process.stderr.write(`\n## ${name}: ${[command, ...runnerArgs].join(' ')}\n`);
    const child = spawnSync(command!, runnerArgs, { cwd: root, stdio: 'inherit' });
    const minutes = ((Date.now() - started) / 60_000).toFixed(1);
    if (child.error || !existsSync(json)) {
      process.stderr.write(`## ${name}: did not run (${child.error?.message ?? `exit ${child.status ?? child.signal}`})\n`);
      failed = true;
      continue;
    }
    if (child.status !== 0) failed = true;
    process.stderr.write(`## ${name}: done in ${minutes} min${child.status !== 0 ? ' (some cases failed)' : ''}\n`);
    runs.push(JSON.parse(readFileSync(json, 'utf8')) as BenchRun);
  }
  if (runs.length === 0) return 1;
  const tables = resultTables(runs);
  const issue = pickedFigures(runs, ISSUE_21_FIGURES);
  writeFileSync(path.join(out, 'tables.md'), tables);
  writeFileSync(path.join(out, 'issue-21.md'), issue);
  const quick = args.quick ? ' QUICK (tiny iteration counts): checks that the cases run, measures nothing.' : '';
  process.stdout.write(`\nIssue 21's goals and the figures beside them (${path.join(out, 'issue-21.md')}):${quick}\n\n${issue}`);
  process.stdout.write(`\nEvery table for RESULTS.md ("All figures"): ${path.join(out, 'tables.md')}; raw results: ${out}/<runtime>.json\n`);
  return failed ? 1 : 0;
}

try {
  process.exitCode = main();
} catch (error) {
  process.stderr.write(`bench:all: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 2;
}
