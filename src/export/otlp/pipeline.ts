/**
 * One OTLP destination's delivery: a bounded queue, batches sent on
 * `scheduled_delay_millis` or when `max_export_batch_size` items wait, up to
 * four requests in flight at once (so a flush of many batches does not wait
 * a round trip per batch), retries with backoff for failures worth
 * retrying, a batch the receiver refuses for its size sent again in halves,
 * and a count of every item: sent, failed (after retries, or too large even
 * alone) or dropped (queue full, shut down). Nothing here blocks or throws into the
 * caller: `push` is synchronous and constant-time, and every timer is
 * unref'd.
 *
 * The OpenTelemetry exporter already retries 429/502/503/504 and connection
 * errors within one call (honouring `Retry-After`, up to its timeout). A
 * batch that still fails is kept at the head of the queue and tried again
 * after a backoff, so a collector that is down for a while loses nothing as
 * long as the queue has room.
 *
 * @module
 */

import type { OutputHealth } from '../../relay/contract.ts';
import { safeLog, type Logger } from '../../shared/logger.ts';
import { mayRetry, retryDelay, type RetryPolicy } from '../../shared/retry.ts';
import { after, sleep } from '../../shared/timers.ts';
import { createWireExporter, ExporterPackageError, type WireExporter, type WireOptions } from './exporters.ts';
import { runsFromOwnPackage } from '../../shared/package-module.ts';
import { DestinationUnusableError, RequestTooLargeError } from '../delivery/errors.ts';
import { errorMessage } from '../../shared/error-text.ts';
import { displayUrl, withoutUrlSecrets } from '../../shared/secret-text.ts';
import { settleWithin } from '../../shared/deadline.ts';

export interface PipelineOptions extends WireOptions {
  maxQueueSize: number;
  maxExportBatchSize: number;
  scheduledDelayMillis: number;
  logger: Logger;
  /** Default `BATCH_RETRY`. */
  retry?: RetryPolicy;
  /** Creates the exporter; default: the OpenTelemetry one for `signal` and `transport`. */
  createExporter?: (options: WireOptions) => Promise<WireExporter>;
}

const MAX_IN_FLIGHT = 4;

/** A batch whose request is out: its items not counted yet, and when its current request went. */
interface InFlightBatch {
  size: number;
  abandoned: boolean;
  sentAt: number;
}

/** A failed batch waiting for its next try. */
interface RetryEntry {
  items: unknown[];
  retries: number;
  at: number;
}
/** A failed batch is tried again three times, 1 s doubling to 15 s, half of each wait random. */
export const BATCH_RETRY: RetryPolicy = Object.freeze({ maxRetries: 3, initialDelayMs: 1000, maxDelayMs: 15_000, jitter: 0.5 });

export class OtlpPipeline {
  private readonly queue: unknown[] = [];
  /**
   * Batches that failed and wait for their next try, oldest first, each with
   * its own count of tries: four batches failing together in one outage
   * must not use up each other's retries.
   */
  private readonly retrying: RetryEntry[] = [];
  /** Items in `retrying`. */
  private retryingItems = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** Requests in flight (up to `MAX_IN_FLIGHT`: a flush of many batches does not wait a round trip per batch). */
  private readonly inFlight = new Set<Promise<void>>();
  /**
   * The batches of the requests in flight, each with its items not yet
   * counted (a batch split for its size counts its halves as they settle);
   * one still in flight when shutdown ends is counted as dropped, and its
   * late outcome ignored.
   */
  private readonly inFlightBatches = new Set<InFlightBatch>();
  private exporter: Promise<WireExporter> | null = null;
  /** The exporter once loaded (for the bytes it sent). */
  private wire: WireExporter | null = null;
  private closed = false;
  private sent = 0;
  private failed = 0;
  private dropped = 0;
  /** Of `failed`: items the receiver refused for their size even alone. */
  private tooLarge = 0;
  private errors = 0;
  private lastWrite: string | null = null;
  private lastError: string | undefined;
  /** Why the batches waiting in `retrying` failed (their last attempt's error), for the count at shutdown. */
  private retryReason: string | undefined;
  /** Set from the first failure to the next success: one warning per outage, not one per batch. */
  private failing = false;
  /** No new batch goes out before this (the collector failed: the backoff holds every batch back). */
  private retryAt = 0;
  /** Items pushed so far, and their number when the loop last ran dry (`drainAtLoopEnd`). */
  private pushed = 0;
  private drainedAt = 0;
  /**
   * Set when a flush ran out of time with items still here, until one
   * `timeout_millis` later (cleared by the next delivery): a flush or the
   * shutdown that follows within it does not wait for the destination
   * again. The plugin's shutdown flushes twice before the shutdown proper;
   * each waited a whole `timeout_millis` (with a new request after each
   * timeout and backoff), so a collector that never answered held the host
   * for three of them, where the page promises one.
   */
  private waitedOutUntil = 0;

