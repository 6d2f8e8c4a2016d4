/**
 * Reads an LLM request and response as the relay records them (OpenAI Chat
 * Completions, OpenAI Responses, Anthropic Messages or Gemini
 * `generateContent`, detected as native detects them) into one neutral form that the `gen_ai` and `openinference`
 * projections render, following what native's codecs read: messages and
 * their parts, tool calls and results, provider items and tools kept whole.
 * Anything unrecognised reads as empty, so a new provider shape loses
 * attributes, never the span.
 *
 * @module
 */

import { detectResponseSurface, geminiResponse, ofSeveralShapes } from '../../../formats/atif/payload/surface.ts';
import { geminiAnswer, geminiRequest, type GeminiAnswer, type GeminiCall, type GeminiContent, type GeminiPart, type GeminiRequestMessage, type GeminiTool } from '../../../formats/gemini.ts';
import {
  anthropicRequestDecodes,
  chatRequestDecodes,
  functionFieldsDecode,
  normalizedPart,
  partKindModeled,
  requestFieldsTyped,
  readsAsRole,
  requestSurface,
  responsesPartDecodes,
  RESPONSES_MESSAGE_FIELDS,
  RESPONSES_MESSAGE_ROLES,
  type MessagesSurface,
  type NormalizedSurface,
} from '../../../formats/request-codecs.ts';
import { answerDecodes } from '../../../formats/response-codecs.ts';
import { compareKeys, type Json } from '../../../shared/json.ts';
import { canonicalJson, parseJsonAsNative, parsedNumberText, toRustJson } from '../../../formats/native-text.ts';
import { readsAsShape, readUsage as readUsageOfShape, responseCounts, spanTokenUsage, tokenCount, usageShapeOf, type CountReading } from '../../../formats/usage.ts';
import { objectOf, stringOf } from '../attributes.ts';

type JsonObject = { [key: string]: Json };

export interface ToolCall {
  id: string | undefined;
  name: string;
  /** The arguments as an object when they parse, else the raw text. */
  arguments: Json;
  /** The arguments as JSON text (sorted keys; arguments that are not JSON as a JSON string). */
  argumentsText: string;
  /** Native's text of `arguments` when they are a number parsed from text whose value alone is written otherwise (`-0.0`). */
  argumentsNumberText?: string;
}

interface ToolResult {
  id: string | undefined;
  content: string;
  /** The result as sent, when it is not text (gen_ai's `response`). */
  response?: Json;
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
  /** The content when it was given as one string (native reads its display text). */
  plainText?: string;
  /** An item native's codec keeps whole (reasoning, a message with an unknown role or extra fields, ...): its kind and value. */
  native?: { kind: string; value: JsonObject };
  /** The participant's `name` (Chat Completions). */
  name?: string;
}

interface ToolDefinition {
  name: string;
  description: string | undefined;
  parameters: Json | undefined;
  /** The definition as native's normalized form writes it (`llm.tools.N.tool.json_schema`), when read like native's codec does. */
  schema?: string;
  /** gen_ai's `type`: `function`, or a provider tool's own type (`web_search`). A provider tool without a name has name `''` (gen_ai leaves it out). */
  type?: string;
  /** A Gemini tool object's further provider tools, which gen_ai lists each under its name (openinference writes one tool of the object). */
  alsoNamed?: readonly string[];
}

export interface LlmRequestView {
  /** Which provider shape the request has, as native detects it. */
  surface: 'openai_chat' | 'anthropic_messages' | 'openai_responses' | 'gemini_generate_content';
  model: string | undefined;
  /** Anthropic's top-level `system`, as texts. */
  system: string[];
  /** The system text when it was given as one string (a Messages `system` string, Responses `instructions`), not as blocks. */
  systemText?: string;
  messages: Message[];
  tools: ToolDefinition[];
  /** Everything but the conversation and the tool list (`max_tokens`, `temperature`, ...). */
  parameters: JsonObject;
}

interface Usage {
  /** Reasoning output tokens (Responses `output_tokens_details.reasoning_tokens`). */
  reasoning?: number;
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
  /**
   * True when `finishReason` is one the codec did not map (a Gemini
   * `OTHER`, or a `stop` that is no `STOP`): the projections send it as it
   * is, where they would map the same text of another provider's.
   */
  finishAsSent?: boolean;
  /**
   * True when the output message shows parts of any kind, as native's Gemini
   * codec keeps them (`inlineData`, `fileData`, code); the other codecs'
   * answers carry only text and tool calls there.
   */
  keepsOtherParts?: boolean;
  usage: Usage;
}

const NON_PARAMETERS = new Set(['messages', 'tools', 'model', 'system']);

