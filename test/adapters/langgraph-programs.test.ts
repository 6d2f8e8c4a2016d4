// The LangChain adapter on LangGraph.js programs written as LangGraph's docs
// write them: a prebuilt ReAct agent with parallel tool calls, a supervisor
// handing off to worker agents, a thread's turns on a checkpointer, an
// interrupt resumed with a Command, a node retried by its RetryPolicy, and
// the stream modes. The real ChatOpenAI and ChatAnthropic clients run over a
// fake fetch speaking the providers' JSON and SSE (test/support/provider-wire.ts);
// each trajectory is checked against what the program did (its messages,
// tool results and usage_metadata), and the same hooks on native (where it
// loads) must write the same files.
import { describe, expect, it } from 'vitest';
import { ChatAnthropic } from '@langchain/anthropic';
import { ChatOpenAI } from '@langchain/openai';
import { tool } from '@langchain/core/tools';
import { HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { createAgent, humanInTheLoopMiddleware } from 'langchain';
import { Command, END, interrupt, MemorySaver, MessagesAnnotation, START, StateGraph, type LangGraphRunnableConfig } from '@langchain/langgraph';
import { createReactAgent, ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import * as z from 'zod';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { anthropicMessage, anthropicStream, chatCompletion, chatCompletionEither, concurrentFetch, openAiError, scriptedFetch, type WireReply } from '../support/provider-wire.ts';
import { createHandoffTool } from './langgraph-handoff.ts';
import { gate } from '../support/gate.ts';
import { expectNothingLost, expectRetriedFirstCall, recordedPlugin, type AtifDoc, type Recorded } from './support.ts';
import { sameOnNative } from './same-on-native.ts';

const GPT = 'gpt-4.1-2025-04-14';
const CLAUDE = 'claude-sonnet-4-5-20250929';

const openai = (fetch: typeof globalThis.fetch) => new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, configuration: { fetch } });
const anthropic = (fetch: typeof globalThis.fetch) => new ChatAnthropic({ model: 'claude-sonnet-4-5', apiKey: 'sk-ant-test', maxRetries: 0, clientOptions: { fetch } });

type Step = AtifDoc;
const agentSteps = (doc: AtifDoc): Step[] => (doc.steps as Step[]).filter((step) => step.source === 'agent');
const userSteps = (doc: AtifDoc): string[] => (doc.steps as Step[]).filter((step) => step.source === 'user').map((step) => String(step.message));
const observed = (doc: AtifDoc): Array<[string, string, string]> =>
  (doc.steps as Step[]).flatMap((step) => (step.observation?.results ?? []).map((r: AtifDoc) => [r.source_call_id, String(r.content), r.extra?.metadata?.status] as [string, string, string]));
const callsOf = (doc: AtifDoc): Array<[string, unknown]> => agentSteps(doc).flatMap((step) => (step.tool_calls ?? []).map((call: AtifDoc) => [call.tool_call_id, call.arguments] as [string, unknown]));
/** The AI messages' usage_metadata, as LangChain reports it: [input, output, cache read + cache write]; `idPrefix` keeps the responses of one agent. */
const reported = (messages: BaseMessage[], idPrefix = ''): Array<[number, number, number]> =>
  messages
    .filter((m) => m.getType() !== 'ai' || String(m.id ?? '').startsWith(idPrefix))
    .map((m) => (m as { usage_metadata?: { input_tokens: number; output_tokens: number; input_token_details?: { cache_read?: number; cache_creation?: number } } }).usage_metadata)
    .filter((usage) => usage !== undefined)
    .map((usage) => [usage.input_tokens, usage.output_tokens, (usage.input_token_details?.cache_read ?? 0) + (usage.input_token_details?.cache_creation ?? 0)]);
const recordedCounts = (doc: AtifDoc): Array<[number, number, number]> =>
  agentSteps(doc)
    .filter((step) => step.metrics !== undefined)
    .map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens, step.metrics.cached_tokens ?? 0]);
/** The embedded sub-agent trajectories, `count` of them. */
const subagents = (doc: AtifDoc, count: number): AtifDoc[] => {
  const children = (doc.subagent_trajectories ?? []) as AtifDoc[];
  expect(children).toHaveLength(count);
  return children;
};
/** The trajectory id the observation of a call refers to. */
const refOf = (doc: AtifDoc, callId: string): unknown =>
  (doc.steps as Step[]).flatMap((step) => step.observation?.results ?? []).find((r: AtifDoc) => r.source_call_id === callId)?.subagent_trajectory_ref?.[0]?.trajectory_id;
/** Tool messages as the program's state holds them: [tool_call_id, content, status]. */
const toolMessages = (messages: BaseMessage[]): Array<[string, string, string]> =>
  messages.filter((m) => m.getType() === 'tool').map((m) => [(m as ToolMessage).tool_call_id, String(m.content), (m as ToolMessage).status === 'error' ? 'error' : 'ok']);


/** The approval and sub-agent hooks of a run, each as [hook, session, tool call, decision or sub-agent status]. */
const approvalAndSubagentHooks = (recorded: Recorded): unknown[][] =>
  recorded.log
    .filter((e) => e.hook.includes('approval') || e.hook.startsWith('subagent_'))
    .map((e) => [e.hook, e.payload.session_id ?? e.payload.child_session_id, e.payload.tool_call_id, e.payload.choice ?? e.payload.child_status]);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** A session's turn ends (all sessions' when none is named), each as [status, turn_exit_reason, pending_approvals]. */
const turnEnds = (recorded: Recorded, session?: string): unknown[][] =>
  recorded.log
    .filter((e) => e.hook === 'on_session_end' && (session === undefined || e.payload.session_id === session))
    .map((e) => [e.payload.interrupted ? 'interrupted' : e.payload.completed ? 'completed' : 'failed', e.payload.turn_exit_reason, e.payload.pending_approvals]);
/** Paused for the approval of the calls `ids`, then resumed to a final answer: the same for every adapter. */
const pausedThenAnswered = (...ids: string[]) => [['interrupted', 'approval_required', ids], ['completed', 'final_response', undefined]];

