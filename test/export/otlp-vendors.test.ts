// What Langfuse and Phoenix make of the spans we send (docs/operators/otlp.md, "What Langfuse and Phoenix show").
//
// Recorded host sessions (an OpenAI tool loop with a failing tool, an Anthropic session that writes then reads
// the prompt cache, a session with a subagent) run through the plugin on the memory relay and on native, into a
// loopback OTLP receiver, as `gen_ai` and as `openinference`. Each capture is then read the way each vendor's
// ingestion reads a span, attribute by attribute (sources read, at the commits the docs name):
//
// - Langfuse, packages/shared/src/server/otel/OtelIngestionProcessor.ts and ObservationTypeMapper.ts: the
//   observation type, model, usage details (input without the cache counts it recognises, total given or summed),
//   input and output, level, and the trace's session (from the root span);
// - Phoenix, src/phoenix/trace/otel.py, trace/gen_ai/conversion.py (gen_ai read as OpenInference),
//   db/insertion/span.py (a trace joins the session of the first of its spans that names one),
//   db/insertion/helpers.py (cost needs an LLM span with a model name), utilities/project.py (the project).
//
// The views below keep only what those files read, written here from reading them; they are checked against the
// program's own values (the session id, the response's model and usage as the provider counts it, the messages,
// the tool calls), so a missing or misnamed attribute fails here. What a vendor still misreads is pinned, with the
// plugins.toml lines (existing endpoint options) the docs give to fix it, on both backends.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import { loadNativeRelay } from '../../native/index.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { readStream } from '../differential/replay.ts';
import { nativeAvailable, nativeLoadError } from '../contract/backends.ts';
import { startHttpReceiver, type AttributeValue, type Attributes, type DecodedSpan, type Receiver } from '../support/otlp-receiver.ts';
import { normalizeSpans, SDK_RESOURCE_KEYS } from '../support/otlp-normalize.ts';
import { replayWithOtlp } from '../support/otlp-replay.ts';
import type { HookLine } from '../fixtures/streams/script.ts';

const STREAMS = path.resolve(import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname), '../fixtures/streams');
type Type = 'gen_ai' | 'openinference';
type Backend = 'memory' | 'native';
const BACKENDS: Backend[] = nativeAvailable ? ['memory', 'native'] : ['memory'];
if (!nativeAvailable) console.warn(`vendor views run on the memory relay only: nemo-relay-node cannot load here (${nativeLoadError})`);

/**
 * The endpoint lines docs/operators/otlp.md gives Phoenix: it files spans under the resource's
 * `openinference.project.name` (not service.name), and prefers the price of the span's `llm.provider`. A gen_ai
 * endpoint takes no attribute_mappings (native ignores them there), so nothing can rename its cache-write count.
 */
const DOCUMENTED: Record<Type, string[]> = {
  openinference: [
    'resource_attributes = { "openinference.project.name" = "my-agent" }',
    'attribute_mappings = [{ key = "openinference.metadata.provider", alias = "llm.provider" }]',
  ],
  gen_ai: ['resource_attributes = { "openinference.project.name" = "my-agent" }'],
};

// ---------------------------------------------------------------------------------------------------------------
// What the program did, read from its hook stream.

type Payload = Record<string, unknown>;
interface Call {
  provider: string;
  model: string;
  /** The whole prompt, by the usage's own shape: OpenAI's prompt_tokens; Anthropic's input_tokens plus both cache counts. */
  prompt: number;
  completion: number;
  cacheRead?: number;
  cacheWrite?: number;
  lastUserText: string;
}
interface ToolCall {
  id: string;
  name: string;
  args: unknown;
  result: unknown;
  failed: boolean;
}
interface Program {
  sessionId: string;
  calls: Call[];
  tools: ToolCall[];
}

