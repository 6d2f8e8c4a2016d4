/**
 * The random pricing differential: catalogs and LLM calls nobody wrote by
 * hand, from a seed, through the plugin on the memory relay and on native
 * with the same `plugins.toml` (pricing, ATIF, OTLP `full` and
 * `openinference` to loopback receivers), compared where a cost shows: the
 * ATIF files character for character after the differential normalizer
 * (each step's `metrics.cost_usd`, `final_metrics.total_cost_usd`), and the
 * OTLP cost attributes as the receivers decode them (on openinference the
 * `llm.token_count.*` of a provider-shaped response too, which the LiteLLM
 * cache keys and odd names in the usages test). The same seed gives the
 * same case, so a difference names its seed and replays with
 * `comparePricingSeed(seed)`; it prints the catalog and the call.
 *
 * A case is 1-3 sources (inline TOML or a JSON file) of random entries
 * (providers, ids and aliases in odd cases and spacing, `provider/` names,
 * awkward rates, cache rates or none, tier schedules, units, currencies,
 * both read accountings), and 1-3 sessions of turns whose API calls answer
 * in the OpenAI chat, OpenAI Responses or Anthropic shape (or none) with
 * random usage (cached, cache-creation and reasoning counts; zero, missing,
 * huge, fractional, negative and string counts) and now and then a cost the
 * provider reported, for models that match an entry by id, alias,
 * `provider/` prefix, case and spacing, or not at all; some sessions
 * delegate to subagents. Where native and we differ on purpose, the
 * generator stays out, with a comment naming the document that says so.
 */

import fs from 'node:fs';
import path from 'node:path';
import type { HookName } from '../../src/hooks/names.ts';
import { FILE_BACKENDS, tempDir } from '../contract/backends.ts';
import { Draw } from './seeded-random.ts';
import { runComponents, type ComponentRunResult, type OtlpType } from './component-run.ts';
import { normalizeText } from '../differential/normalize.ts';
import { normalizedModel, normalizedProvider } from '../../src/formats/plugins-toml/pricing.ts';
import { Agent, StreamRecorder, openAiMessage, type HookLine } from '../fixtures/streams/script.ts';
import type { HookPayloads } from '../../src/hooks/payloads.ts';

type Body = Record<string, unknown>;

class PricingDraw extends Draw {
  /** Whether token counts native cannot read are drawn too (`PricingCaseOptions.malformedCounts`). */
  malformed = false;
}

/** A recorder that keeps each payload as built (no JSON round trip), so `-0` and the like reach the plugin as a host passes them. */
class RawRecorder extends StreamRecorder {
  override emit<K extends HookName>(name: K, payload: HookPayloads[K]): void {
    this.lines.push({ hook: name, payload: structuredClone(payload) as Record<string, unknown> });
  }
}

// ------------------------------------------------------------------ catalogs

/** Rates per million as catalogs write them: awkward in binary, tiny, huge, zero, integral. */
const RATES = [0, 0.075, 0.15, 0.6, 1e-7, 3.3333333, 0.1 + 0.2, 1 / 3, 2.5, 15, 1e6, 123456.789, 0.000123, 7, 1e-12, 5e-7, 0.01, 99.99, 1.1, 2.675, 0.07, 4e15];
const PROVIDERS = ['openai', 'anthropic', 'azure', 'google', 'OpenAI', ' Anthropic ', 'openrouter', 'vendor/sub', '/openai/'];
const MODELS = ['gpt-4o-mini', 'gpt-4o', 'claude-x', 'claude-sonnet-4-5', 'gemini-2.5-pro', 'o4-mini', 'm.v2', 'Mixed-Case-Model', 'deepseek/deepseek-r1', 'llama 3', 'openai/gpt-4o'];
const ALIASES = ['mini', 'fast', 'the-model', 'MINI', 'gpt-4o-mini-2024-07-18', 'claude-x-latest', ' spaced ', 'openai/alias-x', ''];
const CURRENCIES = ['USD', 'usd', 'EUR', 'Usd', 'GBP'];

