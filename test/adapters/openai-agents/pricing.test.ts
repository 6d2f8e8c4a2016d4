// Pricing an Agents SDK program with a plugins.toml catalog, as docs/operators/pricing.md configures it: an entry
// named after the alias the program asks for (`gpt-4o`) prices a call through the requested model, which an
// OpenAIResponsesModel names; an OpenAIChatCompletionsModel object keeps its model private, so its calls are priced
// only by the snapshot the API answered with (`gpt-4o-2025-04-14`), which the entry must list among its aliases.
// Driven by the real `openai` client against a fake fetch, on both backends.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, Runner } from '@openai/agents';
import { FILE_BACKENDS } from '../../contract/backends.ts';
import { expectNothingLost, recordedPlugin } from '../support.ts';
import { agentSteps, instrumentEachTest, onlyTrajectory, sdkTotals, tokenTotals, useTracing, weatherTool } from './support.ts';
import { dated, FakeOpenAI } from './wire.ts';

const instrument = instrumentEachTest();
const getWeather = weatherTool();

/** A pricing-only document with gpt-4o at $2.50 / $10 per million, cache reads $1.25, and the given aliases. */
function pricingToml(aliases: string[]): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'nrh-agents-pricing-')), 'plugins.toml');
  fs.writeFileSync(
    file,
    [
      'version = 1',
      '[[components]]',
      'kind = "pricing"',
      '[[components.config.sources]]',
      'type = "inline"',
      '[components.config.sources.catalog]',
      'version = 1',
      '[[components.config.sources.catalog.entries]]',
      'provider = "openai"',
      'model_id = "gpt-4o"',
      `aliases = ${JSON.stringify(aliases)}`,
      'pricing_as_of = "2026-06-01"',
      'pricing_source = "https://openai.com/api/pricing/"',
      'rates = { input_per_million = 2.5, output_per_million = 10.0, cache_read_per_million = 1.25 }',
      'prompt_cache = { read_accounting = "included_in_prompt_tokens" }',
      '',
    ].join('\n'),
  );
  return file;
}

const USAGE = [
  { input: 120, output: 9, cached: 64 },
  { input: 200, output: 6, cached: 128 },
];
/** What the list prices give for each call. */
const LIST = USAGE.map((u) => ((u.input - u.cached) * 2.5 + u.cached * 1.25 + u.output * 10) / 1e6);

const MODELS = {
  'an OpenAIResponsesModel': (api: FakeOpenAI) => new OpenAIResponsesModel(api.client(), 'gpt-4o'),
  'an OpenAIChatCompletionsModel': (api: FakeOpenAI) => new OpenAIChatCompletionsModel(api.client(), 'gpt-4o'),
};

describe('OpenAI Agents SDK calls priced by a plugins.toml catalog', () => {
  for (const backend of FILE_BACKENDS) {
    for (const [how, model] of Object.entries(MODELS)) {
      for (const aliases of [[], [dated('gpt-4o')]]) {
        const chat = how.includes('Chat');
        const priced = !chat || aliases.length > 0;
        it.skipIf(!backend.available)(`${backend.name}: ${how}, the entry ${aliases.length ? 'listing the answered snapshot' : 'of the alias alone'}: ${priced ? 'each call at list price' : 'no cost'}`, async () => {
          useTracing('tracing on');
          const api = new FakeOpenAI({
            'gpt-4o': [
              { calls: [{ id: 'call_oslo', name: 'get_weather', args: { city: 'Oslo' } }], usage: USAGE[0] },
              { text: 'Oslo is sunny.', usage: USAGE[1] },
            ],
          });
          const recorded = recordedPlugin('agents-pricing', backend.name as 'memory' | 'native', { pluginsTomlPath: pricingToml(aliases) });
          instrument(recorded.hooks);
          const agent = new Agent({ name: 'Weather', instructions: 'Answer about the weather.', model: model(api), tools: [getWeather] });
          const result = await new Runner({ groupId: 'priced' }).run(agent, 'Weather in Oslo?');
          expect(result.finalOutput).toBe('Oslo is sunny.');

          const { atif, atof, counters } = await recorded.finish();
          expectNothingLost(counters);
          const doc = onlyTrajectory(atif);
          expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage));
          const costs = agentSteps(doc).map((step) => step.metrics?.cost_usd);
          if (priced) {
            costs.forEach((cost, i) => expect(cost).toBeCloseTo(LIST[i]!, 12));
            expect(doc.final_metrics?.total_cost_usd).toBeCloseTo(LIST[0]! + LIST[1]!, 12);
          } else {
            expect(costs).toEqual([undefined, undefined]);
          }
          // The requests name the model only where the SDK's model object exposes it.
          const asked = atof.filter((event) => event.category === 'llm' && event.scope_category === 'start').map((event) => (event.category_profile as { model_name?: string } | null)?.model_name);
          expect(asked).toEqual(chat ? [undefined, undefined] : ['gpt-4o', 'gpt-4o']);
        }, 30_000);
      }
    }
  }
});
