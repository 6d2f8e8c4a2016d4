/**
 * Payload text in one pass: native's ATOF text of `copyPayload(value)` written
 * straight from the caller's value into a line's bytes, without building
 * the sorted deep copy first and serializing it afterwards.
 *
 * The fast path takes the shapes hook payloads have: plain objects (and
 * class instances without `toJSON`, `Date`, `Map`, `Set`, `Error` or binary
 * data), arrays, strings, numbers, booleans, BigInts, `null`, and the
 * values `toJson` drops. It writes what `toJson(value, { sortKeys: true })`
 * followed by native's writer (`formats/native-text.ts`) would: keys in
 * code-point order, native number text, lone surrogates as U+FFFD.
 * Anything else gives up on the whole value, whose bytes are then rolled
 * back and written by the general path (`toJson` and the exact writer),
 * exactly as before: special objects, a throwing getter or trap, nesting
 * at `toJson`'s depth limit (which is also where a cycle ends up, so no
 * ancestor set is kept), and keys with characters at or above U+D800, whose
 * UTF-16 and code-point orders can differ. A getter the fast path read
 * before giving up runs a second time on the general path.
 *
 * Sorting keys is the expensive part of a small object, and payloads of
 * one kind share their key list, so sorted key lists (and their encoded
 * `,"key":` heads) are cached per key list (bounded; a payload with keys
 * never seen before pays the sort once).
 *
 * Media bytes are left out as the copy leaves them out (`toJson`'s
 * `withoutBlobs`; kept, as the copy keeps them, for a managed call's content,
 * `whole`): a long string is written as `blobText` gives it; binary data is
 * special, so it takes the general path.
 *
 * `drop` (the relay's `dropCredentialHeaders`): credential headers are
 * dropped as `withoutSensitiveHeaders` would before the copy
 * (`shared/credential-headers.ts`). Whether a key list holds a `headers`
 * key (in any case) is known once per list, with its sorted order: a value
 * none of whose objects has one is written by the fast path unchanged (the
 * walk would have returned it as it is); any other gives up and takes the
 * general path, where `toJson`'s `withoutCredentialHeaders` drops them.
 *
 * @module
 */

import type { Json } from '../../../relay/contract.ts';
import { formatF64 } from '../../../formats/native-text/numbers.ts';
import { JSON_LIMITS, toJson, wellFormed } from '../../../shared/json.ts';
import { isHeadersKey } from '../../../shared/credential-headers.ts';
import { BLOB_CHARS, blobText } from '../../../shared/blobs.ts';
import { KeyListCache } from '../../../shared/key-lists.ts';
import { encoded, giveBack, takeBuilder, type LineBuilder } from '../../../shared/utf8-builder.ts';
import { payloadJsonText } from './event-text.ts';
import { copyOptions } from './event-parts.ts';

/** `toJson`'s default depth limit, read once: an object this deep becomes `"[MaxDepth]"` (or `"[Circular]"`). */
const MAX_DEPTH = JSON_LIMITS.maxDepth;

/** Writes native's text of `copyPayload(value, drop, whole)`. */
export function writePayload(out: LineBuilder, value: unknown, drop: boolean, whole = false): void {
  if (!writeFastPayload(out, value, drop, whole)) out.utf8(generalPayloadText(value, drop, whole));
}

/**
 * Writes native's text of `copyPayload(value, drop, whole)` when the fast path takes all of
 * it and returns true; otherwise writes nothing and returns false.
 */
export function writeFastPayload(out: LineBuilder, value: unknown, drop: boolean, whole = false): boolean {
  if (typeof value !== 'object' || value === null) {
    if (!writePrimitive(out, value, !whole)) out.ascii('null');
    return true;
  }
  // Relative to the line's start: a getter that flushes the writer moves the open line.
  const written = out.length - out.start;
  try {
    writeObject(out, value, 0, drop, !whole);
    return true;
  } catch {
    out.length = out.start + written;
    return false;
  }
}

/** The general path: `toJson` with sorted keys, then the exact writer. */
function generalPayloadText(value: unknown, drop: boolean, whole: boolean): string {
  return payloadJsonText(toJson(value, copyOptions(drop, whole)) as Json);
}

/** Native's text of `copyPayload(value, drop, whole)`, as a string. */
export function payloadText(value: unknown, drop = false, whole = false): string {
  const out = takeBuilder();
  try {
    writePayload(out, value, drop, whole);
    return out.text();
  } finally {
    giveBack(out);
  }
}

// ---- flat objects ---------------------------------------------------------

/** A value of a flat object: what `toJson` keeps of a primitive, converted when written. */
export type FlatValue = string | number | boolean | bigint | null;

