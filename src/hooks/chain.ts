/**
 * The execution-middleware chain: `middleware[0] → … → terminal`.
 *
 * Port of Hermes' `_run_execution_chain` error contract:
 * - `next` is single-use per frame; a second call throws `NextCalledTwiceError`.
 * - A middleware that fails before calling `next` is logged and skipped: the
 *   chain continues with the same payload (fail-open).
 * - A middleware that fails after `next` returns the downstream result anyway.
 * - A downstream failure (terminal or a later middleware) reaches the caller
 *   as the original error object, whatever the middleware throws on top of it,
 *   so a middleware bug cannot mask a provider or tool error. A middleware may
 *   still recover on purpose by catching the error and returning a value.
 * - `ExecutionBlocked` is the deliberate way to stop: it propagates (with
 *   `metadata.checked_by` filled in) instead of being skipped, including when
 *   thrown after `next` (an output guard). Only a downstream failure wins
 *   over it.
 *
 * Sync and async mix freely. Each step's result is inspected: while every
 * step returns a plain value the chain stays synchronous and introduces no
 * promise; a thenable from any step is handled asynchronously with the same
 * rules, evaluated when it settles.
 *
 * @module
 */

import { isExecutionBlocked, NextCalledTwiceError, type ExecutionBlocked } from './errors.ts';
import { safeLog, type Logger } from '../shared/logger.ts';
import type { Next } from './middleware.ts';
import { stampMiddleware } from './stamp.ts';
import { isThenable } from './thenable.ts';

/** A registered execution middleware. */
export interface ChainEntry {
  readonly fn: (payload: never, next: Next<never>) => unknown;
  readonly name: string;
}

type AnyMiddleware = (payload: unknown, next: Next<unknown>) => unknown;

const ignore = (): void => {};

/**
 * Runs `payload` through `entries` and then `terminal`. `entries` is a
 * snapshot: registering or removing middleware while a chain runs does not
 * affect it.
 */
export function runExecutionChain(
  kind: string,
  entries: readonly ChainEntry[],
  terminal: (payload: never) => unknown,
  payload: unknown,
  logger: Logger,
): unknown {
  const callTerminal = terminal as (payload: unknown) => unknown;

  const dispatch = (index: number, current: unknown): unknown => {
    const entry = entries[index];
    return entry === undefined ? callTerminal(current) : runFrame(entry, index, current);
  };

  const runFrame = (entry: ChainEntry, index: number, current: unknown): unknown => {
    let nextCalled = false;
    let downstreamFailed = false;
    let downstreamError: unknown;
    // What `next` handed back: the downstream value, or a promise of it.
    let downstreamResult: unknown;

    const next = (nextPayload?: unknown): unknown => {
      if (nextCalled) throw new NextCalledTwiceError(kind, entry.name);
      nextCalled = true;
      const forwarded = nextPayload === undefined ? current : stampIfObject(nextPayload);
      let out: unknown;
      try {
        out = dispatch(index + 1, forwarded);
      } catch (error) {
        downstreamFailed = true;
        downstreamError = error;
        throw error;
      }
      if (!isThenable(out)) {
        downstreamResult = out;
        return out;
      }
      const tracked = Promise.resolve(out).then(undefined, (error: unknown) => {
        downstreamFailed = true;
        downstreamError = error;
        throw error;
      });
      // A middleware that drops the promise must not leave an unhandled
      // rejection behind: that would crash a Node host.
      tracked.then(undefined, ignore);
      downstreamResult = tracked;
      return tracked;
    };

    const recover = (error: unknown): unknown => {
      if (downstreamFailed) {
        if (error !== downstreamError) {
          safeLog(
            logger,
            'debug',
            `${kind} middleware "${entry.name}" threw after a downstream failure; the downstream error is re-thrown`,
            error,
          );
        }
        throw downstreamError;
      }
      if (isExecutionBlocked(error)) {
        fillCheckedBy(error, entry.name);
        throw error;
      }
      if (nextCalled) {
        safeLog(logger, 'warn', `${kind} middleware "${entry.name}" threw after next(); returning the downstream result`, error);
        return downstreamResult;
      }
      safeLog(logger, 'warn', `${kind} middleware "${entry.name}" threw before next(); skipping it`, error);
      return dispatch(index + 1, current);
    };

    let out: unknown;
    try {
      out = (entry.fn as AnyMiddleware)(current, next);
    } catch (error) {
      return recover(error);
    }
    return isThenable(out) ? Promise.resolve(out).then(undefined, recover) : out;
  };

  return dispatch(0, payload);
}

function stampIfObject(payload: unknown): unknown {
  return typeof payload === 'object' && payload !== null ? stampMiddleware(payload) : payload;
}

function fillCheckedBy(error: ExecutionBlocked, name: string): void {
  try {
    const metadata = error.metadata;
    if (typeof metadata === 'object' && metadata !== null && metadata.checked_by === undefined) {
      metadata.checked_by = name;
    }
  } catch {
    // Frozen metadata keeps whatever the middleware put there.
  }
}
