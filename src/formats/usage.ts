/**
 * Token accounting, once: each provider's and framework's usage shape read
 * into one meaning, the trajectory's.
 *
 * - `prompt`: every input token, cache reads and cache writes included;
 * - `completion`: every output token, reasoning included;
 * - `cacheRead` / `cacheWrite`: the parts of `prompt` read from and written
 *   to the provider's prompt cache;
 * - `reasoning`: the part of `completion` spent on reasoning.
 *
 * The one trap is what a shape's input count includes. Anthropic Messages
 * counts cache reads and writes apart from `input_tokens`; every other shape
 * here (OpenAI Chat Completions and Responses, Gemini, the AI SDK's
 * normalised usage, LangChain's `usage_metadata`, the OpenAI Agents SDK's
 * `Usage`) already counts them in its input. So the shape, never the
 * provider's name, decides whether cache counts are added: a LangChain or AI
 * SDK run on Anthropic reports the inclusive shape, and adding its cache
 * reads again was the double count of issue 20. Adapters therefore hand the
 * plugin a tagged usage (`ProviderUsage`) and emit the result in the shape
 * the provider's own API states (`recordedUsage`: Anthropic's Messages usage
 * for a call to Anthropic, which pricing and native's converters read as
 * Messages counts it; Chat Completions' for every other); the ATIF builder
 * and the OTLP mappings read payloads through `readUsage`.
 *
 * @module
 */

import { isNativeInteger } from './native-text/numbers.ts';
import { isRecord } from '../shared/record.ts';

/** The usage shapes the table knows. */
export type UsageShape =
  /** Chat Completions `usage`: `prompt_tokens` (cache included), `prompt_tokens_details.cached_tokens`, `completion_tokens_details.reasoning_tokens`. */
  | 'openai_chat'
  /** Responses `usage`: `input_tokens` (cache included), `input_tokens_details.cached_tokens`, `output_tokens_details.reasoning_tokens`. */
  | 'openai_responses'
  /** Messages `usage`: `input_tokens` EXCLUDES `cache_read_input_tokens` and `cache_creation_input_tokens`. */
  | 'anthropic_messages'
  /** `usageMetadata`: `promptTokenCount` (includes `cachedContentTokenCount`), `candidatesTokenCount` and `thoughtsTokenCount` apart. */
  | 'gemini'
  /** ai 7 `LanguageModelUsage` (`inputTokens` + `inputTokenDetails`), or a provider's `{inputTokens: {total, cacheRead}}`. */
  | 'ai_sdk'
  /** `usage_metadata`: `input_tokens` INCLUDES `input_token_details.cache_read`/`cache_creation`; or legacy `tokenUsage`. */
  | 'langchain'
  /** @openai/agents `Usage`/`RequestUsage`: `inputTokens` (cache included), `inputTokensDetails.cached_tokens` (an object or a list). */
  | 'openai_agents';

/** Token counts in the trajectory's meaning (see the module doc); any may be unknown. */
export interface TokenUsage {
  readonly prompt?: number;
  readonly completion?: number;
  readonly total?: number;
  readonly cacheRead?: number;
  readonly cacheWrite?: number;
  readonly reasoning?: number;
}

/** A usage object as the framework reported it, tagged with its shape: what adapters hand over. */
export interface ProviderUsage {
  readonly shape: UsageShape;
  readonly usage: unknown;
}

/** Counts as a shape states them, before its input is made inclusive. */
interface RawCounts {
  input?: number;
  output?: number;
  total?: number;
  cacheRead?: number;
  cacheWrite?: number;
  reasoning?: number;
}

type Loose = Record<string, unknown>;

/** A token count: a non-negative integer the native runtime also reads as one (i32/u32 range). */
export function tokenCount(value: unknown): number | undefined {
  return typeof value === 'number' && isNativeInteger(value) && value >= 0 ? value : undefined;
}

function field(object: unknown, key: string): unknown {
  return isRecord(object) && Object.prototype.hasOwnProperty.call(object, key) ? object[key] : undefined;
}

const count = (object: unknown, key: string): number | undefined => tokenCount(field(object, key));
const nested = (object: unknown, parent: string, key: string): number | undefined => count(field(object, parent), key);

/** A details field that is an object, or a list of objects whose counts add up (@openai/agents keeps one per request). */
function detail(details: unknown, key: string): number | undefined {
  if (!Array.isArray(details)) return count(details, key);
  let sum: number | undefined;
  for (const entry of details) {
    const value = count(entry, key);
    if (value !== undefined) sum = (sum ?? 0) + value;
  }
  return sum;
}

const sum = (...values: Array<number | undefined>): number | undefined => {
  let total: number | undefined;
  for (const value of values) if (value !== undefined) total = (total ?? 0) + value;
  return total;
};

/**
 * A framework's cache reads, or the hits the provider's own Chat Completions usage (`wire`) states where the framework
 * saw none: DeepSeek counts them as `prompt_cache_hit_tokens` (part of `prompt_tokens`), which neither
 * @ai-sdk/openai-compatible (it reports 0) nor LangChain's ChatDeepSeek (its `usage_metadata` has no cache read) reads.
 */
