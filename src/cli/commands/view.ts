/**
 * `view <atif.json|atof.jsonl>...`: a readable tree and timeline of each
 * session (turns, LLM calls, tool calls, subagents nested under their
 * parents), with durations, tokens and errors; `--html <file>` also writes
 * a self-contained HTML timeline.
 *
 * @module
 */

import path from 'node:path';
import { booleanFlag, HELP_FLAG, JSON_FLAG, stringFlag, type CommandSpec, type ParsedArgs } from '../args.ts';
import { describeFsError, InputError, UsageError } from '../errors.ts';
import { openSessions, type OpenedSessions } from '../view/load.ts';
import { startServer, type RunningServer } from '../serve/server.ts';
import { statSync } from 'node:fs';

/** `view --serve`'s port when none is given. */
const DEFAULT_PORT = 7878;
import { htmlTargetPath, pageStem, STDIN } from '../files.ts';
import { MemoryProbe } from '../memory-probe.ts';
import type { CliIo } from '../io.ts';
import { packageVersion } from '../package-info.ts';
import { safeForTerminal } from '../terminal-text.ts';
import { writeHtmlTimeline, type HtmlSource, type WrittenTimeline } from '../view/html.ts';
import { eachRoot, type ViewNode } from '../view/model.ts';
import { renderText } from '../view/text.ts';
import { isRollupRow, rollupOf, type Rollup } from '../view/rollup.ts';
import { linkRemoteTrajectories } from '../view/linked.ts';
import { followReferencedFiles, missingReferencesText, sessionIdsShown } from '../view/referenced-files.ts';
import { linkAtofFiles, unlinkedText } from '../view/linked-atof.ts';
import { watchLauncher } from '../launcher-gone.ts';

export const viewSpec: CommandSpec = {
  name: 'view',
  summary: 'Print sessions as a tree and timeline (and write an HTML timeline)',
  usage: '<atif.json|atof.jsonl|->... [--html <file>] [--json]  |  --serve [folder...] [--port <n>] [--host <addr>]',
  details: [
    'Shows each session, its turns, the LLM calls and tool calls of each turn and the',
    'subagents under the calls that started them, with start offsets, durations and',
    'tokens. Failed calls are marked with ✗ and ERROR. --html writes one',
    'self-contained page (no network access) that a browser opens directly: click a',
    'row for its details, search, filter, zoom. Above 20 sessions it writes an index',
    'page and one page per session in x.sessions/ for x.html. "-" reads standard input;',
    '--json prints the trees as JSON instead of text. Control characters in session',
    'content are shown as \\xNN escapes, never sent to the terminal.',
    'A session another process recorded for a tool call of a given file (an MCP',
    'server\'s, in its own ATOF file or trajectory) is shown under that call.',
    '',
    '--serve [folder...] serves a live viewer of the folders (default: the current',
    'folder) on http://127.0.0.1:<port>/: the index of the ATIF and ATOF sessions',
    'found there, each opening its timeline, new sessions and lines appearing as',
    'agents write, and two ticked sessions compared side by side. --port 0 picks a',
    'free port. Ctrl-C stops it.',
  ].join('\n'),
  flags: {
    html: { type: 'string', value: '<file>', description: 'Also write an HTML timeline to <file> (a folder: <input>.html in it).' },
    json: JSON_FLAG,
    serve: { type: 'boolean', description: 'Serve a live viewer of the given folders instead (default: the current folder).' },
    port: { type: 'string', value: '<n>', description: `Port for --serve (default ${DEFAULT_PORT}; 0 picks a free one).` },
    host: { type: 'string', value: '<addr>', description: 'Address for --serve to listen on (default 127.0.0.1, this machine only).' },
    'report-memory': { type: 'boolean', hidden: true, description: 'Print the peak RSS to stderr (tests).' },
    help: HELP_FLAG,
  },
  positionals: { name: '<file>', min: 0, max: Number.POSITIVE_INFINITY },
};

/** What `view --json` prints (documented in docs/cli/README.md). */
interface ViewReport {
  command: 'view';
  files: { file: string; kind: 'atif' | 'atof'; sessions: JsonNode[] }[];
  html: { path: string; sessions: number; files: { path: string; bytes: number }[] } | null;
}

