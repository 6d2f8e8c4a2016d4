// Gemini `generateContent` requests and answers through the plugin on the
// memory relay and on native 0.9.2, sent as gen_ai, openinference and full
// spans: equal after ids become labels. Native reads them with its Gemini
// codec (src/formats/gemini.ts says what it reads and what makes it reject a
// whole answer or request); before the memory relay had that reader, each
// case here differed (no output message, id, model, finish reason or counts;
// no input messages, tools or parameters). The answers' plugins.toml `atif`
// trajectories are compared too (model and counts).
// In the slow suite (Node): seconds of CPU that npm test, at its limit on 2 cores, needs more.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nativeAvailable, nativeLoadError } from '../contract/backends.ts';
import { startHttpReceiver, type Receiver } from '../support/otlp-receiver.ts';
import { otlpDifferences } from '../support/random-tool-values.ts';
import fs from 'node:fs';
import path from 'node:path';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import { loadNativeRelay } from '../../native/index.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { replayWithOtlp } from '../support/otlp-replay.ts';
import type { HookLine } from '../fixtures/streams/script.ts';

const USAGE = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 };
const answer = (parts: unknown[], finishReason: unknown = 'STOP', extra: Record<string, unknown> = {}) => ({
  candidates: [{ content: { role: 'model', parts }, finishReason, index: 0 }],
  usageMetadata: USAGE,
  modelVersion: 'gemini-2.5-flash-001',
  responseId: 'resp-1',
  ...extra,
});

/** Each case: an answer, and what native makes of it. */
const ANSWERS: [string, unknown][] = [
  ['text', answer([{ text: 'Hi there' }])],
  ['two texts and a thought', answer([{ text: 'hmm', thought: true }, { text: ' a ' }, { text: 'b' }])],
  ['a function call (its id is the name) beside text', answer([{ text: 'let me' }, { functionCall: { name: 'get', args: { b: 2, a: 1 } } }])],
  ['calls of two functions, one with its own id and no args', answer([{ functionCall: { name: 'get', id: 'call-9' } }, { functionCall: { name: 'put', args: {} } }])],
  ['a call cut by MAX_TOKENS', answer([{ functionCall: { name: 'get', args: {} } }], 'MAX_TOKENS')],
  ['a call with no finish reason (a tool call)', answer([{ functionCall: { name: 'get', args: {} } }], null)],
  ['a call with OTHER', answer([{ functionCall: { name: 'get', args: {} } }], 'OTHER')],
  ['media and code parts', answer([{ text: 'see' }, { inlineData: { mimeType: 'image/png', data: 'AAA' } }, { fileData: { mimeType: 'image/png', fileUri: 'gs://x' } }, { executableCode: { language: 'PYTHON', code: 'print(1)' } }, {}])],
  ['only a file part', answer([{ fileData: { mimeType: 'image/png', fileUri: 'gs://x' } }])],
  ['SAFETY', answer([{ text: 't' }], 'SAFETY')],
  ['RECITATION', answer([{ text: 't' }], 'RECITATION')],
  ['OTHER', answer([{ text: 't' }], 'OTHER')],
  ['lowercase stop, sent as it is', answer([{ text: 't' }], 'stop')],
  ['FINISH_REASON_UNSPECIFIED', answer([{ text: 't' }], 'FINISH_REASON_UNSPECIFIED')],
  ['two candidates (the first is read)', { ...answer([{ text: 'one' }]), candidates: [{ content: { parts: [{ text: 'one' }] }, finishReason: 'STOP' }, { content: { parts: [{ text: 5 }] } }] }],
  ['no candidates', answer([], 'STOP', { candidates: [] })],
  ['a candidate without content', { candidates: [{ finishReason: 'SAFETY' }], usageMetadata: USAGE }],
  ['every count', answer([{ text: 'a' }], 'STOP', { usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, thoughtsTokenCount: 7, toolUsePromptTokenCount: 3, cachedContentTokenCount: 4, totalTokenCount: 25 } })],
  ['only a prompt count', answer([{ text: 'a' }], 'STOP', { usageMetadata: { promptTokenCount: 10 } })],
  ['Gemini names in `usage` beside the answer (no counts on native)', answer([{ text: 'a' }], 'STOP', { usage: { promptTokenCount: 20, candidatesTokenCount: 9, thoughtsTokenCount: 2 } })],
  ['Chat names in `usage` beside usageMetadata', answer([{ text: 'a' }], 'STOP', { usage: { prompt_tokens: 20, completion_tokens: 9 } })],
  ['counts by native names beside no usageMetadata', { candidates: [{ content: { parts: [{ text: 'a' }] }, finishReason: 'STOP' }], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } }],
  ['a `model` beside modelVersion', answer([{ text: 'a' }], 'STOP', { model: 'other' })],
  // Rejected by the decode: nothing of the answer on either backend.
  ['two calls of one function', answer([{ functionCall: { name: 'get', args: { x: 1 } } }, { functionCall: { name: 'get', args: { x: 2 } } }], 'STOP', { usage: { promptTokenCount: 20, candidatesTokenCount: 9 } })],
  ['a call whose args are text', answer([{ functionCall: { name: 'get', args: '{"x":1}' } }])],
  ['a part of two kinds', answer([{ text: 'a', functionCall: { name: 'g', args: {} } }])],
  ['a part of two kinds, one null', answer([{ text: 'a', functionCall: null }])],
  ['a null thoughtSignature still signs its text', answer([{ text: 'a', thoughtSignature: null }, { text: 'b' }])],
  ['a functionResponse in the answer', answer([{ functionResponse: { name: 'get', response: {} } }])],
  ['a count that is no whole number', answer([{ text: 'a' }], 'STOP', { usageMetadata: { promptTokenCount: 10.5, candidatesTokenCount: 5 } })],
  ['a numeric finish reason', answer([{ text: 'a' }], 3)],
  ['choices beside candidates', { ...answer([{ text: 'a' }]), choices: [{ index: 0, message: { role: 'assistant', content: 'yo' }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } }],
];

