// The memory relay sends the same OTLP as native 0.9.2: each recorded hook
// stream runs through the plugin on both backends with the same plugins.toml,
// a real loopback receiver decodes what arrives (OTLP protobuf definitions
// from @opentelemetry/otlp-transformer), and the spans and log records must be
// equal after replacing ids by labels and times by their rank. Only the
// telemetry.sdk.* resource keys differ (they name the SDK that sent them).
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import { loadNativeRelay } from '../../native/index.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { readStream } from '../differential/replay.ts';
import { nativeAvailable, nativeLoadError } from '../contract/backends.ts';
import { startGrpcReceiver, startHttpReceiver, type DecodedSpan, type Receiver } from '../support/otlp-receiver.ts';
import { errorSpanAsOk, normalizeLogs, normalizeSpans, SDK_RESOURCE_KEYS } from '../support/otlp-normalize.ts';
import { replayWithOtlp, type OtlpReplayOptions } from '../support/otlp-replay.ts';

const STREAMS = path.resolve(import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname), '../fixtures/streams');
const stream = (name: string) => readStream(path.join(STREAMS, `${name}.hooks.jsonl`));
const ALL_STREAMS = ['plain-chat', 'tool-loop', 'subagent', 'parallel-subagents', 'interleaved-sessions', 'api-retry', 'approvals-unmatched', 'cached-usage', 'anthropic', 'adapter-usage', 'remote-session'];
const LLM_STREAMS = ['tool-loop', 'subagent', 'api-retry', 'anthropic', 'cached-usage', 'remote-session'];
const opts = { ignoreResourceKeys: SDK_RESOURCE_KEYS };

/**
 * The known difference (README, differences between the backends): an LLM
 * call closed by api_request_error ends with `otel.status_code: "ERROR"` on
 * memory; native forces `"OK"` on a manual LLM end. OTLP carries it as the
 * span's status and in the status-code attributes, so streams with failed LLM
 * calls (and no failed tool) are compared after turning memory's failed spans
 * back into native's OK, and the difference itself is pinned: native has no
 * error span, memory has exactly one per failed LLM call.
 */
const FAILED_LLM_STREAMS: ReadonlySet<string> = new Set(['api-retry']);

function failedLlmAsNative(ours: { spans: DecodedSpan[]; result: { atofLines: string[] } }, theirs: { spans: DecodedSpan[] }): DecodedSpan[] {
  const failedEnds = ours.result.atofLines
    .map((line) => JSON.parse(line) as { category?: string; scope_category?: string; metadata?: Record<string, unknown> | null })
    .filter((e) => e.category === 'llm' && e.scope_category === 'end' && e.metadata?.['error.type'] !== undefined);
  expect(failedEnds.length).toBeGreaterThan(0);
  expect(new Set(failedEnds.map((e) => e.metadata!['otel.status_code']))).toEqual(new Set(['ERROR']));
  expect(theirs.spans.filter((span) => span.status.code === 2)).toEqual([]);
  const failed = ours.spans.filter((span) => span.status.code === 2);
  expect(failed.length).toBe(failedEnds.length);
  return ours.spans.map((span) => (span.status.code === 2 ? errorSpanAsOk(span) : span));
}

/** Memory's spans as native sends them: the same, but for the pinned failed-LLM difference. */
function asNative(name: string, ours: { spans: DecodedSpan[]; result: { atofLines: string[] } }, theirs: { spans: DecodedSpan[] }): DecodedSpan[] {
  return FAILED_LLM_STREAMS.has(name) ? failedLlmAsNative(ours, theirs) : ours.spans;
}

if (!nativeAvailable) console.warn(`OTLP parity with native skipped: nemo-relay-node cannot load here (${nativeLoadError})`);

let http: Receiver;
let grpc: Receiver;
beforeAll(async () => {
  http = await startHttpReceiver();
  grpc = await startGrpcReceiver();
});
afterAll(async () => {
  await http?.close();
  await grpc?.close();
});

/** Runs one stream on a backend and returns what the receiver got from it. */
async function capture(backendName: 'native' | 'memory', name: string, build: (url: string) => OtlpReplayOptions, receiver: () => Receiver) {
  const rx = receiver();
  rx.requests.length = 0;
  const backend = backendName === 'native' ? loadNativeRelay({ logger: silentLogger }) : createMemoryRelay({ logger: silentLogger });
  const result = await replayWithOtlp(backend, stream(name), build(rx.url));
  return { spans: [...rx.spans()], logs: [...rx.logs()], requests: [...rx.requests], result };
}

async function both(name: string, build: (url: string) => OtlpReplayOptions, receiver: () => Receiver = () => http) {
  const theirs = await capture('native', name, build, receiver);
  const ours = await capture('memory', name, build, receiver);
  return { theirs, ours };
}

/** Hook lines replayed on native, then on the memory relay, into one OTLP endpoint of `type`: the spans each sent. */
async function spansOnBoth(lines: Parameters<typeof replayWithOtlp>[1], type: 'full' | 'gen_ai' | 'openinference'): Promise<Record<'native' | 'memory', DecodedSpan[]>> {
  const spans = { native: [] as DecodedSpan[], memory: [] as DecodedSpan[] };
  for (const backend of ['native', 'memory'] as const) {
    http.requests.length = 0;
    const relay = backend === 'native' ? loadNativeRelay({ logger: silentLogger }) : createMemoryRelay({ logger: silentLogger });
    await replayWithOtlp(relay, lines, { endpoints: [{ type, endpoint: http.url }] });
    spans[backend] = [...http.spans()];
  }
  return spans;
}

