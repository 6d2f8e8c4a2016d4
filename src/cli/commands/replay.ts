/**
 * `replay <hooks.jsonl> --out <dir>`: runs a recorded hook stream through
 * `HookRegistry` and the NeMo Relay plugin, writing ATOF into `<dir>/atof/`
 * and one ATIF trajectory per session into `<dir>/atif/`.
 *
 * Decisions:
 * - Default backend `memory`: a replay should give the same files on every
 *   runtime and machine, and start instantly. `--backend native` (or
 *   `auto`) opts in to the native runtime.
 * - The input is streamed line by line and the plugin is flushed every
 *   few thousand lines, so memory stays flat on files of millions of lines
 *   (only live sessions are held).
 * - A malformed line (bad JSON, not an object, unknown hook, payload not an
 *   object) is reported with its line number, counted and skipped. With
 *   `--strict` the first one stops the replay: the sessions read so far are
 *   closed and their (partial) files written, and the exit code is 1.
 * - The environment is not read: `HERMES_NEMO_RELAY_*` and
 *   `NEMO_RELAY_HOOKS_BACKEND` of the shell cannot redirect a replay's
 *   output; the flags decide.
 * - Sessions still open at the end of the stream are closed by
 *   `plugin.shutdown()`, which writes their partial trajectories.
 * - Each event carries its line's recorded time (the plugin's `clock`,
 *   `recorded-clock.ts`): a replay runs in milliseconds what the host ran in
 *   minutes, and its files must say what the host did, when.
 *
 * @module
 */

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import type { OutputHealth } from '../../relay/contract.ts';
import path from 'node:path';
import { HookRegistry } from '../../hooks/index.ts';
import { isHookName, type HookName } from '../../hooks/index.ts';
import type { Logger } from '../../shared/logger.ts';
import { createNemoRelayPlugin } from '../../plugin/plugin.ts';
import type { BackendName } from '../../backends/select.ts';
import { booleanFlag, HELP_FLAG, JSON_FLAG, stringFlag, type CommandSpec, type ParsedArgs } from '../args.ts';
import { UsageError } from '../errors.ts';
import { checkInputFile, ensureOutputDir, ensureOutputSubfolders, inputName, invalidUtf8Warning, readLines, refuseLinkedOutputs, sizeOf, STDIN, type InvalidUtf8 } from '../files.ts';
import { refuseOtherKind } from '../detect.ts';
import { Progress } from '../progress.ts';
import { safeForTerminal } from '../terminal-text.ts';
import { formatCount, formatDuration, type CliIo } from '../io.ts';
import { MemoryProbe } from '../memory-probe.ts';
import { fileStem } from '../../plugin/config/host-identity.ts';
import { addTrajectory, emptyTotals, type TrajectoryTotals } from '../trajectory-stats.ts';
import { JsonTooDeepError, parseJson, whyNotJson } from '../../shared/json.ts';
import { CUT_SHORT } from '../../formats/atof/jsonl.ts';
import { quotedValue } from '../../shared/text.ts';
import { parseTimestamp } from '../../shared/clock.ts';
import { RecordedClock } from '../recorded-clock.ts';
import { withWrittenData } from '../../shared/snapshot.ts';

