// Gemini through LangChain, as LangChain's docs write it: `ChatGoogleGenerativeAI` from `@langchain/google-genai` in
// `createAgent` with tools and on its own, invoked and streamed, over a loopback server speaking the Gemini API's
// JSON and SSE (`generateContent`, `streamGenerateContent?alt=sse`; test/adapters/ai-sdk/wire.ts): thought parts and
// `thoughtsTokenCount`, `cachedContentTokenCount`, `functionCall` parts without ids, `finishReason`, `modelVersion`.
// The client takes no `fetch`, only a `baseUrl`, hence the loopback. Each trajectory is held to what the program got
// (the messages' `usage_metadata`, tool call ids, texts) and to what went over the wire: the tokens are the wire's
// `usageMetadata` as the AI SDK's runs count it (thoughts are completion and reasoning tokens, the cache read once),
// where LangChain's `usage_metadata` leaves the thoughts out of `output_tokens` and, streamed, adds up the cache count
// each chunk repeats. The same hooks on native (where it loads) write the same files.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatGoogleGenerativeAI } from '@langchain/google-genai';
import { AIMessage, AIMessageChunk, type BaseMessage } from '@langchain/core/messages';
import { createAgent } from 'langchain';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { loopbackApi } from '../support/doc-snippets.ts';
import { FakeProvider, type Turn } from './ai-sdk/wire.ts';
import { finishedRun, recordedPlugin, viewRows, type AtifDoc } from './support.ts';
import { sameOnNative } from './same-on-native.ts';
import { getWeather, posts } from './langchain-checks.ts';

const MODEL = 'gemini-2.5-flash';
/** What the API reports as `modelVersion`; LangChain keeps it nowhere on the message (docs/adapters/langchain.md). */
const VERSION = 'gemini-2.5-flash-preview-05-20';

let fake = new FakeProvider();
let server: Awaited<ReturnType<typeof loopbackApi>> | undefined;
beforeAll(async () => {
  server = await loopbackApi((url, init) => fake.fetch(url, init));
});
afterAll(() => server?.close());

/** The model as LangChain's docs build it, pointed at the loopback; the next requests get `turns`. */
function gemini(turns: Turn[], stream: boolean, fields: { maxOutputTokens?: number } = {}): ChatGoogleGenerativeAI {
  fake = new FakeProvider();
  for (const turn of turns) fake.reply('gemini', turn, { stream });
  return new ChatGoogleGenerativeAI({ model: MODEL, apiKey: 'test-key', baseUrl: server!.url, maxRetries: 0, ...fields });
}


/** Thoughts, a text and two function calls; then the answer, read partly from the cache. */
const LOOP: Turn[] = [
  {
    id: 'gem-resp-1',
    model: VERSION,
    reasoning: 'Two cities: ask for both at once.',
    text: 'Checking both.',
    toolCalls: [
      { id: '', name: 'get_weather', args: { city: 'Paris' } },
      { id: '', name: 'get_weather', args: { city: 'Rome' } },
    ],
    usage: { input: 120, output: 14, reasoning: 40 },
  },
  { id: 'gem-resp-2', model: VERSION, text: 'It is sunny in Paris and in Rome.', usage: { input: 260, cached: 160, output: 17 } },
];

type Step = AtifDoc;
type Usage = { input_tokens: number; output_tokens: number; total_tokens: number; input_token_details?: { cache_read?: number } };
const agentSteps = (doc: AtifDoc): Step[] => (doc.steps as Step[]).filter((step) => step.source === 'agent');
const usageOf = (messages: BaseMessage[]): Usage[] => messages.map((m) => (m as AIMessage).usage_metadata as Usage | undefined).filter((usage) => usage !== undefined);
/** The AI messages' usage_metadata: [input, output, cache read, total]. */
const reported = (messages: BaseMessage[]): number[][] => usageOf(messages).map((u) => [u.input_tokens, u.output_tokens, u.input_token_details?.cache_read ?? 0, u.total_tokens]);
/** Each step's [prompt, completion, cached, total, reasoning] tokens. */
const recordedCounts = (doc: AtifDoc): number[][] =>
  agentSteps(doc).map((step) => [
    step.metrics.prompt_tokens,
    step.metrics.completion_tokens,
    step.metrics.cached_tokens ?? 0,
    step.metrics.extra?.total_tokens,
    step.metrics.extra?.completion_tokens_details?.reasoning_tokens ?? 0,
  ]);
/**
 * What Gemini billed each turn, as its `usageMetadata` says: [promptTokenCount, candidatesTokenCount +
 * thoughtsTokenCount, cachedContentTokenCount, totalTokenCount, thoughtsTokenCount] (the AI SDK's runs record the same).
 */
