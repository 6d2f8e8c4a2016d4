// The adaptive component's response and tool cache on both backends, through
// the plugin with managed calls (hooks.execute): the same events, marks and
// results as native 0.9.2 (a hit skips the host's call and returns what the
// relay stored), the key rules native follows and its key hashes, and observed calls that do not
// go through `execute` recorded once, with adaptive on.
import { describe, expect, it } from 'vitest';
import type { Json } from '../../src/shared/json.ts';
import { FILE_BACKENDS, nativeAvailable, nativeLoadError } from '../contract/backends.ts';
import { runComponents, type ComponentRunResult, type Script } from '../support/component-run.ts';
import { normalizeEvents } from '../differential/normalize.ts';
import { keyedRequest } from '../../src/components/cache/request-key.ts';

const cacheToml = (extra = '', tools = true) =>
  [
    '[[components]]',
    'kind = "adaptive"',
    '[components.config.response_cache]',
    'namespace = "probe"',
    extra,
    ...(tools
      ? [
          '[components.config.response_cache.tools]',
          'enabled = true',
          '[components.config.response_cache.tools.classes.ro]',
          'cacheable = true',
          'members = ["read_*"]',
          'ttl_seconds = 60',
          '[components.config.response_cache.tools.overrides.read_secret]',
          'cacheable = false',
        ]
      : []),
    '',
  ].join('\n');

