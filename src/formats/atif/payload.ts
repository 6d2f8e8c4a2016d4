/**
 * Reading LLM and tool payloads the way native's ATIF exporter does.
 *
 * Provider payloads arrive raw (OpenAI chat, OpenAI responses, Anthropic
 * messages, the Hermes plugin's own shape, or anything else). These helpers
 * pull out the user message, the assistant message, the tool calls, the
 * token usage and the model, following native's precedence rules exactly,
 * including its quirks (each quirk is marked "native:").
 *
 * @module
 */

import type { Json, JsonObject } from '../../shared/json.ts';
import type { AtifMetrics, AtifToolCall } from './types.ts';
import { canonicalJson, isNativeInteger, parseJsonAsNative, sortJson } from '../native-text.ts';

type JsonMap = JsonObject;

export function asObject(value: Json | undefined): JsonMap | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;
}

function asArray(value: Json | undefined): Json[] | undefined {
  return Array.isArray(value) ? value : undefined;
}

function asString(value: Json | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** serde's `Value::as_u64()` of a payload number: only numbers the binding kept as integers qualify (`2**32` is an f64). */
function asU64(value: Json | undefined): number | undefined {
  return typeof value === 'number' && isNativeInteger(value) && value >= 0 ? value : undefined;
}

function asF64(value: Json | undefined): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function has(object: JsonMap, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(object, key);
}

/** `object.get(key)` in Rust: absent keys are `undefined`, `null` stays `null`. */
function get(object: JsonMap | undefined, key: string): Json | undefined {
  if (object === undefined || !has(object, key)) return undefined;
  return object[key];
}

/** Rust's `a.get(k1).or_else(|| a.get(k2))...`: the first key that is present, whatever its value. */
function firstPresent(object: JsonMap | undefined, keys: readonly string[]): Json | undefined {
  if (object === undefined) return undefined;
  for (const key of keys) if (has(object, key)) return object[key];
  return undefined;
}

function nonNull(object: JsonMap, key: string): Json | undefined {
  const value = get(object, key);
  return value === null ? undefined : value;
}

// ---------------------------------------------------------------------------
// messages and content

/** A string or ATIF content parts kept as they are; `null` → ""; anything else stringified. */
export function atifContentValue(value: Json): Json {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && isAtifContentParts(value)) return value;
  if (value === null) return '';
  return canonicalJson(value);
}

export function isAtifContentParts(value: Json): boolean {
  if (!Array.isArray(value)) return false;
  // native: `all()` over an empty array is true, so `[]` counts as content parts.
  return value.every((part) => {
    const object = asObject(part);
    if (object === undefined) return false;
    switch (get(object, 'type')) {
      case 'text':
        return typeof get(object, 'text') === 'string';
      case 'image':
        return isImageSource(get(object, 'source'));
      default:
        return false;
    }
  });
}

export const ATIF_IMAGE_MEDIA_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] as const;

function isImageSource(value: Json | undefined): boolean {
  const source = asObject(value);
  if (source === undefined) return false;
  const mediaType = get(source, 'media_type');
  return (
    typeof mediaType === 'string' &&
    (ATIF_IMAGE_MEDIA_TYPES as readonly string[]).includes(mediaType) &&
    typeof get(source, 'path') === 'string'
  );
}

/** The request body inside an `LlmRequest` envelope `{headers, content}`, else the input itself. */
export function unwrapLlmRequest(input: Json): Json {
  const object = asObject(input);
  if (object !== undefined && has(object, 'content') && has(object, 'headers')) return object.content as Json;
  return input;
}

/** The latest user message of a request body (chat `messages`, responses `input`, or `prompt`). */
export function extractUserMessage(content: Json): Json {
  const object = asObject(content);
  if (object !== undefined) {
    const messages = asArray(get(object, 'messages'));
    if (messages !== undefined) {
      for (let i = messages.length - 1; i >= 0; i--) {
        const message = asObject(messages[i]);
        if (message === undefined) continue;
        const role = asString(get(message, 'role'));
        // native: a missing or non-string role counts as a user message.
        if (role !== undefined && role !== 'user') continue;
        // native: the search stops at the first user message even when it has no content.
        if (has(message, 'content')) return atifContentValue(message.content as Json);
        break;
      }
    }
    if (has(object, 'input')) {
      const message = responsesInputMessage(object.input as Json);
      if (message !== undefined) return message;
    }
    if (has(object, 'prompt')) return atifContentValue(object.prompt as Json);
  }
  return atifContentValue(content);
}

