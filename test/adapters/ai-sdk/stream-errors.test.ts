// An error event in the middle of a streamed answer (Anthropic's `overloaded_error`, OpenAI Responses' `error`), as
// a user trial met it on Anthropic's wire: @ai-sdk/anthropic ends such a stream without a finish part, so the SDK
// reports no end of the model call (no onLanguageModelCallEnd), only the step's end with finish reason `error` and
// the text that came. The call was left open and closed at the session's end as never answered
// (`session_closed`), the text lost. It must end as the SDK reports the step, as OpenAI's stream (which does send
// its finish) ends; and under `streamRetries` the broken attempt stays a failed attempt of the call the SDK retried.
import { afterEach, describe, expect, it } from 'vitest';
import { streamText } from 'ai';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { AI_SDK_PROVIDERS } from '../../support/ai-sdk-providers.ts';
import { expectNothingLost, recordedPlugin } from '../support.ts';
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
    turn: { id: 'msg_1', model: 'claude-sonnet-4-5-20250929', text: 'Hello there friend, how are you today?', usage: { input: 40, output: 9 } },
    error: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
  },
  responses: {
    turn: { id: 'resp_1', model: 'gpt-4o-2024-08-06', text: 'Hello there friend, how are you today?', usage: { input: 40, output: 9 } },
    error: { type: 'error', sequence_number: 99, code: 'server_error', message: 'The server had an error while processing your request.', param: null },
  },
} satisfies Record<string, { turn: Turn; error: Record<string, unknown> }>;

describe.each(AI_SDK_PROVIDERS.map((packages) => [packages.major, packages] as const))('an error event mid-stream (%s)', (_major, packages) => {
  const modelOf = (wire: keyof typeof WIRES, fake: FakeProvider) =>
    wire === 'anthropic'
      ? packages.anthropic({ apiKey: 'test-key', fetch: fake.fetch as typeof globalThis.fetch })('claude-sonnet-4-5')
      : packages.openai({ apiKey: 'test-key', fetch: fake.fetch as typeof globalThis.fetch })('gpt-4o');

  for (const wire of Object.keys(WIRES) as Array<keyof typeof WIRES>) {
    it(`${wire}, no streamRetries: the call ends as the SDK reports its step (finish reason error, the text that came)`, async () => {
      const fake = new FakeProvider().reply(wire as Wire, WIRES[wire].turn, { stream: true, cut: WIRES[wire].error });
      const recorded = recordedPlugin(`ai-stream-error-${wire}`);
      uninstall = instrumentAiSdk(recorded.hooks);
      const errors: unknown[] = [];
      const result = streamText({ model: modelOf(wire, fake), prompt: 'Say hello.', onError: ({ error }) => void errors.push(error) });
      await result.consumeStream();
      const [step] = await result.steps;
      expect(step!.finishReason).toBe('error');
      expect(step!.text).not.toBe('');
      expect(errors).toHaveLength(1);
      const ends = recorded.log.filter((entry) => entry.hook === 'post_api_request' || entry.hook === 'api_request_error');
      expect(ends.map((entry) => [entry.hook, entry.payload.finish_reason])).toEqual([['post_api_request', 'error']]);
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      const answered = (atif[0]!.steps as Step[]).filter((s) => s.source === 'agent');
      expect(answered.map((s) => [s.message, s.model_name])).toEqual([[step!.text, WIRES[wire].turn.model]]);
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
    expect(attempts.map((entry) => [entry.hook, entry.payload.retry_count])).toEqual([
      ['pre_api_request', 0],
      ['api_request_error', 0],
      ['pre_api_request', 1],
      ['post_api_request', undefined],
    ]);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect((atif[0]!.steps as Step[]).filter((s) => s.source === 'agent').map((s) => s.message)).toContain('Hello!');
  });
});
