// Issue 22's acceptance check: twenty plugins.toml configurations (the
// cases of ../shared/reference/native-components.md (beside the checkout): controls, every
// pii_redaction action, selectors, the preset, surfaces, invalid and
// unavailable components, pricing observed and managed, an invalid catalog,
// redaction on managed calls, the response cache, nemo_guardrails with and
// without managed execution), each replayed with the same hooks through the
// plugin on native 0.9.2 and on the memory relay. Compared: the ATOF events,
// the plugin-managed ATIF, OTLP (full plus gen_ai or openinference), every
// file written, what reached the host's real calls and what those calls
// returned. Memory must equal native in every case except the documented
// differences (README "Differences from native", docs/operators/*), each of
// which is checked for exactly what it is.
import { afterAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Json } from '../../src/shared/json.ts';
import { FILE_BACKENDS, nativeAvailable, nativeLoadError } from '../contract/backends.ts';
import { runComponents, type ComponentRunResult, type OtlpType, type Script } from '../support/component-run.ts';
import { normalize, normalizeEvents, UuidLabels } from '../differential/normalize.ts';
import { normalizeSpans, SDK_RESOURCE_KEYS } from '../support/otlp-normalize.ts';

const chat = (content: string, usage: Json = { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 }): Json => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  model: 'gpt-4o-mini',
  choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
  usage,
});

/** A host that reports its calls with hooks (no `execute`): personal data in every kind of event, usage to price. */
const observed: Script = ({ hooks }) => {
  const base = { session_id: 'sess-1', turn_id: 't1' };
  hooks.emit('on_session_start', { session_id: 'sess-1', model: 'gpt-4o-mini', platform: 'cli', user_email: 'bob@example.com' } as never);
  hooks.emit('pre_llm_call', { ...base, user_message: 'mail alice.smith@example.com, card 4111 1111 1111 1111' } as never);
  hooks.emit('pre_api_request', {
    ...base,
    api_request_id: 'a1',
    model: 'gpt-4o-mini',
    provider: 'openai',
    request: { headers: { authorization: 'Bearer sk-secret' }, body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'mail alice.smith@example.com from 192.168.10.42' }] } },
  } as never);
  hooks.emit('post_api_request', { ...base, api_request_id: 'a1', model: 'gpt-4o-mini', provider: 'openai', finish_reason: 'stop', response: chat('I will email alice.smith@example.com, call 415-555-0142.', { prompt_tokens: 2000, completion_tokens: 100, total_tokens: 2100, prompt_tokens_details: { cached_tokens: 1500 } }) } as never);
  hooks.emit('pre_tool_call', { ...base, tool_name: 'send_email', tool_call_id: 'call_1', args: { to: 'alice.smith@example.com', secret: 'sk-proj-abcdefghijklmnop123456789', nested: ['carol@example.com', 'x'] } } as never);
  hooks.emit('post_tool_call', { ...base, tool_name: 'send_email', tool_call_id: 'call_1', result: 'sent to alice.smith@example.com from 192.168.10.42', status: 'ok' } as never);
  hooks.emit('pre_approval_request', { ...base, command: 'rm -rf /home/alice', reason: 'alice.smith@example.com asked' } as never);
  hooks.emit('post_approval_response', { ...base, approved: true } as never);
  hooks.emit('post_llm_call', { ...base, assistant_response: 'Done, alice.smith@example.com was notified.' } as never);
  hooks.emit('on_session_end', { session_id: 'sess-1' } as never);
  hooks.emit('on_session_finalize', { session_id: 'sess-1' } as never);
};

