/**
 * The name a misspelt one most likely meant, for "did you mean" hints on
 * options and configuration keys a host or operator typed by hand.
 *
 * @module
 */

/**
 * The candidate `name` most likely stands for: the same letters in another
 * case, one a prefix of the other (`output_dir` for `output_directory`), or
 * at most two edits away. `undefined` when none is that close.
 */
export function nearMiss(name: string, candidates: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const other = candidate.toLowerCase();
    if (other === lower) return candidate;
    const prefix = Math.min(lower.length, other.length) >= 4 && (other.startsWith(lower) || lower.startsWith(other));
    const distance = prefix ? 0 : editDistance(lower, other, 2);
    if (distance <= 2 && (best === undefined || distance < best.distance)) best = { candidate, distance };
  }
  return best?.candidate;
}

/** Levenshtein distance, stopping once it exceeds `limit` (then `limit + 1`). */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let smallest = i;
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      smallest = Math.min(smallest, row[j]!);
    }
    if (smallest > limit) return limit + 1;
    previous = row;
  }
  return previous[b.length]!;
}
