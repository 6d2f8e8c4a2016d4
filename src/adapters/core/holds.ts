/**
 * Sessions an adapter keeps open after a run ended, for a later run to
 * continue: a conversation the host named (its next turn is the next run),
 * or a run that stopped to ask for approval (the run carrying the answer
 * resumes it). A hold owns one count of the session in `AdapterCore`, the
 * way an open run does, so the session closes only when neither a run nor a
 * hold keeps it.
 *
 * Bounded: past `max` holds the least recently held is released (its
 * session closes unless a run still has it open), so a host that never comes
 * back costs nothing forever.
 *
 * @module
 */

import type { AdapterCore } from './run.ts';

/** Sessions an adapter keeps open between runs by default (named conversations, runs waiting for an approval). */
export const MAX_HELD_SESSIONS = 10_000;

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
