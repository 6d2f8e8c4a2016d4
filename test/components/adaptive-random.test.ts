// The adaptive response and tool cache against native 0.9.2 on cases nobody
// wrote by hand: random `[response_cache]` tables and random host scripts of
// managed calls (test/support/random-cache.ts), compared on what the host got
// back, how often its real call ran, the ATOF events (cache marks included)
// and the ATIF files character for character. A failure prints the seed, the
// configuration and the script; `compareCacheSeed(seed)` replays it. More
// seeds: test/slow/adaptive-random.test.ts.
import { describe, expect, it } from 'vitest';
import { nativeAvailable, nativeLoadError } from '../contract/backends.ts';
import { compareCacheSeeds } from '../support/random-cache.ts';

const SEEDS = Array.from({ length: Number(process.env.CACHE_SEEDS ?? 30) }, (_, i) => Number(process.env.CACHE_SEED_FROM ?? 1) + i);

const title = nativeAvailable ? 'random response-cache cases: memory equals native' : `random response-cache cases: skipped, nemo-relay-node cannot load here (${nativeLoadError})`;

describe.skipIf(!nativeAvailable)(title, () => {
  it('random configurations and managed-call scripts', async () => {
    const { failures, exercised } = await compareCacheSeeds(SEEDS);
    expect(failures.join('\n\n')).toBe('');
    // The generator still reaches every decision, and most documents activate.
    expect(exercised.hit * exercised.miss * exercised.bypass, JSON.stringify(exercised)).toBeGreaterThan(0);
    expect(exercised.rejected, JSON.stringify(exercised)).toBeLessThan(SEEDS.length / 4);
  }, 120_000);
});