function responsesInputMessage(input: Json): Json | undefined {
  if (typeof input === 'string') return input;
  const items = asArray(input);
  if (items === undefined) return undefined;
  for (let i = items.length - 1; i >= 0; i--) {
    const item = asObject(items[i]);
    if (item === undefined || get(item, 'role') !== 'user' || !has(item, 'content')) continue;
    const message = responsesInputContentMessage(item.content as Json);
    if (message !== undefined) return message;
  }
  return undefined;
}

function responsesInputContentMessage(content: Json): Json | undefined {
  if (typeof content === 'string') return content;
  const parts = asArray(content);
  if (parts === undefined) return undefined;
  let texts = collectTexts(parts, 'input_text');
  if (texts.length === 0) texts = collectTexts(parts, 'text');
  if (texts.length === 0) return isAtifContentParts(content) ? content : undefined;
  return texts.join('\n');
}

function collectTexts(parts: readonly Json[], blockType: string): string[] {
  const texts: string[] = [];
  for (const part of parts) {
    const object = asObject(part);
    if (object === undefined || get(object, 'type') !== blockType) continue;
    const text = get(object, 'text');
    if (typeof text === 'string') texts.push(text);
  }
  return texts;
}

export type TurnState = 'fresh' | 'continuation';

/**
 * Whether an LLM request starts a fresh user turn or continues one after
 * tool work (native then puts the request on the agent step instead of
 * adding a user step).
 */
export function requestTurnState(content: Json): TurnState | undefined {
  const object = asObject(content);
  if (object === undefined) return undefined;
  const messages = asArray(get(object, 'messages'));
  if (messages !== undefined) {
    for (let i = messages.length - 1; i >= 0; i--) {
      const message = asObject(messages[i]);
      if (message === undefined) continue;
      const state = chatMessageTurnState(message);
      if (state !== undefined) return state;
    }
  }
  if (has(object, 'input')) {
    const state = responsesTurnState(object.input as Json);
    if (state !== undefined) return state;
  }
  return has(object, 'prompt') ? 'fresh' : undefined;
}

function chatMessageTurnState(message: JsonMap): TurnState | undefined {
  const role = asString(get(message, 'role'));
  if (role === 'system' || role === 'developer') return undefined;
  if (role === undefined || role === 'user') {
    if (!has(message, 'content')) return 'fresh';
    return contentStartsNewTurn(message.content as Json) ? 'fresh' : 'continuation';
  }
  return 'continuation';
}

const USER_INPUT_PART_TYPES = new Set([
  'text',
  'input_text',
  'image_url',
  'image',
  'input_image',
  'audio',
  'input_audio',
  'file',
  'document',
]);

function partType(part: Json): string | undefined {
  return asString(get(asObject(part), 'type'));
}

function isUserInputPart(part: Json): boolean {
  const type = partType(part);
  return type !== undefined && USER_INPUT_PART_TYPES.has(type);
}

function isToolContinuationPart(part: Json): boolean {
  const type = partType(part);
  return type === 'tool_result' || type === 'tool_use';
}

function contentStartsNewTurn(content: Json): boolean {
  if (Array.isArray(content)) {
    if (content.some(isUserInputPart)) return true;
    return !content.some(isToolContinuationPart);
  }
  if (asObject(content) !== undefined) return isUserInputPart(content) || !isToolContinuationPart(content);
  return true;
}

function responsesTurnState(input: Json): TurnState | undefined {
  if (typeof input === 'string') return 'fresh';
  const items = asArray(input);
  if (items === undefined) return undefined;
  for (let i = items.length - 1; i >= 0; i--) {
    const item = asObject(items[i]);
    if (item === undefined) continue;
    const type = asString(get(item, 'type'));
    if (type === undefined) continue; // native: untyped items decide nothing
    if (type !== 'message') return 'continuation';
    const role = asString(get(item, 'role'));
    if (role === 'system' || role === 'developer') continue;
    return role === undefined || role === 'user' ? 'fresh' : 'continuation';
  }
  return undefined;
}

