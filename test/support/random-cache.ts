/**
 * A seeded random differential for the `adaptive` component's response and
 * tool cache (src/components/cache, docs/operators/cache.md): a random
 * `[response_cache]` table and a random host script of managed calls
 * (`hooks.execute('llm_execution' | 'tool_execution', ...)`), with plain
 * reported calls mixed in, run through the plugin on the memory relay and on
 * native 0.9.2 with the same plugins.toml (adaptive + observability writing
 * ATOF and ATIF). Compared: what each `execute` handed back to the host
 * (value or thrown error), how many times and with what the host's real call
 * ran, the ATOF events (marks and decisions included, after the differential
 * normalizer) and the ATIF files character for character.
 *
 * The same seed gives the same configuration and script, so a failure names
 * its seed and `compareCacheSeed(seed)` replays it.
 */

import type { Json, JsonObject } from '../../src/shared/json.ts';
import { FILE_BACKENDS } from '../contract/backends.ts';
import { normalizeEvents, normalizeText } from '../differential/normalize.ts';
import { runComponents, type ComponentRunResult, type Script } from './component-run.ts';
import { seededRandom } from './seeded-random.ts';

type Rand = () => number;

const pick = <T>(rand: Rand, items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
const chance = (rand: Rand, p: number) => rand() < p;
const int = (rand: Rand, lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));

/** One step of the host script. */
export type Step =
  | { kind: 'llm'; session: string; turn: string; id: string; provider: string; model: string; request: Json; outcome: Outcome }
  | { kind: 'tool'; session: string; turn: string; id: string; tool: string; args: Json; toolVersion?: string; outcome: Outcome }
  | { kind: 'observed_llm'; session: string; turn: string; id: string; provider: string; model: string; request: Json; response: Json }
  | { kind: 'observed_tool'; session: string; turn: string; id: string; tool: string; args: Json; result: Json }
  | { kind: 'subagent_start'; parent: string; child: string }
  | { kind: 'subagent_stop'; parent: string; child: string }
  | { kind: 'session_start'; session: string }
  | { kind: 'session_end'; session: string };

/** What the host's real call does: return a value (now or later) or throw. */
export type Outcome = { returns: Json; async: boolean } | { throws: string; async: boolean };

export interface CacheCase {
  seed: number;
  /** The `[[components]]` table of `adaptive`. */
  toml: string;
  steps: Step[];
}

// ------------------------------------------------------------------ config

const TOOL_NAMES = ['read_file', 'read_dir', 'search_docs', 'web_search', 'write_file', 'read_secret', 'get_weather', 'fetch_url'];
const TOOL_PATTERNS = ['read_*', '*_docs', '*search*', 'get_*', '*_file', 'read_secret', 'write_file', 'fetch_*', 'read_*', '*_docs', '*'];
/** Headers a managed call's request carries on both backends (the ones the relay injects), and one it never does. */
const ALLOWLIST_NAMES = ['x-tenant', 'X-Dynamo-Session-Id', 'x-dynamo-session-id', 'x-dynamo-parent-session-id', 'traceparent', 'X-Nemo-Relay-Internal-Dispatch-Backend'];

const str = (value: string) => JSON.stringify(value);
const list = (values: readonly string[]) => `[${values.map(str).join(', ')}]`;

function toolPolicy(rand: Rand, lines: string[], isClass: boolean, isDefault = false): void {
  // A cacheable default is refused (as is a member in two classes): now and then, so the refusal is compared too.
  if (isClass || chance(rand, 0.8)) lines.push(`cacheable = ${isDefault ? chance(rand, 0.1) : chance(rand, 0.75)}`);
  if (chance(rand, 0.3)) lines.push(`ttl_seconds = ${pick(rand, [60, 3600])}`);
  if (chance(rand, 0.2)) lines.push(`bypass_rate = ${pick(rand, ['0.0', '1.0'])}`);
  if (chance(rand, 0.3)) lines.push(`tool_version = ${str(pick(rand, ['v1', 'v2', '']))}`);
  if (chance(rand, 0.3)) lines.push(`arg_skip = ${list(Array.from({ length: int(rand, 0, 2) }, () => pick(rand, ['request_id', 'path', 'q', 'nonce'])))}`);
}

