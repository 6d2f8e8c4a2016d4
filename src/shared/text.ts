/**
 * Reading a value as text, the same way in every layer: payload fields the
 * host or a framework hands over may be anything (a number, a symbol, an
 * object whose `toString` throws), and none of them may throw at the host.
 *
 * @module
 */

import { isNativeBlank } from './whitespace.ts';

/** The value when it is a string (empty included), else `undefined`. */
export function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** The value when it is a non-empty string, else `undefined`: "is this field set to some text?". */
export function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** True for a string with something besides white space in it (native's `trim().is_empty()` is false). */
export function isNonBlank(value: unknown): boolean {
  return typeof value === 'string' && !isNativeBlank(value);
}

/**
 * `String(value)` that never throws: a string as it is, `''` for `null` and
 * `undefined`, and `'[unprintable]'` for a value whose conversion throws (a
 * hostile `toString`, a revoked proxy), so logs and names still say something.
 */
export function stringOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  try {
    return String(value);
  } catch {
    return '[unprintable]';
  }
}

/**
 * The first `shown` items joined with `, `, then `, and N more` for the
 * rest: a message that names a few of a long list stays one readable line.
 */
export function listSome(items: readonly string[], shown: number): string {
  const head = items.slice(0, shown).join(', ');
  return items.length > shown ? `${head}, and ${items.length - shown} more` : head;
}

/**
 * A value from a file as a message quotes it: its JSON text, cut to `max`
 * characters with the length of the whole: a message about a bad field
 * stays one line when the field holds a megabyte.
 */
export function quotedValue(value: unknown, max = 120): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    text = undefined;
  }
  if (text === undefined) return stringOf(value) || typeof value;
  return text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text;
}
