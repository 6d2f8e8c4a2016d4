/**
 * The writer: a value as native's JSON text, numbers typed per field.
 *
 * @module
 */

import type { Json } from '../../shared/json.ts';
import type { LineBuilder } from '../../shared/utf8-builder.ts';
import { exactTexts, isSortedJson, keysInOrder, mayDiffer, payloadNumberMayDiffer } from './keys.ts';
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
 * compact) and it pushes the value's text onto `out`.
 */
const writtenAhead = new WeakMap<object, (newline: string, out: string[]) => void>();

/**
 * Makes `placeholder` (an empty array or object in a document) stand for
 * the text `write` pushes. It is also listed among the values with exact
 * texts, so no check on its way up (`mayDiffer`) lets `JSON.stringify`
 * write a container holding it whole.
 */
export function writeAhead(placeholder: object, write: (newline: string, out: string[]) => void): void {
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
 * to it whole; otherwise each payload subtree it would write exactly does:
 * a check walk plus the engine's serializer cost a fraction of writing
 * piece by piece (bench/RESULTS.md, "Figures behind the code").
 */
export function toRustJson(value: unknown, options: RustJsonOptions = {}): string {
  const pretty = options.pretty === true;
  const sortKeys = options.sortKeys === true;
  const plain = options.plain ?? NO_PAYLOADS;
  if (!sortKeys && value !== undefined && !typedMayDiffer(value as Json, options.fieldTypes, plain)) {
    return pretty ? JSON.stringify(value, null, 2) : JSON.stringify(value);
  }
  const writer: Writer = { out: [], sortKeys, plain };
  write(writer, value as Json | undefined, pretty ? '\n' : '', undefined, options.fieldTypes);
  return writer.out.join('');
}

/**
 * `JSON.stringify(value)` when that is native's compact text of `value`
 * (no number or key in it needs the exact writer: the check `toRustJson`
 * makes before handing a whole document to the engine), else undefined.
 */
export function stringifiedIfExact(value: Json, fieldTypes: FieldTypes | undefined, plain: ReadonlySet<object> = NO_PAYLOADS): string | undefined {
  return typedMayDiffer(value, fieldTypes, plain) ? undefined : JSON.stringify(value);
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
    const first = key.charCodeAt(0);
    if (first >= 48 && first <= 57) return true;
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
 * will stand at (`''` when compact); the text is the writer's own, item for
 * item (each item's text as `toRustJson` writes it alone, then indented to
 * its place), so the document's text is the same as written in one go.
 */
export class ArrayTextAhead {
  readonly placeholder: Json[] = [];
  readonly #pieces: string[] = [];
  readonly #inner: string;

  constructor(
    readonly newline: string,
    readonly options: { pretty: boolean; fieldTypes?: FieldTypes | undefined; plain?: ReadonlySet<object> | undefined },
  ) {
    this.#inner = newline === '' ? '' : `${newline}  `;
    writeAhead(this.placeholder, (at, out) => this.#write(at, out));
  }

  /** Writes the next item. */
  add(item: Json): void {
    const inner = this.#inner;
    const { pretty, fieldTypes, plain } = this.options;
    const text = toRustJson(item, { pretty, ...(fieldTypes === undefined ? {} : { fieldTypes }), plain });
    this.#pieces.push(this.#pieces.length === 0 ? inner : `,${inner}`, inner === '' ? text : indented(text, inner));
  }

  #write(at: string, out: string[]): void {
    const pieces = this.#pieces;
    if (pieces.length === 0) {
      out.push('[]');
      return;
    }
    if (at === this.newline) {
      out.push('[');
      for (let i = 0; i < pieces.length; i++) out.push(pieces[i] as string);
      out.push(`${at}]`);
      return;
    }
    // Placed elsewhere than announced: moved to where it stands (the same text, re-indented).
    const text = `[${pieces.join('')}${this.newline}]`;
    out.push(this.newline === '' || at === '' ? text : text.split(this.newline).join(at));
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
  return toRustJson(value, { sortKeys: true });
}

interface Writer {
  out: string[];
  sortKeys: boolean;
  plain: ReadonlySet<object>;
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
  const ahead = writtenAhead.get(value);
  if (ahead !== undefined) {
    ahead(newline, out);
    return;
  }
  if (types === undefined || typeof types === 'string') {
    if (!writer.sortKeys && !mayDiffer(value, true)) {
      out.push(newline === '' ? JSON.stringify(value) : indented(JSON.stringify(value, null, 2), newline));
      return;
    }
    types = undefined;
  } else if (!writer.sortKeys && !typedMayDiffer(value, types, writer.plain)) {
    // A typed part that `JSON.stringify` writes exactly goes to it whole, as a whole document would: one
    // integral f64 (a timestamp on a whole second) sends only the parts holding it to the writer below.
    out.push(newline === '' ? JSON.stringify(value) : indented(JSON.stringify(value, null, 2), newline));
    return;
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

/**
 * `toRustJson(value, { fieldTypes, plain })` (compact) written as UTF-8
 * straight into `out`: the same text, byte for byte, and the same
 * decisions (the parts `JSON.stringify` writes exactly go to it whole), but
 * each piece is encoded into the buffer as it is written instead of being
 * joined into one string. A trajectory's text as a string was a rope that
 * the file write flattened and encoded again (bench/RESULTS.md, "the
 * replay's time beyond memory-steady"); these bytes go to the file as they
 * are. Writing every value in JS instead of handing the exact parts to
 * `JSON.stringify` allocated less on Node but cost more than it saved on
 * Bun and Deno (bench/RESULTS.md, "the exporter-style trajectory as bytes").
 */
export function writeRustJsonBytes(out: LineBuilder, value: unknown, options: { fieldTypes?: FieldTypes | undefined; plain?: ReadonlySet<object> | undefined } = {}): void {
  writeBytes(out, value as Json | undefined, undefined, options.fieldTypes, options.plain ?? NO_PAYLOADS);
}

function writeBytes(out: LineBuilder, value: Json | undefined, exact: string | undefined, types: FieldTypeNode, plain: ReadonlySet<object>): void {
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
  // As `write`: a part `JSON.stringify` writes exactly goes to it whole (one native pass, then one encode).
  if (typeof types !== 'object') {
    types = undefined;
    if (plain.has(value) || !mayDiffer(value, true)) {
      out.utf8(JSON.stringify(value));
      return;
    }
  } else if (!typedMayDiffer(value, types, plain)) {
    out.utf8(JSON.stringify(value));
    return;
  }
  const texts = exactTexts.get(value);
  if (texts !== undefined) {
    const ahead = writtenAhead.get(value);
    if (ahead !== undefined) {
      const pieces: string[] = [];
      ahead('', pieces);
      for (let i = 0; i < pieces.length; i++) out.utf8(pieces[i] as string);
      return;
    }
  }
  if (Array.isArray(value)) {
    const itemTypes = types?.items;
    out.byte(0x5b); // [
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out.byte(0x2c); // ,
      writeBytes(out, value[i], texts?.get(i), itemTypes, plain);
    }
    out.byte(0x5d); // ]
    return;
  }
  const fields = types?.fields;
  let first = true;
  out.byte(0x7b); // {
  // for-in lists the keys as Object.keys does, without making the array; an integer-like first key
  // (JS lists those first, native sorts them as text) takes the sorted list instead.
  let sorted: string[] | undefined;
  for (const key in value) {
    const c = key.charCodeAt(0);
    if (c >= 48 && c <= 57) sorted = keysInOrder(value, false);
    break;
  }
  if (sorted === undefined) {
    for (const key in value) first = writeMemberBytes(out, value, key, first, fields, texts, plain);
  } else {
    for (let i = 0; i < sorted.length; i++) first = writeMemberBytes(out, value, sorted[i] as string, first, fields, texts, plain);
  }
  out.byte(0x7d); // }
}

/** Writes `"key":value` (after a comma unless `first`); returns whether the next member is still the first. */
function writeMemberBytes(
  out: LineBuilder,
  object: { [key: string]: Json },
  key: string,
  first: boolean,
  fields: FieldTypes['fields'],
  texts: Map<string | number, string> | undefined,
  plain: ReadonlySet<object>,
): boolean {
  const item = object[key];
  if (item === undefined) return first;
  if (!first) out.byte(0x2c); // ,
  out.jsonStringAsGiven(key);
  out.byte(0x3a); // :
  const fieldTypes = fields !== undefined && Object.prototype.hasOwnProperty.call(fields, key) ? fields[key] : undefined;
  writeBytes(out, item, texts?.get(key), fieldTypes, plain);
  return false;
}
