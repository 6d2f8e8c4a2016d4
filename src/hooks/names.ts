/**
 * The vocabulary of the hook core: the 15 observer hook names, the four
 * middleware kinds, and the schema-version markers stamped on payloads.
 *
 * The names are the Hermes wire names (snake_case) so plugins written for
 * the Python host read the same events. Only the lifecycle hooks of the
 * ported change are here; Hermes' stream, kanban, gateway and command hooks
 * are out of scope.
 *
 * @module
 */

/** Every observer hook a host can emit, in lifecycle order. */
export const HOOK_NAMES = [
  'on_session_start',
  'on_session_end',
  'on_session_finalize',
  'on_session_reset',
  'pre_llm_call',
  'post_llm_call',
  'pre_api_request',
  'post_api_request',
  'api_request_error',
  'pre_tool_call',
  'post_tool_call',
  'pre_approval_request',
  'post_approval_response',
  'subagent_start',
  'subagent_stop',
] as const;

/** One of the 15 hook names. */
export type HookName = (typeof HOOK_NAMES)[number];

const hookNameSet: ReadonlySet<string> = new Set(HOOK_NAMES);

/** True when `value` is one of {@link HOOK_NAMES}. */
export function isHookName(value: unknown): value is HookName {
  return typeof value === 'string' && hookNameSet.has(value);
}

/**
 * Stamped on every observer payload. It marks the envelope, not a promise
 * that all hooks share one schema: each hook has its own fields.
 */
export const TELEMETRY_SCHEMA_VERSION = 'hermes.observer.v1';

/** Stamped on every middleware payload, next to {@link TELEMETRY_SCHEMA_VERSION}. */
export const MIDDLEWARE_SCHEMA_VERSION = 'hermes.middleware.v1';

/** Middleware that may replace a payload before anything else sees it. */
export const REQUEST_MIDDLEWARE_KINDS = ['llm_request', 'tool_request'] as const;

/** Middleware that wraps the real provider or tool call. */
export const EXECUTION_MIDDLEWARE_KINDS = ['llm_execution', 'tool_execution'] as const;

/** All middleware kinds. Hermes' old `api_request`/`api_execution` aliases are not carried over. */
export const MIDDLEWARE_KINDS = [...REQUEST_MIDDLEWARE_KINDS, ...EXECUTION_MIDDLEWARE_KINDS] as const;

/** A request middleware kind: `llm_request` or `tool_request`. */
export type RequestMiddlewareKind = (typeof REQUEST_MIDDLEWARE_KINDS)[number];
/** An execution middleware kind: `llm_execution` or `tool_execution`. */
export type ExecutionMiddlewareKind = (typeof EXECUTION_MIDDLEWARE_KINDS)[number];
/** Any middleware kind. */
export type MiddlewareKind = RequestMiddlewareKind | ExecutionMiddlewareKind;

const middlewareKindSet: ReadonlySet<string> = new Set(MIDDLEWARE_KINDS);

/** True when `value` is one of {@link MIDDLEWARE_KINDS}. */
export function isMiddlewareKind(value: unknown): value is MiddlewareKind {
  return typeof value === 'string' && middlewareKindSet.has(value);
}