export function cacheHits(framework: number | undefined, wire: unknown): number | undefined {
  return framework === undefined || framework === 0 ? (count(wire, 'prompt_cache_hit_tokens') ?? framework) : framework;
}

/**
 * The reasoning a usage counts apart from its output: xAI's Chat Completions, whose total is prompt, completion and
 * reasoning, where OpenAI's `completion_tokens` hold the reasoning and its total is prompt and completion. Whatever
 * carries xAI's counts over unchanged (the OpenAI Agents SDK's `Usage` of a Chat Completions model) has the same
 * tell. Undefined when the counts say no reasoning apart.
 */
function reasoningBeyond(raw: RawCounts): number | undefined {
  const { input, output, total, reasoning } = raw;
  if (input === undefined || output === undefined || total === undefined || reasoning === undefined || reasoning === 0) return undefined;
  return total === input + output + reasoning ? reasoning : undefined;
}

/** Counts whose output leaves out reasoning their total counts (`reasoningBeyond`), with it put in: billed output. */
function withReasoningInOutput(raw: RawCounts): RawCounts {
  const apart = reasoningBeyond(raw);
  return apart === undefined ? raw : { ...raw, output: raw.output! + apart };
}

/**
 * The reasoning tokens a Chat Completions usage counts apart from its `completion_tokens` (xAI's, see
 * `reasoningBeyond`). Undefined when the usage counts none apart.
 */
export function reasoningApart(wire: unknown): number | undefined {
  return reasoningBeyond({ input: count(wire, 'prompt_tokens'), output: count(wire, 'completion_tokens'), total: count(wire, 'total_tokens'), reasoning: nested(wire, 'completion_tokens_details', 'reasoning_tokens') });
}

/**
 * The output and total a framework took from a Chat Completions usage (`wire`, the usage as the server sent it) that
 * counts the reasoning apart (xAI's), as the call was billed: the framework's `output` with the reasoning added and the
 * wire's total. Undefined when the wire counts none apart, or the framework's output already holds it (it is not the
 * wire's `completion_tokens`).
 */
export function billedOutput(output: number | undefined, wire: unknown): { output: number; total: number | undefined } | undefined {
  const apart = reasoningApart(wire);
  if (apart === undefined || output === undefined || output !== count(wire, 'completion_tokens')) return undefined;
  return { output: output + apart, total: count(wire, 'total_tokens') };
}

/**
 * The input and total a framework took from Gemini's `usageMetadata` (`raw`, as the API sent it) without the input
 * its built-in tools read (`toolUsePromptTokenCount`: Google Search results, pages URL context fetched, billed as
 * input and counted in `totalTokenCount`): @ai-sdk/google 3.x takes `promptTokenCount` alone as the input. Undefined
 * when the usage has none, or the framework's input already holds it (it is not `promptTokenCount`).
 */
export function geminiToolUseInput(input: number | undefined, raw: unknown): { input: number; total: number | undefined } | undefined {
  const prompt = count(raw, 'promptTokenCount');
  const toolUse = count(raw, 'toolUsePromptTokenCount');
  if (input === undefined || prompt === undefined || toolUse === undefined || toolUse === 0 || input !== prompt) return undefined;
  return { input: prompt + toolUse, total: count(raw, 'totalTokenCount') };
}

