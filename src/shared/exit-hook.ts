/**
 * One process `exit` listener (and on Deno, whose `Deno.exit()` emits no
 * `exit`, one `unload` listener: whichever comes first runs the tasks) for
 * everything that must be written before the process goes away: the in-memory relay's buffered ATOF lines and
 * plugins.toml trajectories, and the plugin's per-session trajectories. `exit` listeners run synchronously on a natural end, on
 * `process.exit()` and after an uncaught exception, which is why every
 * writer here is synchronous.
 *
 * A signal that would kill the process (`SIGTERM`, `SIGINT`, `SIGHUP`) is
 * an exit too, but Node runs no `exit` listener for it: the in-memory
 * relay's last lines (up to its flush delay) and its partial trajectories
 * were lost where native, writing on its own thread, had its lines on
 * disk. So the tasks also run on such a signal when nobody else listens
 * for it, and the signal is then raised again, so the process dies of it as
 * it would have (exit code 128 + signal). A host with a listener of its own
 * decides how the process ends, and the tasks run at that exit.
 *
 * `atLoopEnd` is the other moment: the event loop ran dry (`beforeExit`;
 * not after `process.exit()` or an uncaught exception), when work that
 * needs the network can still be done (native's exporter threads often send
 * theirs when the host ends without a shutdown).
 *
 * Runtimes without a `process.on` (none of Node, Bun and Deno) simply get
 * no hook; explicit `flush()`/`close()` still work.
 *
 * @module
 */
import { detectRuntime } from './js-runtime.ts';

/**
 * When an exit task runs among the others: `record` (hooks still queued are
 * recorded), then `deliver` (a backend that delivers on its own threads
 * finishes delivering what was recorded: native's queue), then `write` (files
 * are written from what was delivered, and what cannot go out is counted).
 */
export type ExitStage = 'record' | 'deliver' | 'write';

const STAGES: readonly ExitStage[] = ['record', 'deliver', 'write'];
const tasks = new Map<() => void, ExitStage>();
let installed = false;

/** Runs `task` at process exit, in its `stage`, until the returned function removes it. */
export function atExit(task: () => void, stage: ExitStage = 'write'): () => void {
  install();
  tasks.set(task, stage);
  return () => {
    tasks.delete(task);
  };
}

const loopEndTasks = new Set<() => Promise<unknown> | undefined>();
let loopEndInstalled = false;

/**
 * Runs `task` each time the event loop runs dry until the returned function
 * removes it. A task that starts work returns its promise, and the process
 * is kept alive until every such promise settles (the library's timers and
 * sockets are unref'd and would not keep it); the loop then runs dry again,
 * so a task must return `undefined` when it has nothing new to do.
 */
export function atLoopEnd(task: () => Promise<unknown> | undefined): () => void {
  installLoopEnd();
  loopEndTasks.add(task);
  return () => {
    loopEndTasks.delete(task);
  };
}

function installLoopEnd(): void {
  if (loopEndInstalled) return;
  const proc = (globalThis as { process?: { on?: (event: string, listener: () => void) => unknown } }).process;
  if (typeof proc?.on !== 'function') return;
  loopEndInstalled = true;
  proc.on('beforeExit', runLoopEndTasks);
}

function runLoopEndTasks(): void {
  const work: Promise<unknown>[] = [];
  for (const task of [...loopEndTasks]) {
    try {
      const started = task();
      if (started !== undefined) work.push(started.catch(() => undefined));
    } catch {
      // One task's failure must not stop the others.
    }
  }
  if (work.length === 0) return;
  // Referenced on purpose: it is what keeps the process alive while the work runs.
  const keepAlive = setInterval(() => {}, 60_000);
  void Promise.all(work).finally(() => clearInterval(keepAlive));
}

/** The signals whose default action ends the process without an `exit` event. */
const FATAL_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
type FatalSignal = (typeof FATAL_SIGNALS)[number];

interface SignalProcess {
  on(event: string, listener: (signal: FatalSignal) => void): unknown;
  off?(event: string, listener: (signal: FatalSignal) => void): unknown;
  listeners?(event: string): unknown[];
  kill?(pid: number, signal: string): unknown;
  exit?(code: number): unknown;
  pid?: number;
}

const SIGNAL_NUMBERS: Record<FatalSignal, number> = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };

