/**
 * Payload types for the 15 observer hooks, following the Hermes hook
 * catalogue (`hermes.observer.v1`).
 *
 * Conventions that hold for every payload:
 * - Fields are snake_case wire names. Every field is optional unless noted:
 *   correlation ids are hook-specific and may be absent, and consumers
 *   treat ids as opaque strings.
 * - Unknown extra fields are allowed and passed through untouched, so a host
 *   can add its own context without a type error and a plugin can read
 *   fields newer than this file.
 * - `telemetry_schema_version` is stamped by the registry when the host
 *   leaves it out; callbacks always see it (see {@link Observed}).
 * - Times: `started_at`/`ended_at` are Unix epoch seconds (float) and
 *   `api_duration` is seconds, as in Hermes (`time.time()`); `duration_ms`
 *   is milliseconds.
 *
 * Privacy: some fields carry raw user or model content. They are marked
 * "Privacy" below. Plugins that export structural telemetry should leave
 * them out unless content export is explicitly enabled.
 *
 * @module
 */

import type { HookName } from './names.ts';

/** What every observer payload has in common. */
export interface ObserverPayload {
  /** Envelope marker, `"hermes.observer.v1"`; stamped by the registry if absent. */
  telemetry_schema_version?: string;
  [key: string]: unknown;
}

/** A payload as callbacks receive it: the schema marker is always present. */
export type Observed<P> = P & { telemetry_schema_version: string };

/** One request-middleware rewrite, as surfaced in `middleware_trace`. */
export interface MiddlewareTraceEntry {
  source?: string;
  reason?: string;
  name?: string;
}

/** A chat message in the provider's (usually OpenAI) format. Opaque to the hook core. */
export type ConversationMessage = Record<string, unknown>;

/** First turn of a new session. */
export interface SessionStartPayload extends ObserverPayload {
  session_id?: string;
  model?: string;
  platform?: string;
}

/**
 * Each turn's finalisation (the canonical shape). Host exit paths may send a
 * reduced shape and add `reason` or `api_request_id`.
 */
export interface SessionEndPayload extends ObserverPayload {
  session_id?: string;
  task_id?: string;
  turn_id?: string;
  api_request_id?: string;
  completed?: boolean;
  failed?: boolean;
  interrupted?: boolean;
  turn_exit_reason?: string;
  model?: string;
  platform?: string;
  reason?: string;
}

/** Host teardown of an active session (CLI/TUI exit, gateway reset or shutdown). */
export interface SessionFinalizePayload extends ObserverPayload {
  /** The outgoing session; `null` when no session was active. */
  session_id?: string | null;
  platform?: string;
  reason?: string;
  old_session_id?: string;
  new_session_id?: string;
}

/** A session boundary (`/new`, `/reset`, gateway rotation); `session_id` is already the new one. */
export interface SessionResetPayload extends ObserverPayload {
  session_id?: string;
  platform?: string;
  reason?: string;
  old_session_id?: string;
  new_session_id?: string;
}

/** Once per user turn, before the tool loop. */
export interface PreLlmCallPayload extends ObserverPayload {
  session_id?: string;
  task_id?: string;
  turn_id?: string;
  /** Privacy: the raw user message (a string, or content parts for a multimodal turn). */
  user_message?: string | readonly unknown[];
  /** Privacy: the raw conversation so far. */
  conversation_history?: readonly ConversationMessage[];
  is_first_turn?: boolean;
  model?: string;
  platform?: string;
  parent_session_id?: string;
  sender_id?: string;
}

/** A successful, non-interrupted turn end. */
export interface PostLlmCallPayload extends ObserverPayload {
  session_id?: string;
  task_id?: string;
  turn_id?: string;
  /** Privacy: the raw user message. */
  user_message?: string | readonly unknown[];
  /** Privacy: the final assistant text. */
  assistant_response?: string;
  /** Privacy: the raw conversation after the turn. */
  conversation_history?: readonly ConversationMessage[];
  model?: string;
  platform?: string;
}

/** Correlation and routing fields shared by the three API request hooks. */
export interface ApiRequestIds {
  session_id?: string;
  task_id?: string;
  turn_id?: string;
  /**
   * `${turn_id}:api:${api_call_count}`, minted once per API call before the
   * retry loop: retries share it and differ by `retry_count`.
   */
  api_request_id?: string;
  platform?: string;
  model?: string;
  provider?: string;
  base_url?: string;
  api_mode?: string;
  /** 1-based count of API calls in the turn. */
  api_call_count?: number;
}

/** Each provider attempt, just before sending. */
export interface PreApiRequestPayload extends ObserverPayload, ApiRequestIds {
  /** Privacy: raw, kept for legacy consumers. Prefer the sanitised `request`. */
  user_message?: string | readonly unknown[];
  /** Privacy: raw, kept for legacy consumers. Prefer the sanitised `request`. */
  conversation_history?: readonly ConversationMessage[];
  retry_count?: number;
  /** Privacy: raw, kept for legacy consumers. Prefer the sanitised `request`. */
  request_messages?: readonly ConversationMessage[];
  message_count?: number;
  tool_count?: number;
  approx_input_tokens?: number;
  request_char_count?: number;
  max_tokens?: number | null;
  started_at?: number;
  middleware_trace?: readonly MiddlewareTraceEntry[];
  /** The sanitised request envelope (e.g. `{method, url, headers, body}`); what new consumers should read. */
  request?: Record<string, unknown>;
}

