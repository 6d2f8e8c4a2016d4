/**
 * The writer: a value as native's JSON text, numbers typed per field.
 *
 * @module
 */

import { isPlainDataObject, type Json } from '../../shared/json.ts';
import { giveBack, takeBuilder, type LineBuilder } from '../../shared/utf8-builder.ts';
import { exactTexts, isSortedJson, keyMayDiffer, keysInOrder, mayDiffer, payloadNumberMayDiffer } from './keys.ts';
import { formatF64, formatIntegerField, formatPayloadNumber } from './numbers.ts';

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
  /** Payloads `sortPayload` found written exactly by `JSON.stringify`: the check does not walk them again. */
  plain?: ReadonlySet<object> | undefined;
}

const NO_PAYLOADS: ReadonlySet<object> = new Set();

/**
 * Texts written ahead of the document that holds them (a sliced build
 * writes a long array's items a slice at a time): the writer calls the
 * function with the indentation the value stands at (`newline`, `''` when
 * compact) and it writes the value's text into `out`.
 */
const writtenAhead = new WeakMap<object, (newline: string, out: LineBuilder) => void>();

/**
 * Makes `placeholder` (an empty array or object in a document) stand for
 * the text `write` writes. It is also listed among the values with exact
 * texts, so no check on its way up (`mayDiffer`) lets `JSON.stringify`
 * write a container holding it whole.
 */
export function writeAhead(placeholder: object, write: (newline: string, out: LineBuilder) => void): void {
  writtenAhead.set(placeholder, write);
  if (!exactTexts.has(placeholder)) exactTexts.set(placeholder, new Map());
}

/**
 * Serializes a document as native does: in its own key order (build it in
 * native's struct order), or with every key sorted (`sortKeys`), and native
 * number text. `undefined` object values are skipped, `undefined` array
 * items and a top-level `undefined` are written as `null`.
 *
 * When `JSON.stringify` would write the whole document exactly as native
 * does (no number or key above needs the exact writer), the document goes
 * to it whole; otherwise the one writer (`writeValue`) writes it into a
 * byte buffer and the string is decoded from those bytes (`textOf`).
 */
export function toRustJson(value: unknown, options: RustJsonOptions = {}): string {
  const pretty = options.pretty === true;
  const sortKeys = options.sortKeys === true;
  const plain = options.plain ?? NO_PAYLOADS;
  return textAt(value as Json | undefined, options.fieldTypes, pretty ? '\n' : '', sortKeys, plain);
}

/** `value`'s text at the indentation `newline`: by `JSON.stringify` when it writes the whole exactly, else by `textOf`. */
function textAt(value: Json | undefined, types: FieldTypeNode, newline: string, sortKeys: boolean, plain: ReadonlySet<object>): string {
  if (!sortKeys && value !== undefined && !typedMayDiffer(value, types, plain)) {
    return newline === '' ? JSON.stringify(value) : indented(JSON.stringify(value, null, 2), newline);
  }
  return textOf(value, types, newline, sortKeys, plain);
}

/**
 * While `textOf` writes a string: its byte buffer, and the text written
 * before the bytes now in it. A whole text already made as a string
 * (`JSON.stringify`'s, an array written ahead) joins the result as it is
 * (`writeText`) instead of being encoded into the buffer and decoded back:
 * for a long pretty document that round trip cost more than the join
 * (bench/RESULTS.md, "one walker for the string and byte texts").
 */
let textOut: LineBuilder | null = null;
let textBefore: string[] | null = null;

/** `writeValue`'s text as a string, written in the process's reusable byte buffer. */
function textOf(value: Json | undefined, types: FieldTypeNode, newline: string, sortKeys: boolean, plain: ReadonlySet<object>): string {
  const out = takeBuilder();
  const outerOut = textOut;
  const outerBefore = textBefore;
  textOut = out;
  textBefore = null;
  try {
    writeValue(out, value, undefined, types, newline, sortKeys, plain);
    const before = textBefore as string[] | null;
    if (before === null) return out.text();
    if (out.length > 0) before.push(out.text());
    return before.length === 1 ? (before[0] as string) : before.join('');
  } finally {
    textOut = outerOut;
    textBefore = outerBefore;
    giveBack(out);
  }
}

/** Writes `text` (JSON text already) into `out`: as UTF-8, or kept as a string when `out` is `textOf`'s. */
function writeText(out: LineBuilder, text: string): void {
  if (out === textOut) keepTexts(out, [text]);
  else out.utf8(text);
}