/** What each shape states, field by field. */
const READERS: Record<UsageShape, (usage: Loose) => RawCounts> = {
  openai_chat: (u) => ({
    input: count(u, 'prompt_tokens'),
    output: count(u, 'completion_tokens'),
    total: count(u, 'total_tokens'),
    // OpenAI-compatible proxies (LiteLLM) put Anthropic's cache keys beside an inclusive `prompt_tokens`.
    cacheRead: nested(u, 'prompt_tokens_details', 'cached_tokens') ?? count(u, 'cache_read_input_tokens'),
    // Not `prompt_tokens_details.cache_write_tokens`: native's codec does not read it (a proxy's extension; the trajectory's cached_tokens would count it twice over native's).
    cacheWrite: count(u, 'cache_write_tokens') ?? count(u, 'cache_creation_input_tokens'),
    reasoning: nested(u, 'completion_tokens_details', 'reasoning_tokens'),
  }),
  openai_responses: (u) => ({
    input: count(u, 'input_tokens'),
    output: count(u, 'output_tokens'),
    total: count(u, 'total_tokens'),
    cacheRead: nested(u, 'input_tokens_details', 'cached_tokens'),
    reasoning: nested(u, 'output_tokens_details', 'reasoning_tokens'),
  }),
  anthropic_messages: (u) => ({
    input: count(u, 'input_tokens'),
    output: count(u, 'output_tokens'),
    cacheRead: count(u, 'cache_read_input_tokens'),
    cacheWrite: count(u, 'cache_creation_input_tokens'),
    reasoning: nested(u, 'output_tokens_details', 'thinking_tokens'),
  }),
  gemini: (u) => {
    const thoughts = count(u, 'thoughtsTokenCount');
    const prompt = count(u, 'promptTokenCount');
    const candidates = count(u, 'candidatesTokenCount');
    return {
      // Tool-use prompt tokens are input the model read; thoughts are output it wrote (totalTokenCount adds all four).
      input: prompt === undefined ? undefined : prompt + (count(u, 'toolUsePromptTokenCount') ?? 0),
      output: candidates === undefined && thoughts === undefined ? undefined : (candidates ?? 0) + (thoughts ?? 0),
      total: count(u, 'totalTokenCount'),
      cacheRead: count(u, 'cachedContentTokenCount'),
      reasoning: thoughts,
    };
  },
  ai_sdk: (u) => {
    const input = field(u, 'inputTokens');
    const output = field(u, 'outputTokens');
    const raw = field(u, 'raw');
    if (isRecord(input) || isRecord(output)) {
      // A provider's LanguageModelV4Usage, as middleware sees it.
      const billed = billedOutput(count(output, 'total'), raw);
      const read = geminiToolUseInput(count(input, 'total'), raw);
      return { input: read?.input ?? count(input, 'total'), output: billed?.output ?? count(output, 'total'), total: read?.total ?? billed?.total, cacheRead: cacheHits(count(input, 'cacheRead'), raw), cacheWrite: count(input, 'cacheWrite'), reasoning: count(output, 'reasoning') };
    }
    // @ai-sdk/openai-compatible takes xAI's `completion_tokens` as the output, without the reasoning xAI bills apart,
    // and @ai-sdk/google 3.x Gemini's `promptTokenCount` as the input, without its tools' input: the usage as the
    // server sent it (`raw`) says so.
    const billed = billedOutput(tokenCount(output), raw);
    const read = geminiToolUseInput(tokenCount(input), raw);
    return {
      input: read?.input ?? tokenCount(input),
      output: billed?.output ?? tokenCount(output),
      total: read !== undefined ? read.total : billed === undefined ? count(u, 'totalTokens') : billed.total,
      cacheRead: cacheHits(nested(u, 'inputTokenDetails', 'cacheReadTokens') ?? count(u, 'cachedInputTokens'), raw),
      cacheWrite: nested(u, 'inputTokenDetails', 'cacheWriteTokens'),
      reasoning: nested(u, 'outputTokenDetails', 'reasoningTokens') ?? count(u, 'reasoningTokens'),
    };
  },
  langchain: (u) => {
    if (field(u, 'input_tokens') === undefined && field(u, 'output_tokens') === undefined) {
      // `llmOutput.tokenUsage` of older integrations.
      return {
        input: count(u, 'promptTokens') ?? count(u, 'prompt_tokens'),
        output: count(u, 'completionTokens') ?? count(u, 'completion_tokens'),
        total: count(u, 'totalTokens') ?? count(u, 'total_tokens'),
      };
    }
    return {
      input: count(u, 'input_tokens'),
      output: count(u, 'output_tokens'),
      total: count(u, 'total_tokens'),
      cacheRead: nested(u, 'input_token_details', 'cache_read'),
      cacheWrite: nested(u, 'input_token_details', 'cache_creation'),
      reasoning: nested(u, 'output_token_details', 'reasoning'),
    };
  },
  // The SDK's `Usage` of a Chat Completions model keeps the wire's output and total: xAI's reasoning, apart from its
  // `completion_tokens`, is put in the output (`withReasoningInOutput`).
  openai_agents: (u) => withReasoningInOutput({
    input: count(u, 'inputTokens') ?? count(u, 'input_tokens'),
    output: count(u, 'outputTokens') ?? count(u, 'output_tokens'),
    total: count(u, 'totalTokens') ?? count(u, 'total_tokens'),
    cacheRead: detail(field(u, 'inputTokensDetails') ?? field(u, 'input_tokens_details'), 'cached_tokens') ?? count(u, 'cached_input_tokens'),
    // Set by an `aisdk()` model whose provider reports cache writes apart (Anthropic); its input count holds them.
    cacheWrite: detail(field(u, 'inputTokensDetails') ?? field(u, 'input_tokens_details'), 'cache_write_tokens'),
    reasoning: detail(field(u, 'outputTokensDetails') ?? field(u, 'output_tokens_details'), 'reasoning_tokens'),
  }),
};

/**
 * A charge in USD as an answer states it: a number, or a decimal string (the AI Gateway's `cost`); finite and not
 * negative, else none. What a gateway charged is the truth a price book only estimates.
 */
export function chargedUsd(value: unknown): number | undefined {
  const usd = typeof value === 'string' && value.trim() !== '' ? Number(value) : typeof value === 'number' ? value : Number.NaN;
  return Number.isFinite(usd) && usd >= 0 ? usd : undefined;
}

/**
 * What a Chat Completions usage says the call was charged, in USD, in the answer or a stream's last chunk:
 * OpenRouter's `usage.cost` (its credits are USD), or xAI's `usage.cost_in_usd_ticks` (`xaiTicksUsd`). OpenAI's own
 * usage states none. A BYOK request's upstream bill (`cost_details.upstream_inference_cost`) is paid to the upstream,
 * not charged by OpenRouter: not added.
 */
export function usageCostUsd(usage: unknown): number | undefined {
  return chargedUsd(field(usage, 'cost')) ?? xaiTicksUsd(field(usage, 'cost_in_usd_ticks'));
}

