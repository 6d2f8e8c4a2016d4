// `instrumentLangChain(hooks)`: the handler LangChain adds to every run through its configure hook, with no
// `callbacks` in the program. Each program of the LangChain page (createAgent with tools and middleware on a thread,
// a StateGraph on a checkpointer, a bare model invoked and streamed, RunnableWithMessageHistory) runs twice on the
// real ChatAnthropic / ChatOpenAI over a fake fetch speaking their wire: once with the handler in `callbacks`, once
// instrumented; both must write the same hooks and the same trajectory, held to what the program got. Then what only
// the global handler does: the selection `llmToolSelectorMiddleware` makes with `callbacks: []`, a run given the
// handler anyway (recorded once), the scope of an async context, and `uninstall()`.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChatAnthropic } from '@langchain/anthropic';
import { ChatOpenAI } from '@langchain/openai';
import { tool } from '@langchain/core/tools';
import type { AIMessage, AIMessageChunk, BaseMessage } from '@langchain/core/messages';
import { ChatPromptTemplate, MessagesPlaceholder } from '@langchain/core/prompts';
import { RunnableWithMessageHistory } from '@langchain/core/runnables';
import { InMemoryChatMessageHistory } from '@langchain/core/chat_history';
import { AsyncLocalStorageProviderSingleton } from '@langchain/core/singletons';
import { MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import { createAgent, initChatModel, llmToolSelectorMiddleware, modelRetryMiddleware, toolErrorMiddleware } from 'langchain';
import * as z from 'zod';
import { instrumentLangChain, NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { runtime } from '../support/child.ts';
import { repoRoot, runSnippet, SNIPPET_RUNTIMES, tsSnippets, userEnv } from '../support/doc-snippets.ts';
import { providersOnLoopback } from '../support/provider-loopback.ts';
import { anthropicError, anthropicMessage, chatCompletion, chatCompletionStream, openAiResponse, scriptedFetch, type WireReply } from '../support/provider-wire.ts';
import { expectNothingLost, recordedPlugin, type AtifDoc, type Recorded } from './support.ts';
import { sameOnNative } from './same-on-native.ts';

const CLAUDE = 'claude-sonnet-4-5-20250929';
const GPT = 'gpt-4.1-2025-04-14';
const SELECTOR = 'gpt-4o-mini-2024-07-18';

const getWeather = tool(async ({ city }) => `It is sunny in ${city}.`, { name: 'get_weather', description: 'Get the weather for a city', schema: z.object({ city: z.string() }) });
const lookup = (name: string) => tool(async ({ city }) => `${name} for ${city}: nothing unusual.`, { name, description: `Get the ${name.replace('get_', '')} for a city`, schema: z.object({ city: z.string() }) });
const anthropic = (fetch: typeof globalThis.fetch) => new ChatAnthropic({ model: 'claude-sonnet-4-5', apiKey: 'sk-ant-test', maxRetries: 0, clientOptions: { fetch } });
const openai = (fetch: typeof globalThis.fetch, more: Record<string, unknown> = {}) => new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, configuration: { fetch }, ...more });

type Config = { callbacks?: NemoRelayCallbackHandler[] };
/** A program: given the config its calls take (the handler in `callbacks`, or nothing), what it got. */
type Program = (config: Config) => Promise<{ messages: BaseMessage[]; texts: string[]; requests: number }>;

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const TIME_KEYS = new Set(['timestamp', 'time', 'started_at', 'ended_at', 'start_time', 'end_time', 'duration_ms', 'latency_ms', 'created_at', 'elapsed_ms']);
/**
 * What two recordings of one program share: run ids (LangChain's, new each run) become their order of first
 * appearance, times and durations are left out; everything else (texts, tokens, models, tool call ids) stays.
 */
function comparable(value: unknown): unknown {
  const ids = new Map<string, string>();
  const text = JSON.stringify(value, (key, inner) => (TIME_KEYS.has(key) || /_(ms|ns|at)$|duration|timestamp/.test(key) ? undefined : inner));
  return JSON.parse(text.replace(UUID, (id) => ids.get(id) ?? (ids.set(id, `<id${ids.size}>`), `<id${ids.size - 1}>`)));
}

