// Gemini through the AI SDK, as its docs write the programs: a
// `generateText`/`streamText` tool loop (`stopWhen`), `streamObject`, and
// single calls that end on `MAX_TOKENS` or `SAFETY`, on the real
// `@ai-sdk/google` of each major (test/support/ai-sdk-providers.ts) over a
// fake fetch speaking Gemini's JSON and SSE (`generateContent`,
// `streamGenerateContent?alt=sse`): thoughts and their `thoughtsTokenCount`,
// `cachedContentTokenCount`, `modelVersion`, a 429 `RESOURCE_EXHAUSTED`
// retried under `maxRetries`, streams broken mid-way (Gemini's error event,
// rerun under `streamRetries` or not; a connection reset). Each trajectory,
// and the OTLP gen_ai spans of one run, is held to what the SDK itself
// returned; one run goes through native too.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateText, stepCountIs, streamObject, streamText, tool, type LanguageModel } from 'ai';
import * as z from 'zod';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { AI_SDK_PROVIDERS, type ProviderPackages } from '../../support/ai-sdk-providers.ts';
import { createMemoryRelay } from '../../../src/backends/memory/index.ts';
import { silentLogger } from '../../../src/shared/logger.ts';
import { startHttpReceiver, type Receiver } from '../../support/otlp-receiver.ts';
import { replayWithOtlp } from '../../support/otlp-replay.ts';
import type { HookLine } from '../../fixtures/streams/script.ts';
import { backends, expectNothingLost, expectRetriedFirstCall, recordedPlugin, type Recorded } from '../support.ts';
import { FakeProvider, type Turn } from './wire.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

type Steps = Array<Record<string, any>>;
type Usage = { inputTokens?: number; outputTokens?: number; inputTokenDetails: { cacheReadTokens?: number }; outputTokenDetails: { reasoningTokens?: number } };

const MODEL = 'gemini-2.5-flash';
/** What the API reports as `modelVersion`; the Google provider does not pass it on (docs/adapters/ai-sdk.md). */
const VERSION = 'gemini-2.5-flash-preview-05-20';

function gemini(packages: ProviderPackages, fake: FakeProvider): LanguageModel {
  return packages.google({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch })(MODEL);
}

const weather = tool({
  description: 'Get the weather for a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, forecast: city === 'Paris' ? 'sunny' : 'rain', tempC: city === 'Paris' ? 21 : 14 }),
});

/** Three model turns: thoughts and a call, thoughts and two calls, the answer read partly from the cache. */
const LOOP: Turn[] = [
  {
    id: 'gem-resp-1',
    model: VERSION,
    reasoning: 'The user wants two cities; start with Paris.',
    text: 'Checking Paris first.',
    toolCalls: [{ id: '', name: 'weather', args: { city: 'Paris' } }],
    usage: { input: 120, output: 14, reasoning: 40 },
  },
  {
    id: 'gem-resp-2',
    model: VERSION,
    reasoning: 'Now London, and Paris again to compare.',
    toolCalls: [
      { id: '', name: 'weather', args: { city: 'London' } },
      { id: '', name: 'weather', args: { city: 'Paris' } },
    ],
    usage: { input: 190, cached: 96, output: 20, reasoning: 25 },
  },
  { id: 'gem-resp-3', model: VERSION, text: 'Paris is sunny at 21°C; London has rain at 14°C.', usage: { input: 260, cached: 160, output: 17 } },
];

function checkTokens(answered: Steps, stepUsage: Usage[], totalUsage: Usage, doc: Record<string, any>): void {
  expect(answered.map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens, step.metrics.cached_tokens ?? 0])).toEqual(
    stepUsage.map((usage) => [usage.inputTokens, usage.outputTokens, usage.inputTokenDetails.cacheReadTokens ?? 0]),
  );
  expect(doc.final_metrics.total_prompt_tokens).toBe(totalUsage.inputTokens);
  expect(doc.final_metrics.total_completion_tokens).toBe(totalUsage.outputTokens);
  expect(doc.final_metrics.total_cached_tokens ?? 0).toBe(totalUsage.inputTokenDetails.cacheReadTokens ?? 0);
}

