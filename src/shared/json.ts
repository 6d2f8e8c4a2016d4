/**
 * Conversion of arbitrary host values to plain JSON.
 *
 * Telemetry payloads come straight from agent code: SDK response objects,
 * errors, Maps, Buffers, and now and then a cyclic graph or a BigInt. The
 * native relay kills the process on a BigInt or a cycle and throws on many
 * other values, so everything passes through `toJson` before it crosses a
 * backend. It never throws.
 *
 * Where each kind of value ends up:
 *
 * | value                              | becomes                                        |
 * | ---------------------------------- | ---------------------------------------------- |
 * | string                             | itself (kept whole); a lone UTF-16 surrogate becomes U+FFFD |
 * | boolean, finite number             | itself                                         |
 * | `NaN`, `Infinity`, `-Infinity`     | `null`                                         |
 * | `undefined`, function, symbol      | dropped from objects, `null` in arrays, `null` at the top |
 * | BigInt                             | its decimal string                             |
 * | `Date`                             | ISO string (`null` when invalid)               |
 * | object with `toJSON()`             | the converted result of `toJSON()`             |
 * | `Map`                              | object keyed by `String(key)`                  |
 * | `Set`                              | array                                          |
 * | typed array, `DataView`, `ArrayBuffer` | array of byte/element numbers (`withoutBlobs`: `"[left out: N bytes]"`) |
 * | `Error`                            | `{name, message}` plus `code`, `cause` and own enumerable fields |
 * | other objects and class instances  | own enumerable string-keyed properties         |
 * | a reference back to an ancestor    | `"[Circular]"`                                 |
 * | nesting deeper than `maxDepth`     | `"[MaxDepth]"`                                 |
 * | a getter or `toJSON` that throws   | `"[Unserializable: <message>]"`                |
 * | items past `maxItems` in one array, Set, Map, typed array or object | one `"[Truncated: N more items]"` marker (a key `"[Truncated]"` in objects) |
 * | values past `maxValues`, characters past `maxChars` in one call | `"[Truncated]"`; a string cut with `[Truncated: N more chars]` at its end |
 *
 * Work and output are bounded for any input, not only depth: a sparse array
 * (`a[2 ** 32 - 2] = 1` has a length of four billion and one element) or a
 * typed array of a gigabyte would otherwise be walked index by index and
 * exhaust the host's memory, which kills the process (no exception to
 * catch). The bounds are far above any real payload: 100 000 items per
 * container, 1 000 000 values and 64 Mi string characters (keys included)
 * per call.
 *
 * A key named `__proto__` is kept as an ordinary own property. Lone
 * surrogates (text cut in the middle of an emoji) are replaced with U+FFFD
 * in values and keys, as the native relay does: `JSON.stringify` would
 * write them as `\ud83d` escapes, which strict UTF-8 JSON readers reject.
 *
 * @module
 */

import { BLOB_CHARS, blobText, bytesLeftOut, isBytes } from './blobs.ts';
import { isHeadersKey, withoutSensitiveHeaders } from './credential-headers.ts';
import { KeyListCache } from './key-lists.ts';
import { literalsAllowed, objectLiteralFunction, USES_BEFORE_LITERAL } from './object-literal.ts';

/** Plain JSON, the only thing that crosses into a relay. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A JSON object. */
export type JsonObject = { [key: string]: Json };


