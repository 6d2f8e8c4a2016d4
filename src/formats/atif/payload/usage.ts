/**
 * Token usage and cost of a response as ATIF metrics: the counts from the
 * token table (`formats/usage.ts`), the cost, token ids and log
 * probabilities as native reads them.
 *
 * @module
 */

import type { Json } from '../../../shared/json.ts';
import { sortJson } from '../../native-text.ts';
import type { AtifMetrics } from '../types.ts';
import { type JsonMap, asArray, asF64, asObject, asString, asU64, get, has } from './access.ts';
import { readGeminiResponseUsage, readResponseUsage, type GeminiUsageReading } from '../../usage.ts';
import { decodedGeminiAnswer, detectResponseSurface, geminiResponse } from './surface.ts';

/** A cost the payload reports itself, in USD (native never estimates one without a pricing plugin). */
function manualCostUsd(object: JsonMap): number | undefined {
  const fromUsage = (usage: JsonMap | undefined): number | undefined => {
    if (usage === undefined) return undefined;
    const costUsd = asF64(get(usage, 'cost_usd'));
    if (costUsd !== undefined) return costUsd;
    const cost = asObject(get(usage, 'cost'));
    if (cost === undefined) return undefined;
    const currency = asString(get(cost, 'currency'));
    if (currency !== undefined) {
      if (currency.toUpperCase() !== 'USD') return undefined;
    } else {
      const source = get(cost, 'source');
      const normalized = source === 'provider_reported' || source === 'model_pricing';
      if (!normalized && asF64(get(cost, 'total')) === undefined) return undefined;
    }
    const total = asF64(get(cost, 'total'));
    if (total !== undefined) return total;
    let sum = 0;
    let any = false;
    for (const field of ['input', 'output', 'cache_read', 'cache_write']) {
      const value = asF64(get(cost, field));
      if (value !== undefined) {
        sum += value;
        any = true;
      }
    }
    return any ? sum : undefined;
  };
  return fromUsage(asObject(get(object, 'usage'))) ?? fromUsage(asObject(get(object, 'token_usage')));
}

const TOKEN_USAGE_KNOWN_KEYS = new Set([
  'prompt_tokens',
  'input_tokens',
  'inputTokens',
  'input',
  'completion_tokens',
  'output_tokens',
  'completionTokens',
  'outputTokens',
  'output',
  'cached_tokens',
  'cachedTokens',
  'cache_read_tokens',
  'cacheReadTokens',
  'cache_read_input_tokens',
  'cacheReadInputTokens',
  'cacheRead',
  'cache_creation_input_tokens',
  'cacheCreationInputTokens',
  'cache_write_tokens',
  'cacheWriteTokens',
  'cacheWrite',
  'cost_usd',
  'cost',
  'prompt_tokens_details',
  'input_tokens_details',
  'prompt_token_ids',
  'completion_token_ids',
  'logprobs',
]);

/**
 * Step metrics from an LLM response's `usage` / `token_usage`, counted by
 * the token table (`formats/usage.ts`): `prompt_tokens` includes cache
 * reads and writes, `cached_tokens` is reads plus writes (native's sum).
 * Unknown usage keys go to `extra`. A Gemini answer's counts are read as
 * `gemini` says (`GeminiUsageReading`).
 */
export function extractMetrics(output: Json, providerName: string, gemini: GeminiUsageReading = 'billed'): AtifMetrics | undefined {
  const object = asObject(output);
  if (object === undefined) return undefined;
  const plain = plainChatUsage(object);
  return plain !== undefined ? plainChatMetrics(plain) : generalMetrics(object, providerName, gemini);
}

/** `extractMetrics` by the general rules, for any response object (exported for the fast path's equivalence test). */
export function generalMetrics(object: JsonMap, providerName: string, gemini: GeminiUsageReading = 'billed'): AtifMetrics | undefined {
  const usage =
    geminiResponse(object) !== undefined
      ? readGeminiResponseUsage(object, decodedGeminiAnswer(object)?.usage, gemini)
      : readResponseUsage(object, { surface: detectResponseSurface(object), provider: providerName });
  const prompt = usage?.prompt;
  const completion = usage?.completion;
  const cacheRead = usage?.cacheRead;
  const cacheWrite = usage?.cacheWrite;
  const cached = cacheRead === undefined && cacheWrite === undefined ? undefined : (cacheRead ?? 0) + (cacheWrite ?? 0);
  const cost = manualCostUsd(object);

  // native: `token_usage` shadows `usage` for the id and logprob arrays (even when it is not an object).
  const rawUsage = asObject(has(object, 'token_usage') ? (object.token_usage as Json) : get(object, 'usage'));
  const promptIds = asArray(get(rawUsage, 'prompt_token_ids'))?.filter((v) => asU64(v) !== undefined) as number[] | undefined;
  const completionIds = asArray(get(rawUsage, 'completion_token_ids'))?.filter((v) => asU64(v) !== undefined) as
    | number[]
    | undefined;
  const logprobs = asArray(get(rawUsage, 'logprobs'))?.filter((v) => asF64(v) !== undefined) as number[] | undefined;

  const extra: JsonMap = {};
  let hasExtra = false;
  for (const key of ['usage', 'token_usage']) {
    const source = asObject(get(object, key));
    if (source === undefined) continue;
    for (const usageKey of Object.keys(source)) {
      if (TOKEN_USAGE_KNOWN_KEYS.has(usageKey)) continue;
      extra[usageKey] = source[usageKey] as Json; // later `token_usage` wins, like native's map
      hasExtra = true;
    }
  }
  if (prompt === undefined && completion === undefined && cached === undefined && cost === undefined && !hasExtra) {
    return undefined;
  }
  const metrics: AtifMetrics = {};
  if (prompt !== undefined) metrics.prompt_tokens = prompt;
  if (completion !== undefined) metrics.completion_tokens = completion;
  if (cached !== undefined) metrics.cached_tokens = cached;
  if (cost !== undefined) metrics.cost_usd = cost;
  if (promptIds !== undefined) metrics.prompt_token_ids = promptIds;
  if (completionIds !== undefined) metrics.completion_token_ids = completionIds;
  if (logprobs !== undefined) metrics.logprobs = logprobs;
  if (hasExtra) metrics.extra = sortJson(extra);
  return metrics;
}

