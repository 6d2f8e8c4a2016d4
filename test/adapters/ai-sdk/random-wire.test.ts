// The AI SDK adapter against random provider replies (random-run.ts): a few
// seeds per wire here; test/slow/random-wire-adapters.test.ts runs more.
import { describe, it } from 'vitest';
import { backends } from '../support.ts';
import { AI_SDK_WIRES, runAiSdkSeed } from './random-run.ts';

const onNative = backends().includes('native');

describe('the AI SDK on random provider replies', () => {
  for (const wire of AI_SDK_WIRES) {
    for (const seed of [1, 2, 3, 4]) {
      it(`${wire}, seed ${seed}`, () => runAiSdkSeed(seed, wire, onNative), 30_000);
    }
  }
});