const billed = (turns: Turn[]): number[][] =>
  turns.map(({ usage }) => [usage.input, usage.output + (usage.reasoning ?? 0), usage.cached ?? 0, usage.input + usage.output + (usage.reasoning ?? 0), usage.reasoning ?? 0]);

describe('ChatGoogleGenerativeAI in createAgent, through the LangChain adapter', () => {
  for (const mode of ['invoke', 'stream'] as const) {
    it(`${mode === 'invoke' ? 'agent.invoke' : 'agent.stream (streamMode "messages")'}: one turn, a call per request, the calls under LangChain's ids with their results, usage_metadata, thoughts, finish reasons`, async () => {
      const model = gemini(LOOP, mode === 'stream');
      const agent = createAgent({ model, tools: [getWeather], name: 'weather_agent', systemPrompt: 'You answer weather questions.' });
      const recorded = recordedPlugin(`lc-gemini-agent-${mode}`);
      const input = { messages: [{ role: 'user', content: 'What is the weather in Paris and Rome?' }] };
      const config = { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] };
      let messages: BaseMessage[] = [];
      if (mode === 'invoke') messages = (await agent.invoke(input, config)).messages;
      else {
        let tokens = 0;
        for await (const [kind, value] of await agent.stream(input, { ...config, streamMode: ['messages', 'values'] })) {
          if (kind === 'messages' && AIMessageChunk.isInstance((value as [BaseMessage, unknown])[0])) tokens += 1;
          if (kind === 'values') messages = (value as { messages: BaseMessage[] }).messages;
        }
        expect(tokens).toBeGreaterThan(2);
      }
      // Two requests on the wire, the streamed ones as SSE.
      expect(fake.requests.map((request) => new URL(request.url).pathname.split(':').at(-1) + new URL(request.url).search)).toEqual(Array(2).fill(mode === 'stream' ? 'streamGenerateContent?alt=sse' : 'generateContent'));
      const answers = messages.filter((m) => AIMessage.isInstance(m) || AIMessageChunk.isInstance(m)) as AIMessage[];
      expect(answers.map((m) => m.text)).toEqual(['Checking both.', 'It is sunny in Paris and in Rome.']);
      // Gemini's function calls carry no id: LangChain gives each a uuid, which the ToolMessages answer.
      const ids = answers[0]!.tool_calls!.map((call) => call.id!);
      expect(ids).toHaveLength(2);
      expect(new Set(ids).size).toBe(2);

      const { doc, agent: steps, atof } = await finishedRun(recorded);
      // One turn, one user step; one API call per request, one step per answer.
      expect(recorded.log.filter((e) => e.hook === 'pre_llm_call')).toHaveLength(1);
      expect((doc.steps as Step[]).filter((step) => step.source === 'user').map((step) => step.message)).toEqual(['What is the weather in Paris and Rome?']);
      expect(recorded.log.filter((e) => e.hook === 'pre_api_request')).toHaveLength(fake.requests.length);
      expect(atof.filter((e) => e.kind === 'scope' && e.category === 'llm' && e.scope_category === 'start')).toHaveLength(fake.requests.length);
      expect(steps.map((step) => step.message)).toEqual(answers.map((m) => m.text));
      // The calls under LangChain's ids, with the arguments Gemini sent and the results the model read.
      expect(steps[0]!.tool_calls.map((call: AtifDoc) => [call.tool_call_id, call.arguments])).toEqual([
        [ids[0], { city: 'Paris' }],
        [ids[1], { city: 'Rome' }],
      ]);
      expect(steps[0]!.observation.results.map((r: AtifDoc) => [r.source_call_id, r.content])).toEqual([
        [ids[0], 'It is sunny in Paris.'],
        [ids[1], 'It is sunny in Rome.'],
      ]);
      // The thought part is the step's reasoning; the system prompt went with each request.
      expect(steps.map((step) => step.reasoning_content ?? null)).toEqual(['Two cities: ask for both at once.', null]);
      expect(fake.requests.every((request) => request.body.systemInstruction?.parts?.[0]?.text === 'You answer weather questions.')).toBe(true);
      // Tokens are what Gemini billed. LangChain's usage_metadata says less and more: its output_tokens are
      // candidatesTokenCount alone (the 40 thought tokens only in total_tokens, the wire's totalTokenCount), and a
      // stream's cache reads are summed over the chunks that each repeat cachedContentTokenCount (the answer's two).
      expect(fake.requests).toHaveLength(LOOP.length);
      expect(recordedCounts(doc)).toEqual(billed(LOOP));
      expect(billed(LOOP)).toEqual([
        [120, 14 + 40, 0, 120 + 14 + 40, 40],
        [260, 17, 160, 260 + 17, 0],
      ]);
      expect(reported(answers)).toEqual([
        [120, 14, 0, 120 + 14 + 40],
        [260, 17, mode === 'stream' ? 2 * 160 : 160, 260 + 17],
      ]);
      expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: 380, total_completion_tokens: 71, total_cached_tokens: 160 });
      // Why each answer stopped: Gemini's finishReason STOP, which for an answer of function calls is the adapters' tool_calls. ChatGoogleGenerativeAI keeps it
      // as `finishReason` in the generation's info, and on the message too when it was not streamed.
      expect(answers.map((m) => m.response_metadata.finishReason)).toEqual(mode === 'invoke' ? ['STOP', 'STOP'] : [undefined, undefined]);
      expect(posts(recorded).map((post) => post.finish_reason)).toEqual(['tool_calls', 'stop']);
      // The model asked for is the one recorded: LangChain keeps no modelVersion of the answer to report.
      expect(steps.map((step) => step.model_name)).toEqual([MODEL, MODEL]);
      expect(answers.every((m) => !JSON.stringify(m.response_metadata).includes(VERSION))).toBe(true);
      expect(recorded.log.filter((e) => e.hook === 'pre_api_request').map((e) => [e.payload.model, e.payload.provider])).toEqual(Array(2).fill([MODEL, 'google_genai']));
      // What view says of the ATOF and of the ATIF: the turn, both calls under the first answer, the counts.
      for (const of of ['atof', 'atif'] as const) {
        expect(await viewRows(recorded, of)).toEqual([
          `LLM ${MODEL}  120 in / 54 out  → get_weather, get_weather · Checking both.`,
          'tool get_weather  {"city":"Paris"}',
          'tool get_weather  {"city":"Rome"}',
          `LLM ${MODEL}  260 in (160 cached) / 17 out  It is sunny in Paris and in Rome.`,
        ]);
      }
      await sameOnNative(recorded);
    });
  }
});

