// The random-stream differential (test/differential/random-streams.test.ts)
// with Gemini sessions: `generateContent` answers (`candidates`,
// `usageMetadata`) beside the other providers' (random-stream.ts, `gemini`).
// Native reads that usage shape in its plugins.toml `atif` component, so the
// counts are compared there too. The seeds in EXPECTED_DIFFERENT still
// differ there (docs/known-limits.md, "Gemini usage in a plugins.toml
// trajectory"): each runs as an expected failure, so it turns red once it
// matches. A failure names the seed; `compareSeed(seed, { gemini: true })`
// replays it.
import { describe, expect, it } from 'vitest';
import { nativeAvailable, nativeLoadError } from '../contract/backends.ts';
import { compareSeed } from '../differential/random-diff.ts';

const SEEDS = Array.from({ length: 60 }, (_, i) => 1 + i);
/** Native's `atif` component reads no counts from a Gemini answer that calls one function twice (its decode fails); these seeds' streams hold one. */
const EXPECTED_DIFFERENT = new Set([22, 36, 43, 53]);

const title = nativeAvailable ? 'random streams with Gemini sessions: memory and native write the same files' : `random streams with Gemini sessions: skipped, native backend cannot load here (${nativeLoadError})`;

describe.skipIf(!nativeAvailable)(title, () => {
  it.each(SEEDS.filter((seed) => !EXPECTED_DIFFERENT.has(seed)))('seed %i', async (seed) => {
    expect(await compareSeed(seed, { gemini: true })).toEqual([]);
  });

  it.fails.each([...EXPECTED_DIFFERENT])('seed %i (expected to differ)', async (seed) => {
    expect(await compareSeed(seed, { gemini: true })).toEqual([]);
  });
});
