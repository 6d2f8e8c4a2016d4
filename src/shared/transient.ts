/**
 * Faults that pass: too many open files (EMFILE, ENFILE) and "try again"
 * (EAGAIN). One of them at the wrong moment (loading a backend at the first
 * hook) must not turn telemetry off for the whole process, so such a step is
 * retried a few times with a doubling delay, bounded in total.
 *
 * @module
 */

import { mayRetry, retryDelay, type RetryPolicy } from './retry.ts';
import { after } from './timers.ts';

const TRANSIENT_CODES: ReadonlySet<string> = new Set(['EMFILE', 'ENFILE', 'EAGAIN']);
const TRANSIENT_TEXT = /\b(?:EMFILE|ENFILE|EAGAIN)\b|too many open files|resource temporarily unavailable/i;

/** True for an error (or an error it wraps as `cause`) that is likely to pass on its own, or one marked `transient: true`. */
export function isTransientError(error: unknown): boolean {
  for (let current = error, depth = 0; current !== undefined && current !== null && depth < 5; depth++) {
    try {
      if ((current as { transient?: unknown }).transient === true) return true;
      const code = (current as { code?: unknown }).code;
      if (typeof code === 'string' && TRANSIENT_CODES.has(code)) return true;
      const message = current instanceof Error ? current.message : typeof current === 'string' ? current : '';
      if (TRANSIENT_TEXT.test(message)) return true;
      current = (current as { cause?: unknown }).cause;
    } catch {
      return false;
    }
  }
  return false;
}

/** Six retries, 25 ms doubling to 800 ms: about 1.6 s in all, long enough for a burst of open files to pass. */
const TRANSIENT_RETRY: RetryPolicy = Object.freeze({ maxRetries: 6, initialDelayMs: 25, maxDelayMs: 800 });

/**
 * Runs `step`, retrying while it fails with a transient error (`onRetry` is
 * told before each retry); rethrows anything else, or the last error.
 */
export async function retryTransient<T>(step: () => Promise<T>, options: { onRetry?: (error: unknown, retry: number) => void } = {}): Promise<T> {
  const policy = TRANSIENT_RETRY;
  for (let retry = 1; ; retry++) {
    try {
      return await step();
    } catch (error) {
      if (!mayRetry(policy, retry) || !isTransientError(error)) throw error;
      options.onRetry?.(error, retry);
      // Referenced: the host is waiting for the backend to load.
      await new Promise((resolve) => after(retryDelay(policy, retry), () => resolve(undefined), { ref: true }));
    }
  }
}