interface Rates {
  input_per_million: number;
  output_per_million: number;
  cache_read_per_million?: number;
  cache_write_per_million?: number;
}

interface Entry {
  provider: string;
  model_id: string;
  aliases?: string[];
  currency?: string;
  unit?: string;
  rates?: Rates;
  rate_schedule?: { type: 'prompt_token_threshold'; tiers: { min_prompt_tokens?: number; max_prompt_tokens?: number; rates: Rates }[] };
  prompt_cache: { read_accounting: string };
  pricing_as_of: string;
  pricing_source: string;
}

function ratesOf(d: PricingDraw): Rates {
  const rates: Rates = { input_per_million: d.pick(RATES), output_per_million: d.pick(RATES) };
  if (d.chance(0.7)) rates.cache_read_per_million = d.pick(RATES);
  if (d.chance(0.6)) rates.cache_write_per_million = d.pick(RATES);
  return rates;
}

/** Tiers by prompt tokens: contiguous, gapped, open-ended or overlapping. */
function scheduleOf(d: PricingDraw): NonNullable<Entry['rate_schedule']> {
  const tiers: NonNullable<Entry['rate_schedule']>['tiers'] = [];
  let from = d.chance(0.3) ? d.int(1, 100) : 0;
  const n = d.int(1, 3);
  for (let i = 0; i < n; i++) {
    const tier: (typeof tiers)[number] = { rates: ratesOf(d) };
    if (from > 0 || d.chance(0.3)) tier.min_prompt_tokens = from;
    if (i < n - 1 || d.chance(0.3)) {
      const to = from + d.pick([0, 1, 99, 1000, 4999, 200000]);
      tier.max_prompt_tokens = to;
      from = to + d.pick([1, 1, 1, 2, 50]);
    }
    tiers.push(tier);
  }
  return { type: 'prompt_token_threshold', tiers };
}

/** An entry's model id or alias as written: its case or spacing changed now and then. */
function spelled(d: PricingDraw, name: string): string {
  if (name === '' || !d.chance(0.25)) return name;
  return d.pick([name.toUpperCase(), ` ${name}`, `${name}  `, name.replace(/^./, (c) => c.toUpperCase())]);
}

function catalogOf(d: PricingDraw, large: boolean): Entry[] {
  const entries: Entry[] = [];
  const keys = new Set<string>();
  const n = d.int(1, large ? 10 : 6);
  for (let i = 0; i < n; i++) {
    const provider = d.pick(PROVIDERS);
    const model = spelled(d, d.pick(MODELS));
    const aliases = d.chance(0.4) ? Array.from({ length: d.int(1, 2) }, () => spelled(d, d.pick(ALIASES))) : undefined;
    // A provider/model key twice in one catalog rejects the whole document
    // (native's rule, and ours): the generator keeps catalogs valid.
    const own = [model, ...(aliases ?? [])].map(normalizedModel).filter((k) => k !== '').map((k) => `${normalizedProvider(provider)}/${k}`);
    if (new Set(own).size !== own.length || own.some((k) => keys.has(k))) continue;
    own.forEach((k) => keys.add(k));
    const entry: Entry = { provider, model_id: model, prompt_cache: { read_accounting: d.pick(['included_in_prompt_tokens', 'separate']) }, pricing_as_of: '2026-06-01', pricing_source: 'random' };
    if (aliases !== undefined) entry.aliases = aliases;
    if (d.chance(0.2)) entry.currency = d.pick(CURRENCIES);
    if (d.chance(0.12)) entry.unit = d.pick(['per_token', 'per_token', 'per_request', 'per_second']);
    if (d.chance(0.2)) entry.rate_schedule = scheduleOf(d);
    else entry.rates = ratesOf(d);
    entries.push(entry);
  }
  return entries;
}

/** A float as TOML writes it (an integral rate sometimes as a TOML integer, which both readers take as a float). */
function tomlNumber(d: PricingDraw, value: number): string {
  const text = String(value);
  if (Number.isInteger(value) && Math.abs(value) < 1e15 && d.chance(0.5)) return `${text}.0`;
  return text;
}

