// The random response-cache differential (test/components/adaptive-random.test.ts)
// over more seeds than npm test runs. Bounded: the seeds are fixed, so the
// run takes the same time every time. A failure prints the seed, the
// configuration and the script; `compareCacheSeed(seed)`
// (test/support/random-cache.ts) replays it.
import { describe, expect, it } from 'vitest';
import { nativeAvailable, nativeLoadError } from '../contract/backends.ts';
import { compareCacheSeeds } from '../support/random-cache.ts';

// Seeds past the ones npm test runs.
const SEEDS = Array.from({ length: 1000 }, (_, i) => 1001 + i);

const title = nativeAvailable ? 'random response-cache cases, more seeds: memory equals native' : `random response-cache cases: skipped, nemo-relay-node cannot load here (${nativeLoadError})`;

describe.skipIf(!nativeAvailable)(title, () => {
  it('random configurations and managed-call scripts', async () => {
    const { failures, exercised } = await compareCacheSeeds(SEEDS);
    expect(failures.join('\n\n')).toBe('');
    // The generator still reaches every decision, and most documents activate.
    expect(exercised.hit * exercised.miss * exercised.bypass, JSON.stringify(exercised)).toBeGreaterThan(0);
    expect(exercised.rejected, JSON.stringify(exercised)).toBeLessThan(SEEDS.length / 4);
  }, 180_000);

  it('with the request fields the key or the decision reads that the default cases leave out (moreFields)', async () => {
    const { failures, exercised } = await compareCacheSeeds(SEEDS.slice(0, 200), { moreFields: true });
    expect(failures.join('\n\n')).toBe('');
    expect(exercised.hit * exercised.miss * exercised.bypass, JSON.stringify(exercised)).toBeGreaterThan(0);
  }, 180_000);
});
