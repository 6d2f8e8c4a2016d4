// The Agents SDK through Azure OpenAI, as its docs write a program for another provider: the `openai` package's
// AzureOpenAI client (`endpoint`, `apiVersion`, `deployment`) made the default (`setDefaultOpenAIClient`) with Chat
// Completions (`setOpenAIAPI('chat_completions')`) and the deployment as the agent's model, or an
// `OpenAIChatCompletionsModel` on that client; against Azure's Chat Completions on a fake fetch (the client's `fetch`
// option, so the URLs are the ones Azure is reached at). The trajectory is held to what Azure sent and the SDK reports
// (azure-checks.ts), on memory and native: the deployment asked and the model that answered, the counts, an answer the
// content filter cut, a prompt it refused.
import { beforeAll, describe, expect, it } from 'vitest';
import { AzureOpenAI } from 'openai';
import { Agent, OpenAIChatCompletionsModel, run, setDefaultOpenAIClient, setOpenAIAPI, type RunResult, type StreamedRunResult } from '@openai/agents';
import { API_VERSION, checkAzureRun, checkFilteredAnswer, checkRefusedPrompt, filteredTurn, serveWeather, ANSWERED, DEPLOYMENT, FILTERED_TEXT, PROMPT, RESOURCE } from '../azure-checks.ts';
import { FakeProvider } from '../ai-sdk/wire.ts';
import { sameOnNative } from '../same-on-native.ts';
import { recordedPlugin } from '../support.ts';
import { instrumentEachTest, useTracing, weatherTool } from './support.ts';

/** Azure's wire for the test under way: the client's fetch asks it. */
let api = new FakeProvider();
let client: AzureOpenAI;
beforeAll(() => {
  // The program's setup, as the SDK's docs write it for another provider.
  client = new AzureOpenAI({ endpoint: `https://${RESOURCE}.openai.azure.com`, apiVersion: API_VERSION, deployment: DEPLOYMENT, apiKey: 'azure-test-not-a-key', fetch: (url, init) => api.fetch(url, init) });
  setDefaultOpenAIClient(client);
  setOpenAIAPI('chat_completions');
});

const instrument = instrumentEachTest();
const getWeather = weatherTool();
const TOOL = 'get_weather';

/** The URL the AzureOpenAI client reaches the deployment at. */
const URL = `https://${RESOURCE}.openai.azure.com/openai/deployments/${DEPLOYMENT}/chat/completions?api-version=${API_VERSION}`;

const weatherAgent = (model: string | OpenAIChatCompletionsModel = DEPLOYMENT) => new Agent({ name: 'Weather Agent', instructions: 'You are a helpful weather assistant.', model, tools: [getWeather] });

/** What the SDK reported of each call (`rawResponses`); its provider name for a Chat Completions model is `openai`. */
function reportOf(result: RunResult<any, any> | StreamedRunResult<any, any>) {
  return {
    tokens: result.rawResponses.map((response) => [response.usage.inputTokens, response.usage.outputTokens] as const),
    cached: result.rawResponses.map((response) => response.usage.inputTokensDetails.reduce((sum, details) => sum + (details.cached_tokens ?? 0), 0)),
    provider: 'openai',
  };
}

describe('OpenAI Agents SDK through Azure OpenAI', () => {
  it('run() on the default AzureOpenAI client with Chat Completions: the deployment asked, the model that answered, the counts', async () => {
    useTracing('tracing off');
    api = serveWeather(false, TOOL);
    const recorded = recordedPlugin('azure-agents');
    instrument(recorded.hooks);

    const result = await run(weatherAgent(), PROMPT);

    expect(result.finalOutput).toBe('It is sunny in Paris, 21°C.');
    // The SDK keeps each completion as it came (`providerData`): Azure's model and its filter's verdicts are there.
    expect(result.rawResponses.map((response) => [response.providerData?.model, response.providerData?.prompt_filter_results?.length])).toEqual([
      [ANSWERED, 1],
      [ANSWERED, 1],
    ]);
    await checkAzureRun(recorded, api, reportOf(result), { urls: [URL, URL], tool: TOOL });
    await sameOnNative(recorded);
  });

  it('a streamed run: the same, no response of the chunk of no choices Azure opens with', async () => {
    useTracing('tracing on');
    api = serveWeather(true, TOOL);
    const recorded = recordedPlugin('azure-agents-stream');
    instrument(recorded.hooks);

    const result = await run(weatherAgent(), PROMPT, { stream: true });
    let streamed = '';
    for await (const event of result) if (event.type === 'raw_model_stream_event' && event.data.type === 'output_text_delta') streamed += event.data.delta;
    await result.completed;

    expect(streamed).toBe('It is sunny in Paris, 21°C.');
    expect(api.requests.map((request) => request.body.stream)).toEqual([true, true]);
    await checkAzureRun(recorded, api, reportOf(result), { urls: [URL, URL], tool: TOOL });
    await sameOnNative(recorded);
  });

  it('an OpenAIChatCompletionsModel on the AzureOpenAI client: the same, but the requests name no model', async () => {
    useTracing('tracing off');
    api = serveWeather(false, TOOL);
    const recorded = recordedPlugin('azure-agents-model');
    instrument(recorded.hooks);

    const result = await run(weatherAgent(new OpenAIChatCompletionsModel(client, DEPLOYMENT)), PROMPT);

    expect(result.finalOutput).toBe('It is sunny in Paris, 21°C.');
    // The model object keeps the name asked for private (docs/adapters/openai-agents.md, "What it cannot see"): the
    // requests and the session name none; each step names the model Azure answered with.
    await checkAzureRun(recorded, api, reportOf(result), { urls: [URL, URL], tool: TOOL, sessionModel: false, asked: undefined });
  });

  for (const stream of [false, true]) {
    it(`an answer the content filter cut (${stream ? 'streamed' : 'run'}): finish content_filter, not stop`, async () => {
      useTracing('tracing off');
      api = new FakeProvider().reply('chat', filteredTurn(), { stream });
      const recorded = recordedPlugin(`azure-agents-filtered-${stream}`);
      instrument(recorded.hooks);

      const agent = new Agent({ name: 'Weather Agent', instructions: 'You are a helpful weather assistant.', model: DEPLOYMENT });
      let output: unknown;
      if (stream) {
        const result = await run(agent, PROMPT, { stream: true });
        await result.completed;
        output = result.finalOutput;
      } else output = (await run(agent, PROMPT)).finalOutput;

      expect(output).toBe(FILTERED_TEXT);
      await checkFilteredAnswer(recorded);
      await sameOnNative(recorded);
    });
  }

  for (const stream of [false, true]) {
    it(`a prompt the content filter refused (${stream ? 'streamed' : 'run'}): a failed call with Azure's error`, async () => {
      useTracing('tracing off');
      api = new FakeProvider().azurePromptFiltered();
      const recorded = recordedPlugin(`azure-agents-refused-${stream}`);
      instrument(recorded.hooks);

      const thrown = await (stream ? run(weatherAgent(), PROMPT, { stream: true }).then((result) => result.completed) : run(weatherAgent(), PROMPT)).then(
        () => undefined,
        (error: unknown) => error,
      );

      // The client does not retry a 400: one request, one failed call.
      expect(api.requests).toHaveLength(1);
      expect(thrown).toMatchObject({ status: 400, code: 'content_filter' });
      await checkRefusedPrompt(recorded, thrown as Error);
      await sameOnNative(recorded);
    });
  }
});
