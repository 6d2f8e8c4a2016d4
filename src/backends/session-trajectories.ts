/**
 * One ATIF trajectory per session, for every backend: the router that
 * hands each ATOF event to the trajectories whose session subtree holds it.
 *
 * Native's own `AtifExporter` sees every event of the process and mixes
 * interleaved sessions; the contract wants one trajectory per session scope
 * holding only that scope's subtree. Both backends build them here, from
 * event objects kept by reference: the memory relay's own events, and the
 * events the native adapter's subscriber receives.
 *
 * Routing is one map lookup per event whatever the number of live
 * sessions: each session's member scopes (its root and every scope below
 * it) are indexed by uuid, and an event belongs to the sessions of its
 * parent (or, for the root's own events, of its uuid). Events must arrive
 * in emission order (a scope's start before its children).
 *
 * A session scope (`nemo_relay_scope_role: "session"`) under a scope of
 * another session is a session of its own that continues its caller's
 * trace (an MCP server's call, from another process or from this one): its
 * subtree is its own trajectory's, never its caller's, which references it
 * (as a caller in another process does). An embedded sub-agent's scope has
 * the role `subagent` and is routed to both.
 *
 * @module
 */

import type { AtifBuilder, AtifBuilderOptions } from '../formats/atif/builder.ts';
import type { AtofEvent } from '../formats/atof/types.ts';
import type { AtifTrajectory } from '../formats/atif/types.ts';
import type { Slices } from '../shared/slices.ts';
import { atifBuilderLoaded, atifBuilderNow, loadAtifBuilder } from './atif-builder-loader.ts';

/**
 * A trajectory under construction: the relay's event objects, kept by
 * reference (each already the relay's own copy of the host's payloads, so
 * nothing is copied or parsed again), built when asked for.
 *
 * The builder's module loads when the first trajectory opens
 * (`atif-builder-loader.ts`); until the first build the events wait here,
 * as the builder itself would keep them (it converts only when asked).
 */
export class EventTrajectory {
  readonly #options: AtifBuilderOptions;
  #builder: AtifBuilder | undefined;
  #events: AtofEvent[] | undefined = [];

  constructor(options: AtifBuilderOptions) {
    this.#options = options;
    void loadAtifBuilder();
  }