const ASKED = [{ role: 'user', parts: [{ text: 'q' }] }];
const call = (name: string, id?: string) => ({ functionCall: { ...(id === undefined ? {} : { id }), name, args: { x: 1 } } });
const result = (name: string, id?: string) => ({ functionResponse: { ...(id === undefined ? {} : { id }), name, response: { output: 'ok' } } });

/** Each case: a Gemini request body, answered with a plain text; what native reads of it. */
const REQUESTS: [string, Record<string, unknown>][] = [
  ['user and model turns, texts joined', { model: 'gemini-2.5-pro', contents: [{ role: 'user', parts: [{ text: 'hello' }] }, { role: 'model', parts: [{ text: 'a' }, { text: 'b' }] }, { parts: [{ text: '  c  ' }] }] }],
  ['a turn of no parts, a thought left out', { model: 'gemini-2.5-pro', contents: [{ role: 'user', parts: [] }, { role: 'model', parts: [{ text: 'hmm', thought: true }, { text: 'ans' }] }] }],
  ['a signed text keeps a turn in parts', { model: 'gemini-2.5-pro', contents: [{ role: 'model', parts: [{ text: 'a', thoughtSignature: 's' }, { text: 'b' }] }] }],
  ['media, code and unknown parts in order', { model: 'gemini-2.5-pro', contents: [{ role: 'user', parts: [{ fileData: { fileUri: 'gs://f' } }, { text: 'see' }, { inlineData: { mimeType: 'image/png', data: 'AAA' } }, { foo: 1 }] }] }],
  ['a system instruction (a thought is text there), JSON text in it', { model: 'gemini-2.5-pro', contents: ASKED, systemInstruction: { role: 'system', parts: [{ text: '[" a "]' }, { text: 'b', thought: true }] } }],
  ['a blank system instruction', { model: 'gemini-2.5-pro', contents: ASKED, systemInstruction: { parts: [{ text: '' }] } }],
  ['calls and their results (ids: their own, else the name)', { model: 'gemini-2.5-pro', contents: [...ASKED, { role: 'model', parts: [call('get'), { text: 'after' }, call('put', 'c9')] }, { role: 'user', parts: [result('get'), result('put', 'c9')] }] }],
  ['function declarations and provider tools', { model: 'gemini-2.5-pro', contents: ASKED, tools: [{ functionDeclarations: [{ name: 'get', description: 'gets', parameters: { type: 'OBJECT', properties: { x: { type: 'STRING' } } }, zeta: 1 }, { name: 'put' }] }, { googleSearch: {}, codeExecution: {} }, {}] }],
  ['generation parameters', { model: 'gemini-2.5-pro', contents: ASKED, generationConfig: { temperature: 1, topP: 0.9, topK: 40, maxOutputTokens: 100, stopSequences: ['x'], seed: 7 } }],
  ['no model', { contents: ASKED }],
  // Rejected by the decode: nothing of the request, the span names the payload's model.
  ['a role other than user or model', { model: 'gemini-2.5-pro', contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] }],
  ['a turn without parts', { model: 'gemini-2.5-pro', contents: [{ role: 'user' }] }],
  ['a function result beside text', { model: 'gemini-2.5-pro', contents: [{ role: 'user', parts: [result('get'), { text: 'more' }] }] }],
  ['two calls of one function in a turn', { model: 'gemini-2.5-pro', contents: [{ role: 'model', parts: [call('get'), call('get')] }] }],
  ['a system instruction as a string', { model: 'gemini-2.5-pro', contents: ASKED, systemInstruction: 'be nice' }],
  ['a temperature that is no number', { model: 'gemini-2.5-pro', contents: ASKED, generationConfig: { temperature: 'hot' } }],
  ['a declaration without a name', { model: 'gemini-2.5-pro', contents: ASKED, tools: [{ functionDeclarations: [{ description: 'x' }] }] }],
  ['a null description', { model: 'gemini-2.5-pro', contents: ASKED, tools: [{ functionDeclarations: [{ name: 'g', description: null }] }] }],
  ['a null generationConfig', { model: 'gemini-2.5-pro', contents: ASKED, generationConfig: null }],
  ['a system instruction whose role is no text', { model: 'gemini-2.5-pro', contents: ASKED, systemInstruction: { role: 5, parts: [{ text: 's' }] } }],
];

