/**
 * The provider shape of a request or response, and the model it names
 * (native's built-in codecs, as far as ATIF uses them).
 *
 * @module
 */

import type { Json } from '../../../shared/json.ts';
import { asObject, asString, get, has, type JsonMap } from './access.ts';
import { geminiAnswer, type GeminiAnswer } from '../../gemini.ts';

export type ResponseSurface = 'openai_chat' | 'openai_responses' | 'anthropic_messages';

/** The provider shape of a raw response, only when exactly one shape matches (Gemini's among them: see `geminiResponse`). */
export function detectResponseSurface(output: Json): ResponseSurface | undefined {
  const shape = responseShape(output);
  return shape === 'gemini_generate_content' || shape === 'several' ? undefined : shape;
}

/** A raw response of Gemini's shape (`candidates` a list, and no other provider's shape beside it). */
export function geminiResponse(output: Json | undefined): JsonMap | undefined {
  return output !== undefined && responseShape(output) === 'gemini_generate_content' ? (output as JsonMap) : undefined;
}

/** True for a response of several providers' shapes at once (`choices` beside `candidates`, ...): native reads it with no codec. */
export function ofSeveralShapes(output: Json | undefined): boolean {
  return output !== undefined && responseShape(output) === 'several';
}

function responseShape(output: Json): ResponseSurface | 'gemini_generate_content' | 'several' | undefined {
  const object = asObject(output);
  if (object === undefined) return undefined;
  const isChat = Array.isArray(get(object, 'choices'));
  const isResponses = Array.isArray(get(object, 'output')) || typeof get(object, 'output_text') === 'string';
  const isAnthropic = get(object, 'type') === 'message' && Array.isArray(get(object, 'content'));
  const isGemini = Array.isArray(get(object, 'candidates'));
  const shapes = Number(isChat) + Number(isResponses) + Number(isAnthropic) + Number(isGemini);
  if (shapes !== 1) return shapes === 0 ? undefined : 'several';
  return isChat ? 'openai_chat' : isResponses ? 'openai_responses' : isAnthropic ? 'anthropic_messages' : 'gemini_generate_content';
}

/** The answer of a response of Gemini's shape as native's codec decodes it; undefined for another shape or a rejected decode. */
export function decodedGeminiAnswer(output: Json | undefined): GeminiAnswer | undefined {
  const response = geminiResponse(output);
  return response === undefined ? undefined : geminiAnswer(response);
}

function detectRequestSurface(content: Json): boolean {
  const object = asObject(content);
  if (object === undefined) return false;
  return has(object, 'input') || has(object, 'instructions') || has(object, 'system') || has(object, 'messages');
}

/**
 * The model a response reports, as native's codecs and fallback read it: a
 * Gemini answer's `modelVersion` when its decode reads one, else a `model`
 * string.
 */
export function responseModel(output: Json | undefined): string | undefined {
  return decodedGeminiAnswer(output)?.model ?? asString(get(asObject(output), 'model'));
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
