/**
 * JSON text exactly as the native relay writes it (Rust `serde_json` over
 * the napi binding's values): the one place that knows native's number and
 * key rules, shared by the ATOF line writer and the ATIF builder.
 *
 * Rules, measured on `nemo-relay-node@0.9.2` in ATOF files, manual
 * `AtifExporter.exportJson()` text and plugin-managed ATIF files alike
 * (test/formats/native-json-differential.test.ts):
 * - A number that crossed the binding stays an integer only when it is an
 *   integer in the i32/u32 range (-2^31 .. 2^32-1); every other number
 *   becomes an f64 (`formatPayloadNumber`). `-0` becomes `0`.
 * - An f64 is written with its shortest round-trip digits, always with a
 *   fraction or an exponent: decimal for 1e-5 <= |x| < 1e16 (`1.0`,
 *   `4294967296.0`, `0.00001`), else exponent notation with a sign
 *   (`1e+16`, `1.5e-6`) (`formatF64`). ATIF fields native types `f64`
 *   (costs, log probabilities, invocation timestamps) follow it too.
 * - ATIF fields native types as unsigned integers (token counts, step ids)
 *   are plain integers at any size.
 * - Numbers native parsed from JSON text itself (tool-call argument
 *   strings) follow serde's parser instead: an integer literal that fits
 *   i64/u64 stays an exact integer, any other literal is an f64 (`1.0`
 *   stays `1.0`). `parseJsonAsNative` remembers those texts for the writers.
 * - Object keys of payloads are in code-point (UTF-8 byte) order, where a
 *   JS object always lists integer-like keys (`"2"`, `"10"`) first; the
 *   writers sort such objects as they write them.
 *
 * @module
 */

import type { Json } from '../shared/json.ts';

const I32_MIN = -2147483648;
const U32_MAX = 4294967295;

/** True when the binding hands `value` to Rust as an integer (an integer in the i32/u32 range). */
export function isNativeInteger(value: number): boolean {
  return Number.isInteger(value) && value >= I32_MIN && value <= U32_MAX;
}

/** Native's text of an `f64`: shortest round-trip digits, always a fraction or an exponent. */
export function formatF64(value: number): string {
  if (!Number.isFinite(value)) return 'null';
  if (value === 0) return Object.is(value, -0) ? '-0.0' : '0.0';
  const negative = value < 0;
  // toExponential() without an argument gives the shortest round-trip digits.
  const exponential = Math.abs(value).toExponential();
  const e = exponential.indexOf('e');
  const digits = exponential.slice(0, e).replace('.', '');
  const exponent = Number(exponential.slice(e + 1));
  const point = exponent + 1; // digits before the decimal point
  let text: string;
  if (point > -5 && point <= 16) {
    if (point <= 0) text = `0.${'0'.repeat(-point)}${digits}`;
    else if (digits.length <= point) text = `${digits}${'0'.repeat(point - digits.length)}.0`;
    else text = `${digits.slice(0, point)}.${digits.slice(point)}`;
  } else {
    const mantissa = digits.length === 1 ? digits : `${digits[0]}.${digits.slice(1)}`;
    text = `${mantissa}e${exponent < 0 ? '-' : '+'}${Math.abs(exponent)}`;
  }
  return negative ? `-${text}` : text;
}

/** Native's text of a payload number (one that crossed the binding). */
export function formatPayloadNumber(value: number): string {
  if (isNativeInteger(value)) return value === 0 ? '0' : String(value);
  return formatF64(value);
}

/** Native's text of a number in a field it types as an unsigned integer. */
function formatIntegerField(value: number): string {
  if (Number.isSafeInteger(value)) return String(value);
  return Number.isInteger(value) ? BigInt(value).toString() : formatF64(value);
}

