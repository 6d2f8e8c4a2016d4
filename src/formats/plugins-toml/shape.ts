/**
 * A serde-style shape check: the first type error of a value against a
 * schema, worded as native's deserializer words it. Keys are visited in
 * sorted order, as serde sees them.
 *
 * @module
 */

import { isJsonObject } from '../../shared/json.ts';

export type Schema =
  | { t: 'string' | 'bool' | 'u32' | 'u64' | 'i32' | 'usize' | 'f64' | 'any' | 'map' }
  | { t: 'mapOf'; of: Schema }
  | { t: 'option'; of: Schema }
  | { t: 'seq'; of: Schema }
  /** `secret`: the values are credentials (headers), never quoted in an error. */
  | { t: 'stringMap'; secret?: boolean }
  | {
      t: 'struct';
      name: string;
      fields: Record<string, Schema>;
      required?: readonly string[];
      /** serde's `deny_unknown_fields`: an unknown key is an error naming the expected ones. */
      deny?: boolean;
    }
  | { t: 'tagged'; name: string; variants: Record<string, Schema & { t: 'struct' }> }
  | { t: 'enum'; variants: readonly string[] };

export const STRING: Schema = { t: 'string' };
export const BOOL: Schema = { t: 'bool' };
export const U32: Schema = { t: 'u32' };
export const U64: Schema = { t: 'u64' };
export const I32: Schema = { t: 'i32' };
export const USIZE: Schema = { t: 'usize' };
export const F64: Schema = { t: 'f64' };
export const ANY: Schema = { t: 'any' };
export const optional = (of: Schema): Schema => ({ t: 'option', of });
export const BEHAVIOR: Schema = { t: 'enum', variants: ['ignore', 'warn', 'error'] };

export function checkShape(value: unknown, schema: Schema): string | null {
  switch (schema.t) {
    case 'any':
      return null;
    case 'option':
      return value === null ? null : checkShape(value, schema.of);
    case 'string':
      return typeof value === 'string' ? null : invalidType(value, 'a string');
    case 'bool':
      return typeof value === 'boolean' ? null : invalidType(value, 'a boolean');
    case 'u32':
    case 'u64':
    case 'usize':
    case 'i32': {
      const expected = schema.t;
      if (typeof value !== 'number') return invalidType(value, expected);
      if (!Number.isInteger(value)) return invalidType(value, expected);
      const [min, max] = INTEGER_RANGES[expected];
      if (value < min || value > max) return `invalid value: integer \`${value}\`, expected ${expected}`;
      return null;
    }
    case 'f64':
      return typeof value === 'number' ? null : invalidType(value, 'f64');
    case 'mapOf': {
      if (!isJsonObject(value)) return invalidType(value, 'a map');
      for (const key of Object.keys(value).sort()) {
        const error = checkShape(value[key], schema.of);
        if (error !== null) return error;
      }
      return null;
    }
    case 'map':
      return isJsonObject(value) ? null : invalidType(value, 'a map');
    case 'stringMap': {
      // Worded as serde words it, with a credential's value left out of the text: the error is printed on stderr,
      // in status() and by doctor.
      const hidden = schema.secret === true;
      if (!isJsonObject(value)) return invalidType(value, 'a map', hidden);
      for (const key of Object.keys(value).sort()) {
        if (typeof value[key] !== 'string') return invalidType(value[key], 'a string', hidden);
      }
      return null;
    }
    case 'seq': {
      if (!Array.isArray(value)) return invalidType(value, 'a sequence');
      for (const item of value) {
        const error = checkShape(item, schema.of);
        if (error !== null) return error;
      }
      return null;
    }
    case 'enum': {
      if (typeof value !== 'string') return invalidType(value, 'variant identifier');
      return schema.variants.includes(value) ? null : `unknown variant \`${value}\`, expected ${expectedVariants(schema.variants)}`;
    }
    case 'struct':
      return checkStruct(value, schema, undefined);
    case 'tagged': {
      if (!isJsonObject(value)) return invalidType(value, `internally tagged enum ${schema.name}`);
      if (!('type' in value)) return 'missing field `type`';
      const tag = value.type;
      if (typeof tag !== 'string') return invalidType(tag, 'variant identifier');
      const variant = schema.variants[tag];
      if (variant === undefined) return `unknown variant \`${tag}\`, expected ${expectedVariants(Object.keys(schema.variants))}`;
      return checkStruct(value, variant, 'type');
    }
  }
}

function checkStruct(value: unknown, schema: Schema & { t: 'struct' }, skip: string | undefined): string | null {
  if (!isJsonObject(value)) return invalidType(value, `struct ${schema.name}`);
  for (const key of Object.keys(value).sort()) {
    if (key === skip) continue;
    const field = schema.fields[key];
    if (field === undefined) {
      if (schema.deny === true) return `unknown field \`${key}\`, expected ${expectedFields(Object.keys(schema.fields))}`;
      continue;
    }
    const error = checkShape(value[key], field);
    if (error !== null) return error;
  }
  for (const key of schema.required ?? []) {
    if (!(key in value)) return `missing field \`${key}\``;
  }
  return null;
}

const INTEGER_RANGES = {
  u32: [0, 0xffff_ffff],
  u64: [0, Number.MAX_SAFE_INTEGER],
  usize: [0, Number.MAX_SAFE_INTEGER],
  i32: [-0x8000_0000, 0x7fff_ffff],
} as const;

/** serde's list of the fields a `deny_unknown_fields` struct has. */
function expectedFields(fields: readonly string[]): string {
  if (fields.length === 1) return `\`${fields[0]}\``;
  return expectedVariants(fields);
}

function expectedVariants(variants: readonly string[]): string {
  const quoted = variants.map((v) => `\`${v}\``);
  if (quoted.length === 1) return quoted[0]!;
  return quoted.length === 2 ? `${quoted[0]} or ${quoted[1]}` : `one of ${quoted.join(', ')}`;
}

/** serde's `invalid type: <unexpected>, expected <what>`. */
function invalidType(value: unknown, expected: string, hidden = false): string {
  return `invalid type: ${unexpected(value, hidden)}, expected ${expected}`;
}

/** serde's description of `value`; `hidden` puts `***` where it quotes the value. */
function unexpected(value: unknown, hidden = false): string {
  if (value === null || value === undefined) return 'null';
  const shown = (text: string) => (hidden ? '***' : text);
  switch (typeof value) {
    case 'boolean':
      return `boolean \`${shown(String(value))}\``;
    case 'number':
      return Number.isInteger(value) ? `integer \`${shown(String(value))}\`` : `floating point \`${shown(String(value))}\``;
    case 'string':
      return `string ${hidden ? '"***"' : JSON.stringify(value)}`;
  }
  return Array.isArray(value) ? 'sequence' : 'map';
}