describe.skipIf(!nativeAvailable)('OTLP spans equal native', () => {
  for (const name of ALL_STREAMS) {
    it(`sends the same full spans for the ${name} stream`, async () => {
      const { theirs, ours } = await both(name, (url) => ({ endpoints: [{ type: 'full', endpoint: url }] }));
      expect(ours.spans.length).toBeGreaterThan(0);
      expect(normalizeSpans(asNative(name, ours, theirs), opts)).toEqual(normalizeSpans(theirs.spans, opts));
      expect(ours.result.problems).toEqual([]);
    });
  }
  for (const type of ['gen_ai', 'openinference'] as const) {
    for (const name of LLM_STREAMS) {
      it(`sends the same ${type} spans for the ${name} stream`, async () => {
        const { theirs, ours } = await both(name, (url) => ({ endpoints: [{ type, endpoint: url }] }));
        expect(ours.spans.length).toBeGreaterThan(0);
        expect(normalizeSpans(asNative(name, ours, theirs), opts)).toEqual(normalizeSpans(theirs.spans, opts));
      });
    }
  }

  /**
   * The known difference of the adapter-usage stream (README, differences
   * between the backends): the framework adapters send an `anthropic`
   * provider with usage and messages in the OpenAI chat shape. Native reads
   * an `anthropic`-named LLM span with its Anthropic codec: it adds the cache
   * counts to a `prompt_tokens` that already holds them (openinference) and
   * keeps no response attributes at all (gen_ai). Memory reads the payload by
   * its shape. Every other span is equal; the LLM spans are pinned here.
   */
  for (const type of ['gen_ai', 'openinference'] as const) {
    it(`adapter-usage: ${type} LLM spans count the prompt once on memory; native adds the cache again or drops the response`, async () => {
      const { theirs, ours } = await both('adapter-usage', (url) => ({ endpoints: [{ type, endpoint: url }] }));
      const isLlm = (span: { attributes: DecodedSpan['attributes'] }) => span.attributes['gen_ai.operation.name'] === 'chat' || span.attributes['openinference.span.kind'] === 'LLM';
      const others = (spans: DecodedSpan[]) => normalizeSpans(spans, opts).filter((span) => !isLlm(span));
      expect(others(ours.spans).length).toBeGreaterThan(0);
      expect(others(ours.spans)).toEqual(others(theirs.spans));
      const tokens = (spans: DecodedSpan[], keys: readonly string[]) => spans.filter(isLlm).map((span) => keys.map((key) => span.attributes[key]));
      if (type === 'gen_ai') {
        const keys = ['gen_ai.usage.input_tokens', 'gen_ai.usage.output_tokens', 'gen_ai.usage.cache_read.input_tokens', 'gen_ai.usage.cache_write.input_tokens', 'gen_ai.response.id'];
        expect(tokens(ours.spans, keys)).toEqual([[3270, 40, 0, 3000, 'msg_01Write'], [1410, 12, 1216, undefined, 'msg_02Read']]);
        expect(tokens(theirs.spans, keys)).toEqual([[undefined, undefined, undefined, undefined, undefined], [undefined, undefined, undefined, undefined, undefined]]);
      } else {
        const keys = ['llm.token_count.prompt', 'llm.token_count.completion', 'llm.token_count.total', 'llm.token_count.prompt_details.cache_read', 'llm.token_count.prompt_details.cache_write'];
        expect(tokens(ours.spans, keys)).toEqual([[3270, 40, 3310, 0, 3000], [1410, 12, 1422, 1216, undefined]]);
        expect(tokens(theirs.spans, keys)).toEqual([[6270, 40, 6310, 0, 3000], [2626, 12, 2638, 1216, undefined]]);
      }
    });
  }

  /**
   * A response of no provider's shape (the framework adapters' `{id, model, assistant_message, finish_reason,
   * usage}`, a managed call's) is a difference on purpose (docs/backends/memory-and-native.md,
   * docs/operators/pricing.md): native's `gen_ai` span of it carries no response attributes (id, model, finish
   * reasons, usage) under any provider name, not only under an `anthropic` one, and its `openinference` span the
   * response's JSON and no finish reason; memory reads the response by its shape, so a tool that reads
   * `gen_ai.usage.*` counts the adapters' calls and OpenInference shows their text and the tools they asked for.
   */
  it("a framework adapter's response is read on memory (gen_ai: id, model, finish reason, usage; openinference: its text and finish reason); native drops it or sends its JSON, under any provider", async () => {
    const keys = ['gen_ai.response.id', 'gen_ai.response.model', 'gen_ai.usage.input_tokens', 'gen_ai.usage.output_tokens'];
    for (const provider of ['openai', 'anthropic']) {
      const lines = stream('adapter-usage').map((line) => {
        const payload = (line as { payload?: Record<string, unknown> }).payload;
        return payload?.provider === undefined ? line : { ...line, payload: { ...payload, provider } };
      }) as Parameters<typeof replayWithOtlp>[1];
      const spans = await spansOnBoth(lines, 'gen_ai');
      const response = (backend: 'native' | 'memory') => spans[backend].filter((span) => span.attributes['gen_ai.operation.name'] === 'chat').map((span) => keys.map((key) => span.attributes[key]));
      expect(response('native'), provider).toEqual([[undefined, undefined, undefined, undefined], [undefined, undefined, undefined, undefined]]);
      expect(response('memory'), provider).toEqual([['msg_01Write', 'claude-sonnet-4-5-20250929', 3270, 40], ['msg_02Read', 'claude-sonnet-4-5-20250929', 1410, 12]]);
      // Neither sends the answer as output messages (docs/operators/otlp.md: Langfuse's gen_ai generations show no output).
      for (const backend of ['native', 'memory'] as const) expect(spans[backend].some((span) => span.attributes['gen_ai.output.messages'] !== undefined), `${backend} ${provider}`).toBe(false);
      const inference = await spansOnBoth(lines, 'openinference');
      const output = (backend: 'native' | 'memory') =>
        inference[backend].filter((span) => span.attributes['openinference.span.kind'] === 'LLM').map((span) => [span.attributes['output.mime_type'], span.attributes['llm.finish_reason']]);
      expect(output('native'), provider).toEqual([['application/json', undefined], ['application/json', undefined]]);
      expect(output('memory'), provider).toEqual([['text/plain', 'tool_use'], ['text/plain', 'complete']]);
      for (const backend of ['native', 'memory'] as const) {
        expect(inference[backend].some((span) => Object.keys(span.attributes).some((key) => key.startsWith('llm.output_messages.'))), `${backend} ${provider}`).toBe(false);
      }
    }
  });

  /**
   * A response without an `id` (docs/hosts/emitting-hooks.md emits one: `{ choices: [...] }`) still
   * has a provider's shape, and native sends its message (`gen_ai.output.messages`,
   * `llm.output_messages.*`); the memory relay sent it only when the response had an id.
   */
  for (const type of ['gen_ai', 'openinference'] as const) {
    it(`sends the response's message for ${type} when the response has no id, as native does`, async () => {
      const responses = [
        { choices: [{ message: { role: 'assistant', content: 'Noon.' } }] },
        { type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text: 'Noon.' }], stop_reason: 'end_turn', usage: { input_tokens: 3, output_tokens: 1 } },
      ];
      for (const response of responses) {
        const lines = [
          { hook: 'on_session_start', payload: { session_id: 's1' } },
          { hook: 'pre_api_request', payload: { session_id: 's1', api_request_id: 'a1', provider: 'openai', model: 'gpt-4o', request: { body: { messages: [{ role: 'user', content: 'Time?' }] } } } },
          { hook: 'post_api_request', payload: { session_id: 's1', api_request_id: 'a1', response, usage: { prompt_tokens: 3, completion_tokens: 1 } } },
          { hook: 'on_session_finalize', payload: { session_id: 's1' } },
        ] as unknown as Parameters<typeof replayWithOtlp>[1];
        const spans = await spansOnBoth(lines, type);
        const message = type === 'gen_ai' ? 'gen_ai.output.messages' : 'llm.output_messages.0.message.content';
        expect(spans.native!.some((span) => span.attributes[message] !== undefined)).toBe(true);
        expect(normalizeSpans(spans.memory!, opts)).toEqual(normalizeSpans(spans.native!, opts));
      }
    });
  }

  // Found by the random-stream differential (test/slow/random-streams-otlp.test.ts): a
  // nested payload value was sent as JSON.stringify's text, with integer-like keys first
  // and JS's number forms, where native sends serde_json's (code-point key order, `-9007199254740992.0`).
  it('sends a nested payload value as native writes its JSON text: keys in code-point order, native number forms', async () => {
    const args = { nested: { b: 1, '10': 2, '9': 3, '\u0001': 4, a: [-(2 ** 53), 2 ** 53 + 2, 1e21, 0.1 + 0.2, 5e-324, -0] }, '10': -(2 ** 53) };
    const lines = [
      { hook: 'on_session_start', payload: { session_id: 's1' } },
      { hook: 'pre_tool_call', payload: { session_id: 's1', tool_call_id: 't1', tool_name: 'f', args } },
      { hook: 'post_tool_call', payload: { session_id: 's1', tool_call_id: 't1', tool_name: 'f', args, result: { '2': 'two', '1': 'one', z: [1.5, 2 ** 40] } } },
      { hook: 'on_session_finalize', payload: { session_id: 's1' } },
    ] as unknown as Parameters<typeof replayWithOtlp>[1];
    const spans = await spansOnBoth(lines, 'full');
    const nested = (list: DecodedSpan[]) => list.find((span) => span.attributes['nemo_relay.start.data.nested'] !== undefined)?.attributes['nemo_relay.start.data.nested'];
    expect(nested(spans.native!)).toBe('{"\\u0001":4,"10":2,"9":3,"a":[-9007199254740992.0,9007199254740994.0,1e+21,0.30000000000000004,5e-324,0],"b":1}');
    expect(normalizeSpans(spans.memory!, opts)).toEqual(normalizeSpans(spans.native!, opts));
  });

  // Found by the random-stream differential against OTLP: tool-call arguments were read
  // with JSON.parse and written with integer-like keys first; native reads them with serde
  // (a lone surrogate escape is not JSON there, `1.0` stays `1.0`) and writes keys in code-point order.
  for (const type of ['gen_ai', 'openinference'] as const) {
    it(`sends tool-call arguments as native reads and writes them (${type})`, async () => {
      const calls = [
        { id: 'c1', type: 'function', function: { name: 'f', arguments: '{"b":1,"10":2,"9":{"x":1.0},"\\u0001":[12345678901234567890]}' } },
        { id: 'c2', type: 'function', function: { name: 'g', arguments: '{"x":"\\ud83d"}' } },
      ];
      const response = { id: 'r1', choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: calls }, finish_reason: 'tool_calls' }] };
      const lines = [
        { hook: 'on_session_start', payload: { session_id: 's1' } },
        { hook: 'pre_api_request', payload: { session_id: 's1', api_request_id: 'a1', provider: 'openai', model: 'gpt-4o', request: { body: { messages: [{ role: 'user', content: 'Go' }] } } } },
        { hook: 'post_api_request', payload: { session_id: 's1', api_request_id: 'a1', response, usage: { prompt_tokens: 3, completion_tokens: 1 } } },
        { hook: 'on_session_finalize', payload: { session_id: 's1' } },
      ] as unknown as Parameters<typeof replayWithOtlp>[1];
      const spans = await spansOnBoth(lines, type);
      const key = type === 'gen_ai' ? 'gen_ai.output.messages' : 'llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments';
      expect(spans.native!.some((span) => String(span.attributes[key] ?? '').includes('{"\\u0001":[12345678901234567890],"10":2,"9":{"x":1.0},"b":1}'))).toBe(true);
      expect(normalizeSpans(spans.memory!, opts)).toEqual(normalizeSpans(spans.native!, opts));
    });
  }

  // Found by the random-stream differential against OTLP: native sends Anthropic's
  // `stop_sequence` finish reason as it is; memory sent `stop` (gen_ai) and `complete` (openinference).
  for (const type of ['gen_ai', 'openinference'] as const) {
    it(`sends an Anthropic stop_sequence finish reason as native does (${type})`, async () => {
      const response = { id: 'm1', type: 'message', role: 'assistant', model: 'claude-x', content: [{ type: 'text', text: 'Noon.' }], stop_reason: 'stop_sequence', stop_sequence: '###' };
      const lines = [
        { hook: 'on_session_start', payload: { session_id: 's1' } },
        { hook: 'pre_api_request', payload: { session_id: 's1', api_request_id: 'a1', provider: 'anthropic', api_mode: 'anthropic_messages', model: 'claude-x', request: { body: { messages: [{ role: 'user', content: 'Time?' }] } } } },
        { hook: 'post_api_request', payload: { session_id: 's1', api_request_id: 'a1', provider: 'anthropic', response, finish_reason: 'stop_sequence' } },
        { hook: 'on_session_finalize', payload: { session_id: 's1' } },
      ] as unknown as Parameters<typeof replayWithOtlp>[1];
      const spans = await spansOnBoth(lines, type);
      const key = type === 'gen_ai' ? 'gen_ai.response.finish_reasons' : 'llm.finish_reason';
      expect(spans.native!.map((span) => span.attributes[key]).filter((value) => value !== undefined)).toEqual([type === 'gen_ai' ? ['stop_sequence'] : 'stop_sequence']);
      expect(normalizeSpans(spans.memory!, opts)).toEqual(normalizeSpans(spans.native!, opts));
    });
  }

  // Found by the random-stream differential against OTLP: native's gen_ai mapping reads
  // nothing of a response whose usage has a typed count that is no unsigned integer
  // (1.5, -1, 2**40, which crosses the binding as an f64); memory sent the response and
  // dropped the count.
  it('sends nothing of a response whose usage native cannot decode, as native does (gen_ai)', async () => {
    const text = [{ type: 'text', text: 'Noon.' }];
    const responses = [
      { id: 'r1', object: 'response', model: 'o4', status: 'completed', output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Noon.' }] }], usage: { input_tokens: 3, output_tokens: 1.5, total_tokens: 4.5 } },
      { id: 'r2', object: 'chat.completion', model: 'gpt', choices: [{ index: 0, message: { role: 'assistant', content: 'Noon.' }, finish_reason: 'stop' }], usage: { prompt_tokens: 2 ** 40, completion_tokens: 1, total_tokens: 2 } },
      { id: 'r3', type: 'message', role: 'assistant', model: 'claude-x', content: text, stop_reason: 'end_turn', usage: { input_tokens: 3, output_tokens: 1, cache_read_input_tokens: -1 } },
      // A details field that is no object fails the decode too (the rule pricing reads a usage by).
      { id: 'r5', object: 'chat.completion', model: 'gpt', choices: [{ index: 0, message: { role: 'assistant', content: 'Noon.' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4, prompt_tokens_details: 'none' } },
      // Untyped there: a Chat usage's completion_tokens_details; null counts as absent.
      { id: 'r4', object: 'chat.completion', model: 'gpt', choices: [{ index: 0, message: { role: 'assistant', content: 'Noon.' }, finish_reason: 'stop' }], usage: { prompt_tokens: null, completion_tokens: 1, total_tokens: 1, completion_tokens_details: { reasoning_tokens: 0.5 } } },
    ];
    for (const response of responses) {
      const lines = [
        { hook: 'on_session_start', payload: { session_id: 's1' } },
        { hook: 'pre_api_request', payload: { session_id: 's1', api_request_id: 'a1', provider: 'openai', model: 'gpt', request: { body: { messages: [{ role: 'user', content: 'Time?' }] } } } },
        { hook: 'post_api_request', payload: { session_id: 's1', api_request_id: 'a1', response } },
        { hook: 'on_session_finalize', payload: { session_id: 's1' } },
      ] as unknown as Parameters<typeof replayWithOtlp>[1];
      const spans = await spansOnBoth(lines, 'gen_ai');
      const ids = spans.native!.map((span) => span.attributes['gen_ai.response.id']).filter((id) => id !== undefined);
      expect(ids).toEqual(response.id === 'r4' ? ['r4'] : []);
      expect(normalizeSpans(spans.memory!, opts)).toEqual(normalizeSpans(spans.native!, opts));
    }
  });

  // Found by the random pricing differential: a usage beside a provider's response is read by
  // native's gen_ai mapping through the shape's own fields only (no cache write from a Chat
  // Completions usage's `cache_creation_input_tokens`), and by its openinference mapping through
  // them and then native's names for what they leave out (`input_tokens`, a top-level
  // `cached_tokens`, the LiteLLM cache keys); memory read both by the usage's keys.
  for (const type of ['gen_ai', 'openinference'] as const) {
    it(`reads a response's token counts as native's ${type} mapping does`, async () => {
      const chat = (id: string, usage: object) => ({ id, object: 'chat.completion', model: 'gpt', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage });
      const responses = (id: string, usage: object) => ({ id, object: 'response', model: 'o4', status: 'completed', output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] }], usage });
      const messages = (id: string, usage: object) => ({ id, type: 'message', role: 'assistant', model: 'claude-x', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', usage });
      const all = [
        chat('r1', { prompt_tokens: 300, completion_tokens: 200, cache_creation_input_tokens: 7, cache_read_input_tokens: 5 }),
        chat('r2', { completion_tokens: 200, input_tokens: 100, cached_tokens: 3, totalTokens: 9 }),
        chat('r3', { prompt_tokens: 300, completion_tokens: 200, prompt_tokens_details: { cached_tokens: 4 }, cached_tokens: 3, cache_write_tokens: 8 }),
        responses('r4', { output_tokens: 200, prompt_tokens: 50, cache_creation_input_tokens: 7 }),
        responses('r5', { input_tokens: 300, output_tokens: 200, total_tokens: 9, cached_tokens: 3 }),
        messages('r6', { output_tokens: 200, prompt_tokens: 50, cache_creation_input_tokens: 7 }),
        messages('r7', { input_tokens: 300, output_tokens: 200, cache_read_input_tokens: 5, cached_tokens: 3, cache_write_tokens: 8, total_tokens: 9 }),
      ];
      const lines = [
        { hook: 'on_session_start', payload: { session_id: 's1' } },
        ...all.flatMap((response, i) => [
          { hook: 'pre_api_request', payload: { session_id: 's1', api_request_id: `a${i}`, provider: 'openai', model: 'gpt', request: { body: { messages: [{ role: 'user', content: 'Go' }] } } } },
          { hook: 'post_api_request', payload: { session_id: 's1', api_request_id: `a${i}`, response } },
        ]),
        { hook: 'on_session_finalize', payload: { session_id: 's1' } },
      ] as unknown as Parameters<typeof replayWithOtlp>[1];
      const spans = await spansOnBoth(lines, type);
      const first = spans.native!.find((span) => JSON.stringify(span.attributes).includes('"r1"'))!;
      if (type === 'gen_ai') expect([first.attributes['gen_ai.usage.cache_write.input_tokens'], first.attributes['gen_ai.usage.cache_read.input_tokens']]).toEqual([undefined, undefined]);
      else expect([first.attributes['llm.token_count.prompt_details.cache_write'], first.attributes['llm.token_count.prompt_details.cache_read']]).toEqual([7, 5]);
      expect(normalizeSpans(spans.memory!, opts)).toEqual(normalizeSpans(spans.native!, opts));
    });
  }

  // Found by the random-stream differential against OTLP: openinference's input.value
  // trimmed with JavaScript's trim (U+FEFF stripped, U+0085 kept, the reverse of
  // native's Rust trim), read JSON text with JSON.parse, and sent a tool's input as
  // JSON.stringify's text.
  it("builds openinference input.value with native's trim, parser and JSON text", async () => {
    const messages = [
      { role: 'system', content: '\ufeff' },
      { role: 'user', content: '\u0085' },
      { role: 'user', content: ' \ufeffhi\u0085 ' },
      { role: 'assistant', content: '{"text":"\\ud83d"}' },
    ];
    const args = { b: 1, '10': { '9': 2 }, x: -(2 ** 53) };
    const lines = [
      { hook: 'on_session_start', payload: { session_id: 's1' } },
      { hook: 'pre_api_request', payload: { session_id: 's1', api_request_id: 'a1', provider: 'openai', model: 'gpt', request: { body: { messages } } } },
      { hook: 'post_api_request', payload: { session_id: 's1', api_request_id: 'a1', response: { id: 'r1', object: 'chat.completion', model: 'gpt', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] } } },
      { hook: 'pre_tool_call', payload: { session_id: 's1', tool_call_id: 't1', tool_name: 'f', args } },
      { hook: 'post_tool_call', payload: { session_id: 's1', tool_call_id: 't1', tool_name: 'f', args, result: 'done' } },
      { hook: 'on_session_finalize', payload: { session_id: 's1' } },
    ] as unknown as Parameters<typeof replayWithOtlp>[1];
    const spans = await spansOnBoth(lines, 'openinference');
    const inputs = (list: DecodedSpan[]) => list.map((span) => span.attributes['input.value']).filter((value) => value !== undefined);
    expect(inputs(spans.native!)).toEqual(['system: \ufeff\n\nuser: \ufeffhi\n\nassistant: {"text":"\\ud83d"}', '{"10":{"9":2},"b":1,"x":-9007199254740992.0}', '{"session_id":"s1"}']);
    expect(normalizeSpans(spans.memory!, opts)).toEqual(normalizeSpans(spans.native!, opts));
  });

  // Found by the random-stream differential against OTLP: openinference sends a tool's
  // text result trimmed (a result its trim leaves empty as the JSON of the result), and a response
  // whose usage native's codec cannot decode without its message and finish reason.
  it('sends tool results and undecodable responses as native does (openinference)', async () => {
    const results = ['  done \r\n', ' \u0085', { content: ' text ', type: 'x' }];
    const lines = [
      { hook: 'on_session_start', payload: { session_id: 's1' } },
      ...results.flatMap((result, i) => [
        { hook: 'pre_tool_call', payload: { session_id: 's1', tool_call_id: `t${i}`, tool_name: 'f', args: { i } } },
        { hook: 'post_tool_call', payload: { session_id: 's1', tool_call_id: `t${i}`, tool_name: 'f', args: { i }, result } },
      ]),
      { hook: 'pre_api_request', payload: { session_id: 's1', api_request_id: 'a1', provider: 'openai', model: 'gpt', request: { body: { messages: [{ role: 'user', content: 'Go' }] } } } },
      { hook: 'post_api_request', payload: { session_id: 's1', api_request_id: 'a1', response: { id: 'r1', object: 'chat.completion', model: 'gpt', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 1.5 } } } },
      { hook: 'on_session_finalize', payload: { session_id: 's1' } },
    ] as unknown as Parameters<typeof replayWithOtlp>[1];
    const spans = await spansOnBoth(lines, 'openinference');
    const tools = spans.native!.filter((span) => span.attributes['openinference.span.kind'] === 'TOOL').map((span) => span.attributes['output.value']);
    expect(tools).toEqual(['done', '" \u0085"', 'text']);
    const llm = spans.native!.find((span) => span.attributes['openinference.span.kind'] === 'LLM')!;
    expect([llm.attributes['llm.finish_reason'], llm.attributes['llm.output_messages.0.message.content']]).toEqual([undefined, undefined]);
    expect(normalizeSpans(spans.memory!, opts)).toEqual(normalizeSpans(spans.native!, opts));
  });

  // Found by the random redaction-stream differential (test/support/random-redaction-streams.ts): a tool
  // result's output.value is its display text by the rule an LLM payload's is read by: JSON text read for
  // its JSON, content strings and text parts trimmed as a whole with blank ones left out, thinking and
  // stripped parts skipped, tool calls named, `summary`, `message`, `prompt`, a Responses `output` or Chat
  // `choices` read. The memory relay had a narrower rule of its own.
  it('sends a tool result as its display text, as native reads it (openinference)', async () => {
    const results = [
      '{"9":"x","content":" a b ","01":false}',
      '[" a ","b"]',
      '"quoted "',
      { content: [' a\r\n', 'b', false] },
      { content: ['  ', 'b'] },
      { content: ['  '] },
      { content: [{ type: 'text', text: ' a ', stripped: true }, { type: 'text', text: ' b ' }] },
      [{ type: 'thinking', text: 'x' }, { type: 'tool_use', name: 'f' }, { type: 'text', text: 'y' }],
      { summary: ' s ' },
      { message: { content: 'deep' } },
      { content: '{"text":"inner"}' },
      { output: [{ type: 'message', content: [{ type: 'output_text', text: ' x ' }] }, { type: 'function_call', name: 'f' }] },
      { choices: [{ message: { content: ' x ', tool_calls: [{ function: { name: 'g' } }] } }] },
      { tool_calls: [{ name: 'f' }, { toolName: 'h' }] },
    ];
    const lines = [
      { hook: 'on_session_start', payload: { session_id: 's1' } },
      ...results.flatMap((result, i) => [
        { hook: 'pre_tool_call', payload: { session_id: 's1', tool_call_id: `t${i}`, tool_name: 'f', args: { i } } },
        { hook: 'post_tool_call', payload: { session_id: 's1', tool_call_id: `t${i}`, tool_name: 'f', args: { i }, result } },
      ]),
      { hook: 'on_session_finalize', payload: { session_id: 's1' } },
    ] as unknown as Parameters<typeof replayWithOtlp>[1];
    const spans = await spansOnBoth(lines, 'openinference');
    const tools = spans.native!.filter((span) => span.attributes['openinference.span.kind'] === 'TOOL').map((span) => span.attributes['output.value']);
    expect(tools).toEqual([
      'a b',
      'a \nb',
      'quoted',
      'a\r\n\nb',
      'b',
      '{"content":["  "]}',
      'b',
      'y\nRequested tools: f',
      's',
      'deep',
      'inner',
      'x\nRequested tools: f',
      'x\nRequested tools: g',
      'Requested tools: f, h',
    ]);
    expect(normalizeSpans(spans.memory!, opts)).toEqual(normalizeSpans(spans.native!, opts));
  });

  // Found by the random redaction-stream differential: a string that holds a bare JSON number keeps native's
  // text of it (`"-0"` is `-0.0`, `"1.0"` stays `1.0`) as a tool's arguments or result and as a response's
  // tool-call arguments, a tool's arguments or result that hold `null` are no attribute in gen_ai, and a tool's
  // arguments given as a string are JSON in openinference (the string's JSON text).
  for (const type of ['gen_ai', 'openinference'] as const) {
    it(`sends a JSON text holding a number or null as native does (${type})`, async () => {
      const texts = ['-0', '1.0', 'null', ' -1e-400 ', '5.50'];
      const lines = [
        { hook: 'on_session_start', payload: { session_id: 's1' } },
        ...texts.flatMap((text, i) => [
          { hook: 'pre_tool_call', payload: { session_id: 's1', tool_call_id: `t${i}`, tool_name: 'f', args: text } },
          { hook: 'post_tool_call', payload: { session_id: 's1', tool_call_id: `t${i}`, tool_name: 'f', args: text, result: text } },
          { hook: 'pre_api_request', payload: { session_id: 's1', api_request_id: `a${i}`, provider: 'openai', model: 'gpt', request: { body: { messages: [{ role: 'user', content: 'Go' }] } } } },
          {
            hook: 'post_api_request',
            payload: {
              session_id: 's1',
              api_request_id: `a${i}`,
              response: { id: `r${i}`, object: 'chat.completion', model: 'gpt', choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'f', arguments: text } }] }, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } },
            },
          },
        ]),
        { hook: 'on_session_finalize', payload: { session_id: 's1' } },
      ] as unknown as Parameters<typeof replayWithOtlp>[1];
      const spans = await spansOnBoth(lines, type);
      if (type === 'gen_ai') {
        const results = spans.native!.filter((span) => span.attributes['gen_ai.operation.name'] === 'execute_tool').map((span) => span.attributes['gen_ai.tool.call.result']);
        expect(results).toEqual(['-0.0', '1.0', undefined, '-0.0', '5.5']);
      }
      expect(normalizeSpans(spans.memory!, opts)).toEqual(normalizeSpans(spans.native!, opts));
    });
  }

  // Found by a random probe of request and response shapes against native (a script, not kept): native's Chat
  // Completions decode rejects a whole request for a field of the wrong type in a message it reads as its role
  // (the span then names the payload's model and carries none of the request), and OpenInference writes an
  // output message only for an answer with text or a tool call.
  for (const type of ['gen_ai', 'openinference'] as const) {
    it(`reads Chat requests the decode rejects and answers of nothing as native does (${type})`, async () => {
      const messages: unknown[] = [
        { role: 'user', content: 'hi' },
        { role: 'user' },
        { role: 'system', content: null },
        { role: 'user', content: 5 },
        { role: 'user', content: ['hi'] },
        { role: 'user', content: [{ type: 'text' }] },
        { role: 'tool', content: 'r' },
        { role: 'function', content: 'hi' },
        { role: 'user', content: 'hi', name: 5 },
        { content: 'hi' },
        'hi',
        { role: 'assistant', content: 'x', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f' } }] },
        { role: 'assistant', content: 'x', tool_calls: {} },
        { role: 'critic', content: null },
        { role: 'assistant' },
        { role: 'user', content: 'hi', extra_field: 1 },
        { role: 'user', content: [{ type: 'file', x: 1 }] },
        { role: 'user', content: [{ type: 'input_audio' }] },
        { role: 'user', content: [{ type: 'image_url', image_url: { url: 5 } }] },
        // A function message's content is text or nothing: parts, even text parts, reject the request.
        { role: 'function', content: 'hi', name: 'f' },
        { role: 'function', content: null, name: 'f' },
        { role: 'function', content: [{ type: 'text', text: 'a' }], name: 'f' },
        { role: 'function', content: [], name: 'f' },
        { role: 'function', content: {}, name: 'f' },
      ];
      const answers: unknown[] = [
        { role: 'assistant', content: 'ok' },
        { role: 'assistant', content: null },
        { role: 'assistant', content: '' },
        { role: 'assistant', content: null, refusal: 'no' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      ];
      const lines = [
        { hook: 'on_session_start', payload: { session_id: 's1' } },
        ...messages.flatMap((message, i) => {
          const ids = { session_id: 's1', api_request_id: `a${i}`, provider: 'openai', api_mode: 'chat_completions', model: 'payload-model' };
          const answer = answers[i % answers.length];
          return [
            { hook: 'pre_api_request', payload: { ...ids, request: { body: { model: 'body-model', temperature: 0.5, messages: [message] } } } },
            { hook: 'post_api_request', payload: { ...ids, response: { id: `r${i}`, object: 'chat.completion', model: 'gpt', choices: [{ index: 0, message: answer, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } } } },
          ];
        }),
        { hook: 'on_session_finalize', payload: { session_id: 's1' } },
      ] as unknown as Parameters<typeof replayWithOtlp>[1];
      const spans = await spansOnBoth(lines, type);
      if (type === 'gen_ai') {
        const names = spans.native!.filter((span) => span.attributes['gen_ai.operation.name'] === 'chat').map((span) => span.name);
        expect(names).toEqual(['chat body-model', ...Array(12).fill('chat payload-model'), 'chat body-model', 'chat body-model', 'chat body-model', ...Array(3).fill('chat payload-model'), 'chat body-model', 'chat body-model', ...Array(3).fill('chat payload-model')]);
      }
      expect(normalizeSpans(spans.memory!, opts)).toEqual(normalizeSpans(spans.native!, opts));
    });
  }

  // The same probe on Anthropic Messages: the decode rejects a request for a block or system of the wrong form, and a
  // tool_result block beside other blocks stays where it stood (gen_ai's tool_call_response part).
  for (const type of ['gen_ai', 'openinference'] as const) {
    it(`reads Messages requests the decode rejects and tool results among other blocks as native does (${type})`, async () => {
      const user = (content: unknown, role = 'user') => ({ messages: [{ role, content }] });
      const requests: unknown[] = [
        user('hi'),
        user([{ type: 'tool_result', content: 'r' }]),
        user([{ type: 'tool_result', tool_use_id: 't', content: 'r', is_error: 'yes' }]),
        user([{ type: 'tool_result', tool_use_id: 't' }]),
        user([{ type: 'tool_result', tool_use_id: 't', content: null }]),
        user([{ type: 'text' }]),
        user([{ type: 'tool_use', id: 't', input: {} }], 'assistant'),
        user(['x']),
        user(null),
        user(5),
        { messages: [{ content: 'hi' }] },
        { system: 5, messages: [{ role: 'user', content: 'hi' }] },
        { system: [{ type: 'text' }], messages: [{ role: 'user', content: 'hi' }] },
        user('hi', 'critic'),
        user([{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAA' } }, { type: 'tool_result', tool_use_id: 'tu1', content: '' }, { type: 'text', text: 't' }], 'assistant'),
        user([{ type: 'text', text: 'a' }, { type: 'tool_result', tool_use_id: 'tu1', content: [{ type: 'text', text: 'r' }] }]),
        user([{ type: 'tool_result', tool_use_id: 'tu1', content: 'r1' }, { type: 'tool_result', tool_use_id: 'tu2', content: 'r2' }]),
        { ...user('hi'), tools: [{ name: 'f', description: 5, input_schema: {} }] },
        { ...user('hi'), tools: { a: 1 } },
        user([{ type: 'tool_result', tool_use_id: 'tu1', content: 'r' }], 'assistant'),
      ];
      const answer = { id: 'm1', type: 'message', role: 'assistant', model: 'claude', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 5, output_tokens: 2 } };
      const lines = [
        { hook: 'on_session_start', payload: { session_id: 's1' } },
        ...requests.flatMap((request, i) => {
          const ids = { session_id: 's1', api_request_id: `a${i}`, provider: 'anthropic', api_mode: 'anthropic_messages', model: 'payload-model' };
          return [
            { hook: 'pre_api_request', payload: { ...ids, request: { body: { model: 'body-model', max_tokens: 5, ...(request as object) } } } },
            { hook: 'post_api_request', payload: { ...ids, response: { ...answer, id: `m${i}` } } },
          ];
        }),
        { hook: 'on_session_finalize', payload: { session_id: 's1' } },
      ] as unknown as Parameters<typeof replayWithOtlp>[1];
      const spans = await spansOnBoth(lines, type);
      if (type === 'gen_ai') {
        const names = spans.native!.filter((span) => span.attributes['gen_ai.operation.name'] === 'chat').map((span) => span.name);
        expect(names).toEqual(['chat body-model', ...Array(3).fill('chat payload-model'), 'chat body-model', ...Array(8).fill('chat payload-model'), ...Array(4).fill('chat body-model'), ...Array(2).fill('chat payload-model'), 'chat body-model']);
      }
      expect(normalizeSpans(spans.memory!, opts)).toEqual(normalizeSpans(spans.native!, opts));
    });
  }

  // The same probe on Responses: a request its decode rejects names the payload's model, as Chat and Messages do.
  it('names the payload\'s model for a Responses request the decode rejects, as native does (gen_ai)', async () => {
    const requests: unknown[] = [{ input: 'hi' }, { input: 5 }, { instructions: 'i' }, { input: [{ role: 'user' }] }, { input: [{ role: 'system', content: [{ type: 'refusal', text: 'a' }] }] }];
    const answer = { id: 'r1', object: 'response', created_at: 1, status: 'completed', model: 'gpt-4o', output: [{ type: 'message', id: 'm', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'ok', annotations: [] }] }], usage: { input_tokens: 5, output_tokens: 2, total_tokens: 7 } };
    const lines = [
      { hook: 'on_session_start', payload: { session_id: 's1' } },
      ...requests.flatMap((request, i) => {
        const ids = { session_id: 's1', api_request_id: `a${i}`, provider: 'openai', api_mode: 'codex_responses', model: 'payload-model' };
        return [
          { hook: 'pre_api_request', payload: { ...ids, request: { body: { model: 'body-model', ...(request as object) } } } },
          { hook: 'post_api_request', payload: { ...ids, response: { ...answer, id: `r${i}` } } },
        ];
      }),
      { hook: 'on_session_finalize', payload: { session_id: 's1' } },
    ] as unknown as Parameters<typeof replayWithOtlp>[1];
    const spans = await spansOnBoth(lines, 'gen_ai');
    const names = spans.native!.filter((span) => span.attributes['gen_ai.operation.name'] === 'chat').map((span) => span.name);
    expect(names).toEqual(['chat body-model', ...Array(4).fill('chat payload-model')]);
    expect(normalizeSpans(spans.memory!, opts)).toEqual(normalizeSpans(spans.native!, opts));
  });

  // And a `text` beside a media part (a Chat image_url or file, a Responses input_image or input_file) is no text of
  // the message in OpenInference; beside a part of a kind the decode does not model, it is.
  it('reads the text of a message\'s parts as native does (openinference)', async () => {
    const requests: [string, unknown][] = [
      ['chat_completions', { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'u' }, text: 'a' }, { type: 'text', text: 'b' }] }] }],
      ['chat_completions', { messages: [{ role: 'user', content: [{ type: 'file', file: {}, text: 'a' }] }] }],
      ['chat_completions', { messages: [{ role: 'user', content: [{ type: 'weird', text: 'a' }] }] }],
      ['codex_responses', { input: [{ role: 'user', content: [{ type: 'input_image', text: 'a' }] }] }],
      ['codex_responses', { input: [{ role: 'user', content: [{ type: 'input_file', text: 'a' }] }] }],
      ['codex_responses', { input: [{ role: 'user', content: [{ type: 'weird', text: 'a' }] }] }],
    ];
    const lines = [
      { hook: 'on_session_start', payload: { session_id: 's1' } },
      ...requests.flatMap(([mode, request], i) => {
        const ids = { session_id: 's1', api_request_id: `a${i}`, provider: 'openai', api_mode: mode, model: 'gpt' };
        return [
          { hook: 'pre_api_request', payload: { ...ids, request: { body: { model: 'gpt', ...(request as object) } } } },
          { hook: 'post_api_request', payload: { ...ids, response: { id: `r${i}`, object: 'chat.completion', model: 'gpt', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } } } },
        ];
      }),
      { hook: 'on_session_finalize', payload: { session_id: 's1' } },
    ] as unknown as Parameters<typeof replayWithOtlp>[1];
    const spans = await spansOnBoth(lines, 'openinference');
    const contents = spans.native!.filter((span) => span.attributes['openinference.span.kind'] === 'LLM').map((span) => span.attributes['llm.input_messages.0.message.content']);
    expect(contents).toEqual(['b', undefined, 'a', undefined, undefined, 'a']);
    expect(normalizeSpans(spans.memory!, opts)).toEqual(normalizeSpans(spans.native!, opts));
  });

  // Found by the random LLM shape probe past its first 120 seeds: native's Messages response decode makes one text of
  // the `text` blocks (joined by newlines; OpenInference reads it for its display text, as content given as one
  // string), takes a `tool_use` block as a tool call only with a text id and name and an input, and nothing else (a
  // refusal, a document or a block of its own kind with a `text`); a `tool_use` input is a value, a string kept as a
  // string; a `system` of blocks is kept as written where a `system` string is read for its display text.
  for (const type of ['gen_ai', 'openinference'] as const) {
    it(`reads a Messages answer, tool_use inputs and system blocks as native does (${type})`, async () => {
      const json = '[" a "]';
      const hi = [{ role: 'user', content: 'hi' }];
      const calls: [unknown, unknown[]][] = [
        [{ system: [{ type: 'text', text: json }], messages: hi }, [{ type: 'text', text: json }]],
        [{ system: json, messages: hi }, [{ type: 'text', text: '[" a "' }, { type: 'text', text: ']' }]],
        [{ system: [{ type: 'text', text: '{"content":"q"}' }, { type: 'text', text: 'b' }], messages: hi }, [{ type: 'image', source: {} }, { type: 'text', text: ' {"text":"z"} ' }]],
        [{ messages: hi }, [{ type: 'refusal', refusal: 'no' }, { type: 'text', text: 'y' }, { type: 'document', text: 'w' }, { type: 'weird', text: 'w' }]],
        [{ messages: hi }, [{ type: 'weird', text: json }]],
        [{ messages: hi }, [{ type: 'text', text: 'x' }, { type: 'tool_use', id: 't', name: 'f' }, { type: 'tool_use', name: 'f', input: {} }, { type: 'tool_use', id: 't', input: {} }, { type: 'tool_use', id: 't', name: 'g', input: null }]],
        [{ messages: hi }, [{ type: 'tool_use', id: 't', name: 'f' }]],
        [{ messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: '{"a":1}' }, { type: 'tool_use', id: 'u', name: 'f', input: '31727146' }] }] }, [{ type: 'tool_use', id: 't', name: 'f', input: '{"a":1}' }]],
      ];
      const lines = [
        { hook: 'on_session_start', payload: { session_id: 's1' } },
        ...calls.flatMap(([request, content], i) => {
          const ids = { session_id: 's1', api_request_id: `a${i}`, provider: 'anthropic', api_mode: 'anthropic_messages', model: 'claude' };
          return [
            { hook: 'pre_api_request', payload: { ...ids, request: { body: { model: 'claude', max_tokens: 5, ...(request as object) } } } },
            { hook: 'post_api_request', payload: { ...ids, response: { id: `m${i}`, type: 'message', role: 'assistant', model: 'claude', content, stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } } },
          ];
        }),
        { hook: 'on_session_finalize', payload: { session_id: 's1' } },
      ] as unknown as Parameters<typeof replayWithOtlp>[1];
      const spans = await spansOnBoth(lines, type);
      const llm = spans.native!.filter((span) => span.attributes['gen_ai.operation.name'] === 'chat' || span.attributes['openinference.span.kind'] === 'LLM');
      if (type === 'openinference') {
        const read = (key: string) => llm.map((span) => span.attributes[key]);
        expect(read('llm.input_messages.0.message.content')).toEqual([json, 'a', '{"content":"q"}\nb', 'hi', 'hi', 'hi', 'hi', undefined]);
        expect(read('llm.output_messages.0.message.content')).toEqual(['a', 'a', 'z', 'y', undefined, 'x', undefined, undefined]);
        expect(read('llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments')).toEqual([undefined, undefined, undefined, undefined, undefined, 'null', undefined, '"{\\"a\\":1}"']);
      }
      expect(normalizeSpans(spans.memory!, opts)).toEqual(normalizeSpans(spans.native!, opts));
    });
  }

  // Found by the same probe once it drew responses with a field of the wrong type or left out: native's response
  // decodes reject a whole response for an id, model, Messages role or stop reason, Responses status, or a Chat
  // choice, finish reason, message, content, tool-call list, call id, function, name or arguments of the wrong type
  // (gen_ai then sends none of the answer, openinference drops its message and finish reason); a Chat answer's tool
  // call without a name is none, one without an id has the id '', one without arguments the arguments {}.
  for (const type of ['gen_ai', 'openinference'] as const) {
    it(`reads responses the decode rejects and Chat answers' tool calls as native does (${type})`, async () => {
      const chat = (message: unknown, over: object = {}, choice: object = {}) => ['chat_completions', { id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-4o', choices: [{ index: 0, message, finish_reason: 'stop', ...choice }], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 }, ...over }] as const;
      const calls = (...list: unknown[]) => ({ role: 'assistant', content: 'a', tool_calls: list });
      const ok = { role: 'assistant', content: 'a' };
      const messages = (over: object) => ['anthropic_messages', { id: 'm1', type: 'message', role: 'assistant', model: 'claude', content: [{ type: 'text', text: 'a' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 }, ...over }] as const;
      const responses = (over: object) => ['codex_responses', { id: 'r1', object: 'response', created_at: 1, status: 'completed', model: 'gpt-4o', output: [{ type: 'message', id: 'm', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'a', annotations: [] }] }], usage: { input_tokens: 5, output_tokens: 2, total_tokens: 7 }, ...over }] as const;
      const answers: (readonly [string, unknown])[] = [
        chat(ok),
        chat(ok, { id: 5 }),
        chat(ok, { model: 5 }),
        chat(ok, {}, { finish_reason: 5 }),
        chat('x'),
        chat({ role: 'assistant', content: [{ type: 'text', text: 'a' }] }),
        chat({ role: 'assistant', content: 'a', tool_calls: {} }),
        chat(calls('x')),
        chat(calls({ id: 5, type: 'function', function: { name: 'f', arguments: '{}' } })),
        chat(calls({ id: 'c', type: 'function', function: 'f' })),
        chat(calls({ id: 'c', type: 'function', function: { name: 5, arguments: '{}' } })),
        chat(calls({ id: 'c', type: 'function', function: { name: 'f', arguments: { a: 1 } } })),
        chat(calls({ id: 'c', type: 'function', function: { name: 'f', arguments: null } }, { type: 'function', function: { name: 'g' } }, { id: 'e', type: 'function', function: { arguments: '{}' } }, { id: 'n', type: 'function', function: null })),
        chat(ok, { id: null, model: null }, { finish_reason: null }),
        messages({ id: 5 }),
        messages({ model: 5 }),
        messages({ role: 5 }),
        messages({ stop_reason: 5 }),
        messages({ stop_sequence: 5 }),
        messages({ role: null, stop_reason: null }),
        responses({ id: 5 }),
        responses({ model: 5 }),
        responses({ status: 5 }),
        responses({ status: null }),
      ];
      const lines = [
        { hook: 'on_session_start', payload: { session_id: 's1' } },
        ...answers.flatMap(([mode, response], i) => {
          const ids = { session_id: 's1', api_request_id: `a${i}`, provider: mode === 'anthropic_messages' ? 'anthropic' : 'openai', api_mode: mode, model: 'm' };
          const body = mode === 'codex_responses' ? { model: 'x', input: 'hi' } : { model: 'x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] };
          return [
            { hook: 'pre_api_request', payload: { ...ids, request: { body } } },
            { hook: 'post_api_request', payload: { ...ids, response } },
          ];
        }),
        { hook: 'on_session_finalize', payload: { session_id: 's1' } },
      ] as unknown as Parameters<typeof replayWithOtlp>[1];
      const spans = await spansOnBoth(lines, type);
      const llm = spans.native!.filter((span) => span.attributes['gen_ai.operation.name'] === 'chat' || span.attributes['openinference.span.kind'] === 'LLM');
      const answered = llm.map((span) => span.attributes[type === 'gen_ai' ? 'gen_ai.output.messages' : 'llm.output_messages.0.message.role'] !== undefined);
      expect(answered).toEqual([true, ...Array(11).fill(false), true, true, ...Array(5).fill(false), true, false, false, false, true]);
      if (type === 'openinference') {
        const tools = llm[12]!.attributes;
        expect([0, 1, 2].map((i) => [tools[`llm.output_messages.0.message.tool_calls.${i}.tool_call.id`], tools[`llm.output_messages.0.message.tool_calls.${i}.tool_call.function.name`], tools[`llm.output_messages.0.message.tool_calls.${i}.tool_call.function.arguments`]])).toEqual([['c', 'f', '{}'], ['', 'g', '{}'], [undefined, undefined, undefined]]);
      }
      expect(normalizeSpans(spans.memory!, opts)).toEqual(normalizeSpans(spans.native!, opts));
    });
  }

  // And a part of a kind the request's decode does not model is a provider part under its kind, not read as the other
  // shape's: a Chat `tool_use` or `tool_result` part is no tool call or result, a Messages `refusal` block no text.
  for (const type of ['gen_ai', 'openinference'] as const) {
    it(`keeps a part of the other shape's kind as a provider part, as native does (${type})`, async () => {
      const requests: [string, unknown][] = [
        ['chat_completions', { messages: [{ role: 'user', content: [{ type: 'tool_use', id: 't', name: 'f', input: {} }, { type: 'text', text: 'a' }] }] }],
        ['chat_completions', { messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'r' }] }] }],
        ['anthropic_messages', { max_tokens: 5, messages: [{ role: 'assistant', content: [{ type: 'refusal', refusal: 'no' }, { type: 'text', text: 'x' }] }] }],
      ];
      const lines = [
        { hook: 'on_session_start', payload: { session_id: 's1' } },
        ...requests.flatMap(([mode, request], i) => {
          const ids = { session_id: 's1', api_request_id: `a${i}`, provider: mode === 'anthropic_messages' ? 'anthropic' : 'openai', api_mode: mode, model: 'gpt' };
          return [
            { hook: 'pre_api_request', payload: { ...ids, request: { body: { model: 'gpt', ...(request as object) } } } },
            { hook: 'post_api_request', payload: { ...ids, response: { id: `r${i}`, object: 'chat.completion', model: 'gpt', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } } } },
          ];
        }),
        { hook: 'on_session_finalize', payload: { session_id: 's1' } },
      ] as unknown as Parameters<typeof replayWithOtlp>[1];
      const spans = await spansOnBoth(lines, type);
      const llm = spans.native!.filter((span) => span.attributes['gen_ai.operation.name'] === 'chat' || span.attributes['openinference.span.kind'] === 'LLM');
      if (type === 'openinference') expect(llm.map((span) => span.attributes['llm.input_messages.0.message.role'])).toEqual(['user', 'user', 'assistant']);
      else expect(JSON.parse(llm[2]!.attributes['gen_ai.input.messages'] as string)[0].parts[0]).toEqual({ refusal: 'no', type: 'refusal' });
      expect(normalizeSpans(spans.memory!, opts)).toEqual(normalizeSpans(spans.native!, opts));
    });
  }

  // The decodes type the top-level request fields they know: one of the wrong type rejects the request (a count that
  // is negative, fractional or past u32, text for a flag or a number, an object that is a list, ...), null reads as
  // absent, and fields they do not type (`tool_choice`) are read leniently.
  it('rejects a request for a top-level field of the wrong type as native does (gen_ai)', async () => {
    const requests: [string, object][] = [
      ['chat_completions', { temperature: 'x' }], ['chat_completions', { max_tokens: 2 ** 32 }], ['chat_completions', { max_tokens: 2 ** 32 - 1 }], ['chat_completions', { seed: -1 }],
      ['chat_completions', { seed: 2 ** 40 }], ['chat_completions', { stop: ['a', 5] }], ['chat_completions', { stop: 'x' }], ['chat_completions', { metadata: [] }],
      ['chat_completions', { tool_choice: 5, top_k: 'x' }], ['chat_completions', { stream: null, user: null }],
      ['chat_completions', { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'u', detail: 5 } }] }] }],
      ['anthropic_messages', { stop_sequences: 'x' }], ['anthropic_messages', { top_k: 1.5 }], ['anthropic_messages', { container: {} }], ['anthropic_messages', { n: 'x' }],
      ['codex_responses', { metadata: 1.5 }], ['codex_responses', { max_output_tokens: 2 ** 40 }], ['codex_responses', { include: [5], truncation: 5 }],
    ];
    const lines = [
      { hook: 'on_session_start', payload: { session_id: 's1' } },
      ...requests.flatMap(([mode, fields], i) => {
        const ids = { session_id: 's1', api_request_id: `a${i}`, provider: mode === 'anthropic_messages' ? 'anthropic' : 'openai', api_mode: mode, model: 'payload-model' };
        const base = mode === 'codex_responses' ? { input: 'hi' } : { max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] };
        return [
          { hook: 'pre_api_request', payload: { ...ids, request: { body: { model: 'body-model', ...base, ...fields } } } },
          { hook: 'post_api_request', payload: { ...ids, response: { id: `r${i}`, object: 'chat.completion', model: 'gpt', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } } } },
        ];
      }),
      { hook: 'on_session_finalize', payload: { session_id: 's1' } },
    ] as unknown as Parameters<typeof replayWithOtlp>[1];
    const spans = await spansOnBoth(lines, 'gen_ai');
    const names = spans.native!.filter((span) => span.attributes['gen_ai.operation.name'] === 'chat').map((span) => span.name === 'chat body-model');
    expect(names).toEqual([false, false, true, true, false, false, true, false, true, true, false, false, false, false, true, false, false, true]);
    expect(normalizeSpans(spans.memory!, opts)).toEqual(normalizeSpans(spans.native!, opts));
  });

  // A Chat tool result given as parts is written as the normalized parts' JSON text, with native's number text (an
  // integer past u32 crossed the binding as an f64: `4111111111111111.0`). Found by the random LLM shape probe.
  it('writes a tool result of parts with native number text, as native does (openinference)', async () => {
    const content = [{ type: 'text', text: 'a' }, { type: 'tool_use', id: 't', input: [4111111111111111, 1.5, -0, 1e21] }, { type: 'weird', '10': 1, '2': 2, a: 1e300 }];
    const lines = [
      { hook: 'on_session_start', payload: { session_id: 's1' } },
      { hook: 'pre_api_request', payload: { session_id: 's1', api_request_id: 'a0', provider: 'openai', api_mode: 'chat_completions', model: 'gpt', request: { body: { model: 'gpt', messages: [{ role: 'tool', tool_call_id: 'c', content }] } } } },
      { hook: 'post_api_request', payload: { session_id: 's1', api_request_id: 'a0', provider: 'openai', api_mode: 'chat_completions', model: 'gpt', response: { id: 'r0', object: 'chat.completion', model: 'gpt', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } } } },
      { hook: 'on_session_finalize', payload: { session_id: 's1' } },
    ] as unknown as Parameters<typeof replayWithOtlp>[1];
    const spans = await spansOnBoth(lines, 'openinference');
    const text = spans.native!.find((span) => span.attributes['openinference.span.kind'] === 'LLM')!.attributes['llm.input_messages.0.message.content'];
    expect(text).toContain('"input":[4111111111111111.0,1.5,0,1e+21]');
    expect(normalizeSpans(spans.memory!, opts)).toEqual(normalizeSpans(spans.native!, opts));
  });

  // With OTLP as the only output the memory relay builds event objects instead of writing lines (nobody keeps them).
  for (const [type, name] of [['full', 'subagent'], ['full', 'tool-loop'], ['full', 'parallel-subagents'], ['gen_ai', 'anthropic'], ['openinference', 'tool-loop']] as const) {
    it(`sends the same ${type} spans for the ${name} stream when OTLP is the only output`, async () => {
      const { theirs, ours } = await both(name, (url) => ({ endpoints: [{ type, endpoint: url }], localFiles: false }));
      expect(ours.result.atofLines).toEqual([]);
      expect(ours.spans.length).toBeGreaterThan(0);
      expect(normalizeSpans(ours.spans, opts)).toEqual(normalizeSpans(theirs.spans, opts));
      expect(ours.result.problems).toEqual([]);
    });
  }

  it('uses native ids and times: trace id = root uuid, span id = low 64 bits of the ATOF uuid, µs times = ATOF timestamps', async () => {
    const { ours } = await both('subagent', (url) => ({ endpoints: [{ type: 'full', endpoint: url }] }));
    const atof = ours.result.atofLines.map((line) => JSON.parse(line) as { uuid: string; timestamp: string; scope_category?: string; propagation_root_uuid?: string });
    const micros = (t: string) => BigInt(Date.parse(t.replace(/\.\d+/, ''))) * 1000n + BigInt((/\.(\d+)/.exec(t)?.[1] ?? '').padEnd(6, '0').slice(0, 6));
    for (const span of ours.spans) {
      const uuid = String(span.attributes['nemo_relay.uuid']);
      const start = atof.find((e) => e.uuid === uuid && e.scope_category === 'start')!;
      const end = atof.find((e) => e.uuid === uuid && e.scope_category === 'end')!;
      expect(span.spanId).toBe(uuid.replace(/-/g, '').slice(16));
      expect(span.traceId).toBe(start.propagation_root_uuid!.replace(/-/g, ''));
      expect(BigInt(span.startTimeUnixNano)).toBe(micros(start.timestamp) * 1000n);
      expect(BigInt(span.endTimeUnixNano)).toBe(micros(end.timestamp) * 1000n);
      expect(span.flags).toBe(257);
    }
    const child = ours.spans.find((s) => s.name === 'hermes-session-child-1')!;
    const parent = ours.spans.find((s) => s.name === 'hermes-session-parent-1')!;
    expect(child.parentSpanId).toBe(parent.spanId);
    expect(parent.parentSpanId).toBe('');
  });

  it('sends the same spans over gRPC', async () => {
    const { theirs, ours } = await both('subagent', (url) => ({ endpoints: [{ type: 'full', endpoint: url, transport: 'grpc' }] }), () => grpc);
    expect(ours.requests.every((r) => r.path === '/opentelemetry.proto.collector.trace.v1.TraceService/Export')).toBe(true);
    expect(ours.spans.length).toBeGreaterThan(0);
    expect(normalizeSpans(ours.spans, opts)).toEqual(normalizeSpans(theirs.spans, opts));
  });

  it('sends the same log records, one per mark (config version 4 logs)', async () => {
    const { theirs, ours } = await both('subagent', (url) => ({ endpoints: [{ type: 'gen_ai', endpoint: url }], logs: ['enabled = true'] }));
    expect(ours.requests.some((r) => r.path === '/v1/logs')).toBe(true);
    expect(ours.logs.length).toBeGreaterThan(0);
    expect(normalizeLogs(ours.logs, opts)).toEqual(normalizeLogs(theirs.logs, opts));
    expect(normalizeSpans(ours.spans, opts)).toEqual(normalizeSpans(theirs.spans, opts));
  });

  it('sends the same log records over gRPC', async () => {
    const { theirs, ours } = await both('tool-loop', (url) => ({ endpoints: [{ type: 'openinference', endpoint: url, transport: 'grpc' }], logs: ['enabled = true'] }), () => grpc);
    expect(ours.requests.some((r) => r.path === '/opentelemetry.proto.collector.logs.v1.LogsService/Export')).toBe(true);
    expect(ours.logs.length).toBeGreaterThan(0);
    expect(normalizeLogs(ours.logs, opts)).toEqual(normalizeLogs(theirs.logs, opts));
    expect(normalizeSpans(ours.spans, opts)).toEqual(normalizeSpans(theirs.spans, opts));
  });

  for (const type of ['full', 'openinference'] as const) {
    it(`applies mark_projection, mark_exclude_names, attribute_mappings and promote_metadata_prefixes like native (${type})`, async () => {
      const extra = [
        'mark_projection = "tool"',
        'mark_exclude_names = ["hermes.session.end"]',
        `attribute_mappings = [{ key = "${type === 'full' ? 'nemo_relay.start.metadata.turn_id' : 'openinference.metadata.turn_id'}", alias = "hermes.turn_id" }]`,
        'promote_metadata_prefixes = ["turn_", "api_"]',
      ];
      const { theirs, ours } = await both('tool-loop', (url) => ({ endpoints: [{ type, endpoint: url, extra }] }));
      expect(ours.spans.some((s) => s.name.startsWith('mark:'))).toBe(true);
      expect(ours.spans.some((s) => s.attributes['hermes.turn_id'] !== undefined)).toBe(true);
      expect(normalizeSpans(ours.spans, opts)).toEqual(normalizeSpans(theirs.spans, opts));
    });
  }

  // Found checking what Langfuse reads (test/export/otlp-vendors.test.ts): on a gen_ai endpoint native aliases
  // nothing of attribute_mappings and sends no mark:<name> spans; the memory relay sent both.
  it('applies neither attribute_mappings nor mark_projection to gen_ai spans, as native; promote_metadata_prefixes still applies', async () => {
    const extra = [
      'mark_projection = "tool"',
      'attribute_mappings = [{ key = "gen_ai.usage.cache_write.input_tokens", alias = "gen_ai.usage.cache_creation.input_tokens" }, { key = "turn_id", alias = "hermes.turn_id" }, { key = "gen_ai.conversation.id", alias = "session.id" }]',
      'promote_metadata_prefixes = ["turn_"]',
    ];
    for (const name of ['tool-loop', 'anthropic']) {
      const { theirs, ours } = await both(name, (url) => ({ endpoints: [{ type: 'gen_ai', endpoint: url, extra }] }));
      expect(theirs.spans.some((s) => s.attributes.turn_id !== undefined)).toBe(true);
      for (const spans of [theirs.spans, ours.spans]) {
        expect(spans.filter((s) => s.name.startsWith('mark:'))).toEqual([]);
        expect(spans.filter((s) => ['gen_ai.usage.cache_creation.input_tokens', 'hermes.turn_id', 'session.id'].some((key) => s.attributes[key] !== undefined))).toEqual([]);
      }
      expect(normalizeSpans(ours.spans, opts)).toEqual(normalizeSpans(theirs.spans, opts));
    }
  });
});