/** The run's hooks and trajectories, nothing lost, every trajectory valid. */
async function recordingOf(recorded: Recorded): Promise<{ hooks: unknown; atif: AtifDoc[] }> {
  const { atif, counters } = await recorded.finish();
  expectNothingLost(counters);
  for (const doc of atif) expect(validateAtif(doc)).toEqual([]);
  await sameOnNative(recorded);
  return { hooks: comparable(recorded.log), atif };
}

/**
 * The program with the handler in `callbacks`, then instrumented with none: the same hooks in the same order, the
 * same trajectories, and the same things got by the program. The instrumented recording is returned for its checks.
 */
async function sameAsExplicit(label: string, program: Program): Promise<{ atif: AtifDoc[]; log: Recorded['log']; got: Awaited<ReturnType<Program>> }> {
  const explicit = recordedPlugin(`${label}-explicit`);
  const handler = new NemoRelayCallbackHandler(explicit.hooks);
  const gotExplicit = await program({ callbacks: [handler] });
  handler.close();
  const expected = await recordingOf(explicit);

  const global = recordedPlugin(`${label}-global`);
  const uninstall = instrumentLangChain(global.hooks);
  let got: Awaited<ReturnType<Program>>;
  try {
    got = await program({});
  } finally {
    uninstall();
  }
  const actual = await recordingOf(global);
  expect(got.texts).toEqual(gotExplicit.texts);
  expect(actual.hooks).toEqual(expected.hooks);
  expect(comparable(actual.atif)).toEqual(comparable(expected.atif));
  expect(actual.atif.length).toBeGreaterThan(0);
  return { atif: actual.atif, log: global.log, got };
}

const agentSteps = (doc: AtifDoc): AtifDoc[] => (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent' && step.llm_call_count !== 0);
const userSteps = (doc: AtifDoc): string[] => (doc.steps as AtifDoc[]).filter((step) => step.source === 'user').map((step) => String(step.message));
const recordedCounts = (doc: AtifDoc): number[][] => agentSteps(doc).filter((step) => step.metrics !== undefined).map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens]);
const reported = (messages: BaseMessage[]): number[][] =>
  messages.map((m) => (m as AIMessage).usage_metadata).filter((usage) => usage !== undefined).map((usage) => [usage!.input_tokens, usage!.output_tokens]);
const callIds = (doc: AtifDoc): string[] => agentSteps(doc).flatMap((step) => (step.tool_calls ?? []).map((call: AtifDoc) => call.tool_call_id));
const aiMessages = (messages: BaseMessage[]): AIMessage[] => messages.filter((m) => m.getType() === 'ai') as AIMessage[];

/** The page's first program: createAgent on ChatAnthropic with a tool, a retry and a tool-error middleware, on a thread. */
const weatherAgent: Program = async (config) => {
  const { fetch, requests } = scriptedFetch([
    anthropicError(529, 'overloaded_error', 'Overloaded'),
    anthropicMessage({ id: 'msg_01Ask', model: CLAUDE, content: [{ type: 'text', text: 'Let me look.' }, { type: 'tool_use', id: 'toolu_01Paris', name: 'get_weather', input: { city: 'Paris' } }], usage: { input_tokens: 270, output_tokens: 40, cache_creation_input_tokens: 3000 } }),
    anthropicMessage({ id: 'msg_02Say', model: CLAUDE, content: [{ type: 'text', text: 'It is sunny in Paris.' }], usage: { input_tokens: 194, output_tokens: 12, cache_read_input_tokens: 1216 } }),
  ]);
  const agent = createAgent({
    model: anthropic(fetch),
    tools: [getWeather],
    name: 'weather_agent',
    middleware: [modelRetryMiddleware({ maxRetries: 2, initialDelayMs: 0 }), toolErrorMiddleware({ onError: (_error, request) => `Tool ${request.toolCall.name} failed.` })],
  });
  const result = await agent.invoke({ messages: [{ role: 'user', content: 'What is the weather in Paris?' }] }, { ...config, configurable: { thread_id: 'user-42' } });
  return { messages: result.messages, texts: [String(result.messages.at(-1)?.content)], requests: requests.length };
};

