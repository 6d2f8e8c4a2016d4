/**
 * What `view --serve` knows about its folders: every ATIF (`.json`) and ATOF
 * (`.jsonl`, `.ndjson`) file under them, the sessions each holds, and which
 * files changed since the last look. Files are found by walking the folders
 * (symbolic links are not followed, so nothing outside them is read), and
 * re-read only when their size or modification time changed. A file that
 * is not a session (a `package.json`, a half-written trajectory) is listed
 * as a problem and keeps its last good sessions. An ATOF file's session that
 * continues another file's tool call (an MCP server's, each process writing
 * its own file) is shown under that call, as `view` of the files together
 * shows it, and not listed on its own. A trajectory that references others
 * by file from a system step (Harbor's context summarization runs) shows
 * them under that step, read from beside it as `view` of the file reads them
 * (`followReferencedFiles`), so its totals are the file's; each is still
 * listed on its own too, as `view` shows a referenced file given with the
 * file that references it. What `view` says of a file on stderr (a
 * `schema_version` it does not know, references not found, an ATOF file's
 * lines left out) is its rows' `notes`.
 *
 * @module
 */

import { closeSync, lstatSync, readdirSync, readFileSync, realpathSync, statSync, type Stats } from 'node:fs';
import { InputError } from '../errors.ts';
import { openRegularFile } from '../files.ts';
import path from 'node:path';
import { firstLineKind } from '../detect.ts';
import { AtofIndex, summaryOf, type IndexedSession, type SessionSummary } from '../view/atof-index.ts';
import { readReferencedTrajectories, referencedTrajectoryFiles } from '../compare/remote-sessions.ts';
import { linkAtofFiles, type AtofInput } from '../view/linked-atof.ts';
import { sessionsOf } from '../view/load.ts';
import { followReferencedFiles, missingReferencesText, referencedFilePaths, sessionIdsShown } from '../view/referenced-files.ts';
import { sessionIdOf, uniqueSessionIds, type RootList, type ViewNode } from '../view/model.ts';
import { formatCost, type Figures } from '../view/rollup.ts';
import { formatCount, formatDuration } from '../io.ts';
import { tokenCell, tokensOf } from '../view/text.ts';

/** An ATIF document larger than this is listed as a problem rather than read whole (ATOF files are streamed, any size). */
const MAX_FILE_BYTES = 256 * 1024 * 1024;
const ATOF_FILE = /\.(jsonl|ndjson)$/i;
const MAX_DEPTH = 6;
const SESSION_FILE = /\.(json|jsonl|ndjson)$/i;

interface CatalogFile {
  /** The file as shown: the folder as given, then the path under it. */
  name: string;
  absolute: string;
  size: number;
  mtimeMs: number;
  /** The file's inode: another one under the same name (a file renamed over it) is read from its start. */
  ino: number;
  kind: 'atif' | 'atof' | null;
  /** ATIF files: the trajectory's tree. */
  roots: ViewNode[];
  /** ATIF files: what `view` says of the file (`LoadedSessions.notes`: a schema_version it does not know). */
  notes?: string[];
  problem?: string;
  /** The index rows of this file's sessions, worked out once per change. */
  entries?: SessionEntry[];
  /** ATOF files: the file's sessions by the byte offsets of their lines, read on from where the last look stopped. */
  atof?: AtofIndex;
  /** ATOF files: their sessions as `view` of all the folders' ATOF files together shows them (`Catalog.link`). */
  linked?: LinkedAtof;
  /**
   * ATIF files: the trajectories of the folders it references (from its tool calls, and by file from its steps,
   * `follows`), and whether one of them references it from a tool call (then it is listed under that call only).
   */
  references?: { files: string[]; referenced: boolean; follows: boolean };
  /** ATIF files: the files its tool calls reference (worked out once per change of the file). */
  referenceTargets?: string[];
  /** ATIF files: where the trajectories it references by file would be, found or not (once per change of the file). */
  referencePaths?: string[];
}

