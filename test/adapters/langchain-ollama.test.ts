// Local models through Ollama's own API, as LangChain's docs write the program: `ChatOllama` from `@langchain/ollama`
// in `createAgent` with tools, invoked and streamed, or named by a string (`'ollama:llama3.2'`); `bindTools`;
// `withStructuredOutput` (Ollama's `format`, a JSON schema); `think: true`; a model that was never pulled. The client takes a `baseUrl`, so a loopback server speaks
// Ollama's `POST /api/chat` (test/adapters/ai-sdk/wire.ts): an NDJSON stream (ChatOllama streams even for `invoke`),
// tool calls without ids, `thinking`, `done_reason`, `prompt_eval_count`/`eval_count` and durations in nanoseconds.
// Each trajectory is held to what the program got (the messages' `usage_metadata`, tool call ids, texts) and to the
// wire; the same hooks on native (where it loads) write the same files.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatOllama } from '@langchain/ollama';
import { AIMessage, AIMessageChunk, type BaseMessage } from '@langchain/core/messages';
import { createAgent } from 'langchain';
import * as z from 'zod';
import { loopbackApi } from '../support/doc-snippets.ts';
import { FakeProvider, type Turn } from './ai-sdk/wire.ts';
import { finishedRun, recordedPlugin, viewRows, type AtifDoc } from './support.ts';
import { sameOnNative } from './same-on-native.ts';
import { withProcessEnv } from '../support/process-env.ts';
import { getWeather, agentSteps, reported, recordedCounts, posts, handler } from './langchain-checks.ts';

const MODEL = 'llama3.2';

let fake = new FakeProvider();
let server: Awaited<ReturnType<typeof loopbackApi>> | undefined;
beforeAll(async () => {
  server = await loopbackApi((url, init) => fake.fetch(url, init));
});
afterAll(() => server?.close());

/** The next requests get `turns`, streamed as ChatOllama always asks. */
function serve(...turns: Turn[]): void {
  fake = new FakeProvider();
  for (const turn of turns) fake.reply('ollama', turn, { stream: true });
}


/** Two calls without ids and no text, `done_reason` stop; then the answer. */
const LOOP: Turn[] = [
  {
    id: '',
    model: MODEL,
    toolCalls: [
      { id: '', name: 'get_weather', args: { city: 'Paris' } },
      { id: '', name: 'get_weather', args: { city: 'Rome' } },
    ],
    usage: { input: 182, output: 31 },
  },
  { id: '', model: MODEL, text: 'It is sunny in Paris and in Rome.', usage: { input: 251, output: 12 } },
];


describe('ChatOllama in createAgent, through the LangChain adapter', () => {
  for (const mode of ['invoke', 'stream'] as const) {
    it(`${mode === 'invoke' ? 'agent.invoke' : 'agent.stream (streamMode "messages")'}: the calls under LangChain's ids with their results, usage_metadata = the wire's counts, done_reason stop after calls is tool_calls`, async () => {
      serve(...LOOP);
      const agent = createAgent({ model: new ChatOllama({ model: MODEL, baseUrl: server!.url }), tools: [getWeather], systemPrompt: 'You answer weather questions.' });
      const recorded = recordedPlugin(`lc-ollama-agent-${mode}`);
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
      // Two requests to /api/chat, both streamed, the tools offered and the system prompt first.
      expect(fake.requests.map((request) => [new URL(request.url).pathname, request.body.stream, request.body.tools?.[0]?.function?.name])).toEqual(Array(2).fill(['/api/chat', true, 'get_weather']));
      expect(fake.requests[0]!.body.messages[0]).toEqual({ role: 'system', content: 'You answer weather questions.' });
      const answers = messages.filter((m) => AIMessage.isInstance(m) || AIMessageChunk.isInstance(m)) as AIMessage[];
      expect(answers.map((m) => m.text)).toEqual(['', 'It is sunny in Paris and in Rome.']);
      // Ollama's calls carry no id: ChatOllama gives each a uuid, which the ToolMessages answer.
      const ids = answers[0]!.tool_calls!.map((call) => call.id!);
      expect(new Set(ids).size).toBe(2);

      const { doc, agent: steps } = await finishedRun(recorded);
      expect(recorded.log.filter((e) => e.hook === 'pre_llm_call')).toHaveLength(1);
      expect(recorded.log.filter((e) => e.hook === 'pre_api_request')).toHaveLength(fake.requests.length);
      expect(steps.map((step) => step.message)).toEqual(answers.map((m) => m.text));
      expect(steps[0]!.tool_calls.map((call: AtifDoc) => [call.tool_call_id, call.function_name, call.arguments])).toEqual([
        [ids[0], 'get_weather', { city: 'Paris' }],
        [ids[1], 'get_weather', { city: 'Rome' }],
      ]);
      expect(steps[0]!.observation.results.map((r: AtifDoc) => [r.source_call_id, r.content])).toEqual([
        [ids[0], 'It is sunny in Paris.'],
        [ids[1], 'It is sunny in Rome.'],
      ]);
      // Tokens: usage_metadata, which is the wire's prompt_eval_count and eval_count.
      expect(recordedCounts(doc)).toEqual(reported(answers));
      expect(reported(answers)).toEqual([
        [182, 31, 213],
        [251, 12, 263],
      ]);
      expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: 433, total_completion_tokens: 43 });
      // ChatOllama keeps the last NDJSON object's fields in response_metadata: done_reason, the model echoed, and
      // the durations in nanoseconds, which are not the call's duration.
      expect(answers.map((m) => [m.response_metadata.done_reason, m.response_metadata.model, m.response_metadata.total_duration])).toEqual(Array(2).fill(['stop', MODEL, 1_830_412_250]));
      // Ollama says `stop` for an answer of tool calls too (its own OpenAI-compatible endpoint says `tool_calls`).
      expect(posts(recorded).map((post) => post.finish_reason)).toEqual(['tool_calls', 'stop']);
      expect(steps.map((step) => step.model_name)).toEqual([MODEL, MODEL]);
      expect(recorded.log.filter((e) => e.hook === 'pre_api_request').map((e) => [e.payload.model, e.payload.provider])).toEqual(Array(2).fill([MODEL, 'ollama']));
      expect(posts(recorded).every((post) => post.api_duration < 60)).toBe(true);
      for (const of of ['atof', 'atif'] as const) {
        expect(await viewRows(recorded, of)).toEqual([
          `LLM ${MODEL}  182 in / 31 out  → get_weather, get_weather`,
          'tool get_weather  {"city":"Paris"}',
          'tool get_weather  {"city":"Rome"}',
          `LLM ${MODEL}  251 in / 12 out  It is sunny in Paris and in Rome.`,
        ]);
      }
      await sameOnNative(recorded);
    });
  }
});

