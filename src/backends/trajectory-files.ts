/**
 * The one writer of ATIF trajectory files, used by the plugin (the files its
 * environment settings name, `src/plugin/trajectories.ts`) and by the
 * memory relay's plugins.toml activation (`memory/plugins-toml-activation.ts`).
 * Each decides what to write and when; this module does the writing:
 *
 * - **Atomic**: a temporary file in the same folder, then a rename
 *   (`shared/atomic-file.ts`), so a reader never sees half a trajectory.
 * - **Off the host thread**: the system calls run in the runtime's thread
 *   pool (`writeFileAtomicInPool`); a host does not stall on the disk for
 *   telemetry (bench/RESULTS.md, "Trajectory files in the thread pool").
 *   `write()` returns at once and its promise settles when the text landed
 *   or did not; `idle()` settles when no write is running. Texts waiting
 *   for the pool are bounded: past the bound the oldest are written on the
 *   host thread, so a host faster than the disk slows to its pace instead
 *   of holding every text in memory.
 * - **Claimed names**: a file whose owner gives a `claim` is new to it and
 *   never replaces a file already at its name (another process's, an
 *   earlier run's): its first write lands at the first free name the claim
 *   offers, and its later writes go there (`TrajectoryFile.claim`).
 * - **Newest wins**: one write per trajectory runs at a time; a write of a
 *   trajectory whose write is running waits, and a newer one replaces the
 *   waiting one, so an older text is never renamed over a newer one.
 * - **Health**: what `outputs()` lists, per file (the plugin's one file per
 *   session) and as totals (the activation's one entry per folder).
 * - **Retry**: a write that fails (a full disk, EMFILE, a folder in the way)
 *   keeps its text and is tried again on a timer with a growing delay, and
 *   when the owner calls `retryNow()` (flush, close). A newer write of the
 *   same trajectory replaces the kept one, so an old text never lands over a
 *   newer one. The schedule is the `retry` option (`shared/retry.ts`).
 * - **Exit**: at a process exit without `shutdown()`, nothing can be
 *   awaited: every write is done synchronously from then on. Writes running
 *   in the pool are abandoned (their temporary files removed where they
 *   can be) and the newest text of each is written at once; the owner's
 *   exit task writes what it still has open; then every kept write is
 *   tried a last time.
 *
 * Failures are counted and never thrown; the first of a streak (writes failing
 * until one lands) is reported to the owner's `onError`, the rest only counted.
 *
 * @module
 */

import type { OutputHealth } from '../relay/contract.ts';
import { type ExclusiveName, type PooledWrite, writeFileAtomic, writeFileAtomicInPool } from '../shared/atomic-file.ts';
import { errorMessage } from '../shared/error-text.ts';
import { atExit } from '../shared/exit-hook.ts';
import { mayRetry, retryDelay, type RetryPolicy } from '../shared/retry.ts';
import { OWNER_ONLY } from '../shared/safe-path.ts';
import { after } from '../shared/timers.ts';
import { writeFailureFix } from '../shared/write-failure.ts';

/** One trajectory file to write: its absolute path and its whole text. */
export interface TrajectoryFile {
  path: string;
  /** The text, or its UTF-8 bytes (written as they are; not to be changed while the write may be retried). */
  text: string | Uint8Array;
  /** The new file's permissions (owner-only for a recovery copy); the default otherwise. */
  mode?: number;
  /**
   * The file is new to its owner and must not replace one already at
   * `path` (another process's, an earlier run's): the first write lands at
   * the first name the claim's `next` offers that no file has
   * (`shared/atomic-file.ts`), and every write of the owner from then on goes
   * to that name, replacing it as usual.
   */
  claim?: FileClaim;
}

export interface TrajectoryFilesOptions {
  /** Reports a failed write (already counted in the health): log it, count it. Must not throw. */
  onError(message: string, error: unknown): void;
  /** When a failed write is tried again; `maxRetries` tries after its first failure, then it is given up (counted as dropped). */
  retry: RetryPolicy;
  /** How many files `files()` lists, the oldest dropped first: one file per session must not grow without bound. `0` lists none. */
  maxListedFiles: number;
  /** How much text may wait for the pool before the oldest is written on the host thread; default `WAITING_LIMIT`. */
  waitingLimit?: number;
}

