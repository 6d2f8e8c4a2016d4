/**
 * A bounded delivery queue for remote outputs: items are sent one at a
 * time, in order, by a caller-supplied `send`; retryable failures are tried
 * again on the library's retry policy (`shared/retry.ts`, honouring the
 * destination's Retry-After);
 * every item ends up counted exactly once as sent, failed or dropped.
 *
 * `push` is synchronous and constant-time, so the host's hot path never
 * waits on the network. Timers are unref'd: a queue never keeps a host
 * alive on its own; `close(timeoutMs)` is how pending work gets its chance.
 *
 * @module
 */

import { DeliveryClosedError, DeliveryError, describeFailure } from './errors.ts';
import { mayRetry, retryDelay, type RetryPolicy } from '../../shared/retry.ts';
import { after, sleep } from '../../shared/timers.ts';

/** Streams and uploads: four retries, 250 ms doubling to 30 s, half of each wait random. */
export const DELIVERY_RETRY: RetryPolicy = Object.freeze({ maxRetries: 4, initialDelayMs: 250, maxDelayMs: 30_000, jitter: 0.5 });

/** How an item left the queue without being delivered. */
export type GiveUpReason = 'failed' | 'dropped';

export interface DeliveryQueueOptions<T> {
  /** Items held at most (queued plus in flight); further pushes are dropped and counted. */
  maxItems: number;
  /** Default `DELIVERY_RETRY`. */
  retry?: Partial<RetryPolicy>;
  /** One attempt. Throw a `DeliveryError` (anything else counts as not retryable). */
  send(item: T, signal: AbortSignal): Promise<void>;
  /** Bytes an item accounts for once sent. */
  sizeOf?(item: T): number;
  /** Called once for each item that was not delivered (e.g. to keep a local copy). Must not throw. */
  onGiveUp?(item: T, reason: GiveUpReason, error: unknown): void;
  /** Called on each failed attempt, with whether it will be tried again. */
  onAttemptFailed?(error: unknown, willRetry: boolean): void;
}

interface DeliveryCounters {
  /** Items waiting or in flight. */
  pending: number;
  sent: number;
  failed: number;
  dropped: number;
  /** Attempts that failed (retried or not). */
  attemptErrors: number;
  bytes: number;
  lastSuccess: string | null;
  lastError: string | undefined;
}

export interface DeliveryQueue<T> {
  /** Queues `item`; false (and counted as dropped) when the queue is full or closed. Never throws. */
  push(item: T): boolean;
  counters(): DeliveryCounters;
  /** Resolves once everything pushed so far has been settled, or `timeoutMs` passed (then false). */
  flush(timeoutMs: number): Promise<boolean>;
  /**
   * Stops accepting items and gives pending ones until `timeoutMs` to go
   * out: each gets one more try without backoff, and the first that fails
   * ends the drain (the destination is down: waiting would only delay the
   * host's shutdown; events and uploads go out as they come, so the drain
   * holds only the tail, and a failed upload is kept as its recovery copy;
   * OTLP batches differ, see `OtlpPipeline.shutdown`). At the deadline the
   * attempt in flight is aborted.
   * Everything not delivered is counted. Idempotent.
   */
  close(timeoutMs: number): Promise<void>;
  /**
   * Gives up everything pending now, synchronously: the item in flight (its
   * attempt is aborted and its late outcome ignored) and everything queued,
   * each counted as dropped and handed to `onGiveUp`. For the moments with
   * no time left to wait: a process exit, a shutdown whose budget ran out.
   * Closes the queue. Idempotent.
   */
  abandon(reason: string): void;
}

export function createDeliveryQueue<T>(options: DeliveryQueueOptions<T>): DeliveryQueue<T> {
  return new Queue(options);
}

class Queue<T> implements DeliveryQueue<T> {
  private readonly items: T[] = [];
  private readonly retry: RetryPolicy;
  private readonly maxItems: number;
  private running: Promise<void> | null = null;
  private closed = false;
  private readonly abort = new AbortController();
  /** Fired by close(): cuts a backoff wait short. */
  private readonly closing = new AbortController();
  private idleWaiters: (() => void)[] = [];
  private closePromise: Promise<void> | null = null;
  private inFlight = 0;
  /** The item being delivered, until it is counted (by its attempt, or by abandon()). */
  private current: { item: T; counted: boolean } | null = null;
  private readonly stats = { sent: 0, failed: 0, dropped: 0, attemptErrors: 0, bytes: 0 };
  private lastSuccess: string | null = null;
  private lastError: string | undefined;
  /** What the destination last did to a try (an answer, a refused connection), for the message when the queue gives up on time. */
  private lastAttemptError: string | undefined;

  constructor(private readonly options: DeliveryQueueOptions<T>) {
    const retry = { ...DELIVERY_RETRY, ...options.retry };
    this.retry = { ...retry, maxRetries: Math.max(0, Math.floor(retry.maxRetries)) };
    this.maxItems = Math.max(1, Math.floor(options.maxItems));
  }

