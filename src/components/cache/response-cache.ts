/**
 * The response and tool cache of the `adaptive` component, as native 0.9.2
 * runs it around managed calls: what is cached, under which key, for how
 * long, when a call bypasses the cache, and the `response_cache` mark each
 * decision emits. A hit returns what the relay stored for the first call
 * (the recorded response, the tool's result) without running the host's
 * call again.
 *
 * LLM calls: bypassed (reason in the mark) without a body, for a stateful
 * request (`store`, `previous_response_id`, `conversation`, `container`, a
 * Responses-style body that does not say `store = false`), for a request
 * without `temperature` or with one above 0 unless `cache_nondeterministic`,
 * for a number past 2^53, and at random at `bypass_rate`. The key is the
 * namespace, provider, body (native's normalized form where it keys one, see
 * request-key.ts; without `stream`, `user`, `metadata`, `store`; tool-call ids
 * renumbered; key order does not count) and the allowlisted headers. A response with an
 * `error` or an unfinished `status` is not stored.
 *
 * Tool calls: only tools a class or override makes cacheable (exact names
 * first, then the most specific pattern; any other bypasses as
 * `uncacheable`); the key is the namespace, tool,
 * its `tool_version`, `cache_errors` and its arguments less `arg_skip`; an
 * error-shaped result is not stored unless `cache_errors`.
 *
 * The key hash in the marks is native's: SHA-256 over the canonical JSON
 * (RFC 8785) of the same key document (for Chat Completions, Messages and
 * Responses requests and raw-keyed bodies; see request-key.ts for Gemini).
 *
 * @module
 */

import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import type { Json, JsonObject } from '../../shared/json.ts';
import { isJsonObject } from '../../shared/json.ts';
import { parseWildcardPattern, type ResponseCacheSettings, type ToolPolicyConfig } from '../../formats/plugins-toml/adaptive.ts';
import type { PriceBook } from '../pricing/price-book.ts';
import { keyedRequest, renumberToolCallIds } from './request-key.ts';
import { toRustJson } from '../../formats/native-text/write.ts';

/** Bumped when the key material changes (old entries then miss). */
const KEY_VERSION = 1;
const SKIP_KEYS = ['stream', 'user', 'metadata', 'store'];
const DISPATCH_BACKEND_HEADER = 'x-nemo-relay-internal-dispatch-backend';
const MAX_EXACT = 2 ** 53;

/** What a `response_cache` mark says. */
export interface CacheMark {
  status: 'hit' | 'miss' | 'bypass';
  metadata: JsonObject;
}

interface Entry {
  value: Json;
  createdMs: number;
  expiresMs: number;
  provider?: string;
  model?: string;
  bytes: number;
}

/** A lookup's outcome: the mark to emit, and either a cached value or how to store the live one. */
export type Lookup = { mark: CacheMark; hit: { value: Json } } | { mark: CacheMark; hit: null; store: ((value: Json) => void) | null };

export interface ResponseCacheOptions {
  /** Wall clock in ms (TTL, ages). */
  now?: () => number;
  /** `[0, 1)`, for `bypass_rate`. */
  random?: () => number;
  /** Prices a hit's saved tokens (the `pricing` component), when configured. */
  prices?: PriceBook;
}