/**
 * The cache writes a Chat Completions usage states as OpenRouter sends them (`prompt_tokens_details.cache_write_tokens`,
 * part of `prompt_tokens`), for a framework whose own usage leaves them out (the OpenAI Agents SDK reads only
 * `cached_tokens`). OpenAI's own usage has none.
 */
export function chatCacheWrites(usage: unknown): number | undefined {
  return nested(usage, 'prompt_tokens_details', 'cache_write_tokens');
}

/** xAI's ticks to the dollar: its usage states a call's cost as a whole number of ticks (`cost_in_usd_ticks`). */
const XAI_TICKS_PER_USD = 1e10;

/**
 * What xAI says a call was charged, in USD, from its ticks (`usage.cost_in_usd_ticks`; @ai-sdk/xai's
 * `providerMetadata.xai.costInUsdTicks`): the amount billed, after caching discounts and with server-side tools.
 * Undefined for anything but a non-negative whole number of ticks.
 */
export function xaiTicksUsd(ticks: unknown): number | undefined {
  return typeof ticks === 'number' && Number.isSafeInteger(ticks) && ticks >= 0 ? ticks / XAI_TICKS_PER_USD : undefined;
}

/** True when the shape's input count already holds its cache reads and writes. */
export function inputIncludesCache(shape: UsageShape): boolean {
  return shape !== 'anthropic_messages';
}

function normalized(raw: RawCounts, includesCache: boolean): TokenUsage | undefined {
  const cached = (raw.cacheRead ?? 0) + (raw.cacheWrite ?? 0);
  const prompt = raw.input === undefined ? undefined : includesCache ? raw.input : raw.input + cached;
  const total = raw.total ?? (prompt !== undefined && raw.output !== undefined ? prompt + raw.output : undefined);
  const usage: { -readonly [K in keyof TokenUsage]: TokenUsage[K] } = {};
  if (prompt !== undefined) usage.prompt = prompt;
  if (raw.output !== undefined) usage.completion = raw.output;
  if (total !== undefined) usage.total = total;
  if (raw.cacheRead !== undefined) usage.cacheRead = raw.cacheRead;
  if (raw.cacheWrite !== undefined) usage.cacheWrite = raw.cacheWrite;
  if (raw.reasoning !== undefined) usage.reasoning = raw.reasoning;
  return Object.keys(usage).length === 0 ? undefined : usage;
}

/** What a shape states, as raw counts (its input as the shape means it); `undefined` for a non-object. */
export function rawCounts(shape: UsageShape, usage: unknown): RawCounts | undefined {
  return isRecord(usage) ? READERS[shape](usage) : undefined;
}

/** The table: a usage object of a known shape, in the trajectory's meaning. */
export function tokenUsage(shape: UsageShape, usage: unknown): TokenUsage | undefined {
  const raw = rawCounts(shape, usage);
  return raw === undefined ? undefined : normalized(raw, inputIncludesCache(shape));
}

/** A tagged usage, in the trajectory's meaning. */
export function readProviderUsage(tagged: ProviderUsage | undefined): TokenUsage | undefined {
  return tagged === undefined ? undefined : tokenUsage(tagged.shape, tagged.usage);
}

const has = (object: Loose, key: string): boolean => Object.prototype.hasOwnProperty.call(object, key) && object[key] !== undefined && object[key] !== null;

/**
 * The shape a usage object's own keys mark, or `undefined` when they mark
 * none (a bare `{input_tokens, output_tokens}` says nothing about caching).
 */
export function usageShapeOf(usage: unknown): UsageShape | undefined {
  if (!isRecord(usage)) return undefined;
  if (has(usage, 'prompt_tokens') || has(usage, 'completion_tokens') || has(usage, 'prompt_tokens_details')) return 'openai_chat';
  if (has(usage, 'promptTokenCount') || has(usage, 'candidatesTokenCount')) return 'gemini';
  if (has(usage, 'inputTokenDetails') || has(usage, 'outputTokenDetails') || isRecord(usage.inputTokens) || isRecord(usage.outputTokens)) return 'ai_sdk';
  if (has(usage, 'inputTokensDetails') || has(usage, 'outputTokensDetails')) return 'openai_agents';
  if (has(usage, 'input_token_details') || has(usage, 'output_token_details')) return 'langchain';
  // Before Responses' keys: a Messages usage of a thinking model states `output_tokens_details.thinking_tokens` too.
  if (has(usage, 'cache_read_input_tokens') || has(usage, 'cache_creation_input_tokens')) return 'anthropic_messages';
  if (has(usage, 'input_tokens_details') || has(usage, 'output_tokens_details')) return 'openai_responses';
  return undefined;
}

/** True for a provider name that means Anthropic's own API (`anthropic`, `anthropic.messages`, `claude-...`). */
export function isAnthropicProvider(provider: string | undefined): boolean {
  if (provider === undefined) return false;
  const lower = provider.toLowerCase();
  return lower.startsWith('anthropic') || lower.startsWith('claude');
}

/**
 * Whether an object's input count includes its cache counts: its shape says
 * so when its keys mark one; a shapeless object is Anthropic's when the
 * provider (or the response around it) is Anthropic, as native decides.
 */
export function includesCache(usage: unknown, anthropic: boolean): boolean {
  const shape = usageShapeOf(usage);
  return shape === undefined ? !anthropic : inputIncludesCache(shape);
}