/** `writeText` for texts written one after the other, all kept as strings when `out` is `textOf`'s. */
function writeTexts(out: LineBuilder, texts: readonly string[]): void {
  if (out !== textOut) {
    for (let i = 0; i < texts.length; i++) out.utf8(texts[i] as string);
    return;
  }
  keepTexts(out, texts);
}

/** Moves `out`'s bytes, then `texts`, to the text `textOf` is writing. */
function keepTexts(out: LineBuilder, texts: readonly string[]): void {
  const before = (textBefore ??= []);
  if (out.length > 0) {
    before.push(out.text());
    out.length = 0;
  }
  for (let i = 0; i < texts.length; i++) before.push(texts[i] as string);
}

/**
 * `JSON.stringify(value)` when that is native's compact text of `value`
 * (no number or key in it needs the exact writer: the check `toRustJson`
 * makes before handing a whole document to the engine), else undefined.
 */
export function stringifiedIfExact(value: Json, fieldTypes: FieldTypes | undefined, plain: ReadonlySet<object> = NO_PAYLOADS): string | undefined {
  return typedMayDiffer(value, fieldTypes, plain) ? undefined : JSON.stringify(value);
}

/**
 * Writes `JSON.stringify(value)` as UTF-8 into `out` and returns true when
 * that is native's compact text for a payload whose keys are in code-point
 * order (`stringifyMayDiffer(value)` false, as the memory relay's copies
 * are); otherwise writes nothing and returns false. `stringifiedIfExact`
 * for a line's payload, as bytes.
 *
 * Every value is written here, in one pass, rather than by a check walk
 * and `JSON.stringify` whole as `writeValue` writes a document's plain
 * parts: for line-sized payloads the one pass costs less on all three
 * runtimes (bench/RESULTS.md, "the ATOF line's payload walk"). It gives up
 * where `stringifyMayDiffer` would send the payload to the exact writer (a
 * number native writes differently, an integer-like key), and wherever
 * `JSON.stringify` would do more than walk plain data (a prototype other
 * than `Object.prototype` or none, `toJSON`, an inherited key, a BigInt),
 * or nesting deeper than `toJson`'s copies go.
 */
export function writeStringifiedBytes(out: LineBuilder, value: object): boolean {
  // Relative to the line's start: the caller's buffer may move the open line.
  const written = out.length - out.start;
  try {
    writeStringifiedObject(out, value, 0);
    return true;
  } catch (error) {
    if (error !== GIVE_UP) throw error;
    out.length = out.start + written;
    return false;
  }
}

/** Thrown to give up on `writeStringifiedBytes`; not an Error, so no stack is captured. */
const GIVE_UP = { reason: 'exact writer' };
/** Deeper than the relay's copies go (`toJson`'s bound): left to the caller's exact path. */
const MAX_STRINGIFIED_DEPTH = 128;
const hasOwn = Object.prototype.hasOwnProperty;

function writeStringifiedObject(out: LineBuilder, object: object, depth: number): void {
  if (depth >= MAX_STRINGIFIED_DEPTH) throw GIVE_UP;
  if (Array.isArray(object)) {
    out.byte(0x5b); // [
    for (let i = 0; i < object.length; i++) {
      if (i > 0) out.byte(0x2c); // ,
      if (!writeStringifiedItem(out, object[i], depth + 1)) out.ascii('null');
    }
    out.byte(0x5d); // ]
    return;
  }
  if (!isPlainDataObject(object)) throw GIVE_UP;
  out.byte(0x7b); // {
  let first = true;
  for (const key in object) {
    // An inherited key (`JSON.stringify` skips it, `stringifyMayDiffer` reads it).
    if (!hasOwn.call(object, key) || keyMayDiffer(key)) throw GIVE_UP;
    const item: unknown = (object as Record<string, unknown>)[key];
    if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
    if (!first) out.byte(0x2c); // ,
    first = false;
    out.jsonStringAsGiven(key);
    out.byte(0x3a); // :
    writeStringifiedItem(out, item, depth + 1);
  }
  out.byte(0x7d); // }
}

/** Writes a value inside an object or array; false (nothing written) for undefined, functions and symbols. */
function writeStringifiedItem(out: LineBuilder, value: unknown, depth: number): boolean {
  switch (typeof value) {
    case 'string':
      out.jsonStringAsGiven(value);
      return true;
    case 'number':
      if (payloadNumberMayDiffer(value)) throw GIVE_UP;
      out.ascii(Number.isFinite(value) ? `${value}` : 'null');
      return true;
    case 'boolean':
      out.ascii(value ? 'true' : 'false');
      return true;
    case 'object':
      if (value === null) out.ascii('null');
      else writeStringifiedObject(out, value, depth);
      return true;
    case 'bigint':
      throw GIVE_UP;
    default:
      return false;
  }
}

