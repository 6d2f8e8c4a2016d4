/**
 * `convert <events.jsonl> --out <dir>`: ATOF events (from this library or
 * from the native runtime) to one ATIF trajectory per session, offline.
 *
 * A session is a top-level agent scope: an agent scope start whose parent is
 * not a scope of the file (native parents roots to an implicit root that is
 * never written). Its whole subtree, nested subagents included, goes to one
 * `AtifBuilder`. The input is streamed; a session's events are held only
 * until its end event, then its file is written and the events are freed.
 * Sessions never ended (a crash, a file cut short) are written as partial
 * trajectories at the end of the input.
 *
 * Input out of timestamp order (consumers MUST sort before pairing) is read
 * whole and sorted first; input in order is streamed as above. An ATOF major
 * version other than 0 is refused before anything is written.
 *
 * File names follow the plugin: `<agent>-atif-{session_id}.json`, named
 * after the session's agent (the plugin's `<agent>-session-<id>` scope, else
 * the root scope's name); a session of the Hermes plugin (its
 * `hermes-session-<id>` scope) keeps the Hermes plugin's names,
 * `hermes-atif-{session_id}.json` and "Hermes Agent". The session id is the
 * root scope's `metadata.session_id` when present, else what the plugin
 * named the session, else the root's uuid, reduced by `safeSessionFragment`.
 * A second session with the same id gets `~2` (then `~3`, ...) after the id,
 * as the plugin names it.
 *
 * `--profile nat` maps events the way NVIDIA NeMo Agent Toolkit's reference
 * converter does (`formats/atif/convert/nat/`); any root scope, not only an
 * agent scope, starts a session there.
 *
 * @module
 */

import path from 'node:path';
import { atifFileClaim, atifFilePath, UnsafeAtifPathError } from '../../plugin/atif-file.ts';
import { fileStem } from '../../plugin/config/host-identity.ts';
import { parseSessionScopeName } from '../../plugin/session-scope.ts';
import { writeFileAtomic } from '../../shared/atomic-file.ts';
import { AtifBuilder } from '../../formats/atif/builder.ts';
import type { AtifBuilderStyle } from '../../formats/atif/builder.ts';
import { convertNatEvents, serializeNatTrajectory } from '../../formats/atif/convert/nat/index.ts';
import type { AtifTrajectory } from '../../formats/atif/types.ts';
import { atofMajor } from '../../formats/atof/rules/envelope.ts';
import type { AtofEvent } from '../../formats/atof/types.ts';
import { booleanFlag, HELP_FLAG, JSON_FLAG, stringFlag, type CommandSpec, type ParsedArgs } from '../args.ts';
import { describeFsError, InputError, UsageError } from '../errors.ts';
import { checkInputFile, ensureOutputDir, inputName, invalidUtf8Warning, linkedOutMessage, readLines, sizeOf, STDIN, type InvalidUtf8 } from '../files.ts';
import { noAtofEventAmong, refuseOtherKind, whyNotReadableEvent } from '../detect.ts';
import { Progress } from '../progress.ts';
import { safeForTerminal } from '../terminal-text.ts';
import { compareInstants, parseInstant, type Instant } from '../../formats/instant.ts';
import { formatCount, formatDuration, type CliIo } from '../io.ts';
import { addTrajectory, emptyTotals } from '../trajectory-stats.ts';
import { JsonTooDeepError, parseJson, whyNotJson } from '../../shared/json.ts';
import { CUT_SHORT } from '../../formats/atof/jsonl.ts';
import { nonEmptyString, quotedValue } from '../../shared/text.ts';

