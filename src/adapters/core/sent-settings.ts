/**
 * Which of a request's recorded generation settings the provider never got, or got with another value. A framework
 * reports a call's settings as the program gave them, before the provider package builds its body: the package may
 * drop one (a reasoning model's `temperature`) or change it (Anthropic's `max_tokens` grows by the thinking budget),
 * and says so only once the call has answered (the body it sent, its warnings). `pre_api_request` is emitted before
 * that, so the response records the difference.
 *
 * @module
 */

import { PARAM_FIELDS, firstParam, requestSurface } from '../../formats/request-codecs.ts';
import { isJsonObject, type Json, type JsonObject } from '../../shared/json.ts';

/** What the provider package says it sent: the body it built (when the framework hands it on), and the settings it warned it dropped. */
export interface SentRequest {
  /** The request body as the package sent it (an object, or its JSON text). */
  readonly body?: unknown;
  /** The recorded settings (request spelling: `temperature`, `top_p`, `max_tokens`, `seed`) the package said it did not send. */
  readonly unsupported?: readonly string[];
}

/** The difference, as the response records it: `settings_not_sent` (names) and `settings_as_sent` (name to value sent). */
export interface SettingsDifference {
  readonly settings_not_sent?: string[];
  readonly settings_as_sent?: JsonObject;
}

/** The settings whose field each body shape names (`PARAM_FIELDS`, the exporters' rule); others are known only from warnings. */
const COMPARED = ['temperature', 'top_p', 'max_tokens'] as const;

/** The body as an object whose top-level fields can be read: it holds the whole conversation, so it is not copied. */
function bodyObject(body: unknown): JsonObject | undefined {
  if (typeof body === 'string') {
    try {
      const parsed = JSON.parse(body) as Json;
      return isJsonObject(parsed) ? parsed : undefined;
    } catch {
      return undefined;
    }
  }
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as JsonObject) : undefined;
}

/** The body's generation settings by their request names, for the shapes `PARAM_FIELDS` reads; undefined for another shape. */
function sentParams(body: JsonObject, provider: string | undefined): Partial<Record<(typeof COMPARED)[number], Json>> | undefined {
  const surface = requestSurface(body, provider);
  if (surface === undefined || surface === 'oci_genai') return undefined;
  // Gemini keeps them in `generationConfig`.
  const holder = surface === 'gemini_generate_content' ? (isJsonObject(body.generationConfig) ? body.generationConfig : {}) : body;
  const fields = PARAM_FIELDS[surface];
  const out: Partial<Record<(typeof COMPARED)[number], Json>> = {};
  for (const name of COMPARED) {
    // Every compared setting is a number: anything else in its field is not it.
    const value = firstParam(holder, fields[name], (v) => (typeof v === 'number' ? v : undefined));
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/**
 * The recorded settings the provider did not get as recorded. Not sent: the package's warnings say so (its own word;
 * a body's missing field is no proof, another package may keep the setting under another name, as Bedrock's
 * `inferenceConfig` does), unless the body holds it after all (Anthropic warns of a temperature it clamps). Sent as
 * another value: the body, where its shape is one `PARAM_FIELDS` reads, holds it with another value. Empty when
 * nothing says otherwise.
 */
export function settingsDifference(recorded: Readonly<Record<string, unknown>> | undefined, sent: SentRequest | undefined, provider: string | undefined): SettingsDifference {
  if (recorded === undefined || sent === undefined) return {};
  // The body is read only when it can tell something: a compared setting was recorded.
  const body = COMPARED.some((name) => recorded[name] !== undefined) ? bodyObject(sent.body) : undefined;
  const params = body === undefined ? undefined : sentParams(body, provider);
  const asSent: JsonObject = {};
  for (const name of COMPARED) {
    const value = params?.[name];
    if (recorded[name] !== undefined && value !== undefined && value !== recorded[name]) asSent[name] = value;
  }
  const notSent: string[] = [];
  for (const name of sent.unsupported ?? []) {
    if (recorded[name] !== undefined && params?.[name as (typeof COMPARED)[number]] === undefined && !notSent.includes(name)) notSent.push(name);
  }
  return {
    ...(notSent.length === 0 ? {} : { settings_not_sent: notSent }),
    ...(Object.keys(asSent).length === 0 ? {} : { settings_as_sent: asSent }),
  };
}