export async function view(args: ParsedArgs, io: CliIo): Promise<number> {
  if (booleanFlag(args, 'serve')) return serve(args, io);
  for (const flag of ['port', 'host']) if (stringFlag(args, flag) !== undefined) throw new UsageError(`--${flag} goes with --serve`, 'view');
  if (args.positionals.length === 0) throw new UsageError('"view" needs a <file> argument (or --serve [folder...])', 'view');
  const json = booleanFlag(args, 'json');
  if (args.positionals.filter((file) => file === STDIN).length > 1) throw new UsageError('standard input ("-") can be read only once', 'view');
  // Settled before anything is read or printed: a folder gets <input>.html (view.html for several inputs).
  const htmlFlag = stringFlag(args, 'html');
  const html = htmlFlag === undefined ? undefined : htmlTargetPath(htmlFlag, args.positionals.length === 1 ? pageStem(args.positionals[0]!) : 'view');
  // ATOF files are streamed and indexed; each session is built when it is printed or written, then let go.
  const opened: OpenedSessions[] = [];
  for (const file of args.positionals) {
    // A folder (the plugin's nemo-relay-output/) is what --serve lists: say so rather than only "is a directory".
    if (file !== STDIN && isDirectory(file)) throw new InputError(`cannot read ${file}: is a directory; to list and open its sessions, run "nemo-relay-hooks view --serve ${file}"`);
    const loaded = await openSessions(file, io);
    for (const message of [...loaded.notes, ...loaded.lineErrors]) io.err(`nemo-relay-hooks: ${safeForTerminal(loaded.name)}: ${safeForTerminal(message)}\n`);
    opened.push(loaded);
  }
  // Sessions of other processes (an MCP server's) go under the tool call they continue: an ATOF file's under the scope
  // its session names as its parent, in another ATOF file; a trajectory under the tool call that references it
  // (documents read whole only: a reference is a trajectory's).
  const atofLinks = linkAtofFiles(opened);
  for (const entry of atofLinks.unlinked) io.err(`nemo-relay-hooks: ${safeForTerminal(entry.file)}: ${safeForTerminal(unlinkedText(entry))}\n`);
  const sources: HtmlSource[] = opened.map((loaded) => ({ file: loaded.name, roots: loaded.streamed ? loaded.roots : [...(loaded.roots as ViewNode[])] }));
  const linked = sources.filter((_, index) => !opened[index]!.streamed) as { file: string; roots: ViewNode[] }[];
  const moved = [...atofLinks.moved, ...linkRemoteTrajectories(linked)];
  followTrajectoryFiles(args.positionals, opened, linked, io);
  let written: WrittenTimeline | undefined;
  // With --json, the page is written first: standard output then holds nothing but the finished report.
  if (json && html !== undefined) written = writeTimeline(html, sources, io);
  if (json) writeJsonReport(io, opened, sources, written);
  else {
    for (const [index, { name }] of opened.entries()) {
      const roots = sources[index]!.roots;
      if (args.positionals.length > 1) io.out(`${io.style.dim(`── ${safeForTerminal(name)}`)}\n`);
      const elsewhere = moved.filter((entry) => entry.from === name);
      for (const entry of elsewhere) io.out(`(session ${safeForTerminal(entry.session)} is shown under tool call ${safeForTerminal(entry.toolCall)} of ${safeForTerminal(entry.into)})\n`);
      if (roots.length === 0 && elsewhere.length === 0) io.out(`(no sessions in ${safeForTerminal(name)})\n`);
      let first = true;
      for (const root of eachRoot(roots)) {
        if (!first) io.out('\n');
        first = false;
        io.out(renderText(terminalSafe(root), io.style));
      }
      if (args.positionals.length > 1) io.out('\n');
    }
    if (html !== undefined) writeTimeline(html, sources, io);
  }
  if (booleanFlag(args, 'report-memory')) io.err(`report-memory: maxRSS=${new MemoryProbe().peakKb()}KiB\n`);
  return 0;
}

/**
 * Trajectories the ATIF inputs reference by file (Harbor's context summarization runs), read from beside each input
 * unless an input shows them already; a reference not found is said, since the session's totals then leave it out.
 */
function followTrajectoryFiles(files: readonly string[], opened: readonly OpenedSessions[], linked: readonly { file: string; roots: ViewNode[] }[], io: CliIo): void {
  const shown = sessionIdsShown(linked.flatMap((source) => source.roots));
  opened.forEach((loaded, index) => {
    if (loaded.kind !== 'atif' || loaded.streamed) return;
    const file = files[index]!;
    for (const root of loaded.roots as ViewNode[]) {
      const missing = followReferencedFiles(root, file === STDIN ? undefined : file, shown);
      if (missing.length > 0) io.err(`nemo-relay-hooks: ${safeForTerminal(loaded.name)}: ${safeForTerminal(missingReferencesText(root.sessionId ?? root.title, missing, file !== STDIN))}\n`);
    }
  });
}

function writeTimeline(html: string, sources: readonly HtmlSource[], io: CliIo): WrittenTimeline {
  let written: WrittenTimeline;
  try {
    written = writeHtmlTimeline(path.resolve(html), sources, `nemo-relay-hooks ${packageVersion()}`);
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError(describeFsError(error, 'cannot write', html));
  }
  const pages = written.files.length > 1 ? ` (an index and ${written.files.length - 1} session pages in ${path.basename(html).replace(/\.html?$/i, '')}.sessions/)` : '';
  io.err(`wrote ${safeForTerminal(html)}${pages}\n`);
  return written;
}

/**
 * Prints the `ViewReport` as `JSON.stringify(report, null, 2)` would, one
 * session at a time: a file of 50,000 sessions never has all its trees (or
 * all its JSON) in memory at once.
 */