function tomlValue(d: PricingDraw, value: unknown): string {
  if (typeof value === 'number') return tomlNumber(d, value);
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((v) => tomlValue(d, v)).join(', ')}]`;
  return `{ ${Object.entries(value as Body)
    .map(([k, v]) => `${k} = ${tomlValue(d, v)}`)
    .join(', ')} }`;
}

function inlineSourceToml(d: PricingDraw, entries: Entry[]): string[] {
  const lines = ['[[components.config.sources]]', 'type = "inline"', '[components.config.sources.catalog]', 'version = 1', ...(entries.length === 0 ? ['entries = []'] : [])];
  for (const entry of entries) {
    lines.push('[[components.config.sources.catalog.entries]]');
    for (const [key, value] of Object.entries(entry)) lines.push(`${key} = ${tomlValue(d, value)}`);
  }
  return lines;
}

// ------------------------------------------------------------------ calls

type Shape = 'chat' | 'responses' | 'anthropic' | 'shapeless';
const API_MODE = { chat: 'chat_completions', responses: 'codex_responses', anthropic: 'anthropic_messages', shapeless: 'chat_completions' } as const;

/** A token count as hosts send it: mostly plain, now and then zero, huge, fractional, negative, a string or null. */
function tokens(d: PricingDraw): unknown {
  if (d.chance(0.8)) return d.int(1, 5000);
  if (d.malformed && d.chance(0.5)) return d.pick([2 ** 32, 2 ** 53, 1e21, 1.5, '100', -5]);
  return d.pick([0, 0, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 100.0, null, 123456789]);
}

function maybe(d: PricingDraw, p: number, target: Body, key: string, value: () => unknown): void {
  if (d.chance(p)) target[key] = value();
}

/** A cost the provider reported: `{total, currency}`, parts without a total, `cost_usd`, or (Chat Completions only) a bare number. */
function reportedCost(d: PricingDraw, shape: Shape, usage: Body): void {
  if (!d.chance(0.2)) return;
  const amount = () => d.pick([0.7, 0.1 + 0.2, 1e-7, 0, 3.3333333, 12.5, 0.000123456789, 1e-13]);
  switch (d.int(0, 3)) {
    case 0: {
      const cost: Body = { total: amount() };
      if (d.chance(0.7)) cost.currency = d.pick(CURRENCIES);
      usage.cost = cost;
      return;
    }
    case 1: {
      const cost: Body = { input: amount(), output: amount() };
      if (d.chance(0.5)) cost.currency = d.pick(CURRENCIES);
      if (d.chance(0.3)) cost.source = d.pick(['provider_reported', 'model_pricing']);
      usage.cost = cost;
      return;
    }
    case 2:
      usage.cost_usd = amount();
      return;
    default:
      // A bare-number cost on a Responses or Messages usage is a documented
      // difference (docs/operators/pricing.md, "Differences from native"):
      // only Chat Completions usage states one here.
      if (shape === 'chat' || shape === 'shapeless') usage.cost = amount();
  }
}

function usageOf(d: PricingDraw, shape: Shape): Body {
  const usage: Body = {};
  switch (shape) {
    case 'chat':
    case 'shapeless':
      maybe(d, 0.95, usage, 'prompt_tokens', () => tokens(d));
      maybe(d, 0.95, usage, 'completion_tokens', () => tokens(d));
      maybe(d, 0.6, usage, 'total_tokens', () => tokens(d));
      if (d.chance(0.45)) {
        // cache_write_tokens inside the details too (neither side counts it; it once went into our cached_tokens),
        // taken from the draw already made so every seed still draws the cases the named expected failures name.
        const cached = tokens(d);
        usage.prompt_tokens_details = typeof cached === 'number' && cached % 3 === 0 ? { cached_tokens: cached, cache_write_tokens: cached + 1 } : { cached_tokens: cached };
      }
      if (d.chance(0.3)) usage.completion_tokens_details = { reasoning_tokens: tokens(d) };
      // OpenAI-compatible proxies (LiteLLM) put Anthropic's cache keys beside prompt_tokens.
      maybe(d, 0.1, usage, 'cache_read_input_tokens', () => tokens(d));
      maybe(d, 0.1, usage, 'cache_creation_input_tokens', () => tokens(d));
      maybe(d, 0.05, usage, 'cache_write_tokens', () => tokens(d));
      break;
    case 'responses':
      maybe(d, 0.95, usage, 'input_tokens', () => tokens(d));
      maybe(d, 0.95, usage, 'output_tokens', () => tokens(d));
      maybe(d, 0.6, usage, 'total_tokens', () => tokens(d));
      if (d.chance(0.5)) usage.input_tokens_details = { cached_tokens: tokens(d) };
      if (d.chance(0.5)) usage.output_tokens_details = { reasoning_tokens: tokens(d) };
      break;
    case 'anthropic':
      maybe(d, 0.95, usage, 'input_tokens', () => tokens(d));
      maybe(d, 0.95, usage, 'output_tokens', () => tokens(d));
      maybe(d, 0.6, usage, 'cache_read_input_tokens', () => tokens(d));
      maybe(d, 0.6, usage, 'cache_creation_input_tokens', () => tokens(d));
      if (d.chance(0.1)) usage.cache_creation = { ephemeral_5m_input_tokens: tokens(d), ephemeral_1h_input_tokens: tokens(d) };
      break;
  }
  // No reported cost on a shapeless response: native's OpenInference span
  // leaves such a response out and prices the call from the catalog
  // (docs/operators/pricing.md, "Differences from native").
  if (shape !== 'shapeless') reportedCost(d, shape, usage);
  return usage;
}

function responseOf(d: PricingDraw, shape: Shape, id: string, model: string | undefined, usage: Body | undefined): Body {
  const m = model === undefined ? {} : { model };
  const u = usage === undefined ? {} : { usage };
  switch (shape) {
    case 'chat':
      return { id, object: 'chat.completion', created: 1764500000, ...m, choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], ...u };
    case 'responses':
      return { id, object: 'response', created_at: 1764500000, status: 'completed', ...m, output: [{ type: 'message', id: `msg_${id}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'ok', annotations: [] }] }], ...u };
    case 'anthropic':
      return { id, type: 'message', role: 'assistant', ...m, content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', stop_sequence: null, ...u };
    default:
      return { id, assistant_message: openAiMessage('ok'), finish_reason: 'stop', ...m, ...u };
  }
}