/** Options of `toJson`: the bounds of the conversion. */
export interface ToJsonOptions {
  /** Sort object keys, as the native relay's serde serializer does. */
  sortKeys?: boolean;
  /** Deepest nesting kept; deeper values become `"[MaxDepth]"`. Default 64. */
  maxDepth?: number;
  /** Most items kept from one array, Set, Map, typed array or object. Default 100 000. */
  maxItems?: number;
  /** Most values (of any kind, at any depth) converted in one call. Default 1 000 000. */
  maxValues?: number;
  /** Most string characters (UTF-16 units, values and keys) kept in one call. Default 64 Mi. */
  maxChars?: number;
  /**
   * Replace NUL characters in object keys with U+FFFD. The native binding
   * passes keys as C strings and drops the whole event for a key with a NUL.
   */
  noNulInKeys?: boolean;
  /**
   * Drop credential headers first, as `withoutSensitiveHeaders` does
   * (credential-headers.ts). A value none of whose objects has a `headers`
   * key (the usual payload) is copied in one walk; any other is cleaned by
   * that walk first, then copied.
   */
  withoutCredentialHeaders?: boolean;
  /**
   * Leave media bytes out, by the one rule (`withoutBlobs`, blobs.ts): binary
   * data (a `Buffer`, typed array, `DataView`, `ArrayBuffer`, wherever it
   * sits, before any `toJSON`) as `"[left out: N bytes]"`, a base64 data URL
   * or bare base64 string of 1,024 characters or more as what it was and how
   * long. In the same walk as the copy: a value with neither costs one length
   * test per string.
   */
  withoutBlobs?: boolean;
}

/** `toJson`'s options for a copy of a value as it is recorded: its media left out (`withoutBlobs`). */
export const MEDIA_LEFT_OUT = Object.freeze({ withoutBlobs: true } as const);

/** The default bounds of one `toJson` call (see the module comment). */
export const JSON_LIMITS = Object.freeze({
  maxDepth: 64,
  maxItems: 100_000,
  maxValues: 1_000_000,
  maxChars: 64 * 1024 * 1024,
});

const CIRCULAR = '[Circular]';
const MAX_DEPTH = '[MaxDepth]';
const TRUNCATED = '[Truncated]';

/** Budgets and settings of one conversion. */
interface Walk {
  readonly maxDepth: number;
  readonly sortKeys: boolean;
  readonly maxItems: number;
  readonly noNulInKeys: boolean;
  /** Leave media bytes out (`ToJsonOptions.withoutBlobs`). */
  readonly blobs: boolean;
  /** Drop credential headers (`ToJsonOptions.withoutCredentialHeaders`) from what a `toJSON` returns too. */
  readonly withoutHeaders: boolean;
  /** Values still allowed. */
  values: number;
  /** String characters still allowed. */
  chars: number;
  /** The open path: a reference back into it is a cycle. */
  readonly ancestors: object[];
}

/**
 * The deepest nesting the package's readers take from a JSON text (files,
 * lines, argument strings). `JSON.parse` reads far deeper text, but what it
 * returns may not be written back: in Node `JSON.stringify` and
 * `structuredClone` overflow the stack a few thousand levels down, so a
 * reader that took such a value failed later, somewhere else, with a
 * `RangeError`. The writers
 * here stop at 64 (`JSON_LIMITS.maxDepth`); Python's `json` stops near 1000.
 */
export const MAX_READ_DEPTH = 1000;

/** `parseJson`'s error for text nested deeper than `MAX_READ_DEPTH`; a `SyntaxError` like `JSON.parse`'s own. */
export class JsonTooDeepError extends SyntaxError {
  override readonly name = 'JsonTooDeepError';
  constructor() {
    super(`nested more than ${MAX_READ_DEPTH} levels deep (arrays and objects)`);
  }
}

/**
 * `JSON.parse` for text from outside: throws `JsonTooDeepError` (a
 * `SyntaxError`) for a value nested deeper than `MAX_READ_DEPTH`, where
 * `JSON.parse` throws for text that is not JSON.
 */
export function parseJson(text: string): unknown {
  const value = JSON.parse(text) as unknown;
  // Each level takes at least two characters: shorter text cannot be too deep, and most lines are.
  if (text.length > 2 * MAX_READ_DEPTH && deeperThan(value, MAX_READ_DEPTH)) throw new JsonTooDeepError();
  return value;
}

/**
 * `parseJson` for a reader that passes on what it cannot read: the value, or `undefined` for text that is not JSON or
 * is nested deeper than `MAX_READ_DEPTH` (walking such a value again, to copy or write it, could overflow the stack).
 */