/** `reasoning_effort` of a request body, when set. */
export function extractReasoningEffort(content: Json): Json | undefined {
  const value = get(asObject(content), 'reasoning_effort');
  return value === undefined || value === null ? undefined : value;
}

/** `reasoning` of a response, when it is a string. */
export function extractReasoningContent(output: Json): string | undefined {
  return asString(get(asObject(output), 'reasoning'));
}

/** The assistant message of a response. Tool-call-only responses give "". */
export function extractResponseMessage(output: Json): Json {
  const object = asObject(output);
  if (object === undefined) return atifContentValue(output);
  const content = nonNull(object, 'content');
  if (content !== undefined) return anthropicContentMessage(object, content) ?? atifContentValue(content);
  const assistant = asObject(get(object, 'assistant_message'));
  if (assistant !== undefined) {
    const assistantContent = nonNull(assistant, 'content');
    if (assistantContent !== undefined) return atifContentValue(assistantContent);
  }
  const choiceContent = rawResponseMessageField(object, 'content');
  if (choiceContent !== undefined && choiceContent !== null) return atifContentValue(choiceContent);
  const answer = nonNull(object, 'answer');
  if (answer !== undefined) return atifContentValue(answer);
  const responsesText = responsesOutputMessage(object);
  if (responsesText !== undefined) return responsesText;
  if (toolCallArray(object) !== undefined) return '';
  return atifContentValue(output);
}

function anthropicContentMessage(object: JsonMap, content: Json): Json | undefined {
  if (get(object, 'type') !== 'message') return undefined;
  const blocks = asArray(content);
  if (blocks === undefined) return undefined;
  const texts: string[] = [];
  let hasToolUse = false;
  for (const block of blocks) {
    const blockObject = asObject(block);
    if (blockObject === undefined) continue;
    const type = get(blockObject, 'type');
    if (type === 'text') {
      const text = get(blockObject, 'text');
      if (typeof text === 'string' && text.trim() !== '') texts.push(text);
    } else if (type === 'tool_use') {
      hasToolUse = true;
    }
  }
  if (texts.length === 0) return hasToolUse ? '' : undefined;
  return texts.join('\n');
}

/** `raw_response.choices[0].message[field]`, or `choices[0].message[field]` when there is no `raw_response`. */
function rawResponseMessageField(object: JsonMap, field: string): Json | undefined {
  const source = has(object, 'raw_response') ? asObject(object.raw_response as Json) : object;
  const choice = asObject(asArray(get(source, 'choices'))?.[0]);
  return get(asObject(get(choice, 'message')), field);
}

function responsesOutputMessage(object: JsonMap): string | undefined {
  const outputText = get(object, 'output_text');
  if (typeof outputText === 'string') return outputText;
  const items = asArray(get(object, 'output'));
  if (items === undefined) return undefined;
  const texts: string[] = [];
  for (const item of items) {
    const itemObject = asObject(item);
    if (itemObject === undefined) continue;
    const type = get(itemObject, 'type');
    if (type === 'message') {
      const parts = asArray(get(itemObject, 'content'));
      if (parts !== undefined) texts.push(...collectTexts(parts, 'output_text'));
    } else if (type === 'output_text') {
      const text = get(itemObject, 'text');
      if (typeof text === 'string') texts.push(text);
    }
  }
  return texts.length === 0 ? undefined : texts.join('\n');
}

// ---------------------------------------------------------------------------
// tool calls

function toolCallArray(object: JsonMap): Json[] | undefined {
  return (
    asArray(get(object, 'tool_calls')) ??
    asArray(get(asObject(get(object, 'assistant_message')), 'tool_calls')) ??
    asArray(rawResponseMessageField(object, 'tool_calls'))
  );
}

function itemsOfType(items: Json[] | undefined, type: string): Json[] | undefined {
  if (items === undefined) return undefined;
  const matching = items.filter((item) => get(asObject(item), 'type') === type);
  return matching.length === 0 ? undefined : matching;
}

