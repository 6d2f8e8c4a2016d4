// Gemini `generateContent` answers through the plugin on the memory relay
// and on native 0.9.2, sent as gen_ai, openinference and full spans: equal
// after ids become labels. Native reads such an answer with its Gemini codec
// (src/formats/gemini.ts says what it reads and what makes it reject the
// whole answer); before the memory relay had that reader, each case here
// differed (no output message, id, model, finish reason or counts). The
// plugins.toml `atif` trajectories are compared too (model and counts).
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
  ['a functionResponse in the answer', answer([{ functionResponse: { name: 'get', response: {} } }])],
  ['a count that is no whole number', answer([{ text: 'a' }], 'STOP', { usageMetadata: { promptTokenCount: 10.5, candidatesTokenCount: 5 } })],
  ['a numeric finish reason', answer([{ text: 'a' }], 3)],
  ['choices beside candidates', { ...answer([{ text: 'a' }]), choices: [{ index: 0, message: { role: 'assistant', content: 'yo' }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } }],
];

function lines(response: unknown): HookLine[] {
  const ids = { session_id: 's1', turn_id: 't0', api_request_id: 'a0', provider: 'gemini', api_mode: 'chat_completions', model: 'gemini-2.5-flash' };
  return [
    { hook: 'on_session_start', payload: { session_id: 's1' } },
    { hook: 'pre_api_request', payload: { ...ids, request: { method: 'POST', headers: {}, body: { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] } } } },
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
