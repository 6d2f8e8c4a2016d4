// Structured output the program could not use, as the AI SDK docs write it: generateObject, streamObject (with
// `onError`) and generateText with `output: Output.object(...)`, over the real OpenAI and Anthropic packages, when
// the model's answer is not JSON, does not match the schema, or is missing. The program gets the SDK's
// NoObjectGeneratedError; the trajectory must say the turn failed with it, keep the answer the model gave and count
// its tokens, on memory and native alike. And a `repairText` that asks a model to fix the answer.
import { afterEach, describe, expect, it } from 'vitest';
import { NoObjectGeneratedError, Output, generateObject, generateText, streamObject } from 'ai';
import * as z from 'zod';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { AI_SDK_PROVIDERS, type ProviderPackages } from '../../support/ai-sdk-providers.ts';
import { sameOnNative } from '../same-on-native.ts';
import { expectNothingLost, expectTurnEndInAtif, finishedRun, recordedPlugin, viewLines, type Recorded } from '../support.ts';
import { FakeProvider } from './wire.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

const recipe = z.object({ name: z.string(), ingredients: z.array(z.string()) });
const PROMPT = 'A pancake recipe, please.';
const usage = { input: 80, cached: 64, output: 20 };

const hooksOf = (recorded: Recorded, name: string) => recorded.log.filter((entry) => entry.hook === name).map((entry) => entry.payload as Record<string, any>);

/**
 * What the program saw against what was recorded: the turn failed with the error the program got (no answer of the
 * turn), its one model call answered with the model's text and the tokens the SDK reports for it, in ATOF, ATIF and
 * `view` of both.
 */
