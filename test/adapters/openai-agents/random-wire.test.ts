// The OpenAI Agents SDK adapter against random provider replies
// (random-run.ts): a few seeds per model here; test/slow/random-wire-adapters.test.ts runs more.
import { describe, it } from 'vitest';
import { backends } from '../support.ts';
import { AGENTS_WIRES, runAgentsSeed } from './random-run.ts';

const onNative = backends().includes('native');

describe('the OpenAI Agents SDK on random provider replies', () => {
  for (const wire of AGENTS_WIRES) {
    // 20, 30 and 116 hand off: back to the run's agent and to billing again, a chain of three back to the first, and back up the chain.
    for (const seed of [1, 2, 3, 4, 20, 30, 116]) {
      it(`${wire}, seed ${seed}`, () => runAgentsSeed(seed, wire, onNative), 30_000);
    }
  }
});