const TOOL_CALL_KNOWN_KEYS = new Set([
  'id',
  'tool_call_id',
  'call_id',
  'type',
  'function',
  'name',
  'tool_name',
  'function_name',
  'arguments',
  'args',
  'input',
]);

/**
 * The tool calls a response requests: OpenAI `tool_calls` (top level, under
 * `assistant_message`, or in `choices[0].message`), responses-API
 * `function_call` items, or Anthropic `tool_use` blocks.
 */
export function extractToolCalls(output: Json): AtifToolCall[] | undefined {
  const object = asObject(output);
  if (object === undefined) return undefined;
  const array = toolCallArray(object);
  const items =
    (array !== undefined && array.length > 0 ? array : undefined) ??
    itemsOfType(asArray(get(object, 'output')), 'function_call') ??
    (get(object, 'type') === 'message' ? itemsOfType(asArray(get(object, 'content')), 'tool_use') : undefined);
  if (items === undefined) return undefined;
  const calls: AtifToolCall[] = [];
  for (let index = 0; index < items.length; index++) {
    const call = asObject(items[index]);
    // native: one non-object entry drops every tool call of the response.
    if (call === undefined) return undefined;
    let id = asString(firstPresent(call, ['id', 'tool_call_id', 'call_id'])) ?? '';
    const fn = asObject(get(call, 'function'));
    const nameValue =
      fn !== undefined && has(fn, 'name')
        ? fn.name
        : firstPresent(call, ['name', 'toolName', 'tool_name', 'function_name']);
    const name = asString(nameValue as Json | undefined) ?? '';
    if (id === '' && name !== '') id = `${name}:${index + 1}`;
    const rawArguments =
      fn !== undefined && has(fn, 'arguments') ? fn.arguments : firstPresent(call, ['arguments', 'args', 'input']);
    const args = normalizeToolArguments(rawArguments as Json | undefined);
    if (id === '' && name === '') continue;
    const toolCall: AtifToolCall = { tool_call_id: id, function_name: name, arguments: args };
    const extra = toolCallExtra(call, fn);
    if (extra !== undefined) toolCall.extra = extra;
    calls.push(toolCall);
  }
  return calls.length === 0 ? undefined : calls;
}

/** Tool arguments as a JSON object: JSON strings are parsed, other values wrapped. */
export function normalizeToolArguments(raw: Json | undefined): Json {
  if (raw === undefined || raw === null) return {};
  if (typeof raw === 'string') {
    // native: serde's parser (stricter than JSON.parse; maps sorted; `1.0` stays an f64), and its
    // `{"value": ...}` wrapper for anything but an object.
    const parsed = parseJsonAsNative(raw);
    if (parsed === undefined) return { raw };
    return asObject(parsed.value) !== undefined ? parsed.value : parsed;
  }
  if (asObject(raw) !== undefined) return raw;
  return { value: raw };
}

function toolCallExtra(call: JsonMap, fn: JsonMap | undefined): Json | undefined {
  const extra: JsonMap = {};
  let any = false;
  for (const key of Object.keys(call)) {
    if (TOOL_CALL_KNOWN_KEYS.has(key)) continue;
    extra[key] = call[key] as Json;
    any = true;
  }
  if (fn !== undefined) {
    const fnExtra: JsonMap = {};
    let anyFn = false;
    for (const key of Object.keys(fn)) {
      if (key === 'name' || key === 'arguments') continue;
      fnExtra[key] = fn[key] as Json;
      anyFn = true;
    }
    if (anyFn) {
      extra.function = fnExtra;
      any = true;
    }
  }
  return any ? sortJson(extra) : undefined;
}

// ---------------------------------------------------------------------------
// provider normalization (native's built-in codecs, as far as ATIF uses them)

export type ResponseSurface = 'openai_chat' | 'openai_responses' | 'anthropic_messages';

/** The provider shape of a raw response, only when exactly one shape matches. */
export function detectResponseSurface(output: Json): ResponseSurface | undefined {
  const object = asObject(output);
  if (object === undefined) return undefined;
  const isChat = Array.isArray(get(object, 'choices'));
  const isResponses = Array.isArray(get(object, 'output')) || typeof get(object, 'output_text') === 'string';
  const isAnthropic = get(object, 'type') === 'message' && Array.isArray(get(object, 'content'));
  if (isChat && !isResponses && !isAnthropic) return 'openai_chat';
  if (!isChat && isResponses && !isAnthropic) return 'openai_responses';
  if (!isChat && !isResponses && isAnthropic) return 'anthropic_messages';
  return undefined;
}