async function expectFailedTurn(recorded: Recorded, error: unknown, modelText: string): Promise<void> {
  expect(NoObjectGeneratedError.isInstance(error)).toBe(true);
  const thrown = error as NoObjectGeneratedError;
  expect(hooksOf(recorded, 'post_llm_call')).toEqual([]);
  expect(hooksOf(recorded, 'on_session_end')).toMatchObject([{ completed: false, failed: true, error_type: thrown.name, error_message: thrown.message }]);
  const { doc, agent, atof } = await finishedRun(recorded);
  expect(agent.map((step) => [step.message, step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual([[modelText, thrown.usage!.inputTokens, thrown.usage!.outputTokens]]);
  expect([doc.final_metrics.total_prompt_tokens, doc.final_metrics.total_completion_tokens]).toEqual([thrown.usage!.inputTokens, thrown.usage!.outputTokens]);
  const end = atof.find((event) => event.name === 'hermes.session.end');
  expect(end?.data).toMatchObject({ failed: true, error_type: thrown.name });
  const turn = (await viewLines(recorded, 'atof')).find((line) => line.includes('turn '));
  expect(turn).toContain(`failed: ${thrown.name}`);
  await expectTurnEndInAtif(recorded, doc, { status: 'failed', error: thrown });
  await sameOnNative(recorded);
}

async function caught(promise: PromiseLike<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the program to get an error');
}

const openai = (packages: ProviderPackages, fake: FakeProvider) => packages.openai({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch })('gpt-4o');

describe.each(AI_SDK_PROVIDERS.map((packages) => [packages.major, packages] as const))('structured output the program could not use (%s)', (_major, packages) => {
  it('generateObject: an answer that is not JSON', async () => {
    const text = '{"name": "Pancakes", "ingredi';
    const fake = new FakeProvider().reply('responses', { id: 'resp-1', model: 'gpt-4o-2024-08-06', text, usage });
    const recorded = recordedPlugin('ai-object-not-json');
    uninstall = instrumentAiSdk(recorded.hooks);
    const error = await caught(generateObject({ model: openai(packages, fake), schema: recipe, prompt: PROMPT }));
    expect((error as Error).message).toBe('No object generated: could not parse the response.');
    await expectFailedTurn(recorded, error, text);
  });

  it('generateText with Output.object: an answer that does not match the schema', async () => {
    const text = '{"name": 3}';
    const fake = new FakeProvider().reply('responses', { id: 'resp-1', model: 'gpt-4o-2024-08-06', text, usage });
    const recorded = recordedPlugin('ai-output-mismatch');
    uninstall = instrumentAiSdk(recorded.hooks);
    const error = await caught(generateText({ model: openai(packages, fake), output: Output.object({ schema: recipe }), prompt: PROMPT }));
    expect((error as Error).message).toBe('No object generated: response did not match schema.');
    await expectFailedTurn(recorded, error, text);
  });

  it('streamObject over an Anthropic stream: an answer that does not match the schema rejects `object`, not `onError`', async () => {
    const text = '{"name": "Pancakes"}';
    const fake = new FakeProvider().reply('anthropic', { id: 'msg-1', model: 'claude-haiku-4-5-20251001', text, usage }, { stream: true });
    const recorded = recordedPlugin('ai-stream-object-mismatch');
    uninstall = instrumentAiSdk(recorded.hooks);
    const streamErrors: unknown[] = [];
    const result = streamObject({
      model: packages.anthropic({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch })('claude-haiku-4-5'),
      schema: recipe,
      prompt: PROMPT,
      onError: ({ error }) => void streamErrors.push(error),
    });
    const partials: unknown[] = [];
    for await (const partial of result.partialObjectStream) partials.push(partial);
    expect(partials.at(-1)).toEqual({ name: 'Pancakes' });
    const error = await caught(result.object);
    expect(streamErrors).toEqual([]);
    await expectFailedTurn(recorded, error, text);
  });

  it('generateObject with repairText that asks a model to fix the answer: the object is the answer; the model call of the repair is a session of its own (docs/known-limits.md)', async () => {
    const broken = '{"name": "Pancakes", "ingredients": ["flour", "milk"';
    const fixed = { name: 'Pancakes', ingredients: ['flour', 'milk'] };
    const fake = new FakeProvider()
      .reply('responses', { id: 'resp-1', model: 'gpt-4o-2024-08-06', text: broken, usage })
      .reply('responses', { id: 'resp-repair', model: 'gpt-4o-mini-2024-07-18', text: JSON.stringify(fixed), usage: { input: 30, output: 12 } });
    const recorded = recordedPlugin('ai-object-repair-text');
    uninstall = instrumentAiSdk(recorded.hooks);
    const repairs: string[] = [];
    const result = await generateObject({
      model: openai(packages, fake),
      schema: recipe,
      prompt: PROMPT,
      experimental_repairText: async ({ text }) => {
        repairs.push(text);
        const { text: repaired } = await generateText({ model: packages.openai({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch })('gpt-4o-mini'), prompt: `Fix this JSON, answer with the JSON only:\n${text}` });
        return repaired;
      },
    });
    expect([result.object, repairs]).toEqual([fixed, [broken]]);
    const ends = hooksOf(recorded, 'post_llm_call');
    expect(ends.map((p) => [p.session_id.includes(':sub:'), p.assistant_response])).toEqual([
      [false, JSON.stringify(fixed)],
      [false, JSON.stringify(fixed)],
    ]);
    expect(new Set(ends.map((p) => p.session_id)).size).toBe(2);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    // Each session its own trajectory: the run's step is the model's broken text with its tokens; the repair's, its fix.
    const steps = atif.map((doc) => (doc.steps as Array<Record<string, any>>).filter((step) => step.source === 'agent').map((step) => [step.model_name, step.message, step.metrics.prompt_tokens, step.metrics.completion_tokens]));
    expect(steps.sort((a, b) => String(a[0]?.[0]).localeCompare(String(b[0]?.[0])))).toEqual([
      [['gpt-4o-2024-08-06', broken, result.usage.inputTokens, result.usage.outputTokens]],
      [['gpt-4o-mini-2024-07-18', JSON.stringify(fixed), 30, 12]],
    ]);
    await sameOnNative(recorded);
  });

  it('generateObject: a model that answered no text (the error carries the tokens it spent)', async () => {
    const fake = new FakeProvider().reply('responses', { id: 'resp-1', model: 'gpt-4o-2024-08-06', usage });
    const recorded = recordedPlugin('ai-object-no-text');
    uninstall = instrumentAiSdk(recorded.hooks);
    const error = await caught(generateObject({ model: openai(packages, fake), schema: recipe, prompt: PROMPT }));
    expect((error as Error).message).toBe('No object generated: the model did not return a response.');
    expect(hooksOf(recorded, 'api_request_error')).toEqual([]);
    await expectFailedTurn(recorded, error, '');
  });
});
