// Tools the provider runs (hosted tools), in the three framework adapters: a
// program as each framework's docs write it offers a hosted web search beside
// one function tool, and the real provider client talks to a fake fetch that
// answers in the provider's own wire items: OpenAI Responses `web_search_call`
// (JSON and the `response.web_search_call.*` stream), Anthropic
// `server_tool_use` + `web_search_tool_result` blocks. Whatever the framework,
// the trajectory says the same: the model's step made the search (its query
// the call's arguments), the provider ran it inside that call (the tool call's
// `extra.provider_executed`) and returned what `extra.provider_result` holds
// (the sources); the program ran no tool for it (no tool span, no
// observation); the function tool is a tool run as usual; the tokens are the
// framework's. Memory and native write the same files.
import { afterEach, describe, expect, it } from 'vitest';
import { generateText, stepCountIs, streamText, tool as aiTool, wrapLanguageModel } from 'ai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { Agent, OpenAIProvider, Runner, webSearchTool } from '@openai/agents';
import { ChatAnthropic } from '@langchain/anthropic';
import { ChatOpenAI } from '@langchain/openai';
import { tool as lcTool } from '@langchain/core/tools';
import { createAgent } from 'langchain';
import * as z from 'zod';
import { aiSdkMiddleware, instrumentAiSdk } from '../../src/adapters/ai-sdk/index.ts';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { anthropicMessage, openAiResponse, scriptedFetch, webSearchBlocks, type WebSearch } from '../support/provider-wire.ts';
import { FakeProvider } from './ai-sdk/wire.ts';
import { instrumentEachTest, TRACING, useTracing, weatherTool } from './openai-agents/support.ts';
import { FakeOpenAI } from './openai-agents/wire.ts';
import { sameOnNative } from './same-on-native.ts';
import { all, filesOf, viewed } from '../cli/view-json.ts';
import { finishedRun, recordedPlugin, type AtifDoc, type Recorded } from './support.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

const SOURCES = [
  { url: 'https://weather.example/paris', title: 'Paris forecast' },
  { url: 'https://news.example/heat', title: 'Heat wave in France' },
];
const search = (id: string): WebSearch => ({ id, query: 'Paris weather this week', results: SOURCES });

type Step = Record<string, any>;

/**
 * What every adapter must record for one run whose first model call searched the web (hosted, `searchId`) and
 * called the weather tool (`weatherId`), and whose second answered.
 */
async function checkHosted(recorded: Recorded, searchId: string, weatherId: string, tokens: { prompt: number; completion: number }, options: { finish?: false } = {}): Promise<AtifDoc> {
  const { doc, agent, atof } = await finishedRun(recorded);
  expect(agent).toHaveLength(2);
  // The step that made the search holds it, first (the provider ran it before the text), then the function call.
  const calls = agent[0]!.tool_calls as Step[];
  expect(calls.map((call) => call.tool_call_id)).toEqual([searchId, weatherId]);
  const hosted = calls[0]!;
  expect(hosted.function_name).toBe('web_search');
  expect(hosted.arguments).toMatchObject({ query: 'Paris weather this week' });
  expect(hosted.extra?.provider_executed).toBe(true);
  // What came back, as the provider (or its framework) returned it: every source's URL.
  const result = JSON.stringify(hosted.extra?.provider_result);
  for (const source of SOURCES) expect(result).toContain(source.url);
  expect(calls[1]!.extra?.provider_executed).toBeUndefined();
  // The program ran the weather tool, not the search: one tool run, one observation.
  const observed = (doc.steps as Step[]).flatMap((step) => (step.observation?.results ?? []) as Step[]);
  expect(observed.map((r) => r.source_call_id)).toEqual([weatherId]);
  const toolHooks = recorded.log.filter((entry) => entry.hook === 'pre_tool_call' || entry.hook === 'post_tool_call');
  expect(toolHooks.map((entry) => entry.payload.tool_call_id)).toEqual([weatherId, weatherId]);
  const toolSpans = atof.filter((event) => event.category === 'tool');
  expect(toolSpans.map((event) => [event.scope_category, event.metadata?.tool_call_id])).toEqual([['start', weatherId], ['end', weatherId]]);
  // The call that made a function call still stopped for it; the answer stopped (where the framework says why).
  const finishes = recorded.log.filter((entry) => entry.hook === 'post_api_request').map((entry) => entry.payload.finish_reason);
  expect(finishes).toEqual(options.finish === false ? [null, null] : ['tool_calls', 'stop']);
  expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: tokens.prompt, total_completion_tokens: tokens.completion });
  await expectViewSaysProviderRan(recorded, 1);
  await sameOnNative(recorded);
  return doc;
}

