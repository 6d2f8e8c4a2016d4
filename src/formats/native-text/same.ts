/**
 * Whether two values are written the same: the test that lets a writer
 * reuse the text it wrote for an earlier, equal value.
 *
 * @module
 */

import type { Json } from '../../shared/json.ts';
import { exactTexts } from './keys.ts';

/**
 * True when every writer here writes `a` and `b` (in the same field)
 * identically: the same value with keys in the same order, numbers equal
 * as `Object.is` has them (`-0` is not `0`). The same object counts as the
 * same without a look inside: payloads are never mutated once recorded, so
 * a walk stops wherever both values share one (the payload objects an
 * event holds). Two different containers that hold kept number texts are
 * never the same (those texts are not compared).
 */
export function sameJson(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return typeof a !== 'number' || Object.is(a, b);
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    return typeof a === 'number' && typeof b === 'number' && Object.is(a, b);
  }
  if (exactTexts.has(a) || exactTexts.has(b)) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const otherKeys = Object.keys(b);
  let i = 0;
  for (const key in a) {
    if (key !== otherKeys[i++] || !sameJson(a[key], b[key])) return false;
  }
  return i === otherKeys.length;
}