export function jsonIfReadable(text: string): { value: unknown } | undefined {
  try {
    return { value: parseJson(text) };
  } catch {
    return undefined;
  }
}

/** Why `parseJson` refused a text, for a reader's message: too deep, or not JSON with the parser's reason. */
export function whyNotJson(error: unknown): string {
  return error instanceof JsonTooDeepError ? error.message : `not valid JSON (${error instanceof Error ? error.message : String(error)})`;
}

/** Walked with a stack of its own: a recursive walk is what overflows. */
function deeperThan(root: unknown, limit: number): boolean {
  const values: unknown[] = [root];
  const depths: number[] = [0];
  while (values.length > 0) {
    const value = values.pop();
    const depth = depths.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= limit) return true;
    const children = Array.isArray(value) ? value : Object.values(value);
    for (const child of children) {
      if (typeof child === 'object' && child !== null) {
        values.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}

/**
 * Compares two values as JSON, without conflating booleans and numbers and
 * regardless of key order.
 */
export function jsonEqual(left: unknown, right: unknown): boolean {
  try {
    return JSON.stringify(toJson(left, { sortKeys: true })) === JSON.stringify(toJson(right, { sortKeys: true }));
  } catch {
    return false;
  }
}

/** Converts any value to plain JSON. Never throws. */
export function toJson(value: unknown, options?: ToJsonOptions): Json {
  // Primitives dominate hot-path payload fields; answer them without a walker.
  if (typeof value !== 'object' || value === null) {
    if (typeof value === 'string' && value.length >= BLOB_CHARS && options?.withoutBlobs === true) value = blobText(value);
    if (typeof value === 'string' && value.length > (options?.maxChars ?? JSON_LIMITS.maxChars)) {
      return cutString(value, options?.maxChars ?? JSON_LIMITS.maxChars);
    }
    return primitive(value) ?? null;
  }
  const blobs = options?.withoutBlobs === true;
  if (options === undefined || hasDefaultBounds(options)) {
    const sortKeys = options?.sortKeys === true;
    const noNul = options?.noNulInKeys === true;
    const withoutHeaders = options?.withoutCredentialHeaders === true;
    const copied = plainCopy(value, sortKeys, noNul, withoutHeaders, blobs);
    if (copied !== undefined) return copied;
    if (withoutHeaders) {
      // A `headers` key, or a value the fast copy does not take: cleaned first, as the plugin's own walk would.
      const cleaned = withoutSensitiveHeaders(value);
      const copy = plainCopy(cleaned, sortKeys, noNul, false, blobs);
      if (copy !== undefined) return copy;
      value = cleaned;
    }
  } else if (options.withoutCredentialHeaders === true) {
    value = withoutSensitiveHeaders(value);
  }
  const walk: Walk = {
    maxDepth: options?.maxDepth ?? JSON_LIMITS.maxDepth,
    sortKeys: options?.sortKeys === true,
    maxItems: Math.max(0, options?.maxItems ?? JSON_LIMITS.maxItems),
    noNulInKeys: options?.noNulInKeys === true,
    blobs,
    withoutHeaders: options?.withoutCredentialHeaders === true,
    values: options?.maxValues ?? JSON_LIMITS.maxValues,
    chars: options?.maxChars ?? JSON_LIMITS.maxChars,
    ancestors: [],
  };
  const converted = convert(value, 0, walk);
  return converted === undefined ? null : converted;
}

/** A non-object value as JSON; `undefined` means "omit" (undefined, functions, symbols). */
function primitive(value: unknown): Json | undefined {
  switch (typeof value) {
    case 'string':
      return wellFormed(value as string);
    case 'boolean':
      return value as Json;
    case 'number':
      return Number.isFinite(value) ? (value as number) : null;
    case 'bigint':
      return (value as bigint).toString();
    default:
      // undefined, function, symbol (and null, which the callers handle first).
      return value === null ? null : undefined;
  }
}

/** The first `room` characters of `text` and a marker saying how many were cut. */
function cutString(text: string, room: number): string {
  const kept = Math.max(0, room);
  return `${wellFormed(text.slice(0, kept))}[Truncated: ${text.length - kept} more chars]`;
}

/** `text` with every lone UTF-16 surrogate replaced by U+FFFD (the same string when there is none). */
export function wellFormed(text: string): string {
  // isWellFormed is a single native scan; the copy happens only for broken text.
  const checked = text as unknown as WellFormedString;
  return checked.isWellFormed() ? text : checked.toWellFormed();
}

/** ES2024 string methods, present in Node 20, Bun and Deno but not in the ES2023 lib this package compiles against. */
interface WellFormedString {
  isWellFormed(): boolean;
  toWellFormed(): string;
}

/** True when `value` is a plain JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is { [key: string]: Json } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value when it is a JSON object (not null, not an array), else `undefined`. */
export function asObject(value: Json | undefined): JsonObject | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;
}

// `undefined` means "omit": the caller drops the key or writes null in an array.
function convert(value: unknown, depth: number, walk: Walk): Json | undefined {
  if (--walk.values < 0) return TRUNCATED;
  if (typeof value !== 'object' || value === null) {
    if (typeof value !== 'string') return primitive(value);
    const text = walk.blobs && value.length >= BLOB_CHARS ? blobText(value) : value;
    if (text.length > walk.chars) {
      const cut = cutString(text, walk.chars);
      walk.chars = 0;
      return cut;
    }
    walk.chars -= text.length;
    return wellFormed(text);
  }
  const object = value as object;
  const ancestors = walk.ancestors;
  // The open path is at most maxDepth long and usually a handful of objects:
  // a linear scan of an array beats Set hashing (bench/RESULTS.md, "Figures behind the code").
  if (ancestors.includes(object)) return CIRCULAR;
  if (depth >= walk.maxDepth) return MAX_DEPTH;
  ancestors.push(object);
  try {
    return convertObject(object, depth + 1, walk);
  } catch (error) {
    return unserializable(error);
  } finally {
    ancestors.pop();
  }
}

/** True when no more values may be converted (the budget is spent). */
function spent(walk: Walk): boolean {
  return walk.values <= 0;
}

function moreItems(count: number): string {
  return `[Truncated: ${count} more items]`;
}

function convertObject(object: object, depth: number, walk: Walk): Json | undefined {
  // Before `toJSON`: a Buffer's would make it `{type: "Buffer", data: [...]}`.
  if (walk.blobs && isBytes(object)) return bytesLeftOut(object);
  if (Array.isArray(object)) {
    const length = object.length;
    // A sparse array's length says nothing about its size: never allocate or walk past the bounds.
    const limit = Math.min(length, walk.maxItems);
    const out: Json[] = [];
    for (let i = 0; i < limit; i++) {
      if (spent(walk)) {
        out.push(moreItems(length - i));
        return out;
      }
      let item: unknown;
      try {
        item = object[i];
      } catch (error) {
        walk.values--;
        out.push(unserializable(error));
        continue;
      }
      const converted = convert(item, depth, walk);
      out.push(converted === undefined ? null : converted);
    }
    if (limit < length) out.push(moreItems(length - limit));
    return out;
  }
  if (object instanceof Date) {
    const time = object.getTime();
    return Number.isNaN(time) ? null : object.toISOString();
  }
  const toJSON = (object as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') {
    let replaced: unknown;
    try {
      replaced = toJSON.call(object, '');
    } catch (error) {
      return unserializable(error);
    }
    if (replaced === object) return convertPlain(object, depth, walk);
    // The replacement is a value of its own: it is counted again. The headers were dropped from the value before this
    // walk, but what `toJSON` makes of it was not there to be seen: a `headers` key in it is cleaned now.
    walk.values++;
    return convert(walk.withoutHeaders ? withoutSensitiveHeaders(replaced) : replaced, depth - 1, walk);
  }
  if (object instanceof Map) {
    const out: { [key: string]: Json } = {};
    const entries: [string, unknown][] = [];
    let skipped = 0;
    for (const [key, item] of object) {
      if (entries.length >= walk.maxItems) {
        skipped = object.size - entries.length;
        break;
      }
      entries.push([keyText(String(key), walk), item]);
    }
    if (walk.sortKeys) entries.sort(compareEntryKeys);
    for (const [key, item] of entries) {
      if (spent(walk)) {
        skipped += 1;
        continue;
      }
      const converted = convert(item, depth, walk);
      if (converted !== undefined) defineWalkKey(walk, out, key, converted);
    }
    if (skipped > 0) defineWalkKey(walk, out, TRUNCATED, moreItems(skipped));
    return out;
  }
  if (object instanceof Set) {
    const out: Json[] = [];
    let seen = 0;
    for (const item of object) {
      if (seen >= walk.maxItems || spent(walk)) {
        out.push(moreItems(object.size - seen));
        break;
      }
      seen++;
      const converted = convert(item, depth, walk);
      out.push(converted === undefined ? null : converted);
    }
    return out;
  }
  if (ArrayBuffer.isView(object)) {
    if (object instanceof DataView) return bytesOf(new Uint8Array(object.buffer, object.byteOffset, object.byteLength), walk);
    return numbersOf(object as unknown as ArrayLike<number | bigint>, walk);
  }
  if (object instanceof ArrayBuffer) return bytesOf(new Uint8Array(object), walk);
  if (object instanceof Error) return convertError(object, depth, walk);
  return convertPlain(object, depth, walk);
}

/** The elements of a typed array, within the item and value bounds. */
function numbersOf(source: ArrayLike<number | bigint>, walk: Walk): Json[] {
  const length = source.length;
  const limit = Math.min(length, walk.maxItems, Math.max(0, walk.values));
  walk.values -= limit;
  const out: Json[] = new Array(limit);
  for (let i = 0; i < limit; i++) {
    const n = source[i]!;
    out[i] = typeof n === 'bigint' ? n.toString() : Number.isFinite(n) ? n : null;
  }
  if (limit < length) out.push(moreItems(length - limit));
  return out;
}

function bytesOf(bytes: Uint8Array, walk: Walk): Json[] {
  return numbersOf(bytes, walk);
}

/** A key, counted against the character budget (a key past it is cut like a string). */
function keyText(key: string, walk: Walk): string {
  if (key.length > walk.chars) {
    const cut = cutString(key, walk.chars);
    walk.chars = 0;
    return cut;
  }
  walk.chars -= key.length;
  return key;
}

function convertPlain(object: object, depth: number, walk: Walk): Json {
  const out: { [key: string]: Json } = {};
  const keys = Object.keys(object);
  if (walk.sortKeys) keys.sort(compareKeys);
  const limit = Math.min(keys.length, walk.maxItems);
  for (let i = 0; i < limit; i++) {
    if (spent(walk)) {
      defineWalkKey(walk, out, TRUNCATED, moreItems(keys.length - i));
      return out;
    }
    const key = keys[i]!;
    let item: unknown;
    try {
      item = (object as Record<string, unknown>)[key];
    } catch (error) {
      walk.values--;
      defineWalkKey(walk, out, keyText(key, walk), unserializable(error));
      continue;
    }
    const kept = keyText(key, walk);
    const converted = convert(item, depth, walk);
    if (converted !== undefined) defineWalkKey(walk, out, kept, converted);
  }
  if (limit < keys.length) defineWalkKey(walk, out, TRUNCATED, moreItems(keys.length - limit));
  return out;
}

function convertError(error: Error, depth: number, walk: Walk): Json {
  const fields: Record<string, unknown> = { name: error.name, message: error.message };
  const code = (error as { code?: unknown }).code;
  if (code !== undefined) fields.code = code;
  if (error.cause !== undefined) fields.cause = error.cause;
  const keys = Object.keys(error);
  const limit = Math.min(keys.length, walk.maxItems);
  for (let i = 0; i < limit; i++) {
    const key = keys[i]!;
    if (!(key in fields)) fields[key] = (error as unknown as Record<string, unknown>)[key];
  }
  return convertPlain(fields, depth, walk);
}

function defineWalkKey(walk: Walk, target: { [key: string]: Json }, rawKey: string, value: Json): void {
  let key = wellFormed(rawKey);
  if (walk.noNulInKeys && key.includes('\0')) key = key.replaceAll('\0', '\uFFFD');
  defineKey(target, key, value);
}

/** Sets `key` as an own enumerable data property, `__proto__` included (an assignment would set the prototype). */
export function defineKey<T>(target: { [key: string]: T }, key: string, value: T): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

function compareEntryKeys(a: [string, unknown], b: [string, unknown]): number {
  return compareKeys(a[0], b[0]);
}

/**
 * The package's one key order: Unicode code points, as native (serde_json's
 * sorted maps compare UTF-8 bytes) writes keys. It is JS's `<` except that a
 * surrogate pair (U+10000 and up) sorts after U+E000..U+FFFF, where `<` puts
 * it before. Every sorted copy and every writer orders keys with this.
 *
 * A key is ordered as it is written: a lone surrogate as U+FFFD (`wellFormed`),
 * which is what native, holding Rust strings, sorts. Only a difference at or
 * just after a surrogate can depend on that, so only then are the keys checked.
 */
export function compareKeys(a: string, b: string): number {
  if (a === b) return 0;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xs = isSurrogate(x);
    const ys = isSurrogate(y);
    if (xs || ys || (i > 0 && isSurrogate(a.charCodeAt(i - 1)))) {
      // Well-formed keys compare as they are; otherwise as written (no recursion past this: both are then well-formed).
      if (!isWellFormed(a) || !isWellFormed(b)) return compareKeys(wellFormed(a), wellFormed(b));
    }
    if (xs !== ys && (x >= 0xe000 || y >= 0xe000)) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

function isSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdfff;
}

function isWellFormed(text: string): boolean {
  return (text as unknown as WellFormedString).isWellFormed();
}

function unserializable(error: unknown): string {
  let message: string;
  try {
    message = error instanceof Error ? error.message : String(error);
  } catch {
    message = 'unknown error';
  }
  return `[Unserializable: ${message}]`;
}

// ---- the fast path: plain objects and arrays ---------------------------------
//
// Hook payloads are nearly always plain objects, arrays and primitives, far
// inside every bound. For them `plainCopy` gives what the general walk gives,
// without its per-value checks (kinds, ancestors, budgets at every step) and,
// for sorted copies, without sorting the keys of each object again: the
// sorted key list of each key list seen is kept (bounded). It gives up
// (undefined) on anything else, and the general walk starts over: another
// kind of object (class instances, Dates, Maps, `toJSON`), nesting at the
// depth bound (where a cycle also ends up, so no ancestor list is kept), a
// key that is `__proto__`, holds a surrogate (UTF-16 and code-point order, or
// U+FFFD replacement) or a NUL (when `noNulInKeys`), a container or budget
// near its bound, or a getter or proxy trap that throws. A getter read before
// giving up runs a second time.

/** Thrown to give up on the fast path; not an Error, so no stack is captured. */
const GIVE_UP = { reason: 'general walk' };

/**
 * True for an object the fast walks over payloads take as plain data: its
 * prototype is `Object.prototype` or none, and it has no `toJSON`. Anything
 * else (a class instance, a `Date`, a `Map`, a value with `toJSON`) is left
 * to the general paths, which know what `JSON.stringify` and `toJson` make
 * of it: `toJson`'s fast copy here, and the ATOF line's walk
 * (`formats/native-text/write.ts`).
 */
export function isPlainDataObject(object: object): boolean {
  const prototype = Object.getPrototypeOf(object) as unknown;
  return (prototype === Object.prototype || prototype === null) && typeof (object as { toJSON?: unknown }).toJSON !== 'function';
}

/** True when the bounds are the defaults (left out, or given with the default's value). */
function hasDefaultBounds(options: ToJsonOptions): boolean {
  return (
    (options.maxDepth ?? JSON_LIMITS.maxDepth) === JSON_LIMITS.maxDepth &&
    (options.maxItems ?? JSON_LIMITS.maxItems) === JSON_LIMITS.maxItems &&
    (options.maxValues ?? JSON_LIMITS.maxValues) === JSON_LIMITS.maxValues &&
    (options.maxChars ?? JSON_LIMITS.maxChars) === JSON_LIMITS.maxChars
  );
}

/** Budgets of one fast copy: what is left of the default bounds. */
interface Budget {
  values: number;
  chars: number;
  /** Values omitted so far (undefined, functions, symbols): a generated copy then drops their keys. */
  omitted: number;
  readonly sortKeys: boolean;
  readonly noNul: boolean;
  /** Give up at an object with a `headers` key (the caller cleans the value first). */
  readonly noHeadersKey: boolean;
  /** Leave media bytes out (`ToJsonOptions.withoutBlobs`); binary data is no plain object, so only strings are looked at here. */
  readonly blobs: boolean;
}

function plainCopy(value: object, sortKeys: boolean, noNul: boolean, noHeadersKey: boolean, blobs: boolean): Json | undefined {
  const budget: Budget = { values: JSON_LIMITS.maxValues, chars: JSON_LIMITS.maxChars, omitted: 0, sortKeys, noNul, noHeadersKey, blobs };
  try {
    return copyObject(value, 0, budget);
  } catch {
    return undefined;
  }
}

/** A value inside a container; undefined = omitted (undefined, functions, symbols). */
function copyValue(value: unknown, depth: number, budget: Budget): Json | undefined {
  if (--budget.values <= 0) throw GIVE_UP;
  // Separate typeof tests, not a switch over typeof: V8 compiles these to type checks, a switch to a call per value.
  if (typeof value === 'string') {
    const text = value.length >= BLOB_CHARS && budget.blobs ? blobText(value) : value;
    if ((budget.chars -= text.length) < 0) throw GIVE_UP;
    return wellFormed(text);
  }
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'object') return value === null ? null : copyObject(value, depth, budget);
  if (typeof value === 'bigint') return value.toString();
  budget.omitted++;
  return undefined;
}

