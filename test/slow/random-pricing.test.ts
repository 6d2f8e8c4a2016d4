// The random pricing differential (test/components/random-pricing.test.ts)
// over more seeds than npm test runs, a third of them large (more sessions,
// catalog entries and calls per turn). Bounded: the seeds are fixed, so the
// run takes the same time every time (under a minute here). A failure names
// the seed; `comparePricingSeed(seed, { large })` replays it.
import { describe, expect, it } from 'vitest';
import { nativeAvailable, nativeLoadError } from '../contract/backends.ts';
import { comparePricingSeed } from '../support/random-pricing.ts';

// Seeds past the ones npm test runs.
const SEEDS = Array.from({ length: 80 }, (_, i) => 1001 + i);
const LARGE_SEEDS = Array.from({ length: 40 }, (_, i) => 2001 + i);

const title = nativeAvailable ? 'random pricing, more seeds: memory and native write the same costs' : `random pricing: skipped, native backend cannot load here (${nativeLoadError})`;
if (!nativeAvailable) console.warn(title);

/**
 * Seeds whose differences are still open (neither fixed nor intended): each
 * runs as an expected failure, so it turns red the day it passes and leaves
 * this list. None today.
 */
const OPEN = new Set<number>([]);

describe.skipIf(!nativeAvailable)(title, () => {
  for (const seed of SEEDS) {
    (OPEN.has(seed) ? it.fails : it)(`seed ${seed}`, async () => {
      expect(await comparePricingSeed(seed)).toEqual([]);
    });
  }

  for (const seed of LARGE_SEEDS) {
    (OPEN.has(seed) ? it.fails : it)(`large seed ${seed}`, async () => {
      expect(await comparePricingSeed(seed, { large: true })).toEqual([]);
    });
  }
});
