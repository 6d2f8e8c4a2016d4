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
 * File names follow the plugin: `hermes-atif-{session_id}.json`, where the
 * session id is the root scope's `metadata.session_id` when present, else
 * its uuid, reduced by `safeSessionFragment`. A second session with the
 * same id gets `-<uuid>` appended rather than overwriting the first.
 *
 * @module
 */

import path from 'node:path';
import { atifFilePath } from '../../plugin/atif-file.ts';
import { writeFileAtomic } from '../../shared/atomic-file.ts';
import { AtifBuilder } from '../../formats/atif/builder.ts';
import type { AtifBuilderStyle } from '../../formats/atif/builder.ts';
import type { AtofEvent } from '../../formats/atof/types.ts';
import { booleanFlag, HELP_FLAG, JSON_FLAG, stringFlag, type CommandSpec, type ParsedArgs } from '../args.ts';
import { describeFsError, InputError, UsageError } from '../errors.ts';
import { checkInputFile, ensureOutputDir, inputName, readLines, STDIN } from '../files.ts';
import { Progress } from '../progress.ts';
import { safeForTerminal } from '../terminal-text.ts';
import { statSync } from 'node:fs';
import { parseInstant } from '../../formats/instant.ts';
import { formatCount, formatDuration, type CliIo } from '../io.ts';
import { addTrajectory, emptyTotals } from '../trajectory-stats.ts';

export const convertSpec: CommandSpec = {
  name: 'convert',
  summary: 'Convert an ATOF event file into one ATIF trajectory per session',
  usage: '<events.jsonl|-> --out <dir> [--style exporter|plugin-host] [--json]',
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
    template: { type: 'string', value: '<name>', description: 'File name template with {session_id} (default hermes-atif-{session_id}.json).' },
    'agent-name': { type: 'string', value: '<name>', description: 'agent.name (default: "Hermes Agent" for plugin sessions, else the root scope name).' },
    'agent-version': { type: 'string', value: '<version>', description: 'agent.version (default "unknown").' },
    json: JSON_FLAG,
    help: HELP_FLAG,
  },
  positionals: { name: '<events.jsonl>', min: 1, max: 1 },
};

const MAX_REPORTED_LINES = 20;
const DEFAULT_TEMPLATE = 'hermes-atif-{session_id}.json';

interface OpenSession {
  root: AtofEvent;
  builder: AtifBuilder;
  /** Every scope uuid of the subtree, to route children and free them at the end. */
  members: string[];
  sessionId: string;
}

export async function convert(args: ParsedArgs, io: CliIo): Promise<number> {
  const input = args.positionals[0]!;
  const out = stringFlag(args, 'out');
  if (out === undefined) throw new UsageError('"convert" needs --out <dir>', 'convert');
  const style = stringFlag(args, 'style', 'exporter') as AtifBuilderStyle;
  const template = stringFlag(args, 'template', DEFAULT_TEMPLATE);
  if (!template.includes('{session_id}')) throw new UsageError('--template must contain {session_id}', 'convert');
  const started = Date.now();
  const json = booleanFlag(args, 'json');
  const name = inputName(input);
  const totalBytes = checkInputFile(input);
  const outDir = ensureOutputDir(out);
  const progress = new Progress(io, { label: `converting ${input === STDIN ? name : path.basename(input)}`, unit: 'events', totalBytes });

  const owners = new Map<string, OpenSession>();
  const usedNames = new Set<string>();
  const written: string[] = [];
  const totals = emptyTotals();
  let events = 0;
  let malformed = 0;
  let outside = 0;

  const finish = (session: OpenSession): void => {
    for (const uuid of session.members) owners.delete(uuid);
    let target = atifFilePath(outDir, template, session.sessionId);
    if (usedNames.has(target)) target = atifFilePath(outDir, template, `${session.sessionId}-${session.root.uuid}`);
    usedNames.add(target);
    const trajectory = session.builder.build();
    addTrajectory(totals, trajectory);
    try {
      writeFileAtomic(target, session.builder.toJson());
    } catch (error) {
      throw new InputError(describeFsError(error, 'cannot write', target));
    }
    written.push(target);
  };

  for await (const line of readLines(input)) {
    if (line.text.trim() === '') continue;
    const event = parseEvent(line.text);
    if (typeof event === 'string') {
      malformed += 1;
      if (malformed <= MAX_REPORTED_LINES) {
        progress.clear();
        io.err(`nemo-relay-hooks: ${safeForTerminal(name)}:${line.number}: ${safeForTerminal(event)}\n`);
      }
      continue;
    }
    events += 1;
    if (events % 4096 === 0) progress.update(events, line.bytesRead, `${formatCount(written.length)} written`);
    const isScope = event.kind === 'scope';
    const parent = typeof event.parent_uuid === 'string' ? owners.get(event.parent_uuid) : undefined;
    let session = owners.get(event.uuid) ?? parent;
    if (session === undefined) {
      if (!(isScope && event.scope_category === 'start' && event.category === 'agent')) {
        outside += 1;
        continue;
      }
      session = openSession(event, args);
    }
    if (isScope && event.scope_category === 'start' && !owners.has(event.uuid)) {
      owners.set(event.uuid, session);
      session.members.push(event.uuid);
    }
    session.builder.add(event);
    if (isScope && event.scope_category === 'end' && event.uuid === session.root.uuid) finish(session);
  }
  // Sessions without an end event: write what there is.
  const unfinished = new Set(owners.values());
  for (const session of unfinished) finish(session);
  progress.clear();

  if (malformed > MAX_REPORTED_LINES) io.err(`nemo-relay-hooks: ${name}: ${formatCount(malformed - MAX_REPORTED_LINES)} more malformed lines not shown\n`);
  const warnings: string[] = [];
  if (outside > 0) warnings.push(`${formatCount(outside)} events outside any agent scope were left out`);
  if (written.length === 0) warnings.push(events === 0 ? `${name} holds no ATOF events: no trajectory written` : 'no top-level agent scope: no trajectory written');
  if (unfinished.size > 0) warnings.push(`${formatCount(unfinished.size)} session${unfinished.size === 1 ? '' : 's'} without an end event, written as partial trajectories`);
  // Partial sessions are in the summary's sessions row; the others go to stderr, as the outside-scope count always did.
  if (!json) for (const warning of warnings) if (!warning.includes('partial')) io.err(`nemo-relay-hooks: warning: ${warning}\n`);
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
  const { style: color } = io;
  const lines = [
    color.bold(`converted ${formatCount(events)} events of ${name} into ${formatCount(written.length)} ${written.length === 1 ? 'trajectory' : 'trajectories'} in ${formatDuration((Date.now() - started) * 1000)}`),
    `  sessions   ${formatCount(totals.trajectories)}${totals.subagents > 0 ? ` (+${formatCount(totals.subagents)} embedded subagent${totals.subagents === 1 ? '' : 's'})` : ''}${unfinished.size > 0 ? color.yellow(`, ${unfinished.size} without an end event (partial)`) : ''}`,
    `  steps      ${formatCount(totals.steps)}`,
    `  LLM calls  ${formatCount(totals.llmCalls)}`,
    `  tool calls ${formatCount(totals.toolCalls)}`,
    `  tokens     prompt ${formatCount(totals.promptTokens)} · completion ${formatCount(totals.completionTokens)} · cached ${formatCount(totals.cachedTokens)}`,
    `  malformed  ${malformed > 0 ? color.red(formatCount(malformed)) : '0'} lines skipped`,
    ...written.slice(0, 10).map((file) => `  wrote      ${relative(file, io.cwd)}`),
  ];
  if (written.length > 10) lines.push(`  wrote      … ${formatCount(written.length - 10)} more in ${relative(outDir, io.cwd)}`);
  io.out(`${lines.join('\n')}\n`);
  return 0;
}