function detectRequestSurface(content: Json): boolean {
  const object = asObject(content);
  if (object === undefined) return false;
  return has(object, 'input') || has(object, 'instructions') || has(object, 'system') || has(object, 'messages');
}

/** The model a response reports (`model` string), as native's codecs and fallback read it. */
export function responseModel(output: Json | undefined): string | undefined {
  return asString(get(asObject(output), 'model'));
}

/** The model of an LLM start event's request: the decoded request body's `model`, else a top-level `model`. */
export function requestModel(input: Json | undefined): string | undefined {
  const envelope = asObject(input);
  if (envelope !== undefined && has(envelope, 'headers') && has(envelope, 'content')) {
    const content = envelope.content as Json;
    if (detectRequestSurface(content)) {
      const model = asString(get(asObject(content), 'model'));
      if (model !== undefined) return model;
    }
  }
  return asString(get(envelope, 'model'));
}

interface Usage {
  prompt?: number;
  completion?: number;
  total?: number;
  cacheRead?: number;
  cacheWrite?: number;
  uncached?: number;
}

function firstU64(usage: JsonMap | undefined, keys: readonly string[]): number | undefined {
  if (usage === undefined) return undefined;
  for (const key of keys) {
    const value = asU64(get(usage, key));
    if (value !== undefined) return value;
  }
  return undefined;
}

function eitherU64(usage: JsonMap | undefined, tokenUsage: JsonMap | undefined, keys: readonly string[]): number | undefined {
  return firstU64(usage, keys) ?? firstU64(tokenUsage, keys);
}

function nestedU64(usage: JsonMap | undefined, parent: string, child: string): number | undefined {
  return asU64(get(asObject(get(usage, parent)), child));
}

/** Native's best-effort usage reader for any payload with `usage` or `token_usage`. */
function manualUsage(object: JsonMap): Usage | undefined {
  const usage = asObject(get(object, 'usage'));
  const tokenUsage = asObject(get(object, 'token_usage'));
  if (usage === undefined && tokenUsage === undefined) return undefined;
  const prompt = eitherU64(usage, tokenUsage, ['prompt_tokens', 'input_tokens', 'inputTokens', 'input']);
  const completion = eitherU64(usage, tokenUsage, [
    'completion_tokens',
    'output_tokens',
    'completionTokens',
    'outputTokens',
    'output',
  ]);
  const total = eitherU64(usage, tokenUsage, ['total_tokens', 'totalTokens', 'total']);
  const cacheRead =
    eitherU64(usage, tokenUsage, ['cached_tokens', 'cachedTokens']) ??
    nestedU64(usage, 'prompt_tokens_details', 'cached_tokens') ??
    nestedU64(tokenUsage, 'prompt_tokens_details', 'cached_tokens') ??
    nestedU64(usage, 'input_tokens_details', 'cached_tokens') ??
    nestedU64(tokenUsage, 'input_tokens_details', 'cached_tokens') ??
    eitherU64(usage, tokenUsage, [
      'cache_read_tokens',
      'cache_read_input_tokens',
      'cacheReadTokens',
      'cacheReadInputTokens',
      'cacheRead',
    ]);
  const cacheWrite = eitherU64(usage, tokenUsage, [
    'cache_write_tokens',
    'cache_creation_input_tokens',
    'cacheWriteTokens',
    'cacheCreationInputTokens',
    'cacheWrite',
  ]);
  const uncached = eitherU64(usage, tokenUsage, ['uncached_input_tokens', 'uncachedInputTokens']);
  if (
    prompt === undefined &&
    completion === undefined &&
    total === undefined &&
    cacheRead === undefined &&
    cacheWrite === undefined &&
    uncached === undefined
  ) {
    return undefined;
  }
  return { prompt, completion, total, cacheRead, cacheWrite, uncached };
}

