// A LangChain tool that throws, as LangChain's docs write the program around
// it, against what the model read: the error `ToolMessage` the node that ran
// the tool put in the state (createAgent's ToolNode with its default error
// handling, a `wrapToolCall` middleware that catches the error and answers
// with a `ToolMessage` of its own), and a LangGraph `ToolNode` with
// `handleToolErrors: false`, whose error escapes and fails the run. The real
// ChatOpenAI runs over a fake fetch speaking Chat Completions
// (test/support/provider-wire.ts); each trajectory's observation of the
// failed call is checked against the ToolMessage in the agent's returned state
// and the tool message the next request sent the model, its status and error
// against what the tool threw, and the same hooks on native write the same
// files. (createReactAgent's ToolNode: test/adapters/langgraph-programs.test.ts;
// an MCP tool whose result says `isError`: test/adapters/mcp/asks-back-langchain.test.ts.)
import { describe, expect, it } from 'vitest';
import { ChatOpenAI } from '@langchain/openai';
import { tool } from '@langchain/core/tools';
import { ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { createAgent, createMiddleware } from 'langchain';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import * as z from 'zod';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { chatCompletion, scriptedFetch, type SeenRequest } from '../support/provider-wire.ts';
import { expectTurnEndInAtif, finishedRun, recordedPlugin, type AtifDoc, type Recorded } from './support.ts';
import { sameOnNative } from './same-on-native.ts';

const GPT = 'gpt-4.1-2025-04-14';
const openai = (fetch: typeof globalThis.fetch) => new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, configuration: { fetch } });

const getWeather = tool(async ({ city }) => `Sunny in ${city}`, { name: 'get_weather', description: 'The current weather of a city', schema: z.object({ city: z.string() }) });
const getForecast = tool(
  async ({ city }): Promise<string> => {
    throw new Error(`forecast service down for ${city}`);
  },
  { name: 'get_forecast', description: 'The forecast for a city', schema: z.object({ city: z.string() }) },
);
const THROWN = 'forecast service down for Lima';

/** The model asks for three calls at once (the failing one between the two that succeed), then answers. */
const replies = () => [
  chatCompletion({
    id: 'chatcmpl-ask',
    model: GPT,
    content: null,
    toolCalls: [
      { id: 'call_oslo', name: 'get_weather', args: { city: 'Oslo' } },
      { id: 'call_lima', name: 'get_forecast', args: { city: 'Lima' } },
      { id: 'call_rome', name: 'get_weather', args: { city: 'Rome' } },
    ],
    usage: { prompt_tokens: 90, completion_tokens: 30 },
  }),
  chatCompletion({ id: 'chatcmpl-answer', model: GPT, content: 'Oslo and Rome are sunny; no forecast for Lima.', usage: { prompt_tokens: 160, completion_tokens: 14 } }),
];
const PROMPT = { messages: [{ role: 'user', content: 'Weather in Oslo and Rome, forecast for Lima?' }] };

/** Each call's result in the trajectory, in its order: [call id, content, status]. */
const observed = (doc: AtifDoc): Array<[string, string, string]> =>
  (doc.steps as AtifDoc[]).flatMap((step) => (step.observation?.results ?? []).map((r: AtifDoc) => [r.source_call_id, String(r.content), r.extra?.metadata?.status] as [string, string, string]));
/** The tool messages of the agent's returned state: [tool_call_id, content, status]. */
const toolMessages = (messages: BaseMessage[]): Array<[string, string, string]> =>
  messages.filter((m) => ToolMessage.isInstance(m)).map((m) => [(m as ToolMessage).tool_call_id, String(m.content), (m as ToolMessage).status === 'error' ? 'error' : 'ok']);
/** The tool messages the request after the tools ran sent the model: [tool_call_id, content]. */
const sentToModel = (requests: SeenRequest[]): Array<[string, string]> =>
  (requests[1]!.body.messages as Array<Record<string, string>>).filter((m) => m.role === 'tool').map((m) => [m.tool_call_id!, m.content!]);
/** What the hooks said of each call's end: [call id, status, error_type, error_message, result]. */
const toolEnds = (recorded: Recorded): unknown[][] =>
  recorded.log.filter((e) => e.hook === 'post_tool_call').map((e) => [e.payload.tool_call_id, e.payload.status, e.payload.error_type, e.payload.error_message, e.payload.result]);

