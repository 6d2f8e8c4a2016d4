/**
 * ATOF event construction for the in-memory relay, byte-compatible with the
 * native runtime.
 *
 * Native re-serializes every record through serde_json, so every object key
 * comes out sorted, the record's own keys included. The builders here create
 * each record as an object literal whose keys are already in sorted order,
 * and payloads are converted with `toJson(..., { sortKeys: true })`, so a
 * plain `JSON.stringify` writes the same bytes native does without a sort
 * or a JSON round-trip per event.
 *
 * The rules that are not obvious from the ATOF text, each checked against
 * `nemo-relay-node@0.9.2`:
 * - end metadata is the start metadata shallow-merged with the end
 *   metadata when both are objects; otherwise a non-null end value replaces
 *   the start value;
 * - a manual LLM end always carries `otel.status_code: "OK"` and never
 *   `otel.status_description`; if the merged metadata is not an object it
 *   becomes `{"otel.status_code": "OK"}`;
 * - credential headers are removed from the recorded LLM request.
 *
 * @module
 */

import type { Json, JsonObject } from '../../relay/contract.ts';
import type { AtofCategory, AtofCategoryProfile, AtofMarkEvent, AtofScopeEvent } from '../../formats/atof/types.ts';
import { ATOF_VERSION } from '../../formats/atof/types.ts';
import { formatTimestamp } from '../../shared/clock.ts';
import { isJsonObject, toJson, wellFormed } from '../../shared/json.ts';

const SORTED = { sortKeys: true } as const;

/** Converts a payload the way native's serde round-trip leaves it: plain JSON, keys sorted. */
export function payload(value: unknown): Json {
  if (typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype) {
    const flat = flatPlainObject(value);
    if (flat !== undefined) return flat;
  }
  return toJson(value, SORTED);
}

const MAX_FLAT_KEYS = 32;

/**
 * The common metadata shape (a small object literal of strings, numbers,
 * booleans and nulls) converted without `toJson`'s general machinery; the
 * result is what `toJson` would return. Anything else returns undefined
 * and takes the general path (a getter read here then runs a second time).
 */
function flatPlainObject(object: object): JsonObject | undefined {
  const out: JsonObject = {};
  try {
    // Inside the try: a Proxy whose key listing throws takes the general path, which records it.
    const keys = Object.keys(object);
    if (keys.length > MAX_FLAT_KEYS || keys.includes('toJSON') || keys.includes('__proto__')) return undefined;
    keys.sort();
    for (const key of keys) {
      if (wellFormed(key) !== key) return undefined;
      const value: unknown = (object as Record<string, unknown>)[key];
      switch (typeof value) {
        case 'string':
          out[key] = wellFormed(value);
          break;
        case 'boolean':
          out[key] = value;
          break;
        case 'number':
          out[key] = Number.isFinite(value) ? value : null;
          break;
        case 'undefined':
          break;
        default:
          if (value !== null) return undefined;
          out[key] = null;
      }
    }
  } catch {
    return undefined;
  }
  return out;
}

export function scopeEvent(
  phase: 'start' | 'end',
  uuid: string,
  parentUuid: string,
  propagationRootUuid: string,
  name: string,
  category: AtofCategory,
  attributes: string[],
  categoryProfile: AtofCategoryProfile | null,
  data: Json,
  metadata: Json,
  timestamp: string,
): AtofScopeEvent {
  // Key order is the serialized order: keep it alphabetical.
  return {
    atof_version: ATOF_VERSION,
    attributes,
    category,
    category_profile: categoryProfile,
    data,
    data_schema: null,
    kind: 'scope',
    metadata,
    name,
    parent_uuid: parentUuid,
    propagation_root_uuid: propagationRootUuid,
    scope_category: phase,
    timestamp,
    uuid,
  };
}

export function markEvent(
  uuid: string,
  parentUuid: string,
  propagationRootUuid: string,
  name: string,
  data: Json,
  metadata: Json,
  timestamp: string,
): AtofMarkEvent {
  return {
    atof_version: ATOF_VERSION,
    category: null,
    category_profile: null,
    data,
    data_schema: null,
    kind: 'mark',
    metadata,
    name,
    parent_uuid: parentUuid,
    propagation_root_uuid: propagationRootUuid,
    timestamp,
    uuid,
  };
}