/**
 * A flat object payload (every value a primitive) as sorted entries: the
 * converted object's keys in native order, their encoded `,"key":` heads,
 * and their values. Only keys below U+D800, so plain `<` orders them as
 * native does.
 */
export interface Entries {
  readonly keys: readonly string[];
  readonly heads: readonly Uint8Array[];
  readonly values: readonly FlatValue[];
  /**
   * True when `keys` is a list that outlives this event (a cached shape's
   * sorted keys, or a constant's): merge plans are cached by its identity.
   */
  readonly shared: boolean;
}

export const NO_ENTRIES: Entries = { keys: [], heads: [], values: [], shared: true };

/**
 * The entries of a flat object payload, or undefined when the value is not
 * an object the fast path takes or holds a nested object or array, or when
 * `drop` and it has a `headers` key (header text would be cleaned).
 * Strings are kept as given (immutable; converted when written).
 */
export function flatEntries(value: unknown, drop: boolean): Entries | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  try {
    const shape = shapeOf(value);
    if (drop && shape.headersKey) return undefined;
    const { sorted, heads } = shape;
    const count = sorted.length;
    const values: (FlatValue | undefined)[] = new Array(count);
    let dropped = 0;
    for (let i = 0; i < count; i++) {
      const item: unknown = (value as Record<string, unknown>)[sorted[i]!];
      switch (typeof item) {
        case 'string':
        case 'number':
        case 'boolean':
        case 'bigint':
          values[i] = item;
          break;
        case 'object':
          if (item !== null) return undefined;
          values[i] = null;
          break;
        default:
          // undefined, functions and symbols: `toJson` leaves the key out.
          dropped++;
      }
    }
    if (dropped === 0) return { keys: sorted, heads, values: values as FlatValue[], shared: true };
    const keptKeys: string[] = [];
    const keptHeads: Uint8Array[] = [];
    const keptValues: FlatValue[] = [];
    for (let i = 0; i < count; i++) {
      const kept = values[i];
      if (kept === undefined) continue;
      keptKeys.push(sorted[i]!);
      keptHeads.push(heads[i]!);
      keptValues.push(kept);
    }
    return { keys: keptKeys, heads: keptHeads, values: keptValues, shared: false };
  } catch {
    return undefined;
  }
}

/** Writes a flat object from its entries: `{"a":1,"b":"x"}`. */
export function writeEntries(out: LineBuilder, entries: Entries): void {
  const { heads, values } = entries;
  if (heads.length === 0) {
    out.ascii('{}');
    return;
  }
  for (let i = 0; i < heads.length; i++) {
    out.raw(heads[i]!);
    if (i === 0) openAtHead(out, heads[0]!);
    writePrimitive(out, values[i]);
  }
  out.byte(0x7d); // }
}

/**
 * Turns the comma of the head just written into the object's `{`: every head
 * is kept as `,"key":`, so a key is one copy, and the first one opens the object.
 */
function openAtHead(out: LineBuilder, head: Uint8Array): void {
  out.bytes[out.length - head.length] = 0x7b; // {
}

/**
 * Writes the flat object merged from `layers` (a later layer's value wins
 * for a key several have), leaving `omit` out of every layer but the last:
 * what `mergeEntries` gives, written as the lists are merged.
 *
 * Which layer and index each written key comes from depends only on the
 * layers' key lists, and an end's layers are nearly always the same cached
 * lists (the start's shape, the end's shape, a status constant): that plan
 * is computed once per combination, so writing an end's metadata compares
 * no keys.
 */
export function writeLayers(out: LineBuilder, layers: readonly Entries[], omit: string | undefined): void {
  const count = layers.length;
  if (count === 1) {
    writeEntries(out, layers[0]!);
    return;
  }
  const plan = planOf(layers, omit);
  const from = plan.from;
  const at = plan.at;
  if (from.length === 0) {
    out.ascii('{}');
    return;
  }
  for (let i = 0; i < from.length; i++) {
    const layer = layers[from[i]!]!;
    const index = at[i]!;
    const head = layer.heads[index]!;
    out.raw(head);
    if (i === 0) openAtHead(out, head);
    writePrimitive(out, layer.values[index]);
  }
  out.byte(0x7d); // }
}

/** Where each key of a merge of layers comes from, in output order. */
interface MergePlan {
  readonly lists: readonly (readonly string[])[];
  readonly omit: string | undefined;
  readonly from: readonly number[];
  readonly at: readonly number[];
}

const MAX_PLANS = 1024;
/** Plans by the first layer's key list (identity); each list is searched for the other layers' lists. */
const plans = new Map<readonly string[], MergePlan[]>();
let planCount = 0;