export const replaySpec: CommandSpec = {
  name: 'replay',
  summary: 'Turn a recorded hook stream into ATOF events and ATIF trajectories',
  usage: '<hooks.jsonl|-> --out <dir> [--backend memory|native|auto] [--strict] [--json]',
  details: [
    'Reads one JSON object per line, {"timestamp": "<RFC 3339>", "hook": "<hook name>",',
    '"payload": {...}}, as createHookRecorder writes them, and runs each through',
    'HookRegistry and the NeMo Relay plugin, each event stamped with its line\'s time',
    '(a line without one follows the line before it). Writes <dir>/atof/<name>-atof.jsonl',
    'and <dir>/atif/<name>-atif-<session>.json, where <name> is the input\'s name',
    'without .hooks.jsonl ("stdin" for "-").',
    '',
    'Malformed lines are reported with their line number and skipped; --strict stops at',
    'the first one (files of the sessions read so far are still written) and exits 1.',
    'Sessions left open at the end of the stream are closed and written as partial',
    'trajectories. HERMES_NEMO_RELAY_* variables are ignored; the flags decide.',
    '"-" reads the stream from standard input. --json prints one JSON summary',
    '(files written with sizes, counters) instead of the text summary.',
  ].join('\n'),
  flags: {
    out: { type: 'string', short: 'o', value: '<dir>', description: 'Output folder (created when missing). Required.' },
    backend: {
      type: 'string',
      short: 'b',
      value: '<name>',
      choices: ['memory', 'native', 'auto'],
      description: 'Relay backend: memory (default: same files everywhere), native, or auto.',
    },
    strict: { type: 'boolean', description: 'Stop at the first malformed line and exit 1.' },
    'agent-name': { type: 'string', value: '<name>', description: 'agent.name in ATIF (default: the agent name each session reports, else "agent").' },
    'agent-version': { type: 'string', value: '<version>', description: 'agent.version in ATIF (default: what each session reports, else "unknown").' },
    quiet: { type: 'boolean', short: 'q', description: 'No progress line and no summary; errors only.' },
    verbose: { type: 'boolean', short: 'v', description: 'Also print the plugin\'s info and debug messages.' },
    'report-memory': { type: 'boolean', hidden: true, description: 'Print the peak RSS to stderr (tests).' },
    json: JSON_FLAG,
    help: HELP_FLAG,
  },
  positionals: { name: '<hooks.jsonl>', min: 1, max: 1 },
};

/** Malformed lines printed before the rest are only counted. */
const MAX_REPORTED_LINES = 20;
/** Who recorded the stream is unknown to a replay: sessions that report no agent name get this one. */
const UNKNOWN_HOST = { name: 'agent', version: 'unknown' };

/**
 * The name replay's files carry: the input's, without `.hooks.jsonl`
 * (`run.hooks.jsonl` → `run-atof.jsonl`), so replays of two recordings into
 * one folder do not overwrite each other; `stdin` for "-".
 */
export function recordingName(input: string): string {
  if (input === STDIN) return 'stdin';
  return fileStem(path.basename(input).replace(/(\.hooks)?\.jsonl?$/i, '')) || 'replay';
}
/** Lines between flushes of the plugin (which also bounds queued writes). */
const FLUSH_EVERY = 4096;

/** `--agent-name` and `--agent-version` are the host's explicit word: they win over what sessions report. */
function agentFlags(args: ParsedArgs): { atifAgentName?: string; atifAgentVersion?: string } {
  const name = stringFlag(args, 'agent-name');
  const version = stringFlag(args, 'agent-version');
  return { ...(name !== undefined ? { atifAgentName: name } : {}), ...(version !== undefined ? { atifAgentVersion: version } : {}) };
}

