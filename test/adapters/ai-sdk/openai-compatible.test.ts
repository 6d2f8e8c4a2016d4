// Local and third-party OpenAI-compatible servers, as `@ai-sdk/openai-compatible`'s docs write the program
// (`createOpenAICompatible({ name, baseURL })`), against a loopback server speaking their Chat Completions: Ollama
// (usage without details, and none in a stream unless the provider is created with `includeUsage`) and DeepSeek
// (`reasoning_content`, its cache hits as `prompt_cache_hit_tokens`). Each trajectory is held to what the program
// saw, what the SDK reports and what the server sent.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, stepCountIs, streamText } from 'ai';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { loopbackApi } from '../../support/doc-snippets.ts';
import { sameOnNative } from '../same-on-native.ts';
import { finishedRun, recordedPlugin, type AtifDoc, type Recorded } from '../support.ts';
import { FakeProvider, type Turn } from './wire.ts';
import { weather } from './weather-tool.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let api = new FakeProvider();
let server: { url: string; close(): Promise<void> };
beforeAll(async () => {
  server = await loopbackApi((url, init) => api.fetch(url, init));
});
afterAll(() => server.close());

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

type SdkStep = { usage: { inputTokens?: number; outputTokens?: number; inputTokenDetails: { cacheReadTokens?: number }; outputTokenDetails: { reasoningTokens?: number } }; response: { modelId: string }; finishReason: string };

/** The weather program's two answers from one server. */
function turns(server: 'ollama' | 'deepseek'): [Turn, Turn] {
  const model = server === 'ollama' ? 'llama3.2' : 'deepseek-reasoner';
  const reasoning = server === 'deepseek' ? 'The user wants Paris weather; call the tool.' : undefined;
  return [
    { server, id: 'chatcmpl-1', model, reasoning, text: server === 'ollama' ? undefined : 'Let me look that up.', toolCalls: [{ id: 'call_weather_1', name: 'weather', args: { city: 'Paris' } }], usage: { input: 180, output: 40, reasoning: server === 'deepseek' ? 24 : undefined } },
    { server, id: 'chatcmpl-2', model, text: 'It is sunny in Paris, 21°C.', usage: { input: 240, cached: server === 'deepseek' ? 128 : undefined, output: 15 } },
  ];
}

