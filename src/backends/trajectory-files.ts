/**
 * The one writer of ATIF trajectory files, used by the plugin (the files its
 * environment settings name, `src/plugin/trajectories.ts`) and by the
 * memory relay's plugins.toml activation (`memory/plugins-toml-activation.ts`).
 * Each decides what to write and when; this module does the writing:
 *
 * - **Atomic**: a temporary file in the same folder, then a rename
 *   (`shared/atomic-file.ts`), so a reader never sees half a trajectory.
 * - **Health**: what `outputs()` lists, per file (the plugin's one file per
 *   session) and as totals (the activation's one entry per folder).
 * - **Retry**: a write that fails (a full disk, EMFILE, a folder in the way)
 *   keeps its text and is tried again on a timer with a growing delay, and
 *   when the owner calls `retryNow()` (flush, close). A newer write of the
 *   same trajectory replaces the kept one, so an old text never lands over a
 *   newer one. The schedule is the `retry` option (`shared/retry.ts`).
 * - **Exit**: at a process exit without `shutdown()`, nothing can be
 *   awaited: the owner's exit task writes what it still has open, then every
 *   kept write is tried a last time, synchronously.
 *
 * Failures are counted, reported to the owner's `onError` and never thrown.
 *
 * @module
 */

import type { OutputHealth } from '../relay/contract.ts';
import { writeFileAtomic } from '../shared/atomic-file.ts';
import { errorMessage } from '../shared/error-text.ts';
import { atExit } from '../shared/exit-hook.ts';
import { mayRetry, retryDelay, type RetryPolicy } from '../shared/retry.ts';
import { OWNER_ONLY } from '../shared/safe-path.ts';
import { after } from '../shared/timers.ts';

/** One trajectory file to write: its absolute path and its whole text. */
export interface TrajectoryFile {
  path: string;
  /** The text, or its UTF-8 bytes (written as they are; not to be changed while the write may be retried). */
  text: string | Uint8Array;
  /** The new file's permissions (owner-only for a recovery copy); the default otherwise. */
  mode?: number;
}

export interface TrajectoryFilesOptions {
  /** Reports a failed write (already counted in the health): log it, count it. Must not throw. */
  onError(message: string, error: unknown): void;
  /** When a failed write is tried again; `maxRetries` tries after its first failure, then it is given up (counted as dropped). */
  retry: RetryPolicy;
  /** How many files `files()` lists, the oldest dropped first: one file per session must not grow without bound. `0` lists none. */
  maxListedFiles: number;
}

interface Kept {
  file: TrajectoryFile;
  /** Failed tries so far. */
  failures: number;
}

export class TrajectoryFiles<Key> {
  readonly #options: TrajectoryFilesOptions;
  /** Writes that failed, kept to be tried again: the newest text per trajectory. */
  readonly #kept = new Map<Key, Kept>();
  readonly #listed = new Map<string, OutputHealth>();
  #timer: ReturnType<typeof setTimeout> | null = null;
  /** Retry passes since the last time nothing was kept: the schedule's step. */
  #passes = 0;
  #removeExitTask: (() => void) | null = null;
  #bytes = 0;
  #errors = 0;
  #lastWrite: string | null = null;
  #lastError: string | undefined;
  #givenUp = 0;

  constructor(options: TrajectoryFilesOptions) {
    this.#options = options;
  }

  /**
   * Writes `file` now, for the trajectory `key`. Returns whether it landed;
   * when it did not, the text is kept and tried again (see the module doc).
   */
  write(key: Key, file: TrajectoryFile): boolean {
    if (this.#writeOnce(file)) {
      this.#kept.delete(key);
      if (this.#kept.size === 0) {
        this.#clearTimer();
        this.#passes = 0;
      }
      return true;
    }
    const failures = (this.#kept.get(key)?.failures ?? 0) + 1;
    if (!mayRetry(this.#options.retry, failures)) {
      this.#kept.delete(key);
      this.#givenUp += 1;
    } else {
      this.#kept.set(key, { file, failures });
      this.#schedule();
    }
    return false;
  }

  /**
   * Leaves the trajectory `key` unwritten on purpose (it would not be valid
   * ATIF): nothing kept for a retry, and its listing says why. A later write
   * of the same file that lands clears the reason.
   */
  skip(key: Key, path: string, reason: string): void {
    this.#kept.delete(key);
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
  }

  /**
   * Tries every kept write now, in the order they first failed; the first
   * that fails again ends the pass (the disk is still unwell) and the timer
   * takes over.
   */
  retryNow(): void {
    this.#clearTimer();
    for (const [key, kept] of [...this.#kept]) {
      if (!this.write(key, kept.file)) break;
    }
    if (this.#kept.size === 0) this.#passes = 0;
    else this.#schedule();
  }

  /**
   * Runs `task` at process exit (it writes what the owner still has open,
   * through `write`), then tries every kept write a last time. One task per
   * writer; installing again replaces it.
   */
  installExitTask(task: () => void): void {
    this.removeExitTask();
    this.#removeExitTask = atExit(() => {
      task();
      this.#retryAtExit();
    });
  }

  removeExitTask(): void {
    this.#removeExitTask?.();
    this.#removeExitTask = null;
  }

  /** Stops retrying and removes the exit task; what is kept stays counted as unwritten. */
  close(): void {
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

  #writeOnce(file: TrajectoryFile): boolean {
    const listed = this.#listing(file.path);
    try {
      // Owner-only unless the owner says otherwise: a trajectory holds prompts and answers (native writes 0600 too).
      const bytes = writeFileAtomic(file.path, file.text, { mode: file.mode ?? OWNER_ONLY });
      const now = new Date().toISOString();
      this.#bytes += bytes;
      this.#lastWrite = now;
      if (listed) {
        listed.bytes = bytes;
        listed.lastWrite = now;
        delete listed.skipped;
      }
      return true;
    } catch (error) {
      const reason = errorMessage(error);
      if (listed) {
        listed.errors += 1;
        listed.lastError = reason;
      }
      this.fail(`writing ATIF trajectory ${file.path}: ${reason}`, error);
      return false;
    }
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
    if (this.#timer !== null) return;
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

  #retryAtExit(): void {
    this.#clearTimer();
    // Every kept write gets its try: at exit there is no later pass.
    for (const [key, kept] of [...this.#kept]) this.write(key, kept.file);
    this.#clearTimer();
  }
}