describe('instrumentLangChain records what the handler in `callbacks` records', () => {
  it("the page's first program (createAgent, a tool, modelRetryMiddleware, toolErrorMiddleware, a thread): the same hooks and trajectory", async () => {
    const { atif, got } = await sameAsExplicit('lc-global-agent', weatherAgent);
    expect(got.requests).toBe(3);
    expect(atif).toHaveLength(1);
    const doc = atif[0]!;
    expect(doc.session_id).toBe('user-42');
    expect(doc.agent.name).toBe('weather_agent');
    expect(userSteps(doc)).toEqual(['What is the weather in Paris?']);
    expect(callIds(doc)).toEqual(['toolu_01Paris']);
    // The overloaded attempt (the model asked for, no answer), its retry, the answer.
    expect(agentSteps(doc).map((step) => step.model_name)).toEqual(['claude-sonnet-4-5', CLAUDE, CLAUDE]);
    expect(agentSteps(doc).at(-1)!.message).toBe('It is sunny in Paris.');
    expect(recordedCounts(doc)).toEqual(reported(got.messages));
  });

  it('a StateGraph with a ToolNode on a MemorySaver, two invokes of one thread_id: one trajectory, a turn each', async () => {
    const program: Program = async (config) => {
      const { fetch, requests } = scriptedFetch([
        chatCompletion({ id: 'chatcmpl-1', model: GPT, content: null, toolCalls: [{ id: 'call_paris', name: 'get_weather', args: { city: 'Paris' } }], usage: { prompt_tokens: 70, completion_tokens: 15 } }),
        chatCompletion({ id: 'chatcmpl-2', model: GPT, content: 'It is sunny in Paris.', usage: { prompt_tokens: 110, completion_tokens: 8 } }),
        chatCompletion({ id: 'chatcmpl-3', model: GPT, content: 'You asked about Paris.', usage: { prompt_tokens: 130, completion_tokens: 6 } }),
      ]);
      const model = openai(fetch).bindTools([getWeather]);
      const graph = new StateGraph(MessagesAnnotation)
        .addNode('agent', async (state) => ({ messages: [await model.invoke(state.messages)] }))
        .addNode('tools', new ToolNode([getWeather]))
        .addEdge(START, 'agent')
        .addConditionalEdges('agent', toolsCondition)
        .addEdge('tools', 'agent')
        .compile({ checkpointer: new MemorySaver() });
      const thread = { ...config, configurable: { thread_id: 'thread-9' } };
      const first = await graph.invoke({ messages: [{ role: 'user', content: 'Weather in Paris?' }] }, thread);
      const second = await graph.invoke({ messages: [{ role: 'user', content: 'Which city did I ask about?' }] }, thread);
      return { messages: second.messages, texts: [String(first.messages.at(-1)!.content), String(second.messages.at(-1)!.content)], requests: requests.length };
    };
    const { atif, got } = await sameAsExplicit('lc-global-graph', program);
    expect(got.requests).toBe(3);
    expect(atif).toHaveLength(1);
    const doc = atif[0]!;
    expect(doc.session_id).toBe('thread-9');
    expect(userSteps(doc)).toEqual(['Weather in Paris?', 'Which city did I ask about?']);
    expect(callIds(doc)).toEqual(['call_paris']);
    expect(agentSteps(doc).map((step) => step.message)).toEqual(['', 'It is sunny in Paris.', 'You asked about Paris.']);
    expect(recordedCounts(doc)).toEqual(reported(got.messages));
  });

  it('a bare model, invoked then streamed: a turn and a session each, with its text and tokens', async () => {
    const program: Program = async (config) => {
      const { fetch, requests } = scriptedFetch([
        chatCompletion({ id: 'chatcmpl-b1', model: GPT, content: 'Bonjour.', usage: { prompt_tokens: 12, completion_tokens: 3 } }),
        chatCompletionStream({ id: 'chatcmpl-b2', model: GPT, content: 'Hallo.', usage: { prompt_tokens: 13, completion_tokens: 4 } }),
      ]);
      const model = openai(fetch);
      const invoked = await model.invoke('Say hello in French.', config);
      let streamed: AIMessageChunk | undefined;
      for await (const chunk of await model.stream('Say hello in German.', config)) streamed = streamed === undefined ? chunk : streamed.concat(chunk);
      return { messages: [invoked, streamed!], texts: [String(invoked.content), String(streamed!.content)], requests: requests.length };
    };
    const { atif, got } = await sameAsExplicit('lc-global-bare', program);
    expect(got.texts).toEqual(['Bonjour.', 'Hallo.']);
    const byUser = Object.fromEntries(atif.map((doc) => [userSteps(doc)[0], [agentSteps(doc).map((step) => step.message), recordedCounts(doc)]]));
    expect(byUser).toEqual({ 'Say hello in French.': [['Bonjour.'], [[12, 3]]], 'Say hello in German.': [['Hallo.'], [[13, 4]]] });
    expect(reported(got.messages)).toEqual([[12, 3], [13, 4]]);
  });

  it('RunnableWithMessageHistory, two invokes of one session: a session each invoke, as the handler without a sessionId records it', async () => {
    const chatPrompt = ChatPromptTemplate.fromMessages([['system', 'You are helpful.'], new MessagesPlaceholder('history'), ['human', '{question}']]);
    const program: Program = async (config) => {
      const { fetch, requests } = scriptedFetch([
        chatCompletion({ id: 'chatcmpl-h1', model: GPT, content: 'Hello Bob.', usage: { prompt_tokens: 20, completion_tokens: 3 } }),
        chatCompletion({ id: 'chatcmpl-h2', model: GPT, content: 'Your name is Bob.', usage: { prompt_tokens: 34, completion_tokens: 5 } }),
      ]);
      const history = new InMemoryChatMessageHistory();
      const chat = new RunnableWithMessageHistory({ runnable: chatPrompt.pipe(openai(fetch)), getMessageHistory: () => history, inputMessagesKey: 'question', historyMessagesKey: 'history' });
      const texts: string[] = [];
      const messages: BaseMessage[] = [];
      for (const question of ['I am Bob.', 'What is my name?']) {
        const answer = await chat.invoke({ question }, { ...config, configurable: { sessionId: 'chat-7' } });
        texts.push(String(answer.content));
        messages.push(answer);
      }
      expect(requests[1]!.body.messages.map((m: { content: string }) => m.content)).toEqual(['You are helpful.', 'I am Bob.', 'Hello Bob.', 'What is my name?']);
      return { messages, texts, requests: requests.length };
    };
    const { atif, got } = await sameAsExplicit('lc-global-history', program);
    expect(got.texts).toEqual(['Hello Bob.', 'Your name is Bob.']);
    expect(atif.map((doc) => [userSteps(doc), agentSteps(doc).map((step) => step.message), recordedCounts(doc)]).sort()).toEqual([
      [['I am Bob.'], ['Hello Bob.'], [[20, 3]]],
      [['What is my name?'], ['Your name is Bob.'], [[34, 5]]],
    ]);
  });
});

