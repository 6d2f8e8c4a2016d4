// The random managed-stream differential (test/differential/random-managed.test.ts)
// over more seeds than npm test runs, some of them large. Bounded: the seeds
// are fixed, so the run takes the same time every time. A failure names the
// seed; `compareManagedSeed(seed, { large })` replays it.
import { describe, expect, it } from 'vitest';
import { nativeAvailable, nativeLoadError } from '../contract/backends.ts';
import { compareManagedSeed } from '../differential/random-managed.ts';

// Seeds past the ones npm test runs.
const SEEDS = Array.from({ length: Number(process.env.MANAGED_SEEDS ?? 40) }, (_, i) => Number(process.env.MANAGED_FROM ?? 1001) + i);
const LARGE_SEEDS = Array.from({ length: Number(process.env.MANAGED_LARGE_SEEDS ?? 10) }, (_, i) => 2001 + i);

const title = nativeAvailable ? 'random managed streams, more seeds: memory and native hand back and write the same' : `random managed streams: skipped, native backend cannot load here (${nativeLoadError})`;

describe.skipIf(!nativeAvailable)(title, () => {
  it.each(SEEDS)('seed %i', async (seed) => {
    expect(await compareManagedSeed(seed)).toEqual([]);
  });

  it.each(LARGE_SEEDS)('large seed %i', async (seed) => {
    expect(await compareManagedSeed(seed, { large: true })).toEqual([]);
  });
});
