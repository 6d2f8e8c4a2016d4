// `dropCredentialHeaders()` on the memory relay: while held, the relay drops
// credential headers inside its own walks (the object encoder's copy, the
// byte encoder's writer, the end-metadata entries, the response cache's keys
// and stored values), and every output must be exactly what the plugin's walk
// (`withoutSensitiveHeaders`) followed by the relay's plain encoding gave:
// the payload writers and copies value by value, then whole relays (ATOF
// lines on the byte path and the object path, event objects, ATIF), then the
// plugin end to end with every plugins.toml output (ATOF file and stream,
// ATIF files and uploads, OTLP, pii_redaction), the relay's drop against
// the same relay with the capability hidden (the plugin then walks itself).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { withoutSensitiveHeaders } from '../../../src/shared/credential-headers.ts';
import { createMemoryRelay, type MemoryRelay } from '../../../src/backends/memory/index.ts';
import { copyPayload } from '../../../src/backends/memory/encode/event-parts.ts';
import { payloadText } from '../../../src/backends/memory/encode/payload-bytes.ts';
import { convertMetadata, endMetadata, endMetadataJson, type EncodedMetadata, type EndRule } from '../../../src/backends/memory/encode/metadata.ts';
import { giveBack, takeBuilder } from '../../../src/shared/utf8-builder.ts';
import type { RelayBackend, ScopeHandle } from '../../../src/relay/contract.ts';
import type { AtofEvent } from '../../../src/formats/atof/types.ts';
import { normalize, normalizeText, UuidLabels } from '../../differential/normalize.ts';
import { normalizeSpans, SDK_RESOURCE_KEYS } from '../../support/otlp-normalize.ts';
import { runComponents, type ComponentRunResult, type Script } from '../../support/component-run.ts';
import { seededRandom } from '../../support/seeded-random.ts';
import { formatCount } from '../../../src/cli/io.ts';
import { generatedCount } from '../../support/slow-suite.ts';
import { valueWithHeaders } from '../../support/header-values.ts';
import { tempDir } from '../../contract/backends.ts';

const walk = <T>(value: T): T => withoutSensitiveHeaders(value);

function metadataText(metadata: EncodedMetadata): string {
  const out = takeBuilder();
  try {
    metadata.write(out);
    return out.text();
  } finally {
    giveBack(out);
  }
}

const END_RULES: EndRule[] = ['merge', 'llm', 'llm-error', 'tool-error', 'managed-ok'];

describe('the memory relay drops credential headers in its own walks exactly as the walk before them', () => {
  const values = generatedCount(4000);
  it(`payload text, payload copy and metadata (entries and JSON, every end rule) on ${formatCount(values)} generated values`, () => {
    const next = seededRandom(21);
    let changed = 0;
    for (let i = 0; i < values; i++) {
      const value = valueWithHeaders(next);
      const start = valueWithHeaders(next);
      const walked = walk(value);
      if (walked !== value) changed++;
      const label = `value ${i}`;
      expect(payloadText(value, true), label).toBe(payloadText(walked, false));
      const copied = copyPayload(value, true);
      expect(copied, label).toStrictEqual(copyPayload(walked, false));
      expect(JSON.stringify(copied), label).toBe(JSON.stringify(copyPayload(walked, false)));
      const metadata = convertMetadata(value, true);
      const walkedMetadata = convertMetadata(walked, false);
      expect(metadataText(metadata), label).toBe(metadataText(walkedMetadata));
      expect(JSON.stringify(metadata.json), label).toBe(JSON.stringify(walkedMetadata.json));
      const startMetadata = convertMetadata(start, true);
      const walkedStart = convertMetadata(walk(start), false);
      for (const rule of END_RULES) {
        expect(metadataText(endMetadata(rule, startMetadata, value, true)), `${label} ${rule}`).toBe(metadataText(endMetadata(rule, walkedStart, walked, false)));
        expect(JSON.stringify(endMetadataJson(rule, startMetadata.json, value, true)), `${label} ${rule}`).toBe(JSON.stringify(endMetadataJson(rule, walkedStart.json, walked, false)));
      }
    }
    // The generated values did carry credentials for the walk to drop.
    expect(changed).toBeGreaterThan(values / 10);
  });

  it('flat metadata with header text under a headers key, and key lists seen often enough to get a generated copy', () => {
    for (let round = 0; round < 40; round++) {
      const flat = { session_id: 's', turn: round, headers: 'Authorization: Bearer a\r\naccept: json\r\n' };
      expect(metadataText(convertMetadata(flat, true))).toBe('{"headers":"accept: json\\r\\n","session_id":"s","turn":' + round + '}');
      const nested = { session_id: 's', request: { method: 'POST', headers: { authorization: 'Bearer a', accept: 'json' } } };
      expect(payloadText(nested, true)).toBe(payloadText(walk(nested), false));
      expect(payloadText(nested, true)).not.toContain('Bearer');
      // Without the drop, the same key lists are written as given.
      expect(payloadText(nested, false)).toContain('Bearer a');
    }
  });
});

