// A supervisor from `@langchain/langgraph-supervisor` (`createSupervisor`, 1.x) through the LangChain adapter, as
// its README writes it: a research expert and a math expert (`createReactAgent`), the supervisor handing off to each
// with the package's `transfer_to_<agent>` tools, each worker handing back with the messages the package adds
// itself (no model says them). The real ChatOpenAI client runs over a fake fetch speaking Chat Completions
// (test/support/provider-wire.ts); the trajectory, the ATOF and `view` are held to what the program's state holds,
// and the same hooks on native (where it loads) write the same files.
import { describe, expect, it } from 'vitest';
import { ChatOpenAI } from '@langchain/openai';
import { AIMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { createSupervisor } from '@langchain/langgraph-supervisor';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import * as z from 'zod';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { chatCompletion, scriptedFetch } from '../support/provider-wire.ts';
import { finishedRun, recordedPlugin, viewLines, type AtifDoc } from './support.ts';
import { sameOnNative } from './same-on-native.ts';

const GPT = 'gpt-4o-2024-08-06';

type Step = AtifDoc;
const agentSteps = (doc: AtifDoc): Step[] => (doc.steps as Step[]).filter((step) => step.source === 'agent');
const callsOf = (doc: AtifDoc): Array<[string, unknown]> => agentSteps(doc).flatMap((step) => (step.tool_calls ?? []).map((call: AtifDoc) => [call.tool_call_id, call.arguments] as [string, unknown]));
const observed = (doc: AtifDoc): Array<[string, string]> => (doc.steps as Step[]).flatMap((step) => (step.observation?.results ?? []).map((r: AtifDoc) => [r.source_call_id, String(r.content)] as [string, string]));
/** The trajectory id the observation of a call refers to. */
const refOf = (doc: AtifDoc, callId: string): unknown =>
  (doc.steps as Step[]).flatMap((step) => step.observation?.results ?? []).find((r: AtifDoc) => r.source_call_id === callId)?.subagent_trajectory_ref?.[0]?.trajectory_id;
const recordedCounts = (doc: AtifDoc): number[][] => agentSteps(doc).map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens, step.metrics.cached_tokens ?? 0]);
/** The usage_metadata of the answers of the agent `name` in the program's state: [input, output, cache read]. */
const reportedBy = (messages: BaseMessage[], name: string): number[][] =>
  messages
    .filter((m) => AIMessage.isInstance(m) && m.name === name && m.usage_metadata !== undefined)
    .map((m) => { const u = (m as AIMessage).usage_metadata!; return [u.input_tokens, u.output_tokens, u.input_token_details?.cache_read ?? 0]; });

