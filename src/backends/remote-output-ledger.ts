/**
 * The health of a backend's remote outputs (ATOF streams, ATIF uploads)
 * across plugins.toml activations, and the one place their pending work is
 * flushed, settled within a shutdown's budget, or given up at process exit.
 * Used by the memory relay and by the native adapter (which uploads the
 * trajectories native writes, see `native/atif-uploads.ts`).
 *
 * @module
 */

import type { OutputHealth } from '../relay/contract.ts';
import { atExit } from '../shared/exit-hook.ts';
import { settleWithin } from '../shared/deadline.ts';

/**
 * The remote outputs' health across activations: each activation has its own
 * senders, but `outputs()` must keep one entry per destination with the counts of
 * every activation (the closed ones' included), so that nothing sent,
 * failed or dropped disappears from status() when a session ends.
 */
export class RemoteOutputLedger {
  private readonly entries = new Map<string, { done: OutputHealth | null; live: Set<() => OutputHealth> }>();
  private readonly flushers = new Set<() => Promise<unknown>>();
  private readonly abandoners = new Set<(reason: string) => void>();
  private removeExitTask: (() => void) | null = null;

  /**
   * Lists `health` from now on; `finish()` freezes its last reading into the
   * totals. `abandon` gives up what the output still holds, synchronously:
   * it runs when the relay's shutdown is out of time and at process exit
   * (a closed activation's uploads and streams may still be draining then).
   */
  track(health: () => OutputHealth, flush?: () => Promise<unknown>, abandon?: (reason: string) => void): () => void {
    if (flush !== undefined) this.flushers.add(flush);
    if (abandon !== undefined) {
      this.abandoners.add(abandon);
      this.removeExitTask ??= atExit(() => this.abandon('the process exited'));
    }
    const first = health();
    const key = `${first.kind} ${first.path}`;
    let entry = this.entries.get(key);
    if (entry === undefined) {
      entry = { done: null, live: new Set() };
      this.entries.set(key, entry);
    }
    const held = entry;
    held.live.add(health);
    return () => {
      if (flush !== undefined) this.flushers.delete(flush);
      if (abandon !== undefined && this.abandoners.delete(abandon) && this.abandoners.size === 0) {
        this.removeExitTask?.();
        this.removeExitTask = null;
      }
      if (!held.live.delete(health)) return;
      held.done = held.done === null ? health() : mergeHealth(held.done, health());
    };
  }

  /** Waits until every live output has sent (or given up on) what it holds, each within its own timeout. */
  async flush(): Promise<void> {
    await Promise.all([...this.flushers].map((flush) => flush().catch(() => undefined)));
  }

  /**
   * Waits up to `budgetMs` for every live output to settle what it holds,
   * then gives up the rest: when this returns, every item is counted (and
   * every upload delivered or kept as a recovery copy).
   */
  async settle(budgetMs: number): Promise<void> {
    if (this.abandoners.size > 0 && budgetMs > 0) await settleWithin(this.flush(), budgetMs, { unref: true });
    this.abandon('shutdown ran out of time');
  }

  /** Gives up what every live output still holds (counted as dropped; uploads kept locally). */
  abandon(reason: string): void {
    for (const abandon of [...this.abandoners]) {
      try {
        abandon(reason);
      } catch {
        // Each output counts its own; one that throws must not stop the others.
      }
    }
  }

  outputs(): OutputHealth[] {
    const out: OutputHealth[] = [];
    for (const entry of this.entries.values()) {
      let total = entry.done;
      for (const live of entry.live) total = total === null ? live() : mergeHealth(total, live());
      if (total !== null) out.push({ ...total });
    }
    return out;
  }
}

/** Two readings of one destination: counts added, the later reading's last write, error and recovery path. */
export function mergeHealth(earlier: OutputHealth, later: OutputHealth): OutputHealth {
  const sum = (a: number | undefined, b: number | undefined) => (a ?? 0) + (b ?? 0);
  const merged: OutputHealth = {
    kind: later.kind,
    path: later.path,
    lastWrite: later.lastWrite ?? earlier.lastWrite,
    bytes: earlier.bytes + later.bytes,
    errors: earlier.errors + later.errors,
    sent: sum(earlier.sent, later.sent),
    failed: sum(earlier.failed, later.failed),
    dropped: sum(earlier.dropped, later.dropped),
  };
  if (earlier.queued !== undefined || later.queued !== undefined) merged.queued = sum(earlier.queued, later.queued);
  const lastError = later.lastError ?? earlier.lastError;
  if (lastError !== undefined) merged.lastError = lastError;
  const recoveryPath = later.recoveryPath ?? earlier.recoveryPath;
  if (recoveryPath !== undefined) merged.recoveryPath = recoveryPath;
  return merged;
}

