/**
 * A string as Rust's `{:?}` writes it, for messages native formats that way
 * (`metadata promotion prefix "a\u{a0}" must not ...`): in double quotes,
 * `\0 \t \r \n \\ \"` escaped, and as `\u{hex}` every character Rust's
 * `char::escape_debug` does not print as itself: combining marks
 * (Grapheme_Extend) and the categories Rust's printable table leaves out
 * (Cc, Cf, Cs, Co, Cn, Zl, Zp, and Zs other than the space).
 *
 * @module
 */

const ESCAPED = /[\p{Grapheme_Extend}\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;
const SHORT: Record<string, string> = { '\0': '\\0', '\t': '\\t', '\r': '\\r', '\n': '\\n', '\\': '\\\\', '"': '\\"' };

/** `text` as Rust's `format!("{text:?}")` gives it. */
export function rustDebugString(text: string): string {
  let out = '"';
  for (const ch of text) {
    const short = SHORT[ch];
    if (short !== undefined) out += short;
    else if (ch !== ' ' && ESCAPED.test(ch)) out += `\\u{${ch.codePointAt(0)!.toString(16)}}`;
    else out += ch;
  }
  return `${out}"`;
}