describe('what only the global handler does', () => {
  const providers = providersOnLoopback();

  it("hears llmToolSelectorMiddleware({ model: 'openai:gpt-4o-mini' }) as LangChain's docs write it: the selection LangChain runs with `callbacks: []` is the llmToolSelector sub-agent a handler on the selector model records", async () => {
    const selectorReplies = (): WireReply[] => [
      chatCompletion({ id: 'chatcmpl-sel', model: SELECTOR, content: '{"tools":["get_weather"]}', usage: { prompt_tokens: 96, completion_tokens: 8 } }),
      openAiResponse({ id: 'resp_01', model: GPT, text: 'It is sunny in Paris.', usage: { prompt_tokens: 120, completion_tokens: 11 } }),
    ];
    const kit = () => [getWeather, lookup('get_news'), lookup('get_stocks')];
    const ask = { messages: [{ role: 'user', content: 'What is the weather in Paris?' }] };

    // The handler on the selector model and in the run: what the page says records the selection.
    const explicit = recordedPlugin('lc-global-selector-explicit');
    providers.serve(selectorReplies());
    const handler = new NemoRelayCallbackHandler(explicit.hooks);
    const selector = await initChatModel('openai:gpt-4o-mini', { callbacks: [handler] });
    const explicitAgent = createAgent({ model: 'openai:gpt-4.1', tools: kit(), middleware: [llmToolSelectorMiddleware({ model: selector, maxTools: 1 })] });
    await explicitAgent.invoke(ask, { callbacks: [handler] });
    const expected = await recordingOf(explicit);

    // As LangChain's docs write it, instrumented: no handler anywhere in the program.
    const global = recordedPlugin('lc-global-selector');
    const { requests } = providers.serve(selectorReplies());
    const uninstall = instrumentLangChain(global.hooks);
    const agent = createAgent({ model: 'openai:gpt-4.1', tools: kit(), middleware: [llmToolSelectorMiddleware({ model: 'openai:gpt-4o-mini', maxTools: 1 })] });
    const result = await agent.invoke(ask).finally(uninstall);
    expect(requests.map((r) => [new URL(r.url).pathname, r.body.model])).toEqual([['/v1/chat/completions', 'gpt-4o-mini'], ['/v1/responses', 'gpt-4.1']]);
    const actual = await recordingOf(global);
    expect(actual.hooks).toEqual(expected.hooks);
    expect(comparable(actual.atif)).toEqual(comparable(expected.atif));

    expect(actual.atif).toHaveLength(1);
    const doc = actual.atif[0]!;
    expect(userSteps(doc)).toEqual(['What is the weather in Paris?']);
    expect(agentSteps(doc).map((step) => [step.model_name, step.message])).toEqual([[GPT, 'It is sunny in Paris.']]);
    expect(recordedCounts(doc)).toEqual(reported(result.messages));
    const children = doc.subagent_trajectories as AtifDoc[];
    expect(children.map((child) => [child.agent.name, userSteps(child), agentSteps(child).map((step) => [step.model_name, step.message]), recordedCounts(child)])).toEqual([
      ['llmToolSelector', ['What is the weather in Paris?'], [[SELECTOR, '{"tools":["get_weather"]}']], [[96, 8]]],
    ]);
    // Both requests the program's providers answered, each once.
    expect(global.log.filter((e) => e.hook === 'post_api_request').map((e) => e.payload.response_model)).toEqual([SELECTOR, GPT]);
  });

  it('a selector model that carries a handler (what the page told before), instrumented: the selection is recorded once, the sub-agent of its turn', async () => {
    const { fetch, requests } = scriptedFetch([
      chatCompletion({ id: 'chatcmpl-sel', model: 'gpt-4.1-mini-2025-04-14', content: '{"tools":["get_weather"]}', usage: { prompt_tokens: 96, completion_tokens: 8 } }),
      chatCompletion({ id: 'chatcmpl-1', model: GPT, content: 'It is sunny in Paris.', usage: { prompt_tokens: 120, completion_tokens: 11 } }),
    ]);
    const recorded = recordedPlugin('lc-global-selector-handler');
    const uninstall = instrumentLangChain(recorded.hooks);
    const selector = openai(fetch, { model: 'gpt-4.1-mini', callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    const agent = createAgent({ model: openai(fetch), tools: [getWeather, lookup('get_news'), lookup('get_stocks')], middleware: [llmToolSelectorMiddleware({ model: selector, maxTools: 1 })] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'What is the weather in Paris?' }] }).finally(uninstall);
    expect(requests).toHaveLength(2);
    const { atif } = await recordingOf(recorded);
    expect(atif).toHaveLength(1);
    const doc = atif[0]!;
    expect(recordedCounts(doc)).toEqual(reported(result.messages));
    expect((doc.subagent_trajectories as AtifDoc[]).map((child) => [child.agent.name, recordedCounts(child)])).toEqual([['llmToolSelector', [[96, 8]]]]);
    expect(recorded.log.filter((e) => e.hook === 'post_api_request')).toHaveLength(requests.length);
  });

  it('a run given the handler in `callbacks` while instrumented is recorded once, by that handler, as without instrumentLangChain', async () => {
    const alone = recordedPlugin('lc-global-both-alone');
    const aloneHandler = new NemoRelayCallbackHandler(alone.hooks);
    await weatherAgent({ callbacks: [aloneHandler] });
    aloneHandler.close();
    const expected = await recordingOf(alone);

    const both = recordedPlugin('lc-global-both');
    const uninstall = instrumentLangChain(both.hooks);
    const handler = new NemoRelayCallbackHandler(both.hooks);
    const got = await weatherAgent({ callbacks: [handler] }).finally(uninstall);
    handler.close();
    const actual = await recordingOf(both);
    expect(got.requests).toBe(3);
    expect(actual.hooks).toEqual(expected.hooks);
    expect(comparable(actual.atif)).toEqual(comparable(expected.atif));
    expect(both.log.filter((e) => e.hook === 'post_api_request')).toHaveLength(2); // the 529, then two answers: three attempts, two answered
    expect(both.log.filter((e) => e.hook === 'api_request_error')).toHaveLength(1);
    expect(both.log.filter((e) => e.hook === 'pre_tool_call').map((e) => e.payload.tool_call_id)).toEqual(['toolu_01Paris']);
  });

  it('records the runs of the async context it was called in and of the contexts it starts (a timer, a request to a server), not those of another context; two contexts, two registries', async () => {
    const storage = AsyncLocalStorageProviderSingleton.getInstance();
    const mine = recordedPlugin('lc-global-context-mine');
    const theirs = recordedPlugin('lc-global-context-theirs');
    const ask = async (question: string, answer: string) => {
      const { fetch } = scriptedFetch([chatCompletion({ id: `chatcmpl-${answer.length}`, model: GPT, content: answer, usage: { prompt_tokens: 10, completion_tokens: 2 } })]);
      return String((await openai(fetch).invoke(question)).content);
    };
    // Each context instrumented with its own registry, the two running at once.
    const inContext = (recorded: Recorded, who: string) =>
      storage.run({}, async () => {
        const uninstall = instrumentLangChain(recorded.hooks);
        try {
          const server = http.createServer((_request, response) => void ask(`${who}: from a request`, `${who} served`).then((text) => response.end(text)));
          await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
          const { port } = server.address() as { port: number };
          const texts = await Promise.all([
            ask(`${who}: directly`, `${who} direct`),
            new Promise<string>((done) => setTimeout(() => void ask(`${who}: from a timer`, `${who} timed`).then(done), 0)),
            fetch(`http://127.0.0.1:${port}/`).then((response) => response.text()),
          ]);
          await new Promise<void>((closed) => server.close(() => closed()));
          return texts;
        } finally {
          uninstall();
        }
      });
    const [a, b] = await Promise.all([inContext(mine, 'mine'), inContext(theirs, 'theirs')]);
    expect(a).toEqual(['mine direct', 'mine timed', 'mine served']);
    expect(b).toEqual(['theirs direct', 'theirs timed', 'theirs served']);
    // A run of a context that does not descend from either: not recorded.
    await storage.run({}, () => ask('nobody: outside', 'outside'));
    const questions = async (recorded: Recorded) => (await recordingOf(recorded)).atif.map((doc) => userSteps(doc)[0]).sort();
    // Deno runs a node:http server's requests in the program's top-level context, not in the one that made the server
    // (the page says so): there only an instrumentLangChain called at the top level reaches them.
    const served = (who: string) => (runtime === 'deno' ? [] : [`${who}: from a request`]);
    expect(await questions(mine)).toEqual(['mine: directly', ...served('mine'), 'mine: from a timer']);
    expect(await questions(theirs)).toEqual(['theirs: directly', ...served('theirs'), 'theirs: from a timer']);
  });

  it('called inside a function: the rest of the function records, and its caller only when the call came before the function’s first `await`', async () => {
    const storage = AsyncLocalStorageProviderSingleton.getInstance();
    const ask = async (question: string) => {
      const { fetch } = scriptedFetch([chatCompletion({ id: 'chatcmpl-f', model: GPT, content: 'Yes.', usage: { prompt_tokens: 6, completion_tokens: 1 } })]);
      await openai(fetch).invoke(question);
    };
    const questionsOf = async (recorded: Recorded) => (await recordingOf(recorded)).atif.map((doc) => userSteps(doc)[0]).sort();
    for (const awaitFirst of [true, false]) {
      const recorded = recordedPlugin(`lc-global-in-function-${awaitFirst}`);
      let uninstall = () => undefined as void;
      await storage.run({}, async () => {
        const setUp = async () => {
          if (awaitFirst) await Promise.resolve();
          uninstall = instrumentLangChain(recorded.hooks);
          await ask('in the function');
        };
        await setUp();
        await ask('in its caller');
      });
      uninstall();
      expect(await questionsOf(recorded), `instrumentLangChain ${awaitFirst ? 'after' : 'before'} an await`).toEqual(awaitFirst ? ['in the function'] : ['in its caller', 'in the function']);
    }
  });

  it('uninstall(): a run under way finishes recording, the thread it kept open closes, a later run is not recorded', async () => {
    const recorded = recordedPlugin('lc-global-uninstall');
    const uninstall = instrumentLangChain(recorded.hooks);
    const { fetch, requests } = scriptedFetch([
      chatCompletion({ id: 'chatcmpl-u1', model: GPT, content: null, toolCalls: [{ id: 'call_u', name: 'get_weather_now', args: { city: 'Oslo' } }], usage: { prompt_tokens: 40, completion_tokens: 9 } }),
      chatCompletion({ id: 'chatcmpl-u2', model: GPT, content: 'It is snowing in Oslo.', usage: { prompt_tokens: 60, completion_tokens: 7 } }),
      chatCompletion({ id: 'chatcmpl-u3', model: GPT, content: 'Still snowing.', usage: { prompt_tokens: 70, completion_tokens: 3 } }),
    ]);
    // The tool removes the instrumentation while the run is under way.
    const weatherNow = tool(async ({ city }) => (uninstall(), `It is snowing in ${city}.`), { name: 'get_weather_now', description: 'Get the weather now', schema: z.object({ city: z.string() }) });
    const agent = createAgent({ model: openai(fetch), tools: [weatherNow], checkpointer: new MemorySaver() });
    const thread = { configurable: { thread_id: 'oslo' } };
    const first = await agent.invoke({ messages: [{ role: 'user', content: 'Weather in Oslo?' }] }, thread);
    expect(recorded.log.filter((e) => e.hook === 'on_session_finalize').map((e) => e.payload.session_id)).toEqual(['oslo']);
    const later = await agent.invoke({ messages: [{ role: 'user', content: 'And now?' }] }, thread);
    expect(String(later.messages.at(-1)!.content)).toBe('Still snowing.');
    expect(requests).toHaveLength(3);
    const { atif } = await recordingOf(recorded);
    expect(atif).toHaveLength(1);
    const doc = atif[0]!;
    expect(userSteps(doc)).toEqual(['Weather in Oslo?']);
    expect(callIds(doc)).toEqual(['call_u']);
    expect(agentSteps(doc).map((step) => step.message)).toEqual(['', 'It is snowing in Oslo.']);
    expect(recordedCounts(doc)).toEqual(reported(first.messages));
    expect(recorded.log.filter((e) => e.hook === 'post_api_request')).toHaveLength(2);
    uninstall(); // again: nothing
  });

  it('a hook that throws never reaches the program', async () => {
    const recorded = recordedPlugin('lc-global-throws');
    recorded.hooks.on('pre_api_request', () => {
      throw new Error('a broken subscriber');
    });
    const uninstall = instrumentLangChain(recorded.hooks, { logger: { debug() {}, info() {}, warn() {}, error() {} } });
    const got = await weatherAgent({}).finally(uninstall);
    expect(got.texts).toEqual(['It is sunny in Paris.']);
    expect(aiMessages(got.messages).map((m) => m.tool_calls?.map((call) => call.id))).toEqual([['toolu_01Paris'], []]);
    await recorded.finish();
  });
});


