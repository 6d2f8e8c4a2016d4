/**
 * An ATOF file read as a stream and indexed by session, for files of any
 * size (`view`, `compare`, `view --serve`): the file is read in chunks, line
 * by line, once (a file that grows is read on from where the last look
 * stopped); each line is given to the session whose top-level agent scope
 * it descends from, and only the byte range of the line is kept. A
 * session's figures (its index row) are worked out from its events when
 * its agent scope ends, then its events are let go; its tree is built
 * again from its lines, read back by their offsets, when someone opens it.
 * Memory is the index (a few numbers a line, one key a scope) and the
 * events of the sessions still open, not the file.
 *
 * Sessions are grouped by the rule `treesFromAtof` nests events by (a
 * scope's parent, in file order; a remote session whose parent scope is
 * written later joins that scope's session when it is), so a session's tree
 * from its own lines is the tree the whole file gives it.
 *
 * @module
 */

import { closeSync, readSync } from 'node:fs';
import { unreadableEventError } from '../detect.ts';
import { InputError } from '../errors.ts';
import { openRegularFile } from '../files.ts';
import { atofMajor } from '../../formats/atof/rules/envelope.ts';
import type { AtofEvent } from '../../formats/atof/types.ts';
import { parseAtofLine, type AtofLineError } from '../../formats/atof/validate.ts';
import { isRecord } from '../../shared/record.ts';
import { nonEmptyString } from '../../shared/text.ts';
import { spanIdOf } from '../../export/otlp/ids.ts';
import { continuesCall, treesFromAtof } from './from-atof.ts';
import type { RootList, ViewNode } from './model.ts';
import { rollupOf, type Figures } from './rollup.ts';

/** Bytes read at a time. */
const CHUNK_BYTES = 4 * 1024 * 1024;
/** How often an open session of more than `RESUMMARIZE_ABOVE_EVENTS` has its lines read back for its figures. */
export const RESUMMARIZE_MS = 10_000;
/**
 * Events above which an open session's figures are worked out again at most every `RESUMMARIZE_MS` (one huge session
 * being written): below, reading its lines back on each look costs little, and its row follows its lines.
 */
export const RESUMMARIZE_ABOVE_EVENTS = 10_000;
/** Bytes read at a time when a session's lines are read back. */
const WINDOW_BYTES = 1024 * 1024;
/** Events held for open sessions before they are let go (and read back from the file when needed). */
const MAX_HELD_EVENTS = 200_000;
/** Bytes at the start of what was read, and just before where reading stopped, that `sameBytesAsRead` checks. */
const FINGERPRINT_BYTES = 4096;

/** A session's row in an index: what its tree's root shows and its totals. */
export interface SessionSummary extends Figures {
  title: string;
  note?: string;
  startUs: number | null;
}

/** One session of the file. */
export interface IndexedSession {
  /**
   * The session id its title shows (`metadata.session_id`, else the agent
   * scope's uuid), made unique in the file: a run recorded again under the
   * same id (an agent run twice into one file) is `<id>~2`, then `~3`.
   */
  readonly session: string;
  readonly rootUuid: string;
  /**
   * The scope its agent scope names as its parent when it continues another process's call (`continuesCall`: an MCP
   * server's session under its caller's tool call), for the caller's lines in another file to take it in.
   */
  readonly callerScope?: string;
  /**
   * The trace its lines are in, as OTLP names it (`traceIdOf`): its agent scope's `propagation_root_uuid`, else that
   * scope's own uuid; lowercase.
   */
  readonly trace: string;
  /** Start and end byte offsets of its lines, in file order (flat pairs). */
  lines: number[];
  /** Its events while held (from its first line on); null once let go. */
  events: AtofEvent[] | null;
  /** Whether its agent scope has ended. */
  ended: boolean;
  /** Its figures, as of the last time they were worked out. */
  summary: SessionSummary | undefined;
  /** When they were (`Date.now()`). */
  summarizedAt: number;
}

