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
 * | typed array, `DataView`, `ArrayBuffer` | array of byte/element numbers              |
 * | `Error`                            | `{name, message}` plus `code`, `cause` and own enumerable fields |
 * | other objects and class instances  | own enumerable string-keyed properties         |
 * | a reference back to an ancestor    | `"[Circular]"`                                 |
 * | nesting deeper than `maxDepth`     | `"[MaxDepth]"`                                 |
 * | a getter or `toJSON` that throws   | `"[Unserializable: <message>]"`                |
 *
 * A key named `__proto__` is kept as an ordinary own property. Lone
 * surrogates (text cut in the middle of an emoji) are replaced with U+FFFD
 * in values and keys, as the native relay does: `JSON.stringify` would
 * write them as `\ud83d` escapes, which strict UTF-8 JSON readers reject.
 *
 * @module
 */

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
}

const DEFAULT_MAX_DEPTH = 64;
const CIRCULAR = '[Circular]';
const MAX_DEPTH = '[MaxDepth]';

/** Converts any value to plain JSON. Never throws. */
export function toJson(value: unknown, options?: ToJsonOptions): Json {
  // Primitives dominate hot-path payload fields; answer them without a walker.
  if (typeof value !== 'object' || value === null) return primitive(value) ?? null;
  const converted = convert(
    value,
    0,
    options?.maxDepth ?? DEFAULT_MAX_DEPTH,
    options?.sortKeys === true,
    [],
  );
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

// `undefined` means "omit": the caller drops the key or writes null in an array.
function convert(
  value: unknown,
  depth: number,
  maxDepth: number,
  sortKeys: boolean,
  ancestors: object[],
): Json | undefined {
  if (typeof value !== 'object' || value === null) return primitive(value);
  const object = value as object;
  // The open path is at most maxDepth long and usually a handful of objects:
  // a linear scan of an array beats Set hashing (toJson ~25% faster on V8).
  if (ancestors.includes(object)) return CIRCULAR;
  if (depth >= maxDepth) return MAX_DEPTH;
  ancestors.push(object);
  try {
    return convertObject(object, depth + 1, maxDepth, sortKeys, ancestors);
  } catch (error) {
    return unserializable(error);
  } finally {
    ancestors.pop();
  }
}

function convertObject(
  object: object,
  depth: number,
  maxDepth: number,
  sortKeys: boolean,
  ancestors: object[],
): Json | undefined {
  if (Array.isArray(object)) {
    const length = object.length;
    const out: Json[] = new Array(length);
    for (let i = 0; i < length; i++) {
      let item: unknown;
      try {
        item = object[i];
      } catch (error) {
        out[i] = unserializable(error);
        continue;
      }
      const converted = convert(item, depth, maxDepth, sortKeys, ancestors);
      out[i] = converted === undefined ? null : converted;
    }
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
    if (replaced === object) return convertPlain(object, depth, maxDepth, sortKeys, ancestors);
    return convert(replaced, depth - 1, maxDepth, sortKeys, ancestors);
  }
  if (object instanceof Map) {
    const out: { [key: string]: Json } = {};
    const entries: [string, unknown][] = [];
    for (const [key, item] of object) entries.push([String(key), item]);
    if (sortKeys) entries.sort(compareEntryKeys);
    for (const [key, item] of entries) {
      const converted = convert(item, depth, maxDepth, sortKeys, ancestors);
      if (converted !== undefined) defineKey(out, key, converted);
    }
    return out;
  }
  if (object instanceof Set) {
    const out: Json[] = [];
    for (const item of object) {
      const converted = convert(item, depth, maxDepth, sortKeys, ancestors);
      out.push(converted === undefined ? null : converted);
    }
    return out;
  }
  if (ArrayBuffer.isView(object)) {
    if (object instanceof DataView) return Array.from(new Uint8Array(object.buffer, object.byteOffset, object.byteLength));
    return Array.from(object as unknown as ArrayLike<number | bigint>, (n) =>
      typeof n === 'bigint' ? n.toString() : Number.isFinite(n) ? n : null,
    );
  }
  if (object instanceof ArrayBuffer) return Array.from(new Uint8Array(object));
  if (object instanceof Error) return convertError(object, depth, maxDepth, sortKeys, ancestors);
  return convertPlain(object, depth, maxDepth, sortKeys, ancestors);
}

function convertPlain(
  object: object,
  depth: number,
  maxDepth: number,
  sortKeys: boolean,
  ancestors: object[],
): Json {
  const out: { [key: string]: Json } = {};
  const keys = Object.keys(object);
  if (sortKeys) keys.sort();
  for (const key of keys) {
    let item: unknown;
    try {
      item = (object as Record<string, unknown>)[key];
    } catch (error) {
      defineKey(out, key, unserializable(error));
      continue;
    }
    const converted = convert(item, depth, maxDepth, sortKeys, ancestors);
    if (converted !== undefined) defineKey(out, key, converted);
  }
  return out;
}

function convertError(
  error: Error,
  depth: number,
  maxDepth: number,
  sortKeys: boolean,
  ancestors: object[],
): Json {
  const fields: Record<string, unknown> = { name: error.name, message: error.message };
  const code = (error as { code?: unknown }).code;
  if (code !== undefined) fields.code = code;
  if (error.cause !== undefined) fields.cause = error.cause;
  for (const key of Object.keys(error)) {
    if (!(key in fields)) fields[key] = (error as unknown as Record<string, unknown>)[key];
  }
  return convertPlain(fields, depth, maxDepth, sortKeys, ancestors);
}

function defineKey(target: { [key: string]: Json }, rawKey: string, value: Json): void {
  const key = wellFormed(rawKey);
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

function compareEntryKeys(a: [string, unknown], b: [string, unknown]): number {
  return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0;
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
