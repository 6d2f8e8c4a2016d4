// ChatVertexAI (`@langchain/google-vertexai`, on @langchain/google-common) as LangChain's docs write the program:
// `createAgent` with a tool, invoked and streamed, and `model.invoke` alone, with an API key (Vertex AI's express
// mode), so no Google credentials: the package posts to `https://aiplatform.googleapis.com/v1/publishers/google/
// models/<model>:generateContent` (`:streamGenerateContent`, streamed) with `X-Goog-Api-Key`. It takes neither a
// `fetch` nor a base URL in that mode (its `endpoint` is for the project-and-location URL, which needs Google auth), and
// its client keeps the global `fetch` it found when built: the test builds the model while `fetch` is a fake that
// speaks Gemini's wire (test/adapters/ai-sdk/wire.ts), the stream as Vertex sends it without `alt=sse`, one JSON
// array of the responses. The answer's `finishReason`, `usageMetadata` (`thoughtsTokenCount`,
// `cachedContentTokenCount`), function calls without ids; a 429's status, which google-common keeps only on the
// error's `response`. Each trajectory is held to what the program got and to the wire; the same hooks on native
// write the same files.
import { describe, expect, it } from 'vitest';
import { ChatVertexAI } from '@langchain/google-vertexai';
import { AIMessage, AIMessageChunk, type BaseMessage } from '@langchain/core/messages';
import { createAgent } from 'langchain';
import { FakeProvider, type Turn } from './ai-sdk/wire.ts';
import { finishedRun, recordedPlugin, type AtifDoc } from './support.ts';
import { sameOnNative } from './same-on-native.ts';
import { getWeather, agentSteps, posts, handler } from './langchain-checks.ts';

const MODEL = 'gemini-2.5-flash';
/** What Vertex reports as `modelVersion`; google-common keeps it nowhere on the message. */
const VERSION = 'gemini-2.5-flash-preview-05-20';

/**
 * Vertex's `streamGenerateContent` without `alt=sse`: the same responses as the SSE stream's frames, as one JSON array
 * sent piece by piece. The fake answers in SSE; this turns its frames into that array.
 */
function asVertexStream(fake: FakeProvider) {
  return async (input: unknown, init?: RequestInit): Promise<Response> => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : String((input as { url?: unknown }).url);
    const response = await fake.fetch(url, init as { body?: unknown });
    if (!url.includes(':streamGenerateContent') || !response.ok) return response;
    const frames = (await response.text())
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => line.slice('data: '.length));
    return new Response(`[${frames.join(',\r\n')}]`, { headers: { 'content-type': 'application/json; charset=UTF-8' } });
  };
}

/** ChatVertexAI as its docs build it with an API key, built while the global fetch is the fake; the next requests get `turns`. */
function vertex(turns: Turn[], stream: boolean, fail?: { status: number; message: string }): { model: ChatVertexAI; fake: FakeProvider } {
  const fake = new FakeProvider();
  if (fail !== undefined) fake.fail('gemini', fail.status, fail.message);
  for (const turn of turns) fake.reply('gemini', turn, { stream });
  const saved = globalThis.fetch;
  globalThis.fetch = asVertexStream(fake) as typeof fetch;
  try {
    return { model: new ChatVertexAI({ model: MODEL, apiKey: 'vertex-test-not-a-key', maxRetries: 0 }), fake };
  } finally {
    globalThis.fetch = saved;
  }
}


/** Thoughts, a text and two function calls; then the answer, read partly from the cache. */
const LOOP: Turn[] = [
  {
    id: 'vtx-resp-1',
    model: VERSION,
    reasoning: 'Two cities: ask for both at once.',
    text: 'Checking both.',
    toolCalls: [
      { id: '', name: 'get_weather', args: { city: 'Paris' } },
      { id: '', name: 'get_weather', args: { city: 'Rome' } },
    ],
    usage: { input: 120, output: 14, reasoning: 40 },
  },
  { id: 'vtx-resp-2', model: VERSION, text: 'It is sunny in Paris and in Rome.', usage: { input: 260, cached: 160, output: 17 } },
];

