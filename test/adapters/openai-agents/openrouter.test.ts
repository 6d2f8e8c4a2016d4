// The Agents SDK through OpenRouter, as its docs write a program for another provider: an `openai` client pointed at
// OpenRouter made the default (`setDefaultOpenAIClient`) with Chat Completions (`setOpenAIAPI('chat_completions')`)
// and the model by name, or an `OpenAIChatCompletionsModel` on that client; against a loopback OpenRouter speaking its
// own Chat Completions (the routed model, the upstream provider, `reasoning`, cache reads and writes, and the cost it
// charged in `usage.cost`, in the stream's last chunk when streamed). The trajectory is held to what OpenRouter sent
// and the SDK reports (openrouter-checks.ts), on memory and native.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { Agent, OpenAIChatCompletionsModel, run, setDefaultOpenAIClient, setOpenAIAPI, type RunResult, type StreamedRunResult } from '@openai/agents';
import { aisdk } from '@openai/agents-extensions/ai-sdk';
import { createOpenRouter } from '@openrouter/ai-sdk-provider';
import { checkOpenRouterRun, loopbackOpenRouter, openrouterTurns, ANSWERED, ASKED, PROMPT, type LoopbackOpenRouter } from '../openrouter-checks.ts';
import { sameOnNative } from '../same-on-native.ts';
import { recordedPlugin } from '../support.ts';
import { instrumentEachTest, useTracing, weatherTool } from './support.ts';

let server: LoopbackOpenRouter;
let client: OpenAI;
beforeAll(async () => {
  server = await loopbackOpenRouter();
  // The program's setup, as the SDK's docs write it for another provider.
  client = new OpenAI({ baseURL: server.url, apiKey: 'sk-or-v1-test-not-a-key' });
  setDefaultOpenAIClient(client);
  setOpenAIAPI('chat_completions');
});
afterAll(() => server.close());

const instrument = instrumentEachTest();
const getWeather = weatherTool();
const TOOL = 'get_weather';

/** What the program reads of each answer as OpenRouter sent it: the upstream that served it and the cache writes. */
interface RawFacts {
  readonly servedBy: ReadonlyArray<string | undefined>;
  readonly cacheWrites: ReadonlyArray<number | undefined>;
}

/** The raw completions a Chat Completions model keeps as each response's `providerData`. */
function completionFacts(result: RunResult<any, any>): RawFacts {
  return {
    servedBy: result.rawResponses.map((response) => response.providerData?.provider),
    cacheWrites: result.rawResponses.map((response) => response.providerData?.usage?.prompt_tokens_details?.cache_write_tokens),
  };
}

/**
 * What the SDK reported of each call (`rawResponses`, whose usage `result.state.usage` adds up), and what the program
 * reads of the answers as OpenRouter sent them. The SDK's Chat Completions model reads
 * `prompt_tokens_details.cached_tokens` only: OpenRouter's cache writes (`cache_write_tokens`, 900 in the first call)
 * are not in its usage, but in the raw answer, and so in the trajectory's `cached_tokens` (reads and writes, as for the
 * AI SDK and LangChain).
 */
function reportOf(result: RunResult<any, any> | StreamedRunResult<any, any>, raw: RawFacts) {
  const sdkCached = result.rawResponses.map((response) => response.usage.inputTokensDetails.reduce((sum, details) => sum + (details.cached_tokens ?? 0), 0));
  const sdkWrites = result.rawResponses.map((response) => response.usage.inputTokensDetails.reduce((sum, details) => sum + (details.cache_write_tokens ?? 0), 0));
  const report = {
    tokens: result.rawResponses.map((response) => [response.usage.inputTokens, response.usage.outputTokens] as const),
    cached: sdkCached.map((reads, index) => reads + (raw.cacheWrites[index] ?? 0)),
    reasoningTokens: result.rawResponses.map((response) => response.usage.outputTokensDetails.reduce((sum, details) => sum + (details.reasoning_tokens ?? 0), 0)),
    provider: 'openai',
    servedBy: raw.servedBy,
  };
  // The SDK's usage: the reads, no writes; the raw answers: the writes.
  expect([sdkCached, sdkWrites, raw.cacheWrites]).toEqual([
    [0, 1310],
    [0, 0],
    [900, 0],
  ]);
  expect([report.cached, report.reasoningTokens]).toEqual([
    [900, 1310],
    [12, 0],
  ]);
  expect(result.state.usage).toMatchObject({ inputTokens: 2410, outputTokens: 67 });
  return report;
}