export class AtofIndex {
  readonly path: string;
  /** Sessions in the order their agent scopes started (the order `treesFromAtof` gives roots). */
  readonly sessions: IndexedSession[] = [];
  /** Lines that are not events (reported, not fatal). */
  readonly lineErrors: AtofLineError[] = [];
  /** The first ATOF major version other than 0 a line declares, if any. */
  unknownMajor: number | undefined;
  /** Bytes read so far: the offset after the last complete line. */
  offset = 0;
  private lineNumber = 0;
  private held = 0;
  /** How many sessions so far had each id (for `~2`, `~3`). */
  private readonly seenIds = new Map<string, number>();
  /** The session each scope seen so far belongs to (the `scopes` map of `treesFromAtof`); see `ownerOf`. */
  private readonly owner = new Map<string, IndexedSession>();
  /** Sessions that joined another (a remote session whose parent came later), and the one each joined. */
  private readonly joined = new Map<IndexedSession, IndexedSession>();
  /** Remote sessions waiting for their parent scope (`continuesCall`), by its uuid, with the id each was counted under. */
  private readonly awaiting = new Map<string, { session: IndexedSession; id: string; seen: number }[]>();
  private readonly stale = new Set<IndexedSession>();
  /** The part of the file last read back for a session's lines. */
  private window: { from: number; length: number; bytes: Buffer } | undefined;
  /** What the bytes read looked like at their start and just before `offset`, when reading stopped (`sameBytesAsRead`). */
  private readFingerprint = '';

  /** Whether index rows are wanted (`view --serve`); `view` and `compare` build the trees they show and need none. */
  private readonly summaries: boolean;
  private readonly maxHeldEvents: number;
  /** False for the served folders: their walk skips links, so a link found here was swapped in after it. */
  private readonly followLinks: boolean;
  /** The input's bytes when it is not a file (standard input, read whole): read from here instead. */
  private readonly bytes: Buffer | undefined;

  /** `bytes`: the input itself, when `path` only names it (standard input). */
  constructor(path: string, options: { summaries?: boolean; maxHeldEvents?: number; followLinks?: boolean; bytes?: Buffer } = {}) {
    this.path = path;
    this.bytes = options.bytes;
    this.followLinks = options.followLinks ?? true;
    this.summaries = options.summaries ?? true;
    this.maxHeldEvents = options.maxHeldEvents ?? MAX_HELD_EVENTS;
  }

  /**
   * Reads the file from where the last read stopped up to its last complete
   * line (up to `size` bytes), and updates the sessions' figures. `toEnd`:
   * the file is finished, so a last line without a newline counts too (a
   * file being written may hold half a line at its end).
   */
  readOn(size: number, toEnd = false, onProgress?: (lines: number, offset: number) => void): void {
    const source = this.open();
    try {
      // One buffer: the part of a line left at the end of a read moves to its front, and the next read fills the rest.
      let buffer = Buffer.alloc(Math.min(CHUNK_BYTES, Math.max(1, size - this.offset)));
      let carry = 0;
      while (this.offset + carry < size) {
        if (carry === buffer.length) buffer = Buffer.concat([buffer, Buffer.alloc(buffer.length)]); // a line longer than the buffer
        const read = source.read(buffer, carry, Math.min(buffer.length - carry, size - this.offset - carry), this.offset + carry);
        if (read === 0) break;
        const filled = carry + read;
        let start = 0;
        for (let end = buffer.indexOf(0x0a); end !== -1 && end < filled; end = buffer.indexOf(0x0a, start)) {
          this.line(buffer, start, end);
          start = end + 1;
        }
        this.offset += start;
        carry = filled - start;
        buffer.copyWithin(0, start, filled);
        onProgress?.(this.lineNumber, this.offset);
      }
      if (toEnd && carry > 0) {
        this.line(buffer, 0, carry, true);
        this.offset += carry;
      }
      this.readFingerprint = fingerprint(source, this.offset);
    } finally {
      source.close();
    }
    this.summarizeStale();
  }

  /**
   * Whether the file still holds the bytes this index read where a rewrite
   * shows: its first `FINGERPRINT_BYTES` and the `FINGERPRINT_BYTES` before
   * `offset`. A file that only grew does; one rewritten in place (a replay
   * of a longer recording under the same name, `cp` of another run over
   * it, a host writing with `atofMode: overwrite`) does not, even when it
   * is now larger than where reading stopped: reading on from there would
   * give old sessions new lines and read their trees back from bytes that
   * are no longer theirs.
   */
  sameBytesAsRead(): boolean {
    if (this.offset === 0) return true;
    const source = this.open();
    try {
      return fingerprint(source, this.offset) === this.readFingerprint;
    } finally {
      source.close();
    }
  }