type Usage = { input_tokens: number; output_tokens: number; total_tokens: number; input_token_details?: { cache_read?: number }; output_token_details?: { reasoning?: number } };
/** The AI messages' usage_metadata: [input, output, cache read, total, reasoning]. */
const reported = (messages: BaseMessage[]): number[][] =>
  messages
    .map((m) => (m as AIMessage).usage_metadata as Usage | undefined)
    .filter((usage) => usage !== undefined)
    .map((u) => [u.input_tokens, u.output_tokens, u.input_token_details?.cache_read ?? 0, u.total_tokens, u.output_token_details?.reasoning ?? 0]);
/** Each step's [prompt, completion, cached, total, reasoning] tokens. */
const recordedCounts = (doc: AtifDoc): number[][] =>
  agentSteps(doc).map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens, step.metrics.cached_tokens ?? 0, step.metrics.extra?.total_tokens, step.metrics.extra?.completion_tokens_details?.reasoning_tokens ?? 0]);
/** What Gemini billed each turn: [prompt, candidates + thoughts, cached, total, thoughts]. */
const billed = (turns: Turn[]): number[][] =>
  turns.map(({ usage }) => [usage.input, usage.output + (usage.reasoning ?? 0), usage.cached ?? 0, usage.input + usage.output + (usage.reasoning ?? 0), usage.reasoning ?? 0]);

describe('ChatVertexAI (express mode, an API key) in createAgent, through the LangChain adapter', () => {
  for (const mode of ['invoke', 'stream'] as const) {
    it(`${mode === 'invoke' ? 'agent.invoke' : 'agent.stream (streamMode "messages")'}: the calls under LangChain's ids with their results, tokens as Gemini billed them, STOP after calls is tool_calls`, async () => {
      const { model, fake } = vertex(LOOP, mode === 'stream');
      const agent = createAgent({ model, tools: [getWeather], systemPrompt: 'You answer weather questions.' });
      const recorded = recordedPlugin(`lc-vertex-agent-${mode}`);
      const input = { messages: [{ role: 'user', content: 'What is the weather in Paris and Rome?' }] };
      let messages: BaseMessage[] = [];
      if (mode === 'invoke') messages = (await agent.invoke(input, handler(recorded))).messages;
      else {
        let tokens = 0;
        for await (const [kind, value] of await agent.stream(input, { ...handler(recorded), streamMode: ['messages', 'values'] })) {
          if (kind === 'messages' && AIMessageChunk.isInstance((value as [BaseMessage, unknown])[0])) tokens += 1;
          if (kind === 'values') messages = (value as { messages: BaseMessage[] }).messages;
        }
        expect(tokens).toBeGreaterThan(2);
      }
      expect(fake.requests.map((request) => request.url)).toEqual(Array(2).fill(`https://aiplatform.googleapis.com/v1/publishers/google/models/${MODEL}:${mode === 'stream' ? 'streamGenerateContent' : 'generateContent'}`));
      expect(fake.requests[0]!.body.systemInstruction).toMatchObject({ parts: [{ text: 'You answer weather questions.' }] });
      const answers = messages.filter((m) => AIMessage.isInstance(m) || AIMessageChunk.isInstance(m)) as AIMessage[];
      expect(answers.map((m) => m.text)).toEqual(['Checking both.', 'It is sunny in Paris and in Rome.']);
      const ids = answers[0]!.tool_calls!.map((call) => call.id!);
      expect(new Set(ids).size).toBe(2);

      const { doc, agent: steps } = await finishedRun(recorded);
      expect(steps.map((step) => step.message)).toEqual(answers.map((m) => m.text));
      // The thought parts (google-common's `reasoning` blocks) are the step's reasoning.
      expect(steps.map((step) => step.reasoning_content)).toEqual(['Two cities: ask for both at once.', undefined]);
      expect(steps[0]!.tool_calls.map((call: AtifDoc) => [call.tool_call_id, call.function_name, call.arguments])).toEqual([
        [ids[0], 'get_weather', { city: 'Paris' }],
        [ids[1], 'get_weather', { city: 'Rome' }],
      ]);
      expect(steps[0]!.observation.results.map((r: AtifDoc) => [r.source_call_id, r.content])).toEqual([
        [ids[0], 'It is sunny in Paris.'],
        [ids[1], 'It is sunny in Rome.'],
      ]);
      // Tokens as Gemini billed them: google-common's usage_metadata counts the thoughts in output_tokens and apart as
      // reasoning, and the cache read once.
      expect(reported(answers)).toEqual(billed(LOOP));
      expect(recordedCounts(doc)).toEqual(billed(LOOP));
      // google-common keeps Gemini's finishReason as `finish_reason`: STOP after function calls is tool_calls.
      expect(posts(recorded).map((post) => post.finish_reason)).toEqual(['tool_calls', 'stop']);
      // The answer's modelVersion is kept nowhere: the model asked for, under ChatVertexAI's provider name.
      expect(steps.map((step) => step.model_name)).toEqual([MODEL, MODEL]);
      expect(recorded.log.filter((e) => e.hook === 'pre_api_request').map((e) => [e.payload.model, e.payload.provider])).toEqual(Array(2).fill([MODEL, 'google_vertexai']));
      await sameOnNative(recorded);
    });
  }
});

