/**
 * The one retry policy of the library: how often a failed step is tried
 * again and how long it waits in between, for ATIF and ATOF file writes,
 * OTLP batches, ATOF stream events, ATIF uploads and start-up steps that hit
 * a passing fault. Each owner picks its numbers (named where it is set up);
 * the schedule is computed here only.
 *
 * The wait doubles from `initialDelayMs` up to `maxDelayMs`. A destination's
 * own hint (`Retry-After`) replaces the computed wait, still capped, so a
 * server cannot park an output for an hour. With `jitter`, that share of
 * each wait is random, so that clients that failed together do not all
 * come back at the same moment.
 *
 * @module
 */

export interface RetryPolicy {
  /** Tries after the first one; `Infinity` retries until the owner stops (closes, or runs out of room). */
  readonly maxRetries: number;
  /** Wait before the first retry. */
  readonly initialDelayMs: number;
  /** Upper bound of one wait, a destination's `Retry-After` included. */
  readonly maxDelayMs: number;
  /** Share of each wait (0 to 1) drawn at random. Default 0: the schedule is exact. */
  readonly jitter?: number;
}

/** Whether retry number `retry` (1-based) is still allowed. */
export function mayRetry(policy: RetryPolicy, retry: number): boolean {
  return retry <= policy.maxRetries;
}

/**
 * The wait before retry number `retry` (1-based): `hintMs` when the
 * destination gave one, else `initialDelayMs` doubled per earlier retry;
 * capped by `maxDelayMs` either way.
 */
export function retryDelay(policy: RetryPolicy, retry: number, hintMs?: number, random: () => number = Math.random): number {
  const cap = Math.max(0, policy.maxDelayMs);
  if (hintMs !== undefined && hintMs >= 0) return Math.min(hintMs, cap);
  // 2^60 is far past any cap; the bound keeps a long outage's retry count from reaching Infinity * 0.
  const base = Math.min(Math.max(0, policy.initialDelayMs) * 2 ** Math.min(Math.max(0, retry - 1), 60), cap);
  const jitter = Math.min(1, Math.max(0, policy.jitter ?? 0));
  return base * (1 - jitter) + random() * base * jitter;
}
