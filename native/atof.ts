/**
 * ATOF JSONL file sinks over native `AtofExporter`.
 *
 * Two native traps are handled here: the config must be camelCase
 * (`outputDirectory`; a snake_case key is silently ignored and the file lands
 * in the working directory), and the constructor creates or truncates the
 * file at once. Native writes on a background thread, so `flush()` drains
 * delivery (`flushSubscribers`) before `forceFlush()`.
 *
 * Native's file sink fails silently: on a full disk it loses lines (and
 * leaves a torn one), after one failed write it never writes again, and with
 * file descriptors exhausted it drops events with only a message on stderr.
 * None of that reaches JavaScript. So each flush compares what was sent with
 * what reached the file: the events the relay handed to native since the
 * sink was registered, against the complete lines appended to the file since
 * then (read incrementally, so each byte is read once). The difference is
 * counted in `health().dropped` (and the relay's `dropped`) and reported in
 * `lastError`; when new losses appear the native exporter is replaced by a
 * fresh one in append mode, which writes again once the fault is gone. An
 * exporter that cannot be created at all (a read-only folder, a file where a
 * folder should be, EMFILE) is not an exception for the host either: the
 * sink stays listed in `outputs()` with the error, every event sent meanwhile
 * is counted as dropped, and creation is retried on later flushes, backing
 * off from 200 ms to 5 s.
 *
 * What cannot be detected: lines another process appends to the same file
 * hide as many losses (the count is a lower bound), and which events were
 * lost (native does not say), so they cannot be written again.
 *
 * @module
 */

import { closeSync, constants, fstatSync, openSync, readSync, statSync, writeSync } from 'node:fs';
import { Buffer } from 'node:buffer';
import path from 'node:path';
import type { AtofExporter, AtofExporterOptions, OutputHealth } from '../src/backends/native-surface.ts';
import { rules } from '../src/backends/native-surface.ts';
import { errorMessage, retryDelay, type RetryPolicy } from '../src/backends/native-surface.ts';
import type { NativeAtofExporter, NativeBinding } from './binding.ts';
import { AtofExporterError } from './errors.ts';
import { uniqueName } from './names.ts';

/** Replacing a native exporter that went silent: every 200 ms doubling to 5 s, for as long as the sink is open. */
const RECREATE_RETRY: RetryPolicy = Object.freeze({ maxRetries: Number.POSITIVE_INFINITY, initialDelayMs: 200, maxDelayMs: 5000 });
const READ_CHUNK = 1024 * 1024;

export class NativeAtofSink implements AtofExporter {
  readonly path: string;
  readonly #binding: NativeBinding;
  readonly #options: { outputDirectory: string; filename: string; mode: 'append' | 'overwrite' };
  readonly #onClose: (sink: NativeAtofSink) => void;
  /** Events the relay has handed to native so far. */
  readonly #sent: () => number;
  readonly #sentAtStart: number;
  #exporter: NativeAtofExporter | null = null;
  #name = '';
  /** Whether an exporter was ever created (later ones append, never truncate again). */
  #created = false;
  #lastFlush: string | null = null;
  #errors = 0;
  #lastError: string | undefined;
  #closing: Promise<void> | null = null;
  /** Complete lines counted in the file since registration, and where counting goes on. */
  #lines = 0;
  #readOffset = 0;
  #fileId: string | null = null;
  #dropped = 0;
  #retryAt = 0;
  /** Recreations tried since the last exporter that was created: the schedule's step. */
  #recreations = 0;
  /** The relay's event count at the last flush that found every event written; -1 when none did. */
  #settledAt = -1;

  /** Says what went wrong, once per failing streak (later failures of the streak are in health()). */
  readonly #warn: (message: string) => void;
  #failing = false;

