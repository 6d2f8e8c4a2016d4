/**
 * The `pricing` component's configuration: ordered catalog sources (inline
 * or a JSON file), validated with native's messages (every problem is one
 * `pricing.invalid_config` error prefixed `invalid model pricing config: `,
 * the first one found, as native reports it), and the catalogs the cost
 * engine (`src/components/pricing/`) resolves models against.
 *
 * @module
 */

import { readFileSync } from 'node:fs';
import type { JsonObject } from '../../shared/json.ts';
import { isJsonObject } from '../../shared/json.ts';
import { isNativeBlank, nativeTrim, trimWhere } from '../../shared/whitespace.ts';
import type { ConfigDiagnostic } from './diagnostic.ts';
import { F64, STRING, U32, U64, checkShape, optional, type Schema } from './shape.ts';

const PRICING = 'pricing';

/** Token rates, per million tokens. */
export interface TokenRates {
  input_per_million: number;
  output_per_million: number;
  cache_read_per_million?: number;
  cache_write_per_million?: number;
}

export interface RateTier {
  min_prompt_tokens?: number;
  max_prompt_tokens?: number;
  rates: TokenRates;
}

/** One catalog entry, as the catalog spells it. */
export interface PriceEntry {
  provider: string;
  model_id: string;
  aliases?: string[];
  currency?: string;
  unit?: 'per_token' | 'per_request' | 'per_second' | 'gpu_hour';
  rates?: TokenRates;
  rate_schedule?: { type: 'prompt_token_threshold'; applies_to?: 'full_request'; tiers: RateTier[] };
  prompt_cache: { read_accounting: 'included_in_prompt_tokens' | 'separate' };
  pricing_as_of: string;
  pricing_source: string;
}

/** A catalog: version 1 and its entries. */
export interface PriceCatalog {
  version: number;
  entries: PriceEntry[];
}

/** What an activation prices with: the catalogs, in source order. */
export interface PricingSettings {
  catalogs: PriceCatalog[];
}

export interface PricingValidation {
  diagnostics: ConfigDiagnostic[];
  settings: PricingSettings | null;
}

const RATES: Schema = {
  t: 'struct',
  name: 'TokenPricingRates',
  deny: true,
  fields: { input_per_million: F64, output_per_million: F64, cache_read_per_million: optional(F64), cache_write_per_million: optional(F64) },
  required: ['input_per_million', 'output_per_million'],
};

const TIER: Schema = {
  t: 'struct',
  name: 'TokenRateTier',
  deny: true,
  fields: { min_prompt_tokens: optional(U64), max_prompt_tokens: optional(U64), rates: RATES },
  required: ['rates'],
};

const ENTRY: Schema = {
  t: 'struct',
  name: 'ModelPricing',
  deny: true,
  fields: {
    provider: STRING,
    model_id: STRING,
    aliases: { t: 'seq', of: STRING },
    currency: STRING,
    unit: { t: 'enum', variants: ['per_token', 'per_request', 'per_second', 'gpu_hour'] },
    rates: optional(RATES),
    rate_schedule: optional({
      t: 'tagged',
      name: 'TokenRateSchedule',
      variants: {
        prompt_token_threshold: {
          t: 'struct',
          name: 'PromptTokenThreshold',
          deny: true,
          fields: { applies_to: { t: 'enum', variants: ['full_request'] }, tiers: { t: 'seq', of: TIER } },
          required: ['tiers'],
        },
      },
    }),
    prompt_cache: {
      t: 'struct',
      name: 'PromptCachePricing',
      deny: true,
      fields: { read_accounting: { t: 'enum', variants: ['included_in_prompt_tokens', 'separate'] } },
      required: ['read_accounting'],
    },
    pricing_as_of: STRING,
    pricing_source: STRING,
  },
  required: ['provider', 'model_id', 'prompt_cache', 'pricing_as_of', 'pricing_source'],
};

const CATALOG: Schema = {
  t: 'struct',
  name: 'PricingCatalog',
  deny: true,
  fields: { version: U32, entries: { t: 'seq', of: ENTRY } },
  required: ['version', 'entries'],
};

const CONFIG: Schema = {
  t: 'struct',
  name: 'PricingConfig',
  deny: true,
  fields: {
    sources: {
      t: 'seq',
      of: {
        t: 'tagged',
        name: 'PricingSourceConfig',
        variants: {
          inline: { t: 'struct', name: 'Inline', deny: true, fields: { catalog: CATALOG }, required: ['catalog'] },
          file: { t: 'struct', name: 'File', deny: true, fields: { path: STRING }, required: ['path'] },
        },
      },
    },
  },
};

