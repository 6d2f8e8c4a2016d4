/**
 * What native's request codecs make of an LLM request body (OpenAI Chat
 * Completions, Anthropic Messages, OpenAI Responses): which provider shape
 * a request has, which messages a decode reads as their role (it keeps the
 * others whole, as provider items), where a decode rejects a content part
 * or a function definition, and the form its normalized request gives each
 * content part.
 *
 * Two readers apply these rules to different ends, so each rule is written
 * here once: the response cache's key document
 * (`components/cache/request-key.ts`) asks whether the normalized form
 * gives a request back exactly as sent, and the OTLP request reader
 * (`export/otlp/mappings/llm-shapes.ts`) renders what the normalized form
 * says. Where a reader applies a rule differently on purpose, it says why
 * at that place.
 *
 * @module
 */

import type { Json, JsonObject } from '../shared/json.ts';
import { isJsonObject } from '../shared/json.ts';
import { isNativeInteger } from './native-text.ts';

export type RequestSurface = 'openai_responses' | 'anthropic_messages' | 'oci_genai' | 'openai_chat' | 'gemini_generate_content';
/** The two shapes whose conversation is a `messages` list. */
export type MessagesSurface = 'openai_chat' | 'anthropic_messages';
/** The shapes whose requests are normalized here. */
export type NormalizedSurface = MessagesSurface | 'openai_responses';

/**
 * Native's request-surface detection, in its order. The provider name breaks
 * the Chat/Messages tie, by its exact names only (usage.ts's
 * `isAnthropicProvider`, which also takes `claude-...` names, is another test).
 */
export function requestSurface(content: Json, provider: string | undefined): RequestSurface | undefined {
  if (!isJsonObject(content)) return undefined;
  const has = (key: string) => Object.hasOwn(content, key);
  if (has('input') || has('instructions')) return 'openai_responses';
  if (has('system') || ((provider === 'anthropic' || provider === 'anthropic.messages') && has('messages'))) return 'anthropic_messages';
  const chatRequest = isJsonObject(content.chatRequest);
  if ((chatRequest && (has('servingMode') || has('compartmentId'))) || has('apiFormat') || ((provider === 'oci' || provider === 'oci.genai') && chatRequest)) return 'oci_genai';
  if (has('messages')) return 'openai_chat';
  if (has('contents')) return 'gemini_generate_content';
  return undefined;
}

/** The fields each role's message may carry for the decode to read it as that role. */
const MESSAGE_FIELDS: Record<MessagesSurface, ReadonlyMap<string, readonly string[]>> = {
  openai_chat: new Map([
    ['system', ['role', 'content', 'name']],
    ['developer', ['role', 'content', 'name']],
    ['user', ['role', 'content', 'name']],
    ['assistant', ['role', 'content', 'tool_calls', 'name']],
    ['tool', ['role', 'content', 'tool_call_id']],
    ['function', ['role', 'content', 'name']],
  ]),
  anthropic_messages: new Map([
    ['system', ['role', 'content']],
    ['user', ['role', 'content']],
    ['assistant', ['role', 'content']],
  ]),
};

/** A Chat tool call the decode reads as a function call: `type: "function"`, nothing beyond `id`, `type` and `function`. */
export function plainToolCall(call: Json): boolean {
  return isJsonObject(call) && call.type === 'function' && Object.keys(call).every((key) => key === 'id' || key === 'type' || key === 'function');
}

/**
 * True when the decode reads `message` as `role`: a role its surface knows,
 * no field beyond that role's, and a tool-call list (Chat) of plain function
 * calls. Otherwise the decode keeps the message whole, as a provider item.
 */
export function readsAsRole(message: JsonObject, role: string, surface: MessagesSurface): boolean {
  const fields = MESSAGE_FIELDS[surface].get(role);
  if (fields === undefined || Object.keys(message).some((key) => !fields.includes(key))) return false;
  return !Array.isArray(message.tool_calls) || message.tool_calls.every(plainToolCall);
}

