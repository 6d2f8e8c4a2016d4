// OpenInference spans of the request and response shapes native's codecs
// understand, replayed through both backends to loopback OTLP receivers:
// OpenAI Responses-API calls (string and list `input`, `instructions`,
// `function_call` / `function_call_output` / reasoning items, provider and
// nested function tools, every `status`), Chat Completions (refusals, JSON
// held in text, provider tools, arguments that are not JSON) and Anthropic
// Messages (system blocks, several tool results in one message, thinking
// blocks, provider tools), with every generation parameter native names.
// Native reads each request and response into its normalized messages;
// memory must send exactly the same full, gen_ai and openinference spans.
import { describe, expect, it } from 'vitest';
import type { Json } from '../../src/shared/json.ts';
import { FILE_BACKENDS, nativeAvailable, nativeLoadError } from '../contract/backends.ts';
import { runComponents, type Script } from '../support/component-run.ts';
import { normalizeSpans, SDK_RESOURCE_KEYS } from '../support/otlp-normalize.ts';

const usage = { input_tokens: 11, output_tokens: 7, total_tokens: 18, input_tokens_details: { cached_tokens: 2 }, output_tokens_details: { reasoning_tokens: 3 } };
const response = (output: Json[], extra: Record<string, Json> = {}): Json => ({ id: 'resp_1', object: 'response', created_at: 1, status: 'completed', model: 'gpt-4.1-2025', output, usage, ...extra });
const message = (text: string): Json => ({ type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] });
const weather = { type: 'function', name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: true };
const call = (id: string, name: string, args: string): Json => ({ type: 'function_call', id: `fc_${id}`, call_id: `call_${id}`, name, arguments: args, status: 'completed' });
const reasoning: Json = { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Need weather' }] };

const chat = (message: Json, finish = 'stop'): Json => ({ id: 'c1', object: 'chat.completion', model: 'gpt-4o-2024', choices: [{ index: 0, message, finish_reason: finish }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
const anthropic = (content: Json[], stop = 'end_turn'): Json => ({ id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-x', content, stop_reason: stop, usage: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 3 } });

/** [id, hook fields, request body, response]. */
const CALLS: [string, Record<string, string>, Record<string, Json>, Json][] = [
  ['responses-text', {}, { model: 'gpt-4.1', input: 'What is 2+2?', instructions: 'Be brief.', temperature: 0.2, max_output_tokens: 50 }, response([message('4')])],
  ['responses-list', {}, { model: 'gpt-4.1', input: [{ role: 'developer', content: 'dev says' }, { role: 'system', content: 'sys says' }, { role: 'user', content: [{ type: 'input_text', text: 'hello' }, { type: 'input_image', image_url: 'http://x' }, { type: 'input_file', file_id: 'f1', filename: 'a.pdf' }, { type: 'refusal', refusal: 'r' }] }, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'earlier' }] }, { role: 'assistant', id: 'msg_0', content: [{ type: 'output_text', text: 'with an id' }] }] }, response([message('hi there')])],
  ['responses-tools', {}, { model: 'gpt-4.1', input: [{ role: 'user', content: 'weather?' }], tools: [weather, { type: 'web_search' }, { type: 'function', function: { name: 'nested', parameters: { type: 'object' } }, extra_field: 1 }], tool_choice: 'auto' }, response([reasoning, call('1', 'get_weather', '{"city":"Paris"}')])],
  ['responses-items', {}, { model: 'gpt-4.1', input: [{ role: 'user', content: 'weather?' }, reasoning, call('1', 'get_weather', '{"city":"Paris"}'), { type: 'function_call_output', call_id: 'call_1', output: '{"temp":20}' }, { type: 'function_call_output', call_id: 'call_2', output: [{ type: 'input_text', text: 'out' }] }, { type: 'custom_tool_call', call_id: 'x', name: 'n', input: 'i' }] }, response([message('It is 20C.')])],
  ['responses-text-and-calls', {}, { model: 'gpt-4.1', input: 'x' }, response([message('Let me check.'), call('2', 'lookup', '{"q":1}'), call('3', 'lookup2', 'notjson')])],
  ['responses-incomplete', {}, { model: 'gpt-4.1', input: 'x' }, response([message('partial')], { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } })],
  ['responses-filtered', {}, { model: 'gpt-4.1', input: 'x' }, response([], { status: 'incomplete', incomplete_details: { reason: 'content_filter' }, output_text: 'top level text' })],
  ['responses-failed', {}, { model: 'gpt-4.1', input: [], temperature: 1, top_p: 0.5 }, response([{ type: 'output_text', text: 'loose' }], { status: 'failed' })],
  ['responses-two-messages', {}, { model: 'gpt-4.1', input: 'x' }, response([message('a'), message('b')], { output_text: 'ab' })],
  ['responses-undecodable', {}, { model: 'gpt-4.1', input: [{ role: 'user' }], instructions: 'x' }, response([message('ok')])],
  ['chat-shapes', { model: 'gpt-4o' }, { model: 'gpt-4o', max_completion_tokens: 30, messages: [{ role: 'system', content: '  padded system  ' }, { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }, { type: 'image_url', image_url: { url: 'http://i' } }] }, { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"b":1,"a":2}' } }] }, { role: 'tool', tool_call_id: 'call_1', content: '{"content":"json inside"}' }, { role: 'user', content: '{"text":"json text"}' }, { role: 'assistant', content: [{ type: 'refusal', refusal: 'nope' }] }], tools: [{ type: 'function', function: { name: 'f', description: 'd', parameters: { type: 'object' }, strict: true } }, { type: 'custom', custom: { name: 'c' } }] }, chat({ role: 'assistant', content: 'ok', tool_calls: [{ id: 'call_2', type: 'function', function: { name: 'g', arguments: 'not json' } }] }, 'tool_calls')],
  ['chat-tool-parts', { model: 'gpt-4o' }, { model: 'gpt-4o', tools: [{ type: 'function', function: { name: 'keys', parameters: { type: 'object', properties: { '\u{1F600}': { type: 'string' }, '\uE000': { type: 'string' }, a: { type: 'string' } } }, '\u{1F600}x': 1, '\uE000x': 2 } }], messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: null, tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'call_9', content: [{ type: 'text', text: 'part one' }, { text: 'part two', type: 'text' }, { type: 'image_url', image_url: { url: 'http://i', detail: 'low' } }, { refusal: 'no', type: 'refusal' }, { file: { file_id: 'f1', filename: 'a.pdf' }, type: 'file' }, { input_audio: { format: 'wav', data: 'a' }, type: 'input_audio' }, { z: 1, type: 'weird', a: 2 }] }] }, chat({ role: 'assistant', content: 'done' })],
  ['anthropic-shapes', { model: 'claude-x', provider: 'anthropic' }, { model: 'claude-x', max_tokens: 100, system: [{ type: 'text', text: 'sys1' }, { type: 'text', text: 'sys2' }], messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: [{ type: 'thinking', thinking: 'hmm', signature: 's' }, { type: 'text', text: 'calling' }, { type: 'tool_use', id: 'tu1', name: 'f', input: { z: 1, a: 2 } }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu1', content: 'r1' }, { type: 'tool_result', tool_use_id: 'tu2', content: [{ type: 'text', text: 'r2' }] }] }], tools: [{ name: 'f', description: 'd', input_schema: { type: 'object' } }, { type: 'web_search_20250305', name: 'web_search' }] }, anthropic([{ type: 'thinking', thinking: 't', signature: 's' }, { type: 'text', text: 'one' }, { type: 'text', text: 'two' }, { type: 'tool_use', id: 'tu3', name: 'g', input: {} }], 'tool_use')],
  ['chat-params', { model: 'gpt-4o' }, { model: 'gpt-4o', temperature: 0.2, top_p: 0.9, stop: ['x', 'y'], seed: 7, n: 2, frequency_penalty: 0.5, presence_penalty: 0.1, stream: true, messages: [{ role: 'user', content: 'x', name: 'bob' }, { role: 'developer', content: 'dev' }, { role: 'function', name: 'fn', content: 'fres' }, { role: 'critic', content: 'unknown role' }, { role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'a', format: 'wav' } }] }], tools: [{ type: 'web_search', name: 'ws' }, { type: 'custom', custom: { name: 'c' } }] }, chat({ role: 'assistant', content: '' }, 'length')],
  ['responses-provider-tools', {}, { model: 'g', input: 'x', tools: [{ type: 'custom', name: 'cx' }, { type: 'file_search', vector_store_ids: [] }] }, response([message('ok')])],
  ['anthropic-provider-tools', { model: 'claude-x', provider: 'anthropic' }, { model: 'claude-x', max_tokens: 10, top_k: 4, stop_sequences: ['s'], system: 's', messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'bash_20250124' }, { type: 'custom', name: 'cc', input_schema: {} }] }, anthropic([{ type: 'text', text: 'ok' }])],
  ['anthropic-json-system', { model: 'claude-x', provider: 'anthropic' }, { model: 'claude-x', max_tokens: 100, system: '{"content":"sys json"}', messages: [{ role: 'user', content: [{ type: 'text', text: 'q1' }, { type: 'image', source: { type: 'url', url: 'http://i' } }] }] }, anthropic([{ type: 'text', text: 'a' }], 'max_tokens')],
  // Parts without a type, under every shape: native shows each under the kind `unknown`.
  ['chat-typeless-part', { model: 'gpt-4o' }, { model: 'gpt-4o', messages: [{ role: 'user', content: [{ text: 'typeless' }, { type: 'weird', z: 1 }, { type: 7, text: 'numbered' }] }] }, chat({ role: 'assistant', content: 'ok' })],
  ['anthropic-typeless-part', { model: 'claude-x', provider: 'anthropic' }, { model: 'claude-x', max_tokens: 10, messages: [{ role: 'user', content: [{ text: 'typeless' }, { type: 'weird', z: 1 }] }] }, anthropic([{ type: 'text', text: 'ok' }])],
  ['responses-typeless-part', {}, { model: 'gpt-4.1', input: [{ role: 'user', content: [{ text: 'typeless' }, { type: 'weird', z: 1 }] }] }, response([message('ok')])],
  // No shape native detects (an Anthropic provider name without messages; no conversation at all): native reads nothing of the request.
  ['anthropic-no-messages', { model: 'claude-x', provider: 'anthropic' }, { model: 'claude-x', max_tokens: 10, temperature: 0.5, tools: [{ name: 'f', description: 'd', input_schema: { type: 'object' } }] }, anthropic([{ type: 'text', text: 'ok' }])],
  // Each shape's own parameter names only: another shape's token cap or stop is not a generation parameter.
  ['chat-foreign-params', { model: 'gpt-4o' }, { model: 'gpt-4o', max_output_tokens: 7, stop_sequences: ['q'], messages: [{ role: 'user', content: 'x' }] }, chat({ role: 'assistant', content: 'ok' })],
  ['anthropic-foreign-params', { model: 'claude-x', provider: 'anthropic' }, { model: 'claude-x', max_tokens: 10, max_completion_tokens: 5, stop: ['w'], messages: [{ role: 'user', content: 'x' }] }, anthropic([{ type: 'text', text: 'ok' }])],
  ['responses-foreign-params', {}, { model: 'gpt-4.1', input: 'x', max_tokens: 6, max_completion_tokens: 4, stop: ['s'] }, response([message('ok')])],
  ['chat-both-caps', { model: 'gpt-4o' }, { model: 'gpt-4o', max_tokens: 8, max_completion_tokens: 9, stop: 'single', messages: [{ role: 'user', content: 'x' }] }, chat({ role: 'assistant', content: 'ok' })],
  ['no-shape', { model: 'gpt-4o' }, { model: 'gpt-4o', temperature: 0.5, max_tokens: 9, stop: 'x', tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }] }, chat({ role: 'assistant', content: 'ok' })],
];

