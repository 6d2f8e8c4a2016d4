// The LangChain adapter against random provider replies
// (langchain-random-run.ts): a few seeds per wire here, named by what their
// plan adds (between them: approvals, in a supervisor graph too; a handoff
// to a worker agent, tasks sent to it with `Send`; a tool that
// throws; an aborted run; a sub-agent run from a tool; a worker node retried
// by its retryPolicy); test/slow/random-wire-adapters.test.ts runs more.
import { describe, it } from 'vitest';
import { backends } from './support.ts';
import { LANGCHAIN_WIRES, runLangChainSeed, seedFeatures } from './langchain-random-run.ts';

const onNative = backends().includes('native');

describe('LangChain on random provider replies', () => {
  for (const wire of LANGCHAIN_WIRES) {
    for (const seed of [1, 3, 4, 5, 10, 13, 22, 38]) {
      const features = seedFeatures(seed, wire);
      it(`${wire}, seed ${seed}${features === '' ? '' : ` (${features})`}`, () => runLangChainSeed(seed, wire, onNative), 30_000);
    }
  }
});
