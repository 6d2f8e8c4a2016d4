/**
 * The session table: one entry per live host session, ordered by activity
 * (least recently active first), with its agent scope, its open spans and
 * the subagent links between sessions.
 *
 * Sessions a host forgets to close are bounded twice: by an idle TTL,
 * checked on an unref'd timer so an idle host's last sessions close too, and
 * by a cap, which closes the least recently active when a new one opens.
 *
 * @module
 */

import type { AtifFileClaim } from './atif-file.ts';
import type { AtifExporter, LlmHandle, PropagationContext, RelayBackend, ScopeHandle, ToolHandle } from '../relay/contract.ts';
import type { AtifSubagentTrajectoryRef } from '../formats/atif/types.ts';
import type { LoosePayload } from './payload.ts';
import { childSessionIdOf, metadataOf, sessionIdOf, subagentChildMetadata } from './payload.ts';
import { callerMetadata, callerOf, receivedContext } from './remote.ts';

/**
 * Session ids whose session closed recently, remembered so that a session
 * reusing the id (a host resetting and keeping its id) gets its own ATIF
 * file instead of overwriting the first one. Bounded: a long-lived host
 * must not grow with every session it ever had.
 */
const MAX_REMEMBERED_CLOSED_SESSIONS = 10_000;
/** The idle check runs at most this far apart, so a 6 h TTL costs one timer tick a minute. */
const MAX_IDLE_CHECK_INTERVAL_MS = 60_000;

export interface SessionState {
  readonly sessionId: string;
  /**
   * What names the session's own trajectory (its ids, its file, the path
   * handed out): the session id as the configured redaction leaves it
   * (`trajectory-name.ts`), the id itself without redaction. Settled once
   * its scope is pushed.
   */
  trajectoryName: string;
  handle: ScopeHandle | null;
  atifExporter: AtifExporter | null;
  isEmbeddedSubagent: boolean;
  parentSessionId: string;
  readonly llmSpans: Map<string, LlmHandle>;
  readonly toolSpans: Map<string, ToolHandle>;
  /**
   * With managed execution on, a `pre_api_request` / `pre_tool_call` is
   * held here (with the time it came) until it is known whether managed
   * execution records the call: its `llm_execution`/`tool_execution` drops
   * it, its end hook records it as an observed span (created lazily).
   */
  deferred?: Map<string, { kind: 'llm' | 'tool'; payload: LoosePayload; timestampUs: number }>;
  lastActivity: number;
  /**
   * 1 for the first session with this id in this process, 2 for the next one
   * after it closed, ...; moved on past names that hold a file when its
   * trajectory path is handed out before its first write, and to the
   * instance its trajectory file got when that name was taken
   * (`atifFileClaim`).
   */
  instance: number;
  /** The trajectory file's name claim, made at the first write or when its path is first handed out (`plugin/trajectories.ts`). */
  atifClaim?: AtifFileClaim;
  /** Trajectories of work open tool calls ran elsewhere, by tool key (rare: created when first needed). */
  remoteTrajectories: Map<string, AtifSubagentTrajectoryRef[]> | undefined;
  /** The session continues another process's context (an MCP server's call): exported as soon as it ends. */
  continuesRemote: boolean;
}

export type EvictionReason = 'idle_ttl' | 'max_sessions';

interface SubagentParent {
  parentSessionId: string;
  parentHandle: ScopeHandle | null;
  metadata: Record<string, unknown>;
}

export interface SessionTableOptions {
  backend: RelayBackend;
  /** Idle sessions older than this are closed (ms). `0` disables it. */
  idleTtlMs: number;
  /** Live sessions above this are closed, least recently active first. */
  maxSessions: number;
  now(): number;
  /** The name of a session's agent scope (`hermes-session-<id>` in the Hermes profile, `<agent>-session-<id>` otherwise). */
  scopeName(sessionId: string, payload: LoosePayload): string;
  /** What names the session's trajectory, given its scope's name, asked right after its scope is pushed (`trajectory-name.ts`). */
  trajectoryName(sessionId: string, scopeName: string): string;
  /** A session's scope is open: attach what records it (its ATIF exporter). */
  opened(state: SessionState, payload: LoosePayload): void;
  /** Closes a session the table evicted (it is already out of the table). */
  evict(state: SessionState, reason: EvictionReason): void;
  /** A session-opening payload carried a propagation context that cannot be read: the session opens as a root one (named as its trajectory is). */
  unreadableContext(sessionName: string, reason: string): void;
}