function randomToml(rand: Rand): string {
  const lines = ['[[components]]', 'kind = "adaptive"', '', '[components.config.response_cache]'];
  lines.push(`namespace = ${str(pick(rand, ['probe', 'team-a', 'team-b', 'ns with space', 'ü']))}`);
  if (chance(rand, 0.5)) lines.push(`ttl_seconds = ${pick(rand, [60, 3600, 86400])}`);
  // 0 or 1 only: a rate in between draws from each backend's own generator.
  if (chance(rand, 0.4)) lines.push(`bypass_rate = ${pick(rand, ['0.0', '0', '1.0'])}`);
  if (chance(rand, 0.5)) lines.push(`cache_nondeterministic = ${chance(rand, 0.5)}`);
  if (chance(rand, 0.6)) lines.push(`key_strategy = ${str(pick(rand, ['exact_request', 'logical']))}`);
  if (chance(rand, 0.5)) {
    const names = ALLOWLIST_NAMES.filter(() => chance(rand, 0.3));
    lines.push(`header_allowlist = ${list(names)}`);
  }
  if (chance(rand, 0.25)) {
    lines.push('', '[components.config.response_cache.backend]', 'kind = "in_memory"', '[components.config.response_cache.backend.config]', `max_bytes = ${pick(rand, [600, 1500, 4000, 1_000_000])}`);
  }
  if (chance(rand, 0.75)) {
    lines.push('', '[components.config.response_cache.tools]', `enabled = ${chance(rand, 0.85)}`);
    if (chance(rand, 0.4)) lines.push(`cache_errors = ${chance(rand, 0.5)}`);
    if (chance(rand, 0.2)) {
      lines.push('', '[components.config.response_cache.tools.default]');
      toolPolicy(rand, lines, true, true);
    }
    const classes = int(rand, 0, 3);
    const usedMembers = new Set<string>();
    for (let i = 0; i < classes; i++) {
      lines.push('', `[components.config.response_cache.tools.classes.c${i}]`);
      toolPolicy(rand, lines, true);
      // Mostly exact names: overlapping patterns with conflicting settings reject the document (both backends do, and
      // some seeds keep doing it), which leaves nothing cached to compare.
      const members = Array.from({ length: int(rand, 1, 3) }, () => (chance(rand, 0.2) ? pick(rand, TOOL_PATTERNS) : pick(rand, TOOL_NAMES))).filter((m) => !usedMembers.has(m) || chance(rand, 0.05));
      for (const m of members) usedMembers.add(m);
      lines.push(`members = ${list(members)}`);
    }
    const overrides = int(rand, 0, 2);
    const used = new Set<string>();
    for (let i = 0; i < overrides; i++) {
      const name = chance(rand, 0.75) ? pick(rand, TOOL_NAMES) : pick(rand, TOOL_PATTERNS);
      if (used.has(name)) continue;
      used.add(name);
      lines.push('', `[components.config.response_cache.tools.overrides.${str(name)}]`);
      toolPolicy(rand, lines, false);
    }
  }
  lines.push('');
  return lines.join('\n');
}

// ---------------------------------------------------------------- requests

/** A base request per provider; the script varies these so repeats and near-repeats happen. */
function baseRequest(rand: Rand, provider: string): JsonObject {
  const prompt = pick(rand, ['hi', 'what is 2+2?', 'summarize']);
  if (provider === 'anthropic') return { model: 'claude-x', max_tokens: pick(rand, [100, 200]), messages: [{ role: 'user', content: prompt }] };
  if (provider === 'openai' && chance(rand, 0.2)) return { model: 'gpt-x', input: prompt, store: false };
  if (provider === 'custom') return { prompt, n: 1 };
  return { model: 'gpt-x', messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: prompt }], max_tokens: pick(rand, [100, 200]) };
}