/**
 * False where native's Chat Completions decode rejects the whole request (its spans then carry none of the
 * request, and name the payload's model): a top-level field of the wrong type (`requestFieldsTyped`); `messages`
 * that is no list; a message that is no object or whose `role` is no string; and, in a message the decode reads
 * as its role (`readsAsRole`), a field of the wrong type: a `name` that is no string, content missing where the
 * role needs it (system, developer, user, tool) or neither text nor a list of valid parts, a tool message
 * without a text `tool_call_id`, a function message without a text `name` or with content that is no text (its
 * result is text, never parts; null will do), a tool call without a text `id`, `function.name` or
 * `function.arguments`. A part is valid when it is an object whose `text` or `refusal` is text and whose
 * `image_url` has a text `url` (and a `detail` that is text, if any) when it is of that kind, and a `file` or `input_audio` part has its field.
 */
export function chatRequestDecodes(content: JsonObject): boolean {
  if (!toolsDecode(content.tools, 'openai_chat') || !requestFieldsTyped(content, 'openai_chat')) return false;
  const messages = content.messages;
  if (messages === undefined || messages === null) return true;
  if (!Array.isArray(messages)) return false;
  return messages.every(chatMessageDecodes);
}

const CONTENT_REQUIRED: ReadonlySet<string> = new Set(['system', 'developer', 'user', 'tool']);

function chatMessageDecodes(message: Json): boolean {
  if (!isJsonObject(message) || typeof message.role !== 'string') return false;
  const role = message.role;
  if (!readsAsRole(message, role, 'openai_chat')) return true;
  if (message.name !== undefined && message.name !== null && typeof message.name !== 'string') return false;
  const content = message.content;
  if (content === undefined || content === null) {
    if (CONTENT_REQUIRED.has(role)) return false;
  } else if (role === 'function' ? typeof content !== 'string' : !chatContentDecodes(content)) return false;
  if (role === 'tool' && typeof message.tool_call_id !== 'string') return false;
  if (role === 'function' && typeof message.name !== 'string') return false;
  if (role === 'assistant' && Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) {
      const fn = isJsonObject(call) ? call.function : undefined;
      if (!isJsonObject(call) || typeof call.id !== 'string' || !isJsonObject(fn) || typeof fn.name !== 'string' || typeof fn.arguments !== 'string') return false;
    }
  } else if (role === 'assistant' && message.tool_calls !== undefined && message.tool_calls !== null) return false;
  return true;
}

function chatContentDecodes(content: Json): boolean {
  if (typeof content === 'string') return true;
  if (!Array.isArray(content)) return false;
  return content.every((part) => {
    if (!isJsonObject(part)) return false;
    if (part.type === 'text') return typeof part.text === 'string';
    if (part.type === 'refusal') return typeof part.refusal === 'string';
    if (part.type === 'image_url') return isJsonObject(part.image_url) && typeof part.image_url.url === 'string' && typed(part.image_url.detail, 'text');
    if (part.type === 'file') return part.file !== undefined;
    if (part.type === 'input_audio') return part.input_audio !== undefined;
    return true;
  });
}

/**
 * False where native's Anthropic Messages decode rejects the whole request: a top-level field of the wrong type
 * (`requestFieldsTyped`); `messages` that is no list; a message that is no object or whose `role` is no string;
 * in a message the decode reads as its role, content missing or neither text nor a list of valid blocks; a
 * `system` that is neither text nor a list of valid blocks. A block is valid when it is an object, a `text`
 * block has text, a `tool_use` block a text `id` and `name` and an `input`, and a `tool_result` block a text
 * `tool_use_id`, a `content` (null will do) and an `is_error`, if any, that is a boolean.
 */
