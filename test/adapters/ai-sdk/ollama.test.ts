// Local models through Ollama's own API with the AI SDK, as its docs write the program with the community provider
// they list, `ollama-ai-provider-v2` (`createOllama({ baseURL })`, `ollama('llama3.2')`): generateText and streamText
// with a tool, thinking (`providerOptions.ollama.think`), a model that was never pulled. A loopback server speaks
// Ollama's `POST /api/chat` (wire.ts): JSON, or an NDJSON stream; tool calls without ids, `thinking`, `done_reason`,
// `prompt_eval_count`/`eval_count`. Each trajectory is held to what the SDK reports (steps, `totalUsage`, finish
// reasons, the tool call ids it made) and to the wire; the same hooks on native (where it loads) write the same files.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createOllama } from 'ollama-ai-provider-v2';
import { APICallError, generateText, stepCountIs, streamText } from 'ai';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { loopbackApi } from '../../support/doc-snippets.ts';
import { sameOnNative } from '../same-on-native.ts';
import { finishedRun, recordedPlugin, viewRows, type AtifDoc, type Recorded } from '../support.ts';
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

/** A call without an id after some thinking, `done_reason` stop; then the answer. */
const LOOP: Turn[] = [
  { id: '', model: 'qwen3', reasoning: 'Paris: ask the tool.', toolCalls: [{ id: '', name: 'weather', args: { city: 'Paris' } }], usage: { input: 180, output: 40 } },
  { id: '', model: 'qwen3', text: 'It is sunny in Paris, 21°C.', usage: { input: 240, output: 15 } },
];

type SdkStep = { usage: { inputTokens?: number; outputTokens?: number }; response: { modelId: string }; finishReason: string; reasoningText?: string; toolCalls: Array<{ toolCallId: string }> };
const posts = (recorded: Recorded) => recorded.log.filter((e) => e.hook === 'post_api_request').map((e) => e.payload as Record<string, any>);

