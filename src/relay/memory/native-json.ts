/**
 * ATOF line text exactly as native writes it, for the events where
 * `JSON.stringify` would not.
 *
 * Native's line writer differs from `JSON.stringify` in two ways, both
 * measured against `nemo-relay-node@0.9.2`:
 * - Numbers. The binding keeps a JS number as an integer only when it is
 *   an integer in the i32/u32 range (-2^31 .. 2^32-1); every other number
 *   becomes an f64 and is written with at least one fraction digit
 *   (`4294967296.0`, `1000000000000000.0`), in exponent notation from 1e16
 *   up (`1e+16`, `1.23e+20`) and below 1e-5 (`1e-6`, `1.5e-6`).
 * - Key order. Keys are sorted by code point everywhere, while a JS object
 *   always lists integer-like keys (`"2"`, `"10"`) first, in numeric order.
 *
 * Both are rare in real payloads, so the relay serializes with
 * `JSON.stringify` and falls back to this writer only when a walk of the
 * event's payloads finds a value that could differ (`needsNativeJson`).
 *
 * @module
 */

import type { Json } from '../contract.ts';

const I32_MIN = -2147483648;
const U32_MAX = 4294967295;

/**
 * True when `JSON.stringify` of this event may differ from native's text:
 * a payload (`data`, `metadata`, `category_profile`) holds a number that
 * the two write differently, or an object with an integer-like key. The
 * envelope itself is always safe (strings, nulls and flag arrays). The
 * walk visits payload values only and stops at the first hit; an event
 * without payloads costs nothing.
 */
export function needsNativeJson(event: { data: Json; metadata: Json; category_profile: Json }): boolean {
  return differs(event.data) || differs(event.metadata) || differs(event.category_profile);
}

function differs(value: Json): boolean {
  if (typeof value === 'number') {
    // Same text: integers in the i32/u32 range, and other numbers except [1e-6, 1e-5) (JS decimal, native exponent).
    if (Number.isInteger(value)) return value < I32_MIN || value > U32_MAX;
    const magnitude = Math.abs(value);
    return magnitude >= 1e-6 && magnitude < 1e-5;
  }
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (differs(value[i] as Json)) return true;
    return false;
  }
  for (const key in value) {
    // A JS object lists integer-like keys first; native sorts them as text.
    const first = key.charCodeAt(0);
    if (first >= 48 && first <= 57) return true;
    if (differs(value[key] as Json)) return true;
  }
  return false;
}

/** Formats a number as native's ATOF writer does. */
export function formatNativeNumber(value: number): string {
  if (!Number.isFinite(value)) return 'null';
  if (Number.isInteger(value) && value >= I32_MIN && value <= U32_MAX) return value === 0 ? '0' : String(value);
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

/** Serializes a JSON value (an ATOF event) as native writes it on one line. */
export function nativeJson(value: unknown): string {
  const out: string[] = [];
  write(value as Json, out);
  return out.join('');
}

function write(value: Json, out: string[]): void {
  switch (typeof value) {
    case 'string':
      out.push(JSON.stringify(value));
      return;
    case 'number':
      out.push(formatNativeNumber(value));
      return;
    case 'boolean':
      out.push(value ? 'true' : 'false');
      return;
  }
  if (value === null || value === undefined) {
    out.push('null');
    return;
  }
  if (Array.isArray(value)) {
    out.push('[');
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out.push(',');
      write(value[i] === undefined ? null : (value[i] as Json), out);
    }
    out.push(']');
    return;
  }
  const keys = Object.keys(value).sort(compareCodePoints);
  out.push('{');
  let first = true;
  for (const key of keys) {
    const item = value[key];
    if (item === undefined) continue;
    if (!first) out.push(',');
    first = false;
    out.push(JSON.stringify(key), ':');
    write(item, out);
  }
  out.push('}');
}

/** Orders strings by code point (UTF-8 byte order), as a Rust `BTreeMap<String, _>` does. */
function compareCodePoints(a: string, b: string): number {
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
 * The ATOF line of an event built by `events.ts`, without its newline.
 *
 * Equal to `JSON.stringify(event)` (whose key order the builders fix),
 * except that payloads needing it go through the exact writer. The envelope
 * is assembled from its known-safe parts (uuids, RFC 3339 stamps and fixed
 * words need no escaping), so only the name and the payloads are
 * serialized: for a mark without data that is most of the cost saved.
 */
export function serializeEvent(event: AtofEventLike): string {
  const head = `{"atof_version":"0.1",`;
  const tail =
    `"data":${part(event.data)},"data_schema":null,"kind":"${event.kind}","metadata":${part(event.metadata)},` +
    `"name":${JSON.stringify(event.name)},"parent_uuid":"${event.parent_uuid}","propagation_root_uuid":"${event.propagation_root_uuid}",`;
  const end = `"timestamp":"${event.timestamp}","uuid":"${event.uuid}"}`;
  if (event.kind === 'mark') return `${head}"category":null,"category_profile":null,${tail}${end}`;
  const attributes = event.attributes!.length === 0 ? '[]' : JSON.stringify(event.attributes);
  const profile = event.category_profile === null ? 'null' : part(event.category_profile);
  return `${head}"attributes":${attributes},"category":"${event.category}","category_profile":${profile},${tail}"scope_category":"${event.scope_category}",${end}`;
}

/** The fields `serializeEvent` reads (an `AtofEvent` as the memory relay builds it). */
export interface AtofEventLike {
  kind: 'scope' | 'mark';
  attributes?: string[];
  category: string | null;
  category_profile: { [key: string]: Json } | null;
  data: Json;
  metadata: Json;
  name: string;
  parent_uuid: string | null;
  propagation_root_uuid?: string;
  scope_category?: 'start' | 'end';
  timestamp: string | number;
  uuid: string;
}

function part(value: Json): string {
  if (value === null) return 'null';
  if (typeof value !== 'object') return typeof value === 'number' ? formatNativeNumber(value) : JSON.stringify(value);
  return differs(value) ? nativeJson(value) : JSON.stringify(value);
}

