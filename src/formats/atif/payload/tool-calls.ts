/**
 * The tool calls an LLM response requests, as ATIF tool calls.
 *
 * @module
 */

import type { Json } from '../../../shared/json.ts';
import { parseJsonAsNative, sortJson } from '../../native-text.ts';
import type { AtifToolCall } from '../types.ts';
import { type JsonMap, asArray, asObject, asString, firstPresent, get, has, rawResponseMessageField } from './access.ts';

export function toolCallArray(object: JsonMap): Json[] | undefined {
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
  return plainChatToolCalls(object) ?? generalToolCalls(object);
}

/**
 * The tool calls of a Chat Completions response in its usual shape, or
 * `undefined` for anything else: no top-level `tool_calls`,
 * `assistant_message` or `raw_response`, and `choices[0].message.tool_calls`
 * a non-empty list of `{id, type, function: {name, arguments}}` objects
 * (no other key; `id` and `name` strings). Then the general rules read the
 * same calls with no `extra`; anything else is read by them.
 */
function plainChatToolCalls(object: JsonMap): AtifToolCall[] | undefined {
  if (has(object, 'tool_calls') || has(object, 'assistant_message') || has(object, 'raw_response')) return undefined;
  const choice = asObject(asArray(get(object, 'choices'))?.[0]);
  const items = asArray(get(asObject(get(choice, 'message')), 'tool_calls'));
  if (items === undefined || items.length === 0) return undefined;
  const calls: AtifToolCall[] = [];
  for (let index = 0; index < items.length; index++) {
    const call = asObject(items[index]);
    if (call === undefined) return undefined;
    for (const key in call) if ((key !== 'id' && key !== 'type' && key !== 'function') || !has(call, key)) return undefined;
    const fn = asObject(get(call, 'function'));
    if (fn === undefined || !has(fn, 'name') || !has(fn, 'arguments')) return undefined;
    for (const key in fn) if ((key !== 'name' && key !== 'arguments') || !has(fn, key)) return undefined;
    let id = get(call, 'id');
    const name = fn.name;
    if (typeof id !== 'string' || typeof name !== 'string') return undefined;
    if (id === '' && name !== '') id = `${name}:${index + 1}`;
    if (id === '' && name === '') continue;
    calls.push({ tool_call_id: id, function_name: name, arguments: normalizeToolArguments(fn.arguments as Json) });
  }
  // Every call skipped (no id, no name): the general rules read none either.
  return calls.length === 0 ? undefined : calls;
}

/** `extractToolCalls` by the general rules (exported for the fast path's equivalence test). */
export function generalToolCalls(object: JsonMap): AtifToolCall[] | undefined {
  const array = toolCallArray(object);
  const listed = array !== undefined && array.length > 0 ? array : undefined;
  const functionCalls = listed === undefined ? itemsOfType(asArray(get(object, 'output')), 'function_call') : undefined;
  const items = listed ?? functionCalls ?? (get(object, 'type') === 'message' ? itemsOfType(asArray(get(object, 'content')), 'tool_use') : undefined);
  if (items === undefined) return undefined;
  const calls: AtifToolCall[] = [];
  for (let index = 0; index < items.length; index++) {
    const call = asObject(items[index]);
    // native: one non-object entry drops every tool call of the response.
    if (call === undefined) return undefined;
    // native: a responses-API function_call is known by its `call_id` (what its
    // function_call_output names), before its item `id`, when that is a non-empty string.
    const callId = functionCalls === undefined ? undefined : asString(get(call, 'call_id'));
    let id = (callId !== undefined && callId !== '' ? callId : undefined) ?? asString(firstPresent(call, ['id', 'tool_call_id', 'call_id'])) ?? '';
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
