/**
 * `compare <a> <b>`: two runs of an agent step by step (two ATIF files, or
 * two sessions from ATOF files, `run.jsonl#<session id>`). Exit codes like
 * `diff`: 0 the runs are equivalent, 1 they differ, 2 the command line or
 * an input is unusable (so a script never mistakes a missing file for a
 * difference).
 *
 * @module
 */

import { existsSync } from 'node:fs';
import path from 'node:path';
import { booleanFlag, HELP_FLAG, JSON_FLAG, stringFlag, type CommandSpec, type ParsedArgs } from '../args.ts';
import { compareRuns, type ComparedRuns } from '../compare/compare-runs.ts';
import { sameRemoteSessions } from '../compare/remote-sessions.ts';
import { writeComparePage } from '../compare/html.ts';
import { renderComparison } from '../compare/text.ts';
import { CliError, describeFsError, InputError, UsageError } from '../errors.ts';
import { htmlTargetPath, pageStem, STDIN } from '../files.ts';
import type { CliIo } from '../io.ts';
import { packageVersion } from '../package-info.ts';
import { safeForTerminal } from '../terminal-text.ts';
import { linkAtofFiles, unlinkedText } from '../view/linked-atof.ts';
import { openSessions } from '../view/load.ts';
import type { ViewNode } from '../view/model.ts';
import { listSome } from '../../shared/text.ts';

export const compareSpec: CommandSpec = {
  name: 'compare',
  summary: 'Compare two runs step by step: what changed, where, and what it cost',
  usage: '<a> <b> [--json] [--html <file>]',
  details: [
    'Each run is an ATIF trajectory (.json) or an ATOF file (.jsonl); pick one session',
    'of an ATOF file with several as <file>#<session id>. The steps of the two runs are',
    'aligned (a longest common subsequence over step kind, model and tool names, so an',
    'inserted or removed step does not shift the rest) and each pair is reported with',
    'what differs (messages, model, tool calls, arguments, results, errors, tokens) and',
    'its duration, token and cost deltas; then the totals of both runs.',
    '  =  the same     ~  changed     -  only in a     +  only in b',
    '--json prints { pairs, totals, ... } for scripts; --html <file> writes a',
    'side-by-side page. Exit codes: 0 equivalent, 1 different, 2 usage or input error.',
  ].join('\n'),
  flags: {
    json: JSON_FLAG,
    html: { type: 'string', value: '<file>', description: 'Also write a side-by-side HTML page to <file> (a folder: <a>-vs-<b>.html in it).' },
    help: HELP_FLAG,
  },
  positionals: { name: '<run>', min: 2, max: 2 },
};

/** A problem with an input: exit 2 here, since 1 means "the runs differ". */
class CompareInputError extends CliError {
  override readonly name = 'CompareInputError';
  constructor(message: string) {
    super(message, 2);
  }
}

interface Run {
  file: string;
  session: string;
  root: ViewNode;
  /** The path it was read from; undefined for standard input. */
  path: string | undefined;
  kind: 'atif' | 'atof';
}

export async function compare(args: ParsedArgs, io: CliIo): Promise<number> {
  const [first, second] = args.positionals as [string, string];
  if (first === STDIN && second === STDIN) throw new UsageError('standard input ("-") can be read only once', 'compare');
  let a: Run;
  let b: Run;
  let html: string | undefined;
  try {
    // Settled before the runs are read: a folder gets <a>-vs-<b>.html.
    const htmlFlag = stringFlag(args, 'html');
    html = htmlFlag === undefined ? undefined : htmlTargetPath(htmlFlag, `${pageStem(splitRef(first).file)}-vs-${pageStem(splitRef(second).file)}`);
    a = await loadRun(first, io);
    b = await loadRun(second, io);
  } catch (error) {
    if (error instanceof InputError) throw new CompareInputError(error.message);
    throw error;
  }
  const { onlyRecorded, missing } = sameRemoteSessions(a, b);
  // What `view` of each file says of its references not found (the run's totals leave them out); a file given twice, once.
  const said = (run: Run, texts: readonly string[]) => texts.map((text) => `nemo-relay-hooks: ${safeForTerminal(run.file)}: ${safeForTerminal(text)}\n`);
  for (const line of new Set([...said(a, missing.a), ...said(b, missing.b)])) io.err(line);
  const compared = compareRuns({ ref: { file: a.file, session: a.session }, root: a.root }, { ref: { file: b.file, session: b.session }, root: b.root }, onlyRecorded);
  if (html !== undefined) writePage(html, compared, io);
  if (booleanFlag(args, 'json')) io.out(`${JSON.stringify(compared.report, null, 2)}\n`);
  else io.out(renderComparison(compared.report, io.style));
  return compared.report.equivalent ? 0 : 1;
}

function writePage(target: string, compared: ComparedRuns, io: CliIo): void {
  try {
    writeComparePage(path.resolve(target), compared, `nemo-relay-hooks ${packageVersion()}`);
  } catch (error) {
    if (error instanceof CliError) throw new CompareInputError(error.message);
    throw new CompareInputError(describeFsError(error, 'cannot write', target));
  }
  io.err(`wrote ${safeForTerminal(target)}\n`);
}

/** `file` or `file#session`: a path that exists as written wins over the `#` form. */
function splitRef(ref: string): { file: string; session?: string } {
  const hash = ref.lastIndexOf('#');
  if (ref === STDIN || hash <= 0 || existsSync(ref)) return { file: ref };
  return { file: ref.slice(0, hash), session: ref.slice(hash + 1) };
}

async function loadRun(ref: string, io: CliIo): Promise<Run> {
  const { file, session } = splitRef(ref);
  // A large ATOF file is streamed and indexed: only the session compared is built.
  const loaded = await openSessions(file, io);
  // A session naming its caller by span id only (an MCP server's, from a traceparent) joins the scope it names, as in
  // `view`; one naming it by uuid was joined when the file was indexed.
  if (loaded.streamed) for (const entry of linkAtofFiles([loaded]).unlinked) io.err(`nemo-relay-hooks: ${safeForTerminal(entry.file)}: ${safeForTerminal(unlinkedText(entry))}\n`);
  for (const note of loaded.notes) io.err(`nemo-relay-hooks: ${safeForTerminal(loaded.name)}: ${safeForTerminal(note)}\n`);
  // Lines skipped (not JSON, an event without a string name) are said as `view` says them: the run compared lacks them.
  for (const message of loaded.lineErrors) io.err(`nemo-relay-hooks: ${safeForTerminal(loaded.name)}: ${safeForTerminal(message)}\n`);
  const name = loaded.name;
  const ids = loaded.ids;
  if (ids.length === 0) throw new InputError(`${name}: no sessions in this file`);
  if (session !== undefined) {
    const position = ids.indexOf(session);
    if (position === -1) throw new InputError(`${name}: no session ${JSON.stringify(session)} (it has ${listSome(ids, 5)})`);
    return { file: name, session, root: loaded.roots.at(position)!, path: file === STDIN ? undefined : file, kind: loaded.kind };
  }
  if (ids.length > 1) throw new InputError(`${name} has ${ids.length} sessions (${listSome(ids, 5)}); pick one with ${name}#<session id>`);
  return { file: name, session: ids[0]!, root: loaded.roots.at(0)!, path: file === STDIN ? undefined : file, kind: loaded.kind };
}
