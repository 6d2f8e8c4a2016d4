/**
 * What a caller derives from an object's key list (its sorted order, the
 * keys' encoded heads), kept per key list: payloads of one kind share their
 * keys, so the work is done once per kind, not once per object.
 *
 * Lookup is by content, since `Object.keys` returns a new array each time:
 * a slot picked from the key count and the first key answers most lookups
 * with one comparison of the lists (keys are interned strings, so comparing
 * them is cheap), and a map by first key holds the rest. Bounded: when full,
 * everything is forgotten and relearned.
 *
 * @module
 */

const MAX_LISTS = 1024;

export class KeyListCache<T> {
  /** Known key lists and what was derived from them, by first key. */
  readonly #byFirstKey = new Map<string, { keys: readonly string[]; value: T }[]>();
  readonly #recent: ({ keys: readonly string[]; value: T } | undefined)[] = new Array(256);
  #count = 0;

  /** @param derive What to keep for a key list (never called with an empty one); it may throw, and then nothing is kept. */
  constructor(private readonly derive: (keys: string[]) => T) {}

  /** What was derived from `keys` (a non-empty `Object.keys` result, not changed afterwards). */
  get(keys: string[]): T {
    const first = keys[0]!;
    const slot = (keys.length * 31 + first.length * 7 + first.charCodeAt(0)) & 255;
    const recent = this.#recent[slot];
    if (recent !== undefined && sameKeys(recent.keys, keys)) return recent.value;
    let candidates = this.#byFirstKey.get(first);
    if (candidates !== undefined) {
      for (let i = 0; i < candidates.length; i++) {
        const known = candidates[i]!;
        if (sameKeys(known.keys, keys)) return (this.#recent[slot] = known).value;
      }
    }
    const entry = { keys, value: this.derive(keys) };
    if (this.#count >= MAX_LISTS) {
      this.#byFirstKey.clear();
      this.#recent.fill(undefined);
      this.#count = 0;
      candidates = undefined;
    }
    if (candidates === undefined) this.#byFirstKey.set(first, [entry]);
    else candidates.push(entry);
    this.#count++;
    return (this.#recent[slot] = entry).value;
  }
}

function sameKeys(known: readonly string[], keys: readonly string[]): boolean {
  const count = keys.length;
  if (known.length !== count) return false;
  for (let i = 0; i < count; i++) if (known[i] !== keys[i]) return false;
  return true;
}