/** The `post_api_request` payloads of a run, in order. */
function answers(recorded: Recorded): Array<Record<string, any>> {
  return recorded.log.filter((entry) => entry.hook === 'post_api_request').map((entry) => entry.payload);
}

describe.each(AI_SDK_PROVIDERS.map((packages) => [packages.major, packages] as const))('Gemini through instrumentAiSdk (@ai-sdk/google %s)', (major, packages) => {
  for (const mode of ['generate', 'stream'] as const) {
    const onNative = mode === 'stream' && major === '4.x' && backends().includes('native');
    for (const backend of onNative ? (['memory', 'native'] as const) : (['memory'] as const)) {
      it(`${mode}Text tool loop: thoughts, three calls, a 429 retried, finish reasons and the SDK's token totals (${backend})`, async () => {
        const fake = new FakeProvider();
        fake.fail('gemini', 429, 'Resource has been exhausted (e.g. check quota).');
        for (const turn of LOOP) fake.reply('gemini', turn, { stream: mode === 'stream' });
        const recorded = recordedPlugin(`ai-gemini-loop-${mode}`, backend);
        uninstall = instrumentAiSdk(recorded.hooks, { sessionId: `gemini-${mode}` });
        const options = {
          model: gemini(packages, fake),
          system: 'You are a weather assistant.',
          prompt: 'Compare the weather in Paris and London.',
          tools: { weather },
          stopWhen: stepCountIs(5),
          maxRetries: 1,
        };
        let text: string;
        let steps: Array<{ text: string; reasoningText?: string; finishReason: string; usage: Usage; toolCalls: Array<{ toolCallId: string; input: unknown }>; response: { modelId: string; id: string }; providerMetadata?: any }>;
        let totalUsage: Usage;
        if (mode === 'generate') {
          const result = await generateText(options);
          ({ text, steps, totalUsage } = result as any);
        } else {
          const result = streamText(options);
          for await (const _part of result.fullStream) {
            // drained, as a UI would
          }
          text = await result.text;
          steps = (await result.steps) as any;
          totalUsage = (await result.totalUsage) as any;
        }
        expect(text).toBe('Paris is sunny at 21°C; London has rain at 14°C.');
        expect(fake.requests.map((request) => new URL(request.url).pathname.split(':').at(-1))).toEqual(Array(4).fill(mode === 'stream' ? 'streamGenerateContent' : 'generateContent'));
        expect(steps).toHaveLength(3);
        const { atif, counters } = await recorded.finish();
        expectNothingLost(counters);
        expect(atif).toHaveLength(1);
        const doc = atif[0]!;
        expect(validateAtif(doc)).toEqual([]);
        const all = doc.steps as Steps;
        expect(all[0]).toMatchObject({ source: 'user', message: 'Compare the weather in Paris and London.' });
        const answered = all.filter((step) => step.source === 'agent' && step.metrics !== undefined);
        expect(answered).toHaveLength(3);

        // Text, thoughts, tool calls under the ids the SDK gave them, and their results.
        expect(answered.map((step) => step.message)).toEqual(steps.map((step) => step.text));
        expect(answered.map((step) => step.reasoning_content ?? null)).toEqual(steps.map((step) => step.reasoningText ?? null));
        expect(answered[0]!.reasoning_content).toBe('The user wants two cities; start with Paris.');
        for (const [index, step] of steps.entries()) {
          const ids = step.toolCalls.map((call) => call.toolCallId);
          expect((answered[index]!.tool_calls ?? []).map((call: any) => [call.tool_call_id, call.arguments])).toEqual(step.toolCalls.map((call) => [call.toolCallId, call.input]));
          expect((answered[index]!.observation?.results ?? []).map((result: any) => result.source_call_id)).toEqual(ids);
        }
        const results = answered[1]!.observation.results.map((result: any) => JSON.parse(result.content));
        expect(results).toEqual([
          { city: 'London', forecast: 'rain', tempC: 14 },
          { city: 'Paris', forecast: 'sunny', tempC: 21 },
        ]);

        // The model the SDK reports for each step (the one asked for: @ai-sdk/google drops modelVersion); the response ids Gemini sent.
        expect(answered.map((step) => step.model_name)).toEqual(steps.map((step) => step.response.modelId));
        expect(answered.map((step) => step.model_name)).toEqual([MODEL, MODEL, MODEL]);
        const posts = answers(recorded);
        expect(posts.map((post) => post.response.id)).toEqual(['gem-resp-1', 'gem-resp-2', 'gem-resp-3']);
        // The SDK's reasons in the adapters' one spelling (Chat Completions'): its `tool-calls` is `tool_calls`.
        expect(steps.map((step) => step.finishReason)).toEqual(['tool-calls', 'tool-calls', 'stop']);
        expect(posts.map((post) => post.finish_reason)).toEqual(['tool_calls', 'tool_calls', 'stop']);

        // Tokens, per step and in total, as the SDK counts them (thoughts are output); the thoughts as reasoning tokens.
        checkTokens(answered, steps.map((step) => step.usage), totalUsage, doc);
        expect(totalUsage.outputTokens).toBe(14 + 40 + 20 + 25 + 17);
        expect(posts.map((post) => post.usage.completion_tokens_details?.reasoning_tokens)).toEqual(steps.map((step) => step.usage.outputTokenDetails.reasoningTokens));
        expect(steps.map((step) => step.providerMetadata?.google?.usageMetadata?.thoughtsTokenCount ?? undefined)).toEqual([40, 25, undefined]);

        // The 429: one api_request_id for both attempts, the failure with its status.
        const attempts = expectRetriedFirstCall(recorded.log);
        expect(attempts[1]!.payload).toMatchObject({ status_code: 429, retryable: true });
        expect((attempts[1]!.payload.error as any).message).toContain('Resource has been exhausted');
      });
    }
  }
});

