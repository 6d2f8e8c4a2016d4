/**
 * The ATOF JSONL file writer of the in-memory relay.
 *
 * Lines are encoded into one reusable byte buffer as they come and written
 * with one `fs.writeSync` per 256 KiB: for small events the syscall is the
 * cost, so batching is much cheaper than a write per line, and larger
 * writes cost less per byte (bench/RESULTS.md, "Figures behind the code").
 * Encoding each line into the buffer, instead of joining the lines and
 * encoding the joined text, allocates nothing per line. The relay can also
 * write a line straight into the buffer (`beginLine`/`endLine`), which
 * saves copying it there. A `WriteStream` is avoided on purpose: in Bun,
 * waiting for its `drain` costs more per line than the write itself.
 *
 * The buffer is written when it passes a size threshold, shortly after the
 * first line of a quiet period (an unref'd timer, so the file stays fresh
 * without keeping the process alive), on `flush()`/`close()`, and from a
 * process `exit` hook, so a natural exit never leaves buffered lines behind.
 *
 * Lines are written whole, with one `write` per chunk of whole lines to an
 * `O_APPEND` descriptor opened without following links (src/shared/safe-path.ts),
 * so lines of several processes sharing one append-mode file interleave but
 * never cut each other. Overwrite truncates once, at open, like native's
 * constructor. When a write fails part-way:
 * - overwrite mode (the file is this writer's own): the file is truncated
 *   back to the end of the last complete line and the chunk is retried
 *   later; if truncation fails too, the unwritten rest is written first next
 *   time, which completes the broken line;
 * - append mode (the file may be shared): the file is never truncated, as
 *   that would cut lines other processes appended since. The torn line's
 *   fragment is ended with a newline at the next write and the whole line is
 *   written again after it, so no event is lost; the fragment is counted in
 *   `health().tornLines`.
 * A torn last line left by an earlier run (killed mid-write) is ended the
 * same way before the first line of this one, and counted.
 *
 * Before each write the writer checks that its descriptor still is the file
 * at its path (device and inode): a file deleted or replaced while open is
 * reopened (counted in `health().reopens`), so later lines land in the file
 * readers see. Lines written to the deleted file before the check cannot be
 * recovered; they are not counted, as the writer cannot tell when the file
 * was deleted.
 *
 * Retries after a failure back off (200 ms doubling to 5 s, unref'd), and
 * go on until the bounded backlog overflows, so a disk that fills and
 * empties again, or a descriptor limit hit once, loses nothing.
 *
 * Failures never throw: they are counted, logged and reported through
 * `health()`. Lines that cannot be written are kept for a retry up to a
 * bound, and counted as `dropped` when they have to be discarded.
 *
 * @module
 */

import path from 'node:path';
import { Buffer } from 'node:buffer';
import type { AtofMode, OutputHealth } from '../../relay/contract.ts';
import type { Logger } from '../../shared/logger.ts';
import { safeLog } from '../../shared/logger.ts';
import { atExit } from '../../shared/exit-hook.ts';
import { writeFailureFix } from '../../shared/write-failure.ts';
import { retryDelay, type RetryPolicy } from '../../shared/retry.ts';
import { after } from '../../shared/timers.ts';
import { AtofFile, NODE_WRITER_FS, type WriterFs } from './atof-file.ts';
import { LineBuilder, type LineOwner } from '../../shared/utf8-builder.ts';

export type { WriterFs } from './atof-file.ts';

export interface AtofFileWriterOptions {
  path: string;
  mode: AtofMode;
  logger: Logger;
  /** Buffered bytes (UTF-8) that trigger a write. Default 256 KiB. */
  highWaterChars?: number;
  /** Most bytes (UTF-8) kept for a retry while the file cannot be written; beyond it lines are dropped. Default 16 MiB. */
  maxBufferedChars?: number;
  /** Delay of the background write after the first buffered line, in ms. Default 200. `0` disables it. */
  flushDelayMs?: number;
  fs?: WriterFs;
}

const DEFAULT_HIGH_WATER = 256 * 1024;
/** Room past the threshold, so most lines fit without the buffer growing. */
const STAGING_SLACK = 64 * 1024;