/** The usage a built-in provider codec decodes from a recognised response shape. */
function codecUsage(object: JsonMap, surface: ResponseSurface): Usage | undefined {
  const usage = asObject(get(object, 'usage'));
  if (usage === undefined) return undefined;
  switch (surface) {
    case 'openai_chat':
      return {
        prompt: asU64(get(usage, 'prompt_tokens')),
        completion: asU64(get(usage, 'completion_tokens')),
        total: asU64(get(usage, 'total_tokens')),
        cacheRead: nestedU64(usage, 'prompt_tokens_details', 'cached_tokens'),
      };
    case 'openai_responses':
      return {
        prompt: asU64(get(usage, 'input_tokens')),
        completion: asU64(get(usage, 'output_tokens')),
        total: asU64(get(usage, 'total_tokens')),
        cacheRead: nestedU64(usage, 'input_tokens_details', 'cached_tokens'),
      };
    case 'anthropic_messages':
      return {
        prompt: asU64(get(usage, 'input_tokens')),
        completion: asU64(get(usage, 'output_tokens')),
        cacheRead: asU64(get(usage, 'cache_read_input_tokens')),
        cacheWrite: asU64(get(usage, 'cache_creation_input_tokens')),
      };
  }
}

function mergeUsage(primary: Usage | undefined, secondary: Usage | undefined): Usage | undefined {
  if (primary === undefined) return secondary;
  if (secondary === undefined) return primary;
  return {
    prompt: primary.prompt ?? secondary.prompt,
    completion: primary.completion ?? secondary.completion,
    total: primary.total ?? secondary.total,
    cacheRead: primary.cacheRead ?? secondary.cacheRead,
    cacheWrite: primary.cacheWrite ?? secondary.cacheWrite,
  };
}

/** A cost the payload reports itself, in USD (native never estimates one without a pricing plugin). */
function manualCostUsd(object: JsonMap): number | undefined {
  const fromUsage = (usage: JsonMap | undefined): number | undefined => {
    if (usage === undefined) return undefined;
    const costUsd = asF64(get(usage, 'cost_usd'));
    if (costUsd !== undefined) return costUsd;
    const cost = asObject(get(usage, 'cost'));
    if (cost === undefined) return undefined;
    const currency = asString(get(cost, 'currency'));
    if (currency !== undefined) {
      if (currency.toUpperCase() !== 'USD') return undefined;
    } else {
      const source = get(cost, 'source');
      const normalized = source === 'provider_reported' || source === 'model_pricing';
      if (!normalized && asF64(get(cost, 'total')) === undefined) return undefined;
    }
    const total = asF64(get(cost, 'total'));
    if (total !== undefined) return total;
    let sum = 0;
    let any = false;
    for (const field of ['input', 'output', 'cache_read', 'cache_write']) {
      const value = asF64(get(cost, field));
      if (value !== undefined) {
        sum += value;
        any = true;
      }
    }
    return any ? sum : undefined;
  };
  return fromUsage(asObject(get(object, 'usage'))) ?? fromUsage(asObject(get(object, 'token_usage')));
}

const TOKEN_USAGE_KNOWN_KEYS = new Set([
  'prompt_tokens',
  'input_tokens',
  'inputTokens',
  'input',
  'completion_tokens',
  'output_tokens',
  'completionTokens',
  'outputTokens',
  'output',
  'cached_tokens',
  'cachedTokens',
  'cache_read_tokens',
  'cacheReadTokens',
  'cache_read_input_tokens',
  'cacheReadInputTokens',
  'cacheRead',
  'cache_creation_input_tokens',
  'cacheCreationInputTokens',
  'cache_write_tokens',
  'cacheWriteTokens',
  'cacheWrite',
  'cost_usd',
  'cost',
  'prompt_tokens_details',
  'input_tokens_details',
  'prompt_token_ids',
  'completion_token_ids',
  'logprobs',
]);

/**
 * Step metrics from an LLM response's `usage` / `token_usage`.
 *
 * `prompt_tokens` includes cache reads and writes for Anthropic (recognised
 * by the response shape or a provider name starting with "anthropic" or
 * "claude"), because Anthropic reports them separately; other providers
 * already include them. Unknown usage keys go to `extra`.
 */
