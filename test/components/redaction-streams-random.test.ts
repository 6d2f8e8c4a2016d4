// pii_redaction on whole random hook streams, memory against native
// (test/support/random-redaction-streams.ts says what is drawn and compared).
// A few seeds here; test/slow/redaction-streams-random.test.ts runs more.
import { describe, expect, it } from 'vitest';
import { nativeAvailable, nativeLoadError } from '../contract/backends.ts';
import { compareRedactionStreamSeed } from '../support/random-redaction-streams.ts';

const SEEDS = Array.from({ length: 4 }, (_, i) => i + 1);

describe.skipIf(!nativeAvailable)(`pii_redaction on random streams: memory writes what native does${nativeAvailable ? '' : ` (skipped: native cannot load: ${nativeLoadError})`}`, () => {
  for (const seed of SEEDS) {
    const large = seed % 4 === 0;
    it(`seed ${seed}${large ? ' (large)' : ''}`, async () => {
      expect(await compareRedactionStreamSeed(seed, large)).toEqual([]);
    });
  }
});
