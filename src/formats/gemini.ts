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
  /** `signed`: the part carries a `thoughtSignature`, null too (its turn's content is then its parts, not one text). */
  | { readonly kind: 'text'; readonly text: string; readonly signed?: true }
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
  /** The first candidate's content (`GeminiContent`, its function calls apart); undefined when it has none. */
  readonly content: GeminiContent;
  readonly calls: readonly GeminiCall[];
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

/** What `decode` makes of `value`, or undefined when it rejects it (any other error is a defect and goes on). */
function decodedOrRejected<A, T>(decode: (value: A) => T, value: A): T | undefined {
  try {
    return decode(value);
  } catch (error) {
    if (error instanceof Rejected) return undefined;
    throw error;
  }
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
  return decodedOrRejected(decode, response);
}

function decode(response: JsonObject): GeminiAnswer {
  const candidates = response.candidates as Json[];
  if (!optionalString(response.modelVersion) || !optionalString(response.responseId)) reject();
  const usage = geminiCodecUsage(response.usageMetadata);
  if (usage === null) reject();
  // Every candidate has its fields' types; only the first one's parts are read.
  for (const candidate of candidates) {
    if (!isJsonObject(candidate) || !optionalString(candidate.finishReason)) reject();
    if (!absent(candidate.content) && (!isJsonObject(candidate.content) || !(absent(candidate.content.parts) || Array.isArray(candidate.content.parts)))) reject();
  }
  const first = candidates[0] as JsonObject | undefined;
  let content: GeminiContent;
  let calls: GeminiCall[] = [];
  if (first !== undefined && isJsonObject(first.content)) {
    const read = readParts(first.content.parts);
    calls = read.flatMap((part) => (part.kind === 'call' ? [part.call] : []));
    // No content of an answer without parts (an empty list, or thoughts alone), unlike a request's turn.
    content = read.length === 0 ? undefined : contentOf(read, calls.length);
  }
  const finish = first === undefined ? undefined : finishOf(first.finishReason as string | null | undefined, calls.length > 0);
  return { id: response.responseId as string | undefined ?? undefined, model: response.modelVersion as string | undefined ?? undefined, content, calls, finish, usage };
}

/** A turn's content of its parts but the function calls (`calls` of them): one text when they are all plain text, else the parts. */
function contentOf(read: readonly GeminiPart[], calls: number): GeminiContent {
  const shown = read.filter((part) => part.kind !== 'call');
  if (!shown.every((part) => part.kind === 'text' && part.signed !== true)) return { parts: shown };
  return shown.length === 0 && calls > 0 ? undefined : { text: shown.map((part) => (part as { text: string }).text).join('\n') };
}

