// The adapters against random provider replies (test/support/random-wire.ts),
// more seeds than npm test runs: each framework's seeds in its own block,
// bounded so the file stays under a minute. Among the AI SDK's default
// seeds: 5 runs two different sub-agent tools at once, 11 and 17 leave a
// sub-agent's approval requests unanswered, 14 and 22 abort in a sub-agent.
import { describe, it } from 'vitest';
import { backends } from '../adapters/support.ts';
import { AI_SDK_PROVIDERS } from '../support/ai-sdk-providers.ts';
import { AI_SDK_WIRES, runAiSdkSeed } from '../adapters/ai-sdk/random-run.ts';
import { AGENTS_WIRES, runAgentsSeed } from '../adapters/openai-agents/random-run.ts';
import { LANGCHAIN_WIRES, runLangChainSeed } from '../adapters/langchain-random-run.ts';

const onNative = backends().includes('native');
const FROM = Number(process.env.RANDOM_WIRE_FROM ?? 5);
const SEEDS = Number(process.env.RANDOM_WIRE_SEEDS ?? 24);
const seeds = Array.from({ length: SEEDS }, (_, i) => FROM + i);

describe('the AI SDK on random provider replies', () => {
  for (const packages of AI_SDK_PROVIDERS) {
    for (const wire of AI_SDK_WIRES) {
      it(`${wire} ${packages.major}: seeds ${FROM}-${FROM + SEEDS - 1}`, async () => {
        for (const seed of seeds) await runAiSdkSeed(seed, wire, packages, onNative);
      }, 120_000);
    }
  }
});

describe('the OpenAI Agents SDK on random provider replies', () => {
  for (const wire of AGENTS_WIRES) {
    it(`${wire}: seeds ${FROM}-${FROM + SEEDS - 1}`, async () => {
      for (const seed of seeds) await runAgentsSeed(seed, wire, onNative);
    }, 120_000);
  }
});

describe('LangChain on random provider replies', () => {
  for (const wire of LANGCHAIN_WIRES) {
    it(`${wire}: seeds ${FROM}-${FROM + SEEDS - 1}`, async () => {
      // Beyond npm test's plans: a turn may call the tool that runs an agent twice at once (both may pause for approval).
      for (const seed of seeds) await runLangChainSeed(seed, wire, onNative, { expertTwice: true });
    }, 120_000);
    // Of seeds 1-300, those whose two experts pause for approval at once (each asked and answered in its own sub-agent).
    it(`${wire}: two agents run from tool calls of one message pause at once (seeds 84, 254, 283, 298)`, async () => {
      for (const seed of [84, 254, 283, 298]) await runLangChainSeed(seed, wire, onNative, { expertTwice: true });
    }, 120_000);
  }
});
