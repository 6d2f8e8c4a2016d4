/**
 * Credential headers out of a payload: every value under a `headers` key (in
 * any case) loses its `authorization`, `proxy-authorization`, `x-api-key`,
 * `api-key`, `x-goog-api-key`, `anthropic-api-key`, `cookie` and `set-cookie`
 * entries (`secret-text.ts` names them), in every form a program holds
 * headers in: a plain object, a `Headers` (recorded as a plain object of its
 * entries, where JSON alone would record `{}`), a `Map`, `[name, value]`
 * pairs, a flat `[name, value, name, value]` list, HAR's `{name, value}`
 * entries, and raw `Name: value` header text.
 *
 * The plugin applies it to every payload it records (`plugin/egress.ts`);
 * `toJson`'s `withoutCredentialHeaders` option applies it inside the copy a
 * backend makes anyway (`shared/json.ts`; native's adapter, the memory
 * relay's object encoder), and the memory relay's byte encoder checks its
 * key lists for a `headers` key in the same way (`payload-bytes.ts`), so a
 * payload with no `headers` key is walked once, not twice.
 *
 * @module
 */

import { isCredentialHeader } from './secret-text.ts';

/**
 * `value` without credential headers: every value under a `headers` key
 * (any case) loses its sensitive entries. Copies only the objects on the
 * way to a change; returns `value` itself when there is none.
 */
export function withoutSensitiveHeaders<T>(value: T, depth = 0): T {
  if (typeof value !== 'object' || value === null || depth > 64) return value;
  let copy: Record<string, unknown> | unknown[] | null = null;
  try {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        // Most values are primitives: only an object can hold headers.
        if (typeof item !== 'object' || item === null) continue;
        const cleaned = withoutSensitiveHeaders(item, depth + 1);
        if (cleaned !== item) {
          copy ??= value.slice();
          (copy as unknown[])[i] = cleaned;
        }
      }
      return (copy ?? value) as T;
    }
    const source = value as Record<string, unknown>;
    const prototype: unknown = Object.getPrototypeOf(source);
    if (prototype === Object.prototype || prototype === null) {
      // A plain object: `for...in` reads V8's cached key list where `Object.keys` allocates a
      // new array per object, and this walk visits every object of every payload (bench/RESULTS.md,
      // "the object path before the converter").
      for (const key in source) copy = cleanedEntry(source, key, depth, copy as Record<string, unknown> | null);
    } else {
      for (const key of Object.keys(source)) copy = cleanedEntry(source, key, depth, copy as Record<string, unknown> | null);
    }
  } catch {
    // A getter or Proxy that throws: the backend's own conversion records it as unserializable.
    return value;
  }
  return (copy ?? value) as T;
}

/**
 * One entry of `withoutSensitiveHeaders`' walk: `copy` (made at the first
 * change) with `key` cleaned. An inherited key (a `for...in` over an object
 * whose `Object.prototype` was given enumerable keys) is left alone: it is
 * not part of what the backend records.
 */
function cleanedEntry(source: Record<string, unknown>, key: string, depth: number, copy: Record<string, unknown> | null): Record<string, unknown> | null {
  const item = source[key];
  // Most values are primitives: only an object, or header text under a `headers` key, can hold headers.
  if ((typeof item !== 'object' || item === null) && (typeof item !== 'string' || !isHeadersKey(key))) return copy;
  const cleaned = isHeadersKey(key) ? cleanHeaders(item) : withoutSensitiveHeaders(item, depth + 1);
  if (cleaned === item || !Object.hasOwn(source, key)) return copy;
  copy ??= { ...source };
  copy[key] = cleaned;
  return copy;
}

/**
 * `headers` in any case. The first letter is checked before lower-casing:
 * ids such as `task_id` and `turn_id` have the same length, and no other
 * character lower-cases to an `h`.
 */
export function isHeadersKey(key: string): boolean {
  return key.length === 7 && (key.charCodeAt(0) | 0x20) === 0x68 && key.toLowerCase() === 'headers';
}

/** One `headers` value without its credential entries, in the form the program holds it (copied only when one is dropped). */
function cleanHeaders(headers: unknown, fromToJson = false): unknown {
  if (typeof headers === 'string') return cleanHeaderText(headers);
  if (typeof headers !== 'object' || headers === null) return headers;
  if (Array.isArray(headers)) return cleanHeaderList(headers);
  if (headers instanceof Map) return cleanHeaderMap(headers);
  if (isHeadersClass(headers)) return headerEntries(headers);
  // A headers class of a library's own that keeps its entries in private fields is recorded as its `toJSON` says:
  // cleaned here, where the key says what it is, as the plain object the backend's copy would make of it.
  const toJSON = (headers as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function' && !fromToJson) {
    const replaced: unknown = toJSON.call(headers, 'headers');
    return replaced === headers ? cleanHeaderObject(headers) : cleanHeaders(replaced, true);
  }
  return cleanHeaderObject(headers);
}

function cleanHeaderObject(headers: object): unknown {
  let copy: Record<string, unknown> | null = null;
  for (const key of Object.keys(headers)) {
    if (!isCredentialHeader(key)) continue;
    copy ??= { ...(headers as Record<string, unknown>) };
    delete copy[key];
  }
  return copy ?? headers;
}

/** Raw header text (`Name: value` lines) without its credential lines. */
function cleanHeaderText(text: string): string {
  if (!text.includes(':')) return text;
  const lines = text.split(/(?<=\n)/);
  const kept = lines.filter((line) => {
    const colon = line.indexOf(':');
    return colon <= 0 || !isCredentialHeader(line.slice(0, colon).trim());
  });
  return kept.length === lines.length ? text : kept.join('');
}

/**
 * A list of headers without its credential entries: `[name, value]` pairs,
 * HAR's `{name, value}` objects, or, when every item is a string, a flat
 * `[name, value, ...]` list.
 */
function cleanHeaderList(list: unknown[]): unknown[] {
  const flat = list.length % 2 === 0 && list.every((item) => typeof item === 'string');
  const step = flat ? 2 : 1;
  const kept: unknown[] = [];
  for (let i = 0; i < list.length; i += step) {
    const item = list[i];
    const name = flat ? item : Array.isArray(item) ? item[0] : typeof item === 'object' && item !== null ? (item as { name?: unknown }).name : undefined;
    if (typeof name === 'string' && isCredentialHeader(name)) continue;
    kept.push(item);
    if (flat) kept.push(list[i + 1]);
  }
  return kept.length === list.length ? list : kept;
}

function cleanHeaderMap(map: Map<unknown, unknown>): Map<unknown, unknown> {
  let copy: Map<unknown, unknown> | null = null;
  for (const key of map.keys()) {
    if (!isCredentialHeader(String(key))) continue;
    copy ??= new Map(map);
    copy.delete(key);
  }
  return copy ?? map;
}

/** A fetch `Headers` (any runtime's or library's): its entries live behind methods, not in own properties. */
function isHeadersClass(value: object): value is { forEach(callback: (value: unknown, name: string) => void): void } {
  const candidate = value as { forEach?: unknown; get?: unknown; has?: unknown; append?: unknown };
  return typeof candidate.forEach === 'function' && typeof candidate.get === 'function' && typeof candidate.has === 'function' && typeof candidate.append === 'function';
}

/** A `Headers`' entries as a plain object, without the credential ones. */
function headerEntries(headers: { forEach(callback: (value: unknown, name: string) => void): void }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  headers.forEach((value, name) => {
    // defineProperty: a header may be called `__proto__`.
    if (typeof name === 'string' && !isCredentialHeader(name)) Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
  });
  return out;
}

