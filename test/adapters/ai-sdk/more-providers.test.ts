// Groq, Mistral, DeepSeek, xAI and Cohere through the AI SDK adapter, each program as its provider's AI SDK docs page
// writes it (`createGroq`, `createMistral`, `createDeepSeek`, `createXai`, `createCohere` with a `fetch`; generateText and streamText with the
// weather tool and `stopWhen`), driving the real provider package over a fake fetch that speaks that provider's own
// wire (wire.ts): Groq's Chat Completions (`reasoning`, the stream's usage in `x_groq.usage`, calls whole), Mistral's
// chat API (Magistral's `thinking` chunks, 9-character call ids, `num_cached_tokens`, `model_length`), DeepSeek's
// (`reasoning_content`, `prompt_cache_hit_tokens`, the usage on the finishing chunk) and xAI's Responses API
// (reasoning summaries, cached and reasoning tokens, what the call cost as `cost_in_usd_ticks`) and Cohere's v2 chat
// (`thinking` content, a `tool_plan` before the calls, `tokens` beside `billed_units`, events named by type). Each trajectory is
// held to what the SDK reported to the program (steps, their usage, `totalUsage`, finish reasons, `response.modelId`,
// the provider's name, reasoning text, tool call ids, the charge in `providerMetadata`) and to the wire; a 429 is the
// refused attempt with its status, retried under the same call.
import { afterEach, describe, expect, it } from 'vitest';
import { createCohere } from '@ai-sdk/cohere';
import { createDeepSeek } from '@ai-sdk/deepseek';
import { createGroq } from '@ai-sdk/groq';
import { createMistral } from '@ai-sdk/mistral';
import { createXai } from '@ai-sdk/xai';
import { APICallError, generateText, stepCountIs, streamText, wrapLanguageModel, type LanguageModel } from 'ai';
import { aiSdkMiddleware, instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { sameOnNative } from '../same-on-native.ts';
import { expectRetriedFirstCall, finishedRun, recordedPlugin, type AtifDoc, type Recorded } from '../support.ts';
import { FakeProvider, type Turn, type Wire } from './wire.ts';
import { weather } from './weather-tool.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

type SdkUsage = { inputTokens?: number; outputTokens?: number; inputTokenDetails: { cacheReadTokens?: number }; outputTokenDetails: { reasoningTokens?: number } };
type SdkStep = {
  text: string;
  reasoningText?: string;
  usage: SdkUsage;
  response: { modelId: string };
  finishReason: string;
  rawFinishReason?: string;
  model: { provider: string; modelId: string };
  toolCalls: Array<{ toolCallId: string; toolName: string }>;
  providerMetadata?: Record<string, Record<string, unknown>>;
};

interface Provider {
  name: string;
  server: NonNullable<Turn['server']> | 'cohere';
  wire: Wire;
  /** The provider name the SDK's steps carry (`step.model.provider`). */
  provider: string;
  /** The URL the package posts to. */
  url: string;
  /** The model the program asks for, and the one the server says answered. */
  model: string;
  answered: string;
  make(fake: FakeProvider): LanguageModel;
  /** The program's `providerOptions`, as the provider's docs turn reasoning on. */
  providerOptions?: Record<string, Record<string, string | { type: string; tokenBudget: number }>>;
  /** The first answer's words before its call, as the SDK's step has them (Cohere's `tool_plan` is not passed on). */
  firstText: string;
  /** What the provider package reads of the usage beyond the counts: the cache reads, the reasoning tokens. */
  reads: { cache: boolean; reasoning: boolean };
  /** Ids of the weather call the model makes (Mistral's are 9 characters). */
  callId: string;
  /** What the provider's answers cost, in USD, as it states it (xAI). */
  cost?: [number, number];
}

const PROVIDERS: Provider[] = [
  {
    name: '@ai-sdk/groq',
    server: 'groq',
    wire: 'chat',
    provider: 'groq.chat',
    url: 'https://api.groq.com/openai/v1/chat/completions',
    model: 'qwen/qwen3-32b',
    answered: 'qwen/qwen3-32b',
    make: (fake) => createGroq({ apiKey: 'gsk-test-not-a-key', fetch: fake.fetch as typeof fetch })('qwen/qwen3-32b'),
    providerOptions: { groq: { reasoningFormat: 'parsed' } },
    firstText: 'Let me look that up.',
    reads: { cache: true, reasoning: true },
    callId: 'call_kx2t9m4q',
  },
  {
    name: '@ai-sdk/mistral',
    server: 'mistral',
    wire: 'chat',
    provider: 'mistral.chat',
    url: 'https://api.mistral.ai/v1/chat/completions',
    model: 'magistral-medium-latest',
    answered: 'magistral-medium-2509',
    make: (fake) => createMistral({ apiKey: 'test-not-a-key', fetch: fake.fetch as typeof fetch })('magistral-medium-latest'),
    firstText: 'Let me look that up.',
    // @ai-sdk/mistral reads the cache (`num_cached_tokens`), not the reasoning tokens.
    reads: { cache: true, reasoning: false },
    callId: 'D681PevKs',
  },
  {
    name: '@ai-sdk/deepseek',
    server: 'deepseek',
    wire: 'chat',
    provider: 'deepseek.chat',
    url: 'https://api.deepseek.com/chat/completions',
    model: 'deepseek-reasoner',
    answered: 'deepseek-reasoner',
    make: (fake) => createDeepSeek({ apiKey: 'sk-test-not-a-key', fetch: fake.fetch as typeof fetch })('deepseek-reasoner'),
    firstText: 'Let me look that up.',
    reads: { cache: true, reasoning: true },
    callId: 'call_00_pG5dx9Rk2Yb1',
  },
  {
    name: '@ai-sdk/xai',
    server: 'xai',
    wire: 'responses',
    provider: 'xai.responses',
    url: 'https://api.x.ai/v1/responses',
    model: 'grok-4',
    answered: 'grok-4-0709',
    make: (fake) => createXai({ apiKey: 'xai-test-not-a-key', fetch: fake.fetch as typeof fetch })('grok-4'),
    firstText: 'Let me look that up.',
    reads: { cache: true, reasoning: true },
    callId: 'call_51938461',
    cost: [0.0018948, 0.0009321],
  },
  {
    name: '@ai-sdk/cohere',
    server: 'cohere',
    wire: 'cohere',
    provider: 'cohere.chat',
    url: 'https://api.cohere.com/v2/chat',
    model: 'command-a-reasoning-08-2025',
    // Cohere's answer names no model: the SDK's step says the one asked for.
    answered: 'command-a-reasoning-08-2025',
    make: (fake) => createCohere({ apiKey: 'co-test-not-a-key', fetch: fake.fetch as typeof fetch })('command-a-reasoning-08-2025'),
    providerOptions: { cohere: { thinking: { type: 'enabled', tokenBudget: 1024 } } },
    // The words before the call are Cohere's `tool_plan`, which @ai-sdk/cohere does not pass on.
    firstText: '',
    // @ai-sdk/cohere reads `tokens` (what the model processed), neither a cache nor reasoning tokens.
    reads: { cache: false, reasoning: false },
    callId: 'weather_4k2x9q7m3n1p',
  },
];

/** The weather program's two answers: reasoning, a line and the call; then the answer, partly read from the cache. */
function turns(p: Provider): [Turn, Turn] {
  const server = p.server === 'cohere' ? undefined : p.server;
  return [
    { server, id: `${p.server}-resp-1`, model: p.answered, reasoning: 'The user wants Paris weather; call the tool.', text: 'Let me look that up.', toolCalls: [{ id: p.callId, name: 'weather', args: { city: 'Paris' } }], usage: { input: 180, output: 64, reasoning: 24 }, cost: p.cost?.[0] },
    { server, id: `${p.server}-resp-2`, model: p.answered, text: 'It is sunny in Paris, 21°C.', usage: { input: 260, cached: 128, output: 15 }, cost: p.cost?.[1] },
  ];
}

const posts = (recorded: Recorded) => recorded.log.filter((e) => e.hook === 'post_api_request').map((e) => e.payload as Record<string, any>);

/** What every run must say, against what the SDK handed the program. */
async function checkRun(p: Provider, fake: FakeProvider, recorded: Recorded, steps: readonly SdkStep[], totalUsage: SdkUsage): Promise<AtifDoc> {
  const { doc, agent } = await finishedRun(recorded);
  expect(fake.requests.map((request) => request.url)).toEqual([p.url, p.url]);
  expect(doc.steps[0]).toMatchObject({ source: 'user', message: 'What is the weather in Paris?' });
  // The texts, reasoning and calls the SDK's steps hold.
  expect(steps.map((step) => step.text)).toEqual([p.firstText, 'It is sunny in Paris, 21°C.']);
  expect(agent.map((step) => step.message)).toEqual(steps.map((step) => step.text));
  expect(steps.map((step) => step.reasoningText)).toEqual(['The user wants Paris weather; call the tool.', undefined]);
  expect(agent.map((step) => step.reasoning_content)).toEqual(steps.map((step) => step.reasoningText));
  expect(steps[0]!.toolCalls.map((call) => call.toolCallId)).toEqual([p.callId]);
  expect(agent[0]!.tool_calls).toEqual([expect.objectContaining({ tool_call_id: p.callId, function_name: 'weather', arguments: { city: 'Paris' } })]);
  expect(agent[0]!.observation.results[0]).toMatchObject({ source_call_id: p.callId });
  expect(JSON.parse(agent[0]!.observation.results[0].content)).toEqual({ city: 'Paris', forecast: 'sunny', tempC: 21 });
  // One LLM call per request, under the provider the SDK names, with the model the server says answered.
  const requests = recorded.log.filter((entry) => entry.hook === 'pre_api_request');
  expect(requests).toHaveLength(fake.requests.length);
  expect(steps.map((step) => step.model.provider)).toEqual([p.provider, p.provider]);
  expect(requests.map((entry) => entry.payload.provider)).toEqual([p.provider, p.provider]);
  expect(steps.map((step) => step.response.modelId)).toEqual([p.answered, p.answered]);
  expect(agent.map((step) => step.model_name)).toEqual(steps.map((step) => step.response.modelId));
  expect(steps.map((step) => step.finishReason)).toEqual(['tool-calls', 'stop']);
  expect(posts(recorded).map((post) => post.finish_reason)).toEqual(['tool_calls', 'stop']);
  // Tokens: the SDK's per step, cache reads and reasoning included, and its totals.
  const usage = steps.map((step) => step.usage);
  expect(agent.map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens, step.metrics.cached_tokens ?? 0])).toEqual(
    usage.map((u) => [u.inputTokens, u.outputTokens, u.inputTokenDetails.cacheReadTokens ?? 0]),
  );
  expect(posts(recorded).map((post) => post.usage.completion_tokens_details?.reasoning_tokens)).toEqual(usage.map((u) => u.outputTokenDetails.reasoningTokens));
  expect([doc.final_metrics.total_prompt_tokens, doc.final_metrics.total_completion_tokens, doc.final_metrics.total_cached_tokens ?? 0]).toEqual([
    totalUsage.inputTokens,
    totalUsage.outputTokens,
    totalUsage.inputTokenDetails.cacheReadTokens ?? 0,
  ]);
  return doc;
}