export const convertSpec: CommandSpec = {
  name: 'convert',
  summary: 'Convert an ATOF event file into one ATIF trajectory per session',
  usage: '<events.jsonl|-> --out <dir> [--style exporter|plugin-host] [--profile native|nat] [--quiet] [--json]',
  details: [
    'Works offline on any ATOF 0.1 JSONL file, including the ones the native runtime',
    'writes. Each top-level agent scope (with its nested subagents) becomes one file,',
    'named after the scope\'s metadata.session_id (else its uuid). Streams the input:',
    'a session is held in memory only until its end event. "-" reads standard input;',
    '--json prints one JSON summary (files written with sizes, counters).',
  ].join('\n'),
  flags: {
    out: { type: 'string', short: 'o', value: '<dir>', description: 'Output folder (created when missing). Required.' },
    style: {
      type: 'string',
      value: '<style>',
      choices: ['exporter', 'plugin-host'],
      description: 'exporter (default: what the plugin writes) or plugin-host (native plugin file).',
    },
    profile: {
      type: 'string',
      value: '<profile>',
      choices: ['native', 'nat'],
      description: 'native (default: what native\'s exporter writes) or nat (the NeMo Agent Toolkit reference converter\'s mapping).',
    },
    template: { type: 'string', value: '<name>', description: 'File name template with {session_id} (default <agent>-atif-{session_id}.json; hermes-atif-{session_id}.json for Hermes plugin sessions).' },
    'agent-name': { type: 'string', value: '<name>', description: 'agent.name (default: the agent the plugin named the session after, "Hermes Agent" for Hermes plugin sessions, else the root scope name).' },
    'agent-version': { type: 'string', value: '<version>', description: 'agent.version (default "unknown").' },
    quiet: { type: 'boolean', short: 'q', description: 'No progress line and no summary; warnings and errors only.' },
    json: JSON_FLAG,
    help: HELP_FLAG,
  },
  positionals: { name: '<events.jsonl>', min: 1, max: 1 },
};

const MAX_REPORTED_LINES = 20;
/** The Hermes plugin's file names, kept for its sessions. */
const HERMES_TEMPLATE = 'hermes-atif-{session_id}.json';
const HERMES_AGENT = 'Hermes Agent';

interface OpenSession {
  root: AtofEvent;
  /** Takes one event of the session. */
  add(event: AtofEvent): void;
  /** The file has no end for the session: its calls still open are written as never ended (the plugin's files only). */
  neverEnds?(): void;
  /** The trajectory and its file text. */
  build(): { trajectory: AtifTrajectory; text: string };
  /** Every scope uuid of the subtree, to route children and free them at the end. */
  members: string[];
  sessionId: string;
  /** The file name template its trajectory is written with. */
  template: string;
}

type Profile = 'native' | 'nat';

