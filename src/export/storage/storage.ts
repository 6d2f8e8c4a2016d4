/**
 * ATIF remote storage: each finished trajectory is queued for every
 * configured destination (HTTP, S3), uploaded with retries, and, when any
 * destination gives up on it (failed for good, queue full, or still pending
 * at close), written locally once as a recovery copy, as native does. Each
 * destination is one `atif-storage` entry of `outputs()`, which names the
 * last recovery copy in `recoveryPath`.
 *
 * @module
 */

import { Buffer } from 'node:buffer';
import type { OutputHealth } from '../../relay/contract.ts';
import type { AtifStorageSettings } from '../../formats/plugins-toml/sinks.ts';
import type { Logger } from '../../shared/logger.ts';
import { safeLog } from '../../shared/logger.ts';
import { describeFailure } from '../delivery/errors.ts';
import { createDeliveryQueue, type DeliveryQueue } from '../delivery/queue.ts';
import type { RetryPolicy } from '../../shared/retry.ts';
import type { AtifDestination, AtifUpload } from './destination.ts';
import { httpDestination } from './http.ts';
import { s3Destination } from './s3.ts';

export type { AtifUpload } from './destination.ts';

/** Trajectories held per destination while it is slow or down. */
const DEFAULT_STORAGE_QUEUE_ITEMS = 256;

export interface AtifStorageOptions {
  logger: Logger;
  /**
   * Writes the local recovery copy of `upload` and returns its path, or
   * null when that failed too. Called at most once per trajectory.
   */
  keepRecoveryCopy(upload: AtifUpload): string | null;
  maxQueuedTrajectories?: number;
  retry?: Partial<RetryPolicy>;
}

export interface AtifStorage {
  /** Queues a finished trajectory for every destination. Synchronous; never throws. */
  upload(upload: AtifUpload): void;
  /** Resolves once every upload so far was delivered or given up (true), or after `timeoutMs` (false). */
  flush(timeoutMs: number): Promise<boolean>;
  /** Uploads what is queued within `timeoutMs` (default: the longest destination timeout); recovery copies for the rest. */
  close(timeoutMs?: number): Promise<void>;
  /** Gives up every upload pending now, synchronously: each counted as dropped and kept as a local recovery copy (exit, shutdown out of time). */
  abandon(reason: string): void;
  health(): OutputHealth[];
}

interface Job {
  upload: AtifUpload;
  /** Shared by the job's copies in every destination queue. */
  recovery: { path: string | null; kept: boolean };
}

export function createAtifStorage(settings: readonly AtifStorageSettings[], options: AtifStorageOptions): AtifStorage {
  const outputs = settings.map((entry) => new StorageOutput(entry.type === 'http' ? httpDestination(entry) : s3Destination(entry), options));
  let closed: Promise<void> | null = null;
  return {
    upload(upload) {
      const job: Job = { upload, recovery: { path: null, kept: false } };
      for (const output of outputs) output.push(job);
    },
    flush: async (timeoutMs) => (await Promise.all(outputs.map((output) => output.flush(timeoutMs)))).every(Boolean),
    close(timeoutMs) {
      closed ??= Promise.all(outputs.map((output) => output.close(timeoutMs ?? output.destination.timeoutMs))).then(() => undefined);
      return closed;
    },
    abandon(reason) {
      for (const output of outputs) output.abandon(reason);
    },
    health: () => outputs.map((output) => output.health()),
  };
}

class StorageOutput {
  private readonly queue: DeliveryQueue<Job>;
  private recoveryPath: string | undefined;
  private warned = false;

  constructor(
    readonly destination: AtifDestination,
    private readonly options: AtifStorageOptions,
  ) {
    this.queue = createDeliveryQueue<Job>({
      maxItems: options.maxQueuedTrajectories ?? DEFAULT_STORAGE_QUEUE_ITEMS,
      ...(options.retry !== undefined ? { retry: options.retry } : {}),
      send: (job, signal) => destination.put(job.upload, signal),
      sizeOf: (job) => Buffer.byteLength(job.upload.text, 'utf8'),
      onGiveUp: (job, reason, error) => this.recover(job, reason, error),
    });
  }

  push(job: Job): void {
    this.queue.push(job);
  }

  flush(timeoutMs: number): Promise<boolean> {
    return this.queue.flush(timeoutMs);
  }

  close(timeoutMs: number): Promise<void> {
    return this.queue.close(timeoutMs);
  }

  abandon(reason: string): void {
    this.queue.abandon(reason);
  }

  health(): OutputHealth {
    const c = this.queue.counters();
    const health: OutputHealth = {
      kind: 'atif-storage',
      path: this.destination.label,
      lastWrite: c.lastSuccess,
      bytes: c.bytes,
      errors: c.attemptErrors,
      sent: c.sent,
      failed: c.failed,
      dropped: c.dropped,
      queued: c.pending,
    };
    if (c.lastError !== undefined) health.lastError = c.lastError;
    if (this.recoveryPath !== undefined) health.recoveryPath = this.recoveryPath;
    return health;
  }

  private recover(job: Job, reason: 'failed' | 'dropped', error: unknown): void {
    if (!job.recovery.kept) {
      job.recovery.kept = true;
      job.recovery.path = this.options.keepRecoveryCopy(job.upload);
    }
    if (job.recovery.path !== null) this.recoveryPath = job.recovery.path;
    if (!this.warned) {
      this.warned = true;
      safeLog(
        this.options.logger,
        'warn',
        `ATIF upload to ${this.destination.label} ${reason === 'failed' ? 'failed' : 'was dropped'} (${describeFailure(error)}); ${
          job.recovery.path !== null ? `the trajectory was kept at ${job.recovery.path}` : 'its local recovery copy could not be written either'
        }`,
      );
    }
  }
}