function programOf(lines: readonly HookLine[]): Program {
  const payloads = (hook: string) => lines.filter((l) => l.hook === hook).map((l) => l.payload as Payload);
  const requests = new Map(payloads('pre_api_request').map((p) => [p.api_request_id, p]));
  const calls = payloads('post_api_request').map((p): Call => {
    const request = requests.get(p.api_request_id)!;
    const response = p.response as Payload;
    const usage = response.usage as Record<string, number | undefined> & { prompt_tokens_details?: { cached_tokens?: number } };
    const messages = ((request.request as Payload).body as { messages: { role: string; content: unknown }[] }).messages;
    const text = (m: { content: unknown }) => (typeof m.content === 'string' ? m.content : (m.content as { type: string; text?: string }[]).filter((b) => b.type === 'text').map((b) => b.text).join(''));
    const lastUserText = messages.filter((m) => m.role === 'user').map(text).filter((t) => t !== '').at(-1)!;
    if (usage.prompt_tokens === undefined) {
      const read = usage.cache_read_input_tokens ?? 0;
      const write = usage.cache_creation_input_tokens ?? 0;
      return { provider: 'anthropic', model: String(response.model), prompt: usage.input_tokens! + read + write, completion: usage.output_tokens!, cacheRead: read, cacheWrite: write, lastUserText };
    }
    const cacheRead = usage.prompt_tokens_details?.cached_tokens;
    return { provider: String(p.provider), model: String(response.model), prompt: usage.prompt_tokens, completion: usage.completion_tokens!, cacheRead, cacheWrite: usage.cache_write_tokens, lastUserText };
  });
  const results = new Map(payloads('post_tool_call').map((p) => [p.tool_call_id, p]));
  const tools = payloads('pre_tool_call').map((p): ToolCall => {
    const end = results.get(p.tool_call_id)!;
    return { id: String(p.tool_call_id), name: String(p.tool_name), args: p.args, result: end.result, failed: end.status === 'error' };
  });
  return { sessionId: String(payloads('on_session_start')[0]!.session_id), calls, tools };
}

// ---------------------------------------------------------------------------------------------------------------
// Langfuse's view of one span.

interface LangfuseObservation {
  type: string;
  name: string;
  model?: string;
  usage: Record<string, number>;
  input: unknown;
  output: unknown;
  level: 'ERROR' | 'DEFAULT';
}

function langfuseType(a: Attributes): string {
  const oi: Record<string, string> = { LLM: 'GENERATION', AGENT: 'AGENT', TOOL: 'TOOL', CHAIN: 'CHAIN' };
  const op: Record<string, string> = { chat: 'GENERATION', invoke_agent: 'AGENT', execute_tool: 'TOOL' };
  if (typeof a['openinference.span.kind'] === 'string') return oi[a['openinference.span.kind']] ?? 'SPAN';
  if (typeof a['gen_ai.operation.name'] === 'string') return op[a['gen_ai.operation.name']] ?? 'SPAN';
  if (a['gen_ai.tool.name'] || a['gen_ai.tool.call.id']) return 'TOOL';
  return 'SPAN';
}

/** Usage details: any gen_ai.usage.* / llm.token_count.* key, the input less the cache counts it knows, total given or summed. */
function langfuseUsage(a: Attributes): Record<string, number> {
  const raw: Record<string, number> = {};
  for (const [key, value] of Object.entries(a)) {
    if (!key.startsWith('gen_ai.usage.') && !key.startsWith('llm.token_count.')) continue;
    raw[key.replace('gen_ai.usage.', '').replace('llm.token_count.', '')] = Number(value);
  }
  if (Object.keys(raw).length === 0) return {};
  const input = raw.input_tokens ?? raw.prompt;
  const output = raw.output_tokens ?? raw.completion;
  const read = raw['cache_read.input_tokens'] ?? raw['prompt_details.cache_read'];
  const write = raw['cache_creation.input_tokens'] ?? raw['prompt_details.cache_write'];
  const known = ['input_tokens', 'prompt', 'output_tokens', 'completion', 'total', 'cache_read.input_tokens', 'prompt_details.cache_read', 'cache_creation.input_tokens', 'prompt_details.cache_write'];
  const usage: Record<string, number> = Object.fromEntries(Object.entries(raw).filter(([key]) => !known.includes(key)));
  if (input !== undefined) usage.input = Math.max(input - (read ?? 0) - (write ?? 0), 0);
  if (output !== undefined) usage.output = output;
  if (read !== undefined) usage.input_cached_tokens = read;
  if (write !== undefined) usage.input_cache_creation = write;
  // IngestionService: without a total, the total is the sum of every usage detail.
  usage.total = raw.total ?? Object.values(usage).reduce((sum, n) => sum + n, 0);
  return usage;
}