  /** The session of that (unique) id. */
  find(session: string): IndexedSession | undefined {
    return this.sessions.find((candidate) => candidate.session === session);
  }

  /** Its sessions as they are now, each tree built when asked (`tree`). */
  roots(): RootList {
    const sessions = this.sessions;
    return { length: sessions.length, at: (position) => (sessions[position] === undefined ? undefined : this.tree(sessions[position])) };
  }

  /** The session holding the scope `uuid` (its own or a scope under it), if this file has it. */
  sessionOfScope(uuid: string): IndexedSession | undefined {
    return this.ownerOf(uuid);
  }

  /**
   * The scopes of the file whose uuid's low 64 bits (`spanIdOf`) are one of `spanIds`, with the session holding each:
   * what a parent named by a W3C `traceparent` may be. A walk of every scope seen, for the few such parents there are.
   */
  scopesWithSpanId(spanIds: ReadonlySet<string>): { uuid: string; session: IndexedSession }[] {
    const found: { uuid: string; session: IndexedSession }[] = [];
    for (const uuid of this.owner.keys()) {
      if (!spanIds.has(spanIdOf(uuid))) continue;
      const session = this.ownerOf(uuid);
      if (session !== undefined) found.push({ uuid, session });
    }
    return found;
  }

  /** A session's events, held or read back from its lines. */
  eventsOf(target: IndexedSession): AtofEvent[] {
    return target.events ?? this.readEvents(target);
  }

  /**
   * The tree of one session, from its held events or its lines read back from the file; `more` are other files' lines
   * it holds (an MCP server's session, recorded by its own process), read after its own as `cat` of the files would be;
   * `parents`, the scopes among them whose parent is named by span id only and the scope it is (`treesFromAtof`).
   */
  tree(target: IndexedSession, more: readonly AtofEvent[] = [], parents?: ReadonlyMap<string, string>): ViewNode {
    const events = this.eventsOf(target);
    const roots = treesFromAtof(more.length === 0 ? events : [...events, ...more], parents);
    const root = roots.find((each) => isRecord(each.source) && isRecord(each.source.start) && each.source.start.uuid === target.rootUuid) ?? roots[0];
    // Its lines read back are no events: the file was rewritten since it was read (`sameBytesAsRead`).
    if (root === undefined) throw new InputError(`${this.path} changed since it was read: session ${target.session} is not where it was`);
    return root;
  }

  /**
   * Its figures, worked out again when lines came in since; except for a
   * huge session still open whose events were let go: its lines are read
   * back at most every `RESUMMARIZE_MS`, so a file growing by a line a
   * second does not cost a read of the session each second (`summaryDue`
   * says when the wait is over).
   */
  summary(target: IndexedSession): SessionSummary {
    if (target.summary !== undefined && !this.stale.has(target)) return target.summary;
    if (this.deferred(target, Date.now())) return target.summary!;
    target.summary = summaryOf(this.tree(target));
    target.summarizedAt = Date.now();
    this.stale.delete(target);
    return target.summary;
  }

  /**
   * Whether a session's figures predate its latest lines and may now be
   * worked out again: the lines came within `RESUMMARIZE_MS` of the last
   * time, and none since, so without another look its row would keep the
   * older figures for as long as the file stays quiet.
   */
  summaryDue(now = Date.now()): boolean {
    for (const target of this.stale) if (target.summary !== undefined && !this.deferred(target, now)) return true;
    return false;
  }

  /** Whether the figures of `target`, which lines came in for, wait (a huge open session read back within `RESUMMARIZE_MS`). */
  private deferred(target: IndexedSession, now: number): boolean {
    return target.summary !== undefined && target.events === null && !target.ended && target.lines.length / 2 > RESUMMARIZE_ABOVE_EVENTS && now - target.summarizedAt < RESUMMARIZE_MS;
  }

