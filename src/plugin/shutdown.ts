/**
 * Bounded `flush()` and `shutdown()`, and the opt-in exit handlers. Each is
 * bounded by `timeoutMs` and never rejects: a host that awaits them always
 * gets its answer in time.
 *
 * @module
 */

import type { Logger } from '../shared/logger.ts';
import { safeLog } from '../shared/logger.ts';
import type { HookGate } from './gate.ts';
import type { PluginCounters } from './status.ts';
import type { BackgroundWork } from './background-work.ts';
import { errorMessage } from '../shared/error-text.ts';
import { timerDelay } from '../shared/timers.ts';
import { raiseSignalAgain, runExitTasks, signalHandledElsewhere } from '../shared/exit-hook.ts';

export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 5_000;
/** The most of a shutdown's budget kept, after replaying the start-up queue, for closing sessions and writing files (a tenth of the budget up to this). */
const DRAIN_RESERVE_MAX_MS = 500;
/**
 * The most of a shutdown's budget kept, while native still starts, for the in-memory relay that
 * stands in for it (half the budget up to this): activating the outputs, replaying, writing the files.
 */
const STAND_IN_RESERVE_MAX_MS = 1_000;

/** Options of `shutdown()`. */
export interface ShutdownOptions {
  /** Upper bound for the whole shutdown. Default 5,000 ms. */
  timeoutMs?: number;
}

/** Options of `flush()`. */
export interface FlushOptions {
  /** Upper bound for the flush; what is still pending then goes on in the background. Default 5,000 ms. */
  timeoutMs?: number;
}

export interface Lifecycle {
  gate: HookGate;
  work: BackgroundWork;
  counters: PluginCounters;
  logger: Logger;
}

/** The step of a flush or shutdown that was running. */
type Stage = 'background' | 'queued' | 'outputs';

/** What a flush or shutdown was still waiting for when its bound ran out, in words. */
function waitingFor(stage: Stage, pending: number): string {
  if (stage === 'queued') return 'hooks queued while the backend loaded were still being replayed';
  if (stage === 'outputs') return "the backend's outputs (ATOF and trajectory files, streams, exporters, uploads) were still writing";
  return `${pending} background ${pending === 1 ? 'task' : 'tasks'} (trajectory writes, activation, exports) ${pending === 1 ? 'was' : 'were'} still running`;
}

/** Writes everything recorded so far. */
export async function flushPlugin(parts: Lifecycle, options: FlushOptions = {}): Promise<void> {
  const { gate, work } = parts;
  const timeoutMs = options.timeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
  // What it was waiting for when the bound ran out, for the warning: a count alone did not say which output was slow.
  let stage: Stage = 'background';
  const flushing = (async () => {
    await work.settle();
    stage = 'queued';
    await gate.drain();
    stage = 'background';
    gate.live?.trajectories.writePending();
    await work.settle();
    stage = 'outputs';
    await gate.live?.flushBackend();
  })();
  try {
    if ((await boundedBy(flushing, timeoutMs)) === 'timeout') {
      parts.counters.errors += 1;
      safeLog(parts.logger, 'warn', `NeMo Relay flush did not finish within ${timeoutMs} ms: ${waitingFor(stage, work.size)}; it goes on in the background`);
    }
  } catch (error) {
    parts.counters.errors += 1;
    safeLog(parts.logger, 'warn', `NeMo Relay flush failed: ${errorMessage(error)}`);
  }
}

