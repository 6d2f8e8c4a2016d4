/**
 * Shaping provider responses for the relay's ATIF conversion.
 *
 * Managed LLM execution records whatever the wrapped call returns. Provider
 * SDKs return many shapes; the relay's ATIF builder reads one canonical shape
 * best: `{model, assistant_message{role, content, tool_calls,
 * reasoning_content}, finish_reason, usage}`. A response already in that
 * shape passes through unchanged.
 *
 * @module
 */

import { toJson } from '../shared/json.ts';
import { field, isRecord } from './payload.ts';

export interface AssistantToolCall {
  id: unknown;
  type: unknown;
  function: { name: unknown; arguments: unknown };
}

export interface AssistantMessage {
  role: unknown;
  content: unknown;
  tool_calls?: AssistantToolCall[];
  reasoning_content?: unknown;
}

export interface ShapedLlmResponse {
  model: unknown;
  assistant_message: AssistantMessage;
  finish_reason: unknown;
  usage: unknown;
}

/** Returns the response shape the relay's ATIF conversion expects. */
export function shapeLlmResponse(response: unknown): unknown {
  const payload = toJson(response);
  if (isRecord(payload) && 'assistant_message' in payload) return payload;

  let choices = field(response, 'choices');
  if ((choices === undefined || choices === null) && isRecord(payload)) choices = payload.choices;
  const firstChoice = Array.isArray(choices) && choices.length > 0 ? choices[0] : undefined;
  const message = field(firstChoice, 'message');
  const finishReason = field(firstChoice, 'finish_reason');

  const assistant: AssistantMessage = { role: 'assistant', content: '' };
  if (message !== undefined && message !== null) {
    assistant.role = field(message, 'role') || 'assistant';
    const content = field(message, 'content');
    if (content !== undefined && content !== null) assistant.content = toJson(content);
    const toolCalls = shapeToolCalls(field(message, 'tool_calls'));
    if (toolCalls.length > 0) assistant.tool_calls = toolCalls;
    const reasoning = field(message, 'reasoning_content');
    if (reasoning !== undefined && reasoning !== null) assistant.reasoning_content = toJson(reasoning);
  } else if (isRecord(payload)) {
    assistant.content = payload.content || payload.output_text || '';
  }

  const model = field(response, 'model') ?? (isRecord(payload) ? payload.model : undefined);
  const usage = field(response, 'usage') ?? (isRecord(payload) ? payload.usage : undefined);
  const shaped: ShapedLlmResponse = {
    model: model ?? null,
    assistant_message: assistant,
    finish_reason: finishReason ?? null,
    usage: toJson(usage),
  };
  return shaped;
}

/** Normalizes OpenAI-style tool calls (objects or SDK instances) to plain records. */
function shapeToolCalls(toolCalls: unknown): AssistantToolCall[] {
  if (!Array.isArray(toolCalls)) return [];
  const shaped: AssistantToolCall[] = [];
  for (const call of toolCalls) {
    const fn = field(call, 'function');
    shaped.push({
      id: field(call, 'id') ?? null,
      type: field(call, 'type') || 'function',
      function: { name: field(fn, 'name') ?? null, arguments: field(fn, 'arguments') ?? null },
    });
  }
  return shaped;
}