export async function convert(args: ParsedArgs, io: CliIo): Promise<number> {
  const input = args.positionals[0]!;
  const out = stringFlag(args, 'out');
  if (out === undefined) throw new UsageError('"convert" needs --out <dir>', 'convert');
  const profile = stringFlag(args, 'profile', 'native') as Profile;
  const template = stringFlag(args, 'template');
  if (template !== undefined && !template.includes('{session_id}')) throw new UsageError('--template must contain {session_id}', 'convert');
  // Checked with a stand-in id before the output folder is made: a template leading out of it (`../x-{session_id}.json`)
  // is a wrong command line, refused for every session alike, not a failure of the first session's write.
  if (template !== undefined) {
    try {
      atifFilePath(out, template, 'session');
    } catch (error) {
      if (!(error instanceof UnsafeAtifPathError)) throw error;
      // A folder of it planted as a link out of --out is the folder's fault, not the command line's (below).
      if (error.linked !== undefined) throw new InputError(linkedOutMessage(path.join(out, template), out, error.linked, 'file'));
      throw new UsageError(`--template must name a file inside the --out folder: ${error.message}`, 'convert');
    }
  }
  const started = Date.now();
  const json = booleanFlag(args, 'json');
  const quiet = booleanFlag(args, 'quiet');
  const name = inputName(input);
  const totalBytes = checkInputFile(input);
  refuseOtherKind(input, 'atof');
  // Standard input can be read once only: it takes the buffered, sorted path (the same trajectories for ordered input).
  const inOrder = input !== STDIN && (await isTimeOrdered(input));
  const outDir = ensureOutputDir(out);
  const progress = new Progress(io, { label: `converting ${input === STDIN ? name : path.basename(input)}`, unit: 'events', totalBytes }, !quiet);

  const owners = new Map<string, OpenSession>();
  const instances = new Map<string, number>();
  const written: string[] = [];
  const totals = emptyTotals();
  let events = 0;
  let malformed = 0;
  let outside = 0;
  let stepless = 0;

  const finish = (session: OpenSession): void => {
    for (const uuid of session.members) owners.delete(uuid);
    // As the plugin does: the n-th session reusing an id gets `~n`, and a name
    // a file already has (an earlier convert's, a plugin's) the next one: none replaces another.
    const instance = (instances.get(session.sessionId) ?? 0) + 1;
    instances.set(session.sessionId, instance);
    const { trajectory, text } = session.build();
    // Without a step the document would not be valid ATIF (it needs one): left unwritten, and said.
    if (trajectory.steps.length === 0) {
      stepless += 1;
      return;
    }
    let claim: ReturnType<typeof atifFileClaim>;
    let target: string;
    try {
      claim = atifFileClaim(outDir, session.template, session.sessionId, instance, (landed) => instances.set(session.sessionId, landed));
      target = atifFilePath(outDir, session.template, session.sessionId, claim.instance);
    } catch (error) {
      // A folder of the template planted as a link out of --out: the plugin's rule refused it; said as the CLI's one line.
      if (error instanceof UnsafeAtifPathError && error.linked !== undefined) {
        throw new InputError(linkedOutMessage(path.join(out, session.template), out, error.linked, 'file'));
      }
      throw error;
    }
    addTrajectory(totals, trajectory);
    try {
      writeFileAtomic(target, text, {
        exclusive: {
          next: (taken) => claim.next(taken),
          landed: (name) => {
            claim.held = name;
          },
        },
      });
    } catch (error) {
      claim.release();
      throw new InputError(describeFsError(error, 'cannot write', target));
    }
    written.push(claim.held ?? target);
  };

  const report = (number: number, problem: string): void => {
    malformed += 1;
    if (malformed <= MAX_REPORTED_LINES) {
      progress.clear();
      io.err(`nemo-relay-hooks: ${safeForTerminal(name)}:${number}: ${safeForTerminal(problem)}\n`);
    }
  };
  // Sorted input is routed in timestamp order, but each session gets its
  // events in file order (plugin-host files list them as observed) once the
  // whole input is read: an end stamped before a late child's end must not
  // close the session early.
  const held = new Map<OpenSession, { event: AtofEvent; index: number }[]>();
  const ended = new Set<OpenSession>();
  let encoding: InvalidUtf8 | undefined;
  const onInvalidUtf8 = (at: InvalidUtf8): void => void (encoding = at);
  for await (const { event, position, bytesRead } of inOrder ? readEvents(input, report, onInvalidUtf8) : sortedEvents(input, report, onInvalidUtf8)) {
    events += 1;
    if (events % 4096 === 0) progress.update(events, bytesRead, `${formatCount(written.length)} written`);
    const isScope = event.kind === 'scope';
    const parent = typeof event.parent_uuid === 'string' ? owners.get(event.parent_uuid) : undefined;
    let session = owners.get(event.uuid) ?? parent;
    if (session === undefined) {
      const opens = isScope && event.scope_category === 'start' && (event.category === 'agent' || profile === 'nat');
      if (!opens) {
        outside += 1;
        continue;
      }
      session = openSession(event, args, profile);
    }
    if (isScope && event.scope_category === 'start' && !owners.has(event.uuid)) {
      owners.set(event.uuid, session);
      session.members.push(event.uuid);
    }
    const isRootEnd = isScope && event.scope_category === 'end' && event.uuid === session.root.uuid;
    if (inOrder) {
      session.add(event);
      if (isRootEnd) finish(session);
      continue;
    }
    let list = held.get(session);
    if (list === undefined) held.set(session, (list = []));
    list.push({ event, index: position as number });
    if (isRootEnd) ended.add(session);
  }
  // Sessions without an end event: write what there is.
  for (const [session, list] of held) {
    list.sort((a, b) => a.index - b.index);
    for (const entry of list) session.add(entry.event);
  }
  const unfinished = new Set([...owners.values()].filter((session) => !ended.has(session)));
  for (const session of new Set(owners.values())) {
    if (unfinished.has(session)) session.neverEnds?.();
    finish(session);
  }
  progress.clear();
  // Standard input is not looked at first: there, a text none of whose lines is an event fails once read.
  if (events === 0 && malformed > 0) throw new InputError(`${name} holds no ATOF events: ${noAtofEventAmong(malformed)}`);

  if (malformed > MAX_REPORTED_LINES) io.err(`nemo-relay-hooks: ${safeForTerminal(name)}: ${formatCount(malformed - MAX_REPORTED_LINES)} more malformed lines not shown\n`);
  const warnings: string[] = [];
  if (outside > 0) warnings.push(`${formatCount(outside)} events outside any agent scope were left out`);
  if (stepless > 0) warnings.push(`${formatCount(stepless)} session${stepless === 1 ? '' : 's'} recorded no step (no model call), and ATIF needs at least one: not written`);
  if (written.length === 0 && stepless === 0) warnings.push(events === 0 ? `${name} holds no ATOF events: no trajectory written` : 'no top-level agent scope: no trajectory written');
  if (encoding !== undefined) warnings.push(invalidUtf8Warning(encoding));
  if (unfinished.size > 0) warnings.push(`${formatCount(unfinished.size)} session${unfinished.size === 1 ? '' : 's'} without an end event, written as partial trajectories`);
  // Partial sessions are in the summary's sessions row; the others go to stderr, as the outside-scope count always did.
  if (!json) for (const warning of warnings) if (!warning.includes('partial')) io.err(`nemo-relay-hooks: warning: ${safeForTerminal(warning)}\n`);
  if (json) {
    const report: ConvertReport = {
      command: 'convert',
      ok: true,
      input: name,
      elapsedMs: Date.now() - started,
      counters: {
        events,
        malformedLines: malformed,
        outsideAgentScopes: outside,
        sessions: totals.trajectories,
        partialSessions: unfinished.size,
        subagents: totals.subagents,
        steps: totals.steps,
        llmCalls: totals.llmCalls,
        toolCalls: totals.toolCalls,
        promptTokens: totals.promptTokens,
        completionTokens: totals.completionTokens,
        cachedTokens: totals.cachedTokens,
      },
      files: written.map((file) => ({ format: 'atif' as const, path: file, bytes: sizeOf(file) })),
      warnings,
    };
    io.out(`${JSON.stringify(report, null, 2)}\n`);
    return 0;
  }
  if (quiet) return 0;
  const { style: color } = io;
  const lines = [
    color.bold(`converted ${formatCount(events)} events of ${safeForTerminal(name)} into ${formatCount(written.length)} ${written.length === 1 ? 'trajectory' : 'trajectories'} in ${formatDuration((Date.now() - started) * 1000)}`),
    `  sessions   ${formatCount(totals.trajectories)}${totals.subagents > 0 ? ` (+${formatCount(totals.subagents)} embedded subagent${totals.subagents === 1 ? '' : 's'})` : ''}${unfinished.size > 0 ? color.yellow(`, ${unfinished.size} without an end event (partial)`) : ''}`,
    `  steps      ${formatCount(totals.steps)}`,
    `  LLM calls  ${formatCount(totals.llmCalls)}`,
    `  tool calls ${formatCount(totals.toolCalls)}`,
    `  tokens     prompt ${formatCount(totals.promptTokens)} · completion ${formatCount(totals.completionTokens)} · cached ${formatCount(totals.cachedTokens)}`,
    `  malformed  ${malformed > 0 ? color.red(formatCount(malformed)) : '0'} ${malformed === 1 ? 'line' : 'lines'} skipped`,
    ...written.slice(0, 10).map((file) => `  wrote      ${relative(file, io.cwd)}`),
  ];
  if (written.length > 10) lines.push(`  wrote      … ${formatCount(written.length - 10)} more in ${relative(outDir, io.cwd)}`);
  io.out(`${lines.join('\n')}\n`);
  return 0;
}

