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

// C0 controls except tab, DEL, C1 controls, and the bidi embedding/override/isolate marks.
const UNSAFE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** `text` with every control and bidi character replaced by a visible escape. */
export function safeForTerminal(text: string): string {
  return text.replace(UNSAFE, (char) => {
    const code = char.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}
