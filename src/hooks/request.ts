/**
 * The request-middleware pass (`llm_request`, `tool_request`), run only when
 * middleware of the kind is registered.
 *
 * Middleware runs synchronously in registration order. Each one sees the
 * effective payload so far and a copy of the original, both private copies,
 * so nothing it does can touch the host's object. Returning
 * `{request: {...}}` / `{args: {...}}` replaces the whole payload; the
 * replacement is copied too, so a middleware that keeps a reference cannot
 * change it later. Optional `source`/`reason`/`name` labels become one
 * `middleware_trace` entry per rewrite (`{source: "plugin"}` when unlabelled).
 *
 * Deliberate differences from Hermes:
 * - Each middleware sees the previous one's rewrite (Hermes handed every
 *   callback the same initial copy), so policy always reads the effective
 *   payload.
 * - When nobody rewrites, the caller gets its own object back rather than
 *   the working copy, which makes "anything else means no change" literal:
 *   in-place edits to the copy are discarded.
 *
 * @module
 */

import { safeLog, type Logger } from '../shared/logger.ts';
import type { MiddlewareContext, RequestObject } from './middleware.ts';
import type { RequestMiddlewareKind } from './names.ts';
import type { MiddlewareTraceEntry } from './payloads.ts';
import { stampMiddleware } from './stamp.ts';
import { isThenable } from './thenable.ts';
import { isRecord } from '../shared/record.ts';

/** A registered request middleware. */
export interface RequestEntry {
  readonly fn: (payload: never) => unknown;
  readonly name: string;
}

export interface RequestPassResult {
  /** The effective payload; meaningful only when `trace` is non-empty. */
  readonly payload: RequestObject;
  readonly trace: MiddlewareTraceEntry[];
}

const payloadKeys = {
  llm_request: ['request', 'original_request'],
  tool_request: ['args', 'original_args'],
} as const satisfies Record<RequestMiddlewareKind, readonly [string, string]>;

const ignore = (): void => {};

export function runRequestMiddleware(
  kind: RequestMiddlewareKind,
  entries: readonly RequestEntry[],
  payload: object,
  context: MiddlewareContext | undefined,
  logger: Logger,
): RequestPassResult {
  const [key, originalKey] = payloadKeys[kind];
  const original = safeClone(payload, kind, logger);
  let current = safeClone(original, kind, logger);
  const trace: MiddlewareTraceEntry[] = [];

  for (const entry of entries) {
    try {
      const state = stampMiddleware({ ...context, [key]: current, [originalKey]: original });
      const result: unknown = (entry.fn as (payload: unknown) => unknown)(state);
      if (isThenable(result)) {
        safeLog(logger, 'warn', `${kind} middleware "${entry.name}" returned a promise; request middleware must be synchronous, so it was ignored`);
        Promise.resolve(result).then(undefined, ignore);
        continue;
      }
      if (!isRecord(result)) continue;
      const replacement = result[key];
      if (!isRecord(replacement)) continue;
      current = safeClone(replacement, kind, logger);
      trace.push(traceEntry(result));
    } catch (error) {
      safeLog(logger, 'warn', `${kind} middleware "${entry.name}" threw; skipping it`, error);
    }
  }
  return { payload: current, trace };
}

function traceEntry(result: Record<string, unknown>): MiddlewareTraceEntry {
  const entry: MiddlewareTraceEntry = {};
  for (const label of ['source', 'reason', 'name'] as const) {
    const value = result[label];
    if (typeof value === 'string' && value !== '') entry[label] = value;
  }
  if (entry.source === undefined && entry.reason === undefined && entry.name === undefined) entry.source = 'plugin';
  return entry;
}


/**
 * Deep copy with `structuredClone`; payloads holding something it cannot
 * clone (a function, a client handle) fall back to a shallow copy so the
 * middleware still runs and nested objects are shared, never corrupted.
 */
function safeClone(value: object, kind: string, logger: Logger): RequestObject {
  try {
    return structuredClone(value) as RequestObject;
  } catch (error) {
    safeLog(logger, 'debug', `${kind}: payload is not structured-cloneable; using a shallow copy`, error);
    return Array.isArray(value) ? (value.slice() as unknown as RequestObject) : { ...value };
  }
}