/** A file name its owner claims once and then keeps (see `TrajectoryFile.claim`). */
export interface FileClaim {
  /** The name the owner holds, once a write landed; null before. */
  held: string | null;
  /** The name to try after `taken` was found in use (the owner's naming rule), or null to give up. */
  next(taken: string): string | null;
}

interface Kept {
  file: TrajectoryFile;
  /** Failed tries so far. */
  failures: number;
}

/** A write of one trajectory waiting for its running write, and who awaits it. */
interface Waiting extends Kept {
  settle: ((landed: boolean) => void)[];
}

/** A write running in the thread pool. */
interface Running extends Waiting {
  pooled: PooledWrite | null;
  /** Started by a retry pass, which goes on when it lands. */
  pass: boolean;
}

/**
 * Writes started in the thread pool at a time, per writer; the pool's own
 * threads bound how many run at once. Each write takes a turn of the host's
 * event loop per step (open, write, close, rename), so a few slots fall
 * behind a busy host and hold its texts until shutdown; the bound only
 * keeps a burst from queueing every text in the pool (bench/RESULTS.md,
 * "Trajectory files in the thread pool").
 */
const POOL_SLOTS = 64;

/**
 * How much text may wait for a slot, in UTF-16 units or bytes. A host that
 * makes trajectories faster than the disk takes them (a replay) would
 * otherwise hold every text in memory until the pool catches up; past the
 * bound the oldest waiting texts are written on the host thread, which
 * slows the host to the disk's pace instead (bench/RESULTS.md, "Trajectory
 * files in the thread pool").
 */
const WAITING_LIMIT = 16 * 1024 * 1024;

export class TrajectoryFiles<Key> {
  readonly #options: TrajectoryFilesOptions;
  /** Writes that failed, kept to be tried again: the newest text per trajectory. */
  readonly #kept = new Map<Key, Kept>();
  /** At most one running write per trajectory. */
  readonly #running = new Map<Key, Running>();
  /**
   * Texts not started yet, the newest per trajectory, in the order they
   * were asked for: a trajectory's next text waits for its running write,
   * and every write waits for a free slot (`POOL_SLOTS`).
   */
  readonly #waiting = new Map<Key, Waiting>();
  /** The length of the texts in `#waiting` (`WAITING_LIMIT`). */
  #waitingSize = 0;
  readonly #waitingLimit: number;
  readonly #listed = new Map<string, OutputHealth>();
  #timer: ReturnType<typeof setTimeout> | null = null;
  /** Retry passes since the last time nothing was kept: the schedule's step. */
  #passes = 0;
  /** A retry pass is running (one kept write at a time; the first that fails again ends it). */
  #passing = false;
  /** No timer from now on (the owner closed); running writes still finish. */
  #closed = false;
  /** The process is exiting: every write is synchronous from now on. */
  #exiting = false;
  #idle: (() => void)[] = [];
  #removeExitTask: (() => void) | null = null;
  /** The exit hook that finishes running writes, installed while any runs. */
  #removeBusyExit: (() => void) | null = null;
  #bytes = 0;
  #errors = 0;
  #lastWrite: string | null = null;
  #lastError: string | undefined;
  /**
   * Writes have failed since the last one that landed: further failures are
   * counted, not reported. A read-only or full disk fails every session's
   * trajectory and every retry (every 5 s at most): one warning per failure
   * flooded the host's log for as long as the disk stayed so.
   */
  #failing = false;
  #givenUp = 0;

  constructor(options: TrajectoryFilesOptions) {
    this.#options = options;
    this.#waitingLimit = options.waitingLimit ?? WAITING_LIMIT;
  }