export function readRequest(data: Json | undefined, provider?: string): LlmRequestView {
  const content = objectOf(objectOf(data)?.content ?? null) ?? {};
  const detected = requestSurface(content, provider);
  if (detected === 'openai_responses') return readResponsesRequest(content);
  // A request of no shape native detects has no codec to read it: native's spans then carry none of its
  // parameters, tools or messages, only the model it names.
  if (detected === undefined) return { ...EMPTY_REQUEST(stringOf(content.model)), surface: 'openai_chat' };
  // A Chat or Messages request the decode rejects gives nothing, not even its model (the span names the payload's).
  if (detected === 'openai_chat' && !chatRequestDecodes(content)) return { ...EMPTY_REQUEST(undefined), surface: 'openai_chat' };
  if (detected === 'anthropic_messages' && !anthropicRequestDecodes(content)) return { ...EMPTY_REQUEST(undefined), surface: 'anthropic_messages' };
  if (detected === 'gemini_generate_content') return readGeminiRequest(content);
  // OCI requests, which native reads with a codec of its own, are read as Chat Completions here.
  const surface = detected === 'anthropic_messages' ? 'anthropic_messages' : 'openai_chat';
  const parameters: JsonObject = {};
  for (const key of Object.keys(content)) if (!NON_PARAMETERS.has(key)) parameters[key] = content[key]!;
  return {
    surface,
    model: stringOf(content.model),
    system: textsOf(content.system ?? null),
    ...(typeof content.system === 'string' ? { systemText: content.system } : {}),
    messages: Array.isArray(content.messages) ? content.messages.map((m) => readMessage(m, surface)).filter((m): m is Message => m !== null) : [],
    tools: Array.isArray(content.tools) ? content.tools.map((tool) => readTool(tool, surface)).filter((t): t is ToolDefinition => t !== null) : [],
    parameters,
  };
}

/**
 * An LLM end's response. Its token counts are read as `reading` says for a
 * response of a provider's shape whose usage that shape's codec reads
 * (`spanTokenUsage`: native's gen_ai mapping reads the shape's fields, its
 * openinference mapping names after them), else by the keys of the usage.
 */
export function readResponse(data: Json | undefined, reading: CountReading = 'shape'): LlmResponseView {
  const response = objectOf(data ?? null) ?? {};
  const choices = Array.isArray(response.choices) ? response.choices : [];
  const choice = objectOf(choices[0] ?? null);
  const surface = detectResponseSurface(response);
  if (surface === 'openai_responses') return readResponsesResponse(response, reading);
  if (geminiResponse(response) !== undefined) return readGeminiResponse(response, reading);
  if (ofSeveralShapes(response)) return unreadResponse(response, reading);
  let message: Message | null = null;
  if (choice !== null) message = surface === 'openai_chat' ? readChatAnswer(choice.message ?? null) : readMessage(choice.message ?? null);
  else if (surface === 'anthropic_messages') message = readMessagesAnswer(response.content as Json[]);
  else if (Array.isArray(response.content)) message = readMessage({ role: 'assistant', content: response.content });
  else if (response.assistant_message !== undefined) message = readMessage(response.assistant_message);
  const finishReason = stringOf(choice?.finish_reason) ?? stringOf(response.stop_reason) ?? stringOf(response.finish_reason);
  return { recognized: surface !== undefined, id: stringOf(response.id), model: stringOf(response.model), message, finishReason, usage: shapedUsage(response, surface, reading) ?? readUsage(response.usage ?? null, surface === 'anthropic_messages') };
}

/** The span's counts of a response of a provider's shape, or undefined when its codec does not read the usage. */
function shapedUsage(response: JsonObject, surface: ReturnType<typeof detectResponseSurface>, reading: CountReading): Usage | undefined {
  const usage = surface === undefined ? undefined : spanTokenUsage(response, surface, reading);
  return usage === undefined ? undefined : { input: usage.prompt, output: usage.completion, total: usage.total, cacheRead: usage.cacheRead, cacheWrite: usage.cacheWrite };
}

/**
 * `readResponse` as native's gen_ai mapping reads it: a response its codec
 * rejects (`responseDecodes`) gives nothing, neither message, id, model,
 * finish reason nor usage. (Its openinference mapping drops only the
 * message and finish reason: see openinference.ts.)
 */
export function readDecodedResponse(data: Json | undefined): LlmResponseView {
  if (!responseDecodes(data)) {
    return { recognized: false, id: undefined, model: undefined, message: null, finishReason: undefined, usage: { input: undefined, output: undefined, total: undefined, cacheRead: undefined, cacheWrite: undefined } };
  }
  return readResponse(data);
}

