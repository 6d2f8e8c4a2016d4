/**
 * Native's key order (code points, where JS lists integer-like keys first),
 * sorted copies of payloads, and whether plain `JSON.stringify` would
 * already give native's text.
 *
 * @module
 */

import { compareKeys, defineKey, type Json } from '../../shared/json.ts';
import { I32_MIN, U32_MAX } from './numbers.ts';

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
 * True for a key whose place in native's text may differ from its place in
 * a JS object's: one that starts with a digit (JS lists integer-like keys
 * first, native sorts them as text). Every walk that decides whether
 * `JSON.stringify` writes native's text asks this of each key.
 */
export function keyMayDiffer(key: string): boolean {
  const first = key.charCodeAt(0);
  return first >= 48 && first <= 57;
}

/**
 * The keys of `object` in code-point order. JS lists index keys first,
 * so only an object with one (it is then the first key) needs sorting.
 */
export function keysInOrder(object: object, sortAll: boolean): string[] {
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
export const exactTexts = new WeakMap<object, Map<string | number, string>>();

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
export function isSortedJson(value: Json): boolean {
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

/**
 * `sortJson` for a payload the trajectory's text holds: one walk both
 * checks the order and, for a sorted payload (the usual case), whether
 * `JSON.stringify` writes it exactly, and notes it in `plain`; the
 * writer's check (`RustJsonOptions.plain`) then skips it instead of walking
 * it a second time, and so does the next call with the same set. Payloads
 * are shared with recorded events, which are never mutated.
 *
 * `plain` is the caller's, kept as long as the payloads it notes (a
 * builder's, beside its events): a plain set rather than one module-wide
 * weak set, whose every entry the collector would have to revisit at each
 * collection while the payloads live.
 */
export function sortPayload(value: Json, plain: Set<object>): Json {
  if (value === null || typeof value !== 'object') return value;
  if (plain.has(value)) return value;
  if (isSortedPlain(value)) {
    plain.add(value);
    return value;
  }
  return sortJson(value);
}

/** `isSortedJson(value) && !mayDiffer(value, true)` in one walk. */
function isSortedPlain(value: Json): boolean {
  if (typeof value === 'number') return !payloadNumberMayDiffer(value);
  if (value === null || typeof value !== 'object') return true;
  if (exactTexts.has(value)) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!isSortedPlain(value[i] as Json)) return false;
    return true;
  }
  let previous: string | undefined;
  for (const key in value) {
    if (keyMayDiffer(key)) return false;
    if (previous !== undefined && compareKeys(previous, key) > 0) return false;
    previous = key;
    if (!isSortedPlain(value[key] as Json)) return false;
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

/** `container[key]` is written as `text`: a number parsed from text, placed in another container than its parse's. */
export function setExactText(container: object, key: string | number, text: string): void {
  let texts = exactTexts.get(container);
  if (texts === undefined) exactTexts.set(container, (texts = new Map()));
  texts.set(key, text);
}

export function keepExactTexts<T extends object>(from: object, to: T): T {
  const texts = exactTexts.get(from);
  if (texts !== undefined) exactTexts.set(to, texts);
  return to;
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
export function mayDiffer(value: Json, exact: boolean): boolean {
  if (typeof value === 'number') return payloadNumberMayDiffer(value);
  if (typeof value !== 'object' || value === null) return false;
  if (exact && exactTexts.has(value)) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (mayDiffer(value[i] as Json, exact)) return true;
    return false;
  }
  for (const key in value) {
    if (keyMayDiffer(key)) return true;
    if (mayDiffer(value[key] as Json, exact)) return true;
  }
  return false;
}

/** Same text from both: native integers, and other numbers except [1e-6, 1e-5) (JS decimal, native exponent). */
export function payloadNumberMayDiffer(value: number): boolean {
  if (Number.isInteger(value)) return value < I32_MIN || value > U32_MAX;
  const magnitude = Math.abs(value);
  return magnitude >= 1e-6 && magnitude < 1e-5;
}

/** How native types a number field: `f64` (always a fraction or an exponent) or an unsigned integer (plain at any size). */
