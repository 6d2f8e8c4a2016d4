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
 * Whether a trajectory's text (a string, or its UTF-8 bytes) has no
 * top-level step. ATIF requires at least one, so such a document would not
 * validate: writers leave it unwritten and say why. Scans the text
 * (skipping strings and nested values) only up to the top-level `steps`
 * key, which the exporter style writes right after `agent`; not a parse.
 * Every character it looks for is ASCII, and a UTF-8 byte below 0x80 is
 * always that character, so one scan reads either form by its code units.
 */
export function hasNoSteps(text: string | Uint8Array): boolean {
  const at: (i: number) => number = typeof text === 'string' ? (i) => text.charCodeAt(i) : (i) => text[i] as number;
  const length = text.length;
  let depth = 0;
  for (let i = 0; i < length; i++) {
    const c = at(i);
    if (c === 0x22 /* " */) {
      const start = i + 1;
      i = endOfString(at, length, start);
      if (depth === 1 && isSteps(at, start, i)) {
        let j = i + 1;
        while (j < length && (at(j) === 0x3a /* : */ || isSpace(at(j)))) j++;
        if (at(j) !== 0x5b /* [ */) return false;
        j++;
        while (j < length && isSpace(at(j))) j++;
        return at(j) === 0x5d /* ] */;
      }
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) depth++;
    else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
  }
  // No steps key at all: nothing to validate against; not ours to judge.
  return false;
}

const STEPS = 'steps';

/** Whether the code units from `start` to `end` spell `steps`. */
function isSteps(at: (i: number) => number, start: number, end: number): boolean {
  if (end - start !== STEPS.length) return false;
  for (let k = 0; k < STEPS.length; k++) if (at(start + k) !== STEPS.charCodeAt(k)) return false;
  return true;
}

/** The index of the quote closing the string that starts at `start`. */
function endOfString(at: (i: number) => number, length: number, start: number): number {
  for (let i = start; i < length; i++) {
    const c = at(i);
    if (c === 0x5c /* \ */) i++;
    else if (c === 0x22) return i;
  }
  return length;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}