describe('importing nemo-relay-hooks/langchain gives LangChain its AsyncLocalStorage, as langchain and @langchain/langgraph do', () => {
  // A program of @langchain/core alone (no langchain, no LangGraph): a model a RunnableLambda invokes without passing
  // its config. Run in a process of its own: this one already imported LangGraph.
  const program = (withAdapter: boolean) => `
import { RunnableLambda } from '@langchain/core/runnables';
import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import { FakeListChatModel } from '@langchain/core/utils/testing';
${withAdapter ? "import 'nemo-relay-hooks/langchain';" : ''}
const heard = [];
class Listener extends BaseCallbackHandler { name = 'listener'; handleChatModelStart() { heard.push('model'); } }
const model = new FakeListChatModel({ responses: ['hi'] });
const chain = RunnableLambda.from(async (text) => (await model.invoke(text)).content);
await chain.invoke('hello', { callbacks: [new Listener()] });
console.log(JSON.stringify({ storage: globalThis[Symbol.for('ls:tracing_async_local_storage')] !== undefined, heard }));
`;
  it(`on ${runtime}: a model invoked inside a runnable without its config is then told to the runnable's callbacks`, async () => {
    const outcome = async (withAdapter: boolean) => {
      const result = await runSnippet(program(withAdapter), runtime, 'langchain-storage', userEnv({ NO_COLOR: '1' }));
      rmSync(result.cwd, { recursive: true, force: true });
      expect(result.status, result.stderr).toBe(0);
      return JSON.parse(result.stdout.trim().split('\n').at(-1)!);
    };
    expect(await outcome(false)).toEqual({ storage: false, heard: [] });
    expect(await outcome(true)).toEqual({ storage: true, heard: ['model'] });
  }, 130_000);
});