/** A model name for a call: one the catalog knows (by id or alias, respelled, behind a `provider/`), or one it does not. */
function modelName(d: PricingDraw, known: readonly string[]): string {
  if (known.length === 0 || d.chance(0.2)) return d.pick(['unknown-model', 'gpt-4o-mini', 'claude-x', 'nobody/knows', ' ', '']);
  const name = d.pick(known).trim();
  switch (d.int(0, 5)) {
    case 0:
      return name.toUpperCase();
    case 1:
      return `  ${name} `;
    case 2:
      return `${d.pick(['openai', 'anthropic', 'azure', 'vendor/sub', 'OpenRouter'])}/${name}`;
    case 3:
      return `${name}-2025`;
    default:
      return name;
  }
}

// ------------------------------------------------------------------ a case

export interface PricingCase {
  seed: number;
  /** The `[[components]]` table of the pricing component. */
  components: string;
  /** JSON catalog files (absolute path → text), written before a run. */
  files: Map<string, string>;
  lines: HookLine[];
  /** Each call by its response id: what was asked and answered, for a failure message. */
  calls: Map<string, { session: string; provider: string; requestModel: string; response: Body }>;
}

export interface PricingCaseOptions {
  large?: boolean;
  /**
   * Also token counts native does not read as counts (fractions, strings,
   * negatives, past 2^32). Off in the tests: native then cannot read the
   * response, and writes no trajectory cost for it where we price it
   * (docs/operators/pricing.md, "Differences from native").
   */
  malformedCounts?: boolean;
}