/**
 * An ATOF file's sessions once each other file's session that continues a tool call of one of them (an MCP server's,
 * in its own process's file) is shown under that call, as `view` of the files given together shows them.
 */
interface LinkedAtof {
  /** Its sessions shown elsewhere, under another file's tool call. */
  movedOut: Set<string>;
  /** Its sessions that show other files' sessions, and those files (a page of one follows them as they grow). */
  holding: Map<string, string[]>;
  /** Its sessions listed on their own, as `linkAtofFiles` builds them, by their position there. */
  positions: Map<string, number>;
  roots: RootList;
}

/** One row of the served index (`/api/sessions`). */
export interface SessionEntry extends Figures {
  key: string;
  file: string;
  kind: 'atif' | 'atof';
  session: string;
  title: string;
  note?: string;
  startUs: number | null;
  modifiedMs: number;
  /** The catalog version this session first appeared at (the index marks sessions new since it opened). */
  since: number;
  /** What `view` of the file says of the session on stderr, when anything. */
  notes?: string[];
}

/**
 * A row as the index page shows it: its figures already written as text by
 * the functions the terminal view and `compare` use, so the page states no
 * formatting rule of its own (its copy once wrote `$2.00` where the terminal
 * writes `$2`). Made for the rows of one page only, not kept per session.
 */
export interface SessionRow extends SessionEntry {
  text: { started: string; duration: string; tokens: string; cost: string };
}

/** A page of the index: the sessions that match, newest first. */
export interface SessionPage {
  /** Sessions in the folders. */
  total: number;
  /** Sessions that match the filter. */
  matched: number;
  offset: number;
  sessions: SessionRow[];
}

export interface SessionQuery {
  /** Words the title, note or file name must contain (case-insensitive). */
  text?: string;
  errorsOnly?: boolean;
  offset?: number;
  limit?: number;
}

/** A session of the served folders, as a page shows it. */
export interface FoundSession {
  file: string;
  session: string;
  root: ViewNode;
  /** The files its tree shows lines of: its own, then other files' whose sessions it shows (a page follows them). */
  files: string[];
  /** Where its file is (a trajectory's references are read from its folder). */
  path: string;
  kind: 'atif' | 'atof';
  /** What `view` of the file says of the session on stderr (`SessionEntry.notes`). */
  notes: string[];
}

/** A session asked for from a file rewritten since the catalog last looked at it: the next look (a second) reads it again. */
export class FileChangedError extends Error {
  override readonly name = 'FileChangedError';

  constructor(file: string) {
    super(`${file} was rewritten since the server last looked at it; reload in a moment`);
  }
}

export class Catalog {
  readonly folders: readonly string[];
  /** Bumped on every change the clients are told about. */
  version = 0;
  private readonly files = new Map<string, CatalogFile>();
  /** The index rows of sessions holding another file's, and what they were worked out from (those files' sizes read). */
  private readonly heldSummaries = new WeakMap<IndexedSession, { stamp: string; summary: SessionSummary }>();
  /** Files whose sessions are shown elsewhere or show others', as of the last look. */
  private linkedFiles = new Set<string>();
  /** Trajectories by where they are, for a reference to one (`trajectoryAt`). */
  private trajectories = new Map<string, CatalogFile>();
  /** The index rows of trajectories that reference others, and the sizes and times of the files they were worked out from. */
  private readonly referencingSummaries = new WeakMap<CatalogFile, { stamp: string; summary: SessionSummary; notes: string[] }>();
  /** Every session, sorted, and the lower-case text a filter searches in each; worked out again after a change. */
  private sorted: SessionEntry[] | undefined;
  private haystacks: string[] = [];
  /**
   * Where each folder is walked from: its real path, resolved once, here.
   * The folder the user named is theirs, link or not (`rplink -> rp`); the
   * walk then skips the links inside it, as it always has.
   */
  private readonly walkedFrom: readonly string[];

  constructor(folders: readonly string[]) {
    this.folders = folders;
    this.walkedFrom = folders.map(realFolder);
  }

