/**
 * EncodedMetadata from a scope's or span's start to its end, where native merges it
 * with the end metadata: the merge rules, once, in both forms the relay's
 * encoders use (JSON values for event objects, entries for lines).
 *
 * The rules that are not obvious from the ATOF text, each checked against
 * `nemo-relay-node@0.9.2` (the contract's part is `relay/rules.ts`):
 * - end metadata is the start metadata shallow-merged with the end
 *   metadata when both are objects; otherwise a non-null end value replaces
 *   the start value;
 * - a manual LLM end always carries `otel.status_code: "OK"` and never
 *   `otel.status_description`; if the merged metadata is not an object it
 *   becomes `{"otel.status_code": "OK"}`;
 * - an error-ended tool's end metadata gets `otel.status_code: "ERROR"`
 *   (a non-object value under `metadata`) before the merge;
 * - a failed managed call gets native's error keys.
 *
 *
 * A record started while nobody needs event objects keeps flat metadata
 * (the usual shape: ids and a few scalars) as sorted entries of the
 * caller's primitive values. An end's metadata is then a stack of such
 * entries (start, end, the status keys native adds) written by merging
 * them as they are written: no object is copied or re-serialized, and no
 * merged list is built. Anything else (not an object, nested values, or an
 * object only the general conversion takes) is kept as converted JSON and
 * merged by the JSON functions below, exactly as an event object would be. The JSON form of entries is built when first asked for.
 *
 * @module
 */

import type { Json, JsonObject } from '../../../relay/contract.ts';
import { mergeEndMetadata, NON_OBJECT_METADATA_KEY, STATUS_CODE_KEY, toolErrorEndMetadata } from '../../../relay/rules.ts';
import { compareKeys, defineKey, isJsonObject, wellFormed } from '../../../shared/json.ts';
import { literalsAllowed, objectLiteralFunction, USES_BEFORE_LITERAL } from '../../../shared/object-literal.ts';
import { sortedObject, copyPayload } from './event-parts.ts';
import type { LineBuilder } from '../../../shared/utf8-builder.ts';
import { payloadJsonText } from './event-text.ts';
import { entriesJson, flatEntries, mergeEntries, NO_ENTRIES, singleEntry, writeLayers, type Entries } from './payload-bytes.ts';

/**
 * Converted metadata: a flat object as entries (or as layers of entries,
 * later layers winning, `omit` left out of all but the last), or a JSON value.
 */
export class EncodedMetadata {
  static readonly NULL = new EncodedMetadata(undefined, undefined, null);

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

  static ofJson(json: Json): EncodedMetadata {
    return json === null ? EncodedMetadata.NULL : new EncodedMetadata(undefined, undefined, json);
  }

  static ofEntries(entries: Entries): EncodedMetadata {
    return new EncodedMetadata([entries], undefined, undefined);
  }