export class SessionTable {
  /** Live sessions by id, least recently active first. */
  readonly live = new Map<string, SessionState>();
  private readonly subagentParents = new Map<string, SubagentParent>();
  private readonly closedInstances = new Map<string, number>();
  /** The session last inserted into `live` (its last entry), or null. */
  private newestSessionId: string | null = null;
  private idleTimer: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly options: SessionTableOptions) {}

  get size(): number {
    return this.live.size;
  }

  /** The session a payload belongs to, opening its agent scope on first use. */
  ensure(payload: LoosePayload, timestampUs?: number): SessionState {
    const sessionId = sessionIdOf(payload);
    const now = this.options.now();
    const existing = this.live.get(sessionId);
    if (existing) {
      existing.lastActivity = now;
      // Re-inserting keeps the map ordered by activity, so eviction reads the
      // oldest first. Hooks mostly come in runs for one session, and the
      // newest entry is already last: skip the delete and set then.
      if (sessionId !== this.newestSessionId) {
        this.live.delete(sessionId);
        this.live.set(sessionId, existing);
        this.newestSessionId = sessionId;
      }
      return existing;
    }
    this.evictIdle(now);
    while (this.live.size >= this.options.maxSessions) {
      const oldest = this.live.values().next().value as SessionState | undefined;
      if (!oldest) break;
      this.evictOne(oldest, 'max_sessions');
    }
    return this.open(sessionId, payload, now, timestampUs);
  }

  private open(sessionId: string, payload: LoosePayload, now: number, timestampUs: number | undefined): SessionState {
    const name = this.options.scopeName(sessionId, payload);
    const state: SessionState = {
      sessionId,
      trajectoryName: sessionId,
      handle: null,
      atifExporter: null,
      isEmbeddedSubagent: false,
      parentSessionId: '',
      llmSpans: new Map(),
      toolSpans: new Map(),
      lastActivity: now,
      instance: (this.closedInstances.get(sessionId) ?? 0) + 1,
      remoteTrajectories: undefined,
      continuesRemote: false,
    };
    const parent = this.subagentParents.get(sessionId);
    let metadata = metadataOf(payload);
    let parentHandle: ScopeHandle | null = null;
    let propagation: PropagationContext | undefined;
    let unreadable: string | undefined;
    if (parent && this.live.has(parent.parentSessionId)) {
      parentHandle = parent.parentHandle;
      metadata = { ...metadata, ...parent.metadata };
      state.isEmbeddedSubagent = true;
      state.parentSessionId = parent.parentSessionId;
    } else {
      if (parent) {
        // The parent closed (its trajectory is final) before the child began:
        // embedded there, the child's steps would be in no file. It becomes a
        // session of its own, keeping the parent's ids in its metadata.
        metadata = { ...metadata, ...parent.metadata };
        this.subagentParents.delete(sessionId);
      }
      metadata.nemo_relay_scope_role = 'session';
      const caller = callerOf(payload);
      if (caller !== undefined) metadata = { ...metadata, ...callerMetadata(caller) };
      const received = receivedContext(payload);
      if (received !== undefined && 'error' in received) unreadable = received.error;
      else if (received !== undefined) {
        propagation = received.context;
        state.continuesRemote = true;
      }
    }
    // Registered before the push would see nothing of this session yet, and
    // a per-session builder needs the scope handle to know its subtree.
    state.handle = this.options.backend.pushScope({
      name,
      category: 'agent',
      parent: parentHandle,
      input: { session_id: sessionId },
      metadata,
      ...(propagation !== undefined ? { propagation } : {}),
      ...(timestampUs !== undefined ? { timestampUs } : {}),
    });
    // Named from the start just recorded (a redact hook's answer on it is taken now).
    state.trajectoryName = this.options.trajectoryName(sessionId, name);
    if (unreadable !== undefined) this.options.unreadableContext(state.trajectoryName, unreadable);
    this.live.set(sessionId, state);
    this.newestSessionId = sessionId;
    this.startIdleTimer();
    this.options.opened(state, payload);
    return state;
  }

  /** Takes a session out of the table (it is closing); its id's next session gets a new instance. */
  remove(sessionId: string): SessionState | undefined {
    this.subagentParents.delete(sessionId);
    const state = this.live.get(sessionId);
    if (!state) return undefined;
    this.live.delete(sessionId);
    if (this.newestSessionId === sessionId) this.newestSessionId = null;
    this.closedInstances.delete(sessionId);
    this.closedInstances.set(sessionId, state.instance);
    if (this.closedInstances.size > MAX_REMEMBERED_CLOSED_SESSIONS) {
      const oldest = this.closedInstances.keys().next().value;
      if (oldest !== undefined) this.closedInstances.delete(oldest);
    }
    if (this.live.size === 0) this.stopIdleTimer();
    return state;
  }

  /** Remembers where a subagent's child session belongs, from its parent's `subagent_start`. */
  linkSubagent(parent: SessionState, payload: LoosePayload, metadata: Record<string, unknown>): void {
    const childSessionId = childSessionIdOf(payload);
    if (!childSessionId) return;
    this.subagentParents.set(childSessionId, {
      parentSessionId: parent.sessionId,
      parentHandle: parent.handle,
      metadata: subagentChildMetadata(childSessionId, metadata),
    });
  }

  unlinkSubagent(payload: LoosePayload): void {
    const childSessionId = childSessionIdOf(payload);
    if (childSessionId) this.subagentParents.delete(childSessionId);
  }

  /** Closes every session idle for at least the TTL. */
  evictIdle(now: number = this.options.now()): void {
    const ttl = this.options.idleTtlMs;
    if (!(ttl > 0)) return;
    for (const state of this.live.values()) {
      if (now - state.lastActivity < ttl) break;
      this.evictOne(state, 'idle_ttl');
    }
  }

  private evictOne(state: SessionState, reason: EvictionReason): void {
    this.remove(state.sessionId);
    this.options.evict(state, reason);
  }

  openSpans(): { llm: number; tool: number } {
    let llm = 0;
    let tool = 0;
    for (const state of this.live.values()) {
      llm += state.llmSpans.size;
      tool += state.toolSpans.size;
    }
    return { llm, tool };
  }

  private startIdleTimer(): void {
    const ttl = this.options.idleTtlMs;
    if (this.idleTimer !== null || !(ttl > 0) || !Number.isFinite(ttl)) return;
    const interval = Math.min(Math.max(ttl, 1), MAX_IDLE_CHECK_INTERVAL_MS);
    this.idleTimer = setInterval(() => this.evictIdle(), interval);
    // The check must not keep a finished host alive.
    (this.idleTimer as { unref?: () => void }).unref?.();
  }

  stopIdleTimer(): void {
    if (this.idleTimer === null) return;
    clearInterval(this.idleTimer);
    this.idleTimer = null;
  }
}
