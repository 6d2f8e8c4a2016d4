/**
 * The `pricing` component's cost engine: which catalog entry prices an LLM
 * call, and what the call cost, as native 0.9.2 computes it.
 *
 * Resolution, in order (the first match wins; an entry that then cannot
 * price the call gives no cost for that model, with no fall-through to a
 * later entry):
 * - the models tried are the response's `model`, then the requested one
 *   (the span's `model_name`), which is also tried when the response's
 *   model's entry cannot price the call; a response of a provider's shape
 *   has its model tried a second time first, for no provider in particular;
 * - the provider is preferred, not required: for the response's model the
 *   response says it (`responseProvider`), for the requested model the
 *   span's name does; each model is tried for that provider as given and as
 *   its last part, then (without one, for its own `prefix/`'s provider as
 *   its last part) as each suffix of its path for any provider; matching is
 *   trimmed and ASCII case-insensitive, over each entry's `model_id` and
 *   `aliases`;
 * - catalogs are searched in source order, entries in catalog order.
 *
 * Cost (`per_token` entries only): `Σ tokens × rate / 1e6` over prompt,
 * completion, cache-read and cache-write tokens; with
 * `read_accounting = "included_in_prompt_tokens"` the cache reads are taken
 * out of the prompt tokens first. The counts are the response's usage as
 * its shape states them, or by native's names (`responseCounts`). A tier schedule picks the tier by prompt
 * tokens (bounds inclusive) and applies it to the whole request. Each part
 * is rounded to 1e-12, and the total too. No cost (not zero) when: no
 * entry matches, the unit is not `per_token`, no tier covers the prompt,
 * the usage has no tokens, or cached tokens meet an entry without the rate
 * for them.
 *
 * @module
 */

import type { Json } from '../../shared/json.ts';
import { isJsonObject } from '../../shared/json.ts';
import { isNativeBlank, nativeTrim } from '../../shared/whitespace.ts';
import {
  entryModelKeys,
  normalizedModel,
  normalizedProvider,
  type PriceCatalog,
  type PriceEntry,
  type PricingSettings,
  type TokenRates,
} from '../../formats/plugins-toml/pricing.ts';
import { detectResponseSurface } from '../../formats/atif/payload/surface.ts';
import { readsAsShape, responseCounts, type RawTokenCounts } from '../../formats/usage.ts';

/** What a call cost, as native reports it. */
export interface CallCost {
  /** Undefined when some nonzero usage had no rate (native then writes no cost at all). */
  total: number | undefined;
  currency: string;
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
  /** `model_pricing` (priced here) or `provider_reported` (the response said it). */
  source: 'model_pricing' | 'provider_reported';
}

/** An LLM call as the engine reads it off its events. */
export interface PricedCall {
  /** The span's name (the provider the host named). */
  name: string;
  /** The requested model (`category_profile.model_name`). */
  requestModel: string | undefined;
  /** The recorded response (the LLM end's `data`). */
  response: Json | undefined;
}

/**
 * Whose price: an OTLP span's (and the response cache's savings), or a
 * trajectory step's. They differ only in the counts the requested model's
 * entry is given (see `costOf`).
 */
export type PriceReader = 'span' | 'trajectory';

interface LookupKey {
  provider: string | null;
  model: string;
}

/** The catalogs of one activation, ready to price calls. */
export class PriceBook {
  constructor(private readonly catalogs: readonly PriceCatalog[]) {}

  static of(settings: PricingSettings): PriceBook {
    return new PriceBook(settings.catalogs);
  }

  get empty(): boolean {
    return this.catalogs.every((catalog) => catalog.entries.length === 0);
  }

  /** The entry that prices `model` for `provider`, or undefined. */
  entryFor(provider: string | undefined, model: string): PriceEntry | undefined {
    const keys = lookupKeys(provider, model);
    for (const catalog of this.catalogs) {
      for (const key of keys) {
        const entry = catalog.entries.find((e) => matches(e, key));
        if (entry !== undefined) return entry;
      }
    }
    return undefined;
  }

