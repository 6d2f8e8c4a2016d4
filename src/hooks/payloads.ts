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
import type { TrajectoryRef } from './trace-context.ts';

/** What every observer payload has in common. */
export interface ObserverPayload {
  /** Envelope marker, `"hermes.observer.v1"`; stamped by the registry if absent. */
  telemetry_schema_version?: string;
  /** Hosts may add fields; they are passed through. */
  [key: string]: unknown;
}

/** A payload as callbacks receive it: the schema marker is always present. */
export type Observed<P> = P & { telemetry_schema_version: string };

/** One request-middleware rewrite, as surfaced in `middleware_trace`. */
export interface MiddlewareTraceEntry {
  /** What made the rewrite (the middleware's source). */
  source?: string;
  /** Why the host emitted this, in its own words. */
  reason?: string;
  /** The name of the middleware that rewrote the request. */
  name?: string;
}

/** A chat message in the provider's (usually OpenAI) format. Opaque to the hook core. */
export type ConversationMessage = Record<string, unknown>;

/** First turn of a new session. */
export interface SessionStartPayload extends ObserverPayload {
  /** The host's session id. */
  session_id?: string;
  /** The model the session or call uses. */
  model?: string;
  /** Where the agent runs, e.g. `cli`, `tui` or a gateway platform. */
  platform?: string;
  /**
   * The agent's name as its framework knows it (an adapter sets it): the
   * trajectory's `agent.name` unless the host configured one explicitly.
   */
  agent_name?: string;
  /** The agent's version, when the framework knows it: `agent.version` unless configured explicitly. */
  agent_version?: string;
  /**
   * The session continues work started in another process (an MCP tool
   * call): the caller's NeMo Relay propagation context, the JSON text its
   * `hooks.traceContext()` gave (`propagation`). The session's spans join
   * the caller's trace, under the caller's tool call.
   */
  propagation_context?: string;
  /** Who started this session from another process: the caller's session, tool call and trajectory. */
  caller?: CallerRef;
}

/** The caller of a session started from another process. */
export interface CallerRef extends TrajectoryRef {
  /** The caller's tool call this session does the work of. */
  tool_call_id?: string;
}

/**
 * Each turn's finalisation (the canonical shape). Host exit paths may send a
 * reduced shape and add `reason` or `api_request_id`.
 */
export interface SessionEndPayload extends ObserverPayload {
  /** The host's session id. */
  session_id?: string;
  /** The task the session is running (Hermes' task id). */
  task_id?: string;
  /** The turn this hook belongs to. */
  turn_id?: string;
  /** The API call this belongs to (`${turn_id}:api:${n}`); retries share it. */
  api_request_id?: string;
  /** The turn ran to its end. */
  completed?: boolean;
  /** The turn ended with an error. */
  failed?: boolean;
  /** The user or the host interrupted the turn, or it stopped to wait for approvals (`approval_required`). */
  interrupted?: boolean;
  /** Why the turn's loop ended, e.g. `text_response`, `max_iterations` or `approval_required`. */
  turn_exit_reason?: string;
  /** A turn that stopped for approvals: the ids of the tool calls waiting for a decision. */
  pending_approvals?: string[];
  /** The model the session or call uses. */
  model?: string;
  /** Where the agent runs, e.g. `cli`, `tui` or a gateway platform. */
  platform?: string;
  /** Why the host emitted this, in its own words. */
  reason?: string;
}

/** Host teardown of an active session (CLI/TUI exit, gateway reset or shutdown). */
export interface SessionFinalizePayload extends ObserverPayload {
  /** The outgoing session; `null` when no session was active. */
  session_id?: string | null;
  /** Where the agent runs, e.g. `cli`, `tui` or a gateway platform. */
  platform?: string;
  /** Why the host emitted this, in its own words. */
  reason?: string;
  /** The session that ended. */
  old_session_id?: string;
  /** The session that replaces it. */
  new_session_id?: string;
}

/** A session boundary (`/new`, `/reset`, gateway rotation); `session_id` is already the new one. */
export interface SessionResetPayload extends ObserverPayload {
  /** The host's session id. */
  session_id?: string;
  /** Where the agent runs, e.g. `cli`, `tui` or a gateway platform. */
  platform?: string;
  /** Why the host emitted this, in its own words. */
  reason?: string;
  /** The session that ended. */
  old_session_id?: string;
  /** The session that replaces it. */
  new_session_id?: string;
}

