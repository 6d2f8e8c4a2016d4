/**
 * A price table nobody has to write: the prices of `@pydantic/genai-prices`
 * (an optional peer, loaded only when a `plugins.toml` asks for it) turned
 * into an inline `pricing` catalog, which both backends then price with,
 * native included.
 *
 * What carries over: per-million rates for input, output, cache reads and
 * cache writes (a model without input and output prices is left out), in
 * USD; the price in force today when a model's prices changed over time (a
 * time-of-day price is left out); tiered prices as a prompt-token schedule
 * (genai-prices applies a tier above its `start`, so the tier's inclusive
 * minimum is `start + 1`). Names: the model's id and every exact name it
 * matches; a model matched by prefix or substring in genai-prices is priced
 * under those names only (catalogs match names exactly). Cache accounting:
 * Anthropic's usage counts cache reads apart (`separate`), everyone else's
 * within the prompt (`included_in_prompt_tokens`).
 *
 * @module
 */

import type { PriceCatalog, PriceEntry, RateTier, TokenRates } from '../../formats/plugins-toml/pricing.ts';
import { normalizedModel, normalizedProvider } from '../../formats/plugins-toml/pricing.ts';

/** The package, as this module uses it. */
interface GenaiPrices {
  waitForUpdate(): Promise<GenaiProvider[] | null>;
}

export interface GenaiProvider {
  id: string;
  models: GenaiModel[];
}

export interface GenaiModel {
  id: string;
  match: Match;
  prices: Prices | { constraint?: { type: string; start_date?: string }; prices: Prices }[];
}

type Match = { or: Match[] } | { and: Match[] } | { equals: string } | Record<string, unknown>;
type Price = number | { base: number; tiers: { start: number; price: number }[] };
type Prices = Record<string, Price | undefined>;

/** The package name, for messages and `doctor`. */
export const GENAI_PRICES_PACKAGE = '@pydantic/genai-prices';

/** Thrown when the optional peer is not installed. */
export class GenaiPricesUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`the genai_prices price source needs the optional package ${GENAI_PRICES_PACKAGE}: npm install ${GENAI_PRICES_PACKAGE}`, { cause });
    this.name = 'GenaiPricesUnavailableError';
  }
}

let loading: Promise<GenaiPrices> | undefined;

/** Loads the package once; rejects with `GenaiPricesUnavailableError` when it is not installed. */
export function loadGenaiPrices(): Promise<GenaiPrices> {
  loading ??= import(GENAI_PRICES_PACKAGE).then(
    (module) => module as GenaiPrices,
    (error: unknown) => {
      loading = undefined;
      throw new GenaiPricesUnavailableError(error);
    },
  );
  return loading;
}

export interface GenaiCatalogOptions {
  /** Only these providers (genai-prices ids: `openai`, `anthropic`, `google`, ...). Default: all. */
  providers?: readonly string[];
  /** The day whose prices apply (`YYYY-MM-DD`). Default: today. */
  date?: string;
}

/** The package's prices as an inline catalog (version 1). */
export async function genaiPricesCatalog(options: GenaiCatalogOptions = {}): Promise<PriceCatalog> {
  const prices = await loadGenaiPrices();
  const providers = (await prices.waitForUpdate()) ?? [];
  return catalogFrom(providers, options);
}