function planOf(layers: readonly Entries[], omit: string | undefined): MergePlan {
  let shared = true;
  for (let l = 0; l < layers.length; l++) if (!layers[l]!.shared) shared = false;
  if (!shared) return mergePlan(layers, omit);
  const first = layers[0]!.keys;
  const candidates = plans.get(first);
  if (candidates !== undefined) {
    for (let c = 0; c < candidates.length; c++) {
      const plan = candidates[c]!;
      if (plan.omit === omit && sameLists(plan.lists, layers)) return plan;
    }
  }
  const plan = mergePlan(layers, omit);
  if (planCount >= MAX_PLANS) {
    plans.clear();
    planCount = 0;
  }
  const list = plans.get(first);
  if (list === undefined) plans.set(first, [plan]);
  else list.push(plan);
  planCount++;
  return plan;
}

function sameLists(lists: readonly (readonly string[])[], layers: readonly Entries[]): boolean {
  if (lists.length !== layers.length) return false;
  for (let l = 1; l < lists.length; l++) if (lists[l] !== layers[l]!.keys) return false;
  return true;
}

/** The merge of the layers' sorted key lists: for each key written, the last layer holding it. */
function mergePlan(layers: readonly Entries[], omit: string | undefined): MergePlan {
  const count = layers.length;
  const last = count - 1;
  const next = new Array<number>(count).fill(0);
  const from: number[] = [];
  const at: number[] = [];
  for (;;) {
    let key: string | undefined;
    for (let l = 0; l < count; l++) {
      const keys = layers[l]!.keys;
      const i = next[l]!;
      if (i < keys.length && (key === undefined || keys[i]! < key)) key = keys[i];
    }
    if (key === undefined) break;
    let layer = -1;
    let index = 0;
    for (let l = 0; l < count; l++) {
      const i = next[l]!;
      if (layers[l]!.keys[i] === key) {
        layer = l;
        index = i;
        next[l] = i + 1;
      }
    }
    if (key === omit && layer !== last) continue;
    from.push(layer);
    at.push(index);
  }
  return { lists: layers.map((layer) => layer.keys), omit, from, at };
}

/** The JSON value of a flat object, as `toJson` converts it. */
export function entriesJson(entries: Entries): Json {
  const object: { [key: string]: Json } = {};
  const { keys, values } = entries;
  for (let i = 0; i < keys.length; i++) {
    const value = flatJson(values[i]!);
    if (keys[i] === '__proto__') Object.defineProperty(object, '__proto__', { value, enumerable: true, writable: true, configurable: true });
    else object[keys[i]!] = value;
  }
  return object;
}

function flatJson(value: FlatValue): Json {
  switch (typeof value) {
    case 'string':
      return wellFormed(value.length < BLOB_CHARS ? value : blobText(value));
    case 'number':
      return Number.isFinite(value) ? value : null;
    case 'bigint':
      return value.toString();
    default:
      return value;
  }
}

/**
 * `base`'s entries with `over`'s set over them (`over` wins), leaving out
 * `base`'s `omit` key: what a shallow merge of the two converted objects,
 * keys sorted, writes.
 */
export function mergeEntries(base: Entries, over: Entries, omit?: string): Entries {
  const keys: string[] = [];
  const heads: Uint8Array[] = [];
  const values: FlatValue[] = [];
  const a = base.keys;
  const b = over.keys;
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    let from: Entries;
    let at: number;
    if (j >= b.length || (i < a.length && a[i]! < b[j]!)) {
      from = base;
      at = i++;
    } else {
      if (i < a.length && a[i] === b[j]) i++;
      from = over;
      at = j++;
    }
    const key = from.keys[at]!;
    if (from === base && key === omit) continue;
    keys.push(key);
    heads.push(from.heads[at]!);
    values.push(from.values[at]!);
  }
  return { keys, heads, values, shared: false };
}

/** Entries of one string key, for the status keys the end metadata adds; `shared` for a module constant. */
export function singleEntry(key: string, value: FlatValue, shared = false): Entries {
  return { keys: [key], heads: [encoded(`,${JSON.stringify(key)}:`)], values: [value], shared };
}

// ---------------------------------------------------------------------------

/** Thrown to give up on the fast path; not an Error, so no stack is captured. */
const GIVE_UP = { reason: 'general path' };

/**
 * Writes a non-object value; false (nothing written) for the values `toJson` drops (undefined, functions, symbols).
 * `blobs`: a long string as `blobText` gives it (media left out).
 */
function writePrimitive(out: LineBuilder, value: unknown, blobs = true): boolean {
  switch (typeof value) {
    case 'string':
      out.jsonString(value.length < BLOB_CHARS || !blobs ? value : blobText(value));
      return true;
    case 'number':
      out.ascii(numberText(value));
      return true;
    case 'boolean':
      out.ascii(value ? 'true' : 'false');
      return true;
    case 'bigint':
      out.ascii(`"${value.toString()}"`);
      return true;
    default:
      if (value !== null) return false;
      out.ascii('null');
      return true;
  }
}