describe('LangGraph programs through the LangChain adapter', () => {
  it('a supervisor hands off to a worker agent: the worker is a sub-agent linked to the handoff call, whose observation is the ToolMessage the model read', async () => {
    const { fetch, requests } = scriptedFetch([
      chatCompletion({ id: 'chatcmpl-sup1', model: GPT, content: null, toolCalls: [{ id: 'call_handoff', name: 'transfer_to_researcher', args: {} }], usage: { prompt_tokens: 60, completion_tokens: 9 } }),
      chatCompletion({ id: 'chatcmpl-res1', model: GPT, content: null, toolCalls: [{ id: 'call_search', name: 'web_search', args: { query: 'population of Paris' } }], usage: { prompt_tokens: 80, completion_tokens: 11 } }),
      chatCompletion({ id: 'chatcmpl-res2', model: GPT, content: 'Paris has about 2.1 million people.', usage: { prompt_tokens: 120, completion_tokens: 10, cached: 64 } }),
      chatCompletion({ id: 'chatcmpl-sup2', model: GPT, content: 'About 2.1 million people live in Paris.', usage: { prompt_tokens: 150, completion_tokens: 12 } }),
    ]);
    const webSearch = tool(async ({ query }) => `${query}: 2,102,650 (2023)`, { name: 'web_search', description: 'Search the web', schema: z.object({ query: z.string() }) });
    const supervisor = createReactAgent({ llm: openai(fetch), tools: [createHandoffTool('researcher')], name: 'supervisor', prompt: 'You manage a researcher. Hand off research.' });
    const researcher = createReactAgent({ llm: openai(fetch), tools: [webSearch], name: 'researcher', prompt: 'You research facts.' });
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('supervisor', supervisor, { ends: ['researcher', END] })
      .addNode('researcher', researcher)
      .addEdge(START, 'supervisor')
      .addEdge('researcher', 'supervisor')
      .compile();
    const recorded = recordedPlugin('lg-supervisor');
    const result = await graph.invoke({ messages: [{ role: 'user', content: 'How many people live in Paris?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(requests).toHaveLength(4);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(userSteps(doc)).toEqual(['How many people live in Paris?']);
    // The supervisor's own steps: its handoff, and (after the researcher) its answer.
    expect(callsOf(doc)).toEqual([['call_handoff', {}]]);
    expect(observed(doc)).toEqual([['call_handoff', 'Successfully transferred to researcher', 'ok']]);
    expect(agentSteps(doc).at(-1)!.message).toBe('About 2.1 million people live in Paris.');
    const [child] = subagents(doc, 1);
    expect(refOf(doc, 'call_handoff')).toBe(child.trajectory_id);
    expect(callsOf(child)).toEqual([['call_search', { query: 'population of Paris' }]]);
    expect(agentSteps(child).at(-1)!.message).toBe('Paris has about 2.1 million people.');
    // Together, what the program's state holds: every tool message, every reported usage, each under the agent that made it.
    expect([...observed(doc), ...observed(child)]).toEqual(toolMessages(result.messages));
    expect(recordedCounts(doc)).toEqual(reported(result.messages, 'chatcmpl-sup'));
    expect(recordedCounts(child)).toEqual(reported(result.messages, 'chatcmpl-res'));
    const start = recorded.log.find((e) => e.hook === 'subagent_start')!.payload;
    expect(start).toMatchObject({ child_role: 'researcher', tool_call_id: 'call_handoff', child_goal: 'How many people live in Paris?' });
    expect(recorded.log.find((e) => e.hook === 'subagent_stop')!.payload).toMatchObject({ child_role: 'researcher', child_status: 'completed', child_summary: 'Paris has about 2.1 million people.' });
    await sameOnNative(recorded);
  }, 30_000);

  it('a supervisor node routes with structured output (Command goto) to workers invoked from their nodes: each worker (createReactAgent, createAgent) a sub-agent of the run, with its own model, tools and tokens', async () => {
    const { fetch, requests } = scriptedFetch([
      anthropicMessage({ id: 'msg_route1', model: CLAUDE, content: [{ type: 'tool_use', id: 'toolu_route1', name: 'route', input: { next: 'researcher' } }], usage: { input_tokens: 90, output_tokens: 15, cache_read_input_tokens: 40 } }),
      chatCompletion({ id: 'chatcmpl-res1', model: GPT, content: null, toolCalls: [{ id: 'call_search', name: 'web_search', args: { query: 'Eiffel Tower height' } }], usage: { prompt_tokens: 70, completion_tokens: 12 } }),
      chatCompletion({ id: 'chatcmpl-res2', model: GPT, content: 'The Eiffel Tower is 330 m tall.', usage: { prompt_tokens: 110, completion_tokens: 10, cached: 64 } }),
      anthropicMessage({ id: 'msg_route2', model: CLAUDE, content: [{ type: 'tool_use', id: 'toolu_route2', name: 'route', input: { next: 'writer' } }], usage: { input_tokens: 130, output_tokens: 15 } }),
      chatCompletion({ id: 'chatcmpl-wri1', model: GPT, content: 'At 330 m, the Eiffel Tower looks down on Paris.', usage: { prompt_tokens: 140, completion_tokens: 14 } }),
      anthropicMessage({ id: 'msg_route3', model: CLAUDE, content: [{ type: 'tool_use', id: 'toolu_route3', name: 'route', input: { next: 'FINISH' } }], usage: { input_tokens: 170, output_tokens: 15 } }),
    ]);
    const webSearch = tool(async ({ query }) => `${query}: 330 m (2022)`, { name: 'web_search', description: 'Search the web', schema: z.object({ query: z.string() }) });
    const members = ['researcher', 'writer'] as const;
    const routeSchema = z.object({ next: z.enum(['FINISH', ...members]) });
    // includeRaw: the router's AIMessage too, to hold its tokens to what LangChain reported.
    const router = anthropic(fetch).withStructuredOutput(routeSchema, { name: 'route', includeRaw: true });
    const routed: BaseMessage[] = [];
    const worked: Record<string, BaseMessage[]> = {};
    const supervisor = async (state: typeof MessagesAnnotation.State) => {
      const { raw, parsed } = await router.invoke([{ role: 'system', content: `You supervise ${members.join(', ')}. Who acts next? Answer FINISH when done.` }, ...state.messages]);
      routed.push(raw as BaseMessage);
      return new Command({ goto: parsed.next === 'FINISH' ? END : parsed.next });
    };
    const researcher = createReactAgent({ llm: openai(fetch), tools: [webSearch], name: 'researcher', prompt: 'You research facts.' });
    // langchain's createAgent is a compiled graph too.
    const writer = createAgent({ model: openai(fetch), tools: [], name: 'writer', systemPrompt: 'You write one sentence.' });
    // Each worker's node runs its agent and reports its last message back, as the docs' supervisor tutorial does.
    const workerNode = (agent: { invoke(state: typeof MessagesAnnotation.State, config: LangGraphRunnableConfig): Promise<{ messages: BaseMessage[] }> }, name: string) => async (state: typeof MessagesAnnotation.State, config: LangGraphRunnableConfig) => {
      const result = await agent.invoke(state, config);
      worked[name] = result.messages;
      return new Command({ goto: 'supervisor', update: { messages: [new HumanMessage({ content: String(result.messages.at(-1)!.content), name })] } });
    };
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('supervisor', supervisor, { ends: [...members, END] })
      .addNode('researcher', workerNode(researcher, 'researcher'), { ends: ['supervisor'] })
      .addNode('writer', workerNode(writer, 'writer'), { ends: ['supervisor'] })
      .addEdge(START, 'supervisor')
      .compile();
    const recorded = recordedPlugin('lg-supervisor-node');
    await graph.invoke({ messages: [{ role: 'user', content: 'Write one sentence about the height of the Eiffel Tower.' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(requests).toHaveLength(6);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    // The workers report back as the tutorial writes it, a HumanMessage named after the worker: the next routing request
    // sends it as a user message, so it is a user step of the supervisor's trajectory, after the worker's link.
    expect((doc.steps as Step[]).map((step) => (step.source === 'user' ? `user: ${step.message}` : step.llm_call_count === 0 ? 'agent: link' : 'agent: route'))).toEqual([
      'user: Write one sentence about the height of the Eiffel Tower.',
      'agent: route',
      'agent: link',
      'user: The Eiffel Tower is 330 m tall.',
      'agent: route',
      'agent: link',
      'user: At 330 m, the Eiffel Tower looks down on Paris.',
      'agent: route',
    ]);
    // The supervisor's three routing calls are the run's own steps, on Claude; each worker is linked from a step of its own.
    expect(agentSteps(doc).filter((step) => step.llm_call_count !== 0).map((step) => [step.model_name, step.tool_calls.map((call: AtifDoc) => call.arguments)])).toEqual([
      [CLAUDE, [{ next: 'researcher' }]],
      [CLAUDE, [{ next: 'writer' }]],
      [CLAUDE, [{ next: 'FINISH' }]],
    ]);
    const [research, writing] = subagents(doc, 2);
    const links = agentSteps(doc).filter((step) => step.llm_call_count === 0).map((step) => [step.tool_calls[0].function_name, step.observation.results[0].subagent_trajectory_ref[0].trajectory_id]);
    // No tool call started them: each link is a step of its own, naming the worker's scope (`<role>-session-<its session>`), as for any sub-agent started outside a tool.
    expect(links).toEqual([[`researcher-session-${research.session_id}`, research.trajectory_id], [`writer-session-${writing.session_id}`, writing.trajectory_id]]);
    expect(callsOf(research)).toEqual([['call_search', { query: 'Eiffel Tower height' }]]);
    expect(observed(research)).toEqual(toolMessages(worked.researcher!));
    expect(agentSteps(research).map((step) => step.model_name)).toEqual([GPT, GPT]);
    expect(agentSteps(research).at(-1)!.message).toBe('The Eiffel Tower is 330 m tall.');
    expect(agentSteps(writing).map((step) => [step.model_name, step.message])).toEqual([[GPT, 'At 330 m, the Eiffel Tower looks down on Paris.']]);
    // The tokens of each agent are what LangChain reported for its own calls.
    expect(recordedCounts(doc)).toEqual(reported(routed));
    expect(recordedCounts(research)).toEqual(reported(worked.researcher!));
    expect(recordedCounts(writing)).toEqual(reported(worked.writer!));
    // The run's totals are the supervisor's own calls (LangChain's input_tokens count Anthropic's cache reads in).
    expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: 90 + 40 + 130 + 170, total_completion_tokens: 45, total_cached_tokens: 40 });
    expect(recorded.log.filter((e) => e.hook === 'subagent_stop').map((e) => [e.payload.child_role, e.payload.child_status])).toEqual([['researcher', 'completed'], ['writer', 'completed']]);
    await sameOnNative(recorded);
  }, 30_000);

  it('handoff tools both ways (as a swarm writes them): the agent handed to is a sub-agent that hands back, completed, and the first agent answers in its own steps', async () => {
    const { fetch } = scriptedFetch([
      chatCompletion({ id: 'chatcmpl-alice1', model: GPT, content: null, toolCalls: [{ id: 'call_to_bob', name: 'transfer_to_bob', args: {} }], usage: { prompt_tokens: 50, completion_tokens: 8 } }),
      anthropicMessage({ id: 'msg_bob1', model: CLAUDE, content: [{ type: 'tool_use', id: 'toolu_rate', name: 'exchange_rate', input: { pair: 'EURUSD' } }], usage: { input_tokens: 75, output_tokens: 18 } }),
      anthropicMessage({ id: 'msg_bob2', model: CLAUDE, content: [{ type: 'text', text: 'EURUSD is 1.08.' }, { type: 'tool_use', id: 'toolu_back', name: 'transfer_to_alice', input: {} }], usage: { input_tokens: 120, output_tokens: 20, cache_read_input_tokens: 64 } }),
      chatCompletion({ id: 'chatcmpl-alice2', model: GPT, content: 'One euro buys 1.08 dollars.', usage: { prompt_tokens: 160, completion_tokens: 9 } }),
    ]);
    const rate = tool(async ({ pair }) => `${pair} 1.08`, { name: 'exchange_rate', description: 'A currency exchange rate', schema: z.object({ pair: z.string() }) });
    const alice = createReactAgent({ llm: openai(fetch), tools: [createHandoffTool('bob')], name: 'alice', prompt: 'You are Alice, you talk to the user.' });
    const bob = createReactAgent({ llm: anthropic(fetch), tools: [rate, createHandoffTool('alice')], name: 'bob', prompt: 'You are Bob, you know exchange rates.' });
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('alice', alice, { ends: ['bob'] })
      .addNode('bob', bob, { ends: ['alice'] })
      .addEdge(START, 'alice')
      .compile();
    const recorded = recordedPlugin('lg-swarm');
    const result = await graph.invoke({ messages: [{ role: 'user', content: 'How many dollars is one euro?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(callsOf(doc)).toEqual([['call_to_bob', {}]]);
    expect(agentSteps(doc).at(-1)!.message).toBe('One euro buys 1.08 dollars.');
    const [child] = subagents(doc, 1);
    expect(refOf(doc, 'call_to_bob')).toBe(child.trajectory_id);
    expect(callsOf(child)).toEqual([['toolu_rate', { pair: 'EURUSD' }], ['toolu_back', {}]]);
    expect([...observed(doc), ...observed(child)]).toEqual(toolMessages(result.messages));
    expect(recordedCounts(doc)).toEqual(reported(result.messages, 'chatcmpl-alice'));
    expect(recordedCounts(child)).toEqual(reported(result.messages, 'msg_bob'));
    // Bob's graph ended by handing back (LangGraph's ParentCommand): a completed run, not a failed one.
    expect(recorded.log.find((e) => e.hook === 'subagent_stop')!.payload).toMatchObject({ child_role: 'bob', tool_call_id: 'call_to_bob', child_status: 'completed', child_summary: 'EURUSD is 1.08.' });
    expect(recorded.log.filter((e) => e.hook === 'on_session_end').map((e) => [e.payload.session_id, e.payload.completed])).toEqual([[`${doc.session_id}:sub:call_to_bob`, true], [doc.session_id, true]]);
    await sameOnNative(recorded);
  }, 30_000);

  it('a worker that asks a human (humanInTheLoopMiddleware) on a thread: asked once, in the worker\'s trajectory; the resuming Command continues the same sub-agent, where the request is answered and the approved call ends', async () => {
    const { fetch } = scriptedFetch([
      chatCompletion({ id: 'chatcmpl-sup1', model: GPT, content: null, toolCalls: [{ id: 'call_to_ops', name: 'transfer_to_ops', args: {} }], usage: { prompt_tokens: 40, completion_tokens: 8 } }),
      anthropicMessage({ id: 'msg_ops1', model: CLAUDE, content: [{ type: 'tool_use', id: 'toolu_delete', name: 'delete_file', input: { path: '/tmp/old.log' } }], usage: { input_tokens: 70, output_tokens: 20 } }),
      anthropicMessage({ id: 'msg_ops2', model: CLAUDE, content: [{ type: 'text', text: 'Deleted /tmp/old.log.' }], usage: { input_tokens: 110, output_tokens: 9 } }),
      chatCompletion({ id: 'chatcmpl-sup2', model: GPT, content: 'The old log is gone.', usage: { prompt_tokens: 150, completion_tokens: 7 } }),
    ]);
    const deleteFile = tool(async ({ path }) => `deleted ${path}`, { name: 'delete_file', description: 'Delete a file', schema: z.object({ path: z.string() }) });
    const supervisor = createReactAgent({ llm: openai(fetch), tools: [createHandoffTool('ops')], name: 'supervisor' });
    const ops = createAgent({ model: anthropic(fetch), tools: [deleteFile], name: 'ops', middleware: [humanInTheLoopMiddleware({ interruptOn: { delete_file: { allowedDecisions: ['approve', 'reject'] } } })] });
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('supervisor', supervisor, { ends: ['ops'] })
      .addNode('ops', ops.graph)
      .addEdge(START, 'supervisor')
      .addEdge('ops', 'supervisor')
      .compile({ checkpointer: new MemorySaver() });
    const recorded = recordedPlugin('lg-worker-hitl');
    const handler = new NemoRelayCallbackHandler(recorded.hooks);
    const config = { callbacks: [handler], configurable: { thread_id: 'ops-1' } };
    const first = await graph.invoke({ messages: [{ role: 'user', content: 'Delete /tmp/old.log' }] }, config);
    expect((first as unknown as { __interrupt__?: unknown[] }).__interrupt__).toHaveLength(1);
    const second = await graph.invoke(new Command({ resume: { decisions: [{ type: 'approve' }] } }), config);
    expect(String(second.messages.at(-1)!.content)).toBe('The old log is gone.');
    handler.close();
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    // One sub-agent: the worker that paused goes on in its own trajectory when the Command resumes it.
    const [worker] = subagents(doc, 1);
    // Asked once, by the worker that paused (not again by the runs the interrupt bubbled through); the decision answers it
    // in the same worker, which stops once, when it is done.
    expect(approvalAndSubagentHooks(recorded)).toEqual([
      ['subagent_start', 'ops-1:sub:call_to_ops', 'call_to_ops', undefined],
      ['pre_approval_request', 'ops-1:sub:call_to_ops', 'toolu_delete', undefined],
      ['post_approval_response', 'ops-1:sub:call_to_ops', 'toolu_delete', 'once'],
      ['subagent_stop', 'ops-1:sub:call_to_ops', 'call_to_ops', 'completed'],
    ]);
    expect(worker.session_id).toBe('ops-1:sub:call_to_ops');
    // The worker's turns: the one that asked, and the resumed one, which repeats no user step.
    // The first paused for the approval of the call it asked about.
    expect(turnEnds(recorded, worker.session_id)).toEqual(pausedThenAnswered('toolu_delete'));
    expect(callsOf(worker)).toEqual([['toolu_delete', { path: '/tmp/old.log' }]]);
    // The supervisor's own steps, on both turns: the resumed turn starts inside the worker, which stays a sub-agent, linked once.
    expect(refOf(doc, 'call_to_ops')).toBe(worker.trajectory_id);
    expect(callsOf(doc).map(([id]) => id)).toEqual(['call_to_ops']);
    expect(agentSteps(doc).at(-1)!.message).toBe('The old log is gone.');
    // The approved call ran in the resumed worker: its result is on the step that made the call.
    expect((worker.steps as Step[]).flatMap((step) => (step.observation?.results ?? []).map((r: AtifDoc) => [r.source_call_id, r.content]))).toEqual([['toolu_delete', 'deleted /tmp/old.log']]);
    expect(agentSteps(worker).filter((step) => step.message !== '').map((step) => step.message)).toEqual(['Deleted /tmp/old.log.']);
    // Handed the conversation, the worker has no prompt of its own, and its resumed turn adds none.
    expect(userSteps(worker)).toEqual([]);
    expect(recordedCounts(doc)).toEqual(reported(second.messages, 'chatcmpl-sup'));
    expect(recordedCounts(worker)).toEqual(reported(second.messages, 'msg_ops'));
    // The supervisor's turn waited for the same decision: paused for the approval of its worker's call.
    expect(turnEnds(recorded, 'ops-1')).toEqual(pausedThenAnswered('toolu_delete'));
    await sameOnNative(recorded);
  }, 30_000);

  for (const perRun of [false, true]) {
  it(`an agent run from a tool asks a human inside it (humanInTheLoopMiddleware)${perRun ? ', a handler made per run' : ''}: asked once, by that agent, not again for the tool; the resuming Command answers it in the same sub-agent`, async () => {
    const { fetch } = scriptedFetch([
      chatCompletion({ id: 'chatcmpl-sup1', model: GPT, content: null, toolCalls: [{ id: 'call_ask_ops', name: 'ask_ops', args: { question: 'Delete /tmp/old.log' } }], usage: { prompt_tokens: 40, completion_tokens: 8 } }),
      anthropicMessage({ id: 'msg_ops1', model: CLAUDE, content: [{ type: 'tool_use', id: 'toolu_delete', name: 'delete_file', input: { path: '/tmp/old.log' } }], usage: { input_tokens: 70, output_tokens: 20 } }),
      anthropicMessage({ id: 'msg_ops2', model: CLAUDE, content: [{ type: 'text', text: 'I kept /tmp/old.log.' }], usage: { input_tokens: 110, output_tokens: 9, cache_read_input_tokens: 32 } }),
      chatCompletion({ id: 'chatcmpl-sup2', model: GPT, content: 'Ops kept the log.', usage: { prompt_tokens: 150, completion_tokens: 7 } }),
    ]);
    const deleteFile = tool(async ({ path }) => `deleted ${path}`, { name: 'delete_file', description: 'Delete a file', schema: z.object({ path: z.string() }) });
    const ops = createAgent({ model: anthropic(fetch), tools: [deleteFile], name: 'ops', middleware: [humanInTheLoopMiddleware({ interruptOn: { delete_file: { allowedDecisions: ['approve', 'reject'] } } })] });
    let opsMessages: BaseMessage[] = [];
    // The agent runs with the tool's config: it is a sub-agent of the call, and keeps its pause in the run's checkpointer.
    const askOps = tool(
      async ({ question }, config) => {
        opsMessages = (await ops.invoke({ messages: [{ role: 'user', content: question }] }, config)).messages;
        return opsMessages.at(-1)!.text;
      },
      { name: 'ask_ops', description: 'Ask the ops agent', schema: z.object({ question: z.string() }) },
    );
    const assistant = createAgent({ model: openai(fetch), tools: [askOps], name: 'assistant', checkpointer: new MemorySaver() });
    const recorded = recordedPlugin(`lg-tool-agent-hitl${perRun ? '-per-run' : ''}`);
    // Per run, as a server makes one per request: the sub-agent pauses under the first handler (whose core keeps the
    // thread's session) and is resumed, and stops, under the second.
    const handlers: NemoRelayCallbackHandler[] = [];
    const config = () => {
      const handler = perRun || handlers.length === 0 ? new NemoRelayCallbackHandler(recorded.hooks) : handlers[0]!;
      handlers.push(handler);
      return { callbacks: [handler], configurable: { thread_id: 'ops-2' } };
    };
    const first = await assistant.invoke({ messages: [{ role: 'user', content: 'Clean up the old log' }] }, config());
    expect((first as unknown as { __interrupt__?: unknown[] }).__interrupt__).toHaveLength(1);
    const second = await assistant.invoke(new Command({ resume: { decisions: [{ type: 'reject', message: 'Keep it.' }] } }), config());
    expect(String(second.messages.at(-1)!.content)).toBe('Ops kept the log.');
    handlers.at(-1)!.close();
    expect(recorded.log.filter((e) => e.hook === 'on_session_start' || e.hook === 'on_session_finalize').map((e) => [e.hook, e.payload.session_id])).toEqual([
      ['on_session_start', 'ops-2'],
      ['on_session_finalize', 'ops-2:sub:call_ask_ops'],
      ['on_session_finalize', 'ops-2'],
    ]);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    // The request and its answer in the sub-agent that asked; the tool that ran it only paused (and ran again).
    expect(approvalAndSubagentHooks(recorded)).toEqual([
      ['subagent_start', 'ops-2:sub:call_ask_ops', 'call_ask_ops', undefined],
      ['pre_approval_request', 'ops-2:sub:call_ask_ops', 'toolu_delete', undefined],
      ['post_approval_response', 'ops-2:sub:call_ask_ops', 'toolu_delete', 'deny'],
      ['subagent_stop', 'ops-2:sub:call_ask_ops', 'call_ask_ops', 'completed'],
    ]);
    expect(recorded.log.filter((e) => e.hook === 'post_tool_call').map((e) => [e.payload.session_id, e.payload.tool_call_id, e.payload.status, e.payload.result])).toEqual([
      ['ops-2', 'call_ask_ops', 'interrupted', null],
      ['ops-2:sub:call_ask_ops', 'toolu_delete', 'denied', 'Keep it.'],
      ['ops-2', 'call_ask_ops', 'ok', 'I kept /tmp/old.log.'],
    ]);
    // One sub-agent trajectory: its question, the call it asked about (denied with what the model was told), its answer.
    const [worker] = subagents(doc, 1);
    expect(worker.session_id).toBe('ops-2:sub:call_ask_ops');
    expect(userSteps(worker)).toEqual(['Delete /tmp/old.log']);
    expect(observed(worker)).toEqual([['toolu_delete', 'Keep it.', expect.anything()]]);
    expect(agentSteps(worker).map((step) => step.message)).toEqual(['', 'I kept /tmp/old.log.']);
    expect(refOf(doc, 'call_ask_ops')).toBe(worker.trajectory_id);
    expect(userSteps(doc)).toEqual(['Clean up the old log']);
    expect(recordedCounts(doc)).toEqual(reported(second.messages));
    expect(recordedCounts(worker)).toEqual(reported(opsMessages));
    // Both turns that waited for the decision (the agent's, and the assistant's whose tool ran it) paused for it.
    expect(turnEnds(recorded, 'ops-2:sub:call_ask_ops')).toEqual(pausedThenAnswered('toolu_delete'));
    expect(turnEnds(recorded, 'ops-2')).toEqual(pausedThenAnswered('toolu_delete'));
    await sameOnNative(recorded);
  }, 30_000);
  }

  // A server makes a handler per request, and two requests of one conversation (one `sessionId`) may run at once: one
  // with a sub-agent, one without. Whichever ends last, the session opens once and closes once, after the link.
  for (const last of ['without', 'with'] as const) {
    it(`two handlers on one HookRegistry run one session at once, the run ${last} a sub-agent ending last: one session, opened once, closed once after the sub-agent's link`, async () => {
      const { fetch: leadFetch } = scriptedFetch([
        chatCompletion({ id: 'chatcmpl-lead1', model: GPT, content: null, toolCalls: [{ id: 'call_research', name: 'research', args: { topic: 'Paris' } }], usage: { prompt_tokens: 40, completion_tokens: 8 } }),
        chatCompletion({ id: 'chatcmpl-lead2', model: GPT, content: 'Paris was founded in the 3rd century BC.', usage: { prompt_tokens: 90, completion_tokens: 11 } }),
      ]);
      const { fetch: researcherFetch } = scriptedFetch([
        anthropicMessage({ id: 'msg_res1', model: CLAUDE, content: [{ type: 'tool_use', id: 'toolu_archive', name: 'read_archive', input: { subject: 'Paris' } }], usage: { input_tokens: 50, output_tokens: 14 } }),
        anthropicMessage({ id: 'msg_res2', model: CLAUDE, content: [{ type: 'text', text: 'The Parisii founded it in the 3rd century BC.' }], usage: { input_tokens: 80, output_tokens: 12 } }),
      ]);
      const { fetch: forecasterFetch } = scriptedFetch([
        chatCompletion({ id: 'chatcmpl-fc1', model: GPT, content: null, toolCalls: [{ id: 'call_weather', name: 'get_weather', args: { city: 'Oslo' } }], usage: { prompt_tokens: 30, completion_tokens: 7 } }),
        chatCompletion({ id: 'chatcmpl-fc2', model: GPT, content: 'It is sunny in Oslo.', usage: { prompt_tokens: 50, completion_tokens: 6 } }),
      ]);
      // The sub-agent's tool holds its link open, and the other request's tool its run, until the test lets each go on.
      const linkOpen = gate();
      const archiveMayEnd = gate();
      const weatherStarted = gate();
      const weatherMayEnd = gate();
      const readArchive = tool(
        async ({ subject }) => {
          linkOpen.open();
          await archiveMayEnd.opened;
          return `${subject}: founded by the Parisii, 3rd century BC`;
        },
        { name: 'read_archive', description: 'Read the city archive', schema: z.object({ subject: z.string() }) },
      );
      const researcher = createAgent({ model: anthropic(researcherFetch), tools: [readArchive], name: 'researcher' });
      let researcherMessages: BaseMessage[] = [];
      const research = tool(
        async ({ topic }, config) => {
          researcherMessages = (await researcher.invoke({ messages: [{ role: 'user', content: `Research ${topic}` }] }, config)).messages;
          return researcherMessages.at(-1)!.text;
        },
        { name: 'research', description: 'Delegate research to a sub-agent', schema: z.object({ topic: z.string() }) },
      );
      const lead = createAgent({ model: openai(leadFetch), tools: [research], name: 'lead' });
      const getWeather = tool(
        async ({ city }) => {
          weatherStarted.open();
          await weatherMayEnd.opened;
          return `Sunny in ${city}`;
        },
        { name: 'get_weather', description: 'The current weather of a city', schema: z.object({ city: z.string() }) },
      );
      const forecaster = createAgent({ model: openai(forecasterFetch), tools: [getWeather], name: 'forecaster' });
      const recorded = recordedPlugin(`lg-two-handlers-${last}`);
      const handlers: NemoRelayCallbackHandler[] = [];
      const request = () => {
        handlers.push(new NemoRelayCallbackHandler(recorded.hooks, { sessionId: 'desk-1' }));
        return { callbacks: [handlers.at(-1)!] };
      };
      const leadRun = lead.invoke({ messages: [{ role: 'user', content: 'When was Paris founded?' }] }, request());
      await linkOpen.opened;
      const forecasterRun = forecaster.invoke({ messages: [{ role: 'user', content: 'Weather in Oslo?' }] }, request());
      await weatherStarted.opened;
      if (last === 'without') {
        archiveMayEnd.open();
        await leadRun;
        weatherMayEnd.open();
        await forecasterRun;
      } else {
        weatherMayEnd.open();
        await forecasterRun;
        archiveMayEnd.open();
        await leadRun;
      }
      const marks = () =>
        recorded.log
          .filter((e) => ['on_session_start', 'on_session_finalize', 'subagent_start', 'subagent_stop'].includes(e.hook) || (e.hook === 'post_llm_call' && e.payload.session_id === 'desk-1'))
          .map((e) => [e.hook, e.payload.session_id ?? e.payload.child_session_id, e.payload.assistant_response]);
      const leadEnds = ['post_llm_call', 'desk-1', 'Paris was founded in the 3rd century BC.'];
      const forecasterEnds = ['post_llm_call', 'desk-1', 'It is sunny in Oslo.'];
      const link = [
        ['subagent_start', 'desk-1:sub:call_research', undefined],
        ['on_session_finalize', 'desk-1:sub:call_research', undefined],
        ['subagent_stop', 'desk-1:sub:call_research', undefined],
      ];
      // A named session stays open after both runs (the conversation may go on).
      expect(marks()).toEqual([
        ['on_session_start', 'desk-1', undefined],
        ...(last === 'without' ? [...link, leadEnds, forecasterEnds] : [link[0], forecasterEnds, link[1], link[2], leadEnds]),
      ]);
      // The lead's run started first: the forecaster's turn, begun while it ran, is the session's second.
      expect(recorded.log.filter((e) => e.hook === 'pre_llm_call').map((e) => [e.payload.session_id, e.payload.user_message, e.payload.is_first_turn])).toEqual([
        ['desk-1', 'When was Paris founded?', true],
        ['desk-1:sub:call_research', 'Research Paris', true],
        ['desk-1', 'Weather in Oslo?', false],
      ]);
      handlers[1]!.close(); // any handler on these hooks closes it
      expect(marks().at(-1)).toEqual(['on_session_finalize', 'desk-1', undefined]);
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expect(atif).toHaveLength(1);
      const doc = atif[0]!;
      expect(validateAtif(doc)).toEqual([]);
      expect(doc.session_id).toBe('desk-1');
      expect(userSteps(doc)).toEqual(['When was Paris founded?', 'Weather in Oslo?']);
      expect(callsOf(doc)).toEqual([['call_research', { topic: 'Paris' }], ['call_weather', { city: 'Oslo' }]]);
      const [worker] = subagents(doc, 1);
      expect(refOf(doc, 'call_research')).toBe(worker.trajectory_id);
      expect(userSteps(worker)).toEqual(['Research Paris']);
      expect(observed(worker)).toEqual([['toolu_archive', 'Paris: founded by the Parisii, 3rd century BC', expect.anything()]]);
      expect(agentSteps(worker).at(-1)!.message).toBe('The Parisii founded it in the 3rd century BC.');
      expect(recordedCounts(worker)).toEqual(reported(researcherMessages));
      await sameOnNative(recorded);
    }, 30_000);
  }

  it('the model calls a tool that runs an agent twice in one message and both agents ask a human: the Command resuming both by interrupt id answers each in the sub-agent that asked', async () => {
    const { fetch: assistantFetch } = scriptedFetch([
      chatCompletion({
        id: 'chatcmpl-sup1',
        model: GPT,
        content: null,
        toolCalls: [
          { id: 'call_ops_a', name: 'ask_ops', args: { question: 'Delete /tmp/a.log' } },
          { id: 'call_ops_b', name: 'ask_ops', args: { question: 'Delete /tmp/b.log' } },
        ],
        usage: { prompt_tokens: 40, completion_tokens: 16 },
      }),
      chatCompletion({ id: 'chatcmpl-sup2', model: GPT, content: 'Ops deleted a.log and kept b.log.', usage: { prompt_tokens: 190, completion_tokens: 11 } }),
    ]);
    // The two agents ask at once (their first requests are held until both are in flight) and are answered by what they say.
    const { fetch: opsFetch } = concurrentFetch([
      { when: 'deleted /tmp/a.log', reply: anthropicMessage({ id: 'msg_a2', model: CLAUDE, content: [{ type: 'text', text: 'Deleted /tmp/a.log.' }], usage: { input_tokens: 130, output_tokens: 8 } }) },
      { when: 'Keep that one', reply: anthropicMessage({ id: 'msg_b2', model: CLAUDE, content: [{ type: 'text', text: 'I kept /tmp/b.log.' }], usage: { input_tokens: 140, output_tokens: 9, cache_read_input_tokens: 64 } }) },
      { when: 'Delete /tmp/a.log', wave: 'ask', reply: anthropicMessage({ id: 'msg_a1', model: CLAUDE, content: [{ type: 'tool_use', id: 'toolu_a', name: 'delete_file', input: { path: '/tmp/a.log' } }], usage: { input_tokens: 70, output_tokens: 20 } }) },
      { when: 'Delete /tmp/b.log', wave: 'ask', reply: anthropicMessage({ id: 'msg_b1', model: CLAUDE, content: [{ type: 'tool_use', id: 'toolu_b', name: 'delete_file', input: { path: '/tmp/b.log' } }], usage: { input_tokens: 80, output_tokens: 21 } }) },
    ]);
    const deleted: string[] = [];
    const deleteFile = tool(
      async ({ path }) => {
        deleted.push(path);
        return `deleted ${path}`;
      },
      { name: 'delete_file', description: 'Delete a file', schema: z.object({ path: z.string() }) },
    );
    const ops = createAgent({ model: anthropic(opsFetch), tools: [deleteFile], name: 'ops', middleware: [humanInTheLoopMiddleware({ interruptOn: { delete_file: { allowedDecisions: ['approve', 'reject'] } } })] });
    // What each run of the agent ended with, by the question it was asked (its resumed run's messages hold all its turn).
    const opsMessages = new Map<string, BaseMessage[]>();
    const askOps = tool(
      async ({ question }, config) => {
        const messages = (await ops.invoke({ messages: [{ role: 'user', content: question }] }, config)).messages;
        opsMessages.set(question, messages);
        return messages.at(-1)!.text;
      },
      { name: 'ask_ops', description: 'Ask the ops agent', schema: z.object({ question: z.string() }) },
    );
    const assistant = createAgent({ model: openai(assistantFetch), tools: [askOps], name: 'assistant', checkpointer: new MemorySaver() });
    const recorded = recordedPlugin('lg-tool-agents-hitl');
    const handler = new NemoRelayCallbackHandler(recorded.hooks);
    const config = { callbacks: [handler], configurable: { thread_id: 'ops-3' } };
    type Paused = { __interrupt__: Array<{ id: string; value: { actionRequests: Array<{ args: { path: string } }> } }> };
    const first = (await assistant.invoke({ messages: [{ role: 'user', content: 'Clean up a.log and b.log' }] }, config)) as unknown as Paused;
    // LangGraph runs each tool call as a task of its own (createAgent sends them): both agents' interrupts reach the caller.
    expect(first.__interrupt__.map((pause) => pause.value.actionRequests[0]!.args.path).sort()).toEqual(['/tmp/a.log', '/tmp/b.log']);
    const resume = Object.fromEntries(
      first.__interrupt__.map((pause) => [pause.id, { decisions: [pause.value.actionRequests[0]!.args.path === '/tmp/a.log' ? { type: 'approve' } : { type: 'reject', message: 'Keep that one.' }] }]),
    );
    const second = await assistant.invoke(new Command({ resume }), config);
    expect(String(second.messages.at(-1)!.content)).toBe('Ops deleted a.log and kept b.log.');
    expect(deleted).toEqual(['/tmp/a.log']);
    handler.close();
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    // Each agent's request and its decision in its own sub-agent, started once and stopped once, when it is done.
    const hooksOf = (session: string) => approvalAndSubagentHooks(recorded).filter((entry) => entry[1] === session);
    expect(hooksOf('ops-3:sub:call_ops_a')).toEqual([
      ['subagent_start', 'ops-3:sub:call_ops_a', 'call_ops_a', undefined],
      ['pre_approval_request', 'ops-3:sub:call_ops_a', 'toolu_a', undefined],
      ['post_approval_response', 'ops-3:sub:call_ops_a', 'toolu_a', 'once'],
      ['subagent_stop', 'ops-3:sub:call_ops_a', 'call_ops_a', 'completed'],
    ]);
    expect(hooksOf('ops-3:sub:call_ops_b')).toEqual([
      ['subagent_start', 'ops-3:sub:call_ops_b', 'call_ops_b', undefined],
      ['pre_approval_request', 'ops-3:sub:call_ops_b', 'toolu_b', undefined],
      ['post_approval_response', 'ops-3:sub:call_ops_b', 'toolu_b', 'deny'],
      ['subagent_stop', 'ops-3:sub:call_ops_b', 'call_ops_b', 'completed'],
    ]);
    expect(approvalAndSubagentHooks(recorded)).toHaveLength(8);
    // The approved call ran in its agent; the rejected one never ran, denied with the text its model was given.
    const toolEnds = (session: string) => recorded.log.filter((e) => e.hook === 'post_tool_call' && e.payload.session_id === session).map((e) => [e.payload.tool_call_id, e.payload.status, e.payload.result]);
    expect(toolEnds('ops-3:sub:call_ops_a')).toEqual([['toolu_a', 'ok', 'deleted /tmp/a.log']]);
    expect(toolEnds('ops-3:sub:call_ops_b')).toEqual([['toolu_b', 'denied', 'Keep that one.']]);
    // Each tool paused once, and ran again when resumed with its agent's answer (the calls end in the order they finish).
    expect(toolEnds('ops-3').sort()).toEqual([
      ['call_ops_a', 'interrupted', null],
      ['call_ops_a', 'ok', 'Deleted /tmp/a.log.'],
      ['call_ops_b', 'interrupted', null],
      ['call_ops_b', 'ok', 'I kept /tmp/b.log.'],
    ]);
    // Each sub-agent: its turn that asked ended interrupted, its resumed turn went on in the same session.
    for (const session of ['ops-3:sub:call_ops_a', 'ops-3:sub:call_ops_b']) {
      expect(turnEnds(recorded, session)).toEqual(pausedThenAnswered(session.endsWith('_a') ? 'toolu_a' : 'toolu_b'));
    }
    const workers = subagents(doc, 2);
    const worker = (callId: string) => workers.find((child) => child.session_id === `ops-3:sub:${callId}`)!;
    for (const [callId, question, answer, outcome] of [
      ['call_ops_a', 'Delete /tmp/a.log', 'Deleted /tmp/a.log.', ['toolu_a', 'deleted /tmp/a.log']],
      ['call_ops_b', 'Delete /tmp/b.log', 'I kept /tmp/b.log.', ['toolu_b', 'Keep that one.']],
    ] as const) {
      const child = worker(callId);
      expect(refOf(doc, callId)).toBe(child.trajectory_id);
      expect(userSteps(child)).toEqual([question]);
      expect(callsOf(child)).toEqual([[outcome[0], { path: question.slice('Delete '.length) }]]);
      expect(observed(child).map(([id, content]) => [id, content])).toEqual([outcome]);
      expect(agentSteps(child).map((step) => step.message)).toEqual(['', answer]);
      expect(recordedCounts(child)).toEqual(reported(opsMessages.get(question)!));
    }
    expect(userSteps(doc)).toEqual(['Clean up a.log and b.log']);
    expect(callsOf(doc).map(([id]) => id)).toEqual(['call_ops_a', 'call_ops_b']);
    expect(recordedCounts(doc)).toEqual(reported(second.messages));
    await sameOnNative(recorded, true);
  }, 30_000);

  it('a node runs a tool on its own (no model asked for it) whose agent asks a human: the resumed tool (a new LangChain run id) starts a new sub-agent, which records the decision; the paused one closes interrupted', async () => {
    const { fetch } = scriptedFetch([
      anthropicMessage({ id: 'msg_ops1', model: CLAUDE, content: [{ type: 'tool_use', id: 'toolu_delete', name: 'delete_file', input: { path: '/tmp/old.log' } }], usage: { input_tokens: 70, output_tokens: 20 } }),
      anthropicMessage({ id: 'msg_ops2', model: CLAUDE, content: [{ type: 'text', text: 'I kept /tmp/old.log.' }], usage: { input_tokens: 110, output_tokens: 9 } }),
    ]);
    const deleteFile = tool(async ({ path }) => `deleted ${path}`, { name: 'delete_file', description: 'Delete a file', schema: z.object({ path: z.string() }) });
    const ops = createAgent({ model: anthropic(fetch), tools: [deleteFile], name: 'ops', middleware: [humanInTheLoopMiddleware({ interruptOn: { delete_file: { allowedDecisions: ['approve', 'reject'] } } })] });
    const askOps = tool(async ({ question }, config) => (await ops.invoke({ messages: [{ role: 'user', content: question }] }, config)).messages.at(-1)!.text, {
      name: 'ask_ops',
      description: 'Ask the ops agent',
      schema: z.object({ question: z.string() }),
    });
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('cleanup', async (_state, config: LangGraphRunnableConfig) => ({ messages: [{ role: 'assistant', content: String(await askOps.invoke({ question: 'Delete /tmp/old.log' }, config)) }] }))
      .addEdge(START, 'cleanup')
      .addEdge('cleanup', END)
      .compile({ checkpointer: new MemorySaver() });
    const recorded = recordedPlugin('lg-unnamed-tool-agent-hitl');
    const handler = new NemoRelayCallbackHandler(recorded.hooks);
    const config = { callbacks: [handler], configurable: { thread_id: 'ops-4' } };
    const first = await graph.invoke({ messages: [{ role: 'user', content: 'Clean up' }] }, config);
    expect((first as unknown as { __interrupt__?: unknown[] }).__interrupt__).toHaveLength(1);
    const second = await graph.invoke(new Command({ resume: { decisions: [{ type: 'reject', message: 'Keep it.' }] } }), config);
    expect(String(second.messages.at(-1)!.content)).toBe('I kept /tmp/old.log.');
    handler.close();
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(validateAtif(atif[0]!)).toEqual([]);
    // The tool's call id is its run id (no model named it), a new one when the resumed node runs it again.
    const [pausedStart, resumedStart] = recorded.log.filter((e) => e.hook === 'subagent_start').map((e) => String(e.payload.child_session_id));
    expect(pausedStart).not.toBe(resumedStart);
    expect(approvalAndSubagentHooks(recorded)).toEqual([
      ['subagent_start', pausedStart, expect.any(String), undefined],
      ['pre_approval_request', pausedStart, 'toolu_delete', undefined],
      ['subagent_start', resumedStart, expect.any(String), undefined],
      ['post_approval_response', resumedStart, 'toolu_delete', 'deny'],
      ['subagent_stop', resumedStart, expect.any(String), 'completed'],
      ['subagent_stop', pausedStart, expect.any(String), 'interrupted'],
    ]);
    expect(recorded.log.filter((e) => e.hook === 'post_tool_call' && e.payload.session_id === resumedStart).map((e) => [e.payload.tool_call_id, e.payload.status, e.payload.result])).toEqual([['toolu_delete', 'denied', 'Keep it.']]);
    // The paused sub-agent is still open while the new one runs.
    await sameOnNative(recorded, true);
  }, 30_000);

  it('a compiled subgraph used as a node after the run called a model: a sub-agent named after its node, with its model calls and tools', async () => {
    const { fetch } = scriptedFetch([
      chatCompletion({ id: 'chatcmpl-plan', model: GPT, content: 'Plan: look up the tallest building, then answer.', usage: { prompt_tokens: 30, completion_tokens: 10 } }),
      anthropicMessage({ id: 'msg_look1', model: CLAUDE, content: [{ type: 'tool_use', id: 'toolu_lookup', name: 'lookup', input: { topic: 'tallest building' } }], usage: { input_tokens: 60, output_tokens: 14 } }),
      anthropicMessage({ id: 'msg_look2', model: CLAUDE, content: [{ type: 'text', text: 'The Burj Khalifa, 828 m.' }], usage: { input_tokens: 95, output_tokens: 9, cache_creation_input_tokens: 32 } }),
      chatCompletion({ id: 'chatcmpl-answer', model: GPT, content: 'The tallest building is the Burj Khalifa (828 m).', usage: { prompt_tokens: 120, completion_tokens: 13, cached: 64 } }),
    ]);
    const lookup = tool(async ({ topic }) => `${topic}: Burj Khalifa, 828 m`, { name: 'lookup', description: 'Look a fact up', schema: z.object({ topic: z.string() }) });
    const planner = openai(fetch);
    const searcher = anthropic(fetch).bindTools([lookup]);
    // The subgraph as LangGraph's docs write one: its own StateGraph, compiled, then added as a node.
    const research = new StateGraph(MessagesAnnotation)
      .addNode('search', async (state) => ({ messages: [await searcher.invoke(state.messages)] }))
      .addNode('tools', new ToolNode([lookup]))
      .addEdge(START, 'search')
      .addConditionalEdges('search', toolsCondition)
      .addEdge('tools', 'search')
      .compile();
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('plan', async (state) => ({ messages: [await planner.invoke(state.messages)] }))
      .addNode('research', research)
      .addNode('answer', async (state) => ({ messages: [await planner.invoke(state.messages)] }))
      .addEdge(START, 'plan')
      .addEdge('plan', 'research')
      .addEdge('research', 'answer')
      .addEdge('answer', END)
      .compile();
    const recorded = recordedPlugin('lg-subgraph-node');
    const result = await graph.invoke({ messages: [{ role: 'user', content: 'Which building is the tallest?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(agentSteps(doc).filter((step) => step.llm_call_count !== 0).map((step) => step.message)).toEqual([
      'Plan: look up the tallest building, then answer.',
      'The tallest building is the Burj Khalifa (828 m).',
    ]);
    const [child] = subagents(doc, 1);
    expect(recorded.log.find((e) => e.hook === 'subagent_start')!.payload).toMatchObject({ child_role: 'research', child_goal: 'Which building is the tallest?' });
    expect(agentSteps(child).map((step) => [step.model_name, step.message])).toEqual([
      [CLAUDE, ''],
      [CLAUDE, 'The Burj Khalifa, 828 m.'],
    ]);
    expect(observed(child)).toEqual(toolMessages(result.messages));
    expect(recordedCounts(doc)).toEqual(reported(result.messages, 'chatcmpl-'));
    expect(recordedCounts(child)).toEqual(reported(result.messages, 'msg_look'));
    await sameOnNative(recorded);
  }, 30_000);

  it('createReactAgent with parallel tool calls, one of which throws (ToolNode handles it): each result under its call id', async () => {
    const { fetch } = scriptedFetch([
      chatCompletion({
        id: 'chatcmpl-par1',
        model: GPT,
        content: null,
        toolCalls: [
          { id: 'call_slow', name: 'get_weather', args: { city: 'Oslo', delayMs: 40 } },
          { id: 'call_fast', name: 'get_weather', args: { city: 'Rome', delayMs: 1 } },
          { id: 'call_broken', name: 'get_forecast', args: { city: 'Lima' } },
        ],
        usage: { prompt_tokens: 90, completion_tokens: 30 },
      }),
      chatCompletion({ id: 'chatcmpl-par2', model: GPT, content: 'Oslo and Rome are sunny; no forecast for Lima.', usage: { prompt_tokens: 200, completion_tokens: 14, cached: 128 } }),
    ]);
    const ended: string[] = [];
    const weather = tool(
      async ({ city, delayMs }) => {
        await sleep(delayMs);
        ended.push(city);
        return `Sunny in ${city}`;
      },
      { name: 'get_weather', description: 'The current weather of a city', schema: z.object({ city: z.string(), delayMs: z.number() }) },
    );
    const forecast = tool(async ({ city }): Promise<string> => { throw new Error(`forecast service down for ${city}`); }, { name: 'get_forecast', description: 'A forecast', schema: z.object({ city: z.string() }) });
    const agent = createReactAgent({ llm: openai(fetch), tools: [weather, forecast] });
    const recorded = recordedPlugin('lg-parallel');
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Weather in Oslo and Rome, forecast for Lima?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(ended).toEqual(['Rome', 'Oslo']); // they ran at once: the fast one ended first
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(callsOf(doc).map(([id]) => id)).toEqual(['call_slow', 'call_fast', 'call_broken']);
    const byId = new Map(observed(doc).map(([id, content, status]) => [id, [content, status]]));
    expect(byId.get('call_slow')).toEqual(['Sunny in Oslo', 'ok']);
    expect(byId.get('call_fast')).toEqual(['Sunny in Rome', 'ok']);
    // What ToolNode told the model of the thrown error, as the state keeps it: each call's result is its ToolMessage.
    expect(toolMessages(result.messages).find(([id]) => id === 'call_broken')).toEqual(['call_broken', 'Error: forecast service down for Lima\n Please fix your mistakes.', 'error']);
    expect([...byId].map(([id, [content, status]]) => [id, content, status]).sort()).toEqual(toolMessages(result.messages).sort());
    // Failed with the thrown error.
    expect(recorded.log.find((e) => e.hook === 'post_tool_call' && e.payload.tool_call_id === 'call_broken')!.payload).toMatchObject({ status: 'error', error_type: 'Error', error_message: 'forecast service down for Lima' });
    expect(recordedCounts(doc)).toEqual(reported(result.messages));
    expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: 290, total_completion_tokens: 44, total_cached_tokens: 128 });
    await sameOnNative(recorded);
  }, 30_000);

  it("a thread's runs in the host's own session (sessionScope: 'host'): the second run is not the session's first turn", async () => {
    const { fetch } = scriptedFetch([
      chatCompletion({ id: 'chatcmpl-h1', model: GPT, content: 'Hello Bob!', usage: { prompt_tokens: 12, completion_tokens: 3 } }),
      chatCompletion({ id: 'chatcmpl-h2', model: GPT, content: 'Your name is Bob.', usage: { prompt_tokens: 25, completion_tokens: 5 } }),
    ]);
    const agent = createReactAgent({ llm: openai(fetch), tools: [], checkpointSaver: new MemorySaver() });
    const recorded = recordedPlugin('lg-host-thread');
    const handler = new NemoRelayCallbackHandler(recorded.hooks, { sessionScope: 'host' });
    const config = { callbacks: [handler], configurable: { thread_id: 'chat-host' } };
    recorded.hooks.emit('on_session_start', { session_id: 'chat-host', platform: 'my-host' });
    await agent.invoke({ messages: [{ role: 'user', content: 'Hi, I am Bob.' }] }, config);
    await agent.invoke({ messages: [{ role: 'user', content: 'What is my name?' }] }, config);
    recorded.hooks.emit('on_session_finalize', { session_id: 'chat-host', reason: 'user_left' });
    expect(recorded.log.filter((e) => e.hook === 'pre_llm_call').map((e) => [e.payload.session_id, e.payload.is_first_turn])).toEqual([['chat-host', true], ['chat-host', false]]);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    expect((atif[0]!.steps as Step[]).filter((s) => s.source === 'user').map((s) => s.message)).toEqual(['Hi, I am Bob.', 'What is my name?']);
  }, 30_000);

  it("a thread's runs on a checkpointer (one thread_id) are the turns of one session: one trajectory", async () => {
    const { fetch, requests } = scriptedFetch([
      chatCompletion({ id: 'chatcmpl-t1', model: GPT, content: 'Hello Bob!', usage: { prompt_tokens: 12, completion_tokens: 3 } }),
      chatCompletion({ id: 'chatcmpl-t2', model: GPT, content: 'Your name is Bob.', usage: { prompt_tokens: 25, completion_tokens: 5 } }),
    ]);
    const agent = createReactAgent({ llm: openai(fetch), tools: [], checkpointSaver: new MemorySaver() });
    const recorded = recordedPlugin('lg-thread');
    const handler = new NemoRelayCallbackHandler(recorded.hooks);
    const config = { callbacks: [handler], configurable: { thread_id: 'chat-bob' } };
    await agent.invoke({ messages: [{ role: 'user', content: 'Hi, I am Bob.' }] }, config);
    const second = await agent.invoke({ messages: [{ role: 'user', content: 'What is my name?' }] }, config);
    // The checkpointer gave the second run the first one's messages: one conversation.
    expect(requests[1]!.body.messages.map((m: { content: string }) => m.content)).toEqual(['Hi, I am Bob.', 'Hello Bob!', 'What is my name?']);
    expect(recorded.log.filter((e) => e.hook === 'pre_llm_call').map((e) => [e.payload.session_id, e.payload.is_first_turn])).toEqual([['chat-bob', true], ['chat-bob', false]]);
    expect(recorded.log.filter((e) => e.hook === 'on_session_finalize')).toHaveLength(0); // the thread may go on
    handler.close();
    expect(recorded.log.filter((e) => e.hook === 'on_session_start' || e.hook === 'on_session_finalize').map((e) => e.hook)).toEqual(['on_session_start', 'on_session_finalize']);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(doc.session_id).toBe('chat-bob');
    expect((doc.steps as Step[]).map((s) => [s.source, s.message])).toEqual([
      ['user', 'Hi, I am Bob.'],
      ['agent', 'Hello Bob!'],
      ['user', 'What is my name?'],
      ['agent', 'Your name is Bob.'],
    ]);
    expect(recordedCounts(doc)).toEqual(reported(second.messages));
    await sameOnNative(recorded);
  }, 30_000);

  for (const [decision, perRun] of [['approve', false], ['reject', false], ['approve', true]] as const) {
    it(`humanInTheLoopMiddleware, ${decision}${perRun ? ', a handler made per run (as a server makes one per request)' : ''}: the interrupted run and the Command that resumes it are one trajectory, the resume repeats no user step`, async () => {
      const answer = decision === 'approve' ? 'Deleted /tmp/report.txt.' : 'I left /tmp/report.txt in place.';
      const { fetch } = scriptedFetch([
        anthropicMessage({ id: 'msg_h1', model: CLAUDE, content: [{ type: 'tool_use', id: 'toolu_delete', name: 'delete_file', input: { path: '/tmp/report.txt' } }], usage: { input_tokens: 70, output_tokens: 20 } }),
        anthropicMessage({ id: 'msg_h2', model: CLAUDE, content: [{ type: 'text', text: answer }], usage: { input_tokens: 110, output_tokens: 9, cache_read_input_tokens: 64 } }),
      ]);
      const deleteFile = tool(async ({ path }) => `deleted ${path}`, { name: 'delete_file', description: 'Delete a file', schema: z.object({ path: z.string() }) });
      const agent = createAgent({
        model: anthropic(fetch),
        tools: [deleteFile],
        checkpointer: new MemorySaver(),
        middleware: [humanInTheLoopMiddleware({ interruptOn: { delete_file: { allowedDecisions: ['approve', 'reject'] } } })],
      });
      const recorded = recordedPlugin(`lg-hitl-${decision}`);
      const handler = new NemoRelayCallbackHandler(recorded.hooks);
      const config = () => ({ callbacks: [perRun ? new NemoRelayCallbackHandler(recorded.hooks) : handler], configurable: { thread_id: 'cleanup-1' } });
      const first = await agent.invoke({ messages: [{ role: 'user', content: 'Delete /tmp/report.txt' }] }, config());
      expect(first.__interrupt__).toHaveLength(1);
      const resume = decision === 'approve' ? { type: 'approve' } : { type: 'reject', message: 'Keep the report.' };
      const second = await agent.invoke(new Command({ resume: { decisions: [resume] } }), config());
      expect(recorded.log.filter((e) => e.hook === 'pre_llm_call').map((e) => e.payload.is_first_turn)).toEqual([true, false]);
      handler.close(); // any handler on these hooks closes the thread
      expect(recorded.log.filter((e) => e.hook === 'on_session_start' || e.hook === 'on_session_finalize').map((e) => e.hook)).toEqual(['on_session_start', 'on_session_finalize']);
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expect(atif).toHaveLength(1);
      const doc = atif[0]!;
      expect(validateAtif(doc)).toEqual([]);
      expect(userSteps(doc)).toEqual(['Delete /tmp/report.txt']);
      expect(callsOf(doc)).toEqual([['toolu_delete', { path: '/tmp/report.txt' }]]);
      // What the model was given for the call: the tool's result, or the rejection the middleware wrote in its place.
      expect(toolMessages(second.messages)).toEqual([['toolu_delete', decision === 'approve' ? 'deleted /tmp/report.txt' : 'Keep the report.', decision === 'approve' ? 'ok' : 'error']]);
      expect(observed(doc)).toEqual([['toolu_delete', toolMessages(second.messages)[0]![1], decision === 'approve' ? 'ok' : 'denied']]);
      expect(agentSteps(doc).at(-1)!.message).toBe(answer);
      expect(recordedCounts(doc)).toEqual(reported(second.messages));
      const marks = recorded.log.filter((e) => e.hook.includes('approval') || e.hook === 'on_session_end').map((e) => [e.hook, e.payload.choice ?? e.payload.interrupted]);
      expect(marks).toEqual([
        ['pre_approval_request', undefined],
        ['on_session_end', true],
        ['post_approval_response', decision === 'approve' ? 'once' : 'deny'],
        ['on_session_end', false],
      ]);
      expect(recorded.log.filter((e) => e.hook.includes('approval')).map((e) => e.payload.tool_call_id)).toEqual(['toolu_delete', 'toolu_delete']);
      // The interrupted run paused for the approval of the call the middleware asked about.
      expect(turnEnds(recorded)).toEqual(pausedThenAnswered('toolu_delete'));
      // The trajectory's notes say the pause as one the turn went on from, not as the turn's end.
      expect(agentSteps(doc)[0]!.extra.turn_ends).toEqual([{ status: 'interrupted', timestamp: expect.any(String) }]);
      expect(doc.notes).toBe(`The turn was paused at step ${agentSteps(doc)[0]!.step_id} and resumed.`);
      await sameOnNative(recorded);
    }, 30_000);
  }

  it('a tool that calls interrupt() and is resumed with a Command: an approval request, then the result of the resumed run, in one trajectory', async () => {
    const { fetch } = scriptedFetch([
      chatCompletion({ id: 'chatcmpl-i1', model: GPT, content: null, toolCalls: [{ id: 'call_book', name: 'book_hotel', args: { hotel_name: 'McKittrick Hotel' } }], usage: { prompt_tokens: 64, completion_tokens: 18 } }),
      chatCompletion({ id: 'chatcmpl-i2', model: GPT, content: 'Your stay at the McKittrick Hotel is booked.', usage: { prompt_tokens: 101, completion_tokens: 11 } }),
    ]);
    let runs = 0;
    const bookHotel = tool(
      async ({ hotel_name }) => {
        runs += 1;
        const response = interrupt({ action: 'book_hotel', args: { hotel_name }, description: 'Please review the tool call' }) as { type: string };
        if (response.type !== 'accept') throw new Error(`Unknown response type: ${response.type}`);
        return `Successfully booked a stay at ${hotel_name}.`;
      },
      { name: 'book_hotel', description: 'Book a hotel', schema: z.object({ hotel_name: z.string() }) },
    );
    const agent = createReactAgent({ llm: openai(fetch), tools: [bookHotel], checkpointSaver: new MemorySaver() });
    const recorded = recordedPlugin('lg-interrupt');
    const handler = new NemoRelayCallbackHandler(recorded.hooks);
    const config = { callbacks: [handler], configurable: { thread_id: 'booking-1' } };
    const first = await agent.invoke({ messages: [{ role: 'user', content: 'Book a stay at the McKittrick Hotel.' }] }, config);
    expect((first as unknown as { __interrupt__?: unknown[] }).__interrupt__).toHaveLength(1);
    const second = await agent.invoke(new Command({ resume: { type: 'accept' } }), config);
    expect(runs).toBe(2); // LangGraph runs the tool again from its start when resumed
    handler.close();
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(userSteps(doc)).toEqual(['Book a stay at the McKittrick Hotel.']);
    expect(callsOf(doc)).toEqual([['call_book', { hotel_name: 'McKittrick Hotel' }]]);
    // What the model was given: the resumed run's result (the paused run had none, and did not fail).
    expect(observed(doc)).toEqual(toolMessages(second.messages));
    expect(observed(doc)[0]![1]).toBe('Successfully booked a stay at McKittrick Hotel.');
    expect(agentSteps(doc).at(-1)!.message).toBe('Your stay at the McKittrick Hotel is booked.');
    expect(recordedCounts(doc)).toEqual(reported(second.messages));
    const request = recorded.log.find((e) => e.hook === 'pre_approval_request')!.payload;
    expect(request).toMatchObject({ session_id: 'booking-1', tool_call_id: 'call_book' });
    expect(JSON.parse(String(request.description))).toEqual({ action: 'book_hotel', args: { hotel_name: 'McKittrick Hotel' }, description: 'Please review the tool call' });
    const toolEnds = recorded.log.filter((e) => e.hook === 'post_tool_call').map((e) => [e.payload.status, e.payload.result]);
    expect(toolEnds).toEqual([
      ['interrupted', null],
      ['ok', 'Successfully booked a stay at McKittrick Hotel.'],
    ]);
    // The trajectory says the same of the two runs: the paused one did not complete (docs/operators/outputs.md).
    const invocations = (doc.steps as Array<Record<string, any>>).flatMap((step) => (step.extra?.tool_invocations ?? []) as Array<Record<string, any>>);
    expect(invocations.map((invocation) => [invocation.invocation_id, invocation.status])).toEqual([
      ['call_book', 'interrupted'],
      ['call_book', 'completed'],
    ]);
    // The tool's interrupt() asked about its call: the turn paused for the approval of that call.
    expect(turnEnds(recorded)).toEqual(pausedThenAnswered('call_book'));
    expect(doc.notes).toBe(`The turn was paused at step ${agentSteps(doc)[0]!.step_id} and resumed.`);
    await sameOnNative(recorded);
  }, 30_000);

  it("a worker a handoff reached whose tool calls interrupt(), resumed with a Command: one sub-agent, paused and continued, the resumed tool's result on the call's step", async () => {
    const { fetch } = scriptedFetch([
      chatCompletion({ id: 'chatcmpl-sup1', model: GPT, content: null, toolCalls: [{ id: 'call_to_payer', name: 'transfer_to_payer', args: {} }], usage: { prompt_tokens: 40, completion_tokens: 8 } }),
      chatCompletion({ id: 'chatcmpl-pay1', model: GPT, content: null, toolCalls: [{ id: 'call_pay', name: 'pay', args: { amount: 5 } }], usage: { prompt_tokens: 60, completion_tokens: 12 } }),
      chatCompletion({ id: 'chatcmpl-pay2', model: GPT, content: 'Paid 5 EUR.', usage: { prompt_tokens: 90, completion_tokens: 5 } }),
      chatCompletion({ id: 'chatcmpl-sup2', model: GPT, content: 'The payment went through.', usage: { prompt_tokens: 120, completion_tokens: 6 } }),
    ]);
    let runs = 0;
    const pay = tool(
      async ({ amount }) => {
        runs += 1;
        return interrupt({ question: `Pay ${amount} EUR?` }) === 'yes' ? `Paid ${amount} EUR` : 'Payment refused';
      },
      { name: 'pay', description: 'Pay an amount', schema: z.object({ amount: z.number() }) },
    );
    const supervisor = createReactAgent({ llm: openai(fetch), tools: [createHandoffTool('payer')], name: 'supervisor' });
    const payer = createReactAgent({ llm: openai(fetch), tools: [pay], name: 'payer' });
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('supervisor', supervisor, { ends: ['payer'] })
      .addNode('payer', payer)
      .addEdge(START, 'supervisor')
      .addEdge('payer', 'supervisor')
      .compile({ checkpointer: new MemorySaver() });
    const recorded = recordedPlugin('lg-worker-interrupt');
    const handler = new NemoRelayCallbackHandler(recorded.hooks);
    const config = { callbacks: [handler], configurable: { thread_id: 'pay-1' } };
    const first = await graph.invoke({ messages: [{ role: 'user', content: 'Pay 5 EUR.' }] }, config);
    expect((first as unknown as { __interrupt__?: unknown[] }).__interrupt__).toHaveLength(1);
    const second = await graph.invoke(new Command({ resume: 'yes' }), config);
    expect(String(second.messages.at(-1)!.content)).toBe('The payment went through.');
    expect(runs).toBe(2); // LangGraph runs the tool again from its start when resumed
    handler.close();
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    // The worker that paused goes on in its own trajectory: one sub-agent, linked from the handoff call once.
    const [worker] = subagents(doc, 1);
    expect(worker.session_id).toBe('pay-1:sub:call_to_payer');
    expect(refOf(doc, 'call_to_payer')).toBe(worker.trajectory_id);
    // Asked once, about the tool's call; what the program resumed with is its own value, no decision.
    expect(approvalAndSubagentHooks(recorded)).toEqual([
      ['subagent_start', 'pay-1:sub:call_to_payer', 'call_to_payer', undefined],
      ['pre_approval_request', 'pay-1:sub:call_to_payer', 'call_pay', undefined],
      ['subagent_stop', 'pay-1:sub:call_to_payer', 'call_to_payer', 'completed'],
    ]);
    expect(turnEnds(recorded, worker.session_id)).toEqual(pausedThenAnswered('call_pay'));
    expect(turnEnds(recorded, 'pay-1')).toEqual(pausedThenAnswered('call_pay'));
    // The resumed run's result is the observation of the step that made the call, as the model read it.
    expect(callsOf(worker)).toEqual([['call_pay', { amount: 5 }]]);
    expect(observed(worker)).toEqual(toolMessages(second.messages).filter(([id]) => id === 'call_pay'));
    expect((worker.steps as Step[]).map((step) => step.source)).toEqual(['agent', 'agent']);
    expect(agentSteps(worker).at(-1)!.message).toBe('Paid 5 EUR.');
    expect(callsOf(doc).map(([id]) => id)).toEqual(['call_to_payer']);
    expect(recordedCounts(doc)).toEqual(reported(second.messages, 'chatcmpl-sup'));
    expect(recordedCounts(worker)).toEqual(reported(second.messages, 'chatcmpl-pay'));
    await sameOnNative(recorded);
  }, 30_000);

  for (const perRun of [false, true]) {
    it(`an agent a tool runs with its config, whose own tool calls interrupt()${perRun ? ', a handler made per run' : ''}: one sub-agent of the call, paused and continued, the resumed tool's result on the call's step`, async () => {
      const { fetch } = scriptedFetch([
        chatCompletion({ id: 'chatcmpl-boss1', model: GPT, content: null, toolCalls: [{ id: 'call_ask_payer', name: 'ask_payer', args: { task: 'Pay 5 EUR.' } }], usage: { prompt_tokens: 40, completion_tokens: 8 } }),
        chatCompletion({ id: 'chatcmpl-pay1', model: GPT, content: null, toolCalls: [{ id: 'call_pay', name: 'pay', args: { amount: 5 } }], usage: { prompt_tokens: 60, completion_tokens: 12 } }),
        chatCompletion({ id: 'chatcmpl-pay2', model: GPT, content: 'Paid 5 EUR.', usage: { prompt_tokens: 90, completion_tokens: 5 } }),
        chatCompletion({ id: 'chatcmpl-boss2', model: GPT, content: 'The payer paid.', usage: { prompt_tokens: 120, completion_tokens: 6 } }),
      ]);
      const pay = tool(async ({ amount }) => (interrupt({ question: `Pay ${amount} EUR?` }) === 'yes' ? `Paid ${amount} EUR` : 'Payment refused'), {
        name: 'pay',
        description: 'Pay an amount',
        schema: z.object({ amount: z.number() }),
      });
      const payer = createReactAgent({ llm: openai(fetch), tools: [pay], name: 'payer' });
      let payerMessages: BaseMessage[] = [];
      const askPayer = tool(
        async ({ task }, config) => {
          payerMessages = (await payer.invoke({ messages: [{ role: 'user', content: task }] }, config)).messages;
          return payerMessages.at(-1)!.text;
        },
        { name: 'ask_payer', description: 'Ask the payer', schema: z.object({ task: z.string() }) },
      );
      const boss = createReactAgent({ llm: openai(fetch), tools: [askPayer], name: 'boss', checkpointSaver: new MemorySaver() });
      const recorded = recordedPlugin(`lg-tool-agent-interrupt${perRun ? '-per-run' : ''}`);
      const handlers: NemoRelayCallbackHandler[] = [];
      const config = () => {
        const handler = perRun || handlers.length === 0 ? new NemoRelayCallbackHandler(recorded.hooks) : handlers[0]!;
        handlers.push(handler);
        return { callbacks: [handler], configurable: { thread_id: 'boss-1' } };
      };
      const first = await boss.invoke({ messages: [{ role: 'user', content: 'Have the payer pay 5 EUR.' }] }, config());
      expect((first as unknown as { __interrupt__?: unknown[] }).__interrupt__).toHaveLength(1);
      const second = await boss.invoke(new Command({ resume: 'yes' }), config());
      expect(String(second.messages.at(-1)!.content)).toBe('The payer paid.');
      handlers.at(-1)!.close();
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      const doc = atif[0]!;
      expect(validateAtif(doc)).toEqual([]);
      const [inner] = subagents(doc, 1);
      expect(inner.session_id).toBe('boss-1:sub:call_ask_payer');
      expect(refOf(doc, 'call_ask_payer')).toBe(inner.trajectory_id);
      expect(approvalAndSubagentHooks(recorded)).toEqual([
        ['subagent_start', 'boss-1:sub:call_ask_payer', 'call_ask_payer', undefined],
        ['pre_approval_request', 'boss-1:sub:call_ask_payer', 'call_pay', undefined],
        ['subagent_stop', 'boss-1:sub:call_ask_payer', 'call_ask_payer', 'completed'],
      ]);
      expect(turnEnds(recorded, inner.session_id)).toEqual(pausedThenAnswered('call_pay'));
      expect(observed(inner)).toEqual(toolMessages(payerMessages).filter(([id]) => id === 'call_pay'));
      expect((inner.steps as Step[]).map((step) => step.source)).toEqual(['user', 'agent', 'agent']);
      expect(observed(doc).map(([id, content]) => [id, content])).toEqual(toolMessages(second.messages).map(([id, content]) => [id, content]));
      expect(recordedCounts(doc)).toEqual(reported(second.messages));
      expect(recordedCounts(inner)).toEqual(reported(payerMessages));
      await sameOnNative(recorded);
    }, 30_000);
  }

  describe('streaming: the tokens are what LangChain reports on the messages', () => {
    const replies = (provider: 'openai' | 'anthropic'): WireReply[] =>
      provider === 'openai'
        ? [
            chatCompletionEither({ id: 'chatcmpl-st1', model: GPT, content: null, toolCalls: [{ id: 'call_oslo', name: 'get_weather', args: { city: 'Oslo' } }, { id: 'call_rome', name: 'get_weather', args: { city: 'Rome' } }], usage: { prompt_tokens: 80, completion_tokens: 12 } }),
            chatCompletionEither({ id: 'chatcmpl-st2', model: GPT, content: 'Both are sunny.', usage: { prompt_tokens: 120, completion_tokens: 5, cached: 64 } }),
          ]
        : [
            { ...anthropicMessage(claudeCalls), sse: anthropicStream(claudeCalls).sse },
            { ...anthropicMessage(claudeAnswer), sse: anthropicStream(claudeAnswer).sse },
          ];
    const claudeCalls = {
      id: 'msg_st1',
      model: CLAUDE,
      content: [{ type: 'tool_use' as const, id: 'toolu_oslo', name: 'get_weather', input: { city: 'Oslo' } }, { type: 'tool_use' as const, id: 'toolu_rome', name: 'get_weather', input: { city: 'Rome' } }],
      usage: { input_tokens: 80, output_tokens: 12, cache_read_input_tokens: 10 },
    };
    const claudeAnswer = { id: 'msg_st2', model: CLAUDE, content: [{ type: 'text' as const, text: 'Both are sunny.' }], usage: { input_tokens: 120, output_tokens: 5 } };
    const weather = tool(async ({ city }) => `Sunny in ${city}`, { name: 'get_weather', description: 'The current weather of a city', schema: z.object({ city: z.string() }) });

    for (const mode of ['messages', 'updates', 'streamEvents'] as const) {
      for (const provider of ['openai', 'anthropic'] as const) {
        it(`${mode} on ${provider}`, async () => {
          const { fetch, requests } = scriptedFetch(replies(provider));
          const agent = createReactAgent({ llm: provider === 'openai' ? openai(fetch) : anthropic(fetch), tools: [weather] });
          const recorded = recordedPlugin(`lg-stream-${mode}-${provider}`);
          const callbacks = [new NemoRelayCallbackHandler(recorded.hooks)];
          const input = { messages: [{ role: 'user', content: 'Weather in Oslo and Rome?' }] };
          let final: { messages: BaseMessage[] } | undefined;
          if (mode === 'streamEvents') {
            for await (const event of agent.streamEvents(input, { version: 'v2', callbacks })) {
              if (event.event === 'on_chain_end' && event.metadata?.langgraph_node === undefined && event.data?.output?.messages !== undefined) final = event.data.output;
            }
          } else {
            for await (const [kind, chunk] of await agent.stream(input, { callbacks, streamMode: [mode, 'values'] })) if (kind === 'values') final = chunk as { messages: BaseMessage[] };
          }
          // "messages" and streamEvents make the model stream on the wire (ChatOpenAI asks for the usage chunk: streamUsage).
          const streamed = mode !== 'updates';
          expect(requests.map((r) => r.body.stream === true)).toEqual([streamed, streamed]);
          if (provider === 'openai' && streamed) expect(requests[0]!.body.stream_options).toEqual({ include_usage: true });
          const { atif, counters } = await recorded.finish();
          expectNothingLost(counters);
          const doc = atif[0]!;
          expect(validateAtif(doc)).toEqual([]);
          expect(callsOf(doc).map(([id]) => id)).toEqual(provider === 'openai' ? ['call_oslo', 'call_rome'] : ['toolu_oslo', 'toolu_rome']);
          expect(observed(doc)).toEqual(toolMessages(final!.messages));
          expect(recordedCounts(doc)).toEqual(reported(final!.messages));
          const sum = (index: 0 | 1 | 2) => reported(final!.messages).reduce((total, counts) => total + counts[index], 0);
          expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: sum(0), total_completion_tokens: sum(1), total_cached_tokens: sum(2) });
          expect(agentSteps(doc).at(-1)!.message).toBe('Both are sunny.');
        }, 30_000);
      }
    }
  });

  it("a node retried by its RetryPolicy after the provider's 503: one API call whose retry succeeded, no second user step", async () => {
    const { fetch, requests } = scriptedFetch([
      openAiError(503, 'server_error', 'The server is overloaded.'),
      chatCompletion({ id: 'chatcmpl-rp', model: GPT, content: 'Hello!', usage: { prompt_tokens: 14, completion_tokens: 2 } }),
    ]);
    const model = openai(fetch);
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('agent', async (state) => ({ messages: [await model.invoke(state.messages)] }), { retryPolicy: { maxAttempts: 3, initialInterval: 1, jitter: false } })
      .addEdge(START, 'agent')
      .addEdge('agent', END)
      .compile();
    const recorded = recordedPlugin('lg-retry-policy');
    const result = await graph.invoke({ messages: [{ role: 'user', content: 'Say hello.' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(requests).toHaveLength(2);
    const { atif, atof, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect((doc.steps as Step[]).map((s) => [s.source, s.extra?.invocation?.status ?? null])).toEqual([
      ['user', null],
      ['agent', 'failed'],
      ['agent', 'completed'],
    ]);
    expect(agentSteps(doc).at(-1)!.message).toBe('Hello!');
    const id = expectRetriedFirstCall(recorded.log, true)[0]!.payload.api_request_id;
    expect(atof.filter((e) => e.category === 'llm' && e.scope_category === 'end').map((e) => e.metadata?.api_request_id)).toEqual([id, id]);
    expect(recordedCounts(doc)).toEqual(reported(result.messages));
    await sameOnNative(recorded);
  }, 30_000);

  for (const outcome of ['succeeds', 'fails again'] as const) {
    it(`a worker agent's node retried by its RetryPolicy after its model call's 503 (the retry ${outcome}): one sub-agent, linked from the handoff, whose failed attempt and retry are one API call`, async () => {
      const { fetch, requests } = scriptedFetch([
        chatCompletion({ id: 'chatcmpl-sup1', model: GPT, content: null, toolCalls: [{ id: 'call_handoff', name: 'transfer_to_researcher', args: {} }], usage: { prompt_tokens: 60, completion_tokens: 9 } }),
        openAiError(503, 'server_error', 'The server is overloaded.'),
        outcome === 'succeeds'
          ? chatCompletion({ id: 'chatcmpl-res1', model: GPT, content: 'Paris has about 2.1 million people.', usage: { prompt_tokens: 80, completion_tokens: 10 } })
          : openAiError(503, 'server_error', 'The server is still overloaded.'),
        chatCompletion({ id: 'chatcmpl-sup2', model: GPT, content: 'About 2.1 million people live in Paris.', usage: { prompt_tokens: 150, completion_tokens: 12 } }),
      ]);
      const supervisor = createAgent({ model: openai(fetch), tools: [createHandoffTool('researcher')], name: 'supervisor' });
      const researcher = createAgent({ model: openai(fetch), tools: [], name: 'researcher' });
      const graph = new StateGraph(MessagesAnnotation)
        .addNode('supervisor', supervisor.graph, { ends: ['researcher', END] })
        .addNode('researcher', researcher.graph, { retryPolicy: { maxAttempts: 2, initialInterval: 1, jitter: false } })
        .addEdge(START, 'supervisor')
        .addEdge('researcher', 'supervisor')
        .compile();
      const recorded = recordedPlugin('lg-agent-retry-policy');
      const run = graph.invoke({ messages: [{ role: 'user', content: 'How many people live in Paris?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
      const result = outcome === 'succeeds' ? await run : await run.then(() => undefined, (error: unknown) => void expect(String(error)).toContain('still overloaded'));
      expect(requests).toHaveLength(outcome === 'succeeds' ? 4 : 3);
      const { atif, atof, counters } = await recorded.finish();
      expectNothingLost(counters);
      const doc = atif[0]!;
      expect(validateAtif(doc)).toEqual([]);
      // The retried node is the same worker: one sub-agent, the handoff's, with no step of the parent referring to another.
      const [child] = subagents(doc, 1);
      expect(refOf(doc, 'call_handoff')).toBe(child.trajectory_id);
      expect(agentSteps(doc).filter((step) => (step.llm_call_count ?? 0) === 0)).toEqual([]);
      expect(agentSteps(child).map((step) => [step.extra?.invocation?.status, step.message])).toEqual([
        ['failed', expect.stringContaining('overloaded')],
        outcome === 'succeeds' ? ['completed', 'Paris has about 2.1 million people.'] : ['failed', expect.stringContaining('still overloaded')],
      ]);
      const childCalls = recorded.log.filter((e) => e.hook === 'pre_api_request' && e.payload.session_id === child.session_id).map((e) => [e.payload.api_request_id, e.payload.retry_count]);
      expect(childCalls).toEqual([[childCalls[0]![0], 0], [childCalls[0]![0], 1]]);
      expect(atof.filter((e) => e.category === 'llm' && e.scope_category === 'end' && e.metadata?.api_request_id === childCalls[0]![0])).toHaveLength(2);
      const subagentHooks = recorded.log.filter((e) => e.hook === 'subagent_start' || e.hook === 'subagent_stop').map((e) => [e.hook, e.payload.tool_call_id ?? null, e.payload.child_status ?? null]);
      expect(subagentHooks).toEqual([
        ['subagent_start', 'call_handoff', null],
        ['subagent_stop', expect.anything(), outcome === 'succeeds' ? 'completed' : 'failed'],
      ]);
      if (result !== undefined) expect(recordedCounts(child)).toEqual(reported(result.messages, 'chatcmpl-res'));
      await sameOnNative(recorded);
    }, 30_000);
  }

  it("a worker whose node its RetryPolicy ran again asks a human, and the Command resuming it reaches no middleware (LangGraph starts the worker afresh): asked, never answered, the rejected call never denied; one sub-agent", async () => {
    const { fetch, requests } = scriptedFetch([
      chatCompletion({ id: 'chatcmpl-sup1', model: GPT, content: null, toolCalls: [{ id: 'call_to_ops', name: 'transfer_to_ops', args: {} }], usage: { prompt_tokens: 40, completion_tokens: 8 } }),
      openAiError(503, 'server_error', 'The server is overloaded.'),
      chatCompletion({ id: 'chatcmpl-ops1', model: GPT, content: null, toolCalls: [{ id: 'call_delete', name: 'delete_file', args: { path: '/tmp/old.log' } }], usage: { prompt_tokens: 70, completion_tokens: 20 } }),
      // Resumed, the worker starts again from its beginning: its model is asked again, and answers without the tool.
      chatCompletion({ id: 'chatcmpl-ops2', model: GPT, content: 'Nothing to delete after all.', usage: { prompt_tokens: 72, completion_tokens: 9 } }),
      chatCompletion({ id: 'chatcmpl-sup2', model: GPT, content: 'Nothing was deleted.', usage: { prompt_tokens: 150, completion_tokens: 7 } }),
    ]);
    const deleteFile = tool(async ({ path }) => `deleted ${path}`, { name: 'delete_file', description: 'Delete a file', schema: z.object({ path: z.string() }) });
    const supervisor = createAgent({ model: openai(fetch), tools: [createHandoffTool('ops')], name: 'supervisor' });
    const ops = createAgent({ model: openai(fetch), tools: [deleteFile], name: 'ops', middleware: [humanInTheLoopMiddleware({ interruptOn: { delete_file: { allowedDecisions: ['approve', 'reject'] } } })] });
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('supervisor', supervisor.graph, { ends: ['ops', END] })
      .addNode('ops', ops.graph, { retryPolicy: { maxAttempts: 2, initialInterval: 1, jitter: false } })
      .addEdge(START, 'supervisor')
      .addEdge('ops', 'supervisor')
      .compile({ checkpointer: new MemorySaver() });
    const recorded = recordedPlugin('lg-worker-retried-hitl');
    const handler = new NemoRelayCallbackHandler(recorded.hooks);
    const config = { callbacks: [handler], configurable: { thread_id: 'ops-3' } };
    const first = await graph.invoke({ messages: [{ role: 'user', content: 'Delete /tmp/old.log' }] }, config);
    expect((first as unknown as { __interrupt__?: unknown[] }).__interrupt__).toHaveLength(1);
    const second = await graph.invoke(new Command({ resume: { decisions: [{ type: 'reject', message: 'Keep it.' }] } }), config);
    expect(String(second.messages.at(-1)!.content)).toBe('Nothing was deleted.');
    // What LangGraph did: the resumed worker asked its model again with the request it first made (no rejection in it).
    expect(requests).toHaveLength(5);
    expect(JSON.stringify(requests[3]!.body)).not.toContain('Keep it.');
    expect((requests[3]!.body as { messages: unknown[] }).messages).toEqual((requests[2]!.body as { messages: unknown[] }).messages);
    handler.close();
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    // The request stays unanswered (no decision reached the middleware) and the call never ran nor was denied.
    expect(approvalAndSubagentHooks(recorded)).toEqual([
      ['subagent_start', 'ops-3:sub:call_to_ops', 'call_to_ops', undefined],
      ['pre_approval_request', 'ops-3:sub:call_to_ops', 'call_delete', undefined],
      ['subagent_stop', 'ops-3:sub:call_to_ops', 'call_to_ops', 'completed'],
    ]);
    expect(recorded.log.filter((e) => e.hook === 'post_tool_call' && e.payload.tool_call_id === 'call_delete')).toEqual([]);
    // One sub-agent: the failed attempt and its retry, the call it paused on, and its fresh start's answer.
    const [worker] = subagents(doc, 1);
    expect(agentSteps(worker).map((step) => [step.extra?.invocation?.status ?? null, step.message, (step.tool_calls ?? []).map((call: AtifDoc) => call.tool_call_id)])).toEqual([
      ['failed', expect.stringContaining('overloaded'), []],
      [expect.anything(), '', ['call_delete']],
      [expect.anything(), 'Nothing to delete after all.', []],
    ]);
    await sameOnNative(recorded);
  }, 30_000);

  it('a node that throws fails the turn with its error; the run is one failed turn', async () => {
    const { fetch } = scriptedFetch([chatCompletion({ id: 'chatcmpl-v1', model: GPT, content: 'DROP TABLE users;', usage: { prompt_tokens: 20, completion_tokens: 6 } })]);
    const model = openai(fetch);
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('agent', async (state) => ({ messages: [await model.invoke(state.messages)] }))
      .addNode('check', async () => {
        throw new Error('unsafe SQL in the answer');
      })
      .addEdge(START, 'agent')
      .addEdge('agent', 'check')
      .addEdge('check', END)
      .compile();
    const recorded = recordedPlugin('lg-node-throws');
    await expect(graph.invoke({ messages: [{ role: 'user', content: 'Write SQL.' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] })).rejects.toThrow('unsafe SQL');
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(agentSteps(atif[0]!).map((s) => s.message)).toEqual(['DROP TABLE users;']);
    expect(recorded.log.find((e) => e.hook === 'on_session_end')!.payload).toMatchObject({ failed: true, error_message: 'unsafe SQL in the answer' });
    await sameOnNative(recorded);
  }, 30_000);
});
