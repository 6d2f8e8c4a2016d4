// LangChain through OpenRouter, as its users write the program: `ChatOpenAI` with OpenRouter's base URL
// (`configuration: { baseURL: 'https://openrouter.ai/api/v1' }`) in `createAgent`, invoked and streamed, against a
// loopback OpenRouter speaking its own Chat Completions (the routed model, the upstream provider, `reasoning`, cache
// reads and writes, and the cost it charged in `usage.cost`, in the stream's last chunk when streamed). The trajectory
// is held to what OpenRouter sent and LangChain reports (openrouter-checks.ts), on memory and native.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AIMessage, BaseMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { ChatOpenRouter } from '@langchain/openrouter';
import { createAgent } from 'langchain';
import * as z from 'zod';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { checkOpenRouterRun, loopbackOpenRouter, openrouterTurns, ANSWERED, ASKED, PROMPT, REASONING, type LoopbackOpenRouter } from './openrouter-checks.ts';
import { sameOnNative } from './same-on-native.ts';
import { recordedPlugin } from './support.ts';

let server: LoopbackOpenRouter;
beforeAll(async () => {
  server = await loopbackOpenRouter();
});
afterAll(() => server.close());

const TOOL = 'get_weather';
const getWeather = tool(async ({ city }) => `It is sunny and 21C in ${city}.`, { name: TOOL, description: 'Get the weather for a city', schema: z.object({ city: z.string() }) });

/** An AI message's response_metadata, as ChatOpenAI fills it (typed as unknown by @langchain/core). */
const metadataOf = (message: BaseMessage): Record<string, any> => message.response_metadata as Record<string, any>;

/**
 * The program's agent: ChatOpenAI on OpenRouter, the model by OpenRouter's name; `raw`: with ChatOpenAI's
 * `__includeRawResponse`, which keeps each raw response (OpenRouter's `reasoning` with it) in `additional_kwargs`.
 */
function weatherAgent(raw = false) {
  const model = new ChatOpenAI({ model: ASKED, apiKey: 'sk-or-v1-test-not-a-key', configuration: { baseURL: server.url }, ...(raw ? { __includeRawResponse: true } : {}) });
  return createAgent({ model, tools: [getWeather], name: 'weather_agent' });
}

/** The upstream OpenRouter names in a message's raw response: whole, or repeated once per chunk a stream merged. */
function rawProvider(message: AIMessage): string | undefined {
  const provider = (message.additional_kwargs.__raw_response as Record<string, any> | undefined)?.provider as string | undefined;
  if (provider === undefined) return undefined;
  const once = ['Anthropic', 'Amazon Bedrock'].find((name) => provider.length % name.length === 0 && name.repeat(provider.length / name.length) === provider);
  expect(once, `${provider} is one upstream's name, repeated`).toBeDefined();
  return once;
}

/**
 * What LangChain reported of each call (the AI messages' `usage_metadata` and `response_metadata`): it reads
 * OpenRouter's cache writes (`prompt_tokens_details.cache_write_tokens`, as `cache_creation`) beside the reads, and
 * keeps the raw usage, `cost` with it, in `response_metadata.usage`. ChatOpenAI reads `reasoning_content` only, not
 * OpenRouter's `reasoning`: the message has no reasoning, nor so the trajectory, unless the program keeps the raw
 * responses (`__includeRawResponse`).
 */
function reportOf(messages: BaseMessage[], raw = false) {
  const answers = messages.filter((message): message is AIMessage => message.getType() === 'ai');
  const report = {
    tokens: answers.map((message) => [message.usage_metadata?.input_tokens, message.usage_metadata?.output_tokens] as const),
    cached: answers.map((message) => (message.usage_metadata?.input_token_details?.cache_read ?? 0) + (message.usage_metadata?.input_token_details?.cache_creation ?? 0)),
    reasoningTokens: answers.map((message) => message.usage_metadata?.output_token_details?.reasoning),
    provider: 'openai',
    // ChatOpenAI keeps no `provider` of OpenRouter's answer in response_metadata; the program reads who served it only
    // in the raw response it asked for (`__includeRawResponse`), whole when invoked. A streamed message's raw response
    // is its chunks' merged, their strings joined: `provider` is there once per chunk, and the program reads one chunk's.
    servedBy: answers.map((message) => (raw ? rawProvider(message) : (metadataOf(message).provider as string | undefined))),
  };
  expect([report.cached, report.reasoningTokens]).toEqual([
    [900, 1310],
    [12, 0],
  ]);
  expect(answers.map((message) => message.contentBlocks.some((block) => block.type === 'reasoning'))).toEqual([false, false]);
  return report;
}