/** Whole lines that could not be written yet. */
interface Backlogged {
  bytes: Uint8Array;
  lines: number;
}
const DEFAULT_MAX_BUFFERED = 16 * 1024 * 1024;
const DEFAULT_FLUSH_DELAY_MS = 200;
/** Longest wait between retries after failures (they start at the flush delay and double). */
const MAX_RETRY_DELAY_MS = 5000;

export class AtofFileWriter implements LineOwner {
  readonly path: string;
  private readonly mode: AtofMode;
  private readonly logger: Logger;
  private readonly file: AtofFile;
  private readonly highWater: number;
  private readonly maxBuffered: number;
  private readonly flushDelayMs: number;
  /** Unwritable lines are tried again until the backlog is full: from the flush delay, doubling. */
  private readonly retry: RetryPolicy;

  /**
   * The staging buffer: `stagedLines` whole lines up to `stage.start`, and
   * after it the line being written through `beginLine`, if one is open.
   * Allocated on first use, released when idle.
   */
  private stage: LineBuilder | null = null;
  private stagedLines = 0;
  private lineOpen = false;
  /** Lines appended while a line was open (a payload getter that emits), put before it when it ends. */
  private deferred: Uint8Array[] | null = null;
  /** Chunks that could not be written yet, oldest first; written before the staged lines. */
  private backlog: Backlogged[] = [];
  private backlogBytes = 0;
  private backlogLines = 0;
  /** Bytes of a chunk that was written part-way and could not be rolled back. */
  private carry: Uint8Array | null = null;
  private timer: unknown = null;
  private readonly removeExitTask: () => void;
  private closed = false;
  private failing = false;
  /** Consecutive failed flushes, for the retry backoff. */
  private failures = 0;

  private errors = 0;
  private dropped = 0;
  private lastError: string | undefined;

  constructor(options: AtofFileWriterOptions) {
    this.path = path.resolve(options.path);
    this.mode = options.mode;
    this.logger = options.logger;
    this.file = new AtofFile(this.path, this.mode, options.fs ?? NODE_WRITER_FS, this.logger, (error) => this.recordError(error));
    this.highWater = options.highWaterChars ?? DEFAULT_HIGH_WATER;
    this.maxBuffered = options.maxBufferedChars ?? DEFAULT_MAX_BUFFERED;
    this.flushDelayMs = options.flushDelayMs ?? DEFAULT_FLUSH_DELAY_MS;
    this.retry = { maxRetries: Number.POSITIVE_INFINITY, initialDelayMs: this.flushDelayMs, maxDelayMs: MAX_RETRY_DELAY_MS };
    // Open (and for overwrite, truncate) now, as native's exporter does, so
    // a misconfigured path shows up at registration rather than later.
    this.file.open();
    this.removeExitTask = atExit(() => this.flushSync());
  }

  /** Buffers one complete line (it must end with `\n`). Never throws. */
  append(line: string): void {
    if (this.closed) {
      this.dropped++;
      return;
    }
    if (this.lineOpen) {
      this.defer(Buffer.from(line, 'utf8'));
      return;
    }
    const stage = this.stageForLine();
    stage.utf8(line);
    this.lineWritten(stage);
  }

  /** Buffers the first `length` bytes of `source`: one complete line (ending with `\n`), UTF-8. Never throws. */
  appendBytes(source: Uint8Array, length: number): void {
    if (this.closed) {
      this.dropped++;
      return;
    }
    if (this.lineOpen) {
      this.defer(source.slice(0, length));
      return;
    }
    const stage = this.stageForLine();
    stage.ensure(length);
    stage.bytes.set(length === source.length ? source : source.subarray(0, length), stage.length);
    stage.length += length;
    this.lineWritten(stage);
  }

  /**
   * The staging buffer, for writing one line (ending with `\n`) straight
   * into it from its `start`; end it with `endLine`. Null while a line is
   * open or after close. Never throws.
   */
  beginLine(): LineBuilder | null {
    if (this.closed || this.lineOpen) return null;
    const stage = this.stageForLine();
    this.lineOpen = true;
    return stage;
  }

