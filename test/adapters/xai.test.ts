// xAI through the routes a user takes to it besides @ai-sdk/xai's own Responses model (more-providers.test.ts): the
// Chat Completions model of @ai-sdk/xai 4.x (`xai.chat()`, which 5.x removed), the AI SDK's @ai-sdk/openai-compatible
// pointed at https://api.x.ai/v1, the OpenAI Agents SDK's OpenAIChatCompletionsModel
// on an `openai` client at xAI's baseURL, and LangChain's ChatXAI. Each program as its docs write it, the real client
// against a fake xAI speaking its Chat Completions (ai-sdk/wire.ts): grok-4 reasons, and xAI counts the reasoning
// tokens apart from `completion_tokens` (in `completion_tokens_details.reasoning_tokens` and in `total_tokens`); each
// usage states what the call was charged as `cost_in_usd_ticks` (10^10 a dollar), a stream's in its last chunks. The
// clients report `completion_tokens` as the output: the trajectory says what xAI billed (the reasoning in the
// completion, xAI's total) and what it charged, on memory and native. @ai-sdk/xai 4.x's chat model alone adds the
// reasoning to its output itself.
// Then xAI's Responses API (/v1/responses) through the Agents SDK's OpenAIResponsesModel and LangChain's ChatOpenAI
// with useResponsesApi: there `output_tokens` hold the reasoning, and the usage states the charge in ticks too.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { createXai as createXai4 } from '@ai-sdk/xai-4';
import { generateText, stepCountIs, streamText } from 'ai';
import OpenAI from 'openai';
import { Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, run } from '@openai/agents';
import { ChatOpenAI } from '@langchain/openai';
import { createAgent } from 'langchain';
import { getWeather } from './langchain-checks.ts';
import { ChatXAI } from '@langchain/xai';
import { AIMessageChunk, type AIMessage } from '@langchain/core/messages';
import { instrumentAiSdk } from '../../src/adapters/ai-sdk/index.ts';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { loopbackApi } from '../support/doc-snippets.ts';
import { FakeProvider, type Turn } from './ai-sdk/wire.ts';
import { weather } from './ai-sdk/weather-tool.ts';
import { instrumentEachTest, useTracing, weatherTool } from './openai-agents/support.ts';
import { finishedRun, recordedPlugin, type AtifDoc, type Recorded } from './support.ts';
import { sameOnNative } from './same-on-native.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

const XAI = 'https://api.x.ai/v1';
const ANSWERED = 'grok-4-0709';
/** What xAI charged for each call, in USD (sent as ticks). */
const COST = [0.0004842, 0.0001236] as const;
/** xAI's counts of each call: its completion_tokens leave out the reasoning, which its total counts. */
const WIRE = [
  { input: 180, output: 40, reasoning: 96 },
  { input: 260, cached: 128, output: 15, reasoning: 30 },
] as const;
/** What xAI billed each call for: [prompt, completion (reasoning included), total, reasoning]. */
const BILLED = WIRE.map((u) => [u.input, u.output + u.reasoning, u.input + u.output + u.reasoning, u.reasoning]);

/** The weather program's two answers: the call (the tool named `tool`), then the answer. */
function turns(tool: string): [Turn, Turn] {
  return [
    { server: 'xai', id: 'xai-cmpl-1', model: ANSWERED, toolCalls: [{ id: 'call_xai_1', name: tool, args: { city: 'Paris' } }], usage: WIRE[0], cost: COST[0] },
    { server: 'xai', id: 'xai-cmpl-2', model: ANSWERED, text: 'It is sunny in Paris, 21°C.', usage: WIRE[1], cost: COST[1] },
  ];
}

const recordedCounts = (agent: AtifDoc[]) => agent.map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens, step.metrics.extra?.total_tokens, step.metrics.extra?.completion_tokens_details?.reasoning_tokens]);