/** The case of `seed`. */
export function randomPricingCase(seed: number, options: PricingCaseOptions = {}): PricingCase {
  const d = new PricingDraw(seed);
  const large = options.large === true;
  d.malformed = options.malformedCounts === true;
  const dir = tempDir(`random-pricing-${seed}`);
  const files = new Map<string, string>();
  const toml = ['[[components]]', 'kind = "pricing"', '[components.config]'];
  const known: string[] = [];
  const sources = d.int(1, 3);
  for (let s = 0; s < sources; s++) {
    const entries = catalogOf(d, large);
    for (const entry of entries) known.push(entry.model_id, ...(entry.aliases ?? []).filter((a) => a.trim() !== ''));
    if (d.chance(0.3)) {
      const file = path.join(dir, `catalog-${s}.json`);
      files.set(file, JSON.stringify({ version: 1, entries }, null, d.chance(0.5) ? 2 : undefined));
      toml.push('[[components.config.sources]]', 'type = "file"', `path = ${JSON.stringify(file)}`);
    } else {
      toml.push(...inlineSourceToml(d, entries));
    }
  }

  const r = new RawRecorder();
  const calls: PricingCase['calls'] = new Map();
  let ids = 0;
  const id = (prefix: string) => `${prefix}-${++ids}`;

  /** One session's turns; a subagent runs one turn. */
  const runSession = (agent: Agent, turns: number, depth: number): void => {
    for (let t = 0; t < turns; t++) {
      const turn = agent.turn(id(`${agent.sessionId}-turn`));
      turn.user(`question ${t}`);
      const n = d.int(1, large ? 6 : 4);
      for (let c = 0; c < n; c++) {
        const shape: Shape = d.chance(0.08) ? 'shapeless' : d.pick(['chat', 'responses', 'anthropic'] as const);
        const requestModel = modelName(d, known);
        agent.options.model = requestModel;
        // An Anthropic provider name only on Anthropic-shaped responses: for
        // a usage whose input already counts the cache (Chat Completions,
        // Responses) native's trajectory adds the cache to prompt_tokens
        // again, ours counts it once (docs/backends/memory-and-native.md,
        // "Token usage whose own shape already counts the cache"); the cost
        // is the same on both.
        agent.options.provider = d.pick(shape === 'anthropic' ? ['openai', 'anthropic', 'azure', 'google', 'OpenAI', 'custom', ''] : ['openai', 'azure', 'google', 'OpenAI', 'custom', '']);
        agent.options.apiMode = API_MODE[shape];
        const call = turn.apiCall({ model: requestModel, messages: [{ role: 'user', content: `call ${c}` }] });
        // No failed attempts: memory ends them with otel.status_code ERROR
        // where native writes OK, in the ATIF step's metadata too
        // (docs/backends/memory-and-native.md, "An LLM call closed by
        // api_request_error"); they cost nothing on either backend.
        turn.attempt(call, 0);
        const responseId = id('resp');
        const usage = d.chance(0.07) ? undefined : usageOf(d, shape);
        const responseModel = d.chance(0.15) ? undefined : d.chance(0.6) ? requestModel : modelName(d, known);
        const response = responseOf(d, shape, responseId, responseModel, usage);
        calls.set(responseId, { session: agent.sessionId, provider: agent.options.provider, requestModel, response });
        turn.answered(call, response, { ...(usage === undefined || d.chance(0.3) ? {} : { usage }), ...(d.chance(0.5) ? { assistant: openAiMessage('ok') } : {}), finishReason: 'stop' });
        if (depth === 0 && c < n - 1 && d.chance(large ? 0.25 : 0.15)) {
          const child = agent.delegate(turn, { sessionId: id(`${agent.sessionId}-sub`), model: requestModel, provider: 'openai', apiMode: 'chat_completions', platform: 'cli' }, 'helper', 'help', id('subagent'));
          if (d.chance(0.3)) child.start();
          runSession(child, 1, depth + 1);
          child.finalize('subagent_complete');
          agent.subagentStopped(turn, child, 'helper', 'done');
        }
      }
      turn.end('done');
    }
  };

  const sessions = d.int(1, large ? 4 : 3);
  for (let s = 0; s < sessions; s++) {
    const agent = new Agent(r, { sessionId: id('s'), model: 'gpt-4o-mini', provider: 'openai', apiMode: 'chat_completions', platform: 'cli' });
    agent.start();
    runSession(agent, d.int(1, large ? 3 : 2), 0);
    agent.finalize();
  }
  return { seed, components: toml.join('\n'), files, lines: r.lines, calls };
}