/** Once per user turn, before the tool loop. */
export interface PreLlmCallPayload extends ObserverPayload {
  /** The host's session id. */
  session_id?: string;
  /** The task the session is running (Hermes' task id). */
  task_id?: string;
  /** The turn this hook belongs to. */
  turn_id?: string;
  /** Privacy: the raw user message (a string, or content parts for a multimodal turn). */
  user_message?: string | readonly unknown[];
  /** Privacy: the raw conversation so far. */
  conversation_history?: readonly ConversationMessage[];
  /** This is the session's first turn. */
  is_first_turn?: boolean;
  /** The model the session or call uses. */
  model?: string;
  /** Where the agent runs, e.g. `cli`, `tui` or a gateway platform. */
  platform?: string;
  /** The parent agent's session id, when this is a subagent. */
  parent_session_id?: string;
  /** Who sent the message (gateway platforms). */
  sender_id?: string;
}

/** A successful, non-interrupted turn end. */
export interface PostLlmCallPayload extends ObserverPayload {
  /** The host's session id. */
  session_id?: string;
  /** The task the session is running (Hermes' task id). */
  task_id?: string;
  /** The turn this hook belongs to. */
  turn_id?: string;
  /** Privacy: the raw user message. */
  user_message?: string | readonly unknown[];
  /** Privacy: the final assistant text. */
  assistant_response?: string;
  /** Privacy: the raw conversation after the turn. */
  conversation_history?: readonly ConversationMessage[];
  /** The model the session or call uses. */
  model?: string;
  /** Where the agent runs, e.g. `cli`, `tui` or a gateway platform. */
  platform?: string;
}

/** Correlation and routing fields shared by the three API request hooks. */
export interface ApiRequestIds {
  /** The host's session id. */
  session_id?: string;
  /** The task the session is running (Hermes' task id). */
  task_id?: string;
  /** The turn this hook belongs to. */
  turn_id?: string;
  /**
   * `${turn_id}:api:${api_call_count}`, minted once per API call before the
   * retry loop: retries share it and differ by `retry_count`.
   */
  api_request_id?: string;
  /** Where the agent runs, e.g. `cli`, `tui` or a gateway platform. */
  platform?: string;
  /** The model the session or call uses. */
  model?: string;
  /** The provider, e.g. `openai` or `anthropic`. */
  provider?: string;
  /** The provider endpoint's base URL. */
  base_url?: string;
  /** The API surface, e.g. `chat_completions`, `responses`, `anthropic_messages`. */
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
  /** 0 for the first attempt, then 1, 2, ... for each retry. */
  retry_count?: number;
  /** Privacy: raw, kept for legacy consumers. Prefer the sanitised `request`. */
  request_messages?: readonly ConversationMessage[];
  /** Messages in the request (or the response). */
  message_count?: number;
  /** Tools offered to the model. */
  tool_count?: number;
  /** The host's estimate of the request's input tokens. */
  approx_input_tokens?: number;
  /** Characters in the serialised request. */
  request_char_count?: number;
  /** The completion token limit asked for, `null` for none. */
  max_tokens?: number | null;
  /** When the attempt started (epoch seconds). */
  started_at?: number;
  /** The request-middleware rewrites that shaped this request, in order. */
  middleware_trace?: readonly MiddlewareTraceEntry[];
  /** The sanitised request envelope (e.g. `{method, url, headers, body}`); what new consumers should read. */
  request?: Record<string, unknown>;
}

/** After a normalised provider success. */
export interface PostApiRequestPayload extends ObserverPayload, ApiRequestIds {
  /** How long the attempt took (seconds). */
  api_duration?: number;
  /** When the attempt started (epoch seconds). */
  started_at?: number;
  /** When the attempt ended (epoch seconds). */
  ended_at?: number;
  /** The provider's finish reason, e.g. `stop` or `tool_calls`. */
  finish_reason?: string | null;
  /** Messages in the request (or the response). */
  message_count?: number;
  /** The model the provider says answered. */
  response_model?: string;
  /**
   * The sanitised response; never a raw provider object. Its `served_by`, when set, is the upstream a router says
   * served the call (OpenRouter's `provider`, the AI Gateway's final provider); `provider` stays the one called. Its
   * `failed_upstreams`, when set, are the upstreams the router says it tried and that failed first, in order.
   */
  response?: Record<string, unknown>;
  /** Token accounting, e.g. `{prompt_tokens, completion_tokens, total_tokens}`. */
  usage?: Record<string, unknown> | null;
  /** Privacy: the raw normalised assistant message may contain model/user content. */
  assistant_message?: ConversationMessage;
  /** Characters of the assistant's text. */
  assistant_content_chars?: number;
  /** Tool calls in the assistant message. */
  assistant_tool_call_count?: number;
}