/**
 * Whether native's codec of the response's own shape decodes its usage: a
 * typed count that is there (not null) but no unsigned integer as it crossed
 * the binding (`1.5`, `-1`, `"10"`, `2**40`, which crossed as an f64), or a
 * details field that is no object, fails the whole response. The rule its
 * pricing reads a usage by (`readsAsShape`); true for a shapeless response
 * or a usage that is no object.
 */
function responseUsageDecodes(data: Json | undefined): boolean {
  const response = objectOf(data ?? null) ?? {};
  // A Gemini answer's usage is decoded with the rest of it.
  if (geminiResponse(response) !== undefined) return geminiAnswer(response) !== undefined;
  const surface = detectResponseSurface(response);
  const usage = response.usage ?? null;
  return surface === undefined || objectOf(usage) === null || readsAsShape(surface, usage);
}

/** Whether native's codec of the response's own shape decodes it: its usage (`responseUsageDecodes`) and the rest (`answerDecodes`). */
export function responseDecodes(data: Json | undefined): boolean {
  const response = objectOf(data ?? null) ?? {};
  const surface = detectResponseSurface(response);
  return responseUsageDecodes(data) && (surface === undefined || answerDecodes(response, surface));
}

/** The response's usage through the token table: the input counts its cache reads and writes (Anthropic's are added). */
function readUsage(value: Json, messagesResponse = false): Usage {
  const usage = readUsageOfShape(value);
  // Native states a total only where the usage does, or for Messages (which has none of its own: a
  // Messages usage without cache counts is known by the response around it).
  const stated = messagesResponse || usageShapeOf(value) === 'anthropic_messages' ? usage?.total : tokenCount(objectOf(value)?.total_tokens ?? objectOf(value)?.totalTokens);
  return { input: usage?.prompt, output: usage?.completion, total: stated, cacheRead: usage?.cacheRead, cacheWrite: usage?.cacheWrite };
}

/**
 * A Chat Completions or Messages tool as native's codec reads it: a
 * function (Chat `{type: "function", function}`, a Messages client tool
 * `{name, input_schema}`) or a provider tool (anything else, kept whole).
 */
function readTool(value: Json, surface: 'openai_chat' | 'anthropic_messages'): ToolDefinition | null {
  const tool = objectOf(value);
  if (tool === null) return null;
  const fn = objectOf(tool.function ?? null);
  if (surface === 'openai_chat' && tool.type === 'function' && fn !== null) {
    const name = stringOf(fn.name);
    if (name === undefined) return null;
    return functionTool(name, fn, fn.parameters, except(fn, ['name', 'description', 'parameters', 'strict']), except(tool, ['type', 'function']));
  }
  if (surface === 'anthropic_messages' && tool.type === undefined && Object.hasOwn(tool, 'name') && Object.hasOwn(tool, 'input_schema')) {
    const name = stringOf(tool.name);
    if (name === undefined) return null;
    return functionTool(name, tool, tool.input_schema, {}, except(tool, ['name', 'description', 'input_schema', 'strict']));
  }
  const kind = stringOf(tool.type) ?? 'unknown';
  // gen_ai lists a Chat or Messages provider tool only by its own `name`.
  return providerTool(surface, kind, tool, stringOf(tool.name) ?? '');
}

function except(object: JsonObject, keys: readonly string[]): JsonObject {
  const out: JsonObject = {};
  for (const [key, v] of Object.entries(object)) if (!keys.includes(key)) out[key] = v;
  return out;
}

/** A function tool, with its definition serialized in the normalized form's field order (then other fields, sorted). */
function functionTool(name: string, fn: JsonObject, parameters: Json | undefined, fnExtra: JsonObject, wrapperExtra: JsonObject): ToolDefinition {
  const description = stringOf(fn.description);
  const parts = [`"name":${JSON.stringify(name)}`];
  if (description !== undefined) parts.push(`"description":${JSON.stringify(description)}`);
  if (parameters !== undefined) parts.push(`"parameters":${sortedJson(parameters)}`);
  if (typeof fn.strict === 'boolean') parts.push(`"strict":${fn.strict}`);
  const rest = (extra: JsonObject) =>
    Object.keys(extra)
      .sort(compareKeys)
      .map((key) => `,${JSON.stringify(key)}:${sortedJson(extra[key])}`)
      .join('');
  return { name, description, parameters, type: 'function', schema: `{"type":"function","function":{${parts.join(',')}${rest(fnExtra)}}${rest(wrapperExtra)}}` };
}

