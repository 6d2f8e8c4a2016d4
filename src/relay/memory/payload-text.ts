/**
 * Payload text in one pass: native's ATOF text of `payload(value)` written
 * straight from the caller's value, without building the sorted deep copy
 * first and serializing it afterwards.
 *
 * The fast path takes the shapes hook payloads have: plain objects (and
 * class instances without `toJSON`, `Date`, `Map`, `Set`, `Error` or binary
 * data), arrays, strings, numbers, booleans, BigInts, `null`, and the
 * values `toJson` drops. It writes what `toJson(value, { sortKeys: true })`
 * followed by native's writer (`../formats/rust-json.ts`) would: keys in
 * code-point order, native number text, lone surrogates as U+FFFD.
 * Anything else gives up on the whole value, which then takes the general
 * path (`toJson` and the exact writer) and comes out exactly as before:
 * special objects, a throwing getter or trap, nesting at `toJson`'s depth
 * limit (which is also where a cycle ends up, so no ancestor set is kept),
 * and keys with characters at or above U+D800, whose UTF-16 and code-point
 * orders can differ. A getter the fast path read before giving up runs a
 * second time on the general path.
 *
 * Sorting keys is the expensive part of a small object, and payloads of
 * one kind share their key list, so sorted key lists are cached per key
 * list (bounded; a payload with keys never seen before pays the sort once).
 *
 * @module
 */

import type { Json } from '../contract.ts';
import { formatF64 } from '../formats/rust-json.ts';
import { toJson, wellFormed } from '../json.ts';
import { payloadJsonText } from './native-json.ts';

/** `toJson`'s default depth limit: an object this deep becomes `"[MaxDepth]"` (or `"[Circular]"`). */
const MAX_DEPTH = 64;
const SORTED = { sortKeys: true } as const;

/**
 * The converted object's keys in native order with each value's text
 * (`heads[i]` is `"key":`). Only keys below U+D800, so plain `<` orders
 * them as native does.
 */
export interface Entries {
  readonly keys: readonly string[];
  readonly heads: readonly string[];
  readonly texts: readonly string[];
}

/** Native's text of `payload(value)`. Never throws. */
export function payloadText(value: unknown): string {
  if (typeof value !== 'object' || value === null) return primitiveText(value) ?? 'null';
  const text = fastObjectText(value);
  return text !== undefined ? text : payloadJsonText(toJson(value, SORTED));
}

/**
 * Native's text of `payload(value)` when the fast path takes all of it,
 * else undefined (the caller converts with `toJson` and the exact writer).
 */
export function fastPayloadText(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return primitiveText(value) ?? 'null';
  return fastObjectText(value);
}

/**
 * The entries of an object payload (not an array), or undefined when the
 * value is no such object or the fast path gives up on it.
 */
export function payloadEntries(value: unknown): Entries | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  try {
    return objectEntries(value);
  } catch {
    return undefined;
  }
}

/** The text of an object's entries: `{"a":1,"b":2}`. */
export function entriesText(entries: Entries): string {
  const { heads, texts } = entries;
  if (heads.length === 0) return '{}';
  let out = '{' + heads[0]! + texts[0]!;
  for (let i = 1; i < heads.length; i++) out += ',' + heads[i]! + texts[i]!;
  return out + '}';
}

/**
 * `base`'s entries with `over`'s set over them (`over` wins), leaving out
 * `base`'s `omit` key: what a shallow merge of the two converted objects,
 * keys sorted, writes.
 */
export function mergeEntries(base: Entries, over: Entries, omit?: string): Entries {
  const keys: string[] = [];
  const heads: string[] = [];
  const texts: string[] = [];
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
    texts.push(from.texts[at]!);
  }
  return { keys, heads, texts };
}

export const NO_ENTRIES: Entries = { keys: [], heads: [], texts: [] };

// ---------------------------------------------------------------------------

/** Thrown to give up on the fast path; not an Error, so no stack is captured. */
const GIVE_UP = { reason: 'general path' };

function fastObjectText(value: object): string | undefined {
  try {
    return objectText(value, 0);
  } catch {
    return undefined;
  }
}

/** The text of a non-object value; undefined for the values `toJson` drops (undefined, functions, symbols). */
function primitiveText(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return quote(value);
    case 'number':
      return numberText(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return `"${value.toString()}"`;
    default:
      return value === null ? 'null' : undefined;
  }
}