/** Builds an object with sorted keys from a source whose keys may not be sorted. */
export function sortedObject(source: JsonObject): JsonObject {
  const keys = Object.keys(source).sort();
  const out: JsonObject = {};
  for (const key of keys) define(out, key, source[key]!);
  return out;
}

/**
 * Start metadata merged with end metadata, as native does: a shallow merge
 * (end wins) when both are objects, otherwise a non-null end value replaces
 * the start value. The result has sorted keys and is a new object, so the
 * start event is never mutated.
 */
export function mergeMetadata(start: Json, end: Json): Json {
  if (end === null) return start;
  if (isJsonObject(start) && isJsonObject(end)) {
    const merged: JsonObject = {};
    for (const key in start) define(merged, key, start[key]!);
    for (const key in end) define(merged, key, end[key]!);
    return sortedObject(merged);
  }
  return end;
}

/**
 * `base` (already sorted, or not an object) with `extra` keys set over it,
 * keys sorted. A non-object `base` is dropped, as native does when it has to
 * add status keys to metadata that is a string or an array.
 */
export function withKeys(base: Json, extra: JsonObject, omit?: string): JsonObject {
  const merged: JsonObject = {};
  if (isJsonObject(base)) for (const key in base) if (key !== omit) define(merged, key, base[key]!);
  for (const key in extra) define(merged, key, extra[key]!);
  return sortedObject(merged);
}

const LLM_OK = { 'otel.status_code': 'OK' } as const;
const LLM_ERROR = { 'otel.status_code': 'ERROR' } as const;
const TOOL_ERROR = { 'otel.status_code': 'ERROR' } as const;

/**
 * End metadata of a manual LLM end, as native builds it: the object parts
 * of start and end metadata merged (a non-object side is ignored), then
 * `otel.status_code` forced to `"OK"` and `otel.status_description` dropped.
 */
export function llmEndMetadata(start: Json, end: Json, failed = false): JsonObject {
  const merged = mergeMetadata(isJsonObject(start) ? start : null, isJsonObject(end) ? end : null);
  // A failed call (status 'error') is an error span: an intentional difference from native, which cannot say so.
  return withKeys(merged, failed ? LLM_ERROR : LLM_OK, 'otel.status_description');
}

/** End metadata of a managed success: merged with `otel.status_code: "OK"` (a description is kept). */
export function managedOkMetadata(start: Json): JsonObject {
  return withKeys(start, LLM_OK);
}

/**
 * End metadata of a tool ended with `status: 'error'`: the end metadata
 * with `otel.status_code: "ERROR"` (a non-object value kept under
 * `metadata`), merged over the start metadata. This is what the native
 * adapter passes to a manual native tool end, which keeps the status.
 */
export function toolErrorMetadata(start: Json, end: Json): Json {
  const base: JsonObject = isJsonObject(end) ? end : end === null ? {} : { metadata: end };
  return mergeMetadata(start, withKeys(base, TOOL_ERROR));
}

/**
 * End metadata of a failed managed call, the keys native writes: the
 * exception's name and message behind `internal error: `.
 */
export function managedErrorMetadata(start: Json, error: unknown): JsonObject {
  return withKeys(start, {
    'error.type': 'internal_error',
    'exception.type': exceptionType(error),
    'otel.status_code': 'ERROR',
    'otel.status_description': `internal error: ${exceptionMessage(error)}`,
  });
}

/** Native's `exception.type`: a thrown object's string `name`, else `"Error"`. */
export function exceptionType(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    try {
      const name = (error as { name?: unknown }).name;
      if (typeof name === 'string' && name !== '') return name;
    } catch {
      // A throwing getter gets the generic name.
    }
  }
  return 'Error';
}

/** Native's description text: a thrown object's string `message`, a primitive's `String()`, else `unknown error`. */
export function exceptionMessage(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    try {
      const message = (error as { message?: unknown }).message;
      if (typeof message === 'string') return message;
    } catch {
      // Fall through to the generic text.
    }
    return 'unknown error';
  }
  try {
    return String(error);
  } catch {
    return 'unknown error';
  }
}

