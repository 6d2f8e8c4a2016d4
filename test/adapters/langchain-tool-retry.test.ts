// A LangChain tool call the program runs more than once under the model's call id, as LangChain's docs write it:
// `toolRetryMiddleware` (a failure then a success; every attempt failing, with the default `onFailure` and with
// `onFailure: 'error'`), a `wrapToolCall` of the user's own that calls `handler` again after an error, one that calls it
// again after a success (a self-check), and a hand-written LangGraph node that runs a tool, catches its error and
// returns its own ToolMessage. The real ChatOpenAI speaks Chat Completions to a fake fetch
// (test/support/provider-wire.ts). Each trajectory's observation of the call is checked against what the model read
// (the ToolMessage in the returned state and the tool message the next request sent), its attempts against what the
// tool threw, and the same hooks on native write the same files.
import { describe, expect, it } from 'vitest';
import { ChatOpenAI } from '@langchain/openai';
import { tool } from '@langchain/core/tools';
import { AIMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { createAgent, createMiddleware, toolRetryMiddleware } from 'langchain';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import * as z from 'zod';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { chatCompletion, scriptedFetch, type SeenRequest } from '../support/provider-wire.ts';
import { expectTurnEndInAtif, finishedRun, recordedPlugin, viewRows, type AtifDoc, type Recorded } from './support.ts';
import { sameOnNative } from './same-on-native.ts';

const GPT = 'gpt-4.1-2025-04-14';
const openai = (fetch: typeof globalThis.fetch) => new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, configuration: { fetch } });
const PROMPT = { messages: [{ role: 'user', content: 'Weather in Paris?' }] };
const replies = () => [
  chatCompletion({ id: 'chatcmpl-1', model: GPT, content: null, toolCalls: [{ id: 'call_paris', name: 'get_weather', args: { city: 'Paris' } }], usage: { prompt_tokens: 70, completion_tokens: 18 } }),
  chatCompletion({ id: 'chatcmpl-2', model: GPT, content: 'It is sunny in Paris.', usage: { prompt_tokens: 110, completion_tokens: 7 } }),
];

/** A weather tool whose runs answer (a string) or throw (an Error) as `script` says, in turn; `runs` counts them. */
const scriptedTool = (script: ReadonlyArray<string | Error>) => {
  const state = { runs: 0 };
  const weather = tool(
    async ({ city }): Promise<string> => {
      const next = script[Math.min(state.runs, script.length - 1)]!;
      state.runs += 1;
      if (next instanceof Error) throw next;
      return `${next} in ${city}.`;
    },
    { name: 'get_weather', description: 'Get the weather for a city', schema: z.object({ city: z.string() }) },
  );
  return { weather, state };
};
const retryFast = (options: Parameters<typeof toolRetryMiddleware>[0] = {}) => toolRetryMiddleware({ maxRetries: 2, initialDelayMs: 1, jitter: false, ...options });

/** Each call's result in the trajectory: [call id, content, status]. */
const observed = (doc: AtifDoc): Array<[string, string, string]> =>
  (doc.steps as AtifDoc[]).flatMap((step) => (step.observation?.results ?? []).map((r: AtifDoc) => [r.source_call_id, String(r.content), r.extra?.metadata?.status] as [string, string, string]));
/** The failed attempts the trajectory's observation of `id` records: [error type, error message]. */
const observedAttempts = (doc: AtifDoc, id: string): unknown =>
  (doc.steps as AtifDoc[])
    .flatMap((step) => step.observation?.results ?? [])
    .find((r: AtifDoc) => r.source_call_id === id)
    ?.extra?.metadata?.failed_attempts?.map((a: AtifDoc) => [a.error_type, a.error_message]);
/** The tool messages of the program's state, what the model read: [tool_call_id, content, status]. */
const toolMessages = (messages: BaseMessage[]): Array<[string, string, string]> =>
  messages.filter((m) => ToolMessage.isInstance(m)).map((m) => [(m as ToolMessage).tool_call_id, String(m.content), (m as ToolMessage).status === 'error' ? 'error' : 'ok']);
/** The tool messages the request after the tools ran sent the model: [tool_call_id, content]. */
const sentToModel = (requests: SeenRequest[]): Array<[string, string]> =>
  (requests[1]!.body.messages as Array<Record<string, string>>).filter((m) => m.role === 'tool').map((m) => [m.tool_call_id!, m.content!]);
/** The tool hooks: `pre` for a start, else [call id, status, attempt_index, the failed attempts' errors, result]. */
const toolHooks = (recorded: Recorded): unknown[] =>
  recorded.log
    .filter((e) => e.hook === 'pre_tool_call' || e.hook === 'post_tool_call')
    .map((e) =>
      e.hook === 'pre_tool_call'
        ? ['pre', e.payload.tool_call_id]
        : [e.payload.tool_call_id, e.payload.status, e.payload.attempt_index, (e.payload.failed_attempts as AtifDoc[] | undefined)?.map((a) => [a.error_type, a.error_message]), e.payload.result],
    );
