// What a Claude tool loop with prompt caching costs and counts when the AI SDK adapter records it: the real
// @ai-sdk/anthropic client against Anthropic's Messages wire (cache writes on the first call, reads and writes on the
// second), recorded once, then replayed through the plugin on each backend. The adapter records each call's usage as
// Anthropic sent it (`input_tokens` without the cache), so an Anthropic entry at list prices with
// `read_accounting = "separate"` (and the genai_prices source's) comes to Anthropic's bill, and native's `atif`
// component counts the prompt once, as memory's does. Recorded in the Chat Completions shape (the cache inside
// `prompt_tokens`), the same entry charged the cache twice and native's trajectory added it to the prompt again.
import { afterEach, expect, it } from 'vitest';
import { createAnthropic } from '@ai-sdk/anthropic';
import { generateText, stepCountIs } from 'ai';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { billed, expectAnthropicBill } from '../anthropic-pricing-checks.ts';
import { recordedPlugin } from '../support.ts';
import { weather } from './weather-tool.ts';
import { FakeProvider } from './wire.ts';

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

it('a Claude tool loop with cache reads and writes is recorded as Anthropic counts it: list prices come to its bill, and both backends count its prompt once', async () => {
  const fake = new FakeProvider()
    .reply('anthropic', { id: 'msg_1', model: 'claude-sonnet-4-5-20250929', text: 'Let me check.', toolCalls: [{ id: 'toolu_1', name: 'weather', args: { city: 'Paris' } }], usage: { input: 25, cacheWrite: 1800, output: 120 } })
    .reply('anthropic', { id: 'msg_2', model: 'claude-sonnet-4-5-20250929', text: 'Sunny in Paris, 21 °C.', usage: { input: 40, cached: 1800, cacheWrite: 200, output: 85 } });
  const recorded = recordedPlugin('anthropic-cache-pricing');
  uninstall = instrumentAiSdk(recorded.hooks);
  const anthropic = createAnthropic({ apiKey: 'sk-ant-test', fetch: fake.fetch as typeof fetch });
  const result = await generateText({ model: anthropic('claude-sonnet-4-5'), prompt: 'Weather in Paris?', tools: { weather }, stopWhen: stepCountIs(5) });
  uninstall();
  uninstall = undefined;
  await recorded.finish();
  // The SDK's own counts: the cache inside inputTokens.
  const sdk = result.steps.map((step) => [step.usage.inputTokens, step.usage.inputTokenDetails.cacheReadTokens, step.usage.inputTokenDetails.cacheWriteTokens, step.usage.outputTokens]);
  expect(sdk).toEqual([
    [1825, 0, 1800, 120],
    [2040, 1800, 200, 85],
  ]);
  // What the hooks record: the Messages API's own usage, its input without the cache (and the SDK's total beside it).
  expect(recorded.log.filter((entry) => entry.hook === 'post_api_request').map((entry) => (entry.payload as { usage: unknown }).usage)).toEqual([
    { input_tokens: 25, cache_read_input_tokens: 0, cache_creation_input_tokens: 1800, output_tokens: 120, total_tokens: 1945 },
    { input_tokens: 40, cache_read_input_tokens: 1800, cache_creation_input_tokens: 200, output_tokens: 85, total_tokens: 2125 },
  ]);
  const calls = [
    { input: 25, read: 0, write: 1800, output: 120 },
    { input: 40, read: 1800, write: 200, output: 85 },
  ];
  // Anthropic's bill at list prices (docs/operators/pricing.md's example).
  expect(calls.map(billed)).toEqual([0.008625, 0.002685]);
  await expectAnthropicBill(recorded, calls);
});