  constructor(private readonly options: PipelineOptions) {
    // Start loading the exporter now, so the first batch does not wait for the import.
    this.exporterReady().catch(() => {});
  }

  /** Queues one item. Never blocks; a full queue drops the item and counts it. */
  push(item: unknown): void {
    if (this.closed || this.queue.length + this.retryingItems >= this.options.maxQueueSize) {
      this.dropped++;
      if (!this.closed && this.dropped === 1) this.note(`queue full (${this.options.maxQueueSize} items): dropping new items until it drains`, false);
      return;
    }
    this.queue.push(item);
    this.pushed++;
    if (this.queue.length >= this.options.maxExportBatchSize) this.kick(0);
    else if (this.timer === null) this.kick(this.options.scheduledDelayMillis);
  }

  health(): OutputHealth {
    const health: OutputHealth = {
      kind: this.options.signal === 'traces' ? 'otlp-traces' : 'otlp-logs',
      path: displayUrl(this.options.url),
      lastWrite: this.lastWrite,
      bytes: this.wire?.sentBytes?.() ?? 0,
      errors: this.errors,
      sent: this.sent,
      failed: this.failed,
      dropped: this.dropped,
      tooLarge: this.tooLarge,
      queued: this.queue.length + this.retryingItems + [...this.inFlightBatches].reduce((sum, batch) => sum + batch.size, 0),
    };
    if (this.lastError !== undefined) health.lastError = this.lastError;
    return health;
  }

  /**
   * Sends everything queued (retrying while `deadline` allows). Returns at
   * once when a flush just ran out of time on this destination and nothing
   * was delivered since (`waitedOutUntil`).
   */
  async flush(deadline: number): Promise<void> {
    if (Date.now() < this.waitedOutUntil) return;
    if (await this.sendWithin(deadline)) return;
    this.waitedOutUntil = Date.now() + this.options.timeoutMillis;
  }

  /** True once nothing is left to send, false when `deadline` came first. */
  private async sendWithin(deadline: number): Promise<boolean> {
    while (Date.now() < deadline) {
      if (this.pending() === 0 && this.inFlight.size === 0) return true;
      const wait = this.nextSendAt() - Date.now();
      if (this.pending() > 0 && this.inFlight.size < MAX_IN_FLIGHT && wait <= 0) {
        this.startBatch();
        continue;
      }
      if (this.inFlight.size > 0) {
        await settleWithin(Promise.race(this.inFlight), deadline - Date.now(), { unref: true });
        continue;
      }
      // A retry that could not go before the deadline is not tried.
      if (Date.now() + wait >= deadline) return false;
      await sleep(wait);
    }
    return this.pending() === 0 && this.inFlight.size === 0;
  }