  constructor(
    binding: NativeBinding,
    given: AtofExporterOptions,
    onClose: (sink: NativeAtofSink) => void,
    sent: () => number = () => 0,
    /** Told when a torn last line was ended before native appended to the file, and when the file starts failing. */
    warn: (message: string) => void = () => {},
  ) {
    const options = plainOptions(given);
    const filename = options.filename;
    if (!rules.isPlainFileName(filename)) {
      throw new AtofExporterError(`ATOF filename must be a plain file name, got ${JSON.stringify(filename)}`);
    }
    if (options.mode !== 'append' && options.mode !== 'overwrite') {
      throw new AtofExporterError(`ATOF mode must be 'append' or 'overwrite', got ${JSON.stringify(options.mode)}`);
    }
    const outputDirectory = path.resolve(options.outputDirectory ?? '.');
    this.#binding = binding;
    this.#onClose = onClose;
    this.#sent = sent;
    this.#sentAtStart = sent();
    this.#warn = warn;
    this.#options = { outputDirectory, filename, mode: options.mode };
    this.path = path.join(outputDirectory, filename);
    if (options.mode === 'append') {
      this.#endTornLine('an earlier writer was cut off');
      this.#startCountingAtEnd();
    }
    // An exporter that cannot be created now is retried on flush; the failure is in health().
    if (this.#create()) this.path = path.resolve(this.#exporter!.path || this.path);
  }

  async flush(): Promise<void> {
    if (this.#closing !== null) return this.#closing;
    // The plugin flushes its sink right after the relay's flush has: with
    // nothing sent since a flush that found every line written, native has
    // nothing of ours left to deliver, and a second drain would only wait.
    if (this.#exporter !== null && this.#dropped === 0 && this.#sent() === this.#settledAt) {
      this.#lastFlush = new Date().toISOString();
      return;
    }
    await this.#drainAndWrite();
  }

  /**
   * The relay's flush: it drained native delivery once for every sink, after
   * `sent` events had been handed over. Writes and counts what that drain
   * delivered, as `flush()` would after its own drain.
   */
  async flushDrained(sent: number): Promise<void> {
    if (this.#closing !== null) return this.#closing;
    this.#writeDrained(sent - this.#sentAtStart, true, sent);
  }

  /**
   * At process exit, after the relay drained native synchronously (`sent`
   * events handed over by then): writes native's buffer to the file, and
   * says how many events the file misses. Never throws.
   */
  flushAtExit(sent: number): void {
    if (this.#closing !== null) return;
    const before = this.#dropped;
    const failing = this.#failing;
    this.#writeDrained(sent - this.#sentAtStart, false, sent);
    // A streak's first failure was just said (with the count); one already said gets the count at exit.
    if (failing && this.#dropped > before) this.#warn(`ATOF file ${this.path}: ${this.#dropped} event(s) sent to native were not written when the process exited`);
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  /** Whether `close()` was called. */
  get closed(): boolean {
    return this.#closing !== null;
  }

  /** Events sent to native that did not reach the file, as of the last flush (a lower bound). */
  get droppedEvents(): number {
    return this.#dropped;
  }

  health(): OutputHealth {
    const health: OutputHealth = { kind: 'atof', path: this.path, lastWrite: this.#lastFlush, bytes: 0, errors: this.#errors };
    try {
      const stat = statSync(this.path);
      health.bytes = stat.size;
      // Native writes on its own thread; the file's mtime is the true last write.
      if (stat.size > 0) health.lastWrite = stat.mtime.toISOString();
    } catch (error) {
      health.errors += 1;
      health.lastError = `cannot stat ${this.path}: ${errorMessage(error)}`;
    }
    if (this.#lastError !== undefined) health.lastError = this.#lastError;
    if (this.#dropped > 0) health.dropped = this.#dropped;
    return health;
  }

  /** Creates and registers a native exporter; false (with the error recorded) when it cannot. */
  #create(): boolean {
    const { outputDirectory, filename } = this.#options;
    // After the first exporter, never truncate: the file holds what was written since.
    const overwrite = !this.#created && this.#options.mode === 'overwrite';
    let exporter: NativeAtofExporter;
    try {
      // Every native exporter appends (O_APPEND), and overwrite is a truncation
      // done here: native's overwrite mode writes through a file offset, and
      // an exporter retired after a failed write can still write the line it
      // held once space returns, over the first lines of its replacement.
      // Appended, that late line is one more line, which the count sees.
      if (overwrite) truncateIfPresent(path.join(outputDirectory, filename));
      exporter = new this.#binding.AtofExporter({ type: 'file', outputDirectory, filename, mode: 'append' });
    } catch (error) {
      this.#fail('create', new Error(`cannot create the ATOF file ${path.join(outputDirectory, filename)}: ${errorMessage(error)}`));
      return false;
    }
    const name = uniqueName('atof');
    try {
      exporter.register(name);
    } catch (error) {
      safely(() => exporter.shutdown());
      this.#fail('register', error);
      return false;
    }
    if (overwrite) this.#resetCount();
    this.#created = true;
    this.#exporter = exporter;
    this.#name = name;
    this.#recreations = 0;
    return true;
  }

  /** Replaces the native exporter (gone silent after a failed write) or retries creating one, with backoff. */
  #recover(): void {
    const now = Date.now();
    if (now < this.#retryAt) return;
    this.#recreations++;
    this.#retryAt = now + retryDelay(RECREATE_RETRY, this.#recreations);
    this.#retire();
    // The exporter that failed may have left half a line: the next one must not append to it.
    if (this.#countLines() && this.#endTornLine('a failed write left half a line')) this.#startCountingAtEnd();
    this.#create();
  }

  /**
   * Ends the file's last line when it is torn, so that native's next line
   * starts on a line of its own (native appends straight after it, and
   * the two become one line nobody can parse). The torn line stays, ended.
   */
  #endTornLine(why: string): boolean {
    const ended = endTornLine(this.path);
    if (ended) this.#warn(`ATOF file ${this.path} ended with a torn line (${why}); it was ended before native appends`);
    return ended;
  }

  #retire(): void {
    const exporter = this.#exporter;
    if (exporter === null) return;
    this.#exporter = null;
    // A broken exporter fails to flush and shut down too: counted, but the loss stays the reported error.
    const keep = this.#lastError;
    safely(() => exporter.forceFlush());
    safely(() => exporter.deregister(this.#name), (error) => this.#fail('deregister', error));
    safely(() => exporter.shutdown(), (error) => this.#fail('shutdown', error));
    if (keep !== undefined && this.#dropped > 0) this.#lastError = keep;
  }

  async #close(): Promise<void> {
    await this.#drainAndWrite(false);
    this.#retire();
    if (this.#dropped > 0) this.#warn(`ATOF file ${this.path}: ${this.#dropped} event(s) could not be written before close`);
    this.#onClose(this);
  }

  async #drainAndWrite(recover = true): Promise<void> {
    // Counted before the drain: everything sent up to here must be in the file after it.
    const total = this.#sent();
    let drained = true;
    try {
      await this.#binding.flushSubscribers();
    } catch (error) {
      drained = false;
      this.#fail('flush', error);
    }
    this.#writeDrained(total - this.#sentAtStart, recover, drained ? total : -1);
  }

  /** After a drain: native's buffer to the file, the lines counted, a silent exporter replaced. */
  #writeDrained(sent: number, recover: boolean, total: number): void {
    this.#settledAt = -1;
    try {
      // Without an exporter (one that could not be created) nothing was written: no last write to report.
      if (this.#exporter !== null) {
        this.#exporter.forceFlush();
        this.#lastFlush = new Date().toISOString();
      }
    } catch (error) {
      total = -1;
      this.#fail('flush', error);
    }
    const before = this.#dropped;
    this.#account(sent);
    if (recover && (this.#exporter === null || this.#dropped > before)) this.#recover();
    // Only a flush that found everything written lets the next one with nothing new skip its drain.
    if (total >= 0 && this.#exporter !== null && this.#dropped === 0) {
      this.#settledAt = total;
      this.#failing = false;
    }
  }

  /**
   * Compares `sent` with the complete lines that reached the file and counts
   * the difference. Recomputed at every flush: native may still write a line
   * it had failed to write, so the count can go down again.
   */
  #account(sent: number): void {
    if (!this.#countLines()) return;
    const missing = Math.max(0, sent - this.#lines);
    if (missing > this.#dropped) {
      this.#fail('write', new Error(`${missing} event(s) sent to native did not reach ${this.path} (a full disk, a failed write or no free file descriptors)`));
    }
    this.#dropped = missing;
  }

  /** Reads what was appended since the last count; false when the file cannot be read. */
  #countLines(): boolean {
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch (error) {
      if (this.#exporter === null || (error as { code?: unknown }).code === 'ENOENT') return true;
      this.#fail('count', error);
      return false;
    }
    try {
      const stat = fstatSync(fd);
      const id = `${stat.dev}:${stat.ino}`;
      if (this.#fileId !== null && id !== this.#fileId) this.#readOffset = 0; // replaced: count the new file
      this.#fileId = id;
      if (stat.size < this.#readOffset) this.#readOffset = 0;
      const buffer = readBuffer(stat.size - this.#readOffset);
      // Counting resumes after the last complete line: a torn tail is counted once it ends (or never).
      let position = this.#readOffset;
      while (position < stat.size) {
        const n = readSync(fd, buffer, 0, Math.min(buffer.length, stat.size - position), position);
        if (n <= 0) break;
        const chunk = n === buffer.length ? buffer : buffer.subarray(0, n);
        for (let i = chunk.indexOf(0x0a); i >= 0; i = chunk.indexOf(0x0a, i + 1)) {
          this.#lines++;
          this.#readOffset = position + i + 1;
        }
        position += n;
      }
      return true;
    } catch (error) {
      this.#fail('count', error);
      return false;
    } finally {
      safely(() => closeSync(fd));
    }
  }

  /** In append mode, lines already in the file are not this sink's. */
  #startCountingAtEnd(): void {
    try {
      const stat = statSync(this.path);
      this.#readOffset = stat.size;
      this.#fileId = `${stat.dev}:${stat.ino}`;
    } catch {
      this.#resetCount();
    }
  }

  #resetCount(): void {
    this.#readOffset = 0;
    this.#fileId = null;
  }

  #fail(operation: string, error: unknown): void {
    this.#errors += 1;
    this.#lastError = `${operation}: ${errorMessage(error)}`;
    // As the memory relay's file says it: the first failure of a streak, loudly; the rest in health().
    if (!this.#failing) {
      this.#failing = true;
      this.#warn(`ATOF file ${this.path}: ${this.#lastError}`);
    }
  }
}

/** Empties `file` when it exists (following a link, as native's overwrite does); a missing file is left to native to create. */
function truncateIfPresent(file: string): void {
  let fd: number;
  try {
    fd = openSync(file, constants.O_WRONLY | constants.O_TRUNC);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return;
    throw error;
  }
  closeSync(fd);
}

/**
 * Appends a newline to `file` when its last byte is not one (a torn last
 * line); true when it did. A missing or empty file, or one that cannot be
 * opened (never through a link), is left alone.
 */
export function endTornLine(file: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDWR | constants.O_APPEND | (constants.O_NOFOLLOW ?? 0));
  } catch {
    return false;
  }
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return false;
    const last = Buffer.alloc(1);
    if (readSync(fd, last, 0, 1, size - 1) !== 1 || last[0] === 0x0a) return false;
    writeSync(fd, '\n');
    return true;
  } catch {
    return false;
  } finally {
    safely(() => closeSync(fd));
  }
}

/**
 * The buffer counting reads into: a `Buffer` for its native `indexOf` (a
 * memchr, where a JS loop over every byte showed in a native mark's
 * profile; bench/RESULTS.md, "Figures behind the code"), shared by
 * every sink (counting is synchronous) and grown up to `READ_CHUNK`, so a
 * flush allocates nothing.
 */
let scratch: Buffer | null = null;

function readBuffer(wanted: number): Buffer {
  const size = Math.min(READ_CHUNK, Math.max(1, wanted));
  if (scratch === null || scratch.length < size) scratch = Buffer.allocUnsafe(Math.max(size, Math.min(READ_CHUNK, (scratch?.length ?? 0) * 2)));
  return scratch;
}

function safely(fn: () => unknown, onError?: (error: unknown) => void): void {
  try {
    fn();
  } catch (error) {
    onError?.(error);
  }
}

/** The three options read once; a hostile options object is reported as bad options. */
function plainOptions(options: AtofExporterOptions): Partial<AtofExporterOptions> {
  try {
    const out: Partial<AtofExporterOptions> = { filename: options?.filename, mode: options?.mode };
    const dir = options?.outputDirectory;
    if (dir !== undefined) out.outputDirectory = dir;
    if (out.outputDirectory !== undefined && typeof out.outputDirectory !== 'string') {
      throw new TypeError('outputDirectory must be a string');
    }
    return out;
  } catch (error) {
    throw new AtofExporterError(`invalid ATOF exporter options: ${errorMessage(error)}`, { cause: error });
  }
}