/** Orders keys like a Rust `BTreeMap<String, _>`: by UTF-8 bytes, i.e. by code point. */
function compareKeys(a: string, b: string): number {
  if (a === b) return 0;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // UTF-16 order equals code-point order except surrogates against U+E000..U+FFFF.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys && (x >= 0xe000 || y >= 0xe000)) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

/**
 * True for the keys a JS object lists first whatever their insertion order
 * (canonical array indexes, 0 .. 2^32-2).
 */
function isIndexKey(key: string): boolean {
  const length = key.length;
  if (length === 0 || length > 10) return false;
  const first = key.charCodeAt(0);
  if (first < 48 || first > 57 || (first === 48 && length > 1)) return false;
  for (let i = 1; i < length; i++) {
    const code = key.charCodeAt(i);
    if (code < 48 || code > 57) return false;
  }
  return length < 10 || Number(key) <= 4294967294;
}

/**
 * The keys of `object` in code-point order. JS lists index keys first,
 * so only an object with one (it is then the first key) needs sorting.
 */
function keysInOrder(object: object, sortAll: boolean): string[] {
  const keys = Object.keys(object);
  if (sortAll || (keys.length > 1 && isIndexKey(keys[0] as string))) keys.sort(compareKeys);
  return keys;
}

/** True when `keys` (in JS order) is as sorted as a JS object can be: index keys first, then the rest in code-point order. */
function isSorted(keys: string[]): boolean {
  let i = 0;
  while (i < keys.length && isIndexKey(keys[i] as string)) i++;
  for (i++; i < keys.length; i++) {
    if (compareKeys(keys[i - 1] as string, keys[i] as string) > 0) return false;
  }
  return true;
}

/**
 * Numbers whose native text is not what their value alone gives (numbers
 * native parsed from text itself), by container and key or index.
 */
const exactTexts = new WeakMap<object, Map<string | number, string>>();

/**
 * Returns `value` with every object's keys sorted (as far as a JS object
 * allows: the writers finish the job). Subtrees that are already sorted
 * are returned as they are (no copy), so payloads straight from the native
 * runtime cost one walk and no allocation.
 */
export function sortJson(value: Json): Json {
  return isSortedJson(value) ? value : sortedCopy(value);
}

/**
 * True when `sortJson` would return `value` itself: a scan that allocates
 * nothing, for the common case (payloads from either relay are sorted).
 */
function isSortedJson(value: Json): boolean {
  if (value === null || typeof value !== 'object') return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!isSortedJson(value[i] as Json)) return false;
    return true;
  }
  // Index keys come first in a JS object whatever their order; the rest must be in code-point order.
  let previous: string | undefined;
  for (const key in value) {
    if (previous !== undefined) {
      if (compareKeys(previous, key) > 0) return false;
      previous = key;
    } else if (!isIndexKey(key)) {
      previous = key;
    }
    if (!isSortedJson(value[key] as Json)) return false;
  }
  return true;
}

function sortedCopy(value: Json): Json {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let copy: Json[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item = value[i] as Json;
      const sorted = sortJson(item);
      if (sorted !== item && copy === undefined) copy = value.slice(0, i);
      if (copy !== undefined) copy.push(sorted);
    }
    return copy === undefined ? value : keepExactTexts(value, copy);
  }
  const keys = Object.keys(value);
  const inOrder = isSorted(keys);
  let changed = !inOrder;
  const children: Json[] = new Array(keys.length);
  for (let i = 0; i < keys.length; i++) {
    const item = value[keys[i] as string] as Json;
    const sorted = sortJson(item);
    children[i] = sorted;
    if (sorted !== item) changed = true;
  }
  if (!changed) return value;
  const order = inOrder ? keys.map((_, i) => i) : keys.map((_, i) => i).sort((a, b) => compareKeys(keys[a] as string, keys[b] as string));
  const out: { [key: string]: Json } = {};
  for (const i of order) defineKey(out, keys[i] as string, children[i] as Json);
  return keepExactTexts(value, out);
}

function keepExactTexts<T extends object>(from: object, to: T): T {
  const texts = exactTexts.get(from);
  if (texts !== undefined) exactTexts.set(to, texts);
  return to;
}

function defineKey(target: { [key: string]: Json }, key: string, value: Json): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

/**
 * True when `JSON.stringify(value)` may differ from `canonicalJson(value)`
 * for a value whose keys are already in code-point order (as the memory
 * relay builds payloads): it holds a number the two write differently, or
 * an object with an integer-like key. Stops at the first hit.
 */
export function stringifyMayDiffer(value: Json): boolean {
  return mayDiffer(value, false);
}

/**
 * `stringifyMayDiffer`, and with `exact` also true for a container holding
 * numbers whose native text their value alone does not give (see
 * `parseJsonAsNative`). The memory relay's own payloads never hold such
 * numbers, so its per-event check skips that lookup.
 */