/** A request derived from `base` the way a key rule cares about. */
function variant(rand: Rand, base: JsonObject): JsonObject {
  const out: JsonObject = structuredClone(base);
  const changes = int(rand, 0, 3);
  for (let i = 0; i < changes; i++) {
    switch (int(rand, 0, 20)) {
      case 0: // key order
        return Object.fromEntries(Object.entries(out).reverse()) as JsonObject;
      case 1:
        delete out.temperature;
        break;
      case 2:
        out.temperature = pick(rand, [0, 0.0, 0.7, 1, -0.5]);
        break;
      case 3:
        out.stream = chance(rand, 0.5);
        break;
      case 4:
        out.user = pick(rand, ['u1', 'u2']);
        break;
      case 5:
        out.metadata = { run: int(rand, 1, 2) };
        break;
      case 6:
        out.max_tokens = pick(rand, [100, 200]);
        break;
      case 7:
        out.store = pick(rand, [true, false, null] as Json[]);
        break;
      case 8:
        out.seed = pick(rand, [1, 2, 2 ** 60]);
        break;
      case 9:
        out.top_p = 1;
        break;
      case 10:
        if (Array.isArray(out.messages)) out.messages = [...out.messages, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'more' }];
        break;
      case 11:
        out.tools = pick(rand, [
          [{ type: 'function', function: { name: 'f', description: 'one' } }, { type: 'function', function: { name: 'g' } }],
          [{ type: 'function', function: { name: 'g' } }, { type: 'function', function: { name: 'f', description: 'two' } }],
        ] as Json[]);
        break;
      case 12:
        out.previous_response_id = 'r1';
        break;
      case 13: // odd temperatures: -0, a string, null, a number past 1, a tiny one
        out.temperature = pick(rand, [-0, '0', null, 2, 1e-9, 0.5] as Json[]);
        break;
      case 14: // whitespace and unicode in the prompt: other requests
        if (Array.isArray(out.messages)) out.messages = [...out.messages.slice(0, -1), { role: 'user', content: pick(rand, ['hi ', ' hi', 'hi', 'hí', 'hi\u0000', 'h\ud83d\ude00']) }];
        break;
      case 15: // numbers at and past 2^53, negative zero, a float with an integer value
        out[pick(rand, ['seed', 'n', 'max_tokens'])] = pick(rand, [2 ** 53, 2 ** 53 - 1, -(2 ** 53), 2 ** 53 + 2, -0, 100, 1e21, 0.1] as Json[]);
        break;
      case 16: // earlier tool calls in the history, with ids that differ between otherwise equal requests
        if (Array.isArray(out.messages)) {
          const id = pick(rand, ['call_a', 'call_b']);
          out.messages = [...out.messages, { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', tool_call_id: id, content: 'r' }];
        }
        break;
      case 17: // generation parameters nested under `params`
        delete out.temperature;
        out.params = { temperature: pick(rand, [0, 0.3] as Json[]) };
        break;
      case 18:
        out.conversation = 'c1';
        break;
      case 19: // nested key order
        out.response_format = pick(rand, [{ type: 'json_schema', json_schema: { name: 'a', schema: { b: 1, a: 2 } } }, { json_schema: { schema: { a: 2, b: 1 }, name: 'a' }, type: 'json_schema' }] as Json[]);
        break;
      default:
        out.temperature = 0;
    }
  }
  return out;
}

function llmResponse(rand: Rand, provider: string, n: number): Json {
  const text = `answer ${n}`;
  const kind = int(rand, 0, 9);
  if (kind === 0) return pick(rand, [{ error: { message: 'rate limited', type: 'rate_limit' } }, { error: null, id: 'e' }, { error: false }, null, 'plain text', [1, 2], { status: 'failed' }, { status: 'completed', output_text: text }] as Json[]);
  if (kind === 1) return { id: `r${n}`, object: 'response', status: pick(rand, ['in_progress', 'incomplete', 'completed']), output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] }], usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5 } };
  if (provider === 'anthropic') return { id: `m${n}`, type: 'message', role: 'assistant', model: 'claude-x', content: [{ type: 'text', text }], stop_reason: 'end_turn', usage: { input_tokens: 10 + n, output_tokens: 5 } };
  return { id: `c${n}`, object: 'chat.completion', model: 'gpt-x', choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }], usage: { prompt_tokens: 10 + n, completion_tokens: 5, total_tokens: 15 + n } };
}