/** What every run must say, against the SDK's steps. */
async function checkRun(recorded: Recorded, steps: readonly SdkStep[], provider: string, totalUsage: { inputTokens?: number; outputTokens?: number }): Promise<AtifDoc[]> {
  const { doc } = await finishedRun(recorded);
  const agent = (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
  expect(doc.steps[0]).toMatchObject({ source: 'user', message: 'What is the weather in Paris?' });
  // Ollama's first answer is the tool call alone (no text).
  expect(agent.map((step) => step.message)).toEqual([provider === 'ollama.chat' ? '' : 'Let me look that up.', 'It is sunny in Paris, 21°C.']);
  expect(agent[0]!.tool_calls).toEqual([expect.objectContaining({ tool_call_id: 'call_weather_1', function_name: 'weather', arguments: { city: 'Paris' } })]);
  expect(JSON.parse(agent[0]!.observation.results[0].content)).toEqual({ city: 'Paris', forecast: 'sunny', tempC: 21 });
  // One LLM call per request, under the provider the SDK names, each with the model the server says answered.
  const requests = recorded.log.filter((entry) => entry.hook === 'pre_api_request');
  expect(requests).toHaveLength(api.requests.length);
  expect(requests.map((entry) => entry.payload.provider)).toEqual([provider, provider]);
  expect(agent.map((step) => step.model_name)).toEqual(steps.map((step) => step.response.modelId));
  expect(recorded.log.filter((entry) => entry.hook === 'post_api_request').map((entry) => entry.payload.finish_reason)).toEqual(['tool_calls', 'stop']);
  expect(steps.map((step) => step.finishReason)).toEqual(['tool-calls', 'stop']);
  // The run's totals are the SDK's (none when the server sent no usage).
  expect(doc.final_metrics.total_prompt_tokens).toBe(totalUsage.inputTokens);
  expect(doc.final_metrics.total_completion_tokens).toBe(totalUsage.outputTokens);
  return agent;
}

describe('@ai-sdk/openai-compatible: Ollama', () => {
  it('generateText with a tool loop: one call per request, the model, finish reasons and the tokens the SDK reports', async () => {
    api = new FakeProvider();
    const [first, second] = turns('ollama');
    api.reply('chat', first).reply('chat', second);
    const recorded = recordedPlugin('compatible-ollama-generate');
    uninstall = instrumentAiSdk(recorded.hooks);

    const ollama = createOpenAICompatible({ name: 'ollama', baseURL: `${server.url}/v1` });
    const result = await generateText({ model: ollama('llama3.2'), prompt: 'What is the weather in Paris?', tools: { weather }, stopWhen: stepCountIs(5) });

    expect(result.text).toBe('It is sunny in Paris, 21°C.');
    expect(api.requests.map((request) => new URL(request.url).pathname)).toEqual(['/v1/chat/completions', '/v1/chat/completions']);
    const agent = await checkRun(recorded, result.steps, 'ollama.chat', result.totalUsage);
    // Ollama states no cache; the SDK reports 0 cached tokens, and so does the trajectory.
    expect(agent.map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens, step.metrics.cached_tokens])).toEqual([
      [180, 40, 0],
      [240, 15, 0],
    ]);
    expect(agent.map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual(result.steps.map((step) => [step.usage.inputTokens, step.usage.outputTokens]));
    await sameOnNative(recorded);
  });

  for (const includeUsage of [false, true]) {
    it(`streamText ${includeUsage ? 'with' : 'without'} includeUsage: ${includeUsage ? 'the streamed usage, as the SDK reports it' : 'no usage on the wire, no token counts in the trajectory (not zeros)'}`, async () => {
      api = new FakeProvider();
      const [first, second] = turns('ollama');
      api.reply('chat', first, { stream: true }).reply('chat', second, { stream: true });
      const recorded = recordedPlugin(`compatible-ollama-stream-${includeUsage}`);
      uninstall = instrumentAiSdk(recorded.hooks);

      const ollama = createOpenAICompatible({ name: 'ollama', baseURL: `${server.url}/v1`, ...(includeUsage ? { includeUsage: true } : {}) });
      const result = streamText({ model: ollama('llama3.2'), prompt: 'What is the weather in Paris?', tools: { weather }, stopWhen: stepCountIs(5) });
      let streamed = '';
      for await (const delta of result.textStream) streamed += delta;

      expect(streamed).toBe('It is sunny in Paris, 21°C.');
      expect(api.requests.map((request) => request.body.stream_options)).toEqual(includeUsage ? [{ include_usage: true }, { include_usage: true }] : [undefined, undefined]);
      const steps = await result.steps;
      const totalUsage = await result.totalUsage;
      const agent = await checkRun(recorded, steps, 'ollama.chat', totalUsage);
      if (includeUsage) {
        expect(agent.map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual(steps.map((step) => [step.usage.inputTokens, step.usage.outputTokens]));
        expect(agent.map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual([
          [180, 40],
          [240, 15],
        ]);
      } else {
        expect(totalUsage.inputTokens).toBeUndefined();
        expect(agent.map((step) => step.metrics?.prompt_tokens)).toEqual([undefined, undefined]);
        expect(agent.map((step) => step.metrics?.completion_tokens)).toEqual([undefined, undefined]);
      }
    });
  }
});

describe('@ai-sdk/openai-compatible: DeepSeek', () => {
  for (const mode of ['generate', 'stream'] as const) {
    it(`${mode}: reasoning_content as the step's reasoning, reasoning tokens, and the cache hits DeepSeek reports`, async () => {
      api = new FakeProvider();
      const [first, second] = turns('deepseek');
      api.reply('chat', first, { stream: mode === 'stream' }).reply('chat', second, { stream: mode === 'stream' });
      const recorded = recordedPlugin(`compatible-deepseek-${mode}`);
      uninstall = instrumentAiSdk(recorded.hooks);

      const deepseek = createOpenAICompatible({ name: 'deepseek', apiKey: 'sk-test-not-a-key', baseURL: `${server.url}/v1`, includeUsage: true });
      const program = { model: deepseek('deepseek-reasoner'), prompt: 'What is the weather in Paris?', tools: { weather }, stopWhen: stepCountIs(5) };
      let steps: readonly SdkStep[];
      let reasoningText: Array<string | undefined>;
      let totalUsage: { inputTokens?: number; outputTokens?: number };
      if (mode === 'generate') {
        const result = await generateText(program);
        ({ steps, totalUsage } = result);
        reasoningText = result.steps.map((step) => step.reasoningText);
      } else {
        const result = streamText(program);
        await result.consumeStream();
        const streamedSteps = await result.steps;
        steps = streamedSteps;
        totalUsage = await result.totalUsage;
        reasoningText = streamedSteps.map((step) => step.reasoningText);
      }

      expect(reasoningText).toEqual(['The user wants Paris weather; call the tool.', undefined]);
      const agent = await checkRun(recorded, steps, 'deepseek.chat', totalUsage);
      expect(agent.map((step) => step.reasoning_content)).toEqual(reasoningText);
      // Tokens: prompt and completion as the SDK reports them; reasoning tokens are part of the completion.
      expect(agent.map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual(steps.map((step) => [step.usage.inputTokens, step.usage.outputTokens]));
      expect(steps[0]!.usage.outputTokenDetails.reasoningTokens).toBe(24);
      // The cache: DeepSeek states its hits as `prompt_cache_hit_tokens`, which @ai-sdk/openai-compatible does not
      // read (it reports 0 cached); the trajectory says what DeepSeek served from its cache.
      expect(steps.map((step) => step.usage.inputTokenDetails.cacheReadTokens)).toEqual([0, 0]);
      expect(agent.map((step) => step.metrics.cached_tokens ?? 0)).toEqual([0, 128]);
      if (mode === 'stream') await sameOnNative(recorded);
    });
  }
});