  /** Ends the line begun with `beginLine`: kept, or dropped (nothing of it stays). Never throws. */
  endLine(keep: boolean): void {
    if (!this.lineOpen) return;
    this.lineOpen = false;
    const stage = this.stage;
    if (stage === null) {
      // Closed while the line was written.
      if (keep) this.dropped++;
      this.deferred = null;
      return;
    }
    const deferred = this.deferred;
    if (deferred !== null) {
      // Lines emitted while this one was written come first, as they would on the event path.
      this.deferred = null;
      const line = keep ? stage.bytes.slice(stage.start, stage.length) : null;
      stage.length = stage.start;
      for (const bytes of deferred) this.appendBytes(bytes, bytes.length);
      if (line !== null) this.appendBytes(line, line.length);
      return;
    }
    if (!keep) {
      stage.length = stage.start;
      return;
    }
    this.lineWritten(stage);
  }

  /** Writes everything buffered. Returns true when nothing is left unwritten. Never throws. */
  flushSync(): boolean {
    this.cancelTimer();
    if (this.carry === null && this.backlogLines === 0 && this.stagedLines === 0) return true;
    if (!this.file.ready()) return this.afterFailure();
    if (this.mode === 'append') this.file.checkEnd();
    if (this.carry !== null) {
      const rest = this.carry;
      this.carry = null;
      const outcome = this.writeChunk(rest);
      if (outcome !== 'ok') {
        // Nothing of a carried remainder may be dropped silently: keep it first in line.
        if (outcome === 'retry') this.carry = rest;
        return this.afterFailure();
      }
    }
    while (this.backlog.length > 0) {
      const chunk = this.backlog[0]!;
      const outcome = this.writeChunk(chunk.bytes);
      if (outcome === 'retry') return this.afterFailure();
      this.backlog.shift();
      this.backlogBytes -= chunk.bytes.length;
      this.backlogLines -= chunk.lines;
      // A torn chunk's rest is the carry now (it is not reused, so no copy).
      if (outcome === 'carry') return this.afterFailure();
    }
    if (this.stagedLines === 0) return this.afterSuccess();
    const stage = this.stage!;
    const outcome = this.writeChunk(stage.bytes.subarray(0, stage.start));
    if (outcome === 'retry') return this.afterFailure();
    // The torn rest points into the staging buffer, which is reused: keep a copy.
    if (outcome === 'carry') this.carry = this.carry!.slice();
    this.dropStaged(stage);
    return outcome === 'ok' ? this.afterSuccess() : this.afterFailure();
  }