describe('OpenAI Agents SDK through OpenRouter', () => {
  it('run() on the default client with Chat Completions: steps, models, tokens, reasoning and the cost OpenRouter charged', async () => {
    useTracing('tracing off');
    const api = server.serve(false, TOOL);
    const recorded = recordedPlugin('openrouter-agents');
    instrument(recorded.hooks);

    const agent = new Agent({ name: 'Weather Agent', instructions: 'You are a helpful weather assistant.', model: ASKED, tools: [getWeather] });
    const result = await run(agent, PROMPT);

    expect(result.finalOutput).toBe('It is sunny in Paris, 21°C.');
    // The SDK keeps each completion as it came (`providerData`): OpenRouter's model, provider and cost are there.
    expect(result.rawResponses.map((response) => [response.providerData?.model, response.providerData?.provider, response.providerData?.usage?.cost])).toEqual(
      openrouterTurns().map((turn) => [ANSWERED, turn.provider, turn.cost]),
    );
    await checkOpenRouterRun(recorded, api, reportOf(result, completionFacts(result)), { tool: TOOL });
    await sameOnNative(recorded);
  });

  it('a streamed run: the same, the usage and the cost from the stream\'s last chunk', async () => {
    useTracing('tracing on');
    const api = server.serve(true, TOOL);
    const recorded = recordedPlugin('openrouter-agents-stream');
    instrument(recorded.hooks);

    const agent = new Agent({ name: 'Weather Agent', instructions: 'You are a helpful weather assistant.', model: ASKED, tools: [getWeather] });
    const result = await run(agent, PROMPT, { stream: true });
    let streamed = '';
    // The upstream serving each call and its cache writes, as the program reads them from the raw chunks the SDK passes
    // on (OpenRouter's `provider` on every chunk, its usage on the last): the streamed responses keep no completion.
    const servedBy: string[] = [];
    const cacheWrites: Array<number | undefined> = [];
    for await (const event of result) {
      if (event.type !== 'raw_model_stream_event') continue;
      if (event.data.type === 'output_text_delta') streamed += event.data.delta;
      const chunk = event.data.type === 'model' ? (event.data.event as { provider?: string; usage?: { prompt_tokens_details?: { cache_write_tokens?: number } } }) : undefined;
      if (chunk?.usage === undefined) continue;
      servedBy.push(chunk.provider!);
      cacheWrites.push(chunk.usage.prompt_tokens_details?.cache_write_tokens);
    }
    await result.completed;

    expect(streamed).toBe('Let me look that up.It is sunny in Paris, 21°C.');
    expect(api.requests.map((request) => request.body.stream)).toEqual([true, true]);
    await checkOpenRouterRun(recorded, api, reportOf(result, { servedBy, cacheWrites }), { tool: TOOL });
    await sameOnNative(recorded);
  });

  it('an OpenAIChatCompletionsModel on the OpenRouter client: each call costs what OpenRouter charged', async () => {
    useTracing('tracing off');
    const api = server.serve(false, TOOL);
    const recorded = recordedPlugin('openrouter-agents-model');
    instrument(recorded.hooks);

    const agent = new Agent({ name: 'Weather Agent', instructions: 'You are a helpful weather assistant.', model: new OpenAIChatCompletionsModel(client, ASKED), tools: [getWeather] });
    const result = await run(agent, PROMPT);

    expect(result.finalOutput).toBe('It is sunny in Paris, 21°C.');
    // The model object keeps the name asked for private (docs/adapters/openai-agents.md): the session names none.
    await checkOpenRouterRun(recorded, api, reportOf(result, completionFacts(result)), { tool: TOOL, sessionModel: false });
  });

  for (const stream of [false, true]) {
    it(`aisdk() on @openrouter/ai-sdk-provider${stream ? ', streamed' : ''}: each call's cost is what OpenRouter charged, and its upstream the one it says served it`, async () => {
      useTracing('tracing off');
      const api = server.serve(stream, TOOL);
      const recorded = recordedPlugin(`openrouter-agents-aisdk${stream ? '-stream' : ''}`);
      instrument(recorded.hooks);

      // As the Agents SDK's docs write a model of the AI SDK: the provider package's model, given to aisdk().
      const openrouter = createOpenRouter({ apiKey: 'sk-or-v1-test-not-a-key', baseURL: server.url });
      const agent = new Agent({ name: 'Weather Agent', instructions: 'You are a helpful weather assistant.', model: aisdk(openrouter(ASKED)), tools: [getWeather] });
      // What the program reads of each call: the AI SDK's provider metadata, in the result aisdk() keeps or the
      // stream's `finish` parts.
      const metadata: Array<Record<string, any> | undefined> = [];
      let result: RunResult<any, any> | StreamedRunResult<any, any>;
      if (!stream) {
        result = await run(agent, PROMPT);
        metadata.push(...result.rawResponses.map((response) => response.providerData?.providerMetadata?.openrouter));
      } else {
        const streamed = await run(agent, PROMPT, { stream: true });
        for await (const event of streamed) {
          const part = event.type === 'raw_model_stream_event' && event.data.type === 'model' ? (event.data.event as { type?: string; providerMetadata?: Record<string, any> }) : undefined;
          if (part?.type === 'finish') metadata.push(part.providerMetadata?.openrouter);
        }
        await streamed.completed;
        result = streamed;
      }

      expect(result.finalOutput).toBe('It is sunny in Paris, 21°C.');
      const turns = openrouterTurns(TOOL);
      expect(metadata.map((entry) => [entry?.provider, entry?.usage?.cost])).toEqual(turns.map((turn) => [turn.provider, turn.cost]));
      // aisdk() hands the SDK the AI SDK's usage, cache writes with the reads.
      const report = {
        tokens: result.rawResponses.map((response) => [response.usage.inputTokens, response.usage.outputTokens] as const),
        cached: result.rawResponses.map((response) => response.usage.inputTokensDetails.reduce((sum, details) => sum + (details.cached_tokens ?? 0) + (details.cache_write_tokens ?? 0), 0)),
        reasoningTokens: result.rawResponses.map((response) => response.usage.outputTokensDetails.reduce((sum, details) => sum + (details.reasoning_tokens ?? 0), 0)),
        provider: recorded.log.find((entry) => entry.hook === 'pre_api_request')!.payload.provider as string,
        servedBy: metadata.map((entry) => entry?.provider),
      };
      expect(report.cached).toEqual([900, 1310]);
      // aisdk() keeps the model it wraps private: the session names none.
      await checkOpenRouterRun(recorded, api, report, { tool: TOOL, sessionModel: false });
      await sameOnNative(recorded);
    });
  }
});
