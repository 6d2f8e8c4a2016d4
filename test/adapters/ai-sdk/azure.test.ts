// The AI SDK through Azure OpenAI, as @ai-sdk/azure's docs write the program (4.x and 3.x) (`createAzure({ resourceName, apiKey })`,
// `azure('deployment')` on the Responses API, `azure.chat('deployment')` on Chat Completions, a tool loop under
// `stopWhen`), against Azure's wire on a fake fetch (the provider's `fetch` option, so the URLs are the ones Azure is
// reached at). The trajectory is held to what Azure sent and the SDK reports (azure-checks.ts), on memory and native:
// the deployment asked and the model that answered, the counts, an answer the content filter cut, a prompt it refused.
import { afterEach, describe, expect, it } from 'vitest';
import { createAzure } from '@ai-sdk/azure';
import { createAzure as createAzure3 } from '@ai-sdk/azure-3';
import { generateText, stepCountIs, streamText } from 'ai';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { checkAzureRun, checkFilteredAnswer, checkRefusedPrompt, filteredTurn, serveWeather, DEPLOYMENT, FILTERED_TEXT, PROMPT, RESOURCE } from '../azure-checks.ts';
import { sameOnNative } from '../same-on-native.ts';
import { recordedPlugin } from '../support.ts';
import { FakeProvider } from './wire.ts';
import { weather } from './weather-tool.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

/**
 * Both majors of the package: 4.x declares Node >= 22, so on Node 20 npm installs 3.x (test/support/ai-sdk-providers.ts
 * says why), which speaks the older provider specification `ai` 7 adapts.
 */
const MAJORS = [
  ['4.x', createAzure],
  ['3.x', createAzure3],
] as const;

/** The URLs @ai-sdk/azure reaches a deployment at: the v1 API, the deployment named in the body. */
const URLS = {
  responses: `https://${RESOURCE}.openai.azure.com/openai/v1/responses?api-version=v1`,
  chat: `https://${RESOURCE}.openai.azure.com/openai/v1/chat/completions?api-version=v1`,
};

type SdkStep = { usage: { inputTokens?: number; outputTokens?: number; inputTokenDetails: { cacheReadTokens?: number } }; response: { modelId: string } };

/** What the SDK reported of the run; it names the provider `azure.responses` or `azure.chat`. */
function reportOf(steps: readonly SdkStep[], api: 'responses' | 'chat') {
  return {
    models: steps.map((step) => step.response.modelId),
    tokens: steps.map((step) => [step.usage.inputTokens, step.usage.outputTokens] as const),
    cached: steps.map((step) => step.usage.inputTokenDetails.cacheReadTokens ?? 0),
    provider: `azure.${api}`,
  };
}

describe.each(MAJORS)('Azure OpenAI from the AI SDK (@ai-sdk/azure %s)', (major, create) => {
  /** The provider as its docs make it, on the fake wire. */
  const azureOn = (api: FakeProvider) => create({ resourceName: RESOURCE, apiKey: 'azure-test-not-a-key', fetch: api.fetch });

  for (const api of ['responses', 'chat'] as const) {
    for (const stream of [false, true]) {
      it(`${stream ? 'streamText' : 'generateText'} on ${api === 'responses' ? "azure('deployment') (Responses)" : 'azure.chat(deployment)'}: the deployment asked, the model that answered, the counts`, async () => {
        const fake = serveWeather(stream, 'weather', api);
        const recorded = recordedPlugin(`azure-${major}-${api}-${stream ? 'stream' : 'generate'}`);
        uninstall = instrumentAiSdk(recorded.hooks);

        const azure = azureOn(fake);
        const model = api === 'responses' ? azure(DEPLOYMENT) : azure.chat(DEPLOYMENT);
        let steps: readonly SdkStep[];
        if (stream) {
          const result = streamText({ model, prompt: PROMPT, tools: { weather }, stopWhen: stepCountIs(5) });
          let streamed = '';
          for await (const delta of result.textStream) streamed += delta;
          expect(streamed).toBe('It is sunny in Paris, 21°C.');
          steps = await result.steps;
        } else {
          const result = await generateText({ model, prompt: PROMPT, tools: { weather }, stopWhen: stepCountIs(5) });
          expect(result.text).toBe('It is sunny in Paris, 21°C.');
          steps = result.steps;
        }

        // The deployment is the body's model; Azure answers with the model behind it.
        expect(fake.requests.map((request) => request.body.model)).toEqual([DEPLOYMENT, DEPLOYMENT]);
        await checkAzureRun(recorded, fake, reportOf(steps, api), { urls: [URLS[api], URLS[api]] });
        await sameOnNative(recorded);
      });
    }
  }

  for (const stream of [false, true]) {
    it(`${stream ? 'streamText' : 'generateText'} whose answer the content filter cut: finish content_filter, not stop`, async () => {
      const fake = new FakeProvider().reply('chat', filteredTurn(), { stream });
      const recorded = recordedPlugin(`azure-${major}-filtered-${stream}`);
      uninstall = instrumentAiSdk(recorded.hooks);

      const model = azureOn(fake).chat(DEPLOYMENT);
      let finish: string;
      let text: string;
      if (stream) {
        const result = streamText({ model, prompt: PROMPT });
        text = await result.text;
        finish = await result.finishReason;
      } else {
        const result = await generateText({ model, prompt: PROMPT });
        [text, finish] = [result.text, result.finishReason];
      }

      expect([text, finish]).toEqual([FILTERED_TEXT, 'content-filter']);
      await checkFilteredAnswer(recorded);
      await sameOnNative(recorded);
    });
  }

  for (const stream of [false, true]) {
    it(`${stream ? 'streamText' : 'generateText'} on a prompt the content filter refused: a failed call with Azure's error`, async () => {
      const fake = new FakeProvider().azurePromptFiltered();
      const recorded = recordedPlugin(`azure-${major}-refused-${stream}`);
      uninstall = instrumentAiSdk(recorded.hooks);

      const model = azureOn(fake)(DEPLOYMENT);
      // generateText throws Azure's error; streamText hands it to onError (its text then has no output to give).
      let thrown: unknown;
      if (stream) {
        const result = streamText({ model, prompt: PROMPT, onError: ({ error }) => void (thrown = error) });
        await result.consumeStream();
      } else {
        try {
          await generateText({ model, prompt: PROMPT });
        } catch (error) {
          thrown = error;
        }
      }

      // A 400 is not retried: one request, one failed call.
      expect(fake.requests).toHaveLength(1);
      expect(thrown).toBeInstanceOf(Error);
      await checkRefusedPrompt(recorded, thrown as Error);
      await sameOnNative(recorded);
    });
  }
});