/** An answer's or a turn's parts; `calls`: whether function calls may be among them (a `model` turn's, an answer's). */
function readParts(value: Json | undefined, calls = true): GeminiPart[] {
  if (absent(value)) return [];
  if (!Array.isArray(value)) reject();
  const out: GeminiPart[] = [];
  const ids = new Set<string>();
  for (const part of value) {
    if (!isJsonObject(part)) reject();
    const kinds = kindsOf(part);
    if (kinds.length > 1) reject();
    const kind = kinds[0];
    if (kind === 'text') {
      if (typeof part.text !== 'string') reject();
      if (part.thought !== true) out.push(part.thoughtSignature === undefined ? { kind: 'text', text: part.text } : { kind: 'text', text: part.text, signed: true });
    } else if (kind === 'functionCall') {
      if (!calls) reject();
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

/** The part kinds a part holds: a kind's key present, null too (a part of two kinds is rejected). */
function kindsOf(part: JsonObject): string[] {
  return PART_KINDS.filter((kind) => part[kind] !== undefined);
}

function readCall(value: Json): GeminiCall {
  if (!isJsonObject(value)) reject();
  const { name, id, args } = value;
  if (typeof name !== 'string' || name === '' || !optionalString(id)) reject();
  if (args !== undefined && !isJsonObject(args)) reject();
  return { id: typeof id === 'string' ? id : name, name, args: args ?? {} };
}

/**
 * An answer that calls a function ends in a tool call when it says `STOP`
 * or nothing (`FINISH_REASON_UNSPECIFIED` too); else `STOP` is a stop,
 * `MAX_TOKENS` a length stop, the safety reasons a content filter, nothing
 * none.
 */
function finishOf(reason: string | null | undefined, calls: boolean): GeminiFinish | undefined {
  const unstated = reason === undefined || reason === null || reason === 'FINISH_REASON_UNSPECIFIED';
  if (calls && (unstated || reason === 'STOP')) return { mapped: 'tool_calls' };
  if (unstated) return undefined;
  const mapped = geminiFinishReason(reason);
  return mapped === undefined ? { asSent: reason } : { mapped };
}

/** A Gemini `finishReason` the codec maps, in Chat Completions' spelling; undefined for one it keeps as sent. */
export function geminiFinishReason(reason: string): 'stop' | 'length' | 'content_filter' | undefined {
  if (reason === 'STOP') return 'stop';
  if (reason === 'MAX_TOKENS') return 'length';
  if (FILTERED.has(reason)) return 'content_filter';
  return undefined;
}

/** A message of a Gemini request as native's codec reads it. */
export type GeminiRequestMessage =
  /** The system instruction (a first message), a `user` or a `model` (`assistant`) turn: its content, then its function calls. */
  | { readonly role: 'system' | 'user' | 'assistant'; readonly content: GeminiContent; readonly calls: readonly GeminiCall[] }
  /** One function's result (a `user` turn of `functionResponse` parts gives one per part): its id (its own, else the function's name) and the response as serde_json's text. */
  | { readonly role: 'tool'; readonly id: string; readonly response: JsonObject };

/**
 * A turn's content: one text (its text parts joined by newlines, `''` for a
 * turn of no parts) when it has no other part, else its parts in order; none
 * for a turn of function calls alone.
 */
export type GeminiContent = { readonly text: string } | { readonly parts: readonly GeminiPart[] } | undefined;

/** A tool of a Gemini request: a function declaration, or a tool object's provider tools (`googleSearch`, ...) kept whole. */
export type GeminiTool =
  | { readonly kind: 'function'; readonly declaration: JsonObject & { readonly name: string } }
  /** `kinds`: the object's tool keys in code-point order (gen_ai lists each; openinference one tool of the first). */
  | { readonly kind: 'provider'; readonly kinds: readonly string[]; readonly value: JsonObject };

export interface GeminiRequest {
  readonly model: string | undefined;
  readonly messages: readonly GeminiRequestMessage[];
  readonly tools: readonly GeminiTool[];
  /** `generationConfig` (the generation parameters: `temperature`, `topP`, `maxOutputTokens`, `stopSequences`). */
  readonly parameters: JsonObject;
}

/** The typed generation parameters: a field present (null too) of another type rejects the request. */
const GENERATION_TYPES: Record<string, (value: Json) => boolean> = {
  temperature: (value) => typeof value === 'number',
  topP: (value) => typeof value === 'number',
  maxOutputTokens: (value) => typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 0xffffffff,
  stopSequences: (value) => Array.isArray(value) && value.every((item) => typeof item === 'string'),
};

/**
 * A Gemini request body (`contents`) as native's codec reads it, or
 * undefined where it rejects the whole request: `contents` that is no list; a
 * turn that is no object, of a role other than `user`, `model` or none, or
 * without a list of parts; a part that is no object, of two kinds, with a
 * text that is no string; a function call in a `user` turn or without a
 * name or with `args` that are no object, two of one id in a turn; a
 * `functionResponse` beside other parts, in a `model` turn, without a name
 * or a `response` object, two of one id in a turn; a `systemInstruction`
 * that is no object with a list of text parts (and a text role, if any);
 * `tools` that are no list of objects, `functionDeclarations` that are no
 * list of functions with a name (and a text `description`, not null); a
 * `generationConfig` that is no object (null neither) or a typed parameter
 * of another type (`GENERATION_TYPES`); a `model` that is no string.
 */
export function geminiRequest(body: JsonObject): GeminiRequest | undefined {
  return decodedOrRejected(decodeRequest, body);
}

function decodeRequest(body: JsonObject): GeminiRequest {
  if (!optionalString(body.model) || body.model === null) reject();
  if (!Array.isArray(body.contents)) reject();
  const messages: GeminiRequestMessage[] = [];
  if (body.systemInstruction !== undefined) {
    const text = systemText(body.systemInstruction);
    if (text !== '') messages.push({ role: 'system', content: { text }, calls: [] });
  }
  for (const turn of body.contents) messages.push(...readTurn(turn));
  const parameters = body.generationConfig === undefined ? {} : body.generationConfig;
  if (!isJsonObject(parameters)) reject();
  for (const [key, typed] of Object.entries(GENERATION_TYPES)) if (parameters[key] !== undefined && !typed(parameters[key]!)) reject();
  return { model: body.model as string | undefined, messages, tools: readTools(body.tools), parameters };
}

/** The system instruction's text parts, joined by newlines (a thought is text here). */
function systemText(value: Json): string {
  if (!isJsonObject(value) || !Array.isArray(value.parts) || !optionalString(value.role)) reject();
  return value.parts
    .map((part) => {
      if (!isJsonObject(part) || typeof part.text !== 'string' || kindsOf(part).length > 1) reject();
      return part.text;
    })
    .join('\n');
}

function readTurn(value: Json): GeminiRequestMessage[] {
  if (!isJsonObject(value) || !Array.isArray(value.parts)) reject();
  const role = value.role === undefined ? 'user' : value.role;
  if (role !== 'user' && role !== 'model') reject();
  const parts = value.parts;
  if (parts.some((part) => isJsonObject(part) && part.functionResponse !== undefined)) return toolResults(parts, role);
  const read = readParts(parts, role === 'model');
  const calls = read.flatMap((part) => (part.kind === 'call' ? [part.call] : []));
  return [{ role: role === 'model' ? 'assistant' : 'user', content: contentOf(read, calls.length), calls }];
}

/** A `user` turn of function results: every part one, each a tool message. */
function toolResults(parts: readonly Json[], role: string): GeminiRequestMessage[] {
  if (role !== 'user') reject();
  const ids = new Set<string>();
  return parts.map((part) => {
    if (!isJsonObject(part) || kindsOf(part).length > 1) reject();
    const result = part.functionResponse;
    if (!isJsonObject(result) || typeof result.name !== 'string' || !optionalString(result.id) || !isJsonObject(result.response)) reject();
    const id = typeof result.id === 'string' ? result.id : result.name;
    if (ids.has(id)) reject();
    ids.add(id);
    return { role: 'tool' as const, id, response: result.response };
  });
}

function readTools(value: Json | undefined): GeminiTool[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) reject();
  const out: GeminiTool[] = [];
  for (const tool of value) {
    if (!isJsonObject(tool)) reject();
    const { functionDeclarations, ...rest } = tool;
    if (functionDeclarations !== undefined) {
      if (!Array.isArray(functionDeclarations)) reject();
      for (const declaration of functionDeclarations) {
        if (!isJsonObject(declaration) || typeof declaration.name !== 'string' || declaration.name === '' || (declaration.description !== undefined && typeof declaration.description !== 'string')) reject();
        out.push({ kind: 'function', declaration: declaration as JsonObject & { name: string } });
      }
    }
    if (functionDeclarations === undefined || Object.keys(rest).length > 0) out.push({ kind: 'provider', kinds: Object.keys(rest).sort(), value: rest });
  }
  return out;
}