/** Closes every session, writes every file and releases the backend. Call once; the plugin keeps the promise. */
export function shutdownPlugin(parts: Lifecycle, options: ShutdownOptions = {}): Promise<void> {
  const { gate, work } = parts;
  const timeoutMs = options.timeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
  const deadline = Date.now() + (Number.isFinite(timeoutMs) ? Math.max(0, timeoutMs) : DEFAULT_SHUTDOWN_TIMEOUT_MS);
  const previous = gate.beginShutdown();
  let stage: Stage = 'background';
  const closing = (async () => {
    if (previous === 'idle') return;
    // Native still starting (loading, or activating plugins.toml) gets the budget but the stand-in's share: then
    // the in-memory relay records the start-up queue into the same files (gate.standInForSlowStart), so a short
    // budget on a busy machine does not drop it.
    const standInAt = deadline - Math.min(STAND_IN_RESERVE_MAX_MS, Math.max(0, deadline - Date.now()) / 2);
    if ((await boundedBy(work.settle(), standInAt - Date.now())) === 'timeout') {
      gate.standInForSlowStart();
      await work.settle();
    }
    // Hooks still queued from start-up are replayed while a share of the budget is left for closing
    // the sessions and writing the files; what is still queued after that is dropped, counted.
    stage = 'queued';
    await gate.drain(deadline - Math.min(DRAIN_RESERVE_MAX_MS, Math.max(0, deadline - Date.now()) / 10));
    stage = 'background';
    await work.settle();
    stage = 'outputs';
    await gate.live?.shutdown(deadline);
    stage = 'background';
    await work.settle();
  })();
  return boundedBy(closing, timeoutMs)
    .then(
      (outcome) => {
        if (outcome === 'timeout') {
          parts.counters.errors += 1;
          safeLog(parts.logger, 'warn', `NeMo Relay shutdown did not finish within ${timeoutMs} ms: ${waitingFor(stage, work.size)}`);
        }
      },
      (error: unknown) => {
        parts.counters.errors += 1;
        safeLog(parts.logger, 'warn', `NeMo Relay runtime shutdown completed with errors: ${errorMessage(error)}`);
      },
    )
    .finally(() => gate.finishShutdown());
}

/**
 * Shuts down on `beforeExit`, `SIGINT` and `SIGTERM` without changing the
 * exit code. Returns the uninstall function.
 */
export function installExitHandlers(shutdown: (options?: ShutdownOptions) => Promise<void>, isShuttingDown: () => boolean, options: ShutdownOptions = {}): () => void {
  const proc = (globalThis as { process?: NodeJS.Process }).process;
  if (!proc || typeof proc.on !== 'function') return () => {};
  const onBeforeExit = () => {
    if (isShuttingDown()) return;
    // Keeping the event loop busy with the shutdown is what makes beforeExit
    // wait for it. One more turn afterwards lets a signal the host sent
    // itself as its last act reach its handler, instead of the loop ending
    // first and turning a SIGTERM death into exit code 0.
    void shutdown(options).then(() => new Promise<void>((resolve) => setImmediate(resolve)));
  };
  const onSignal = (signal: NodeJS.Signals) => {
    void shutdown(options).finally(() => {
      uninstall();
      // Re-raise only when nobody else handles the signal, so the process
      // ends exactly as it would have without us (exit code 128 + signal).
      // (The library's own last-resort listener, which writes what is buffered, does not count.)
      if (!signalHandledElsewhere(signal)) {
        // A death by signal emits no 'exit': the synchronous exit writers run
        // here instead, so a shutdown that ran out of time (trajectory writes
        // stuck behind a busy thread pool) still leaves every file written.
        runExitTasks();
        raiseSignalAgain(signal);
      }
    });
  };
  const uninstall = () => {
    proc.off('beforeExit', onBeforeExit);
    proc.off('SIGINT', onSignal);
    proc.off('SIGTERM', onSignal);
  };
  proc.on('beforeExit', onBeforeExit);
  proc.on('SIGINT', onSignal);
  proc.on('SIGTERM', onSignal);
  return uninstall;
}

async function boundedBy(work: Promise<void>, timeoutMs: number): Promise<'done' | 'timeout'> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    // Kept referenced: a host awaiting shutdown() must get its answer within
    // timeoutMs even when nothing else keeps the process alive (an unref'd
    // timer let Node exit with the await unsettled). It is cleared as soon
    // as the work is done, so it never holds a finished host.
    timer = setTimeout(() => resolve('timeout'), Number.isFinite(timeoutMs) ? timerDelay(timeoutMs) : DEFAULT_SHUTDOWN_TIMEOUT_MS);
  });
  try {
    return await Promise.race([work.then(() => 'done' as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