export class ResponseCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  private readonly now: () => number;
  private readonly random: () => number;

  constructor(
    private readonly settings: ResponseCacheSettings,
    private readonly options: ResponseCacheOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
  }

  get toolsEnabled(): boolean {
    return this.settings.tools?.enabled === true;
  }

  /** The decision for a managed LLM call (`request` as the relay forwards it). */
  llm(provider: string, request: { headers: Json; content: Json }): Lookup {
    const s = this.settings;
    const reason = bypassReason(request.content, s.cacheNondeterministic);
    if (reason !== null) return { mark: mark('bypass', 'llm', { reason }), hit: null, store: null };
    const keyed = keyedRequest(provider, request.content);
    let body = isJsonObject(keyed.body) ? renumberToolCallIds(withoutKeys(keyed.body, SKIP_KEYS)) : keyed.body;
    // `logical`: tool prose (descriptions) and tool order do not key.
    if (s.keyStrategy === 'logical' && isJsonObject(body) && body.tools !== undefined) body = { ...body, tools: structuralTools(body.tools) };
    const allowlist = [...new Set(s.headerAllowlist.map((h) => h.toLowerCase()))].sort();
    const headers: JsonObject = {};
    if (isJsonObject(request.headers)) {
      for (const name of allowlist) {
        for (const [header, value] of Object.entries(request.headers)) if (header.toLowerCase() === name) headers[name] = value;
      }
      // The relay's own routing partition is always keyed.
      for (const [header, value] of Object.entries(request.headers)) if (header.toLowerCase() === DISPATCH_BACKEND_HEADER) headers[DISPATCH_BACKEND_HEADER] = value;
    }
    const doc: JsonObject = { v: KEY_VERSION, ns: s.namespace, provider, strategy: s.keyStrategy, codec: keyed.codec, openai_chat_token_cap: keyed.tokenCap, body, headers };
    if (allowlist.length > 0) doc.header_allowlist = allowlist;
    if (hasUnrepresentable(doc)) return { mark: mark('bypass', 'llm', { reason: 'unrepresentable_number' }), hit: null, store: null };
    const key = fingerprint(doc);
    const model = isJsonObject(request.content) && typeof request.content.model === 'string' ? request.content.model : undefined;
    const ttlMs = s.ttlSeconds * 1000;
    const store = (value: Json) => {
      if (!isErrorResponse(value)) this.put(key, value, ttlMs, provider, model);
    };
    if (this.sampled(s.bypassRate)) return { mark: mark('bypass', 'llm', { reason: 'sampled', key_hash: key }), hit: null, store };
    const entry = this.get(key);
    if (entry === undefined) return { mark: mark('miss', 'llm', { key_hash: key, ttl_ms: ttlMs }), hit: null, store };
    const savings = this.savings(entry);
    return {
      mark: mark('hit', 'llm', { key_hash: key, age_ms: this.now() - entry.createdMs, ttl_ms: ttlMs, ...savings }),
      hit: { value: entry.value },
    };
  }

  /** The decision for a managed tool call; null without an enabled tool cache (no mark at all). */
  tool(name: string, args: Json): Lookup | null {
    const tools = this.settings.tools;
    if (tools === null || !tools.enabled) return null;
    const policy = resolvePolicy(name, this.settings, tools);
    if (!policy.cacheable) return { mark: mark('bypass', 'tool', { reason: 'uncacheable' }), hit: null, store: null };
    const skip = [...new Set(policy.argSkip)].sort();
    const cleaned = isJsonObject(args) && skip.length > 0 ? withoutKeys(args, skip) : args;
    if (hasUnrepresentable(cleaned)) return { mark: mark('bypass', 'tool', { reason: 'unrepresentable_number' }), hit: null, store: null };
    const key = fingerprint({ v: KEY_VERSION, surface: 'tool_result', ns: this.settings.namespace, tool: name, tool_version: policy.toolVersion ?? null, arg_skip: skip, cache_errors: tools.cacheErrors, args: cleaned });
    const ttlMs = policy.ttlSeconds * 1000;
    const store = (value: Json) => {
      if (tools.cacheErrors || !isErrorShapedTool(value)) this.put(key, value, ttlMs);
    };
    if (this.sampled(policy.bypassRate)) return { mark: mark('bypass', 'tool', { reason: 'sampled', key_hash: key }), hit: null, store };
    const entry = this.get(key);
    if (entry !== undefined && !tools.cacheErrors && isErrorShapedTool(entry.value)) {
      return { mark: mark('bypass', 'tool', { reason: 'cached_error', key_hash: key }), hit: null, store };
    }
    if (entry === undefined) return { mark: mark('miss', 'tool', { key_hash: key, ttl_ms: ttlMs }), hit: null, store };
    return { mark: mark('hit', 'tool', { key_hash: key, age_ms: this.now() - entry.createdMs, ttl_ms: ttlMs, saved_invocations: 1 }), hit: { value: entry.value } };
  }

  private sampled(rate: number): boolean {
    if (rate <= 0) return false;
    if (rate >= 1) return true;
    return this.random() < rate;
  }

  private get(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (this.now() >= entry.expiresMs) {
      this.drop(key, entry);
      return undefined;
    }
    return entry;
  }

  private put(key: string, value: Json, ttlMs: number, provider?: string, model?: string): void {
    const bytes = entryBytes(value, provider, model);
    // Bounded: an entry past the budget is not kept; older ones make room (insertion order).
    if (bytes > this.settings.maxBytes) return;
    const previous = this.entries.get(key);
    if (previous !== undefined) this.drop(key, previous);
    while (this.bytes + bytes > this.settings.maxBytes && this.entries.size > 0) {
      const [oldest, entry] = this.entries.entries().next().value as [string, Entry];
      this.drop(oldest, entry);
    }
    const now = this.now();
    const entry: Entry = { value: structuredClone(value), createdMs: now, expiresMs: now + ttlMs, bytes };
    if (provider !== undefined) entry.provider = provider;
    if (model !== undefined) entry.model = model;
    this.entries.set(key, entry);
    this.bytes += bytes;
  }

  private drop(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.bytes -= entry.bytes;
  }

  /** What a hit saved: the stored response's tokens, and their price when the catalogs know the model. */
  private savings(entry: Entry): JsonObject {
    const out: JsonObject = {};
    const response = entry.value;
    const usage = isJsonObject(response) ? (isJsonObject(response.usage) ? response.usage : isJsonObject(response.token_usage) ? response.token_usage : null) : null;
    if (usage !== null) {
      const n = (key: string) => (typeof usage[key] === 'number' && Number.isInteger(usage[key]) && (usage[key] as number) >= 0 ? (usage[key] as number) : undefined);
      const prompt = n('prompt_tokens');
      const completion = n('completion_tokens');
      const input = n('input_tokens');
      const output = n('output_tokens');
      const tokens = n('total_tokens') ?? (prompt !== undefined && completion !== undefined ? prompt + completion : input !== undefined && output !== undefined ? input + output : undefined);
      if (tokens !== undefined) out.saved_tokens = tokens;
    }
    const prices = this.options.prices;
    if (prices !== undefined && entry.model !== undefined) {
      const cost = prices.costUsd({ name: entry.provider ?? '', requestModel: entry.model, response });
      if (cost !== undefined) out.saved_cost_usd = cost;
    }
    return out;
  }
}