function toolResult(rand: Rand, n: number): Json {
  switch (int(rand, 0, 7)) {
    case 0:
      return { error: 'not found' };
    case 1:
      return { isError: true, content: [{ type: 'text', text: 'bad' }] };
    case 2:
      return pick(rand, [`plain ${n}`, null, 0, false, [n, 'x'], { error: null }, { error: false }, { isError: 'true' }, { isError: false, error: '' }, 'é'.repeat(n + 1)] as Json[]);
    case 3:
      return { content: [{ type: 'text', text: `result ${n}` }], isError: false };
    default:
      // Keys out of order: a stored result comes back as native's JSON value lists them.
      return { n, content: `result ${n}`, meta: { z: 1, a: [{ y: 2, b: 3 }] } };
  }
}

function toolArgs(rand: Rand): Json {
  return pick(rand, [
    { path: 'a' },
    { path: 'b' },
    { path: 'a', request_id: `r${int(rand, 1, 3)}` },
    { request_id: 'r1', path: 'a' },
    { q: 'x', n: 1 },
    { q: 'x', n: 1.0 },
    { n: 1, q: 'x' },
    { q: 'x', n: 2 },
    {},
    { path: 'a', nested: { request_id: 'r1', b: [1, { c: 2 }] } },
    { nested: { b: [1, { c: 2 }], request_id: 'r2' }, path: 'a' },
    { path: 'a', big: 2 ** 53 + 2 },
    { path: 'a', nonce: 'n1' },
    { path: 'a', nonce: 'n2' },
    { path: 'a', z: -0 },
    { path: 'é' },
  ] as Json[]);
}

function outcome(rand: Rand, value: Json): Outcome {
  const async = chance(rand, 0.5);
  if (chance(rand, 0.1)) return { throws: pick(rand, ['boom', 'timeout']), async };
  return { returns: value, async };
}

/** Options of a case; each draws only when set, so the other cases of a seed stay as they were. */
export interface CacheCaseOptions {
  /**
   * Request fields the key or the decision reads that `variant` leaves out
   * (token-cap names, stop lists, tool choice, `container`, `n`, `top_k`,
   * a system block list, `cache_control`, a Responses `input` list).
   */
  moreFields?: boolean;
}

/** One more field of those `moreFields` draws. */
function moreField(rand: Rand, base: JsonObject): JsonObject {
  const out: JsonObject = structuredClone(base);
  switch (int(rand, 0, 11)) {
    case 0: // the other token-cap name
      if ('max_tokens' in out) {
        out.max_completion_tokens = out.max_tokens!;
        delete out.max_tokens;
      }
      break;
    case 1: // both token caps
      out.max_completion_tokens = 100;
      break;
    case 2:
      out.stop = pick(rand, [['\n'], 'END', ['a', 'b'], []] as Json[]);
      break;
    case 3:
      out.tool_choice = pick(rand, ['auto', 'none', 'required', { type: 'function', function: { name: 'f' } }, { type: 'tool', name: 'f' }] as Json[]);
      break;
    case 4:
      out.container = pick(rand, ['c1', null] as Json[]);
      break;
    case 5:
      out.n = pick(rand, [1, 2] as Json[]);
      break;
    case 6:
      out.top_k = pick(rand, [1, 40, -1] as Json[]);
      break;
    case 7: // a system prompt as a block list (Messages) or a developer message (Chat)
      if (Array.isArray(out.messages)) out.system = pick(rand, [[{ type: 'text', text: 'be brief' }], [{ type: 'text', text: 'be brief', cache_control: { type: 'ephemeral' } }], 'be brief'] as Json[]);
      break;
    case 8:
      out.cache_control = { type: 'ephemeral' };
      break;
    case 9: // a Responses input list
      out.input = pick(rand, [[{ role: 'user', content: 'hi' }], [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }]] as Json[]);
      if (chance(rand, 0.5)) out.instructions = 'be brief';
      break;
    case 10:
      out.response_format = pick(rand, [{ type: 'json_object' }, { type: 'text' }] as Json[]);
      break;
    default:
      out.reasoning_effort = pick(rand, ['low', 'high'] as Json[]);
  }
  return out;
}