// ---- whole relays ------------------------------------------------------------

/** Receivers of one relay: ATOF only (the byte path), ATIF (scope events as objects), or a subscriber too (everything as objects). */
type Receivers = 'atof' | 'atof+atif' | 'atof+atif+subscriber';

interface Recorded {
  atof: string;
  trajectories: string[];
  events: string;
}

/** Every contract call with the generated values as its payloads; `clean` runs on each first (the plugin's walk, or nothing). */
async function recordValues(relay: MemoryRelay, receivers: Receivers, values: unknown[], clean: (value: unknown) => unknown): Promise<Recorded> {
  const dir = tempDir('memory-credentials');
  const exporter = relay.registerAtofExporter({ outputDirectory: dir, filename: 'events.jsonl', mode: 'overwrite' });
  const events: AtofEvent[] = [];
  if (receivers === 'atof+atif+subscriber') relay.subscribe((event) => void events.push(event));
  const trajectories: string[] = [];
  let v = 0;
  const take = () => clean(values[v++ % values.length]);
  for (let session = 0; v < values.length; session++) {
    const scope = relay.pushScope({ name: `session-${session}`, category: 'agent', input: take(), metadata: take() as never });
    const atif = receivers === 'atof' ? null : relay.registerAtifExporter({ scope: scope as ScopeHandle, sessionId: `s${session}`, agentName: 'a', agentVersion: '1' });
    relay.mark({ name: 'm', parent: scope, data: take(), metadata: take() as never });
    const llm = relay.llmStart({ name: 'llm', parent: scope, modelName: 'm', request: { headers: take() as never, content: take() }, metadata: take() as never });
    relay.llmEnd(llm, { response: take(), metadata: take() as never });
    const failed = relay.llmStart({ name: 'llm', parent: scope, request: { headers: { accept: 'json' }, content: take() }, metadata: take() as never });
    relay.llmEnd(failed, { response: take(), metadata: take() as never, status: 'error' });
    const tool = relay.toolStart({ name: 'tool', parent: scope, toolCallId: 'c1', args: take(), metadata: take() as never });
    relay.toolEnd(tool, { result: take(), annotation: take(), metadata: take() as never });
    const failing = relay.toolStart({ name: 'failing', parent: scope, args: take() });
    relay.toolEnd(failing, { result: take(), status: 'error', metadata: take() as never });
    const inner = relay.pushScope({ name: 'inner', category: 'function', parent: scope, input: take(), metadata: take() as never });
    relay.popScope(inner, { output: take(), metadata: take() as never });
    relay.popScope(scope, { output: take(), metadata: take() as never });
    if (atif !== null) {
      trajectories.push(normalizeText(await atif.exportJson(), new UuidLabels()));
      atif.deregister();
    }
  }
  await exporter.flush();
  await exporter.close();
  const atof = normalizeText(fs.readFileSync(path.join(dir, 'events.jsonl'), 'utf8'), new UuidLabels());
  fs.rmSync(dir, { recursive: true, force: true });
  return { atof, trajectories, events: JSON.stringify(events.map((event) => normalize(event, new UuidLabels()))) };
}

/** A relay with a clock of its own: two relays fed alike stamp alike. */
function relayWithClock(): MemoryRelay {
  let now = 1_764_000_000_000_000;
  return createMemoryRelay({ clock: () => (now += 7) });
}

