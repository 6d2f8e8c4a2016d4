/**
 * The request half of an LLM cache key, as native 0.9.2 builds it, so that
 * `key_hash` in the `response_cache` marks has native's value.
 *
 * Native keys a request on its codec's normalized form when the request's
 * provider surface is recognised and the normalization is known to be
 * faithful: the conversation, tools and tool choice must come back exactly
 * as sent (otherwise, and for shapes its codecs are known to lose detail
 * on, it keys the raw body). The document it hashes also names the codec
 * that produced the body and, for Chat Completions, which token-cap field
 * the caller used (the codec folds both into one).
 *
 * This module reproduces that for OpenAI Chat Completions, Anthropic
 * Messages and OpenAI Responses: a faithful request is re-shaped the way
 * native's normalized form serializes (generation parameters grouped under
 * `params`, provider-only fields under `api_specific`, unknown fields kept
 * at the top). A request native would normalize on another surface
 * (Gemini) is keyed on its raw body with the codec left out: the same
 * requests hit and miss as on native, under a different hash value
 * (docs/operators/cache.md).
 *
 * @module
 */

import { isNativeInteger } from '../../formats/native-text/numbers.ts';
import type { Json, JsonObject } from '../../shared/json.ts';
import { isJsonObject } from '../../shared/json.ts';
import {
  firstParam,
  functionFieldsDecode,
  keptAsSent,
  PARAM_FIELDS,
  stopList,
  type NormalizedSurface,
  readsAsRole,
  requestSurface,
  responsesPartDecodes,
  RESPONSES_MESSAGE_ROLES,
} from '../../formats/request-codecs.ts';

export interface KeyedRequest {
  /** What the key hashes for the request body. */
  body: Json;
  /** The codec whose normalized form `body` is, or null for the raw body. */
  codec: string | null;
  /** Chat Completions only: `max_tokens` or `max_completion_tokens` when exactly one was sent. */
  tokenCap: string | null;
}

export function keyedRequest(provider: string, content: Json): KeyedRequest {
  const surface = requestSurface(content, provider);
  let tokenCap: string | null = null;
  if (surface === 'openai_chat' && isJsonObject(content)) {
    const maxTokens = Object.hasOwn(content, 'max_tokens');
    const maxCompletion = Object.hasOwn(content, 'max_completion_tokens');
    if (maxTokens !== maxCompletion) tokenCap = maxTokens ? 'max_tokens' : 'max_completion_tokens';
  }
  let normalized: JsonObject | null = null;
  if (isJsonObject(content)) {
    try {
      if (surface === 'openai_chat') normalized = normalizedChat(content);
      else if (surface === 'anthropic_messages') normalized = normalizedMessages(content);
      else if (surface === 'openai_responses') normalized = normalizedResponses(content);
    } catch (error) {
      if (!(error instanceof NotFaithful)) throw error;
    }
  }
  return normalized === null ? { body: content, codec: null, tokenCap } : { body: normalized, codec: surface!, tokenCap };
}

/**
 * Thrown inside a normalization where native's decode fails. The raw body
 * is keyed then, as it is where the decode succeeds but does not give the
 * request back as sent (a false below): the two are told apart only to
 * say which is which.
 */
class NotFaithful extends Error {}

const CHAT_TOP_LEVEL = ['store', 'user', 'metadata', 'service_tier', 'parallel_tool_calls', 'top_logprobs', 'stream'] as const;
const CHAT_SPECIFIC = [
  'audio', 'frequency_penalty', 'function_call', 'functions', 'logit_bias', 'logprobs', 'modalities', 'moderation', 'n', 'prediction', 'presence_penalty',
  'prompt_cache_key', 'prompt_cache_options', 'prompt_cache_retention', 'reasoning_effort', 'response_format', 'safety_identifier', 'seed', 'stream_options',
  'verbosity', 'web_search_options',
] as const;
const MODELED = new Set<string>(['messages', 'model', 'temperature', 'max_tokens', 'max_completion_tokens', 'top_p', 'stop', 'tools', 'tool_choice', ...CHAT_TOP_LEVEL, ...CHAT_SPECIFIC]);

type Check = (value: Json) => boolean;
const isString: Check = (v) => typeof v === 'string';
const isNumber: Check = (v) => typeof v === 'number';
const isBool: Check = (v) => typeof v === 'boolean';
// A number reaches native's decode as an integer only when the binding hands it over as one (`isNativeInteger`);
// any other arrives as a float, which an integer field refuses: the decode fails and the raw body is keyed.
const isCount: Check = (v) => typeof v === 'number' && isNativeInteger(v) && v >= 0;
const isInteger: Check = (v) => typeof v === 'number' && isNativeInteger(v);
const isObject: Check = (v) => isJsonObject(v);
const isArray: Check = (v) => Array.isArray(v);
const isStrings: Check = (v) => Array.isArray(v) && v.every((s) => typeof s === 'string');