/** `mayDiffer` for a document with typed fields: their numbers follow their type's text rule. */
function typedMayDiffer(value: Json, types: FieldTypeNode, plain: ReadonlySet<object>): boolean {
  if (typeof value === 'number') return numberMayDiffer(value, types);
  if (typeof value !== 'object' || value === null) return false;
  if (types === undefined || typeof types === 'string') return !plain.has(value) && mayDiffer(value, true);
  if (exactTexts.has(value)) return true;
  if (Array.isArray(value)) {
    const itemTypes = types.items;
    for (let i = 0; i < value.length; i++) if (typedMayDiffer(value[i] as Json, itemTypes, plain)) return true;
    return false;
  }
  const fields = types.fields;
  for (const key in value) {
    if (keyMayDiffer(key)) return true;
    const fieldTypes = fields !== undefined && Object.prototype.hasOwnProperty.call(fields, key) ? fields[key] : undefined;
    if (typedMayDiffer(value[key] as Json, fieldTypes, plain)) return true;
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
 * An array's text written item by item ahead of the document that holds it
 * (a sliced build adds a few items per slice): `placeholder` stands for it
 * in the document (`writeAhead`). `newline` is the indentation the array
 * will stand at (`''` for compact text); each item is written by the
 * document's writer at its place's indentation, so the document's text is
 * the same as written in one go.
 */
export class ArrayTextAhead {
  readonly placeholder: Json[] = [];
  readonly #pieces: string[] = [];
  readonly #inner: string;

  constructor(
    readonly newline: string,
    readonly options: { fieldTypes?: FieldTypes | undefined; plain?: ReadonlySet<object> | undefined } = {},
  ) {
    this.#inner = newline === '' ? '' : `${newline}  `;
    writeAhead(this.placeholder, (at, out) => this.#write(at, out));
  }

  /** Writes the next item. */
  add(item: Json): void {
    const inner = this.#inner;
    const text = textAt(item, this.options.fieldTypes, inner, false, this.options.plain ?? NO_PAYLOADS);
    this.#pieces.push(this.#pieces.length === 0 ? inner : `,${inner}`, text);
  }

  #write(at: string, out: LineBuilder): void {
    const pieces = this.#pieces;
    if (pieces.length === 0) {
      out.ascii('[]');
      return;
    }
    if (at === this.newline) {
      out.byte(0x5b); // [
      writeTexts(out, pieces);
      out.ascii(at);
      out.byte(0x5d); // ]
      return;
    }
    // Placed elsewhere than announced: moved to where it stands (the same text, re-indented).
    const text = `[${pieces.join('')}${this.newline}]`;
    writeTexts(out, [this.newline === '' || at === '' ? text : text.split(this.newline).join(at)]);
  }
}

/**
 * Compact JSON text with every key sorted: what `serde_json::to_string`
 * writes for a `serde_json::Value` (an ATOF line, or a payload native
 * embeds as a string).
 */
export function canonicalJson(value: Json | undefined): string {
  // A value already in code-point key order with no integer-like key (JS
  // lists those first), no number JS writes differently and no kept number
  // text is written by `JSON.stringify` exactly as the key-sorting writer
  // writes it: two scans and the engine's serializer instead of the
  // piecewise writer (the converter keys tool calls by their arguments' text).
  if (value !== undefined && isSortedJson(value) && !mayDiffer(value, true)) return JSON.stringify(value);
  return textOf(value, undefined, '', true, NO_PAYLOADS);
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

/**
 * `toRustJson(value, { fieldTypes, plain })` (compact) written as UTF-8
 * straight into `out`: the same text, byte for byte (`toRustJson` decodes
 * what this writer writes). A trajectory's text as a string was a rope that
 * the file write flattened and encoded again (bench/RESULTS.md, "the
 * replay's time beyond memory-steady"); these bytes go to the file as they
 * are.
 */
export function writeRustJsonBytes(out: LineBuilder, value: unknown, options: { fieldTypes?: FieldTypes | undefined; plain?: ReadonlySet<object> | undefined } = {}): void {
  writeValue(out, value as Json | undefined, undefined, options.fieldTypes, '', false, options.plain ?? NO_PAYLOADS);
}

/**
 * The one walker: `value` as native's text, UTF-8 into `out`. `newline` is
 * the indentation `value` stands at (`''`: compact); `sortKeys` writes
 * every object's keys in code-point order. Each piece is encoded into the
 * buffer as it is written. The parts `JSON.stringify` writes exactly (not
 * when sorting keys) go to it whole: a check walk plus the engine's
 * serializer cost less than writing piece by piece; writing every value in
 * JS instead allocated less on Node but cost more than it saved on Bun and
 * Deno (bench/RESULTS.md, "Figures behind the code" and "the exporter-style
 * trajectory as bytes").
 */
function writeValue(out: LineBuilder, value: Json | undefined, exact: string | undefined, types: FieldTypeNode, newline: string, sortKeys: boolean, plain: ReadonlySet<object>): void {
  switch (typeof value) {
    case 'string':
      out.jsonStringAsGiven(value);
      return;
    case 'number':
      out.ascii(exact ?? numberText(value, types));
      return;
    case 'boolean':
      out.ascii(value ? 'true' : 'false');
      return;
  }
  if (value === null || value === undefined) {
    out.ascii('null');
    return;
  }
  if (typeof types !== 'object') {
    types = undefined;
    if (!sortKeys && (plain.has(value) || !mayDiffer(value, true))) {
      writeWhole(out, value, newline);
      return;
    }
  } else if (!sortKeys && !typedMayDiffer(value, types, plain)) {
    // A typed part that `JSON.stringify` writes exactly goes to it whole, as a whole document would: one
    // integral f64 (a timestamp on a whole second) sends only the parts holding it to the walk below.
    writeWhole(out, value, newline);
    return;
  }
  const texts = exactTexts.get(value);
  if (texts !== undefined) {
    const ahead = writtenAhead.get(value);
    if (ahead !== undefined) {
      ahead(newline, out);
      return;
    }
  }
  const inner = newline === '' ? '' : `${newline}  `;
  if (Array.isArray(value)) {
    const itemTypes = types?.items;
    out.byte(0x5b); // [
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out.byte(0x2c); // ,
      if (inner !== '') out.ascii(inner);
      writeValue(out, value[i], texts?.get(i), itemTypes, inner, sortKeys, plain);
    }
    if (inner !== '' && value.length > 0) out.ascii(newline);
    out.byte(0x5d); // ]
    return;
  }
  const fields = types?.fields;
  let first = true;
  out.byte(0x7b); // {
  // for-in lists the keys as Object.keys does, without making the array; an integer-like first key
  // (JS lists those first, native sorts them as text) takes the sorted list instead.
  let sorted: string[] | undefined;
  if (sortKeys) {
    sorted = keysInOrder(value, true);
  } else {
    for (const key in value) {
      if (keyMayDiffer(key)) sorted = keysInOrder(value, false);
      break;
    }
  }
  if (sorted === undefined) {
    for (const key in value) first = writeMember(out, value, key, first, fields, texts, inner, sortKeys, plain);
  } else {
    for (let i = 0; i < sorted.length; i++) first = writeMember(out, value, sorted[i] as string, first, fields, texts, inner, sortKeys, plain);
  }
  if (inner !== '' && !first) out.ascii(newline);
  out.byte(0x7d); // }
}

/** `value` by `JSON.stringify`, at the indentation `newline` (compact when `''`). */
function writeWhole(out: LineBuilder, value: object, newline: string): void {
  writeText(out, newline === '' ? JSON.stringify(value) : indented(JSON.stringify(value, null, 2), newline));
}

/** Writes `"key":value` (after a comma unless `first`); returns whether the next member is still the first. */
function writeMember(
  out: LineBuilder,
  object: { [key: string]: Json },
  key: string,
  first: boolean,
  fields: FieldTypes['fields'],
  texts: Map<string | number, string> | undefined,
  inner: string,
  sortKeys: boolean,
  plain: ReadonlySet<object>,
): boolean {
  const item = object[key];
  if (item === undefined) return first;
  if (!first) out.byte(0x2c); // ,
  if (inner !== '') out.ascii(inner);
  out.jsonStringAsGiven(key);
  out.byte(0x3a); // :
  if (inner !== '') out.byte(0x20);
  const fieldTypes = fields !== undefined && Object.prototype.hasOwnProperty.call(fields, key) ? fields[key] : undefined;
  writeValue(out, item, texts?.get(key), fieldTypes, inner, sortKeys, plain);
  return false;
}
