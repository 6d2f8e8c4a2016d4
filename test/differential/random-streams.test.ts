// The random-stream differential: streams nobody wrote by hand
// (random-stream.ts, one per seed) through the plugin on the memory relay
// and on native, compared as the recorded corpus is (random-diff.ts). A
// failure names the seed, the settings and the first differing path;
// `compareSeed(seed)` replays it. test/slow/random-streams.test.ts runs
// more and larger seeds.
import { describe, expect, it } from 'vitest';
import { nativeAvailable, nativeLoadError } from '../contract/backends.ts';
import { randomStream } from './random-stream.ts';
import { compareSeed } from './random-diff.ts';

const SEEDS = Array.from({ length: 8 }, (_, i) => i + 1);

describe('random streams', () => {
  it('are the same for the same seed and differ between seeds', () => {
    expect(JSON.stringify(randomStream(7).lines)).toBe(JSON.stringify(randomStream(7).lines));
    expect(JSON.stringify(randomStream(7).lines)).not.toBe(JSON.stringify(randomStream(8).lines));
  });
});

const title = nativeAvailable ? 'random streams: memory and native write the same files' : `random streams: skipped, native backend cannot load here (${nativeLoadError})`;

describe.skipIf(!nativeAvailable)(title, () => {
  it.each(SEEDS)('seed %i', async (seed) => {
    expect(await compareSeed(seed)).toEqual([]);
  });
});