/** How native's Chat decode types each optional field (a null is "absent"; any other wrong type fails the decode). */
const FIELD_TYPES: Record<string, Check> = {
  model: isString, store: isBool, user: isString, service_tier: isString, parallel_tool_calls: isBool, top_logprobs: isCount, stream: isBool,
  frequency_penalty: isNumber, functions: isArray, logprobs: isBool, modalities: isStrings, n: isCount, presence_penalty: isNumber,
  prompt_cache_key: isString, prompt_cache_retention: isString, reasoning_effort: isString, safety_identifier: isString, seed: isInteger, verbosity: isString,
  metadata: isObject, audio: isObject, logit_bias: isObject, moderation: isObject, prediction: isObject, prompt_cache_options: isObject,
  response_format: isObject, stream_options: isObject, web_search_options: isObject,
};

/** The Chat request as native's normalized form serializes it, or null when native keys the raw body. */
function normalizedChat(content: JsonObject): JsonObject | null {
  if (lossyChat(content)) return null;
  {
    const messages = content.messages;
    if (!Array.isArray(messages)) throw new NotFaithful();
    // The conversation must survive the decode unchanged.
    for (const message of messages) if (!faithfulMessage(message)) return null;
    const present = (key: string): Json | undefined => {
      const value = content[key];
      if (value === undefined || value === null) return undefined;
      if (FIELD_TYPES[key] !== undefined && !FIELD_TYPES[key]!(value)) throw new NotFaithful();
      return value;
    };
    if (content.tools !== undefined) {
      if (!Array.isArray(content.tools)) throw new NotFaithful();
      for (const tool of content.tools) if (!faithfulTool(tool)) return null;
    }
    if (content.tool_choice !== undefined && !faithfulToolChoice(content.tool_choice)) return null;

    const out: JsonObject = { messages };
    const model = present('model');
    if (model !== undefined) out.model = model;
    const params = normalizedParams(content, 'openai_chat');
    if (params !== undefined) out.params = params;
    if (content.tools !== undefined) out.tools = content.tools;
    if (content.tool_choice !== undefined) out.tool_choice = content.tool_choice;
    for (const key of CHAT_TOP_LEVEL) {
      const value = present(key);
      if (value !== undefined) out[key] = value;
    }
    const specific: JsonObject = { api: 'openai_chat' };
    for (const key of CHAT_SPECIFIC) {
      // `function_call` is kept as sent, a null included.
      const value = key === 'function_call' ? content.function_call : present(key);
      if (value !== undefined) specific[key] = value;
    }
    out.api_specific = specific;
    for (const [key, value] of Object.entries(content)) if (!MODELED.has(key)) out[key] = value;
    return out;
  }
}

const wrongType = (content: JsonObject, key: string, check: Check) => Object.hasOwn(content, key) && !check(content[key]!);

/** Shapes native knows every decode loses detail on (keyed raw): a `params` object, mistyped generation fields. */
function lossyAny(content: JsonObject): boolean {
  if (Object.hasOwn(content, 'params')) return true;
  if (wrongType(content, 'temperature', isNumber) || wrongType(content, 'top_p', isNumber) || wrongType(content, 'parallel_tool_calls', isBool)) return true;
  return ['max_tokens', 'max_completion_tokens', 'max_output_tokens', 'top_logprobs'].some((key) => wrongType(content, key, isCount));
}

/** ... and the Chat decode: a stop that is not a list of strings, both token caps. */
function lossyChat(content: JsonObject): boolean {
  if (lossyAny(content) || wrongType(content, 'stop', isStrings)) return true;
  return Object.hasOwn(content, 'max_tokens') && Object.hasOwn(content, 'max_completion_tokens');
}

/** The normalized form's generation `params`, as sent (a mistyped one made the request lossy before this), or undefined for none. */
function normalizedParams(content: JsonObject, surface: NormalizedSurface): JsonObject | undefined {
  const params: JsonObject = {};
  for (const [param, fields] of Object.entries(PARAM_FIELDS[surface])) {
    const value = firstParam(content, fields, (v) => (v === null ? undefined : v));
    if (value !== undefined) params[param] = param === 'stop' ? (stopList(value, surface) ?? value) : value;
  }
  return Object.keys(params).length > 0 ? params : undefined;
}