/** The ATOF tool scope events: [start or end, call id, data]. */
const toolScopes = (atof: AtifDoc[]): unknown[] => atof.filter((e) => e.kind === 'scope' && e.category === 'tool').map((e) => [e.scope_category, e.category_profile.tool_call_id, e.data]);

const TIMED_OUT = new Error('weather service timed out');

describe('toolRetryMiddleware: one call, observed as what the model read, its failed attempts inside it', () => {
  it('a failure then a success: the call is the success the model read; the failed attempt is recorded in it', async () => {
    const { fetch, requests } = scriptedFetch(replies());
    const { weather, state } = scriptedTool([TIMED_OUT, 'It is sunny and 21C']);
    const recorded = recordedPlugin('lc-retry-then-ok');
    const agent = createAgent({ model: openai(fetch), tools: [weather], middleware: [retryFast()] });
    const result = await agent.invoke(PROMPT, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(state.runs).toBe(2);
    const read = [['call_paris', 'It is sunny and 21C in Paris.', 'ok']];
    expect(toolMessages(result.messages)).toEqual(read);
    expect(sentToModel(requests)).toEqual(read.map(([id, content]) => [id, content]));
    const { doc, atof } = await finishedRun(recorded);
    expect(toolHooks(recorded)).toEqual([['pre', 'call_paris'], ['call_paris', 'ok', 1, [['Error', 'weather service timed out']], 'It is sunny and 21C in Paris.']]);
    expect(toolScopes(atof)).toEqual([
      ['start', 'call_paris', { city: 'Paris' }],
      ['end', 'call_paris', 'It is sunny and 21C in Paris.'],
    ]);
    expect(observed(doc)).toEqual(read);
    expect(observedAttempts(doc, 'call_paris')).toEqual([['Error', 'weather service timed out']]);
    // What `nemo-relay-hooks view` shows of either file: one call, which did not go through first time.
    for (const of of ['atif', 'atof'] as const) expect((await viewRows(recorded, of)).filter((row) => row.startsWith('tool'))).toEqual(['tool get_weather  {"city":"Paris"} · after 1 failed attempt']);
    await sameOnNative(recorded);
  }, 30_000);

  it("every attempt failed (onFailure default): the call failed with the last error, observed as the middleware's message the model read", async () => {
    const { fetch, requests } = scriptedFetch(replies());
    const { weather, state } = scriptedTool([new Error('timed out 1'), new Error('timed out 2'), new Error('timed out 3')]);
    const recorded = recordedPlugin('lc-retry-all-fail');
    const agent = createAgent({ model: openai(fetch), tools: [weather], middleware: [retryFast()] });
    const result = await agent.invoke(PROMPT, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(state.runs).toBe(3);
    const told = "Tool 'get_weather' failed after 3 attempts with Error";
    expect(toolMessages(result.messages)).toEqual([['call_paris', told, 'error']]);
    expect(sentToModel(requests)).toEqual([['call_paris', told]]);
    const { doc } = await finishedRun(recorded);
    expect(toolHooks(recorded)).toEqual([
      ['pre', 'call_paris'],
      ['call_paris', 'error', 2, [['Error', 'timed out 1'], ['Error', 'timed out 2']], told],
    ]);
    expect(recorded.log.find((e) => e.hook === 'post_tool_call')!.payload).toMatchObject({ error_type: 'Error', error_message: 'timed out 3' });
    expect(observed(doc)).toEqual([['call_paris', told, 'error']]);
    expect(observedAttempts(doc, 'call_paris')).toEqual([['Error', 'timed out 1'], ['Error', 'timed out 2']]);
    await sameOnNative(recorded);
  }, 30_000);

  it("every attempt failed (onFailure: 'error'): the last error escapes, the model reads nothing; the call and the turn failed with it", async () => {
    const { fetch, requests } = scriptedFetch(replies());
    const { weather } = scriptedTool([new Error('timed out 1'), new Error('timed out 2'), new Error('timed out 3')]);
    const recorded = recordedPlugin('lc-retry-all-fail-error');
    const agent = createAgent({ model: openai(fetch), tools: [weather], middleware: [retryFast({ onFailure: 'error' })] });
    await expect(agent.invoke(PROMPT, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] })).rejects.toThrow('timed out 3');
    expect(requests).toHaveLength(1);
    const { doc } = await finishedRun(recorded);
    expect(toolHooks(recorded)).toEqual([
      ['pre', 'call_paris'],
      ['call_paris', 'error', 2, [['Error', 'timed out 1'], ['Error', 'timed out 2']], 'Error: timed out 3'],
    ]);
    expect(observed(doc)).toEqual([['call_paris', 'Error: timed out 3', 'error']]);
    await expectTurnEndInAtif(recorded, doc, { status: 'failed', error: { name: 'Error', message: 'timed out 3' } });
    await sameOnNative(recorded);
  }, 30_000);
});

