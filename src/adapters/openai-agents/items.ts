/**
 * Agents SDK items (Responses-style `AgentInputItem`/output items, or chat
 * messages from the chat-completions model) → the chat shapes the plugin reads.
 *
 * @module
 */

import { toJson } from '../../shared/json.ts';
import type { ResponseParts } from '../core/run.ts';
import type { ProviderUsage } from '../../formats/usage.ts';
import { textOfParts, type CallOfTool, type ChatMessage, type OfferedTool } from '../core/shapes.ts';

type Loose = Record<string, unknown>;

const isRecord = (value: unknown): value is Loose => typeof value === 'object' && value !== null;
const str = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const part of content) {
    if (isRecord(part) && typeof part.text === 'string') text += part.text;
    else if (isRecord(part) && typeof part.refusal === 'string') text += part.refusal;
  }
  return text;
}

/** A function call item's id: the provider's `callId` (camelCase in this SDK), else `call_id`/`id`. */
function callIdOf(item: Loose): string {
  return str(item.callId) ?? str(item.call_id) ?? str(item.id) ?? '';
}

/** The model request's instructions and input as chat messages. */
export function chatMessages(instructions: unknown, input: unknown): ChatMessage[] {
  const out: ChatMessage[] = [];
  if (typeof instructions === 'string' && instructions !== '') out.push({ role: 'system', content: instructions });
  if (typeof input === 'string') {
    out.push({ role: 'user', content: input });
    return out;
  }
  if (!Array.isArray(input)) return out;
  let assistant: ChatMessage | undefined;
  for (const item of input) {
    if (!isRecord(item)) continue;
    if (item.type === 'function_call') {
      if (assistant === undefined) {
        assistant = { role: 'assistant', content: null };
        out.push(assistant);
      }
      const calls = (assistant.tool_calls as unknown[] | undefined) ?? [];
      calls.push({ id: callIdOf(item), type: 'function', function: { name: str(item.name) ?? 'tool', arguments: typeof item.arguments === 'string' ? item.arguments : JSON.stringify(toJson(item.arguments ?? {})) } });
      assistant.tool_calls = calls;
      continue;
    }
    if (item.type === 'function_call_result') {
      const output = item.output;
      out.push({ role: 'tool', tool_call_id: callIdOf(item), content: typeof output === 'string' ? output : isRecord(output) && typeof output.text === 'string' ? output.text : JSON.stringify(toJson(output ?? null)) });
      assistant = undefined;
      continue;
    }
    const role = str(item.role);
    if (role === undefined) continue;
    if (role === 'assistant') {
      assistant = { role: 'assistant', content: contentText(item.content) };
      out.push(assistant);
      continue;
    }
    assistant = undefined;
    const content = item.content;
    out.push({ role, content: typeof content === 'string' ? content : (textOfParts(Array.isArray(content) ? content : []) ?? toJson(content ?? '')) });
  }
  return out;
}

/** Function tools and handoffs the model was offered. */
export function offeredTools(tools: unknown, handoffs: unknown): OfferedTool[] {
  const out: OfferedTool[] = [];
  if (Array.isArray(tools)) {
    for (const tool of tools) {
      if (isRecord(tool) && typeof tool.name === 'string') out.push({ name: tool.name, description: str(tool.description), parameters: tool.parameters });
    }
  }
  if (Array.isArray(handoffs)) {
    for (const handoff of handoffs) {
      if (isRecord(handoff) && typeof handoff.toolName === 'string') out.push({ name: handoff.toolName, description: str(handoff.toolDescription), parameters: handoff.inputJsonSchema });
    }
  }
  return out;
}

/** Text and tool calls of output items (Responses items, or chat messages with `tool_calls`). */
function outputParts(output: unknown): { text: string; toolCalls: CallOfTool[] } {
  let text = '';
  const toolCalls: CallOfTool[] = [];
  if (!Array.isArray(output)) return { text, toolCalls };
  for (const item of output) {
    if (!isRecord(item)) continue;
    if (item.type === 'function_call') toolCalls.push({ id: callIdOf(item), name: str(item.name) ?? 'tool', arguments: item.arguments ?? '{}' });
    else if (item.role === 'assistant' || item.type === 'message') {
      text += contentText(item.content);
      if (Array.isArray(item.tool_calls)) {
        for (const call of item.tool_calls) {
          if (!isRecord(call)) continue;
          const fn = isRecord(call.function) ? call.function : {};
          toolCalls.push({ id: str(call.id) ?? '', name: str(fn.name) ?? 'tool', arguments: fn.arguments ?? '{}' });
        }
      }
    }
  }
  return { text, toolCalls };
}

/** `Usage` (camelCase, details as arrays) or span usage (`input_tokens`, `output_tokens`), tagged for the token table. */
function tokenCounts(usage: unknown): ProviderUsage | undefined {
  return isRecord(usage) ? { shape: 'openai_agents', usage } : undefined;
}

export function responseParts(output: unknown, usage: unknown, model: string | undefined, id: unknown): ResponseParts {
  const parts = outputParts(output);
  return { text: parts.text, toolCalls: parts.toolCalls, usage: tokenCounts(usage), model, id: str(id), finishReason: parts.toolCalls.length > 0 ? 'tool_calls' : 'stop' };
}
