/**
 * Parsing JSON text as native (serde_json) does, remembering the number
 * texts the value alone does not give.
 *
 * @module
 */

import { compareKeys, defineKey, type Json } from '../../shared/json.ts';
import { exactTexts, keepExactTexts, sortJson } from './keys.ts';
import { formatF64, formatPayloadNumber } from './numbers.ts';

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
  return parseWithoutNumbers(text) ?? parseFully(text);
}

/**
 * The native text of a parse that is a number alone (`"-0"` is `-0.0`, `"1.0"` stays `1.0`), when its value alone
 * would be written otherwise: the number's text is kept by its container, here the parse's holder, which the value
 * leaves when the caller takes it out.
 */
export function parsedNumberText(parsed: { value: Json }): string | undefined {
  return typeof parsed.value === 'number' ? exactTexts.get(parsed)?.get('value') : undefined;
}

/**
 * The common case (tool-call arguments of strings, booleans and nested
 * maps): text without numbers or `\u` escapes, which `JSON.parse` reads
 * exactly as serde does once its maps are sorted (a later duplicate key
 * wins in both). Numbers need their literal text kept and escapes the
 * surrogate check, so text with either goes to the full parser, as does
 * anything `JSON.parse` rejects or that nests deeper than serde allows.
 */
function parseWithoutNumbers(text: string): { value: Json } | undefined {
  if (text.includes('\\u')) return undefined;
  let value: Json;
  try {
    value = JSON.parse(text) as Json;
  } catch {
    return undefined;
  }
  return isPlain(value, 0) ? { value: sortJson(value) } : undefined;
}

/** True when `value` holds no number and nests no deeper than serde's limit. */
function isPlain(value: Json, depth: number): boolean {
  if (typeof value === 'number') return false;
  if (typeof value !== 'object' || value === null) return true;
  if (depth >= MAX_DEPTH) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!isPlain(value[i] as Json, depth + 1)) return false;
    return true;
  }
  for (const key in value) if (!isPlain(value[key] as Json, depth + 1)) return false;
  return true;
}

/** The parser proper: serde's grammar and limits, and the number texts kept. */
function parseFully(text: string): { value: Json } | undefined {
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
