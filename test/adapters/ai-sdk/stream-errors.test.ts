// An error event in the middle of a streamed answer (Anthropic's `overloaded_error`, OpenAI Responses' `error`), as
// a user trial met it on Anthropic's wire: @ai-sdk/anthropic ends such a stream without a finish part, so the SDK
// reports no end of the model call (no onLanguageModelCallEnd), only the step's end with finish reason `error` and
// the text that came. The call was left open and closed at the session's end as never answered
// (`session_closed`), the text lost. And the error itself reaches the program's `onError` only, never telemetry: a
// later trial found the call ended with the text but without the error the provider sent. The call must fail with
// that error (as `onError` got it) and keep the text that came and the model that answered; under `streamRetries`
// the broken attempt stays a failed attempt, with that error, of the call the SDK retried.
import { afterEach, describe, expect, it } from 'vitest';
import { streamText, wrapLanguageModel } from 'ai';
import { aiSdkMiddleware, instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { AI_SDK_PROVIDERS } from '../../support/ai-sdk-providers.ts';
import { expectNothingLost, recordedPlugin, type AtifDoc, type AtofEvent } from '../support.ts';
import { sameOnNative } from '../same-on-native.ts';
import { FakeProvider, type Turn, type Wire } from './wire.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

type Step = Record<string, any>;

const WIRES = {
  anthropic: {
    wire: 'anthropic',
    turn: { id: 'msg_1', model: 'claude-sonnet-4-5-20250929', text: 'Hello there friend, how are you today?', usage: { input: 40, output: 9 } },
    error: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
  },
  responses: {
    wire: 'responses',
    turn: { id: 'resp_1', model: 'gpt-4o-2024-08-06', text: 'Hello there friend, how are you today?', usage: { input: 40, output: 9 } },
    error: { type: 'error', sequence_number: 99, code: 'server_error', message: 'The server had an error while processing your request.', param: null },
  },
  // The Responses API's own end of a failed response: its error, and the tokens it had spent.
  'responses failed': {
    wire: 'responses',
    turn: { id: 'resp_1', model: 'gpt-4o-2024-08-06', text: 'Hello there friend, how are you today?', usage: { input: 40, output: 9 } },
    error: {
      type: 'response.failed',
      sequence_number: 99,
      response: { id: 'resp_1', object: 'response', status: 'failed', model: 'gpt-4o-2024-08-06', error: { code: 'server_error', message: 'The model failed to generate a response.' }, incomplete_details: null, usage: { input_tokens: 40, output_tokens: 5 } },
    },
    spent: { prompt_tokens: 40, completion_tokens: 5 },
  },
} satisfies Record<string, { wire: Wire; turn: Turn; error: Record<string, unknown>; spent?: Record<string, number> }>;

/** The message of the error event the fake server sent on `wire`. */
const sentMessage = (wire: keyof typeof WIRES): string => {
  const error = WIRES[wire].error as { message?: string; error?: { message: string }; response?: { error: { message: string } } };
  return error.error?.message ?? error.response?.error.message ?? error.message!;
};

describe.each(AI_SDK_PROVIDERS.map((packages) => [packages.major, packages] as const))('an error event mid-stream (%s)', (_major, packages) => {
  const modelOf = (wire: Wire, fake: FakeProvider) =>
    wire === 'anthropic'
      ? packages.anthropic({ apiKey: 'test-key', fetch: fake.fetch as typeof globalThis.fetch })('claude-sonnet-4-5')
      : packages.openai({ apiKey: 'test-key', fetch: fake.fetch as typeof globalThis.fetch })('gpt-4o');

  for (const wire of Object.keys(WIRES) as Array<keyof typeof WIRES>) {
    it(`${wire}, no streamRetries: the call fails with the error event onError got, with the text that came`, async () => {
      const fake = new FakeProvider().reply(WIRES[wire].wire, WIRES[wire].turn, { stream: true, cut: WIRES[wire].error });
      const recorded = recordedPlugin(`ai-stream-error-${wire}`);
      uninstall = instrumentAiSdk(recorded.hooks);
      const errors: Error[] = [];
      const result = streamText({ model: modelOf(WIRES[wire].wire, fake), prompt: 'Say hello.', onError: ({ error }) => void errors.push(error as Error) });
      await result.consumeStream();
      const [step] = await result.steps;
      expect(step!.finishReason).toBe('error');
      expect(step!.text).not.toBe('');
      expect(errors).toHaveLength(1);
      // The program was told the message the server sent in its error event.
      expect(errors[0]!.message).toBe(sentMessage(wire));
      const { atif, atof, counters } = await recorded.finish();
      expectNothingLost(counters);
      expectFailedWithText(wire, { log: recorded.log, atif, atof }, errors[0]!, step!.text);
      await sameOnNative(recorded);
    });
  }

  // The model wrapped with aiSdkMiddleware alone: the middleware reads the same stream, and records its error event by
  // the same rule.
  for (const wire of Object.keys(WIRES) as Array<keyof typeof WIRES>) {
    it(`${wire}, aiSdkMiddleware alone, no streamRetries: the call fails with the error event onError got, with the text that came`, async () => {
      const fake = new FakeProvider().reply(WIRES[wire].wire, WIRES[wire].turn, { stream: true, cut: WIRES[wire].error });
      const recorded = recordedPlugin(`ai-mw-stream-error-${wire}`);
      const model = wrapLanguageModel({ model: modelOf(WIRES[wire].wire, fake), middleware: aiSdkMiddleware(recorded.hooks, { sessionId: `mw-stream-error-${wire}` }) });
      const errors: Error[] = [];
      const result = streamText({ model, prompt: 'Say hello.', onError: ({ error }) => void errors.push(error as Error) });
      await result.consumeStream();
      const [step] = await result.steps;
      expect(step!.text).not.toBe('');
      expect(errors.map((error) => error.message)).toEqual([sentMessage(wire)]);
      const { atif, atof, counters } = await recorded.finish();
      expectNothingLost(counters);
      expectFailedWithText(wire, { log: recorded.log, atif, atof }, errors[0]!, step!.text);
      await sameOnNative(recorded);
    });
  }

  it('anthropic under streamRetries: the broken attempt is a failed attempt of the call the SDK retried, the retry its answer', async () => {
    const fake = new FakeProvider()
      .reply('anthropic', WIRES.anthropic.turn, { stream: true, cut: WIRES.anthropic.error })
      .reply('anthropic', { ...WIRES.anthropic.turn, id: 'msg_2', text: 'Hello!' }, { stream: true });
    const recorded = recordedPlugin('ai-stream-error-retried');
    uninstall = instrumentAiSdk(recorded.hooks);
    const result = streamText({ model: modelOf('anthropic', fake), prompt: 'Say hello.', streamRetries: 1, onError: () => {} } as Parameters<typeof streamText>[0]);
    await result.consumeStream();
    expect(await result.text).toBe('Hello!');
    const attempts = recorded.log.filter((entry) => ['pre_api_request', 'post_api_request', 'api_request_error'].includes(entry.hook));
    expect(attempts.map((entry) => [entry.hook, entry.payload.retry_count, (entry.payload.error as { message?: string } | undefined)?.message])).toEqual([
      ['pre_api_request', 0, undefined],
      // The error the server sent, not only that the SDK retried.
      ['api_request_error', 0, sentMessage('anthropic')],
      ['pre_api_request', 1, undefined],
      ['post_api_request', undefined, undefined],
    ]);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect((atif[0]!.steps as Step[]).filter((s) => s.source === 'agent').map((s) => s.message)).toContain('Hello!');
  });
});

/**
 * What a call the provider's error event ended is recorded as: one `api_request_error` with the error as the program's
 * `onError` got it (`told`) and the text that came (`text`) as its answer; the ATOF LLM span ends failed with both; the
 * ATIF agent step shows the text, the call failed with the error, and the tokens the failed response says it spent.
 */
function expectFailedWithText(wire: keyof typeof WIRES, recorded: { log: Array<{ hook: string; payload: Record<string, unknown> }>; atif: AtifDoc[]; atof: AtofEvent[] }, error: Error, text: string): void {
  const told = { type: error.name, message: error.message };
  const ends = recorded.log.filter((entry) => entry.hook === 'post_api_request' || entry.hook === 'api_request_error');
  expect(ends.map((entry) => [entry.hook, entry.payload.error, (entry.payload.response as Step | undefined)?.assistant_message])).toEqual([['api_request_error', told, { role: 'assistant', content: text }]]);
  // The files' error is the hook's, with the status the hook gave beside it (the SDK's error names the HTTP status).
  const status = ends[0]!.payload.status_code;
  const written = typeof status === 'number' ? { ...told, status_code: status } : told;
  const llmEnd = recorded.atof.find((event) => event.category === 'llm' && event.scope_category === 'end')!;
  expect(llmEnd.metadata['error.type']).toBe(told.type);
  expect(llmEnd.data).toMatchObject({ assistant_message: { content: text }, error: written, model: WIRES[wire].turn.model });
  const answered = (recorded.atif[0]!.steps as Step[]).filter((s) => s.source === 'agent');
  expect(answered.map((s) => [s.message, s.model_name, s.extra.invocation.status, s.extra.llm_response.error])).toEqual([[text, WIRES[wire].turn.model, 'failed', written]]);
  const spent = (WIRES[wire] as { spent?: Record<string, number> }).spent;
  if (spent !== undefined) expect(answered[0]!.metrics).toMatchObject(spent);
}
