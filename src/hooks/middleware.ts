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

/** A request or argument object as middleware sees it: plain JSON-like data. */
export type RequestObject = Record<string, any>;

/** Correlation and routing fields every middleware payload may carry. */
export interface MiddlewareContext {
  /** The host's session id. */
  session_id?: string;
  /** The task the session is running (Hermes' task id). */
  task_id?: string;
  /** The turn this hook belongs to. */
  turn_id?: string;
  /** The API call this belongs to (`${turn_id}:api:${n}`); retries share it. */
  api_request_id?: string;
  /** The provider, e.g. `openai` or `anthropic`. */
  provider?: string;
  /** The model the session or call uses. */
  model?: string;
  /** The API surface, e.g. `chat_completions`, `responses`, `anthropic_messages`. */
  api_mode?: string;
  /** The tool's name. */
  tool_name?: string;
  /** The provider's id of the tool call, pairing the pre and post tool hooks. */
  tool_call_id?: string;
  /** Envelope marker of the observer schema, `"hermes.observer.v1"`. */
  telemetry_schema_version?: string;
  /** Envelope marker of the middleware schema, `"hermes.middleware.v1"`. */
  middleware_schema_version?: string;
  /** Hosts may add fields; they are passed through. */
  [key: string]: unknown;
}

/** The markers the registry guarantees on every payload a middleware sees. */
export interface MiddlewareStamp {
  /** Envelope marker of the observer schema, always present. */
  telemetry_schema_version: string;
  /** Envelope marker of the middleware schema, always present. */
  middleware_schema_version: string;
}

// ---------------------------------------------------------------- request

/** What `llm_request` middleware receives. */
export interface LlmRequestMiddlewarePayload extends MiddlewareContext {
  /** Envelope marker of the observer schema, always present. */
  telemetry_schema_version: string;
  /** Envelope marker of the middleware schema, always present. */
  middleware_schema_version: string;
  /** The effective request so far (a private copy; earlier middleware may have replaced it). */
  request: RequestObject;
  /** A private copy of the host's request before any middleware ran. */
  original_request: RequestObject;
}

/** What `tool_request` middleware receives. */
export interface ToolRequestMiddlewarePayload extends MiddlewareContext {
  /** Envelope marker of the observer schema, always present. */
  telemetry_schema_version: string;
  /** Envelope marker of the middleware schema, always present. */
  middleware_schema_version: string;
  /** The effective arguments so far (a private copy). */
  args: RequestObject;
  /** A private copy of the host's arguments before any middleware ran. */
  original_args: RequestObject;
}

/** Optional labels that become the `middleware_trace` entry of a rewrite. */
export interface RewriteLabels {
  /** What made the rewrite, recorded in `middleware_trace`. */
  source?: string;
  /** Why the request was rewritten. */
  reason?: string;
  /** The middleware's name, recorded in `middleware_trace`. */
  name?: string;
}

/** Returned by `llm_request` middleware to replace the whole request (no partial patches). */
export interface LlmRequestRewrite extends RewriteLabels {
  /** The request that replaces the current one. */
  request: RequestObject;
}

/** Returned by `tool_request` middleware to replace the whole argument object. */
export interface ToolRequestRewrite extends RewriteLabels {
  /** The arguments that replace the current ones. */
  args: RequestObject;
}

/**
 * Request middleware is synchronous. Return a rewrite to replace the
 * payload; return anything else (`undefined`, `null`, a non-object value,
 * a rewrite whose `request`/`args` is not an object) for no change.
 * Mutating the received copy in place is not a rewrite and is discarded.
 */
export type LlmRequestMiddleware = (payload: LlmRequestMiddlewarePayload) => LlmRequestRewrite | null | undefined | void;
/** Tool-argument middleware: synchronous; return a rewrite to replace the arguments, anything else for no change. */
export type ToolRequestMiddleware = (payload: ToolRequestMiddlewarePayload) => ToolRequestRewrite | null | undefined | void;

// -------------------------------------------------------------- execution

/**
 * A request's HTTP headers: a plain object (a list of values is sent joined
 * with `, `), or `[name, value]` pairs in any iterable (a fetch `Headers`, a
 * `Map`, an array).
 */
export type RequestHeaders = Record<string, string | number | boolean | readonly string[]> | Iterable<readonly [string, string]>;

/** What hosts pass to `execute('llm_execution', ...)`: `{ ...ids, request, headers }`. */
export interface LlmExecutionPayload extends MiddlewareContext {
  /** The request to send (hosts pass their provider request). */
  request: RequestObject;
  /**
   * The headers the request is sent with. With managed execution the relay
   * records them on the call's start and the response cache keys the ones its
   * `header_allowlist` names (docs/operators/cache.md), so two tenants told
   * apart by a header do not share answers. Credential headers
   * (`authorization`, `x-api-key`, `cookie`, ...) are never recorded or keyed.
   * The host's call gets the payload, these headers included, as given.
   */
  headers?: RequestHeaders;
}

/** What hosts pass to `execute('tool_execution', ...)`: `{ ...ids, tool_name, args }`. */
export interface ToolExecutionPayload extends MiddlewareContext {
  /** The tool to run. */
  tool_name: string;
  /** The tool arguments. */
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

/** Middleware around the real LLM call. */
export type LlmExecutionMiddleware = ExecutionMiddleware<LlmExecutionPayload>;
/** Middleware around the real tool call. */
export type ToolExecutionMiddleware = ExecutionMiddleware<ToolExecutionPayload>;

// ------------------------------------------------------------------ maps

/** The payload type of each execution middleware kind. */
export interface ExecutionPayloads {
  /** What `llm_execution` middleware receives. */
  llm_execution: LlmExecutionPayload;
  /** What `tool_execution` middleware receives. */
  tool_execution: ToolExecutionPayload;
}

/** The function type of each middleware kind. */
export interface MiddlewareFunctions {
  /** Rewrites the LLM request before it is sent. */
  llm_request: LlmRequestMiddleware;
  /** Rewrites the tool arguments before the tool runs. */
  tool_request: ToolRequestMiddleware;
  /** Wraps the real LLM call. */
  llm_execution: LlmExecutionMiddleware;
  /** Wraps the real tool call. */
  tool_execution: ToolExecutionMiddleware;
}

/** Options of `HookRegistry.use`. */
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
