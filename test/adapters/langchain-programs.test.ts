// The LangChain adapter on programs written the way LangChain's and
// LangGraph's docs write them, offline: the real ChatAnthropic and ChatOpenAI
// clients over a fake fetch that answers in Anthropic's and OpenAI's wire
// formats (test/support/provider-wire.ts). Each trajectory is checked against
// what the program did: its steps, the tool calls by the provider's ids, the
// token counts the framework itself reports (usage_metadata), the models the
// provider reported, failures and retries.
import { describe, expect, it } from 'vitest';
import { ChatAnthropic } from '@langchain/anthropic';
import { ChatOpenAI } from '@langchain/openai';
import { ChatPromptTemplate } from '@langchain/core/prompts';
import { StringOutputParser } from '@langchain/core/output_parsers';
import { tool } from '@langchain/core/tools';
import { ToolMessage, type AIMessage, type BaseMessage } from '@langchain/core/messages';
import { createAgent, modelRetryMiddleware } from 'langchain';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { createReactAgent, ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import * as z from 'zod';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { anthropicMessage, chatCompletion, chatCompletionEither, openAiError, scriptedFetch, type AnthropicUsage } from '../support/provider-wire.ts';
import { expectNothingLost, expectRetriedFirstCall, recordedPlugin, type AtifDoc } from './support.ts';

const CLAUDE = 'claude-sonnet-4-5-20250929';
const GPT = 'gpt-4.1-2025-04-14';
const MINI = 'gpt-4.1-mini-2025-04-14';

const weather = tool(async ({ city }) => `Sunny and 21C in ${city}`, {
  name: 'get_weather',
  description: 'The current weather of a city',
  schema: z.object({ city: z.string() }),
});

const anthropic = (fetch: typeof globalThis.fetch) => new ChatAnthropic({ model: 'claude-sonnet-4-5', apiKey: 'sk-ant-test', maxRetries: 0, clientOptions: { fetch } });
const openai = (fetch: typeof globalThis.fetch, options: { model?: string } = {}) =>
  new ChatOpenAI({ model: options.model ?? 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, configuration: { fetch } });

type Step = AtifDoc;
const agentSteps = (doc: AtifDoc): Step[] => (doc.steps as Step[]).filter((step) => step.source === 'agent');
const userSteps = (doc: AtifDoc): string[] => (doc.steps as Step[]).filter((step) => step.source === 'user').map((step) => String(step.message));
const toolCallIds = (doc: AtifDoc): string[] => agentSteps(doc).flatMap((step) => (step.tool_calls ?? []).map((call: AtifDoc) => call.tool_call_id));
const observed = (doc: AtifDoc): Array<[string, string]> =>
  (doc.steps as Step[]).flatMap((step) => (step.observation?.results ?? []).map((r: AtifDoc) => [r.source_call_id, String(r.content)] as [string, string]));
/** The AI messages' usage_metadata, as the framework reports it: [input, output, cache read + cache write]. */
const reported = (messages: BaseMessage[]): Array<[number, number, number]> =>
  messages
    .filter((m) => (m as { usage_metadata?: unknown }).usage_metadata !== undefined)
    .map((m) => {
      const usage = (m as unknown as { usage_metadata: { input_tokens: number; output_tokens: number; input_token_details?: { cache_read?: number; cache_creation?: number } } }).usage_metadata;
      return [usage.input_tokens, usage.output_tokens, (usage.input_token_details?.cache_read ?? 0) + (usage.input_token_details?.cache_creation ?? 0)];
    });
const recordedCounts = (doc: AtifDoc): Array<[number, number, number]> =>
  agentSteps(doc)
    .filter((step) => step.metrics !== undefined)
    .map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens, step.metrics.cached_tokens ?? 0]);