function copyObject(object: object, depth: number, budget: Budget): Json {
  if (depth >= JSON_LIMITS.maxDepth - 1) throw GIVE_UP;
  if (Array.isArray(object)) {
    const length = object.length;
    if (length >= JSON_LIMITS.maxItems) throw GIVE_UP;
    const out: Json[] = new Array(length);
    for (let i = 0; i < length; i++) {
      const item = copyValue(object[i], depth + 1, budget);
      out[i] = item === undefined ? null : item;
    }
    return out;
  }
  if (!isPlainDataObject(object)) throw GIVE_UP;
  const own = Object.keys(object);
  const shape = shapeOf(own, budget.noNul);
  if (shape.headersKey && budget.noHeadersKey) throw GIVE_UP;
  if ((budget.chars -= shape.chars) < 0) throw GIVE_UP;
  const keys = budget.sortKeys ? shape.sorted : own;
  const copier = shape === EMPTY_SHAPE ? null : copierOf(shape, budget.sortKeys);
  if (copier !== null) {
    const omitted = budget.omitted;
    const out = copier(object, copyValue, depth + 1, budget);
    // An omitted value (undefined, a function, a symbol) left its key holding undefined: the loop below would not have set it.
    if (budget.omitted !== omitted) for (let i = 0; i < keys.length; i++) if (out[keys[i]!] === undefined) delete out[keys[i]!];
    return out;
  }
  const out: { [key: string]: Json } = {};
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const item = copyValue((object as Record<string, unknown>)[key], depth + 1, budget);
    if (item !== undefined) out[key] = item;
  }
  return out;
}