/** The seed's configuration and host script. */
export function randomCacheCase(seed: number, options: CacheCaseOptions = {}): CacheCase {
  const rand = seededRandom(seed);
  const toml = randomToml(rand);
  const steps: Step[] = [];
  const sessions = Array.from({ length: int(rand, 1, 3) }, (_, i) => `s${i}`);
  for (const session of sessions) steps.push({ kind: 'session_start', session });
  const providers = ['openai', 'openai', 'anthropic', 'custom'];
  const bases = Array.from({ length: int(rand, 1, 3) }, () => {
    const provider = pick(rand, providers);
    const body: JsonObject = { ...baseRequest(rand, provider), ...(chance(rand, 0.8) ? { temperature: 0 } : {}) };
    return { provider, body };
  });
  // A few tools and arguments per case, so calls repeat (hits) as well as differ.
  const toolPool = Array.from({ length: int(rand, 1, 4) }, () => pick(rand, TOOL_NAMES));
  const argPool = Array.from({ length: int(rand, 1, 3) }, () => toolArgs(rand));
  const count = int(rand, 4, 16);
  let n = 0;
  const managed = (session: string, turn: string): Step => {
    const id = `${session}-${n++}`;
    if (chance(rand, 0.55)) {
      const base = pick(rand, bases);
      const drawn = chance(rand, 0.5) ? structuredClone(base.body) : variant(rand, base.body);
      const request = options.moreFields && chance(rand, 0.6) ? moreField(rand, drawn) : drawn;
      return { kind: 'llm', session, turn, id, provider: base.provider, model: typeof request.model === 'string' ? request.model : 'm', request, outcome: outcome(rand, llmResponse(rand, base.provider, n)) };
    }
    const tool = pick(rand, toolPool);
    const args = chance(rand, 0.05) ? pick(rand, ['x', [1, 2], 0] as Json[]) : chance(rand, 0.6) ? pick(rand, argPool) : toolArgs(rand);
    return { kind: 'tool', session, turn, id, tool, args, outcome: outcome(rand, toolResult(rand, n)) };
  };
  for (let i = 0; i < count; i++) {
    const session = pick(rand, sessions);
    const turn = `t${int(rand, 0, 2)}`;
    const id = `${session}-${n++}`;
    const roll = rand();
    // Only one call in flight at a time: concurrent managed calls cross native's thread boundary in an order of its
    // scheduler's (which call is recorded first, whether a repeat in flight already finds the first's answer):
    // docs/operators/cache.md, differences from native.
    if (roll < 0.9) {
      steps.push(managed(session, turn));
    } else if (roll < 0.95) {
      const base = pick(rand, bases);
      steps.push({ kind: 'observed_llm', session, turn, id, provider: base.provider, model: 'gpt-x', request: base.body, response: llmResponse(rand, base.provider, n) });
    } else {
      steps.push({ kind: 'observed_tool', session, turn, id, tool: pick(rand, TOOL_NAMES), args: toolArgs(rand), result: toolResult(rand, n) });
    }
  }
  // A subagent of the first session, whose managed calls carry `x-dynamo-parent-session-id` (allowlisted now and then).
  if (chance(rand, 0.3)) {
    const parent = sessions[0]!;
    const child = `${parent}-sub`;
    steps.push({ kind: 'subagent_start', parent, child });
    for (let i = int(rand, 1, 4); i > 0; i--) steps.push(managed(child, 'ct'));
    steps.push({ kind: 'subagent_stop', parent, child });
    steps.push({ kind: 'session_end', session: child });
  }
  for (const session of sessions) steps.push({ kind: 'session_end', session });
  return { seed, toml, steps };
}

// ------------------------------------------------------------------ running

/** What the host got from one step: the value, or the error thrown. */
type HostResult = { value: unknown } | { error: string } | null;