describe('LangChain adapter on real programs (real provider clients over a fake fetch)', () => {
  it('createAgent with ChatAnthropic and prompt caching: the tokens are usage_metadata, counted once', async () => {
    const written: AnthropicUsage = { input_tokens: 270, output_tokens: 40, cache_creation_input_tokens: 3000, cache_read_input_tokens: 0 };
    const read: AnthropicUsage = { input_tokens: 194, output_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 1216 };
    const { fetch, requests } = scriptedFetch([
      anthropicMessage({ id: 'msg_01Write', model: CLAUDE, content: [{ type: 'text', text: 'Let me check.' }, { type: 'tool_use', id: 'toolu_01Weather', name: 'get_weather', input: { city: 'Paris' } }], usage: written }),
      anthropicMessage({ id: 'msg_02Read', model: CLAUDE, content: [{ type: 'text', text: 'It is sunny and 21C in Paris.' }], usage: read }),
    ]);
    const recorded = recordedPlugin('lc-anthropic');
    const agent = createAgent({ model: anthropic(fetch), tools: [weather], name: 'weather_agent', systemPrompt: 'You answer weather questions.' });
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'What is the weather in Paris?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)], configurable: { thread_id: 'paris-1' } });
    expect(requests).toHaveLength(2);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(doc.session_id).toBe('paris-1');
    expect(doc.agent.name).toBe('weather_agent'); // createAgent's name
    expect(userSteps(doc)).toEqual(['What is the weather in Paris?']);
    expect(toolCallIds(doc)).toEqual(['toolu_01Weather']);
    expect(observed(doc)).toEqual([['toolu_01Weather', 'Sunny and 21C in Paris']]);
    expect(agentSteps(doc).map((step) => step.model_name)).toEqual([CLAUDE, CLAUDE]);
    expect(agentSteps(doc).at(-1)!.message).toBe('It is sunny and 21C in Paris.');
    // The framework's totals: 3,270 and 1,410 input tokens (LangChain counts the cache in), never 6,270 and 2,626.
    expect(reported(result.messages)).toEqual([[3270, 40, 3000], [1410, 12, 1216]]);
    expect(recordedCounts(doc)).toEqual(reported(result.messages));
    expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: 4680, total_completion_tokens: 52 });
    const providers = recorded.log.filter((e) => e.hook === 'pre_api_request').map((e) => e.payload.provider);
    expect(providers).toEqual(['anthropic', 'anthropic']);
    expect(recorded.log.find((e) => e.hook === 'on_session_end')!.payload).toMatchObject({ completed: true });
  });

  it('a StateGraph with a conditional edge and a ToolNode, on ChatOpenAI, with and without cached tokens', async () => {
    const { fetch } = scriptedFetch([
      chatCompletion({ id: 'chatcmpl-1', model: GPT, content: null, toolCalls: [{ id: 'call_paris', name: 'get_weather', args: { city: 'Paris' } }, { id: 'call_rome', name: 'get_weather', args: { city: 'Rome' } }], usage: { prompt_tokens: 90, completion_tokens: 30 } }),
      chatCompletion({ id: 'chatcmpl-2', model: GPT, content: 'Both are sunny.', usage: { prompt_tokens: 1300, completion_tokens: 6, cached: 1024 } }),
    ]);
    const model = openai(fetch).bindTools([weather]);
    const callModel = async (state: typeof MessagesAnnotation.State) => ({ messages: [await model.invoke(state.messages)] });
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('agent', callModel)
      .addNode('tools', new ToolNode([weather]))
      .addEdge(START, 'agent')
      .addConditionalEdges('agent', toolsCondition, ['tools', END])
      .addEdge('tools', 'agent')
      .compile();
    const recorded = recordedPlugin('lc-graph');
    const result = await graph.invoke({ messages: [{ role: 'user', content: 'Weather in Paris and Rome?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)], configurable: { thread_id: 'graph-1' } });
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(userSteps(doc)).toEqual(['Weather in Paris and Rome?']);
    expect(toolCallIds(doc)).toEqual(['call_paris', 'call_rome']);
    expect(observed(doc)).toEqual([['call_paris', 'Sunny and 21C in Paris'], ['call_rome', 'Sunny and 21C in Rome']]);
    expect(agentSteps(doc).map((step) => step.model_name)).toEqual([GPT, GPT]);
    expect(reported(result.messages)).toEqual([[90, 30, 0], [1300, 6, 1024]]);
    expect(recordedCounts(doc)).toEqual(reported(result.messages));
  });

  it('a tool node written by hand that runs the tools with the calls’ args (tool.invoke(toolCall.args)): each run is the model’s call, a tool run nobody asked for its own', async () => {
    const { fetch } = scriptedFetch([
      // The model asks for the same call twice: the runs take the calls in order.
      chatCompletion({ id: 'chatcmpl-h1', model: GPT, content: null, toolCalls: [{ id: 'call_lima', name: 'get_weather', args: { city: 'Lima' } }, { id: 'call_oslo_a', name: 'get_weather', args: { city: 'Oslo' } }, { id: 'call_oslo_b', name: 'get_weather', args: { city: 'Oslo' } }], usage: { prompt_tokens: 90, completion_tokens: 30 } }),
      chatCompletion({ id: 'chatcmpl-h2', model: GPT, content: 'Sunny everywhere.', usage: { prompt_tokens: 150, completion_tokens: 6 } }),
    ]);
    const model = openai(fetch).bindTools([weather]);
    const callModel = async (state: typeof MessagesAnnotation.State) => ({ messages: [await model.invoke(state.messages)] });
    // As LangGraph's workflows page writes a tool node by hand: the observation wrapped in a ToolMessage for the call.
    const toolNode = async (state: typeof MessagesAnnotation.State) => {
      const last = state.messages.at(-1) as AIMessage;
      const results: ToolMessage[] = [];
      for (const toolCall of last.tool_calls ?? []) {
        const observation = await weather.invoke(toolCall.args as { city: string });
        results.push(new ToolMessage({ content: observation, tool_call_id: toolCall.id! }));
      }
      // A tool the node runs on its own, no model asked for it.
      await weather.invoke({ city: 'Nuuk' });
      return { messages: results };
    };
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('agent', callModel)
      .addNode('tools', toolNode)
      .addEdge(START, 'agent')
      .addConditionalEdges('agent', toolsCondition, ['tools', END])
      .addEdge('tools', 'agent')
      .compile();
    const recorded = recordedPlugin('lc-hand-tools');
    await graph.invoke({ messages: [{ role: 'user', content: 'Weather in Lima and Oslo?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    const runs = recorded.log.filter((e) => e.hook === 'post_tool_call').map((e) => [e.payload.tool_call_id, e.payload.result]);
    expect(runs.slice(0, 3)).toEqual([['call_lima', 'Sunny and 21C in Lima'], ['call_oslo_a', 'Sunny and 21C in Oslo'], ['call_oslo_b', 'Sunny and 21C in Oslo']]);
    expect(runs).toHaveLength(4);
    expect(runs[3]![0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-/);
    expect(runs[3]![1]).toBe('Sunny and 21C in Nuuk');
    // The model's step holds the calls it made, each with its own result, and the run nobody asked for under its own id.
    expect(toolCallIds(doc)).toEqual(['call_lima', 'call_oslo_a', 'call_oslo_b', runs[3]![0]]);
    expect(observed(doc)).toEqual([...runs.slice(0, 3), [runs[3]![0], 'Sunny and 21C in Nuuk']]);
  });

  it('createReactAgent streamed with .stream(): one turn, the final answer, the streamed usage', async () => {
    const { fetch } = scriptedFetch([
      chatCompletionEither({ id: 'chatcmpl-s1', model: GPT, content: null, toolCalls: [{ id: 'call_s1', name: 'get_weather', args: { city: 'Oslo' } }], usage: { prompt_tokens: 80, completion_tokens: 12 } }),
      chatCompletionEither({ id: 'chatcmpl-s2', model: GPT, content: 'Oslo is sunny.', usage: { prompt_tokens: 120, completion_tokens: 5, cached: 64 } }),
    ]);
    // (Not `streaming: true`: ChatOpenAI then estimates tokens with tiktoken, whose encoding it downloads.)
    const agent = createReactAgent({ llm: openai(fetch), tools: [weather], name: 'react_agent' });
    const recorded = recordedPlugin('lc-react-stream');
    let last: { messages: BaseMessage[] } | undefined;
    for await (const state of await agent.stream({ messages: [{ role: 'user', content: 'Weather in Oslo?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)], streamMode: 'values' })) last = state;
    const { atif } = await recorded.finish();
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(toolCallIds(doc)).toEqual(['call_s1']);
    expect(agentSteps(doc).at(-1)!.message).toBe('Oslo is sunny.');
    expect(agentSteps(doc).map((step) => step.model_name)).toEqual([GPT, GPT]);
    expect(recordedCounts(doc)).toEqual(reported(last!.messages));
    expect(reported(last!.messages)).toEqual([[80, 12, 0], [120, 5, 64]]);
    const start = recorded.log.find((e) => e.hook === 'subagent_start');
    expect(start).toBeUndefined();
  });

  it('streamEvents on a createAgent agent: the dated model from the streamed generation, tools by id', async () => {
    const { fetch } = scriptedFetch([
      chatCompletionEither({ id: 'chatcmpl-e1', model: GPT, content: null, toolCalls: [{ id: 'call_e1', name: 'get_weather', args: { city: 'Lima' } }], usage: { prompt_tokens: 70, completion_tokens: 9 } }),
      chatCompletionEither({ id: 'chatcmpl-e2', model: GPT, content: 'Lima is sunny.', usage: { prompt_tokens: 95, completion_tokens: 4 } }),
    ]);
    const agent = createAgent({ model: openai(fetch), tools: [weather], name: 'events_agent' });
    const recorded = recordedPlugin('lc-events');
    const kinds = new Set<string>();
    for await (const event of agent.streamEvents({ messages: [{ role: 'user', content: 'Weather in Lima?' }] }, { version: 'v2', callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] })) kinds.add(event.event);
    expect(kinds.has('on_chain_end')).toBe(true);
    const { atif } = await recorded.finish();
    const doc = atif[0]!;
    expect(toolCallIds(doc)).toEqual(['call_e1']);
    expect(agentSteps(doc).map((step) => step.model_name)).toEqual([GPT, GPT]);
    expect(recordedCounts(doc)).toEqual([[70, 9, 0], [95, 4, 0]]);
    expect(agentSteps(doc).at(-1)!.message).toBe('Lima is sunny.');
  });

  it('an LCEL chain (prompt.pipe(model).pipe(parser)): the formatted prompt, the parsed answer', async () => {
    const { fetch } = scriptedFetch([anthropicMessage({ id: 'msg_lcel', model: CLAUDE, content: [{ type: 'text', text: 'Bonjour le monde' }], usage: { input_tokens: 21, output_tokens: 5 } })]);
    const prompt = ChatPromptTemplate.fromMessages([
      ['system', 'Translate the text to {language}.'],
      ['human', '{text}'],
    ]);
    const chain = prompt.pipe(anthropic(fetch)).pipe(new StringOutputParser());
    const recorded = recordedPlugin('lc-lcel');
    const answer = await chain.invoke({ language: 'French', text: 'Hello world' }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks, { sessionId: 'lcel-1' })] });
    expect(answer).toBe('Bonjour le monde');
    const { atif } = await recorded.finish();
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(userSteps(doc)).toEqual(['Hello world']);
    expect(agentSteps(doc).map((step) => [step.message, step.model_name])).toEqual([['Bonjour le monde', CLAUDE]]);
    expect(recordedCounts(doc)).toEqual([[21, 5, 0]]);
    const request = recorded.log.find((e) => e.hook === 'pre_api_request')!.payload.request as { body: { messages: Array<{ role: string; content: string }> } };
    expect(request.body.messages).toEqual([
      { role: 'system', content: 'Translate the text to French.' },
      { role: 'user', content: 'Hello world' },
    ]);
    expect(recorded.log.find((e) => e.hook === 'post_llm_call')!.payload.assistant_response).toBe('Bonjour le monde');
  });

  it('a subgraph on another provider: each step carries the model and provider that served it', async () => {
    const { fetch } = scriptedFetch([
      chatCompletion({ id: 'chatcmpl-draft', model: MINI, content: 'Draft: Paris is sunny.', usage: { prompt_tokens: 50, completion_tokens: 6 } }),
      anthropicMessage({ id: 'msg_edit', model: CLAUDE, content: [{ type: 'text', text: 'Paris is sunny today.' }], usage: { input_tokens: 60, output_tokens: 8, cache_read_input_tokens: 40 } }),
    ]);
    const writer = openai(fetch, { model: 'gpt-4.1-mini' });
    const editor = anthropic(fetch);
    const drafting = new StateGraph(MessagesAnnotation)
      .addNode('write', async (state) => ({ messages: [await writer.invoke(state.messages)] }))
      .addEdge(START, 'write')
      .addEdge('write', END)
      .compile();
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('draft', drafting)
      .addNode('edit', async (state) => ({ messages: [await editor.invoke(state.messages)] }))
      .addEdge(START, 'draft')
      .addEdge('draft', 'edit')
      .addEdge('edit', END)
      .compile();
    const recorded = recordedPlugin('lc-subgraph');
    await graph.invoke({ messages: [{ role: 'user', content: 'Write one line about the weather in Paris.' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(userSteps(doc)).toEqual(['Write one line about the weather in Paris.']);
    expect(agentSteps(doc).map((step) => [step.model_name, step.message])).toEqual([
      [MINI, 'Draft: Paris is sunny.'],
      [CLAUDE, 'Paris is sunny today.'],
    ]);
    expect(recordedCounts(doc)).toEqual([[50, 6, 0], [100, 8, 40]]);
    const calls = recorded.log.filter((e) => e.hook === 'pre_api_request').map((e) => [e.payload.provider, e.payload.model]);
    expect(calls).toEqual([['openai', 'gpt-4.1-mini'], ['anthropic', 'claude-sonnet-4-5']]);
  });

  it('a sub-agent called from a tool runs on its own model, in its own trajectory', async () => {
    const { fetch } = scriptedFetch([
      chatCompletion({ id: 'chatcmpl-lead', model: GPT, content: null, toolCalls: [{ id: 'call_research', name: 'research', args: { topic: 'Paris' } }], usage: { prompt_tokens: 40, completion_tokens: 8 } }),
      anthropicMessage({ id: 'msg_child', model: CLAUDE, content: [{ type: 'text', text: 'Paris was founded in the 3rd century BC.' }], usage: { input_tokens: 30, output_tokens: 12 } }),
      chatCompletion({ id: 'chatcmpl-done', model: GPT, content: 'Founded in the 3rd century BC.', usage: { prompt_tokens: 70, completion_tokens: 9 } }),
    ]);
    const researcher = createAgent({ model: anthropic(fetch), tools: [], name: 'researcher' });
    const research = tool(
      async ({ topic }, config) => {
        const out = await researcher.invoke({ messages: [{ role: 'user', content: `Research ${topic}` }] }, config);
        return String(out.messages.at(-1)!.content);
      },
      { name: 'research', description: 'Delegate research to a sub-agent', schema: z.object({ topic: z.string() }) },
    );
    const lead = createAgent({ model: openai(fetch), tools: [research], name: 'lead' });
    const recorded = recordedPlugin('lc-subagent');
    await lead.invoke({ messages: [{ role: 'user', content: 'When was Paris founded?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)], configurable: { thread_id: 'lead-1' } });
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(agentSteps(doc).filter((s) => s.model_name !== undefined).map((step) => step.model_name)).toEqual([GPT, GPT]);
    const child = (doc.subagent_trajectories as AtifDoc[])[0]!;
    expect(userSteps(child)).toEqual(['Research Paris']);
    expect(agentSteps(child).map((step) => [step.model_name, step.message])).toEqual([[CLAUDE, 'Paris was founded in the 3rd century BC.']]);
    const ref = (doc.steps as Step[]).flatMap((s) => s.observation?.results ?? []).find((r: AtifDoc) => r.source_call_id === 'call_research');
    expect(ref.subagent_trajectory_ref[0].trajectory_id).toBe(child.trajectory_id);
    const start = recorded.log.find((e) => e.hook === 'subagent_start')!.payload;
    expect(start).toMatchObject({ parent_session_id: 'lead-1', tool_call_id: 'call_research', child_role: 'researcher' });
    const childCalls = recorded.log.filter((e) => e.hook === 'pre_api_request' && e.payload.session_id !== 'lead-1').map((e) => [e.payload.provider, e.payload.model]);
    expect(childCalls).toEqual([['anthropic', 'claude-sonnet-4-5']]);
  });

  for (const kind of ['createAgent', 'createReactAgent'] as const) {
    it(`${kind}: a call of a tool the agent does not have is a failed call with what ToolNode told the model (no tool ran for it)`, async () => {
      const { fetch, requests } = scriptedFetch([
        chatCompletion({ id: 'chatcmpl-1', model: GPT, content: null, toolCalls: [{ id: 'call_weather', name: 'get_weather', args: { city: 'Paris' } }, { id: 'call_hotel', name: 'book_hotel', args: { city: 'Paris' } }], usage: { prompt_tokens: 50, completion_tokens: 12 } }),
        chatCompletion({ id: 'chatcmpl-2', model: GPT, content: 'Sunny; I cannot book hotels.', usage: { prompt_tokens: 90, completion_tokens: 8 } }),
      ]);
      const agent = kind === 'createAgent' ? createAgent({ model: openai(fetch), tools: [weather], name: 'trip' }) : createReactAgent({ llm: openai(fetch), tools: [weather], name: 'trip' });
      const recorded = recordedPlugin(`lc-unknown-tool-${kind}`);
      const result = await agent.invoke({ messages: [{ role: 'user', content: 'Weather in Paris, and book a hotel' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
      // What the model was told of the call: ToolNode's own error, in the next request.
      const told = result.messages.find((m) => m.getType() === 'tool' && (m as ToolMessage).tool_call_id === 'call_hotel') as ToolMessage;
      expect(told.status).toBe('error');
      expect(String(told.content)).toContain('book_hotel');
      expect(JSON.stringify(requests[1]!.body)).toContain(JSON.stringify(String(told.content)).slice(1, -1));
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      const doc = atif[0]!;
      expect(validateAtif(doc)).toEqual([]);
      expect(recorded.log.filter((e) => e.hook === 'post_tool_call').map((e) => [e.payload.tool_call_id, e.payload.status, e.payload.result]).sort()).toEqual([
        ['call_hotel', 'error', String(told.content)],
        ['call_weather', 'ok', 'Sunny and 21C in Paris'],
      ]);
      const results = agentSteps(doc)[0]!.observation.results.map((r: AtifDoc) => [r.source_call_id, r.content]).sort();
      expect(results).toEqual([['call_hotel', String(told.content)], ['call_weather', 'Sunny and 21C in Paris']]);
    }, 30_000);
  }

  it('a provider error retried by modelRetryMiddleware: the failed attempt is failed, the retry continues the same request', async () => {
    const { fetch, requests } = scriptedFetch([
      openAiError(503, 'server_error', 'The server is overloaded.'),
      chatCompletion({ id: 'chatcmpl-ok', model: GPT, content: 'Hello!', usage: { prompt_tokens: 12, completion_tokens: 2 } }),
    ]);
    const agent = createAgent({ model: openai(fetch), tools: [], middleware: [modelRetryMiddleware({ maxRetries: 1, initialDelayMs: 1, backoffFactor: 1 })] });
    const recorded = recordedPlugin('lc-retry');
    await agent.invoke({ messages: [{ role: 'user', content: 'Say hello.' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(requests).toHaveLength(2);
    const { atif, atof } = await recorded.finish();
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(userSteps(doc)).toEqual(['Say hello.']);
    expect(agentSteps(doc).map((step) => [step.extra?.invocation?.status, step.message])).toEqual([
      ['failed', expect.stringContaining('overloaded')],
      ['completed', 'Hello!'],
    ]);
    const id = expectRetriedFirstCall(recorded.log, true)[0]!.payload.api_request_id;
    expect(recorded.log.find((e) => e.hook === 'api_request_error')!.payload).toMatchObject({ status_code: 503 });
    expect(atof.filter((e) => e.category === 'llm' && e.scope_category === 'end').map((e) => e.metadata?.api_request_id)).toEqual([id, id]);
  });

  it('a stream the consumer leaves: the turn ends interrupted, the tool it left running ends with it, one trajectory', async () => {
    const { fetch } = scriptedFetch([
      chatCompletion({ id: 'chatcmpl-q1', model: GPT, content: null, toolCalls: [{ id: 'call_slow', name: 'slow_lookup', args: { q: 'x' } }], usage: { prompt_tokens: 30, completion_tokens: 5 } }),
    ]);
    const slow = tool(async () => new Promise<string>((resolve) => setTimeout(() => resolve('late'), 200)), { name: 'slow_lookup', description: 'slow', schema: z.object({ q: z.string() }) });
    const agent = createAgent({ model: openai(fetch), tools: [slow], name: 'quitter' });
    const recorded = recordedPlugin('lc-abandon');
    for await (const update of await agent.stream({ messages: [{ role: 'user', content: 'Look it up.' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)], streamMode: 'updates' })) {
      if ('model_request' in update) break;
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    const hooks = recorded.log.map((e) => e.hook);
    expect(hooks.indexOf('post_tool_call')).toBeGreaterThan(hooks.indexOf('pre_tool_call'));
    expect(hooks.indexOf('post_tool_call')).toBeLessThan(hooks.indexOf('on_session_end'));
    expect(hooks.at(-1)).toBe('on_session_finalize');
    expect(recorded.log.find((e) => e.hook === 'post_tool_call')!.payload).toMatchObject({ tool_call_id: 'call_slow', status: 'error' });
    expect(recorded.log.find((e) => e.hook === 'on_session_end')!.payload).toMatchObject({ interrupted: true, completed: false });
  });
});