/** Validates a `pricing` component's config and loads its file catalogs. */
export function validatePricing(config: JsonObject): PricingValidation {
  const fail = (problem: string): PricingValidation => ({
    diagnostics: [{ level: 'error', code: 'pricing.invalid_config', component: PRICING, message: `invalid model pricing config: ${problem}` }],
    settings: null,
  });
  const shape = checkShape(config, CONFIG);
  if (shape !== null) return fail(shape);
  const catalogs: PriceCatalog[] = [];
  for (const source of (config.sources ?? []) as JsonObject[]) {
    let catalog: PriceCatalog;
    if (source.type === 'inline') {
      catalog = source.catalog as unknown as PriceCatalog;
    } else {
      const file = source.path as string;
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch (error) {
        return fail(`could not read model pricing catalog file '${file}': ${ioReason(error)}`);
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        return fail(`invalid model pricing catalog JSON: ${error instanceof Error ? error.message : String(error)}`);
      }
      const fileShape = checkShape(parsed, CATALOG);
      if (fileShape !== null) return fail(`invalid model pricing catalog JSON: ${fileShape}`);
      catalog = parsed as PriceCatalog;
    }
    const problem = catalogProblem(catalog);
    if (problem !== null) return fail(problem);
    catalogs.push(catalog);
  }
  return { diagnostics: [], settings: { catalogs } };
}

/** How native's I/O error reads (`No such file or directory (os error 2)`). */
function ioReason(error: unknown): string {
  const code = (error as { code?: string }).code;
  const errno = (error as { errno?: number }).errno;
  const text: Record<string, string> = {
    ENOENT: 'No such file or directory',
    EACCES: 'Permission denied',
    EISDIR: 'Is a directory',
    ENOTDIR: 'Not a directory',
  };
  if (code !== undefined && text[code] !== undefined) return `${text[code]} (os error ${Math.abs(errno ?? 0)})`;
  return error instanceof Error ? error.message : String(error);
}

/** A catalog's semantic problem, in native's words, or null. */
function catalogProblem(catalog: PriceCatalog): string | null {
  if (catalog.version !== 1) return `unsupported model pricing catalog version ${catalog.version}`;
  const seen = new Set<string>();
  for (const [index, entry] of catalog.entries.entries()) {
    const problem = entryProblem(entry, index);
    if (problem !== null) return problem;
    for (const key of providerModelKeys(entry)) {
      if (seen.has(key)) return `duplicate model pricing alias '${key}'`;
      seen.add(key);
    }
  }
  return null;
}

function entryProblem(entry: PriceEntry, index: number): string | null {
  const empty = (field: string) => `model pricing entry ${index} has empty ${field}`;
  for (const [field, value] of [
    ['provider', entry.provider],
    ['model_id', entry.model_id],
    ['currency', entry.currency ?? 'USD'],
    ['pricing_as_of', entry.pricing_as_of],
    ['pricing_source', entry.pricing_source],
  ] as const) {
    if (isNativeBlank(value)) return empty(field);
  }
  if ((entry.unit ?? 'per_token') === 'per_token' && entry.rates == null && entry.rate_schedule == null) return empty('rates or rate_schedule');
  if (entry.rates != null) {
    const problem = ratesProblem(entry.rates, index, 'rates');
    if (problem !== null) return problem;
  }
  const schedule = entry.rate_schedule;
  if (schedule != null) {
    if (schedule.tiers.length === 0) return empty('rate_schedule.tiers');
    for (const [tierIndex, tier] of schedule.tiers.entries()) {
      if (tier.min_prompt_tokens != null && tier.max_prompt_tokens != null && tier.min_prompt_tokens > tier.max_prompt_tokens) {
        return `model pricing entry ${index} has invalid rate_schedule.tiers.prompt_tokens: ${tier.min_prompt_tokens}`;
      }
      const problem = ratesProblem(tier.rates, index, `rate_schedule.tiers[${tierIndex}].rates`);
      if (problem !== null) return problem;
    }
  }
  return null;
}

function ratesProblem(rates: TokenRates, index: number, prefix: string): string | null {
  for (const field of ['input_per_million', 'output_per_million', 'cache_read_per_million', 'cache_write_per_million'] as const) {
    const value = rates[field];
    if (value == null) continue;
    if (!Number.isFinite(value) || value < 0) return `model pricing entry ${index} has invalid ${prefix}.${field}: ${value}`;
  }
  return null;
}

/** A model name as catalogs compare it: trimmed (Rust's trim: U+0085 goes, U+FEFF stays), ASCII lower case. */
export function normalizedModel(model: string): string {
  return asciiLower(nativeTrim(model));
}

/** A provider name as catalogs compare it: trimmed (also of `/`), ASCII lower case. */
export function normalizedProvider(provider: string): string {
  return asciiLower(trimWhere(nativeTrim(provider), (unit) => unit === 0x2f));
}

function asciiLower(text: string): string {
  return text.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/** The entry's model keys: its id and aliases, normalized, empty ones left out. */
export function entryModelKeys(entry: PriceEntry): string[] {
  return [entry.model_id, ...(entry.aliases ?? [])].map(normalizedModel).filter((key) => key !== '');
}

/** `provider/model` for each of the entry's model keys: what must be unique in a catalog. */
function providerModelKeys(entry: PriceEntry): string[] {
  const provider = normalizedProvider(entry.provider);
  return entryModelKeys(entry).map((model) => `${provider}/${model}`);
}
