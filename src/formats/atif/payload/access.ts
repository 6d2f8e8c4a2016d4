/**
 * Typed reads of JSON payload values, with native's notion of "absent"
 * (a missing key and `null` read the same).
 *
 * @module
 */

import type { Json, JsonObject } from '../../../shared/json.ts';
import { asObject } from '../../../shared/json.ts';
import { asString } from '../../../shared/text.ts';
import { isNativeInteger } from '../../native-text.ts';

export type JsonMap = JsonObject;

/** The one JSON-object reader (src/shared/json.ts), here beside the other typed reads. */
export { asObject, asString };

export function asArray(value: Json | undefined): Json[] | undefined {
  return Array.isArray(value) ? value : undefined;
}

/** serde's `Value::as_u64()` of a payload number: only numbers the binding kept as integers qualify (`2**32` is an f64). */
export function asU64(value: Json | undefined): number | undefined {
  return typeof value === 'number' && isNativeInteger(value) && value >= 0 ? value : undefined;
}

export function asF64(value: Json | undefined): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

export function has(object: JsonMap, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(object, key);
}

/** `object.get(key)` in Rust: absent keys are `undefined`, `null` stays `null`. */
export function get(object: JsonMap | undefined, key: string): Json | undefined {
  if (object === undefined || !has(object, key)) return undefined;
  return object[key];
}

/** Rust's `a.get(k1).or_else(|| a.get(k2))...`: the first key that is present, whatever its value. */
export function firstPresent(object: JsonMap | undefined, keys: readonly string[]): Json | undefined {
  if (object === undefined) return undefined;
  for (const key of keys) if (has(object, key)) return object[key];
  return undefined;
}

export function nonNull(object: JsonMap, key: string): Json | undefined {
  const value = get(object, key);
  return value === null ? undefined : value;
}

/** `raw_response.choices[0].message[field]`, or `choices[0].message[field]` when there is no `raw_response`. */
export function rawResponseMessageField(object: JsonMap, field: string): Json | undefined {
  const source = has(object, 'raw_response') ? asObject(object.raw_response as Json) : object;
  const choice = asObject(asArray(get(source, 'choices'))?.[0]);
  return get(asObject(get(choice, 'message')), field);
}
