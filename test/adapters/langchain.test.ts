// The LangChain adapter, driven by fakeModel() from @langchain/core/testing:
// a createAgent run with two tools (one throws), a 503 retried by
// modelRetryMiddleware and a sub-agent invoked from a tool, through the
// plugin on the memory backend.
import { describe, expect, it } from 'vitest';
import { AIMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { fakeModel } from '@langchain/core/testing';
import { createAgent, humanInTheLoopMiddleware, modelRetryMiddleware, toolErrorMiddleware } from 'langchain';
import { Command, MemorySaver } from '@langchain/langgraph';
import * as z from 'zod';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { HookRegistry } from '../../src/hooks/registry.ts';
import { backends, checkRetry, checkTrajectory, expectNothingLost, recordedPlugin, viewLines } from './support.ts';

const ai = (content: string, toolCalls: Array<{ id: string; name: string; args: Record<string, unknown> }>, usage: [number, number]) =>
  new AIMessage({
    content,
    tool_calls: toolCalls,
    usage_metadata: { input_tokens: usage[0], output_tokens: usage[1], total_tokens: usage[0] + usage[1] },
    response_metadata: { model_name: 'fake-model', finish_reason: toolCalls.length > 0 ? 'tool_calls' : 'stop' },
  });

function scenario() {
  const childModel = fakeModel()
    .respond(ai('', [{ id: 'call_search_1', name: 'search', args: { q: 'Paris founding' } }], [7, 3]))
    .respond(ai('Founded in the 3rd century BC.', [], [15, 8]));
  const parentModel = fakeModel()
    .respond(Object.assign(new Error('mock 503'), { status: 503 }))
    .respond(ai('Checking.', [{ id: 'call_weather_1', name: 'weather', args: { city: 'Paris' } }, { id: 'call_broken_1', name: 'broken', args: { x: 1 } }], [10, 5]))
    .respond(ai('', [{ id: 'call_research_1', name: 'research', args: { task: 'history of Paris' } }], [30, 6]))
    .respond(ai('Paris is sunny; founded long ago.', [], [50, 12]));
  const search = tool(async ({ q }) => `${q}: 3rd c. BC`, { name: 'search', description: 'search', schema: z.object({ q: z.string() }) });
  const child = createAgent({ model: childModel, tools: [search], name: 'researcher' });
  const weather = tool(async ({ city }) => JSON.stringify({ city, sky: 'sunny' }), { name: 'weather', description: 'weather', schema: z.object({ city: z.string() }) });
  const broken = tool(async (): Promise<string> => { throw new Error('tool exploded'); }, { name: 'broken', description: 'fails', schema: z.object({ x: z.number() }) });
  const research = tool(
    async ({ task }, config) => {
      const out = await child.invoke({ messages: [{ role: 'user', content: task }] }, config);
      return String(out.messages.at(-1)!.content);
    },
    { name: 'research', description: 'delegate to a sub-agent', schema: z.object({ task: z.string() }) },
  );
  return createAgent({
    model: parentModel,
    tools: [weather, broken, research],
    name: 'orchestrator',
    middleware: [
      modelRetryMiddleware({ maxRetries: 2, initialDelayMs: 5, backoffFactor: 1 }),
      toolErrorMiddleware({ onError: (error, request) => `Tool ${request.toolCall.name} failed: ${(error as Error).message}` }),
    ],
  });
}

describe('NemoRelayCallbackHandler', () => {
  for (const backend of backends()) {
  it(`records a createAgent run with a failing tool, a retried call and a sub-agent as one valid trajectory (${backend} backend)`, async () => {
    const recorded = recordedPlugin('langchain', backend);
    const handler = new NemoRelayCallbackHandler(recorded.hooks);
    const agent = scenario();
    const out = await agent.invoke(
      { messages: [{ role: 'user', content: 'Weather and history of Paris?' }] },
      { callbacks: [handler], configurable: { thread_id: 'thread-1' } },
    );
    expect(out.messages.at(-1)!.content).toBe('Paris is sunny; founded long ago.');
    handler.close(); // the thread's session stays open for its next run until then
    const { atif, atof, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    expect(atif[0]!.session_id).toBe('thread-1');
    checkTrajectory(atif[0]!, {
      userPrompt: 'Weather and history of Paris?',
      model: 'fake-model',
      parentTools: [['call_weather_1', false], ['call_broken_1', true]],
      subagentCall: 'call_research_1',
      subagentTools: ['call_search_1'],
      parentUsage: [[10, 5], [30, 6], [50, 12]],
      childUsage: [[7, 3], [15, 8]],
    });
    checkRetry(atof);
    const start = recorded.log.find((entry) => entry.hook === 'subagent_start')!;
    expect(start.payload).toMatchObject({ parent_session_id: 'thread-1', tool_call_id: 'call_research_1', child_role: 'researcher' });
    expect(recorded.log.at(-1)!.hook).toBe('on_session_finalize');
  }, 20_000);
  }

  it('keeps results untouched and records nothing when no plugin listens', async () => {
    const hooks = new HookRegistry();
    const handler = new NemoRelayCallbackHandler(hooks);
    const model = fakeModel().respond(ai('hi there', [], [1, 1]));
    const reply = await model.invoke('hi', { callbacks: [handler] });
    expect(reply.content).toBe('hi there');
  });

  it('records a model called on its own as a turn of its own', async () => {
    const recorded = recordedPlugin('langchain-model');
    const model = fakeModel().respond(ai('hi there', [], [2, 3]));
    const handler = new NemoRelayCallbackHandler(recorded.hooks, { sessionId: 'solo' });
    await model.invoke('hello', { callbacks: [handler] });
    // A named session stays open for its next run; close() ends it.
    expect(recorded.log.map((entry) => entry.hook)).toEqual(['on_session_start', 'pre_llm_call', 'pre_api_request', 'post_api_request', 'post_llm_call', 'on_session_end']);
    handler.close();
    expect(recorded.log.at(-1)!.hook).toBe('on_session_finalize');
    const { atif } = await recorded.finish();
    expect(atif[0]!.steps.at(-1).metrics).toMatchObject({ prompt_tokens: 2, completion_tokens: 3 });
  });

  it('records humanInTheLoopMiddleware interrupts as approval requests and the resume decisions as responses', async () => {
    const recorded = recordedPlugin('langchain-hitl');
    const handler = new NemoRelayCallbackHandler(recorded.hooks);
    const model = fakeModel()
      .respond(ai('', [{ id: 'call_rm_1', name: 'remove', args: { path: '/tmp/x' } }], [5, 1]))
      .respond(ai('Removed.', [], [6, 1]));
    const remove = tool(async () => 'ok', { name: 'remove', description: 'rm', schema: z.object({ path: z.string() }) });
    const agent = createAgent({ model, tools: [remove], checkpointer: new MemorySaver(), middleware: [humanInTheLoopMiddleware({ interruptOn: { remove: true } })] });
    const config = { callbacks: [handler], configurable: { thread_id: 'hitl-thread' } };
    const first = await agent.invoke({ messages: [{ role: 'user', content: 'Remove /tmp/x' }] }, config);
    expect(first.__interrupt__).toBeDefined();
    const second = await agent.invoke(new Command({ resume: { decisions: [{ type: 'approve' }] } }), config);
    expect(second.messages.at(-1)!.content).toBe('Removed.');
    const approvals = recorded.log.filter((entry) => entry.hook.includes('approval')).map((entry) => [entry.hook, entry.payload.tool_call_id, entry.payload.choice]);
    expect(approvals).toEqual([
      ['pre_approval_request', 'call_rm_1', undefined],
      ['post_approval_response', 'call_rm_1', 'once'],
    ]);
    // The interrupted run paused for the approval of the call asked about, as every adapter's pause ends.
    const ends = recorded.log.filter((entry) => entry.hook === 'on_session_end').map((entry) => [entry.payload.interrupted, entry.payload.completed, entry.payload.turn_exit_reason, entry.payload.pending_approvals]);
    expect(ends).toEqual([[true, false, 'approval_required', ['call_rm_1']], [false, true, 'final_response', undefined]]);
    await recorded.finish();
  }, 20_000);

  for (const backend of backends()) {
  it(`records an edited humanInTheLoopMiddleware decision: the model's arguments, the input the tool ran with on the approval, and view says so (${backend} backend)`, async () => {
    const recorded = recordedPlugin(`langchain-hitl-edit-${backend}`, backend);
    const handler = new NemoRelayCallbackHandler(recorded.hooks);
    const model = fakeModel()
      .respond(ai('', [{ id: 'call_rm_1', name: 'remove', args: { path: 'build' } }], [5, 1]))
      .respond(ai('Removed.', [], [6, 1]));
    const remove = tool(async ({ path }) => `removed ${path}`, { name: 'remove', description: 'rm', schema: z.object({ path: z.string() }) });
    const agent = createAgent({ model, tools: [remove], checkpointer: new MemorySaver(), middleware: [humanInTheLoopMiddleware({ interruptOn: { remove: true } })] });
    const config = { callbacks: [handler], configurable: { thread_id: `hitl-edit-${backend}` } };
    await agent.invoke({ messages: [{ role: 'user', content: 'Remove build' }] }, config);
    // As the middleware's docs write an edit: the action to run instead, its name and arguments.
    const out = await agent.invoke(new Command({ resume: { decisions: [{ type: 'edit', editedAction: { name: 'remove', args: { path: 'build/tmp' } } }] } }), config);
    expect(out.messages.at(-1)!.content).toBe('Removed.');
    handler.close();
    const { atif, atof, counters } = await recorded.finish();
    expectNothingLost(counters);
    const answer = recorded.log.find((entry) => entry.hook === 'post_approval_response')!.payload;
    expect(answer).toMatchObject({ tool_call_id: 'call_rm_1', choice: 'once', description: 'allowed with changed input', changed_args: { path: 'build/tmp' } });
    // The tool ran with the edited input and its span says so; the trajectory's call stays what the model asked.
    expect(recorded.log.find((entry) => entry.hook === 'pre_tool_call')!.payload.args).toEqual({ path: 'build/tmp' });
    const calls = (atif[0]!.steps as Array<Record<string, any>>).flatMap((step) => step.tool_calls ?? []);
    expect(calls.map((call) => [call.tool_call_id, call.arguments])).toEqual([['call_rm_1', { path: 'build' }]]);
    const observed = (atif[0]!.steps as Array<Record<string, any>>).flatMap((step) => step.observation?.results ?? []);
    expect(observed.map((result) => result.content)).toEqual(['removed build/tmp']);
    const mark = atof.find((event) => event.name === 'hermes.approval.response')!;
    expect(mark.data).toMatchObject({ choice: 'once', changed_args: { path: 'build/tmp' } });
    expect((await viewLines(recorded, 'atof')).join('\n')).toMatch(/approval: once {2}ran with changed input: \{"path":"build\/tmp"\}/);
  }, 20_000);
  }

  it('never breaks the run when the adapter itself fails', async () => {
    const recorded = recordedPlugin('langchain-broken');
    const handler = new NemoRelayCallbackHandler(recorded.hooks, {
      sessionId: () => {
        throw new Error('a broken session function');
      },
      logger: { debug() {}, info() {}, warn() {}, error() {} },
    });
    const out = await scenario().invoke({ messages: [{ role: 'user', content: 'Weather?' }] }, { callbacks: [handler] });
    expect(out.messages.at(-1)!.content).toBe('Paris is sunny; founded long ago.');
    await recorded.finish();
  }, 20_000);
});