describe('LangChain ChatOpenAI through OpenRouter', () => {
  it('createAgent invoked: steps, models, tokens and the cost OpenRouter charged', async () => {
    const api = server.serve(false, TOOL);
    const recorded = recordedPlugin('openrouter-langchain');
    const handler = new NemoRelayCallbackHandler(recorded.hooks);

    const result = await weatherAgent().invoke({ messages: [{ role: 'user', content: PROMPT }] }, { callbacks: [handler] });

    expect(result.messages.at(-1)?.content).toBe('It is sunny in Paris, 21°C.');
    const answers = result.messages.filter((message) => message.getType() === 'ai');
    // LangChain keeps OpenRouter's usage as it came: the cost is there for the program.
    expect(answers.map((message) => [metadataOf(message).model_name, metadataOf(message).usage?.cost])).toEqual(openrouterTurns(TOOL).map((turn) => [ANSWERED, turn.cost]));
    // LangChain's session starts before its model is known: the session names no model, each step the one that answered.
    await checkOpenRouterRun(recorded, api, { ...reportOf(result.messages), models: answers.map((message) => metadataOf(message).model_name) }, { tool: TOOL, reasoning: false, sessionModel: false });
    await sameOnNative(recorded);
  });

  it('createAgent streamed: the same, with the usage and the cost from the stream\'s last chunk, charged once', async () => {
    const api = server.serve(true, TOOL);
    const recorded = recordedPlugin('openrouter-langchain-stream');
    const handler = new NemoRelayCallbackHandler(recorded.hooks);

    let streamed = '';
    let messages: BaseMessage[] = [];
    const stream = await weatherAgent().stream({ messages: [{ role: 'user', content: PROMPT }] }, { callbacks: [handler], streamMode: ['messages', 'values'] });
    for await (const [mode, value] of stream) {
      if (mode === 'values') messages = value.messages;
      else if (value[0].getType() === 'ai' && typeof value[0].content === 'string') streamed += value[0].content;
    }

    expect(streamed).toBe('Let me look that up.It is sunny in Paris, 21°C.');
    expect(api.requests.map((request) => request.body.stream)).toEqual([true, true]);
    // OpenRouter's usage chunk has a choice, so ChatOpenAI passes its usage on twice and the merged message adds it
    // up: the program reads twice the charge in response_metadata (its usage_metadata counts the tokens once).
    const answers = messages.filter((message) => message.getType() === 'ai');
    expect(answers.map((message) => metadataOf(message).usage?.cost)).toEqual(openrouterTurns(TOOL).map((turn) => 2 * turn.cost!));
    // The merged message names no model (LangChain keeps it in the finish chunk's generationInfo, which the adapter reads).
    await checkOpenRouterRun(recorded, api, reportOf(messages), { tool: TOOL, reasoning: false, sessionModel: false });
    await sameOnNative(recorded);
  });

  // OpenRouter's `reasoning`, which ChatOpenAI does not read, is the first step's reasoning when the program keeps the
  // raw responses: the message's contentBlocks have none, its raw response (joined deltas, streamed) has it. So is the
  // upstream that served each call (OpenRouter's `provider`): the step's `served_by`.
  for (const streamed of [false, true]) {
    it(`createAgent ${streamed ? 'streamed' : 'invoked'} with __includeRawResponse: OpenRouter's reasoning and the upstream that served each call are the step's`, async () => {
      const api = server.serve(streamed, TOOL);
      const recorded = recordedPlugin(`openrouter-langchain-raw-${streamed ? 'stream' : 'invoke'}`);
      const input = { messages: [{ role: 'user', content: PROMPT }] };
      const config = { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] };
      let messages: BaseMessage[] = [];
      if (!streamed) messages = (await weatherAgent(true).invoke(input, config)).messages;
      else for await (const [mode, value] of await weatherAgent(true).stream(input, { ...config, streamMode: ['messages', 'values'] })) if (mode === 'values') messages = value.messages;
      expect(api.requests.map((request) => request.body.stream ?? false)).toEqual([streamed, streamed]);
      const answers = messages.filter((message): message is AIMessage => message.getType() === 'ai');
      const raw = answers.map((message) => (message.additional_kwargs.__raw_response as Record<string, any>).choices[0]);
      expect(raw.map((choice) => (streamed ? choice.delta : choice.message).reasoning)).toEqual([REASONING, undefined]);
      const report = reportOf(messages, true);
      expect(report.servedBy).toEqual(['Anthropic', 'Amazon Bedrock']);
      await checkOpenRouterRun(recorded, api, report, { tool: TOOL, sessionModel: false });
      await sameOnNative(recorded);
    });
  }
});

