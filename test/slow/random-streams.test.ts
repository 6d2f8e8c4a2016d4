// The random-stream differential (test/differential/random-streams.test.ts)
// over more seeds than npm test runs, half of them large (up to four
// sessions, more turns, calls and subagents). Bounded: the seeds are fixed,
// so the run takes the same time every time (well under a minute here). A
// failure names the seed; `compareSeed(seed, { large })` replays it.
import { describe, expect, it } from 'vitest';
import { nativeAvailable, nativeLoadError } from '../contract/backends.ts';
import { compareSeed } from '../differential/random-diff.ts';

// Seeds past the ones npm test runs.
const SEEDS = Array.from({ length: 100 }, (_, i) => 1001 + i);
const LARGE_SEEDS = Array.from({ length: 30 }, (_, i) => 2001 + i);

const title = nativeAvailable ? 'random streams, more seeds: memory and native write the same files' : `random streams: skipped, native backend cannot load here (${nativeLoadError})`;

describe.skipIf(!nativeAvailable)(title, () => {
  it.each(SEEDS)('seed %i', async (seed) => {
    expect(await compareSeed(seed)).toEqual([]);
  });

  it.each(LARGE_SEEDS)('large seed %i', async (seed) => {
    expect(await compareSeed(seed, { large: true })).toEqual([]);
  });
});