export function extractMetrics(output: Json, providerName: string): AtifMetrics | undefined {
  const object = asObject(output);
  if (object === undefined) return undefined;
  const surface = detectResponseSurface(object);
  const usage = mergeUsage(surface === undefined ? undefined : codecUsage(object, surface), manualUsage(object));
  const lowerProvider = providerName.toLowerCase();
  const anthropic =
    surface === 'anthropic_messages' || lowerProvider.startsWith('anthropic') || lowerProvider.startsWith('claude');
  let prompt = usage?.prompt;
  if (prompt !== undefined && anthropic) prompt += (usage?.cacheRead ?? 0) + (usage?.cacheWrite ?? 0);
  const completion = usage?.completion;
  const cacheRead = usage?.cacheRead;
  const cacheWrite = usage?.cacheWrite;
  const cached = cacheRead === undefined && cacheWrite === undefined ? undefined : (cacheRead ?? 0) + (cacheWrite ?? 0);
  const cost = manualCostUsd(object);

  // native: `token_usage` shadows `usage` for the id and logprob arrays (even when it is not an object).
  const rawUsage = asObject(has(object, 'token_usage') ? (object.token_usage as Json) : get(object, 'usage'));
  const promptIds = asArray(get(rawUsage, 'prompt_token_ids'))?.filter((v) => asU64(v) !== undefined) as number[] | undefined;
  const completionIds = asArray(get(rawUsage, 'completion_token_ids'))?.filter((v) => asU64(v) !== undefined) as
    | number[]
    | undefined;
  const logprobs = asArray(get(rawUsage, 'logprobs'))?.filter((v) => asF64(v) !== undefined) as number[] | undefined;

  const extra: JsonMap = {};
  let hasExtra = false;
  for (const key of ['usage', 'token_usage']) {
    const source = asObject(get(object, key));
    if (source === undefined) continue;
    for (const usageKey of Object.keys(source)) {
      if (TOKEN_USAGE_KNOWN_KEYS.has(usageKey)) continue;
      extra[usageKey] = source[usageKey] as Json; // later `token_usage` wins, like native's map
      hasExtra = true;
    }
  }
  if (prompt === undefined && completion === undefined && cached === undefined && cost === undefined && !hasExtra) {
    return undefined;
  }
  const metrics: AtifMetrics = {};
  if (prompt !== undefined) metrics.prompt_tokens = prompt;
  if (completion !== undefined) metrics.completion_tokens = completion;
  if (cached !== undefined) metrics.cached_tokens = cached;
  if (cost !== undefined) metrics.cost_usd = cost;
  if (promptIds !== undefined) metrics.prompt_token_ids = promptIds;
  if (completionIds !== undefined) metrics.completion_token_ids = completionIds;
  if (logprobs !== undefined) metrics.logprobs = logprobs;
  if (hasExtra) metrics.extra = sortJson(extra);
  return metrics;
}

/** Fills the fields `target` lacks from `supplemental` (native's metric merge for de-duplicated LLM spans). */
export function mergeMetricsInto(target: AtifMetrics, supplemental: AtifMetrics): void {
  if (target.prompt_tokens === undefined && supplemental.prompt_tokens !== undefined) target.prompt_tokens = supplemental.prompt_tokens;
  if (target.completion_tokens === undefined && supplemental.completion_tokens !== undefined)
    target.completion_tokens = supplemental.completion_tokens;
  if (target.cached_tokens === undefined && supplemental.cached_tokens !== undefined) target.cached_tokens = supplemental.cached_tokens;
  if (target.cost_usd === undefined && supplemental.cost_usd !== undefined) target.cost_usd = supplemental.cost_usd;
  if (target.prompt_token_ids === undefined && supplemental.prompt_token_ids !== undefined)
    target.prompt_token_ids = supplemental.prompt_token_ids;
  if (target.completion_token_ids === undefined && supplemental.completion_token_ids !== undefined)
    target.completion_token_ids = supplemental.completion_token_ids;
  if (target.logprobs === undefined && supplemental.logprobs !== undefined) target.logprobs = supplemental.logprobs;
  if (supplemental.extra !== undefined) {
    const targetExtra = asObject(target.extra);
    const supplementalExtra = asObject(supplemental.extra);
    if (target.extra === undefined) {
      target.extra = supplemental.extra;
    } else if (targetExtra !== undefined && supplementalExtra !== undefined) {
      const merged: JsonMap = { ...targetExtra };
      for (const key of Object.keys(supplementalExtra)) if (!has(merged, key)) merged[key] = supplementalExtra[key] as Json;
      target.extra = sortJson(merged);
    }
  }
}

