// The adapters against random provider replies (test/support/random-wire.ts),
// more seeds than npm test runs: each framework's seeds in its own block,
// bounded so the file stays under a minute. Among the AI SDK's default
// seeds: 5 runs two different sub-agent tools at once, 11 and 17 leave a
// sub-agent's approval requests unanswered, 14 and 22 abort in a sub-agent.
// Here each run's files also go through `compare` (random-wire-compare.ts):
// its ATIF against its ATOF, native's likewise, memory's ATIF against
// native's, each equivalent.
// Longer ranges: RANDOM_WIRE_FROM, RANDOM_WIRE_SEEDS, and
// RANDOM_WIRE_KEEP_GOING=1 to run every seed and report the failures together.
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
const checks = { compareFiles: true };
// The default range fits in 120 s per wire; a longer one gets as much per seed.
const TIMEOUT = Math.max(120_000, SEEDS * 5_000);

/** Runs every seed: stops at the first failure, or with RANDOM_WIRE_KEEP_GOING=1 runs them all and fails with every failure's message. */
async function runSeeds(run: (seed: number) => Promise<void>): Promise<void> {
  const failures: string[] = [];
  for (const seed of seeds) {
    if (process.env.RANDOM_WIRE_KEEP_GOING !== '1') await run(seed);
    else await run(seed).catch((error: unknown) => failures.push(error instanceof Error ? error.message : String(error)));
  }
  if (failures.length > 0) throw new Error(`${failures.length} of ${SEEDS} seeds failed:\n\n${failures.join('\n\n')}`);
}

describe('the AI SDK on random provider replies', () => {
  for (const packages of AI_SDK_PROVIDERS) {
    for (const wire of AI_SDK_WIRES) {
      it(`${wire} ${packages.major}: seeds ${FROM}-${FROM + SEEDS - 1}`, async () => {
        await runSeeds((seed) => runAiSdkSeed(seed, wire, packages, onNative, checks));
      }, TIMEOUT);
    }
  }
});

describe('the OpenAI Agents SDK on random provider replies', () => {
  for (const wire of AGENTS_WIRES) {
    it(`${wire}: seeds ${FROM}-${FROM + SEEDS - 1}`, async () => {
      await runSeeds((seed) => runAgentsSeed(seed, wire, onNative, checks));
    }, TIMEOUT);
  }
});

describe('LangChain on random provider replies', () => {
  for (const wire of LANGCHAIN_WIRES) {
    it(`${wire}: seeds ${FROM}-${FROM + SEEDS - 1}`, async () => {
      // Beyond npm test's plans: a turn may call the tool that runs an agent twice at once (both may pause for approval).
      await runSeeds((seed) => runLangChainSeed(seed, wire, onNative, { expertTwice: true }, checks));
    }, TIMEOUT);
    // Of seeds 1-300, those whose two experts pause for approval at once (each asked and answered in its own sub-agent).
    it(`${wire}: two agents run from tool calls of one message pause at once (seeds 84, 254, 283, 298)`, async () => {
      for (const seed of [84, 254, 283, 298]) await runLangChainSeed(seed, wire, onNative, { expertTwice: true }, checks);
    }, 120_000);
  }
});
