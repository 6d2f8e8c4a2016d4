/**
 * A function that builds an object from a literal, generated for one fixed
 * key list: `(a, b) => ({ "k1": <value of k1>, "k2": <value of k2> })`.
 *
 * Stores of computed keys go through V8's slow generic path once a site
 * has seen many key lists, and leave the object a second store for its
 * properties; a literal gives one object with its properties in place
 * (bench/RESULTS.md: "the payload copy from a literal per key list", "end
 * metadata from a plan"). Used by the payload copy (`json.ts`) and the
 * memory relay's end metadata (`encode/metadata.ts`).
 *
 * Key names are written with `JSON.stringify`, a valid string literal for
 * any key, so no key can inject code. A list with `__proto__` (which a
 * literal takes as the prototype) or longer than `MAX_LITERAL_KEYS` gets
 * none, and once `Function` is refused (a content security policy,
 * `--disallow-code-generation-from-strings`) none is generated again in
 * this process: callers keep their loop.
 *
 * @module
 */

/** Uses of a key list through the caller's loop before its function is generated (fewer would cost more to compile than they save). */
export const USES_BEFORE_LITERAL = 16;
/** Longest key list given a function. */
const MAX_LITERAL_KEYS = 64;
/** False once `Function` was refused. */
let generating = true;

/** Whether a literal may still be generated in this process. */
export function literalsAllowed(): boolean {
  return generating;
}

/**
 * The generated function with parameters `params` whose object has `keys`,
 * each value written by `valueOf(name, index)` (`name`: the key as a string
 * literal); null when the list gets none (see the module comment).
 */
export function objectLiteralFunction<F>(params: readonly string[], keys: readonly string[], valueOf: (name: string, index: number) => string): F | null {
  if (!generating || keys.length > MAX_LITERAL_KEYS || keys.includes('__proto__')) return null;
  const fields = keys.map((key, i) => {
    const name = JSON.stringify(key);
    return `${name}: ${valueOf(name, i)}`;
  });
  try {
    return new Function(...params, `return { ${fields.join(', ')} };`) as F;
  } catch {
    generating = false;
    return null;
  }
}