/** Re-orders metric fields into native's struct order (merging may add fields out of order). */
export function orderMetrics(metrics: AtifMetrics): AtifMetrics {
  const ordered: AtifMetrics = {};
  if (metrics.prompt_tokens !== undefined) ordered.prompt_tokens = metrics.prompt_tokens;
  if (metrics.completion_tokens !== undefined) ordered.completion_tokens = metrics.completion_tokens;
  if (metrics.cached_tokens !== undefined) ordered.cached_tokens = metrics.cached_tokens;
  if (metrics.cost_usd !== undefined) ordered.cost_usd = metrics.cost_usd;
  if (metrics.prompt_token_ids !== undefined) ordered.prompt_token_ids = metrics.prompt_token_ids;
  if (metrics.completion_token_ids !== undefined) ordered.completion_token_ids = metrics.completion_token_ids;
  if (metrics.logprobs !== undefined) ordered.logprobs = metrics.logprobs;
  if (metrics.extra !== undefined) ordered.extra = metrics.extra;
  return ordered;
}

// ---------------------------------------------------------------------------
// delegation and correlation ids

const DELEGATION_PATHS: readonly (readonly string[])[] = [
  ['tool_call_id'],
  ['toolCallId'],
  ['source_call_id'],
  ['sourceCallId'],
  ['delegation_tool_call_id'],
  ['delegationToolCallId'],
  ['parent_tool_call_id'],
  ['parentToolCallId'],
  ['extra', 'tool_call_id'],
  ['extra', 'toolCallId'],
  ['extra', 'source_call_id'],
  ['extra', 'sourceCallId'],
  ['extra', 'delegation_tool_call_id'],
  ['extra', 'delegationToolCallId'],
  ['extra', 'parent_tool_call_id'],
  ['extra', 'parentToolCallId'],
];

/** The string at a path of object keys, if any. */
export function stringAt(value: Json | undefined, path: readonly string[]): string | undefined {
  let current: Json | undefined = value;
  for (const key of path) {
    current = get(asObject(current), key);
    if (current === undefined) return undefined;
  }
  return asString(current);
}

/** The tool call a subagent scope was dispatched for, named in its metadata or input. */
export function delegationToolCallId(value: Json | undefined): string | undefined {
  for (const path of DELEGATION_PATHS) {
    const id = stringAt(value, path);
    if (id !== undefined) return id;
  }
  return undefined;
}

const REQUEST_ID_PATHS: readonly (readonly string[])[] = [
  ['api_call_id'],
  ['apiCallId'],
  ['request_id'],
  ['requestId'],
  ['request', 'id'],
  ['metadata', 'request_id'],
  ['metadata', 'requestId'],
  ['extra', 'api_call_id'],
  ['extra', 'apiCallId'],
  ['extra', 'request_id'],
  ['extra', 'requestId'],
  ['llm_correlation_request_id'],
];

const GENERATION_ID_PATHS: readonly (readonly string[])[] = [
  ['generation_id'],
  ['generationId'],
  ['generation', 'id'],
  ['metadata', 'generation_id'],
  ['metadata', 'generationId'],
  ['extra', 'generation_id'],
  ['extra', 'generationId'],
  ['llm_correlation_generation_id'],
];

/** Request/generation ids that identify one physical LLM request across instrumentations. */
export function collectCorrelationKeys(value: Json | undefined, keys: Set<string>): void {
  if (value === undefined) return;
  for (const path of REQUEST_ID_PATHS) {
    const id = stringAt(value, path);
    if (id !== undefined && id !== '') keys.add(`request:${id}`);
  }
  for (const path of GENERATION_ID_PATHS) {
    const id = stringAt(value, path);
    if (id !== undefined && id !== '') keys.add(`generation:${id}`);
  }
}
