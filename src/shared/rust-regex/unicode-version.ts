/**
 * Unicode properties as native's Rust engine sees them. Native's tables are
 * Unicode 16.0; the JavaScript engine's may be newer (Node 20.20 has 17.0),
 * and a character assigned since then is a letter or a digit here but
 * unassigned there: `\w`, `\d` and `\b` would disagree next to it, and a
 * detector could miss what native redacts. So every property class is
 * pinned: the code points Unicode assigned after 16.0 are given what an
 * unassigned code point has (docs/known-limits.md, "Unicode tables").
 *
 * @module
 */

/**
 * Code points assigned after Unicode 16.0 (by Unicode 17.0), hex ranges:
 * the code points a JS engine with Unicode 17 tables takes for `\p{Assigned}`
 * and native 0.9.2 does not (found by probing every code point through both).
 */
const LATER_RANGES =
  '88f c5c cdc 1acf-1add 1ae0-1aeb 20c1 2b96 a7ce-a7cf a7d2 a7d4 a7f1 fbc3-fbd2 fd90-fd91 fdc8-fdce 10940-10959 ' +
  '10ec5-10ec7 10ed0-10ed8 10efa-10efb 11b60-11b67 11db0-11ddb 11de0-11de9 16ea0-16eb8 16ebb-16ed3 16ff2-16ff6 ' +
  '187f8-187ff 18d09-18d1e 18d80-18df2 1ccfa-1ccfc 1ceba-1ced0 1cee0-1cef0 1e6c0-1e6de 1e6e0-1e6f5 1e6fe-1e6ff ' +
  '1f6d8 1f777-1f77a 1f8d0-1f8d8 1fa54-1fa57 1fa8a 1fa8e 1fac8 1facd 1faea 1faef 1fbfa 2b73a-2b73f 2cea2-2cead 323b0-33479';

/** The ranges as a JS `v`-mode class. */
const LATER = `[${LATER_RANGES.split(' ')
  .map((range) => range.split('-').map((hex) => `\\u{${hex}}`).join('-'))
  .join('')}]`;

/** A code point unassigned in every Unicode version: how an unassigned code point answers a property. */
const UNASSIGNED = '\u0378';

/**
 * `property` (a JS `\p{...}`) as native's tables answer it: the later code
 * points are in it exactly when an unassigned code point is.
 */
export function pinned(property: string): string {
  const unassignedHas = new RegExp(`^${property}$`, 'v').test(UNASSIGNED);
  // The left operand is a nested class, not the bare property: Bun's engine refuses a difference whose bare
  // operand follows a range in the enclosing class (`[a-f[\p{Lu}--[x]]]`), and a pinned class sits in any class.
  return unassignedHas ? `[${property}${LATER}]` : `[[${property}]--${LATER}]`;
}