describe('a whole memory relay: dropping inside against the walk before it', () => {
  for (const receivers of ['atof', 'atof+atif', 'atof+atif+subscriber'] as const) {
    it(`${receivers}: the same ATOF bytes, trajectories and event objects for 1,500 generated payloads`, async () => {
      const next = seededRandom(receivers.length);
      const values = Array.from({ length: 1500 }, () => valueWithHeaders(next));
      const dropping = relayWithClock();
      const removal = dropping.dropCredentialHeaders();
      const inside = await recordValues(dropping, receivers, values, (value) => value);
      const walked = await recordValues(relayWithClock(), receivers, values, walk);
      expect(inside.atof.length).toBeGreaterThan(100_000);
      expect(inside.atof).toBe(walked.atof);
      expect(inside.trajectories).toEqual(walked.trajectories);
      expect(inside.events).toBe(walked.events);
      // Removed (twice: the second does nothing), payloads are recorded as given again.
      removal();
      removal();
      const given = await recordValues(dropping, receivers, values, (value) => value);
      expect(given.atof).toMatch(/Bearer a/);
      await dropping.shutdown();
    });
  }
});

// ---- the plugin end to end -----------------------------------------------------

/** The memory relay without the capability: the plugin then walks every payload itself, as before. */
function withoutDropping(relay: MemoryRelay): RelayBackend {
  return new Proxy(relay, {
    get(target, key) {
      if (key === 'dropCredentialHeaders') return undefined;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  }) as RelayBackend;
}

/** A host conversation whose payload fields are generated values (headers in every form, case, position and depth). */
function generatedConversation(seed: number): Script {
  return ({ hooks }) => {
    const next = seededRandom(seed);
    const value = () => valueWithHeaders(next);
    for (let s = 0; s < 4; s++) {
      const session = `gen-${s}`;
      const base = { session_id: session, turn_id: 't1' };
      hooks.emit('on_session_start', { session_id: session, model: 'gpt-4o-mini', platform: 'cli', extra: value() } as never);
      hooks.emit('pre_llm_call', { ...base, user_message: 'hi', conversation_history: [value()], extra: value() } as never);
      for (let call = 0; call < 3; call++) {
        const id = `${session}:api:${call}`;
        hooks.emit('pre_api_request', { ...base, api_request_id: id, model: 'gpt-4o-mini', provider: 'openai', request: { method: 'POST', headers: { authorization: 'Bearer top', accept: 'json', nested: value() }, body: { messages: [{ role: 'user', content: 'x' }], extra: value() } } } as never);
        hooks.emit('post_api_request', { ...base, api_request_id: id, model: 'gpt-4o-mini', provider: 'openai', response: { choices: [{ message: { role: 'assistant', content: 'ok' } }], extra: value() }, extra: value() } as never);
        hooks.emit('pre_tool_call', { ...base, tool_name: 'lookup', tool_call_id: `c${call}`, args: value() } as never);
        hooks.emit('post_tool_call', { ...base, tool_name: 'lookup', tool_call_id: `c${call}`, result: value(), status: 'ok' } as never);
      }
      // An end without a start: the whole raw payload is recorded as a mark.
      hooks.emit('post_api_request', { ...base, api_request_id: 'orphan', request: { headers: { authorization: 'Bearer orphan' }, raw: value() }, response: value() } as never);
      hooks.emit('post_llm_call', { ...base, assistant_response: 'done', extra: value() } as never);
      hooks.emit('on_session_end', { session_id: session, summary: value() } as never);
      hooks.emit('on_session_finalize', { session_id: session } as never);
    }
  };
}

const PII = ['[[components]]', 'kind = "pii_redaction"', 'enabled = true', '', '[components.config.builtin]', 'action = "redact"', 'detector = "email"', ''].join('\n');

function comparable(run: ComponentRunResult) {
  const opts = { ignoreResourceKeys: SDK_RESOURCE_KEYS };
  return {
    atof: normalizeText(run.atofText, new UuidLabels()),
    trajectories: [...run.trajectories.values()].map((t) => normalize(t, new UuidLabels())),
    settingsTrajectories: [...run.settingsTrajectories.values()].map((t) => normalize(t, new UuidLabels())),
    full: normalizeSpans(run.spans.full ?? [], opts),
    genAi: normalizeSpans(run.spans.gen_ai ?? [], opts),
    openinference: normalizeSpans(run.spans.openinference ?? [], opts),
    remote: run.remoteBodies.map((body) => normalizeText(body, new UuidLabels())).sort(),
    problems: run.problems,
  };
}

describe('the plugin over the memory relay: no walk of its own, every output as before', () => {
  for (const [name, components] of [['observability only', ''], ['with pii_redaction', PII]] as const) {
    it(`${name}: ATOF file and stream, ATIF files and uploads, OTLP (full, gen_ai, openinference)`, async () => {
      const options = { components, script: generatedConversation(components.length), otlp: ['full', 'gen_ai', 'openinference'] as const, remote: true, settingsAtif: true };
      const inside = await runComponents(createMemoryRelay(), options);
      const walked = await runComponents(withoutDropping(createMemoryRelay()), options);
      const a = comparable(inside);
      const b = comparable(walked);
      expect(a.atof.split('\n').length).toBeGreaterThan(60);
      expect(a.full.length).toBeGreaterThan(10);
      expect(a.remote.length).toBeGreaterThan(0);
      expect(a).toEqual(b);
      expect(a.atof).not.toMatch(/Bearer (top|orphan)/);
    });
  }
});

const CACHE = [
  '[[components]]',
  'kind = "adaptive"',
  '[components.config.response_cache]',
  'namespace = "credentials"',
  '[components.config.response_cache.tools]',
  'enabled = true',
  '[components.config.response_cache.tools.classes.ro]',
  'cacheable = true',
  'members = ["read_*"]',
  'ttl_seconds = 60',
  '',
].join('\n');

/** Managed calls through the response cache, credentials in the request, the arguments and the results: each made twice (a miss, then a hit). */
const managedCalls: Script = async ({ hooks, terminal }) => {
  hooks.emit('on_session_start', { session_id: 's', model: 'gpt-4o-mini' } as never);
  const results: unknown[] = [];
  const request = { headers: { authorization: 'Bearer top', accept: 'json', nested: { headers: { cookie: 'SECRET-c' } } }, model: 'gpt-4o-mini', temperature: 0, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], extra: { headers: [['x-api-key', 'SECRET-k']] } };
  const reply = { id: 'c1', object: 'chat.completion', model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], raw: { headers: { 'set-cookie': 'SECRET-s', accept: 'json' } } };
  for (let i = 0; i < 2; i++) {
    results.push(await hooks.execute('llm_execution', { session_id: 's', turn_id: 't', api_request_id: `a${i}`, model: 'gpt-4o-mini', provider: 'openai', request } as never, terminal('llm', reply) as never));
    results.push(await hooks.execute('tool_execution', { session_id: 's', turn_id: 't', tool_name: 'read_file', tool_call_id: `c${i}`, args: { path: 'a', headers: 'Cookie: SECRET-t' } } as never, terminal('tool', { content: 'x', headers: { authorization: 'SECRET-r' } }) as never));
  }
  hooks.emit('on_session_finalize', { session_id: 's' } as never);
  (globalThis as { __credentialResults?: unknown[] }).__credentialResults = results;
};