export function scriptFor(steps: readonly Step[], results: HostResult[]): Script {
  return async ({ hooks, terminal }) => {
    const run = async (step: Step, results: HostResult[]): Promise<void> => {
      switch (step.kind) {
        case 'session_start':
          hooks.emit('on_session_start', { session_id: step.session, model: 'gpt-x' } as never);
          results.push(null);
          break;
        case 'subagent_start':
          hooks.emit('subagent_start', { parent_session_id: step.parent, parent_turn_id: 't0', child_session_id: step.child, child_subagent_id: `${step.child}-id`, child_role: 'helper', child_goal: 'help' } as never);
          results.push(null);
          break;
        case 'subagent_stop':
          hooks.emit('subagent_stop', { parent_session_id: step.parent, parent_turn_id: 't0', child_session_id: step.child, child_role: 'helper', child_summary: 'done', child_status: 'completed', tool_call_history: [], duration_ms: 1200 } as never);
          results.push(null);
          break;
        case 'session_end':
          hooks.emit('on_session_finalize', { session_id: step.session } as never);
          results.push(null);
          break;
        case 'observed_llm': {
          const at = { session_id: step.session, turn_id: step.turn, api_request_id: step.id, model: step.model, provider: step.provider };
          hooks.emit('pre_api_request', { ...at, request: { body: step.request } } as never);
          hooks.emit('post_api_request', { ...at, response: step.response } as never);
          results.push(null);
          break;
        }
        case 'observed_tool': {
          const at = { session_id: step.session, turn_id: step.turn, tool_name: step.tool, tool_call_id: step.id };
          hooks.emit('pre_tool_call', { ...at, args: step.args } as never);
          hooks.emit('post_tool_call', { ...at, result: step.result, status: 'ok' } as never);
          results.push(null);
          break;
        }
        case 'llm':
        case 'tool': {
          const kind = step.kind;
          const record = terminal(kind, null);
          const o = step.outcome;
          const call = (payload: unknown) => {
            record(payload);
            const settle = () => {
              if ('throws' in o) throw new Error(o.throws);
              return structuredClone(o.returns);
            };
            return o.async ? Promise.resolve().then(settle) : settle();
          };
          const payload =
            kind === 'llm'
              ? { session_id: step.session, turn_id: step.turn, api_request_id: step.id, model: step.model, provider: step.provider, request: structuredClone(step.request) }
              : { session_id: step.session, turn_id: step.turn, tool_name: step.tool, tool_call_id: step.id, args: structuredClone(step.args) };
          try {
            results.push({ value: await hooks.execute(kind === 'llm' ? 'llm_execution' : 'tool_execution', payload as never, call as never) });
          } catch (error) {
            results.push({ error: `${(error as Error).name}: ${(error as Error).message}` });
          }
          break;
        }
      }
    };
    for (const step of steps) await run(step, results);
  };
}

/**
 * Key hashes over a request's `traceparent` (allowlisted) differ on every
 * run, as the trace ids do: such hashes are labelled by first appearance, so
 * equal keys are still compared. Other key hashes stay as written: the
 * generator sends no Gemini request, the one shape whose hash text differs
 * (docs/operators/cache.md).
 */
class KeyLabels {
  readonly #labels = new Map<string, string>();
  constructor(readonly active: boolean) {}
  label(hash: string): string {
    if (!this.active) return hash;
    let label = this.#labels.get(hash);
    if (label === undefined) this.#labels.set(hash, (label = `<key-${this.#labels.size}>`));
    return label;
  }
  text(text: string): string {
    return this.active ? text.replace(/sha256:[0-9a-f]{64}/g, (hash) => this.label(hash)) : text;
  }
}

/** The events with the cache marks' clock reading (`age_ms`) replaced and the key hashes labelled where they must be. */
export function comparableCacheEvents(events: readonly unknown[], keys: KeyLabels): Json[] {
  return normalizeEvents(events).map((event) => {
    const metadata = (event as { metadata?: Record<string, Json> }).metadata;
    if (metadata === undefined || metadata === null || typeof metadata !== 'object' || !('nemo_relay.response_cache.surface' in metadata)) return event;
    const copy = { ...metadata };
    const hash = copy['nemo_relay.response_cache.key_hash'];
    if (typeof hash === 'string') copy['nemo_relay.response_cache.key_hash'] = keys.label(hash);
    if ('nemo_relay.response_cache.age_ms' in copy) copy['nemo_relay.response_cache.age_ms'] = '<age>';
    return { ...(event as object), metadata: copy } as Json;
  });
}

/** A file's text with the cache marks' ages replaced (a clock reading) and key hashes labelled where they must be. */
function comparableCacheText(text: string, keys: KeyLabels): string {
  return keys.text(normalizeText(text).replace(/("nemo_relay\.response_cache\.age_ms":\s*)\d+/g, '$1"<age>"'));
}