/** A field of the request, null read as absent; a present value of the wrong type fails the decode. */
function field(content: JsonObject, key: string, check?: Check): Json | undefined {
  const value = content[key];
  if (value === undefined || value === null) return undefined;
  if (check !== undefined && !check(value)) throw new NotFaithful();
  return value;
}

const MESSAGES_SPECIFIC: readonly [string, string, Check][] = [
  ['cache_control', 'cache_control', isObject], ['container', 'container', isString], ['inference_geo', 'inference_geo', isString],
  ['output_config', 'output_config', isObject], ['thinking', 'thinking', isObject], ['top_k', 'top_k', isCount], ['anthropic-user-profile-id', 'user_profile_id', isString],
];
const MESSAGES_MODELED = new Set(['system', 'messages', 'model', 'max_tokens', 'temperature', 'top_p', 'stop_sequences', 'tools', 'tool_choice', 'metadata', 'service_tier', 'stream', ...MESSAGES_SPECIFIC.map(([key]) => key)]);

/**
 * The Anthropic Messages request as native's normalized form serializes it,
 * or null when native keys the raw body: `system` becomes `instructions`;
 * tool definitions and a tool choice never come back as sent (raw).
 */
function normalizedMessages(content: JsonObject): JsonObject | null {
  if (lossyAny(content) || wrongType(content, 'stop_sequences', isStrings)) return null;
  if (Array.isArray(content.system) && content.system.some((block) => !isJsonObject(block) || block.type !== 'text' || typeof block.text !== 'string' || !only(block, ['type', 'text', 'cache_control']))) return null;
  const messages = content.messages;
  if (!Array.isArray(messages)) throw new NotFaithful();
  for (const message of messages) if (!faithfulMessagesMessage(message)) return null;
  if (content.system !== undefined && typeof content.system !== 'string' && !Array.isArray(content.system)) throw new NotFaithful();
  if (content.tools !== undefined && !(Array.isArray(content.tools) && content.tools.length === 0)) return null;
  if (content.tool_choice !== undefined) return null;
  const out: JsonObject = { messages };
  if (content.system !== undefined) out.instructions = content.system;
  const model = field(content, 'model', isString);
  if (model !== undefined) out.model = model;
  const params = normalizedParams(content, 'anthropic_messages');
  if (params !== undefined) out.params = params;
  if (content.tools !== undefined) out.tools = content.tools;
  for (const [key, check] of [['metadata', isObject], ['service_tier', isString], ['stream', isBool]] as const) {
    const value = field(content, key, check);
    if (value !== undefined) out[key] = value;
  }
  const specific: JsonObject = { api: 'anthropic_messages' };
  for (const [from, to, check] of MESSAGES_SPECIFIC) {
    const value = field(content, from, check);
    if (value !== undefined) specific[to] = value;
  }
  out.api_specific = specific;
  for (const [key, value] of Object.entries(content)) if (!MESSAGES_MODELED.has(key)) out[key] = value;
  return out;
}

/** A Messages message the decode gives back unchanged: `role` and `content` only, text, tool_use and tool_result blocks. */
function faithfulMessagesMessage(message: Json): boolean {
  if (!isJsonObject(message) || typeof message.role !== 'string' || message.content === undefined) throw new NotFaithful();
  if (!readsAsRole(message, message.role, 'anthropic_messages')) return false;
  const content = message.content;
  if (typeof content === 'string') return true;
  if (!Array.isArray(content)) throw new NotFaithful();
  return content.every((block) => {
    if (!isJsonObject(block)) throw new NotFaithful();
    if (block.type === 'text' && typeof block.text !== 'string') throw new NotFaithful();
    if (block.type === 'tool_use' && (typeof block.id !== 'string' || typeof block.name !== 'string' || block.input === undefined)) throw new NotFaithful();
    if (block.type === 'tool_result') {
      if (typeof block.tool_use_id !== 'string' || block.content === undefined) throw new NotFaithful();
      // The decode reads a null `is_error` as absent and does not write it back.
      if (block.is_error === null) return false;
      if (block.is_error !== undefined && typeof block.is_error !== 'boolean') throw new NotFaithful();
    }
    // Images and documents are re-wrapped, anything else becomes provider-native.
    return keptAsSent(block, 'anthropic_messages');
  });
}

const only = (object: JsonObject, keys: readonly string[]) => Object.keys(object).every((key) => keys.includes(key));