function langfuseObservation(span: DecodedSpan): LangfuseObservation {
  const a = span.attributes;
  const model = [a['gen_ai.response.model'], a['gen_ai.request.model'], a['llm.model_name']].find((v) => typeof v === 'string' && v !== '') as string | undefined;
  let input: unknown = null;
  let output: unknown = null;
  if (a['input.value'] !== undefined || a['output.value'] !== undefined) [input, output] = [a['input.value'] ?? null, a['output.value'] ?? null];
  else if (a['gen_ai.input.messages'] !== undefined || a['gen_ai.output.messages'] !== undefined) [input, output] = [a['gen_ai.input.messages'] ?? null, a['gen_ai.output.messages'] ?? null];
  else if (a['gen_ai.tool.call.arguments'] !== undefined || a['gen_ai.tool.call.result'] !== undefined) [input, output] = [a['gen_ai.tool.call.arguments'] ?? null, a['gen_ai.tool.call.result'] ?? null];
  const name = typeof a['gen_ai.tool.name'] === 'string' ? a['gen_ai.tool.name'] : span.name;
  return { type: langfuseType(a), name, model, usage: langfuseUsage(a), input, output, level: span.status.code === 2 ? 'ERROR' : 'DEFAULT' };
}

/** The trace's session and user: only the root span (or one with a trace-level attribute) sets them. */
function langfuseTrace(spans: readonly DecodedSpan[]): { sessionId?: string; userId?: string; name?: string; input: unknown } {
  const root = spans.find((s) => s.parentSpanId === '');
  if (root === undefined) return { input: null };
  const a = root.attributes;
  const sessionId = [a['langfuse.session.id'], a['session.id'], a['gen_ai.conversation.id']].find((v) => typeof v === 'string' && v !== '') as string | undefined;
  const userId = [a['langfuse.user.id'], a['user.id']].find((v) => typeof v === 'string' && v !== '') as string | undefined;
  return { sessionId, userId, name: root.name, input: langfuseObservation(root).input };
}

// ---------------------------------------------------------------------------------------------------------------
// Phoenix's view of one span: its OpenInference attributes, those it derives from gen_ai.* added where absent.

function phoenixAttributes(span: DecodedSpan): Attributes {
  const a = span.attributes;
  const derived: Attributes = {};
  const op = a['gen_ai.operation.name'];
  const kinds: Record<string, string> = { chat: 'LLM', invoke_agent: 'AGENT', execute_tool: 'TOOL' };
  if (typeof op === 'string' && kinds[op] !== undefined) derived['openinference.span.kind'] = kinds[op]!;
  if (typeof a['gen_ai.provider.name'] === 'string') derived['llm.provider'] = a['gen_ai.provider.name'];
  if (typeof a['gen_ai.conversation.id'] === 'string') derived['session.id'] = a['gen_ai.conversation.id'];
  if (typeof a['gen_ai.request.model'] === 'string') derived['llm.model_name'] = a['gen_ai.request.model'];
  const count = (key: string) => (typeof a[key] === 'number' ? (a[key] as number) : undefined);
  const input = count('gen_ai.usage.input_tokens');
  const output = count('gen_ai.usage.output_tokens');
  if (input !== undefined) derived['llm.token_count.prompt'] = input;
  if (output !== undefined) derived['llm.token_count.completion'] = output;
  if (input !== undefined && output !== undefined) derived['llm.token_count.total'] = input + output;
  if (count('gen_ai.usage.cache_read.input_tokens') !== undefined) derived['llm.token_count.prompt_details.cache_read'] = count('gen_ai.usage.cache_read.input_tokens')!;
  if (count('gen_ai.usage.cache_creation.input_tokens') !== undefined) derived['llm.token_count.prompt_details.cache_write'] = count('gen_ai.usage.cache_creation.input_tokens')!;
  if (typeof a['gen_ai.tool.name'] === 'string') derived['tool.name'] = a['gen_ai.tool.name'];
  if (typeof a['gen_ai.tool.call.arguments'] === 'string') derived['input.value'] = a['gen_ai.tool.call.arguments'];
  if (a['gen_ai.tool.call.result'] !== undefined) derived['output.value'] = a['gen_ai.tool.call.result'];
  if (typeof a['gen_ai.input.messages'] === 'string') {
    const messages = JSON.parse(a['gen_ai.input.messages']) as { role: string; parts: { type: string; content?: string }[] }[];
    messages.forEach((m, i) => {
      derived[`llm.input_messages.${i}.message.role`] = m.role;
      const text = m.parts.filter((p) => p.type === 'text').map((p) => p.content).join('');
      if (text !== '') derived[`llm.input_messages.${i}.message.content`] = text;
    });
  }
  return { ...derived, ...a };
}

