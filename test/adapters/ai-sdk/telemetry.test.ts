// The AI SDK adapter, driven by the SDK's own mock model (ai/test): a parent
// ToolLoopAgent with two tools (one throws), a retried 503 and a sub-agent
// run from a third tool, through the plugin on the memory backend.
import { afterEach, describe, expect, it } from 'vitest';
import { APICallError, ToolLoopAgent, generateText, stepCountIs, streamText, tool, wrapLanguageModel, type ModelMessage } from 'ai';
import { convertArrayToReadableStream } from 'ai/test';
import { MockLanguageModelV4 } from 'ai/test';
import * as z from 'zod';
import { aiSdkMiddleware, instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { HookRegistry } from '../../../src/hooks/registry.ts';
import { backends, checkRetry, checkTrajectory, expectNothingLost, recordedPlugin } from '../support.ts';

const usage = (input: number, output: number, cacheRead?: number) => ({
  inputTokens: { total: input, noCache: input - (cacheRead ?? 0), cacheRead, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});
const call = (id: string, name: string, input: unknown) => ({ type: 'tool-call' as const, toolCallId: id, toolName: name, input: JSON.stringify(input) });

function scripted(modelId: string, responses: Array<Error | Record<string, unknown>>) {
  let n = 0;
  return new MockLanguageModelV4({
    provider: 'mock-provider',
    modelId,
    doGenerate: async () => {
      const next = responses[n++]!;
      if (next instanceof Error) throw next;
      return { warnings: [], response: { id: `${modelId}-resp-${n}`, modelId, timestamp: new Date(0) }, ...next } as never;
    },
  });
}

function scenario() {
  const parentModel = scripted('parent-model', [
    new APICallError({ message: 'mock 503', url: 'http://mock/v1', requestBodyValues: {}, statusCode: 503, isRetryable: true }),
    { content: [{ type: 'text', text: 'Let me check.' }, call('call_weather_1', 'weather', { city: 'Paris' }), call('call_broken_1', 'broken', { x: 1 })], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: usage(10, 5, 4) },
    { content: [call('call_research_1', 'research', { task: 'history of Paris' })], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: usage(30, 6) },
    { content: [{ type: 'text', text: 'Paris is sunny; it was founded long ago.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(50, 12) },
  ]);
  const childModel = scripted('child-model', [
    { content: [call('call_search_1', 'search', { q: 'Paris founding' })], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: usage(7, 3) },
    { content: [{ type: 'text', text: 'Founded in the 3rd century BC.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(15, 8) },
  ]);
  const search = tool({ description: 'search', inputSchema: z.object({ q: z.string() }), execute: async ({ q }) => ({ hits: [`${q}: 3rd c. BC`] }) });
  const child = new ToolLoopAgent({ model: childModel, instructions: 'You research.', tools: { search }, telemetry: { functionId: 'researcher' } });
  const parent = new ToolLoopAgent({
    model: parentModel,
    instructions: 'You orchestrate.',
    stopWhen: stepCountIs(6),
    telemetry: { functionId: 'orchestrator' },
    tools: {
      weather: tool({ description: 'weather', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => ({ city, sky: 'sunny' }) }),
      broken: tool({ description: 'always fails', inputSchema: z.object({ x: z.number() }), execute: async (): Promise<string> => { throw new Error('tool exploded'); } }),
      research: tool({
        description: 'delegate to a sub-agent',
        inputSchema: z.object({ task: z.string() }),
        execute: async ({ task }, { abortSignal }) => (await child.generate({ prompt: task, abortSignal })).text,
      }),
    },
  });
  return { parent, parentModel };
}

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

describe('instrumentAiSdk', () => {
  for (const backend of backends()) {
  it(`records a ToolLoopAgent run with a failing tool, a retried call and a sub-agent as one valid trajectory (${backend} backend)`, async () => {
    const recorded = recordedPlugin('ai', backend);
    uninstall = instrumentAiSdk(recorded.hooks, { sessionId: 'ai-session' });
    const { parent } = scenario();
    const result = await parent.generate({ prompt: 'What is the weather in Paris, and its history?' });
    expect(result.text).toBe('Paris is sunny; it was founded long ago.');
    // A session the host named outlives its runs; uninstalling closes it.
    expect(recorded.log.at(-1)!.hook).toBe('on_session_end');
    uninstall();
    const { atif, atof, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    checkTrajectory(atif[0]!, {
      userPrompt: 'What is the weather in Paris, and its history?',
      model: 'parent-model',
      parentTools: [['call_weather_1', false], ['call_broken_1', true]],
      subagentCall: 'call_research_1',
      subagentTools: ['call_search_1'],
      parentUsage: [[10, 5], [30, 6], [50, 12]],
      childUsage: [[7, 3], [15, 8]],
    });
    const cached = (atif[0]!.steps as Array<Record<string, any>>).find((step) => step.metrics?.prompt_tokens === 10);
    expect(cached!.metrics.cached_tokens).toBe(4);
    checkRetry(atof);
    const attempts = recorded.log.filter((entry) => entry.hook === 'pre_api_request' && entry.payload.session_id === 'ai-session');
    expect(attempts.slice(0, 2).map((entry) => [entry.payload.api_request_id, entry.payload.retry_count])).toEqual([
      [attempts[0]!.payload.api_request_id, 0],
      [attempts[0]!.payload.api_request_id, 1],
    ]);
    const start = recorded.log.find((entry) => entry.hook === 'subagent_start')!;
    expect(start.payload).toMatchObject({ parent_session_id: 'ai-session', tool_call_id: 'call_research_1', child_role: 'researcher' });
    expect(recorded.log.at(-1)!.hook).toBe('on_session_finalize');
  }, 20_000);
  }

  it('keeps results and errors untouched and builds nothing when no plugin listens', async () => {
    const hooks = new HookRegistry();
    uninstall = instrumentAiSdk(hooks);
    const model = scripted('m', [new Error('boom')]);
    await expect(generateText({ model, prompt: 'hi', maxRetries: 0 })).rejects.toThrow('boom');
    const ok = scripted('m', [{ content: [{ type: 'text', text: 'fine' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(1, 1) }]);
    expect((await generateText({ model: ok, prompt: 'hi' })).text).toBe('fine');
  });

  it('links sub-agents that run in parallel each to its own tool call', async () => {
    const recorded = recordedPlugin('ai-parallel');
    uninstall = instrumentAiSdk(recorded.hooks, { sessionId: 'parallel' });
    const parentModel = scripted('p', [
      { content: [call('call_a', 'research', { task: 'a' }), call('call_b', 'research', { task: 'b' })], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: usage(1, 1) },
      { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(1, 1) },
    ]);
    // The first child finishes last, so start and end orders differ.
    const childModel = new MockLanguageModelV4({
      modelId: 'c',
      doGenerate: async ({ prompt }) => {
        const slow = JSON.stringify(prompt).includes('task a');
        await new Promise((resolve) => setTimeout(resolve, slow ? 30 : 1));
        return { content: [{ type: 'text', text: slow ? 'from a' : 'from b' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(1, 1), warnings: [] } as never;
      },
    });
    const parent = new ToolLoopAgent({
      model: parentModel,
      stopWhen: stepCountIs(3),
      tools: { research: tool({ inputSchema: z.object({ task: z.string() }), execute: async ({ task }) => (await new ToolLoopAgent({ model: childModel }).generate({ prompt: `task ${task}` })).text }) },
    });
    await parent.generate({ prompt: 'go' });
    const { atif } = await recorded.finish();
    const results = (atif[0]!.steps as Array<Record<string, any>>).flatMap((step) => step.observation?.results ?? []);
    const links = results.filter((result: any) => result.subagent_trajectory_ref !== undefined).map((result: any) => [result.source_call_id, result.subagent_trajectory_ref[0].session_id]);
    expect(links.sort()).toEqual([['call_a', 'parallel:sub:call_a'], ['call_b', 'parallel:sub:call_b']]);
  });

  it('records a streamText run with its tool call and the usage of each step', async () => {
    const recorded = recordedPlugin('ai-stream');
    uninstall = instrumentAiSdk(recorded.hooks, { sessionId: 'stream-session' });
    const finish = (reason: string, input: number, output: number) => ({ type: 'finish' as const, finishReason: { unified: reason, raw: reason }, usage: usage(input, output) });
    const streams = [
      [{ type: 'tool-call', toolCallId: 'call_clock_1', toolName: 'clock', input: '{"zone":"UTC"}' }, finish('tool-calls', 8, 2)],
      [{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'Noon.' }, { type: 'text-end', id: 't' }, finish('stop', 11, 3)],
    ];
    let n = 0;
    const model = new MockLanguageModelV4({ modelId: 'stream-model', doStream: async () => ({ stream: convertArrayToReadableStream(streams[n++] as never[]) }) as never });
    const result = streamText({
      model,
      prompt: 'Time?',
      stopWhen: stepCountIs(3),
      tools: { clock: tool({ inputSchema: z.object({ zone: z.string() }), execute: async () => '12:00' }) },
    });
    expect(await result.text).toBe('Noon.');
    const { atif } = await recorded.finish();
    const steps = atif[0]!.steps as Array<Record<string, any>>;
    expect(steps.filter((step) => step.metrics !== undefined).map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual([[8, 2], [11, 3]]);
    expect(steps.flatMap((step) => step.tool_calls ?? []).map((call: { tool_call_id: string }) => call.tool_call_id)).toEqual(['call_clock_1']);
    expect(steps.at(-1)!.message).toBe('Noon.');
  });

  it('records an approval request and, in the next run, the answer to it', async () => {
    const recorded = recordedPlugin('ai-approval');
    uninstall = instrumentAiSdk(recorded.hooks, { sessionId: 'approval-session' });
    const model = scripted('m', [
      { content: [call('call_rm_1', 'remove', { path: '/tmp/x' })], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: usage(5, 1) },
      { content: [{ type: 'text', text: 'Removed.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(6, 1) },
    ]);
    const tools = { remove: tool({ description: 'rm', inputSchema: z.object({ path: z.string() }), needsApproval: true, execute: async () => 'ok' }) };
    const first = await generateText({ model, prompt: 'Remove /tmp/x', tools });
    const request = first.content.find((part) => part.type === 'tool-approval-request')!;
    expect(request).toBeDefined();
    const messages: ModelMessage[] = [
      { role: 'user', content: 'Remove /tmp/x' },
      ...first.response.messages,
      { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: (request as { approvalId: string }).approvalId, approved: true }] },
    ];
    expect((await generateText({ model, messages, tools })).text).toBe('Removed.');
    const approvals = recorded.log.filter((entry) => entry.hook.includes('approval')).map((entry) => [entry.hook, entry.payload.tool_call_id, entry.payload.choice]);
    expect(approvals).toEqual([
      ['pre_approval_request', 'call_rm_1', undefined],
      ['post_approval_response', 'call_rm_1', 'once'],
    ]);
    await recorded.finish();
  });

  // The docs' manual approval flow inside a sub-agent's tool: the sub-agent's run stops with the request, the tool asks
  // a person and runs the sub-agent again with the answer. That second run used to open the same sub-agent session a
  // second time, drop the answer, and break the trajectory (no prompt, a stray system step).
  it('a sub-agent its tool runs again with the answer to its approval request is one sub-agent trajectory', async () => {
    const PERSON_MS = 150;
    const recorded = recordedPlugin('ai-sub-approval');
    uninstall = instrumentAiSdk(recorded.hooks, { sessionId: 'sub-approval' });
    const parentModel = scripted('p', [
      { content: [call('call_ops', 'operations', { task: 'cancel 7' })], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: usage(10, 2) },
      { content: [{ type: 'text', text: 'Done.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(20, 2) },
    ]);
    const childModel = scripted('c', [
      { content: [call('call_cancel', 'cancel', { order: 7 })], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: usage(3, 1) },
      { content: [{ type: 'text', text: 'Order 7 cancelled.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(5, 1) },
    ]);
    const operator = new ToolLoopAgent({
      id: 'operator',
      model: childModel,
      tools: { cancel: tool({ inputSchema: z.object({ order: z.number() }), needsApproval: true, execute: async ({ order }) => `cancelled ${order}` }) },
    });
    const parent = new ToolLoopAgent({
      model: parentModel,
      stopWhen: stepCountIs(3),
      tools: {
        operations: tool({
          inputSchema: z.object({ task: z.string() }),
          execute: async ({ task }, { abortSignal }) => {
            const messages: ModelMessage[] = [{ role: 'user', content: task }];
            const first = await operator.generate({ messages, abortSignal });
            messages.push(...first.responseMessages);
            const answers = first.content.flatMap((part) => (part.type === 'tool-approval-request' ? [{ type: 'tool-approval-response' as const, approvalId: part.approvalId, approved: true }] : []));
            messages.push({ role: 'tool', content: answers });
            await new Promise((resolve) => setTimeout(resolve, PERSON_MS)); // the person takes a moment to decide
            return (await operator.generate({ messages, abortSignal })).text;
          },
        }),
      },
    });
    expect((await parent.generate({ prompt: 'Cancel order 7' })).text).toBe('Done.');
    const child = 'sub-approval:sub:call_ops';
    const hooks = recorded.log.filter((entry) => entry.payload.session_id === child || entry.payload.child_session_id === child).map((entry) => entry.hook);
    expect(hooks.filter((hook) => hook === 'subagent_start' || hook === 'subagent_stop' || hook === 'on_session_finalize')).toEqual(['subagent_start', 'on_session_finalize', 'subagent_stop']);
    const approvals = recorded.log.filter((entry) => entry.hook.includes('approval')).map((entry) => [entry.hook, entry.payload.session_id, entry.payload.tool_call_id, entry.payload.choice]);
    expect(approvals).toEqual([
      ['pre_approval_request', child, 'call_cancel', undefined],
      ['post_approval_response', child, 'call_cancel', 'once'],
    ]);
    // The first run paused for the approval (its session and link kept for the run that carries the answer), the second answered.
    expect(recorded.log.filter((entry) => entry.hook === 'on_session_end' && entry.payload.session_id === child).map((entry) => [entry.payload.interrupted, entry.payload.turn_exit_reason, entry.payload.pending_approvals])).toEqual([
      [true, 'approval_required', ['call_cancel']],
      [false, 'final_response', undefined],
    ]);
    // The second run is the sub-agent's next turn, not its first.
    expect(recorded.log.filter((entry) => entry.hook === 'pre_llm_call' && entry.payload.session_id === child).map((entry) => entry.payload.is_first_turn)).toEqual([true, false]);
    // The sub-agent lasted from its start to its stop, the person's moment between its two runs included.
    const stop = recorded.log.find((entry) => entry.hook === 'subagent_stop' && entry.payload.child_session_id === child)!;
    expect(stop.payload.duration_ms).toBeGreaterThanOrEqual(PERSON_MS);
    const { atif } = await recorded.finish();
    const sub = atif[0]!.subagent_trajectories[0];
    expect(sub.session_id).toBe(child);
    const steps = sub.steps as Array<Record<string, any>>;
    expect(steps.map((step) => step.source)).toEqual(['user', 'agent', 'agent']);
    expect(steps[0]!.message).toBe('cancel 7');
    // The approved call ran in the second run: its result is the asking step's.
    expect(steps[1]!.observation.results.map((result: any) => [result.source_call_id, result.content])).toEqual([['call_cancel', 'cancelled 7']]);
    expect(steps[2]!.message).toBe('Order 7 cancelled.');
  });

  // The docs' plain sub-agent tool, on a sub-agent whose tool needs approval (the docs: sub-agent tools cannot use
  // approvals): the request is handed back in the sub-agent's result and nobody answers it.
  it('a sub-agent left waiting for an approval ends with the tool that ran it, its request unanswered', async () => {
    const recorded = recordedPlugin('ai-sub-pending');
    uninstall = instrumentAiSdk(recorded.hooks, { sessionId: 'sub-pending' });
    const parentModel = scripted('p', [
      { content: [call('call_ops', 'operations', { task: 'cancel 7' })], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: usage(10, 2) },
      { content: [{ type: 'text', text: 'It needs a person.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(20, 2) },
    ]);
    const childModel = scripted('c', [{ content: [{ type: 'text', text: 'Asking.' }, call('call_cancel', 'cancel', { order: 7 })], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: usage(3, 1) }]);
    const operator = new ToolLoopAgent({
      model: childModel,
      tools: { cancel: tool({ inputSchema: z.object({ order: z.number() }), needsApproval: true, execute: async ({ order }) => `cancelled ${order}` }) },
    });
    const parent = new ToolLoopAgent({
      model: parentModel,
      stopWhen: stepCountIs(3),
      tools: { operations: tool({ inputSchema: z.object({ task: z.string() }), execute: async ({ task }, { abortSignal }) => (await operator.generate({ prompt: task, abortSignal })).text }) },
    });
    await parent.generate({ prompt: 'Cancel order 7' });
    const child = 'sub-pending:sub:call_ops';
    const order = recorded.log
      .filter((entry) => entry.payload.tool_call_id === 'call_ops' || entry.payload.session_id === child || entry.payload.child_session_id === child)
      .map((entry) => entry.hook)
      .filter((hook) => ['pre_tool_call', 'subagent_start', 'pre_approval_request', 'post_approval_response', 'on_session_end', 'subagent_stop', 'post_tool_call'].includes(hook));
    expect(order).toEqual(['pre_tool_call', 'subagent_start', 'pre_approval_request', 'on_session_end', 'subagent_stop', 'post_tool_call']);
    // Its turn paused for the approval (the SDK's `stoppedBy` 'approval'): interrupted, naming the call waiting.
    const end = recorded.log.find((entry) => entry.hook === 'on_session_end' && entry.payload.session_id === child)!.payload;
    expect([end.completed, end.interrupted, end.turn_exit_reason, end.pending_approvals]).toEqual([false, true, 'approval_required', ['call_cancel']]);
    expect(recorded.log.find((entry) => entry.hook === 'subagent_stop')!.payload).toMatchObject({ child_status: 'interrupted', child_summary: 'Asking.' });
    await recorded.finish();
  });

  it('records a run whose inputs and outputs are kept from telemetry without its content', async () => {
    const recorded = recordedPlugin('ai-no-content');
    uninstall = instrumentAiSdk(recorded.hooks);
    const ok = scripted('m', [
      { content: [call('call_lookup_1', 'lookup', { key: 'secret key' })], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: usage(3, 2) },
      { content: [{ type: 'text', text: 'secret answer' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(7, 4) },
    ]);
    const lookup = tool({ inputSchema: z.object({ key: z.string() }), execute: async () => 'secret value' });
    const result = await generateText({ model: ok, prompt: 'secret question', tools: { lookup }, stopWhen: stepCountIs(3), telemetry: { recordInputs: false, recordOutputs: false } });
    expect(result.text).toBe('secret answer');
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(JSON.stringify(recorded.log)).not.toMatch(/secret/);
    expect(JSON.stringify(atif)).not.toMatch(/secret/);
    // The run's structure, as with its content recorded: one user step, the tool call's step, the answer's. Each
    // piece of content the SDK withheld says so, rather than an empty prompt, an invented `"null"` or an empty answer.
    const steps = atif[0]!.steps as Array<Record<string, any>>;
    expect(steps.map((step) => [step.source, step.message, (step.tool_calls ?? []).map((one: Record<string, any>) => one.function_name)])).toEqual([
      ['user', '[left out: recordInputs is false]', []],
      ['agent', '[left out: recordOutputs is false]', ['lookup']],
      ['agent', '[left out: recordOutputs is false]', []],
    ]);
    expect(steps[1]!.observation.results.map((one: Record<string, any>) => one.content)).toEqual(['[left out: recordOutputs is false]']);
    expect(steps.filter((step) => step.source === 'agent').map((step) => step.metrics)).toMatchObject([{ prompt_tokens: 3, completion_tokens: 2 }, { prompt_tokens: 7, completion_tokens: 4 }]);
  });

  it('never breaks the run when the adapter itself fails', async () => {
    const recorded = recordedPlugin('ai-broken');
    uninstall = instrumentAiSdk(recorded.hooks, {
      sessionId: () => {
        throw new Error('a broken session function');
      },
      logger: { debug() {}, info() {}, warn() {}, error() {} },
    });
    const ok = scripted('m', [{ content: [{ type: 'text', text: 'fine' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(1, 1) }]);
    expect((await generateText({ model: ok, prompt: 'hi' })).text).toBe('fine');
    // The run is recorded under the default session id (the call's), not lost with the function.
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    expect((atif[0]!.steps as Array<Record<string, any>>).map((step) => [step.source, step.message])).toEqual([['user', 'hi'], ['agent', 'fine']]);
  });

  it('stops recording new runs once uninstalled', async () => {
    const recorded = recordedPlugin('ai-off');
    instrumentAiSdk(recorded.hooks)();
    const ok = scripted('m', [{ content: [{ type: 'text', text: 'fine' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(1, 1) }]);
    await generateText({ model: ok, prompt: 'hi' });
    expect(recorded.log).toEqual([]);
    await recorded.finish();
  });
});
