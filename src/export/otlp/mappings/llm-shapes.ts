/**
 * Reads an LLM request and response as the relay records them (OpenAI chat
 * completions or Anthropic messages, the two shapes Hermes hosts send) into
 * one neutral form that the `gen_ai` and `openinference` projections render.
 * Anything unrecognised reads as empty, so a new provider shape loses
 * attributes, never the span.
 *
 * @module
 */

import { detectResponseSurface } from '../../../formats/atif/payload/surface.ts';
import type { Json } from '../../../shared/json.ts';
import { readUsage as readUsageOfShape, tokenCount, usageShapeOf } from '../../../formats/usage.ts';
import { objectOf, stringOf } from '../attributes.ts';

type JsonObject = { [key: string]: Json };

export interface ToolCall {
  id: string | undefined;
  name: string;
  /** The arguments as an object when they parse, else the raw text. */
  arguments: Json;
  /** The arguments as text, as the provider sent them (OpenAI) or serialized (Anthropic). */
  argumentsText: string;
}

interface ToolResult {
  id: string | undefined;
  content: string;
}

/** One part of a message, in order. */
export type Part = { kind: 'text'; text: string } | { kind: 'tool_call'; call: ToolCall } | { kind: 'other'; raw: JsonObject };

export interface Message {
  role: string;
  parts: Part[];
  /** Tool results this message carries (OpenAI `tool` messages, Anthropic `tool_result` blocks). */
  results: ToolResult[];
  /** The provider's own role, before tool results were recognised (Anthropic results come in `user`). */
  providerRole: string;
  /** OpenAI style: tool calls in a `tool_calls` field beside the text, not among content blocks. */
  separateToolCalls: boolean;
}

interface ToolDefinition {
  name: string;
  description: string | undefined;
  parameters: Json | undefined;
}

export interface LlmRequestView {
  model: string | undefined;
  /** Anthropic's top-level `system`, as texts. */
  system: string[];
  messages: Message[];
  tools: ToolDefinition[];
  /** Everything but the conversation and the tool list (`max_tokens`, `temperature`, ...). */
  parameters: JsonObject;
}

interface Usage {
  input: number | undefined;
  output: number | undefined;
  total: number | undefined;
  cacheRead: number | undefined;
  cacheWrite: number | undefined;
}

export interface LlmResponseView {
  /**
   * True when the response has a provider's own shape (Chat Completions,
   * Responses, Messages). Native reads its message, finish reason and id
   * only then and drops a shapeless one's (an adapter's or managed call's
   * `{assistant_message, ...}`); the memory relay reads both (see the
   * adapter-usage case of test/export/otlp-native-parity.test.ts).
   */
  recognized: boolean;
  id: string | undefined;
  model: string | undefined;
  message: Message | null;
  finishReason: string | undefined;
  usage: Usage;
}

const NON_PARAMETERS = new Set(['messages', 'tools', 'model', 'system']);

export function readRequest(data: Json | undefined): LlmRequestView {
  const content = objectOf(objectOf(data)?.content ?? null) ?? {};
  const parameters: JsonObject = {};
  for (const key of Object.keys(content)) if (!NON_PARAMETERS.has(key)) parameters[key] = content[key]!;
  return {
    model: stringOf(content.model),
    system: textsOf(content.system ?? null),
    messages: Array.isArray(content.messages) ? content.messages.map((m) => readMessage(m)).filter((m): m is Message => m !== null) : [],
    tools: Array.isArray(content.tools) ? content.tools.map(readTool).filter((t): t is ToolDefinition => t !== null) : [],
    parameters,
  };
}

export function readResponse(data: Json | undefined): LlmResponseView {
  const response = objectOf(data ?? null) ?? {};
  const choices = Array.isArray(response.choices) ? response.choices : [];
  const choice = objectOf(choices[0] ?? null);
  let message: Message | null = null;
  if (choice !== null) message = readMessage(choice.message ?? null);
  else if (Array.isArray(response.content)) message = readMessage({ role: 'assistant', content: response.content });
  else if (response.assistant_message !== undefined) message = readMessage(response.assistant_message);
  const finishReason = stringOf(choice?.finish_reason) ?? stringOf(response.stop_reason) ?? stringOf(response.finish_reason);
  const surface = detectResponseSurface(response);
  return { recognized: surface !== undefined, id: stringOf(response.id), model: stringOf(response.model), message, finishReason, usage: readUsage(response.usage ?? null, surface === 'anthropic_messages') };
}

