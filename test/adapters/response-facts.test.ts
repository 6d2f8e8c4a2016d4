// The response's own facts, the same across every adapter: the model that
// answered (the provider's, not the alias asked for) and why it stopped
// (one vocabulary, src/adapters/core/finish.ts). Each program is written as
// its framework's docs write it and drives the real provider client against
// the fake fetch of its wire (test/adapters/ai-sdk/wire.ts,
// test/support/provider-wire.ts, test/adapters/openai-agents/wire.ts),
// streamed and not; the facts are read where a user meets them: the hook,
// ATOF's LLM end, the ATIF step, and the OTLP gen_ai span a real receiver
// got, on the memory backend and native.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateText, streamText, tool as aiTool } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { ChatAnthropic } from '@langchain/anthropic';
import { ChatOpenAI } from '@langchain/openai';
import { tool as lcTool } from '@langchain/core/tools';
import type { AIMessageChunk } from '@langchain/core/messages';
import { Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, Runner, tool as agentsTool } from '@openai/agents';
import * as z from 'zod';
import { instrumentAiSdk } from '../../src/adapters/ai-sdk/index.ts';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { instrumentOpenAIAgents } from '../../src/adapters/openai-agents/index.ts';
import { FakeProvider, type Wire } from './ai-sdk/wire.ts';
import { dated, FakeOpenAI } from './openai-agents/wire.ts';
import { useTracing } from './openai-agents/support.ts';
import { anthropicMessage, anthropicStream, chatCompletion, chatCompletionStream, scriptedFetch } from '../support/provider-wire.ts';
import { backends, expectNothingLost, recordedPlugin, type Recorded } from './support.ts';
import { startHttpReceiver, type Receiver } from '../support/otlp-receiver.ts';
import { replayWithOtlp } from '../support/otlp-replay.ts';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import { silentLogger } from '../../src/shared/logger.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

/** What one model call's response says, wherever it is recorded. */
interface Facts {
  requestModel: unknown;
  hookModel: unknown;
  hookFinish: unknown;
  atofModel: unknown;
  atofFinish: unknown;
  atifModel: unknown;
  otlpRequestModel?: unknown;
  otlpModel?: unknown;
  otlpFinish?: unknown;
}

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startHttpReceiver();
});
afterAll(async () => {
  await receiver.close();
});

async function factsOf(recorded: Recorded, otlp: boolean): Promise<Facts[]> {
  const posts = recorded.log.filter((entry) => entry.hook === 'post_api_request').map((entry) => entry.payload);
  const pres = recorded.log.filter((entry) => entry.hook === 'pre_api_request').map((entry) => entry.payload);
  const { atif, atof, counters } = await recorded.finish();
  expectNothingLost(counters);
  const ends = atof.filter((event) => event.category === 'llm' && event.scope_category === 'end');
  const steps = atif.flatMap((doc) => (doc.steps as Array<Record<string, any>>).filter((step) => step.source === 'agent'));
  const facts: Facts[] = posts.map((post, i) => ({
    requestModel: (pres[i]?.request as any)?.body?.model,
    hookModel: post.response_model,
    hookFinish: post.finish_reason,
    atofModel: ends[i]?.data?.model,
    atofFinish: ends[i]?.data?.finish_reason,
    atifModel: steps[i]?.model_name,
  }));
  if (otlp) {
    const before = receiver.spans().length;
    const lines = recorded.log.map((entry) => ({ hook: entry.hook, payload: entry.payload }));
    await replayWithOtlp(createMemoryRelay({ logger: silentLogger }), lines as never, { endpoints: [{ type: 'gen_ai', endpoint: receiver.url }], localFiles: false });
    const chats = receiver
      .spans()
      .slice(before)
      .filter((span) => span.attributes['gen_ai.operation.name'] === 'chat');
    chats.forEach((span, i) => {
      facts[i]!.otlpRequestModel = span.attributes['gen_ai.request.model'];
      facts[i]!.otlpModel = span.attributes['gen_ai.response.model'];
      facts[i]!.otlpFinish = span.attributes['gen_ai.response.finish_reasons'];
    });
  }
  return facts;
}

/**
 * Every call's facts where a user meets them: the request names the model
 * asked for, the hook, ATOF's LLM end and the ATIF step the one that
 * answered, and the finish reason is the one vocabulary; OTLP (sent by the
 * memory relay to a receiver) says the same in the conventions' terms.
 */
