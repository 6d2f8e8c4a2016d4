// OTLP differences from native found with hook streams the parity tests had
// not seen (issue 22, item 8), replayed through both backends: the
// openinference `llm.invocation_parameters` (only temperature, max_tokens,
// top_p and stop, in native's order, floats as floats; no tool_choice,
// seed, response_format), `nemo_relay.model_name` when only the request
// body names the model, a provider-reported cost without any pricing, and a
// tool result's text as `output.value`, and native's status() listing the
// collectors it sends to. Every span of full and openinference must equal
// native's.
import { describe, expect, it } from 'vitest';
import type { Json } from '../../src/shared/json.ts';
import { FILE_BACKENDS, nativeAvailable, nativeLoadError } from '../contract/backends.ts';
import { runComponents, type Script } from '../support/component-run.ts';
import { normalizeSpans, SDK_RESOURCE_KEYS } from '../support/otlp-normalize.ts';

const chat: Json = { id: 'r', object: 'chat.completion', model: 'm-resp', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] };
const message: Json = { id: 'msg', type: 'message', role: 'assistant', model: 'm-resp', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', usage: { input_tokens: 3, output_tokens: 2, cost: { total: 0.25, currency: 'USD' } } };
// No model in the response: the span is named by the request.
const unnamed: Json = { id: 'r', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] };
const user = [{ role: 'user', content: 'hi' }];

/** [id, hook fields (model, provider), request body, response]. */
const CALLS: [string, Record<string, string>, Record<string, Json>, Json][] = [
  ['chat-params', { model: 'm' }, { model: 'm', temperature: 0.5, tool_choice: 'auto', parallel_tool_calls: true, response_format: { type: 'json_object' }, max_tokens: 5, top_p: 1, stream: false, n: 1, seed: 3, stop: ['x'], messages: user }, chat],
  ['chat-completion-tokens', { model: 'm' }, { model: 'm', max_tokens: 7, max_completion_tokens: 9, temperature: 1, stop: 'x', frequency_penalty: 0.1, logprobs: true, messages: user }, chat],
  ['anthropic', { model: 'm', provider: 'anthropic' }, { model: 'm', max_tokens: 7, temperature: 0.3, top_p: 0.9, top_k: 5, stop_sequences: ['s'], tool_choice: { type: 'auto' }, system: 's', messages: user }, message],
  ['body-model-only', {}, { model: 'body-m', temperature: 2, foo: 1, messages: user }, unnamed],
  ['no-model', {}, { messages: user }, unnamed],
];

const RESULTS: Json[] = [{ content: 'x1' }, { content: 'x2', extra: 1 }, { content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }, { content: [{ type: 'image', data: 'zz' }] }, { text: 'T', content: 'C' }, { content: '', text: 't' }, { content: ['s1', 's2'] }, { result: 'x4' }, 'x5', { content: 5 }, { text: 5 }, { content: [] }, [{ type: 'text', text: 'arr' }]];

const script: Script = ({ hooks }) => {
  hooks.emit('on_session_start', { session_id: 's', model: 'session-model' } as never);
  for (const [id, fields, body, response] of CALLS) {
    const at = { session_id: 's', turn_id: 't', api_request_id: id, provider: 'openai', ...fields };
    hooks.emit('pre_api_request', { ...at, request: { body } } as never);
    hooks.emit('post_api_request', { ...at, response } as never);
  }
  RESULTS.forEach((result, i) => {
    hooks.emit('pre_tool_call', { session_id: 's', turn_id: 't', tool_name: 'lookup', tool_call_id: `c${i}`, args: {} } as never);
    hooks.emit('post_tool_call', { session_id: 's', turn_id: 't', tool_name: 'lookup', tool_call_id: `c${i}`, result } as never);
  });
  hooks.emit('on_session_finalize', { session_id: 's' } as never);
};

if (!nativeAvailable) console.warn(`OTLP leftovers skipped: nemo-relay-node cannot load here (${nativeLoadError})`);

describe.skipIf(!nativeAvailable)('OTLP on hook streams the parity tests had not seen', () => {
  it('full and openinference spans equal native’s', async () => {
    const runs = [];
    for (const backend of FILE_BACKENDS) runs.push(await runComponents(backend.create(), { components: '', script, otlp: ['full', 'openinference'] }));
    const [memory, native] = runs as [(typeof runs)[number], (typeof runs)[number]];
    const opts = { ignoreResourceKeys: SDK_RESOURCE_KEYS };
    for (const type of ['full', 'openinference'] as const) {
      expect(native.spans[type]!.length, type).toBe(1 + CALLS.length + RESULTS.length);
      expect(normalizeSpans(memory.spans[type]!, opts), type).toEqual(normalizeSpans(native.spans[type]!, opts));
    }
    // Both list the configured collectors in status().outputs; native says it cannot count what it sent.
    const collectors = (run: typeof memory) => run.status.outputs.filter((o) => o.kind === 'otlp-traces');
    // Each run had its own receivers: the ports differ, nothing else.
    const at = (url: string) => url.replace(/:\d+\//, ':<port>/');
    expect(collectors(native).map((o) => [at(o.path), o.unobserved !== undefined])).toEqual(collectors(memory).map((o) => [at(o.path), true]));
    expect(collectors(native)).toHaveLength(2);
    expect(collectors(memory).every((o) => o.unobserved === undefined && o.sent! > 0)).toBe(true);
    const llm = memory.spans.openinference!.filter((span) => span.attributes['openinference.span.kind'] === 'LLM');
    expect(llm.map((span) => span.attributes['llm.invocation_parameters'] ?? null)).toEqual([
      '{"temperature":0.5,"max_tokens":5,"top_p":1.0,"stop":["x"]}',
      '{"temperature":1.0,"max_tokens":9,"stop":["x"]}',
      '{"temperature":0.3,"max_tokens":7,"top_p":0.9,"stop":["s"]}',
      '{"temperature":2.0}',
      null,
    ]);
    const full = memory.spans.full!.filter((span) => span.attributes['nemo_relay.scope_type'] === 'llm');
    expect(full.map((span) => span.attributes['nemo_relay.model_name'] ?? null)).toEqual(['m-resp', 'm-resp', 'm-resp', 'body-m', null]);
    expect(full.map((span) => span.attributes['nemo_relay.llm.cost.total'] ?? null)).toEqual([null, null, 0.25, null, null]);
  });
});