describe("createAgent({ model: 'ollama:llama3.2' }): LangChain builds ChatOllama, found through OLLAMA_BASE_URL", () => {
  it('recorded as the ChatOllama the program builds itself: model, provider, calls, finish reasons, tokens', async () => {
    serve(...LOOP);
    withProcessEnv({ OLLAMA_BASE_URL: server!.url });
    const agent = createAgent({ model: `ollama:${MODEL}`, tools: [getWeather] });
    const recorded = recordedPlugin('lc-ollama-string');
    const { messages } = await agent.invoke({ messages: [{ role: 'user', content: 'What is the weather in Paris and Rome?' }] }, handler(recorded));
    expect(fake.requests.map((request) => [new URL(request.url).pathname, request.body.model])).toEqual(Array(2).fill(['/api/chat', MODEL]));
    const answers = messages.filter((m) => AIMessage.isInstance(m)) as AIMessage[];
    const { doc, agent: steps } = await finishedRun(recorded);
    expect(steps.map((step) => step.message)).toEqual(['', 'It is sunny in Paris and in Rome.']);
    expect(steps[0]!.tool_calls.map((call: AtifDoc) => call.tool_call_id)).toEqual(answers[0]!.tool_calls!.map((call) => call.id));
    expect(recorded.log.filter((e) => e.hook === 'pre_api_request').map((e) => [e.payload.model, e.payload.provider])).toEqual(Array(2).fill([MODEL, 'ollama']));
    expect(posts(recorded).map((post) => post.finish_reason)).toEqual(['tool_calls', 'stop']);
    expect(recordedCounts(doc)).toEqual(reported(answers));
    expect(reported(answers)).toEqual([
      [182, 31, 213],
      [251, 12, 263],
    ]);
    await sameOnNative(recorded);
  });
});