/** What `convert --json` prints (documented in the README). */
export interface ConvertReport {
  command: 'convert';
  ok: boolean;
  input: string;
  elapsedMs: number;
  counters: Record<string, number>;
  files: { format: 'atif'; path: string; bytes: number }[];
  warnings: string[];
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

function openSession(root: AtofEvent, args: ParsedArgs): OpenSession {
  const metadata = typeof root.metadata === 'object' && root.metadata !== null && !Array.isArray(root.metadata) ? root.metadata : {};
  const logical = typeof metadata.session_id === 'string' && metadata.session_id !== '' ? metadata.session_id : undefined;
  const fromPlugin = root.name.startsWith('hermes-session-');
  const style = stringFlag(args, 'style', 'exporter') as AtifBuilderStyle;
  const model = typeof metadata.model === 'string' && metadata.model !== '' ? metadata.model : fromPlugin ? 'unknown' : undefined;
  const builder = new AtifBuilder({
    // plugin-host files are keyed by the root uuid, like native's plugin writes them.
    sessionId: style === 'plugin-host' ? root.uuid : (logical ?? root.uuid),
    agentName: stringFlag(args, 'agent-name') ?? (fromPlugin ? 'Hermes Agent' : root.name),
    agentVersion: stringFlag(args, 'agent-version', 'unknown'),
    ...(model !== undefined ? { modelName: model } : {}),
    style,
  });
  return { root, builder, members: [], sessionId: logical ?? root.uuid };
}

/** An event with the fields routing needs, or what is wrong with the line. */
function parseEvent(text: string): AtofEvent | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return `not valid JSON (${error instanceof Error ? error.message : String(error)})`;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a JSON object';
  const event = value as Partial<AtofEvent>;
  if (event.kind !== 'scope' && event.kind !== 'mark') return `not an ATOF event (kind ${JSON.stringify(event.kind)})`;
  if (typeof event.uuid !== 'string') return 'ATOF event without a uuid';
  if (typeof event.name !== 'string') return 'ATOF event without a name';
  // Copied into the trajectory's steps, a bad timestamp would make a file that validate rejects.
  if (parseInstant(event.timestamp) === undefined) return `ATOF event with an invalid timestamp (${JSON.stringify(event.timestamp)}; RFC 3339 or integer epoch microseconds)`;
  return value as AtofEvent;
}

function relative(target: string, cwd: string): string {
  const rel = path.relative(cwd, target);
  return rel.startsWith('..') || path.isAbsolute(rel) ? target : rel;
}
