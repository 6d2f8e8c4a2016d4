// pii_redaction on whole random hook streams, memory against native, over
// more seeds than npm test runs (a quarter of them large streams). Bounded:
// the seeds are fixed; a failure names its seed, and
// `compareRedactionStreamSeed(seed, large)` replays it.
import { describe, expect, it } from 'vitest';
import { nativeAvailable, nativeLoadError } from '../contract/backends.ts';
import { compareRedactionStreamSeed } from '../support/random-redaction-streams.ts';

const SEEDS = Array.from({ length: 80 }, (_, i) => i + 100);

describe.skipIf(!nativeAvailable)(`pii_redaction on random streams, more seeds: memory writes what native does${nativeAvailable ? '' : ` (skipped: native cannot load: ${nativeLoadError})`}`, () => {
  for (const seed of SEEDS) {
    const large = seed % 4 === 0;
    it(`seed ${seed}${large ? ' (large)' : ''}`, async () => {
      expect(await compareRedactionStreamSeed(seed, large)).toEqual([]);
    });
  }
});