  /** Looks at the folders again; returns the names of the files that appeared, changed or went away. */
  refresh(): string[] {
    const seen = new Set<string>();
    const changed: string[] = [];
    this.folders.forEach((folder, index) => {
      const root = this.walkedFrom[index]!;
      for (const absolute of walk(root, 0)) {
        // Named under the folder as the user named it: the link's name, not where it leads.
        const name = path.join(folder, path.relative(root, absolute));
        if (seen.has(name)) continue;
        seen.add(name);
        let stat: Stats;
        try {
          stat = statSync(absolute);
        } catch {
          continue;
        }
        const known = this.files.get(name);
        // Unchanged, but a huge open session's figures that waited for their turn are now due (`AtofIndex.summaryDue`).
        if (known && known.size === stat.size && known.mtimeMs === stat.mtimeMs) {
          if (known.atof?.summaryDue() === true) changed.push(name);
          continue;
        }
        const read = this.read(name, absolute, stat, known);
        // Its old rows, for when each of its sessions first appeared (worked out again below).
        if (known?.entries !== undefined) read.entries = known.entries;
        this.files.set(name, read);
        changed.push(name);
      }
    });
    for (const name of [...this.files.keys()]) {
      if (!seen.has(name)) {
        this.files.delete(name);
        changed.push(name);
      }
    }
    if (changed.length > 0) {
      // A file that changed may change how another's sessions are shown (a server's session joining its caller's).
      const linkedBefore = this.linkedFiles;
      const changedNow = new Set(changed);
      this.link();
      for (const file of this.files.values()) {
        if (!changedNow.has(file.name) && !linkedBefore.has(file.name) && !this.linkedFiles.has(file.name)) continue;
        const since = new Map((file.entries ?? []).map((entry) => [entry.key, entry.since]));
        file.entries = this.entriesOf(file, since, this.version + 1);
      }
      this.version += 1;
      this.sorted = undefined;
    }
    return changed;
  }

  /**
   * Shows each ATOF file's session that continues another file's tool call under that call, and not on its own: what
   * `view` of the files given together does (`linkAtofFiles`), so the served folder of an MCP client's and its
   * server's files (each process writes its own) is the same tree.
   */
  private link(): void {
    this.linkTrajectories();
    const atofFiles = [...this.files.values()].filter((file): file is CatalogFile & { atof: AtofIndex } => file.atof !== undefined);
    const inputs: (AtofInput & { file: CatalogFile & { atof: AtofIndex } })[] = atofFiles.map((file) => ({
      file,
      name: file.name,
      index: file.atof,
      ids: file.atof.sessions.map((indexed) => indexed.session),
      roots: file.atof.roots(),
    }));
    const { moved } = linkAtofFiles(inputs);
    for (const entry of moved) this.linkedFiles.add(entry.from).add(entry.shownIn.file);
    for (const input of inputs) {
      const holding = new Map<string, string[]>();
      for (const entry of moved) {
        if (entry.shownIn.file !== input.name) continue;
        holding.set(entry.shownIn.session, [...new Set([...(holding.get(entry.shownIn.session) ?? []), entry.from])]);
      }
      const movedOut = new Set(moved.filter((entry) => entry.from === input.name).map((entry) => entry.session));
      input.file.linked = { movedOut, holding, positions: new Map(input.ids.map((id, position) => [id, position])), roots: input.roots };
    }
  }

  /**
   * Shows each trajectory another trajectory of the folders references from a tool call (an MCP server's, written
   * beside its caller's) under that call, and not on its own: the rule `compare` reads references by
   * (`readReferencedTrajectories`: from the referencing trajectory's folder, never outside it), from the catalog's files.
   */
  private linkTrajectories(): void {
    const trajectories = [...this.files.values()].filter((file) => file.kind === 'atif' && file.roots.length === 1);
    this.trajectories = new Map(trajectories.map((file) => [file.absolute, file]));
    this.linkedFiles = new Set();
    for (const file of trajectories) file.references = { files: [], referenced: false, follows: false };
    for (const file of trajectories) {
      file.referenceTargets ??= referencedTrajectoryFiles(file.roots[0]!, file.absolute);
      for (const target of file.referenceTargets) {
        const referenced = this.trajectories.get(target);
        if (referenced === undefined || referenced === file) continue;
        file.references!.files.push(referenced.name);
        referenced.references!.referenced = true;
        this.linkedFiles.add(file.name).add(referenced.name);
      }
    }
    for (const file of trajectories) this.linkReferencedFiles(file);
  }