  /**
   * What a recorded call cost: the response's own reported cost when it has
   * one, else the catalog's estimate; undefined when neither applies.
   */
  costOf(call: PricedCall, reader: PriceReader = 'span'): CallCost | undefined {
    const reported = reportedCost(call.response);
    if (reported !== undefined) return reported;
    const response = isJsonObject(call.response) ? call.response : undefined;
    if (response === undefined) return undefined;
    const surface = detectResponseSurface(response);
    const responseModel = typeof response.model === 'string' ? response.model : undefined;
    const counts = responseCounts(response, surface);
    if (counts === undefined) return undefined;
    // The response's model is looked up for the provider its shape names,
    // the requested one for the span's provider; the requested model is
    // tried too when the response's model finds no entry, or one that cannot
    // price the call (as native does). For that second try native's
    // trajectory also charges the counts the shape leaves unstated, by
    // native's names (a Chat Completions usage's LiteLLM cache keys); its
    // spans do not (found by probing native 0.9.2 call by call).
    const byResponse = this.priceWith(responseModel, responseProvider(surface, responseModel, call.name), counts);
    if (byResponse !== undefined) return byResponse;
    // A response of a provider's shape has its model looked up once more for no provider in
    // particular (by its own prefix, then any provider) when the provider it names finds no
    // entry that can price the call.
    if (surface !== undefined) {
      const byModel = this.priceWith(responseModel, undefined, counts);
      if (byModel !== undefined) return byModel;
    }
    const charged = reader === 'trajectory' ? (responseCounts(response, surface, 'shape-then-names') ?? counts) : counts;
    return this.priceWith(call.requestModel, call.name, charged);
  }

  /** The cost of `counts` at the entry that prices `model` for `provider`; undefined without a model, an entry, or a price. */
  private priceWith(model: string | undefined, provider: string | undefined, counts: RawTokenCounts): CallCost | undefined {
    if (model === undefined || isNativeBlank(model)) return undefined;
    const entry = this.entryFor(provider, model);
    return entry === undefined ? undefined : estimate(entry, counts);
  }

  /** The cost in USD for ATIF's `cost_usd`, or undefined (no cost, or another currency). */
  costUsd(call: PricedCall, reader: PriceReader = 'span'): number | undefined {
    const cost = this.costOf(call, reader);
    if (cost === undefined || cost.total === undefined) return undefined;
    return cost.currency.toUpperCase() === 'USD' ? cost.total : undefined;
  }
}

/** The cost the response reports itself (`usage.cost_usd`, `usage.cost`), as native keeps it; undefined when none. */
export function reportedCost(response: Json | undefined): CallCost | undefined {
  if (!isJsonObject(response)) return undefined;
  for (const key of ['usage', 'token_usage']) {
    const usage = response[key];
    if (!isJsonObject(usage)) continue;
    if (typeof usage.cost_usd === 'number') return { total: usage.cost_usd, currency: 'USD', source: 'provider_reported' };
    const cost = usage.cost;
    // Chat Completions usage may state its cost as a bare number (OpenRouter
    // does), in USD; native reads it with the usage's counts, so a usage it
    // cannot read as Chat Completions states none.
    if (typeof cost === 'number') {
      if (key === 'usage' && detectResponseSurface(response) === 'openai_chat' && readsAsShape('openai_chat', usage)) return { total: cost, currency: 'USD', source: 'provider_reported' };
      continue;
    }
    if (!isJsonObject(cost)) continue;
    const total = costTotal(cost);
    if (total === undefined) continue;
    return { total, currency: typeof cost.currency === 'string' ? cost.currency : 'USD', source: 'provider_reported' };
  }
  return undefined;
}

/** A reported cost object's total: its `total`, else the sum of the parts it states (in native's order), else undefined. */
function costTotal(cost: { [key: string]: Json }): number | undefined {
  if (typeof cost.total === 'number') return cost.total;
  let sum: number | undefined;
  for (const part of ['input', 'output', 'cache_read', 'cache_write']) {
    const value = cost[part];
    if (typeof value === 'number') sum = (sum ?? 0) + value;
  }
  return sum;
}