  /**
   * Flushes within `timeoutMs`, then stops: whatever is still queued is
   * counted as dropped. Resolves within the timeout even when a request hangs.
   * A failed batch is still retried meanwhile, unlike a stream's or upload's
   * last drain (`DeliveryQueue.close`): spans wait for their batch, so the
   * shutdown is often when most of a short run's spans are first sent
   * (docs/operators/otlp.md, "Shutdown").
   */
  async shutdown(timeoutMs: number): Promise<void> {
    if (this.closed) return;
    const deadline = Date.now() + Math.max(0, timeoutMs);
    await this.flush(deadline);
    // A batch still waiting for its retry failed for a reason the operator needs (a 401, a 500), and a request the
    // deadline cut had no answer: said with the count.
    const answer = this.retrying.length > 0 ? this.retryReason : undefined;
    const cut = this.unanswered();
    const cause = cut === undefined ? answer : answer === undefined ? cut : `${cut}; before that: ${answer}`;
    const why = cause === undefined ? '' : ` (last error: ${cause})`;
    this.stop((left) => `${left} items not sent before shutdown${why}`);
    const exporter = this.exporter;
    if (exporter !== null) {
      // A collector that did not answer within the drain is not waited for again by the exporter's own shutdown.
      const end = Date.now() < this.waitedOutUntil ? Date.now() : deadline;
      await settleWithin(
        exporter.then((e) => e.shutdown()),
        Math.max(end, Date.now() + 50) - Date.now(),
        { unref: true },
      );
    }
  }

  /**
   * The event loop ran dry with items still here (a host that ends without
   * `shutdown()`): sends them within `timeout_millis` (native's exporter
   * thread often does at that moment). Undefined when there is nothing new to send since
   * the last time (a collector that is down is not waited for again).
   */
  drainAtLoopEnd(): Promise<void> | undefined {
    if (this.closed || this.pending() + this.inFlightBatches.size === 0 || this.drainedAt === this.pushed) return undefined;
    this.drainedAt = this.pushed;
    return this.flush(Date.now() + this.options.timeoutMillis);
  }

  /**
   * The process is exiting: nothing can be sent any more. Counts what is
   * left as dropped and says so, synchronously (an `exit` listener).
   */
  abandon(reason: string): void {
    if (this.closed) return;
    const cut = this.unanswered();
    const last = cut === undefined ? this.lastError : this.lastError === undefined ? cut : `${cut}; before that: ${this.lastError}`;
    const why = last === undefined ? reason : `${reason}; last error: ${last}`;
    this.stop((left) => `${left} items not sent (${why})`);
  }

  /** "no answer within N ms" for the oldest request still waiting for its answer, if one is. */
  private unanswered(): string | undefined {
    let oldest = Number.POSITIVE_INFINITY;
    for (const batch of this.inFlightBatches) oldest = Math.min(oldest, batch.sentAt);
    return oldest === Number.POSITIVE_INFINITY ? undefined : `no answer within ${Math.max(0, Date.now() - oldest)} ms`;
  }

  /** Closes the pipeline: what is still queued or in flight is counted as dropped, with one warning. */
  private stop(describe: (left: number) => string): void {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    let abandoned = 0;
    for (const batch of this.inFlightBatches) {
      batch.abandoned = true;
      abandoned += batch.size;
    }
    this.inFlightBatches.clear();
    // A request still in flight would hold the process until its own timeout (gRPC): its connection goes now.
    if (abandoned > 0) this.wire?.abandon?.();
    const left = this.queue.length + this.retryingItems + abandoned;
    if (left > 0) {
      this.dropped += left;
      this.note(describe(left), false);
      this.queue.length = 0;
      this.retrying.length = 0;
      this.retryingItems = 0;
    }
  }

  private exporterReady(): Promise<WireExporter> {
    if (this.exporter === null) {
      const create = this.options.createExporter ?? createWireExporter;
      this.exporter = create(this.options).then((exporter) => (this.wire = exporter));
    }
    return this.exporter;
  }

