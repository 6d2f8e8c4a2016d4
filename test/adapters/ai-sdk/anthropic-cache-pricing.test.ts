// What a Claude tool loop with prompt caching costs when the AI SDK adapter records it and the pricing component
// prices it: the real @ai-sdk/anthropic client against Anthropic's Messages wire (cache writes on the first call,
// reads and writes on the second), recorded once, then priced on each backend. The adapters write the usage as Chat
// Completions counts it (the cache inside `prompt_tokens`), so the catalog entry docs/operators/pricing.md gives for
// Claude through an adapter must come to Anthropic's bill, and the `separate` entry at list prices charges the cache
// twice, as the page warns.
import { afterEach, expect, it } from 'vitest';
import { createAnthropic } from '@ai-sdk/anthropic';
import { generateText, stepCountIs } from 'ai';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { FILE_BACKENDS } from '../../contract/backends.ts';
import { runComponents } from '../../support/component-run.ts';
import { recordedPlugin } from '../support.ts';
import { weather } from './weather-tool.ts';
import { FakeProvider } from './wire.ts';

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

/** One pricing component with one Claude Sonnet 4.5 entry. */
function pricing(rates: string, accounting: string): string {
  return [
    '[[components]]',
    'kind = "pricing"',
    '[components.config]',
    '[[components.config.sources]]',
    'type = "inline"',
    '[components.config.sources.catalog]',
    'version = 1',
    '[[components.config.sources.catalog.entries]]',
    'provider = "anthropic"',
    'model_id = "claude-sonnet-4-5"',
    'pricing_as_of = "2026-06-01"',
    'pricing_source = "https://www.anthropic.com/pricing"',
    `rates = { ${rates} }`,
    `prompt_cache = { read_accounting = "${accounting}" }`,
    '',
  ].join('\n');
}

/** Anthropic's bill for a call, per million tokens at Sonnet 4.5's list prices, rounded as the price book rounds. */
function billed(usage: { input: number; read: number; write: number; output: number }): number {
  return Math.round(((usage.input * 3 + usage.read * 0.3 + usage.write * 3.75 + usage.output * 15) / 1e6) * 1e12) / 1e12;
}

it('a Claude tool loop with cache reads and writes costs what Anthropic bills, with the entry the pricing page gives for adapters', async () => {
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
  // The SDK's own counts: the cache inside inputTokens, as the adapters write prompt_tokens.
  expect(result.steps.map((step) => [step.usage.inputTokens, step.usage.inputTokenDetails.cacheReadTokens, step.usage.inputTokenDetails.cacheWriteTokens])).toEqual([
    [1825, 0, 1800],
    [2040, 1800, 200],
  ]);
  const bill = [billed({ input: 25, read: 0, write: 1800, output: 120 }), billed({ input: 40, read: 1800, write: 200, output: 85 })];
  expect(bill).toEqual([0.008625, 0.002685]);

  // The recorded hooks, replayed through a plugin with the pricing component on each backend.
  const costs = async (backend: (typeof FILE_BACKENDS)[number], components: string) => {
    const run = await runComponents(backend.create(), {
      components,
      script: ({ hooks }) => {
        for (const entry of recorded.log) hooks.emit(entry.hook as never, structuredClone(entry.payload) as never);
      },
    });
    expect(run.problems).toEqual([]);
    const doc = [...run.trajectories.values()][0]!;
    return { steps: doc.steps.filter((step) => step.metrics !== undefined).map((step) => step.metrics!.cost_usd), total: doc.final_metrics?.total_cost_usd };
  };
  const forAdapters = pricing('input_per_million = 3.0, output_per_million = 15.0, cache_read_per_million = 0.3, cache_write_per_million = 0.75', 'included_in_prompt_tokens');
  const listSeparate = pricing('input_per_million = 3.0, output_per_million = 15.0, cache_read_per_million = 0.3, cache_write_per_million = 3.75', 'separate');
  for (const backend of FILE_BACKENDS.filter((candidate) => candidate.available)) {
    const priced = await costs(backend, forAdapters);
    expect(priced.steps, backend.name).toEqual(bill);
    expect(priced.total, backend.name).toBeCloseTo(bill[0]! + bill[1]!, 12);
    // The list prices with "separate": the reads and writes in prompt_tokens are charged as input too.
    expect((await costs(backend, listSeparate)).steps, backend.name).toEqual([0.014025, 0.008685]);
  }
});
