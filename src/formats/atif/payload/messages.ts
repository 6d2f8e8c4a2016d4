/**
 * The user message of a request and the assistant message of a response,
 * for every provider shape native reads, and ATIF content parts.
 *
 * @module
 */

import type { Json } from '../../../shared/json.ts';
import { canonicalJson, isNativeBlank } from '../../native-text.ts';
import { type JsonMap, asArray, asObject, asString, get, has, nonNull, rawResponseMessageField } from './access.ts';
import { toolCallArray } from './tool-calls.ts';

/** A string or ATIF content parts kept as they are; `null` → ""; anything else stringified. */
function atifContentValue(value: Json): Json {
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
      // native: a text block its `trim` leaves empty says nothing (U+0085 is blank there, U+FEFF is not).
      if (typeof text === 'string' && !isNativeBlank(text)) texts.push(text);
    } else if (type === 'tool_use') {
      hasToolUse = true;
    }
  }
  if (texts.length === 0) return hasToolUse ? '' : undefined;
  return texts.join('\n');
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
