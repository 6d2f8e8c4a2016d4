// The random redaction differential (test/components/redaction-random.test.ts)
// over more seeds than npm test runs. Bounded: the seeds are fixed, so the
// run takes the same time every time. A failure prints the seed, the
// configuration and the input; `compareDetectorSeed(seed)` /
// `comparePatternSeed(seed)` (test/support/random-redaction.ts) replay it.
import { describe, expect, it } from 'vitest';
import { nativeSanitizeAvailable } from '../support/native-sanitize.ts';
import { compareDetectorSeed, comparePatternSeed, describeDifference } from '../support/random-redaction.ts';

// Seeds past the ones npm test runs.
const SEEDS = Array.from({ length: 2000 }, (_, i) => 1001 + i);

const title = nativeSanitizeAvailable ? 'random redaction cases, more seeds: ours equals native' : 'random redaction cases: skipped, nemo-relay-node is not available here';

describe.skipIf(!nativeSanitizeAvailable)(title, () => {
  it('detectors, actions and selectors on random texts and payloads', async () => {
    for (const seed of SEEDS) expect(describeDifference(await compareDetectorSeed(seed))).toBe('no difference');
  });

  it('random Rust patterns: both refuse, or both replace the same text', async () => {
    for (const seed of SEEDS) expect(describeDifference(await comparePatternSeed(seed))).toBe('no difference');
  });
});