  /** Records an event object (kept by reference: it must not be mutated afterwards). */
  addEvent(event: AtofEvent): void {
    if (this.#builder === undefined) this.#events!.push(event);
    else this.#builder.add(event);
  }

  /** Events recorded so far. */
  get size(): number {
    return this.#builder === undefined ? this.#events!.length : this.#builder.size;
  }

  /** The session will never close: its calls still open are written as never ended (`AtifBuilder.cutOpenCalls`). */
  cutOpenCalls(): void {
    this.#built().cutOpenCalls();
  }

  /** The trajectory as `AtifBuilder.build` returns it (a document to annotate before serializing). */
  build(): AtifTrajectory {
    return this.#built().build();
  }

  /** The trajectory's text, as `AtifBuilder.toJson` writes it. */
  toJson(): string {
    return this.#built().toJson();
  }

  /** The same text built in slices (`AtifBuilder.toJsonInSlices`). */
  *toJsonInSlices(): Slices<string> {
    // A build in slices can wait for the builder's import() (a session ended in the turn its
    // trajectory opened); only a build that must finish at once needs the synchronous load.
    if (this.#builder === undefined && !atifBuilderLoaded()) yield loadAtifBuilder();
    return yield* this.#built().toJsonInSlices();
  }

  /** The text as UTF-8 bytes (`AtifBuilder.toBytes`). */
  toBytes(): Uint8Array {
    return this.#built().toBytes();
  }

  /** The bytes built in slices (`AtifBuilder.toBytesInSlices`), waiting for the builder's import() as `toJsonInSlices` does. */
  *toBytesInSlices(): Slices<Uint8Array> {
    if (this.#builder === undefined && !atifBuilderLoaded()) yield loadAtifBuilder();
    return yield* this.#built().toBytesInSlices();
  }

  /** The builder, made at the first build with the events recorded until then. */
  #built(): AtifBuilder {
    let builder = this.#builder;
    if (builder === undefined) {
      builder = new (atifBuilderNow().AtifBuilder)(this.#options);
      for (const event of this.#events!) builder.add(event);
      this.#builder = builder;
      this.#events = undefined;
    }
    return builder;
  }
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

/**
 * The sessions a scope belongs to: one session (nearly every scope: its
 * own session's), or, where sessions nest (a sub-agent's session inside
 * its parent's), a list of them. Holding the one session itself spares a
 * one-element array per scope and its copy at every join and close.
 */
type Owners = SessionTrajectory | readonly SessionTrajectory[];

/** Routes events to the live session trajectories whose subtree holds them. */
export class SessionTrajectories {
  /** Scope uuid → the live sessions whose subtree holds that scope. */
  readonly #members = new Map<string, Owners>();
  readonly #live = new Set<SessionTrajectory>();
  /** Session scopes under another session's scope, from their start to their end: routed to their own sessions only. */
  readonly #detached = new Set<string>();

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
    const members = this.#members;
    for (const uuid of session.members) {
      const owners = members.get(uuid);
      if (owners === undefined) continue;
      if (owners === session) {
        members.delete(uuid);
        continue;
      }
      if (!isList(owners)) continue;
      const rest = owners.filter((s) => s !== session);
      if (rest.length === 0) members.delete(uuid);
      else members.set(uuid, rest.length === 1 ? rest[0]! : rest);
    }
    session.members.length = 0;
    // Nothing is routed with no session live: an end not seen leaves nothing behind.
    if (this.#live.size === 0) this.#detached.clear();
  }

  /** Stops routing to every session. */
  closeAll(): void {
    for (const session of [...this.#live]) this.close(session);
  }

  /** Routes an event object. Returns nothing; a session's failure is the caller's to isolate. */
  route(event: AtofEvent): void {
    if (this.#live.size === 0) return;
    const uuid = event.uuid;
    const isStart = event.kind === 'scope' && event.scope_category === 'start';
    const parentUuid = event.parent_uuid ?? null;
    const owners = this.#ownersOf(uuid, this.#detachedRoot(event, parentUuid, isStart) ? null : parentUuid, isStart);
    if (owners === undefined) return;
    if (!isList(owners)) {
      if (!(isStart && owners.replayed === uuid)) owners.addEvent(event);
      return;
    }
    for (let i = 0; i < owners.length; i++) {
      const session = owners[i]!;
      if (isStart && session.replayed === uuid) continue;
      session.addEvent(event);
    }
  }

  /**
   * The sessions an event belongs to; a scope's (or span's) start joins
   * their subtrees, so its children follow it (its end needs no joining:
   * children come between start and end).
   */
  #ownersOf(uuid: string, parentUuid: string | null, isStart: boolean): Owners | undefined {
    const own = this.#members.get(uuid);
    const viaParent = parentUuid === null ? undefined : this.#members.get(parentUuid);
    if (viaParent === undefined) return own;
    if (own === undefined) {
      if (isStart) this.#joinAll(uuid, viaParent);
      return viaParent;
    }
    // The common end: a scope of one session, whose parent is of that session alone.
    if (own === viaParent) return own;
    // A member scope's own event: its sessions are its parent's (which it joins, if a session root
    // registered before its start arrived is all it had), plus any session rooted at it.
    if (isStart) for (const session of listOf(viaParent)) if (!includes(own, session)) this.#join(uuid, session);
    let both: SessionTrajectory[] | null = null;
    for (const session of listOf(own)) {
      if (includes(viaParent, session)) continue;
      both ??= [...listOf(viaParent)];
      both.push(session);
    }
    return both ?? viaParent;
  }

  /** Whether `event` is a session scope's own event under another session's scope (see the module's note). */
  #detachedRoot(event: AtofEvent, parentUuid: string | null, isStart: boolean): boolean {
    if (parentUuid === null || event.kind !== 'scope') return false;
    if (!isStart) return event.scope_category === 'end' && this.#detached.delete(event.uuid);
    if (!isSessionScope(event) || !this.#members.has(parentUuid)) return false;
    this.#detached.add(event.uuid);
    return true;
  }

  #joinAll(uuid: string, owners: Owners): void {
    if (!isList(owners)) this.#join(uuid, owners);
    else for (const session of owners) this.#join(uuid, session);
  }

  #join(uuid: string, session: SessionTrajectory): void {
    const owners = this.#members.get(uuid);
    if (owners === undefined) this.#members.set(uuid, session);
    else if (!includes(owners, session)) this.#members.set(uuid, [...listOf(owners), session]);
    session.members.push(uuid);
  }
}

/** A session's own scope, as the plugin opens it (not an embedded sub-agent's, whose role is `subagent`). */
function isSessionScope(event: AtofEvent): boolean {
  const metadata = event.metadata as Record<string, unknown> | null | undefined;
  return event.category === 'agent' && typeof metadata === 'object' && metadata !== null && metadata.nemo_relay_scope_role === 'session';
}

function isList(owners: Owners): owners is readonly SessionTrajectory[] {
  return Array.isArray(owners);
}

function listOf(owners: Owners): readonly SessionTrajectory[] {
  return isList(owners) ? owners : [owners];
}

function includes(owners: Owners, session: SessionTrajectory): boolean {
  return isList(owners) ? owners.includes(session) : owners === session;
}
