/**
 * Where native's response codecs (OpenAI Chat Completions, Anthropic
 * Messages, OpenAI Responses) reject a whole response for a field of the
 * wrong type, apart from its usage (`readsAsShape` in usage.ts). A rejected
 * response gives its spans none of its answer: `gen_ai` loses its id, model,
 * finish reason, message and counts, `openinference` its message and finish
 * reason. Found by probing native with crafted responses; fields a probe
 * showed the decode to read leniently (a Messages block of an unknown kind,
 * a Chat `role` that is no text) are not checked. A Gemini answer is decoded
 * whole, usage included, in `gemini.ts`.
 *
 * @module
 */

import type { Json, JsonObject } from '../shared/json.ts';
import { isJsonObject } from '../shared/json.ts';

/** The provider shapes whose responses are decoded here. */
export type DecodedResponseSurface = 'openai_chat' | 'anthropic_messages' | 'openai_responses';

/** Text or nothing: a field the decode reads as an optional string. */
const optionalText = (value: Json | undefined) => value === undefined || value === null || typeof value === 'string';

/**
 * False where native's decode of `surface` rejects `response` (a field other
 * than the usage): an `id` or `model` that is there but no text, and per
 * shape, a Messages `role`, `stop_reason` or `stop_sequence`, a Responses
 * `status`, or a Chat choice that fails `chatChoiceDecodes`.
 */
export function answerDecodes(response: JsonObject, surface: DecodedResponseSurface): boolean {
  if (!optionalText(response.id) || !optionalText(response.model)) return false;
  if (surface === 'anthropic_messages') return optionalText(response.role) && optionalText(response.stop_reason) && optionalText(response.stop_sequence);
  if (surface === 'openai_responses') return optionalText(response.status);
  return !Array.isArray(response.choices) || response.choices.every(chatChoiceDecodes);
}

/**
 * A Chat choice as the decode reads it: an object whose `finish_reason` is
 * text or nothing and whose `message`, if any, is an object with content
 * that is text or nothing and a `tool_calls` list (or nothing) of objects
 * whose `id` is text or nothing and whose `function`, if any, is an object
 * whose `name` and `arguments` are text or nothing.
 */
function chatChoiceDecodes(choice: Json): boolean {
  if (!isJsonObject(choice) || !optionalText(choice.finish_reason)) return false;
  const message = choice.message;
  if (message === undefined || message === null) return true;
  if (!isJsonObject(message) || !optionalText(message.content)) return false;
  const calls = message.tool_calls;
  if (calls === undefined || calls === null) return true;
  return Array.isArray(calls) && calls.every(chatCallDecodes);
}

function chatCallDecodes(call: Json): boolean {
  if (!isJsonObject(call) || !optionalText(call.id)) return false;
  const fn = call.function;
  return fn === undefined || fn === null || (isJsonObject(fn) && optionalText(fn.name) && optionalText(fn.arguments));
}