describe('a wrapToolCall of your own that calls handler twice', () => {
  it('a retry on an error: one call, the retry’s result the model read, the failure inside it', async () => {
    const { fetch, requests } = scriptedFetch(replies());
    const { weather } = scriptedTool([new Error('upstream busy'), 'It is sunny and 21C']);
    const recorded = recordedPlugin('lc-own-retry-on-error');
    const retryOnce = createMiddleware({
      name: 'RetryOnce',
      wrapToolCall: async (request, handler) => {
        try {
          return await handler(request);
        } catch {
          return handler(request);
        }
      },
    });
    const agent = createAgent({ model: openai(fetch), tools: [weather], middleware: [retryOnce] });
    const result = await agent.invoke(PROMPT, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    const read = [['call_paris', 'It is sunny and 21C in Paris.', 'ok']];
    expect(toolMessages(result.messages)).toEqual(read);
    expect(sentToModel(requests)).toEqual(read.map(([id, content]) => [id, content]));
    const { doc } = await finishedRun(recorded);
    expect(toolHooks(recorded)).toEqual([['pre', 'call_paris'], ['call_paris', 'ok', 1, [['Error', 'upstream busy']], 'It is sunny and 21C in Paris.']]);
    expect(observed(doc)).toEqual(read);
    await sameOnNative(recorded);
  }, 30_000);

  it('a self-check that runs the tool again after a success: two runs of the call; ATIF keeps the first run’s result, the model read the second (a documented limit)', async () => {
    const { fetch, requests } = scriptedFetch(replies());
    const { weather, state } = scriptedTool(['upstream busy', 'It is sunny and 21C']);
    const recorded = recordedPlugin('lc-own-self-check');
    const selfCheck = createMiddleware({
      name: 'SelfCheck',
      wrapToolCall: async (request, handler) => {
        const first = await handler(request);
        return ToolMessage.isInstance(first) && String(first.content).startsWith('upstream busy') ? handler(request) : first;
      },
    });
    const agent = createAgent({ model: openai(fetch), tools: [weather], middleware: [selfCheck] });
    const result = await agent.invoke(PROMPT, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(state.runs).toBe(2);
    expect(toolMessages(result.messages)).toEqual([['call_paris', 'It is sunny and 21C in Paris.', 'ok']]);
    expect(sentToModel(requests)).toEqual([['call_paris', 'It is sunny and 21C in Paris.']]);
    const { doc } = await finishedRun(recorded);
    // Both runs ended well, each recorded when it ended: nothing LangChain tells callbacks says the first will be
    // followed by another, so its end was written before the second started.
    expect(toolHooks(recorded)).toEqual([
      ['pre', 'call_paris'],
      ['call_paris', 'ok', undefined, undefined, 'upstream busy in Paris.'],
      ['pre', 'call_paris'],
      ['call_paris', 'ok', undefined, undefined, 'It is sunny and 21C in Paris.'],
    ]);
    expect(observed(doc)).toEqual([['call_paris', 'upstream busy in Paris.', 'ok']]);
    await sameOnNative(recorded);
  }, 30_000);
});

describe('a hand-written LangGraph node that runs a tool and catches its error', () => {
  it('the node’s own ToolMessage, from its output, is what the call is observed as; failed with the thrown error', async () => {
    const { fetch, requests } = scriptedFetch(replies());
    const { weather } = scriptedTool([TIMED_OUT]);
    const recorded = recordedPlugin('lc-own-node-catches');
    const model = openai(fetch).bindTools([weather]);
    // As LangGraph's docs write a tool node by hand: it runs each call of the last AI message.
    const tools = async (graphState: typeof MessagesAnnotation.State) => {
      const last = graphState.messages.at(-1) as AIMessage;
      const messages: ToolMessage[] = [];
      for (const call of last.tool_calls ?? []) {
        try {
          messages.push(await weather.invoke(call));
        } catch (error) {
          messages.push(new ToolMessage({ content: `Could not get the weather: ${(error as Error).message}`, tool_call_id: call.id!, status: 'error' }));
        }
      }
      return { messages };
    };
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('agent', async (graphState) => ({ messages: [await model.invoke(graphState.messages)] }))
      .addNode('tools', tools)
      .addEdge(START, 'agent')
      .addConditionalEdges('agent', (graphState) => ((graphState.messages.at(-1) as AIMessage).tool_calls?.length ? 'tools' : END), ['tools', END])
      .addEdge('tools', 'agent')
      .compile();
    const result = await graph.invoke(PROMPT, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    const told = 'Could not get the weather: weather service timed out';
    expect(toolMessages(result.messages)).toEqual([['call_paris', told, 'error']]);
    expect(sentToModel(requests)).toEqual([['call_paris', told]]);
    const { doc } = await finishedRun(recorded);
    expect(toolHooks(recorded)).toEqual([['pre', 'call_paris'], ['call_paris', 'error', undefined, undefined, told]]);
    expect(recorded.log.find((e) => e.hook === 'post_tool_call')!.payload).toMatchObject({ error_type: 'Error', error_message: 'weather service timed out' });
    expect(observed(doc)).toEqual([['call_paris', told, 'error']]);
    await sameOnNative(recorded);
  }, 30_000);
});
