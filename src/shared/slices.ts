/**
 * Long work done in slices on the host's thread, so the host's event loop
 * keeps turning: the work is a generator that yields between slices (each
 * about `SLICE_UNITS` units of it: events read, converted or written), and
 * `SliceRunner` runs slices in turns of the event loop (`setImmediate`):
 * one per turn, or, once jobs pile up, as many as fit in the time the
 * host's own work took since the last turn (see `SliceRunner`).
 * The same generator run to its end at once (`finishSlices`) is the
 * synchronous path, so both give the same result by construction.
 *
 * Why not a worker thread: the trajectory worker was retired on numbers
 * (bench/RESULTS.md, "The trajectory worker, retired").
 *
 * @module
 */

/** Units of work (events) between two yields. */
export const SLICE_UNITS = 256;

/**
 * Work that yields between slices and returns `T`. It may yield a promise
 * it needs settled before its next slice (a module still loading): the
 * runner waits for it; `finishSlices` goes on at once, so work that yields
 * one must also be able to continue without it.
 */
export type Slices<T> = Generator<void | PromiseLike<unknown>, T, void>;

/** Runs `work` to its end at once and returns its result. */
export function finishSlices<T>(work: Slices<T>): T {
  let step = work.next();
  while (step.done !== true) step = work.next();
  return step.value;
}

/** Counts units of work: `tick()` is true every `SLICE_UNITS` units (time to yield). */
export class SliceClock {
  #units = 0;

  tick(units = 1): boolean {
    this.#units += units;
    if (this.#units < SLICE_UNITS) return false;
    this.#units = 0;
    return true;
  }
}

interface Job<T> {
  work: Slices<T>;
  done(result: T): void;
  failed(error: unknown): void;
  /** Set once the work has returned: `done` runs in a turn of its own (writing a long text is a slice too). */
  finished?: { result: T };
}

/** The longest a turn of slices runs (ms), however long the host's own work took. */
export const MAX_TURN_MS = 50;

/** Jobs queued beyond which they arrive faster than one slice a turn finishes them. */
export const BACKLOG_JOBS = 16;

export interface SliceRunnerOptions {
  /** The clock, in ms (tests pass their own); `performance.now()` by default. */
  now?: () => number;
}

/**
 * Runs jobs in slices, first come first served, in turns of the event loop;
 * a job's `done` is a step of its own (writing a long text is a slice too).
 *
 * One step per turn, so timers and I/O get theirs between every slice,
 * until more than `BACKLOG_JOBS` jobs are queued: then jobs arrive faster
 * than that finishes them (a gateway ending many sessions a turn), and
 * every queued build keeps its session's events alive until it runs. From
 * there, a turn works for as long as the host's own work took since the
 * runner's last turn, up to `MAX_TURN_MS`: the jobs are done at the host's
 * pace instead of piling up until it stops, and the host keeps at least
 * half of its thread. `finishAll()` runs what is left at once (an
 * activation closing, a process exiting); `idle()` settles when no job is
 * left.
 */
export class SliceRunner {
  readonly #jobs: Job<unknown>[] = [];
  readonly #now: () => number;
  #scheduled = false;
  /** Where the host's time since the runner's last turn began: that turn's end, or the first job's arrival. */
  #hostSince = 0;
  #idle: { promise: Promise<void>; resolve: () => void } | null = null;
  /** What the first job waits for before its next slice, if anything. */
  #waiting: PromiseLike<unknown> | null = null;
  /** Slices run so far (tests read it: the work really was spread). */
  slices = 0;

  constructor(options: SliceRunnerOptions = {}) {
    this.#now = options.now ?? (() => performance.now());
  }

  /** Queues `work`; `done` gets its result, `failed` what it threw. Neither may throw. */
  run<T>(work: Slices<T>, done: (result: T) => void, failed: (error: unknown) => void): void {
    this.#jobs.push({ work, done, failed } as Job<unknown>);
    this.#schedule();
  }

  /** Jobs not finished yet. */
  get pending(): number {
    return this.#jobs.length;
  }

  /** Settles when every job queued so far (and any queued meanwhile) has finished. */
  idle(): Promise<void> {
    if (this.#jobs.length === 0) return Promise.resolve();
    if (this.#idle === null) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.#idle = { promise, resolve };
    }
    return this.#idle.promise;
  }

  /** Runs every queued job to its end now. */
  finishAll(): void {
    while (this.#jobs.length > 0) {
      const job = this.#jobs[0]!;
      while (!this.#step(job)) {
        // The job runs to its end.
      }
    }
    this.#settle();
  }

  /** One slice of `job` (its next piece of work, or its `done`); true once it is done (and removed). */
  #step(job: Job<unknown>): boolean {
    const finished = job.finished;
    if (finished !== undefined) {
      this.#remove(job);
      job.done(finished.result);
      return true;
    }
    try {
      this.slices++;
      const step = job.work.next();
      if (step.done === true) job.finished = { result: step.value };
      else if (step.value !== undefined) this.#wait(step.value);
    } catch (error) {
      this.#remove(job);
      job.failed(error);
      return true;
    }
    return false;
  }

  #remove(job: Job<unknown>): void {
    const index = this.#jobs.indexOf(job);
    if (index >= 0) this.#jobs.splice(index, 1);
  }

  /** Holds the turns until `promise` settles (either way: the job itself meets a failure). */
  #wait(promise: PromiseLike<unknown>): void {
    this.#waiting = promise;
    const resume = (): void => {
      if (this.#waiting !== promise) return;
      this.#waiting = null;
      if (this.#jobs.length > 0) this.#schedule();
    };
    promise.then(resume, resume);
  }

  #schedule(): void {
    if (this.#scheduled || this.#waiting !== null) return;
    this.#scheduled = true;
    this.#hostSince = this.#now();
    afterTurn(() => this.#turn());
  }

  /** One turn: one step, and with a backlog, more until the host's own time since the last turn is matched. */
  #turn(): void {
    this.#scheduled = false;
    const start = this.#now();
    const budget = this.#jobs.length > BACKLOG_JOBS ? Math.min(MAX_TURN_MS, start - this.#hostSince) : 0;
    do {
      const job = this.#jobs[0];
      if (job === undefined) break;
      this.#step(job);
    } while (this.#waiting === null && this.#now() - start < budget);
    if (this.#jobs.length > 0) this.#schedule();
    else this.#settle();
  }

  #settle(): void {
    const idle = this.#idle;
    if (idle === null || this.#jobs.length > 0) return;
    this.#idle = null;
    idle.resolve();
  }
}

/** Calls `callback` on the next turn of the event loop, after pending I/O (a runtime without `setImmediate` gets a timer). */
export function afterTurn(callback: () => void): void {
  if (typeof setImmediate === 'function') setImmediate(callback);
  else setTimeout(callback, 0);
}

/** The next turn of the event loop, for long work that lets the host run between its slices. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => afterTurn(resolve));
}