/** What every xAI run must say: the calls, the model, xAI's billed counts and its charge. */
async function checkBilled(recorded: Recorded, fake: FakeProvider, path = '/v1/chat/completions'): Promise<AtifDoc> {
  expect(fake.requests.map((request) => new URL(request.url).pathname)).toEqual([path, path]);
  const { doc, agent } = await finishedRun(recorded);
  expect(agent.map((step) => step.model_name)).toEqual([ANSWERED, ANSWERED]);
  expect(agent[0]!.tool_calls.map((call: AtifDoc) => [call.tool_call_id, call.arguments])).toEqual([['call_xai_1', { city: 'Paris' }]]);
  expect(agent[0]!.observation.results.map((result: AtifDoc) => result.source_call_id)).toEqual(['call_xai_1']);
  expect(agent[1]!.message).toBe('It is sunny in Paris, 21°C.');
  expect(recordedCounts(agent)).toEqual(BILLED);
  expect(agent.map((step) => step.metrics.cached_tokens ?? 0)).toEqual([0, 128]);
  expect(agent.map((step) => step.metrics.cost_usd)).toEqual([...COST]);
  expect(doc.final_metrics.total_completion_tokens).toBe(BILLED[0]![1]! + BILLED[1]![1]!);
  expect(doc.final_metrics.total_cost_usd).toBeCloseTo(COST[0] + COST[1], 12);
  return doc;
}

type SdkStep = { usage: { inputTokens?: number; outputTokens?: number; totalTokens?: number; outputTokenDetails: { reasoningTokens?: number }; raw?: Record<string, any> }; providerMetadata?: Record<string, Record<string, unknown>> };

describe("@ai-sdk/xai 4.x's Chat Completions model (xai.chat), through the AI SDK adapter", () => {
  let uninstall: (() => void) | undefined;
  afterEach(() => {
    uninstall?.();
    uninstall = undefined;
  });

  for (const mode of ['generateText', 'streamText'] as const) {
    it(`${mode}: the SDK's output counts the reasoning (the steps too, once), and the step costs what xAI charged`, async () => {
      const fake = new FakeProvider();
      for (const turn of turns('weather')) fake.reply('chat', turn, { stream: mode === 'streamText' });
      const recorded = recordedPlugin(`xai-chat-${mode}`);
      uninstall = instrumentAiSdk(recorded.hooks);
      const xai = createXai4({ apiKey: 'xai-test-not-a-key', fetch: fake.fetch as typeof fetch });
      const program = { model: xai.chat('grok-4'), prompt: 'What is the weather in Paris?', tools: { weather }, stopWhen: stepCountIs(5) };
      let steps: readonly SdkStep[];
      if (mode === 'generateText') {
        const result = await generateText(program);
        expect(result.text).toBe('It is sunny in Paris, 21°C.');
        steps = result.steps as unknown as SdkStep[];
      } else {
        const result = streamText(program);
        await result.consumeStream();
        expect(await result.text).toBe('It is sunny in Paris, 21°C.');
        steps = (await result.steps) as unknown as SdkStep[];
      }
      // The package reads xAI's usage right (its output is completion and reasoning), and hands the charge on only in
      // the usage as xAI sent it (`raw`), not as provider metadata.
      expect(steps.map((step) => [step.usage.inputTokens, step.usage.outputTokens, step.usage.totalTokens, step.usage.outputTokenDetails.reasoningTokens])).toEqual(BILLED);
      expect(steps.map((step) => [step.usage.raw?.cost_in_usd_ticks, step.providerMetadata?.xai?.costInUsdTicks])).toEqual(COST.map((usd) => [Math.round(usd * 1e10), undefined]));
      await checkBilled(recorded, fake, '/v1/chat/completions');
      expect(recorded.log.filter((e) => e.hook === 'pre_api_request').map((e) => e.payload.provider)).toEqual(['xai.chat', 'xai.chat']);
      await sameOnNative(recorded);
    });
  }
});

