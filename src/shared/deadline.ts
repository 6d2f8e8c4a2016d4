/**
 * Waiting for work no longer than a budget: the one way shutdown paths
 * bound what they await (a receiver that never answers must not hold a
 * host's `shutdown()`), whatever layer they are in.
 *
 * @module
 */

import { timerDelay } from './timers.ts';

/**
 * Settles when `work` settles or `ms` have passed, whichever comes first;
 * `'timeout'` in the second case. Never rejects (the caller reports `work`'s
 * own failure where it tracks it). The timer is cleared as soon as the work
 * is done; `unref` leaves it out of what keeps the process alive (for waits
 * inside background work, where the host awaits nothing).
 */
export async function settleWithin(work: Promise<unknown>, ms: number, options: { unref?: boolean } = {}): Promise<'done' | 'timeout'> {
  const settled = work.then(
    () => 'done' as const,
    () => 'done' as const,
  );
  if (!Number.isFinite(ms)) return settled;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timerDelay(ms));
    if (options.unref === true) (timer as { unref?: () => void }).unref?.();
  });
  try {
    return await Promise.race([settled, late]);
  } finally {
    clearTimeout(timer);
  }
}