/** Events with the cache's run-dependent age made comparable. */
function withoutAges(events: readonly AtofEvent[]): unknown[] {
  return events.map((event) => {
    const metadata = event.metadata as Record<string, unknown> | null;
    if (metadata === null || typeof metadata !== 'object' || !('nemo_relay.response_cache.age_ms' in metadata)) return normalize(event, new UuidLabels());
    return normalize({ ...event, metadata: { ...metadata, 'nemo_relay.response_cache.age_ms': '<age>' } }, new UuidLabels());
  });
}

describe('the response cache over the memory relay: keys, stored values and what a hit returns, as before', () => {
  it('records, caches and returns the same, and keeps credentials out of all three', async () => {
    const run = async (backend: RelayBackend) => {
      const result = await runComponents(backend, { components: CACHE, script: managedCalls });
      return { events: withoutAges(result.events), terminalCalls: result.terminalCalls, results: (globalThis as { __credentialResults?: unknown[] }).__credentialResults, problems: result.problems };
    };
    const inside = await run(createMemoryRelay());
    const walked = await run(withoutDropping(createMemoryRelay()));
    expect(inside).toEqual(walked);
    const text = JSON.stringify(inside.events);
    expect(text).toContain('"status":"hit"');
    // The credentials under headers keys are gone (a headers object's own `nested` entry is not a credential: kept, as the walk keeps it).
    expect(text).not.toMatch(/SECRET-[kstr]/);
    expect(text).toContain('SECRET-c');
    // A miss returns the host's own result; a hit the stored one: what was recorded, without credentials.
    expect(JSON.stringify(inside.results!.slice(0, 2))).toMatch(/SECRET-s.*SECRET-r/);
    expect(JSON.stringify(inside.results!.slice(2))).not.toMatch(/SECRET-[sr]/);
    expect(inside.results).toHaveLength(4);
  });
});
