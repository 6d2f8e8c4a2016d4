/**
 * Metadata as a scope or span record keeps it from its start to its end,
 * where native merges it with the end metadata (rules in `events.ts`).
 *
 * A record started while nobody needs event objects keeps the converted
 * object as sorted entries (each value already as text), so the end line
 * is a merge of two sorted lists, with no object copied or re-serialized.
 * Anything the entries cannot hold (not an object, or an object only the
 * general conversion takes) is kept as converted JSON and merged by the
 * functions in `events.ts`, exactly as an event object would be. Either
 * form gives the other on demand.
 *
 * @module
 */

import type { Json } from '../contract.ts';
import { isJsonObject } from '../json.ts';
import { llmEndMetadata, managedOkMetadata, mergeMetadata, payload, toolErrorMetadata } from './events.ts';
import { payloadJsonText } from './native-json.ts';
import { entriesText, mergeEntries, NO_ENTRIES, payloadEntries, type Entries } from './payload-text.ts';

/** Converted metadata: sorted entries or a JSON value, the other form built when first asked for. */
export class Metadata {
  static readonly NULL = new Metadata(undefined, null);

  #json: Json | undefined;
  #text: string | undefined;

  private constructor(
    /** Set when the value is an object held as entries. */
    readonly entries: Entries | undefined,
    json: Json | undefined,
  ) {
    this.#json = json;
  }

  static ofJson(json: Json): Metadata {
    return json === null ? Metadata.NULL : new Metadata(undefined, json);
  }

  static ofEntries(entries: Entries): Metadata {
    return new Metadata(entries, undefined);
  }

  /** The converted value, as an event object carries it. */
  get json(): Json {
    if (this.#json === undefined) {
      // Entries hold native text of plain JSON: parsing it back gives the converted object.
      this.#json = JSON.parse(this.text) as Json;
    }
    return this.#json;
  }

  /** Native's text of the value. */
  get text(): string {
    if (this.#text === undefined) this.#text = this.entries !== undefined ? entriesText(this.entries) : payloadJsonText(this.#json!);
    return this.#text;
  }

  /** True when the converted value is `null`. */
  get isNull(): boolean {
    return this === Metadata.NULL;
  }

  /** True for an object the entries do not hold: merging it takes the JSON functions. */
  get isJsonObject(): boolean {
    return this.entries === undefined && isJsonObject(this.#json);
  }
}

/** Converts raw metadata as `payload()` does, into entries when the fast path takes it. */
export function convertMetadata(value: unknown): Metadata {
  if (value == null) return Metadata.NULL;
  const entries = payloadEntries(value);
  return entries !== undefined ? Metadata.ofEntries(entries) : Metadata.ofJson(payload(value));
}

/** `mergeMetadata`: end null keeps start, two objects merge (end wins), anything else is the end value. */
export function mergedMetadata(start: Metadata, end: Metadata): Metadata {
  if (end.isNull) return start;
  if (end.entries !== undefined) {
    if (start.entries !== undefined) return Metadata.ofEntries(mergeEntries(start.entries, end.entries));
    if (!start.isJsonObject) return end;
  } else if (!end.isJsonObject) {
    return end;
  }
  return Metadata.ofJson(mergeMetadata(start.json, end.json));
}

const LLM_OK: Entries = { keys: ['otel.status_code'], heads: ['"otel.status_code":'], texts: ['"OK"'] };
const TOOL_ERROR: Entries = { keys: ['otel.status_code'], heads: ['"otel.status_code":'], texts: ['"ERROR"'] };

/** `llmEndMetadata`: the object sides merged, `otel.status_code` forced to OK, no description. */
export function llmEndMetadataOf(start: Metadata, end: Metadata): Metadata {
  if (start.isJsonObject || end.isJsonObject) return Metadata.ofJson(llmEndMetadata(start.json, end.json));
  const merged = mergeEntries(start.entries ?? NO_ENTRIES, end.entries ?? NO_ENTRIES);
  return Metadata.ofEntries(mergeEntries(merged, LLM_OK, 'otel.status_description'));
}

/** `managedOkMetadata`: start metadata with `otel.status_code: "OK"`. */
export function managedOkMetadataOf(start: Metadata): Metadata {
  if (start.isJsonObject) return Metadata.ofJson(managedOkMetadata(start.json));
  return Metadata.ofEntries(mergeEntries(start.entries ?? NO_ENTRIES, LLM_OK));
}

/** `toolErrorMetadata`: the end metadata (a non-object under `metadata`) with `otel.status_code: "ERROR"`, merged over start. */
export function toolErrorMetadataOf(start: Metadata, end: Metadata): Metadata {
  // An array end value ends up inside an object here: its text must come from the same writer as the rest.
  if (start.isJsonObject || end.isJsonObject || (end.entries === undefined && Array.isArray(end.json))) {
    return Metadata.ofJson(toolErrorMetadata(start.json, end.json));
  }
  let base = end.entries;
  if (base === undefined) {
    base = end.isNull ? NO_ENTRIES : { keys: ['metadata'], heads: ['"metadata":'], texts: [end.text] };
  }
  return mergedMetadata(start, Metadata.ofEntries(mergeEntries(base, TOOL_ERROR)));
}