/** A provider's own tool (`web_search`, ...), kept whole under its type. */
function providerTool(provider: string, kind: string, value: JsonObject, name: string): ToolDefinition {
  return { name, description: undefined, parameters: undefined, type: kind, schema: `{"type":"provider_native","provider":${JSON.stringify(provider)},"kind":${JSON.stringify(kind)},"value":${sortedJson(value)}}` };
}

/**
 * One message of a Chat Completions or Messages conversation (or a
 * response's message, `surface` undefined): its parts in order, in the
 * normalized part shapes (`refusal` as text, images, audio and files
 * wrapped as native wraps them), tool calls and results. A message native's
 * codec does not read as its role (unknown role, extra fields) is kept
 * whole, as a provider item.
 */
function readMessage(value: Json, surface?: MessagesSurface): Message | null {
  const message = objectOf(value);
  if (message === null) return null;
  const providerRole = stringOf(message.role) ?? 'user';
  const parts: Part[] = [];
  const results: ToolResult[] = [];
  const content = message.content;
  if (surface !== undefined && !readsAsRole(message, providerRole, surface)) {
    return { role: providerRole, parts, results, providerRole, separateToolCalls: false, native: { kind: providerRole, value: message } };
  }
  const named = stringOf(message.name);
  if (providerRole === 'tool') {
    // A result given as a list of parts: native's codec reads each part into its normalized form (gen_ai's response).
    if (Array.isArray(content)) {
      const normalized = content.map((part) => normalizedPart(part, 'openai_chat'));
      // The text is that form serialized as native's structs are: the kind first, native's number text.
      const text = toRustJson(normalized.map((p) => {
        const part = objectOf(p);
        return part === null ? p : { type: part.type ?? null, ...except(part, ['type']) };
      }));
      results.push({ id: stringOf(message.tool_call_id), content: text, response: normalized });
    }
    else results.push({ id: stringOf(message.tool_call_id), content: textsOf(content ?? null).join('') });
    return { role: 'tool', parts, results, providerRole, separateToolCalls: false };
  }
  // Where each tool_result block stood among the parts: beside other parts, native keeps it there (gen_ai's tool_call_response).
  const resultsAt: number[] = [];
  if (typeof content === 'string') parts.push({ kind: 'text', text: content });
  else if (Array.isArray(content)) {
    // A refusal, tool use or tool result only where the decode models that kind (a Chat `tool_use` part or a
    // Messages `refusal` block is a provider part, kept under its kind); a response's message is read for all.
    const modeled = (kind: string) => surface === undefined || partKindModeled(kind, surface);
    for (const block of content) {
      const b = objectOf(block);
      if (b === null) continue;
      if (b.type === 'text' && typeof b.text === 'string') parts.push({ kind: 'text', text: b.text });
      else if (b.type === 'refusal' && typeof b.refusal === 'string' && modeled('refusal')) parts.push({ kind: 'text', text: b.refusal });
      else if (b.type === 'tool_use' && modeled('tool_use')) parts.push({ kind: 'tool_call', call: valueToolCall(stringOf(b.id), stringOf(b.name) ?? '', b.input === undefined ? {} : b.input) });
      else if (b.type === 'tool_result' && modeled('tool_result')) {
        results.push({ id: stringOf(b.tool_use_id), content: typeof b.content === 'string' ? b.content : sortedJson(b.content ?? null), response: b.content ?? null });
        resultsAt.push(parts.length);
      }
      else parts.push({ kind: 'other', raw: shownPart(b, surface) });
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
  // Only a user's message of tool results alone is a tool message; another role keeps its results as its parts.
  const role = results.length > 0 && parts.length === 0 && providerRole === 'user' ? 'tool' : providerRole;
  if (role !== 'tool') {
    for (let i = resultsAt.length - 1; i >= 0; i--) {
      const result = results[i]!;
      const raw: JsonObject = { response: result.response !== undefined ? result.response : result.content, type: 'tool_call_response' };
      if (result.id !== undefined) raw.id = result.id;
      parts.splice(resultsAt[i]!, 0, { kind: 'other', raw });
    }
  }
  const read: Message = { role, parts, results, providerRole, separateToolCalls: Array.isArray(message.tool_calls) };
  if (typeof content === 'string') read.plainText = content;
  if (named !== undefined) read.name = named;
  return read;
}

/**
 * A conversation part as the span shows it: in the normalized form (media
 * re-wrapped), except that a part the normalized form wraps as
 * provider-native is shown as native's projections show it, as sent under
 * its kind (`unknown` for a part without a string type). A response's
 * message (no surface) is shown as sent.
 */
function shownPart(block: JsonObject, surface: NormalizedSurface | undefined): JsonObject {
  if (surface === undefined) return block;
  const normalized = normalizedPart(block, surface) as JsonObject;
  return normalized.type === 'provider_native' ? { ...block, type: normalized.kind as string } : normalized;
}

/**
 * An Anthropic Messages response's answer as native's decode reads it: the
 * texts of its `text` blocks joined by newlines as one text (so OpenInference
 * reads it as it reads content given as one string, for its display text),
 * and its `tool_use` blocks that have a text `id` and `name` and an `input`,
 * as tool calls. Nothing else is part of the answer: a refusal, thinking or
 * media block, a tool result, a block of another kind that has a `text`.
 */
function readMessagesAnswer(content: Json[]): Message {
  const texts: string[] = [];
  const calls: Part[] = [];
  for (const value of content) {
    const block = objectOf(value);
    if (block?.type === 'text' && typeof block.text === 'string') texts.push(block.text);
    else if (block?.type === 'tool_use' && typeof block.id === 'string' && typeof block.name === 'string' && block.input !== undefined) {
      calls.push({ kind: 'tool_call', call: valueToolCall(block.id, block.name, block.input) });
    }
  }
  const text = texts.length === 0 ? undefined : texts.join('\n');
  const parts: Part[] = text === undefined ? calls : [{ kind: 'text', text }, ...calls];
  return { role: 'assistant', parts, results: [], providerRole: 'assistant', separateToolCalls: false, ...(text === undefined ? {} : { plainText: text }) };
}

/**
 * A Chat Completions choice's message as native's decode reads it (one
 * `answerDecodes` accepts): its content text, then its tool calls that name
 * a function, a call without an `id` having the id `''` and one without
 * `arguments` the arguments `{}`.
 */
function readChatAnswer(value: Json): Message | null {
  const message = objectOf(value);
  if (message === null) return null;
  const content = stringOf(message.content);
  const parts: Part[] = content === undefined ? [] : [{ kind: 'text', text: content }];
  for (const value of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
    const call = objectOf(value);
    const fn = objectOf(call?.function ?? null);
    const name = stringOf(fn?.name);
    if (call === null || fn === null || name === undefined) continue;
    const id = stringOf(call.id) ?? '';
    parts.push({ kind: 'tool_call', call: typeof fn.arguments === 'string' ? toolCall(id, name, fn.arguments) : valueToolCall(id, name, {}) });
  }
  return { role: 'assistant', parts, results: [], providerRole: 'assistant', separateToolCalls: Array.isArray(message.tool_calls), ...(content === undefined ? {} : { plainText: content }) };
}

/** A tool call whose arguments are a JSON value, not JSON text (an Anthropic `tool_use` input): kept as sent, a string too. */
function valueToolCall(id: string | undefined, name: string, args: Json): ToolCall {
  return { id, name, arguments: args, argumentsText: sortedJson(args) };
}

/** A tool call whose arguments are JSON text when they are a string (Chat `function.arguments`, a Responses `function_call`). */
function toolCall(id: string | undefined, name: string, args: Json): ToolCall {
  if (typeof args === 'string') {
    // Read as native's serde parser reads it: stricter than JSON.parse (a lone surrogate escape), number texts kept.
    const parsed = parseJsonAsNative(args);
    const call: ToolCall = { id, name, arguments: parsed === undefined ? args : parsed.value, argumentsText: jsonTextOfString(args, parsed) };
    const numberText = parsed === undefined ? undefined : parsedNumberText(parsed);
    if (numberText !== undefined) call.argumentsNumberText = numberText;
    return call;
  }
  return valueToolCall(id, name, args);
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

/**
 * A string that may hold JSON, as native sends it: the JSON it holds (read by
 * serde's parser, `parseJsonAsNative`) in serde_json's text, else the string
 * itself as a JSON string. `parsed`: the caller's own parse of `text`, if any.
 */
export function jsonTextOfString(text: string, parsed = parseJsonAsNative(text)): string {
  if (parsed === undefined) return JSON.stringify(text);
  return parsedNumberText(parsed) ?? sortedJson(parsed.value);
}

/**
 * JSON text as native's serde_json writes it (`canonicalJson`): keys in
 * code-point order, integer-like ones included (a JS object lists those
 * first), and native's number forms.
 */
export function sortedJson(value: unknown): string {
  return canonicalJson(value as Json);
}

/** Thrown where native's Responses codec rejects a request: it then reads nothing of it. */
class Undecodable extends Error {}

const EMPTY_REQUEST = (model: string | undefined): LlmRequestView => ({ surface: 'openai_responses', model, system: [], messages: [], tools: [], parameters: {} });

/**
 * An OpenAI Responses request, as native's codec reads it: `instructions`
 * as the system text, `input` (a string, or a list of messages,
 * `function_call` and `function_call_output` items and provider items such
 * as reasoning), the function and provider tools, and `temperature`,
 * `max_output_tokens` and `top_p`. A request the codec rejects (a message
 * without content, an input that is neither text nor a list, ...) reads as
 * empty, as on native.
 */
function readResponsesRequest(content: JsonObject): LlmRequestView {
  const model = stringOf(content.model);
  try {
    const input = content.input;
    if (input === undefined) throw new Undecodable();
    let messages: Message[];
    if (typeof input === 'string') messages = [{ role: 'user', parts: [{ kind: 'text', text: input }], results: [], providerRole: 'user', separateToolCalls: false, plainText: input }];
    else if (Array.isArray(input)) messages = input.map(readResponsesItem);
    else throw new Undecodable();
    // A top-level field of the wrong type rejects the request; the ones read here are then of their type.
    if (!requestFieldsTyped(content, 'openai_responses')) throw new Undecodable();
    const instructions = content.instructions;
    const parameters: JsonObject = {};
    for (const key of ['temperature', 'max_output_tokens', 'top_p', 'stream']) {
      const value = content[key];
      if (value !== undefined && value !== null) parameters[key] = value;
    }
    const tools = content.tools === undefined || content.tools === null ? [] : Array.isArray(content.tools) ? content.tools.map(readResponsesTool) : undefinedTools();
    return { surface: 'openai_responses', model, system: typeof instructions === 'string' ? [instructions] : [], ...(typeof instructions === 'string' ? { systemText: instructions } : {}), messages, tools, parameters };
  } catch (error) {
    // As a rejected Chat or Messages request: nothing of it, not even its model (the span names the payload's).
    if (error instanceof Undecodable) return EMPTY_REQUEST(undefined);
    throw error;
  }
}

function undefinedTools(): never {
  throw new Undecodable();
}

function readResponsesItem(value: Json): Message {
  const item = objectOf(value);
  if (item === null) throw new Undecodable();
  const nativeItem = (kind: string): Message => {
    const role = stringOf(item.role) ?? 'provider_native';
    return { role, parts: [], results: [], providerRole: role, separateToolCalls: false, native: { kind, value: item } };
  };
  const role = stringOf(item.role);
  if (role !== undefined) {
    if (Object.keys(item).some((key) => !RESPONSES_MESSAGE_FIELDS.includes(key))) return nativeItem('message');
    const content = item.content;
    if (content === undefined) throw new Undecodable();
    const parts = readResponsesContent(content);
    if (!RESPONSES_MESSAGE_ROLES.includes(role)) return nativeItem('message');
    const message: Message = { role, parts, results: [], providerRole: role, separateToolCalls: false };
    if (typeof content === 'string') message.plainText = content;
    return message;
  }
  const kind = stringOf(item.type) ?? 'unknown';
  if (kind === 'function_call') {
    const callId = stringOf(item.call_id);
    const name = stringOf(item.name);
    const args = stringOf(item.arguments);
    if (callId === undefined || name === undefined || args === undefined) throw new Undecodable();
    if (item.id !== undefined && item.id !== null && typeof item.id !== 'string') throw new Undecodable();
    return { role: 'assistant', parts: [{ kind: 'tool_call', call: toolCall(callId, name, args) }], results: [], providerRole: 'assistant', separateToolCalls: false };
  }
  if (kind === 'function_call_output') {
    const callId = stringOf(item.call_id);
    if (callId === undefined || item.output === undefined) throw new Undecodable();
    if (item.id !== undefined && item.id !== null && typeof item.id !== 'string') throw new Undecodable();
    const output = typeof item.output === 'string' ? item.output : sortedJson(item.output);
    return { role: 'tool', parts: [], results: [{ id: callId, content: output, response: item.output }], providerRole: 'tool', separateToolCalls: false };
  }
  return nativeItem(kind);
}

/** A Responses message's content: input and output text, refusals (as text), images and files, anything else as sent. */
function readResponsesContent(content: Json): Part[] {
  if (typeof content === 'string') return [{ kind: 'text', text: content }];
  if (!Array.isArray(content)) throw new Undecodable();
  return content.map((value): Part => {
    if (!responsesPartDecodes(value)) throw new Undecodable();
    const part = value as JsonObject;
    if (part.type === 'input_text' || part.type === 'output_text') return { kind: 'text', text: part.text as string };
    if (part.type === 'refusal') return { kind: 'text', text: part.refusal as string };
    return { kind: 'other', raw: shownPart(part, 'openai_responses') };
  });
}

/** A Responses tool: a function (flat, or nested under `function`) or a provider tool (`web_search`, ...). */
function readResponsesTool(value: Json): ToolDefinition {
  const tool = objectOf(value);
  if (tool === null) throw new Undecodable();
  if (tool.type !== 'function') {
    const kind = stringOf(tool.type) ?? 'unknown';
    return providerTool('openai_responses', kind, tool, stringOf(tool.name) ?? kind);
  }
  const nested = objectOf(tool.function ?? null);
  const fn = nested ?? tool;
  const name = stringOf(fn.name);
  if (name === undefined || !functionFieldsDecode(fn)) throw new Undecodable();
  return functionTool(name, fn, fn.parameters, except(fn, ['type', 'name', 'description', 'parameters', 'strict', 'function']), nested === null ? {} : except(tool, ['type', 'function']));
}

/**
 * A Responses response, as native's codec reads it: the text of its output
 * messages (and `output_text` items) joined by newlines, else a top-level
 * `output_text`; its `function_call` items as tool calls; the finish reason
 * from `status` (`completed`, or why it is `incomplete`); usage with the
 * cached input tokens.
 */
function readResponsesResponse(response: JsonObject, reading: CountReading): LlmResponseView {
  const texts: string[] = [];
  const parts: Part[] = [];
  for (const item of Array.isArray(response.output) ? response.output : []) {
    const o = objectOf(item);
    if (o === null) continue;
    if (o.type === 'message' && Array.isArray(o.content)) {
      for (const block of o.content) {
        const b = objectOf(block);
        if (b?.type === 'output_text' && typeof b.text === 'string') texts.push(b.text);
      }
    } else if (o.type === 'output_text' && typeof o.text === 'string') texts.push(o.text);
    else if (o.type === 'function_call') {
      const args = stringOf(o.arguments);
      parts.push({ kind: 'tool_call', call: args === undefined ? { id: stringOf(o.call_id) ?? '', name: stringOf(o.name) ?? '', arguments: {}, argumentsText: '{}' } : toolCall(stringOf(o.call_id) ?? '', stringOf(o.name) ?? '', args) });
    }
  }
  let text: string | undefined = texts.length === 0 ? undefined : texts.join('\n');
  if (text === undefined && typeof response.output_text === 'string' && response.output_text !== '') text = response.output_text;
  const message: Message | null =
    text === undefined && parts.length === 0 ? null : { role: 'assistant', parts: [...(text === undefined ? [] : [{ kind: 'text' as const, text }]), ...parts], results: [], providerRole: 'assistant', separateToolCalls: false, ...(text === undefined ? {} : { plainText: text }) };
  const usage = shapedUsage(response, 'openai_responses', reading) ?? readUsage(response.usage ?? null);
  const reasoning = tokenCount(objectOf(objectOf(response.usage ?? null)?.output_tokens_details ?? null)?.reasoning_tokens);
  if (reasoning !== undefined) usage.reasoning = reasoning;
  return { recognized: true, id: stringOf(response.id), model: stringOf(response.model), message, finishReason: responsesFinishReason(response), usage };
}

/** `status` as a finish reason: `completed` is a stop; `incomplete` says why (`max_output_tokens` is a length stop). */
function responsesFinishReason(response: JsonObject): string | undefined {
  const status = stringOf(response.status);
  if (status === undefined) return undefined;
  if (status === 'completed') return 'stop';
  if (status !== 'incomplete') return status;
  const reason = stringOf(objectOf(response.incomplete_details ?? null)?.reason);
  if (reason === 'max_output_tokens') return 'length';
  return reason ?? 'incomplete';
}

/**
 * A Gemini answer, as native's codec reads it (`formats/gemini.ts`): the
 * first candidate's text parts (thoughts left out) and function calls (a
 * call's id is its own, else the function's name), its other parts under
 * their kinds, the finish reason mapped, `usageMetadata`'s counts (for
 * openinference, `reading`: native's names over `usage` for what it leaves
 * unstated). An answer the decode rejects gives none of these, nor its id or
 * model; openinference still reads the counts by native's names.
 */
function readGeminiResponse(response: JsonObject, reading: CountReading): LlmResponseView {
  const answer = geminiAnswer(response);
  if (answer === undefined) return unreadResponse(response, reading);
  const named = reading === 'shape' ? undefined : responseCounts(response);
  const own = answer.usage ?? {};
  const input = own.prompt ?? named?.input;
  const output = own.completion ?? named?.output;
  // openinference states a total: the answer's, else the sum of the prompt, output and thoughts counts it has, else one by native's names.
  const sum = own.prompt === undefined && own.completion === undefined ? undefined : (own.prompt ?? 0) + (own.completion ?? 0) + (own.reasoning ?? 0);
  const total = own.total ?? (reading === 'shape' ? undefined : (sum ?? named?.total));
  const usage: Usage = { input, output, total: reading === 'shape' ? own.total : total, cacheRead: own.cacheRead ?? named?.cacheRead, cacheWrite: named?.cacheWrite };
  if (own.reasoning !== undefined) usage.reasoning = own.reasoning;
  const finish = answer.finish;
  const view: LlmResponseView = { recognized: true, id: answer.id, model: answer.model, message: geminiMessage(answer), finishReason: finish === undefined ? undefined : 'mapped' in finish ? finish.mapped : finish.asSent, usage, keepsOtherParts: true };
  if (finish !== undefined && 'asSent' in finish) view.finishAsSent = true;
  return view;
}

function geminiMessage(answer: GeminiAnswer): Message | null {
  return answer.content === undefined && answer.calls.length === 0 ? null : geminiTurn('assistant', answer.content, answer.calls);
}

/**
 * A response native reads with no codec, though it has a provider's shape
 * (a Gemini answer its decode rejects, or one of several shapes at once):
 * no message, id, model or finish reason; openinference reads the counts
 * by native's names over `usage` and `token_usage`, gen_ai none.
 */
function unreadResponse(response: JsonObject, reading: CountReading): LlmResponseView {
  const named = reading === 'shape' ? undefined : responseCounts(response);
  const usage = { input: named?.input, output: named?.output, total: named?.total, cacheRead: named?.cacheRead, cacheWrite: named?.cacheWrite };
  return { recognized: false, id: undefined, model: undefined, message: null, finishReason: undefined, usage };
}

/**
 * A Gemini request, as native's codec reads it (`formats/gemini.ts`): the
 * system instruction as a first `system` message, each turn as a message
 * (`model` as `assistant`, its function calls after its content), each
 * function result as a tool message, the function declarations and provider
 * tools, `generationConfig` as the parameters. A request the codec rejects
 * reads as empty (the span names the payload's model).
 */
function readGeminiRequest(content: JsonObject): LlmRequestView {
  const request = geminiRequest(content);
  if (request === undefined) return { ...EMPTY_REQUEST(undefined), surface: 'gemini_generate_content' };
  return { surface: 'gemini_generate_content', model: request.model, system: [], messages: request.messages.map(geminiRequestMessage), tools: request.tools.flatMap(geminiTool), parameters: request.parameters };
}

function geminiRequestMessage(message: GeminiRequestMessage): Message {
  if (message.role === 'tool') {
    // The response object as serde_json's text: gen_ai's `response` and openinference's content alike.
    const text = sortedJson(message.response);
    return { role: 'tool', parts: [], results: [{ id: message.id, content: text, response: text }], providerRole: 'tool', separateToolCalls: false };
  }
  return geminiTurn(message.role, message.content, message.calls);
}

/** A turn or an answer: its content (one text, read like a Chat string's, or its parts in order), then its function calls. */
function geminiTurn(role: string, content: GeminiContent, calls: readonly GeminiCall[]): Message {
  const parts: Part[] = content === undefined ? [] : 'text' in content ? [{ kind: 'text', text: content.text }] : content.parts.map(geminiPart);
  for (const call of calls) parts.push({ kind: 'tool_call', call: toolCall(call.id, call.name, call.args) });
  const message: Message = { role, parts, results: [], providerRole: role, separateToolCalls: false };
  if (content !== undefined && 'text' in content) message.plainText = content.text;
  return message;
}

function geminiPart(part: GeminiPart): Part {
  return part.kind === 'text' ? { kind: 'text', text: part.text } : part.kind === 'call' ? { kind: 'tool_call', call: toolCall(part.call.id, part.call.name, part.call.args) } : { kind: 'other', raw: part.shown };
}

/** A function declaration as the normalized form writes it; a tool object's provider tools as one tool of its first kind (gen_ai names each kind). */
function geminiTool(tool: GeminiTool): ToolDefinition[] {
  if (tool.kind === 'function') {
    const fn = tool.declaration;
    return [functionTool(fn.name, fn, fn.parameters, except(fn, ['name', 'description', 'parameters']), {})];
  }
  const definition = providerTool('gemini', tool.kinds[0] ?? 'unknown', tool.value, tool.kinds[0] ?? '');
  return [{ ...definition, ...(tool.kinds.length > 1 ? { alsoNamed: tool.kinds.slice(1) } : {}) }];
}
