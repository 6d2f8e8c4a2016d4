/**
 * Whether a trajectory's text has no top-level step, without parsing it:
 * what the plugin's trajectory writer checks before writing a file.
 *
 * Apart from `serialize.ts` (which writes the text) because the writer is
 * in what the main entry loads at import and the serializer is not: it goes
 * with the ATIF builder, loaded when a trajectory is first built
 * (bench/RESULTS.md, "Issue 21: the main entry's import on Bun, what runs at
 * import").
 *
 * @module
 */

/**
 * Whether a trajectory's text has no top-level step. ATIF requires at least
 * one, so such a document would not validate: writers leave it unwritten and
 * say why. Scans the text (skipping strings and nested values) only up to
 * the top-level `steps` key, which the exporter style writes right after
 * `agent`; not a parse.
 */
export function hasNoSteps(text: string): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const start = i + 1;
      i = endOfString(text, start);
      if (depth === 1 && text.slice(start, i) === 'steps') {
        let j = i + 1;
        while (j < text.length && (text[j] === ':' || isSpace(text.charCodeAt(j)))) j++;
        if (text[j] !== '[') return false;
        j++;
        while (j < text.length && isSpace(text.charCodeAt(j))) j++;
        return text[j] === ']';
      }
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) depth++;
    else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
  }
  // No steps key at all: nothing to validate against; not ours to judge.
  return false;
}

/** The index of the quote closing the string that starts at `start`. */
function endOfString(text: string, start: number): number {
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c /* \ */) i++;
    else if (c === 0x22) return i;
  }
  return text.length;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}
