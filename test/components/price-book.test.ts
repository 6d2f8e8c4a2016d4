// The cost engine's reading of usage, where native's pricing and its other
// readers part ways: what each call below costs was read off native 0.9.2
// (OTLP `full`'s nemo_relay.llm.cost.total) when the random pricing
// differential (random-pricing.ts) found memory pricing it otherwise. These
// usages are not in pricing-parity.test.ts because native's trajectory or
// its openinference and gen_ai spans read them differently from ours outside
// the cost (docs/operators/pricing.md, "Differences from native").
import { describe, expect, it } from 'vitest';
import type { Json } from '../../src/shared/json.ts';
import { PriceBook } from '../../src/components/pricing/price-book.ts';
import type { PriceEntry } from '../../src/formats/plugins-toml/pricing.ts';

const entry = (provider: string, model: string, rates: PriceEntry['rates'], accounting: PriceEntry['prompt_cache']['read_accounting'] = 'included_in_prompt_tokens'): PriceEntry => ({
  provider,
  model_id: model,
  rates,
  prompt_cache: { read_accounting: accounting },
  pricing_as_of: '2026-01-01',
  pricing_source: 'test',
});

const book = new PriceBook([
  {
    version: 1,
    entries: [
      entry('openai', 'gpt-4o-mini', { input_per_million: 0.15, output_per_million: 0.6, cache_read_per_million: 0.075 }),
      entry('anthropic', 'claude-x', { input_per_million: 3, output_per_million: 15, cache_read_per_million: 0.3, cache_write_per_million: 3.75 }),
    ],
  },
]);

const chat = (model: string, usage: Json): Json => ({ id: 'r', object: 'chat.completion', model, choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage });
const responses = (model: string, usage: Json): Json => ({ id: 'r', object: 'response', status: 'completed', model, output: [], usage });
const total = (response: Json) => book.costOf({ name: 'openai', requestModel: undefined, response })?.total;

describe('PriceBook: the counts a cost takes, as native reads them', () => {
  it('takes no cache writes from an OpenAI shape (top level, LiteLLM keys or details)', () => {
    const writes: { [key: string]: Json }[] = [{ cache_write_tokens: 1000 }, { cache_creation_input_tokens: 1000 }, { prompt_tokens_details: { cache_write_tokens: 1000 } }];
    for (const usage of writes) {
      expect(total(chat('claude-x', { prompt_tokens: 1000, completion_tokens: 100, ...usage }))).toBeCloseTo(0.0045, 15);
    }
  });

  it('charges what the shape leaves out, by native’s names, only to a trajectory step priced by the requested model', () => {
    // Seeds 1063, 1075 and 2031 of the slow random pricing differential, reduced: the response's model finds no entry.
    const call = (usage: Json) => ({ name: 'openai', requestModel: 'claude-x', response: chat('nobody', usage) });
    const write = call({ prompt_tokens: 1000, completion_tokens: 100, cache_creation_input_tokens: 2000 });
    expect(book.costOf(write)?.total).toBeCloseTo(0.0045, 15);
    expect(book.costOf(write, 'trajectory')?.total).toBeCloseTo(0.012, 15);
    // A top-level cached_tokens comes before cache_read_input_tokens in native's names.
    const read = call({ prompt_tokens: 1000, completion_tokens: 100, cached_tokens: 100, cache_read_input_tokens: 400 });
    expect(book.costOf(read, 'trajectory')?.total).toBeCloseTo(0.00423, 15);
    // Priced by the response's own model, the trajectory takes the shape's fields alone, as the span does.
    expect(book.costOf({ ...write, response: chat('claude-x', { prompt_tokens: 1000, completion_tokens: 100, cache_creation_input_tokens: 2000 }) }, 'trajectory')?.total).toBeCloseTo(0.0045, 15);
  });

  it('takes cache reads only from the shape’s own field when the shape reads', () => {
    expect(total(chat('gpt-4o-mini', { prompt_tokens: 1000, completion_tokens: 100, cached_tokens: 500 }))).toBeCloseTo(0.00021, 15);
    expect(total(chat('gpt-4o-mini', { prompt_tokens: 1000, completion_tokens: 100, cache_read_input_tokens: 500 }))).toBeCloseTo(0.00021, 15);
    expect(total(responses('gpt-4o-mini', { input_tokens: 1000, output_tokens: 100, prompt_tokens_details: { cached_tokens: 500 } }))).toBeCloseTo(0.00021, 15);
  });

  it('reads a usage as its shape or not at all: no input_tokens beside completion_tokens', () => {
    expect(total(chat('gpt-4o-mini', { completion_tokens: 100, input_tokens: 1000 }))).toBeCloseTo(0.00006, 15);
    // With none of its shape's counts, native's names read it.
    expect(total(chat('gpt-4o-mini', { input_tokens: 1000, output_tokens: 100 }))).toBeCloseTo(0.00021, 15);
  });

  it('reads a usage by native’s names when a typed field of its shape has another type', () => {
    // total_tokens is typed: a string there makes the Chat Completions reading fail, and cached_tokens then counts.
    expect(total(chat('gpt-4o-mini', { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 'x', cached_tokens: 500 }))).toBeCloseTo(0.0001725, 15);
    // completion_tokens_details is not: a string there changes nothing.
    expect(total(chat('gpt-4o-mini', { prompt_tokens: 1000, completion_tokens: 100, completion_tokens_details: 'x', cached_tokens: 500 }))).toBeCloseTo(0.00021, 15);
    // A count past u32 is another type too.
    expect(total(chat('gpt-4o-mini', { prompt_tokens: 2 ** 32, completion_tokens: 100, input_tokens: 1000 }))).toBeCloseTo(0.00021, 15);
  });

  it('reads no bare-number cost from a usage Chat Completions cannot read', () => {
    expect(total(chat('gpt-4o-mini', { prompt_tokens: 1000, completion_tokens: 1.5, cost: 0.25 }))).toBeCloseTo(0.00015, 15);
    expect(total(chat('gpt-4o-mini', { prompt_tokens: 1000, completion_tokens: 100, cost: 0.25 }))).toBe(0.25);
  });
});
