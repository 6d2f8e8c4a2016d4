/**
 * Builds the memory relay's trajectories for `exportJson()` on a worker
 * thread (`atif-worker.ts`), off the host's event loop: converting and
 * serializing a session's trajectory costs milliseconds, at every session
 * end, and a second core can take it. Opt-in (`atifWorker: true`): on the
 * loaded 2-core machine it was measured on, the host's thread spent 4-10x
 * less CPU per export and the throughput replay ran 1.17-1.21x faster, but
 * without the in-flight cap below it ran 0.5-0.8x on tmpfs (the worker's
 * build competes for the same two cores), and peak RSS grows by ~50 MiB
 * (a second JS heap): too thin a margin to make it the default.
 *
 * - One worker per process, shared by every memory relay, started by the
 *   first `exportJson()` (a host that never exports ATIF never starts it).
 * - Each export sends the session's entries recorded since its previous
 *   one (line runs decoded to text: one pass, and Deno passes strings
 *   20-30x faster than typed arrays; on Node a 36 KiB run costs ~30-60 µs
 *   either way), and its builder options once; the worker parses them once
 *   and keeps the events.
 * - The main thread keeps every entry too, unparsed, so `exportJsonNow()`
 *   (at process exit, where nothing can be awaited) and every fallback
 *   build the same trajectory in-thread.
 * - Fail-open: when the worker cannot start (no `worker_threads`, a `.ts`
 *   worker file on a Node without type stripping, a Deno without read
 *   permission) or dies, every export of the process is built in-thread
 *   from then on, requests in flight included; one warning says so, and
 *   each relay counts its exports built that way (`atifWorkerFallbacks`).
 * - Both cores work: while `MAX_IN_FLIGHT` exports wait on the worker, the
 *   next one is built in-thread (and that session stays in-thread), so a
 *   worker that falls behind (a busy machine, a burst of session ends)
 *   neither queues sessions without bound, holding their memory, nor makes
 *   the host wait longer than building them itself would.
 * - The worker never keeps a finished host alive: it is unref'd whenever no
 *   request is pending and ref'd while one is (so a pending export is not
 *   cut off). A relay's `shutdown()` waits for its requests, and the worker
 *   is terminated once no relay has a session on it.
 *
 * @module
 */

import { packageModuleUrl } from '../../shared/package-module.ts';
import type { Logger } from '../../shared/logger.ts';
import { safeLog } from '../../shared/logger.ts';
import { errorWithName } from '../../shared/error-text.ts';
import { detectRuntime } from '../../shared/js-runtime.ts';
import type { EventTrajectory } from '../session-trajectories.ts';
import type { RelayCore } from './listeners.ts';
import type { TrajectoryReply, TrajectoryRequest } from './atif-worker.ts';

/** Exports waiting on the worker beyond which the next one is built in-thread. */
const MAX_IN_FLIGHT = 8;

/** What this module uses of a `node:worker_threads` Worker. */
interface WorkerThread {
  postMessage(message: TrajectoryRequest): void;
  on(event: 'message', listener: (reply: TrajectoryReply) => void): unknown;
  on(event: 'error' | 'messageerror', listener: (error: unknown) => void): unknown;
  on(event: 'exit', listener: (code: number) => void): unknown;
  ref(): void;
  unref(): void;
  terminate(): Promise<number>;
}

interface PendingExport {
  resolve(json: string): void;
  /** Builds the trajectory in-thread (the worker failed or cannot take the request). */
  fallback(): void;
  /** Settles once it is answered either way. */
  readonly settled: Promise<void>;
  readonly client: AtifOffload;
}

interface QueuedExport {
  request: TrajectoryRequest & { kind: 'export' };
  pending: PendingExport;
}

/**
 * The worker file, with this module's extension (`.ts` when run from
 * source): found from the package root, since bundled this code sits in a
 * chunk of `dist/` and the worker is an entry of its own.
 */
function workerUrl(): URL {
  return packageModuleUrl(WORKER_MODULE) ?? new URL(import.meta.url.endsWith('.ts') ? './atif-worker.ts' : './atif-worker.js', import.meta.url);
}

const WORKER_MODULE = 'src/backends/memory/atif-worker';

/**
 * Why this runtime cannot run the worker file, known without trying (a try
 * costs a thread and ~0.4 s before it fails); null when it may. A Node
 * started with a loader (`--import tsx`) passes it to its workers: it may.
 */
function knownUnsupported(url: URL): string | null {
  const node = globalThis.process;
  const features = (node?.features ?? {}) as { typescript?: unknown };
  const loader = (node?.execArgv ?? []).some((arg) => /^--(import|loader|experimental-loader|require)\b|^-r$/.test(arg));
  if (detectRuntime() === 'node' && url.pathname.endsWith('.ts') && !features.typescript && !loader) {
    return 'this Node cannot run the TypeScript worker file (no type stripping)';
  }
  return null;
}

