/**
 * How relay payloads become OTLP attributes, as native writes them: an
 * object payload is spread one level deep under a prefix; nested objects
 * and arrays become compact JSON text; strings, numbers and booleans keep
 * their type; nulls are left out.
 *
 * @module
 */

import type { Json } from '../../shared/json.ts';
import { canonicalJson } from '../../formats/native-text.ts';
import type { AttributeValue, Attributes } from './model.ts';

/** One attribute value, or undefined for nothing to send. */
function scalarOrJson(value: Json | undefined): AttributeValue | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  // serde_json's text of the value, as native sends it: keys in code-point
  // order (JS lists integer-like keys first) and native's number forms.
  return canonicalJson(value);
}

/** Sets `target[key]` unless the value is empty. */
export function put(target: Attributes, key: string, value: Json | undefined): void {
  const converted = scalarOrJson(value);
  if (converted !== undefined) target[key] = converted;
}

/** `prefix.<key>` for each key of an object payload, or `prefix` itself for any other payload. */
export function spread(target: Attributes, prefix: string, value: Json | undefined): void {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const keys = prefixedKeys(prefix);
    for (const key of Object.keys(value)) put(target, keys === null ? `${prefix}.${key}` : keyOf(keys, prefix, key), value[key]);
    return;
  }
  put(target, prefix, value);
}

/**
 * `spread` under two prefixes (all of `first.*`, then all of `second.*`, as
 * two `spread` calls would set them), each value converted once: a nested
 * payload (an LLM request's messages) is stringified once, not twice.
 */
export function spreadTwice(target: Attributes, first: string, second: string, value: Json | undefined): void {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const keys = Object.keys(value);
    const converted: (AttributeValue | undefined)[] = new Array(keys.length);
    const firstKeys = prefixedKeys(first);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      const attribute = (converted[i] = scalarOrJson(value[key]));
      if (attribute !== undefined) target[firstKeys === null ? `${first}.${key}` : keyOf(firstKeys, first, key)] = attribute;
    }
    const secondKeys = prefixedKeys(second);
    for (let i = 0; i < keys.length; i++) {
      const attribute = converted[i];
      if (attribute !== undefined) target[secondKeys === null ? `${second}.${keys[i]!}` : keyOf(secondKeys, second, keys[i]!)] = attribute;
    }
    return;
  }
  const attribute = scalarOrJson(value);
  if (attribute !== undefined) {
    target[first] = attribute;
    target[second] = attribute;
  }
}

/**
 * `prefix.key` strings already built, per prefix. Payload keys repeat from
 * span to span; a fresh concatenation per attribute costs its allocation,
 * then its flattening and hashing when it becomes a property key and again
 * when the exporter reads it. Bounded: past the limits keys are built each time.
 */
const PREFIXED_KEYS = new Map<string, Map<string, string>>();
const MAX_PREFIXES = 64;
const MAX_KEYS_PER_PREFIX = 512;

function prefixedKeys(prefix: string): Map<string, string> | null {
  let keys = PREFIXED_KEYS.get(prefix);
  if (keys === undefined) {
    if (PREFIXED_KEYS.size >= MAX_PREFIXES) return null;
    keys = new Map();
    PREFIXED_KEYS.set(prefix, keys);
  }
  return keys;
}

function keyOf(keys: Map<string, string>, prefix: string, key: string): string {
  let full = keys.get(key);
  if (full === undefined) {
    full = `${prefix}.${key}`;
    if (keys.size < MAX_KEYS_PER_PREFIX) keys.set(key, full);
  }
  return full;
}

export function objectOf(value: Json | undefined): { [key: string]: Json } | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : null;
}

export function stringOf(value: Json | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
