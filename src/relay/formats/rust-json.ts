/**
 * JSON text exactly as the native relay's serializer (Rust `serde_json`)
 * writes it.
 *
 * Two details differ from `JSON.stringify`:
 * - Object keys of opaque payloads are sorted (serde's map is ordered by the
 *   keys' UTF-8 bytes), which also matters for the JSON strings native embeds
 *   in messages and for the comparison keys it builds.
 * - Non-integer numbers use Rust's shortest round-trip notation: `1.5e-6`
 *   where JavaScript writes `0.0000015`, and `1e21` rather than `1e+21`.
 *   Fields that native types as `f64` (costs, invocation timestamps) always
 *   carry a fraction: `1.0`, never `1`.
 *
 * @module
 */

import type { Json } from '../contract.ts';

/** Formats a finite number the way Rust formats an `f64` (always with a fraction or exponent). */
export function formatRustFloat(value: number): string {
  if (!Number.isFinite(value)) return 'null';
  if (value === 0) return Object.is(value, -0) ? '-0.0' : '0.0';
  const negative = value < 0;
  // toExponential() without digits gives the shortest round-trip digits, like Rust's ryu.
  const [mantissa = '', exponentText = '0'] = Math.abs(value).toExponential().split('e');
  const digits = mantissa.replace('.', '');
  const length = digits.length;
  const kk = Number(exponentText) + 1; // position of the decimal point relative to the digits
  let text: string;
  if (kk - length >= 0 && kk <= 21) {
    text = `${digits}${'0'.repeat(kk - length)}.0`;
  } else if (kk > 0 && kk <= 21) {
    text = `${digits.slice(0, kk)}.${digits.slice(kk)}`;
  } else if (kk > -5 && kk <= 0) {
    text = `0.${'0'.repeat(-kk)}${digits}`;
  } else if (length === 1) {
    text = `${digits}e${kk - 1}`;
  } else {
    text = `${digits[0]}.${digits.slice(1)}e${kk - 1}`;
  }
  return negative ? `-${text}` : text;
}

/**
 * Formats a payload number: safe integers as integers (the binding hands
 * them to Rust as integers), everything else as an `f64`.
 */
export function formatJsonNumber(value: number): string {
  if (Number.isSafeInteger(value)) return String(value);
  return formatRustFloat(value);
}

/** Orders keys like a Rust `BTreeMap<String, _>`: by UTF-8 bytes, i.e. by code point. */
export function compareKeys(a: string, b: string): number {
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

function sortedKeys(object: object): string[] {
  return Object.keys(object).sort(compareKeys);
}

function isSorted(keys: string[]): boolean {
  for (let i = 1; i < keys.length; i++) {
    if (compareKeys(keys[i - 1] as string, keys[i] as string) > 0) return false;
  }
  return true;
}

/**
 * Returns `value` with every object's keys sorted. Subtrees that are already
 * sorted are returned as they are (no copy), so payloads straight from the
 * native runtime cost one walk and no allocation.
 */
export function sortJson(value: Json): Json {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let copy: Json[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item = value[i] as Json;
      const sorted = sortJson(item);
      if (sorted !== item && copy === undefined) copy = value.slice(0, i);
      if (copy !== undefined) copy.push(sorted);
    }
    return copy ?? value;
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
  return out;
}

function defineKey(target: { [key: string]: Json }, key: string, value: Json): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

/**
 * Compact JSON text of a payload as `serde_json::to_string` writes a
 * `serde_json::Value`: keys sorted, Rust number formatting.
 */
export function canonicalJson(value: Json | undefined): string {
  const out: string[] = [];
  writeCanonical(value === undefined ? null : value, out);
  return out.join('');
}

function writeCanonical(value: Json, out: string[]): void {
  switch (typeof value) {
    case 'string':
      out.push(JSON.stringify(value));
      return;
    case 'number':
      out.push(formatJsonNumber(value));
      return;
    case 'boolean':
      out.push(value ? 'true' : 'false');
      return;
  }
  if (value === null) {
    out.push('null');
    return;
  }
  if (Array.isArray(value)) {
    out.push('[');
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out.push(',');
      writeCanonical(value[i] as Json, out);
    }
    out.push(']');
    return;
  }
  out.push('{');
  let first = true;
  for (const key of sortedKeys(value)) {
    const item = value[key];
    if (item === undefined) continue;
    if (!first) out.push(',');
    first = false;
    out.push(JSON.stringify(key), ':');
    writeCanonical(item, out);
  }
  out.push('}');
}

/**
 * Says which numbers are typed `f64` in native, by path from the document
 * root (`path` holds the keys and indexes above the number).
 */
export type FloatFieldTest = (path: readonly (string | number)[]) => boolean;

export interface RustJsonOptions {
  /** `serde_json::to_string_pretty` layout (two-space indent). Default compact. */
  pretty?: boolean;
  /** Numbers written as `f64` even when integral (`1.0`). */
  isFloatField?: FloatFieldTest;
}

/**
 * Serializes a document in its own key order (build it in native's struct
 * order) with Rust number formatting.
 */
export function toRustJson(value: unknown, options: RustJsonOptions = {}): string {
  const out: string[] = [];
  const path: (string | number)[] = [];
  write(value as Json, out, path, options.pretty === true ? '\n' : '', options.isFloatField);
  return out.join('');
}

function write(
  value: Json,
  out: string[],
  path: (string | number)[],
  newline: string,
  isFloatField: FloatFieldTest | undefined,
): void {
  switch (typeof value) {
    case 'string':
      out.push(JSON.stringify(value));
      return;
    case 'number':
      out.push(isFloatField !== undefined && isFloatField(path) ? formatRustFloat(value) : formatJsonNumber(value));
      return;
    case 'boolean':
      out.push(value ? 'true' : 'false');
      return;
  }
  if (value === null || value === undefined) {
    out.push('null');
    return;
  }
  const pretty = newline !== '';
  const inner = pretty ? `${newline}  ` : '';
  if (Array.isArray(value)) {
    if (value.length === 0) {
      out.push('[]');
      return;
    }
    out.push('[');
    for (let i = 0; i < value.length; i++) {
      out.push(i > 0 ? `,${inner}` : inner);
      path.push(i);
      write(value[i] as Json, out, path, inner, isFloatField);
      path.pop();
    }
    out.push(`${newline}]`);
    return;
  }
  let first = true;
  out.push('{');
  for (const key of Object.keys(value)) {
    const item = value[key];
    if (item === undefined) continue;
    out.push(first ? inner : `,${inner}`);
    first = false;
    out.push(JSON.stringify(key), pretty ? ': ' : ':');
    path.push(key);
    write(item, out, path, inner, isFloatField);
    path.pop();
  }
  out.push(first ? '}' : `${newline}}`);
}
