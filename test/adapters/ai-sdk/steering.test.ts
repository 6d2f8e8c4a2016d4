// A steering message sent with `interrupt: true` while the model has not
// answered yet (ai 7.0.177 and later; the AI SDK's loop-control docs,
// "Interrupting the Current Model Call"): the SDK cancels the model call and
// makes it again in the same step, with the message. The program is the
// docs' `generateText`/`streamText` with `experimental_createSteering()`, on the real
// OpenAI provider (Responses) over a fake fetch. The model has produced
// nothing when the user steers: either no answer has come (the fetch fails
// with the abort) or the stream is open with only its head frames. Either
// way the cancelled call ends as a failed call that says why (not as a
// stream error the SDK retried), and the call made again is a new request,
// not its retry: it carries the message.
import { afterEach, describe, expect, it } from 'vitest';
import { experimental_createSteering, generateText, isStepCount, streamText, tool } from 'ai';
import * as z from 'zod';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { AI_SDK_PROVIDERS } from '../../support/ai-sdk-providers.ts';
import { expectNothingLost, recordedPlugin } from '../support.ts';
import { FakeProvider } from './wire.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

const MODEL = 'gpt-4o-mini-2024-07-18';
const STEER = 'I meant Paris, Texas.';

const cases = [
  { mode: 'generate', stall: 'request', cancelled: 'AbortError' },
  { mode: 'stream', stall: 'request', cancelled: 'AbortError' },
  { mode: 'stream', stall: 'head', cancelled: 'SteeringInterrupted' },
] as const;

describe.each(AI_SDK_PROVIDERS.map((packages) => [packages.major, packages] as const))('a steering message that interrupts the model call (%s)', (_major, packages) => {
  // @ai-sdk/openai 3.x holds a stream back until the model's first output (4.x gives it to the SDK once the response
  // is in progress), so there the user can only interrupt before the answer comes.
  for (const { mode, stall, cancelled } of cases.filter((entry) => entry.stall === 'request' || packages.major === '4.x')) {
    it(`${mode}, ${stall === 'request' ? 'before the answer comes' : 'with the stream open'}: the cancelled call fails as ${cancelled}, the call made again is a new request with the message`, async () => {
      const fake = new FakeProvider();
      const stream = mode === 'stream';
      fake.reply('responses', { id: 'resp_cancelled', model: MODEL, text: 'Paris, France is sunny.', usage: { input: 30, output: 6 } }, { stream, stall });
      fake.reply('responses', { id: 'resp_1', model: MODEL, toolCalls: [{ id: 'call_w', name: 'weather', args: { city: 'Paris, Texas' } }], usage: { input: 42, output: 9 } }, { stream });
      fake.reply('responses', { id: 'resp_2', model: MODEL, text: 'It is hot in Paris, Texas.', usage: { input: 60, output: 8 } }, { stream });
      // The user steers once the first request is out (stall 'request'), or once the stream the program reads shows
      // the response has begun (stall 'head': its first raw frame, with the model's output still to come).
      let ready!: () => void;
      const first = new Promise<void>((resolve) => (ready = resolve));
      const fetch = async (input: unknown, init?: { body?: unknown; signal?: AbortSignal | null }): Promise<Response> => {
        if (fake.requests.length === 0 && stall === 'request') queueMicrotask(ready);
        return await fake.fetch(input, init);
      };
      const recorded = recordedPlugin(`ai-steer-${mode}-${stall}`);
      uninstall = instrumentAiSdk(recorded.hooks);
      const options = {
        model: packages.openai({ apiKey: 'test-key', fetch: fetch as typeof globalThis.fetch })('gpt-4o-mini'),
        tools: { weather: tool({ description: 'weather', inputSchema: z.object({ city: z.string() }), execute: async ({ city }: { city: string }) => `${city}: 38°C` }) },
        stopWhen: isStepCount(4),
        prompt: 'What is the weather in Paris?',
      };
      const steering = experimental_createSteering();
      let text: PromiseLike<string>;
      if (mode === 'generate') {
        text = generateText({ ...options, experimental_steering: steering }).then((result) => result.text);
      } else {
        const result = streamText({ ...options, experimental_steering: steering, includeRawChunks: true });
        text = (async () => {
          for await (const part of result.fullStream) if (part.type === 'raw') ready();
          return await result.text;
        })();
      }
      await first;
      const outcome = await steering.steer(STEER, { interrupt: true });
      expect(await text).toBe('It is hot in Paris, Texas.');
      expect(outcome).toMatchObject({ type: 'delivered', stepNumber: 0 });
      expect(fake.requests).toHaveLength(3);
      expect(JSON.stringify(fake.requests[0]!.body.input)).not.toContain(STEER);
      expect(JSON.stringify(fake.requests[1]!.body.input)).toContain(STEER);

      const calls = recorded.log.filter((entry) => ['pre_api_request', 'api_request_error', 'post_api_request'].includes(entry.hook));
      const ids = [...new Set(calls.map((entry) => entry.payload.api_request_id))];
      expect(ids).toHaveLength(3);
      expect(calls.map((entry) => [ids.indexOf(entry.payload.api_request_id), entry.hook, entry.payload.retry_count ?? null])).toEqual([
        [0, 'pre_api_request', 0],
        [0, 'api_request_error', 0],
        [1, 'pre_api_request', 0],
        [1, 'post_api_request', null],
        [2, 'pre_api_request', 0],
        [2, 'post_api_request', null],
      ]);
      const error = calls[1]!.payload;
      expect(error).toMatchObject({ error: { type: cancelled } });
      if (cancelled === 'SteeringInterrupted') {
        expect(error.retryable).toBe(false);
        expect((error.error as { message: string }).message).toContain('steering message');
      }
      // The call made again is the request with the message, as the provider got it.
      const redo = calls[2]!.payload.request as { body: { messages: Array<{ role: string; content: unknown }> } };
      expect(redo.body.messages.map((message) => message.role)).toEqual(['user', 'user']);
      expect(JSON.stringify(redo.body.messages[1]!.content)).toContain(STEER);
      const turnEnd = recorded.log.filter((entry) => entry.hook === 'on_session_end').map((entry) => [entry.payload.interrupted, entry.payload.failed, entry.payload.turn_exit_reason]);
      expect(turnEnd).toEqual([[false, false, 'final_response']]);

      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expect(atif).toHaveLength(1);
      expect(validateAtif(atif[0]!)).toEqual([]);
      const steps = atif[0]!.steps as Array<Record<string, any>>;
      expect(steps.map((step) => [step.source, step.extra?.invocation?.status ?? null])).toEqual([
        ['user', null],
        ['agent', 'failed'],
        ['user', null],
        ['agent', 'completed'],
        ['agent', 'completed'],
      ]);
      expect(steps[1]!.extra.llm_response.error.type).toBe(cancelled);
      // The steering message is the user's, in the trajectory where the model got it.
      expect(steps[2]!.message).toBe(STEER);
      expect(steps[3]!.tool_calls.map((call: Record<string, any>) => [call.tool_call_id, call.arguments])).toEqual([['call_w', { city: 'Paris, Texas' }]]);
      expect(steps[4]!.message).toBe('It is hot in Paris, Texas.');
      // The cancelled call has no usage: the totals are the two answered calls'.
      expect(atif[0]!.final_metrics).toMatchObject({ total_prompt_tokens: 102, total_completion_tokens: 17 });
    });
  }
});
