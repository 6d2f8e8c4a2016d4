// A Claude call's recorded hooks, replayed through the plugin with an Anthropic price entry on each backend: what the
// AI SDK and LangChain adapters' Claude calls must cost and count (they record the usage as Anthropic sent it).
import { expect } from 'vitest';
import { FILE_BACKENDS } from '../contract/backends.ts';
import { runComponents } from '../support/component-run.ts';
import type { Recorded } from './support.ts';

/** One pricing component with Claude Sonnet 4.5 at Anthropic's list prices, as its pricing page states them. */
const LIST_PRICES = [
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
  'rates = { input_per_million = 3.0, output_per_million = 15.0, cache_read_per_million = 0.3, cache_write_per_million = 3.75 }',
  'prompt_cache = { read_accounting = "separate" }',
  '',
].join('\n');

/** The genai_prices source's Anthropic entries (also `separate`, at list prices). */
const GENAI_PRICES = ['[[components]]', 'kind = "pricing"', '[[components.config.sources]]', 'type = "genai_prices"', 'providers = ["anthropic"]', ''].join('\n');

/** A Claude call's counts as Anthropic states them: `input` without the cache. */
export interface ClaudeCall {
  input: number;
  read: number;
  write: number;
  output: number;
}

/** Anthropic's bill for a call, per million tokens at Sonnet 4.5's list prices, rounded as the price book rounds. */
export function billed(call: ClaudeCall): number {
  return Math.round(((call.input * 3 + call.read * 0.3 + call.write * 3.75 + call.output * 15) / 1e6) * 1e12) / 1e12;
}

/**
 * Replays `recorded` through the plugin on each backend, priced by the list-price entry and by the genai_prices
 * source: the plugin-managed trajectory (native's `atif` component on native) counts each call's prompt with its
 * cache once, `cached_tokens` its reads and writes, and costs each call what Anthropic bills. Memory's OTLP spans count
 * the same prompt, cache and output.
 */
export async function expectAnthropicBill(recorded: Recorded, calls: readonly ClaudeCall[]): Promise<void> {
  const bill = calls.map(billed);
  const prompts = calls.map((call) => call.input + call.read + call.write);
  for (const backend of FILE_BACKENDS.filter((candidate) => candidate.available)) {
    for (const components of [LIST_PRICES, GENAI_PRICES]) {
      const run = await runComponents(backend.create(), {
        components,
        otlp: ['gen_ai', 'openinference'],
        script: ({ hooks }) => {
          for (const entry of recorded.log) hooks.emit(entry.hook as never, structuredClone(entry.payload) as never);
        },
      });
      expect(run.problems, backend.name).toEqual([]);
      expect(run.trajectories.size, backend.name).toBe(1);
      const doc = [...run.trajectories.values()][0]!;
      const metrics = doc.steps.filter((step) => step.metrics !== undefined).map((step) => step.metrics!);
      expect(
        metrics.map((m) => [m.prompt_tokens, m.cached_tokens, m.completion_tokens, m.cost_usd]),
        backend.name,
      ).toEqual(calls.map((call, index) => [prompts[index], call.read + call.write, call.output, bill[index]]));
      expect(doc.final_metrics?.total_prompt_tokens, backend.name).toBe(prompts.reduce((sum, prompt) => sum + prompt, 0));
      expect(doc.final_metrics?.total_cost_usd, backend.name).toBeCloseTo(bill.reduce((sum, cost) => sum + cost, 0), 12);
      if (backend.name !== 'memory') continue;
      const llm = (type: 'gen_ai' | 'openinference', keys: string[]) => run.spans[type]!.filter((span) => span.attributes[keys[0]!] !== undefined).map((span) => keys.map((key) => span.attributes[key]));
      // A call that wrote nothing to the cache states no write (the recorded usage leaves a zero write out).
      const written = (call: ClaudeCall) => (call.write === 0 ? undefined : call.write);
      expect(llm('gen_ai', ['gen_ai.usage.input_tokens', 'gen_ai.usage.cache_read.input_tokens', 'gen_ai.usage.cache_write.input_tokens', 'gen_ai.usage.output_tokens'])).toEqual(
        calls.map((call, index) => [prompts[index], call.read, written(call), call.output]),
      );
      expect(llm('openinference', ['llm.token_count.prompt', 'llm.token_count.prompt_details.cache_read', 'llm.token_count.prompt_details.cache_write', 'llm.token_count.completion', 'llm.token_count.total'])).toEqual(
        calls.map((call, index) => [prompts[index], call.read, written(call), call.output, prompts[index]! + call.output]),
      );
    }
  }
}
