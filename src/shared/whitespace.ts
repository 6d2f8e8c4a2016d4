/**
 * Whitespace as native reads it: Rust's `char::is_whitespace`, `str::trim`
 * and regex-syntax's verbose mode all use the Unicode White_Space property.
 * JavaScript's `trim` and `\s` use a different set: they miss U+0085 (NEXT
 * LINE), which Rust counts, and count U+FEFF (the byte-order mark), which
 * Rust does not. Every place that decides or writes what native decides or
 * writes (trimming a name, calling a field blank, splitting at whitespace)
 * asks this module, never `String.prototype.trim` or `\s`.
 *
 * @module
 */

const WHITE_SPACE = '\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const NATIVE_BLANK = new RegExp(`^[${WHITE_SPACE}]*$`);
const NATIVE_START = new RegExp(`^[${WHITE_SPACE}]+`);
const NATIVE_ONE = new RegExp(`[${WHITE_SPACE}]`);

/** Rust's `char::is_whitespace` for a code point (every such character is in the BMP). */
export function isNativeWhitespace(codePoint: number): boolean {
  if (codePoint <= 0x20) return codePoint === 0x20 || (codePoint >= 0x09 && codePoint <= 0x0d);
  if (codePoint < 0x85) return false;
  return (
    codePoint === 0x85 ||
    codePoint === 0xa0 ||
    codePoint === 0x1680 ||
    (codePoint >= 0x2000 && codePoint <= 0x200a) ||
    codePoint === 0x2028 ||
    codePoint === 0x2029 ||
    codePoint === 0x202f ||
    codePoint === 0x205f ||
    codePoint === 0x3000
  );
}

/** True when native's `text.trim().is_empty()` is: only White_Space characters, or none. */
export function isNativeBlank(text: string): boolean {
  return NATIVE_BLANK.test(text);
}

/** `text.trim()` as native's Rust `str::trim` gives it. */
export function nativeTrim(text: string): string {
  return trimWhere(text, isNativeWhitespace);
}

/**
 * `text` without the leading and trailing UTF-16 units `strip` accepts, in one pass from each end. Not a regular
 * expression: `[…]+$` retries from every position of an inner run, quadratic in its length (a payload of a few tens
 * of thousands of spaces then a letter held the host thread for seconds).
 */
export function trimWhere(text: string, strip: (unit: number) => boolean): string {
  let start = 0;
  let end = text.length;
  while (start < end && strip(text.charCodeAt(start))) start++;
  while (end > start && strip(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

/** `text.trim_start()` as native's Rust `str::trim_start` gives it. */
export function nativeTrimStart(text: string): string {
  return text.replace(NATIVE_START, '');
}

/** Where the first White_Space character is, or -1: Rust's `text.find(char::is_whitespace)` in UTF-16 units. */
export function nativeWhitespaceIndex(text: string): number {
  const match = NATIVE_ONE.exec(text);
  return match === null ? -1 : match.index;
}

const BLANK_NAME = /^[\p{White_Space}\p{Cc}\p{Cf}]*$/u;

/**
 * Native's blank for the names an OTLP endpoint promotes or maps
 * (`promote_metadata_prefixes`, `attribute_mappings`): nothing but
 * White_Space, control and format characters (U+FEFF and U+200B count
 * here, though `trim` keeps them).
 */
export function isNativeBlankName(text: string): boolean {
  return BLANK_NAME.test(text);
}