const OVERLOADED = { error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } };

describe.each(AI_SDK_PROVIDERS.map((packages) => [packages.major, packages] as const))('Gemini streams that fail (@ai-sdk/google %s)', (major, packages) => {
  it('an error frame mid-stream under streamRetries: the given-up attempt is a retryable error, its retry the same call', async () => {
    // Step 1 calls the tool; step 2's stream sends half its text and then Gemini's error frame; the SDK reruns step 2.
    const fake = new FakeProvider();
    fake.reply('gemini', LOOP[0]!, { stream: true });
    fake.reply('gemini', LOOP[2]!, { stream: true, cut: OVERLOADED });
    fake.reply('gemini', { ...LOOP[2]!, id: 'gem-resp-3b' }, { stream: true });
    const recorded = recordedPlugin(`ai-gemini-stream-retry-${major}`);
    uninstall = instrumentAiSdk(recorded.hooks, { sessionId: 'gemini-stream-retry' });
    const errors: unknown[] = [];
    const result = streamText({
      model: gemini(packages, fake),
      prompt: 'Weather in Paris?',
      tools: { weather },
      stopWhen: stepCountIs(4),
      streamRetries: 1,
      onError: ({ error }) => void errors.push(error),
    });
    await result.consumeStream();
    const steps = await result.steps;
    expect(await result.text).toBe(LOOP[2]!.text);
    expect(fake.requests).toHaveLength(3);
    expect(errors.map((error) => (error as Error).message)).toEqual([OVERLOADED.error.message]);

    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    const all = doc.steps as Steps;
    expect(all.filter((step) => step.source === 'user').map((step) => step.message)).toEqual(['Weather in Paris?']);
    const answered = all.filter((step) => step.source === 'agent' && step.metrics !== undefined);
    expect(answered.map((step) => step.message)).toEqual(steps.map((step) => step.text));
    checkTokens(answered, steps.map((step) => step.usage as Usage), (await result.totalUsage) as Usage, doc);

    // Step 2: the attempt the SDK gave up and its retry share one api_request_id.
    const attempts = recorded.log.filter((entry) => ['pre_api_request', 'api_request_error', 'post_api_request'].includes(entry.hook));
    const second = attempts[2]!.payload.api_request_id;
    expect(second).not.toBe(attempts[0]!.payload.api_request_id);
    expect(attempts.map((entry) => [entry.hook, entry.payload.api_request_id === second ? 'step 2' : 'step 1', entry.payload.retry_count])).toEqual([
      ['pre_api_request', 'step 1', 0],
      ['post_api_request', 'step 1', undefined],
      ['pre_api_request', 'step 2', 0],
      ['api_request_error', 'step 2', 0],
      ['pre_api_request', 'step 2', 1],
      ['post_api_request', 'step 2', undefined],
    ]);
    // The attempt failed with the error the program's onError got (Gemini's frame: its message and 503), retryable
    // (the SDK retried it), with the text it had streamed.
    const told = errors[0] as Error & { statusCode?: number };
    expect(attempts[3]!.payload).toMatchObject({ retryable: true, status_code: told.statusCode, error: { type: told.name, message: OVERLOADED.error.message } });
    expect(told.statusCode).toBe(OVERLOADED.error.code);
    expect((attempts[3]!.payload.response as Steps[number]).assistant_message.content).not.toBe('');
    expect(LOOP[2]!.text!.startsWith((attempts[3]!.payload.response as Steps[number]).assistant_message.content)).toBe(true);
    expect(answers(recorded).map((post) => post.response.id)).toEqual(['gem-resp-1', 'gem-resp-3b']);
  });

  it('an error frame mid-stream without streamRetries: the call fails with the error onError got, with the text that came and its tokens', async () => {
    const fake = new FakeProvider();
    fake.reply('gemini', LOOP[2]!, { stream: true, cut: OVERLOADED });
    const recorded = recordedPlugin(`ai-gemini-stream-error-${major}`);
    uninstall = instrumentAiSdk(recorded.hooks);
    const errors: Error[] = [];
    const result = streamText({ model: gemini(packages, fake), prompt: 'Weather in Paris?', onError: ({ error }) => void errors.push(error as Error) });
    await result.consumeStream();
    const [step] = await result.steps;
    expect(step!.finishReason).toBe('error');
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const answered = (atif[0]!.steps as Steps).filter((s) => s.source === 'agent');
    expect(answered.map((s) => [s.message, s.metrics?.prompt_tokens, s.metrics?.completion_tokens])).toEqual([[step!.text, step!.usage.inputTokens, step!.usage.outputTokens]]);
    expect(step!.text).not.toBe('');
    expect(answers(recorded)).toEqual([]);
    const refusals = recorded.log.filter((entry) => entry.hook === 'api_request_error');
    const failed = refusals.map((entry) => [entry.payload.error, (entry.payload.response as Steps[number]).finish_reason]);
    expect(failed).toEqual([[{ type: errors[0]!.name, message: OVERLOADED.error.message }, 'error']]);
    // The step's error is the hook's, with the status the hook gave beside it.
    const status = refusals[0]!.payload.status_code;
    expect(answered.map((s) => [s.extra.invocation.status, s.extra.llm_response.error])).toEqual([['failed', typeof status === 'number' ? { ...(failed[0]![0] as object), status_code: status } : failed[0]![0]]]);
  });

  it('a connection reset mid-stream: the call and the run fail, with the SDK\'s error', async () => {
    const fake = new FakeProvider();
    fake.reply('gemini', LOOP[2]!, { stream: true, cut: 'reset' });
    const recorded = recordedPlugin(`ai-gemini-stream-reset-${major}`);
    uninstall = instrumentAiSdk(recorded.hooks);
    const errors: unknown[] = [];
    const result = streamText({ model: gemini(packages, fake), prompt: 'Weather in Paris?' });
    // The broken body fails the stream the program reads.
    try {
      for await (const _part of result.fullStream) {
        // read, as a UI would
      }
    } catch (error) {
      errors.push(error);
    }
    expect(errors).toHaveLength(1);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(validateAtif(atif[0]!)).toEqual([]);
    const failed = recorded.log.filter((entry) => entry.hook === 'api_request_error');
    expect(failed.map((entry) => (entry.payload.error as any).message)).toEqual([(errors[0] as Error).message]);
    expect(recorded.log.find((entry) => entry.hook === 'on_session_end')!.payload).toMatchObject({ failed: true, error_message: (errors[0] as Error).message });
  });
});

