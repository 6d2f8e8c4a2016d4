// Sessions and approvals across runs, as AI SDK programs write them: a
// conversation of several generate() calls under one session id, per-request
// session ids from the host's own async context, and the needsApproval flow
// of the SDK's docs (a run stops with approval requests, the next run carries
// the answers), granted and denied, through the real OpenAI provider (each
// major, test/support/ai-sdk-providers.ts).
import { AsyncLocalStorage } from 'node:async_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { ToolLoopAgent, generateText, stepCountIs, streamText, tool, type ModelMessage } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import * as z from 'zod';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { AI_SDK_PROVIDERS } from '../../support/ai-sdk-providers.ts';
import { expectNothingLost, recordedPlugin } from '../support.ts';
import { FakeProvider } from './wire.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

const usage = (input: number, output: number) => ({ inputTokens: { total: input, noCache: input }, outputTokens: { total: output, text: output } });

/** A mock model that answers each call with the text the function picks from the prompt. */
function echoModel(answer: (lastUser: string) => string) {
  return new MockLanguageModelV4({
    modelId: 'chat-model',
    doGenerate: async ({ prompt }) => {
      const last = [...prompt].reverse().find((message) => message.role === 'user');
      const text = last === undefined ? '' : (last.content as Array<{ text?: string }>).map((part) => part.text ?? '').join('');
      return { content: [{ type: 'text', text: answer(text) }], finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(5, 2), warnings: [] } as never;
    },
  });
}

type Steps = Array<Record<string, any>>;