/** The process's trajectory worker. */
class TrajectoryThread {
  #worker: WorkerThread | null = null;
  /** Messages waiting for the worker to start, in order. */
  #starting: (QueuedExport | number)[] | null = null;
  /** Why the worker is out for the rest of the process; null while it may work. */
  failure: string | null = null;
  readonly #pending = new Map<number, PendingExport>();
  /** Workers ended on purpose: their exit is no failure. */
  readonly #retired = new WeakSet<WorkerThread>();
  #nextId = 1;
  #nextSession = 1;
  /** Sessions the worker may hold a builder for. */
  #sessions = 0;

  newSessionKey(): number {
    return this.#nextSession++;
  }

  /** Exports sent (or queued) and not answered yet. */
  get inFlight(): number {
    let queued = 0;
    for (const message of this.#starting ?? []) if (typeof message !== 'number') queued++;
    return this.#pending.size + queued;
  }

  /** Sends an export (starting the worker first if needed); its fallback runs instead if the worker is out. */
  send(queued: QueuedExport): void {
    if (this.failure !== null) {
      queued.pending.fallback();
      return;
    }
    if (queued.request.options !== undefined) this.#sessions++;
    if (this.#worker !== null) this.#post(this.#worker, queued);
    else if (this.#starting !== null) this.#starting.push(queued);
    else {
      this.#starting = [queued];
      void this.#start(queued.pending.client.logger);
    }
  }

  /** The worker drops the session's builder (after answering what was asked before). */
  forget(session: number): void {
    this.#sessions = Math.max(0, this.#sessions - 1);
    if (this.#worker !== null) this.#worker.postMessage({ kind: 'forget', session });
    else this.#starting?.push(session);
  }

  /** Settles when every request of `client` sent so far is answered (or built in-thread). */
  async settle(client: AtifOffload): Promise<void> {
    const waiting: Promise<void>[] = [];
    for (const pending of this.#pending.values()) if (pending.client === client) waiting.push(pending.settled);
    for (const queued of this.#starting ?? []) if (typeof queued !== 'number' && queued.pending.client === client) waiting.push(queued.pending.settled);
    await Promise.all(waiting);
  }

  /** Ends the worker when no session is left on it (the next export starts a new one). */
  stopIfUnused(): void {
    const worker = this.#worker;
    if (worker === null || this.#sessions > 0 || this.#pending.size > 0) return;
    this.#worker = null;
    this.#retire(worker);
  }

  async #start(logger: Logger): Promise<void> {
    let worker: WorkerThread;
    try {
      const url = workerUrl();
      const unsupported = knownUnsupported(url);
      if (unsupported !== null) throw new Error(unsupported);
      const { Worker } = await import('node:worker_threads');
      worker = new Worker(url, { name: 'nemo-relay-atif' }) as unknown as WorkerThread;
    } catch (error) {
      this.#fail(logger, `it could not start: ${errorWithName(error)}`);
      return;
    }
    worker.on('message', (reply) => this.#answer(worker, reply));
    worker.on('error', (error) => this.#failed(worker, logger, `it failed: ${errorWithName(error)}`));
    worker.on('messageerror', (error) => this.#failed(worker, logger, `a reply could not be read: ${errorWithName(error)}`));
    worker.on('exit', (code) => this.#failed(worker, logger, `it exited with code ${code}`));
    worker.unref();
    this.#worker = worker;
    const queued = this.#starting ?? [];
    this.#starting = null;
    for (const message of queued) {
      if (typeof message === 'number') worker.postMessage({ kind: 'forget', session: message });
      else this.#post(worker, message);
    }
  }

  #post(worker: WorkerThread, queued: QueuedExport): void {
    const id = this.#nextId++;
    queued.request.id = id;
    try {
      worker.postMessage(queued.request);
    } catch {
      // An entry that cannot be cloned: the caller builds this session in-thread from now on.
      queued.pending.fallback();
      return;
    }
    // Ref'd while an answer is awaited, so a pending export is not cut off; unref'd otherwise.
    if (this.#pending.size === 0) worker.ref();
    this.#pending.set(id, queued.pending);
  }

  #answer(worker: WorkerThread, reply: TrajectoryReply): void {
    const pending = this.#pending.get(reply.id);
    if (pending === undefined) return;
    this.#pending.delete(reply.id);
    if (this.#pending.size === 0 && this.#worker === worker) worker.unref();
    if ('json' in reply) pending.resolve(reply.json);
    else pending.fallback();
  }

  #retire(worker: WorkerThread): void {
    this.#retired.add(worker);
    void worker.terminate().catch(() => undefined);
  }

  #failed(worker: WorkerThread, logger: Logger, why: string): void {
    if (this.#retired.has(worker)) return;
    this.#worker = null;
    this.#retire(worker);
    this.#fail(logger, why);
  }

  /** The worker is out for the rest of the process: what it was asked is built in-thread. */
  #fail(logger: Logger, why: string): void {
    const first = this.failure === null;
    this.failure ??= why;
    const waiting = [...this.#pending.values()];
    for (const queued of this.#starting ?? []) if (typeof queued !== 'number') waiting.push(queued.pending);
    this.#pending.clear();
    this.#starting = null;
    if (first) safeLog(logger, 'warn', `memory relay: the ATIF trajectory worker is unavailable (${why}); trajectories are built on the host's thread`);
    for (const pending of waiting) pending.fallback();
  }
}

let thread: TrajectoryThread | null = null;

/** A session's export state. */
export interface OffloadedSession {
  /** The session's key in the worker. */
  readonly key: number;
  /** Its builder options were sent (the worker may hold a builder for it). */
  sent: boolean;
  /** Built in-thread from now on (a fallback, an export at exit, or deregistered). */
  inThread: boolean;
}

/** One relay's use of the trajectory worker. */
export class AtifOffload {
  /** Exports built in-thread because the worker was unavailable or failed. */
  fallbacks = 0;
  /** True: exports are built on the worker (the relay's `atifWorker: true`); otherwise in-thread. */
  enabled = false;
  readonly #sessions = new Set<OffloadedSession>();

  constructor(readonly logger: Logger) {}

  open(): OffloadedSession {
    thread ??= new TrajectoryThread();
    const session: OffloadedSession = { key: thread.newSessionKey(), sent: false, inThread: false };
    this.#sessions.add(session);
    return session;
  }

  /**
   * The trajectory's text, built by the worker from what it has of the
   * session plus what `trajectory` recorded since; in-thread when the
   * worker is off, out or busy, or this session is built in-thread already.
   */
  exportJson(session: OffloadedSession, trajectory: EventTrajectory): Promise<string> {
    const current = thread;
    const busy = current !== null && current.inFlight >= MAX_IN_FLIGHT;
    const entries = !this.enabled || session.inThread || busy || current === null || current.failure !== null ? null : trajectory.takeNew();
    if (entries === null || current === null) {
      if (this.enabled && !session.inThread && current?.failure != null) this.fallbacks++;
      // Built now, as the call finds the session (as before the worker), not a tick later.
      try {
        return Promise.resolve(this.#inThread(session, trajectory));
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return new Promise<string>((resolve, reject) => {
      let settle!: () => void;
      const settled = new Promise<void>((done) => (settle = done));
      const pending: PendingExport = {
        client: this,
        settled,
        resolve: (json) => {
          resolve(json);
          settle();
        },
        fallback: () => {
          if (current.failure !== null) this.fallbacks++;
          try {
            resolve(this.#inThread(session, trajectory));
          } catch (error) {
            reject(error);
          }
          settle();
        },
      };
      const request: TrajectoryRequest & { kind: 'export' } = { kind: 'export', id: 0, session: session.key, entries };
      if (!session.sent) {
        request.options = trajectory.options;
        session.sent = true;
      }
      current.send({ request, pending });
    });
  }

  /** The trajectory now, in-thread (at process exit nothing can be awaited): the worker forgets the session. */
  exportJsonNow(session: OffloadedSession, trajectory: EventTrajectory): string {
    return this.#inThread(session, trajectory);
  }

  /** The session's exporter is deregistered: the worker drops its builder; a later export is built in-thread. */
  forget(session: OffloadedSession): void {
    if (!this.#sessions.delete(session)) return;
    session.inThread = true;
    this.#release(session);
  }

  /** The relay shuts down: its requests are answered, its sessions forgotten, and the worker ends if no relay needs it. */
  async close(): Promise<void> {
    const current = thread;
    if (current === null) return;
    await current.settle(this);
    for (const session of [...this.#sessions]) this.forget(session);
    current.stopIfUnused();
  }

  #inThread(session: OffloadedSession, trajectory: EventTrajectory): string {
    session.inThread = true;
    this.#release(session);
    return trajectory.toJson();
  }

  #release(session: OffloadedSession): void {
    if (!session.sent) return;
    session.sent = false;
    thread?.forget(session.key);
  }
}

const offloads = new WeakMap<RelayCore, AtifOffload>();

/** The relay's use of the trajectory worker (created on first use). */
export function atifOffloadOf(core: RelayCore): AtifOffload {
  let offload = offloads.get(core);
  if (offload === undefined) offloads.set(core, (offload = new AtifOffload(core.logger)));
  return offload;
}

/** The relay's use of the trajectory worker, if it has one. */
export function existingAtifOffload(core: RelayCore): AtifOffload | undefined {
  return offloads.get(core);
}
