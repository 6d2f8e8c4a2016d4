/**
 * Untrusted text made safe for a terminal. Session content (a user message,
 * a tool result, a file name) may hold escape sequences: `ESC[2J` clears the
 * screen, OSC sequences set the window title or write hyperlinks and
 * clipboard contents, BEL rings, bidi overrides reorder what is shown. Each
 * such character is shown as a visible `\xNN` / `\uNNNN` escape instead, so
 * the reader sees that it was there and the terminal does nothing.
 *
 * @module
 */

// C0 controls except tab, DEL, C1 controls, the line and paragraph separators (U+2028, U+2029: a terminal may
// break the line there, so one value would read as two lines), and the bidi embedding/override/isolate marks.
const UNSAFE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** `text` with every control and bidi character replaced by a visible escape. */
export function safeForTerminal(text: string): string {
  return text.replace(UNSAFE, (char) => {
    const code = char.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/**
 * A copy of `value` (a report of plain objects, lists and scalars) with `safeForTerminal` applied to every string in
 * it, keys too: for a report printed field by field, where escaping each field where it is printed would miss one.
 */
export function stringsSafeForTerminal<T>(value: T): T {
  if (typeof value === 'string') return safeForTerminal(value) as T;
  if (Array.isArray(value)) return value.map(stringsSafeForTerminal) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [safeForTerminal(key), stringsSafeForTerminal(item)])) as T;
  }
  return value;
}
