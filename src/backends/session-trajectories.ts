/**
 * One ATIF trajectory per session, for every backend: the router that
 * hands each ATOF event to the trajectories whose session subtree holds it.
 *
 * Native's own `AtifExporter` sees every event of the process and mixes
 * interleaved sessions; the contract wants one trajectory per session scope
 * holding only that scope's subtree. Both backends build them here:
 * - the memory relay feeds it events as objects, or (on its byte path) as
 *   the ATOF line it just wrote, which is kept as bytes and parsed only when
 *   the trajectory is asked for, so recording stays as cheap as ATOF alone;
 * - the native adapter feeds it the events its subscriber receives.
 *
 * Routing is one map lookup per event whatever the number of live
 * sessions: each session's member scopes (its root and every scope below
 * it) are indexed by uuid, and an event belongs to the sessions of its
 * parent (or, for the root's own events, of its uuid). Events must arrive
 * in emission order (a scope's start before its children).
 *
 * @module
 */

import { AtifBuilder, type AtifBuilderOptions } from '../formats/atif/builder.ts';
import type { AtofEvent } from '../formats/atof/types.ts';
import type { AtifTrajectory } from '../formats/atif/types.ts';

const NO_SESSIONS: readonly SessionTrajectory[] = [];
const utf8 = new TextDecoder();
/** First size of a session's line buffer; it grows as lines arrive, up to `MAX_CHUNK`. */
const INITIAL_CHUNK = 1024;
const SMALL_CHUNK = 16 * 1024;
const MAX_CHUNK = 256 * 1024;

/** A kept entry: a run of ATOF lines, each followed by a comma (`line,line,`), or an event object. */
type KeptEntry = Uint8Array | AtofEvent;

/**
 * A trajectory under construction: events kept as objects, or as ATOF line
 * bytes waiting to be parsed. Parsing native's text of an event gives the
 * event object back, key order included (the byte path writes what
 * `JSON.stringify` of that object writes), so both forms build the same
 * trajectory.
 */
export class EventTrajectory {
  readonly #builder: AtifBuilder;
  /**
   * Entries not yet in the builder, in order: closed chunks of whole lines,
   * each line followed by a comma (`[` + a chunk's text, last comma dropped,
   * + `]` is a JSON array of its events), and event objects. Chunks grow
   * from small (most sessions are short) to `MAX_CHUNK`, then new ones start.
   */
  #full: KeptEntry[] = [];
  #chunk: Uint8Array | null = null;
  #chunkBytes = 0;
  #count = 0;

  constructor(options: AtifBuilderOptions) {
    this.#builder = new AtifBuilder(options);
  }

