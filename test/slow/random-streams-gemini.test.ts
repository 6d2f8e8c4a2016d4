// The random-stream differential (test/differential/random-streams.test.ts)
// with Gemini sessions: `generateContent` answers (`candidates`,
// `usageMetadata`) beside the other providers' (random-stream.ts, `gemini`).
// Native reads that shape in its plugins.toml `atif` component, so the counts
// and models are compared there too, an answer that calls one function twice
// (which native's decode rejects, reading no counts) among them. A failure
// names the seed; `compareSeed(seed, { gemini: true })` replays it.
import { describe, expect, it } from 'vitest';
import { nativeAvailable, nativeLoadError } from '../contract/backends.ts';
import { compareSeed } from '../differential/random-diff.ts';

const SEEDS = Array.from({ length: 60 }, (_, i) => 1 + i);

const title = nativeAvailable ? 'random streams with Gemini sessions: memory and native write the same files' : `random streams with Gemini sessions: skipped, native backend cannot load here (${nativeLoadError})`;

describe.skipIf(!nativeAvailable)(title, () => {
  it.each(SEEDS)('seed %i', async (seed) => {
    expect(await compareSeed(seed, { gemini: true })).toEqual([]);
  });
});