  private line(bytes: Buffer, start: number, end: number, unterminated = false): void {
    this.lineNumber += 1;
    const from = this.offset + start;
    let text = bytes.toString('utf8', start, end);
    if (from === 0 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    const parsed = parseAtofLine(text, this.lineNumber, unterminated);
    if (parsed?.error) this.lineErrors.push(parsed.error);
    if (parsed?.event === undefined) return;
    // An event whose uuid or name is no string would break the tree built from it: skipped and reported instead.
    const unreadable = unreadableEventError(parsed.event as unknown as Record<string, unknown>, this.lineNumber);
    if (unreadable !== undefined) this.lineErrors.push(unreadable);
    else this.place(parsed.event, from, this.offset + end);
  }

  /** Gives the event to its session (as `treesFromAtof` would place it), or to no one when it would be dropped there. */
  private place(event: AtofEvent, from: number, to: number): void {
    if (!isRecord(event)) return;
    const major = atofMajor(event.atof_version);
    if (this.unknownMajor === undefined && major !== undefined && major !== 0) this.unknownMajor = major;
    const parent = typeof event.parent_uuid === 'string' ? this.ownerOf(event.parent_uuid) : undefined;
    let target: IndexedSession | undefined;
    if (event.kind === 'mark') {
      target = parent;
    } else if (event.scope_category === 'end') {
      target = this.ownerOf(event.uuid);
    } else if (event.category === 'agent' && parent === undefined) {
      const metadata = isRecord(event.metadata) ? event.metadata : {};
      const id = nonEmptyString(metadata.session_id) ?? event.uuid;
      const seen = (this.seenIds.get(id) ?? 0) + 1;
      this.seenIds.set(id, seen);
      const trace = (typeof event.propagation_root_uuid === 'string' ? event.propagation_root_uuid : event.uuid).toLowerCase();
      target = { session: seen === 1 ? id : `${id}~${seen}`, rootUuid: event.uuid, trace, ...(continuesCall(event) ? { callerScope: event.parent_uuid } : {}), lines: [], events: [], ended: false, summary: undefined, summarizedAt: 0 };
      this.sessions.push(target);
      this.owner.set(event.uuid, target);
      if (continuesCall(event)) this.awaiting.set(event.parent_uuid, [...(this.awaiting.get(event.parent_uuid) ?? []), { session: target, id, seen }]);
    } else if (parent !== undefined) {
      target = parent;
      this.owner.set(event.uuid, parent);
    }
    if (target === undefined) return;
    target.lines.push(from, to);
    this.stale.add(target);
    if (target.events !== null) {
      target.events.push(event);
      this.held += 1;
    }
    if (event.kind !== 'mark' && event.scope_category !== 'end') this.adopt(event.uuid, target);
    if (event.kind !== 'mark' && event.scope_category === 'end' && event.uuid === target.rootUuid) {
      target.ended = true;
      this.summarize(target);
    } else if (this.held > this.maxHeldEvents) {
      this.letGo();
    }
  }

  /** The session a scope belongs to, through the sessions that joined others since it was seen. */
  private ownerOf(uuid: string): IndexedSession | undefined {
    let session = this.owner.get(uuid);
    for (let next = session && this.joined.get(session); next !== undefined; next = this.joined.get(next)) session = next;
    return session;
  }

  /**
   * The remote sessions waiting for the scope `uuid`, which just started in `target`, join `target` (as
   * `treesFromAtof` puts them under that scope), unless the scope is inside one of them.
   */
  private adopt(uuid: string, target: IndexedSession): void {
    const waiting = this.awaiting.get(uuid);
    if (waiting === undefined) return;
    this.awaiting.delete(uuid);
    for (const { session, id, seen } of waiting) {
      if (session === target) continue;
      this.join(session, target);
      // Its id is no session's now: the next session under it is numbered as if it had never been one.
      if (this.seenIds.get(id) === seen) this.seenIds.set(id, seen - 1);
    }
  }

  /** Moves `from`'s lines (and events, while both hold theirs) into `into`, in file order. */
  private join(from: IndexedSession, into: IndexedSession): void {
    const lines: number[] = [];
    const events: AtofEvent[] | null = from.events !== null && into.events !== null ? [] : null;
    let i = 0;
    let j = 0;
    while (i < into.lines.length || j < from.lines.length) {
      const fromInto = j >= from.lines.length || (i < into.lines.length && into.lines[i]! < from.lines[j]!);
      const [source, at] = fromInto ? [into, i] : [from, j];
      lines.push(source.lines[at]!, source.lines[at + 1]!);
      events?.push(source.events![at / 2]!);
      if (fromInto) i += 2;
      else j += 2;
    }
    if (events === null) this.held -= (from.events?.length ?? 0) + (into.events?.length ?? 0);
    into.lines = lines;
    into.events = events;
    this.joined.set(from, into);
    this.sessions.splice(this.sessions.indexOf(from), 1);
    this.stale.delete(from);
    this.stale.add(into);
  }

  /** Works out a session's figures and lets its events go: its tree is read back from the file when it is opened. */
  private summarize(target: IndexedSession): void {
    if (this.summaries) this.summary(target);
    else this.stale.delete(target);
    if (target.events !== null) this.held -= target.events.length;
    target.events = null;
  }

  private summarizeStale(): void {
    for (const target of [...this.stale]) this.summarize(target);
  }

  /** Too many events held (many sessions open at once): let them all go; they are read back from the file. */
  private letGo(): void {
    for (const target of this.sessions) target.events = null;
    this.held = 0;
  }

  /**
   * A session's events, read back from its lines. Reads go through a window
   * of the file (`WINDOW_BYTES` from the first line not in it): sessions
   * opened one after another, as `view` prints them, lie close together, so
   * most of their lines come from the window already read.
   */
  private readEvents(target: IndexedSession): AtofEvent[] {
    const events: AtofEvent[] = [];
    const source = this.open();
    try {
      const { lines } = target;
      for (let i = 0; i < lines.length; i += 2) {
        const from = lines[i]!;
        const to = lines[i + 1]!;
        let window = this.window;
        if (window === undefined || from < window.from || to > window.from + window.length) {
          const bytes = Buffer.alloc(Math.max(Math.min(WINDOW_BYTES, this.offset - from), to - from));
          const read = source.read(bytes, 0, bytes.length, from);
          window = { from, length: read, bytes };
          this.window = window;
        }
        let text = window.bytes.toString('utf8', from - window.from, Math.min(to, window.from + window.length) - window.from);
        if (from === 0 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
        const parsed = parseAtofLine(text, 0);
        if (parsed?.event) events.push(parsed.event);
      }
    } finally {
      source.close();
    }
    return events;
  }

  /** The input to read from: the file, opened, or the bytes it was given. */
  private open(): { read(target: Buffer, at: number, length: number, position: number): number; close(): void } {
    const bytes = this.bytes;
    if (bytes !== undefined) return { read: (target, at, length, position) => bytes.copy(target, at, position, Math.min(bytes.length, position + length)), close: () => {} };
    const descriptor = openRegularFile(this.path, { followLinks: this.followLinks });
    return { read: (target, at, length, position) => readSync(descriptor, target, at, length, position), close: () => closeSync(descriptor) };
  }
}

/**
 * A short hash of the input's first `FINGERPRINT_BYTES` and of the `FINGERPRINT_BYTES` before `offset` (32-bit FNV-1a
 * of each, with the count of bytes found): what `sameBytesAsRead` compares.
 */
function fingerprint(source: { read(target: Buffer, at: number, length: number, position: number): number }, offset: number): string {
  const part = (from: number): string => {
    const bytes = Buffer.alloc(Math.min(FINGERPRINT_BYTES, offset - from));
    const read = source.read(bytes, 0, bytes.length, from);
    let hash = 0x811c9dc5;
    for (let i = 0; i < read; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193);
    return `${read}:${(hash >>> 0).toString(16)}`;
  };
  return offset === 0 ? '' : `${part(0)} ${part(Math.max(0, offset - FINGERPRINT_BYTES))}`;
}

/** An index row's figures: the root's title, note, start and totals. */
export function summaryOf(root: ViewNode): SessionSummary {
  const { totals } = rollupOf(root);
  return { title: root.title, ...(root.note !== undefined ? { note: root.note } : {}), startUs: root.startUs ?? null, ...totals };
}
