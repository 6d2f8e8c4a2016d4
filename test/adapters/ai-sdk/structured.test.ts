// Structured output as the AI SDK docs write it: generateText with
// `output: Output.object(...)`, and the older generateObject / streamObject,
// over the real providers (each major, test/support/ai-sdk-providers.ts). Each is one turn whose answer is the object's JSON,
// with the SDK's own usage.
import { afterEach, describe, expect, it } from 'vitest';
import { Output, generateObject, generateText, streamObject } from 'ai';
import * as z from 'zod';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { AI_SDK_PROVIDERS } from '../../support/ai-sdk-providers.ts';
import { expectNothingLost, recordedPlugin } from '../support.ts';
import { FakeProvider } from './wire.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

const recipe = z.object({ name: z.string(), ingredients: z.array(z.string()) });
const answer = { name: 'Pancakes', ingredients: ['flour', 'milk', 'eggs'] };

type Steps = Array<Record<string, any>>;

async function oneTurn(label: string, run: (fake: FakeProvider) => Promise<{ object: unknown; usage: { inputTokens?: number; outputTokens?: number } }>, wire: 'responses' | 'anthropic', stream: boolean) {
  const fake = new FakeProvider();
  fake.reply(wire, { id: `${label}-1`, model: wire === 'anthropic' ? 'claude-haiku-4-5-20251001' : 'gpt-4o-2024-08-06', text: JSON.stringify(answer), usage: { input: 80, cached: 64, output: 20 } }, { stream });
  const recorded = recordedPlugin(`ai-${label}`);
  uninstall = instrumentAiSdk(recorded.hooks);
  const { object, usage } = await run(fake);
  expect(object).toEqual(answer);
  const { atif, counters } = await recorded.finish();
  expectNothingLost(counters);
  expect(atif).toHaveLength(1);
  expect(validateAtif(atif[0]!)).toEqual([]);
  const steps = atif[0]!.steps as Steps;
  expect(steps.map((step) => [step.source, step.message])).toEqual([
    ['user', 'A pancake recipe, please.'],
    ['agent', JSON.stringify(answer)],
  ]);
  expect([steps[1]!.metrics.prompt_tokens, steps[1]!.metrics.completion_tokens]).toEqual([usage.inputTokens, usage.outputTokens]);
  const turnEnd = recorded.log.find((entry) => entry.hook === 'post_llm_call')!.payload;
  expect(JSON.parse(turnEnd.assistant_response as string)).toEqual(answer);
}

describe.each(AI_SDK_PROVIDERS.map((packages) => [packages.major, packages] as const))('structured output (%s)', (_major, packages) => {
  it('generateText with Output.object', async () => {
    await oneTurn('output-object', async (fake) => {
      const result = await generateText({
        model: packages.openai({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch })('gpt-4o'),
        output: Output.object({ schema: recipe }),
        prompt: 'A pancake recipe, please.',
      });
      return { object: result.output, usage: result.usage };
    }, 'responses', false);
  });

  it('generateObject', async () => {
    await oneTurn('generate-object', async (fake) => {
      const result = await generateObject({ model: packages.openai({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch })('gpt-4o'), schema: recipe, prompt: 'A pancake recipe, please.' });
      return { object: result.object, usage: result.usage };
    }, 'responses', false);
  });

  it('streamObject over an Anthropic stream', async () => {
    await oneTurn('stream-object', async (fake) => {
      const result = streamObject({ model: packages.anthropic({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch })('claude-haiku-4-5'), schema: recipe, prompt: 'A pancake recipe, please.' });
      let partials = 0;
      for await (const _partial of result.partialObjectStream) partials += 1;
      expect(partials).toBeGreaterThan(0);
      return { object: await result.object, usage: await result.usage };
    }, 'anthropic', true);
  });
});