/** A key list the fast path takes, sorted, with its characters counted. */
interface Shape {
  /** The key list in its own order (the first object's `Object.keys`). */
  readonly keys: readonly string[];
  readonly sorted: readonly string[];
  readonly chars: number;
  /** Keys free of NUL characters (what `noNulInKeys` would replace). */
  readonly noNul: boolean;
  /** One key is `headers` in some case (what `withoutCredentialHeaders` must look into). */
  readonly headersKey: boolean;
  /** Objects of this key list copied so far, until its copiers are generated. */
  copies: number;
  /** The generated copy in the list's own order, then in sorted order (`copierOf`); null before, or when it cannot be generated. */
  own: Copier | null;
  sortedCopier: Copier | null;
}

const EMPTY_SHAPE: Shape = { keys: [], sorted: [], chars: 0, noNul: true, headersKey: false, copies: 0, own: null, sortedCopier: null };
/** Keys the fast path leaves to the general walk: surrogates (order, U+FFFD) and `__proto__`. */
const AWKWARD_KEY = /[\ud800-\udfff]|^__proto__$/;

const shapes = new KeyListCache<Shape | null>((keys) => {
  let chars = 0;
  let noNul = true;
  let headersKey = false;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (AWKWARD_KEY.test(key)) return null;
    if (key.includes('\0')) noNul = false;
    if (isHeadersKey(key)) headersKey = true;
    chars += key.length;
  }
  return { keys, sorted: keys.slice().sort(), chars, noNul, headersKey, copies: 0, own: null, sortedCopier: null };
});