export function anthropicRequestDecodes(content: JsonObject): boolean {
  if (!toolsDecode(content.tools, 'anthropic_messages') || !requestFieldsTyped(content, 'anthropic_messages')) return false;
  const system = content.system;
  if (system !== undefined && system !== null && typeof system !== 'string' && !(Array.isArray(system) && system.every(anthropicBlockDecodes))) return false;
  const messages = content.messages;
  if (messages === undefined || messages === null) return true;
  if (!Array.isArray(messages)) return false;
  return messages.every((message) => {
    if (!isJsonObject(message) || typeof message.role !== 'string') return false;
    if (!readsAsRole(message, message.role, 'anthropic_messages')) return true;
    const blocks = message.content;
    return typeof blocks === 'string' || (Array.isArray(blocks) && blocks.every(anthropicBlockDecodes));
  });
}

/** What a top-level request field the decode types must hold (null reads as absent). */
type FieldType = 'number' | 'count' | 'integer' | 'text' | 'bool' | 'object' | 'list' | 'texts' | 'stop';

/**
 * The top-level request fields each decode types, found by probing native
 * with a value of each wrong kind (a field not listed here, such as
 * `tool_choice`, is read leniently). A `count` is an unsigned integer as it
 * crossed the binding (a u32), an `integer` any integer that crossed as one;
 * a Chat `stop` is text or a list of texts.
 */
const TYPED_FIELDS: Record<NormalizedSurface, Readonly<Record<string, FieldType>>> = {
  openai_chat: {
    model: 'text', temperature: 'number', top_p: 'number', max_tokens: 'count', max_completion_tokens: 'count', stop: 'stop', n: 'count', seed: 'integer', stream: 'bool',
    frequency_penalty: 'number', presence_penalty: 'number', user: 'text', metadata: 'object', response_format: 'object', parallel_tool_calls: 'bool', logprobs: 'bool',
    stream_options: 'object', service_tier: 'text', reasoning_effort: 'text', logit_bias: 'object', top_logprobs: 'count', store: 'bool', modalities: 'texts', audio: 'object',
    prediction: 'object', functions: 'list', web_search_options: 'object', verbosity: 'text', prompt_cache_key: 'text', safety_identifier: 'text',
  },
  anthropic_messages: {
    model: 'text', temperature: 'number', top_p: 'number', max_tokens: 'count', stop_sequences: 'texts', stream: 'bool', top_k: 'count', metadata: 'object', thinking: 'object',
    service_tier: 'text', container: 'text',
  },
  openai_responses: {
    model: 'text', instructions: 'text', temperature: 'number', top_p: 'number', max_output_tokens: 'count', stream: 'bool', metadata: 'object', user: 'text',
    parallel_tool_calls: 'bool', store: 'bool', previous_response_id: 'text', reasoning: 'object', text: 'object', include: 'list', service_tier: 'text',
    prompt_cache_key: 'text', safety_identifier: 'text', background: 'bool', max_tool_calls: 'count', top_logprobs: 'count', prompt: 'object', stream_options: 'object',
  },
};