/** A host whose calls go through `execute` (managed): the same request twice, a cacheable tool twice. */
const managed: Script = async ({ hooks, terminal }) => {
  const base = { session_id: 'sess-m', turn_id: 't1' };
  const request = { model: 'gpt-4o-mini', temperature: 0, messages: [{ role: 'user', content: 'mail alice.smith@example.com' }] };
  const results: unknown[] = [];
  hooks.emit('on_session_start', { session_id: 'sess-m', model: 'gpt-4o-mini' } as never);
  hooks.emit('pre_llm_call', { ...base, user_message: 'mail alice.smith@example.com' } as never);
  // Native stamps a managed call with its own wall clock (its execute calls take no timestamp); every
  // other event carries ours, which runs within about a millisecond of it (measured 0.3-0.8 ms ahead).
  // Without a gap, the two clocks could order a managed span's start before the mark emitted just before
  // it: a fresh clone's npm test did so once, in the four managed-call configurations.
  await clockGap();
  for (const id of ['a1', 'a2']) {
    results.push(await hooks.execute('llm_execution', { ...base, api_request_id: id, model: 'gpt-4o-mini', provider: 'openai', request } as never, terminal('llm', chat('Sent to alice.smith@example.com.')) as never));
  }
  for (const id of ['c1', 'c2']) {
    results.push(await hooks.execute('tool_execution', { ...base, tool_name: 'read_file', tool_call_id: id, args: { path: '/home/alice/notes.txt' } } as never, terminal('tool', { content: 'owner alice.smith@example.com' }) as never));
  }
  await clockGap();
  hooks.emit('post_llm_call', { ...base, assistant_response: 'Done.' } as never);
  hooks.emit('on_session_finalize', { session_id: 'sess-m' } as never);
  (globalThis as { __results?: unknown[] }).__results = results;
};

/** Longer than the two clocks can differ by (see `managed`). */
const clockGap = () => new Promise((resolve) => setTimeout(resolve, 5));

const component = (kind: string, lines: string) => ['[[components]]', `kind = "${kind}"`, '', lines, ''].join('\n');
const pii = (builtin: string, top = '') => component('pii_redaction', `[components.config]\n${top}\n[components.config.builtin]\n${builtin}`);
const ADAPTIVE = component('adaptive', '[components.config]');
const CACHE = component(
  'adaptive',
  [
    '[components.config.response_cache]',
    'namespace = "probe"',
    '[components.config.response_cache.tools]',
    'enabled = true',
    '[components.config.response_cache.tools.classes.ro]',
    'cacheable = true',
    'members = ["read_*"]',
    'ttl_seconds = 60',
  ].join('\n'),
);
const entry = (model: string, rates: string, accounting = 'included_in_prompt_tokens', extra = '') =>
  [
    '[[components.config.sources.catalog.entries]]',
    'provider = "openai"',
    `model_id = "${model}"`,
    'pricing_as_of = "2026-01-01"',
    'pricing_source = "test"',
    extra,
    `rates = { ${rates} }`,
    `prompt_cache = { read_accounting = "${accounting}" }`,
  ].join('\n');
const pricing = (...entries: string[]) =>
  component('pricing', ['[components.config]', '[[components.config.sources]]', 'type = "inline"', '[components.config.sources.catalog]', 'version = 1', ...entries].join('\n'));
const PRICES = pricing(entry('gpt-4o-mini', 'input_per_million = 0.15, output_per_million = 0.6, cache_read_per_million = 0.075', 'included_in_prompt_tokens', 'aliases = ["mini"]'));
const guardrails = (endpoint: string) =>
  component(
    'nemo_guardrails',
    ['[components.config]', 'codec = "openai_chat"', 'tool_input = false', 'tool_output = false', '[components.config.remote]', `endpoint = ${JSON.stringify(endpoint)}`, 'config_id = "probe"', 'timeout_millis = 2000'].join('\n'),
  );