/**
 * What an entry costs against `max_bytes`, as native's in-memory store
 * counts it: the stored value's JSON (native's text of it) in UTF-8 bytes plus a fixed record
 * size, and for an LLM answer the provider's and the request model's bytes.
 * The fixed sizes were found by probing native 0.9.2 (the smallest
 * `max_bytes` that keeps one entry, over values, providers, models, tool
 * names, namespaces and TTLs): eviction then drops the same entries.
 */
const LLM_ENTRY_BYTES = 398;
const TOOL_ENTRY_BYTES = 476;

function entryBytes(value: Json, provider: string | undefined, model: string | undefined): number {
  const valueBytes = Buffer.byteLength(toRustJson(value), 'utf8');
  if (provider === undefined) return valueBytes + TOOL_ENTRY_BYTES;
  return valueBytes + LLM_ENTRY_BYTES + Buffer.byteLength(provider, 'utf8') + Buffer.byteLength(model ?? '', 'utf8');
}

/** A tool's effective cache policy: override over class over the cache's defaults. */
function resolvePolicy(
  name: string,
  settings: ResponseCacheSettings,
  tools: NonNullable<ResponseCacheSettings['tools']>,
): { cacheable: boolean; ttlSeconds: number; bypassRate: number; argSkip: string[]; toolVersion: string | undefined } {
  const cls = resolveClass(name, tools.classes) ?? tools.default;
  const over = tools.overrides.find(([pattern]) => pattern === name)?.[1] ?? bestWildcard(tools.overrides, name);
  return {
    cacheable: over?.cacheable ?? cls.cacheable ?? false,
    ttlSeconds: over?.ttl_seconds ?? cls.ttl_seconds ?? settings.ttlSeconds,
    bypassRate: over?.bypass_rate ?? cls.bypass_rate ?? settings.bypassRate,
    argSkip: over?.arg_skip ?? cls.arg_skip ?? [],
    toolVersion: over?.tool_version ?? cls.tool_version,
  };
}

function resolveClass(name: string, classes: readonly [string, ToolPolicyConfig][]): ToolPolicyConfig | undefined {
  for (const [, cls] of classes) if ((cls.members ?? []).some((m) => !m.includes('*') && m === name)) return cls;
  return bestWildcard(
    classes.flatMap(([, cls]) => (cls.members ?? []).map((m) => [m, cls] as [string, ToolPolicyConfig])),
    name,
  );
}