describe('createSupervisor through the LangChain adapter', () => {
  for (const mode of ['invoke', 'stream'] as const) {
    it(`the README's research and math experts, app.${mode}(): the supervisor's trajectory, each expert a sub-agent linked from its handoff call, with its own calls and tokens; the hand-backs no model said are no steps`, async () => {
      const { fetch, requests } = scriptedFetch([
        chatCompletion({ id: 'chatcmpl-sup1', model: GPT, content: null, toolCalls: [{ id: 'call_to_research', name: 'transfer_to_research_expert', args: {} }], usage: { prompt_tokens: 100, completion_tokens: 10 } }),
        chatCompletion({ id: 'chatcmpl-res1', model: GPT, content: null, toolCalls: [{ id: 'call_search', name: 'web_search', args: { query: 'Meta and Apple headcount 2024' } }], usage: { prompt_tokens: 110, completion_tokens: 12 } }),
        chatCompletion({ id: 'chatcmpl-res2', model: GPT, content: 'Meta has 67,317 employees; Apple 164,000.', usage: { prompt_tokens: 200, completion_tokens: 20 } }),
        chatCompletion({ id: 'chatcmpl-sup2', model: GPT, content: null, toolCalls: [{ id: 'call_to_math', name: 'transfer_to_math_expert', args: {} }], usage: { prompt_tokens: 300, completion_tokens: 10 } }),
        chatCompletion({ id: 'chatcmpl-mat1', model: GPT, content: null, toolCalls: [{ id: 'call_add', name: 'add', args: { a: 67317, b: 164000 } }], usage: { prompt_tokens: 320, completion_tokens: 14 } }),
        chatCompletion({ id: 'chatcmpl-mat2', model: GPT, content: 'The sum is 231,317.', usage: { prompt_tokens: 350, completion_tokens: 8 } }),
        chatCompletion({ id: 'chatcmpl-sup3', model: GPT, content: 'Meta and Apple employ 231,317 people combined.', usage: { prompt_tokens: 400, completion_tokens: 12, cached: 256 } }),
      ]);
      const model = new ChatOpenAI({ model: 'gpt-4o', apiKey: 'sk-test', maxRetries: 0, configuration: { fetch } });
      const add = tool(async (args) => args.a + args.b, { name: 'add', description: 'Add two numbers.', schema: z.object({ a: z.number(), b: z.number() }) });
      const webSearch = tool(async () => 'Meta: 67,317 employees. Apple: 164,000 employees.', { name: 'web_search', description: 'Search the web for information.', schema: z.object({ query: z.string() }) });
      const mathAgent = createReactAgent({ llm: model, tools: [add], name: 'math_expert', prompt: 'You are a math expert. Always use one tool at a time.' });
      const researchAgent = createReactAgent({ llm: model, tools: [webSearch], name: 'research_expert', prompt: 'You are a world class researcher with access to web search. Do not do any math.' });
      const workflow = createSupervisor({
        agents: [researchAgent, mathAgent],
        llm: model,
        prompt: 'You are a team supervisor managing a research expert and a math expert.',
      });
      const app = workflow.compile();
      const recorded = recordedPlugin(`lg-supervisor-${mode}`);
      const input = { messages: [{ role: 'user', content: 'What is the combined headcount of Meta and Apple in 2024?' }] };
      const config = { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] };
      let messages: BaseMessage[] = [];
      if (mode === 'invoke') messages = (await app.invoke(input, config)).messages;
      else for await (const state of await app.stream(input, { ...config, streamMode: 'values' })) messages = state.messages;
      expect(requests).toHaveLength(7);
      // The package's own hand-backs: an AI message and its ToolMessage for each expert, which no model said.
      expect(messages.filter((m) => m.content === 'Transferring back to supervisor').map((m) => m.name)).toEqual(['research_expert', 'math_expert']);

      const { doc, atof } = await finishedRun(recorded);
      // The trajectory is the compiled workflow's (LangGraph names one compiled without a name `LangGraph`); its steps
      // are the supervisor's, the graph's own agent.
      expect(doc.agent.name).toBe('LangGraph');
      expect((doc.steps as Step[]).filter((step) => step.source === 'user').map((step) => step.message)).toEqual(['What is the combined headcount of Meta and Apple in 2024?']);
      expect(recorded.log.filter((e) => e.hook === 'pre_llm_call' && e.payload.parent_session_id === undefined)).toHaveLength(1);
      expect(recorded.log.filter((e) => e.hook === 'pre_api_request')).toHaveLength(requests.length);
      // The supervisor's steps: its two handoffs and its answer, its tokens its own.
      expect(callsOf(doc)).toEqual([['call_to_research', {}], ['call_to_math', {}]]);
      expect(observed(doc)).toEqual([['call_to_research', 'Successfully transferred to research_expert'], ['call_to_math', 'Successfully transferred to math_expert']]);
      expect(agentSteps(doc).map((step) => [step.model_name, step.message])).toEqual([[GPT, ''], [GPT, ''], [GPT, 'Meta and Apple employ 231,317 people combined.']]);
      expect(recordedCounts(doc)).toEqual(reportedBy(messages, 'supervisor'));
      expect(recordedCounts(doc)).toEqual([[100, 10, 0], [300, 10, 0], [400, 12, 256]]);
      // Each expert: a sub-agent linked from the handoff call that started it, its calls and results, its tokens.
      const children = doc.subagent_trajectories as AtifDoc[];
      expect(children.map((child) => child.agent.name)).toEqual(['research_expert', 'math_expert']);
      const [research, math] = children as [AtifDoc, AtifDoc];
      expect([refOf(doc, 'call_to_research'), refOf(doc, 'call_to_math')]).toEqual([research.trajectory_id, math.trajectory_id]);
      expect(callsOf(research)).toEqual([['call_search', { query: 'Meta and Apple headcount 2024' }]]);
      expect(callsOf(math)).toEqual([['call_add', { a: 67317, b: 164000 }]]);
      // The experts' own messages stay in their graphs (the supervisor's state keeps each one's last answer, outputMode
      // "last_message"): the results are what the tools returned, the tokens the wire's, the last answer's LangChain's.
      expect([...observed(research), ...observed(math)]).toEqual([['call_search', 'Meta: 67,317 employees. Apple: 164,000 employees.'], ['call_add', '231317']]);
      expect(agentSteps(research).at(-1)!.message).toBe('Meta has 67,317 employees; Apple 164,000.');
      expect(agentSteps(math).at(-1)!.message).toBe('The sum is 231,317.');
      expect([recordedCounts(research), recordedCounts(math)]).toEqual([[[110, 12, 0], [200, 20, 0]], [[320, 14, 0], [350, 8, 0]]]);
      expect([recordedCounts(research).at(-1), recordedCounts(math).at(-1)]).toEqual([...reportedBy(messages, 'research_expert'), ...reportedBy(messages, 'math_expert')]);
      expect(recorded.log.filter((e) => e.hook.startsWith('subagent_')).map((e) => [e.hook, e.payload.child_role, e.payload.tool_call_id, e.payload.child_status])).toEqual([
        ['subagent_start', 'research_expert', 'call_to_research', undefined],
        ['subagent_stop', 'research_expert', 'call_to_research', 'completed'],
        ['subagent_start', 'math_expert', 'call_to_math', undefined],
        ['subagent_stop', 'math_expert', 'call_to_math', 'completed'],
      ]);
      // No hand-back is a call or a step anywhere: no model asked for it.
      expect(atof.filter((e) => e.kind === 'scope' && e.category === 'tool' && e.scope_category === 'start').map((e) => e.name)).toEqual(['transfer_to_research_expert', 'web_search', 'transfer_to_math_expert', 'add']);
      expect((await viewLines(recorded, 'atif')).join('\n')).not.toContain('Transferring back');
      await sameOnNative(recorded);
    });
  }
});