function typed(value: Json | undefined, type: FieldType): boolean {
  if (value === undefined || value === null) return true;
  if (type === 'number') return typeof value === 'number';
  if (type === 'count' || type === 'integer') return typeof value === 'number' && isNativeInteger(value) && (type === 'integer' || value >= 0);
  if (type === 'text') return typeof value === 'string';
  if (type === 'bool') return typeof value === 'boolean';
  if (type === 'object') return isJsonObject(value);
  if (type === 'list') return Array.isArray(value);
  if (type === 'stop' && typeof value === 'string') return true;
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

/** False where the decode rejects a request for a top-level field of the wrong type (`TYPED_FIELDS`). */
export function requestFieldsTyped(content: JsonObject, surface: NormalizedSurface): boolean {
  return Object.entries(TYPED_FIELDS[surface]).every(([field, type]) => typed(content[field], type));
}

/**
 * False where the decode rejects a request for its tool list: one that is no list, or a function definition (Chat
 * `{type: "function", function}`, a Messages client tool `{name, input_schema}`) whose name is no text or whose
 * other fields are of the wrong type (`functionFieldsDecode`). Provider tools are kept whole.
 */
function toolsDecode(tools: Json | undefined, surface: MessagesSurface): boolean {
  if (tools === undefined || tools === null) return true;
  if (!Array.isArray(tools)) return false;
  return tools.every((tool) => {
    if (!isJsonObject(tool)) return true;
    const fn = surface === 'openai_chat' ? (tool.type === 'function' && isJsonObject(tool.function) ? tool.function : undefined) : tool.type === undefined && Object.hasOwn(tool, 'name') && Object.hasOwn(tool, 'input_schema') ? tool : undefined;
    return fn === undefined || (typeof fn.name === 'string' && functionFieldsDecode(fn));
  });
}

function anthropicBlockDecodes(block: Json): boolean {
  if (!isJsonObject(block)) return false;
  if (block.type === 'text') return typeof block.text === 'string';
  if (block.type === 'tool_use') return typeof block.id === 'string' && typeof block.name === 'string' && block.input !== undefined;
  if (block.type === 'tool_result') return typeof block.tool_use_id === 'string' && block.content !== undefined && (block.is_error === undefined || block.is_error === null || typeof block.is_error === 'boolean');
  return true;
}

/** The roles a Responses input message may have for the decode to read it as a message. */
export const RESPONSES_MESSAGE_ROLES: readonly string[] = ['user', 'system', 'developer', 'assistant'];
/** The fields a Responses input message may carry for the decode to read it as a message (else it is kept whole). */
export const RESPONSES_MESSAGE_FIELDS: readonly string[] = ['type', 'role', 'content'];

/** False where native's Responses decode rejects a content part: not an object, a text or refusal that is not a string. */
export function responsesPartDecodes(part: Json): boolean {
  if (!isJsonObject(part)) return false;
  if ((part.type === 'input_text' || part.type === 'output_text') && typeof part.text !== 'string') return false;
  return part.type !== 'refusal' || typeof part.refusal === 'string';
}

/** False where the decode rejects a function definition: a `description` or `strict` of the wrong type (null reads as absent). */
export function functionFieldsDecode(fn: JsonObject): boolean {
  const typed = (value: Json | undefined, type: string) => value === undefined || value === null || typeof value === type;
  return typed(fn.description, 'string') && typed(fn.strict, 'boolean');
}

/**
 * Where the normalized form's generation `params` come from, in its order:
 * each parameter and the request fields that hold it, the first one set
 * winning (Chat's `max_completion_tokens` over its older `max_tokens`). A
 * shape reads only its own names: a Chat request's `max_output_tokens` is no
 * token cap, and Responses has no stop. Gemini's are the fields of its
 * `generationConfig` (`formats/gemini.ts`).
 */
export const PARAM_FIELDS: Record<NormalizedSurface | 'gemini_generate_content', { readonly [param in 'temperature' | 'max_tokens' | 'top_p' | 'stop']: readonly string[] }> = {
  openai_chat: { temperature: ['temperature'], max_tokens: ['max_completion_tokens', 'max_tokens'], top_p: ['top_p'], stop: ['stop'] },
  anthropic_messages: { temperature: ['temperature'], max_tokens: ['max_tokens'], top_p: ['top_p'], stop: ['stop_sequences'] },
  openai_responses: { temperature: ['temperature'], max_tokens: ['max_output_tokens'], top_p: ['top_p'], stop: [] },
  gemini_generate_content: { temperature: ['temperature'], max_tokens: ['maxOutputTokens'], top_p: ['topP'], stop: ['stopSequences'] },
};

/** The first of a parameter's `fields` set in `request` that `read` accepts (`read` says what a usable value is). */
export function firstParam<T>(request: JsonObject, fields: readonly string[], read: (value: Json) => T | undefined): T | undefined {
  for (const field of fields) {
    const value = request[field];
    const accepted = value === undefined ? undefined : read(value);
    if (accepted !== undefined) return accepted;
  }
  return undefined;
}

/** A stop as the normalized form lists it: a list of strings, or a single Chat stop as a list of one. */
export function stopList(value: Json, surface: NormalizedSurface | 'gemini_generate_content'): string[] | undefined {
  if (typeof value === 'string') return surface === 'openai_chat' ? [value] : undefined;
  return Array.isArray(value) && value.every((item) => typeof item === 'string') ? (value as string[]) : undefined;
}

/** The content-part kinds each decode models; the normalized form wraps any other part as provider-native. */
const PART_KINDS: Record<NormalizedSurface, readonly string[]> = {
  openai_chat: ['text', 'refusal', 'file', 'image_url', 'input_audio'],
  anthropic_messages: ['text', 'tool_use', 'tool_result', 'image', 'document'],
  openai_responses: ['input_text', 'output_text', 'refusal', 'input_image', 'input_file'],
};

/** True when the decode of `surface` models content parts of `kind` (else the normalized form keeps one as provider-native). */
export function partKindModeled(kind: string, surface: NormalizedSurface): boolean {
  return PART_KINDS[surface].includes(kind);
}

const IMAGE_FIELDS = ['image_url', 'file_id', 'detail'];
const FILE_FIELDS = ['file_data', 'file_id', 'file_url', 'filename'];

/**
 * A content part as the normalized form carries it: text, refusals, Chat
 * files and Messages tool use and results as sent; Responses text renamed
 * `text`; media re-wrapped under their kind (a Chat `image_url` keeping only
 * its `url` and a text `detail`, Chat `input_audio` as `audio`, a Messages
 * `image` or `document` and a Responses `input_image` or `input_file` under
 * `image` or `file`); any other part wrapped as provider-native, under its
 * kind.
 */
export function normalizedPart(part: Json, surface: NormalizedSurface): Json {
  const block = isJsonObject(part) ? part : undefined;
  const kind = typeof block?.type === 'string' ? block.type : undefined;
  if (block === undefined || kind === undefined || !partKindModeled(kind, surface)) {
    return { type: 'provider_native', provider: surface, kind: kind ?? 'unknown', value: part };
  }
  const rest = (omit: readonly string[]) => fieldsOf(block, (key) => key !== 'type' && !omit.includes(key));
  if (surface === 'openai_chat') {
    if (kind === 'input_audio') return { ...rest(['input_audio']), audio: block.input_audio ?? null, type: 'audio' };
    if (kind === 'image_url' && isJsonObject(block.image_url)) {
      const image = block.image_url;
      return { ...rest(['image_url']), image_url: { url: image.url ?? null, ...(typeof image.detail === 'string' ? { detail: image.detail } : {}) }, type: 'image_url' };
    }
  }
  if (surface === 'anthropic_messages') {
    if (kind === 'image') return { image: rest([]), type: 'image' };
    if (kind === 'document') return { file: rest([]), type: 'file' };
  }
  if (surface === 'openai_responses') {
    if (kind === 'input_text' || kind === 'output_text') return { ...rest([]), type: 'text' };
    const inside = (fields: readonly string[]) => fieldsOf(block, (key) => key !== 'type' && fields.includes(key));
    if (kind === 'input_image') return { ...rest(IMAGE_FIELDS), image: inside(IMAGE_FIELDS), type: 'image' };
    if (kind === 'input_file') return { ...rest(FILE_FIELDS), file: inside(FILE_FIELDS), type: 'file' };
  }
  return block;
}

/** True when the normalized form carries `part` unchanged (the same JSON, keys in any order). */
export function keptAsSent(part: Json, surface: NormalizedSurface): boolean {
  return sameValue(normalizedPart(part, surface), part);
}

function fieldsOf(object: JsonObject, keep: (key: string) => boolean): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(object)) if (keep(key)) out[key] = value;
  return out;
}

/** Equal as JSON: object keys in any order, a key holding `undefined` as absent. */
function sameValue(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => sameValue(item, b[i]));
  }
  const keys = (object: JsonObject) => Object.keys(object).filter((key) => object[key] !== undefined);
  const aKeys = keys(a);
  return aKeys.length === keys(b).length && aKeys.every((key) => Object.hasOwn(b, key) && sameValue(a[key], b[key]));
}