  push(item: T): boolean {
    if (this.closed || this.items.length + this.inFlight >= this.maxItems) {
      this.giveUp(item, 'dropped', new DeliveryClosedError(this.closed ? 'output closed' : `queue full (${this.maxItems} items)`));
      return false;
    }
    this.items.push(item);
    if (this.running === null) this.running = this.run();
    return true;
  }

  counters(): DeliveryCounters {
    return { pending: this.items.length + this.inFlight, ...this.stats, lastSuccess: this.lastSuccess, lastError: this.lastError };
  }

  flush(timeoutMs: number): Promise<boolean> {
    if (this.running === null) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      let done = false;
      const finish = (value: boolean) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve(value);
      };
      // Unref'd like every timer here: whoever awaits a flush or close (the plugin's bounded shutdown) keeps the process alive.
      const timer = after(timeoutMs, () => finish(false));
      this.idleWaiters.push(() => finish(true));
    });
  }

  close(timeoutMs: number): Promise<void> {
    if (this.closePromise !== null) return this.closePromise;
    this.closed = true;
    this.closing.abort();
    this.closePromise = (async () => {
      const settled = await this.flush(timeoutMs);
      if (settled) return;
      // Out of time: stop the attempt in flight (it is counted by run()) and everything behind it.
      this.abort.abort(this.closedError(`output closed after ${timeoutMs} ms with items still pending`));
      await this.running;
    })();
    return this.closePromise;
  }

  abandon(reason: string): void {
    const error = this.closedError(reason);
    this.closed = true;
    this.closing.abort();
    if (!this.abort.signal.aborted) this.abort.abort(error);
    const current = this.current;
    if (current !== null && !current.counted) {
      current.counted = true;
      this.inFlight = 0;
      this.giveUp(current.item, 'dropped', error);
    }
    this.dropRemaining(error);
  }

  private async run(): Promise<void> {
    while (this.items.length > 0) {
      const entry = { item: this.items.shift() as T, counted: false };
      this.current = entry;
      this.inFlight = 1;
      try {
        await this.deliver(entry);
      } finally {
        this.current = null;
        this.inFlight = 0;
      }
    }
    this.running = null;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of waiters) wake();
  }

  private async deliver(entry: { item: T; counted: boolean }): Promise<void> {
    const item = entry.item;
    for (let retry = 1; ; retry++) {
      if (entry.counted) return;
      if (this.abort.signal.aborted) {
        entry.counted = true;
        this.giveUp(item, 'dropped', this.abort.signal.reason);
        return;
      }
      try {
        await untilAborted(this.options.send(item, this.abort.signal), this.abort.signal);
        // Abandoned while the attempt ran: already counted as dropped.
        if (entry.counted) return;
        entry.counted = true;
        this.stats.sent++;
        this.stats.bytes += this.options.sizeOf?.(item) ?? 0;
        this.lastSuccess = new Date().toISOString();
        return;
      } catch (error) {
        if (entry.counted) return;
        this.stats.attemptErrors++;
        this.lastError = describeFailure(error);
        if (!(error instanceof DeliveryClosedError)) this.lastAttemptError = this.lastError;
        const aborted = this.abort.signal.aborted;
        const retryable = !aborted && !this.closed && error instanceof DeliveryError && error.retryable && mayRetry(this.retry, retry);
        safeCall(() => this.options.onAttemptFailed?.(error, retryable));
        if (aborted) {
          entry.counted = true;
          this.giveUp(item, 'dropped', error);
          return;
        }
        if (!retryable) {
          entry.counted = true;
          this.giveUp(item, 'failed', error);
          // Draining for close() and the destination is still unreachable or busy: the rest would fare the same.
          if (this.closed && error instanceof DeliveryError && error.retryable) this.dropRemaining(error);
          return;
        }
        await sleep(retryDelay(this.retry, retry, (error as DeliveryError).retryAfterMs), this.closing.signal);
      }
    }
  }

  /**
   * Why what is still pending is given up without another try (out of time,
   * the process exiting), with the destination's last answer: "shutdown ran
   * out of time" alone hid the 429 or refused connection that kept the items
   * waiting, which is what the operator has to fix.
   */
  private closedError(reason: string): DeliveryClosedError {
    return new DeliveryClosedError(this.lastAttemptError === undefined ? reason : `${reason} (last error: ${this.lastAttemptError})`);
  }

  private dropRemaining(error: unknown): void {
    const rest = this.items.splice(0, this.items.length);
    for (const item of rest) this.giveUp(item, 'dropped', error);
  }

  private giveUp(item: T, reason: GiveUpReason, error: unknown): void {
    if (reason === 'failed') this.stats.failed++;
    else this.stats.dropped++;
    this.lastError = describeFailure(error);
    safeCall(() => this.options.onGiveUp?.(item, reason, error));
  }
}

/** `work`, or the signal's reason once it fires: a transport that misses the signal cannot hold the queue. */
function untilAborted(work: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.reject(signal.reason as Error);
  }
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error as Error);
      },
    );
  });
}

function safeCall(fn: () => void): void {
  try {
    fn();
  } catch {
    // A callback's failure must not stop the queue.
  }
}
