/**
 * One HTTP request through the runtime's `fetch` (Node, Bun and Deno all
 * have it), with a timeout, turned into the delivery layer's typed errors.
 *
 * @module
 */

import { ConnectionFailedError, DeliveryClosedError, DeliveryTimeoutError, DestinationUnusableError, HttpStatusError } from './errors.ts';
import { unrefTimer } from './queue.ts';

export interface HttpAttempt {
  url: string;
  method: 'POST' | 'PUT';
  headers: Record<string, string>;
  body: string | Uint8Array;
  timeoutMs: number;
  /** Aborts the attempt when the output closes. */
  signal: AbortSignal;
}

/** Sends one request; resolves on a 2xx answer, throws a `DeliveryError` otherwise. */
export async function sendHttp(attempt: HttpAttempt): Promise<void> {
  const timeout = new AbortController();
  const timer = unrefTimer(setTimeout(() => timeout.abort(), Math.max(1, attempt.timeoutMs)));
  const onClose = () => timeout.abort();
  attempt.signal.addEventListener('abort', onClose, { once: true });
  let response: Response;
  try {
    response = await fetch(attempt.url, {
      method: attempt.method,
      headers: attempt.headers,
      body: attempt.body as string,
      signal: timeout.signal,
      redirect: 'manual',
    });
    // Read the (small) answer so the connection is released before the next request.
    await response.arrayBuffer().catch(() => undefined);
  } catch (error) {
    if (attempt.signal.aborted) throw new DeliveryClosedError(`${attempt.method} ${attempt.url} was cut short: the output closed`);
    if (timeout.signal.aborted) throw new DeliveryTimeoutError(`${attempt.method} ${attempt.url} got no answer within ${attempt.timeoutMs} ms`);
    if (error instanceof TypeError && /invalid url|failed to parse|unsupported protocol/i.test(error.message)) {
      throw new DestinationUnusableError(`${attempt.url}: ${error.message}`);
    }
    throw new ConnectionFailedError(`${attempt.method} ${attempt.url} failed: ${connectionReason(error)}`);
  } finally {
    clearTimeout(timer);
    attempt.signal.removeEventListener('abort', onClose);
  }
  if (response.status < 200 || response.status > 299) {
    throw new HttpStatusError(response.status, `${attempt.method} ${attempt.url}`, retryAfterMs(response.headers.get('retry-after')));
  }
}

/** `Retry-After` as milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The most specific reason fetch gives (undici hides the socket error in `cause`). */
function connectionReason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } } | null)?.cause;
  if (cause?.code) return cause.code;
  if (cause?.message) return cause.message;
  return error instanceof Error ? error.message : String(error);
}