function writeJsonReport(io: CliIo, opened: readonly OpenedSessions[], sources: readonly HtmlSource[], written: WrittenTimeline | undefined): void {
  const nested = (value: unknown, pad: string) => JSON.stringify(value, null, 2).replace(/\n/g, `\n${pad}`);
  io.out('{\n  "command": "view",\n  "files": [');
  opened.forEach((loaded, index) => {
    io.out(`${index > 0 ? ',' : ''}\n    {\n      "file": ${JSON.stringify(loaded.name)},\n      "kind": ${JSON.stringify(loaded.kind)},\n      "sessions": [`);
    let count = 0;
    for (const root of eachRoot(sources[index]!.roots)) io.out(`${count++ > 0 ? ',' : ''}\n        ${nested(withoutSource(root), '        ')}`);
    io.out(count > 0 ? '\n      ]\n    }' : ']\n    }');
  });
  const html: ViewReport['html'] = written ? { path: written.path, sessions: written.sessions, files: written.files } : null;
  io.out(`${opened.length > 0 ? '\n  ' : ''}],\n  "html": ${nested(html, '  ')}\n}\n`);
}

/** `view --serve`: runs until SIGINT or SIGTERM, then closes the server and returns 0. */
async function serve(args: ParsedArgs, io: CliIo): Promise<number> {
  for (const flag of ['json', 'html']) if (args.booleans.has(flag) || args.strings.has(flag)) throw new UsageError(`--${flag} does not go with --serve`, 'view');
  const portText = stringFlag(args, 'port', String(DEFAULT_PORT));
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) throw new UsageError(`--port must be a number from 0 to 65535 (got ${JSON.stringify(portText)})`, 'view');
  const host = stringFlag(args, 'host', '127.0.0.1');
  const folders = args.positionals.length > 0 ? args.positionals : ['.'];
  for (const folder of folders) {
    if (folder === STDIN) throw new UsageError('--serve reads folders, not standard input', 'view');
    try {
      statSync(folder);
    } catch (error) {
      throw new InputError(describeFsError(error, 'cannot serve', folder));
    }
  }
  // The handlers go in before the URL is printed: whoever reads that line may send
  // SIGINT at once, and a signal before them would end the process uncleanly.
  let stopRequested!: () => void;
  const stopped = new Promise<void>((resolve) => (stopRequested = resolve));
  let why = '';
  let unwatch = () => {};
  const stop = () => {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    unwatch();
    stopRequested();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  // Under npx a SIGTERM ends npm but never reaches this process: its going is the signal.
  unwatch = watchLauncher(io.env, () => {
    why = ' (the npm process that started it ended)';
    stop();
  });
  let running: RunningServer;
  try {
    running = await startServer({ folders, host, port, generator: `nemo-relay-hooks ${packageVersion()}`, onError: (message) => io.err(`${safeForTerminal(message)}\n`) });
  } catch (error) {
    stop();
    const code = (error as { code?: unknown } | null)?.code;
    if (code === 'EADDRINUSE') throw new InputError(`cannot serve on ${host}:${port}: the port is in use (--port 0 picks a free one)`);
    if (code === 'EACCES') throw new InputError(`cannot serve on ${host}:${port}: permission denied (ports below 1024 need privileges)`);
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') throw new InputError(`cannot serve on ${host}: no such address on this machine`);
    throw error;
  }
  const sessions = running.catalog.sessions().length;
  io.out(`serving ${sessions} session${sessions === 1 ? '' : 's'} from ${folders.map(safeForTerminal).join(', ')} at ${running.url} (Ctrl-C stops)\n`);
  await stopped;
  await running.close();
  if (booleanFlag(args, 'report-memory')) io.err(`report-memory: maxRSS=${new MemoryProbe().peakKb()}KiB\n`);
  io.err(`stopped${why}\n`);
  return 0;
}

/** A copy of the tree whose text fields cannot drive the terminal (escape sequences, OSC, BEL). */
function terminalSafe(target: ViewNode): ViewNode {
  return {
    ...target,
    title: safeForTerminal(target.title),
    ...(target.note !== undefined ? { note: safeForTerminal(target.note) } : {}),
    ...(target.error !== undefined ? { error: safeForTerminal(target.error) } : {}),
    children: target.children.map(terminalSafe),
  };
}

/** A node of `view --json`: sessions, turns and subagents carry their rollup (`own`, `totals`). */
type JsonNode = Omit<ViewNode, 'source' | 'children'> & Partial<Rollup> & { children: JsonNode[] };

/** The tree without the raw records behind each node (kept for the HTML detail pane only), with rollups. */
function withoutSource(target: ViewNode): JsonNode {
  const { source: _source, children, ...rest } = target;
  return { ...rest, ...(isRollupRow(target) ? rollupOf(target) : {}), children: children.map(withoutSource) };
}

function isDirectory(file: string): boolean {
  try {
    return statSync(file).isDirectory();
  } catch {
    return false; // Missing or unreadable: openSessions says which.
  }
}