const script: Script = ({ hooks }) => {
  hooks.emit('on_session_start', { session_id: 's', model: 'session-model' } as never);
  for (const [id, fields, body, reply] of CALLS) {
    const at = { session_id: 's', turn_id: 't', api_request_id: id, provider: 'openai', model: 'gpt-4.1', ...fields };
    hooks.emit('pre_api_request', { ...at, request: { body } } as never);
    hooks.emit('post_api_request', { ...at, response: reply } as never);
  }
  hooks.emit('on_session_finalize', { session_id: 's' } as never);
};

if (!nativeAvailable) console.warn(`OTLP request shapes skipped: nemo-relay-node cannot load here (${nativeLoadError})`);

describe.skipIf(!nativeAvailable)('OTLP openinference and gen_ai on every request shape native understands', () => {
  it('Responses, Chat Completions and Messages calls: the same spans as native', async () => {
    const runs = [];
    for (const backend of FILE_BACKENDS) runs.push(await runComponents(backend.create(), { components: '', script, otlp: ['full', 'gen_ai', 'openinference'] }));
    const [memory, native] = runs as [(typeof runs)[number], (typeof runs)[number]];
    const opts = { ignoreResourceKeys: SDK_RESOURCE_KEYS };
    for (const type of ['full', 'gen_ai', 'openinference'] as const) {
      expect(native.spans[type]!.length, type).toBe(1 + CALLS.length);
      expect(normalizeSpans(memory.spans[type]!, opts), type).toEqual(normalizeSpans(native.spans[type]!, opts));
    }
    // What the spans say, checked by hand for the Responses calls (not only "equal to native").
    const llm = memory.spans.openinference!.filter((span) => span.attributes['openinference.span.kind'] === 'LLM').sort((a, b) => (BigInt(a.startTimeUnixNano) < BigInt(b.startTimeUnixNano) ? -1 : 1));
    const [text, list, tools, items, textAndCalls, incomplete] = llm.map((span) => span.attributes);
    expect([text!['llm.input_messages.0.message.role'], text!['llm.input_messages.0.message.content'], text!['llm.input_messages.1.message.content'], text!['output.value'], text!['llm.finish_reason']]).toEqual(['system', 'Be brief.', 'What is 2+2?', '4', 'complete']);
    expect(text!['llm.invocation_parameters']).toBe('{"temperature":0.2,"max_tokens":50}');
    expect([0, 1, 2, 3, 4].map((i) => list![`llm.input_messages.${i}.message.role`])).toEqual(['developer', 'system', 'user', 'assistant', 'assistant']);
    expect(list!['llm.input_messages.2.message.content']).toBe('hello\nr');
    expect(tools!['llm.output_messages.0.message.tool_calls.0.tool_call.function.name']).toBe('get_weather');
    expect(tools!['llm.tools.1.tool.json_schema']).toBe('{"type":"provider_native","provider":"openai_responses","kind":"web_search","value":{"type":"web_search"}}');
    expect([items!['llm.input_messages.1.message.role'], items!['llm.input_messages.3.message.role'], items!['llm.input_messages.3.message.tool_call_id'], items!['llm.input_messages.3.message.content']]).toEqual(['provider_native', 'tool', 'call_1', '{"temp":20}']);
    expect(textAndCalls!['output.value']).toBe('Let me check.\nRequested tools: lookup, lookup2');
    expect(textAndCalls!['llm.output_messages.0.message.tool_calls.1.tool_call.function.arguments']).toBe('"notjson"');
    expect(incomplete!['llm.finish_reason']).toBe('length');
    const chatSpans = memory.spans.gen_ai!.filter((span) => span.attributes['gen_ai.operation.name'] === 'chat');
    const responsesText = chatSpans.find((span) => span.attributes['gen_ai.request.max_tokens'] === 50)!.attributes;
    expect([responsesText['gen_ai.system_instructions'], responsesText['gen_ai.usage.reasoning.output_tokens'], responsesText['gen_ai.response.finish_reasons']]).toEqual(['[{"content":"Be brief.","type":"text"}]', 3, ['stop']]);
  });
});