/** The keys a model is looked up by, in order (native's rule). */
function lookupKeys(provider: string | undefined, model: string): LookupKey[] {
  const normalized = normalizedModel(model);
  if (normalized === '') return [];
  const parts = normalized
    .split('/')
    .map(nativeTrim)
    .filter((p) => p !== '');
  const keys: LookupKey[] = [];
  const push = (key: LookupKey) => {
    if (key.model !== '' && !keys.some((k) => k.provider === key.provider && k.model === key.model)) keys.push(key);
  };
  const explicit = provider === undefined ? '' : normalizedProvider(provider);
  const terminal = parts[parts.length - 1] ?? normalized;
  if (explicit !== '') {
    push({ provider: explicit, model: normalized });
    push({ provider: explicit, model: terminal });
  } else if (parts.length > 1) {
    push({ provider: modelPrefix(model)!, model: terminal });
  }
  for (let start = 0; start < parts.length; start++) push({ provider: null, model: parts.slice(start).join('/') });
  return keys;
}

/** A model's `provider/` prefix (all but its last part), or undefined. */
function modelPrefix(model: string): string | undefined {
  const parts = normalizedModel(model)
    .split('/')
    .map(nativeTrim)
    .filter((p) => p !== '');
  return parts.length > 1 ? parts.slice(0, -1).join('/') : undefined;
}

/**
 * The provider a response's model is looked up for: a response of a
 * provider's shape names it by its model's `provider/` prefix, else by its
 * shape (`anthropic` for Messages, `openai` for Chat Completions and
 * Responses); a response of no known shape leaves it to the span.
 */
function responseProvider(surface: ReturnType<typeof detectResponseSurface>, model: string | undefined, span: string): string {
  if (surface === undefined) return span;
  return (model === undefined ? undefined : modelPrefix(model)) ?? (surface === 'anthropic_messages' ? 'anthropic' : 'openai');
}

function matches(entry: PriceEntry, key: LookupKey): boolean {
  if (key.provider !== null && normalizedProvider(entry.provider) !== key.provider) return false;
  return entryModelKeys(entry).includes(key.model);
}

/** native's rounding of a cost amount: to 1e-12. */
function round(cost: number): number {
  return Math.round(cost * 1e12) / 1e12;
}

function part(tokens: number, perMillion: number): number | undefined {
  return tokens > 0 ? round((tokens * perMillion) / 1_000_000) : undefined;
}

/** The entry's estimate for the counts; undefined where native writes no cost. */
export function estimate(entry: PriceEntry, counts: RawTokenCounts): CallCost | undefined {
  if ((entry.unit ?? 'per_token') !== 'per_token') return undefined;
  const prompt = counts.input ?? 0;
  const completion = counts.output ?? 0;
  const cacheRead = counts.cacheRead ?? 0;
  const cacheWrite = counts.cacheWrite ?? 0;
  const rates = ratesFor(entry, counts);
  if (rates === undefined) return undefined;
  if (prompt === 0 && completion === 0 && cacheRead === 0 && cacheWrite === 0) return undefined;
  const billablePrompt = entry.prompt_cache.read_accounting === 'included_in_prompt_tokens' ? Math.max(0, prompt - cacheRead) : prompt;
  const input = part(billablePrompt, rates.input_per_million);
  const output = part(completion, rates.output_per_million);
  const read = rates.cache_read_per_million == null ? undefined : part(cacheRead, rates.cache_read_per_million);
  const write = rates.cache_write_per_million == null ? undefined : part(cacheWrite, rates.cache_write_per_million);
  const unpriced = (cacheRead > 0 && rates.cache_read_per_million == null) || (cacheWrite > 0 && rates.cache_write_per_million == null);
  const sum = (input ?? 0) + (output ?? 0) + (read ?? 0) + (write ?? 0);
  const cost: CallCost = { total: unpriced ? undefined : round(sum), currency: entry.currency ?? 'USD', source: 'model_pricing' };
  if (input !== undefined) cost.input = input;
  if (output !== undefined) cost.output = output;
  if (read !== undefined) cost.cacheRead = read;
  if (write !== undefined) cost.cacheWrite = write;
  return cost;
}

function ratesFor(entry: PriceEntry, counts: RawTokenCounts): TokenRates | undefined {
  const schedule = entry.rate_schedule;
  if (schedule != null) {
    if ((schedule.applies_to ?? 'full_request') !== 'full_request') return undefined;
    const prompt = counts.input;
    if (prompt === undefined) return undefined;
    return schedule.tiers.find((tier) => (tier.min_prompt_tokens == null || prompt >= tier.min_prompt_tokens) && (tier.max_prompt_tokens == null || prompt <= tier.max_prompt_tokens))?.rates;
  }
  return entry.rates ?? undefined;
}
