/**
 * Faults that pass: too many open files (EMFILE, ENFILE) and "try again"
 * (EAGAIN). One of them at the wrong moment (loading a backend at the first
 * hook) must not turn telemetry off for the whole process, so such a step is
 * retried a few times with a doubling delay, bounded in total.
 *
 * @module
 */

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

export interface RetryOptions {
  /** Delays before each retry, in ms. Default 25, 50, 100, 200, 400, 800 (about 1.6 s in all). */
  delaysMs?: readonly number[];
  /** Called before each retry with the error that caused it. */
  onRetry?: (error: unknown, attempt: number) => void;
}

const DEFAULT_DELAYS = [25, 50, 100, 200, 400, 800];

/** Runs `step`, retrying while it fails with a transient error; rethrows anything else, or the last error. */
export async function retryTransient<T>(step: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const delays = options.delaysMs ?? DEFAULT_DELAYS;
  for (let attempt = 0; ; attempt++) {
    try {
      return await step();
    } catch (error) {
      if (attempt >= delays.length || !isTransientError(error)) throw error;
      options.onRetry?.(error, attempt + 1);
      await new Promise((resolve) => setTimeout(resolve, delays[attempt]));
    }
  }
}