describe('docs/adapters/langchain.md, "Without `callbacks`"', () => {
  const providers = providersOnLoopback();
  const snippet = tsSnippets(readFileSync(path.join(repoRoot, 'docs/adapters/langchain.md'), 'utf8')).find((code) => code.includes('instrumentLangChain(hooks);'));
  for (const runtime of SNIPPET_RUNTIMES) {
    it(`its snippet runs as written on ${runtime} (instrumentLangChain at the top level, no callbacks) and records the turn and the selection`, async () => {
      if (snippet === undefined) expect.fail('the page has no snippet calling instrumentLangChain(hooks)');
      const { requests } = providers.serve([
        chatCompletion({ id: 'chatcmpl-sel', model: SELECTOR, content: '{"tools":["get_weather"]}', usage: { prompt_tokens: 96, completion_tokens: 8 } }),
        openAiResponse({ id: 'resp_01', model: GPT, text: 'It is sunny in Paris.', usage: { prompt_tokens: 120, completion_tokens: 11 } }),
      ]);
      const result = await runSnippet(snippet, runtime, 'langchain-global', userEnv({ OPENAI_API_KEY: 'sk-test-not-a-key', OPENAI_BASE_URL: `${providers.url}/v1`, NO_COLOR: '1' }));
      try {
        expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
        expect(result.stdout).toContain('It is sunny in Paris.');
        expect(requests.map((r) => [new URL(r.url).pathname, r.body.model, (r.body.tools ?? []).map((t: AtifDoc) => t.name ?? t.function?.name)])).toEqual([
          ['/v1/chat/completions', 'gpt-4o-mini', []],
          ['/v1/responses', 'gpt-4.1', ['get_weather']],
        ]);
        const files = readdirSync(path.join(result.cwd, 'trajectories'));
        expect(files).toHaveLength(1);
        const doc = JSON.parse(readFileSync(path.join(result.cwd, 'trajectories', files[0]!), 'utf8')) as AtifDoc;
        expect(validateAtif(doc)).toEqual([]);
        expect(doc.session_id).toBe('user-42');
        expect(userSteps(doc)).toEqual(['What is the weather in Paris?']);
        expect(agentSteps(doc).map((step) => [step.model_name, step.message])).toEqual([[GPT, 'It is sunny in Paris.']]);
        expect(recordedCounts(doc)).toEqual([[120, 11]]);
        const children = doc.subagent_trajectories as AtifDoc[];
        expect(children.map((child) => [child.agent.name, agentSteps(child).map((step) => step.model_name), recordedCounts(child)])).toEqual([['llmToolSelector', [SELECTOR], [[96, 8]]]]);
      } finally {
        rmSync(result.cwd, { recursive: true, force: true });
      }
    }, 130_000);
  }
});
