// A ToolLoopAgent run stopped by its abortSignal while the model is still
// answering (a stop button), through the real OpenAI provider on a fetch that
// answers the first request and holds the second until the signal fires, as
// a real fetch does. streamText reports the abort as `onAbort`, generateText
// as `onError` with the abort: both must end the turn `interrupted`, the
// request cut short a failed call, the tool that ran before kept.
import { afterEach, describe, expect, it } from 'vitest';
import { ToolLoopAgent, stepCountIs, streamText, tool, wrapLanguageModel } from 'ai';
import * as z from 'zod';
import { aiSdkMiddleware, instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { AI_SDK_PROVIDERS } from '../../support/ai-sdk-providers.ts';
import { expectNothingLost, onlyTrajectory, recordedPlugin, type AtifDoc, type AtofEvent } from '../support.ts';
import { FakeProvider } from './wire.ts';
import { sameOnNative } from '../same-on-native.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

describe.each(AI_SDK_PROVIDERS.map((packages) => [packages.major, packages] as const))('a run stopped by its abortSignal (%s)', (_major, packages) => {
  for (const mode of ['generate', 'stream'] as const) {
    it(`${mode}: the turn ends interrupted, the model call it cut short failed with the abort`, async () => {
      const fake = new FakeProvider();
      fake.reply('chat', { id: 'chatcmpl_1', model: 'gpt-4o-mini-2024-07-18', toolCalls: [{ id: 'call_w', name: 'weather', args: { city: 'Paris' } }], usage: { input: 40, output: 9 } }, { stream: mode === 'stream' });
      const controller = new AbortController();
      let held = 0;
      const fetch = async (input: unknown, init?: { body?: unknown; signal?: AbortSignal | null }): Promise<Response> => {
        if (fake.requests.length === 0) return await fake.fetch(input, init);
        held += 1;
        // The second request: the user presses stop while the model thinks; fetch rejects with the signal's reason.
        return await new Promise<Response>((_, reject) => {
          init?.signal?.addEventListener('abort', () => reject(init.signal!.reason), { once: true });
          controller.abort();
        });
      };
      const recorded = recordedPlugin(`ai-abort-${mode}`);
      uninstall = instrumentAiSdk(recorded.hooks);
      const agent = new ToolLoopAgent({
        id: 'weather-agent',
        model: packages.openai({ apiKey: 'test-key', fetch: fetch as typeof globalThis.fetch }).chat('gpt-4o-mini'),
        tools: { weather: tool({ description: 'weather', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => `${city}: sunny` }) },
        stopWhen: stepCountIs(4),
      });
      if (mode === 'generate') {
        await expect(agent.generate({ prompt: 'Weather in Paris?', abortSignal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
      } else {
        const result = await agent.stream({ prompt: 'Weather in Paris?', abortSignal: controller.signal });
        for await (const _part of result.fullStream) {
          // drained until the abort ends it
        }
      }
      expect(held).toBe(1);
      const turnEnd = recorded.log.filter((entry) => entry.hook === 'on_session_end').map((entry) => [entry.payload.interrupted, entry.payload.failed, entry.payload.turn_exit_reason]);
      expect(turnEnd).toEqual([[true, false, 'interrupted']]);
      const llmEnds = recorded.log.filter((entry) => entry.hook === 'post_api_request' || entry.hook === 'api_request_error').map((entry) => entry.hook);
      expect(llmEnds).toEqual(['post_api_request', 'api_request_error']);
      expect(recorded.log.filter((entry) => entry.hook === 'post_tool_call').map((entry) => [entry.payload.tool_call_id, entry.payload.status])).toEqual([['call_w', 'ok']]);
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expect(atif).toHaveLength(1);
    });
  }
});

/** What this runtime's `AbortController.abort()` says ('This operation was aborted' on Node, 'The operation was aborted.' on Bun). */
function defaultAbortMessage(): string {
  const controller = new AbortController();
  controller.abort();
  return (controller.signal.reason as Error).message;
}

// The stop pressed while the answer streams in (the reader has had some of the text): streamText reports it as
// `onAbort` with the signal's reason, the request cut short fails with that reason as generateText's does: the
// AbortError by default (with the runtime's own message), or the reason the program gave its controller. The text
// the program had streamed to its user is the failed call's answer (a user trial found it lost: the SDK's abort
// event carries the finished steps only): the trajectory's agent step shows it, with the abort as the error.
describe.each(AI_SDK_PROVIDERS.map((packages) => [packages.major, packages] as const))('a stop while the answer streams in (%s)', (_major, packages) => {
  for (const [label, reason, expected] of [
    ['abort()', undefined, { type: 'AbortError', message: defaultAbortMessage() }],
    ["abort('the user pressed stop')", 'the user pressed stop', { type: 'AbortError', message: 'the user pressed stop' }],
  ] as const) {
    it(`${label}: the cut call failed with the signal's reason, the turn interrupted`, async () => {
      const fake = new FakeProvider();
      fake.reply('responses', { id: 'resp_1', model: 'gpt-4o-2024-08-06', text: 'Once upon a time there was a very long story.', usage: { input: 40, output: 9 } }, { stream: true, hang: true });
      const recorded = recordedPlugin(`ai-abort-midstream-${reason === undefined ? 'default' : 'reason'}`);
      uninstall = instrumentAiSdk(recorded.hooks);
      const controller = new AbortController();
      const result = streamText({ model: packages.openai({ apiKey: 'test-key', fetch: fake.fetch as typeof globalThis.fetch })('gpt-4o'), prompt: 'Tell me a story', abortSignal: controller.signal });
      let seen = '';
      for await (const delta of result.textStream) {
        seen += delta;
        controller.abort(reason);
      }
      expect(seen).not.toBe('');
      const errors = recorded.log.filter((entry) => entry.hook === 'api_request_error').map((entry) => entry.payload.error);
      expect(errors).toEqual([expected]);
      expect(recorded.log.filter((entry) => entry.hook === 'on_session_end').map((entry) => [entry.payload.interrupted, entry.payload.turn_exit_reason])).toEqual([[true, 'interrupted']]);
      const { atif, atof, counters } = await recorded.finish();
      expectNothingLost(counters);
      expectStoppedAnswer(atif, atof, { seen, expected, model: 'gpt-4o-2024-08-06' });
    });
  }

  it('the program stops reading, then aborts: the call keeps the text its stream had delivered', async () => {
    const text = 'Once upon a time there was a very long story.';
    const fake = new FakeProvider();
    fake.reply('anthropic', { id: 'msg_1', model: 'claude-sonnet-4-5-20250929', text, usage: { input: 40, output: 9 } }, { stream: true, hang: true });
    const recorded = recordedPlugin('ai-abort-stop-reading');
    uninstall = instrumentAiSdk(recorded.hooks);
    const controller = new AbortController();
    let aborted!: () => void;
    const stopped = new Promise<void>((resolve) => (aborted = resolve));
    const result = streamText({
      model: packages.anthropic({ apiKey: 'test-key', fetch: fake.fetch as typeof globalThis.fetch })('claude-sonnet-4-5'),
      prompt: 'Tell me a story',
      abortSignal: controller.signal,
      onAbort: () => aborted(),
    });
    let seen = '';
    for await (const delta of result.textStream) {
      seen += delta;
      break; // the user navigated away
    }
    controller.abort();
    await stopped;
    const { atif, atof, counters } = await recorded.finish();
    expectNothingLost(counters);
    // The SDK had taken more of the stream than the loop read (the half the server sent before it waited): the call
    // keeps what the stream delivered, which begins with what the program read.
    const [message] = expectStoppedAnswer(atif, atof, { expected: { type: 'AbortError', message: defaultAbortMessage() }, model: 'claude-sonnet-4-5-20250929' });
    expect(message.startsWith(seen) && text.startsWith(message) && message.length >= seen.length).toBe(true);
    await sameOnNative(recorded);
  });
});

// The same stops, the model wrapped with aiSdkMiddleware alone (no integration): the middleware sees the provider's
// stream only, and records the call cut short by the same rule, the text the stream had delivered and the abort.
describe.each(AI_SDK_PROVIDERS.map((packages) => [packages.major, packages] as const))('aiSdkMiddleware alone: a stop while the answer streams in (%s)', (_major, packages) => {
  it('abort(): the cut call failed with the abort, its answer the text the program had read', async () => {
    const fake = new FakeProvider();
    fake.reply('responses', { id: 'resp_1', model: 'gpt-4o-2024-08-06', text: 'Once upon a time there was a very long story.', usage: { input: 40, output: 9 } }, { stream: true, hang: true });
    const recorded = recordedPlugin('ai-mw-abort-midstream');
    const model = wrapLanguageModel({ model: packages.openai({ apiKey: 'test-key', fetch: fake.fetch as typeof globalThis.fetch })('gpt-4o'), middleware: aiSdkMiddleware(recorded.hooks, { sessionId: 'mw-abort' }) });
    const controller = new AbortController();
    const result = streamText({ model, prompt: 'Tell me a story', abortSignal: controller.signal, onError: () => {} });
    let seen = '';
    for await (const delta of result.textStream) {
      seen += delta;
      controller.abort();
    }
    expect(seen).not.toBe('');
    const { atif, atof, counters } = await recorded.finish();
    expectNothingLost(counters);
    expectStoppedAnswer(atif, atof, { seen, expected: { type: 'AbortError', message: defaultAbortMessage() }, model: 'gpt-4o-2024-08-06' });
    await sameOnNative(recorded);
  });

  it('the program stops reading, then aborts: the call keeps the text its stream had delivered', async () => {
    const text = 'Once upon a time there was a very long story.';
    const fake = new FakeProvider();
    fake.reply('anthropic', { id: 'msg_1', model: 'claude-sonnet-4-5-20250929', text, usage: { input: 40, output: 9 } }, { stream: true, hang: true });
    const recorded = recordedPlugin('ai-mw-abort-stop-reading');
    const model = wrapLanguageModel({ model: packages.anthropic({ apiKey: 'test-key', fetch: fake.fetch as typeof globalThis.fetch })('claude-sonnet-4-5'), middleware: aiSdkMiddleware(recorded.hooks, { sessionId: 'mw-stop-reading' }) });
    const controller = new AbortController();
    let aborted!: () => void;
    const stopped = new Promise<void>((resolve) => (aborted = resolve));
    const result = streamText({ model, prompt: 'Tell me a story', abortSignal: controller.signal, onAbort: () => aborted() });
    let seen = '';
    for await (const delta of result.textStream) {
      seen += delta;
      break; // the user navigated away
    }
    controller.abort();
    await stopped;
    const { atif, atof, counters } = await recorded.finish();
    expectNothingLost(counters);
    const [message] = expectStoppedAnswer(atif, atof, { expected: { type: 'AbortError', message: defaultAbortMessage() }, model: 'claude-sonnet-4-5-20250929' });
    expect(message.startsWith(seen) && text.startsWith(message) && message.length >= seen.length).toBe(true);
    await sameOnNative(recorded);
  });
});

// The stop pressed while the model still thinks (the program shows the reasoning as it streams): the call cut short
// keeps the reasoning its stream had delivered, by either path.
describe.each(AI_SDK_PROVIDERS.map((packages) => [packages.major, packages] as const))('a stop while the model reasons (%s)', (_major, packages) => {
  for (const path of ['instrumentAiSdk', 'aiSdkMiddleware'] as const) {
    it(`${path}: the cut call failed with the abort, its reasoning what the stream had delivered`, async () => {
      const fake = new FakeProvider();
      // The stream's first half is the whole thinking block (in two deltas), then it waits.
      fake.reply('anthropic', { id: 'msg_1', model: 'claude-sonnet-4-5-20250929', reasoning: 'The user wants a story.', text: 'Once upon a time.', usage: { input: 40, output: 9 } }, { stream: true, hang: true });
      const recorded = recordedPlugin(`ai-abort-reasoning-${path}`);
      const base = packages.anthropic({ apiKey: 'test-key', fetch: fake.fetch as typeof globalThis.fetch })('claude-sonnet-4-5');
      const model = path === 'aiSdkMiddleware' ? wrapLanguageModel({ model: base, middleware: aiSdkMiddleware(recorded.hooks, { sessionId: 'mw-reasoning' }) }) : base;
      if (path === 'instrumentAiSdk') uninstall = instrumentAiSdk(recorded.hooks);
      const controller = new AbortController();
      const result = streamText({ model, prompt: 'Tell me a story', abortSignal: controller.signal, onError: () => {} });
      let thought = '';
      for await (const part of result.fullStream) {
        if (part.type !== 'reasoning-delta') continue;
        thought += part.text;
        if (thought === 'The user wants a story.') controller.abort();
      }
      expect(thought).toBe('The user wants a story.');
      const { atif, atof, counters } = await recorded.finish();
      expectNothingLost(counters);
      const agent = (onlyTrajectory(atif).steps as AtifDoc[]).filter((step) => step.source === 'agent');
      const expected = { type: 'AbortError', message: defaultAbortMessage() };
      expect(agent.map((step) => [step.message, step.reasoning_content, step.extra.invocation.status, step.extra.llm_response.error])).toEqual([['', thought, 'failed', expected]]);
      const llmEnd = atof.find((event) => event.category === 'llm' && event.scope_category === 'end')!;
      expect(llmEnd.data).toMatchObject({ reasoning: thought, error: expected });
      await sameOnNative(recorded);
    });
  }
});

/**
 * The trajectory of a streamText run stopped mid-answer: one agent step, its message the text the stream had delivered
 * (`seen`, when the program read all of it), the call failed with the abort; the ATOF LLM span ends with the same
 * text and error. Returns the step's message.
 */
function expectStoppedAnswer(atif: AtifDoc[], atof: AtofEvent[], options: { seen?: string; expected: { type: string; message: string }; model: string }): [string] {
  const doc = onlyTrajectory(atif);
  const agent = (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
  expect(agent).toHaveLength(1);
  const [step] = agent;
  if (options.seen !== undefined) expect(step!.message).toBe(options.seen);
  expect(step!.message).not.toBe('');
  expect([step!.model_name, step!.extra.invocation.status, step!.extra.llm_response.error]).toEqual([options.model, 'failed', options.expected]);
  const llmEnd = atof.find((event) => event.category === 'llm' && event.scope_category === 'end')!;
  expect(llmEnd.metadata['error.type']).toBe(options.expected.type);
  expect(llmEnd.data).toMatchObject({ assistant_message: { role: 'assistant', content: step!.message }, error: options.expected });
  return [step!.message as string];
}

// The stop pressed while sub-agents (agents a tool runs with the tool's abortSignal, as the SDK docs pass it on) wait
// for their model: one, or two the model called in one step. Under streamText the SDK ends the parent's turn at once
// and the sub-agents' hooks arrive after the parent's session closed: each must still be in the parent's trajectory,
// whole, under the call that ran it.
describe.each(AI_SDK_PROVIDERS.map((packages) => [packages.major, packages] as const))('a stop while sub-agents wait for their model (%s)', (_major, packages) => {
  for (const mode of ['generate', 'stream'] as const) {
    for (const topics of [['Paris'], ['Paris', 'Rome']]) {
      it(`${mode}, ${topics.length} sub-agent(s): every turn ends interrupted, each sub-agent whole under the call that ran it`, async () => {
        const fake = new FakeProvider();
        const calls = topics.map((topic, i) => ({ id: `call_r${i}`, name: 'research', args: { topic } }));
        fake.reply('chat', { id: 'chatcmpl_lead', model: 'gpt-4o-mini-2024-07-18', toolCalls: calls, usage: { input: 40, output: 9 } }, { stream: mode === 'stream' });
        topics.forEach((city, i) => fake.reply('chat', { id: `chatcmpl_${i}`, model: 'gpt-4o-mini-2024-07-18', toolCalls: [{ id: `call_w${i}`, name: 'weather', args: { city } }], usage: { input: 30 + i, output: 7 + i } }));
        const controller = new AbortController();
        let waiting = 0;
        const fetch = async (input: unknown, init?: { body?: unknown; signal?: AbortSignal | null }): Promise<Response> => {
          if (fake.requests.length < 1 + topics.length) return await fake.fetch(input, init);
          // Each sub-agent's second request waits; the user presses stop once all of them do.
          return await new Promise<Response>((_, reject) => {
            init?.signal?.addEventListener('abort', () => reject(init.signal!.reason), { once: true });
            if (++waiting === topics.length) controller.abort();
          });
        };
        const recorded = recordedPlugin(`ai-sub-abort-${mode}-${topics.length}`);
        uninstall = instrumentAiSdk(recorded.hooks);
        const model = packages.openai({ apiKey: 'test-key', fetch: fetch as typeof globalThis.fetch }).chat('gpt-4o-mini');
        const researcher = new ToolLoopAgent({
          id: 'researcher',
          model,
          tools: { weather: tool({ description: 'weather', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => `${city}: sunny` }) },
          stopWhen: stepCountIs(4),
        });
        const agent = new ToolLoopAgent({
          id: 'lead',
          model,
          tools: {
            research: tool({
              description: 'research a topic',
              inputSchema: z.object({ topic: z.string() }),
              execute: async ({ topic }, { abortSignal }) => (await researcher.generate({ prompt: topic, abortSignal })).text,
            }),
          },
          stopWhen: stepCountIs(4),
        });
        if (mode === 'generate') {
          await expect(agent.generate({ prompt: 'Research these', abortSignal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
        } else {
          const result = await agent.stream({ prompt: 'Research these', abortSignal: controller.signal });
          for await (const _part of result.fullStream) {
            // drained until the abort ends it
          }
        }
        // The sub-agents' own ends come when their generate() settles, after the stream has ended.
        await new Promise((resolve) => setTimeout(resolve, 50));
        expect(waiting).toBe(topics.length);
        const ends = recorded.log.filter((entry) => entry.hook === 'on_session_end').map((entry) => entry.payload.interrupted);
        expect(ends).toEqual(Array(1 + topics.length).fill(true));
        const stops = recorded.log.filter((entry) => entry.hook === 'subagent_stop').map((entry) => entry.payload);
        expect(stops.map((stop) => [stop.tool_call_id, stop.child_status]).sort()).toEqual(calls.map((call) => [call.id, 'interrupted']));
        // The lead's session closes after its sub-agents' links, not before (a stop after it opened a second, empty
        // session): finish() checks no hook came after a session's close.
        const { atif, atof, counters } = await recorded.finish();
        expectNothingLost(counters);
        expect(atif).toHaveLength(1);
        const [lead] = atif as Array<{ steps: Array<Record<string, any>>; subagent_trajectories?: Array<{ session_id: string; steps: Array<Record<string, any>> }> }>;
        // One session scope, the lead's (its sub-agents' scopes are under their calls).
        const sessions = atof.filter((event) => event.kind === 'scope' && event.scope_category === 'start' && event.metadata?.nemo_relay_scope_role === 'session');
        expect(sessions.map((event) => event.metadata?.session_id)).toEqual([(lead as unknown as { session_id: string }).session_id]);
        const step = lead!.steps.find((one) => one.tool_calls?.length === topics.length)!;
        expect(step.tool_calls.map((call: { tool_call_id: string }) => call.tool_call_id)).toEqual(calls.map((call) => call.id));
        topics.forEach((topic, i) => {
          const result = step.observation.results.find((one: { source_call_id: string }) => one.source_call_id === `call_r${i}`);
          // generate() hears the tool's own rejection; streamText ended the turn while the tool still ran.
          expect(result.content).toMatch(mode === 'generate' ? /^AbortError/ : /^RunEnded: the run ended \(interrupted\) before this finished$/);
          const stop = stops.find((one) => one.tool_call_id === `call_r${i}`)!;
          expect(result.subagent_trajectory_ref.map((ref: { session_id: string }) => ref.session_id)).toEqual([stop.child_session_id]);
          const sub = lead!.subagent_trajectories!.find((trajectory) => trajectory.session_id === stop.child_session_id)!;
          expect(sub.steps.map((one) => one.source)).toEqual(['user', 'agent', 'agent']);
          expect(sub.steps[0]!.message).toBe(topic);
          // The fake answers in the order asked: which sub-agent got which answer, its tool's result says.
          const [[callId, content]] = sub.steps[1]!.observation.results.map((r: { source_call_id: string; content: string }) => [r.source_call_id, r.content]);
          const answered = Number(String(callId).slice('call_w'.length));
          expect(content).toBe(`${topics[answered]}: sunny`);
          expect(sub.steps[1]!.metrics).toMatchObject({ prompt_tokens: 30 + answered, completion_tokens: 7 + answered });
          expect(sub.steps[2]!.message).toMatch(/aborted/);
        });
      });
    }
  }
});