function expectFacts(facts: Facts[], expected: { requested: string | undefined; answered: string; finishes: string[] }, otlp: boolean): void {
  expect(facts.map((f) => f.requestModel)).toEqual(expected.finishes.map(() => expected.requested));
  for (const key of ['hookModel', 'atofModel', 'atifModel'] as const) expect(facts.map((f) => f[key]), key).toEqual(expected.finishes.map(() => expected.answered));
  expect(facts.map((f) => f.hookFinish)).toEqual(expected.finishes);
  expect(facts.map((f) => f.atofFinish)).toEqual(expected.finishes);
  if (!otlp) return;
  expect(facts.map((f) => f.otlpRequestModel)).toEqual(expected.finishes.map(() => expected.requested));
  expect(facts.map((f) => f.otlpModel)).toEqual(expected.finishes.map(() => expected.answered));
  expect(facts.map((f) => f.otlpFinish)).toEqual(expected.finishes.map((finish) => [finish === 'tool_calls' ? 'tool_call' : finish]));
}

// ------------------------------------------------------------------ AI SDK

const aiSdkModels: Record<'openai' | 'anthropic' | 'google', { wire: Wire; requested: string; reported: string; model: (fake: FakeProvider) => any }> = {
  openai: { wire: 'responses', requested: 'gpt-4o', reported: 'gpt-4o-2024-08-06', model: (fake) => createOpenAI({ apiKey: 'k', fetch: fake.fetch as typeof fetch })('gpt-4o') },
  anthropic: { wire: 'anthropic', requested: 'claude-sonnet-4-5', reported: 'claude-sonnet-4-5-20250929', model: (fake) => createAnthropic({ apiKey: 'k', fetch: fake.fetch as typeof fetch })('claude-sonnet-4-5') },
  google: { wire: 'gemini', requested: 'gemini-2.5-flash', reported: 'gemini-2.5-flash-preview-05-20', model: (fake) => createGoogleGenerativeAI({ apiKey: 'k', fetch: fake.fetch as typeof fetch })('gemini-2.5-flash') },
};

describe('the response facts: AI SDK', () => {
  for (const [name, spec] of Object.entries(aiSdkModels)) {
    for (const stream of [false, true]) {
      for (const backend of backends()) {
        it(`@ai-sdk/${name}, ${stream ? 'streamed' : 'not streamed'} (${backend})`, async () => {
          const fake = new FakeProvider();
          fake.reply(spec.wire, { id: 'r1', model: spec.reported, text: 'Checking.', toolCalls: [{ id: 'call_1', name: 'weather', args: { city: 'Oslo' } }], usage: { input: 20, output: 5 } }, { stream });
          const recorded = recordedPlugin(`facts-ai-${name}`, backend);
          cleanups.push(instrumentAiSdk(recorded.hooks));
          // A tool without execute: the step ends on the model's tool call, as the SDK's docs show for client-side tools.
          const tools = { weather: aiTool({ description: 'Weather of a city', inputSchema: z.object({ city: z.string() }) }) };
          let sdkFinish: unknown;
          let sdkModel: unknown;
          if (stream) {
            const result = streamText({ model: spec.model(fake), prompt: 'Weather in Oslo?', tools });
            await result.consumeStream();
            sdkFinish = await result.finishReason;
            sdkModel = (await result.response).modelId;
          } else {
            const result = await generateText({ model: spec.model(fake), prompt: 'Weather in Oslo?', tools });
            sdkFinish = result.finishReason;
            sdkModel = result.response.modelId;
          }
          // The SDK's own word: its response's model, and `tool-calls` (the one vocabulary spells it `tool_calls`).
          expect(sdkFinish).toBe('tool-calls');
          // @ai-sdk/google reports the model asked for, not Gemini's modelVersion (docs/adapters/ai-sdk.md says so).
          expect(sdkModel).toBe(name === 'google' ? spec.requested : spec.reported);
          expectFacts(await factsOf(recorded, backend === 'memory'), { requested: spec.requested, answered: sdkModel as string, finishes: ['tool_calls'] }, backend === 'memory');
        });
      }
    }
  }
});

// ------------------------------------------------------------------ LangChain