  /**
   * Writes `file` for the trajectory `key`, in the thread pool. The promise
   * settles (never rejects) with whether this text landed: false when it
   * failed (it is kept and tried again, see the module doc) or a newer
   * write of the trajectory replaced it before it started. At a process
   * exit the write is done before this returns.
   */
  write(key: Key, file: TrajectoryFile): Promise<boolean> {
    if (this.#exiting) return Promise.resolve(this.#writeNow(key, file));
    const failures = this.#kept.get(key)?.failures ?? 0;
    // The kept text is older than this one: this write replaces it (and carries its failures).
    this.#kept.delete(key);
    return new Promise((resolve) => {
      const replaced = this.#waiting.get(key);
      if (replaced !== undefined) {
        // Replaced in place: the trajectory keeps its turn.
        for (const settle of replaced.settle) settle(false);
        this.#waitingSize += file.text.length - replaced.file.text.length;
        this.#waiting.set(key, { file, failures: Math.max(failures, replaced.failures), settle: [resolve] });
      } else {
        this.#waitingSize += file.text.length;
        this.#waiting.set(key, { file, failures, settle: [resolve] });
        this.#startWaiting();
      }
      if (this.#waitingSize > this.#waitingLimit) this.#writeOverflow();
    });
  }

  /** Settles when no write is running or waiting (kept writes wait for their timer or `retryNow()`). */
  idle(): Promise<void> {
    if (this.#running.size === 0 && this.#waiting.size === 0 && !this.#passing) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /**
   * Leaves the trajectory `key` unwritten on purpose (it would not be valid
   * ATIF): nothing kept for a retry, and its listing says why. A later write
   * of the same file that lands clears the reason.
   */
  skip(key: Key, path: string, reason: string): void {
    this.#kept.delete(key);
    this.#dropWaiting(key);
    const listed = this.#listing(path);
    if (listed) listed.skipped = reason;
  }

  /** Writes `file` once, with no retry (a recovery copy, say). Returns whether it landed. */
  writeOnce(file: TrajectoryFile): boolean {
    return this.#writeOnce(file);
  }

  /** Whether a failed write of `key` is waiting to be tried again. */
  isKept(key: Key): boolean {
    return this.#kept.has(key);
  }

  /** Forgets a kept write (its trajectory is written another way, or no longer wanted). */
  forget(key: Key): void {
    this.#kept.delete(key);
    this.#dropWaiting(key);
  }

  /**
   * Tries every kept write again, one after the other in the order they
   * failed; the first that fails again ends the pass (the disk is still
   * unwell) and the timer takes over. `idle()` settles when the pass is done.
   */
  retryNow(): void {
    this.#clearTimer();
    if (this.#exiting) {
      this.#retryAtExit();
      return;
    }
    if (this.#passing) return;
    this.#passing = true;
    this.#nextInPass();
  }

  /**
   * Runs `task` at process exit (it writes what the owner still has open,
   * through `write`), then tries every kept write a last time. One task per
   * writer; installing again replaces it.
   */
  installExitTask(task: () => void): void {
    this.removeExitTask();
    this.#removeExitTask = atExit(() => {
      this.#finishAtExit();
      task();
      this.#retryAtExit();
    });
  }

  removeExitTask(): void {
    this.#removeExitTask?.();
    this.#removeExitTask = null;
  }

  /**
   * Stops retrying and removes the exit task; what is kept stays counted as
   * unwritten. Writes still running finish (`idle()`), and are written at a
   * process exit that comes first.
   */
  close(): void {
    this.#closed = true;
    this.#clearTimer();
    this.removeExitTask();
  }

  /** One entry per file written or tried, newest last, at most `maxListedFiles`. */
  files(): OutputHealth[] {
    return [...this.#listed.values()].map((health) => ({ ...health }));
  }

  /**
   * One entry for everything written under `folder`: total bytes, failures,
   * the last error, and as `dropped` the trajectories not written yet (lost
   * if the process ends before a retry lands) or given up.
   */
  summary(folder: string): OutputHealth {
    const health: OutputHealth = { kind: 'atif', path: folder, lastWrite: this.#lastWrite, bytes: this.#bytes, errors: this.#errors };
    if (this.#lastError !== undefined) health.lastError = this.#lastError;
    const dropped = this.#kept.size + this.#givenUp;
    if (dropped > 0) health.dropped = dropped;
    return health;
  }

  /** Counts a failure that is not a write (a file name that did not render) in the totals, and reports it. */
  fail(message: string, error?: unknown): void {
    this.#errors += 1;
    this.#lastError = message;
    this.#options.onError(message, error);
  }

  /** The synchronous write (a one-off copy, and everything at a process exit), with the same keeping as `write`. */
  #writeNow(key: Key, file: TrajectoryFile, failures = this.#kept.get(key)?.failures ?? 0): boolean {
    this.#dropWaiting(key);
    if (this.#writeOnce(file)) {
      this.#kept.delete(key);
      return true;
    }
    this.#keep(key, file, failures + 1);
    return false;
  }

  #writeOnce(file: TrajectoryFile): boolean {
    const target = file.claim?.held ?? file.path;
    let listed = this.#listing(target);
    const exclusive = this.#exclusive(file, (moved) => {
      listed = moved;
    });
    try {
      this.#landed(listed, writeFileAtomic(target, file.text, { mode: file.mode ?? OWNER_ONLY, ...(exclusive !== undefined ? { exclusive } : {}) }));
      return true;
    } catch (error) {
      this.#failed(listed, file, error);
      return false;
    }
  }

  /** Starts `write` in the pool now (a free slot, or a retry pass). */
  #start(key: Key, write: Waiting, pass: boolean): void {
    const running: Running = { ...write, pooled: null, pass };
    this.#running.set(key, running);
    if (this.#removeBusyExit === null) this.#removeBusyExit = atExit(() => this.#finishAtExit());
    const target = write.file.claim?.held ?? write.file.path;
    let listed = this.#listing(target);
    const exclusive = this.#exclusive(write.file, (moved) => {
      listed = moved;
    });
    // Owner-only unless the owner says otherwise: a trajectory holds prompts and answers (native writes 0600 too).
    running.pooled = writeFileAtomicInPool(target, write.file.text, { mode: write.file.mode ?? OWNER_ONLY, ...(exclusive !== undefined ? { exclusive } : {}) }, (error, bytes) => {
      if (this.#running.get(key) !== running) return;
      this.#running.delete(key);
      const landed = error === null;
      if (landed) this.#landed(listed, bytes);
      else this.#failed(listed, write.file, error);
      const newer = this.#waiting.get(key);
      if (newer !== undefined) {
        // The newer text goes in its turn; a failure of the older one counts towards giving it up.
        if (!landed) newer.failures = Math.max(newer.failures, running.failures + 1);
      } else if (!landed) {
        this.#keep(key, write.file, running.failures + 1);
      } else if (this.#kept.size === 0) {
        this.#clearTimer();
        this.#passes = 0;
      }
      for (const settle of running.settle) settle(landed);
      if (running.pass) {
        if (landed) this.#nextInPass();
        else this.#endPass();
      }
      this.#startWaiting();
      this.#checkIdle();
    });
  }

  /** Starts waiting writes, oldest first, while a slot is free; a trajectory whose write is running waits its turn. */
  #startWaiting(): void {
    if (this.#running.size >= POOL_SLOTS) return;
    for (const [key, waiting] of this.#waiting) {
      if (this.#running.has(key)) continue;
      this.#unwait(key, waiting);
      this.#start(key, waiting, false);
      if (this.#running.size >= POOL_SLOTS) return;
    }
  }

  /** Keeps a failed write for a retry, or gives it up (counted) after the schedule's last try. */
  #keep(key: Key, file: TrajectoryFile, failures: number): void {
    if (!mayRetry(this.#options.retry, failures)) {
      this.#kept.delete(key);
      this.#givenUp += 1;
      return;
    }
    this.#kept.set(key, { file, failures });
    if (!this.#passing) this.#schedule();
  }

  #nextInPass(): void {
    for (const [key, kept] of this.#kept) {
      this.#kept.delete(key);
      this.#start(key, { ...kept, settle: [] }, true);
      return;
    }
    this.#endPass();
  }

  #endPass(): void {
    this.#passing = false;
    if (this.#kept.size === 0) this.#passes = 0;
    else this.#schedule();
  }

  #dropWaiting(key: Key): void {
    const waiting = this.#waiting.get(key);
    if (waiting === undefined) return;
    this.#unwait(key, waiting);
    for (const settle of waiting.settle) settle(false);
  }

  #unwait(key: Key, waiting: Waiting): void {
    this.#waiting.delete(key);
    this.#waitingSize -= waiting.file.text.length;
  }

  /**
   * Writes the oldest waiting texts on the host thread until what waits is
   * within `WAITING_LIMIT`; a trajectory whose write is running keeps
   * waiting (a synchronous write could land before the running one).
   */
  #writeOverflow(): void {
    for (const [key, waiting] of this.#waiting) {
      if (this.#waitingSize <= this.#waitingLimit) break;
      if (this.#running.has(key)) continue;
      this.#unwait(key, waiting);
      const landed = this.#writeNow(key, waiting.file, waiting.failures);
      for (const settle of waiting.settle) settle(landed);
    }
    this.#checkIdle();
  }

  #checkIdle(): void {
    if (this.#running.size > 0 || this.#waiting.size > 0 || this.#passing) return;
    this.#removeBusyExit?.();
    this.#removeBusyExit = null;
    const waiting = this.#idle;
    this.#idle = [];
    for (const resolve of waiting) resolve();
  }

  #landed(listed: OutputHealth | undefined, bytes: number): void {
    this.#failing = false;
    const now = new Date().toISOString();
    this.#bytes += bytes;
    this.#lastWrite = now;
    if (listed) {
      listed.bytes = bytes;
      listed.lastWrite = now;
      delete listed.skipped;
    }
  }

  #failed(listed: OutputHealth | undefined, file: TrajectoryFile, error: unknown): void {
    const reason = errorMessage(error);
    if (listed) {
      listed.errors += 1;
      listed.lastError = reason;
    }
    const message = `writing ATIF trajectory ${file.claim?.held ?? file.path}: ${reason}`;
    if (!this.#failing) {
      this.#failing = true;
      this.fail(`${message}${writeFailureFix(error)} (until a trajectory is written again, later failures are counted in status().outputs, not said)`, error);
      return;
    }
    this.#errors += 1;
    this.#lastError = message;
  }