// LangChain's own OpenRouter package (`@langchain/openrouter`'s ChatOpenRouter, as its README writes it, the base URL
// the loopback's): it reads OpenRouter's `reasoning` and names the provider `openrouter`, but keeps neither the raw
// response nor OpenRouter's `provider`: the program cannot read who served a call, and the step has no `served_by`.
describe('LangChain ChatOpenRouter (@langchain/openrouter)', () => {
  for (const streamed of [false, true]) {
    it(`createAgent ${streamed ? 'streamed' : 'invoked'}: steps, tokens, reasoning and the cost OpenRouter charged; no served_by, which it does not keep`, async () => {
      const api = server.serve(streamed, TOOL);
      const recorded = recordedPlugin(`openrouter-chatopenrouter-${streamed ? 'stream' : 'invoke'}`);
      const model = new ChatOpenRouter({ model: ASKED, apiKey: 'sk-or-v1-test-not-a-key', baseURL: server.url });
      const agent = createAgent({ model, tools: [getWeather], name: 'weather_agent' });
      const input = { messages: [{ role: 'user', content: PROMPT }] };
      const config = { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] };
      let messages: BaseMessage[] = [];
      if (!streamed) messages = (await agent.invoke(input, config)).messages;
      else for await (const [mode, value] of await agent.stream(input, { ...config, streamMode: ['messages', 'values'] })) if (mode === 'values') messages = value.messages;

      expect(api.requests.map((request) => request.body.stream ?? false)).toEqual([streamed, streamed]);
      const answers = messages.filter((message): message is AIMessage => message.getType() === 'ai');
      expect(answers.at(-1)?.content).toBe('It is sunny in Paris, 21°C.');
      // What the program can read of each answer: no raw response, no `provider` of OpenRouter's anywhere.
      expect(answers.map((message) => [message.additional_kwargs.__raw_response, JSON.stringify(message).includes('Amazon Bedrock')])).toEqual([
        [undefined, false],
        [undefined, false],
      ]);
      const report = {
        tokens: answers.map((message) => [message.usage_metadata?.input_tokens, message.usage_metadata?.output_tokens] as const),
        cached: answers.map((message) => (message.usage_metadata?.input_token_details?.cache_read ?? 0) + (message.usage_metadata?.input_token_details?.cache_creation ?? 0)),
        reasoningTokens: answers.map((message) => message.usage_metadata?.output_token_details?.reasoning),
        provider: 'openrouter',
        servedBy: [undefined, undefined],
      };
      expect(answers.map((message) => message.contentBlocks.filter((block) => block.type === 'reasoning').map((block) => block.reasoning).join(''))).toEqual([REASONING, '']);
      // Streamed, it keeps no model of OpenRouter's either (its chunks' metadata name only the provider): each step
      // names the model asked, which is all the program can read.
      expect(answers.map((message) => JSON.stringify(message).includes(ANSWERED))).toEqual([!streamed, !streamed]);
      await checkOpenRouterRun(recorded, api, report, { tool: TOOL, sessionModel: false, ...(streamed ? { answeredModel: ASKED } : {}) });
      await sameOnNative(recorded);
    });
  }
});
