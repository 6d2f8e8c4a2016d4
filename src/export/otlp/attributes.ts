/**
 * How relay payloads become OTLP attributes, as native writes them: an
 * object payload is spread one level deep under a prefix; nested objects
 * and arrays become compact JSON text; strings, numbers and booleans keep
 * their type; nulls are left out.
 *
 * @module
 */

import type { Json } from '../../shared/json.ts';
import type { AttributeValue, Attributes } from './model.ts';

/** One attribute value, or undefined for nothing to send. */
function scalarOrJson(value: Json | undefined): AttributeValue | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  return JSON.stringify(value);
}

/** Sets `target[key]` unless the value is empty. */
export function put(target: Attributes, key: string, value: Json | undefined): void {
  const converted = scalarOrJson(value);
  if (converted !== undefined) target[key] = converted;
}

/** `prefix.<key>` for each key of an object payload, or `prefix` itself for any other payload. */
export function spread(target: Attributes, prefix: string, value: Json | undefined): void {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const key of Object.keys(value)) put(target, `${prefix}.${key}`, value[key]);
    return;
  }
  put(target, prefix, value);
}

/** JSON text of a payload (strings stay as they are), for `input.value`-style attributes. */
function textOf(value: Json | undefined): string | undefined {
  if (value === null || value === undefined) return undefined;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export function objectOf(value: Json | undefined): { [key: string]: Json } | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : null;
}

export function stringOf(value: Json | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
