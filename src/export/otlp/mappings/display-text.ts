/**
 * The readable text OpenInference's `input.value` and `output.value` carry
 * for an LLM call, as native derives it from any payload: a chat
 * transcript (`role: text`, tool results omitted), the text of a message,
 * content blocks or a Responses `output` list, and the tools a model
 * asked for (`Requested tools: a, b`). Nothing readable gives undefined
 * (the caller sends the JSON instead).
 *
 * @module
 */

import type { Json, JsonObject } from '../../../shared/json.ts';
import { isJsonObject } from '../../../shared/json.ts';
import { isNativeBlank, nativeTrim, parseJsonAsNative } from '../../../formats/native-text.ts';

/** Any payload's display text: a string (JSON inside it read too), an object's text fields, content blocks. */
export function displayText(value: Json | undefined): string | undefined {
  if (typeof value === 'string') return displayTextOfString(value);
  if (Array.isArray(value)) return contentBlocksText(value);
  if (!isJsonObject(value)) return undefined;
  for (const key of ['content', 'summary', 'message', 'text', 'prompt']) {
    const text = displayText(value[key]);
    if (text !== undefined) return text;
  }
  return responsesOutputText(value.output) ?? chatChoicesText(value.choices) ?? toolCallsText(value.tool_calls);
}

/** A string trimmed; one holding JSON is read for its display text. */
export function displayTextOfString(text: string): string | undefined {
  // Trimmed and parsed as native does: Rust's trim (U+0085 is whitespace, U+FEFF is not), serde's parser.
  const trimmed = nativeTrim(text);
  if (trimmed === '') return undefined;
  const parsed = parseJsonAsNative(trimmed);
  const display = parsed === undefined ? undefined : displayText(parsed.value);
  // Not JSON, or JSON with nothing readable: the text itself.
  return display ?? trimmed;
}

/** An LLM request's input text: its `messages` as a transcript, else whatever reads as text. */
export function requestDisplayText(input: Json | undefined): string | undefined {
  const content = isJsonObject(input) ? (input.content ?? input) : input;
  return (isJsonObject(content) ? messagesText(content.messages) : undefined) ?? displayText(content);
}

const nonEmpty = (text: string) => (text === '' ? undefined : text);

function messagesText(value: Json | undefined): string | undefined {
  if (!Array.isArray(value)) return undefined;
  return nonEmpty(
    nativeTrim(
      value
        .map(messageText)
        .filter((line): line is string => line !== undefined)
        .join('\n\n'),
    ),
  );
}

function messageText(value: Json): string | undefined {
  const message = isJsonObject(value) ? value : {};
  const role = typeof message.role === 'string' ? message.role : 'message';
  if (role === 'tool') return 'tool: Tool result omitted';
  const display = displayText(message.content) ?? toolCallsText(message.tool_calls);
  return display === undefined ? undefined : `${role}: ${display}`;
}

function responsesOutputText(value: Json | undefined): string | undefined {
  if (!Array.isArray(value)) return undefined;
  const entries: string[] = [];
  const tools: string[] = [];
  for (const item of value) {
    if (!isJsonObject(item)) continue;
    if (item.type === 'message') {
      const text = responsesContentText(item.content);
      if (text !== undefined) entries.push(text);
    } else if (item.type === 'function_call' && typeof item.name === 'string') tools.push(item.name);
  }
  if (tools.length > 0) entries.push(`Requested tools: ${tools.join(', ')}`);
  return nonEmpty(nativeTrim(entries.join('\n')));
}

function responsesContentText(value: Json | undefined): string | undefined {
  if (!Array.isArray(value)) return undefined;
  const texts = value.filter(isJsonObject).flatMap((part) => ((part.type === 'output_text' || part.type === 'text') && typeof part.text === 'string' ? [part.text] : []));
  return nonEmpty(nativeTrim(texts.join('\n\n')));
}

function chatChoicesText(value: Json | undefined): string | undefined {
  if (!Array.isArray(value)) return undefined;
  for (const choice of value) {
    if (!isJsonObject(choice) || choice.message === undefined) continue;
    const message = isJsonObject(choice.message) ? choice.message : ({} as JsonObject);
    const content = displayText(message.content);
    const tools = toolCallsText(message.tool_calls);
    if (content !== undefined || tools !== undefined) return [content, tools].filter((s) => s !== undefined).join('\n');
  }
  return undefined;
}

function contentBlocksText(items: Json[]): string | undefined {
  const entries: string[] = [];
  for (const item of items) {
    if (typeof item === 'string') entries.push(item);
    else if (isJsonObject(item) && item.stripped !== true && !['thinking', 'reasoning', 'toolResult', 'tool_result'].includes(item.type as string) && typeof item.text === 'string') entries.push(item.text);
  }
  const tools = items.map(toolCallName).filter((name): name is string => name !== undefined);
  if (tools.length > 0) entries.push(`Requested tools: ${tools.join(', ')}`);
  return nonEmpty(nativeTrim(entries.filter((entry) => !isNativeBlank(entry)).join('\n')));
}

function toolCallsText(value: Json | undefined): string | undefined {
  if (!Array.isArray(value)) return undefined;
  const names = value.map(toolCallName).filter((name): name is string => name !== undefined);
  return names.length === 0 ? undefined : `Requested tools: ${names.join(', ')}`;
}

function toolCallName(value: Json): string | undefined {
  if (!isJsonObject(value)) return undefined;
  if (typeof value.name === 'string') return value.name;
  if (typeof value.toolName === 'string') return value.toolName;
  return isJsonObject(value.function) && typeof value.function.name === 'string' ? value.function.name : undefined;
}