function writeValue(out: LineBuilder, value: unknown, depth: number, drop: boolean, blobs: boolean): boolean {
  if (typeof value === 'object' && value !== null) {
    writeObject(out, value, depth, drop, blobs);
    return true;
  }
  return writePrimitive(out, value, blobs);
}

function writeObject(out: LineBuilder, object: object, depth: number, drop: boolean, blobs: boolean): void {
  if (depth >= MAX_DEPTH) throw GIVE_UP;
  if (Array.isArray(object)) {
    const length = object.length;
    // A sparse array's length is not its size: past toJson's bound the general path cuts it.
    if (length > JSON_LIMITS.maxItems) throw GIVE_UP;
    out.byte(0x5b); // [
    for (let i = 0; i < length; i++) {
      if (i > 0) out.byte(0x2c); // ,
      if (!writeValue(out, object[i], depth + 1, drop, blobs)) out.ascii('null');
    }
    out.byte(0x5d); // ]
    return;
  }
  const shape = shapeOf(object);
  const { sorted, heads } = shape;
  if (sorted.length > JSON_LIMITS.maxItems || (drop && shape.headersKey)) throw GIVE_UP;
  let first = true;
  for (let i = 0; i < sorted.length; i++) {
    const value: unknown = (object as Record<string, unknown>)[sorted[i]!];
    if (value === undefined || typeof value === 'function' || typeof value === 'symbol') continue;
    out.raw(heads[i]!);
    if (first) {
      openAtHead(out, heads[i]!);
      first = false;
    }
    writeValue(out, value, depth + 1, drop, blobs);
  }
  if (first) out.byte(0x7b); // { of an object with nothing written
  out.byte(0x7d); // }
}

/** `formatPayloadNumber` with `toJson`'s `null` for non-finite numbers, without its slow path for common numbers. */
function numberText(value: number): string {
  if (Number.isInteger(value)) {
    if (value >= -2147483648 && value <= 4294967295) return value === 0 ? '0' : `${value}`;
    return formatF64(value);
  }
  if (value !== value || value === Infinity || value === -Infinity) return 'null';
  const magnitude = value < 0 ? -value : value;
  // Here JS and native both write the shortest round-trip digits in decimal notation.
  return magnitude >= 1e-5 && magnitude < 1e16 ? `${value}` : formatF64(value);
}

// ---- object shapes --------------------------------------------------------

interface Shape {
  /** The keys in native order. */
  readonly sorted: readonly string[];
  /** `,"key":` for each sorted key, encoded (the first key written opens its object: `openAtHead`). */
  readonly heads: readonly Uint8Array[];
  /** One key is `headers` in some case (what dropping credential headers must look into). */
  readonly headersKey: boolean;
}

const EMPTY: Shape = { sorted: [], heads: [], headersKey: false };
/** Keys whose UTF-16 order may differ from native's code-point order, and lone surrogates. */
const HIGH_CHARACTER = /[\ud800-\uffff]/;

/** Sorted key lists and their encoded heads, per key list; null for a list the fast path does not take. */
const shapes = new KeyListCache<Shape | null>((keys) => {
  let headersKey = false;
  for (let i = 0; i < keys.length; i++) {
    if (HIGH_CHARACTER.test(keys[i]!)) return null;
    if (isHeadersKey(keys[i]!)) headersKey = true;
  }
  const sorted = keys.slice().sort();
  return { sorted, heads: sorted.map((key) => encoded(`,${JSON.stringify(key)}:`)), headersKey };
});

/**
 * The shape of an object the fast path may write as a plain object: its
 * own enumerable keys, sorted. Gives up on objects `toJson` treats
 * specially and on keys it cannot order by `<`.
 */
function shapeOf(object: object): Shape {
  const prototype = Object.getPrototypeOf(object) as unknown;
  if (prototype !== Object.prototype && prototype !== null && isSpecial(object)) throw GIVE_UP;
  if (typeof (object as { toJSON?: unknown }).toJSON === 'function') throw GIVE_UP;
  const keys = Object.keys(object);
  if (keys.length === 0) return EMPTY;
  const shape = shapes.get(keys);
  if (shape === null) throw GIVE_UP;
  return shape;
}

/** Objects `toJson` converts by their kind rather than by their own keys. */
function isSpecial(object: object): boolean {
  return (
    object instanceof Date ||
    object instanceof Map ||
    object instanceof Set ||
    object instanceof Error ||
    object instanceof ArrayBuffer ||
    ArrayBuffer.isView(object)
  );
}