/** What `convert --json` prints (documented in docs/cli/README.md). */
interface ConvertReport {
  command: 'convert';
  ok: boolean;
  input: string;
  elapsedMs: number;
  counters: Record<string, number>;
  files: { format: 'atif'; path: string; bytes: number }[];
  warnings: string[];
}

function openSession(root: AtofEvent, args: ParsedArgs, profile: Profile): OpenSession {
  const metadata = typeof root.metadata === 'object' && root.metadata !== null && !Array.isArray(root.metadata) ? root.metadata : {};
  const reportedId = typeof metadata.session_id === 'string' && metadata.session_id !== '' ? metadata.session_id : undefined;
  // The plugin names a session's scope after its agent and id ("default" when the host gave no id).
  const plugin = parseSessionScopeName(root.name, reportedId);
  const fromPlugin = plugin !== undefined;
  const logical = reportedId ?? plugin?.sessionId;
  const agentName = stringFlag(args, 'agent-name') ?? (plugin === undefined ? root.name : plugin.form === 'hermes' ? HERMES_AGENT : plugin.agentName);
  const fileTemplate = stringFlag(args, 'template') ?? (plugin?.form === 'hermes' ? HERMES_TEMPLATE : `${fileStem(agentName) || 'agent'}-atif-{session_id}.json`);
  if (profile === 'nat') {
    const collected: AtofEvent[] = [];
    return {
      root,
      add: (event) => collected.push(event),
      build: () => {
        const trajectory = convertNatEvents(collected);
        return { trajectory, text: serializeNatTrajectory(trajectory) };
      },
      members: [],
      sessionId: logical ?? root.uuid,
      template: fileTemplate,
    };
  }
  const style = stringFlag(args, 'style', 'exporter') as AtifBuilderStyle;
  // As the plugin names it: the session's model, else (outside Hermes' names) the model the first answer reports, as
  // when a framework learns it only from the provider; "unknown" when neither says.
  const model = nonEmptyString(metadata.model) ?? (plugin?.form === 'hermes' ? 'unknown' : undefined);
  const fallback = fromPlugin && model === undefined ? { fallbackModelName: 'unknown' } : {};
  const builder = new AtifBuilder({
    // plugin-host files are keyed by the root uuid, like native's plugin writes them.
    sessionId: style === 'plugin-host' ? root.uuid : (logical ?? root.uuid),
    agentName,
    agentVersion: stringFlag(args, 'agent-version', 'unknown'),
    ...(model !== undefined ? { modelName: model } : fallback),
    // The plugin's own files name each sub-agent after itself; so does their conversion.
    ...(fromPlugin ? { subagentAgents: 'own' as const, turnEnds: true } : {}),
    style,
  });
  return {
    root,
    add: (event) => builder.add(event),
    // As the plugin writes a session the process left open at its exit.
    ...(fromPlugin ? { neverEnds: () => builder.cutOpenCalls() } : {}),
    build: () => ({ trajectory: builder.build(), text: builder.toJson() }),
    members: [],
    sessionId: logical ?? root.uuid,
    template: fileTemplate,
  };
}

