// A streamed run whose Responses stream ends in `response.failed` after some text: the API's failed response states
// the tokens it spent, the SDK counts them in `result.state.usage` before it throws, and the trajectory's failed step
// must carry the same tokens (and what they cost), so a run's totals are what the program was billed.
import { Agent, OpenAIResponsesModel, run } from '@openai/agents';
import OpenAI from 'openai';
import { expect, it } from 'vitest';
import { openAiResponseStream, scriptedFetch } from '../../support/provider-wire.ts';
import { sameOnNative } from '../same-on-native.ts';
import { recordedPlugin, type AtifDoc } from '../support.ts';
import { agentSteps, instrumentEachTest, useTracing } from './support.ts';

const instrument = instrumentEachTest();

/** The stream of a response that fails after its first words: `response.failed` with the usage it spent. */
function failingStream(): { sse: Array<{ event?: string; data: unknown }> } {
  const whole = openAiResponseStream({ id: 'resp_fail', model: 'gpt-5-mini-2025-08-07', text: 'It is sunny in Paris today.', usage: { prompt_tokens: 900, completion_tokens: 12, cached: 512 } }).sse!;
  const firstDelta = whole.findIndex((frame) => frame.event === 'response.output_text.delta');
  const usage = { input_tokens: 900, input_tokens_details: { cached_tokens: 512 }, output_tokens: 12, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 912 };
  const failed = { id: 'resp_fail', object: 'response', status: 'failed', model: 'gpt-5-mini-2025-08-07', output: [], error: { code: 'server_error', message: 'The model failed mid-answer.' }, incomplete_details: null, usage };
  return { sse: [...whole.slice(0, firstDelta + 1), { event: 'response.failed', data: { type: 'response.failed', sequence_number: firstDelta + 1, response: failed } }] };
}

it('a streamed Responses call that ends in response.failed keeps the tokens the SDK counted', async () => {
  useTracing('tracing off');
  const wire = scriptedFetch([failingStream()]);
  const client = new OpenAI({ apiKey: 'sk-test', fetch: wire.fetch, maxRetries: 0 });
  const recorded = recordedPlugin('agents-failed-stream-usage');
  instrument(recorded.hooks);
  const agent = new Agent({ name: 'Weather Agent', instructions: 'Answer briefly.', model: new OpenAIResponsesModel(client, 'gpt-5-mini') });
  const streamed = await run(agent, 'Weather in Paris?', { stream: true });
  let thrown: unknown;
  try {
    for await (const _event of streamed);
    await streamed.completed;
  } catch (error) {
    thrown = error;
  }
  expect(String(thrown)).toContain('response.failed');
  // What the SDK counted for the failed response.
  const usage = streamed.state.usage;
  expect([usage.inputTokens, usage.outputTokens, usage.inputTokensDetails.map((details) => details.cached_tokens)]).toEqual([900, 12, [512]]);
  const { atif } = await recorded.finish();
  const doc = atif[0] as AtifDoc;
  const [step] = agentSteps(doc);
  expect(step!.message).toBe('It is s');
  expect(step!.metrics).toMatchObject({ prompt_tokens: 900, completion_tokens: 12, cached_tokens: 512 });
  expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: 900, total_completion_tokens: 12, total_cached_tokens: 512 });
  await sameOnNative(recorded);
});