/** After a normalised provider success. */
export interface PostApiRequestPayload extends ObserverPayload, ApiRequestIds {
  api_duration?: number;
  started_at?: number;
  ended_at?: number;
  finish_reason?: string | null;
  message_count?: number;
  response_model?: string;
  /** The sanitised response; never a raw provider object. */
  response?: Record<string, unknown>;
  /** Token accounting, e.g. `{prompt_tokens, completion_tokens, total_tokens}`. */
  usage?: Record<string, unknown> | null;
  /** Privacy: the raw normalised assistant message may contain model/user content. */
  assistant_message?: ConversationMessage;
  assistant_content_chars?: number;
  assistant_tool_call_count?: number;
}

/** Each failed provider attempt. */
export interface ApiRequestErrorPayload extends ObserverPayload, ApiRequestIds {
  api_duration?: number;
  started_at?: number;
  ended_at?: number;
  status_code?: number | null;
  retry_count?: number;
  max_retries?: number;
  retryable?: boolean;
  reason?: string;
  /** Privacy: error text may contain provider or user data. Typically `{type, message}`. */
  error?: unknown;
  /** The sanitised request envelope. */
  request?: Record<string, unknown>;
}

/** Correlation fields shared by the two tool hooks. */
export interface ToolCallIds {
  session_id?: string;
  task_id?: string;
  turn_id?: string;
  api_request_id?: string;
  tool_call_id?: string;
}

/** Once per tool call, before execution (after `tool_request` middleware, so `args` are the effective ones). */
export interface PreToolCallPayload extends ObserverPayload, ToolCallIds {
  tool_name: string;
  /** Privacy: the model's tool arguments. */
  args?: Record<string, unknown>;
  middleware_trace?: readonly MiddlewareTraceEntry[];
}

/** After the tool call was blocked, failed, or succeeded. */
export interface PostToolCallPayload extends ObserverPayload, ToolCallIds {
  tool_name: string;
  /** Privacy: the model's tool arguments. */
  args?: Record<string, unknown>;
  /** Privacy: the model-bound result (Hermes sends a JSON string). */
  result?: unknown;
  duration_ms?: number;
  /** e.g. `"ok"`, `"error"`, `"blocked"`. */
  status?: string;
  error_type?: string | null;
  error_message?: string | null;
  middleware_trace?: readonly MiddlewareTraceEntry[];
}

/** Where an approval was asked. */
export type ApprovalSurface = 'cli' | 'gateway' | 'smart' | (string & {});

/** Before a prompted or smart approval. Observers cannot veto. */
export interface PreApprovalRequestPayload extends ObserverPayload {
  turn_id?: string;
  tool_call_id?: string;
  session_key?: string;
  /** Privacy: the command may contain secrets. */
  command?: string;
  description?: string;
  pattern_key?: string;
  pattern_keys?: readonly string[];
  surface?: ApprovalSurface;
}

/** After the approval decision or timeout. */
export interface PostApprovalResponsePayload extends PreApprovalRequestPayload {
  /** `once`, `session`, `always`, `deny`, `timeout`, or `smart_*`. */
  choice?: string;
  /** Set by the smart-approval path. */
  decided_by?: string;
}

/**
 * A child agent was constructed and is about to run. Carries parent and child
 * ids only (no `session_id`), so consumers key by `child_session_id`.
 */
export interface SubagentStartPayload extends ObserverPayload {
  parent_session_id?: string;
  parent_turn_id?: string;
  parent_subagent_id?: string;
  child_session_id?: string;
  child_subagent_id?: string;
  child_role?: string;
  /** Privacy: the goal may contain user or project content; keep it out of structural events. */
  child_goal?: string;
}

/** A child agent exited (emitted on the caller's thread of control). */
export interface SubagentStopPayload extends ObserverPayload {
  parent_session_id?: string;
  parent_turn_id?: string;
  child_session_id?: string;
  child_role?: string;
  /** Privacy: may reveal project content. */
  child_summary?: string;
  child_status?: string;
  /** Redacted tool-history metadata; may reveal project structure. */
  tool_call_history?: readonly unknown[];
  duration_ms?: number;
}

/** The payload type of each hook. */
export interface HookPayloads {
  on_session_start: SessionStartPayload;
  on_session_end: SessionEndPayload;
  on_session_finalize: SessionFinalizePayload;
  on_session_reset: SessionResetPayload;
  pre_llm_call: PreLlmCallPayload;
  post_llm_call: PostLlmCallPayload;
  pre_api_request: PreApiRequestPayload;
  post_api_request: PostApiRequestPayload;
  api_request_error: ApiRequestErrorPayload;
  pre_tool_call: PreToolCallPayload;
  post_tool_call: PostToolCallPayload;
  pre_approval_request: PreApprovalRequestPayload;
  post_approval_response: PostApprovalResponsePayload;
  subagent_start: SubagentStartPayload;
  subagent_stop: SubagentStopPayload;
}

// Fails to compile if HookPayloads and HOOK_NAMES drift apart.
type Exact<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type AssertTrue<T extends true> = T;
type HookPayloadsCoverEveryHook = AssertTrue<Exact<keyof HookPayloads, HookName>>;
