// The LangChain adapter against random provider replies
// (langchain-random-run.ts): a few seeds per wire here;
// test/slow/random-wire-adapters.test.ts runs more.
import { describe, it } from 'vitest';
import { backends } from './support.ts';
import { LANGCHAIN_WIRES, runLangChainSeed } from './langchain-random-run.ts';

const onNative = backends().includes('native');

describe('LangChain on random provider replies', () => {
  for (const wire of LANGCHAIN_WIRES) {
    for (const seed of [1, 2, 3, 4]) {
      it(`${wire}, seed ${seed}`, () => runLangChainSeed(seed, wire, onNative), 30_000);
    }
  }
});