  private kick(delay: number): void {
    if (this.closed) return;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = after(Math.max(delay, this.nextSendAt() - Date.now(), 0), () => {
      this.timer = null;
      this.startBatch();
    });
  }

  /** Items waiting: queued, or failed and waiting for their next try. */
  private pending(): number {
    return this.queue.length + this.retryingItems;
  }

  /** When the next batch may go: after the backoff, and a failed batch not before its own retry time. */
  private nextSendAt(): number {
    const retry = this.retrying[0];
    if (retry !== undefined && this.queue.length === 0) return Math.max(this.retryAt, retry.at);
    return this.retryAt;
  }

  private startBatch(): void {
    if (this.inFlight.size >= MAX_IN_FLIGHT || this.pending() === 0) return;
    const now = Date.now();
    let batch: unknown[];
    let retries = 0;
    const due = this.retrying[0];
    if (due !== undefined && due.at <= now) {
      this.retrying.shift();
      this.retryingItems -= due.items.length;
      batch = due.items;
      retries = due.retries;
    } else if (this.queue.length > 0) {
      batch = this.queue.splice(0, this.options.maxExportBatchSize);
    } else {
      this.kick(0);
      return;
    }
    const tracked: InFlightBatch = { size: batch.length, abandoned: false, sentAt: now };
    this.inFlightBatches.add(tracked);
    const request: Promise<void> = this.send(batch, tracked, retries).finally(() => {
      this.inFlightBatches.delete(tracked);
      this.inFlight.delete(request);
      if (this.queue.length >= this.options.maxExportBatchSize) this.kick(0);
      else if (this.pending() > 0 && this.timer === null) this.kick(this.queue.length > 0 ? this.options.scheduledDelayMillis : 0);
    });
    this.inFlight.add(request);
  }

  private async send(batch: unknown[], tracked: InFlightBatch, retries: number): Promise<void> {
    let exporter: WireExporter;
    try {
      exporter = await this.exporterReady();
    } catch (error) {
      if (tracked.abandoned) return;
      // A missing exporter package was reported once, at activation (export/packages.ts): counted here, not logged
      // again. Bundled into a host's file, activation could not tell: the warning below says it, once per outage.
      if (error instanceof ExporterPackageError && runsFromOwnPackage()) {
        this.failed += batch.length;
        this.errors++;
        this.lastError = shownError(error);
        return;
      }
      // An exporter that cannot be built (Deno without --allow-env) was reported nowhere else: one warning per outage.
      this.failed += batch.length;
      this.note(`${batch.length} items not delivered: the OpenTelemetry exporter could not be created: ${shownError(error)}`, true);
      return;
    }
    // Shut down while the exporter loaded: counted as dropped, and no connection is opened now.
    if (tracked.abandoned) return;
    await this.deliver(exporter, batch, tracked, retries);
  }

