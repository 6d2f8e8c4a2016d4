/**
 * One OTLP destination's delivery: a bounded queue, batches sent on
 * `scheduled_delay_millis` or when `max_export_batch_size` items wait, up to
 * four requests in flight at once (so a flush of many batches does not wait
 * a round trip per batch), retries with backoff for failures worth
 * retrying, and a count of every item: sent, failed (after retries) or
 * dropped (queue full, shut down). Nothing here blocks or throws into the
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
import { backoffDelay, sleepUnref, type BackoffPolicy } from '../delivery/backoff.ts';
import { createWireExporter, type WireExporter, type WireOptions } from './exporters.ts';
import { errorMessage } from '../../shared/error-text.ts';

export interface PipelineOptions extends WireOptions {
  maxQueueSize: number;
  maxExportBatchSize: number;
  scheduledDelayMillis: number;
  logger: Logger;
  backoff?: BackoffPolicy;
  /** Creates the exporter; default: the OpenTelemetry one for `signal` and `transport`. */
  createExporter?: (options: WireOptions) => Promise<WireExporter>;
}

const MAX_IN_FLIGHT = 4;
const BATCH_RETRY: BackoffPolicy = { maxRetries: 3, initialDelayMs: 1000, maxDelayMs: 15_000 };

export class OtlpPipeline {
  private readonly queue: unknown[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** Requests in flight (up to `MAX_IN_FLIGHT`: a flush of many batches does not wait a round trip per batch). */
  private readonly inFlight = new Set<Promise<void>>();
  private exporter: Promise<WireExporter> | null = null;
  private closed = false;
  private sent = 0;
  private failed = 0;
  private dropped = 0;
  private errors = 0;
  private lastWrite: string | null = null;
  private lastError: string | undefined;
  private retryAttempt = 0;
  /** Set from the first failure to the next success: one warning per outage, not one per batch. */
  private failing = false;
  private retryAt = 0;

  constructor(private readonly options: PipelineOptions) {
    // Start loading the exporter now, so the first batch does not wait for the import.
    this.exporterReady().catch(() => {});
  }

  /** Queues one item. Never blocks; a full queue drops the item and counts it. */
  push(item: unknown): void {
    if (this.closed || this.queue.length >= this.options.maxQueueSize) {
      this.dropped++;
      if (!this.closed && this.dropped === 1) this.note(`queue full (${this.options.maxQueueSize} items): dropping new items until it drains`, false);
      return;
    }
    this.queue.push(item);
    if (this.queue.length >= this.options.maxExportBatchSize) this.kick(0);
    else if (this.timer === null) this.kick(this.options.scheduledDelayMillis);
  }

  health(): OutputHealth {
    const health: OutputHealth = {
      kind: this.options.signal === 'traces' ? 'otlp-traces' : 'otlp-logs',
      path: this.options.url,
      lastWrite: this.lastWrite,
      bytes: 0,
      errors: this.errors,
      sent: this.sent,
      failed: this.failed,
      dropped: this.dropped,
    };
    if (this.lastError !== undefined) health.lastError = this.lastError;
    return health;
  }

  /** Sends everything queued (retrying while `deadline` allows). */
  async flush(deadline: number): Promise<void> {
    while (Date.now() < deadline) {
      if (this.queue.length === 0 && this.inFlight.size === 0) return;
      const wait = this.retryAt - Date.now();
      if (this.queue.length > 0 && this.inFlight.size < MAX_IN_FLIGHT && wait <= 0) {
        this.startBatch();
        continue;
      }
      if (this.inFlight.size > 0) {
        await raceDeadline(Promise.race(this.inFlight), deadline);
        continue;
      }
      if (Date.now() + wait >= deadline) return;
      await sleepUnref(wait);
    }
  }

  /**
   * Flushes within `timeoutMs`, then stops: whatever is still queued is
   * counted as dropped. Resolves within the timeout even when a request hangs.
   */
  async shutdown(timeoutMs: number): Promise<void> {
    if (this.closed) return;
    const deadline = Date.now() + Math.max(0, timeoutMs);
    await this.flush(deadline);
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.queue.length > 0) {
      this.dropped += this.queue.length;
      this.note(`${this.queue.length} items not sent before shutdown`, false);
      this.queue.length = 0;
    }
    const exporter = this.exporter;
    if (exporter !== null) {
      await raceDeadline(
        exporter.then((e) => e.shutdown()).catch(() => {}),
        Math.max(deadline, Date.now() + 50),
      );
    }
  }

  private exporterReady(): Promise<WireExporter> {
    if (this.exporter === null) {
      const create = this.options.createExporter ?? createWireExporter;
      this.exporter = create(this.options);
    }
    return this.exporter;
  }

  private kick(delay: number): void {
    if (this.closed) return;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.startBatch();
    }, Math.max(delay, this.retryAt - Date.now(), 0));
    (this.timer as { unref?: () => void }).unref?.();
  }

  private startBatch(): void {
    if (this.inFlight.size >= MAX_IN_FLIGHT || this.queue.length === 0) return;
    const batch = this.queue.splice(0, this.options.maxExportBatchSize);
    const request: Promise<void> = this.send(batch).finally(() => {
      this.inFlight.delete(request);
      if (this.queue.length >= this.options.maxExportBatchSize) this.kick(0);
      else if (this.queue.length > 0 && this.timer === null) this.kick(this.options.scheduledDelayMillis);
    });
    this.inFlight.add(request);
  }

  private async send(batch: unknown[]): Promise<void> {
    let exporter: WireExporter;
    try {
      exporter = await this.exporterReady();
    } catch (error) {
      this.failed += batch.length;
      this.note(errorMessage(error), true);
      return;
    }
    const result = await new Promise<{ code: number; error?: Error }>((resolve) => {
      try {
        exporter.export(batch, resolve);
      } catch (error) {
        resolve({ code: 1, error: error instanceof Error ? error : new Error(String(error)) });
      }
    });
    if (result.code === 0) {
      if (this.failing) {
        this.failing = false;
        safeLog(this.options.logger, 'info', `OTLP ${this.options.signal} to ${this.options.url}: delivering again`);
      }
      this.sent += batch.length;
      this.lastWrite = new Date().toISOString();
      this.retryAttempt = 0;
      this.retryAt = 0;
      return;
    }
    const reason = result.error ? errorMessage(result.error) : 'export failed';
    const policy = this.options.backoff ?? BATCH_RETRY;
    if (!this.closed && this.retryAttempt < policy.maxRetries && this.queue.length + batch.length <= this.options.maxQueueSize) {
      this.retryAttempt++;
      this.retryAt = Date.now() + backoffDelay(this.retryAttempt, policy);
      this.queue.unshift(...batch);
      this.errors++;
      this.lastError = `${reason} (retry ${this.retryAttempt} of ${policy.maxRetries} scheduled)`;
      return;
    }
    this.retryAttempt = 0;
    this.retryAt = 0;
    this.failed += batch.length;
    this.note(`${batch.length} items not delivered: ${reason}`, true);
  }

  private note(text: string, isError: boolean): void {
    if (isError) this.errors++;
    this.lastError = text;
    if (isError && this.failing) return;
    if (isError) this.failing = true;
    safeLog(this.options.logger, 'warn', `OTLP ${this.options.signal} to ${this.options.url}: ${text} (status().outputs counts what is sent, failed and dropped)`);
  }
}

function raceDeadline(work: Promise<unknown>, deadline: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
    (timer as { unref?: () => void }).unref?.();
    work.then(
      () => {
        clearTimeout(timer);
        resolve();
      },
      () => {
        clearTimeout(timer);
        resolve();
      },
    );
  });
}

