/**
 * Whether a request starts a fresh user turn or continues one after tool
 * work: native gives only a fresh turn its own `user` step.
 *
 * @module
 */

import type { Json } from '../../../shared/json.ts';
import { type JsonMap, asArray, asObject, asString, get, has } from './access.ts';

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