/**
 * Any usage object, its shape read from its keys: what the OTLP mappings and
 * the viewer use where no adapter tagged it. Returns `undefined` when the
 * object holds no count.
 */
export function readUsage(usage: unknown, provider?: string): TokenUsage | undefined {
  if (!isRecord(usage)) return undefined;
  const shape = usageShapeOf(usage);
  if (shape !== undefined) return tokenUsage(shape, usage);
  // Shapeless: the common keys, the input as the provider means it.
  const raw: RawCounts = {
    input: count(usage, 'input_tokens') ?? count(usage, 'inputTokens'),
    output: count(usage, 'output_tokens') ?? count(usage, 'outputTokens'),
    total: count(usage, 'total_tokens') ?? count(usage, 'totalTokens'),
  };
  return normalized(raw, !isAnthropicProvider(provider));
}

/** Native's names for each count in a usage object of no particular shape, in the order it tries them. */
const ALIASES = {
  input: ['prompt_tokens', 'input_tokens', 'inputTokens', 'input'],
  output: ['completion_tokens', 'output_tokens', 'completionTokens', 'outputTokens', 'output'],
  total: ['total_tokens', 'totalTokens', 'total'],
  cacheReadFlat: ['cached_tokens', 'cachedTokens'],
  cacheReadLate: ['cache_read_tokens', 'cache_read_input_tokens', 'cacheReadTokens', 'cacheReadInputTokens', 'cacheRead'],
  cacheWrite: ['cache_write_tokens', 'cache_creation_input_tokens', 'cacheWriteTokens', 'cacheCreationInputTokens', 'cacheWrite'],
} as const;

function firstCount(objects: readonly unknown[], keys: readonly string[]): { value: number; source: unknown } | undefined {
  for (const object of objects) {
    for (const key of keys) {
      const value = count(object, key);
      if (value !== undefined) return { value, source: object };
    }
  }
  return undefined;
}

/** Native's best-effort reading of `usage` then `token_usage`, count by count; also says which object gave the input. */
function aliasCounts(usage: unknown, tokenUsage: unknown): { raw: RawCounts; inputSource: unknown } {
  const both = [usage, tokenUsage];
  const input = firstCount(both, ALIASES.input);
  const cacheRead =
    firstCount(both, ALIASES.cacheReadFlat)?.value ??
    nested(usage, 'prompt_tokens_details', 'cached_tokens') ??
    nested(tokenUsage, 'prompt_tokens_details', 'cached_tokens') ??
    nested(usage, 'input_tokens_details', 'cached_tokens') ??
    nested(tokenUsage, 'input_tokens_details', 'cached_tokens') ??
    firstCount(both, ALIASES.cacheReadLate)?.value;
  return {
    raw: {
      input: input?.value,
      output: firstCount(both, ALIASES.output)?.value,
      total: firstCount(both, ALIASES.total)?.value,
      cacheRead,
      cacheWrite: firstCount(both, ALIASES.cacheWrite)?.value,
    },
    inputSource: input?.source,
  };
}

function firstDefined(...sources: Array<RawCounts | undefined>): RawCounts {
  const pick = <K extends keyof RawCounts>(key: K): number | undefined => {
    for (const source of sources) if (source?.[key] !== undefined) return source[key];
    return undefined;
  };
  return { input: pick('input'), output: pick('output'), total: pick('total'), cacheRead: pick('cacheRead'), cacheWrite: pick('cacheWrite'), reasoning: pick('reasoning') };
}

/**
 * The usage of an LLM response payload as the ATIF builder reads it: the
 * response's own shape first (`surface`, when the response is a recognised
 * provider response), then native's names over `usage` and `token_usage`,
 * then whatever shape `usage`'s keys mark. Whether the input already holds
 * the cache counts is decided by the object the input came from
 * (`includesCache`): an Anthropic provider name only decides for a
 * shapeless one, so `prompt_tokens` is never topped up with cache reads.
 */
export function readResponseUsage(response: unknown, hints: { surface?: UsageShape; provider?: string } = {}): TokenUsage | undefined {
  const read = readResponse(response, hints.surface);
  if (read === undefined) return undefined;
  const anthropic = hints.surface === 'anthropic_messages' || isAnthropicProvider(hints.provider);
  return normalized(read.raw, includesCache(read.inputSource, anthropic));
}

/**
 * How a trajectory counts a Gemini answer's tokens. `native`: as native's
 * plugins.toml `atif` component does, which the memory relay's must equal:
 * the counts its codec reads of `usageMetadata` (`geminiCodecUsage`: no
 * tool-use prompt, no thoughts) when its decode takes the answer, none when
 * it rejects it, then native's names over `usage` and `token_usage`
 * (Gemini's names there are no counts). `billed`: the plugin's own
 * trajectory, which counts what the call is billed for, in the table's
 * meaning (`completion` holds the reasoning, as every other shape's does):
 * the table's reading of `usageMetadata` whatever the decode makes of the
 * answer (two calls of one function are a valid answer), then native's
 * names, then the shape `usage`'s own keys mark.
 */
export type GeminiUsageReading = 'native' | 'billed';