export async function replay(args: ParsedArgs, io: CliIo): Promise<number> {
  const input = args.positionals[0]!;
  const out = stringFlag(args, 'out');
  if (out === undefined) throw new UsageError('"replay" needs --out <dir>', 'replay');
  const backend = stringFlag(args, 'backend', 'memory') as BackendName;
  const strict = booleanFlag(args, 'strict');
  const json = booleanFlag(args, 'json');
  const quiet = booleanFlag(args, 'quiet') || json;
  const name = inputName(input);
  const totalBytes = checkInputFile(input);
  refuseOtherKind(input, 'hooks');
  const outDir = ensureOutputDir(out);
  const [atofDir, atifDir] = ensureOutputSubfolders(outDir, out, ['atof', 'atif']) as [string, string];
  const recorded = recordingName(input);
  const atofFilename = `${recorded}-atof.jsonl`;
  refuseLinkedOutputs(atofDir, [atofFilename]);
  const probe = new MemoryProbe();
  const started = Date.now();
  const before = trajectoryFiles(atifDir);

  const logger = cliLogger(io, booleanFlag(args, 'verbose'));
  const registry = new HookRegistry({ logger });
  const clock = new RecordedClock();
  const plugin = createNemoRelayPlugin({
    // Each event at the time its line was recorded: the recording's times and durations, not the replay's.
    clock: clock.read,
    backend,
    env: {},
    logger,
    // Never evict by idle time: a replay runs much faster than the recorded host did.
    sessionIdleTtlMs: 0,
    settings: {
      atofEnabled: true,
      atofOutputDirectory: atofDir,
      atofFilename,
      atofMode: 'overwrite',
      atifEnabled: true,
      atifOutputDirectory: atifDir,
      atifFilenameTemplate: `${recorded}-atif-{session_id}.json`,
      ...agentFlags(args),
    },
    // The recorded host's names (what its sessions report), never those of the folder replay runs in.
    host: UNKNOWN_HOST,
  });
  plugin.register(registry);
  await plugin.ready;

  const hooks = new HookCounts();
  let malformed = 0;
  let stoppedAt: number | null = null;
  let lines = 0;
  const progress = new Progress(io, { label: `replaying ${input === STDIN ? name : path.basename(input)}`, unit: 'lines', totalBytes }, !booleanFlag(args, 'quiet'));
  let encoding: InvalidUtf8 | undefined;
  for await (const line of readLines(input, { onInvalidUtf8: (at) => (encoding = at) })) {
    lines = line.number;
    if (line.text.trim() !== '') {
      const parsed = parseHookLine(line.text, line.unterminated === true);
      if (typeof parsed === 'string') {
        malformed += 1;
        if (malformed <= MAX_REPORTED_LINES || strict) {
          progress.clear();
          io.err(`nemo-relay-hooks: ${safeForTerminal(name)}:${line.number}: ${safeForTerminal(parsed)}\n`);
        }
        if (strict) {
          stoppedAt = line.number;
          break;
        }
      } else {
        hooks.add(parsed.hook, parsed.payload);
        clock.at(parsed.timestampUs);
        registry.emit(parsed.hook, parsed.payload);
      }
    }
    if (line.number % FLUSH_EVERY === 0) {
      await plugin.flush();
      probe.sample();
      const open = plugin.status().sessions;
      progress.update(line.number, line.bytesRead, `${formatCount(open)} open session${open === 1 ? '' : 's'}`);
    }
  }
  progress.clear();
  await plugin.shutdown({ timeoutMs: 120_000 });
  probe.sample();

  const status = plugin.status();
  const totals = emptyTotals();
  const files: { atof: string[]; atif: string[]; failed: number } = { atof: [], atif: [], failed: 0 };
  const warnings: string[] = [];
  for (const output of withAtofFile(status.outputs, path.join(atofDir, atofFilename))) {
    if (output.errors > 0) files.failed += 1;
    if (output.kind === 'atof') files.atof.push(output.path);
  }
  if (hooks.total > 0 && files.atof.every((file) => sizeOf(file) === 0)) warnings.push(`${formatCount(hooks.total)} hooks were replayed but the ATOF file has no events`);
  if (hooks.total === 0) warnings.push(`${name} holds no hooks: nothing was recorded`);
  if (encoding !== undefined) warnings.push(invalidUtf8Warning(encoding));
  // status().outputs lists only the most recent ATIF files (it is bounded for
  // long-lived hosts), so the trajectories of this run are read from the folder:
  // the files that were not there before it (the plugin never replaces one).
  for (const file of filesWrittenSince(atifDir, before)) {
    files.atif.push(file);
    try {
      addTrajectory(totals, JSON.parse(readFileSync(file, 'utf8')));
    } catch {
      files.failed += 1;
    }
  }
  const stepless = status.outputs.filter((output) => output.kind === 'atif' && output.skipped !== undefined).length;
  if (stepless > 0) warnings.push(`${formatCount(stepless)} session${stepless === 1 ? '' : 's'} recorded no step (no model call), and ATIF needs at least one: no trajectory written for ${stepless === 1 ? 'it' : 'them'}`);

  if (malformed > MAX_REPORTED_LINES && !strict) {
    io.err(`nemo-relay-hooks: ${safeForTerminal(name)}: ${formatCount(malformed - MAX_REPORTED_LINES)} more malformed lines not shown\n`);
  }
  const code = stoppedAt !== null || files.failed > 0 || status.backend.kind === 'off' ? 1 : 0;
  if (json) {
    const report: ReplayReport = {
      command: 'replay',
      ok: code === 0,
      input: name,
      backend: { kind: status.backend.kind, version: status.backend.version ?? null, reason: status.backend.reason },
      lines,
      elapsedMs: Date.now() - started,
      stoppedAt,
      counters: {
        hooks: hooks.total,
        malformedLines: malformed,
        sessions: totals.trajectories,
        subagents: totals.subagents,
        steps: totals.steps,
        llmAttempts: hooks.apiAttempts,
        llmErrors: hooks.apiErrors,
        toolCalls: hooks.toolCalls,
        toolFailures: hooks.toolFailures,
        promptTokens: totals.promptTokens,
        completionTokens: totals.completionTokens,
        cachedTokens: totals.cachedTokens,
        relayErrors: status.counters.errors,
        incompleteFiles: files.failed,
      },
      files: [
        ...files.atof.map((file) => ({ format: 'atof' as const, path: file, bytes: sizeOf(file) })),
        ...files.atif.map((file) => ({ format: 'atif' as const, path: file, bytes: sizeOf(file) })),
      ],
      warnings,
    };
    io.out(`${JSON.stringify(report, null, 2)}\n`);
  }
  if (!quiet) {
    io.out(
      summary({
        input: name,
        lines,
        elapsedMs: Date.now() - started,
        backend: `${status.backend.kind}${status.backend.version ? ` ${status.backend.version}` : ''}`,
        hooks,
        totals,
        malformed,
        stoppedAt,
        files,
        atofDir,
        atifDir,
        relayErrors: status.counters.errors,
        warnings,
        io,
      }),
    );
  }
  if (booleanFlag(args, 'report-memory')) io.err(`report-memory: maxRSS=${probe.peakKb()}KiB\n`);
  if (code === 0) return 0;
  if (stoppedAt !== null) {
    io.err(`nemo-relay-hooks: --strict: stopped at line ${stoppedAt}; files hold the ${formatCount(hooks.total)} hook${hooks.total === 1 ? '' : 's'} before it\n`);
    return 1;
  }
  if (files.failed > 0) {
    io.err(`nemo-relay-hooks: ${files.failed} output file(s) could not be written completely\n`);
    return 1;
  }
  if (status.backend.kind === 'off') {
    io.err(`nemo-relay-hooks: nothing was recorded: the backend is off (${status.backend.reason}); try --backend memory\n`);
    return 1;
  }
  return 0;
}

