/**
 * The small toolkit the bundled scenarios are written with: a clock, an
 * emitter, and helpers that build provider-shaped request and response
 * bodies so every scenario reads like a real agent loop.
 *
 * Two clocks: the demo runs on real time (with short pauses, so the
 * timeline has visible durations); the example generator runs on a fixed,
 * virtual clock so the recorded files are byte-for-byte reproducible.
 *
 * @module
 */

import type { HookName } from '../hooks/names.ts';
import type { HookPayloads } from '../hooks/payloads.ts';

/** Anything with `emit`: `HookRegistry` fits. */
interface HookEmitter {
  emit<K extends HookName>(name: K, payload: HookPayloads[K]): void;
}

/** Time as the scenarios see it: epoch seconds, advanced by `pause`. */
export interface ScenarioClock {
  /** Epoch seconds (float), like Hermes' `time.time()`. */
  now(): number;
  /** Lets `ms` milliseconds pass. */
  pause(ms: number): Promise<void>;
}

/** Real time; pauses really wait (scaled by `scale`, 1 = as written). */
export function realClock(scale = 1): ScenarioClock {
  return {
    now: () => Date.now() / 1000,
    pause: (ms) => (ms * scale > 0 ? new Promise((resolve) => setTimeout(resolve, ms * scale)) : Promise.resolve()),
  };
}

/** Virtual time from `startSeconds`; pauses return at once and only move the clock. */
export function virtualClock(startSeconds = 1_764_428_400): ScenarioClock {
  let now = startSeconds;
  return {
    now: () => now,
    pause: (ms) => {
      now = Math.round((now + ms / 1000) * 1e6) / 1e6;
      return Promise.resolve();
    },
  };
}

export interface ScenarioContext {
  hooks: HookEmitter;
  clock: ScenarioClock;
}

/** A scripted session: emits its hooks in order on `context.hooks`. */
export type Scenario = (context: ScenarioContext) => Promise<void>;

/** An OpenAI chat-completions tool definition. */
export function openAiTool(name: string, description: string, properties: Record<string, unknown>, required: string[]): Record<string, unknown> {
  return {
    type: 'function',
    function: { name, description, parameters: { type: 'object', properties, required } },
  };
}

export interface OpenAiToolCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/** An assistant message in OpenAI chat shape, with tool calls when given. */
export function openAiAssistant(content: string | null, toolCalls: readonly OpenAiToolCall[] = []): Record<string, unknown> {
  const message: Record<string, unknown> = { role: 'assistant', content };
  if (toolCalls.length > 0) {
    message.tool_calls = toolCalls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: JSON.stringify(call.args) },
    }));
  }
  return message;
}

export interface OpenAiUsageCounts {
  prompt: number;
  completion: number;
  cached?: number;
}

/** OpenAI `usage`, with `prompt_tokens_details.cached_tokens` when some prompt tokens were cached. */
export function openAiUsage(counts: OpenAiUsageCounts): Record<string, unknown> {
  const usage: Record<string, unknown> = {
    prompt_tokens: counts.prompt,
    completion_tokens: counts.completion,
    total_tokens: counts.prompt + counts.completion,
  };
  if (counts.cached !== undefined) usage.prompt_tokens_details = { cached_tokens: counts.cached };
  return usage;
}

/** A sanitised OpenAI chat-completions response, as Hermes passes it in `post_api_request.response`. */
export function openAiResponse(
  id: string,
  model: string,
  message: Record<string, unknown>,
  usage: Record<string, unknown>,
  created: number,
): Record<string, unknown> {
  const finishReason = Array.isArray(message.tool_calls) ? 'tool_calls' : 'stop';
  return {
    id,
    object: 'chat.completion',
    created: Math.floor(created),
    model,
    choices: [{ index: 0, message, finish_reason: finishReason }],
    usage,
  };
}

/** A tool result message in OpenAI chat shape. */
export function toolMessage(toolCallId: string, content: string): Record<string, unknown> {
  return { role: 'tool', tool_call_id: toolCallId, content };
}

/** Rounds epoch seconds to microseconds, so recorded payloads stay short and stable. */
export function seconds(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
