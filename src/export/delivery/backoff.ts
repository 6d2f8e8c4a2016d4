/**
 * Retry timing shared by the remote outputs (OTLP, ATOF streams, ATIF
 * uploads): which failures are worth another try, how long to wait
 * (exponential backoff with jitter, or the server's `Retry-After`), and when
 * to stop.
 *
 * @module
 */

/** HTTP statuses that say "try again later": 429 and the gateway errors. */
function isRetryableStatus(status: number): boolean {
  return status === 429 || status === 502 || status === 503 || status === 504;
}

/** Network error codes a retry can fix (refused, reset, timed out, DNS hiccup). */
const RETRYABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT']);

/** Whether a thrown error is a connection failure a retry can fix. */
function isRetryableError(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current !== null && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && RETRYABLE_CODES.has(code)) return true;
    if (typeof code === 'number' && isRetryableStatus(code)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** `Retry-After` (seconds or an HTTP date) in milliseconds, or undefined when absent or unreadable. */
function retryAfterMillis(header: string | null | undefined, now = Date.now()): number | undefined {
  if (header === null || header === undefined || header.trim() === '') return undefined;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}

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