const chatResponse: Json = { id: 'c1', object: 'chat.completion', model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 } };
const base = { model: 'gpt-4o-mini', temperature: 0, messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hi' }], max_tokens: 100 };

/** Managed LLM calls whose requests vary the way the key rules care about, and tool calls. */
const script = (requests: Json[]): Script => async ({ hooks, terminal }) => {
  hooks.emit('on_session_start', { session_id: 's', model: 'gpt-4o-mini' } as never);
  const results: unknown[] = [];
  for (const [i, request] of requests.entries()) {
    results.push(await hooks.execute('llm_execution', { session_id: 's', turn_id: 't', api_request_id: `a${i}`, model: 'gpt-4o-mini', provider: 'openai', request } as never, terminal('llm', chatResponse) as never));
  }
  for (const [i, tool] of ['read_file', 'read_file', 'read_secret', 'read_secret', 'write_file', 'write_file'].entries()) {
    results.push(await hooks.execute('tool_execution', { session_id: 's', turn_id: 't', tool_name: tool, tool_call_id: `c${i}`, args: { path: 'a' } } as never, terminal('tool', { content: `${tool} ${i}` }) as never));
  }
  hooks.emit('on_session_finalize', { session_id: 's' } as never);
  (globalThis as { __results?: unknown[] }).__results = results;
};

const VARIANTS: Json[] = [
  base,
  { max_tokens: 100, messages: base.messages, temperature: 0, model: 'gpt-4o-mini' }, // keys reordered: hit
  { ...base, user: 'someone' }, // `user` is not part of the key: hit
  { ...base, stream: false, metadata: { run: 1 } }, // nor `stream` or `metadata`: hit
  { ...base, max_tokens: 200 }, // miss
  { ...base, messages: [{ role: 'system', content: 'be long' }, { role: 'user', content: 'hi' }] }, // miss
  { ...base, temperature: 0.7 }, // bypass: nondeterministic
  { model: 'gpt-4o-mini', messages: base.messages }, // bypass: no temperature
  { ...base, store: true }, // bypass: stateful
  { ...base, previous_response_id: 'r1' }, // bypass: stateful
  { model: 'gpt-4o-mini', input: 'hi', temperature: 0 }, // bypass: Responses without store = false
  { ...base, seed: 2 ** 60 }, // bypass: unrepresentable number
];

if (!nativeAvailable) console.warn(`adaptive parity skipped: nemo-relay-node cannot load here (${nativeLoadError})`);

async function both(components: string, s: Script): Promise<{ native: ComponentRunResult & { results: unknown[] }; memory: ComponentRunResult & { results: unknown[] } }> {
  const out: Record<string, ComponentRunResult & { results: unknown[] }> = {};
  // One after the other: the script leaves its results on globalThis.
  for (const backend of FILE_BACKENDS) {
    const run = await runComponents(backend.create(), { components, script: s });
    out[backend.name] = { ...run, results: (globalThis as { __results?: unknown[] }).__results ?? [] };
  }
  return { native: out.native!, memory: out.memory! };
}

/** Events with the run-dependent cache fields made comparable: key hashes by first appearance, ages dropped. */
function comparable(events: readonly unknown[]): Json[] {
  const keys = new Map<string, string>();
  return normalizeEvents(events).map((event) => {
    const metadata = (event as { metadata?: Record<string, Json> }).metadata;
    if (metadata === undefined || metadata === null || typeof metadata !== 'object' || !('nemo_relay.response_cache.surface' in metadata)) return event;
    const copy = { ...metadata };
    const hash = copy['nemo_relay.response_cache.key_hash'];
    if (typeof hash === 'string') {
      if (!keys.has(hash)) keys.set(hash, `<key-${keys.size}>`);
      copy['nemo_relay.response_cache.key_hash'] = keys.get(hash)!;
    }
    if ('nemo_relay.response_cache.age_ms' in copy) copy['nemo_relay.response_cache.age_ms'] = '<age>';
    return { ...(event as object), metadata: copy } as Json;
  });
}

describe.skipIf(!nativeAvailable)('adaptive response cache: memory decides, records and returns what native does', () => {
  it('hits, misses and bypasses the same calls, with the same marks, and skips the same host calls', async () => {
    const { native, memory } = await both(cacheToml(), script(VARIANTS));
    expect(memory.problems).toEqual([]);
    expect(native.events.length).toBeGreaterThan(30);
    expect(comparable(memory.events)).toEqual(comparable(native.events));
    expect(memory.terminalCalls).toEqual(native.terminalCalls);
    // What the host got back: the stored (plugin-shaped) response on an LLM hit, the first result on a tool hit.
    expect(memory.results).toEqual(native.results);
    const statuses = memory.events.filter((e) => e.name === 'response_cache').map((e) => (e.data as { status: string }).status);
    // LLM: the variants above; tools: read_file cached, read_secret (override) and write_file (no class) uncacheable.
    expect(statuses).toEqual(['miss', 'hit', 'hit', 'hit', 'miss', 'miss', 'bypass', 'bypass', 'bypass', 'bypass', 'bypass', 'bypass', 'miss', 'hit', 'bypass', 'bypass', 'bypass', 'bypass']);
  });

  it('the tool key hashes equal native’s (same key material and canonical form)', async () => {
    const { native, memory } = await both(cacheToml(), script([]));
    const hashes = (run: ComponentRunResult) => run.events.filter((e) => e.name === 'response_cache').map((e) => (e.metadata as Record<string, Json>)['nemo_relay.response_cache.key_hash']);
    expect(hashes(memory)).toEqual(hashes(native));
  });

  it('the LLM key hashes equal native’s: Chat, Messages and Responses requests keyed on the codec’s normalized form, others raw, both strategies', async () => {
    const user = [{ role: 'user', content: 'hi' }];
    const call = ['call_9', 'call_9'];
    // [provider, request]: shapes native normalizes, and shapes it keys raw (lossy, unfaithful, undetected).
    const requests: [string, Json][] = [
      ['openai', { ...base, seed: 3, n: 1, response_format: { type: 'json_object' }, stream: false, user: 'u', store: false, foo: 'bar', frequency_penalty: 0.5, logprobs: true, top_p: 1, stop: ['x'] }],
      ['openai', { model: 'g', temperature: 0, max_completion_tokens: 5, messages: user }],
      ['openai', { model: 'g', temperature: 0, max_completion_tokens: 5, max_tokens: 4, messages: user }],
      ['openai', { model: 'g', temperature: 0, stop: 'x', messages: user }],
      ['openai', { model: 'g', temperature: 0, messages: [{ role: 'system', content: 's' }, { role: 'user', content: [{ type: 'text', text: 'a', cache_control: { type: 'ephemeral' } }, { type: 'image_url', image_url: { url: 'http://x', detail: 'low' } }] }, { role: 'assistant', content: null, tool_calls: [{ id: call[0], type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', tool_call_id: call[1], content: 'r' }] }],
      ['openai', { model: 'g', temperature: 0, messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: 'ok', tool_calls: [{ id: 'call_7', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'call_7', content: 'r' }], tools: [{ type: 'function', function: { name: 'f', description: 'd', parameters: { type: 'object', properties: { q: { type: 'string', description: 'the query' } } }, strict: true } }, { type: 'function', function: { name: 'a' } }], tool_choice: 'auto', parallel_tool_calls: true }],
      ['openai', { model: 'g', temperature: 0, messages: user, tools: [{ type: 'function', function: { name: 'f' } }, { type: 'web_search' }], tool_choice: { type: 'function', function: { name: 'f' } } }],
      ['openai', { model: 'g', temperature: 0, messages: user, tool_choice: { type: 'allowed_tools', mode: 'auto' } }],
      ['openai', { model: 'g', temperature: 0, messages: [{ role: 'user', content: 'x', name: 'bob' }, { role: 'function', name: 'f', content: 'v' }, { role: 'assistant', content: [{ type: 'refusal', refusal: 'no' }] }] }],
      ['openai', { model: 'g', params: { temperature: 0 }, messages: user }],
      ['openai', { temperature: 0, messages: [] }],
      ['custom', { temperature: 0, foo: 1 }],
      ['openai', { model: 'g', temperature: 0, store: false, input: 'hi' }],
      ['openai', { model: 'g', temperature: 0, store: false, input: [{ role: 'user', content: 'hi' }] }],
      ['openai', { model: 'g', temperature: 0, store: false, input: [{ role: 'system', content: 's' }, { role: 'user', content: 'hi' }, { role: 'assistant', content: 'a' }], instructions: 'be', max_output_tokens: 5, top_p: 1, truncation: 'auto', reasoning: { effort: 'low' }, include: [], text: { format: { type: 'text' } }, background: false, stream: false, user: 'u', metadata: { a: 1 }, foo: 2, tools: [{ type: 'function', function: { name: 'f', description: 'd' } }], tool_choice: { type: 'function', function: { name: 'f' } }, parallel_tool_calls: true, max_tool_calls: 3, top_logprobs: 2, prompt_cache_key: 'k' }],
      ['openai', { model: 'g', temperature: 0, store: false, input: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', name: 'flat' }] }],
      ['openai', { model: 'g', temperature: 0, store: false, input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }] }] }],
      ['anthropic', { model: 'c', temperature: 0, max_tokens: 5, messages: user }],
      ['openai', { model: 'c', temperature: 0, max_tokens: 5, system: 'sys', messages: user }],
      ['anthropic', { model: 'c', temperature: 0, max_tokens: 5, system: [{ type: 'text', text: 'sys', cache_control: { type: 'ephemeral' } }], top_k: 3, stop_sequences: ['s'], metadata: { user_id: 'x' }, thinking: { type: 'disabled' }, 'anthropic-user-profile-id': 'p', foo: 1, messages: [{ role: 'user', content: [{ type: 'text', text: 'q' }] }, { role: 'assistant', content: [{ type: 'text', text: 'a' }, { type: 'tool_use', id: 'tu_1', name: 'f', input: { a: 1 } }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu_1', content: 'r', is_error: false }] }] }],
      ['anthropic', { model: 'c', temperature: 0, max_tokens: 5, system: 's', tools: [{ name: 'f', input_schema: { type: 'object' } }], tool_choice: { type: 'auto' }, messages: user }],
      ['anthropic', { model: 'c', temperature: 0, max_tokens: 5, tools: [], messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', data: 'x', media_type: 'image/png' } }] }] }],
      // Integers the binding hands over as floats (outside -2^31 .. 2^32 - 1): native's decode refuses them, the raw body is keyed.
      ['openai', { model: 'g', temperature: 0, max_tokens: 2 ** 32 - 1, messages: user }],
      ['openai', { model: 'g', temperature: 0, max_tokens: 2 ** 32, messages: user }],
      ['openai', { model: 'g', temperature: 0, seed: 2 ** 32 - 1, n: 2 ** 40, messages: user }],
      ['openai', { model: 'g', temperature: 0, seed: -(2 ** 31) - 1, messages: user }],
      ['openai', { model: 'g', temperature: 0, store: false, input: user, max_output_tokens: 2 ** 53 - 1 }],
      ['anthropic', { model: 'c', temperature: 0, max_tokens: 5, top_k: 2 ** 32, messages: user }],
    ];
    const keyScript: Script = async ({ hooks, terminal }) => {
      hooks.emit('on_session_start', { session_id: 's', model: 'gpt-4o-mini' } as never);
      for (const [i, [provider, request]] of requests.entries()) {
        await hooks.execute('llm_execution', { session_id: 's', turn_id: 't', api_request_id: `a${i}`, model: 'm', provider, request } as never, terminal('llm', chatResponse) as never);
      }
      hooks.emit('on_session_finalize', { session_id: 's' } as never);
    };
    const hashes = (run: ComponentRunResult) => run.events.filter((e) => e.name === 'response_cache').map((e) => (e.metadata as Record<string, Json>)['nemo_relay.response_cache.key_hash'] ?? null);
    for (const strategy of ['exact_request', 'logical']) {
      const { native, memory } = await both(cacheToml(`key_strategy = "${strategy}"\nheader_allowlist = ["x-team"]`, false), keyScript);
      expect(hashes(native).filter((h) => h !== null), strategy).toHaveLength(requests.length);
      expect(hashes(memory), strategy).toEqual(hashes(native));
    }
  });

  it('bypass_rate = 1 samples every call out, and an allowlisted header is part of the key', async () => {
    const { native, memory } = await both(cacheToml('bypass_rate = 1.0', false), script([base, base]));
    expect(comparable(memory.events)).toEqual(comparable(native.events));
    expect(memory.terminalCalls.filter((c) => c.kind === 'llm')).toHaveLength(2);
  });

  it('execute’s `headers` key the allowlisted ones: two tenants asking the same question get their own answers; credential headers are neither keyed nor recorded (docs/operators/cache.md)', async () => {
    // Each call answers with its tenant's text: a hit across tenants would hand one tenant the other's answer.
    const tenants: [string, unknown][] = [
      ['acme', { 'x-tenant': 'acme', authorization: 'Bearer sk-SECRET-1' }],
      ['globex', { 'X-Tenant': 'globex', 'x-api-key': 'sk-SECRET-2' }], // another tenant: miss, whatever the header's case
      ['acme', { 'X-TENANT': 'acme', authorization: 'Bearer sk-SECRET-3', 'x-request-id': 'r3' }], // a header off the allowlist and a credential do not key: hit
      ['globex', new Map([['x-tenant', 'globex'], ['cookie', 'SECRET-4']])], // pairs, as a fetch `Headers` iterates: hit
      ['initech', [['x-tenant', 'initech'], ['x-region', 'eu']]], // miss
      ['initech', { 'x-tenant': 'initech', 'x-region': 'us' }], // x-region is allowlisted: miss
      ['none', {}], // no tenant: its own key
    ];
    const tenantScript: Script = async ({ hooks, terminal }) => {
      hooks.emit('on_session_start', { session_id: 's', model: 'gpt-4o-mini' } as never);
      const results: unknown[] = [];
      for (const [i, [tenant, headers]] of tenants.entries()) {
        const answer = { ...chatResponse, choices: [{ index: 0, message: { role: 'assistant', content: `for ${tenant}` }, finish_reason: 'stop' }] };
        const result = await hooks.execute('llm_execution', { session_id: 's', turn_id: `t${i}`, api_request_id: `a${i}`, model: 'gpt-4o-mini', provider: 'openai', api_mode: 'chat_completions', request: base, headers } as never, terminal('llm', answer) as never);
        const message = (result as { choices?: { message: { content: string } }[]; assistant_message?: { content: string } });
        results.push(message.choices?.[0]?.message.content ?? message.assistant_message?.content);
      }
      hooks.emit('on_session_finalize', { session_id: 's' } as never);
      (globalThis as { __results?: unknown[] }).__results = results;
    };
    const { native, memory } = await both(cacheToml('header_allowlist = ["x-tenant", "X-Region"]', false), tenantScript);
    expect(memory.problems).toEqual([]);
    expect(comparable(memory.events)).toEqual(comparable(native.events));
    for (const run of [native, memory]) {
      expect(run.results).toEqual(['for acme', 'for globex', 'for acme', 'for globex', 'for initech', 'for initech', 'for none']);
      const statuses = run.events.filter((e) => e.name === 'response_cache').map((e) => (e.data as { status: string }).status);
      expect(statuses).toEqual(['miss', 'miss', 'hit', 'hit', 'miss', 'miss', 'miss']);
      // The host's call gets its own headers, credentials included (it sends them to the provider).
      expect(run.terminalCalls.map((call) => (call.input as { headers: unknown }).headers)).toEqual([0, 1, 4, 5, 6].map((i) => tenants[i]![1]));
      // The start records the request's headers, credentials left out.
      const starts = run.events.filter((e) => e.category === 'llm' && (e as { scope_category?: string }).scope_category === 'start').map((e) => (e.data as { headers: Record<string, string> }).headers);
      expect(starts[2]).toEqual({ 'X-TENANT': 'acme', 'x-dynamo-session-id': 's', 'x-request-id': 'r3' });
      expect([...run.files.values()].filter((text) => text.includes('SECRET'))).toEqual([]);
    }
  });

  it('cache_nondeterministic caches a request without temperature', async () => {
    const noTemperature = { model: 'gpt-4o-mini', messages: base.messages };
    const { native, memory } = await both(cacheToml('cache_nondeterministic = true', false), script([noTemperature, noTemperature]));
    expect(comparable(memory.events)).toEqual(comparable(native.events));
    expect(memory.terminalCalls.filter((c) => c.kind === 'llm')).toHaveLength(1);
  });

  it('an entry past its ttl_seconds misses', async () => {
    const wait: Script = async (context) => {
      const { hooks, terminal } = context;
      hooks.emit('on_session_start', { session_id: 's' } as never);
      for (let i = 0; i < 2; i++) {
        if (i === 1) await new Promise((resolve) => setTimeout(resolve, 1100));
        await hooks.execute('llm_execution', { session_id: 's', api_request_id: `a${i}`, model: 'gpt-4o-mini', provider: 'openai', request: base } as never, terminal('llm', chatResponse) as never);
      }
      hooks.emit('on_session_finalize', { session_id: 's' } as never);
    };
    const { native, memory } = await both(cacheToml('ttl_seconds = 1', false), wait);
    expect(comparable(memory.events)).toEqual(comparable(native.events));
    expect(memory.terminalCalls).toHaveLength(2);
  });
});

describe('observed calls with adaptive on (no execute): recorded once, on both backends', () => {
  const observed: Script = ({ hooks }) => {
    const at = { session_id: 'o', turn_id: 't' };
    hooks.emit('on_session_start', { session_id: 'o', model: 'gpt-4o-mini' } as never);
    hooks.emit('pre_api_request', { ...at, api_request_id: 'a1', model: 'gpt-4o-mini', provider: 'openai', request: { body: base } } as never);
    hooks.emit('post_api_request', { ...at, api_request_id: 'a1', model: 'gpt-4o-mini', provider: 'openai', response: chatResponse, finish_reason: 'stop' } as never);
    hooks.emit('pre_tool_call', { ...at, tool_name: 'read_file', tool_call_id: 'c1', args: { path: 'a' } } as never);
    hooks.emit('post_tool_call', { ...at, tool_name: 'read_file', tool_call_id: 'c1', result: 'x', status: 'ok' } as never);
    hooks.emit('pre_tool_call', { ...at, tool_name: 'slow', tool_call_id: 'c2', args: {} } as never);
    hooks.emit('on_session_finalize', { session_id: 'o' } as never);
  };
  for (const backend of FILE_BACKENDS) {
    it.skipIf(!backend.available)(`${backend.name}: the same events as without adaptive (a start without its end ends with the session)`, async () => {
      const withAdaptive = await runComponents(backend.create(), { components: '[[components]]\nkind = "adaptive"\n', script: observed });
      const without = await runComponents(backend.create(), { components: '', script: observed });
      expect(withAdaptive.events.filter((e) => e.category === 'llm')).toHaveLength(2);
      expect(withAdaptive.events.filter((e) => e.category === 'tool')).toHaveLength(4);
      expect(normalizeEvents(withAdaptive.events)).toEqual(normalizeEvents(without.events));
    });

    it.skipIf(!backend.available)(`${backend.name}: a managed call in a subagent carries its subagent id as x-dynamo-session-id (found by the random cache differential)`, async () => {
      const run = await runComponents(backend.create(), {
        components: '[[components]]\nkind = "adaptive"\n',
        script: async ({ hooks, terminal }) => {
          hooks.emit('on_session_start', { session_id: 'p' } as never);
          hooks.emit('subagent_start', { parent_session_id: 'p', parent_turn_id: 't', child_session_id: 'c', child_subagent_id: 'sub-7', child_role: 'helper', child_goal: 'help' } as never);
          await hooks.execute('llm_execution', { session_id: 'c', api_request_id: 'a1', model: 'gpt-4o-mini', provider: 'openai', request: base } as never, terminal('llm', chatResponse) as never);
          hooks.emit('subagent_stop', { parent_session_id: 'p', parent_turn_id: 't', child_session_id: 'c', child_role: 'helper', child_summary: 'done', child_status: 'completed', tool_call_history: [], duration_ms: 1 } as never);
          hooks.emit('on_session_finalize', { session_id: 'c' } as never);
          hooks.emit('on_session_finalize', { session_id: 'p' } as never);
        },
      });
      const start = run.events.find((e) => e.category === 'llm')!;
      expect((start.data as { headers: Record<string, string> }).headers).toEqual({ 'x-dynamo-parent-session-id': 'p', 'x-dynamo-session-id': 'sub-7' });
      expect(run.terminalCalls[0]!.input).toMatchObject({ request: base });
    });

    it.skipIf(!backend.available)(`${backend.name}: a call reported by its hooks AND run through execute is recorded once (managed)`, async () => {
      const run = await runComponents(backend.create(), {
        components: '[[components]]\nkind = "adaptive"\n',
        script: async ({ hooks, terminal }) => {
          const at = { session_id: 'm', turn_id: 't', api_request_id: 'a1', model: 'gpt-4o-mini', provider: 'openai' };
          hooks.emit('on_session_start', { session_id: 'm' } as never);
          hooks.emit('pre_api_request', { ...at, request: { body: base } } as never);
          await hooks.execute('llm_execution', { ...at, request: base } as never, terminal('llm', chatResponse) as never);
          hooks.emit('post_api_request', { ...at, response: chatResponse } as never);
          hooks.emit('pre_tool_call', { session_id: 'm', tool_name: 'read_file', tool_call_id: 'c1', args: {} } as never);
          await hooks.execute('tool_execution', { session_id: 'm', tool_name: 'read_file', tool_call_id: 'c1', args: {} } as never, terminal('tool', 'x') as never);
          hooks.emit('post_tool_call', { session_id: 'm', tool_name: 'read_file', tool_call_id: 'c1', result: 'x' } as never);
          hooks.emit('on_session_finalize', { session_id: 'm' } as never);
        },
      });
      expect(run.events.filter((e) => e.category === 'llm')).toHaveLength(2);
      expect(run.events.filter((e) => e.category === 'tool')).toHaveLength(2);
      // Managed: the start carries the session header native injects.
      expect((run.events.find((e) => e.category === 'llm')!.data as { headers: Record<string, string> }).headers).toHaveProperty('x-dynamo-session-id', 'm');
    });
  }
});

describe('the response cache keys an integer the binding hands native as a float raw (found by the random differential)', () => {
  it('a count past 2^32 - 1, or a seed outside -2^31 .. 2^32 - 1, fails native’s decode: the raw body is keyed', () => {
    const user = [{ role: 'user', content: 'hi' }];
    expect(keyedRequest('openai', { model: 'g', max_tokens: 2 ** 32 - 1, messages: user }).codec).toBe('openai_chat');
    expect(keyedRequest('openai', { model: 'g', max_tokens: 2 ** 32, messages: user }).codec).toBeNull();
    expect(keyedRequest('openai', { model: 'g', seed: -(2 ** 31), messages: user }).codec).toBe('openai_chat');
    expect(keyedRequest('openai', { model: 'g', seed: -(2 ** 31) - 1, messages: user }).codec).toBeNull();
    expect(keyedRequest('anthropic', { model: 'c', max_tokens: 2 ** 40, messages: user }).codec).toBeNull();
  });
});

describe('the response cache’s size budget and stored answers, pinned on each backend (found by the random differential)', () => {
  const sized = (maxBytes: number) =>
    [
      '[[components]]',
      'kind = "adaptive"',
      '[components.config.response_cache]',
      'namespace = "n"',
      '[components.config.response_cache.backend]',
      'kind = "in_memory"',
      '[components.config.response_cache.backend.config]',
      `max_bytes = ${maxBytes}`,
      '[components.config.response_cache.tools]',
      'enabled = true',
      '[components.config.response_cache.tools.overrides."read_*"]',
      'cacheable = true',
      '',
    ].join('\n');
  const toolCalls = (keys: string[]): Script => async ({ hooks, terminal }) => {
    hooks.emit('on_session_start', { session_id: 's' } as never);
    for (const [i, k] of keys.entries()) await hooks.execute('tool_execution', { session_id: 's', tool_name: 'read_x', tool_call_id: `c${i}`, args: { k } } as never, terminal('tool', k.repeat(10)) as never);
    hooks.emit('on_session_finalize', { session_id: 's' } as never);
  };
  const llmTwice: Script = async ({ hooks, terminal }) => {
    hooks.emit('on_session_start', { session_id: 's' } as never);
    const request = { model: 'g', temperature: 0, messages: [{ role: 'user', content: 'hi' }] };
    const response = { id: 'c', object: 'chat.completion', model: 'g', choices: [{ index: 0, message: { role: 'assistant', content: 'x' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } };
    const results: unknown[] = [];
    for (let i = 0; i < 2; i++) results.push(await hooks.execute('llm_execution', { session_id: 's', api_request_id: `a${i}`, model: 'g', provider: 'openai', request } as never, terminal('llm', response) as never));
    hooks.emit('on_session_finalize', { session_id: 's' } as never);
    (globalThis as { __results?: unknown[] }).__results = results;
  };
  const statuses = (run: ComponentRunResult) => run.events.filter((e) => e.name === 'response_cache').map((e) => (e.data as { status: string }).status);

  for (const backend of FILE_BACKENDS) {
    // A tool entry costs its value's JSON bytes plus a fixed record (488 for a 10-character string); entries
    // leave in insertion order. The memory relay counted twice the UTF-16 length, so it kept entries native evicted
    // and answered from them (a hit where native called the tool again).
    it.skipIf(!backend.available)(`${backend.name}: max_bytes keeps and evicts the entries native does`, async () => {
      expect(statuses(await runComponents(backend.create(), { components: sized(488), script: toolCalls(['A', 'A']) }))).toEqual(['miss', 'hit']);
      expect(statuses(await runComponents(backend.create(), { components: sized(487), script: toolCalls(['A', 'A']) }))).toEqual(['miss', 'miss']);
      // Two fit in 976; a third evicts the oldest (A), a hit does not refresh it.
      expect(statuses(await runComponents(backend.create(), { components: sized(1000), script: toolCalls(['A', 'B', 'A', 'C', 'B', 'A']) }))).toEqual(['miss', 'miss', 'hit', 'miss', 'hit', 'miss']);
      // An LLM entry: the recorded answer's bytes (158 here), a fixed record, the provider and the request's model.
      const llm = async (max: number) => (await runComponents(backend.create(), { components: sized(max), script: llmTwice })).terminalCalls.length;
      expect(await llm(563)).toBe(1);
      expect(await llm(562)).toBe(2);
    });

    it.skipIf(!backend.available)(`${backend.name}: max_bytes counts a value's numbers as native writes them`, async () => {
      // 2^40 crosses the binding as a float: native's text is `1099511627776.0`, 15 bytes.
      const big = (max: number): Promise<ComponentRunResult> =>
        runComponents(backend.create(), {
          components: sized(max),
          script: async ({ hooks, terminal }) => {
            hooks.emit('on_session_start', { session_id: 's' } as never);
            for (let i = 0; i < 2; i++) await hooks.execute('tool_execution', { session_id: 's', tool_name: 'read_x', tool_call_id: `c${i}`, args: {} } as never, terminal('tool', 2 ** 40) as never);
            hooks.emit('on_session_finalize', { session_id: 's' } as never);
          },
        });
      expect(statuses(await big(491))).toEqual(['miss', 'hit']);
      expect(statuses(await big(490))).toEqual(['miss', 'miss']);
    });

    it.skipIf(!backend.available)(`${backend.name}: a hit hands back the stored answer with its keys sorted, as native’s JSON value lists them`, async () => {
      await runComponents(backend.create(), { components: sized(1_000_000), script: llmTwice });
      const [live, hit] = (globalThis as { __results?: unknown[] }).__results!;
      // The live call: the host's own object; the hit: the recorded shape, keys in code-point order at every depth.
      expect(Object.keys(live as object)).toEqual(['id', 'object', 'model', 'choices', 'usage']);
      expect(JSON.stringify(hit)).toBe('{"assistant_message":{"content":"x","role":"assistant"},"finish_reason":"stop","model":"g","usage":{"completion_tokens":2,"prompt_tokens":1,"total_tokens":3}}');
    });
  }
});
