// What a ChatAnthropic agent with prompt caching costs and counts when the LangChain adapter records it: a real
// createAgent over the real @langchain/anthropic client against Anthropic's Messages wire (cache writes on the first
// call, reads on the second), recorded once, then replayed through the plugin on each backend. LangChain's
// `usage_metadata` counts the cache in its `input_tokens`; the adapter records each call's usage as Anthropic sent it,
// so an Anthropic entry at list prices with `read_accounting = "separate"` (and the genai_prices source's) comes to
// Anthropic's bill, and native's `atif` component counts 1,410 prompt tokens where it counted 2,626.
import { expect, it } from 'vitest';
import { ChatAnthropic } from '@langchain/anthropic';
import { createAgent } from 'langchain';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { anthropicMessage, scriptedFetch } from '../support/provider-wire.ts';
import { expectAnthropicBill } from './anthropic-pricing-checks.ts';
import { getWeather, reported } from './langchain-checks.ts';
import { recordedPlugin } from './support.ts';

const CLAUDE = 'claude-sonnet-4-5-20250929';

it('a ChatAnthropic agent with cache reads and writes is recorded as Anthropic counts it: list prices come to its bill, and both backends count its prompt once', async () => {
  const { fetch } = scriptedFetch([
    anthropicMessage({ id: 'msg_01Write', model: CLAUDE, content: [{ type: 'text', text: 'Let me check.' }, { type: 'tool_use', id: 'toolu_01Weather', name: 'get_weather', input: { city: 'Paris' } }], usage: { input_tokens: 270, output_tokens: 40, cache_creation_input_tokens: 3000, cache_read_input_tokens: 0 } }),
    anthropicMessage({ id: 'msg_02Read', model: CLAUDE, content: [{ type: 'text', text: 'It is sunny and 21C in Paris.' }], usage: { input_tokens: 194, output_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 1216 } }),
  ]);
  const recorded = recordedPlugin('lc-anthropic-cache-pricing');
  const model = new ChatAnthropic({ model: 'claude-sonnet-4-5', apiKey: 'sk-ant-test', maxRetries: 0, clientOptions: { fetch } });
  const agent = createAgent({ model, tools: [getWeather] });
  const result = await agent.invoke({ messages: [{ role: 'user', content: 'What is the weather in Paris?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
  await recorded.finish();
  // LangChain's own counts: input (the cache in it), output, total.
  expect(reported(result.messages)).toEqual([
    [3270, 40, 3310],
    [1410, 12, 1422],
  ]);
  // What the hooks record: the Messages API's own usage, its input without the cache (and LangChain's total beside it).
  expect(recorded.log.filter((entry) => entry.hook === 'post_api_request').map((entry) => (entry.payload as { usage: unknown }).usage)).toEqual([
    { input_tokens: 270, cache_read_input_tokens: 0, cache_creation_input_tokens: 3000, output_tokens: 40, total_tokens: 3310 },
    { input_tokens: 194, cache_read_input_tokens: 1216, output_tokens: 12, total_tokens: 1422 },
  ]);
  await expectAnthropicBill(recorded, [
    { input: 270, read: 0, write: 3000, output: 40 },
    { input: 194, read: 1216, write: 0, output: 12 },
  ]);
});
