/**
 * The parts of an ATOF event native derives from the caller's values, as
 * the in-memory relay builds them: payloads as sorted plain JSON (native
 * re-serializes every record through serde_json, so every object key comes
 * out sorted), the recorded request headers (credentials removed), the LLM
 * and tool profiles, and the timestamp text. The event objects themselves
 * are built by `formats/atof/build.ts`; the end-metadata rules are in
 * `metadata.ts`.
 *
 * @module
 */

import type { Json, JsonObject } from '../../../relay/contract.ts';
import type { AtofCategoryProfile } from '../../../formats/atof/types.ts';
import { formatTimestamp } from '../../../shared/clock.ts';
import { compareKeys, defineKey, toJson, type ToJsonOptions } from '../../../shared/json.ts';

const SORTED = { sortKeys: true, withoutBlobs: true } as const;
const SORTED_WITHOUT_CREDENTIALS = { sortKeys: true, withoutBlobs: true, withoutCredentialHeaders: true } as const;
const SORTED_WHOLE = { sortKeys: true } as const;
const SORTED_WHOLE_WITHOUT_CREDENTIALS = { sortKeys: true, withoutCredentialHeaders: true } as const;

/** `toJson`'s options for `copyPayload(value, drop, whole)`. */
export function copyOptions(drop: boolean, whole: boolean): ToJsonOptions {
  if (whole) return drop ? SORTED_WHOLE_WITHOUT_CREDENTIALS : SORTED_WHOLE;
  return drop ? SORTED_WITHOUT_CREDENTIALS : SORTED;
}

/**
 * The memory relay's one copy of a host payload, made when the relay
 * records it (the contract boundary; see docs/contributing/payload-journey.md):
 * plain JSON, keys sorted, as native's serde round-trip leaves it. Every
 * payload of an event object comes from here (inputs, outputs, data,
 * metadata, request content and headers, annotations); nothing after it
 * copies the payload again, and nothing after it may change it. This is
 * the place for anything that must rewrite what is recorded (redaction).
 * Media bytes are left out in it (`toJson`'s `withoutBlobs`, the adapters'
 * rule): a host's image in every request of a run would otherwise be
 * written whole into every event, trajectory step and span.
 * The byte path writes lines straight from the host's values and never
 * comes here: it only runs while nothing reads event objects.
 *
 * `drop` while the relay's `dropCredentialHeaders` is held: credential
 * headers are dropped in this copy (`toJson`'s `withoutCredentialHeaders`),
 * exactly as the plugin's walk before it would have.
 *
 * `whole` for a managed call's request content, tool arguments and result:
 * media kept whole, because they are the response cache's key and answer
 * (`managed.ts`), and native records what its cache keys and keeps.
 */
export function copyPayload(value: unknown, drop: boolean, whole = false): Json {
  return toJson(value, copyOptions(drop, whole));
}

/** Builds an object with sorted keys from a source whose keys may not be sorted. */
export function sortedObject(source: JsonObject): JsonObject {
  const keys = Object.keys(source).sort(compareKeys);
  const out: JsonObject = {};
  for (const key of keys) defineKey(out, key, source[key]!);
  return out;
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
    keys.sort(compareKeys);
    for (const key of keys) {
      if (CREDENTIAL_HEADERS.has(key.toLowerCase())) continue;
      let value: unknown;
      try {
        value = (headers as Record<string, unknown>)[key];
      } catch {
        continue;
      }
      if (value === undefined || typeof value === 'function' || typeof value === 'symbol') continue;
      // Headers nested in a value were dropped before, when asked (`MemoryRelayCore.request`): copied as they are.
      defineKey(out, key, copyPayload(value, false));
    }
  }
  if (injected === undefined) return out;
  for (const key in injected) defineKey(out, key, injected[key]!);
  return sortedObject(out);
}

