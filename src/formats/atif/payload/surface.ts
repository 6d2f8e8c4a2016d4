/**
 * The provider shape of a request or response, and the model it names
 * (native's built-in codecs, as far as ATIF uses them).
 *
 * @module
 */

import type { Json } from '../../../shared/json.ts';
import { asObject, asString, get, has } from './access.ts';

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