/** What every run must say, against the SDK's steps and totals. */
async function checkRun(recorded: Recorded, steps: readonly SdkStep[], totalUsage: { inputTokens?: number; outputTokens?: number }): Promise<AtifDoc[]> {
  const { doc } = await finishedRun(recorded);
  const agent = (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
  expect(doc.steps[0]).toMatchObject({ source: 'user', message: 'What is the weather in Paris?' });
  expect(agent.map((step) => step.message)).toEqual(['', 'It is sunny in Paris, 21°C.']);
  // Ollama's call has no id: the provider made one, the one the SDK's step has.
  const id = steps[0]!.toolCalls[0]!.toolCallId;
  expect(id).toEqual(expect.any(String));
  expect(agent[0]!.tool_calls).toEqual([expect.objectContaining({ tool_call_id: id, function_name: 'weather', arguments: { city: 'Paris' } })]);
  expect(agent[0]!.observation.results[0]).toMatchObject({ source_call_id: id });
  expect(JSON.parse(agent[0]!.observation.results[0].content)).toEqual({ city: 'Paris', forecast: 'sunny', tempC: 21 });
  // The thinking is the first step's reasoning, as the SDK reports it.
  expect(agent.map((step) => step.reasoning_content)).toEqual(steps.map((step) => step.reasoningText));
  expect(agent[0]!.reasoning_content).toBe('Paris: ask the tool.');
  // One LLM call per request, with the model Ollama echoed.
  expect(recorded.log.filter((entry) => entry.hook === 'pre_api_request')).toHaveLength(api.requests.length);
  expect(agent.map((step) => step.model_name)).toEqual(steps.map((step) => step.response.modelId));
  expect(agent.map((step) => step.model_name)).toEqual(['qwen3', 'qwen3']);
  // done_reason stop after the call: the SDK says tool-calls, the trajectory tool_calls.
  expect(steps.map((step) => step.finishReason)).toEqual(['tool-calls', 'stop']);
  expect(posts(recorded).map((post) => post.finish_reason)).toEqual(['tool_calls', 'stop']);
  // Tokens: the SDK's, which are the wire's prompt_eval_count and eval_count.
  expect(agent.map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual(steps.map((step) => [step.usage.inputTokens, step.usage.outputTokens]));
  expect(agent.map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual([
    [180, 40],
    [240, 15],
  ]);
  expect([doc.final_metrics.total_prompt_tokens, doc.final_metrics.total_completion_tokens]).toEqual([totalUsage.inputTokens, totalUsage.outputTokens]);
  expect(totalUsage).toMatchObject({ inputTokens: 420, outputTokens: 55 });
  return agent;
}

describe('ollama-ai-provider-v2 through the AI SDK adapter', () => {
  for (const mode of ['generateText', 'streamText'] as const) {
    it(`${mode} with a tool and think: the call under the id the provider made, thinking, finish reasons, tokens = totalUsage = the wire`, async () => {
      api = new FakeProvider();
      for (const turn of LOOP) api.reply('ollama', turn, { stream: mode === 'streamText' });
      const recorded = recordedPlugin(`ai-ollama-${mode}`);
      uninstall = instrumentAiSdk(recorded.hooks);

      const ollama = createOllama({ baseURL: `${server.url}/api` });
      const program = { model: ollama('qwen3'), prompt: 'What is the weather in Paris?', tools: { weather }, stopWhen: stepCountIs(5), providerOptions: { ollama: { think: true } } };
      let steps: readonly SdkStep[];
      let totalUsage: { inputTokens?: number; outputTokens?: number };
      if (mode === 'generateText') {
        const result = await generateText(program);
        expect(result.text).toBe('It is sunny in Paris, 21°C.');
        ({ steps, totalUsage } = result);
      } else {
        const result = streamText(program);
        let streamed = '';
        for await (const delta of result.textStream) streamed += delta;
        expect(streamed).toBe('It is sunny in Paris, 21°C.');
        steps = await result.steps;
        totalUsage = await result.totalUsage;
      }
      expect(api.requests.map((request) => [new URL(request.url).pathname, request.body.stream, request.body.think])).toEqual(Array(2).fill(['/api/chat', mode === 'streamText', true]));
      await checkRun(recorded, steps, totalUsage);
      // `view`'s rows: the model Ollama echoed, the wire's counts, the call and the answer.
      expect(await viewRows(recorded, 'atif')).toEqual(['LLM qwen3  180 in / 40 out  → weather', 'tool weather  {"city":"Paris"}', 'LLM qwen3  240 in / 15 out  It is sunny in Paris, 21°C.']);
      await sameOnNative(recorded);
    });
  }

  it("a model that was never pulled: Ollama's 404 is a failed call with its status and message, the turn failed as the program caught it", async () => {
    api = new FakeProvider();
    api.fail('ollama', 404, 'model "llama9" not found, try pulling it first');
    const recorded = recordedPlugin('ai-ollama-404');
    uninstall = instrumentAiSdk(recorded.hooks);
    const ollama = createOllama({ baseURL: `${server.url}/api` });
    let caught: unknown;
    try {
      await generateText({ model: ollama('llama9'), prompt: 'Hello?', maxRetries: 0 });
    } catch (error) {
      caught = error;
    }
    expect(APICallError.isInstance(caught)).toBe(true);
    expect(caught).toMatchObject({ statusCode: 404 });
    const errors = recorded.log.filter((e) => e.hook === 'api_request_error').map((e) => e.payload);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ status_code: 404, error: { message: (caught as Error).message } });
    // The provider reads an error body of OpenAI's shape (`{error: {message}}`); Ollama's own (`{error: "..."}`) is
    // not, so the SDK's error says the HTTP status text, and Ollama's reason is only in its responseBody. The
    // trajectory says what the program caught.
    expect((caught as Error).message).toBe('Not Found');
    expect(JSON.parse((caught as APICallError).responseBody!)).toEqual({ error: 'model "llama9" not found, try pulling it first' });
    expect(recorded.log.find((e) => e.hook === 'on_session_end')!.payload).toMatchObject({ failed: true, error_message: (caught as Error).message });
    await recorded.finish();
    await sameOnNative(recorded);
  });
});