/** A message native's Chat decode gives back unchanged (throws where the decode itself fails). */
function faithfulMessage(message: Json): boolean {
  if (!isJsonObject(message) || typeof message.role !== 'string') throw new NotFaithful();
  const { role } = message;
  // An unknown role or a field its role does not have: kept whole, as a provider item.
  if (!readsAsRole(message, role, 'openai_chat')) return false;
  if (role === 'system' || role === 'developer' || role === 'user') {
    if (message.content === undefined) throw new NotFaithful();
    return faithfulContent(message.content) && optionalName(message);
  }
  if (role === 'assistant') {
    // A null content or tool list is dropped by the decode.
    if (message.content === null || message.tool_calls === null) return false;
    if (message.content !== undefined && !faithfulContent(message.content)) return false;
    if (message.tool_calls !== undefined) {
      if (!Array.isArray(message.tool_calls)) throw new NotFaithful();
      if (!message.tool_calls.every(faithfulToolCall)) return false;
    }
    return optionalName(message);
  }
  if (role === 'tool') {
    if (message.content === undefined || typeof message.tool_call_id !== 'string') throw new NotFaithful();
    return faithfulContent(message.content);
  }
  // A legacy `function` message, the last role the decode knows.
  if (typeof message.name !== 'string') throw new NotFaithful();
  if (message.content !== undefined && message.content !== null && typeof message.content !== 'string') throw new NotFaithful();
  // The decoded content is written back even when absent (as null).
  return message.content !== undefined;
}

function optionalName(message: JsonObject): boolean {
  if (message.name === undefined) return true;
  if (message.name === null) return false;
  if (typeof message.name !== 'string') throw new NotFaithful();
  return true;
}

function faithfulContent(content: Json): boolean {
  if (typeof content === 'string') return true;
  if (!Array.isArray(content)) throw new NotFaithful();
  return content.every((part) => {
    if (!isJsonObject(part)) throw new NotFaithful();
    if (part.type === 'text' && typeof part.text !== 'string') throw new NotFaithful();
    if (part.type === 'refusal' && typeof part.refusal !== 'string') throw new NotFaithful();
    if (part.type === 'file' && part.file === undefined) throw new NotFaithful();
    if (part.type === 'input_audio' && part.input_audio === undefined) throw new NotFaithful();
    if (part.type === 'image_url') {
      const image = part.image_url;
      if (!isJsonObject(image) || typeof image.url !== 'string') throw new NotFaithful();
      if (image.detail !== undefined && image.detail !== null && typeof image.detail !== 'string') throw new NotFaithful();
    }
    // Audio is renamed, an image keeps only its url and detail, anything else is wrapped as provider-native.
    return keptAsSent(part, 'openai_chat');
  });
}

/** A tool call the decode reads as a function call (`readsAsRole` checked its shape) and gives back unchanged. */
function faithfulToolCall(call: Json): boolean {
  if (!isJsonObject(call)) throw new NotFaithful();
  const fn = call.function;
  if (!isJsonObject(fn)) throw new NotFaithful();
  if (!only(fn, ['name', 'arguments'])) return false;
  if (typeof call.id !== 'string' || typeof fn.name !== 'string' || typeof fn.arguments !== 'string') throw new NotFaithful();
  return true;
}

function faithfulTool(tool: Json): boolean {
  if (!isJsonObject(tool)) throw new NotFaithful();
  if (tool.type !== 'function') return false;
  const fn = tool.function;
  if (!isJsonObject(fn) || typeof fn.name !== 'string' || !functionFieldsDecode(fn)) throw new NotFaithful();
  // The decode reads a null description or strict as absent and does not write it back.
  return fn.description !== null && fn.strict !== null;
}

function faithfulToolChoice(choice: Json): boolean {
  if (choice === 'auto' || choice === 'none' || choice === 'required') return true;
  if (!isJsonObject(choice) || choice.type !== 'function' || !only(choice, ['type', 'function'])) return false;
  return isJsonObject(choice.function) && only(choice.function, ['name']) && typeof choice.function.name === 'string';
}

/** Tool-call ids renumbered in first-seen order (`tcid_0`, ...), so random ids do not cause misses. */
export function renumberToolCallIds(body: JsonObject): JsonObject {
  if (!Array.isArray(body.messages)) return body;
  const ids = new Map<string, string>();
  const stable = (id: Json): Json => {
    if (typeof id !== 'string') return id;
    let mapped = ids.get(id);
    if (mapped === undefined) {
      mapped = `tcid_${ids.size}`;
      ids.set(id, mapped);
    }
    return mapped;
  };
  const messages = body.messages.map((message) => {
    if (!isJsonObject(message)) return message;
    const out: JsonObject = { ...message };
    if (Array.isArray(out.tool_calls)) out.tool_calls = out.tool_calls.map((call) => (isJsonObject(call) && Object.hasOwn(call, 'id') ? { ...call, id: stable(call.id!) } : call));
    if (Object.hasOwn(out, 'tool_call_id')) out.tool_call_id = stable(out.tool_call_id!);
    return out;
  });
  return { ...body, messages };
}