/** The most specific matching pattern: most literal characters, then fewest stars, then the smaller text. */
function bestWildcard<T>(candidates: readonly [string, T][], name: string): T | undefined {
  let best: { value: T; literal: number; stars: number; pattern: string } | undefined;
  for (const [pattern, value] of candidates) {
    if (!pattern.includes('*')) continue;
    const parsed = parseWildcardPattern(pattern);
    if (parsed === null) continue;
    const matches = parsed.kind === 'prefix' ? name.startsWith(parsed.text) : parsed.kind === 'suffix' ? name.endsWith(parsed.text) : name.includes(parsed.text);
    if (!matches) continue;
    const chars = Array.from(pattern);
    const stars = chars.filter((c) => c === '*').length;
    const literal = chars.length - stars;
    const better = best === undefined || literal > best.literal || (literal === best.literal && (stars < best.stars || (stars === best.stars && pattern < best.pattern)));
    if (better) best = { value, literal, stars, pattern };
  }
  return best?.value;
}

function mark(status: CacheMark['status'], surface: 'llm' | 'tool', fields: Record<string, Json | undefined>): CacheMark {
  const metadata: JsonObject = { 'nemo_relay.response_cache.surface': surface, 'nemo_relay.response_cache.backend': 'in_memory' };
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) metadata[`nemo_relay.response_cache.${key}`] = value;
  return { status, metadata };
}

function bypassReason(content: Json, cacheNondeterministic: boolean): string | null {
  if (content === null || content === undefined) return 'unparseable_body';
  if (isJsonObject(content)) {
    if ('store' in content && content.store !== false && content.store !== null) return 'stateful_store';
    if ('previous_response_id' in content) return 'stateful_previous_response_id';
    if ('conversation' in content || 'container' in content) return 'stateful_conversation';
    const responsesSurface = 'input' in content || 'instructions' in content || isJsonObject(content.prompt);
    if (responsesSurface && content.store !== false) return 'stateful_store';
  }
  if (!cacheNondeterministic) {
    const temperature = isJsonObject(content) ? (typeof content.temperature === 'number' ? content.temperature : isJsonObject(content.params) ? content.params.temperature : undefined) : undefined;
    if (typeof temperature !== 'number' || temperature > 0) return 'nondeterministic_temperature';
  }
  return null;
}

/** The tool list without string `description`s (at any depth), in canonical order. */
function structuralTools(tools: Json): Json {
  if (!Array.isArray(tools)) return tools;
  const strip = (value: Json): Json => {
    if (Array.isArray(value)) return value.map(strip);
    if (!isJsonObject(value)) return value;
    const out: JsonObject = {};
    for (const [key, nested] of Object.entries(value)) if (!(key === 'description' && typeof nested === 'string')) out[key] = strip(nested);
    return out;
  };
  // Ordered by their canonical text's bytes, as native sorts.
  return tools
    .map((tool) => {
      const entry = strip(tool);
      return { entry, text: Buffer.from(canonical(entry), 'utf8') };
    })
    .sort((a, b) => Buffer.compare(a.text, b.text))
    .map(({ entry }) => entry);
}

function withoutKeys(object: JsonObject, keys: readonly string[]): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(object)) if (!keys.includes(key)) out[key] = value;
  return out;
}

function hasUnrepresentable(value: Json): boolean {
  if (typeof value === 'number') return Math.abs(value) > MAX_EXACT;
  if (Array.isArray(value)) return value.some(hasUnrepresentable);
  if (isJsonObject(value)) return Object.values(value).some(hasUnrepresentable);
  return false;
}

function isErrorResponse(value: Json): boolean {
  if (!isJsonObject(value)) return false;
  if (value.error !== undefined && value.error !== null) return true;
  return typeof value.status === 'string' && ['failed', 'cancelled', 'canceled', 'incomplete', 'in_progress', 'queued'].includes(value.status);
}

function isErrorShapedTool(value: Json): boolean {
  if (!isJsonObject(value)) return false;
  return (value.error !== undefined && value.error !== null) || value.isError === true || value.is_error === true;
}

/** `sha256:` + the hex digest of the document's canonical JSON (keys sorted at every level). */
function fingerprint(doc: Json): string {
  return `sha256:${createHash('sha256').update(canonical(doc), 'utf8').digest('hex')}`;
}

function canonical(value: Json): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isJsonObject(value)) {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical(value[key]!)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}
