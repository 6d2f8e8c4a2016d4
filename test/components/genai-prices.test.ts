// The genai_prices price source: @pydantic/genai-prices (an optional peer)
// turned into an inline catalog the plugin hands to either backend, so
// native and the memory relay price with the same table, and that table
// agrees with the library's own calculation.
import { describe, expect, it } from 'vitest';
import type { Json } from '../../src/shared/json.ts';
import { calcPrice } from '@pydantic/genai-prices';
import { catalogFrom, genaiPricesCatalog } from '../../src/components/pricing/genai-prices.ts';
import { PriceBook } from '../../src/components/pricing/price-book.ts';
import { validatePricing } from '../../src/formats/plugins-toml/pricing.ts';
import { FILE_BACKENDS } from '../contract/backends.ts';
import { runComponents, type Script } from '../support/component-run.ts';
import { nativePlugin } from '../support/native-driver.ts';

const chat = (model: string, usage: Record<string, number | Record<string, number>>): Json => ({ id: 'r', object: 'chat.completion', model, choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage });

describe('genai-prices as a pricing catalog', () => {
  it('is a catalog both validators accept, for every provider the library has', async () => {
    const catalog = await genaiPricesCatalog({ date: '2026-06-01' });
    expect(catalog.entries.length).toBeGreaterThan(500);
    const config = { sources: [{ type: 'inline', catalog }] };
    expect(validatePricing(config as never).diagnostics).toEqual([]);
    if (nativePlugin !== null) expect(nativePlugin.validate({ version: 1, components: [{ kind: 'pricing', config }] }).config.diagnostics).toEqual([]);
  });

  it('prices what the library prices (OpenAI chat usage with cache reads)', async () => {
    const book = PriceBook.of({ catalogs: [await genaiPricesCatalog({ providers: ['openai'] })] });
    for (const model of ['gpt-4o-mini', 'gpt-4o-mini-2024-07-18', 'gpt-4o']) {
      const usage = { prompt_tokens: 12000, completion_tokens: 700, prompt_tokens_details: { cached_tokens: 4000 } };
      const ours = book.costUsd({ name: 'openai', requestModel: model, response: chat(model, usage) });
      const theirs = calcPrice({ input_tokens: 12000, cache_read_tokens: 4000, output_tokens: 700 }, model, { providerId: 'openai' });
      expect(theirs).not.toBeNull();
      expect(ours).toBeCloseTo(theirs!.total_price, 10);
    }
  });

  it('turns tiered, dated and prefix-matched prices into what a catalog can say', () => {
    const catalog = catalogFrom(
      [
        {
          id: 'acme',
          models: [
            { id: 'flat', match: { or: [{ equals: 'flat' }, { equals: 'flat-2026' }, { starts_with: 'flat-' }] }, prices: { input_mtok: 1, output_mtok: 2, cache_read_mtok: 0.1 } },
            { id: 'tiered', match: { equals: 'tiered' }, prices: { input_mtok: { base: 1, tiers: [{ start: 1000, price: 2 }] }, output_mtok: 4 } },
            {
              id: 'dated',
              match: { equals: 'dated' },
              prices: [
                { prices: { input_mtok: 9, output_mtok: 9 } },
                { constraint: { type: 'start_date', start_date: '2026-01-01' }, prices: { input_mtok: 3, output_mtok: 3 } },
                { constraint: { type: 'start_date', start_date: '2027-01-01' }, prices: { input_mtok: 1, output_mtok: 1 } },
              ],
            },
            { id: 'night', match: { equals: 'night' }, prices: [{ constraint: { type: 'time_of_date' }, prices: { input_mtok: 1, output_mtok: 1 } }] },
            { id: 'images-only', match: { equals: 'images-only' }, prices: { input_mtok: 1 } },
          ],
        },
      ],
      { date: '2026-06-01' },
    );
    expect(catalog.entries.map((e) => e.model_id)).toEqual(['flat', 'tiered', 'dated']);
    expect(catalog.entries[0]).toMatchObject({ aliases: ['flat-2026'], rates: { input_per_million: 1, output_per_million: 2, cache_read_per_million: 0.1 } });
    expect(catalog.entries[1]!.rate_schedule).toEqual({
      type: 'prompt_token_threshold',
      applies_to: 'full_request',
      tiers: [
        { max_prompt_tokens: 1000, rates: { input_per_million: 1, output_per_million: 4 } },
        { min_prompt_tokens: 1001, rates: { input_per_million: 2, output_per_million: 4 } },
      ],
    });
    expect(catalog.entries[2]!.rates).toEqual({ input_per_million: 3, output_per_million: 3 });
  });
});

describe('the genai_prices source in plugins.toml', () => {
  const components = ['[[components]]', 'kind = "pricing"', '[[components.config.sources]]', 'type = "genai_prices"', 'providers = ["openai"]', ''].join('\n');
  const script: Script = ({ hooks }) => {
    hooks.emit('on_session_start', { session_id: 's', model: 'gpt-4o-mini' } as never);
    hooks.emit('pre_api_request', { session_id: 's', api_request_id: 'a', model: 'gpt-4o-mini', provider: 'openai', request: { body: { messages: [] } } } as never);
    hooks.emit('post_api_request', { session_id: 's', api_request_id: 'a', model: 'gpt-4o-mini', provider: 'openai', response: chat('gpt-4o-mini', { prompt_tokens: 1000, completion_tokens: 100 }) } as never);
    hooks.emit('on_session_finalize', { session_id: 's' } as never);
  };
  for (const backend of FILE_BACKENDS) {
    it.skipIf(!backend.available)(`${backend.name}: prices the plugin-managed trajectory, the OTLP span and the plugin's own trajectory with the library's prices`, async () => {
      const run = await runComponents(backend.create(), { components, script, otlp: ['full'], settingsAtif: true });
      expect(run.problems).toEqual([]);
      const expected = calcPrice({ input_tokens: 1000, output_tokens: 100 }, 'gpt-4o-mini', { providerId: 'openai' })!.total_price;
      const costOf = (t: { steps: { source: string; metrics?: { cost_usd?: number } }[] }) => t.steps.find((s) => s.source === 'agent')?.metrics?.cost_usd;
      expect(costOf([...run.trajectories.values()][0]!)).toBeCloseTo(expected, 12);
      expect(run.spans.full!.find((s) => s.attributes['nemo_relay.llm.cost.total'] !== undefined)?.attributes['nemo_relay.llm.cost.total']).toBeCloseTo(expected, 12);
    });
  }
});