// ------------------------------------------------------------------ comparison

/** What carries a cost on each OTLP endpoint. */
const COST_ATTRIBUTES: Record<'full' | 'openinference', readonly string[]> = {
  full: ['nemo_relay.llm.cost.total', 'nemo_relay.llm.cost.currency'],
  openinference: ['llm.cost.total'],
};
const OTLP: readonly OtlpType[] = ['full', 'openinference'];

interface StepCost {
  responseId: string | undefined;
  cost: unknown;
}

/** Every agent step's cost in a trajectory and its embedded subagent trajectories, in document order. */
function stepCosts(doc: unknown, out: StepCost[] = []): StepCost[] {
  const trajectory = doc as { steps?: Body[]; subagent_trajectories?: unknown[] };
  for (const step of trajectory.steps ?? []) {
    if (step.source !== 'agent') continue;
    const responseId = /"(resp-\d+)"/.exec(JSON.stringify(step))?.[1];
    out.push({ responseId, cost: (step.metrics as Body | undefined)?.cost_usd });
  }
  for (const child of trajectory.subagent_trajectories ?? []) stepCosts(child, out);
  return out;
}

/** Where two texts first differ, with a little context on each side. */
function textDifference(a: string, b: string): string | null {
  if (a === b) return null;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const from = Math.max(0, i - 80);
  return `at character ${i}: memory ${JSON.stringify(a.slice(from, i + 60))} vs native ${JSON.stringify(b.slice(from, i + 60))}`;
}

/**
 * The LLM spans' cost attributes, by the response id each span carries; on
 * openinference, for a response of a provider's shape, its token counts
 * too (a shapeless response's are a documented difference:
 * docs/operators/pricing.md, "Differences from native").
 */
function spanCosts(run: ComponentRunResult, type: 'full' | 'openinference', shaped: ReadonlySet<string>): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  for (const span of run.spans[type] ?? []) {
    const responseId = /"(resp-\d+)"/.exec(JSON.stringify(span.attributes))?.[1];
    if (responseId === undefined) continue;
    const costs: Record<string, unknown> = {};
    for (const key of COST_ATTRIBUTES[type]) if (span.attributes[key] !== undefined) costs[key] = span.attributes[key];
    if (type === 'openinference' && shaped.has(responseId)) {
      for (const key of Object.keys(span.attributes).sort()) if (key.startsWith('llm.token_count.')) costs[key] = span.attributes[key];
    }
    out.set(responseId, costs);
  }
  return out;
}

const show = (value: unknown): string => (value === undefined ? 'none' : typeof value === 'number' ? String(value) : JSON.stringify(value));

