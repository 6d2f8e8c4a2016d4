/**
 * What native's Gemini `generateContent` codec makes of an answer
 * (`candidates[].content.parts[]`, `usageMetadata`, `modelVersion`,
 * `responseId`), as its OTLP spans and its plugins.toml trajectories show
 * it. Native reads an answer with this codec or not at all: an answer the
 * decode rejects gives no message, id, model, finish reason or counts, in
 * any output. Written once here; the OTLP mappings
 * (`export/otlp/mappings/llm-shapes.ts`) render the answer, the ATIF
 * converter takes its model and counts (`atif/payload`).
 *
 * @module
 */

import type { Json, JsonObject } from '../shared/json.ts';
import { isJsonObject } from '../shared/json.ts';
import { geminiCodecUsage, type TokenUsage } from './usage.ts';

/** A function call of the answer: its id is the call's own `id`, else the function's name. */
export interface GeminiCall {
  readonly id: string;
  readonly name: string;
  readonly args: JsonObject;
}

/** One part of the answer, in order (thought parts are left out). */
export type GeminiPart =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'call'; readonly call: GeminiCall }
  /** Any other part, as native's projections show it: under its kind (`inlineData`, `fileData`, ...) or, of no kind the codec knows, as sent with `type: "unknown"`. */
  | { readonly kind: 'other'; readonly shown: JsonObject };

/**
 * The finish reason in the conventions' terms (`stop`, `tool_calls`,
 * `length`, `content_filter`), or one the codec does not map, as sent.
 */
export type GeminiFinish = { readonly mapped: 'stop' | 'tool_calls' | 'length' | 'content_filter' } | { readonly asSent: string };

export interface GeminiAnswer {
  readonly id: string | undefined;
  readonly model: string | undefined;
  /** The first candidate's parts; undefined when it has no content. */
  readonly parts: readonly GeminiPart[] | undefined;
  readonly finish: GeminiFinish | undefined;
  /** `usageMetadata` as the codec reads it (`geminiCodecUsage`); undefined when there is none. */
  readonly usage: TokenUsage | undefined;
}

/** The part kinds the codec knows besides text and function calls: shown under their kind. */
const OTHER_KINDS = ['inlineData', 'fileData', 'executableCode', 'codeExecutionResult'];
/** Every part kind the codec knows: a part may hold only one. */
const PART_KINDS = ['text', 'functionCall', 'functionResponse', ...OTHER_KINDS];

/** Finish reasons the codec maps to a content filter. */
const FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'LANGUAGE', 'IMAGE_SAFETY']);

const absent = (value: Json | undefined): boolean => value === undefined || value === null;
const optionalString = (value: Json | undefined): boolean => absent(value) || typeof value === 'string';

/** Thrown where the decode rejects the answer. */
class Rejected extends Error {}

function reject(): never {
  throw new Rejected();
}

/**
 * A response of Gemini's shape (`candidates` a list, and no other
 * provider's shape beside it: see `atif/payload/surface.ts`) as native's
 * codec reads it, or undefined when it has another shape or the decode
 * rejects it: a candidate, content or part of the wrong type, a part of two
 * kinds, a text that is no string, a `functionResponse` in the answer, a
 * function call without a name or with `args` that are no object, two calls
 * of one id (two calls of one function without ids), a `finishReason`,
 * `modelVersion` or `responseId` that is no string, a count of
 * `usageMetadata` that is no whole number. Only the first candidate is read.
 */
export function geminiAnswer(response: JsonObject): GeminiAnswer | undefined {
  try {
    return decode(response);
  } catch (error) {
    if (error instanceof Rejected) return undefined;
    throw error;
  }
}

function decode(response: JsonObject): GeminiAnswer {
  const candidates = response.candidates as Json[];
  if (!optionalString(response.modelVersion) || !optionalString(response.responseId)) reject();
  const usage = geminiCodecUsage(response.usageMetadata);
  if (usage === null) reject();
  const first = candidates[0];
  let parts: GeminiPart[] | undefined;
  let finish: GeminiFinish | undefined;
  if (first !== undefined) {
    if (!isJsonObject(first)) reject();
    const content = first.content;
    if (!absent(content)) {
      if (!isJsonObject(content)) reject();
      parts = readParts(content.parts);
    }
    if (!optionalString(first.finishReason)) reject();
    finish = finishOf(first.finishReason as string | null | undefined, parts?.some((part) => part.kind === 'call') ?? false);
  }
  return { id: response.responseId as string | undefined ?? undefined, model: response.modelVersion as string | undefined ?? undefined, parts, finish, usage };
}

function readParts(value: Json | undefined): GeminiPart[] {
  if (absent(value)) return [];
  if (!Array.isArray(value)) reject();
  const out: GeminiPart[] = [];
  const ids = new Set<string>();
  for (const part of value) {
    if (!isJsonObject(part)) reject();
    const kinds = PART_KINDS.filter((kind) => !absent(part[kind]));
    if (kinds.length > 1 || part.text === null) reject();
    const kind = kinds[0];
    if (kind === 'text') {
      if (typeof part.text !== 'string') reject();
      if (part.thought !== true) out.push({ kind: 'text', text: part.text });
    } else if (kind === 'functionCall') {
      const call = readCall(part.functionCall!);
      if (ids.has(call.id)) reject();
      ids.add(call.id);
      out.push({ kind: 'call', call });
    } else if (kind === 'functionResponse') reject();
    else if (kind !== undefined) out.push({ kind: 'other', shown: { [kind]: part[kind]!, type: kind } });
    else out.push({ kind: 'other', shown: { ...part, type: 'unknown' } });
  }
  return out;
}

function readCall(value: Json): GeminiCall {
  if (!isJsonObject(value)) reject();
  const { name, id, args } = value;
  if (typeof name !== 'string' || name === '' || !optionalString(id)) reject();
  if (args !== undefined && !isJsonObject(args)) reject();
  return { id: typeof id === 'string' ? id : name, name, args: args ?? {} };
}

/** `STOP` is a stop, or a tool call when the answer calls a function; `MAX_TOKENS` a length stop; the safety reasons a content filter; `FINISH_REASON_UNSPECIFIED` none. */
function finishOf(reason: string | null | undefined, calls: boolean): GeminiFinish | undefined {
  if (reason === undefined || reason === null || reason === 'FINISH_REASON_UNSPECIFIED') return undefined;
  if (reason === 'STOP') return { mapped: calls ? 'tool_calls' : 'stop' };
  if (reason === 'MAX_TOKENS') return { mapped: 'length' };
  if (FILTERED.has(reason)) return { mapped: 'content_filter' };
  return { asSent: reason };
}
