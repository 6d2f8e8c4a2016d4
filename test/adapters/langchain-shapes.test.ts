// Program shapes of LangChain and LangGraph the other suites do not run, as their docs write them, on the real
// ChatOpenAI over a fake fetch speaking OpenAI's Chat Completions JSON and SSE: a valid answer through
// `withStructuredOutput` (each method, with and without `includeRaw`) and through `createAgent`'s `responseFormat`; a
// tool the program invokes itself, outside any run; runnables the program composes (a prompt | model | parser
// sequence streamed and batched, a model batched, `RunnableWithMessageHistory`); a hand-built `StateGraph` with a
// `ToolNode` and a conditional edge, streamed, and stopped by its `recursionLimit`. Each trajectory is held to what
// the program got: its values, texts, tool results, the tokens and finish reasons LangChain reported.
import { describe, expect, it } from 'vitest';
import { ChatOpenAI } from '@langchain/openai';
import { tool } from '@langchain/core/tools';
import type { AIMessage, BaseMessage, ToolMessage } from '@langchain/core/messages';
import { ChatPromptTemplate, MessagesPlaceholder } from '@langchain/core/prompts';
import { StringOutputParser } from '@langchain/core/output_parsers';
import { RunnableSequence, RunnableWithMessageHistory } from '@langchain/core/runnables';
import { InMemoryChatMessageHistory } from '@langchain/core/chat_history';
import { createAgent, providerStrategy, toolStrategy } from 'langchain';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import * as z from 'zod';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { chatCompletion, chatCompletionEither, concurrentFetch, openAiError, scriptedFetch, type ChatToolCall, type WireReply } from '../support/provider-wire.ts';
import { expectNothingLost, expectTurnEndInAtif, finishedRun, recordedPlugin, type AtifDoc, type Recorded } from './support.ts';
import { sameOnNative } from './same-on-native.ts';

const GPT = 'gpt-4.1-2025-04-14';
const openai = (fetch: typeof globalThis.fetch, more: Record<string, unknown> = {}) => new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, configuration: { fetch }, ...more });
const WeatherReport = z.object({ city: z.string(), temperature_c: z.number() }).meta({ title: 'WeatherReport' });
const REPORT = { city: 'Paris', temperature_c: 21 };

const getWeather = tool(async ({ city }) => `Sunny in ${city}, 21°C`, { name: 'get_weather', description: 'Get the weather of a city', schema: z.object({ city: z.string() }) });

type Step = AtifDoc;
const hooksOf = (recorded: Recorded, name: string) => recorded.log.filter((entry) => entry.hook === name).map((entry) => entry.payload as Record<string, any>);
const agentSteps = (doc: AtifDoc): Step[] => (doc.steps as Step[]).filter((step) => step.source === 'agent');
const userSteps = (doc: AtifDoc): string[] => (doc.steps as Step[]).filter((step) => step.source === 'user').map((step) => String(step.message));
/** Each agent step: [message, model, prompt tokens, completion tokens]. */
const answers = (doc: AtifDoc): unknown[][] => agentSteps(doc).map((step) => [step.message, step.model_name, step.metrics?.prompt_tokens, step.metrics?.completion_tokens]);
const callsOf = (doc: AtifDoc): unknown[][] => agentSteps(doc).flatMap((step) => (step.tool_calls ?? []).map((call: Step) => [call.tool_call_id, call.function_name, call.arguments]));
const observed = (doc: AtifDoc): unknown[][] => (doc.steps as Step[]).flatMap((step) => (step.observation?.results ?? []).map((r: Step) => [r.source_call_id, String(r.content), r.extra?.metadata?.status]));
/** Every trajectory the run wrote, valid, with nothing lost. */
async function allTrajectories(recorded: Recorded): Promise<AtifDoc[]> {
  const { atif, counters } = await recorded.finish();
  expectNothingLost(counters);
  for (const doc of atif) expect(validateAtif(doc)).toEqual([]);
  return atif;
}
/** The AI messages of a program's state: [id, text, model, input tokens, output tokens, finish reason]. */
const aiOf = (messages: BaseMessage[]): unknown[][] =>
  messages
    .filter((m) => m.getType() === 'ai')
    .map((m) => {
      const ai = m as AIMessage;
      return [ai.id, ai.text, ai.response_metadata.model_name, ai.usage_metadata?.input_tokens, ai.usage_metadata?.output_tokens, ai.response_metadata.finish_reason];
    });
