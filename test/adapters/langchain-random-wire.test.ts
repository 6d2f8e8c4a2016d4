// The LangChain adapter against random provider replies
// (langchain-random-run.ts): a few seeds per wire here (among them seed 1:
// approvals and a tool that throws; 2: an aborted run; 17: a sub-agent run
// from a tool); test/slow/random-wire-adapters.test.ts runs more.
import { describe, it } from 'vitest';
import { backends } from './support.ts';
import { LANGCHAIN_WIRES, runLangChainSeed, seedFeatures } from './langchain-random-run.ts';

const onNative = backends().includes('native');

describe('LangChain on random provider replies', () => {
  for (const wire of LANGCHAIN_WIRES) {
    for (const seed of [1, 2, 3, 4, 17]) {
      const features = seedFeatures(seed, wire);
      it(`${wire}, seed ${seed}${features === '' ? '' : ` (${features})`}`, () => runLangChainSeed(seed, wire, onNative), 30_000);
    }
  }
});