describe('@ai-sdk/openai-compatible at https://api.x.ai/v1, through the AI SDK adapter', () => {
  let uninstall: (() => void) | undefined;
  afterEach(() => {
    uninstall?.();
    uninstall = undefined;
  });

  for (const mode of ['generateText', 'streamText'] as const) {
    it(`${mode}: the SDK reports completion_tokens as the output; the steps count the reasoning xAI billed, and its charge`, async () => {
      const fake = new FakeProvider();
      for (const turn of turns('weather')) fake.reply('chat', turn, { stream: mode === 'streamText' });
      const recorded = recordedPlugin(`xai-compatible-${mode}`);
      uninstall = instrumentAiSdk(recorded.hooks);
      // As the AI SDK's OpenAI Compatible Providers page writes it; `includeUsage` asks for a stream's usage.
      const xai = createOpenAICompatible({ name: 'xai', baseURL: XAI, apiKey: 'xai-test-not-a-key', includeUsage: true, fetch: fake.fetch as typeof fetch });
      const program = { model: xai('grok-4'), prompt: 'What is the weather in Paris?', tools: { weather }, stopWhen: stepCountIs(5) };
      let steps: readonly SdkStep[];
      if (mode === 'generateText') {
        const result = await generateText(program);
        expect(result.text).toBe('It is sunny in Paris, 21°C.');
        steps = result.steps as unknown as SdkStep[];
      } else {
        const result = streamText(program);
        await result.consumeStream();
        expect(await result.text).toBe('It is sunny in Paris, 21°C.');
        steps = (await result.steps) as unknown as SdkStep[];
      }
      // The SDK's usage: xAI's completion_tokens as the output, its total without the reasoning; the usage as xAI
      // sent it (`raw`) has the reasoning apart, xAI's total and the charge in ticks.
      expect(steps.map((step) => [step.usage.inputTokens, step.usage.outputTokens, step.usage.totalTokens, step.usage.outputTokenDetails.reasoningTokens])).toEqual(
        WIRE.map((u) => [u.input, u.output, u.input + u.output, u.reasoning]),
      );
      expect(steps.map((step) => [step.usage.raw?.total_tokens, step.usage.raw?.cost_in_usd_ticks])).toEqual(BILLED.map((b, i) => [b[2], Math.round(COST[i]! * 1e10)]));
      await checkBilled(recorded, fake);
      await sameOnNative(recorded);
    });
  }
});

describe("the OpenAI Agents SDK's OpenAIChatCompletionsModel on an openai client at xAI's baseURL", () => {
  const instrument = instrumentEachTest();

  for (const stream of [false, true]) {
    it(`${stream ? 'a streamed run' : 'run()'}: the SDK's outputTokens leave out the reasoning xAI billed; the steps count it, and xAI's charge`, async () => {
      useTracing('tracing off');
      const fake = new FakeProvider();
      for (const turn of turns('get_weather')) fake.reply('chat', turn, { stream });
      const recorded = recordedPlugin(`xai-agents-${stream ? 'stream' : 'run'}`);
      instrument(recorded.hooks);
      // As the SDK's docs write a program for another provider: an `openai` client at its baseURL.
      const client = new OpenAI({ baseURL: XAI, apiKey: 'xai-test-not-a-key', fetch: fake.fetch as typeof fetch });
      const agent = new Agent({ name: 'Weather Agent', instructions: 'You are a helpful weather assistant.', model: new OpenAIChatCompletionsModel(client, 'grok-4'), tools: [weatherTool()] });
      const result = stream ? await run(agent, 'What is the weather in Paris?', { stream: true }) : await run(agent, 'What is the weather in Paris?');
      if (stream) await (result as { completed: Promise<void> }).completed;
      expect(result.finalOutput).toBe('It is sunny in Paris, 21°C.');
      // The SDK's usage: completion_tokens as the output, beside xAI's total (which counts the reasoning).
      expect(result.rawResponses.map((response) => [response.usage.inputTokens, response.usage.outputTokens, response.usage.totalTokens])).toEqual(WIRE.map((u) => [u.input, u.output, u.input + u.output + u.reasoning]));
      if (!stream) expect(result.rawResponses.map((response) => response.providerData?.usage?.cost_in_usd_ticks)).toEqual(COST.map((usd) => Math.round(usd * 1e10)));
      await checkBilled(recorded, fake);
      await sameOnNative(recorded);
    });
  }
});

