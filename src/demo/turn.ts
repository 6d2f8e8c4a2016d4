/**
 * One scripted turn of an agent: the hook sequence a Hermes-style host emits
 * around user input, API attempts and tool calls, with the correlation ids
 * minted the way the contract says (`api_request_id` once per API call and
 * shared by its retries, `retry_count` per attempt).
 *
 * @module
 */

import { apiRequestId } from '../hooks/index.ts';
import type { ScenarioContext } from './script.ts';
import { seconds } from './script.ts';

export interface TurnOptions {
  sessionId: string;
  taskId: string;
  turnId: string;
  model: string;
  platform: string;
  provider: string;
  apiMode: string;
  /** Extra fields for `pre_llm_call` (e.g. `parent_session_id` on a subagent's turn). */
  extra?: Record<string, unknown>;
}

interface AttemptFailure {
  statusCode: number;
  error: { type: string; message: string };
  retryable: boolean;
  durationMs: number;
}

export interface ApiCallScript {
  /** The request body the provider receives (`pre_api_request.request.body`). */
  body: Record<string, unknown>;
  /** Attempts that fail before the one that succeeds, in order. */
  failures?: readonly AttemptFailure[];
  /** The sanitised provider response of the successful attempt. */
  response: Record<string, unknown>;
  usage: Record<string, unknown>;
  /** The normalised assistant message Hermes passes beside the response. */
  assistantMessage: Record<string, unknown>;
  finishReason: string;
  durationMs: number;
}

export interface ToolCallScript {
  toolCallId: string;
  toolName: string;
  args: Record<string, unknown>;
  result: string;
  durationMs: number;
  /** `ok` (default), `error`, `blocked`, ... */
  status?: string;
  errorType?: string;
  errorMessage?: string;
}

/** Emits the hooks of one user turn, step by step. */
export class ScriptedTurn {
  readonly #context: ScenarioContext;
  readonly #options: TurnOptions;
  #apiCalls = 0;
  #currentApiRequestId = '';

  constructor(context: ScenarioContext, options: TurnOptions) {
    this.#context = context;
    this.#options = options;
  }

  get ids(): { session_id: string; task_id: string; turn_id: string } {
    return { session_id: this.#options.sessionId, task_id: this.#options.taskId, turn_id: this.#options.turnId };
  }

  /** `pre_llm_call`: the user message arrives. */
  begin(userMessage: string, history: readonly Record<string, unknown>[], isFirstTurn: boolean): void {
    const o = this.#options;
    this.#context.hooks.emit('pre_llm_call', {
      ...this.ids,
      user_message: userMessage,
      conversation_history: history,
      is_first_turn: isFirstTurn,
      model: o.model,
      platform: o.platform,
      ...o.extra,
    });
  }

  /** One API call: its failing attempts, then the successful one. */
  async apiCall(script: ApiCallScript): Promise<void> {
    const { hooks, clock } = this.#context;
    const o = this.#options;
    this.#apiCalls += 1;
    const id = apiRequestId(o.turnId, this.#apiCalls);
    this.#currentApiRequestId = id;
    const routing = {
      ...this.ids,
      api_request_id: id,
      api_call_count: this.#apiCalls,
      platform: o.platform,
      model: o.model,
      provider: o.provider,
      api_mode: o.apiMode,
    };
    const messages = Array.isArray(script.body.messages) ? script.body.messages : [];
    const request = { method: 'POST', headers: { 'content-type': 'application/json' }, body: script.body };
    const failures = script.failures ?? [];
    for (let retry = 0; retry <= failures.length; retry++) {
      const startedAt = seconds(clock.now());
      hooks.emit('pre_api_request', {
        ...routing,
        retry_count: retry,
        message_count: messages.length,
        tool_count: Array.isArray(script.body.tools) ? script.body.tools.length : 0,
        approx_input_tokens: Math.ceil(JSON.stringify(messages).length / 4),
        request_char_count: JSON.stringify(script.body).length,
        max_tokens: typeof script.body.max_tokens === 'number' ? script.body.max_tokens : null,
        started_at: startedAt,
        request,
      });
      const failure = failures[retry];
      if (failure) {
        await clock.pause(failure.durationMs);
        const endedAt = seconds(clock.now());
        hooks.emit('api_request_error', {
          ...routing,
          retry_count: retry,
          max_retries: 3,
          retryable: failure.retryable,
          status_code: failure.statusCode,
          reason: failure.error.type,
          error: failure.error,
          started_at: startedAt,
          ended_at: endedAt,
          api_duration: seconds(endedAt - startedAt),
          request,
        });
        await clock.pause(250);
        continue;
      }
      await clock.pause(script.durationMs);
      const endedAt = seconds(clock.now());
      const toolCalls = script.assistantMessage.tool_calls;
      hooks.emit('post_api_request', {
        ...routing,
        started_at: startedAt,
        ended_at: endedAt,
        api_duration: seconds(endedAt - startedAt),
        finish_reason: script.finishReason,
        message_count: messages.length + 1,
        response_model: typeof script.response.model === 'string' ? script.response.model : o.model,
        response: script.response,
        usage: script.usage,
        assistant_message: script.assistantMessage,
        assistant_content_chars: typeof script.assistantMessage.content === 'string' ? script.assistantMessage.content.length : 0,
        assistant_tool_call_count: Array.isArray(toolCalls) ? toolCalls.length : 0,
      });
    }
  }

  /** `pre_tool_call` … `post_tool_call` for one tool call of the latest API call. */
  async toolCall(script: ToolCallScript, during?: () => Promise<void>): Promise<void> {
    const { hooks, clock } = this.#context;
    const ids = { ...this.ids, api_request_id: this.#currentApiRequestId, tool_call_id: script.toolCallId };
    hooks.emit('pre_tool_call', { ...ids, tool_name: script.toolName, args: script.args });
    if (during) await during();
    await clock.pause(script.durationMs);
    const status = script.status ?? 'ok';
    hooks.emit('post_tool_call', {
      ...ids,
      tool_name: script.toolName,
      args: script.args,
      result: script.result,
      duration_ms: script.durationMs,
      status,
      error_type: script.errorType ?? null,
      error_message: script.errorMessage ?? null,
    });
  }

  /** `post_llm_call` and `on_session_end` for a turn that completed. */
  end(assistantResponse: string, history: readonly Record<string, unknown>[]): void {
    const o = this.#options;
    const hooks = this.#context.hooks;
    hooks.emit('post_llm_call', {
      ...this.ids,
      assistant_response: assistantResponse,
      conversation_history: history,
      model: o.model,
      platform: o.platform,
    });
    hooks.emit('on_session_end', {
      ...this.ids,
      completed: true,
      failed: false,
      interrupted: false,
      turn_exit_reason: 'final_response',
      model: o.model,
      platform: o.platform,
    });
  }
}
