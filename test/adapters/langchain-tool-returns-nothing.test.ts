// LangChain tools that return nothing (`async () => {}`), `null` or `''`, in the two programs LangChain's docs write
// around a tool: createAgent's ToolNode (the tool run with the call, LangChain's ToolMessage: `''` for nothing, `"null"`
// for null) and a tool node written by hand as LangGraph's workflows page does (`tool.invoke(toolCall.args)`, the
// output wrapped in `new ToolMessage({ content: observation, tool_call_id })`, whose content for nothing is empty: the
// request carries `content: []`). The hand-written node's calls had no observation at all, as if the tools never
// returned. Each call's observation must be the text the next request carried for it (ChatOpenAI over a fake fetch
// speaking Chat Completions), and the same hooks on native write the same files.
import { describe, expect, it } from 'vitest';
import { ChatOpenAI } from '@langchain/openai';
import { tool } from '@langchain/core/tools';
import { ToolMessage, type AIMessage } from '@langchain/core/messages';
import { createAgent } from 'langchain';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { toolsCondition } from '@langchain/langgraph/prebuilt';
import * as z from 'zod';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { chatCompletion, scriptedFetch, type SeenRequest } from '../support/provider-wire.ts';
import { expectNothingLost, recordedPlugin, type AtifDoc } from './support.ts';
import { sameOnNative } from './same-on-native.ts';

const GPT = 'gpt-4.1-2025-04-14';

/** What each tool returns. */
const RETURNS: Record<string, unknown> = { nothing: undefined, null: null, empty: '' };
const KINDS = Object.keys(RETURNS);
const TOOLS = KINDS.map((kind) => tool(async () => RETURNS[kind] as string, { name: kind, description: 'Runs a job', schema: z.object({ id: z.string() }) }));
const byName = new Map(TOOLS.map((one) => [one.name, one]));

/** The model asks for the three calls at once, then answers. */
function replies() {
  return scriptedFetch([
    chatCompletion({ id: 'chatcmpl-ask', model: GPT, content: null, toolCalls: KINDS.map((kind) => ({ id: `call_${kind}`, name: kind, args: { id: 'job-7' } })), usage: { prompt_tokens: 90, completion_tokens: 30 } }),
    chatCompletion({ id: 'chatcmpl-answer', model: GPT, content: 'All three done.', usage: { prompt_tokens: 160, completion_tokens: 6 } }),
  ]);
}
const openai = (fetch: typeof globalThis.fetch) => new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, configuration: { fetch } });

/** The text each tool message of the request after the tools ran carried, by call id (a content list as its text parts joined). */
function toldOnWire(requests: SeenRequest[]): Record<string, string> {
  const tools = (requests[1]!.body.messages as AtifDoc[]).filter((m) => m.role === 'tool');
  const text = (content: unknown) => (typeof content === 'string' ? content : (content as AtifDoc[]).map((part) => part.text).join(''));
  return Object.fromEntries(tools.map((m) => [m.tool_call_id, text(m.content)]));
}

/** Each call's observation content, by call id. */
function observed(doc: AtifDoc): Record<string, unknown> {
  return Object.fromEntries((doc.steps as AtifDoc[]).flatMap((step) => (step.observation?.results ?? []).map((r: AtifDoc) => [r.source_call_id, r.content])));
}

describe('a LangChain tool that returns nothing: the observation is what the request carried', () => {
  it('a tool node written by hand (tool.invoke(toolCall.args), its own ToolMessage): the empty content the model was sent', async () => {
    const { fetch, requests } = replies();
    const model = openai(fetch).bindTools(TOOLS);
    const toolNode = async (state: typeof MessagesAnnotation.State) => {
      const last = state.messages.at(-1) as AIMessage;
      const messages: ToolMessage[] = [];
      for (const toolCall of last.tool_calls ?? []) {
        const observation = await byName.get(toolCall.name)!.invoke(toolCall.args as { id: string });
        messages.push(new ToolMessage({ content: observation, tool_call_id: toolCall.id! }));
      }
      return { messages };
    };
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('agent', async (state: typeof MessagesAnnotation.State) => ({ messages: [await model.invoke(state.messages)] }))
      .addNode('tools', toolNode)
      .addEdge(START, 'agent')
      .addConditionalEdges('agent', toolsCondition, ['tools', END])
      .addEdge('tools', 'agent')
      .compile();
    const recorded = recordedPlugin('lc-tool-returns-nothing-hand');
    await graph.invoke({ messages: [{ role: 'user', content: 'Run job-7 three ways.' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    const told = toldOnWire(requests);
    expect(told).toEqual({ call_nothing: '', call_null: '', call_empty: '' });
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(observed(atif[0]!)).toEqual(told);
    await sameOnNative(recorded);
  });

  it("createAgent's ToolNode (the tool run with the call): LangChain's ToolMessage, `''` for nothing, `null` for null", async () => {
    const { fetch, requests } = replies();
    const agent = createAgent({ model: openai(fetch), tools: TOOLS });
    const recorded = recordedPlugin('lc-tool-returns-nothing-agent');
    await agent.invoke({ messages: [{ role: 'user', content: 'Run job-7 three ways.' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    const told = toldOnWire(requests);
    expect(told).toEqual({ call_nothing: '', call_null: 'null', call_empty: '' });
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(observed(atif[0]!)).toEqual(told);
    await sameOnNative(recorded);
  });
});