describe("LangChain's ChatXAI, through the LangChain adapter", () => {
  let fake = new FakeProvider();
  let server: Awaited<ReturnType<typeof loopbackApi>> | undefined;
  beforeAll(async () => {
    server = await loopbackApi((url, init) => fake.fetch(url, init));
  });
  afterAll(() => server?.close());

  for (const mode of ['invoke', 'stream'] as const) {
    it(`model.${mode}(): the step costs what xAI charged (cost_in_usd_ticks), once though the stream's chunks repeat it`, async () => {
      fake = new FakeProvider();
      fake.reply('chat', { server: 'xai', id: 'xai-cmpl-3', model: ANSWERED, text: 'Hello there!', usage: WIRE[1], cost: COST[1] }, { stream: mode === 'stream' });
      const recorded = recordedPlugin(`xai-lc-${mode}`);
      const model = new ChatXAI({ model: 'grok-4', apiKey: 'xai-test-not-a-key', baseURL: `${server!.url}/v1`, maxRetries: 0 });
      const callbacks = [new NemoRelayCallbackHandler(recorded.hooks)];
      let answer: AIMessage | AIMessageChunk;
      if (mode === 'invoke') answer = await model.invoke('Say hello', { callbacks });
      else {
        let merged: AIMessageChunk | undefined;
        for await (const chunk of await model.stream('Say hello', { callbacks })) merged = merged === undefined ? chunk : merged.concat(chunk);
        answer = merged!;
      }
      expect(answer.text).toBe('Hello there!');
      // ChatXAI keeps xAI's usage in response_metadata.usage, a stream's added up over the chunks that carried it.
      const ticks = (answer.response_metadata.usage as { cost_in_usd_ticks?: number } | undefined)?.cost_in_usd_ticks;
      expect(ticks! % Math.round(COST[1] * 1e10)).toBe(0);
      const { doc, agent } = await finishedRun(recorded);
      expect(agent.map((step) => [step.message, step.model_name])).toEqual([['Hello there!', ANSWERED]]);
      expect(recordedCounts(agent)).toEqual([BILLED[1]]);
      expect(agent.map((step) => step.metrics.cost_usd)).toEqual([COST[1]]);
      expect(doc.final_metrics.total_cost_usd).toBe(COST[1]);
      await sameOnNative(recorded);
    });
  }
});

// xAI's Responses API (https://api.x.ai/v1/responses): its `output_tokens` hold the reasoning (as OpenAI's do), its
// `output_tokens_details.reasoning_tokens` say how many, and its usage states the charge as `cost_in_usd_ticks`.
const RESPONSES_WIRE = [
  { input: 180, output: 136, reasoning: 96 },
  { input: 260, cached: 128, output: 45, reasoning: 30 },
] as const;
const THOUGHT = 'The user wants the weather in Paris: call the tool.';

function responsesTurns(tool: string): [Turn, Turn] {
  return [
    { server: 'xai', id: 'resp_xai_1', model: ANSWERED, reasoning: THOUGHT, toolCalls: [{ id: 'call_xai_1', name: tool, args: { city: 'Paris' } }], usage: RESPONSES_WIRE[0], cost: COST[0] },
    { server: 'xai', id: 'resp_xai_2', model: ANSWERED, text: 'It is sunny in Paris, 21°C.', usage: RESPONSES_WIRE[1], cost: COST[1] },
  ];
}

/** What every run on xAI's Responses API must say: the calls, the model, the reasoning, xAI's counts and its charge. */
async function checkResponses(recorded: Recorded, fake: FakeProvider, charged = true): Promise<void> {
  expect(fake.requests.map((request) => new URL(request.url).href)).toEqual([`${XAI}/responses`, `${XAI}/responses`]);
  const { doc, agent } = await finishedRun(recorded);
  expect(agent.map((step) => step.model_name)).toEqual([ANSWERED, ANSWERED]);
  expect(agent[0]!.tool_calls.map((call: AtifDoc) => [call.tool_call_id, call.arguments])).toEqual([['call_xai_1', { city: 'Paris' }]]);
  expect(agent[0]!.observation.results.map((result: AtifDoc) => result.source_call_id)).toEqual(['call_xai_1']);
  expect(agent[0]!.reasoning_content).toBe(THOUGHT);
  expect(agent[1]!.message).toBe('It is sunny in Paris, 21°C.');
  // xAI's output_tokens already count the reasoning: billed as sent, not the reasoning added twice.
  expect(recordedCounts(agent)).toEqual(RESPONSES_WIRE.map((u) => [u.input, u.output, u.input + u.output, u.reasoning]));
  expect(agent.map((step) => step.metrics.cached_tokens ?? 0)).toEqual([0, 128]);
  expect(doc.final_metrics.total_completion_tokens).toBe(RESPONSES_WIRE[0].output + RESPONSES_WIRE[1].output);
  if (!charged) {
    // What the program never got, the trajectory does not make up.
    expect(agent.map((step) => step.metrics.cost_usd)).toEqual([undefined, undefined]);
    expect(doc.final_metrics.total_cost_usd ?? 0).toBe(0);
    return;
  }
  expect(agent.map((step) => step.metrics.cost_usd)).toEqual([...COST]);
  expect(doc.final_metrics.total_cost_usd).toBeCloseTo(COST[0] + COST[1], 12);
}

