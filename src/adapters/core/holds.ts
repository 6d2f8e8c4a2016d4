/**
 * Sessions an adapter keeps open after a run ended, for a later run to
 * continue: a conversation the host named (its next turn is the next run),
 * or a run that stopped to ask for approval (the run carrying the answer
 * resumes it). A hold owns one count of the session in `AdapterCore`, the
 * way an open run does, so the session closes only when neither a run nor a
 * hold keeps it.
 *
 * `PausedSubagents` below does the same for a sub-agent's link to its parent.
 *
 * Bounded: past `max` holds the least recently held is released (its
 * session closes unless a run still has it open), so a host that never comes
 * back costs nothing forever.
 *
 * @module
 */

import type { AdapterCore, AgentRun } from './run.ts';

/** Sessions an adapter keeps open between runs by default (named conversations, runs waiting for an approval). */
export const MAX_HELD_SESSIONS = 10_000;

/** Approvals an adapter waits on, and sub-agents paused for them, before the oldest are given up. */
export const MAX_PENDING_APPROVALS = 10_000;

export class SessionHolds<T> {
  readonly #core: AdapterCore;
  readonly #max: number;
  readonly #held = new Map<string, T>();

  constructor(core: AdapterCore, max: number) {
    this.#core = core;
    this.#max = max;
  }

  get size(): number {
    return this.#held.size;
  }

  /**
   * A run of `sessionId` ended and leaves it open: its count becomes the
   * hold. A session already held keeps its one hold (and its data), and the
   * ending run's count is released.
   */
  hold(sessionId: string, data: T): void {
    if (this.#held.has(sessionId)) {
      this.#core.releaseSession(sessionId, 'run_completed');
      this.#held.delete(sessionId); // re-inserted last: the most recently held
    }
    this.#held.set(sessionId, data);
    while (this.#held.size > this.#max) {
      const oldest = this.#held.keys().next().value as string;
      this.#held.delete(oldest);
      this.#core.releaseSession(oldest, 'held_too_long');
    }
  }

  /** True while `sessionId` is held (a run that begins now continues it). */
  has(sessionId: string): boolean {
    return this.#held.has(sessionId);
  }

  /** A run of `sessionId` has begun (and counted itself in): the hold passes to it. Returns what was held. */
  take(sessionId: string): T | undefined {
    const data = this.#held.get(sessionId);
    if (data === undefined) return undefined;
    this.#held.delete(sessionId);
    this.#core.releaseSession(sessionId, 'resumed');
    return data;
  }

  /** Releases every hold (the adapter is uninstalled). */
  releaseAll(reason: string): void {
    const ids = [...this.#held.keys()];
    this.#held.clear();
    for (const id of ids) this.#core.releaseSession(id, reason);
  }
}

/**
 * Sub-agents that stopped to ask for an approval with their link to the
 * parent kept open (`AgentRun.end(…, { keepSessionOpen: true })`), by the key
 * the adapter finds them by again. The run that continues one takes it
 * (`RunStart.continuesSubagent`); every other way out closes the link
 * (`subagent_stop`), so a parent's trajectory never keeps a sub-agent open
 * for ever. Bounded: past `max` the least recently paused closes.
 */
export class PausedSubagents {
  readonly #max: number;
  readonly #paused = new Map<string, AgentRun>();
  /** Told of each sub-agent before its link closes (the adapter forgets what it kept for it). */
  readonly #onClose: ((run: AgentRun) => void) | undefined;

  constructor(max: number, onClose?: (run: AgentRun) => void) {
    this.#max = max;
    this.#onClose = onClose;
  }

  get size(): number {
    return this.#paused.size;
  }

  /** `run` paused: it waits at `key`. One already waiting there is not coming back, and closes. */
  keep(key: string, run: AgentRun): void {
    this.close(key);
    this.#paused.set(key, run);
    while (this.#paused.size > this.#max) this.close(this.#paused.keys().next().value as string);
  }

  /** The sub-agent waiting at `key`, no longer kept: its link is the caller's to continue or close. */
  take(key: string): AgentRun | undefined {
    const run = this.#paused.get(key);
    this.#paused.delete(key);
    return run;
  }

  /** Closes the link of the sub-agent waiting at `key`, if one is. */
  close(key: string): void {
    const run = this.take(key);
    if (run === undefined) return;
    this.#onClose?.(run);
    run.closeLink();
  }

  /** Closes every sub-agent `parent` started that still waits (the parent's turn ended). */
  closeChildrenOf(parent: AgentRun): void {
    for (const [key, run] of [...this.#paused]) if (run.parent?.run === parent) this.close(key);
  }

  closeAll(): void {
    for (const key of [...this.#paused.keys()]) this.close(key);
  }
}
