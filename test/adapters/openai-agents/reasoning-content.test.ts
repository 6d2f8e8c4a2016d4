// The Agents SDK's Chat Completions model on a provider that sends its reasoning as `reasoning_content` (DeepSeek), as
// the SDK's docs write a program for another provider: an `OpenAIChatCompletionsModel` on an `openai` client pointed
// at it, or that client made the default with `setOpenAIAPI('chat_completions')` and the model by name; run and
// streamed, against a fake DeepSeek speaking its own JSON and SSE (`reasoning_content` in the message, in each delta).
// The SDK reads only `reasoning`, so its answer has no reasoning item: the step's reasoning is what DeepSeek sent, read
// from the raw completion the SDK keeps (or the chunks it passes on). A server that sends both fields (vLLM) has its
// reasoning recorded once, from the item the SDK made of `reasoning`. Text and tokens are the SDK's.
import { beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { Agent, OpenAIChatCompletionsModel, run, setDefaultOpenAIClient, setOpenAIAPI, type ModelResponse, type RunResult, type StreamedRunResult } from '@openai/agents';
import { sameOnNative } from '../same-on-native.ts';
import { expectNothingLost, recordedPlugin } from '../support.ts';
import { FakeProvider, type Turn } from '../ai-sdk/wire.ts';
import { agentSteps, expectRunsClosed, hooks, instrumentEachTest, observation, onlyTrajectory, sdkTotals, tokenTotals, useTracing, weatherTool } from './support.ts';

// One fake and one client for the file: the SDK's default provider keeps the first default client it gets.
const provider = new FakeProvider();
const client = new OpenAI({ apiKey: 'sk-test-not-a-key', baseURL: 'https://fake-deepseek.test/v1', fetch: provider.fetch as typeof fetch, maxRetries: 0 });
beforeAll(() => {
  setDefaultOpenAIClient(client);
  setOpenAIAPI('chat_completions');
});
const instrument = instrumentEachTest();

const PLAN = 'The user asks about Oslo. I should call get_weather with city Oslo.';
const THOUGHT = 'The tool says sunny. Answer in one sentence.';
const ANSWER = 'It is sunny in Oslo.';

const SERVERS: ReadonlyArray<{ server: NonNullable<Turn['server']>; model: string }> = [
  { server: 'deepseek', model: 'deepseek-reasoner' },
  { server: 'vllm', model: 'Qwen/Qwen3-8B' },
];
const PROGRAMS = [
  { how: 'an OpenAIChatCompletionsModel', model: (name: string) => new OpenAIChatCompletionsModel(client, name) },
  { how: "setOpenAIAPI('chat_completions')", model: (name: string) => name },
];

function scriptTurns(server: NonNullable<Turn['server']>, model: string, stream: boolean): void {
  provider
    .reply('chat', { id: 'chatcmpl-plan', model, server, reasoning: PLAN, toolCalls: [{ id: 'call_oslo', name: 'get_weather', args: { city: 'Oslo' } }], usage: { input: 90, output: 40, reasoning: 24 } }, { stream })
    .reply('chat', { id: 'chatcmpl-answer', model, server, reasoning: THOUGHT, text: ANSWER, usage: { input: 150, output: 30, reasoning: 12 } }, { stream });
}

/** What the program reads of each call's reasoning as the provider sent it: the raw completion's message (kept as `providerData`). */
function sentReasoning(response: ModelResponse, field: 'reasoning' | 'reasoning_content'): unknown {
  return response.providerData?.choices?.[0]?.message?.[field];
}

/** The reasoning items the SDK made of an answer (of `reasoning` only). */
function sdkReasoning(response: ModelResponse): string[] {
  return response.output.flatMap((item) => (item.type === 'reasoning' ? (item.rawContent ?? []).map((part) => part.text) : []));
}

function sdkText(response: ModelResponse): string {
  return response.output.flatMap((item) => (item.type === 'message' && item.role === 'assistant' ? item.content.map((part) => (part.type === 'output_text' ? part.text : '')) : [])).join('');
}

describe("OpenAI Agents SDK, Chat Completions: a provider's reasoning_content", () => {
  for (const { server, model } of SERVERS) {
    for (const program of PROGRAMS) {
      for (const stream of [false, true]) {
        it(`${server}, ${program.how}${stream ? ', streamed' : ''}: each step's reasoning is what the provider sent, once; text and tokens the SDK's`, async () => {
          useTracing(stream ? 'tracing on' : 'tracing off');
          const asked = provider.requests.length;
          scriptTurns(server, model, stream);
          const recorded = recordedPlugin(`agents-reasoning-content-${server}${stream ? '-stream' : ''}`);
          instrument(recorded.hooks);
          const agent = new Agent({ name: 'Weather Agent', instructions: 'Answer weather questions.', model: program.model(model), tools: [weatherTool()] });

          // What the provider sent of each call's reasoning, as the program reads it: the raw completions the SDK keeps,
          // or the chunks it passes on as they stream (a call's first is its `response_started`).
          let result: RunResult<any, any> | StreamedRunResult<any, any>;
          let sent: string[];
          if (!stream) {
            result = await run(agent, 'Weather in Oslo?');
            sent = result.rawResponses.map((response) => sentReasoning(response, 'reasoning_content') as string);
            // vLLM says it twice; the SDK read the one it knows.
            expect(result.rawResponses.map((response) => sentReasoning(response, 'reasoning'))).toEqual(server === 'vllm' ? [PLAN, THOUGHT] : [undefined, undefined]);
          } else {
            const streamed = await run(agent, 'Weather in Oslo?', { stream: true });
            sent = [];
            for await (const event of streamed) {
              if (event.type !== 'raw_model_stream_event') continue;
              if (event.data.type === 'response_started') sent.push('');
              const delta = event.data.type === 'model' ? (event.data.event as { choices?: Array<{ delta?: { reasoning_content?: string } }> }).choices?.[0]?.delta : undefined;
              if (delta?.reasoning_content !== undefined) sent[sent.length - 1] += delta.reasoning_content;
            }
            await streamed.completed;
            result = streamed;
          }
          expect(result.finalOutput).toBe(ANSWER);
          expect(sent).toEqual([PLAN, THOUGHT]);
          // The SDK made a reasoning item only of vLLM's `reasoning`.
          expect(result.rawResponses.map(sdkReasoning)).toEqual(server === 'vllm' ? [[PLAN], [THOUGHT]] : [[], []]);

          const { atif, counters } = await recorded.finish();
          expectNothingLost(counters);
          expectRunsClosed(recorded);
          const doc = onlyTrajectory(atif);
          const steps = agentSteps(doc);
          expect(steps.map((step) => step.reasoning_content)).toEqual(sent);
          expect(steps.map((step) => step.message)).toEqual(result.rawResponses.map(sdkText));
          expect(observation(doc, 'call_oslo')?.content).toBe('The weather in Oslo is sunny.');
          expect(steps.map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual(result.rawResponses.map((response) => [response.usage.inputTokens, response.usage.outputTokens]));
          expect(steps.map((step) => step.metrics.extra?.completion_tokens_details?.reasoning_tokens ?? 0)).toEqual(
            result.rawResponses.map((response) => response.usage.outputTokensDetails.reduce((sum, details) => sum + (details.reasoning_tokens ?? 0), 0)),
          );
          expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage));

          // The second request holds the first answer's reasoning only where the SDK sent it back (vLLM's, as `reasoning`).
          const sentBack = provider.requests[asked + 1]!.body.messages.find((message: Record<string, unknown>) => message.role === 'assistant');
          expect(sentBack.reasoning).toBe(server === 'vllm' ? PLAN : undefined);
          const recordedBack = hooks(recorded, 'pre_api_request')[1]!.request.body.messages.find((message: Record<string, unknown>) => message.role === 'assistant');
          expect(recordedBack.reasoning_content).toBe(sentBack.reasoning);
          await sameOnNative(recorded);
        }, 60_000);
      }
    }
  }
});