describe.each(AI_SDK_PROVIDERS.map((packages) => [packages.major, packages] as const))('Gemini answers that stop early, and objects (@ai-sdk/google %s)', (major, packages) => {
  for (const mode of ['generate', 'stream'] as const) {
    for (const [finish, turn] of [
      ['MAX_TOKENS', { id: 'gem-max', model: VERSION, reasoning: 'Long thoughts.', text: 'The weather in Paris is', usage: { input: 30, cached: 8, output: 6, reasoning: 64 } }],
      // A blocked answer has no content: no text, only the finish reason and the counts.
      ['SAFETY', { id: 'gem-safety', model: VERSION, usage: { input: 30, output: 0 } }],
    ] as const) {
      it(`${mode}Text ending on ${finish}: the SDK's finish reason, text and counts`, async () => {
        const fake = new FakeProvider();
        fake.reply('gemini', { ...turn, finish }, { stream: mode === 'stream' });
        const recorded = recordedPlugin(`ai-gemini-${finish}-${mode}-${major}`);
        uninstall = instrumentAiSdk(recorded.hooks);
        const options = { model: gemini(packages, fake), prompt: 'Weather in Paris?', maxOutputTokens: 70 };
        let step: { text: string; finishReason: string; usage: Usage; reasoningText?: string };
        if (mode === 'generate') step = (await generateText(options)).steps[0] as any;
        else {
          const result = streamText(options);
          await result.consumeStream();
          step = (await result.steps)[0] as any;
        }
        expect(step.finishReason).toBe(finish === 'SAFETY' ? 'content-filter' : 'length');
        const { atif, counters } = await recorded.finish();
        expectNothingLost(counters);
        const doc = atif[0]!;
        expect(validateAtif(doc)).toEqual([]);
        const answered = (doc.steps as Steps).filter((s) => s.source === 'agent');
        expect(answered.map((s) => [s.message, s.reasoning_content ?? undefined])).toEqual([[step.text, step.reasoningText]]);
        checkTokens(answered, [step.usage], step.usage, doc);
        const [post] = answers(recorded);
        expect(post!.finish_reason).toBe(finish === 'SAFETY' ? 'content_filter' : 'length');
        expect(post!.response.id).toBe(turn.id);
        expect(recorded.log.find((entry) => entry.hook === 'on_session_end')!.payload).toMatchObject({ completed: true });
      });
    }
  }

  it('streamObject: the object\'s JSON is the answer, with the SDK\'s counts (thoughts too)', async () => {
    const fake = new FakeProvider();
    fake.reply('gemini', { id: 'gem-object', model: VERSION, reasoning: 'Paris, mild.', text: '{"city":"Paris","tempC":21}', usage: { input: 44, cached: 12, output: 9, reasoning: 18 } }, { stream: true });
    const recorded = recordedPlugin(`ai-gemini-object-${major}`);
    uninstall = instrumentAiSdk(recorded.hooks);
    const result = streamObject({ model: gemini(packages, fake), schema: z.object({ city: z.string(), tempC: z.number() }), prompt: 'Weather in Paris as JSON.' });
    for await (const _partial of result.partialObjectStream) {
      // drained, as a UI would
    }
    const object = await result.object;
    const usage = (await result.usage) as Usage;
    expect(object).toEqual({ city: 'Paris', tempC: 21 });
    expect(fake.requests[0]!.body.generationConfig.responseMimeType).toBe('application/json');
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    const answered = (doc.steps as Steps).filter((s) => s.source === 'agent');
    expect(answered.map((s) => JSON.parse(s.message))).toEqual([object]);
    checkTokens(answered, [usage], usage, doc);
    expect(usage.outputTokens).toBe(9 + 18);
    expect(answers(recorded)[0]!.usage.completion_tokens_details).toEqual({ reasoning_tokens: usage.outputTokenDetails.reasoningTokens });
  });
});