/**
 * The LLM start event's `data`: `{content, headers}`. `previous`: the
 * content of an earlier request of the same session, whose repeated parts
 * the copy takes instead of its own (`shareRepeats`). `drop`: as `copyPayload`'s.
 */
export function llmRequestData(content: unknown, headers: JsonObject, drop: boolean, whole: boolean, previous?: Json): JsonObject {
  const copy = copyPayload(content, drop, whole);
  return { content: previous === undefined ? copy : shareRepeats(copy, previous), headers };
}

/**
 * `fresh`, a copy the relay has just made and not yet handed to anyone,
 * with each part equal to the same part of `previous` (an earlier copy)
 * replaced by that part; `previous` itself when the two are equal. A
 * session's LLM requests mostly repeat the one before (the system prompt,
 * the tools, the conversation so far), and every event a session's
 * trajectory needs is kept until the trajectory is built: each repeated
 * part is then kept once instead of once per call, and the collector
 * copies and marks it once. Copies are never changed after they are made,
 * so sharing a part is invisible: the same values, the same text.
 *
 * Equal is the same JSON value with the same key order: both are relay
 * copies (plain objects and arrays, keys inserted in the package's order),
 * so two objects with the same keys list them in the same order.
 */
export function shareRepeats(fresh: Json, previous: Json): Json {
  if (typeof fresh !== 'object' || fresh === null || typeof previous !== 'object' || previous === null) return fresh;
  if (Array.isArray(fresh)) {
    if (!Array.isArray(previous)) return fresh;
    let same = fresh.length === previous.length;
    const shared = Math.min(fresh.length, previous.length);
    for (let i = 0; i < shared; i++) {
      const item = fresh[i] as Json;
      const before = previous[i] as Json;
      const kept = shareRepeats(item, before);
      if (kept !== item) fresh[i] = kept;
      if (same) same = kept === before || (typeof item !== 'object' && Object.is(item, before));
    }
    return same ? previous : fresh;
  }
  if (Array.isArray(previous)) return fresh;
  const before = previous as JsonObject;
  let same = true;
  let count = 0;
  for (const key in fresh) {
    count++;
    const item = fresh[key] as Json;
    if (!Object.prototype.hasOwnProperty.call(before, key)) {
      same = false;
      continue;
    }
    const old = before[key] as Json;
    const kept = shareRepeats(item, old);
    if (kept !== item) defineKey(fresh, key, kept);
    if (same) same = kept === old || (typeof item !== 'object' && Object.is(item, old));
  }
  if (!same) return fresh;
  for (const key in before) if (--count < 0 || !Object.prototype.hasOwnProperty.call(fresh, key)) return fresh;
  return count === 0 ? previous : fresh;
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
 *
 * Each stamp is one join of two flat strings: the second's text up to its
 * point (made flat once per second) and the rest ("352608+00:00"). A
 * left-to-right template (`base + "." + digits + offset`) makes V8 build a
 * rope of three joins, and an event object keeps its stamp as long as a
 * session's trajectory keeps the event: every collection copies each join,
 * and every reader (the trajectory's parse and text) walks them. The rest
 * stays below V8's rope threshold (13 characters), so V8 makes it flat.
 */
export function createTimestampFormatter(): (micros: number) => string {
  let lastSecond = Number.NaN;
  let lastWhole = '';
  let lastPoint = '';
  return (micros) => {
    const second = Math.floor(micros / 1_000_000);
    if (second !== lastSecond) {
      lastWhole = formatTimestamp(second * 1_000_000); // "...T14:59:29+00:00"
      // `join` writes one flat string, where `+` would make a rope.
      lastPoint = [lastWhole.slice(0, lastWhole.length - 6), '.'].join('');
      lastSecond = second;
    }
    const fraction = micros - second * 1_000_000;
    if (fraction === 0) return lastWhole;
    if (fraction % 1000 === 0) return lastPoint + (String(fraction / 1000).padStart(3, '0') + '+00:00');
    return lastPoint + (String(fraction).padStart(6, '0') + '+00:00');
  };
}
