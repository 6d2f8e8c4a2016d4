/**
 * Retry timing of the OTLP pipeline: how long to wait before a batch is
 * sent again (exponential backoff with jitter, or the server's
 * `Retry-After`). The stream and storage queues keep theirs in `queue.ts`.
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
 * backoff with ±20% jitter.
 */
export function backoffDelay(attempt: number, policy: BackoffPolicy = DEFAULT_BACKOFF, retryAfterMs?: number, random = Math.random): number {
  if (retryAfterMs !== undefined) return Math.min(Math.max(0, retryAfterMs), policy.maxDelayMs);
  const base = Math.min(policy.initialDelayMs * 2 ** Math.max(0, attempt - 1), policy.maxDelayMs);
  return Math.round(base * (0.8 + 0.4 * random()));
}

/** A timer that never keeps the process alive. */
export function sleepUnref(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    (timer as { unref?: () => void }).unref?.();
  });
}