/** Runs the case of `seed` on both backends; every difference, each naming the seed, the catalog and the call. */
export async function comparePricingSeed(seed: number, options: PricingCaseOptions = {}): Promise<string[]> {
  const c = randomPricingCase(seed, options);
  for (const [file, text] of c.files) fs.writeFileSync(file, text);
  const script = ({ hooks }: { hooks: { emit(name: HookName, payload: never): void } }) => {
    // A fresh copy per run: the registry stamps payloads in place.
    for (const line of c.lines) hooks.emit(line.hook, structuredClone(line.payload) as never);
  };
  const [memory, native] = (await Promise.all(FILE_BACKENDS.map((b) => runComponents(b.create(), { components: c.components, script, otlp: OTLP })))) as [ComponentRunResult, ComponentRunResult];
  const found: string[] = [];
  const callOf = (responseId: string | undefined) => {
    const call = responseId === undefined ? undefined : c.calls.get(responseId);
    return call === undefined ? '(call not found)' : `session ${call.session}, provider ${JSON.stringify(call.provider)}, requested ${JSON.stringify(call.requestModel)}, response ${JSON.stringify(call.response)}`;
  };

  if (memory.problems.join('\n') !== native.problems.join('\n')) found.push(`warnings: memory ${JSON.stringify(memory.problems)} vs native ${JSON.stringify(native.problems)}`);

  // ATIF: the same files, the same text. A file is named after its
  // session's scope uuid, different on every run: files pair by the host's
  // session id they record.
  const atif = (run: ComponentRunResult) => {
    const out = new Map<string, string>();
    for (const [name, bytes] of run.files) {
      if (!name.startsWith(`atif${path.sep}`)) continue;
      // The files were read as latin1 (bytes); as UTF-8 the texts compare as written.
      const text = Buffer.from(bytes, 'latin1').toString('utf8');
      const session = /"(s-\d+(?:-sub-\d+)?)"/.exec(text)?.[1] ?? name;
      out.set(out.has(session) ? `${session} (${name})` : session, text);
    }
    return out;
  };
  const memoryFiles = atif(memory);
  const nativeFiles = atif(native);
  const sessions = (files: Map<string, string>) => JSON.stringify([...files.keys()].sort());
  if (sessions(memoryFiles) !== sessions(nativeFiles)) found.push(`ATIF files (by session): memory ${sessions(memoryFiles)} vs native ${sessions(nativeFiles)}`);
  for (const [name, a] of memoryFiles) {
    const b = nativeFiles.get(name);
    if (b === undefined) continue;
    const difference = textDifference(normalizeText(a), normalizeText(b));
    if (difference === null) continue;
    const mine = stepCosts(JSON.parse(a));
    const theirs = stepCosts(JSON.parse(b));
    const step = mine.findIndex((s, i) => !Object.is(s.cost, theirs[i]?.cost));
    const totals = [a, b].map((text) => /"total_cost_usd":\s*([^,}\s]+)/.exec(text)?.[1] ?? 'none');
    found.push(
      `ATIF of session ${name}: ${difference}` +
        (step >= 0 ? `\n  first step whose cost differs: #${step + 1}, memory ${show(mine[step]!.cost)} vs native ${show(theirs[step]?.cost)}; the call: ${callOf(mine[step]!.responseId)}` : '') +
        `\n  total_cost_usd: memory ${totals[0]} vs native ${totals[1]}`,
    );
  }

  // OTLP: the cost attributes of each LLM span.
  const shaped = new Set([...c.calls].filter(([, call]) => call.response.assistant_message === undefined).map(([id]) => id));
  for (const type of ['full', 'openinference'] as const) {
    const mine = spanCosts(memory, type, shaped);
    const theirs = spanCosts(native, type, shaped);
    for (const responseId of new Set([...mine.keys(), ...theirs.keys()])) {
      const a = mine.get(responseId);
      const b = theirs.get(responseId);
      const keys = new Set([...Object.keys(a ?? {}), ...Object.keys(b ?? {})]);
      const same = a !== undefined && b !== undefined && [...keys].every((key) => Object.is(a[key], b[key]));
      if (same) continue;
      found.push(`OTLP ${type}, ${responseId}: memory ${a === undefined ? 'no span' : JSON.stringify(a, (_k, v: unknown) => (typeof v === 'number' ? String(v) : v))} vs native ${b === undefined ? 'no span' : JSON.stringify(b, (_k, v: unknown) => (typeof v === 'number' ? String(v) : v))}; the call: ${callOf(responseId)}`);
    }
  }
  if (found.length > 0) {
    const catalogs = [c.components, ...[...c.files].map(([file, text]) => `${file}:\n${text}`)].join('\n');
    return [...found.map((f) => `seed ${seed}${options.large ? ' (large)' : ''}: ${f}`), `catalog of seed ${seed}:\n${catalogs}`];
  }
  return found;
}