describe('ChatOllama on its own, through the LangChain adapter', () => {
  for (const mode of ['invoke', 'stream'] as const) {
    it(`think: true, model.${mode}() cut by numPredict: the thinking is the step's reasoning, done_reason length is length`, async () => {
      serve({ id: '', model: 'qwen3', reasoning: 'The user wants Paris. Keep it short.', text: 'The weather in Paris is', finish: 'length', usage: { input: 18, output: 40 } });
      const model = new ChatOllama({ model: 'qwen3', baseUrl: server!.url, think: true, numPredict: 40 });
      const recorded = recordedPlugin(`lc-ollama-think-${mode}`);
      let answer: AIMessageChunk | AIMessage;
      if (mode === 'invoke') answer = await model.invoke('What is the weather in Paris?', handler(recorded));
      else {
        let merged: AIMessageChunk | undefined;
        for await (const chunk of await model.stream('What is the weather in Paris?', handler(recorded))) merged = merged === undefined ? chunk : merged.concat(chunk);
        answer = merged!;
      }
      expect(fake.requests[0]!.body).toMatchObject({ model: 'qwen3', think: true, options: { num_predict: 40 } });
      expect(answer.text).toBe('The weather in Paris is');
      expect(answer.additional_kwargs.reasoning_content).toBe('The user wants Paris. Keep it short.');
      expect(answer.response_metadata.done_reason).toBe('length');
      const { doc, agent: steps } = await finishedRun(recorded);
      expect((doc.steps as AtifDoc[]).map((step) => [step.source, step.message])).toEqual([
        ['user', 'What is the weather in Paris?'],
        ['agent', 'The weather in Paris is'],
      ]);
      expect(steps[0]!.reasoning_content).toBe('The user wants Paris. Keep it short.');
      expect(recordedCounts(doc)).toEqual(reported([answer]));
      expect(reported([answer])).toEqual([[18, 40, 58]]);
      expect(posts(recorded).map((post) => post.finish_reason)).toEqual(['length']);
      expect(steps[0]!.model_name).toBe('qwen3');
      await sameOnNative(recorded);
    });
  }

  it('bindTools: one call of the bound tool, under ChatOllama id, finish tool_calls', async () => {
    serve({ id: '', model: MODEL, toolCalls: [{ id: '', name: 'get_weather', args: { city: 'Oslo' } }], usage: { input: 90, output: 17 } });
    const recorded = recordedPlugin('lc-ollama-bind');
    const answer = await new ChatOllama({ model: MODEL, baseUrl: server!.url }).bindTools([getWeather]).invoke('Weather in Oslo?', handler(recorded));
    expect(fake.requests[0]!.body.tools).toEqual([{ type: 'function', function: expect.objectContaining({ name: 'get_weather' }) }]);
    const { agent: steps } = await finishedRun(recorded);
    expect(steps[0]!.tool_calls).toEqual([expect.objectContaining({ tool_call_id: answer.tool_calls![0]!.id, function_name: 'get_weather', arguments: { city: 'Oslo' } })]);
    expect(posts(recorded).map((post) => post.finish_reason)).toEqual(['tool_calls']);
    expect(posts(recorded)[0]!.usage).toMatchObject({ prompt_tokens: 90, completion_tokens: 17 });
    await sameOnNative(recorded);
  });

  it("withStructuredOutput: Ollama's format is the schema, the JSON it answered is the step's message and the parsed value the turn's answer", async () => {
    const report = { city: 'Paris', temperature_c: 21 };
    serve({ id: '', model: MODEL, text: JSON.stringify(report), usage: { input: 60, output: 14 } });
    const recorded = recordedPlugin('lc-ollama-structured');
    const schema = z.object({ city: z.string(), temperature_c: z.number() });
    const value = await new ChatOllama({ model: MODEL, baseUrl: server!.url }).withStructuredOutput(schema).invoke('Weather in Paris, as JSON.', handler(recorded));
    expect(value).toEqual(report);
    expect(fake.requests[0]!.body.format).toMatchObject({ type: 'object', properties: { city: { type: 'string' }, temperature_c: { type: 'number' } } });
    const { doc, agent: steps } = await finishedRun(recorded);
    expect(steps.map((step) => step.message)).toEqual([JSON.stringify(report)]);
    expect(recorded.log.find((e) => e.hook === 'post_llm_call')!.payload.assistant_response).toBe(JSON.stringify(report));
    expect(recordedCounts(doc)).toEqual([[60, 14, 74]]);
    expect(posts(recorded).map((post) => post.finish_reason)).toEqual(['stop']);
    await sameOnNative(recorded);
  });

  it('a model that was never pulled: 404 with Ollama\'s error, a failed call with its status, the turn failed with what the program caught', async () => {
    fake = new FakeProvider();
    fake.fail('ollama', 404, 'model "llama9" not found, try pulling it first');
    const recorded = recordedPlugin('lc-ollama-404');
    let caught: Error | undefined;
    try {
      await new ChatOllama({ model: 'llama9', baseUrl: server!.url }).invoke('Hello?', handler(recorded));
    } catch (error) {
      caught = error as Error;
    }
    expect(caught).toMatchObject({ name: 'ResponseError', message: 'model "llama9" not found, try pulling it first', status_code: 404 });
    expect(recorded.log.filter((e) => e.hook === 'api_request_error').map((e) => e.payload)).toMatchObject([
      { status_code: 404, error: { type: 'ResponseError', message: 'model "llama9" not found, try pulling it first' } },
    ]);
    expect(recorded.log.find((e) => e.hook === 'on_session_end')!.payload).toMatchObject({ failed: true, error_type: 'ResponseError', error_message: caught!.message });
    const { atof } = await recorded.finish();
    expect(atof.filter((e) => e.kind === 'scope' && e.category === 'llm' && e.scope_category === 'end')).toHaveLength(1);
    await sameOnNative(recorded);
  });
});