/** The keys of the usage object a Chat Completions response (and every adapter for a provider but Anthropic, `chatCompletionsUsage`) most often reports. */
const PLAIN_CHAT_KEYS = new Set(['prompt_tokens', 'completion_tokens', 'total_tokens']);

/**
 * `usage` when it is an object with no key but `prompt_tokens`,
 * `completion_tokens` and `total_tokens` and the response has no
 * `token_usage` nor Gemini's `candidates`: then every shape, surface and provider reads the same
 * counts (the two token keys, no cache count to add or not), no cost, no
 * token ids, and `total_tokens` alone goes to `extra`. Anything else takes
 * the general reading.
 */
function plainChatUsage(object: JsonMap): JsonMap | undefined {
  // A Gemini answer's own counts come first (`readGeminiResponseUsage`).
  if (has(object, 'token_usage') || Array.isArray(object.candidates)) return undefined;
  const usage = asObject(get(object, 'usage'));
  if (usage === undefined) return undefined;
  for (const key in usage) if (!PLAIN_CHAT_KEYS.has(key) || !has(usage, key)) return undefined;
  return usage;
}

/** `extractMetrics` of a response whose usage `plainChatUsage` accepted. */
function plainChatMetrics(usage: JsonMap): AtifMetrics | undefined {
  const prompt = asU64(get(usage, 'prompt_tokens'));
  const completion = asU64(get(usage, 'completion_tokens'));
  const hasTotal = has(usage, 'total_tokens');
  if (prompt === undefined && completion === undefined && !hasTotal) return undefined;
  const metrics: AtifMetrics = {};
  if (prompt !== undefined) metrics.prompt_tokens = prompt;
  if (completion !== undefined) metrics.completion_tokens = completion;
  if (hasTotal) metrics.extra = sortJson({ total_tokens: usage.total_tokens as Json });
  return metrics;
}

/** Fills the fields `target` lacks from `supplemental` (native's metric merge for de-duplicated LLM spans). */
export function mergeMetricsInto(target: AtifMetrics, supplemental: AtifMetrics): void {
  if (target.prompt_tokens === undefined && supplemental.prompt_tokens !== undefined) target.prompt_tokens = supplemental.prompt_tokens;
  if (target.completion_tokens === undefined && supplemental.completion_tokens !== undefined)
    target.completion_tokens = supplemental.completion_tokens;
  if (target.cached_tokens === undefined && supplemental.cached_tokens !== undefined) target.cached_tokens = supplemental.cached_tokens;
  if (target.cost_usd === undefined && supplemental.cost_usd !== undefined) target.cost_usd = supplemental.cost_usd;
  if (target.prompt_token_ids === undefined && supplemental.prompt_token_ids !== undefined)
    target.prompt_token_ids = supplemental.prompt_token_ids;
  if (target.completion_token_ids === undefined && supplemental.completion_token_ids !== undefined)
    target.completion_token_ids = supplemental.completion_token_ids;
  if (target.logprobs === undefined && supplemental.logprobs !== undefined) target.logprobs = supplemental.logprobs;
  if (supplemental.extra !== undefined) {
    const targetExtra = asObject(target.extra);
    const supplementalExtra = asObject(supplemental.extra);
    if (target.extra === undefined) {
      target.extra = supplemental.extra;
    } else if (targetExtra !== undefined && supplementalExtra !== undefined) {
      const merged: JsonMap = { ...targetExtra };
      for (const key of Object.keys(supplementalExtra)) if (!has(merged, key)) merged[key] = supplementalExtra[key] as Json;
      target.extra = sortJson(merged);
    }
  }
}

/** Re-orders metric fields into native's struct order (merging may add fields out of order). */
export function orderMetrics(metrics: AtifMetrics): AtifMetrics {
  const ordered: AtifMetrics = {};
  if (metrics.prompt_tokens !== undefined) ordered.prompt_tokens = metrics.prompt_tokens;
  if (metrics.completion_tokens !== undefined) ordered.completion_tokens = metrics.completion_tokens;
  if (metrics.cached_tokens !== undefined) ordered.cached_tokens = metrics.cached_tokens;
  if (metrics.cost_usd !== undefined) ordered.cost_usd = metrics.cost_usd;
  if (metrics.prompt_token_ids !== undefined) ordered.prompt_token_ids = metrics.prompt_token_ids;
  if (metrics.completion_token_ids !== undefined) ordered.completion_token_ids = metrics.completion_token_ids;
  if (metrics.logprobs !== undefined) ordered.logprobs = metrics.logprobs;
  if (metrics.extra !== undefined) ordered.extra = metrics.extra;
  return ordered;
}
