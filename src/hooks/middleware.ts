/**
 * Middleware types: what request and execution middleware receive and
 * return (the Hermes `hermes.middleware.v1` contract).
 *
 * Request middleware (`llm_request`, `tool_request`) may replace a payload
 * before policy, hooks and the real call see it. Execution middleware
 * (`llm_execution`, `tool_execution`) wraps the real provider or tool call.
 *
 * Middleware payloads carry the same correlation fields as the observer
 * hooks plus both schema markers, which the registry stamps only when
 * middleware of that kind is registered.
 *
 * `request`/`args` are typed `Record<string, any>` on purpose: a host's own
 * request interface (say, its provider SDK's params type) has no index
 * signature and would not be assignable to `Record<string, unknown>`.
 *
 * @module
 */

import type { ExecutionMiddlewareKind, MiddlewareKind } from './names.ts';

export type RequestObject = Record<string, any>;

/** Correlation and routing fields every middleware payload may carry. */
export interface MiddlewareContext {
  session_id?: string;
  task_id?: string;
  turn_id?: string;
  api_request_id?: string;
  provider?: string;
  model?: string;
  api_mode?: string;
  tool_name?: string;
  tool_call_id?: string;
  telemetry_schema_version?: string;
  middleware_schema_version?: string;
  [key: string]: unknown;
}

/** The markers the registry guarantees on every payload a middleware sees. */
export interface MiddlewareStamp {
  telemetry_schema_version: string;
  middleware_schema_version: string;
}

// ---------------------------------------------------------------- request

/** What `llm_request` middleware receives. */
export interface LlmRequestMiddlewarePayload extends MiddlewareContext {
  telemetry_schema_version: string;
  middleware_schema_version: string;
  /** The effective request so far (a private copy; earlier middleware may have replaced it). */
  request: RequestObject;
  /** A private copy of the host's request before any middleware ran. */
  original_request: RequestObject;
}

/** What `tool_request` middleware receives. */
export interface ToolRequestMiddlewarePayload extends MiddlewareContext {
  telemetry_schema_version: string;
  middleware_schema_version: string;
  /** The effective arguments so far (a private copy). */
  args: RequestObject;
  /** A private copy of the host's arguments before any middleware ran. */
  original_args: RequestObject;
}

/** Optional labels that become the `middleware_trace` entry of a rewrite. */
export interface RewriteLabels {
  source?: string;
  reason?: string;
  name?: string;
}

/** Returned by `llm_request` middleware to replace the whole request (no partial patches). */
export interface LlmRequestRewrite extends RewriteLabels {
  request: RequestObject;
}

/** Returned by `tool_request` middleware to replace the whole argument object. */
export interface ToolRequestRewrite extends RewriteLabels {
  args: RequestObject;
}

/**
 * Request middleware is synchronous. Return a rewrite to replace the
 * payload; return anything else (`undefined`, `null`, a non-object value,
 * a rewrite whose `request`/`args` is not an object) for no change.
 * Mutating the received copy in place is not a rewrite and is discarded.
 */
export type LlmRequestMiddleware = (payload: LlmRequestMiddlewarePayload) => LlmRequestRewrite | null | undefined | void;
export type ToolRequestMiddleware = (payload: ToolRequestMiddlewarePayload) => ToolRequestRewrite | null | undefined | void;

// -------------------------------------------------------------- execution

/** What hosts pass to `execute('llm_execution', ...)`: `{ ...ids, request }`. */
export interface LlmExecutionPayload extends MiddlewareContext {
  request: RequestObject;
}

/** What hosts pass to `execute('tool_execution', ...)`: `{ ...ids, tool_name, args }`. */
export interface ToolExecutionPayload extends MiddlewareContext {
  tool_name: string;
  args: RequestObject;
}

/**
 * Runs the rest of the chain (later middleware, then the real call) and
 * returns its result. Omitted or `undefined` forwards the current payload.
 * Single-use: a second call throws `NextCalledTwiceError`.
 */
export type Next<P> = (payload?: P) => unknown;

/**
 * Wraps the real call. Return what `next` returns (a promise when the call
 * is async), or a value of your own to answer without calling it.
 * Throw `ExecutionBlocked` to stop the call on purpose; any other error
 * thrown before `next` is logged and the middleware is skipped.
 */
export type ExecutionMiddleware<P> = (payload: P & MiddlewareStamp, next: Next<P>) => unknown;

export type LlmExecutionMiddleware = ExecutionMiddleware<LlmExecutionPayload>;
export type ToolExecutionMiddleware = ExecutionMiddleware<ToolExecutionPayload>;

// ------------------------------------------------------------------ maps

export interface ExecutionPayloads {
  llm_execution: LlmExecutionPayload;
  tool_execution: ToolExecutionPayload;
}

export interface MiddlewareFunctions {
  llm_request: LlmRequestMiddleware;
  tool_request: ToolRequestMiddleware;
  llm_execution: LlmExecutionMiddleware;
  tool_execution: ToolExecutionMiddleware;
}

export interface UseOptions {
  /**
   * Used in logs and as `checked_by` of an `ExecutionBlocked` that has none.
   * Defaults to the function's name.
   */
  name?: string;
}

// Fail to compile if the maps and the kind lists drift apart.
type Exact<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type AssertTrue<T extends true> = T;
type MiddlewareMapCoversEveryKind = AssertTrue<Exact<keyof MiddlewareFunctions, MiddlewareKind>>;
type ExecutionMapCoversEveryKind = AssertTrue<Exact<keyof ExecutionPayloads, ExecutionMiddlewareKind>>;