/** The conversion itself (exported for tests with fixed data). */
export function catalogFrom(providers: readonly GenaiProvider[], options: GenaiCatalogOptions = {}): PriceCatalog {
  // (`GenaiProvider` is the package's provider shape, as far as prices go.)
  const wanted = options.providers === undefined ? null : new Set(options.providers.map(normalizedProvider));
  const date = options.date ?? new Date().toISOString().slice(0, 10);
  const entries: PriceEntry[] = [];
  const taken = new Set<string>();
  for (const provider of providers) {
    const providerKey = normalizedProvider(provider.id);
    if (providerKey === '' || (wanted !== null && !wanted.has(providerKey))) continue;
    for (const model of provider.models) {
      const current = pricesOn(model.prices, date);
      if (current === null) continue;
      const schedule = ratesOf(current);
      if (schedule === null) continue;
      const id = normalizedModel(model.id);
      if (id === '' || taken.has(`${providerKey}/${id}`)) continue;
      taken.add(`${providerKey}/${id}`);
      const aliases: string[] = [];
      for (const name of exactNames(model.match)) {
        const key = `${providerKey}/${normalizedModel(name)}`;
        if (normalizedModel(name) === '' || taken.has(key)) continue;
        taken.add(key);
        aliases.push(name);
      }
      const entry: PriceEntry = {
        provider: provider.id,
        model_id: model.id,
        currency: 'USD',
        unit: 'per_token',
        prompt_cache: { read_accounting: providerKey === 'anthropic' ? 'separate' : 'included_in_prompt_tokens' },
        pricing_as_of: date,
        pricing_source: `${GENAI_PRICES_PACKAGE} (https://github.com/pydantic/genai-prices)`,
      };
      if (aliases.length > 0) entry.aliases = aliases;
      if (Array.isArray(schedule)) entry.rate_schedule = { type: 'prompt_token_threshold', applies_to: 'full_request', tiers: schedule };
      else entry.rates = schedule;
      entries.push(entry);
    }
  }
  return { version: 1, entries };
}

/** The prices in force on `date`: the latest dated set that has started, or the undated one; null for time-of-day prices. */
function pricesOn(prices: GenaiModel['prices'], date: string): Prices | null {
  if (!Array.isArray(prices)) return prices;
  let chosen: Prices | null = null;
  for (const conditional of prices) {
    const constraint = conditional.constraint;
    if (constraint === undefined) chosen ??= conditional.prices;
    else if (constraint.type === 'start_date' && typeof constraint.start_date === 'string') {
      if (constraint.start_date <= date) chosen = conditional.prices;
    } else {
      return null;
    }
  }
  return chosen;
}

const KEYS = {
  input_per_million: 'input_mtok',
  output_per_million: 'output_mtok',
  cache_read_per_million: 'cache_read_mtok',
  cache_write_per_million: 'cache_write_mtok',
} as const;

/** Flat rates, or a tier list when any price is tiered; null without input and output prices. */
function ratesOf(prices: Prices): TokenRates | RateTier[] | null {
  if (prices.input_mtok === undefined || prices.output_mtok === undefined) return null;
  const starts = new Set<number>();
  for (const key of Object.values(KEYS)) {
    const price = prices[key];
    if (typeof price === 'object' && price !== null) for (const tier of price.tiers) starts.add(tier.start);
    else if (price !== undefined && !(typeof price === 'number' && Number.isFinite(price) && price >= 0)) return null;
  }
  const at = (tokens: number): TokenRates | null => {
    const out: Partial<TokenRates> = {};
    for (const [field, key] of Object.entries(KEYS) as [keyof TokenRates, string][]) {
      const price = prices[key];
      if (price === undefined) continue;
      const value = typeof price === 'number' ? price : price.tiers.reduce((current, tier) => (tokens > tier.start ? tier.price : current), price.base);
      if (!(Number.isFinite(value) && value >= 0)) return null;
      out[field] = value;
    }
    return out as TokenRates;
  };
  if (starts.size === 0) return at(0);
  const bounds = [...starts].sort((a, b) => a - b);
  const tiers: RateTier[] = [];
  let min = 0;
  for (const bound of [...bounds, Infinity]) {
    const rates = at(min);
    if (rates === null) return null;
    const tier: RateTier = { rates };
    if (min > 0) tier.min_prompt_tokens = min;
    if (bound !== Infinity) tier.max_prompt_tokens = bound;
    tiers.push(tier);
    min = bound + 1;
  }
  return tiers;
}

/** Every name a match tree accepts exactly (`equals`, under `or`). */
function exactNames(match: Match): string[] {
  if (typeof match !== 'object' || match === null) return [];
  if ('equals' in match && typeof match.equals === 'string') return [match.equals];
  if ('or' in match && Array.isArray(match.or)) return match.or.flatMap((m: Match) => exactNames(m));
  return [];
}