describe('sessions', () => {
  it('two streamText runs a program starts one after the other, the first not read yet: two sessions, neither under the other', async () => {
    const recorded = recordedPlugin('ai-two-streams');
    uninstall = instrumentAiSdk(recorded.hooks);
    const streaming = new MockLanguageModelV4({
      modelId: 'chat-model',
      doStream: async () =>
        ({
          stream: new ReadableStream({
            start(controller) {
              controller.enqueue({ type: 'text-start', id: 't' });
              controller.enqueue({ type: 'text-delta', id: 't', delta: 'hi' });
              controller.enqueue({ type: 'text-end', id: 't' });
              controller.enqueue({ type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(4, 1) });
              controller.close();
            },
          }),
        }) as never,
    });
    const first = streamText({ model: streaming, prompt: 'first' });
    // The first run's model call starts before the program goes on (the SDK reports it in the caller's own frame).
    await new Promise((resolve) => setTimeout(resolve, 10));
    const second = streamText({ model: streaming, prompt: 'second' });
    expect([await first.text, await second.text]).toEqual(['hi', 'hi']);
    const starts = recorded.log.filter((entry) => entry.hook === 'on_session_start').map((entry) => entry.payload.session_id as string);
    expect(starts).toHaveLength(2);
    expect(starts.some((id) => id.includes(':sub:'))).toBe(false);
    expect(recorded.log.filter((entry) => entry.hook === 'subagent_start')).toEqual([]);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(2);
  });

  it('sessionId names one conversation: its turns are one trajectory, closed when the adapter is uninstalled', async () => {
    const recorded = recordedPlugin('ai-conversation');
    uninstall = instrumentAiSdk(recorded.hooks, { sessionId: 'user-42' });
    const agent = new ToolLoopAgent({ model: echoModel((text) => `You said: ${text}`), telemetry: { functionId: 'chat' } });
    const messages: ModelMessage[] = [{ role: 'user', content: 'Hello' }];
    const first = await agent.generate({ messages });
    messages.push(...first.response.messages, { role: 'user', content: 'How are you?' });
    const second = await agent.generate({ messages });
    expect(second.text).toBe('You said: How are you?');

    const sessionHooks = recorded.log.filter((entry) => entry.hook.startsWith('on_session')).map((entry) => entry.hook);
    expect(sessionHooks).toEqual(['on_session_start', 'on_session_end', 'on_session_end']);
    const secondTurn = recorded.log.filter((entry) => entry.hook === 'pre_llm_call')[1]!.payload;
    expect(secondTurn.user_message).toBe('How are you?');
    expect(secondTurn.conversation_history).toEqual([
      { role: 'user', content: 'Hello' },
      { role: 'assistant', content: 'You said: Hello' },
    ]);
    uninstall();
    expect(recorded.log.at(-1)).toMatchObject({ hook: 'on_session_finalize', payload: { session_id: 'user-42' } });

    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    expect(atif[0]!.session_id).toBe('user-42');
    expect(validateAtif(atif[0]!)).toEqual([]);
    const steps = atif[0]!.steps as Steps;
    expect(steps.map((step) => [step.source, step.message])).toEqual([
      ['user', 'Hello'],
      ['agent', 'You said: Hello'],
      ['user', 'How are you?'],
      ['agent', 'You said: How are you?'],
    ]);
  });

  it('a sessionId function is asked in the caller\'s async context, so each request of a server gets its user\'s session', async () => {
    const request = new AsyncLocalStorage<{ user: string }>();
    const recorded = recordedPlugin('ai-per-request');
    uninstall = instrumentAiSdk(recorded.hooks, { sessionId: () => request.getStore()?.user });
    const model = echoModel((text) => text.toUpperCase());
    // Two users' requests interleave.
    await Promise.all([
      request.run({ user: 'alice' }, () => generateText({ model, prompt: 'hi from alice' })),
      request.run({ user: 'bob' }, () => streamText({ model: new MockLanguageModelV4({ doStream: async () => ({ stream: new ReadableStream({ start(c) { c.enqueue({ type: 'text-start', id: 't' }); c.enqueue({ type: 'text-delta', id: 't', delta: 'HI BOB' }); c.enqueue({ type: 'text-end', id: 't' }); c.enqueue({ type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(3, 2) }); c.close(); } }) }) as never }), prompt: 'hi from bob' }).text),
      request.run({ user: 'alice' }, () => generateText({ model, prompt: 'again from alice' })),
    ]);
    uninstall();
    const { atif } = await recorded.finish();
    const bySession = Object.fromEntries(atif.map((doc) => [doc.session_id, (doc.steps as Steps).filter((step) => step.source === 'user').map((step) => step.message).sort()]));
    expect(bySession).toEqual({ alice: ['again from alice', 'hi from alice'], bob: ['hi from bob'] });
  });

  it('without a sessionId each call is its own session, closed when the call ends (runtimeContext is private to the call in ai 7)', async () => {
    const recorded = recordedPlugin('ai-default-sessions');
    uninstall = instrumentAiSdk(recorded.hooks);
    const model = echoModel(() => 'ok');
    await generateText({ model, prompt: 'one', runtimeContext: { sessionId: 'not-seen' } });
    await generateText({ model, prompt: 'two', runtimeContext: { sessionId: 'not-seen' } });
    const finalized = recorded.log.filter((entry) => entry.hook === 'on_session_finalize').map((entry) => entry.payload.session_id as string);
    expect(finalized).toHaveLength(2);
    expect(finalized.every((id) => id.startsWith('call-'))).toBe(true);
    expect(new Set(finalized).size).toBe(2);
    const { atif } = await recorded.finish();
    expect(atif).toHaveLength(2);
  });

  // A tool without execute (a chat's client-side tool): the run ends with the call, the program answers it and
  // runs again with the conversation (test/adapters/ai-sdk/chat-route.test.ts drives the chat client itself).
  describe('a tool the program answers (no execute)', () => {
    const locate = { getLocation: tool({ description: 'the user location', inputSchema: z.object({}) }) };
    function locatingModel() {
      let n = 0;
      return new MockLanguageModelV4({
        doGenerate: async () =>
          (n++ % 2 === 0
            ? { content: [{ type: 'tool-call', toolCallId: `call_loc_${n}`, toolName: 'getLocation', input: '{}' }], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: usage(5, 2), warnings: [] }
            : { content: [{ type: 'text', text: 'noted' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(9, 1), warnings: [] }) as never,
      });
    }
    /** Asks, answers with `output`, runs again; then a new question with the same history (the answer resent). */
    async function conversation(output: { type: 'text'; value: string } | { type: 'error-text'; value: string }) {
      const model = locatingModel();
      const messages: ModelMessage[] = [{ role: 'user', content: 'Where am I?' }];
      const first = await generateText({ model, tools: locate, messages });
      expect(first.finishReason).toBe('tool-calls');
      messages.push(...first.response.messages, { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_loc_1', toolName: 'getLocation', output }] });
      const second = await generateText({ model, tools: locate, messages });
      messages.push(...second.response.messages, { role: 'user', content: 'And now?' });
      await generateText({ model, tools: locate, messages });
    }

    for (const [label, output, status] of [['its output', { type: 'text', value: 'Berlin' }, 'ok'], ['the error it reports', { type: 'error-text', value: 'no GPS fix' }, 'error']] as const) {
      it(`in a named session, ${label} is the call's outcome, recorded once`, async () => {
        const recorded = recordedPlugin('ai-program-tool');
        uninstall = instrumentAiSdk(recorded.hooks, { sessionId: 'chat-1' });
        await conversation(output);
        const calls = recorded.log.filter((entry) => entry.hook.endsWith('_tool_call')).map((entry) => [entry.hook, entry.payload.tool_call_id, entry.payload.status ?? null]);
        expect(calls).toEqual([['pre_tool_call', 'call_loc_1', null], ['post_tool_call', 'call_loc_1', status]]);
        // Under the model call that asked for it.
        const asked = recorded.log.find((entry) => entry.hook === 'pre_api_request')!.payload.api_request_id;
        expect(recorded.log.find((entry) => entry.hook === 'pre_tool_call')!.payload.api_request_id).toBe(asked);
        uninstall();
        const { atif, counters } = await recorded.finish();
        expectNothingLost(counters);
        const steps = atif[0]!.steps as Steps;
        const asking = steps.find((step) => (step.tool_calls ?? []).length > 0)!;
        expect(asking.observation.results.map((result: any) => [result.source_call_id, result.content, result.extra.metadata.status])).toEqual([['call_loc_1', output.value, status]]);
        expect(steps.filter((step) => step.source !== 'agent').map((step) => [step.source, step.message])).toEqual([['user', 'Where am I?'], ['user', 'And now?']]);
      });
    }

    it('without a sessionId the answer comes in a session of its own, where the call was never asked: not recorded there', async () => {
      const recorded = recordedPlugin('ai-program-tool-unnamed');
      uninstall = instrumentAiSdk(recorded.hooks);
      await conversation({ type: 'text', value: 'Berlin' });
      expect(recorded.log.filter((entry) => entry.hook.endsWith('_tool_call'))).toEqual([]);
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expect(atif.flatMap((doc) => (doc.steps as Steps).filter((step) => step.source === 'system'))).toEqual([]);
    });
  });
});

describe.each(AI_SDK_PROVIDERS.map((packages) => [packages.major, packages] as const))('tool approvals (needsApproval, %s)', (_major, packages) => {
  const prompt = 'Delete /tmp/cache.db and /etc/passwd';

  /** The SDK docs' approval flow: run, collect the approval requests, answer them in a tool message, run again. */
  async function approvalFlow(run: (messages: ModelMessage[]) => Promise<{ content: Array<{ type: string }>; response: { messages: ModelMessage[] }; text: string }>) {
    const messages: ModelMessage[] = [{ role: 'user', content: prompt }];
    const first = await run(messages);
    const requests = first.content.filter((part) => part.type === 'tool-approval-request') as unknown as Array<{ approvalId: string; toolCall: { input: { path: string } } }>;
    expect(requests).toHaveLength(2);
    messages.push(...first.response.messages, {
      role: 'tool',
      content: requests.map((request) =>
        request.toolCall.input.path === '/tmp/cache.db'
          ? { type: 'tool-approval-response' as const, approvalId: request.approvalId, approved: true }
          : { type: 'tool-approval-response' as const, approvalId: request.approvalId, approved: false, reason: 'system files stay' },
      ),
    });
    return await run(messages);
  }

  function scriptedOpenAI(stream: boolean): FakeProvider {
    const fake = new FakeProvider();
    fake.reply('responses', {
      id: 'resp_1',
      model: 'gpt-4o-2024-08-06',
      toolCalls: [
        { id: 'call_tmp', name: 'deleteFile', args: { path: '/tmp/cache.db' } },
        { id: 'call_etc', name: 'deleteFile', args: { path: '/etc/passwd' } },
      ],
      usage: { input: 60, output: 30 },
    }, { stream });
    fake.reply('responses', { id: 'resp_2', model: 'gpt-4o-2024-08-06', text: 'Deleted /tmp/cache.db; /etc/passwd was left alone.', usage: { input: 120, output: 14 } }, { stream });
    return fake;
  }

  const deleted: string[] = [];
  const tools = {
    deleteFile: tool({
      description: 'Delete a file',
      inputSchema: z.object({ path: z.string() }),
      needsApproval: true,
      execute: async ({ path }) => {
        deleted.push(path);
        return `deleted ${path}`;
      },
    }),
  };

  for (const mode of ['generateText', 'streamText'] as const) {
    it(`${mode}: the request, the answers and each call's outcome are one trajectory in time order`, async () => {
      deleted.length = 0;
      const fake = scriptedOpenAI(mode === 'streamText');
      const model = packages.openai({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch })('gpt-4o');
      const recorded = recordedPlugin(`ai-approval-${mode}`);
      uninstall = instrumentAiSdk(recorded.hooks);
      const final = await approvalFlow(async (messages) => {
        if (mode === 'generateText') return await generateText({ model, tools, messages });
        const result = streamText({ model, tools, messages });
        await result.consumeStream();
        return { content: await result.content, response: await result.response, text: await result.text };
      });
      expect(final.text).toBe('Deleted /tmp/cache.db; /etc/passwd was left alone.');
      expect(deleted).toEqual(['/tmp/cache.db']);
      // What the provider was told about the denied call.
      expect(fake.requests[1]!.body.input.filter((item: any) => item.type === 'function_call_output')).toEqual([
        { type: 'function_call_output', call_id: 'call_tmp', output: 'deleted /tmp/cache.db' },
        { type: 'function_call_output', call_id: 'call_etc', output: 'system files stay' },
      ]);

      const approvalHooks = recorded.log
        .filter((entry) => /approval|tool_call|session_(start|finalize)/.test(entry.hook))
        .map((entry) => [entry.hook, entry.payload.tool_call_id ?? null, entry.payload.choice ?? entry.payload.status ?? null]);
      expect(approvalHooks).toEqual([
        ['on_session_start', null, null],
        ['pre_approval_request', 'call_tmp', null],
        ['pre_approval_request', 'call_etc', null],
        ['post_approval_response', 'call_tmp', 'once'],
        ['post_approval_response', 'call_etc', 'deny'],
        ['pre_tool_call', 'call_etc', null],
        ['post_tool_call', 'call_etc', 'denied'],
        ['pre_tool_call', 'call_tmp', null],
        ['post_tool_call', 'call_tmp', 'ok'],
        ['on_session_finalize', null, null],
      ]);
      const sessions = new Set(recorded.log.map((entry) => entry.payload.session_id).filter((id) => id !== undefined));
      expect(sessions.size).toBe(1);
      expect(recorded.log.filter((entry) => entry.hook === 'pre_llm_call').map((entry) => entry.payload.is_first_turn)).toEqual([true, false]);

      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expect(atif).toHaveLength(1);
      const doc = atif[0]!;
      expect(validateAtif(doc)).toEqual([]);
      const steps = doc.steps as Steps;
      const times = steps.map((step) => Date.parse(step.timestamp));
      expect([...times].sort((a, b) => a - b)).toEqual(times);
      expect(steps.map((step) => step.source)).toEqual(['user', 'agent', 'agent']);
      expect(steps[1]!.tool_calls.map((call: any) => call.tool_call_id)).toEqual(['call_tmp', 'call_etc']);
      const outcomes = Object.fromEntries((steps[1]!.observation.results as Array<Record<string, any>>).map((result) => [result.source_call_id, [result.content, result.extra.metadata.status]]));
      expect(outcomes).toEqual({ call_tmp: ['deleted /tmp/cache.db', 'ok'], call_etc: ['system files stay', 'denied'] });
      expect(steps[2]!.message).toBe('Deleted /tmp/cache.db; /etc/passwd was left alone.');
    });
  }

  it('a run left waiting for an answer keeps its session open until the adapter is uninstalled', async () => {
    const fake = scriptedOpenAI(false);
    const model = packages.openai({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch })('gpt-4o');
    const recorded = recordedPlugin('ai-approval-unanswered');
    uninstall = instrumentAiSdk(recorded.hooks);
    await generateText({ model, tools, prompt });
    expect(recorded.log.at(-1)!.hook).toBe('on_session_end');
    uninstall();
    expect(recorded.log.at(-1)).toMatchObject({ hook: 'on_session_finalize', payload: { reason: 'uninstalled' } });
    const { atif } = await recorded.finish();
    expect(atif).toHaveLength(1);
  });
});

// A mock model: no provider package, so once.
describe('tool approvals by a toolApproval policy', () => {
  it('its decisions are recorded in the step, a denied call with its outcome', async () => {
    const calls = [
      { type: 'tool-call', toolCallId: 'call_ok', toolName: 'deleteFile', input: '{"path":"/tmp/x"}' },
      { type: 'tool-call', toolCallId: 'call_no', toolName: 'deleteFile', input: '{"path":"/etc/hosts"}' },
    ];
    let n = 0;
    const model = new MockLanguageModelV4({
      doGenerate: async () =>
        (n++ === 0
          ? { content: calls, finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: usage(5, 2), warnings: [] }
          : { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(9, 1), warnings: [] }) as never,
    });
    const recorded = recordedPlugin('ai-approval-policy');
    uninstall = instrumentAiSdk(recorded.hooks);
    const plainTools = { deleteFile: tool({ inputSchema: z.object({ path: z.string() }), execute: async ({ path }) => `deleted ${path}` }) };
    await generateText({
      model,
      prompt: 'clean up',
      tools: plainTools,
      stopWhen: stepCountIs(3),
      toolApproval: { deleteFile: ({ path }: { path: string }) => (path.startsWith('/etc') ? { type: 'denied', reason: 'protected' } : 'approved') },
    } as never);
    const responses = recorded.log.filter((entry) => entry.hook === 'post_approval_response').map((entry) => [entry.payload.tool_call_id, entry.payload.choice, entry.payload.decided_by]);
    expect(responses).toEqual([['call_ok', 'once', 'toolApproval'], ['call_no', 'deny', 'toolApproval']]);
    const { atif } = await recorded.finish();
    const results = (atif[0]!.steps as Steps).flatMap((step) => step.observation?.results ?? []);
    expect(results.map((result: any) => [result.source_call_id, result.content, result.extra.metadata.status])).toEqual([
      ['call_ok', 'deleted /tmp/x', 'ok'],
      ['call_no', 'protected', 'denied'],
    ]);
  });

  it('a policy decision carried again by the next run (the person\'s answers added to the same tool message) is recorded once', async () => {
    const calls = [
      { type: 'tool-call', toolCallId: 'call_no', toolName: 'deleteFile', input: '{"path":"/etc/hosts"}' },
      { type: 'tool-call', toolCallId: 'call_ask', toolName: 'deleteFile', input: '{"path":"/home/me/notes"}' },
    ];
    let n = 0;
    const model = new MockLanguageModelV4({
      doGenerate: async () =>
        (n++ === 0
          ? { content: calls, finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: usage(5, 2), warnings: [] }
          : { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(9, 1), warnings: [] }) as never,
    });
    const recorded = recordedPlugin('ai-approval-policy-carried');
    uninstall = instrumentAiSdk(recorded.hooks);
    const deleted: string[] = [];
    const settings = {
      model,
      tools: { deleteFile: tool({ inputSchema: z.object({ path: z.string() }), execute: async ({ path }) => (deleted.push(path), `deleted ${path}`) }) },
      stopWhen: stepCountIs(3),
      toolApproval: { deleteFile: ({ path }: { path: string }) => (path.startsWith('/etc') ? { type: 'denied', reason: 'protected' } : 'user-approval') },
    };
    const messages: ModelMessage[] = [{ role: 'user', content: 'clean up' }];
    const first = await generateText({ ...settings, messages } as never);
    const request = (first.content as Array<{ type: string; approvalId?: string; isAutomatic?: boolean }>).find((part) => part.type === 'tool-approval-request' && part.isAutomatic !== true)!;
    messages.push(...(first.responseMessages as ModelMessage[]));
    // The SDK's last message is the tool message holding the policy's denial; the person's answer goes into it.
    const last = messages.at(-1)!;
    expect(last.role).toBe('tool');
    (last.content as unknown[]).push({ type: 'tool-approval-response', approvalId: request.approvalId!, approved: true });
    const second = await generateText({ ...settings, messages } as never);
    expect(second.text).toBe('done');
    expect(deleted).toEqual(['/home/me/notes']);
    const approvals = recorded.log.filter((entry) => /approval|tool_call/.test(entry.hook)).map((entry) => [entry.hook, entry.payload.tool_call_id, entry.payload.choice ?? entry.payload.status ?? null]);
    expect(approvals).toEqual([
      ['pre_approval_request', 'call_no', null],
      ['post_approval_response', 'call_no', 'deny'],
      ['pre_tool_call', 'call_no', null],
      ['post_tool_call', 'call_no', 'denied'],
      ['pre_approval_request', 'call_ask', null],
      ['post_approval_response', 'call_ask', 'once'],
      ['pre_tool_call', 'call_ask', null],
      ['post_tool_call', 'call_ask', 'ok'],
    ]);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
  });
});