/** What `replay --json` prints (documented in docs/cli/README.md). */
interface ReplayReport {
  command: 'replay';
  ok: boolean;
  input: string;
  backend: { kind: string; version: string | null; reason: string };
  lines: number;
  elapsedMs: number;
  /** The line `--strict` stopped at, else null. */
  stoppedAt: number | null;
  counters: Record<string, number>;
  files: { format: 'atof' | 'atif'; path: string; bytes: number }[];
  warnings: string[];
}

/** The `.json` files in `dir` modified at or after `sinceMs` (with a margin for coarse file-system clocks), sorted. */
/** The trajectory files in `dir`, by name, with the inode each has now. */
function trajectoryFiles(dir: string): Map<string, number> {
  const found = new Map<string, number>();
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return found;
  }
  for (const name of names.sort()) {
    if (!name.endsWith('.json')) continue;
    try {
      found.set(name, statSync(path.join(dir, name)).ino);
    } catch {
      // Removed meanwhile: not there.
    }
  }
  return found;
}

/**
 * The trajectory files in `dir` that are not the ones `before` listed: new
 * names, or a name another file took meanwhile. A replay's files are all
 * new (a session's file never replaces one already there), so a replay
 * into a folder with earlier runs counts its own only, however soon after
 * them it ran.
 */
