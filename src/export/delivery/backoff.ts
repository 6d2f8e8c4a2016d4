/**
 * Retry timing of the remote outputs (the OTLP pipeline and the stream and
 * storage queues): how long to wait before an item is sent again.
 *
 * @module
 */

export interface BackoffPolicy {
  /** Tries after the first one. */
  maxRetries: number;
  initialDelayMs: number;
  maxDelayMs: number;
}

const DEFAULT_BACKOFF: Readonly<BackoffPolicy> = Object.freeze({ maxRetries: 4, initialDelayMs: 500, maxDelayMs: 10_000 });

/**
 * The wait before retry number `attempt` (1-based): the server's
 * `Retry-After` when given (capped by `maxDelayMs`), else exponential
 * backoff, half fixed and half random, so that clients that failed together
 * do not retry together. The one formula of every remote output.
 */
export function backoffDelay(
  attempt: number,
  policy: Pick<BackoffPolicy, 'initialDelayMs' | 'maxDelayMs'> = DEFAULT_BACKOFF,
  retryAfterMs?: number,
  random = Math.random,
): number {
  if (retryAfterMs !== undefined) return Math.min(Math.max(0, retryAfterMs), policy.maxDelayMs);
  const base = Math.min(policy.initialDelayMs * 2 ** Math.max(0, attempt - 1), policy.maxDelayMs);
  return base / 2 + random() * (base / 2);
}

/** A timer that never keeps the process alive. */
export function sleepUnref(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    (timer as { unref?: () => void }).unref?.();
  });
}
