// The redaction engine (src/components/redaction) and the Rust-pattern
// engine (src/shared/rust-regex) against native's pii_redaction on cases
// nobody wrote by hand: random detector configurations over random texts
// and payloads, and random Rust patterns (test/support/random-redaction.ts),
// value by value through native's own API. A failure prints the seed, the
// configuration and the input; `compareDetectorSeed(seed)` /
// `comparePatternSeed(seed)` replay it. More seeds: test/slow/redaction-random.test.ts.
import { describe, expect, it } from 'vitest';
import { nativeSanitizeAvailable } from '../support/native-sanitize.ts';
import { compareDetectorSeed, comparePatternSeed, describeDifference } from '../support/random-redaction.ts';

const SEEDS = Array.from({ length: 75 }, (_, i) => 1 + i);

const title = nativeSanitizeAvailable ? 'random redaction cases: ours equals native' : 'random redaction cases: skipped, nemo-relay-node is not available here';

describe.skipIf(!nativeSanitizeAvailable)(title, () => {
  it('detectors, actions and selectors on random texts and payloads', async () => {
    for (const seed of SEEDS) expect(describeDifference(await compareDetectorSeed(seed))).toBe('no difference');
  });

  it('random Rust patterns: both refuse, or both replace the same text', async () => {
    for (const seed of SEEDS) expect(describeDifference(await comparePatternSeed(seed))).toBe('no difference');
  });
});