/** The response's usage through the token table: the input counts its cache reads and writes (Anthropic's are added). */
function readUsage(value: Json, messagesResponse = false): Usage {
  const usage = readUsageOfShape(value);
  // Native states a total only where the usage does, or for Messages (which has none of its own: a
  // Messages usage without cache counts is known by the response around it).
  const stated = messagesResponse || usageShapeOf(value) === 'anthropic_messages' ? usage?.total : tokenCount(objectOf(value)?.total_tokens ?? objectOf(value)?.totalTokens);
  return { input: usage?.prompt, output: usage?.completion, total: stated, cacheRead: usage?.cacheRead, cacheWrite: usage?.cacheWrite };
}

function readTool(value: Json): ToolDefinition | null {
  const tool = objectOf(value);
  if (tool === null) return null;
  const fn = objectOf(tool.function ?? null);
  if (fn !== null) {
    const name = stringOf(fn.name);
    return name === undefined ? null : { name, description: stringOf(fn.description), parameters: fn.parameters };
  }
  const name = stringOf(tool.name);
  return name === undefined ? null : { name, description: stringOf(tool.description), parameters: tool.input_schema ?? tool.parameters };
}

function readMessage(value: Json): Message | null {
  const message = objectOf(value);
  if (message === null) return null;
  const providerRole = stringOf(message.role) ?? 'user';
  const parts: Part[] = [];
  const results: ToolResult[] = [];
  const content = message.content;
  if (providerRole === 'tool') {
    results.push({ id: stringOf(message.tool_call_id), content: textsOf(content ?? null).join('') });
    return { role: 'tool', parts, results, providerRole, separateToolCalls: false };
  }
  if (typeof content === 'string') parts.push({ kind: 'text', text: content });
  else if (Array.isArray(content)) {
    for (const block of content) {
      const b = objectOf(block);
      if (b === null) continue;
      if (b.type === 'text' && typeof b.text === 'string') parts.push({ kind: 'text', text: b.text });
      else if (b.type === 'tool_use') parts.push({ kind: 'tool_call', call: toolCall(stringOf(b.id), stringOf(b.name) ?? '', b.input ?? {}) });
      else if (b.type === 'tool_result') results.push({ id: stringOf(b.tool_use_id), content: textsOf(b.content ?? null).join('') });
      else parts.push({ kind: 'other', raw: b });
    }
  }
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) {
      const c = objectOf(call);
      const fn = objectOf(c?.function ?? null);
      if (c === null || fn === null) continue;
      parts.push({ kind: 'tool_call', call: toolCall(stringOf(c.id), stringOf(fn.name) ?? '', fn.arguments ?? '') });
    }
  }
  const role = results.length > 0 && parts.length === 0 ? 'tool' : providerRole;
  return { role, parts, results, providerRole, separateToolCalls: Array.isArray(message.tool_calls) };
}

function toolCall(id: string | undefined, name: string, args: Json): ToolCall {
  if (typeof args === 'string') {
    try {
      const parsed = JSON.parse(args) as Json;
      return { id, name, arguments: parsed, argumentsText: sortedJson(parsed) };
    } catch {
      return { id, name, arguments: args, argumentsText: args };
    }
  }
  return { id, name, arguments: args, argumentsText: sortedJson(args) };
}

/** A string, or the texts of an array of text blocks. */
function textsOf(value: Json): string[] {
  if (typeof value === 'string') return [value];
  if (!Array.isArray(value)) return [];
  const out: string[] = [];
  for (const block of value) {
    const b = objectOf(block);
    if (typeof block === 'string') out.push(block);
    else if (b !== null && typeof b.text === 'string') out.push(b.text);
  }
  return out;
}

/** The message's text parts, joined. */
export function textOfMessage(message: Message): string {
  return message.parts
    .filter((p): p is Extract<Part, { kind: 'text' }> => p.kind === 'text')
    .map((p) => p.text)
    .join('');
}

export function toolCallsOf(message: Message): ToolCall[] {
  return message.parts.filter((p): p is Extract<Part, { kind: 'tool_call' }> => p.kind === 'tool_call').map((p) => p.call);
}

/** JSON with object keys sorted, as native's serde_json writes it. */
export function sortedJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value as object).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}
