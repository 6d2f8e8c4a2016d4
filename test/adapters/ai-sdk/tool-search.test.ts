// toolSearch() as the AI SDK's docs write it (03-ai-sdk-core/19-tool-search.mdx, direct tool calling: a deferred
// `weather` tool the model finds with `search`), and OpenAI's hosted tool search as @ai-sdk/openai's docs write it, over
// the Responses wire. The trajectory must show the search, what it found or loaded, that the next call was offered
// the tool found (and the first was not), and the call of that tool with its result.
import { afterEach, describe, expect, it } from 'vitest';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI, openai as openaiTools } from '@ai-sdk/openai';
import { generateText, isStepCount, streamText, tool, toolSearch } from 'ai';
import * as z from 'zod';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { anthropicMessage, anthropicStream, openAiResponse, scriptedFetch, serverToolBlocks, type AnthropicBlock } from '../../support/provider-wire.ts';
import { sameOnNative } from '../same-on-native.ts';
import { finishedRun, recordedPlugin, type AtifDoc } from '../support.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

const MODEL = 'gpt-4o-2024-08-06';

describe('toolSearch (direct tool calling)', () => {
  it('records the search, what it found, the tools each call was offered, and the found tool\'s call', async () => {
    const wire = scriptedFetch([
      openAiResponse({ id: 'resp_1', model: MODEL, toolCalls: [{ id: 'call_search', name: 'search', args: { query: 'weather forecast' } }], usage: { prompt_tokens: 50, completion_tokens: 10 } }),
      openAiResponse({ id: 'resp_2', model: MODEL, toolCalls: [{ id: 'call_weather', name: 'weather', args: { city: 'Bangalore' } }], usage: { prompt_tokens: 120, completion_tokens: 12 } }),
      openAiResponse({ id: 'resp_3', model: MODEL, text: 'Yes: rain tomorrow in Bangalore.', usage: { prompt_tokens: 160, completion_tokens: 9 } }),
    ]);
    const openai = createOpenAI({ apiKey: 'test-key', fetch: wire.fetch });
    const recorded = recordedPlugin('ai-tool-search');
    uninstall = instrumentAiSdk(recorded.hooks);

    const weather = tool({
      deferLoading: true,
      description: 'Get the weather forecast for a city.',
      inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }) => ({ city, forecast: 'Rain tomorrow.' }),
    });

    const result = await generateText({
      model: openai('gpt-4o'),
      tools: { search: toolSearch(), weather },
      stopWhen: isStepCount(5),
      prompt: 'Will it rain in Bangalore tomorrow?',
    });

    expect(result.text).toBe('Yes: rain tomorrow in Bangalore.');
    // What the provider was offered, call by call: the deferred tool only after the search found it.
    const sentTools = wire.requests.map((request) => (request.body.tools as Array<{ name: string }>).map((offered) => offered.name).sort());
    expect(sentTools).toEqual([['search'], ['search', 'weather'], ['search', 'weather']]);
    const searchResult = result.steps[0]!.toolResults[0]!;
    expect(searchResult.output).toEqual({ tools: [{ name: 'weather', description: 'Get the weather forecast for a city.' }] });

    const { doc } = await finishedRun(recorded);
    const agent = (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
    expect(agent.map((step) => (step.tool_calls ?? []).map((call: AtifDoc) => [call.tool_call_id, call.function_name, call.arguments]))).toEqual([
      [['call_search', 'search', { query: 'weather forecast' }]],
      [['call_weather', 'weather', { city: 'Bangalore' }]],
      [],
    ]);
    expect(JSON.parse(agent[0]!.observation.results[0].content)).toEqual(searchResult.output);
    expect(JSON.parse(agent[1]!.observation.results[0].content)).toEqual(result.steps[1]!.toolResults[0]!.output);
    expect(agent.map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual(result.steps.map((step) => [step.usage.inputTokens, step.usage.outputTokens]));
    // Each request hook names the tools that call was offered, as the wire did.
    const offered = recorded.log.filter((entry) => entry.hook === 'pre_api_request').map((entry) => JSON.stringify(entry.payload));
    expect(offered.map((payload) => payload.includes('Get the weather forecast for a city.'))).toEqual([false, true, true]);
    await sameOnNative(recorded);
  });
});