for (const p of PROVIDERS) {
  describe(`${p.name} through the AI SDK adapter`, () => {
    for (const mode of ['generateText', 'streamText'] as const) {
      it(`${mode} with the weather tool: calls, reasoning, finish reasons, the model, tokens as the SDK reports them`, async () => {
        const fake = new FakeProvider();
        for (const turn of turns(p)) fake.reply(p.wire, turn, { stream: mode === 'streamText' });
        const recorded = recordedPlugin(`ai-${p.server}-${mode}`);
        uninstall = instrumentAiSdk(recorded.hooks);

        const program = { model: p.make(fake), prompt: 'What is the weather in Paris?', tools: { weather }, stopWhen: stepCountIs(5), ...(p.providerOptions === undefined ? {} : { providerOptions: p.providerOptions }) };
        let steps: readonly SdkStep[];
        let totalUsage: SdkUsage;
        if (mode === 'generateText') {
          const result = await generateText(program);
          expect(result.text).toBe('It is sunny in Paris, 21°C.');
          steps = result.steps as unknown as SdkStep[];
          totalUsage = result.totalUsage;
        } else {
          const result = streamText(program);
          let streamed = '';
          for await (const delta of result.textStream) streamed += delta;
          expect(streamed).toBe(`${p.firstText}It is sunny in Paris, 21°C.`);
          steps = (await result.steps) as unknown as SdkStep[];
          totalUsage = await result.totalUsage;
        }
        const doc = await checkRun(p, fake, recorded, steps, totalUsage);
        // What each provider reports beyond the counts.
        const usage = steps.map((step) => step.usage);
        expect(usage.map((u) => [u.inputTokenDetails.cacheReadTokens ?? 0, u.outputTokenDetails.reasoningTokens ?? 0])).toEqual([
          [0, p.reads.reasoning ? 24 : 0],
          [p.reads.cache ? 128 : 0, 0],
        ]);
        if (p.cost !== undefined) {
          // xAI states what each call cost (`cost_in_usd_ticks`, 10^10 a dollar); the SDK hands it on as
          // `providerMetadata.xai.costInUsdTicks`. The trajectory says what was charged.
          expect(steps.map((step) => step.providerMetadata?.xai?.costInUsdTicks)).toEqual(p.cost.map((usd) => Math.round(usd * 1e10)));
          const agent = (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
          expect(agent.map((step) => step.metrics.cost_usd)).toEqual(p.cost);
          expect(doc.final_metrics.total_cost_usd).toBeCloseTo(p.cost[0] + p.cost[1], 12);
        }
        await sameOnNative(recorded);
      });
    }

    it('a 429: the refused attempt with its status and message, retried under the same call, then the answer', async () => {
      const fake = new FakeProvider();
      fake.fail(p.wire, 429, 'Rate limit reached for requests', p.server === 'cohere' ? undefined : p.server).reply(p.wire, { server: p.server === 'cohere' ? undefined : p.server, id: `${p.server}-resp-9`, model: p.answered, text: 'Hello!', usage: { input: 12, output: 3 } });
      const recorded = recordedPlugin(`ai-${p.server}-429`);
      uninstall = instrumentAiSdk(recorded.hooks);
      const result = await generateText({ model: p.make(fake), prompt: 'Hello?' });
      expect(result.text).toBe('Hello!');
      expect(fake.requests).toHaveLength(2);
      // The refused attempt: its status, and the provider's message as the package reads its error body.
      const attempts = expectRetriedFirstCall(recorded.log, true);
      const error = attempts[1]!.payload as Record<string, any>;
      expect(error).toMatchObject({ status_code: 429 });
      expect(error.error.message).toBe(p.server === 'xai' ? 'Too many requests: Rate limit reached for requests' : 'Rate limit reached for requests');
      // The trajectory: the failed attempt (no tokens), then the answer with the SDK's counts.
      const { agent } = await finishedRun(recorded);
      expect(agent.map((step) => [step.extra.invocation.status, step.extra.llm_response.error?.message, step.metrics?.prompt_tokens])).toEqual([
        ['failed', error.error.message, undefined],
        ['completed', undefined, result.usage.inputTokens],
      ]);
      expect([agent[1]!.message, agent[1]!.model_name, agent[1]!.metrics.completion_tokens]).toEqual(['Hello!', result.response.modelId, result.usage.outputTokens]);
      await sameOnNative(recorded);
    });

    it('a 429 with no retries left: the call fails with the status the program caught', async () => {
      const fake = new FakeProvider();
      fake.fail(p.wire, 429, 'Rate limit reached for requests', p.server === 'cohere' ? undefined : p.server);
      const recorded = recordedPlugin(`ai-${p.server}-429-final`);
      uninstall = instrumentAiSdk(recorded.hooks);
      let caught: unknown;
      try {
        await generateText({ model: p.make(fake), prompt: 'Hello?', maxRetries: 0 });
      } catch (error) {
        caught = error;
      }
      expect(APICallError.isInstance(caught)).toBe(true);
      expect(caught).toMatchObject({ statusCode: 429, isRetryable: true });
      const errors = recorded.log.filter((e) => e.hook === 'api_request_error').map((e) => e.payload as Record<string, any>);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({ status_code: 429, error: { message: (caught as Error).message } });
      expect(recorded.log.find((e) => e.hook === 'on_session_end')!.payload).toMatchObject({ failed: true, error_message: (caught as Error).message });
      await recorded.finish();
      await sameOnNative(recorded);
    });
  });
}

describe("@ai-sdk/mistral: Mistral's model_length finish", () => {
  for (const mode of ['generateText', 'streamText'] as const) {
    it(`${mode}: an answer cut at the model's context length finishes as length, as the SDK says`, async () => {
      const fake = new FakeProvider();
      fake.reply('chat', { server: 'mistral', id: 'mistral-resp-cut', model: 'mistral-small-2506', text: 'The history of Paris begins', finish: 'model_length', usage: { input: 32000, output: 768 } }, { stream: mode === 'streamText' });
      const recorded = recordedPlugin(`ai-mistral-model-length-${mode}`);
      uninstall = instrumentAiSdk(recorded.hooks);
      const program = { model: createMistral({ apiKey: 'test-not-a-key', fetch: fake.fetch as typeof fetch })('mistral-small-latest'), prompt: 'Tell me the whole history of Paris.' };
      let finish: { finishReason: string; rawFinishReason: string | undefined; modelId: string };
      if (mode === 'generateText') {
        const result = await generateText(program);
        finish = { finishReason: result.finishReason, rawFinishReason: result.rawFinishReason, modelId: result.response.modelId };
      } else {
        const result = streamText(program);
        await result.consumeStream();
        finish = { finishReason: await result.finishReason, rawFinishReason: await result.rawFinishReason, modelId: (await result.response).modelId };
      }
      expect(finish).toEqual({ finishReason: 'length', rawFinishReason: 'model_length', modelId: 'mistral-small-2506' });
      expect(posts(recorded).map((post) => post.finish_reason)).toEqual(['length']);
      const { agent } = await finishedRun(recorded);
      expect(agent.map((step) => [step.message, step.model_name, step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual([['The history of Paris begins', 'mistral-small-2506', 32000, 768]]);
      await sameOnNative(recorded);
    });
  }
});

describe("@ai-sdk/xai's charge under aiSdkMiddleware", () => {
  for (const mode of ['generateText', 'streamText'] as const) {
    it(`${mode} of a wrapped grok model: the step costs what xAI charged, as the SDK handed it on`, async () => {
      const fake = new FakeProvider();
      fake.reply('responses', { server: 'xai', id: 'xai-mw-1', model: 'grok-4-0709', reasoning: 'A greeting.', text: 'Hello there!', usage: { input: 30, cached: 8, output: 26, reasoning: 20 }, cost: 0.0001236 }, { stream: mode === 'streamText' });
      const recorded = recordedPlugin(`ai-xai-mw-${mode}`);
      const model = wrapLanguageModel({ model: createXai({ apiKey: 'xai-test-not-a-key', fetch: fake.fetch as typeof fetch })('grok-4'), middleware: aiSdkMiddleware(recorded.hooks, { sessionId: 'xai-mw' }) });
      let ticks: unknown;
      let usage: SdkUsage;
      if (mode === 'generateText') {
        const result = await generateText({ model, prompt: 'Say hello' });
        ticks = result.providerMetadata?.xai?.costInUsdTicks;
        usage = result.usage;
      } else {
        const result = streamText({ model, prompt: 'Say hello' });
        await result.consumeStream();
        ticks = (await result.providerMetadata)?.xai?.costInUsdTicks;
        usage = await result.usage;
      }
      expect(ticks).toBe(1_236_000);
      const { agent } = await finishedRun(recorded);
      expect(agent.map((step) => [step.message, step.model_name, step.reasoning_content, step.metrics.prompt_tokens, step.metrics.completion_tokens, step.metrics.cached_tokens, step.metrics.cost_usd])).toEqual([
        ['Hello there!', 'grok-4-0709', 'A greeting.', usage.inputTokens, usage.outputTokens, usage.inputTokenDetails.cacheReadTokens, 0.0001236],
      ]);
      await sameOnNative(recorded);
    });
  }
});