function mayDiffer(value: Json, exact: boolean): boolean {
  if (typeof value === 'number') return payloadNumberMayDiffer(value);
  if (typeof value !== 'object' || value === null) return false;
  if (exact && exactTexts.has(value)) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (mayDiffer(value[i] as Json, exact)) return true;
    return false;
  }
  for (const key in value) {
    // A JS object lists integer-like keys first; native sorts them as text.
    const first = key.charCodeAt(0);
    if (first >= 48 && first <= 57) return true;
    if (mayDiffer(value[key] as Json, exact)) return true;
  }
  return false;
}

/** Same text from both: native integers, and other numbers except [1e-6, 1e-5) (JS decimal, native exponent). */
function payloadNumberMayDiffer(value: number): boolean {
  if (Number.isInteger(value)) return value < I32_MIN || value > U32_MAX;
  const magnitude = Math.abs(value);
  return magnitude >= 1e-6 && magnitude < 1e-5;
}

/** How native types a number field: `f64` (always a fraction or an exponent) or an unsigned integer (plain at any size). */
export type NumberFieldType = 'f64' | 'integer';

/**
 * Where a document has number fields native types (a struct's `f64` and
 * integer fields), as a tree following its shape: `fields` for the keys of
 * an object, `items` for the items of an array. Numbers anywhere else are
 * payload numbers; subtrees the tree does not reach are payloads.
 */
export interface FieldTypes {
  readonly fields?: { readonly [key: string]: FieldTypes | NumberFieldType };
  readonly items?: FieldTypes | NumberFieldType;
}

type FieldTypeNode = FieldTypes | NumberFieldType | undefined;

export interface RustJsonOptions {
  /** `serde_json::to_string_pretty` layout (two-space indent). Default compact. */
  pretty?: boolean;
  /** Write every object's keys in code-point order (a `serde_json::Value`). Default: the document's own order. */
  sortKeys?: boolean;
  /** The fields native types; numbers elsewhere are payload numbers. */
  fieldTypes?: FieldTypes;
}

/**
 * Serializes a document as native does: in its own key order (build it in
 * native's struct order), or with every key sorted (`sortKeys`), and native
 * number text. `undefined` object values are skipped, `undefined` array
 * items and a top-level `undefined` are written as `null`.
 *
 * When `JSON.stringify` would write the whole document exactly as native
 * does (no number or key above needs the exact writer), the document goes
 * to it whole; otherwise each payload subtree it would write exactly does:
 * a check walk plus the engine's serializer cost a fraction of writing
 * piece by piece (~160 vs ~500 µs for a 50 KB trajectory on Node 20).
 */
export function toRustJson(value: unknown, options: RustJsonOptions = {}): string {
  const pretty = options.pretty === true;
  const sortKeys = options.sortKeys === true;
  if (!sortKeys && value !== undefined && !typedMayDiffer(value as Json, options.fieldTypes)) {
    return pretty ? JSON.stringify(value, null, 2) : JSON.stringify(value);
  }
  const writer: Writer = { out: [], sortKeys };
  write(writer, value as Json | undefined, pretty ? '\n' : '', undefined, options.fieldTypes);
  return writer.out.join('');
}

/** `mayDiffer` for a document with typed fields: their numbers follow their type's text rule. */
function typedMayDiffer(value: Json, types: FieldTypeNode): boolean {
  if (typeof value === 'number') return numberMayDiffer(value, types);
  if (types === undefined || typeof types === 'string') return mayDiffer(value, true);
  if (typeof value !== 'object' || value === null) return false;
  if (exactTexts.has(value)) return true;
  if (Array.isArray(value)) {
    const itemTypes = types.items;
    for (let i = 0; i < value.length; i++) if (typedMayDiffer(value[i] as Json, itemTypes)) return true;
    return false;
  }
  const fields = types.fields;
  for (const key in value) {
    const first = key.charCodeAt(0);
    if (first >= 48 && first <= 57) return true;
    const fieldTypes = fields !== undefined && Object.prototype.hasOwnProperty.call(fields, key) ? fields[key] : undefined;
    if (typedMayDiffer(value[key] as Json, fieldTypes)) return true;
  }
  return false;
}