interface PhoenixView {
  project: string;
  /** The session of each trace: that of the first span, in arrival order, that names one. */
  sessions: Map<string, string>;
  spans: { kind: string; name: string; attributes: Attributes; costed: boolean; error: boolean }[];
}

function phoenixView(spans: readonly DecodedSpan[]): PhoenixView {
  const sessions = new Map<string, string>();
  const out: PhoenixView['spans'] = [];
  for (const span of spans) {
    const a = phoenixAttributes(span);
    const session = typeof a['session.id'] === 'string' ? a['session.id'].trim() : '';
    if (session !== '' && !sessions.has(span.traceId)) sessions.set(span.traceId, session);
    const kind = String(a['openinference.span.kind'] ?? 'UNKNOWN');
    const model = a['llm.model_name'];
    out.push({ kind, name: span.name, attributes: a, costed: kind === 'LLM' && typeof model === 'string' && model.trim() !== '', error: span.status.code === 2 });
  }
  const project = spans[0]?.resource['openinference.project.name'];
  return { project: typeof project === 'string' && project !== '' ? project : 'default', sessions, spans: out };
}

// ---------------------------------------------------------------------------------------------------------------

let rx: Receiver;
beforeAll(async () => {
  rx = await startHttpReceiver();
});
afterAll(async () => {
  await rx?.close();
});

async function capture(backend: Backend, stream: string, type: Type, extra: string[]): Promise<DecodedSpan[]> {
  rx.requests.length = 0;
  const relay = backend === 'native' ? loadNativeRelay({ logger: silentLogger }) : createMemoryRelay({ logger: silentLogger });
  const result = await replayWithOtlp(relay, readStream(path.join(STREAMS, `${stream}.hooks.jsonl`)), { endpoints: [{ type, endpoint: rx.url, extra }], localFiles: false });
  expect(result.problems).toEqual([]);
  return [...rx.spans()];
}

const program = (stream: string) => programOf(readStream(path.join(STREAMS, `${stream}.hooks.jsonl`)));
const llmSpans = (spans: readonly DecodedSpan[]) => spans.filter((s) => s.attributes['openinference.span.kind'] === 'LLM' || s.attributes['gen_ai.operation.name'] === 'chat');
const toolSpans = (spans: readonly DecodedSpan[]) => spans.filter((s) => s.attributes['openinference.span.kind'] === 'TOOL' || s.attributes['gen_ai.operation.name'] === 'execute_tool');
const json = (value: AttributeValue | unknown) => (typeof value === 'string' ? (JSON.parse(value) as unknown) : value);

/** Each backend's spans for one stream, type and set of endpoint lines; memory's must be native's. */
async function spansOf(stream: string, type: Type, extra: string[]): Promise<Record<Backend, DecodedSpan[]>> {
  const out = {} as Record<Backend, DecodedSpan[]>;
  for (const backend of BACKENDS) out[backend] = await capture(backend, stream, type, extra);
  if (out.native !== undefined) expect(normalizeSpans(out.memory, { ignoreResourceKeys: SDK_RESOURCE_KEYS })).toEqual(normalizeSpans(out.native, { ignoreResourceKeys: SDK_RESOURCE_KEYS }));
  return out;
}

