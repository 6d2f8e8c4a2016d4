// One seed of the AI SDK against random provider replies
// (test/support/random-wire.ts): a ToolLoopAgent written as the SDK's docs
// write it, on the real provider package of the drawn wire (of the major
// given, test/support/ai-sdk-providers.ts), with the plugin
// on the memory relay; the trajectory is checked against what the SDK
// itself returned (its steps' text, tool calls, tool results and usage,
// its totalUsage), the ATOF file against the requests the fetch saw, and,
// where native loads, the same hooks on native must give the same files.
import { ToolLoopAgent, stepCountIs, tool, type LanguageModel } from 'ai';
import * as z from 'zod';
import { expect } from 'vitest';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import type { ProviderPackages } from '../../support/ai-sdk-providers.ts';
import { Draw } from '../../support/seeded-random.ts';
import { randomScenario, randomText, RandomWire, type RandomTool, type RandomWireKind } from '../../support/random-wire.ts';
import { checkRandomRun, type FrameworkStep } from '../random-wire-checks.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

const MODELS: Record<RandomWireKind, { requested: string; dated: string; model(packages: ProviderPackages, fetch: typeof globalThis.fetch): LanguageModel }> = {
  responses: { requested: 'gpt-4.1', dated: 'gpt-4.1-2025-04-14', model: (packages, fetch) => packages.openai({ apiKey: 'test-key', fetch })('gpt-4.1') },
  chat: { requested: 'gpt-4o-mini', dated: 'gpt-4o-mini-2024-07-18', model: (packages, fetch) => packages.openai({ apiKey: 'test-key', fetch }).chat('gpt-4o-mini') },
  anthropic: { requested: 'claude-sonnet-4-5', dated: 'claude-sonnet-4-5-20250929', model: (packages, fetch) => packages.anthropic({ apiKey: 'test-key', fetch })('claude-sonnet-4-5') },
  // `dated` is Gemini's modelVersion, which @ai-sdk/google does not pass on: steps name the model asked for.
  gemini: { requested: 'gemini-2.5-flash', dated: 'gemini-2.5-flash-001', model: (packages, fetch) => packages.google({ apiKey: 'test-key', fetch })('gemini-2.5-flash') },
};

/** The program's tools, and how the wire draws their arguments. */
const TOOLS: RandomTool[] = [
  { name: 'weather', args: (draw) => ({ city: randomText(draw, 3) }) },
  { name: 'clock', args: () => ({}) },
  { name: 'search', args: (draw) => ({ query: randomText(draw, 4), limit: draw.int(1, 5) }) },
];

function program(model: LanguageModel) {
  return new ToolLoopAgent({
    model,
    instructions: 'You are a travel assistant.',
    tools: {
      weather: tool({
        description: 'Get the weather for a city',
        inputSchema: z.object({ city: z.string() }),
        execute: async ({ city }) => ({ city, forecast: 'sunny', tempC: 21 }),
      }),
      clock: tool({
        description: 'The current time',
        inputSchema: z.object({}),
        execute: async () => '12:00 🕛',
      }),
      search: tool({
        description: 'Search the web',
        inputSchema: z.object({ query: z.string(), limit: z.number() }),
        execute: async ({ query, limit }) => ({ hits: Array.from({ length: limit }, (_, i) => `${query} #${i + 1}`) }),
      }),
    },
    stopWhen: stepCountIs(6),
  });
}

export const AI_SDK_WIRES: readonly RandomWireKind[] = ['responses', 'chat', 'anthropic', 'gemini'];

/** Runs seed `seed` on `wire` with `packages`' provider; throws (an expect failure naming the seed and its outline) on any difference. */
export async function runAiSdkSeed(seed: number, wire: RandomWireKind, packages: ProviderPackages, onNative: boolean): Promise<void> {
  const { requested, dated, model } = MODELS[wire];
  const scenario = randomScenario(seed, wire, dated, TOOLS);
  const choice = new Draw(seed ^ 0x5eed);
  const mode = choice.pick(['generate', 'stream'] as const);
  // Sometimes one call's first attempt is refused as overloaded: the SDK retries it.
  const overloaded = choice.chance(0.3) ? [choice.int(0, scenario.turns.length - 1)] : [];
  const fake = new RandomWire(seed, scenario, { failFirstAttemptOf: overloaded });
  const label = `seed ${seed} (${wire} ${packages.major}, ${mode}${overloaded.length > 0 ? `, turn ${overloaded[0]! + 1} overloaded once` : ''})\n  ${scenario.outline.join('\n  ')}`;
  await checkRandomRun({
    label,
    onNative,
    requests: () => fake.requests.length,
    async run(hooks) {
      const uninstall = instrumentAiSdk(hooks);
      try {
        const agent = program(model(packages, fake.fetch as typeof globalThis.fetch));
        const prompt = `Plan a day in ${randomText(new Draw(seed), 3)}`;
        let steps;
        let totalUsage;
        if (mode === 'generate') {
          const result = await agent.generate({ prompt });
          steps = result.steps;
          totalUsage = result.totalUsage;
        } else {
          const result = await agent.stream({ prompt });
          for await (const _part of result.fullStream) {
            // drained, as a UI would
          }
          steps = await result.steps;
          totalUsage = await result.totalUsage;
        }
        expect(steps, label).toHaveLength(scenario.turns.length);
        const frameworkSteps: FrameworkStep[] = steps.map((step) => ({
          text: step.text,
          model: step.response.modelId,
          calls: step.toolCalls.map((call) => ({ id: call.toolCallId, name: call.toolName, args: call.input })),
          results: step.toolResults.map((result) => ({ id: result.toolCallId, output: result.output })),
          prompt: step.usage.inputTokens,
          completion: step.usage.outputTokens,
          cached: sumDefined(step.usage.inputTokenDetails.cacheReadTokens, step.usage.inputTokenDetails.cacheWriteTokens),
          finish: step.finishReason,
          reasoning: step.reasoningText ?? null,
        }));
        return {
          prompt,
          model: requested,
          steps: frameworkSteps,
          retried: fake.failedRequests,
          totals: {
            prompt: totalUsage.inputTokens,
            completion: totalUsage.outputTokens,
            cached: sumDefined(totalUsage.inputTokenDetails.cacheReadTokens, totalUsage.inputTokenDetails.cacheWriteTokens),
          },
        };
      } finally {
        uninstall();
      }
    },
  });
}

function sumDefined(...values: Array<number | undefined>): number | undefined {
  const defined = values.filter((value): value is number => value !== undefined);
  return defined.length === 0 ? undefined : defined.reduce((a, b) => a + b, 0);
}