/** The usage of a Gemini answer as the ATIF builder reads it (`reading`); `codec`: its decode's counts, undefined when it has none or was rejected. */
export function readGeminiResponseUsage(response: unknown, codec: TokenUsage | undefined, reading: GeminiUsageReading): TokenUsage | undefined {
  const usage = isRecord(field(response, 'usage')) ? field(response, 'usage') : undefined;
  const tokenUsage = isRecord(field(response, 'token_usage')) ? field(response, 'token_usage') : undefined;
  const named = usage === undefined && tokenUsage === undefined ? undefined : aliasCounts(usage, tokenUsage).raw;
  if (reading === 'native') {
    const own: RawCounts | undefined = codec === undefined ? undefined : { input: codec.prompt, output: codec.completion, cacheRead: codec.cacheRead };
    return normalized(firstDefined(own, named), true);
  }
  const marked = usageShapeOf(usage ?? tokenUsage);
  return normalized(firstDefined(rawCounts('gemini', field(response, 'usageMetadata')), named, marked === undefined ? undefined : rawCounts(marked, usage ?? tokenUsage)), true);
}

/** Counts as a usage shape states them (Anthropic's input without its cache reads and writes). */
export type RawTokenCounts = Readonly<RawCounts>;

type Path = readonly [string] | readonly [string, string];

/**
 * What native's pricing reads from a response's own usage shape: fewer
 * fields than the trajectory's table (no cache writes on OpenAI shapes, no
 * `cache_read_input_tokens` beside `prompt_tokens`), each typed (`typed`: a
 * count, or absent or null; `objects`: an object, or absent or null).
 */
interface CostShape {
  input: Path;
  output: Path;
  cacheRead: Path;
  cacheWrite?: Path;
  /** The total the shape states (Messages states none). */
  total?: Path;
  typed: readonly Path[];
  objects: readonly string[];
}

const COST_SHAPES: Partial<Record<UsageShape, CostShape>> = {
  openai_chat: { input: ['prompt_tokens'], output: ['completion_tokens'], cacheRead: ['prompt_tokens_details', 'cached_tokens'], total: ['total_tokens'], typed: [], objects: ['prompt_tokens_details'] },
  openai_responses: {
    input: ['input_tokens'],
    output: ['output_tokens'],
    cacheRead: ['input_tokens_details', 'cached_tokens'],
    total: ['total_tokens'],
    typed: [['output_tokens_details', 'reasoning_tokens']],
    objects: ['input_tokens_details', 'output_tokens_details'],
  },
  anthropic_messages: { input: ['input_tokens'], output: ['output_tokens'], cacheRead: ['cache_read_input_tokens'], cacheWrite: ['cache_creation_input_tokens'], typed: [], objects: [] },
};

/** Marks a shape native could not read: a field of the wrong type. */
const UNREADABLE = Symbol('unreadable');

/** A typed count at `path`: undefined when absent or null, UNREADABLE when present but not a count. */
function typedCount(usage: unknown, path: Path): number | undefined | typeof UNREADABLE {
  let value: unknown = usage;
  for (const key of path) {
    if (value === undefined || value === null) return undefined;
    if (!isRecord(value)) return UNREADABLE;
    value = field(value, key);
  }
  if (value === undefined || value === null) return undefined;
  return tokenCount(value) ?? UNREADABLE;
}

/** Whether every field native types in `shape` has its type in `usage` (an object). */
function readsAs(shape: CostShape, usage: unknown): boolean {
  if (!isRecord(usage)) return false;
  for (const key of shape.objects) {
    const value = field(usage, key);
    if (value !== undefined && value !== null && !isRecord(value)) return false;
  }
  const paths = [shape.input, shape.output, shape.cacheRead, ...(shape.cacheWrite === undefined ? [] : [shape.cacheWrite]), ...(shape.total === undefined ? [] : [shape.total]), ...shape.typed];
  return paths.every((path) => typedCount(usage, path) !== UNREADABLE);
}

/** Whether native reads `usage` as a `surface` response's usage (its typed fields all have their types). */
export function readsAsShape(surface: UsageShape, usage: unknown): boolean {
  const shape = COST_SHAPES[surface];
  return shape !== undefined && readsAs(shape, usage);
}

/**
 * How a usage of a known shape is read: `shape`, that shape's fields alone;
 * `shape-then-names`, each count the shape does not state taken by native's
 * names (`cached_tokens`, `cache_read_input_tokens`,
 * `cache_creation_input_tokens`, `cache_write_tokens`, `input_tokens`, ...).
 * Native reads the second way in its openinference spans and where its
 * trajectory prices the requested model's entry; everywhere else the first.
 */
export type CountReading = 'shape' | 'shape-then-names';

/**
 * An LLM span's token counts of a response of `surface`, in the
 * trajectory's meaning (the input counts its cache reads and writes), as
 * native's OTLP mappings read them: by the shape's own fields (`shape`, its
 * gen_ai mapping), or by them and then native's names for what they leave
 * unstated (`shape-then-names`, its openinference mapping: a Chat
 * Completions usage's `input_tokens`, a top-level `cached_tokens`, the
 * LiteLLM cache keys). The total is the one the shape states, or for
 * Messages (which states none) input plus output. Undefined when the
 * shape's codec rejects the usage or there is no usage object; empty when
 * the shape reads no count.
 */
