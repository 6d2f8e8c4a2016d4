/**
 * Metadata as a scope or span record keeps it from its start to its end,
 * where native merges it with the end metadata (rules in `events.ts`).
 *
 * A record started while nobody needs event objects keeps flat metadata
 * (the usual shape: ids and a few scalars) as sorted entries of the
 * caller's primitive values. An end's metadata is then a stack of such
 * entries (start, end, the status keys native adds) written by merging
 * them as they are written: no object is copied or re-serialized, and no
 * merged list is built. Anything else (not an object, nested values, or an
 * object only the general conversion takes) is kept as converted JSON and
 * merged by the functions in `events.ts`, exactly as an event object would
 * be. The JSON form of entries is built when first asked for.
 *
 * @module
 */

import type { Json } from '../../relay/contract.ts';
import { isJsonObject } from '../../shared/json.ts';
import { llmEndMetadata, managedOkMetadata, mergeMetadata, payload, toolErrorMetadata } from './events.ts';
import type { LineBuilder } from './line-builder.ts';
import { payloadJsonText } from './atof-line.ts';
import { entriesJson, flatEntries, mergeEntries, NO_ENTRIES, singleEntry, writeLayers, type Entries } from './payload-text.ts';

/**
 * Converted metadata: a flat object as entries (or as layers of entries,
 * later layers winning, `omit` left out of all but the last), or a JSON value.
 */
export class Metadata {
  static readonly NULL = new Metadata(undefined, undefined, null);

  #entries: Entries | undefined;
  #json: Json | undefined;

  private constructor(
    private readonly layers: readonly Entries[] | undefined,
    private readonly omit: string | undefined,
    json: Json | undefined,
  ) {
    this.#json = json;
    if (layers !== undefined && layers.length === 1 && omit === undefined) this.#entries = layers[0];
  }

  static ofJson(json: Json): Metadata {
    return json === null ? Metadata.NULL : new Metadata(undefined, undefined, json);
  }

  static ofEntries(entries: Entries): Metadata {
    return new Metadata([entries], undefined, undefined);
  }

  /** A flat object merged from `layers` (later ones win), leaving `omit` out of all but the last. */
  static ofLayers(layers: readonly Entries[], omit?: string): Metadata {
    return new Metadata(layers, omit, undefined);
  }

  /** The flat object's entries; undefined for JSON metadata. */
  get entries(): Entries | undefined {
    if (this.#entries === undefined && this.layers !== undefined) {
      const layers = this.layers;
      let merged = layers[0]!;
      for (let i = 1; i < layers.length; i++) merged = mergeEntries(merged, layers[i]!, i === layers.length - 1 ? this.omit : undefined);
      // `omit` leaves every layer but the last; with one layer there is nothing to leave it out of.
      this.#entries = merged;
    }
    return this.#entries;
  }

  /** The converted value, as an event object carries it. */
  get json(): Json {
    if (this.#json === undefined) this.#json = entriesJson(this.entries!);
    return this.#json;
  }

  /** Writes native's text of the value. */
  write(out: LineBuilder): void {
    if (this.layers !== undefined) writeLayers(out, this.layers, this.omit);
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
    return this.layers === undefined && isJsonObject(this.#json);
  }

  /** The layers of a flat object (one for plain entries), for stacking in another merge; undefined for JSON. */
  get stack(): readonly Entries[] | undefined {
    if (this.layers === undefined) return undefined;
    return this.omit === undefined ? this.layers : [this.entries!];
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
  const over = end.stack;
  if (over !== undefined) {
    const under = start.stack;
    if (under !== undefined) return Metadata.ofLayers([...under, ...over]);
    if (!start.isJsonObject) return end;
  } else if (!end.isJsonObject) {
    return end;
  }
  return Metadata.ofJson(mergeMetadata(start.json, end.json));
}

const LLM_OK = singleEntry('otel.status_code', 'OK');
const TOOL_ERROR = singleEntry('otel.status_code', 'ERROR');
const LLM_ERROR = TOOL_ERROR;

/** `llmEndMetadata`: the object sides merged, `otel.status_code` forced to OK, no description. */
export function llmEndMetadataOf(start: Metadata, end: Metadata, failed = false): Metadata {
  if (start.isJsonObject || end.isJsonObject) return Metadata.ofJson(llmEndMetadata(start.json, end.json, failed));
  return Metadata.ofLayers([start.entries ?? NO_ENTRIES, end.entries ?? NO_ENTRIES, failed ? LLM_ERROR : LLM_OK], 'otel.status_description');
}

/** `managedOkMetadata`: start metadata with `otel.status_code: "OK"`. */
export function managedOkMetadataOf(start: Metadata): Metadata {
  if (start.isJsonObject) return Metadata.ofJson(managedOkMetadata(start.json));
  return Metadata.ofLayers([start.entries ?? NO_ENTRIES, LLM_OK]);
}

/** `toolErrorMetadata`: the end metadata (a non-object under `metadata`) with `otel.status_code: "ERROR"`, merged over start. */
export function toolErrorMetadataOf(start: Metadata, end: Metadata): Metadata {
  const endValue = end.entries === undefined ? end.json : undefined;
  // Only a primitive end value fits a flat entry; anything else takes the JSON functions.
  if (start.isJsonObject || (typeof endValue === 'object' && endValue !== null)) {
    return Metadata.ofJson(toolErrorMetadata(start.json, end.json));
  }
  const base = end.entries ?? (endValue === null ? NO_ENTRIES : singleEntry('metadata', endValue!));
  return mergedMetadata(start, Metadata.ofLayers([base, TOOL_ERROR]));
}