describe('a LangChain tool that throws: the observation is what the model read', () => {
  it("createAgent's ToolNode (default error handling): the error ToolMessage the model read, failed with the thrown error", async () => {
    const { fetch, requests } = scriptedFetch(replies());
    const recorded = recordedPlugin('lc-tool-error-default');
    const agent = createAgent({ model: openai(fetch), tools: [getWeather, getForecast] });
    const result = await agent.invoke(PROMPT, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    // LangChain's sentence, in the state and on the wire.
    const told = `Error: ${THROWN}\n Please fix your mistakes.`;
    expect(toolMessages(result.messages)).toEqual([
      ['call_oslo', 'Sunny in Oslo', 'ok'],
      ['call_lima', told, 'error'],
      ['call_rome', 'Sunny in Rome', 'ok'],
    ]);
    expect(sentToModel(requests)).toEqual(toolMessages(result.messages).map(([id, content]) => [id, content]));
    const { doc } = await finishedRun(recorded);
    // The failed call ends when its node told the model: after the calls that succeeded.
    expect(observed(doc)).toEqual([
      ['call_oslo', 'Sunny in Oslo', 'ok'],
      ['call_rome', 'Sunny in Rome', 'ok'],
      ['call_lima', told, 'error'],
    ]);
    expect(toolEnds(recorded)).toEqual([
      ['call_oslo', 'ok', null, null, 'Sunny in Oslo'],
      ['call_rome', 'ok', null, null, 'Sunny in Rome'],
      ['call_lima', 'error', 'Error', THROWN, told],
    ]);
    expect(doc.steps.at(-1).message).toBe(result.messages.at(-1)!.content);
    await sameOnNative(recorded);
  }, 30_000);

  it('createAgent with a wrapToolCall middleware that catches the error and returns its own ToolMessage: that message, failed with the thrown error', async () => {
    const { fetch, requests } = scriptedFetch(replies());
    const recorded = recordedPlugin('lc-tool-error-middleware');
    // As LangChain's agents docs write custom tool error handling.
    const handleToolErrors = createMiddleware({
      name: 'HandleToolErrors',
      wrapToolCall: async (request, handler) => {
        try {
          return await handler(request);
        } catch (error) {
          return new ToolMessage({ content: `Tool error: Please check your input and try again. (${error})`, tool_call_id: request.toolCall.id! });
        }
      },
    });
    const agent = createAgent({ model: openai(fetch), tools: [getWeather, getForecast], middleware: [handleToolErrors] });
    const result = await agent.invoke(PROMPT, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    const told = `Tool error: Please check your input and try again. (Error: ${THROWN})`;
    // The middleware's message says nothing of a status: the model reads it as any tool's output.
    expect(toolMessages(result.messages)).toEqual([
      ['call_oslo', 'Sunny in Oslo', 'ok'],
      ['call_lima', told, 'ok'],
      ['call_rome', 'Sunny in Rome', 'ok'],
    ]);
    expect(sentToModel(requests)).toEqual(toolMessages(result.messages).map(([id, content]) => [id, content]));
    const { doc } = await finishedRun(recorded);
    // The tool threw: the call failed, with the middleware's message as what the model read.
    expect(observed(doc)).toEqual([
      ['call_oslo', 'Sunny in Oslo', 'ok'],
      ['call_rome', 'Sunny in Rome', 'ok'],
      ['call_lima', told, 'error'],
    ]);
    expect(toolEnds(recorded).at(-1)).toEqual(['call_lima', 'error', 'Error', THROWN, told]);
    await sameOnNative(recorded);
  }, 30_000);

  it("a LangGraph ToolNode with handleToolErrors: false: the error escapes, the call and the turn fail with it, and the model reads nothing", async () => {
    const { fetch, requests } = scriptedFetch(replies());
    const recorded = recordedPlugin('lc-tool-error-escapes');
    // As LangGraph's docs build a tool-calling graph by hand.
    const tools = [getWeather, getForecast];
    const model = openai(fetch).bindTools(tools);
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('agent', async (state) => ({ messages: [await model.invoke(state.messages)] }))
      .addNode('tools', new ToolNode(tools, { handleToolErrors: false }))
      .addEdge(START, 'agent')
      .addConditionalEdges('agent', toolsCondition, ['tools', END])
      .addEdge('tools', 'agent')
      .compile();
    await expect(graph.invoke(PROMPT, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] })).rejects.toThrow(THROWN);
    expect(requests).toHaveLength(1);
    const { doc } = await finishedRun(recorded);
    // No ToolMessage was made: the failed call is observed as the error the program caught. (Which call ends first
    // is the runtime's: the node fails as soon as the tool throws, while the others may still be running.)
    expect(observed(doc).sort()).toEqual([
      ['call_lima', `Error: ${THROWN}`, 'error'],
      ['call_oslo', 'Sunny in Oslo', 'ok'],
      ['call_rome', 'Sunny in Rome', 'ok'],
    ]);
    expect(toolEnds(recorded).find(([id]) => id === 'call_lima')).toEqual(['call_lima', 'error', 'Error', THROWN, `Error: ${THROWN}`]);
    await expectTurnEndInAtif(recorded, doc, { status: 'failed', error: { name: 'Error', message: THROWN } });
    await sameOnNative(recorded);
  }, 30_000);
});