/** Each failed provider attempt. */
export interface ApiRequestErrorPayload extends ObserverPayload, ApiRequestIds {
  /** How long the attempt took (seconds). */
  api_duration?: number;
  /** When the attempt started (epoch seconds). */
  started_at?: number;
  /** When the attempt ended (epoch seconds). */
  ended_at?: number;
  /** The HTTP status of the failed attempt, `null` when there was none. */
  status_code?: number | null;
  /** 0 for the first attempt, then 1, 2, ... for each retry. */
  retry_count?: number;
  /** How many retries the host allows. */
  max_retries?: number;
  /** The host will retry this failure. */
  retryable?: boolean;
  /** Why the host emitted this, in its own words. */
  reason?: string;
  /** Privacy: error text may contain provider or user data. Typically `{type, message}`. */
  error?: unknown;
  /**
   * What the answer had delivered when the attempt failed (a stream stopped or broken mid-answer), shaped as
   * `post_api_request`'s `response` (`choices[0].message`, or `assistant_message` as a message object `{ role,
   * content }`, and `usage`): recorded with the error. Absent when nothing came.
   */
  response?: Record<string, unknown>;
  /** The sanitised request envelope. */
  request?: Record<string, unknown>;
}

/** Correlation fields shared by the two tool hooks. */
export interface ToolCallIds {
  /** The host's session id. */
  session_id?: string;
  /** The task the session is running (Hermes' task id). */
  task_id?: string;
  /** The turn this hook belongs to. */
  turn_id?: string;
  /** The API call this belongs to (`${turn_id}:api:${n}`); retries share it. */
  api_request_id?: string;
  /** The provider's id of the tool call, pairing the pre and post tool hooks. */
  tool_call_id?: string;
}

/** Once per tool call, before execution (after `tool_request` middleware, so `args` are the effective ones). */
export interface PreToolCallPayload extends ObserverPayload, ToolCallIds {
  /** The tool's name. */
  tool_name: string;
  /**
   * Privacy: the model's tool arguments, as an object. A JavaScript host that has only text (the JSON text of a
   * model's tool call, a command line) may pass it: the plugin records it as an object (docs/hosts/emitting-hooks.md).
   */
  args?: Record<string, unknown>;
  /** The request-middleware rewrites that shaped this request, in order. */
  middleware_trace?: readonly MiddlewareTraceEntry[];
}

/** After the tool call was blocked, failed, or succeeded. */
export interface PostToolCallPayload extends ObserverPayload, ToolCallIds {
  /** The tool's name. */
  tool_name: string;
  /** Privacy: the model's tool arguments. */
  args?: Record<string, unknown>;
  /** Privacy: the model-bound result (Hermes sends a JSON string). */
  result?: unknown;
  /** How long it took (milliseconds). */
  duration_ms?: number;
  /** e.g. `"ok"`, `"error"`, `"blocked"`. */
  status?: string;
  /** The error's type or class name, when the call failed. */
  error_type?: string | null;
  /** The error's message, when the call failed. */
  error_message?: string | null;
  /**
   * The tool the host ran for this call when it is not the one the model named (`tool_name`, which stays the
   * model's): an alias routed the call (the Claude Agent SDK's `toolAliases`).
   */
  routed_to?: string;
  /**
   * The host ran the call more than once under its id (a retry the model did not see, LangChain's
   * `toolRetryMiddleware`): 0-based index of the attempt whose outcome this is. Absent for a call run once.
   */
  attempt_index?: number;
  /** The attempts before that one, each failed: its error and how long it ran (milliseconds). */
  failed_attempts?: readonly { error_type: string; error_message: string; duration_ms: number }[];
  /** The request-middleware rewrites that shaped this request, in order. */
  middleware_trace?: readonly MiddlewareTraceEntry[];
}

/** Where an approval was asked. */
export type ApprovalSurface = 'cli' | 'gateway' | 'smart' | (string & {});

/** Before a prompted or smart approval. Observers cannot veto. */
export interface PreApprovalRequestPayload extends ObserverPayload {
  /** The turn this hook belongs to. */
  turn_id?: string;
  /** The provider's id of the tool call, pairing the pre and post tool hooks. */
  tool_call_id?: string;
  /** The approval scope key (e.g. the gateway chat), when the host has one. */
  session_key?: string;
  /** Privacy: the command may contain secrets. */
  command?: string;
  /** What the command does, as shown to the approver. */
  description?: string;
  /** The dangerous-command pattern that asked for approval. */
  pattern_key?: string;
  /** Every dangerous-command pattern the command matched. */
  pattern_keys?: readonly string[];
  /** Where the approval was asked: `cli`, `gateway` or `smart`. */
  surface?: ApprovalSurface;
}