  /** Records an event object (kept by reference: it must not be mutated afterwards). */
  addEvent(event: AtofEvent): void {
    this.#count++;
    if (this.#chunk !== null || this.#full.length > 0) this.#parseLines();
    this.#builder.add(event);
  }

  /** Records an event as its ATOF line: `bytes[start, end)`, one JSON object (a trailing newline is fine). */
  addLine(bytes: Uint8Array, start: number, end: number): void {
    const need = end - start + 1;
    let chunk = this.#chunk;
    let used = this.#chunkBytes;
    if (chunk === null || used + need > chunk.length) chunk = this.#grow(need);
    chunk.set(bytes.subarray(start, end), (used = this.#chunkBytes));
    chunk[used + need - 1] = 0x2c; // ,
    this.#chunkBytes = used + need;
    this.#count++;
  }

  /** Events recorded so far. */
  get size(): number {
    return this.#count;
  }

  /** The trajectory as `AtifBuilder.build` returns it (a document to annotate before serializing). */
  build(): AtifTrajectory {
    this.#parseLines();
    return this.#builder.build();
  }

  /** The trajectory's text, as `AtifBuilder.toJson` writes it. */
  toJson(): string {
    this.#parseLines();
    return this.#builder.toJson();
  }

  /** A chunk with room for `need` more bytes: the current one doubled while small, else a new one. */
  #grow(need: number): Uint8Array {
    const chunk = this.#chunk;
    const used = this.#chunkBytes;
    if (chunk !== null && chunk.length < MAX_CHUNK) {
      // Small chunks grow by a quarter, in whole KiB, so a short open session's slack stays small (the
      // memory-sessions case); from SMALL_CHUNK on they double, so a long session copies each line ~once.
      const step = chunk.length < SMALL_CHUNK ? chunk.length >> 2 : chunk.length;
      const capacity = Math.ceil(Math.max(used + need, chunk.length + step) / 1024) * 1024;
      const grown = new Uint8Array(capacity);
      grown.set(chunk.subarray(0, used));
      return (this.#chunk = grown);
    }
    if (chunk !== null && used > 0) this.#full.push(chunk.subarray(0, used));
    this.#chunkBytes = 0;
    const capacity = Math.ceil(Math.max(need, chunk === null ? INITIAL_CHUNK : MAX_CHUNK) / 1024) * 1024;
    return (this.#chunk = new Uint8Array(capacity));
  }

  /** Ends the open chunk, so an event object can follow its lines in order. */
  #closeChunk(): void {
    if (this.#chunk === null) return;
    if (this.#chunkBytes > 0) this.#full.push(this.#chunk.subarray(0, this.#chunkBytes));
    this.#chunk = null;
    this.#chunkBytes = 0;
  }

  /** Moves the waiting entries into the builder, lines as event objects (one decode and one parse per chunk). */
  #parseLines(): void {
    if (this.#chunk === null && this.#full.length === 0) return;
    this.#closeChunk();
    const entries = this.#full;
    this.#full = [];
    for (const entry of entries) {
      if (!(entry instanceof Uint8Array)) {
        this.#builder.add(entry);
        continue;
      }
      const events = parseLineRun(entry);
      for (let i = 0; i < events.length; i++) this.#builder.add(events[i]!);
    }
  }
}

/** The events of a line run (`line,line,`), as bytes or text: `[` + its text, last comma dropped, + `]`, in one parse. */
export function parseLineRun(run: Uint8Array | string): AtofEvent[] {
  const text = typeof run === 'string' ? run.slice(0, -1) : utf8.decode(run.subarray(0, run.length - 1));
  return JSON.parse(`[${text}]`) as AtofEvent[];
}

/** A live session's trajectory, as the router hands it out. */
export class SessionTrajectory extends EventTrajectory {
  /** The scopes of the session's subtree (the root first). */
  readonly members: string[] = [];
  open = true;

  constructor(
    options: AtifBuilderOptions,
    /** uuid of a root start event recorded at registration; a later copy of it is skipped. */
    readonly replayed: string | null,
  ) {
    super(options);
  }
}

/** Routes events to the live session trajectories whose subtree holds them. */
export class SessionTrajectories {
  /** Scope uuid → the live sessions whose subtree holds that scope. */
  readonly #members = new Map<string, SessionTrajectory[]>();
  readonly #live = new Set<SessionTrajectory>();

  /** Live sessions. */
  get size(): number {
    return this.#live.size;
  }

  /**
   * Starts the trajectory of the subtree rooted at `rootUuid` (none: an
   * unknown root, the trajectory stays as `rootStart` leaves it).
   * `rootStart` is the root's start event when it was emitted before the
   * session existed; a copy of it delivered later is skipped.
   */
  open(rootUuid: string | undefined, options: AtifBuilderOptions, rootStart?: AtofEvent): SessionTrajectory {
    const session = new SessionTrajectory(options, rootStart?.uuid ?? null);
    if (rootStart !== undefined) session.addEvent(rootStart);
    if (rootUuid !== undefined && rootUuid !== '') this.#join(rootUuid, session);
    this.#live.add(session);
    return session;
  }

  /** Stops routing to `session` (idempotent); what it recorded stays readable. */
  close(session: SessionTrajectory): void {
    if (!session.open) return;
    session.open = false;
    this.#live.delete(session);
    for (const uuid of session.members) {
      const list = this.#members.get(uuid);
      if (list === undefined) continue;
      const rest = list.filter((s) => s !== session);
      if (rest.length === 0) this.#members.delete(uuid);
      else this.#members.set(uuid, rest);
    }
    session.members.length = 0;
  }

  /** Stops routing to every session. */
  closeAll(): void {
    for (const session of [...this.#live]) this.close(session);
  }

  /** Routes an event object. Returns nothing; a session's failure is the caller's to isolate. */
  route(event: AtofEvent): void {
    const uuid = event.uuid;
    const isStart = event.kind === 'scope' && event.scope_category === 'start';
    const owners = this.#ownersOf(uuid, event.parent_uuid ?? null, isStart);
    for (let i = 0; i < owners.length; i++) {
      const session = owners[i]!;
      if (isStart && session.replayed === uuid) continue;
      session.addEvent(event);
    }
  }

  /** Routes an event written as an ATOF line (`bytes[start, end)`), with the fields routing reads (`isStart`: a scope's or span's start). */
  routeLine(uuid: string, parentUuid: string, isStart: boolean, bytes: Uint8Array, start: number, end: number): void {
    const owners = this.#ownersOf(uuid, parentUuid, isStart);
    for (let i = 0; i < owners.length; i++) owners[i]!.addLine(bytes, start, end);
  }

  /**
   * The sessions an event belongs to; a scope's (or span's) start joins
   * their subtrees, so its children follow it (its end needs no joining:
   * children come between start and end).
   */
  #ownersOf(uuid: string, parentUuid: string | null, isStart: boolean): readonly SessionTrajectory[] {
    if (this.#live.size === 0) return NO_SESSIONS;
    const own = this.#members.get(uuid);
    const viaParent = parentUuid === null ? undefined : this.#members.get(parentUuid);
    if (viaParent === undefined) return own ?? NO_SESSIONS;
    if (own === undefined) {
      if (isStart) for (const session of viaParent) this.#join(uuid, session);
      return viaParent;
    }
    // A member scope's own event: its sessions are its parent's (which it joins, if a session root
    // registered before its start arrived is all it had), plus any session rooted at it.
    if (isStart) for (const session of viaParent) if (!own.includes(session)) this.#join(uuid, session);
    let both: SessionTrajectory[] | null = null;
    for (const session of own) {
      if (viaParent.includes(session)) continue;
      both ??= [...viaParent];
      both.push(session);
    }
    return both ?? viaParent;
  }

  #join(uuid: string, session: SessionTrajectory): void {
    const list = this.#members.get(uuid);
    if (list === undefined) this.#members.set(uuid, [session]);
    else if (!list.includes(session)) this.#members.set(uuid, [...list, session]);
    session.members.push(uuid);
  }
}