function valueText(value: unknown, depth: number): string | undefined {
  return typeof value === 'object' && value !== null ? objectText(value, depth) : primitiveText(value);
}

function objectText(object: object, depth: number): string {
  if (depth >= MAX_DEPTH) throw GIVE_UP;
  if (Array.isArray(object)) {
    const length = object.length;
    if (length === 0) return '[]';
    let out = '[';
    for (let i = 0; i < length; i++) {
      if (i > 0) out += ',';
      out += valueText(object[i], depth + 1) ?? 'null';
    }
    return out + ']';
  }
  const shape = shapeOf(object);
  if (shape === EMPTY) return '{}';
  const { sorted, heads } = shape;
  let out = '';
  for (let i = 0; i < sorted.length; i++) {
    const text = valueText((object as Record<string, unknown>)[sorted[i]!], depth + 1);
    if (text === undefined) continue;
    out += (out === '' ? '{' : ',') + heads[i]! + text;
  }
  return out === '' ? '{}' : out + '}';
}

function objectEntries(object: object): Entries {
  const shape = shapeOf(object);
  const { sorted, heads } = shape;
  const texts: string[] = new Array(sorted.length);
  let dropped = 0;
  for (let i = 0; i < sorted.length; i++) {
    const text = valueText((object as Record<string, unknown>)[sorted[i]!], 1);
    if (text === undefined) dropped++;
    else texts[i] = text;
  }
  if (dropped === 0) return { keys: sorted, heads, texts };
  // Keys whose value `toJson` drops are left out.
  const keptKeys: string[] = [];
  const keptHeads: string[] = [];
  const keptTexts: string[] = [];
  for (let i = 0; i < sorted.length; i++) {
    if (texts[i] === undefined) continue;
    keptKeys.push(sorted[i]!);
    keptHeads.push(heads[i]!);
    keptTexts.push(texts[i]!);
  }
  return { keys: keptKeys, heads: keptHeads, texts: keptTexts };
}

// ---- values ---------------------------------------------------------------

/** Characters `JSON.stringify` escapes, and lone-surrogate candidates. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A string's JSON text, lone surrogates as U+FFFD (what `JSON.stringify(wellFormed(text))` writes). */
function quote(text: string): string {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(wellFormed(text)) : `"${text}"`;
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
  /** The key list as `Object.keys` gave it. */
  readonly keys: readonly string[];
  /** The same keys in native order. */
  readonly sorted: readonly string[];
  /** `"key":` for each sorted key. */
  readonly heads: readonly string[];
}

const EMPTY: Shape = { keys: [], sorted: [], heads: [] };
const MAX_SHAPES = 1024;
/** Cached shapes by first key; each list is searched for the same key list. */
const shapes = new Map<string, Shape[]>();
let shapeCount = 0;
/** Keys whose UTF-16 order may differ from native's code-point order, and lone surrogates. */
const HIGH_CHARACTER = /[\ud800-\uffff]/;

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
  const count = keys.length;
  if (count === 0) return EMPTY;
  const first = keys[0]!;
  const candidates = shapes.get(first);
  if (candidates !== undefined) {
    search: for (let s = 0; s < candidates.length; s++) {
      const shape = candidates[s]!;
      const known = shape.keys;
      if (known.length !== count) continue;
      for (let i = 1; i < count; i++) if (known[i] !== keys[i]) continue search;
      return shape;
    }
  }
  return addShape(keys, candidates);
}

function addShape(keys: string[], candidates: Shape[] | undefined): Shape {
  for (let i = 0; i < keys.length; i++) if (HIGH_CHARACTER.test(keys[i]!)) throw GIVE_UP;
  const sorted = keys.slice().sort();
  const heads = sorted.map((key) => `${JSON.stringify(key)}:`);
  const shape: Shape = { keys, sorted, heads };
  if (shapeCount >= MAX_SHAPES) {
    shapes.clear();
    shapeCount = 0;
    candidates = undefined;
  }
  if (candidates === undefined) shapes.set(keys[0]!, [shape]);
  else candidates.push(shape);
  shapeCount++;
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

/** Exposed for tests: the general-path conversion the fast path must equal. */
export function generalPayloadText(value: unknown): string {
  return payloadJsonText(toJson(value, SORTED) as Json);
}