/**
 * Whether the file's events are already in timestamp order, so it can be
 * streamed. Also refuses, before anything is written, a major ATOF version
 * this reader does not know, and a file with lines none of which is an ATOF
 * event (a text, another program's log), which would otherwise end
 * "converted 0 events", exit 0, after every line reported malformed.
 */
async function isTimeOrdered(input: string): Promise<boolean> {
  let previous: Instant | undefined;
  let ordered = true;
  let notEvents = 0;
  let events = 0;
  for await (const line of readLines(input)) {
    if (line.text.trim() === '') continue;
    const event = parseEvent(line.text);
    if (typeof event === 'string') {
      notEvents += 1;
      continue;
    }
    events += 1;
    const major = atofMajor(event.atof_version);
    if (major !== undefined && major !== 0) {
      throw new InputError(`${input}:${line.number}: atof_version ${quotedValue(event.atof_version)} is major version ${major}; this reader knows ATOF 0.x only`);
    }
    const instant = parseInstant(event.timestamp) as Instant;
    if (previous !== undefined && compareInstants(instant, previous) < 0) ordered = false;
    previous = instant;
  }
  if (events === 0 && notEvents > 0) throw new InputError(`${inputName(input)} holds no ATOF events: ${noAtofEventAmong(notEvents)}`);
  return ordered;
}