const toolMessages = (messages: BaseMessage[]): string[][] => messages.filter((m) => m.getType() === 'tool').map((m) => [(m as ToolMessage).tool_call_id, String(m.content)]);
const reply = (id: string, content: string | null, tokens: [number, number], toolCalls?: ChatToolCall[]): WireReply =>
  chatCompletion({ id, model: GPT, content, toolCalls, usage: { prompt_tokens: tokens[0], completion_tokens: tokens[1] } });
/** OpenAI ends an answer whose tool call `tool_choice` forced with `stop`, not `tool_calls`. */
const forcedCall = (id: string, call: ChatToolCall, tokens: [number, number]): WireReply => {
  const wire = reply(id, null, tokens, [call]);
  (wire.json as any).choices[0].finish_reason = 'stop';
  return wire;
};

describe('a valid structured answer on ChatOpenAI', () => {
  const methods = [
    { method: 'jsonSchema', asked: (body: any) => body.response_format.type, expected: 'json_schema', wire: () => reply('chatcmpl-s1', JSON.stringify(REPORT), [52, 14]) },
    { method: 'jsonMode', asked: (body: any) => body.response_format.type, expected: 'json_object', wire: () => reply('chatcmpl-s1', JSON.stringify(REPORT), [52, 14]) },
    { method: 'functionCalling', asked: (body: any) => body.tool_choice.function.name, expected: 'extract', wire: () => forcedCall('chatcmpl-s1', { id: 'call_extract', name: 'extract', args: REPORT }, [52, 14]) },
  ] as const;
  for (const { method, asked, expected, wire } of methods) {
    for (const includeRaw of [false, true]) {
      it(`withStructuredOutput(schema, { method: '${method}', includeRaw: ${includeRaw} }): the value the program got is the answer; the model's tokens, model and finish reason are the step's`, async () => {
        const { fetch, requests } = scriptedFetch([wire()]);
        const recorded = recordedPlugin(`lc-shapes-wso-${method}-${includeRaw}`);
        const model = openai(fetch).withStructuredOutput(WeatherReport, { method, includeRaw });
        const result: any = await model.invoke('What is the weather in Paris?', { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
        expect(asked(requests[0]!.body)).toBe(expected);
        const parsed = includeRaw ? result.parsed : result;
        expect(parsed).toEqual(REPORT);
        const { doc } = await finishedRun(recorded);
        expect(userSteps(doc)).toEqual(['What is the weather in Paris?']);
        // The value the program got (with `includeRaw`, the raw message beside it) is the turn's answer.
        const answer = JSON.parse(hooksOf(recorded, 'post_llm_call')[0]!.assistant_response);
        expect(includeRaw ? answer.parsed : answer).toEqual(parsed);
        const step = agentSteps(doc);
        expect(step.map((s) => [s.model_name, s.metrics.prompt_tokens, s.metrics.completion_tokens])).toEqual([[GPT, 52, 14]]);
        if (includeRaw) expect([result.raw.response_metadata.model_name, result.raw.usage_metadata.input_tokens, result.raw.usage_metadata.output_tokens]).toEqual([GPT, 52, 14]);
        // The finish reason the wire said, which LangChain kept on the raw message.
        expect(hooksOf(recorded, 'post_api_request').map((p) => p.finish_reason)).toEqual(['stop']);
        if (includeRaw) expect(result.raw.response_metadata.finish_reason).toBe('stop');
        if (method === 'functionCalling') {
          // The model's forced call is its answer: LangChain parsed its arguments, no tool ran it.
          expect(callsOf(doc)).toEqual([['call_extract', 'extract', REPORT]]);
          expect(observed(doc)).toEqual([]);
        } else {
          expect(step[0]!.message).toBe(JSON.stringify(REPORT));
        }
        await sameOnNative(recorded);
      });
    }
  }

  for (const strategy of ['toolStrategy', 'providerStrategy'] as const) {
    it(`createAgent's responseFormat (${strategy}): structuredResponse is the answer, with the model's tokens and finish reason`, async () => {
      const wire = strategy === 'toolStrategy' ? reply('chatcmpl-a1', null, [88, 19], [{ id: 'call_report', name: 'WeatherReport', args: REPORT }]) : reply('chatcmpl-a1', JSON.stringify(REPORT), [88, 19]);
      const { fetch, requests } = scriptedFetch([wire]);
      const recorded = recordedPlugin(`lc-shapes-agent-${strategy}`);
      const input = { messages: [{ role: 'user', content: 'What is the weather in Paris?' }] };
      const config = { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] };
      const result =
        strategy === 'toolStrategy'
          ? await createAgent({ model: openai(fetch), tools: [getWeather], responseFormat: toolStrategy(WeatherReport) }).invoke(input, config)
          : await createAgent({ model: openai(fetch), tools: [getWeather], responseFormat: providerStrategy(WeatherReport) }).invoke(input, config);
      expect(result.structuredResponse).toEqual(REPORT);
      if (strategy === 'providerStrategy') expect(requests[0]!.body.response_format.type).toBe('json_schema');
      else expect(requests[0]!.body.tools.map((t: any) => t.function.name)).toEqual(['get_weather', 'WeatherReport']);
      const { doc } = await finishedRun(recorded);
      expect(hooksOf(recorded, 'post_llm_call').map((p) => JSON.parse(p.assistant_response))).toEqual([REPORT]);
      const [ai] = aiOf(result.messages);
      expect(agentSteps(doc).map((s) => [s.model_name, s.metrics.prompt_tokens, s.metrics.completion_tokens])).toEqual([[ai![2], ai![3], ai![4]]]);
      expect(ai!.slice(2)).toEqual([GPT, 88, 19, strategy === 'toolStrategy' ? 'tool_calls' : 'stop']);
      expect(hooksOf(recorded, 'post_api_request').map((p) => p.finish_reason)).toEqual([ai![5]]);
      if (strategy === 'toolStrategy') {
        // The structured-output tool's call is answered by the ToolMessage createAgent adds, what the state holds.
        expect(callsOf(doc)).toEqual([['call_report', 'WeatherReport', REPORT]]);
        expect(observed(doc)).toEqual(toolMessages(result.messages).map(([id, text]) => [id, text, 'ok']));
      } else {
        expect(callsOf(doc)).toEqual([]);
        expect(agentSteps(doc)[0]!.message).toBe(JSON.stringify(REPORT));
      }
      await sameOnNative(recorded);
    });
  }

  it('a json_schema answer that fails the schema, with LangChain retrying it (known limit): every attempt reached OpenAI, one failed call is recorded', async () => {
    const bad = (id: string) => reply(id, '{"city":"Paris","temperature_c":"warm"}', [52, 14]);
    const { fetch, requests } = scriptedFetch([bad('chatcmpl-b1'), bad('chatcmpl-b2')]);
    const recorded = recordedPlugin('lc-shapes-wso-retried');
    // LangChain's own retry (`maxRetries`, 6 by default) sends the request again after the parser's error.
    const model = openai(fetch, { maxRetries: 1 }).withStructuredOutput(WeatherReport);
    let error: Error | undefined;
    try {
      await model.invoke('What is the weather in Paris?', { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    } catch (thrown) {
      error = thrown as Error;
    }
    expect(error?.name).toBe('$ZodError');
    expect(requests).toHaveLength(2);
    // What the handler is told: one model run, which failed with the parser's error; no answer, no tokens.
    expect(hooksOf(recorded, 'api_request_error').map((p) => p.error.type)).toEqual(['$ZodError']);
    const { doc } = await finishedRun(recorded);
    expect(agentSteps(doc).map((s) => [s.extra.invocation.status, s.metrics?.prompt_tokens])).toEqual([['failed', undefined]]);
    await expectTurnEndInAtif(recorded, doc, { status: 'failed', error: { name: '$ZodError', message: error!.message } });
    await sameOnNative(recorded);
  });

  it('the same answer streamed (`.stream()`): the openai client does not parse a stream, so the call keeps the answer and its tokens; the turn failed with the parser’s error', async () => {
    const text = '{"city":"Paris","temperature_c":"warm"}';
    const { fetch, requests } = scriptedFetch([chatCompletionEither({ id: 'chatcmpl-b1', model: GPT, content: text, usage: { prompt_tokens: 52, completion_tokens: 14 } })]);
    const recorded = recordedPlugin('lc-shapes-wso-streamed-bad');
    let error: Error | undefined;
    try {
      for await (const _ of await openai(fetch).withStructuredOutput(WeatherReport).stream('What is the weather in Paris?', { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] })) void _;
    } catch (thrown) {
      error = thrown as Error;
    }
    expect(requests[0]!.body.stream).toBe(true);
    expect(error?.message).toMatch(/^Failed to parse\. Text: /);
    const { doc } = await finishedRun(recorded);
    expect(answers(doc)).toEqual([[text, GPT, 52, 14]]);
    expect(hooksOf(recorded, 'post_api_request').map((p) => p.finish_reason)).toEqual(['stop']);
    await expectTurnEndInAtif(recorded, doc, { status: 'failed', error: { name: 'OutputParserException', message: error!.message } });
    await sameOnNative(recorded);
  });
});

describe('a tool the program invokes itself, outside any run', () => {
  it('with its arguments and with a ToolCall: nothing is recorded of them, and the next run’s trajectory is its own', async () => {
    const { fetch } = scriptedFetch([reply('chatcmpl-t1', null, [40, 8], [{ id: 'call_w', name: 'get_weather', args: { city: 'Oslo' } }]), reply('chatcmpl-t2', 'Sunny in Oslo.', [60, 6])]);
    const recorded = recordedPlugin('lc-shapes-direct-tool');
    const handler = new NemoRelayCallbackHandler(recorded.hooks);
    expect(await getWeather.invoke({ city: 'Paris' }, { callbacks: [handler] })).toBe('Sunny in Paris, 21°C');
    const message = await getWeather.invoke({ type: 'tool_call', id: 'call_direct', name: 'get_weather', args: { city: 'Rome' } }, { callbacks: [handler] });
    expect([message.tool_call_id, message.content]).toEqual(['call_direct', 'Sunny in Rome, 21°C']);
    // No model asked for them and no run holds them: no turn, no hook.
    expect(recorded.log).toEqual([]);
    const agent = createAgent({ model: openai(fetch), tools: [getWeather] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Weather in Oslo?' }] }, { callbacks: [handler] });
    const { doc } = await finishedRun(recorded);
    expect(userSteps(doc)).toEqual(['Weather in Oslo?']);
    expect(answers(doc)).toEqual(aiOf(result.messages).map(([, text, model, input, output]) => [text, model, input, output]));
    expect(callsOf(doc)).toEqual([['call_w', 'get_weather', { city: 'Oslo' }]]);
    expect(observed(doc)).toEqual(toolMessages(result.messages).map(([id, text]) => [id, text, 'ok']));
    await sameOnNative(recorded);
  });

  it('a tool that runs an agent: the agent’s run is a turn of its own, its tool calls with their results', async () => {
    const { fetch } = scriptedFetch([
      reply('chatcmpl-r1', null, [40, 8], [{ id: 'call_search', name: 'web_search', args: { query: 'Paris population' } }]),
      reply('chatcmpl-r2', 'Paris has about 2.1 million people.', [60, 9]),
    ]);
    const webSearch = tool(async ({ query }) => `${query}: 2,102,650 (2023)`, { name: 'web_search', description: 'Search the web', schema: z.object({ query: z.string() }) });
    const researcher = createAgent({ model: openai(fetch), tools: [webSearch], name: 'researcher' });
    let state: { messages: BaseMessage[] } | undefined;
    const research = tool(
      async ({ question }) => {
        state = await researcher.invoke({ messages: [{ role: 'user', content: question }] });
        return state.messages.at(-1)!.text;
      },
      { name: 'research', description: 'Research a question', schema: z.object({ question: z.string() }) },
    );
    const recorded = recordedPlugin('lc-shapes-direct-tool-agent');
    const answer = await research.invoke({ question: 'How many people live in Paris?' }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(answer).toBe('Paris has about 2.1 million people.');
    const { doc } = await finishedRun(recorded);
    expect(doc.agent.name).toBe('researcher');
    expect(userSteps(doc)).toEqual(['How many people live in Paris?']);
    expect(answers(doc)).toEqual(aiOf(state!.messages).map(([, text, model, input, output]) => [text, model, input, output]));
    expect(callsOf(doc)).toEqual([['call_search', 'web_search', { query: 'Paris population' }]]);
    expect(observed(doc)).toEqual([['call_search', 'Paris population: 2,102,650 (2023)', 'ok']]);
    expect(hooksOf(recorded, 'on_session_end').map((p) => p.completed)).toEqual([true]);
    await sameOnNative(recorded);
  });

  it('a tool that calls a model itself: the call is a turn of its own, as a model invoked anywhere is', async () => {
    const { fetch } = scriptedFetch([reply('chatcmpl-m1', 'Rome has about 2.8 million people.', [21, 9])]);
    const ask = tool(async ({ question }) => (await openai(fetch).invoke(question)).text, { name: 'ask', description: 'Ask a model', schema: z.object({ question: z.string() }) });
    const recorded = recordedPlugin('lc-shapes-direct-tool-model');
    const message = await ask.invoke({ type: 'tool_call', id: 'call_ask', name: 'ask', args: { question: 'How many people live in Rome?' } }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(message.content).toBe('Rome has about 2.8 million people.');
    const { doc } = await finishedRun(recorded);
    expect(userSteps(doc)).toEqual(['How many people live in Rome?']);
    expect(answers(doc)).toEqual([['Rome has about 2.8 million people.', GPT, 21, 9]]);
    await sameOnNative(recorded);
  });
});

describe('runnables the program composes', () => {
  const prompt = ChatPromptTemplate.fromMessages([
    ['system', 'You answer in one sentence.'],
    ['human', 'Tell me about {topic}'],
  ]);

  it('prompt | model | StringOutputParser streamed: one turn, the text the program read, the streamed usage', async () => {
    const { fetch, requests } = scriptedFetch([chatCompletionEither({ id: 'chatcmpl-c1', model: GPT, content: 'Cats sleep most of the day.', usage: { prompt_tokens: 24, completion_tokens: 7 } })]);
    const recorded = recordedPlugin('lc-shapes-sequence-stream');
    const chain = RunnableSequence.from([prompt, openai(fetch), new StringOutputParser()]);
    let text = '';
    for await (const piece of await chain.stream({ topic: 'cats' }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] })) text += piece;
    expect(text).toBe('Cats sleep most of the day.');
    expect([requests[0]!.body.stream, requests[0]!.body.stream_options]).toEqual([true, { include_usage: true }]);
    const { doc } = await finishedRun(recorded);
    expect(userSteps(doc)).toEqual(['Tell me about cats']);
    expect(answers(doc)).toEqual([[text, GPT, 24, 7]]);
    expect(hooksOf(recorded, 'post_llm_call').map((p) => p.assistant_response)).toEqual([text]);
    expect(hooksOf(recorded, 'post_api_request').map((p) => p.finish_reason)).toEqual(['stop']);
    await sameOnNative(recorded);
  });

  it('prompt | model | parser streamed and left by the consumer (known limit): LangChain tells callbacks nothing, so the turn has no end and the call is closed unfinished at shutdown', async () => {
    const { fetch } = scriptedFetch([chatCompletionEither({ id: 'chatcmpl-c1', model: GPT, content: 'Cats sleep most of the day.', usage: { prompt_tokens: 24, completion_tokens: 7 } })]);
    const recorded = recordedPlugin('lc-shapes-sequence-left');
    const chain = RunnableSequence.from([prompt, openai(fetch), new StringOutputParser()]);
    let read = '';
    for await (const piece of await chain.stream({ topic: 'cats' }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] })) {
      read += piece;
      if (read !== '') break;
    }
    expect(read).toBe('Cats sleep mos'); // the first of the two content chunks the fake sends
    // A plain runnable's stream ends no run when its consumer returns (a graph's does: langchain-programs.test.ts).
    expect(hooksOf(recorded, 'on_session_end')).toEqual([]);
    const { atif, counters } = await recorded.finish();
    expect(counters.abandonedSpans).toBe(1);
    expect(atif).toHaveLength(1);
    expect(agentSteps(atif[0]!).map((step) => [step.extra.invocation.status, JSON.parse(step.message).error.message])).toEqual([['failed', 'the session closed before the API request finished']]);
  });

  const TOPICS = [
    ['cats', 'Cats sleep most of the day.', [24, 7]],
    ['dogs', 'Dogs were the first animals people tamed.', [25, 9]],
    ['owls', 'Owls hunt at night.', [26, 5]],
  ] as const;
  const batchApi = (ask: (topic: string) => string) =>
    concurrentFetch(TOPICS.map(([topic, text, [input, output]], index) => ({ when: ask(topic), wave: 'batch', reply: reply(`chatcmpl-b${index}`, text, [input, output]) })));
  /** Each trajectory of a batch by its user message: [answer, prompt tokens, completion tokens]. */
  const byUser = (docs: AtifDoc[]): Record<string, unknown[]> =>
    Object.fromEntries(docs.map((doc) => [userSteps(doc).join('|'), agentSteps(doc).map((s) => [s.message, s.metrics?.prompt_tokens, s.metrics?.completion_tokens])]));

  it('prompt | model | parser batched: each input is a turn and a session of its own, with its own answer and tokens', async () => {
    const { fetch, maxInFlight } = batchApi((topic) => `Tell me about ${topic}`);
    const recorded = recordedPlugin('lc-shapes-sequence-batch');
    const chain = prompt.pipe(openai(fetch)).pipe(new StringOutputParser());
    const texts = await chain.batch(TOPICS.map(([topic]) => ({ topic })), { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(texts).toEqual(TOPICS.map(([, text]) => text));
    expect(maxInFlight()).toBe(3);
    const docs = await allTrajectories(recorded);
    expect(docs).toHaveLength(3);
    expect(byUser(docs)).toEqual(Object.fromEntries(TOPICS.map(([topic, text, [input, output]]) => [`Tell me about ${topic}`, [[text, input, output]]])));
    await sameOnNative(recorded);
  });

  it('prompt | model | parser batched with returnExceptions, one input’s call refused: that turn failed with what the program got for it, the others completed', async () => {
    const { fetch } = concurrentFetch([
      { when: 'Tell me about cats', wave: 'batch', reply: reply('chatcmpl-ok', 'Cats sleep most of the day.', [24, 7]) },
      { when: 'Tell me about dogs', wave: 'batch', reply: openAiError(400, 'invalid_request_error', 'Invalid prompt: dogs') },
    ]);
    const recorded = recordedPlugin('lc-shapes-sequence-batch-exceptions');
    const chain = prompt.pipe(openai(fetch)).pipe(new StringOutputParser());
    const results = await chain.batch([{ topic: 'cats' }, { topic: 'dogs' }], { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] }, { returnExceptions: true });
    expect(results[0]).toBe('Cats sleep most of the day.');
    // LangChain hands the parser the model's error as its input: the program gets what the parser made of it.
    const got = results[1] as unknown as Error;
    expect(got).toBeInstanceOf(Error);
    const ends = hooksOf(recorded, 'on_session_end').map((p) => [p.completed, p.failed, p.error_type ?? null, p.error_message ?? null]);
    expect(ends.sort((a, b) => Number(a[1]) - Number(b[1]))).toEqual([
      [true, false, null, null],
      [false, true, got.name, got.message],
    ]);
    expect(hooksOf(recorded, 'api_request_error').map((p) => [p.error.type, p.error.message])).toEqual([['BadRequestError', '400 Invalid prompt: dogs']]);
    const docs = await allTrajectories(recorded);
    expect(byUser(docs)['Tell me about cats']).toEqual([['Cats sleep most of the day.', 24, 7]]);
    const failed = docs.find((doc) => userSteps(doc)[0] === 'Tell me about dogs')!;
    expect(agentSteps(failed).map((step) => step.extra.invocation.status)).toEqual(['failed']);
    expect(failed.notes).toBe(`The turn that ends at step 2 failed: ${got.name}: ${got.message}`);
    await sameOnNative(recorded);
  });

  it('model.batch: each message is a turn and a session of its own, with its own answer and tokens', async () => {
    const { fetch } = batchApi((topic) => `About ${topic}`);
    const recorded = recordedPlugin('lc-shapes-model-batch');
    const messages = await openai(fetch).batch(TOPICS.map(([topic]) => `About ${topic}`), { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(messages.map((m) => [m.text, m.usage_metadata?.input_tokens, m.usage_metadata?.output_tokens])).toEqual(TOPICS.map(([, text, [input, output]]) => [text, input, output]));
    const docs = await allTrajectories(recorded);
    expect(byUser(docs)).toEqual(Object.fromEntries(TOPICS.map(([topic, text, [input, output]]) => [`About ${topic}`, [[text, input, output]]])));
    await sameOnNative(recorded);
  });

  describe('RunnableWithMessageHistory, two invokes of one session', () => {
    const chatPrompt = ChatPromptTemplate.fromMessages([['system', 'You are helpful.'], new MessagesPlaceholder('history'), ['human', '{question}']]);
    const run = async (label: string, handlerFor: (recorded: Recorded, sessionId: string) => NemoRelayCallbackHandler) => {
      const { fetch, requests } = scriptedFetch([reply('chatcmpl-h1', 'Hello Bob.', [20, 3]), reply('chatcmpl-h2', 'Your name is Bob.', [34, 5])]);
      const histories = new Map<string, InMemoryChatMessageHistory>();
      const chat = new RunnableWithMessageHistory({
        runnable: chatPrompt.pipe(openai(fetch)),
        getMessageHistory: (sessionId: string) => histories.get(sessionId) ?? histories.set(sessionId, new InMemoryChatMessageHistory()).get(sessionId)!,
        inputMessagesKey: 'question',
        historyMessagesKey: 'history',
      });
      const recorded = recordedPlugin(label);
      const said: string[] = [];
      for (const question of ['I am Bob.', 'What is my name?']) {
        const answer = await chat.invoke({ question }, { configurable: { sessionId: 'chat-7' }, callbacks: [handlerFor(recorded, 'chat-7')] });
        said.push(answer.text);
      }
      expect(said).toEqual(['Hello Bob.', 'Your name is Bob.']);
      // The second request carries the first turn: the history LangChain keeps for the session.
      expect(requests[1]!.body.messages.map((m: any) => m.content)).toEqual(['You are helpful.', 'I am Bob.', 'Hello Bob.', 'What is my name?']);
      return recorded;
    };

    it('the handler’s sessionId names the session: one trajectory, two turns, each answer with its tokens', async () => {
      const recorded = await run('lc-shapes-history-named', (recorded, sessionId) => new NemoRelayCallbackHandler(recorded.hooks, { sessionId }));
      const { doc } = await finishedRun(recorded);
      expect(doc.session_id).toBe('chat-7');
      expect(userSteps(doc)).toEqual(['I am Bob.', 'What is my name?']);
      expect(answers(doc)).toEqual([
        ['Hello Bob.', GPT, 20, 3],
        ['Your name is Bob.', GPT, 34, 5],
      ]);
      await sameOnNative(recorded);
    });

    it('without it, LangChain tells callbacks no session (configurable.sessionId is not in their metadata): each invoke is a session of its own', async () => {
      const recorded = await run('lc-shapes-history-unnamed', (recorded) => new NemoRelayCallbackHandler(recorded.hooks));
      const docs = await allTrajectories(recorded);
      expect(docs.map((doc) => [userSteps(doc), answers(doc)])).toEqual([
        [['I am Bob.'], [['Hello Bob.', GPT, 20, 3]]],
        [['What is my name?'], [['Your name is Bob.', GPT, 34, 5]]],
      ]);
      await sameOnNative(recorded);
    });
  });
});

describe('a StateGraph with a ToolNode and a conditional edge', () => {
  const graphOf = (fetch: typeof globalThis.fetch) => {
    const model = openai(fetch).bindTools([getWeather]);
    return new StateGraph(MessagesAnnotation)
      .addNode('agent', async (state) => ({ messages: [await model.invoke(state.messages)] }))
      .addNode('tools', new ToolNode([getWeather]))
      .addEdge(START, 'agent')
      .addConditionalEdges('agent', toolsCondition, ['tools', END])
      .addEdge('tools', 'agent')
      .compile();
  };
  const callOslo = (index: number) =>
    chatCompletionEither({ id: `chatcmpl-g${index}`, model: GPT, content: null, toolCalls: [{ id: `call_oslo_${index}`, name: 'get_weather', args: { city: 'Oslo' } }], usage: { prompt_tokens: 40 + index * 20, completion_tokens: 8 } });
  const INPUT = { messages: [{ role: 'user', content: 'Weather in Oslo?' }] };

  for (const mode of ['messages', 'updates'] as const) {
    it(`streamed (streamMode '${mode}'): one turn, each model answer with its tokens, the ToolNode's result`, async () => {
      const { fetch, requests } = scriptedFetch([callOslo(0), chatCompletionEither({ id: 'chatcmpl-g1', model: GPT, content: 'It is sunny in Oslo, 21°C.', usage: { prompt_tokens: 60, completion_tokens: 9 } })]);
      const recorded = recordedPlugin(`lc-shapes-graph-${mode}`);
      let final: { messages: BaseMessage[] } | undefined;
      let streamed = 0;
      for await (const [kind, chunk] of await graphOf(fetch).stream(INPUT, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)], streamMode: [mode, 'values'] })) {
        if (kind === 'values') final = chunk as { messages: BaseMessage[] };
        else streamed += 1;
      }
      expect(streamed).toBeGreaterThan(0);
      // "messages" makes the model stream on the wire, with the usage chunk.
      expect(requests.map((r) => r.body.stream === true)).toEqual(mode === 'messages' ? [true, true] : [false, false]);
      const ai = aiOf(final!.messages);
      expect(ai.map((m) => m.slice(3, 5))).toEqual([
        [40, 8],
        [60, 9],
      ]);
      const { doc } = await finishedRun(recorded);
      expect(userSteps(doc)).toEqual(['Weather in Oslo?']);
      // The model and the finish reason the wire said: a streamed message keeps them out of its response_metadata
      // (the streamed generation has them).
      expect(answers(doc)).toEqual(ai.map(([, text, , input, output]) => [text, GPT, input, output]));
      expect(hooksOf(recorded, 'post_api_request').map((p) => p.finish_reason)).toEqual(['tool_calls', 'stop']);
      if (mode === 'updates') expect(ai.map((m) => [m[2], m[5]])).toEqual([[GPT, 'tool_calls'], [GPT, 'stop']]);
      expect(callsOf(doc)).toEqual([['call_oslo_0', 'get_weather', { city: 'Oslo' }]]);
      expect(observed(doc)).toEqual(toolMessages(final!.messages).map(([id, text]) => [id, text, 'ok']));
      expect(hooksOf(recorded, 'post_llm_call').map((p) => p.assistant_response)).toEqual(['It is sunny in Oslo, 21°C.']);
      await sameOnNative(recorded);
    });
  }

  it('invoked with a recursionLimit it hits: the turn failed with GraphRecursionError; the steps that ran are recorded as they ran', async () => {
    const { fetch, requests } = scriptedFetch([0, 1, 2, 3].map(callOslo));
    const recorded = recordedPlugin('lc-shapes-graph-recursion');
    let error: Error | undefined;
    try {
      await graphOf(fetch).invoke(INPUT, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)], recursionLimit: 4 });
    } catch (thrown) {
      error = thrown as Error;
    }
    expect(error?.name).toBe('GraphRecursionError');
    // agent, tools, agent, tools: four supersteps, then LangGraph stops before the third model call.
    expect(requests).toHaveLength(2);
    const { doc } = await finishedRun(recorded);
    expect(answers(doc)).toEqual([
      ['', GPT, 40, 8],
      ['', GPT, 60, 8],
    ]);
    expect(callsOf(doc)).toEqual([
      ['call_oslo_0', 'get_weather', { city: 'Oslo' }],
      ['call_oslo_1', 'get_weather', { city: 'Oslo' }],
    ]);
    expect(observed(doc)).toEqual([
      ['call_oslo_0', 'Sunny in Oslo, 21°C', 'ok'],
      ['call_oslo_1', 'Sunny in Oslo, 21°C', 'ok'],
    ]);
    expect(hooksOf(recorded, 'post_llm_call')).toEqual([]);
    expect(hooksOf(recorded, 'on_session_end')).toMatchObject([{ failed: true, completed: false, error_type: 'GraphRecursionError', error_message: error!.message }]);
    await expectTurnEndInAtif(recorded, doc, { status: 'failed', error: { name: 'GraphRecursionError', message: error!.message } });
    await sameOnNative(recorded);
  });
});