/** After the approval decision or timeout. */
export interface PostApprovalResponsePayload extends PreApprovalRequestPayload {
  /** `once`, `session`, `always`, `deny`, `timeout`, or `smart_*`. */
  choice?: string;
  /** Set by the smart-approval path. */
  decided_by?: string;
  /**
   * Privacy: an allowing decision that runs the call with other input than
   * the model asked for (an edit, a hook's rewrite): that input. The call's
   * own arguments stay the model's. Absent when the call runs as asked.
   */
  changed_args?: Record<string, unknown>;
}

/**
 * A child agent was constructed and is about to run. Carries parent and child
 * ids only (no `session_id`), so consumers key by `child_session_id`.
 */
export interface SubagentStartPayload extends ObserverPayload {
  /** The parent agent's session id, when this is a subagent. */
  parent_session_id?: string;
  /** The parent's turn that started the child. */
  parent_turn_id?: string;
  /** The parent's own subagent id, when the parent is a subagent too. */
  parent_subagent_id?: string;
  /** The child agent's session id: the key consumers use for the child. */
  child_session_id?: string;
  /** The child's subagent id. */
  child_subagent_id?: string;
  /** The role the child was given, e.g. `researcher`. */
  child_role?: string;
  /** Privacy: the goal may contain user or project content; keep it out of structural events. */
  child_goal?: string;
}

/** A child agent exited (emitted on the caller's thread of control). */
export interface SubagentStopPayload extends ObserverPayload {
  /** The parent agent's session id, when this is a subagent. */
  parent_session_id?: string;
  /** The parent's turn that started the child. */
  parent_turn_id?: string;
  /** The child agent's session id: the key consumers use for the child. */
  child_session_id?: string;
  /** The role the child was given, e.g. `researcher`. */
  child_role?: string;
  /** Privacy: may reveal project content. */
  child_summary?: string;
  /** How the child ended, e.g. `completed` or `failed`. */
  child_status?: string;
  /** Redacted tool-history metadata; may reveal project structure. */
  tool_call_history?: readonly unknown[];
  /** How long it took (milliseconds). */
  duration_ms?: number;
  /** The parent's tool call that ran the child. */
  tool_call_id?: string;
  /**
   * The child's trajectory when it was recorded elsewhere (another process,
   * such as an MCP server): the parent's tool call references it, since it
   * cannot be embedded.
   */
  child_trajectory?: TrajectoryRef;
}

/** The payload type of each hook. */
export interface HookPayloads {
  /** The payload of `on_session_start`. */
  on_session_start: SessionStartPayload;
  /** The payload of `on_session_end`. */
  on_session_end: SessionEndPayload;
  /** The payload of `on_session_finalize`. */
  on_session_finalize: SessionFinalizePayload;
  /** The payload of `on_session_reset`. */
  on_session_reset: SessionResetPayload;
  /** The payload of `pre_llm_call`. */
  pre_llm_call: PreLlmCallPayload;
  /** The payload of `post_llm_call`. */
  post_llm_call: PostLlmCallPayload;
  /** The payload of `pre_api_request`. */
  pre_api_request: PreApiRequestPayload;
  /** The payload of `post_api_request`. */
  post_api_request: PostApiRequestPayload;
  /** The payload of `api_request_error`. */
  api_request_error: ApiRequestErrorPayload;
  /** The payload of `pre_tool_call`. */
  pre_tool_call: PreToolCallPayload;
  /** The payload of `post_tool_call`. */
  post_tool_call: PostToolCallPayload;
  /** The payload of `pre_approval_request`. */
  pre_approval_request: PreApprovalRequestPayload;
  /** The payload of `post_approval_response`. */
  post_approval_response: PostApprovalResponsePayload;
  /** The payload of `subagent_start`. */
  subagent_start: SubagentStartPayload;
  /** The payload of `subagent_stop`. */
  subagent_stop: SubagentStopPayload;
}

// Fails to compile if HookPayloads and HOOK_NAMES drift apart.
type Exact<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type AssertTrue<T extends true> = T;
type HookPayloadsCoverEveryHook = AssertTrue<Exact<keyof HookPayloads, HookName>>;
