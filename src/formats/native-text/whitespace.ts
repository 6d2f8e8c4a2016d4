/**
 * Whitespace as native reads it: Rust's `str::trim` strips the characters
 * with the Unicode White_Space property. JavaScript's `trim` strips a
 * different set: it keeps U+0085 (NEXT LINE), which Rust strips, and strips
 * U+FEFF (the byte-order mark), which Rust keeps.
 *
 * @module
 */

const WHITE_SPACE = '\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const NATIVE_BLANK = new RegExp(`^[${WHITE_SPACE}]*$`);
const NATIVE_EDGES = new RegExp(`^[${WHITE_SPACE}]+|[${WHITE_SPACE}]+$`, 'g');

/** True when native's `text.trim().is_empty()` is: only White_Space characters, or none. */
export function isNativeBlank(text: string): boolean {
  return NATIVE_BLANK.test(text);
}

/** `text.trim()` as native's Rust `str::trim` gives it. */
export function nativeTrim(text: string): string {
  return text.replace(NATIVE_EDGES, '');
}