describe('ChatGoogleGenerativeAI on its own, through the LangChain adapter', () => {
  for (const mode of ['invoke', 'stream'] as const) {
    it(`model.${mode}() that stops on MAX_TOKENS: a turn of one call, its text, thoughts, tokens and finish reason length`, async () => {
      const turn: Turn = { id: 'gem-max', model: VERSION, reasoning: 'Long thoughts.', text: 'The weather in Paris is', finish: 'MAX_TOKENS', usage: { input: 30, cached: 12, output: 6, reasoning: 64 } };
      const model = gemini([turn], mode === 'stream', { maxOutputTokens: 70 });
      const recorded = recordedPlugin(`lc-gemini-bare-${mode}`);
      const config = { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] };
      let answer: AIMessageChunk | AIMessage;
      if (mode === 'invoke') answer = await model.invoke('What is the weather in Paris?', config);
      else {
        let merged: AIMessageChunk | undefined;
        for await (const chunk of await model.stream('What is the weather in Paris?', config)) merged = merged === undefined ? chunk : merged.concat(chunk);
        answer = merged!;
      }
      expect(fake.requests[0]!.body.generationConfig.maxOutputTokens).toBe(70);
      expect(answer.response_metadata.finishReason).toBe('MAX_TOKENS');
      const { doc, agent: steps } = await finishedRun(recorded);
      expect((doc.steps as Step[]).map((step) => [step.source, step.message])).toEqual([
        ['user', 'What is the weather in Paris?'],
        ['agent', answer.text],
      ]);
      expect(answer.text).toBe('The weather in Paris is');
      expect(steps[0]!.reasoning_content).toBe('Long thoughts.');
      // What Gemini billed: the 64 thought tokens are completion and reasoning tokens (LangChain counts them in its
      // total only), the 12 cached once (LangChain adds up the count each of the stream's 4 chunks repeats).
      expect(recordedCounts(doc)).toEqual(billed([turn]));
      expect(recordedCounts(doc)).toEqual([[30, 6 + 64, 12, 30 + 6 + 64, 64]]);
      expect(reported([answer])).toEqual([[30, 6, mode === 'stream' ? 4 * 12 : 12, 30 + 6 + 64]]);
      expect(posts(recorded).map((post) => post.finish_reason)).toEqual(['length']);
      expect(recorded.log.find((e) => e.hook === 'on_session_end')!.payload).toMatchObject({ completed: true });
      await sameOnNative(recorded);
    });
  }
});
