/**
 * Metadata as a scope or span record keeps it from its start to its end,
 * where native merges it with the end metadata (rules in `events.ts`).
 *
 * A record started while nobody needs event objects keeps flat metadata
 * (the usual shape: ids and a few scalars) as sorted entries of the
 * caller's primitive values, so the end line is written from a merge of
 * two sorted lists, with no object copied or re-serialized. Anything else
 * (not an object, nested values, or an object only the general conversion
 * takes) is kept as converted JSON and merged by the functions in
 * `events.ts`, exactly as an event object would be. The JSON form of
 * entries is built when first asked for.
 *
 * @module
 */

import type { Json } from '../contract.ts';
import { isJsonObject } from '../json.ts';
import { llmEndMetadata, managedOkMetadata, mergeMetadata, payload, toolErrorMetadata } from './events.ts';
import type { LineBuilder } from './line-builder.ts';
import { payloadJsonText } from './native-json.ts';
import { entriesJson, flatEntries, mergeEntries, NO_ENTRIES, singleEntry, writeEntries, type Entries } from './payload-text.ts';

/** Converted metadata: sorted entries of a flat object, or a JSON value. */
export class Metadata {
  static readonly NULL = new Metadata(undefined, null);

  #json: Json | undefined;

  private constructor(
    /** Set when the value is a flat object held as entries. */
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
    if (this.#json === undefined) this.#json = entriesJson(this.entries!);
    return this.#json;
  }

  /** Writes native's text of the value. */
  write(out: LineBuilder): void {
    if (this.entries !== undefined) writeEntries(out, this.entries);
    else if (this.#json === null) out.ascii('null');
    // JSON built by the merge functions may hold strings as given (error messages): their writer keeps them as is.
    else out.utf8(payloadJsonText(this.#json!));
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

/** Converts raw metadata as `payload()` does, into entries when it is a flat object the fast path takes. */
export function convertMetadata(value: unknown): Metadata {
  if (value == null) return Metadata.NULL;
  const entries = flatEntries(value);
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

const LLM_OK = singleEntry('otel.status_code', 'OK');
const TOOL_ERROR = singleEntry('otel.status_code', 'ERROR');

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
  const endValue = end.entries === undefined ? end.json : undefined;
  // Only a primitive end value fits a flat entry; anything else takes the JSON functions.
  if (start.isJsonObject || (typeof endValue === 'object' && endValue !== null)) {
    return Metadata.ofJson(toolErrorMetadata(start.json, end.json));
  }
  const base = end.entries ?? (endValue === null ? NO_ENTRIES : singleEntry('metadata', endValue!));
  return mergedMetadata(start, Metadata.ofEntries(mergeEntries(base, TOOL_ERROR)));
}