describe("xAI's Responses API: the OpenAI Agents SDK's OpenAIResponsesModel on an openai client at xAI's baseURL", () => {
  const instrument = instrumentEachTest();

  for (const stream of [false, true]) {
    it(`${stream ? 'a streamed run' : 'run()'}: xAI's counts (reasoning in the output), the reasoning text and xAI's charge`, async () => {
      useTracing('tracing off');
      const fake = new FakeProvider();
      for (const turn of responsesTurns('get_weather')) fake.reply('responses', turn, { stream });
      const recorded = recordedPlugin(`xai-responses-agents-${stream ? 'stream' : 'run'}`);
      instrument(recorded.hooks);
      const client = new OpenAI({ baseURL: XAI, apiKey: 'xai-test-not-a-key', fetch: fake.fetch as typeof fetch });
      const agent = new Agent({ name: 'Weather Agent', instructions: 'You are a helpful weather assistant.', model: new OpenAIResponsesModel(client, 'grok-4'), tools: [weatherTool()] });
      const result = stream ? await run(agent, 'What is the weather in Paris?', { stream: true }) : await run(agent, 'What is the weather in Paris?');
      if (stream) await (result as { completed: Promise<void> }).completed;
      expect(result.finalOutput).toBe('It is sunny in Paris, 21°C.');
      // The SDK's usage: xAI's output_tokens (the reasoning in them) and its reasoning count.
      expect(result.rawResponses.map((response) => [response.usage.inputTokens, response.usage.outputTokens, response.usage.totalTokens])).toEqual(RESPONSES_WIRE.map((u) => [u.input, u.output, u.input + u.output]));
      await checkResponses(recorded, fake);
      await sameOnNative(recorded);
    });
  }
});

describe("xAI's Responses API: LangChain's createAgent on ChatOpenAI({ useResponsesApi: true }) at xAI's baseURL", () => {
  for (const streaming of [false, true]) {
    it(`${streaming ? 'agent.stream()' : 'agent.invoke()'}: xAI's counts (reasoning in the output), the reasoning text and xAI's charge`, async () => {
      const fake = new FakeProvider();
      for (const turn of responsesTurns('get_weather')) fake.reply('responses', turn, { stream: streaming });
      const recorded = recordedPlugin(`xai-responses-lc-${streaming ? 'stream' : 'invoke'}`);
      const model = new ChatOpenAI({ model: 'grok-4', apiKey: 'xai-test-not-a-key', useResponsesApi: true, streaming, maxRetries: 0, configuration: { baseURL: XAI, fetch: fake.fetch as typeof fetch } });
      const agent = createAgent({ model, tools: [getWeather] });
      const callbacks = [new NemoRelayCallbackHandler(recorded.hooks)];
      const input = { messages: [{ role: 'user' as const, content: 'What is the weather in Paris?' }] };
      let messages: AIMessage[];
      if (streaming) {
        let last: { messages: AIMessage[] } | undefined;
        for await (const state of await agent.stream(input, { callbacks, streamMode: 'values' })) last = state as unknown as { messages: AIMessage[] };
        messages = last!.messages;
      } else messages = (await agent.invoke(input, { callbacks })).messages as AIMessage[];
      expect(messages.at(-1)!.text).toBe('It is sunny in Paris, 21°C.');
      // What LangChain reports: xAI's output_tokens (the reasoning in them) and its reasoning count.
      const answers = messages.filter((message) => message.getType() === 'ai');
      expect(answers.map((message) => [message.usage_metadata?.input_tokens, message.usage_metadata?.output_tokens, message.usage_metadata?.output_token_details?.reasoning])).toEqual(RESPONSES_WIRE.map((u) => [u.input, u.output, u.reasoning]));
      // The charge xAI sent reaches the program only streamed: the finishing event's response, usage and all, goes
      // into response_metadata; invoked, ChatOpenAI keeps the usage as LangChain's counts alone (no ticks anywhere).
      const ticks = answers.map((message) => (message.response_metadata.usage as { cost_in_usd_ticks?: number } | undefined)?.cost_in_usd_ticks);
      expect(ticks).toEqual(streaming ? COST.map((usd) => Math.round(usd * 1e10)) : [undefined, undefined]);
      await checkResponses(recorded, fake, streaming);
      await sameOnNative(recorded);
    });
  }
});