  /**
   * The trajectories a trajectory references by file (`followReferencedFiles`), and those they reference in turn,
   * that the folders hold. One that references any is linked even when none is there yet: a file appearing beside
   * it later changes its totals and its note.
   */
  private linkReferencedFiles(file: CatalogFile): void {
    const pathsOf = (each: CatalogFile) => (each.referencePaths ??= referencedFilePaths(each.roots[0]!, each.absolute));
    if (pathsOf(file).length === 0) return;
    file.references!.follows = true;
    this.linkedFiles.add(file.name);
    const queue = [...pathsOf(file)];
    const seen = new Set<string>([file.absolute]);
    for (let at = 0; at < queue.length; at += 1) {
      const referenced = this.trajectories.get(queue[at]!);
      if (referenced === undefined || seen.has(referenced.absolute)) continue;
      seen.add(referenced.absolute);
      if (!file.references!.files.includes(referenced.name)) file.references!.files.push(referenced.name);
      this.linkedFiles.add(referenced.name);
      queue.push(...pathsOf(referenced));
    }
  }

  /** Whether a trajectory's page and row show other files' trajectories (`withReferences`). */
  private showsReferences(file: CatalogFile): boolean {
    return file.references !== undefined && (file.references.files.length > 0 || file.references.follows);
  }

  /**
   * A trajectory's tree with the trajectories it references read under their calls and steps, from the catalog only,
   * as `view` of the file reads them; the files read, and what `view` says of it (references not found).
   */
  private withReferences(file: CatalogFile): { root: ViewNode; files: string[]; notes: string[] } {
    const root = structuredClone(file.roots[0]!);
    const files = [file.name];
    const read = (absolute: string) => {
      const found = this.trajectoryAt(absolute);
      if (found !== undefined) files.push(found.file);
      return found?.root;
    };
    readReferencedTrajectories(root, file.absolute, read);
    const follows = file.references?.follows === true;
    const missing = follows ? followReferencedFiles(root, file.absolute, sessionIdsShown([root]), read) : [];
    // Its page also follows the names a referenced run not written yet would have (beside it, as the walk names files).
    if (follows) for (const where of file.referencePaths ?? []) files.push(path.join(path.dirname(file.name), path.basename(where)));
    const notes = [...(file.notes ?? []), ...(missing.length > 0 ? [missingReferencesText(root.sessionId ?? root.title, missing)] : [])];
    return { root, files: [...new Set(files)], notes };
  }

  /** The row of a trajectory referencing others: its tree's with theirs, worked out again when one of the files changed. */
  private referencingSummary(file: CatalogFile): { summary: SessionSummary; notes: string[] } {
    const stamp = [file, ...(file.references?.files ?? []).map((name) => this.files.get(name))].map((each) => `${each?.name}:${each?.size}:${each?.mtimeMs}`).join(' ');
    const known = this.referencingSummaries.get(file);
    if (known?.stamp === stamp) return known;
    const shown = this.withReferences(file);
    const worked = { stamp, summary: summaryOf(shown.root), notes: shown.notes };
    this.referencingSummaries.set(file, worked);
    return worked;
  }