/** A Guardrails server that answers every check with a chat completion (case 20). */
let guard: http.Server | null = null;
async function guardrailsServer(): Promise<string> {
  guard = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ id: 'guard-1', object: 'chat.completion', model: 'gpt-4o-mini', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'guarded' } }] }));
    });
  });
  await new Promise<void>((resolve) => guard!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(guard.address() as AddressInfo).port}`;
}
afterAll(async () => {
  if (guard !== null) await new Promise<void>((resolve) => guard!.close(() => resolve()));
});

type Part = 'atof' | 'atif' | 'otlp:full' | 'otlp:gen_ai' | 'otlp:openinference' | 'files' | 'host calls' | 'host results';
interface Run extends ComponentRunResult {
  results: unknown[];
}
interface Case {
  components: string | (() => Promise<string>);
  script: Script;
  otlp: OtlpType[];
  /** A documented difference: the parts that differ, and a check that they differ exactly as documented. */
  differs?: { parts: Part[]; documented: string; check(native: Run, memory: Run): void };
}

/** Native writes `null` for every LLM payload under selectors; memory removes exactly the selected keys. */
const llmPayloadsAsNative = (events: readonly unknown[]) =>
  events.map((e) => ((e as { category?: string }).category === 'llm' ? { ...(e as object), data: null } : e));

const CASES: Record<string, Case> = {
  '01 control: no component': { components: '', script: observed, otlp: ['full', 'gen_ai'] },
  '02 control: adaptive, managed calls': { components: ADAPTIVE, script: managed, otlp: ['full'] },
  '03 redact emails': { components: pii('action = "redact"\ndetector = "email"'), script: observed, otlp: ['full', 'gen_ai'] },
  '04 hash every string': { components: pii('action = "hash"'), script: observed, otlp: ['full', 'gen_ai'] },
  '05 mask in the detector shape': { components: pii('action = "mask"\ndetector = "phone"'), script: observed, otlp: ['full', 'gen_ai'] },
  '06 regex_replace a pattern': { components: pii('action = "regex_replace"\npattern = "[0-9]{4}"\nreplacement = "####"'), script: observed, otlp: ['full', 'gen_ai'] },
  '07 remove with selectors': {
    components: pii('action = "remove"\ntarget_paths = ["/secret", "/nested/0", "/user_message"]'),
    script: observed,
    otlp: ['full', 'gen_ai'],
    differs: {
      parts: ['atof', 'atif', 'otlp:full', 'otlp:gen_ai'],
      documented: 'a selector removes exactly the selected keys; native nulls every LLM payload',
      check(native, memory) {
        expect(native.events.filter((e) => e.category === 'llm').map((e) => e.data)).toEqual([null, null]);
        expect(memory.events.filter((e) => e.category === 'llm').every((e) => e.data !== null)).toBe(true);
        expect(normalizeEvents(llmPayloadsAsNative(memory.events))).toEqual(normalizeEvents(native.events));
      },
    },
  },
  '08 the trajectory_context preset': { components: pii('preset = "trajectory_context"'), script: observed, otlp: ['full', 'gen_ai'] },
  '09 surfaces: marks only': { components: pii('action = "redact"\ndetector = "email"', 'input = false\noutput = false\ntool_input = false\ntool_output = false'), script: observed, otlp: ['full', 'gen_ai'] },
  '10 invalid pii_redaction (bad pattern)': { components: pii('action = "redact"\npattern = "("'), script: observed, otlp: ['full'] },
  '11 pii_redaction local_model (unavailable)': {
    components: component('pii_redaction', '[components.config]\nmode = "local_model"'),
    script: observed,
    otlp: ['full'],
    differs: {
      parts: ['files'],
      documented: 'nothing written on either; native leaves an empty ATOF file from before its activation failed, memory none',
      check(native, memory) {
        expect(fileShapes(native)).toEqual(['atof/events.jsonl (empty)']);
        expect(fileShapes(memory)).toEqual([]);
        expect(memory.status.pluginConfig?.diagnostics?.some((d) => d.code === 'plugins_toml.outputs_withheld')).toBe(true);
      },
    },
  },
  '12 pricing, observed calls': { components: PRICES, script: observed, otlp: ['full', 'openinference'] },
  '13 pricing resolution: alias, case, no fallthrough': {
    components: pricing(
      entry('GPT-4o-MINI', 'input_per_million = 10.0, output_per_million = 20.0', 'separate'),
      entry('other', 'input_per_million = 1.0, output_per_million = 1.0', 'separate', 'aliases = ["gpt-4o-mini-2024"]'),
    ),
    script: observed,
    otlp: ['full', 'openinference'],
  },
  '14 invalid pricing catalog': { components: pricing(entry('m', 'input_per_million = -1.0, output_per_million = 1.0')), script: observed, otlp: ['full'] },
  '15 redaction on managed calls': { components: ADAPTIVE + pii('action = "redact"\ndetector = "email"'), script: managed, otlp: ['full'] },
  '16 pricing on managed calls': {
    components: ADAPTIVE + PRICES,
    script: managed,
    otlp: ['full', 'openinference'],
    differs: {
      parts: ['otlp:openinference'],
      documented: "the same costs; memory reads a managed call's shapeless response (output text, finish reason), which native sends as JSON",
      check(native, memory) {
        const opts = { ignoreResourceKeys: SDK_RESOURCE_KEYS };
        const asNative = (spans: ReturnType<typeof normalizeSpans>) =>
          spans.map((span) => {
            const attributes = { ...(span.attributes as Record<string, unknown>) };
            if (attributes['openinference.span.kind'] === 'LLM') {
              delete attributes['llm.finish_reason'];
              delete attributes['output.value'];
              delete attributes['output.mime_type'];
            }
            return { ...span, attributes };
          });
        expect(asNative(normalizeSpans(memory.spans.openinference!, opts))).toEqual(asNative(normalizeSpans(native.spans.openinference!, opts)));
        const costs = (r: Run) => r.spans.openinference!.map((span) => span.attributes['llm.cost.total']).filter((c) => c !== undefined);
        expect(costs(memory)).toEqual([0.00045, 0.00045]);
        expect(costs(native)).toEqual(costs(memory));
      },
    },
  },
  '17 response and tool cache': { components: CACHE, script: managed, otlp: ['full'] },
  '18 nemo_guardrails without managed execution': { components: guardrails('http://127.0.0.1:9'), script: observed, otlp: ['full'] },
  '19 nemo_guardrails remote, server down': {
    components: ADAPTIVE + guardrails('http://127.0.0.1:9'),
    script: managed,
    otlp: ['full'],
    differs: {
      parts: ['atof', 'atif', 'otlp:full'],
      documented: 'nemo_guardrails (deprecated upstream) is not run by the memory relay: a warning at activation, in status() and in doctor',
      check(native, memory) {
        expect(native.events.some((e) => e.kind === 'mark' && e.name === 'nemo_guardrails.remote.error')).toBe(true);
        expect(memory.events.some((e) => e.name.startsWith('nemo_guardrails'))).toBe(false);
        expect(memory.problems.some((p) => p.includes('plugin.backend_unsupported_component') && p.includes('nemo_guardrails'))).toBe(true);
        expect(memory.status.pluginConfig?.diagnostics?.some((d) => d.level === 'warning' && d.code === 'plugin.backend_unsupported_component' && d.component === 'nemo_guardrails')).toBe(true);
        // Both hosts got their own results (native's adapter runs the call when native rejects it).
        expect(memory.results).toEqual(native.results);
      },
    },
  },
  '20 nemo_guardrails remote, server up': {
    components: async () => ADAPTIVE + guardrails(await guardrailsServer()),
    script: managed,
    otlp: ['full'],
    differs: {
      parts: ['atof', 'atif', 'otlp:full', 'host calls', 'host results'],
      documented: 'nemo_guardrails is not run by the memory relay: the host call runs instead of the Guardrails server answering',
      check(native, memory) {
        expect(native.terminalCalls.filter((c) => c.kind === 'llm')).toEqual([]);
        expect(JSON.stringify(native.results[0])).toContain('guarded');
        expect(memory.terminalCalls.filter((c) => c.kind === 'llm')).toHaveLength(2);
        expect(memory.problems.some((p) => p.includes('plugin.backend_unsupported_component') && p.includes('nemo_guardrails'))).toBe(true);
        expect(memory.status.pluginConfig?.diagnostics?.some((d) => d.level === 'warning' && d.code === 'plugin.backend_unsupported_component' && d.component === 'nemo_guardrails')).toBe(true);
      },
    },
  },
};

if (!nativeAvailable) console.warn(`configurations differential skipped: nemo-relay-node cannot load here (${nativeLoadError})`);

/** Cache marks carry run-dependent ages; everything else compares as written. */
function comparableEvents(events: readonly unknown[]): Json[] {
  return normalizeEvents(events).map((event) => {
    const metadata = (event as { metadata?: unknown }).metadata;
    if (metadata === null || typeof metadata !== 'object' || !('nemo_relay.response_cache.age_ms' in metadata)) return event;
    return { ...(event as object), metadata: { ...metadata, 'nemo_relay.response_cache.age_ms': '<age>' } } as Json;
  });
}
/** A cache hit's age (run-dependent) wherever a mark's metadata is carried (ATIF extras, OTLP attributes). */
const ageless = <T,>(value: T): T =>
  JSON.parse(JSON.stringify(value).replace(/(response_cache\.age_ms(\\?)":)\d+/g, (_, key: string, escape: string) => `${key}${escape}"<age>${escape}"`)) as T;
const trajectories = (r: Run) => ageless([...r.trajectories.values()].map((t) => normalize(t, new UuidLabels())));
const spansOf = (r: Run, type: OtlpType) => ageless(normalizeSpans(r.spans[type] ?? [], { ignoreResourceKeys: SDK_RESOURCE_KEYS }));
/** Which files each run wrote, and whether each is empty (their contents are compared as events and trajectories). */
const fileShapes = (r: Run) => [...r.files].map(([name, text]) => `${name.replace(/trajectory-.*\.json$/, 'trajectory-<session>.json')}${text === '' ? ' (empty)' : ''}`).sort();

function differences(native: Run, memory: Run, otlp: OtlpType[]): Part[] {
  const parts: Part[] = [];
  // Key order is not compared (a cached result comes back as the relay stored it).
  const sorted = (value: unknown): unknown =>
    Array.isArray(value) ? value.map(sorted) : value !== null && typeof value === 'object' ? Object.fromEntries(Object.keys(value).sort().map((k) => [k, sorted((value as Record<string, unknown>)[k])])) : value;
  const same = (a: unknown, b: unknown) => JSON.stringify(sorted(a)) === JSON.stringify(sorted(b));
  if (!same(comparableEvents(native.events), comparableEvents(memory.events))) parts.push('atof');
  if (!same(trajectories(native), trajectories(memory))) parts.push('atif');
  for (const type of otlp) if (!same(spansOf(native, type), spansOf(memory, type))) parts.push(`otlp:${type}`);
  if (!same(fileShapes(native), fileShapes(memory))) parts.push('files');
  if (!same(native.terminalCalls, memory.terminalCalls)) parts.push('host calls');
  if (!same(native.results, memory.results)) parts.push('host results');
  return parts;
}

const outcome = new Map<string, Part[]>();
afterAll(() => {
  if (outcome.size === 0) return;
  const equal = [...outcome.values()].filter((parts) => parts.length === 0).length;
  console.info(`memory matches native in ${equal} of ${outcome.size} configurations; the others differ only as documented: ${[...outcome].filter(([, p]) => p.length > 0).map(([name]) => name).join('; ')}`);
});

describe.skipIf(!nativeAvailable)('twenty configurations through native and memory', () => {
  for (const [name, test] of Object.entries(CASES)) {
    it(`${name}: ${test.differs ? `differs only as documented (${test.differs.documented})` : 'the same outputs'}`, async () => {
      const components = typeof test.components === 'string' ? test.components : await test.components();
      const runs: Record<string, Run> = {};
      for (const backend of FILE_BACKENDS) {
        (globalThis as { __results?: unknown[] }).__results = [];
        const run = await runComponents(backend.create(), { components, script: test.script, otlp: test.otlp });
        runs[backend.name] = { ...run, results: (globalThis as { __results?: unknown[] }).__results ?? [] };
      }
      const native = runs.native!;
      const memory = runs.memory!;
      const parts = differences(native, memory, test.otlp);
      outcome.set(name, parts);
      if (test.differs === undefined) {
        // Field by field first, for a readable failure.
        expect(comparableEvents(memory.events)).toEqual(comparableEvents(native.events));
        expect(trajectories(memory)).toEqual(trajectories(native));
        expect(fileShapes(memory)).toEqual(fileShapes(native));
        expect(memory.terminalCalls).toEqual(native.terminalCalls);
        for (const type of test.otlp) expect(spansOf(memory, type), type).toEqual(spansOf(native, type));
        expect(parts).toEqual([]);
      } else {
        test.differs.check(native, memory);
        expect(parts).toEqual(test.differs.parts);
      }
    }, 60_000);
  }
});