/** True when `JSON.stringify` may write this number differently from native in a field of type `type`. */
function numberMayDiffer(value: number, type: FieldTypeNode): boolean {
  // An f64 always shows a fraction or an exponent; JS writes integral values without one.
  if (type === 'f64') return Number.isInteger(value) || payloadNumberMayDiffer(value);
  if (type === 'integer') return !Number.isSafeInteger(value);
  return payloadNumberMayDiffer(value);
}

/**
 * Compact JSON text with every key sorted: what `serde_json::to_string`
 * writes for a `serde_json::Value` (an ATOF line, or a payload native
 * embeds as a string).
 */
export function canonicalJson(value: Json | undefined): string {
  return toRustJson(value, { sortKeys: true });
}

interface Writer {
  out: string[];
  sortKeys: boolean;
}

function write(writer: Writer, value: Json | undefined, newline: string, exact: string | undefined, types: FieldTypeNode): void {
  const out = writer.out;
  switch (typeof value) {
    case 'string':
      out.push(JSON.stringify(value));
      return;
    case 'number':
      out.push(exact ?? numberText(value, types));
      return;
    case 'boolean':
      out.push(value ? 'true' : 'false');
      return;
  }
  if (value === null || value === undefined) {
    out.push('null');
    return;
  }
  if (types === undefined || typeof types === 'string') {
    if (!writer.sortKeys && !mayDiffer(value, true)) {
      out.push(newline === '' ? JSON.stringify(value) : indented(JSON.stringify(value, null, 2), newline));
      return;
    }
    types = undefined;
  }
  const texts = exactTexts.get(value);
  const inner = newline === '' ? '' : `${newline}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) {
      out.push('[]');
      return;
    }
    const itemTypes = types?.items;
    out.push('[');
    for (let i = 0; i < value.length; i++) {
      out.push(i > 0 ? `,${inner}` : inner);
      write(writer, value[i], inner, texts?.get(i), itemTypes);
    }
    out.push(`${newline}]`);
    return;
  }
  const fields = types?.fields;
  let first = true;
  out.push('{');
  for (const key of keysInOrder(value, writer.sortKeys)) {
    const item = value[key];
    if (item === undefined) continue;
    out.push(first ? inner : `,${inner}`);
    first = false;
    out.push(JSON.stringify(key), newline === '' ? ':' : ': ');
    const fieldTypes = fields !== undefined && Object.prototype.hasOwnProperty.call(fields, key) ? fields[key] : undefined;
    write(writer, item, inner, texts?.get(key), fieldTypes);
  }
  out.push(first ? '}' : `${newline}}`);
}

/** `JSON.stringify(value, null, 2)` text moved to the indentation `newline` ends with (strings never hold a raw newline). */
function indented(text: string, newline: string): string {
  return newline === '\n' ? text : text.split('\n').join(newline);
}

function numberText(value: number, type: FieldTypeNode): string {
  if (type === 'f64') return formatF64(value);
  if (type === 'integer') return formatIntegerField(value);
  return formatPayloadNumber(value);
}

// ---------------------------------------------------------------------------
// parsing JSON text as native does

/** serde_json's nesting limit: 128 open arrays/objects fail. */
const MAX_DEPTH = 127;

class NotNativeJson extends Error {
  override readonly name = 'NotNativeJson';
}

/**
 * Parses JSON text as `serde_json::from_str::<Value>` does: stricter than
 * `JSON.parse` where serde is (unpaired surrogate escapes, numbers out of
 * f64 range, nesting past 127), objects with sorted keys, and numbers whose
 * native text the value alone does not give (`1.0`, `12345678901234`,
 * `-0`) remembered for the writers here. Returns `undefined` for text serde
 * rejects, else a holder whose `value` is the parsed value — native's own
 * `{"value": ...}` wrapper for non-object arguments keeps that text too.
 */
export function parseJsonAsNative(text: string): { value: Json } | undefined {
  const parser = new Parser(text);
  try {
    parser.skipSpace();
    const holder: { value: Json } = { value: null };
    holder.value = parser.value(holder, 'value', 0);
    parser.skipSpace();
    if (parser.at < text.length) return undefined;
    return holder;
  } catch (error) {
    if (error instanceof NotNativeJson) return undefined;
    throw error;
  }
}

const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
const STRING = /"(?:[^"\\\u0000-\u001f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"/y;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

class Parser {
  at = 0;
  constructor(private readonly text: string) {}

  skipSpace(): void {
    const text = this.text;
    let at = this.at;
    for (;;) {
      const code = text.charCodeAt(at);
      if (code !== 32 && code !== 10 && code !== 13 && code !== 9) break;
      at++;
    }
    this.at = at;
  }

  value(container: object, key: string | number, depth: number): Json {
    const code = this.text.charCodeAt(this.at);
    if (code === 34) return this.string();
    if (code === 123) return this.object(depth + 1);
    if (code === 91) return this.array(depth + 1);
    if (code === 45 || (code >= 48 && code <= 57)) return this.number(container, key);
    for (const [word, literal] of LITERALS) {
      if (this.text.startsWith(word, this.at)) {
        this.at += word.length;
        return literal;
      }
    }
    throw new NotNativeJson();
  }

  string(): string {
    STRING.lastIndex = this.at;
    const match = STRING.exec(this.text);
    if (match === null) throw new NotNativeJson();
    this.at += match[0].length;
    const token = match[0];
    const value = JSON.parse(token) as string;
    // Rust strings are UTF-8: serde rejects an escape that leaves half a surrogate pair.
    if (token.includes('\\u') && LONE_SURROGATE.test(value) && !LONE_SURROGATE.test(token)) throw new NotNativeJson();
    return value;
  }

  number(container: object, key: string | number): number {
    NUMBER.lastIndex = this.at;
    const match = NUMBER.exec(this.text);
    if (match === null) throw new NotNativeJson();
    const literal = match[0];
    this.at += literal.length;
    const value = Number(literal);
    if (!Number.isFinite(value)) throw new NotNativeJson();
    const integer = match[1] === undefined && match[2] === undefined && literal !== '-0';
    // serde keeps an integer literal within i64/u64 as that integer; everything else is an f64.
    const text = integer && fitsI64OrU64(literal) ? literal : formatF64(value);
    if (text !== formatPayloadNumber(value)) {
      let texts = exactTexts.get(container);
      if (texts === undefined) exactTexts.set(container, (texts = new Map()));
      texts.set(key, text);
    }
    return value;
  }

  array(depth: number): Json[] {
    if (depth > MAX_DEPTH) throw new NotNativeJson();
    this.at++;
    const items: Json[] = [];
    this.skipSpace();
    if (this.text.charCodeAt(this.at) === 93) {
      this.at++;
      return items;
    }
    for (;;) {
      this.skipSpace();
      items.push(this.value(items, items.length, depth));
      this.skipSpace();
      const code = this.text.charCodeAt(this.at++);
      if (code === 93) return items;
      if (code !== 44) throw new NotNativeJson();
    }
  }

  object(depth: number): { [key: string]: Json } {
    if (depth > MAX_DEPTH) throw new NotNativeJson();
    this.at++;
    // Values first land in a Map (a later duplicate key wins, as in serde's map), then in a key-sorted object.
    const entries = new Map<string, Json>();
    const staging: object = {};
    this.skipSpace();
    if (this.text.charCodeAt(this.at) !== 125) {
      for (;;) {
        this.skipSpace();
        if (this.text.charCodeAt(this.at) !== 34) throw new NotNativeJson();
        const key = this.string();
        this.skipSpace();
        if (this.text.charCodeAt(this.at++) !== 58) throw new NotNativeJson();
        this.skipSpace();
        exactTexts.get(staging)?.delete(key);
        entries.set(key, this.value(staging, key, depth));
        this.skipSpace();
        const code = this.text.charCodeAt(this.at++);
        if (code === 125) break;
        if (code !== 44) throw new NotNativeJson();
      }
    } else {
      this.at++;
    }
    const object: { [key: string]: Json } = {};
    for (const key of [...entries.keys()].sort(compareKeys)) defineKey(object, key, entries.get(key) as Json);
    return keepExactTexts(staging, object);
  }
}

const LITERALS: readonly [string, Json][] = [
  ['true', true],
  ['false', false],
  ['null', null],
];

/** True when an integer literal fits serde's i64 (negative) or u64 (positive). */
function fitsI64OrU64(literal: string): boolean {
  const digits = literal.startsWith('-') ? literal.slice(1) : literal;
  if (digits.length < 19) return true;
  if (digits.length > 20) return false;
  const limit = literal.startsWith('-') ? '9223372036854775808' : '18446744073709551615';
  return digits.length < limit.length || (digits.length === limit.length && digits <= limit);
}
