// LangChain through Azure OpenAI, as @langchain/openai's docs write the program: `AzureChatOpenAI` with the
// deployment, the API version, the instance name and the key, in `createAgent`, invoked and streamed, against Azure's
// Chat Completions on a fake fetch (`configuration: { fetch }`, so the URLs are the ones Azure is reached at). The
// trajectory is held to what Azure sent and LangChain reports (azure-checks.ts), on memory and native: the deployment
// asked and the model that answered, the counts, an answer the content filter cut, a prompt it refused.
import { describe, expect, it } from 'vitest';
import type { AIMessage, BaseMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { AzureChatOpenAI } from '@langchain/openai';
import { createAgent } from 'langchain';
import * as z from 'zod';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { API_VERSION, checkAzureRun, checkFilteredAnswer, checkRefusedPrompt, filteredTurn, serveWeather, DEPLOYMENT, FILTERED_TEXT, PROMPT, RESOURCE } from './azure-checks.ts';
import { FakeProvider } from './ai-sdk/wire.ts';
import { sameOnNative } from './same-on-native.ts';
import { recordedPlugin } from './support.ts';

const TOOL = 'get_weather';
const getWeather = tool(async ({ city }) => `It is sunny and 21C in ${city}.`, { name: TOOL, description: 'Get the weather for a city', schema: z.object({ city: z.string() }) });

/** The URL AzureChatOpenAI reaches the deployment at. */
const URL = `https://${RESOURCE}.openai.azure.com/openai/deployments/${DEPLOYMENT}/chat/completions?api-version=${API_VERSION}`;

/**
 * What a request of createAgent's model says it asked for. The agent binds its tools to the model, and
 * AzureChatOpenAI's `bindTools` makes a plain ChatOpenAI that reaches the deployment through the Azure client but no
 * longer names it: LangChain reports (`ls_model_name`) and sends (the body's `model`, which Azure ignores) its default
 * model. The step's model is still the one Azure says answered; docs/adapters/langchain.md says to set `model`.
 */
const BOUND_MODEL = 'gpt-3.5-turbo';

/** The model as the docs make it, on the fake wire. */
function azureModel(api: FakeProvider, model?: string) {
  return new AzureChatOpenAI({
    ...(model === undefined ? {} : { model }),
    azureOpenAIApiDeploymentName: DEPLOYMENT,
    azureOpenAIApiVersion: API_VERSION,
    azureOpenAIApiInstanceName: RESOURCE,
    azureOpenAIApiKey: 'azure-test-not-a-key',
    configuration: { fetch: api.fetch },
  });
}

/** An AI message's response_metadata, as AzureChatOpenAI fills it (typed as unknown by @langchain/core). */
const metadataOf = (message: BaseMessage): Record<string, any> => message.response_metadata as Record<string, any>;

/** What LangChain reported of each call (the AI messages' `usage_metadata`); it names the provider `azure`. */
function reportOf(messages: BaseMessage[]) {
  const answers = messages.filter((message): message is AIMessage => message.getType() === 'ai');
  return {
    tokens: answers.map((message) => [message.usage_metadata?.input_tokens, message.usage_metadata?.output_tokens] as const),
    cached: answers.map((message) => message.usage_metadata?.input_token_details?.cache_read ?? 0),
    provider: 'azure',
  };
}

describe('LangChain AzureChatOpenAI', () => {
  for (const named of [false, true]) {
    it(`createAgent invoked${named ? ', the model named as the deployment' : ''}: the model asked, the model that answered, the counts`, async () => {
      const api = serveWeather(false, TOOL);
      const recorded = recordedPlugin('azure-langchain');
      const agent = createAgent({ model: azureModel(api, named ? DEPLOYMENT : undefined), tools: [getWeather], name: 'weather_agent' });

      const result = await agent.invoke({ messages: [{ role: 'user', content: PROMPT }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });

      expect(result.messages.at(-1)?.content).toBe('It is sunny in Paris, 21°C.');
      expect(api.requests.map((request) => request.body.model)).toEqual(named ? [DEPLOYMENT, DEPLOYMENT] : [BOUND_MODEL, BOUND_MODEL]);
      const answers = result.messages.filter((message) => message.getType() === 'ai');
      const report = { ...reportOf(result.messages), models: answers.map((message) => metadataOf(message).model_name) };
      await checkAzureRun(recorded, api, report, { urls: [URL, URL], tool: TOOL, sessionModel: false, asked: named ? DEPLOYMENT : BOUND_MODEL });
      await sameOnNative(recorded);
    });
  }

  it('createAgent streamed: the same, no response of the chunk of no choices Azure opens with', async () => {
    const api = serveWeather(true, TOOL);
    const recorded = recordedPlugin('azure-langchain-stream');
    const agent = createAgent({ model: azureModel(api), tools: [getWeather], name: 'weather_agent' });

    let streamed = '';
    let messages: BaseMessage[] = [];
    const stream = await agent.stream({ messages: [{ role: 'user', content: PROMPT }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)], streamMode: ['messages', 'values'] });
    for await (const [mode, value] of stream) {
      if (mode === 'values') messages = value.messages;
      else if (value[0].getType() === 'ai' && typeof value[0].content === 'string') streamed += value[0].content;
    }

    expect(streamed).toBe('It is sunny in Paris, 21°C.');
    expect(api.requests.map((request) => request.body.stream)).toEqual([true, true]);
    await checkAzureRun(recorded, api, reportOf(messages), { urls: [URL, URL], tool: TOOL, sessionModel: false, asked: BOUND_MODEL });
    await sameOnNative(recorded);
  });

  for (const stream of [false, true]) {
    it(`an answer the content filter cut (${stream ? 'streamed' : 'invoked'}): finish content_filter, not stop`, async () => {
      const api = new FakeProvider().reply('chat', filteredTurn(), { stream });
      const recorded = recordedPlugin(`azure-langchain-filtered-${stream}`);
      const model = azureModel(api);
      const handler = new NemoRelayCallbackHandler(recorded.hooks);

      let message: BaseMessage;
      if (stream) {
        let merged: BaseMessage | undefined;
        for await (const chunk of await model.stream(PROMPT, { callbacks: [handler] })) merged = merged === undefined ? chunk : (merged as any).concat(chunk);
        message = merged!;
      } else message = await model.invoke(PROMPT, { callbacks: [handler] });

      expect(message.content).toBe(FILTERED_TEXT);
      expect(metadataOf(message).finish_reason).toBe('content_filter');
      await checkFilteredAnswer(recorded);
      await sameOnNative(recorded);
    });
  }

  for (const stream of [false, true]) {
    it(`a prompt the content filter refused (${stream ? 'streamed' : 'invoked'}): a failed call with Azure's error`, async () => {
      const api = new FakeProvider().azurePromptFiltered();
      const recorded = recordedPlugin(`azure-langchain-refused-${stream}`);
      const agent = createAgent({ model: azureModel(api), tools: [getWeather], name: 'weather_agent' });
      const config = { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] };

      const thrown = await (stream ? (async () => {
        for await (const _ of await agent.stream({ messages: [{ role: 'user', content: PROMPT }] }, config)) {
          // read, as a UI would
        }
      })() : agent.invoke({ messages: [{ role: 'user', content: PROMPT }] }, config)).then(() => undefined, (error: unknown) => error);

      // AzureChatOpenAI does not retry a 400: one request, one failed call.
      expect(api.requests).toHaveLength(1);
      expect(thrown).toMatchObject({ status: 400, code: 'content_filter' });
      await checkRefusedPrompt(recorded, thrown as Error);
      await sameOnNative(recorded);
    });
  }

});