  /** The index rows of a file's sessions; `since` keeps when each known one first appeared. */
  private entriesOf(file: CatalogFile, since: ReadonlyMap<string, number>, version: number): SessionEntry[] {
    if (file.kind === null) return [];
    let rows: [string, SessionSummary, string[]][];
    if (file.atof !== undefined) {
      const index = file.atof;
      const linked = file.linked;
      const notes = atofNotes(index);
      rows = index.sessions.filter((indexed) => !linked?.movedOut.has(indexed.session)).map((indexed) => [indexed.session, linked?.holding.has(indexed.session) ? this.heldSummary(linked, index, indexed) : index.summary(indexed), notes]);
    } else if (file.references?.referenced === true) {
      rows = [];
    } else if (this.showsReferences(file)) {
      const { summary, notes } = this.referencingSummary(file);
      rows = [[sessionIdOf(file.roots[0]!), summary, notes]];
    } else {
      const ids = uniqueSessionIds(file.roots.map(sessionIdOf));
      rows = file.roots.map((root, index) => [ids[index]!, summaryOf(root), file.notes ?? []]);
    }
    return rows.map(([session, summary, notes]) => {
      const key = `${file.name}#${session}`;
      return entryOf(file, key, session, summary, file.kind!, since.get(key) ?? version, notes);
    });
  }

  /** The row of a session showing other files' sessions: its tree's, worked out again only when one of them grew. */
  private heldSummary(linked: LinkedAtof, index: AtofIndex, indexed: IndexedSession): SessionSummary {
    const others = linked.holding.get(indexed.session) ?? [];
    const stamp = [indexed.lines.length, ...others.map((name) => `${name}:${this.files.get(name)?.atof?.offset ?? 0}`)].join(' ');
    const known = this.heldSummaries.get(indexed);
    if (known?.stamp === stamp) return known.summary;
    let summary: SessionSummary;
    try {
      const position = linked.positions.get(indexed.session);
      const root = position === undefined ? undefined : linked.roots.at(position);
      summary = root === undefined ? index.summary(indexed) : summaryOf(root);
    } catch (error) {
      // A file it shows lines of went away since the walk: its own row until the next look.
      if (!(error instanceof InputError)) throw error;
      return index.summary(indexed);
    }
    this.heldSummaries.set(indexed, { stamp, summary });
    return summary;
  }