function processObject(): SignalProcess | undefined {
  const proc = (globalThis as { process?: SignalProcess }).process;
  return typeof proc?.on === 'function' ? proc : undefined;
}

/**
 * Whether a listener other than this module's handles `signal`: then that
 * listener decides whether and how the process ends. `installExitHandlers`
 * asks it before raising a signal again.
 */
export function signalHandledElsewhere(signal: string): boolean {
  const listeners = processObject()?.listeners?.(signal) ?? [];
  return listeners.some((listener) => listener !== onFatalSignal);
}

function onFatalSignal(signal: FatalSignal): void {
  if (signalHandledElsewhere(signal)) return;
  runExitTasks();
  raiseSignalAgain(signal);
}

/**
 * Ends the process with `signal` as the runtime's default action would:
 * this module's listeners are removed first, so the signal is not handled
 * again and the process dies of it (exit code 128 + signal).
 */
export function raiseSignalAgain(signal: string): void {
  const proc = processObject();
  if (!proc) return;
  for (const name of FATAL_SIGNALS) proc.off?.(name, onFatalSignal);
  try {
    // (Never pid 0: that is the whole process group.)
    if (typeof proc.pid !== 'number' || typeof proc.kill !== 'function') throw new Error('no kill()');
    proc.kill(proc.pid, signal);
  } catch {
    // Deno refuses kill() without --allow-run: end with the code the signal
    // would have given (whatever had to be written is written by now).
    exited = true;
    proc.exit?.(128 + (SIGNAL_NUMBERS[signal as FatalSignal] ?? 15));
  }
}

function install(): void {
  if (installed) return;
  const proc = processObject();
  if (!proc) return;
  installed = true;
  proc.on('exit', onExit);
  // Not on Deno: its signal listener opens a descriptor, and where none is left (EMFILE) Deno panics and
  // the host dies, a crash telemetry must never cause; a Deno host's signal there ends as it did before.
  const onDeno = detectRuntime() === 'deno';
  for (const signal of onDeno ? [] : FATAL_SIGNALS) {
    try {
      proc.on(signal, onFatalSignal);
    } catch {
      // A runtime that cannot listen for this signal here (Deno on Windows: only SIGINT and SIGBREAK).
    }
  }
  // Deno emits no process 'exit' after an uncaught exception; its global
  // 'error' event comes first, and the process still dies with the error
  // afterwards (nothing here prevents the default).
  const deno = (globalThis as { Deno?: unknown }).Deno;
  const target = globalThis as { addEventListener?: (type: string, listener: () => void) => void };
  if (deno !== undefined && typeof target.addEventListener === 'function') {
    target.addEventListener('error', runExitTasks);
    target.addEventListener('unhandledrejection', runExitTasks);
    // Nor on Deno.exit(): only its global 'unload' (which process.exit() and a natural end dispatch too, beside 'exit').
    target.addEventListener('unload', onExit);
  }
}

/** Whether the process's last exit tasks ran (its 'exit', Deno's 'unload', or before a signal ends it). */
let exited = false;

/** The tasks at the process's end, once: on Deno both 'exit' and 'unload' come at process.exit() and a natural end. */
function onExit(): void {
  if (exited) return;
  exited = true;
  runExitTasks();
}

/**
 * Runs the exit tasks now, as the process `exit` event would. For a process
 * about to die of a signal, which emits no `exit`: without this, what the
 * tasks write synchronously (trajectories still waiting for a busy thread
 * pool) would be lost with it.
 */
export function runExitTasks(): void {
  // Per call: a Deno host that keeps running after its 'error' event (it
  // prevented the default) gets every task again at its real exit.
  const ran = new Set<() => void>();
  // A task may add tasks (the plugin records hooks still queued for a
  // backend that never loaded into a relay created right now, whose file
  // writers register here): they run too, after the ones before them.
  for (let round = pending(ran); round.length > 0; round = pending(ran)) {
    for (const task of round) {
      ran.add(task);
      try {
        task();
      } catch {
        // Nothing can be reported this late; the other tasks still run.
      }
    }
  }
}

/** The tasks not run yet, stage by stage (in the order they were added within one). */
function pending(ran: ReadonlySet<() => void>): (() => void)[] {
  const waiting = [...tasks].filter(([task]) => !ran.has(task));
  return STAGES.flatMap((stage) => waiting.filter(([, own]) => own === stage).map(([task]) => task));
}