describe('ChatVertexAI on its own, through the LangChain adapter', () => {
  for (const mode of ['invoke', 'stream'] as const) {
    it(`model.${mode}() cut by MAX_TOKENS: the text, length, the tokens`, async () => {
      const { model } = vertex([{ id: 'vtx-resp-3', model: VERSION, text: 'The weather in Paris is', finish: 'MAX_TOKENS', usage: { input: 90, output: 8 } }], mode === 'stream');
      const recorded = recordedPlugin(`lc-vertex-alone-${mode}`);
      let answer: AIMessage | AIMessageChunk;
      if (mode === 'invoke') answer = await model.invoke('What is the weather in Paris?', handler(recorded));
      else {
        let merged: AIMessageChunk | undefined;
        for await (const chunk of await model.stream('What is the weather in Paris?', handler(recorded))) merged = merged === undefined ? chunk : merged.concat(chunk);
        answer = merged!;
      }
      expect(answer.text).toBe('The weather in Paris is');
      const { doc, agent: steps } = await finishedRun(recorded);
      expect(steps.map((step) => step.message)).toEqual(['The weather in Paris is']);
      expect(recordedCounts(doc)).toEqual([[90, 8, 0, 98, 0]]);
      expect(posts(recorded).map((post) => post.finish_reason)).toEqual(['length']);
      await sameOnNative(recorded);
    });
  }

  for (const [status, message] of [
    [429, 'Resource exhausted. Please try again later.'],
    [400, 'Invalid JSON payload received. Unknown name "foo" at \'generation_config\': Cannot find field.'],
  ] as const) {
    it(`model.invoke() refused with ${status}: a failed call with Vertex's status, the turn failed with what the program caught`, async () => {
      const { model } = vertex([], false, { status, message });
      const recorded = recordedPlugin(`lc-vertex-${status}`);
      let caught: Error | undefined;
      try {
        await model.invoke('Hello?', handler(recorded));
      } catch (error) {
        caught = error as Error;
      }
      // google-common's error: its message has the status and the body; the status itself only on its `response`.
      expect(caught!.message).toContain(`Google request failed with status code ${status}: `);
      expect((caught as Error & { response: Response }).response.status).toBe(status);
      expect(recorded.log.filter((e) => e.hook === 'api_request_error').map((e) => e.payload)).toMatchObject([{ status_code: status, error: { message: caught!.message } }]);
      expect(recorded.log.find((e) => e.hook === 'on_session_end')!.payload).toMatchObject({ failed: true, error_message: caught!.message });
      await sameOnNative(recorded);
    });
  }
});