  private read(name: string, absolute: string, stat: Stats, previous: CatalogFile | undefined): CatalogFile {
    const entry: CatalogFile = { name, absolute, size: stat.size, mtimeMs: stat.mtimeMs, ino: stat.ino, kind: previous?.kind ?? null, roots: previous?.roots ?? [], ...(previous?.notes !== undefined ? { notes: previous.notes } : {}) };
    if (ATOF_FILE.test(absolute)) return readAtof(entry, previous?.ino === stat.ino ? previous.atof : undefined);
    if (stat.size > MAX_FILE_BYTES) return { ...entry, problem: `larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB; open it with "view" instead` };
    try {
      // Through the descriptor: the file may have become a FIFO or a link since the walk looked at it.
      const descriptor = openRegularFile(absolute, { followLinks: false });
      let text: string;
      try {
        text = readFileSync(descriptor, 'utf8');
      } finally {
        closeSync(descriptor);
      }
      const loaded = sessionsOf(name, text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
      return { ...entry, kind: loaded.kind, roots: loaded.roots, notes: loaded.notes };
    } catch (error) {
      return { ...entry, problem: error instanceof Error ? error.message : String(error) };
    }
  }

  /** Every session, newest file first, then newest session first. */
  sessions(): SessionEntry[] {
    if (this.sorted === undefined) {
      const entries: SessionEntry[] = [];
      for (const file of this.files.values()) for (const entry of file.entries ?? []) entries.push(entry);
      this.sorted = entries.sort((a, b) => b.modifiedMs - a.modifiedMs || (b.startUs ?? 0) - (a.startUs ?? 0) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      this.haystacks = this.sorted.map((entry) => `${entry.title} ${entry.note ?? ''} ${entry.file}`.toLowerCase());
    }
    return this.sorted;
  }

  /** One page of the sessions that match `query` (the served index asks for what it shows, never for all of them). */
  page(query: SessionQuery): SessionPage {
    const all = this.sessions();
    const words = (query.text ?? '').trim().toLowerCase();
    const matching = words === '' && !query.errorsOnly ? all : all.filter((entry, index) => (!query.errorsOnly || entry.errors > 0) && (words === '' || this.haystacks[index]!.includes(words)));
    const offset = Math.max(0, query.offset ?? 0);
    return { total: all.length, matched: matching.length, offset, sessions: matching.slice(offset, offset + Math.max(0, query.limit ?? 200)).map(rowOf) };
  }

  /** Files that could not be read as sessions (not counting files that hold none). */
  problems(): { file: string; problem: string }[] {
    return [...this.files.values()].filter((file) => file.problem !== undefined).map((file) => ({ file: file.name, problem: file.problem! }));
  }

  /**
   * The session a key names, only ever from the catalog: a key is never turned into a path. A fresh tree each time
   * (the caller may change it); `files` are the files its tree shows lines of (its own, and those of other files'
   * sessions it shows under its tool calls).
   */
  find(key: string): FoundSession | undefined {
    const hash = key.lastIndexOf('#');
    if (hash === -1) return undefined;
    const file = this.files.get(key.slice(0, hash));
    const session = key.slice(hash + 1);
    if (file?.atof !== undefined) {
      const linked = file.linked;
      const position = linked?.positions.get(session);
      const indexed = file.atof.find(session);
      if (indexed === undefined || linked?.movedOut.has(session)) return undefined;
      try {
        // Rewritten since the last look (within its second): its sessions are not where the index says until the next.
        if (!file.atof.sameBytesAsRead()) throw new FileChangedError(file.name);
        const root = position === undefined ? file.atof.tree(indexed) : linked!.roots.at(position);
        if (root === undefined) return undefined;
        return { file: file.name, session, root, files: [file.name, ...(linked?.holding.get(session) ?? [])], path: file.absolute, kind: 'atof', notes: atofNotes(file.atof) };
      } catch (error) {
        // The file went away or stopped being a regular file since the last look: no such session now.
        if (error instanceof InputError) return undefined;
        throw error;
      }
    }
    const position = file === undefined ? -1 : uniqueSessionIds(file.roots.map(sessionIdOf)).indexOf(session);
    if (file === undefined || position === -1 || file.references?.referenced === true) return undefined;
    const { root, files, notes } = this.showsReferences(file) ? this.withReferences(file) : { root: structuredClone(file.roots[position]!), files: [file.name], notes: file.notes ?? [] };
    return { file: file.name, session, root, files, path: file.absolute, kind: 'atif', notes };
  }

  /**
   * A fresh tree of the trajectory at `absolute` when the catalog holds it (a reference from another trajectory is read
   * only from what the walk found: no link, nothing outside the folders).
   */
  trajectoryAt(absolute: string): { file: string; root: ViewNode } | undefined {
    const file = this.trajectories.get(absolute);
    return file === undefined ? undefined : { file: file.name, root: structuredClone(file.roots[0]!) };
  }
}

/**
 * An ATOF file, read on from where the last look stopped, up to its last
 * complete line: a file that grows by lines is never read again from the
 * beginning, and neither the file nor its events are held (`AtofIndex`).
 * One rewritten since (shorter than where the last look stopped, another
 * file under its name, or other bytes where the last look read:
 * `AtofIndex.sameBytesAsRead`) is read from its start: larger than before,
 * it was once read on from the old offset, and kept the old run's sessions
 * with the new run's lines for good.
 */
function readAtof(entry: CatalogFile, previous: AtofIndex | undefined): CatalogFile {
  let index: AtofIndex | undefined;
  try {
    index = previous !== undefined && entry.size >= previous.offset && previous.sameBytesAsRead() ? previous : undefined;
    // Judged by its first line until that line is read (it may still be half written).
    if (index === undefined || index.offset === 0) {
      const first = firstLineKind(entry.absolute, { growing: true, followLinks: false });
      if (first === 'hooks') return { ...entry, kind: null, roots: [], problem: 'a recorded hook stream; run "nemo-relay-hooks replay" on it first' };
      if (first === 'not-json') return { ...entry, kind: null, roots: [], problem: 'not ATOF JSONL (the first line is not JSON)' };
      if (first === 'atif') return { ...entry, kind: null, roots: [], problem: 'an ATIF trajectory, not ATOF JSONL (name it .json to list its session)' };
      index ??= new AtofIndex(entry.absolute, { followLinks: false });
    }
    index.readOn(entry.size);
  } catch (error) {
    return { ...entry, problem: error instanceof Error ? error.message : String(error) };
  }
  if (index.unknownMajor !== undefined) return { ...entry, kind: null, roots: [], problem: `ATOF major version ${index.unknownMajor}; this reader knows ATOF 0.x only` };
  return { ...entry, kind: 'atof', roots: [], atof: index };
}

/** Notes of an ATOF file's lines left out that a row and a page give in full; the rest are counted in one more. */
const MAX_LINE_NOTES = 20;

/**
 * What `view` of an ATOF file says on stderr of the lines it leaves out (not JSON, not an ATOF event, a uuid or name
 * that is no string), in its words: the same reader's (`AtofIndex.lineErrors`, `unreadableEventError`). Once the
 * served index said nothing of them. Past `MAX_LINE_NOTES`, one note counts the rest.
 */
function atofNotes(index: AtofIndex): string[] {
  const errors = index.lineErrors;
  const notes = errors.slice(0, MAX_LINE_NOTES).map((error) => error.message);
  if (errors.length > MAX_LINE_NOTES) notes.push(`${formatCount(errors.length - MAX_LINE_NOTES)} more lines left out ("nemo-relay-hooks view" of the file lists them)`);
  return notes;
}

function rowOf(entry: SessionEntry): SessionRow {
  return {
    ...entry,
    text: {
      started: entry.startUs === null ? '' : new Date(entry.startUs / 1000).toISOString().replace('T', ' ').slice(0, 19),
      duration: entry.durationUs === null ? '' : formatDuration(entry.durationUs),
      tokens: tokenCell(tokensOf(entry)),
      cost: entry.costUsd === null ? '' : formatCost(entry.costUsd),
    },
  };
}

function entryOf(file: CatalogFile, key: string, session: string, summary: SessionSummary, kind: 'atif' | 'atof', since: number, notes: readonly string[]): SessionEntry {
  const figures: Figures = summary;
  return {
    key,
    file: file.name,
    kind,
    session,
    title: summary.title,
    ...(summary.note !== undefined ? { note: summary.note } : {}),
    startUs: summary.startUs,
    durationUs: figures.durationUs,
    llmCalls: figures.llmCalls,
    toolCalls: figures.toolCalls,
    errors: figures.errors,
    promptTokens: figures.promptTokens,
    completionTokens: figures.completionTokens,
    cachedTokens: figures.cachedTokens,
    costUsd: figures.costUsd,
    modifiedMs: file.mtimeMs,
    since,
    ...(notes.length > 0 ? { notes: [...notes] } : {}),
  };
}

/** The real path of a served folder; the path as named when it has none (gone: the walk then finds nothing, as for any missing folder). */
function realFolder(folder: string): string {
  try {
    return realpathSync(path.resolve(folder));
  } catch {
    return path.resolve(folder);
  }
}

/** Session files under `folder` (or `folder` itself when it is a file); links, dot folders and node_modules are skipped. */
function* walk(folder: string, depth: number): Generator<string> {
  let stat: Stats;
  try {
    stat = lstatSync(folder);
  } catch {
    return;
  }
  if (stat.isFile()) {
    if (depth === 0 || SESSION_FILE.test(folder)) yield folder;
    return;
  }
  if (!stat.isDirectory() || depth > MAX_DEPTH) return;
  let names: string[];
  try {
    names = readdirSync(folder).sort();
  } catch {
    return;
  }
  for (const name of names) {
    if (name.startsWith('.') || name === 'node_modules') continue;
    const child = path.join(folder, name);
    let childStat: Stats;
    try {
      childStat = lstatSync(child);
    } catch {
      continue;
    }
    if (childStat.isSymbolicLink()) continue;
    if (childStat.isDirectory()) yield* walk(child, depth + 1);
    else if (childStat.isFile() && SESSION_FILE.test(name)) yield child;
  }
}
