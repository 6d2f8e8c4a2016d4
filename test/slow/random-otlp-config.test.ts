// The random OpenTelemetry-section differential (test/backends/memory/
// plugin-config.test.ts runs seeds 1-150) over more seeds: what the memory
// relay's validator and native's validate() report for random endpoints,
// header tables, batch numbers and log destinations, compared as sets. A
// failure names its seed; `compareOtlpConfigSeed(seed)` replays it.
import { describe, expect, it } from 'vitest';
import { nativePlugin, nativeUnavailable } from '../support/native-driver.ts';
import { compareOtlpConfigSeed } from '../support/random-otlp-config.ts';

describe.skipIf(nativePlugin === null)(`random OpenTelemetry sections, seeds 151-5000: the same diagnostics as native${nativeUnavailable ? ` (skipped: ${nativeUnavailable})` : ''}`, () => {
  for (let from = 151; from <= 5000; from += 500) {
    it(`seeds ${from}-${Math.min(from + 499, 5000)}`, () => {
      const differing = [];
      for (let seed = from; seed <= Math.min(from + 499, 5000); seed++) {
        const difference = compareOtlpConfigSeed(seed);
        if (difference.onlyNative.length + difference.onlyMemory.length > 0) differing.push({ seed, ...difference });
      }
      expect(differing).toEqual([]);
    });
  }
});