function lines(response: unknown, body: unknown = { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] }): HookLine[] {
  const ids = { session_id: 's1', turn_id: 't0', api_request_id: 'a0', provider: 'gemini', api_mode: 'chat_completions', model: 'gemini-2.5-flash' };
  return [
    { hook: 'on_session_start', payload: { session_id: 's1' } },
    { hook: 'pre_api_request', payload: { ...ids, request: { method: 'POST', headers: {}, body } } },
    { hook: 'post_api_request', payload: { ...ids, response } },
    { hook: 'on_session_finalize', payload: { session_id: 's1' } },
  ] as HookLine[];
}

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startHttpReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

/** The agent steps of the plugins.toml `atif` trajectory one backend writes: their message, model and metrics. */
async function atifSteps(backend: 'native' | 'memory', response: unknown): Promise<unknown[]> {
  receiver.requests.length = 0;
  const relay = backend === 'native' ? loadNativeRelay({ logger: silentLogger }) : createMemoryRelay({ logger: silentLogger });
  const result = await replayWithOtlp(relay, lines(response), { endpoints: [{ type: 'gen_ai', endpoint: receiver.url }] });
  return result.atifFiles.flatMap((file) => {
    const document = JSON.parse(fs.readFileSync(path.join(result.dir, 'atif', file), 'utf8')) as { steps: Record<string, unknown>[] };
    return document.steps.filter((step) => step.source === 'agent').map((step) => ({ message: step.message, model_name: step.model_name, metrics: step.metrics }));
  });
}

describe.skipIf(!nativeAvailable)(`Gemini answers: memory and native write the same plugins.toml trajectory${nativeAvailable ? '' : ' (skipped)'}`, () => {
  it.each(ANSWERS.map(([name, response]) => [name, response] as const))('%s', async (_name, response) => {
    const native = await atifSteps('native', response);
    expect(native.length).toBe(1);
    expect(await atifSteps('memory', response)).toEqual(native);
  });
});

describe.skipIf(!nativeAvailable)(`Gemini answers: memory and native send the same OTLP${nativeAvailable ? '' : ` (skipped: native cannot load: ${nativeLoadError})`}`, () => {
  it.each(ANSWERS.map(([name, response], i) => [name, i, response] as const))('%s', async (_name, i, response) => {
    expect(await otlpDifferences(i, lines(response), receiver, ['gen_ai', 'openinference', 'full'])).toEqual([]);
  });
});

describe.skipIf(!nativeAvailable)(`Gemini requests: memory and native send the same OTLP${nativeAvailable ? '' : ' (skipped)'}`, () => {
  it.each(REQUESTS.map(([name, body], i) => [name, i, body] as const))('%s', async (_name, i, body) => {
    expect(await otlpDifferences(100 + i, lines(ANSWERS[0]![1], body), receiver, ['gen_ai', 'openinference', 'full'])).toEqual([]);
  });
});