describe('Gemini through instrumentAiSdk, as OTLP gen_ai spans', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startHttpReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
  });

  // On the memory relay: native leaves out the id, finish reason and counts of an adapter's answer and sends a failed
  // call's span as OK (both on purpose, docs/known-limits.md and test/export/otlp-native-parity.test.ts).
  it('the tool loop with a stream retried: a span per attempt, with the SDK\'s counts, finish reasons and Gemini\'s response ids', async () => {
    const packages = AI_SDK_PROVIDERS[0]!;
    const fake = new FakeProvider();
    fake.reply('gemini', LOOP[0]!, { stream: true });
    fake.reply('gemini', LOOP[1]!, { stream: true, cut: OVERLOADED });
    fake.reply('gemini', LOOP[1]!, { stream: true });
    fake.reply('gemini', LOOP[2]!, { stream: true });
    const recorded = recordedPlugin('ai-gemini-otlp');
    uninstall = instrumentAiSdk(recorded.hooks, { sessionId: 'gemini-otlp' });
    const result = streamText({ model: gemini(packages, fake), system: 'You are a weather assistant.', prompt: 'Compare the weather in Paris and London.', tools: { weather }, stopWhen: stepCountIs(5), streamRetries: 1, onError: () => {} });
    await result.consumeStream();
    const steps = await result.steps;
    uninstall();
    uninstall = undefined;
    expectNothingLost((await recorded.finish()).counters);

    receiver.requests.length = 0;
    const replayed = await replayWithOtlp(createMemoryRelay({ logger: silentLogger }), recorded.log as HookLine[], { endpoints: [{ type: 'gen_ai', endpoint: receiver.url }], localFiles: false });
    expect(replayed.problems).toEqual([]);
    const chats = receiver
      .spans()
      .filter((span) => span.attributes['gen_ai.operation.name'] === 'chat')
      .sort((a, b) => (BigInt(a.startTimeUnixNano) < BigInt(b.startTimeUnixNano) ? -1 : 1));
    const answered = chats.filter((span) => span.status.code !== 2);
    expect(chats.map((span) => span.status.code)).toEqual([1, 2, 1, 1]);
    expect(answered.map((span) => span.attributes['gen_ai.response.id'])).toEqual(['gem-resp-1', 'gem-resp-2', 'gem-resp-3']);
    // The conventions' terms: a tool call is `tool_call`, whatever the SDK or the provider spelled it.
    expect(answered.map((span) => span.attributes['gen_ai.response.finish_reasons'])).toEqual(steps.map((step) => [step.finishReason === 'tool-calls' ? 'tool_call' : step.finishReason]));
    expect(answered.map((span) => [span.attributes['gen_ai.usage.input_tokens'], span.attributes['gen_ai.usage.output_tokens'], span.attributes['gen_ai.usage.cache_read.input_tokens']])).toEqual(
      steps.map((step) => [step.usage.inputTokens, step.usage.outputTokens, step.usage.inputTokenDetails.cacheReadTokens]),
    );
    expect(new Set(chats.map((span) => [span.attributes['gen_ai.request.model'], span.attributes['gen_ai.provider.name']].join(' ')))).toEqual(new Set([`${MODEL} google.generative-ai`]));
  });
});