  /**
   * The file's claim while it holds no name yet, which moves the file's
   * listing when the text lands at another name than the one asked for: a
   * listing made only for this write goes with it.
   */
  #exclusive(file: TrajectoryFile, relisted: (listed: OutputHealth | undefined) => void): ExclusiveName | undefined {
    const claim = file.claim;
    if (claim === undefined || claim.held !== null) return undefined;
    return {
      next: (taken) => claim.next(taken),
      landed: (name) => {
        claim.held = name;
        if (name === file.path) return;
        const asked = this.#listed.get(file.path);
        if (asked !== undefined && asked.lastWrite === null && asked.errors === 0 && asked.skipped === undefined) this.#listed.delete(file.path);
        relisted(this.#listing(name));
      },
    };
  }

  #listing(file: string): OutputHealth | undefined {
    const max = this.#options.maxListedFiles;
    if (max <= 0) return undefined;
    let health = this.#listed.get(file);
    if (!health) {
      health = { kind: 'atif', path: file, lastWrite: null, bytes: 0, errors: 0 };
      if (this.#listed.size >= max) {
        const oldest = this.#listed.keys().next().value;
        if (oldest !== undefined) this.#listed.delete(oldest);
      }
      this.#listed.set(file, health);
    }
    return health;
  }

  #schedule(): void {
    if (this.#timer !== null || this.#closed || this.#exiting) return;
    this.#passes += 1;
    // Unref'd: a pending retry must not keep a finished host alive; the exit task tries once more.
    this.#timer = after(retryDelay(this.#options.retry, this.#passes), () => {
      this.#timer = null;
      this.retryNow();
    });
  }

  #clearTimer(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }

  /**
   * At a process exit: every write from now on is synchronous; each running
   * write is abandoned and the newest text of its trajectory (the waiting
   * one, else its own) written at once.
   */
  #finishAtExit(): void {
    this.#exiting = true;
    this.#passing = false;
    this.#clearTimer();
    const running = [...this.#running];
    this.#running.clear();
    for (const [key, write] of running) {
      write.pooled?.abandon();
      const waiting = this.#waiting.get(key);
      if (waiting !== undefined) this.#unwait(key, waiting);
      // A kept text of the same trajectory is older than a running one (starting a write drops it).
      const landed = this.#writeNow(key, (waiting ?? write).file);
      for (const settle of [...write.settle, ...(waiting?.settle ?? [])]) settle(landed);
    }
    for (const [key, waiting] of [...this.#waiting]) {
      this.#unwait(key, waiting);
      const landed = this.#writeNow(key, waiting.file);
      for (const settle of waiting.settle) settle(landed);
    }
    this.#checkIdle();
  }

  #retryAtExit(): void {
    this.#finishAtExit();
    // Every kept write gets its try: at exit there is no later pass.
    for (const [key, kept] of [...this.#kept]) this.#writeNow(key, kept.file);
    this.#clearTimer();
  }
}