describe('what Langfuse reads from our spans', () => {
  for (const type of ['gen_ai', 'openinference'] as const) {
    it(`${type}: sessions, generations with model, usage and messages, tools with their input and output, failures as errors`, async () => {
      for (const stream of ['tool-loop', 'subagent']) {
        const want = program(stream);
        const byBackend = await spansOf(stream, type, []);
        for (const backend of BACKENDS) {
          const spans = byBackend[backend];
          const where = `${type} ${stream} on ${backend}`;
          const trace = langfuseTrace(spans);
          expect(trace.sessionId, where).toBe(want.sessionId);
          // No user id: the hooks carry none.
          expect(trace.userId, where).toBeUndefined();
          const generations = llmSpans(spans).map(langfuseObservation);
          expect(generations.map((g) => [g.type, g.model]), where).toEqual(want.calls.map((c) => ['GENERATION', c.model]));
          expect(generations.map((g) => [g.usage.input, g.usage.output, g.usage.total]), where).toEqual(want.calls.map((c) => [c.prompt - (c.cacheRead ?? 0), c.completion, c.prompt + c.completion]));
          for (const [i, g] of generations.entries()) expect(String(g.input), where).toContain(want.calls[i]!.lastUserText);
          const tools = toolSpans(spans).map(langfuseObservation);
          const wantTools = [...want.tools].sort((x, y) => x.id.localeCompare(y.id));
          const ids = toolSpans(spans).map((s) => String(s.attributes['gen_ai.tool.call.id'] ?? s.attributes['tool_call.id']));
          const got = tools.map((t, i) => ({ id: ids[i]!, name: t.name, type: t.type, input: json(t.input), level: t.level })).sort((x, y) => x.id.localeCompare(y.id));
          expect(got, where).toEqual(wantTools.map((t) => ({ id: t.id, name: t.name, type: 'TOOL', input: t.args, level: t.failed ? 'ERROR' : 'DEFAULT' })));
          for (const t of tools.filter((x) => x.level === 'DEFAULT')) expect(t.output, where).not.toBeNull();
        }
      }
    });
  }

  it("gen_ai: a cache write is counted twice in the total and billed as input (its key is not the conventions'); openinference's counts are read right", async () => {
    const want = program('anthropic');
    expect(want.calls.some((c) => (c.cacheWrite ?? 0) > 0)).toBe(true);
    const exact = want.calls.map((c) => ({ input: c.prompt - c.cacheRead! - c.cacheWrite!, output: c.completion, input_cached_tokens: c.cacheRead, input_cache_creation: c.cacheWrite, total: c.prompt + c.completion }));
    const usage = (spans: DecodedSpan[]) => llmSpans(spans).map((s) => langfuseObservation(s).usage);
    for (const [backend, spans] of Object.entries(await spansOf('anthropic', 'openinference', []))) expect(usage(spans), backend).toEqual(exact);
    for (const [backend, spans] of Object.entries(await spansOf('anthropic', 'gen_ai', []))) {
      expect(usage(spans), backend).toEqual(
        want.calls.map((c) => ({ input: c.prompt - c.cacheRead!, output: c.completion, input_cached_tokens: c.cacheRead, 'cache_write.input_tokens': c.cacheWrite, total: c.prompt + c.completion + c.cacheWrite! })),
      );
    }
  });

  it("openinference: a user id the host's session-end payload carries becomes the trace's user with the documented mapping (gen_ai cannot)", async () => {
    const lines = readStream(path.join(STREAMS, 'tool-loop.hooks.jsonl')).map((l) => (l.hook === 'on_session_finalize' ? { ...l, payload: { ...(l.payload as Payload), user_id: 'user-42' } } : l));
    const mapping = 'attribute_mappings = [{ key = "nemo_relay.end.data.user_id", alias = "user.id" }]';
    const users: Record<string, (string | undefined)[]> = {};
    for (const backend of BACKENDS) {
      users[backend] = [];
      for (const type of ['openinference', 'gen_ai'] as const) {
        rx.requests.length = 0;
        const relay = backend === 'native' ? loadNativeRelay({ logger: silentLogger }) : createMemoryRelay({ logger: silentLogger });
        await replayWithOtlp(relay, lines, { endpoints: [{ type, endpoint: rx.url, extra: [mapping] }], localFiles: false });
        users[backend]!.push(langfuseTrace([...rx.spans()]).userId);
      }
    }
    for (const backend of BACKENDS) expect(users[backend], backend).toEqual(['user-42', undefined]);
  });

  /**
   * The known difference (docs/backends/memory-and-native.md): a framework adapter's response has no provider's
   * shape, and native reads it by the provider's name. What Langfuse then counts, per backend (pinned, not fixable in
   * what both send: memory reads the response by its shape and native does not).
   */
  it("a framework adapter's calls: memory's usage is read as openinference sends it; native's gen_ai generations carry none and its openinference prompt counts the cache twice", async () => {
    const want = program('adapter-usage');
    expect(want.calls.map((c) => [c.provider, c.prompt, c.cacheRead, c.cacheWrite])).toEqual([['anthropic', 3270, 0, 3000], ['anthropic', 1410, 1216, undefined]]);
    const exact = want.calls.map((c) => ({ input: c.prompt - (c.cacheRead ?? 0) - (c.cacheWrite ?? 0), output: c.completion, total: c.prompt + c.completion, input_cached_tokens: c.cacheRead, ...(c.cacheWrite === undefined ? {} : { input_cache_creation: c.cacheWrite }) }));
    const usage = async (backend: Backend, type: Type) => llmSpans(await capture(backend, 'adapter-usage', type, [])).map((s) => langfuseObservation(s).usage);
    expect(await usage('memory', 'openinference')).toEqual(exact);
    if (!nativeAvailable) return;
    expect(await usage('native', 'gen_ai')).toEqual([{}, {}]);
    // Native's prompt is the whole prompt plus its cache counts again: Langfuse's input is then the whole prompt.
    expect(await usage('native', 'openinference')).toEqual(exact.map((e, i) => ({ ...e, input: want.calls[i]!.prompt, total: e.total + (want.calls[i]!.cacheRead ?? 0) + (want.calls[i]!.cacheWrite ?? 0) })));
  });

  it('the trace is named after the session span; its input is the session start (openinference) or empty (gen_ai)', async () => {
    for (const type of ['gen_ai', 'openinference'] as const) {
      for (const [backend, spans] of Object.entries(await spansOf('tool-loop', type, []))) {
        const trace = langfuseTrace(spans);
        expect([trace.name, json(trace.input)], `${type} ${backend}`).toEqual(type === 'gen_ai' ? ['invoke_agent hermes-session-loop-1', null] : ['hermes-session-loop-1', { session_id: 'loop-1' }]);
      }
    }
  });
});