function filesWrittenSince(dir: string, before: ReadonlyMap<string, number>): string[] {
  const written: string[] = [];
  for (const [name, inode] of trajectoryFiles(dir)) {
    if (before.get(name) !== inode) written.push(path.join(dir, name));
  }
  return written;
}

/**
 * The plugin's outputs, plus the ATOF file when the backend does not list
 * it (its exporter is closed by then) but wrote it.
 */
export function withAtofFile(outputs: readonly OutputHealth[], atofPath: string): OutputHealth[] {
  if (outputs.some((output) => output.kind === 'atof') || !existsSync(atofPath)) return [...outputs];
  return [{ kind: 'atof', path: atofPath, lastWrite: null, bytes: 0, errors: 0 }, ...outputs];
}

interface HookLine {
  hook: HookName;
  payload: Record<string, unknown>;
  /** When the host emitted it (Unix µs), as the recorder wrote it; `undefined` for a line without a time. */
  timestampUs: number | undefined;
}

/** One recorded line, or a message saying what is wrong with it (`unterminated`: the file ends inside it). */
function parseHookLine(text: string, unterminated: boolean): HookLine | string {
  let value: unknown;
  try {
    value = parseJson(text);
  } catch (error) {
    return unterminated && !(error instanceof JsonTooDeepError) ? CUT_SHORT : whyNotJson(error);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return `expected a JSON object {"hook": ..., "payload": {...}}, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`;
  }
  const record = value as Record<string, unknown>;
  if (!('hook' in record)) return 'missing "hook"';
  if (!isHookName(record.hook)) {
    return typeof record.hook === 'string' ? `unknown hook ${quotedValue(record.hook)}` : '"hook" must be a hook name string';
  }
  const payload = record.payload;
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    return payload === undefined ? `missing "payload" for ${record.hook}` : `"payload" of ${record.hook} must be a JSON object`;
  }
  let timestampUs: number | undefined;
  if ('timestamp' in record) {
    timestampUs = typeof record.timestamp === 'string' ? parseTimestamp(record.timestamp) : Number.NaN;
    if (Number.isNaN(timestampUs)) return `"timestamp" must be an RFC 3339 time such as "2026-01-31T09:30:00.123456Z", got ${quotedValue(record.timestamp)}`;
    // Events carry integer Unix microseconds, exact only within 2^53 of 1970.
    if (!Number.isSafeInteger(timestampUs)) return `"timestamp" ${quotedValue(record.timestamp)} is out of range: times from 1685 to 2254 can be recorded to the microsecond`;
  }
  // A payload recorded with a top-level toJSON: the relay records that method's result, as it did live.
  const fields = payload as Record<string, unknown>;
  return { hook: record.hook, payload: 'data' in record ? withWrittenData(fields, record.data) : fields, timestampUs };
}

/** What the stream itself says: LLM attempts and errors, tool calls and failures. */
class HookCounts {
  total = 0;
  apiAttempts = 0;
  apiErrors = 0;
  toolCalls = 0;
  toolFailures = 0;

  add(hook: HookName, payload: Record<string, unknown>): void {
    this.total += 1;
    switch (hook) {
      case 'pre_api_request':
        this.apiAttempts += 1;
        break;
      case 'api_request_error':
        this.apiErrors += 1;
        break;
      case 'pre_tool_call':
        this.toolCalls += 1;
        break;
      case 'post_tool_call': {
        const status = typeof payload.status === 'string' ? payload.status.toLowerCase() : '';
        if ((status !== '' && status !== 'ok' && status !== 'success') || (status === '' && (payload.error_type || payload.error_message))) {
          this.toolFailures += 1;
        }
        break;
      }
      default:
        break;
    }
  }
}

interface SummaryInput {
  input: string;
  lines: number;
  elapsedMs: number;
  backend: string;
  hooks: HookCounts;
  totals: TrajectoryTotals;
  malformed: number;
  stoppedAt: number | null;
  files: { atof: string[]; atif: string[]; failed: number };
  atofDir: string;
  atifDir: string;
  relayErrors: number;
  /** Said in the summary: a run that recorded nothing is not a success to keep quiet about. */
  warnings: string[];
  io: CliIo;
}