const RESPONSES_TOP_LEVEL: readonly [string, Check | null][] = [
  ['store', isBool], ['previous_response_id', isString], ['truncation', null], ['reasoning', isObject], ['include', isArray], ['user', isString],
  ['metadata', isObject], ['service_tier', isString], ['parallel_tool_calls', isBool], ['max_output_tokens', isCount], ['max_tool_calls', isCount],
  ['top_logprobs', isCount], ['stream', isBool],
];
const RESPONSES_SPECIFIC: readonly [string, Check | null][] = [
  ['background', isBool], ['context_management', isArray], ['conversation', null], ['moderation', isObject], ['prompt', isObject], ['prompt_cache_key', isString],
  ['prompt_cache_options', isObject], ['prompt_cache_retention', isString], ['safety_identifier', isString], ['stream_options', isObject], ['text', isObject],
];
const RESPONSES_MODELED = new Set(['input', 'instructions', 'model', 'temperature', 'top_p', 'tools', 'tool_choice', ...RESPONSES_TOP_LEVEL.map(([key]) => key), ...RESPONSES_SPECIFIC.map(([key]) => key)]);

/**
 * The Responses request as native's normalized form serializes it, or null
 * when native keys the raw body: only an `input` list of plain `{role,
 * content}` messages comes back as sent (typed items and text parts are
 * renamed), and only function tools nested under `function`.
 */
function normalizedResponses(content: JsonObject): JsonObject | null {
  if (lossyAny(content)) return null;
  const input = content.input;
  if (!Array.isArray(input)) return null;
  for (const item of input) if (!faithfulResponsesItem(item)) return null;
  if (content.instructions !== undefined && content.instructions !== null && typeof content.instructions !== 'string') throw new NotFaithful();
  if (content.tools !== undefined) {
    if (!Array.isArray(content.tools)) throw new NotFaithful();
    for (const tool of content.tools) if (!faithfulTool(tool)) return null;
  }
  if (content.tool_choice !== undefined && !faithfulToolChoice(content.tool_choice)) return null;
  const out: JsonObject = { messages: input };
  const instructions = field(content, 'instructions');
  if (instructions !== undefined) out.instructions = instructions;
  const model = field(content, 'model', isString);
  if (model !== undefined) out.model = model;
  const params = normalizedParams(content, 'openai_responses');
  if (params !== undefined) out.params = params;
  if (content.tools !== undefined) out.tools = content.tools;
  if (content.tool_choice !== undefined) out.tool_choice = content.tool_choice;
  // `truncation` and `conversation` are kept as sent, a null included.
  for (const [key, check] of RESPONSES_TOP_LEVEL) {
    const value = check === null ? content[key] : field(content, key, check);
    if (value !== undefined) out[key] = value;
  }
  const specific: JsonObject = { api: 'openai_responses' };
  for (const [key, check] of RESPONSES_SPECIFIC) {
    const value = check === null ? content[key] : field(content, key, check);
    if (value !== undefined) specific[key] = value;
  }
  out.api_specific = specific;
  for (const [key, value] of Object.entries(content)) if (!RESPONSES_MODELED.has(key)) out[key] = value;
  return out;
}

/** A Responses input item the decode gives back unchanged: `{role, content}` with text content (or refusals). */
function faithfulResponsesItem(item: Json): boolean {
  if (!isJsonObject(item)) throw new NotFaithful();
  if (typeof item.role !== 'string') return false;
  // Stricter than what the decode reads as a message (RESPONSES_MESSAGE_FIELDS, which the OTLP reader
  // uses): a `type: "message"` is read but not written back, so a typed message does not come back as sent.
  if (!only(item, ['role', 'content'])) return false;
  if (item.content === undefined) throw new NotFaithful();
  if (!RESPONSES_MESSAGE_ROLES.includes(item.role)) return false;
  const content = item.content;
  if (typeof content === 'string') return true;
  if (!Array.isArray(content)) throw new NotFaithful();
  return content.every((part) => {
    if (!responsesPartDecodes(part)) throw new NotFaithful();
    // Only refusals: text parts are renamed, images and files re-wrapped, anything else wrapped as provider-native.
    return keptAsSent(part, 'openai_responses');
  });
}