  /** A flat object merged from `layers` (later ones win), leaving `omit` out of all but the last. */
  static ofLayers(layers: readonly Entries[], omit?: string): EncodedMetadata {
    return new EncodedMetadata(layers, omit, undefined);
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
    return this === EncodedMetadata.NULL;
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

/** Converts raw metadata as `copyPayload(value, drop)` does, into entries when it is a flat object the fast path takes. */
export function convertMetadata(value: unknown, drop: boolean): EncodedMetadata {
  if (value == null) return EncodedMetadata.NULL;
  const entries = flatEntries(value, drop);
  return entries !== undefined ? EncodedMetadata.ofEntries(entries) : EncodedMetadata.ofJson(copyPayload(value, drop));
}

/** `mergeMetadata`: end null keeps start, two objects merge (end wins), anything else is the end value. */
export function mergedMetadata(start: EncodedMetadata, end: EncodedMetadata): EncodedMetadata {
  if (end.isNull) return start;
  const over = end.stack;
  if (over !== undefined) {
    const under = start.stack;
    if (under !== undefined) return EncodedMetadata.ofLayers([...under, ...over]);
    if (!start.isJsonObject) return end;
  } else if (!end.isJsonObject) {
    return end;
  }
  return EncodedMetadata.ofJson(mergeMetadata(start.json, end.json));
}

let statusEntries: { ok: Entries; error: Entries } | undefined;
/**
 * The `otel.status_code` entry the end metadata adds (ERROR for a failed LLM call and a tool error), encoded at
 * the first use rather than at import (bench/RESULTS.md, "Issue 21: the main entry's import on Bun, what runs at
 * import").
 */
function statusEntry(error: boolean): Entries {
  statusEntries ??= { ok: singleEntry(STATUS_CODE_KEY, 'OK', true), error: singleEntry(STATUS_CODE_KEY, 'ERROR', true) };
  return error ? statusEntries.error : statusEntries.ok;
}

/** `llmEndMetadata`: the object sides merged, `otel.status_code` forced to OK (ERROR when `failed`), no description. */
export function llmEndMetadataOf(start: EncodedMetadata, end: EncodedMetadata, failed = false): EncodedMetadata {
  if (start.isJsonObject || end.isJsonObject) return EncodedMetadata.ofJson(llmEndMetadata(start.json, end.json, failed));
  return EncodedMetadata.ofLayers([start.entries ?? NO_ENTRIES, end.entries ?? NO_ENTRIES, statusEntry(failed)], 'otel.status_description');
}

/** `managedOkMetadata`: start metadata with `otel.status_code: "OK"`. */
export function managedOkMetadataOf(start: EncodedMetadata): EncodedMetadata {
  if (start.isJsonObject) return EncodedMetadata.ofJson(managedOkMetadata(start.json));
  return EncodedMetadata.ofLayers([start.entries ?? NO_ENTRIES, statusEntry(false)]);
}

/** `toolErrorMetadata`: the end metadata (a non-object under `metadata`) with `otel.status_code: "ERROR"`, merged over start. */
export function toolErrorMetadataOf(start: EncodedMetadata, end: EncodedMetadata): EncodedMetadata {
  const endValue = end.entries === undefined ? end.json : undefined;
  // Only a primitive end value fits a flat entry; anything else takes the JSON functions.
  if (start.isJsonObject || (typeof endValue === 'object' && endValue !== null)) {
    return EncodedMetadata.ofJson(toolErrorMetadata(start.json, end.json));
  }
  const base = end.entries ?? (endValue === null ? NO_ENTRIES : singleEntry(NON_OBJECT_METADATA_KEY, endValue!));
  return mergedMetadata(start, EncodedMetadata.ofLayers([base, statusEntry(true)]));
}

// ---- the same rules on JSON values (event objects) ----------------------------

/**
 * Start metadata merged with end metadata, as native does: a shallow merge
 * (end wins) when both are objects, otherwise a non-null end value replaces
 * the start value. The result has sorted keys and is a new object, so the
 * start event is never mutated.
 */
export function mergeMetadata(start: Json, end: Json): Json {
  if (end !== null && isJsonObject(start) && isJsonObject(end)) {
    const merged = mergedSorted([start, end]);
    if (merged !== undefined) return merged;
  }
  const merged = mergeEndMetadata(start, end);
  return merged === start || merged === end || !isJsonObject(merged) ? merged : sortedObject(merged);
}

/**
 * `layers` merged into one new object (a later layer's value wins, `omit`
 * left out of all but the last layer): each layer's keys already come in
 * the package's key order (the relay's copies are sorted), so the union is
 * merged in order, with no intermediate object and no sort. Undefined when a
 * layer's keys do not come in that order (an integer-like key, which an
 * object lists first): the caller then merges and sorts. Measured in
 * bench/RESULTS.md, "the object path before the converter".
 *
 * An end's layers nearly always have the key lists of the ends before it
 * (the start's and end's metadata of one kind of hook, a status constant),
 * so where each key comes from is worked out once per combination of lists
 * (`MergePlan`), and a combination met often builds its object from a
 * generated literal: one object with its properties in place, where stores
 * of computed keys make a second one to hold them, which the trajectory
 * keeps as long as the event (bench/RESULTS.md, "end metadata from a plan").
 */
function mergedSorted(layers: readonly JsonObject[], omit?: string): JsonObject | undefined {
  const count = layers.length;
  const keys: string[][] = [];
  for (let l = 0; l < count; l++) keys.push(Object.keys(layers[l]!));
  let plan = knownPlan(keys, omit);
  if (plan === undefined) {
    plan = mergePlan(keys, omit);
    if (plan === undefined) return undefined;
    if (plans.length < MAX_PLANS) plans.push(plan);
    else plans[nextPlan++ % MAX_PLANS] = plan;
  }
  const build = builderOf(plan);
  if (build !== null) return build(layers);
  const out: JsonObject = {};
  const { from } = plan;
  for (let i = 0; i < from.length; i++) {
    const key = plan.keys[i]!;
    defineKey(out, key, layers[from[i]!]![key]!);
  }
  return out;
}

/** Which layer each key of a merge comes from, for one combination of the layers' key lists. */
interface MergePlan {
  /** The layers' key lists, as `Object.keys` gave them. */
  readonly lists: readonly (readonly string[])[];
  readonly omit: string | undefined;
  /** The merged object's keys, in order. */
  readonly keys: readonly string[];
  /** For each of `keys`, the layer whose value it takes. */
  readonly from: readonly number[];
  /** Merges built with the plan so far, until its literal is generated. */
  uses: number;
  /** The generated literal; null before, or when it cannot be generated. */
  build: MergeBuilder | null;
}

type MergeBuilder = (layers: readonly JsonObject[]) => JsonObject;

/** Plans kept (the combinations of a host's hook kinds; one replaced when full). */
const MAX_PLANS = 32;
const plans: MergePlan[] = [];
let nextPlan = 0;

function knownPlan(keys: readonly string[][], omit: string | undefined): MergePlan | undefined {
  for (let p = 0; p < plans.length; p++) {
    const plan = plans[p]!;
    if (plan.omit !== omit || plan.lists.length !== keys.length) continue;
    let same = true;
    for (let l = 0; l < keys.length && same; l++) same = sameList(plan.lists[l]!, keys[l]!);
    if (same) return plan;
  }
  return undefined;
}

function sameList(known: readonly string[], keys: readonly string[]): boolean {
  if (known.length !== keys.length) return false;
  for (let i = 0; i < keys.length; i++) if (known[i] !== keys[i]) return false;
  return true;
}

/** The plan of a merge, or undefined when a list is not in the package's key order. */
function mergePlan(keys: readonly string[][], omit: string | undefined): MergePlan | undefined {
  const count = keys.length;
  for (let l = 0; l < count; l++) {
    const own = keys[l]!;
    for (let i = 1; i < own.length; i++) if (compareKeys(own[i - 1]!, own[i]!) >= 0) return undefined;
  }
  const at = new Array<number>(count).fill(0);
  const last = count - 1;
  const merged: string[] = [];
  const from: number[] = [];
  for (;;) {
    let next: string | undefined;
    for (let l = 0; l < count; l++) {
      const key = keys[l]![at[l]!];
      if (key !== undefined && (next === undefined || compareKeys(key, next) < 0)) next = key;
    }
    if (next === undefined) return { lists: keys, omit, keys: merged, from, uses: 0, build: null };
    let winner = -1;
    for (let l = 0; l < count; l++) {
      if (keys[l]![at[l]!] !== next) continue;
      winner = l;
      at[l]!++;
    }
    if (next === omit && winner !== last) continue;
    merged.push(next);
    from.push(winner);
  }
}

/**
 * The plan's generated literal, `(l) => ({ "a": l[0]["a"], "b": l[1]["b"] })`
 * (`shared/object-literal.ts`), or null while the loop builds it. Values are
 * read in the loop's order, from the same layers.
 */
function builderOf(plan: MergePlan): MergeBuilder | null {
  if (plan.build !== null || !literalsAllowed() || ++plan.uses !== USES_BEFORE_LITERAL) return plan.build;
  const from = plan.from;
  plan.build = objectLiteralFunction<MergeBuilder>(['l'], plan.keys, (name, i) => `l[${from[i]!}][${name}]`);
  return plan.build;
}

/**
 * `base` (already sorted, or not an object) with `extra` keys set over it,
 * keys sorted. A non-object `base` is dropped, as native does when it has to
 * add status keys to metadata that is a string or an array.
 */
export function withKeys(base: Json, extra: JsonObject, omit?: string): JsonObject {
  if (isJsonObject(base)) {
    const merged = mergedSorted([base, extra], omit);
    if (merged !== undefined) return merged;
  }
  const merged: JsonObject = {};
  if (isJsonObject(base)) for (const key in base) if (key !== omit) defineKey(merged, key, base[key]!);
  for (const key in extra) defineKey(merged, key, extra[key]!);
  return sortedObject(merged);
}

const LLM_OK = { [STATUS_CODE_KEY]: 'OK' } as const;
const LLM_ERROR = { [STATUS_CODE_KEY]: 'ERROR' } as const;

/**
 * End metadata of a manual LLM end, as native builds it: the object parts
 * of start and end metadata merged (a non-object side is ignored), then
 * `otel.status_code` forced to `"OK"` and `otel.status_description` dropped.
 * A failed call (`failed`, the end's status `'error'`) gets `"ERROR"`
 * instead: an intentional difference from native, which cannot say so.
 */
export function llmEndMetadata(start: Json, end: Json, failed = false): JsonObject {
  if (isJsonObject(start) && isJsonObject(end)) {
    const merged = mergedSorted([start, end, failed ? LLM_ERROR : LLM_OK], 'otel.status_description');
    if (merged !== undefined) return merged;
  }
  const merged = mergeMetadata(isJsonObject(start) ? start : null, isJsonObject(end) ? end : null);
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
  return mergeMetadata(start, sortedObject(toolErrorEndMetadata(end)));
}

/**
 * End metadata of a failed managed call, the keys native writes: the
 * exception's name and message behind `internal error: `.
 */
export function managedErrorMetadata(start: Json, error: unknown): JsonObject {
  // The thrown error's texts reach native as Rust strings: a lone surrogate in them becomes U+FFFD.
  return withKeys(start, {
    'error.type': 'internal_error',
    'exception.type': wellFormed(exceptionType(error)),
    'otel.status_code': 'ERROR',
    'otel.status_description': wellFormed(`internal error: ${exceptionMessage(error)}`),
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

// ---- one entry per end kind, for each encoder ---------------------------------

/** How an end's metadata comes from its start metadata and the end's own input. */
export type EndRule = 'merge' | 'llm' | 'llm-error' | 'tool-error' | 'managed-ok' | 'managed-error';

/**
 * The end metadata in the line encoder's form (`end` is the caller's raw metadata, or the thrown value for
 * `managed-error`); `drop` as `copyPayload`'s.
 */
export function endMetadata(rule: EndRule, start: EncodedMetadata, end: unknown, drop: boolean): EncodedMetadata {
  switch (rule) {
    case 'merge':
      return mergedMetadata(start, convertMetadata(end, drop));
    case 'llm':
      return llmEndMetadataOf(start, convertMetadata(end, drop));
    case 'llm-error':
      return llmEndMetadataOf(start, convertMetadata(end, drop), true);
    case 'tool-error':
      return toolErrorMetadataOf(start, convertMetadata(end, drop));
    case 'managed-ok':
      return managedOkMetadataOf(start);
    case 'managed-error':
      return EncodedMetadata.ofJson(managedErrorMetadata(start.json, end));
  }
}

/** The end metadata in the object encoder's form. */
export function endMetadataJson(rule: EndRule, start: Json, end: unknown, drop: boolean): Json {
  switch (rule) {
    case 'merge':
      return mergeMetadata(start, copyPayload(end, drop));
    case 'llm':
      return llmEndMetadata(start, copyPayload(end, drop));
    case 'llm-error':
      return llmEndMetadata(start, copyPayload(end, drop), true);
    case 'tool-error':
      return toolErrorMetadata(start, copyPayload(end, drop));
    case 'managed-ok':
      return managedOkMetadata(start);
    case 'managed-error':
      return managedErrorMetadata(start, end);
  }
}