  /** Flushes and closes the file. Lines that still cannot be written are counted as dropped. Idempotent. */
  close(): void {
    if (this.closed) return;
    const complete = this.flushSync();
    this.closed = true;
    this.removeExitTask();
    if (!complete) {
      const lost = this.backlogLines + this.stagedLines + (this.carry === null ? 0 : 1);
      this.dropped += lost;
      this.discardBuffered();
      this.carry = null;
      safeLog(this.logger, 'error', `ATOF file ${this.path}: ${lost} line(s) could not be written before close`);
    }
    this.stage = null;
    this.file.close();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  health(): OutputHealth {
    const health: OutputHealth = {
      kind: 'atof',
      path: this.path,
      lastWrite: this.file.lastWrite,
      bytes: this.file.bytes,
      errors: this.errors,
    };
    if (this.lastError !== undefined) health.lastError = this.lastError;
    if (this.dropped > 0) health.dropped = this.dropped;
    if (this.file.tornLines > 0) health.tornLines = this.file.tornLines;
    if (this.file.reopens > 0) health.reopens = this.file.reopens;
    return health;
  }

  /** Lines discarded: written after close, or given up on. */
  get droppedLines(): number {
    return this.dropped;
  }

  /** `file.write`, with a torn chunk's rest kept as the carry. */
  private writeChunk(chunk: Uint8Array): 'ok' | 'retry' | 'carry' {
    const outcome = this.file.write(chunk);
    if (typeof outcome === 'string') return outcome;
    this.carry = outcome;
    return 'carry';
  }

  private afterSuccess(): true {
    this.failures = 0;
    if (this.failing) {
      this.failing = false;
      safeLog(this.logger, 'info', `ATOF file ${this.path}: writing again`);
    }
    return true;
  }

  private afterFailure(): false {
    this.failures++;
    // The staged lines wait in the backlog, so the staging buffer takes new lines.
    this.setAside();
    if (this.backlogBytes > this.maxBuffered) {
      // Bounded memory: give up on the backlog, and say so.
      const lines = this.backlogLines;
      this.dropped += lines;
      safeLog(this.logger, 'error', `ATOF file ${this.path}: dropped ${lines} unwritable line(s)`);
      this.discardBuffered();
    }
    if (!this.closed && this.flushDelayMs > 0 && (this.backlogLines > 0 || this.carry !== null)) {
      this.schedule(retryDelay(this.retry, this.failures));
    }
    return false;
  }

  /** The staging buffer, ready for a line at its `start`. */
  private stageForLine(): LineBuilder {
    let stage = this.stage;
    if (stage === null) {
      stage = this.stage = new LineBuilder(this.highWater + STAGING_SLACK);
      stage.owner = this;
    }
    stage.start = stage.length;
    return stage;
  }

  /** Counts the line just added to the staging buffer and writes the buffer when it is full enough. */
  private lineWritten(stage: LineBuilder): void {
    stage.start = stage.length;
    this.stagedLines++;
    if (stage.length >= this.highWater) this.flushSync();
    else this.scheduleIfIdle();
  }

  /** Empties the staging buffer of its whole lines, keeping an open line (moved to the front). */
  private dropStaged(stage: LineBuilder): void {
    const capacity = this.highWater + STAGING_SLACK;
    if (this.lineOpen) {
      stage.bytes.copyWithin(0, stage.start, stage.length);
      stage.length -= stage.start;
    } else if (stage.bytes.length > 2 * capacity) {
      // A huge line grew the buffer: do not keep it.
      stage.replace(new Uint8Array(capacity));
    } else {
      stage.length = 0;
    }
    stage.start = 0;
    this.stagedLines = 0;
  }

  private defer(bytes: Uint8Array): void {
    (this.deferred ??= []).push(bytes);
  }

  /** Moves the staged lines to the backlog, so the staging buffer takes new lines. */
  private setAside(): void {
    if (this.stagedLines === 0) return;
    const stage = this.stage!;
    if (this.lineOpen) {
      // The open line lives in this buffer: copy the whole lines out.
      this.backlogChunk(stage.bytes.slice(0, stage.start), this.stagedLines);
      this.dropStaged(stage);
    } else {
      // The buffer goes with them; a new one takes the next lines.
      this.backlogChunk(stage.bytes.subarray(0, stage.start), this.stagedLines);
      stage.replace(new Uint8Array(this.highWater + STAGING_SLACK));
      this.stagedLines = 0;
    }
  }

  private backlogChunk(bytes: Uint8Array, lines: number): void {
    this.backlog.push({ bytes, lines });
    this.backlogBytes += bytes.length;
    this.backlogLines += lines;
  }

  private discardBuffered(): void {
    this.backlog = [];
    this.backlogBytes = 0;
    this.backlogLines = 0;
    if (this.stage !== null && this.stagedLines > 0) this.dropStaged(this.stage);
    this.stagedLines = 0;
  }

  private recordError(error: unknown): void {
    this.errors++;
    this.lastError = error instanceof Error ? error.message : String(error);
    if (!this.failing) {
      this.failing = true;
      safeLog(this.logger, 'warn', `ATOF file ${this.path}: ${this.lastError}${writeFailureFix(error)}`);
    } else {
      safeLog(this.logger, 'debug', `ATOF file ${this.path}: ${this.lastError}`);
    }
  }

  private scheduleIfIdle(): void {
    if (this.timer === null && this.flushDelayMs > 0) this.schedule();
  }

  private schedule(delayMs = this.flushDelayMs): void {
    if (this.timer !== null) return;
    this.timer = after(delayMs, () => {
      this.timer = null;
      // After a quiet-period write the staging buffer is not kept: an idle writer holds no buffer.
      if (this.flushSync() && this.stagedLines === 0 && !this.lineOpen) this.stage = null;
    });
  }

  private cancelTimer(): void {
    if (this.timer !== null) {
      clearTimeout(this.timer as ReturnType<typeof setTimeout>);
      this.timer = null;
    }
  }
}

/** Native's default ATOF file name: `nemo-relay-events-YYYY-MM-DD-HH.MM.SS.jsonl`, in UTC. */
export function defaultAtofFilename(date: Date = new Date()): string {
  const iso = date.toISOString(); // 2026-11-29T15:37:46.123Z
  return `nemo-relay-events-${iso.slice(0, 10)}-${iso.slice(11, 13)}.${iso.slice(14, 16)}.${iso.slice(17, 19)}.jsonl`;
}