describe('the response facts: LangChain', () => {
  const weather = lcTool(async ({ city }) => `Sunny in ${city}`, { name: 'weather', description: 'Weather of a city', schema: z.object({ city: z.string() }) });
  const cases = {
    ChatOpenAI: {
      reply: (stream: boolean) => (stream ? chatCompletionStream : chatCompletion)({ id: 'chatcmpl-1', model: 'gpt-4.1-2025-04-14', content: null, toolCalls: [{ id: 'call_1', name: 'weather', args: { city: 'Oslo' } }], usage: { prompt_tokens: 20, completion_tokens: 5 } }),
      model: (fetch: typeof globalThis.fetch) => new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, configuration: { fetch } }),
      requested: 'gpt-4.1',
      answered: 'gpt-4.1-2025-04-14',
      finish: 'tool_calls',
    },
    ChatAnthropic: {
      reply: (stream: boolean) => (stream ? anthropicStream : anthropicMessage)({ id: 'msg_1', model: 'claude-sonnet-4-5-20250929', content: [{ type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Oslo' } }], usage: { input_tokens: 20, output_tokens: 5 } }),
      model: (fetch: typeof globalThis.fetch) => new ChatAnthropic({ model: 'claude-sonnet-4-5', apiKey: 'sk-ant-test', maxRetries: 0, clientOptions: { fetch } }),
      requested: 'claude-sonnet-4-5',
      answered: 'claude-sonnet-4-5-20250929',
      finish: 'tool_use',
    },
  };
  for (const [name, spec] of Object.entries(cases)) {
    for (const stream of [false, true]) {
      for (const backend of backends()) {
        it(`${name}, ${stream ? 'streamed' : 'not streamed'} (${backend})`, async () => {
          const { fetch } = scriptedFetch([spec.reply(stream)]);
          const recorded = recordedPlugin(`facts-lc-${name}`, backend);
          const model = spec.model(fetch).bindTools([weather]);
          const config = { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] };
          let message: AIMessageChunk | undefined;
          if (stream) {
            for await (const chunk of await model.stream('Weather in Oslo?', config)) message = message === undefined ? chunk : message.concat(chunk);
          } else message = (await model.invoke('Weather in Oslo?', config)) as AIMessageChunk;
          // The framework's word: the dated model and the stop reason, in response_metadata or (a streamed ChatAnthropic) additional_kwargs.
          const said = { ...message?.additional_kwargs, ...message?.response_metadata } as Record<string, unknown>;
          expect(said.model_name ?? said.model).toBe(spec.answered);
          expect(said.finish_reason ?? said.stop_reason).toBe(spec.finish);
          expectFacts(await factsOf(recorded, backend === 'memory'), { requested: spec.requested, answered: spec.answered, finishes: ['tool_calls'] }, backend === 'memory');
        });
      }
    }
  }
});

// ------------------------------------------------------------------ OpenAI Agents

describe('the response facts: OpenAI Agents', () => {
  const fake = new FakeOpenAI();
  for (const kind of ['responses', 'chat'] as const) {
    for (const stream of [false, true]) {
      for (const backend of backends()) {
        it(`${kind === 'responses' ? 'OpenAIResponsesModel' : 'OpenAIChatCompletionsModel'}, ${stream ? 'streamed' : 'not streamed'} (${backend})`, async () => {
          useTracing('tracing off');
          fake.load({ 'gpt-4.1': [{ calls: [{ id: 'call_1', name: 'weather', args: { city: 'Oslo' } }], usage: { input: 20, output: 5 } }, { text: 'Sunny.', usage: { input: 30, output: 3 } }] });
          const recorded = recordedPlugin(`facts-agents-${kind}`, backend);
          cleanups.push(instrumentOpenAIAgents(recorded.hooks));
          const client = fake.client();
          const model = kind === 'responses' ? new OpenAIResponsesModel(client, 'gpt-4.1') : new OpenAIChatCompletionsModel(client, 'gpt-4.1');
          const weather = agentsTool({ name: 'weather', description: 'Weather of a city', parameters: z.object({ city: z.string() }), execute: async ({ city }) => `Sunny in ${city}` });
          const agent = new Agent({ name: 'Weather', instructions: 'Answer briefly.', model, tools: [weather] });
          const runner = new Runner();
          let models: unknown[];
          if (stream) {
            const result = await runner.run(agent, 'Weather in Oslo?', { stream: true });
            for await (const _event of result) void _event;
            await result.completed;
            models = result.rawResponses.map((response) => response.providerData?.model);
          } else {
            const result = await runner.run(agent, 'Weather in Oslo?');
            models = result.rawResponses.map((response) => response.providerData?.model);
          }
          expect(fake.requests.map((request) => request.body.model)).toEqual(['gpt-4.1', 'gpt-4.1']);
          // The SDK's word where it keeps one (a streamed answer's result keeps none: its events name the model).
          if (!stream) expect(models).toEqual([dated('gpt-4.1'), dated('gpt-4.1')]);
          // OpenAIChatCompletionsModel keeps the model it asks for private: its requests name none rather than a guess.
          expectFacts(await factsOf(recorded, backend === 'memory'), { requested: kind === 'responses' ? 'gpt-4.1' : undefined, answered: dated('gpt-4.1'), finishes: ['tool_calls', 'stop'] }, backend === 'memory');
        });
      }
    }
  }
});