describe('what Phoenix reads from our spans', () => {
  for (const type of ['openinference', 'gen_ai'] as const) {
    it(`${type}: LLM spans with model, token counts and messages (cost computed), TOOL spans with their arguments, one session per trace`, async () => {
      for (const stream of ['tool-loop', 'subagent', 'anthropic']) {
        const want = program(stream);
        const byBackend = await spansOf(stream, type, DOCUMENTED[type]);
        for (const backend of BACKENDS) {
          const where = `${type} ${stream} on ${backend}`;
          const view = phoenixView(byBackend[backend]);
          expect(view.project, where).toBe('my-agent');
          // One trace per root session, filed under that session (a subagent's spans join its parent's trace).
          expect([...view.sessions.values()], where).toEqual([want.sessionId]);
          const llms = view.spans.filter((s) => s.kind === 'LLM');
          expect(
            llms.map((s) => [s.attributes['llm.model_name'], s.attributes['llm.provider'], s.attributes['llm.token_count.prompt'], s.attributes['llm.token_count.completion'], s.costed]),
            where,
          ).toEqual(want.calls.map((c) => [c.model, c.provider, c.prompt, c.completion, true]));
          expect(llms.map((s) => s.attributes['llm.token_count.prompt_details.cache_read']), where).toEqual(want.calls.map((c) => c.cacheRead));
          // gen_ai's cache write is sent as gen_ai.usage.cache_write.input_tokens; Phoenix reads cache_creation.
          expect(llms.map((s) => s.attributes['llm.token_count.prompt_details.cache_write']), where).toEqual(want.calls.map((c) => (type === 'gen_ai' ? undefined : c.cacheWrite)));
          for (const [i, s] of llms.entries()) {
            const texts = Object.entries(s.attributes).filter(([k]) => /^llm\.input_messages\.\d+\.message\.content$/.test(k)).map(([, v]) => v);
            expect(texts, where).toContain(want.calls[i]!.lastUserText);
          }
          const tools = view.spans.filter((s) => s.kind === 'TOOL');
          expect(tools.map((t) => [t.attributes['tool.name'], json(t.attributes['input.value']), t.error]).sort(), where).toEqual(want.tools.map((t) => [t.name, t.args, t.failed]).sort());
          expect(view.spans.filter((s) => s.kind === 'AGENT').length, where).toBeGreaterThan(0);
        }
      }
    });
  }

  it('without the documented lines: everything lands in the "default" project and openinference LLM spans name no provider', async () => {
    for (const [backend, spans] of Object.entries(await spansOf('tool-loop', 'openinference', []))) {
      const view = phoenixView(spans);
      expect(view.project, backend).toBe('default');
      expect(view.spans.filter((s) => s.kind === 'LLM').map((s) => s.attributes['llm.provider']), backend).toEqual([undefined, undefined, undefined, undefined]);
    }
  });

});