/** The first path at which two JSON values differ, with both sides, or null. */
function firstDifference(a: unknown, b: unknown, at = '$'): string | null {
  if (Object.is(a, b)) return null;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object' || Array.isArray(a) !== Array.isArray(b)) {
    return `${at}: memory ${JSON.stringify(a)} / native ${JSON.stringify(b)}`;
  }
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  for (const key of new Set([...ka, ...kb])) {
    const d = firstDifference((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], `${at}.${key}`);
    if (d !== null) return d;
  }
  if (!Array.isArray(a) && ka.join('\u0000') !== kb.join('\u0000')) return `${at}: key order memory ${JSON.stringify(ka)} / native ${JSON.stringify(kb)}`;
  return null;
}

function textDifference(a: string, b: string): string | null {
  if (a === b) return null;
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return `at ${i}: memory …${JSON.stringify(a.slice(Math.max(0, i - 80), i + 80))} / native …${JSON.stringify(b.slice(Math.max(0, i - 80), i + 80))}`;
}

export interface CacheSeedResult {
  seed: number;
  differences: string[];
  case: CacheCase;
  /** What the run exercised (native's run): cache decisions by status, and whether the document was rejected. */
  exercised: { marks: Record<string, number>; rejected: boolean };
}

/** Runs the seed's case on memory and native and lists every difference. */
export async function compareCacheSeed(seed: number, options: CacheCaseOptions = {}): Promise<CacheSeedResult> {
  const c = randomCacheCase(seed, options);
  const runs: Record<string, { run: ComponentRunResult; results: HostResult[] }> = {};
  for (const backend of FILE_BACKENDS) {
    const results: HostResult[] = [];
    const run = await runComponents(backend.create(), { components: c.toml, script: scriptFor(c.steps, results) });
    runs[backend.name] = { run, results };
  }
  const memory = runs.memory!;
  const native = runs.native!;
  const differences: string[] = [];
  const say = (what: string, d: string | null) => {
    if (d !== null) differences.push(`${what}: ${d}`);
  };
  for (let i = 0; i < c.steps.length; i++) say(`step ${i} host result`, firstDifference(memory.results[i], native.results[i]));
  say('host calls', firstDifference(memory.run.terminalCalls, native.run.terminalCalls));
  say('problems', firstDifference(problems(memory.run), problems(native.run)));
  const tracedKeys = /header_allowlist = \[[^\]]*"traceparent"/i.test(c.toml);
  say('ATOF events', firstDifference(comparableCacheEvents(memory.run.events, new KeyLabels(tracedKeys)), comparableCacheEvents(native.run.events, new KeyLabels(tracedKeys))));
  // One file per session scope, named after its uuid (sessions started in the same millisecond need not
  // sort by time): named here by the logical session id each file holds.
  const files = (r: ComponentRunResult) => {
    const out = new Map<string, string>();
    for (const [name, text] of r.files) {
      if (!name.startsWith('atif')) continue;
      const doc = JSON.parse(text) as { extra?: { nemo_relay?: { session_id?: string } } };
      out.set(`${doc.extra?.nemo_relay?.session_id ?? name}.json`, text);
    }
    return new Map([...out].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  };
  const ours = files(memory.run);
  const theirs = files(native.run);
  say('ATIF files', firstDifference([...ours.keys()], [...theirs.keys()]));
  for (const [name, text] of ours) {
    const other = theirs.get(name);
    if (other === undefined) continue;
    const difference = textDifference(comparableCacheText(text, new KeyLabels(tracedKeys)), comparableCacheText(other, new KeyLabels(tracedKeys)));
    const reordered = difference === null ? null : resultsInOrderOf(JSON.parse(text) as Json, JSON.parse(other) as Json);
    if (reordered === null) say(`ATIF ${name}`, difference);
    // Only the order of a step's tool results differed (native's is random: docs/backends/memory-and-native.md): the rest is compared as JSON text.
    else say(`ATIF ${name} (native's tool results in call order)`, textDifference(comparableCacheText(JSON.stringify(JSON.parse(text)), new KeyLabels(tracedKeys)), comparableCacheText(JSON.stringify(reordered), new KeyLabels(tracedKeys))));
  }
  const marks: Record<string, number> = {};
  for (const event of native.run.events) if (event.name === 'response_cache') marks[(event.data as { status: string }).status] = (marks[(event.data as { status: string }).status] ?? 0) + 1;
  return { seed, differences, case: c, exercised: { marks, rejected: native.run.problems.some((p) => p.includes('rejected plugins.toml')) } };
}

type ResultsStep = { observation?: { results?: { extra?: { metadata?: { tool_call_id?: string } } }[] } };

/**
 * Native lists the tool results of one ATIF step in a random order when no
 * tool call of the step's own answers them (docs/backends/memory-and-native.md,
 * "Tool results one ATIF step holds without tool calls of its own"); memory in call order.
 * `theirs` with each step's results put in `ours`' order (by `tool_call_id`,
 * unique per call here), or null when no step's order differed or the two
 * do not hold the same results.
 */
export function resultsInOrderOf(ours: Json, theirs: Json): Json | null {
  const b = structuredClone(theirs) as Json;
  return reorderResults(ours, b) ? b : null;
}

type Trajectory = { steps?: ResultsStep[]; subagent_trajectories?: Trajectory[] };

/** Reorders `b`'s step results (and its subagents') in place into `a`'s order; whether any moved. */
function reorderResults(ours: Json, theirs: Json): boolean {
  const a = (ours as Trajectory).steps ?? [];
  const b = theirs as Trajectory;
  const steps = b.steps ?? [];
  if (a.length !== steps.length) return false;
  let changed = false;
  const children = (ours as Trajectory).subagent_trajectories ?? [];
  for (const [i, child] of (b.subagent_trajectories ?? []).entries()) if (children[i] !== undefined && reorderResults(children[i] as Json, child as Json)) changed = true;
  for (let i = 0; i < a.length; i++) {
    const mine = a[i]!.observation?.results;
    const results = steps[i]!.observation?.results;
    if (mine === undefined || results === undefined || mine.length !== results.length) continue;
    const id = (r: { extra?: { metadata?: { tool_call_id?: string } } }) => r.extra?.metadata?.tool_call_id;
    const order = mine.map(id);
    if (order.some((x) => x === undefined) || new Set(order).size !== order.length) continue;
    const sorted = order.map((x) => results.find((r) => id(r) === x));
    if (sorted.some((r) => r === undefined)) return false;
    if (sorted.some((r, j) => r !== results[j])) changed = true;
    steps[i]!.observation!.results = sorted as typeof results;
  }
  return changed;
}

/**
 * What the plugin warned about, the run's folder replaced. Native's config
 * error repeats the document's path in its own text (`invalid config
 * (<path>): ...`), which the plugin's warning already names: only that
 * repetition is dropped, the reasons are compared.
 */
function problems(run: ComponentRunResult): string[] {
  return run.problems.map((p) => p.split(run.dir).join('<dir>').replace('invalid config (<dir>/plugins.toml): ', 'invalid config: '));
}

/** 'no difference', or the seed, its configuration, its script and every difference. */
export function describeCacheDifference(result: CacheSeedResult): string {
  if (result.differences.length === 0) return 'no difference';
  const steps = result.case.steps.map((step, i) => `  ${i}: ${JSON.stringify(step)}`);
  return [`seed ${result.seed}: ${result.differences.length} difference(s)`, ...result.differences.map((d) => `- ${d}`), 'config:', result.case.toml, 'steps:', ...steps].join('\n');
}

/**
 * Runs `seeds` and returns the differences' descriptions (empty when memory
 * equals native on all) and how often each decision was exercised, so a
 * test can also check the generator still reaches every decision.
 */
export async function compareCacheSeeds(seeds: readonly number[], options: CacheCaseOptions = {}): Promise<{ failures: string[]; exercised: { hit: number; miss: number; bypass: number; rejected: number } }> {
  const failures: string[] = [];
  const exercised = { hit: 0, miss: 0, bypass: 0, rejected: 0 };
  for (const seed of seeds) {
    const result = await compareCacheSeed(seed, options);
    const text = describeCacheDifference(result);
    if (text !== 'no difference') failures.push(text);
    for (const status of ['hit', 'miss', 'bypass'] as const) exercised[status] += result.exercised.marks[status] ?? 0;
    if (result.exercised.rejected) exercised.rejected += 1;
  }
  return { failures, exercised };
}