function summary(s: SummaryInput): string {
  const { style } = s.io;
  const t = s.totals;
  const bad = (n: number, text: string) => (n > 0 ? style.red(text) : text);
  const rows: [string, string][] = [
    ['sessions', `${formatCount(t.trajectories)}${t.subagents > 0 ? ` (+${formatCount(t.subagents)} subagent${t.subagents === 1 ? '' : 's'})` : ''}`],
    ['steps', formatCount(t.steps)],
    ['LLM calls', `${formatCount(s.hooks.apiAttempts)} attempt${s.hooks.apiAttempts === 1 ? '' : 's'}${bad(s.hooks.apiErrors, `, ${formatCount(s.hooks.apiErrors)} failed`)}`],
    ['tool calls', `${formatCount(s.hooks.toolCalls)}${bad(s.hooks.toolFailures, `, ${formatCount(s.hooks.toolFailures)} failed`)}`],
    ['tokens', `prompt ${formatCount(t.promptTokens)} · completion ${formatCount(t.completionTokens)} · cached ${formatCount(t.cachedTokens)}`],
    ['errors', bad(s.hooks.apiErrors + s.hooks.toolFailures + s.malformed + s.relayErrors, errorsText(s))],
    ['ATOF', s.files.atof.length === 1 ? relative(s.files.atof[0]!, s.io.cwd) : `${s.files.atof.length} files in ${relative(s.atofDir, s.io.cwd)}`],
    ['ATIF', `${formatCount(s.files.atif.length)} file${s.files.atif.length === 1 ? '' : 's'} in ${relative(s.atifDir, s.io.cwd)}${path.sep}`],
  ];
  for (const warning of s.warnings) rows.push(['warning', style.yellow(safeForTerminal(warning))]);
  const head = `${s.stoppedAt === null ? 'replayed' : 'stopped after'} ${formatCount(s.lines)} line${s.lines === 1 ? '' : 's'} of ${safeForTerminal(s.input)} in ${formatDuration(s.elapsedMs * 1000)} (backend ${s.backend}, ${formatCount(s.hooks.total)} hook${s.hooks.total === 1 ? '' : 's'})`;
  return `${style.bold(head)}\n${rows.map(([key, value]) => `  ${key.padEnd(11)}${value}`).join('\n')}\n`;
}

function errorsText(s: SummaryInput): string {
  const parts = [
    `${formatCount(s.hooks.apiErrors)} API`,
    `${formatCount(s.hooks.toolFailures)} tool`,
    `${formatCount(s.malformed)} malformed line${s.malformed === 1 ? '' : 's'}`,
  ];
  if (s.relayErrors > 0) parts.push(`${formatCount(s.relayErrors)} relay`);
  return parts.join(', ');
}

/** `target` as the summary shows it: relative to `cwd` when inside it, terminal-safe (the --out folder is the user's name). */
function relative(target: string, cwd: string): string {
  const rel = path.relative(cwd, target);
  return safeForTerminal(rel === '' ? '.' : rel.startsWith('..') || path.isAbsolute(rel) ? target : rel);
}

/** Plugin and registry messages on stderr, prefixed; info/debug only with --verbose. */
export function cliLogger(io: CliIo, verbose: boolean): Logger {
  const line = (level: string) => (message: string, ...details: unknown[]) => {
    const extra = details.map((detail) => (detail instanceof Error ? detail.message : typeof detail === 'string' ? detail : safeJson(detail))).filter(Boolean);
    // The plugin's messages name the files it writes and quote values it was given.
    io.err(`nemo-relay-hooks: ${level}: ${safeForTerminal([message, ...extra].join(' '))}\n`);
  };
  const quiet = () => {};
  return {
    debug: verbose ? line('debug') : quiet,
    info: verbose ? line('info') : quiet,
    warn: line('warning'),
    error: line('error'),
  };
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return String(value);
  }
}
