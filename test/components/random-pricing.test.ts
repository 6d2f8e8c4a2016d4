// The random pricing differential: catalogs and LLM calls nobody wrote by
// hand (random-pricing.ts, one case per seed) through the plugin on the
// memory relay and on native with the same plugins.toml; every step's cost,
// every trajectory's total (the ATIF text, character for character) and the
// OTLP cost attributes must be native's. A failure prints the seed, the
// catalog and the call; `comparePricingSeed(seed)` replays it.
// test/slow/random-pricing.test.ts runs more and larger seeds.
import { describe, expect, it } from 'vitest';
import { nativeAvailable, nativeLoadError } from '../contract/backends.ts';
import { comparePricingSeed, randomPricingCase } from '../support/random-pricing.ts';

const SEEDS = Array.from({ length: 15 }, (_, i) => i + 1);

describe('random pricing cases', () => {
  it('are the same for the same seed and differ between seeds', () => {
    const text = (seed: number) => JSON.stringify([randomPricingCase(seed).components.replace(/"\/[^"]*catalog-(\d)\.json"/g, 'catalog-$1'), randomPricingCase(seed).lines]);
    expect(text(7)).toBe(text(7));
    expect(text(7)).not.toBe(text(8));
  });
});

const title = nativeAvailable ? 'random pricing: memory and native write the same costs' : `random pricing: skipped, native backend cannot load here (${nativeLoadError})`;
if (!nativeAvailable) console.warn(title);

describe.skipIf(!nativeAvailable)(title, () => {
  it.each(SEEDS)('seed %i', async (seed) => {
    expect(await comparePricingSeed(seed)).toEqual([]);
  });
});