/** The file's events in file order, malformed lines reported and skipped. */
async function* readEvents(
  input: string,
  report: (line: number, problem: string) => void,
  onInvalidUtf8?: (at: InvalidUtf8) => void,
): AsyncGenerator<{ event: AtofEvent; position?: number; bytesRead: number }> {
  for await (const line of readLines(input, onInvalidUtf8 !== undefined ? { onInvalidUtf8 } : {})) {
    if (line.text.trim() === '') continue;
    const event = parseEvent(line.text, line.unterminated === true);
    if (typeof event === 'string') {
      report(line.number, event);
      continue;
    }
    const major = atofMajor(event.atof_version);
    if (major !== undefined && major !== 0) {
      throw new InputError(`${inputName(input)}:${line.number}: atof_version ${quotedValue(event.atof_version)} is major version ${major}; this reader knows ATOF 0.x only`);
    }
    yield { event, bytesRead: line.bytesRead };
  }
}

/** The file's events sorted by timestamp (stable), for input written out of order. */
async function* sortedEvents(
  input: string,
  report: (line: number, problem: string) => void,
  onInvalidUtf8?: (at: InvalidUtf8) => void,
): AsyncGenerator<{ event: AtofEvent; position: number; bytesRead: number }> {
  const all: { event: AtofEvent; instant: Instant; position: number; bytesRead: number }[] = [];
  for await (const { event, bytesRead } of readEvents(input, report, onInvalidUtf8)) {
    all.push({ event, instant: parseInstant(event.timestamp) as Instant, position: all.length, bytesRead });
  }
  all.sort((a, b) => compareInstants(a.instant, b.instant) || a.position - b.position);
  for (const { event, position, bytesRead } of all) yield { event, position, bytesRead };
}

/** An event with the fields routing needs, or what is wrong with the line (`unterminated`: the file ends inside it). */
function parseEvent(text: string, unterminated = false): AtofEvent | string {
  let value: unknown;
  try {
    value = parseJson(text);
  } catch (error) {
    return unterminated && !(error instanceof JsonTooDeepError) ? CUT_SHORT : whyNotJson(error);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a JSON object';
  const unreadable = whyNotReadableEvent(value as Record<string, unknown>);
  if (unreadable !== undefined) return unreadable;
  const event = value as Partial<AtofEvent>;
  // Copied into the trajectory's steps, a bad timestamp would make a file that validate rejects.
  if (parseInstant(event.timestamp) === undefined) return `ATOF event with an invalid timestamp (${quotedValue(event.timestamp)}; RFC 3339 or integer epoch microseconds)`;
  return value as AtofEvent;
}

/** `target` as the summary shows it: relative to `cwd` when inside it, terminal-safe (the --out folder is the user's name). */
function relative(target: string, cwd: string): string {
  const rel = path.relative(cwd, target);
  return safeForTerminal(rel.startsWith('..') || path.isAbsolute(rel) ? target : rel);
}