/** `view` of either file shows the search under the model call that made it, run by the provider (not "not run"). */
async function expectViewSaysProviderRan(recorded: Recorded, localTools: number): Promise<void> {
  const files = filesOf(recorded.dir);
  for (const file of [files.atif, files.atof]) {
    const tools = all(await viewed(file)).filter((node) => node.kind === 'tool').map((node) => `${node.title}: ${node.note ?? ''}`);
    const [searches, others] = [tools.filter((t) => t.startsWith('tool web_search:')), tools.filter((t) => !t.startsWith('tool web_search:'))];
    expect(searches, file).toHaveLength(1);
    expect(searches[0], file).toMatch(/^tool web_search: \{"query":"Paris weather this week".* · run by the provider: 2 results$/);
    expect(others.filter((t) => t.includes('run') || t.includes('provider')), file).toEqual([]);
    expect(others, file).toHaveLength(localTools);
  }
}

/**
 * A run whose one model call searched and answered: one agent step with the search on it, nothing run, and the
 * call stopped (not `tool_calls`: the program had nothing to run). `finish`: what the framework reports, if any.
 */
async function checkSearchOnly(recorded: Recorded, searchId: string, finish: string | null): Promise<void> {
  const { doc, agent, atof } = await finishedRun(recorded);
  expect(agent.map((step) => (step.tool_calls as Step[] | undefined)?.map((call) => [call.tool_call_id, call.extra?.provider_executed]))).toEqual([[[searchId, true]]]);
  expect(agent[0]!.message).toBe('Sunny, 24C, a heat wave is coming.');
  expect((doc.steps as Step[]).some((step) => step.observation !== undefined)).toBe(false);
  expect(atof.filter((event) => event.category === 'tool')).toEqual([]);
  expect(recorded.log.filter((entry) => entry.hook === 'post_api_request').map((entry) => entry.payload.finish_reason)).toEqual([finish]);
  expect(recorded.log.find((entry) => entry.hook === 'on_session_end')?.payload).toMatchObject({ completed: true });
  await expectViewSaysProviderRan(recorded, 0);
  await sameOnNative(recorded);
}

describe('hosted tools: the AI SDK', () => {
  let uninstall: (() => void) | undefined;
  afterEach(() => {
    uninstall?.();
    uninstall = undefined;
  });

  for (const wire of ['responses', 'anthropic'] as const) {
    for (const mode of ['generateText', 'streamText'] as const) {
      it(`${wire === 'responses' ? 'openai.tools.webSearch()' : 'anthropic.tools.webSearch_20250305()'} beside a tool, ${mode}`, async () => {
        const searchId = wire === 'responses' ? 'ws_68a1' : 'srvtoolu_01Search';
        const fake = new FakeProvider()
          .reply(wire, { id: 'resp_1', model: 'model-2025', text: 'Let me check the forecast.', webSearches: [search(searchId)], toolCalls: [{ id: 'call_weather', name: 'weather', args: { city: 'Paris' } }], usage: { input: 900, output: 60 } }, { stream: mode === 'streamText' })
          .reply(wire, { id: 'resp_2', model: 'model-2025', text: 'Sunny, 24C, a heat wave is coming.', usage: { input: 1500, output: 20 } }, { stream: mode === 'streamText' });
        const recorded = recordedPlugin('hosted-ai-sdk');
        uninstall = instrumentAiSdk(recorded.hooks, { sessionId: `hosted-${wire}-${mode}` });
        const openai = createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
        const anthropic = createAnthropic({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
        const options = {
          model: wire === 'responses' ? openai('gpt-4.1') : anthropic('claude-sonnet-4-5'),
          prompt: 'What is the weather in Paris this week?',
          tools: {
            web_search: wire === 'responses' ? openai.tools.webSearch({}) : anthropic.tools.webSearch_20250305({ maxUses: 3 }),
            weather: aiTool({ description: 'Get the weather for a city', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => `${city}: sunny, 24C` }),
          },
          stopWhen: stepCountIs(3),
        };
        let usage: { inputTokens?: number; outputTokens?: number };
        if (mode === 'generateText') usage = (await generateText(options)).totalUsage;
        else {
          const result = streamText(options);
          await result.consumeStream();
          usage = await result.totalUsage;
        }
        expect(fake.requests).toHaveLength(2);
        uninstall();
        uninstall = undefined;
        await checkHosted(recorded, searchId, 'call_weather', { prompt: usage.inputTokens!, completion: usage.outputTokens! });
      });
    }

    it(`${wire}: a call that only searched and answered`, async () => {
      const searchId = wire === 'responses' ? 'ws_68a1' : 'srvtoolu_01Search';
      const fake = new FakeProvider().reply(wire, { id: 'resp_1', model: 'model-2025', text: 'Sunny, 24C, a heat wave is coming.', webSearches: [search(searchId)], usage: { input: 900, output: 60 } }, { stream: true });
      const recorded = recordedPlugin('hosted-ai-sdk-only');
      uninstall = instrumentAiSdk(recorded.hooks, { sessionId: `hosted-only-${wire}` });
      const openai = createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
      const anthropic = createAnthropic({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
      const result = streamText({
        model: wire === 'responses' ? openai('gpt-4.1') : anthropic('claude-sonnet-4-5'),
        prompt: 'What is the weather in Paris this week?',
        tools: { web_search: wire === 'responses' ? openai.tools.webSearch({}) : anthropic.tools.webSearch_20250305({ maxUses: 3 }) },
      });
      await result.consumeStream();
      expect(await result.finishReason).toBe('stop');
      uninstall();
      uninstall = undefined;
      await checkSearchOnly(recorded, searchId, 'stop');
    });

    it(`${wire}: aiSdkMiddleware alone (wrapLanguageModel), generated and streamed`, async () => {
      const searchId = wire === 'responses' ? 'ws_68a1' : 'srvtoolu_01Search';
      const turn = { id: 'resp_1', model: 'model-2025', text: 'Sunny, 24C, a heat wave is coming.', webSearches: [search(searchId)], usage: { input: 900, output: 60 } };
      const fake = new FakeProvider().reply(wire, turn).reply(wire, turn, { stream: true });
      const recorded = recordedPlugin('hosted-ai-sdk-mw');
      const openai = createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
      const anthropic = createAnthropic({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
      const model = wrapLanguageModel({ model: wire === 'responses' ? openai('gpt-4.1') : anthropic('claude-sonnet-4-5'), middleware: aiSdkMiddleware(recorded.hooks, { sessionId: `hosted-mw-${wire}` }) });
      const options = { model, prompt: 'What is the weather in Paris this week?', tools: { web_search: wire === 'responses' ? openai.tools.webSearch({}) : anthropic.tools.webSearch_20250305({ maxUses: 3 }) } };
      await generateText(options);
      await streamText(options).consumeStream();
      const { atif, atof } = await recorded.finish();
      const calls = (atif[0]!.steps as Step[]).filter((step) => step.source === 'agent').map((step) => step.tool_calls as Step[]);
      expect(calls).toHaveLength(2);
      for (const [hosted] of calls) {
        expect(hosted).toMatchObject({ tool_call_id: searchId, function_name: 'web_search', arguments: { query: 'Paris weather this week' }, extra: { provider_executed: true } });
        for (const source of SOURCES) expect(JSON.stringify(hosted!.extra.provider_result)).toContain(source.url);
      }
      expect(atof.filter((event) => event.category === 'tool')).toEqual([]);
      await sameOnNative(recorded);
    });
  }
});

describe('hosted tools: the OpenAI Agents SDK', () => {
  const instrument = instrumentEachTest();
  for (const stream of [false, true]) {
    for (const tracing of TRACING) {
      it(`webSearchTool() beside a function tool, run(${stream ? '{ stream: true }' : ''}) (${tracing})`, async () => {
        useTracing(tracing);
        const api = new FakeOpenAI({
          'gpt-4.1': [
            { text: 'Let me check the forecast.', webSearches: [search('ws_68a1')], calls: [{ id: 'call_weather', name: 'get_weather', args: { city: 'Paris' } }], usage: { input: 900, output: 60, cached: 0 } },
            { text: 'Sunny, 24C, a heat wave is coming.', usage: { input: 1500, output: 20, cached: 0 } },
          ],
        });
        const recorded = recordedPlugin('hosted-agents');
        instrument(recorded.hooks);
        const agent = new Agent({ name: 'Forecaster', instructions: 'Answer weather questions.', model: 'gpt-4.1', tools: [webSearchTool(), weatherTool()] });
        const runner = new Runner({ modelProvider: new OpenAIProvider({ openAIClient: api.client() }) });
        const input = 'What is the weather in Paris this week?';
        let usage;
        if (stream) {
          const result = await runner.run(agent, input, { stream: true });
          await result.completed;
          usage = result.state.usage;
        } else usage = (await runner.run(agent, input)).state.usage;
        expect(api.requests).toHaveLength(2);
        expect(api.requests[0]!.body.tools.map((t: Step) => t.type)).toEqual(['web_search', 'function']);
        await checkHosted(recorded, 'ws_68a1', 'call_weather', { prompt: usage.inputTokens, completion: usage.outputTokens });
      });
    }
  }

  it('a call that only searched and answered', async () => {
    useTracing('tracing off');
    const api = new FakeOpenAI({ 'gpt-4.1': [{ text: 'Sunny, 24C, a heat wave is coming.', webSearches: [search('ws_68a1')], usage: { input: 900, output: 60 } }] });
    const recorded = recordedPlugin('hosted-agents-only');
    instrument(recorded.hooks);
    const agent = new Agent({ name: 'Forecaster', instructions: 'Answer weather questions.', model: 'gpt-4.1', tools: [webSearchTool()] });
    const result = await new Runner({ modelProvider: new OpenAIProvider({ openAIClient: api.client() }) }).run(agent, 'What is the weather in Paris this week?');
    expect(result.finalOutput).toBe('Sunny, 24C, a heat wave is coming.');
    await checkSearchOnly(recorded, 'ws_68a1', 'stop');
  });
});

describe('hosted tools: LangChain', () => {
  const weather = lcTool(async ({ city }) => `${city}: sunny, 24C`, { name: 'get_weather', description: 'Get the weather for a city', schema: z.object({ city: z.string() }) });
  const usageTotals = (messages: unknown[]) => {
    let prompt = 0;
    let completion = 0;
    for (const message of messages as Array<{ usage_metadata?: { input_tokens: number; output_tokens: number } }>) {
      prompt += message.usage_metadata?.input_tokens ?? 0;
      completion += message.usage_metadata?.output_tokens ?? 0;
    }
    return { prompt, completion };
  };

  it("createAgent with ChatOpenAI and OpenAI's { type: 'web_search' } tool", async () => {
    const { fetch, requests } = scriptedFetch([
      openAiResponse({ id: 'resp_1', model: 'gpt-4.1-2025-04-14', text: 'Let me check the forecast.', webSearches: [search('ws_68a1')], toolCalls: [{ id: 'call_weather', name: 'get_weather', args: { city: 'Paris' } }], usage: { prompt_tokens: 900, completion_tokens: 60 } }),
      openAiResponse({ id: 'resp_2', model: 'gpt-4.1-2025-04-14', text: 'Sunny, 24C, a heat wave is coming.', usage: { prompt_tokens: 1500, completion_tokens: 20 } }),
    ]);
    const recorded = recordedPlugin('hosted-lc-openai');
    const model = new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, configuration: { fetch } });
    const agent = createAgent({ model, tools: [{ type: 'web_search' }, weather], systemPrompt: 'Answer weather questions.' });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'What is the weather in Paris this week?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)], configurable: { thread_id: 'hosted-lc-openai' } });
    expect(requests).toHaveLength(2);
    expect(requests[0]!.url).toMatch(/\/responses$/);
    // LangChain's Responses path reports no finish reason (the API has none; its `status` is `completed`).
    await checkHosted(recorded, 'ws_68a1', 'call_weather', usageTotals(result.messages), { finish: false });
  });

  it("createAgent with ChatAnthropic and Anthropic's web_search_20250305 server tool", async () => {
    const { fetch, requests } = scriptedFetch([
      anthropicMessage({ id: 'msg_01', model: 'claude-sonnet-4-5-20250929', content: [...webSearchBlocks(search('srvtoolu_01Search')), { type: 'text', text: 'Let me check the forecast.' }, { type: 'tool_use', id: 'toolu_01Weather', name: 'get_weather', input: { city: 'Paris' } }], usage: { input_tokens: 900, output_tokens: 60 } }),
      anthropicMessage({ id: 'msg_02', model: 'claude-sonnet-4-5-20250929', content: [{ type: 'text', text: 'Sunny, 24C, a heat wave is coming.' }], usage: { input_tokens: 1500, output_tokens: 20 } }),
    ]);
    const recorded = recordedPlugin('hosted-lc-anthropic');
    const model = new ChatAnthropic({ model: 'claude-sonnet-4-5', apiKey: 'sk-ant-test', maxRetries: 0, clientOptions: { fetch } });
    const agent = createAgent({ model, tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }, weather], systemPrompt: 'Answer weather questions.' });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'What is the weather in Paris this week?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)], configurable: { thread_id: 'hosted-lc-anthropic' } });
    expect(requests).toHaveLength(2);
    await checkHosted(recorded, 'srvtoolu_01Search', 'toolu_01Weather', usageTotals(result.messages));
  });

  it('ChatAnthropic.bindTools with the server tool: a call that only searched and answered', async () => {
    const { fetch } = scriptedFetch([
      anthropicMessage({ id: 'msg_01', model: 'claude-sonnet-4-5-20250929', content: [...webSearchBlocks(search('srvtoolu_01Search')), { type: 'text', text: 'Sunny, 24C, a heat wave is coming.' }], usage: { input_tokens: 900, output_tokens: 60 } }),
    ]);
    const recorded = recordedPlugin('hosted-lc-only');
    const model = new ChatAnthropic({ model: 'claude-sonnet-4-5', apiKey: 'sk-ant-test', maxRetries: 0, clientOptions: { fetch } }).bindTools([{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }]);
    const answer = await model.invoke('What is the weather in Paris this week?', { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(answer.tool_calls).toEqual([]);
    await checkSearchOnly(recorded, 'srvtoolu_01Search', 'stop');
  });
});
