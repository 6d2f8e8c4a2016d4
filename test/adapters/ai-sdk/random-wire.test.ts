// The AI SDK adapter against random provider replies (random-run.ts): a few
// seeds per wire and provider major here; test/slow/random-wire-adapters.test.ts
// runs more.
import { describe, it } from 'vitest';
import { AI_SDK_PROVIDERS } from '../../support/ai-sdk-providers.ts';
import { backends } from '../support.ts';
import { AI_SDK_WIRES, runAiSdkSeed } from './random-run.ts';

const onNative = backends().includes('native');

describe('the AI SDK on random provider replies', () => {
  for (const packages of AI_SDK_PROVIDERS) {
    for (const wire of AI_SDK_WIRES) {
      for (const seed of [1, 2, 3, 4]) {
        it(`${wire} ${packages.major}, seed ${seed}`, () => runAiSdkSeed(seed, wire, packages, onNative), 30_000);
      }
    }
  }
});