  /**
   * One request for `items`. A request the receiver refused for its size
   * goes again as two halves, one after the other so they keep their order,
   * down to single items: a receiver's cap then costs only the items that do
   * not fit on their own, each counted once, and a receiver that refuses
   * everything ends after 2n - 1 requests with each item failed once.
   * Resolves with the retry it scheduled, if it scheduled one.
   */
  private async deliver(exporter: WireExporter, items: unknown[], tracked: InFlightBatch, retries: number): Promise<RetryEntry | null> {
    tracked.sentAt = Date.now();
    const result = await new Promise<{ code: number; error?: Error }>((resolve) => {
      try {
        exporter.export(items, resolve);
      } catch (error) {
        resolve({ code: 1, error: error instanceof Error ? error : new Error(String(error)) });
      }
    });
    // Counted as dropped when shutdown ended without it.
    if (tracked.abandoned) return null;
    if (result.code === 0) {
      tracked.size -= items.length;
      if (this.failing) {
        this.failing = false;
        safeLog(this.options.logger, 'info', `OTLP ${this.options.signal} to ${displayUrl(this.options.url)}: delivering again`);
      }
      this.sent += items.length;
      this.waitedOutUntil = 0;
      this.lastWrite = new Date().toISOString();
      this.retryAt = 0;
      if (this.retrying.length === 0) this.retryReason = undefined;
      return null;
    }
    if (result.error instanceof RequestTooLargeError) {
      if (items.length > 1) {
        const half = Math.ceil(items.length / 2);
        const later = await this.deliver(exporter, items.slice(0, half), tracked, retries);
        if (tracked.abandoned) return null;
        if (later === null) return this.deliver(exporter, items.slice(half), tracked, retries);
        // The first half failed otherwise and waits for a retry: the second waits behind it, not sent before it.
        return this.retryBehind(later, items.slice(half), tracked);
      }
      tracked.size -= 1;
      this.failed += 1;
      this.tooLarge += 1;
      const limit = result.error.limitBytes === undefined ? 'its request size cap' : `its cap of ${result.error.limitBytes} bytes`;
      this.note(
        `1 item not delivered: the receiver refused it as too large even alone (${result.error.requestBytes} bytes encoded, over ${limit}); raise the receiver's limit (the Collector's max_recv_msg_size_mib for gRPC, max_request_body_size for HTTP) to keep such items`,
        true,
      );
      return null;
    }
    const reason = result.error ? shownError(result.error) : 'export failed';
    const policy = this.options.retry ?? BATCH_RETRY;
    tracked.size -= items.length;
    // A destination that cannot be used at all (the runtime refuses the connection) is not tried again.
    const usable = !(result.error instanceof DestinationUnusableError);
    // A failed batch keeps its place in the bound: it waits among the queued items, not beside them.
    if (usable && !this.closed && mayRetry(policy, retries + 1) && this.pending() + items.length <= this.options.maxQueueSize) {
      // The receiver's Retry-After, when it sent one, instead of the backoff.
      const at = Date.now() + retryDelay(policy, retries + 1, exporter.takeRetryAfterMs?.());
      this.retryAt = Math.max(this.retryAt, at);
      const entry = { items, retries: retries + 1, at };
      this.retrying.push(entry);
      this.retryingItems += items.length;
      this.errors++;
      this.lastError = `${reason} (retry ${retries + 1} of ${policy.maxRetries} scheduled)`;
      this.retryReason = reason;
      this.kick(0);
      return entry;
    }
    this.failed += items.length;
    this.note(`${items.length} items not delivered: ${reason}`, true);
    return null;
  }

  /** Queues `items` (not tried yet) for `ahead`'s retry, right behind it, while the queue has room. */
  private retryBehind(ahead: RetryEntry, items: unknown[], tracked: { size: number }): RetryEntry | null {
    tracked.size -= items.length;
    const index = this.retrying.indexOf(ahead);
    if (this.closed || this.pending() + items.length > this.options.maxQueueSize) {
      this.failed += items.length;
      this.note(`${items.length} items not delivered: ${this.lastError ?? 'export failed'}`, true);
      return null;
    }
    const entry = { items, retries: ahead.retries, at: ahead.at };
    // `ahead` is still waiting unless its retry already started: then this one is next.
    this.retrying.splice(index < 0 ? 0 : index + 1, 0, entry);
    this.retryingItems += items.length;
    return entry;
  }

  private note(text: string, isError: boolean): void {
    if (isError) this.errors++;
    this.lastError = text;
    if (isError && this.failing) return;
    if (isError) this.failing = true;
    safeLog(this.options.logger, 'warn', `OTLP ${this.options.signal} to ${displayUrl(this.options.url)}: ${text} (status().outputs counts what is sent, failed and dropped)`);
  }
}

/**
 * An exporter's or a runtime's error as `status()` and warnings show it: such text can quote the URL it was given
 * (Bun's fetch and WebSocket errors do), and a destination URL can carry a password or a query token.
 */
function shownError(error: unknown): string {
  return withoutUrlSecrets(errorMessage(error));
}