function shapeOf(keys: string[], noNul: boolean): Shape {
  const count = keys.length;
  if (count === 0) return EMPTY_SHAPE;
  if (count >= JSON_LIMITS.maxItems) throw GIVE_UP;
  const shape = shapes.get(keys);
  if (shape === null || (noNul && !shape.noNul)) throw GIVE_UP;
  return shape;
}

// ---- generated copies ---------------------------------------------------------
//
// Copying an object key by key stores each key into a fresh object with a
// computed name: on V8 every such store goes through the megamorphic store
// handler, and those stores and the matching loads were most of the copy's
// cost (bench/RESULTS.md, "the payload copy from a literal per key list").
// An object literal with the keys written out builds the copy from a
// boilerplate at once, and its reads are plain named loads. So a key list
// seen often enough gets a function generated for it:
//
//   (o, copy, depth, budget) => ({ "a": copy(o["a"], depth, budget), "b": copy(o["b"], depth, budget) })
//
// It reads each value once, in the list's order, exactly as the loop does,
// so getters, budgets and giving up behave the same. How the function is
// made safely, and when a list keeps the loop, is `object-literal.ts`'s
// rule (the awkward keys, `__proto__` and lone surrogates, never get here).

/** A generated copy of one key list. */
type Copier = (object: object, copy: typeof copyValue, depth: number, budget: Budget) => { [key: string]: Json };

/** The generated copy for `shape` (in sorted key order when `sorted`), or null while the loop copies it. */
function copierOf(shape: Shape, sorted: boolean): Copier | null {
  const ready = sorted ? shape.sortedCopier : shape.own;
  if (ready !== null || !literalsAllowed() || ++shape.copies < USES_BEFORE_LITERAL) return ready;
  const keys = sorted ? shape.sorted : shape.keys;
  const copier = objectLiteralFunction<Copier>(['o', 'copy', 'depth', 'budget'], keys, (name) => `copy(o[${name}], depth, budget)`);
  if (sorted) shape.sortedCopier = copier;
  else shape.own = copier;
  return copier;
}