export function spanTokenUsage(response: unknown, surface: UsageShape, reading: CountReading): TokenUsage | undefined {
  const shape = COST_SHAPES[surface];
  const usage = field(response, 'usage');
  if (shape === undefined || !readsAs(shape, usage)) return undefined;
  const typed = (path: Path | undefined): number | undefined => {
    const value = path === undefined ? undefined : typedCount(usage, path);
    return value === UNREADABLE ? undefined : value;
  };
  const own: RawCounts = { input: typed(shape.input), output: typed(shape.output), cacheRead: typed(shape.cacheRead), cacheWrite: typed(shape.cacheWrite) };
  const tokenUsage = isRecord(field(response, 'token_usage')) ? field(response, 'token_usage') : undefined;
  const raw = reading === 'shape' ? own : firstDefined(own, aliasCounts(usage, tokenUsage).raw);
  const prompt = raw.input === undefined || inputIncludesCache(surface) ? raw.input : raw.input + (raw.cacheRead ?? 0) + (raw.cacheWrite ?? 0);
  const total = surface !== 'anthropic_messages' ? typed(shape.total) : prompt !== undefined && raw.output !== undefined ? prompt + raw.output : undefined;
  const out: { -readonly [K in keyof TokenUsage]: TokenUsage[K] } = {};
  if (prompt !== undefined) out.prompt = prompt;
  if (raw.output !== undefined) out.completion = raw.output;
  if (total !== undefined) out.total = total;
  if (raw.cacheRead !== undefined) out.cacheRead = raw.cacheRead;
  if (raw.cacheWrite !== undefined) out.cacheWrite = raw.cacheWrite;
  return out;
}

/** The counts of `usageMetadata` native's Gemini codec types, each a whole number when present. */
const GEMINI_CODEC_COUNTS = ['promptTokenCount', 'candidatesTokenCount', 'totalTokenCount', 'cachedContentTokenCount', 'thoughtsTokenCount'] as const;

/**
 * A Gemini answer's `usageMetadata` as native's Gemini codec reads it:
 * `promptTokenCount` alone as the prompt, `candidatesTokenCount` alone as
 * the completion (the table's `gemini` reader adds the tool-use prompt and
 * the thoughts, which the call is billed for), the stated total, the cached
 * content, the thoughts as reasoning. Undefined when there is none (absent
 * or null); null when the codec rejects it (no object, or one of its counts
 * no whole number), which rejects the whole answer.
 */
export function geminiCodecUsage(usage: unknown): TokenUsage | null | undefined {
  if (usage === undefined || usage === null) return undefined;
  if (!isRecord(usage)) return null;
  const counts: Partial<Record<(typeof GEMINI_CODEC_COUNTS)[number], number>> = {};
  for (const key of GEMINI_CODEC_COUNTS) {
    const value = typedCount(usage, [key]);
    if (value === UNREADABLE) return null;
    if (value !== undefined) counts[key] = value;
  }
  const out: { -readonly [K in keyof TokenUsage]: TokenUsage[K] } = {};
  if (counts.promptTokenCount !== undefined) out.prompt = counts.promptTokenCount;
  if (counts.candidatesTokenCount !== undefined) out.completion = counts.candidatesTokenCount;
  if (counts.totalTokenCount !== undefined) out.total = counts.totalTokenCount;
  if (counts.cachedContentTokenCount !== undefined) out.cacheRead = counts.cachedContentTokenCount;
  if (counts.thoughtsTokenCount !== undefined) out.reasoning = counts.thoughtsTokenCount;
  return out;
}

/**
 * A usage object read as its response's shape for a cost, all or nothing:
 * undefined when a field has the wrong type or no count is there, and the
 * cost is then read by native's names (`aliasCounts`) instead; never field by
 * field from both.
 */
function costShapeCounts(shape: CostShape, usage: unknown): RawCounts | undefined {
  if (!readsAs(shape, usage)) return undefined;
  const input = typedCount(usage, shape.input);
  const output = typedCount(usage, shape.output);
  const cacheRead = typedCount(usage, shape.cacheRead);
  const cacheWrite = shape.cacheWrite === undefined ? undefined : typedCount(usage, shape.cacheWrite);
  if (input === UNREADABLE || output === UNREADABLE || cacheRead === UNREADABLE || cacheWrite === UNREADABLE) return undefined;
  if (input === undefined && output === undefined && cacheRead === undefined && cacheWrite === undefined) return undefined;
  return { input, output, cacheRead, cacheWrite };
}

/**
 * A response's counts as its usage states them, before the input is made
 * inclusive: what native's cost formulas take (an Anthropic `input_tokens`
 * stays without its cache reads). The response's own shape (`surface`)
 * decides alone when it reads (see `costShapeCounts`), or first with
 * `shape-then-names`; else native's names over `usage` and `token_usage`
 * (no shape marked by the keys, unlike the trajectory's reading).
 */