describe('OpenAI hosted tool search (openai.tools.toolSearch)', () => {
  // @ai-sdk/openai's docs (03-openai.mdx, "Server-Executed (Hosted) Tool Search"): OpenAI searches the deferred tools
  // and calls the one it loaded in the same response (`tool_search_call` and `tool_search_output`, `execution:
  // 'server'`, `call_id: null`, then the function call).
  it('records the search OpenAI ran, the tools it loaded, and the call of the loaded tool', async () => {
    const loaded = { type: 'function', name: 'get_weather', description: 'Get the current weather at a specific location', defer_loading: true, parameters: { type: 'object', properties: { location: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } }, required: ['location', 'unit'] } };
    const wire = scriptedFetch([
      openAiResponse({
        id: 'resp_1',
        model: MODEL,
        hostedItems: [
          { type: 'tool_search_call', id: 'tsc_1', execution: 'server', call_id: null, status: 'completed', arguments: { query: 'weather' } },
          { type: 'tool_search_output', id: 'tso_1', execution: 'server', call_id: null, status: 'completed', tools: [loaded] },
        ],
        toolCalls: [{ id: 'call_weather', name: 'get_weather', args: { location: 'San Francisco', unit: 'celsius' } }],
        usage: { prompt_tokens: 210, completion_tokens: 30 },
      }),
      openAiResponse({ id: 'resp_2', model: MODEL, text: 'It is 18°C in San Francisco.', usage: { prompt_tokens: 260, completion_tokens: 11 } }),
    ]);
    const openai = createOpenAI({ apiKey: 'test-key', fetch: wire.fetch });
    const recorded = recordedPlugin('ai-hosted-tool-search');
    uninstall = instrumentAiSdk(recorded.hooks);

    const result = await generateText({
      model: openai.responses('gpt-4o'),
      prompt: 'What is the weather in San Francisco?',
      stopWhen: isStepCount(10),
      tools: {
        toolSearch: openaiTools.tools.toolSearch(),
        get_weather: tool({
          description: 'Get the current weather at a specific location',
          inputSchema: z.object({ location: z.string(), unit: z.enum(['celsius', 'fahrenheit']) }),
          execute: async ({ location, unit }) => ({ location, temperature: unit === 'celsius' ? 18 : 64 }),
          providerOptions: { openai: { deferLoading: true } },
        }),
      },
    });

    expect(result.text).toBe('It is 18°C in San Francisco.');
    const searchCall = result.steps[0]!.toolCalls.find((call) => call.toolName === 'toolSearch')!;
    expect(searchCall.providerExecuted).toBe(true);
    const searchResult = result.steps[0]!.toolResults.find((entry) => entry.toolName === 'toolSearch')!;
    const { doc } = await finishedRun(recorded);
    const agent = (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
    expect(agent[0]!.tool_calls.map((call: AtifDoc) => [call.tool_call_id, call.function_name])).toEqual([
      [searchCall.toolCallId, 'toolSearch'],
      ['call_weather', 'get_weather'],
    ]);
    // A call the provider ran carries its result with it (`provider_result`), as the project's hosted tools do: the
    // tools the search loaded. The program's own call is answered in the observation.
    const calls = agent[0]!.tool_calls as AtifDoc[];
    expect(calls[0]!.extra).toMatchObject({ provider_executed: true });
    expect(calls[0]!.arguments).toEqual(JSON.parse(JSON.stringify(searchCall.input)));
    expect(calls[0]!.extra.provider_result).toEqual(searchResult.output);
    expect(calls[0]!.extra.provider_result.tools.map((loadedTool: AtifDoc) => loadedTool.name)).toEqual(['get_weather']);
    const results = agent[0]!.observation.results as AtifDoc[];
    expect(results.map((entry) => [entry.source_call_id, JSON.parse(entry.content)])).toEqual([['call_weather', { location: 'San Francisco', temperature: 18 }]]);
    expect(agent.map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual(result.steps.map((step) => [step.usage.inputTokens, step.usage.outputTokens]));
    await sameOnNative(recorded);
  });
});

describe('Anthropic tool search (anthropic.tools.toolSearchBm25_20251119, toolSearchRegex_20251119)', () => {
  // @ai-sdk/anthropic's tool factories (their JSDoc): a provider-executed search over the tools sent with
  // `providerOptions.anthropic.deferLoading`. Anthropic runs it inside the call (`server_tool_use` named
  // `tool_search_tool_bm25` or `tool_search_tool_regex`, then `tool_search_tool_result` with `tool_references`) and the
  // model calls the tool it loaded in the same message.
  const CLAUDE = 'claude-sonnet-4-5-20250929';
  const weatherTool = () =>
    tool({
      description: 'Get the current weather at a specific location',
      inputSchema: z.object({ location: z.string() }),
      execute: async ({ location }) => ({ location, temperature: 18 }),
      providerOptions: { anthropic: { deferLoading: true } },
    });
  const searchContent = (name: 'tool_search_tool_bm25' | 'tool_search_tool_regex', input: Record<string, unknown>, content: unknown): AnthropicBlock[] => [
    ...serverToolBlocks('srvtoolu_search', name, input, 'tool_search_tool_result', content),
    { type: 'tool_use', id: 'toolu_weather', name: 'get_weather', input: { location: 'San Francisco' } },
  ];

  for (const mode of ['generateText', 'streamText'] as const) {
    it(`${mode}: records the search Anthropic ran, the tools it loaded, and the call of the loaded tool`, async () => {
      const bm25 = mode === 'generateText';
      const name = bm25 ? 'tool_search_tool_bm25' : 'tool_search_tool_regex';
      const input = bm25 ? { query: 'weather' } : { pattern: 'weather' };
      const content = searchContent(name, input, { type: 'tool_search_tool_search_result', tool_references: [{ type: 'tool_reference', tool_name: 'get_weather' }] });
      const reply = bm25 ? anthropicMessage : anthropicStream;
      const wire = scriptedFetch([
        reply({ id: 'msg_1', model: CLAUDE, content, usage: { input_tokens: 400, output_tokens: 60, cache_read_input_tokens: 100 } }),
        reply({ id: 'msg_2', model: CLAUDE, content: [{ type: 'text', text: 'It is 18°C in San Francisco.' }], usage: { input_tokens: 520, output_tokens: 12 } }),
      ]);
      const anthropic = createAnthropic({ apiKey: 'test-key', fetch: wire.fetch });
      const recorded = recordedPlugin(`ai-anthropic-tool-search-${mode}`);
      uninstall = instrumentAiSdk(recorded.hooks);
      const options = {
        model: anthropic('claude-sonnet-4-5'),
        prompt: 'What is the weather in San Francisco?',
        stopWhen: isStepCount(5),
        tools: { toolSearch: bm25 ? anthropic.tools.toolSearchBm25_20251119() : anthropic.tools.toolSearchRegex_20251119(), get_weather: weatherTool() },
      };
      const result = bm25 ? await generateText(options) : streamText(options);
      const steps = await result.steps;

      expect(await result.text).toBe('It is 18°C in San Francisco.');
      // The deferred tool went to Anthropic marked so; the search tool as Anthropic's own type.
      const sent = wire.requests[0]!.body.tools as Array<{ name: string; type?: string; defer_loading?: boolean }>;
      expect(sent.map((offered) => [offered.name, offered.type ?? 'custom', offered.defer_loading ?? false])).toEqual([
        [name, `${name}_20251119`, false],
        ['get_weather', 'custom', true],
      ]);
      const searchCall = steps[0]!.toolCalls.find((call) => call.toolName === 'toolSearch')!;
      expect([searchCall.toolCallId, searchCall.providerExecuted]).toEqual(['srvtoolu_search', true]);
      const searchResult = steps[0]!.toolResults.find((entry) => entry.toolName === 'toolSearch')!;
      expect(searchResult.output).toEqual([{ type: 'tool_reference', toolName: 'get_weather' }]);

      const { doc } = await finishedRun(recorded);
      const agent = (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
      const calls = agent[0]!.tool_calls as AtifDoc[];
      expect(calls.map((call) => [call.tool_call_id, call.function_name, call.arguments])).toEqual([
        ['srvtoolu_search', 'toolSearch', input],
        ['toolu_weather', 'get_weather', { location: 'San Francisco' }],
      ]);
      expect(calls[0]!.extra).toMatchObject({ provider_executed: true, provider_result: searchResult.output });
      const results = agent[0]!.observation.results as AtifDoc[];
      expect(results.map((entry) => [entry.source_call_id, JSON.parse(entry.content)])).toEqual([['toolu_weather', { location: 'San Francisco', temperature: 18 }]]);
      expect(agent.map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens, step.metrics.cached_tokens])).toEqual(steps.map((step) => [step.usage.inputTokens, step.usage.outputTokens, step.usage.inputTokenDetails.cacheReadTokens]));
      await sameOnNative(recorded);
    });
  }

  it('a search Anthropic could not run is a failed provider call, with its error code', async () => {
    const content: AnthropicBlock[] = serverToolBlocks('srvtoolu_search', 'tool_search_tool_regex', { pattern: '(' }, 'tool_search_tool_result', { type: 'tool_search_tool_result_error', error_code: 'invalid_pattern' });
    content.push({ type: 'text', text: 'I could not search the tools.' });
    const wire = scriptedFetch([anthropicMessage({ id: 'msg_1', model: CLAUDE, content, usage: { input_tokens: 300, output_tokens: 20 } })]);
    const anthropic = createAnthropic({ apiKey: 'test-key', fetch: wire.fetch });
    const recorded = recordedPlugin('ai-anthropic-tool-search-error');
    uninstall = instrumentAiSdk(recorded.hooks);

    const result = await generateText({
      model: anthropic('claude-sonnet-4-5'),
      prompt: 'What is the weather in San Francisco?',
      tools: { toolSearch: anthropic.tools.toolSearchRegex_20251119(), get_weather: weatherTool() },
    });

    const failed = result.steps[0]!.content.find((part) => part.type === 'tool-error')!;
    expect(failed).toMatchObject({ toolCallId: 'srvtoolu_search', providerExecuted: true, error: { errorCode: 'invalid_pattern' } });
    const { doc } = await finishedRun(recorded);
    const call = ((doc.steps as AtifDoc[]).find((step) => step.source === 'agent')!.tool_calls as AtifDoc[])[0]!;
    expect([call.tool_call_id, call.function_name]).toEqual(['srvtoolu_search', 'toolSearch']);
    expect(call.arguments).toEqual({ pattern: '(' });
    expect(call.extra).toMatchObject({ provider_executed: true, provider_error: 'invalid_pattern', provider_result: { type: 'tool_search_tool_result_error', errorCode: 'invalid_pattern' } });
    await sameOnNative(recorded);
  });
});
