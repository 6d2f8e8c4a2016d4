// The OpenAI Agents SDK adapter against random provider replies
// (random-run.ts): a few seeds per model here; test/slow/random-wire-adapters.test.ts runs more.
import { describe, it } from 'vitest';
import { backends } from '../support.ts';
import { AGENTS_WIRES, runAgentsSeed } from './random-run.ts';

const onNative = backends().includes('native');

describe('the OpenAI Agents SDK on random provider replies', () => {
  for (const wire of AGENTS_WIRES) {
    // 20, 30 and 116 hand off: back to the run's agent and to billing again, a chain of three back to the first, and back up the chain.
    // 1, 4, 17, 82, 109 and 491 pause for approvals: 4 three times (a rejection with its own message, an approval and a
    // rejection answered in the SDK's order); 17 beside a handoff, then in billing, resumed from a copy; 82 in refunds,
    // its rejection waiting for the next request while the step hands back to the run's agent; 109 rejects a tool for the
    // rest of the run, whose later calls are answered without asking; 491 in billing, where a rejection for the rest of
    // the run replaces an earlier rejection's message.
    for (const seed of [1, 2, 3, 4, 20, 30, 116, 17, 82, 109, 491]) {
      it(`${wire}, seed ${seed}`, () => runAgentsSeed(seed, wire, onNative), 30_000);
    }
  }
});