/** Header names native removes from the recorded LLM request (compared case-insensitively). */
const CREDENTIAL_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'api-key',
  'x-goog-api-key',
  'cookie',
]);

/** The request headers as recorded on the LLM start event: credentials removed, keys sorted. */
export function recordedHeaders(headers: unknown, injected?: JsonObject): JsonObject {
  const out: JsonObject = {};
  if (typeof headers === 'object' && headers !== null) {
    let keys: string[];
    try {
      keys = Object.keys(headers);
    } catch {
      keys = [];
    }
    keys.sort();
    for (const key of keys) {
      if (CREDENTIAL_HEADERS.has(key.toLowerCase())) continue;
      let value: unknown;
      try {
        value = (headers as Record<string, unknown>)[key];
      } catch {
        continue;
      }
      if (value === undefined || typeof value === 'function' || typeof value === 'symbol') continue;
      define(out, key, payload(value));
    }
  }
  if (injected === undefined) return out;
  for (const key in injected) define(out, key, injected[key]!);
  return sortedObject(out);
}

/** The LLM start event's `data`: `{content, headers}`. */
export function llmRequestData(content: unknown, headers: JsonObject): JsonObject {
  return { content: payload(content), headers };
}

const SCOPE_FLAGS = ['parallel', 'relocatable'] as const;

/** ATOF scope attribute flags: the known ones, sorted and de-duplicated. Unknown flags are dropped, as native's bitmask drops them. */
export function scopeAttributes(attributes: unknown): string[] {
  if (!Array.isArray(attributes) || attributes.length === 0) return [];
  const out: string[] = [];
  for (const flag of SCOPE_FLAGS) if (attributes.includes(flag)) out.push(flag);
  return out;
}

/**
 * `category_profile` of an LLM span: `{model_name}` when a model name is
 * known, else `{}`. An empty name counts as unknown, as in the native
 * adapter (the raw binding would write `""`).
 */
export function llmProfile(modelName: unknown): AtofCategoryProfile {
  return typeof modelName === 'string' && modelName !== '' ? { model_name: modelName } : {};
}

/**
 * `category_profile` of a tool span: `{tool_call_id}` when an id is known,
 * else `{}`. An empty id counts as unknown (the contract's rule; native
 * would write `""`).
 */
export function toolProfile(toolCallId: unknown): AtofCategoryProfile {
  return typeof toolCallId === 'string' && toolCallId !== '' ? { tool_call_id: toolCallId } : {};
}

/**
 * The tool end profile: the start profile plus `tool_result_annotation` when
 * one is given. An annotation that converts to null (a function, a symbol,
 * `null`) counts as none, as in native.
 */
export function toolEndProfile(start: AtofCategoryProfile, annotation: Json | undefined): AtofCategoryProfile {
  if (annotation === undefined || annotation === null) return start;
  const id = start.tool_call_id;
  return id === undefined ? { tool_result_annotation: annotation } : { tool_call_id: id, tool_result_annotation: annotation };
}

/**
 * A memoizing RFC 3339 formatter: events arrive in bursts within the same
 * second, and rendering the date part is most of `formatTimestamp`'s cost.
 * Output is identical to `formatTimestamp`.
 */
export function createTimestampFormatter(): (micros: number) => string {
  let lastSecond = Number.NaN;
  let lastBase = '';
  return (micros) => {
    const second = Math.floor(micros / 1_000_000);
    if (second !== lastSecond) {
      const whole = formatTimestamp(second * 1_000_000); // "...T14:59:29+00:00"
      lastBase = whole.slice(0, whole.length - 6);
      lastSecond = second;
    }
    const fraction = micros - second * 1_000_000;
    if (fraction === 0) return `${lastBase}+00:00`;
    if (fraction % 1000 === 0) return `${lastBase}.${String(fraction / 1000).padStart(3, '0')}+00:00`;
    return `${lastBase}.${String(fraction).padStart(6, '0')}+00:00`;
  };
}

function define(target: JsonObject, key: string, value: Json): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}