export function responseCounts(response: unknown, surface?: UsageShape, reading: CountReading = 'shape'): RawTokenCounts | undefined {
  const shape = surface === undefined ? undefined : COST_SHAPES[surface];
  const own = shape === undefined ? undefined : costShapeCounts(shape, field(response, 'usage'));
  if (own !== undefined && reading === 'shape') return own;
  const usage = isRecord(field(response, 'usage')) ? field(response, 'usage') : undefined;
  const tokenUsage = isRecord(field(response, 'token_usage')) ? field(response, 'token_usage') : undefined;
  if (usage === undefined && tokenUsage === undefined) return own;
  const named = aliasCounts(usage, tokenUsage).raw;
  return own === undefined ? named : firstDefined(own, named);
}

function readResponse(response: unknown, surface: UsageShape | undefined): { raw: RawCounts; inputSource: unknown } | undefined {
  const usage = isRecord(field(response, 'usage')) ? field(response, 'usage') : undefined;
  const tokenUsage = isRecord(field(response, 'token_usage')) ? field(response, 'token_usage') : undefined;
  if (usage === undefined && tokenUsage === undefined) return undefined;
  const primary = surface === undefined ? undefined : rawCounts(surface, usage);
  const aliases = aliasCounts(usage, tokenUsage);
  const markedObject = usage ?? tokenUsage;
  const marked = usageShapeOf(markedObject);
  const byKeys = marked === undefined ? undefined : rawCounts(marked, markedObject);
  const raw = firstDefined(primary, aliases.raw, byKeys);
  const inputSource = primary?.input !== undefined ? usage : (aliases.inputSource ?? markedObject);
  return { raw, inputSource };
}

/**
 * The usage adapters emit for a call to any provider but Anthropic (OpenAI
 * Chat Completions, whose `prompt_tokens` includes the cache by definition),
 * which `readUsage` reads back unchanged. `undefined` when nothing is known.
 */
export function chatCompletionsUsage(usage: TokenUsage | undefined): Record<string, unknown> | undefined {
  if (usage === undefined) return undefined;
  const out: Record<string, unknown> = {};
  if (usage.prompt !== undefined) out.prompt_tokens = usage.prompt;
  if (usage.completion !== undefined) out.completion_tokens = usage.completion;
  const total = usage.total ?? (usage.prompt !== undefined && usage.completion !== undefined ? usage.prompt + usage.completion : undefined);
  if (total !== undefined) out.total_tokens = total;
  if (usage.cacheRead !== undefined) out.prompt_tokens_details = { cached_tokens: usage.cacheRead };
  if (usage.cacheWrite !== undefined && usage.cacheWrite > 0) out.cache_write_tokens = usage.cacheWrite;
  if (usage.reasoning !== undefined) out.completion_tokens_details = { reasoning_tokens: usage.reasoning };
  return Object.keys(out).length === 0 ? undefined : out;
}

/**
 * The usage adapters emit for a call to Anthropic: the Messages API's own
 * (`input_tokens` without the cache, `cache_read_input_tokens`,
 * `cache_creation_input_tokens`, `output_tokens`, a thinking model's
 * `output_tokens_details.thinking_tokens`) and the total the framework
 * states (Anthropic states none; the trajectory keeps it in a step's
 * `extra`, as it keeps Chat Completions'), which `readUsage` reads back to
 * the same counts. Pricing and native's converters read usage under an
 * Anthropic provider name as Messages counts it; the Chat Completions shape
 * there had its cache charged and counted twice. A cache count is stated as
 * `chatCompletionsUsage` states it (a write only when there was one), so the
 * trajectory's counts are the same either way. `undefined` when nothing is known.
 */
export function anthropicMessagesUsage(usage: TokenUsage | undefined): Record<string, unknown> | undefined {
  if (usage === undefined) return undefined;
  const out: Record<string, unknown> = {};
  const cacheWrite = usage.cacheWrite !== undefined && usage.cacheWrite > 0 ? usage.cacheWrite : undefined;
  // A framework that states a prompt smaller than its cache parts states no consistent split: nothing below zero.
  if (usage.prompt !== undefined) out.input_tokens = Math.max(0, usage.prompt - (usage.cacheRead ?? 0) - (cacheWrite ?? 0));
  if (usage.cacheRead !== undefined) out.cache_read_input_tokens = usage.cacheRead;
  if (cacheWrite !== undefined) out.cache_creation_input_tokens = cacheWrite;
  if (usage.completion !== undefined) out.output_tokens = usage.completion;
  const total = usage.total ?? (usage.prompt !== undefined && usage.completion !== undefined ? usage.prompt + usage.completion : undefined);
  if (total !== undefined) out.total_tokens = total;
  if (usage.reasoning !== undefined) out.output_tokens_details = { thinking_tokens: usage.reasoning };
  return Object.keys(out).length === 0 ? undefined : out;
}

/**
 * The usage an adapter records for a call, in the shape its provider's
 * own API states it: Anthropic's Messages usage under an Anthropic provider
 * name (as `isAnthropicProvider`, and native, tell one), Chat Completions'
 * for every other. The one rule every adapter's `post_api_request` follows.
 */
export function recordedUsage(usage: TokenUsage | undefined, provider: string | undefined): Record<string, unknown> | undefined {
  return isAnthropicProvider(provider) ? anthropicMessagesUsage(usage) : chatCompletionsUsage(usage);
}
