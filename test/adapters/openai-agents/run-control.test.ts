// Agents SDK programs that use the run controls its docs describe: tool
// timeouts (`timeoutMs`, as a result or as an exception), a caller's
// AbortSignal (mid-stream, mid-request, mid-tool), a stream read to its end,
// stopped by a guardrail or broken out of with nothing awaited after it,
// `toolUseBehavior`,
// conversation memory (`session: new MemorySession()`), and a paused run
// resumed elsewhere from `state.toString()` (a new Runner, adapter and
// plugin writing the same folder, as a second process would). Each
// trajectory is checked against what the program did and what the SDK
// counted, on the memory relay and on native.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { Agent, InputGuardrailTripwireTriggered, MemorySession, OpenAIChatCompletionsModel, OpenAIResponsesModel, RunState, Runner, ToolTimeoutError, run, tool, type InputGuardrail, type Model, type RunStreamEvent } from '@openai/agents';
import { aisdk } from '@openai/agents-extensions/ai-sdk';
import { createOpenAI } from '@ai-sdk/openai';
import * as z from 'zod';
import { instrumentOpenAIAgents } from '../../../src/adapters/openai-agents/index.ts';
import { backends, expectNothingLost, expectTurnEndInAtif, recordedPlugin, type AtifDoc } from '../support.ts';
import { agentSteps, expectRunsClosed, hooks, observation, onlyTrajectory, sdkTotals, stepsOf, toolCallIds, tokenTotals, TRACING, useTracing, weatherTool } from './support.ts';
import { FakeOpenAI, type Reply, useAsDefaultClient } from './wire.ts';
import { FakeProvider, type Turn, type Wire } from '../ai-sdk/wire.ts';

const api = new FakeOpenAI();
useAsDefaultClient(api);

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

/** A tool that answers only when its call is cancelled, as a tool honouring its signal does: it always outlives a timeout. */
const stuck = (extra: Record<string, unknown>) =>
  tool({
    name: 'slow_lookup',
    description: 'A lookup that hangs',
    parameters: z.object({}),
    timeoutMs: 20,
    execute: (_args, _context, details) => new Promise<string>((resolve) => details?.signal?.addEventListener('abort', () => resolve('too late'), { once: true })),
    ...extra,
  });
const quick = tool({ name: 'quick_lookup', description: 'A lookup that answers', parameters: z.object({}), execute: async () => 'found it' });
const TIMEOUT_MESSAGE = "Tool 'slow_lookup' timed out after 20ms.";

/** Where a program's loop over a streamed run breaks out, and what the model was answering then. */
const BREAK_POINTS: ReadonlyArray<{ where: string; reply: Reply; stops: (event: RunStreamEvent) => boolean }> = [
  {
    where: 'at the tool call',
    reply: { calls: [{ id: 'call_lima', name: 'get_weather', args: { city: 'Lima' } }], usage: { input: 30, output: 8 } },
    stops: (event) => event.type === 'run_item_stream_event' && event.name === 'tool_called',
  },
  {
    where: 'mid-answer',
    reply: { text: 'Sunny in Lima, with a light breeze from the sea all afternoon.', usage: { input: 30, output: 14 } },
    stops: (event) => event.type === 'raw_model_stream_event' && event.data.type === 'output_text_delta',
  },
];

/** An `openai` client on a fake Chat Completions server (another provider's, as `FakeProvider` speaks it). */
function chatClient(provider: FakeProvider): OpenAI {
  return new OpenAI({ apiKey: 'sk-test-not-a-key', baseURL: 'https://fake-chat.test/v1', fetch: provider.fetch as typeof fetch, maxRetries: 0 });
}

/** A Chat Completions chunk's first choice's delta. */
function chatDelta(event: unknown): { reasoning?: string; reasoning_content?: string } | undefined {
  return (event as { choices?: Array<{ delta?: { reasoning?: string; reasoning_content?: string } }> }).choices?.[0]?.delta;
}

/** What the model was told of a call: the function_call_output the next request carried. */
function toldTheModel(callId: string): unknown {
  for (const request of api.requests) {
    const item = (request.body.input ?? []).find((entry: Record<string, any>) => entry.type === 'function_call_output' && entry.call_id === callId);
    if (item !== undefined) return item.output;
  }
  return undefined;
}

describe('Agents SDK run controls', () => {
  for (const tracing of TRACING) {
    for (const [label, extra, told] of [
      ['the SDK\'s timeout text', {}, TIMEOUT_MESSAGE],
      ['a timeoutErrorFunction\'s text', { timeoutErrorFunction: () => 'The lookup is slow today; answer without it.' }, 'The lookup is slow today; answer without it.'],
    ] as const) {
      it(`a tool that times out (timeoutMs, as a result: ${label}) is a failed call, beside one that answered (${tracing})`, async () => {
        useTracing(tracing);
        api.load({
          'gpt-4.1': [
            {
              calls: [
                { id: 'call_slow', name: 'slow_lookup', args: {} },
                { id: 'call_quick', name: 'quick_lookup', args: {} },
              ],
              usage: { input: 30, output: 8 },
            },
            { text: 'Found it; the slow lookup did not answer.', usage: { input: 60, output: 9 } },
          ],
        });
        const recorded = recordedPlugin('agents-tool-timeout');
        uninstall = instrumentOpenAIAgents(recorded.hooks);
        const agent = new Agent({ name: 'Researcher', instructions: 'Look things up.', model: 'gpt-4.1', tools: [stuck(extra), quick] });
        const result = await run(agent, 'Look it up.');
        expect(result.finalOutput).toBe('Found it; the slow lookup did not answer.');
        expect(toldTheModel('call_slow')).toBe(told);

        const ended = Object.fromEntries(hooks(recorded, 'post_tool_call').map((payload) => [payload.tool_call_id, payload]));
        expect(ended.call_slow).toMatchObject({ status: 'error', result: told, error_message: TIMEOUT_MESSAGE });
        expect(ended.call_quick).toMatchObject({ status: 'ok', result: 'found it' });
        const { atif, counters } = await recorded.finish();
        expectNothingLost(counters);
        expectRunsClosed(recorded);
        const doc = onlyTrajectory(atif);
        expect(observation(doc, 'call_slow')).toMatchObject({ content: told, extra: { metadata: { status: 'error' } } });
        expect(observation(doc, 'call_quick')).toMatchObject({ content: 'found it', extra: { metadata: { status: 'ok' } } });
        expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage));
      }, 30_000);
    }

    it(`a tool that times out with timeoutBehavior 'raise_exception' fails the call and the run with ToolTimeoutError (${tracing})`, async () => {
      useTracing(tracing);
      api.load({ 'gpt-4.1': [{ calls: [{ id: 'call_slow', name: 'slow_lookup', args: {} }], usage: { input: 30, output: 8 } }] });
      const recorded = recordedPlugin('agents-tool-timeout-raise');
      uninstall = instrumentOpenAIAgents(recorded.hooks);
      const agent = new Agent({ name: 'Researcher', instructions: 'Look things up.', model: 'gpt-4.1', tools: [stuck({ timeoutBehavior: 'raise_exception' })] });
      const error = await run(agent, 'Look it up.').catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ToolTimeoutError);
      expect(hooks(recorded, 'post_tool_call')).toMatchObject([{ tool_call_id: 'call_slow', status: 'error', error_message: TIMEOUT_MESSAGE }]);
      expect(hooks(recorded, 'on_session_end')).toMatchObject([{ failed: true, error_type: 'ToolTimeoutError' }]);
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expect(observation(onlyTrajectory(atif), 'call_slow')?.extra?.metadata?.status).toBe('error');
    }, 30_000);

    for (const behavior of ['stop_on_first_tool' as const, { stopAtToolNames: ['quick_lookup'] }]) {
      it(`toolUseBehavior ${JSON.stringify(behavior)}: one model call, the tool's result is the final output (${tracing})`, async () => {
        useTracing(tracing);
        api.load({ 'gpt-4.1': [{ calls: [{ id: 'call_quick', name: 'quick_lookup', args: {} }], usage: { input: 25, output: 6 } }] });
        const recorded = recordedPlugin('agents-tool-use-behavior');
        uninstall = instrumentOpenAIAgents(recorded.hooks);
        const agent = new Agent({ name: 'Fetcher', instructions: 'Fetch.', model: 'gpt-4.1', tools: [quick], toolUseBehavior: behavior });
        const result = await run(agent, 'Fetch it.');
        expect(result.finalOutput).toBe('found it');
        expect(api.requests).toHaveLength(1);
        expect(hooks(recorded, 'on_session_end')).toMatchObject([{ completed: true }]);
        expect(hooks(recorded, 'post_llm_call')).toMatchObject([{ assistant_response: 'found it' }]);
        const { atif, counters } = await recorded.finish();
        expectNothingLost(counters);
        const doc = onlyTrajectory(atif);
        expect(agentSteps(doc)).toHaveLength(1);
        expect(observation(doc, 'call_quick')).toMatchObject({ content: 'found it', extra: { metadata: { status: 'ok' } } });
        expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage));
      }, 30_000);
    }

    for (const stream of [false, true]) it(`conversation memory (session: new MemorySession()): every run of the session is recorded under its id, with the history it sent (${stream ? 'streamed, ' : ''}${tracing})`, async () => {
      useTracing(tracing);
      api.load({
        'gpt-4.1': [
          { text: 'San Francisco', usage: { input: 20, output: 3 } },
          { text: 'California', usage: { input: 35, output: 2, cached: 16 } },
        ],
      });
      const recorded = recordedPlugin('agents-memory-session');
      uninstall = instrumentOpenAIAgents(recorded.hooks);
      const agent = new Agent({ name: 'Assistant', instructions: 'Reply very concisely.', model: 'gpt-4.1' });
      const session = new MemorySession();
      const ask = async (question: string) => {
        if (!stream) return run(agent, question, { session });
        const result = await run(agent, question, { session, stream: true });
        for await (const _event of result) void _event;
        await result.completed;
        return result;
      };
      const first = await ask('What city is the Golden Gate Bridge in?');
      const second = await ask('What state is it in?');
      expect(second.finalOutput).toBe('California');
      const sessionId = await session.getSessionId();

      expect(hooks(recorded, 'on_session_start').map((payload) => payload.session_id)).toEqual([sessionId, sessionId]);
      // The second request carried the session's history: the request as recorded is what was sent.
      expect(hooks(recorded, 'pre_api_request')[1]!.request.body.messages).toEqual([
        { role: 'system', content: 'Reply very concisely.' },
        { role: 'user', content: 'What city is the Golden Gate Bridge in?' },
        { role: 'assistant', content: 'San Francisco' },
        { role: 'user', content: 'What state is it in?' },
      ]);
      // The turn says so too: the second one's conversation before its question is the session's, as sent.
      expect(hooks(recorded, 'pre_llm_call').map((payload) => [payload.user_message, payload.conversation_history])).toEqual([
        ['What city is the Golden Gate Bridge in?', []],
        [
          'What state is it in?',
          [
            { role: 'user', content: 'What city is the Golden Gate Bridge in?' },
            { role: 'assistant', content: 'San Francisco' },
          ],
        ],
      ]);
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expectRunsClosed(recorded);
      expect(atif.map((doc) => doc.session_id)).toEqual([sessionId, sessionId]);
      const byQuestion = new Map(atif.map((doc) => [stepsOf(doc)[0]!.message, doc]));
      expect(agentSteps(byQuestion.get('What city is the Golden Gate Bridge in?')!).map((step) => step.message)).toEqual(['San Francisco']);
      expect(agentSteps(byQuestion.get('What state is it in?')!).map((step) => step.message)).toEqual(['California']);
      expect(tokenTotals(byQuestion.get('What city is the Golden Gate Bridge in?')!)).toEqual(sdkTotals(first.state.usage));
      expect(tokenTotals(byQuestion.get('What state is it in?')!)).toEqual(sdkTotals(second.state.usage));
    }, 30_000);

    for (const where of ['agent', 'runner'] as const) {
      it(`conversation memory with an input guardrail (on the ${where}) that runs an agent of its own: the turn's history is the session's, though the guardrail's run opens the turn (${tracing})`, async () => {
        useTracing(tracing);
        api.load({
          'gpt-4.1-nano': [
            { text: 'on topic', usage: { input: 10, output: 2 } },
            { text: 'on topic', usage: { input: 12, output: 2 } },
          ],
          'gpt-4.1': [
            { text: 'San Francisco', usage: { input: 20, output: 3 } },
            { text: 'California', usage: { input: 35, output: 2 } },
          ],
        });
        const recorded = recordedPlugin('agents-memory-guardrail');
        uninstall = instrumentOpenAIAgents(recorded.hooks);
        const checker = new Agent({ name: 'Topic check', instructions: 'Say whether the question is on topic.', model: 'gpt-4.1-nano' });
        // As the SDK's docs write one: the guardrail runs its own agent on the input it is given.
        const onTopic: InputGuardrail = {
          name: 'On topic',
          execute: async ({ input, context }) => {
            const verdict = await run(checker, input, { context });
            return { outputInfo: verdict.finalOutput, tripwireTriggered: false };
          },
        };
        const agent = new Agent({ name: 'Assistant', instructions: 'Reply very concisely.', model: 'gpt-4.1', ...(where === 'agent' ? { inputGuardrails: [onTopic] } : {}) });
        const runner = new Runner(where === 'runner' ? { inputGuardrails: [onTopic] } : {});
        const session = new MemorySession();
        await runner.run(agent, 'What city is the Golden Gate Bridge in?', { session });
        const second = await runner.run(agent, 'What state is it in?', { session });
        expect(second.finalOutput).toBe('California');

        const turns = hooks(recorded, 'pre_llm_call').filter((payload) => payload.parent_session_id === undefined);
        expect(turns.map((payload) => [payload.user_message, payload.conversation_history])).toEqual([
          ['What city is the Golden Gate Bridge in?', []],
          [
            'What state is it in?',
            [
              { role: 'user', content: 'What city is the Golden Gate Bridge in?' },
              { role: 'assistant', content: 'San Francisco' },
            ],
          ],
        ]);
        // The guardrail's agent ran inside the turn: its sub-agent.
        expect(hooks(recorded, 'subagent_start').map((payload) => payload.child_role)).toEqual(['Topic check', 'Topic check']);
        const { counters } = await recorded.finish();
        expectNothingLost(counters);
        expectRunsClosed(recorded);
      }, 30_000);
    }

    it(`the host's own session (sessionScope: 'host'): each run is a turn of it, and only the first is its first turn (${tracing})`, async () => {
      useTracing(tracing);
      api.load({
        'gpt-4.1': [
          { text: 'San Francisco', usage: { input: 20, output: 3 } },
          { text: 'California', usage: { input: 35, output: 2 } },
        ],
      });
      const recorded = recordedPlugin('agents-host-session');
      uninstall = instrumentOpenAIAgents(recorded.hooks, { sessionScope: 'host', sessionId: 'host-chat-7' });
      const agent = new Agent({ name: 'Assistant', instructions: 'Reply very concisely.', model: 'gpt-4.1' });
      const session = new MemorySession();
      recorded.hooks.emit('on_session_start', { session_id: 'host-chat-7', platform: 'my-host' });
      await run(agent, 'What city is the Golden Gate Bridge in?', { session });
      await run(agent, 'What state is it in?', { session });
      recorded.hooks.emit('on_session_finalize', { session_id: 'host-chat-7', reason: 'user_left' });

      expect(hooks(recorded, 'pre_llm_call').map((payload) => [payload.session_id, payload.user_message, payload.is_first_turn])).toEqual([
        ['host-chat-7', 'What city is the Golden Gate Bridge in?', true],
        ['host-chat-7', 'What state is it in?', false],
      ]);
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      // One session, the host's: one trajectory holding both turns.
      const doc = onlyTrajectory(atif);
      expect(stepsOf(doc).filter((step) => step.source === 'user').map((step) => step.message)).toEqual(['What city is the Golden Gate Bridge in?', 'What state is it in?']);
      expect(agentSteps(doc).map((step) => step.message)).toEqual(['San Francisco', 'California']);
    }, 30_000);

    it(`a streamed run read to its end, the plugin shut down right after the loop (completed not awaited): nothing is dropped (${tracing})`, async () => {
      useTracing(tracing);
      api.load({ 'gpt-4.1': [{ text: 'Streamed to the end.', usage: { input: 12, output: 5 } }] });
      const recorded = recordedPlugin('agents-stream-then-shutdown');
      uninstall = instrumentOpenAIAgents(recorded.hooks);
      const agent = new Agent({ name: 'Talker', instructions: 'Talk.', model: 'gpt-4.1' });
      const result = await run(agent, 'Say something.', { stream: true });
      let events = 0;
      for await (const _event of result) events += 1;
      const { atif, counters } = await recorded.finish();
      expect(events).toBeGreaterThan(0);
      expect(counters.dropped).toBe(0);
      expectNothingLost(counters);
      expectRunsClosed(recorded);
      expect(hooks(recorded, 'post_llm_call')).toMatchObject([{ assistant_response: 'Streamed to the end.' }]);
      expect(tokenTotals(onlyTrajectory(atif))).toEqual(sdkTotals(result.state.usage));
    }, 30_000);

    it(`a streamed run an input guardrail stops (runInParallel): the failure and the verdict are recorded before the caller's loop throws (${tracing})`, async () => {
      useTracing(tracing);
      api.load({ 'gpt-4.1': [{ text: 'An answer nobody should see.', usage: { input: 12, output: 6 } }] });
      const recorded = recordedPlugin('agents-stream-guardrail');
      uninstall = instrumentOpenAIAgents(recorded.hooks);
      // A guardrail running beside the model that decides after the model answered (as one that asks a model does).
      const answered = new Promise<void>((resolve) => recorded.hooks.on('post_api_request', () => resolve()));
      const noSecrets: InputGuardrail = {
        name: 'No secrets',
        runInParallel: true,
        execute: async ({ input }) => {
          await answered;
          return { outputInfo: { matched: 'password' }, tripwireTriggered: JSON.stringify(input).includes('password') };
        },
      };
      const agent = new Agent({ name: 'Guarded', instructions: 'x', model: 'gpt-4.1', inputGuardrails: [noSecrets] });
      const result = await run(agent, 'my password is hunter2', { stream: true });
      let error: unknown;
      try {
        for await (const _event of result) {
          // rendered as it arrives
        }
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(InputGuardrailTripwireTriggered);
      // When the caller's loop throws, the turn has already ended.
      expect(hooks(recorded, 'on_session_end')).toMatchObject([{ failed: true, error_type: 'InputGuardrailTripwireTriggered', guardrails: [{ name: 'No secrets', tripwire_triggered: true }] }]);
      const { counters } = await recorded.finish();
      expect(counters.dropped).toBe(0);
      expectNothingLost(counters);
      expectRunsClosed(recorded);
    }, 30_000);

    it(`a streamed run the caller aborts mid-stream (signal): the attempt ends aborted, the run interrupted (${tracing})`, async () => {
      useTracing(tracing);
      api.load({ 'gpt-4.1': [{ text: 'A long answer that arrives in many small pieces over the stream.', usage: { input: 15, output: 14 } }] });
      const recorded = recordedPlugin('agents-stream-abort');
      uninstall = instrumentOpenAIAgents(recorded.hooks);
      const agent = new Agent({ name: 'Talker', instructions: 'Talk.', model: 'gpt-4.1' });
      const controller = new AbortController();
      const result = await run(agent, 'Tell me a story.', { stream: true, signal: controller.signal });
      let seen = '';
      for await (const event of result) {
        if (event.type === 'raw_model_stream_event' && event.data.type === 'output_text_delta') {
          seen += event.data.delta;
          // The user presses stop once part of the answer is shown.
          if (!controller.signal.aborted) controller.abort();
        }
      }
      // The abort closed the stream: when the loop has ended, the turn has too.
      expect(hooks(recorded, 'on_session_end')).toMatchObject([{ interrupted: true, failed: false }]);
      await result.completed;
      expect(result.cancelled).toBe(true);
      expect(hooks(recorded, 'api_request_error')).toMatchObject([{ error: { type: 'AbortError' } }]);
      expect(hooks(recorded, 'on_session_end')).toMatchObject([{ interrupted: true, failed: false }]);
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expectRunsClosed(recorded);
      // The text the stream had handed on is the cut call's answer, with the abort (as the AI SDK adapter records it).
      expect(seen).not.toBe('');
      const answered = (onlyTrajectory(atif).steps as Array<Record<string, any>>).filter((step) => step.source === 'agent');
      expect(answered.map((step) => [step.message, step.extra.invocation.status, step.extra.llm_response.error.type])).toEqual([[seen, 'failed', 'AbortError']]);
    }, 30_000);

    it(`a streamed reasoning model the caller aborts mid-answer: the cut call keeps the reasoning summary and the text it had streamed (${tracing})`, async () => {
      useTracing(tracing);
      const plan = ['**Picking a story**\n\nA short fable will do.', '**Setting**\n\nA forest at dawn.'];
      api.load({ 'gpt-4.1': [{ reasoning: plan, text: 'A long answer that arrives in many small pieces over the stream.', usage: { input: 15, output: 14, reasoning: 8 } }] });
      const recorded = recordedPlugin('agents-stream-abort-reasoning');
      uninstall = instrumentOpenAIAgents(recorded.hooks);
      const agent = new Agent({ name: 'Talker', instructions: 'Talk.', model: 'gpt-4.1', modelSettings: { reasoning: { effort: 'low', summary: 'auto' } } });
      const controller = new AbortController();
      const result = await run(agent, 'Tell me a story.', { stream: true, signal: controller.signal });
      let seen = '';
      const thought: string[] = [];
      for await (const event of result) {
        if (event.type !== 'raw_model_stream_event') continue;
        // The program shows the reasoning summary as it streams, then the answer; the user presses stop mid-answer.
        if (event.data.type === 'model' && (event.data.event as { type?: string }).type === 'response.reasoning_summary_text.delta') thought.push((event.data.event as { delta: string }).delta);
        if (event.data.type === 'output_text_delta') {
          seen += event.data.delta;
          if (!controller.signal.aborted) controller.abort();
        }
      }
      await result.completed;
      expect(thought).toEqual(plan);
      expect(seen).not.toBe('');
      expect(hooks(recorded, 'api_request_error')).toMatchObject([{ error: { type: 'AbortError' } }]);
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expectRunsClosed(recorded);
      // The reasoning is the summary's parts, a paragraph each, as a finished response's is.
      const answered = (onlyTrajectory(atif).steps as Array<Record<string, any>>).filter((step) => step.source === 'agent');
      expect(answered.map((step) => [step.message, step.reasoning_content, step.extra.invocation.status, step.extra.llm_response.error.type])).toEqual([[seen, plan.join('\n\n'), 'failed', 'AbortError']]);
    }, 30_000);

    it(`a run the caller aborts while a tool runs: the call fails with the abort, the run is interrupted (${tracing})`, async () => {
      useTracing(tracing);
      api.load({ 'gpt-4.1': [{ calls: [{ id: 'call_wait', name: 'wait_for_it', args: {} }], usage: { input: 12, output: 4 } }] });
      const recorded = recordedPlugin('agents-tool-abort');
      uninstall = instrumentOpenAIAgents(recorded.hooks);
      const controller = new AbortController();
      const waitForIt = tool({
        name: 'wait_for_it',
        description: 'Waits',
        parameters: z.object({}),
        execute: (_args, _context, details) =>
          new Promise<string>((resolve) => {
            details?.signal?.addEventListener('abort', () => resolve('stopped'), { once: true });
            controller.abort();
          }),
      });
      const agent = new Agent({ name: 'Waiter', instructions: 'Wait.', model: 'gpt-4.1', tools: [waitForIt] });
      const error = await run(agent, 'Wait for it.', { signal: controller.signal }).catch((caught: unknown) => caught);
      expect((error as Error).name).toBe('AbortError');
      // The runtime's own words for an abort (Node, Bun and Deno differ): the signal's reason.
      expect(hooks(recorded, 'post_tool_call')).toMatchObject([{ tool_call_id: 'call_wait', status: 'error', error_message: (controller.signal.reason as Error).message }]);
      expect(hooks(recorded, 'on_session_end')).toMatchObject([{ interrupted: true, failed: false }]);
      const { counters } = await recorded.finish();
      expectNothingLost(counters);
      expectRunsClosed(recorded);
    }, 30_000);
  }

  // The same rule on the Agents SDK's other models: a Chat Completions model's stream says its reasoning in each chunk's
  // `delta.reasoning` (Groq, OpenRouter) or `delta.reasoning_content` (DeepSeek, vLLM), an aisdk() model's in its
  // `reasoning-delta` parts; the program shows it from the raw events as they come.
  const CUT_REASONING: ReadonlyArray<{ label: string; model: (provider: FakeProvider) => Model; wire: Wire; server?: Turn['server']; shown: (event: unknown) => string | undefined }> = [
    { label: 'an OpenAIChatCompletionsModel (delta.reasoning)', model: (provider) => new OpenAIChatCompletionsModel(chatClient(provider), 'openai/gpt-oss-120b'), wire: 'chat', server: 'groq', shown: (event) => chatDelta(event)?.reasoning },
    { label: 'an OpenAIChatCompletionsModel (delta.reasoning_content)', model: (provider) => new OpenAIChatCompletionsModel(chatClient(provider), 'deepseek-reasoner'), wire: 'chat', server: 'deepseek', shown: (event) => chatDelta(event)?.reasoning_content },
    { label: 'an aisdk() model (reasoning-delta parts)', model: (provider) => aisdk(createOpenAI({ apiKey: 'sk-test-not-a-key', fetch: provider.fetch as typeof fetch })('o4-mini')), wire: 'responses', shown: (event) => ((event as { type?: string }).type === 'reasoning-delta' ? (event as { delta: string }).delta : undefined) },
  ];
  for (const backend of backends()) {
    for (const { label, model, wire, server, shown } of CUT_REASONING) {
      it(`${label}, streamed, the caller aborts mid-answer: the cut call keeps the reasoning and the text it had streamed (${backend})`, async () => {
        useTracing('tracing off');
        const plan = 'A short fable will do: a fox, a crow, and some cheese.';
        const provider = new FakeProvider().reply(wire, { id: 'cut_1', model: 'answering-model', server, reasoning: plan, text: 'A long answer that arrives in pieces over the stream.', usage: { input: 15, output: 14, reasoning: 8 } }, { stream: true });
        const recorded = recordedPlugin('agents-stream-abort-reasoning-other', backend);
        uninstall = instrumentOpenAIAgents(recorded.hooks);
        const agent = new Agent({ name: 'Talker', instructions: 'Talk.', model: model(provider) });
        const controller = new AbortController();
        const result = await run(agent, 'Tell me a story.', { stream: true, signal: controller.signal });
        let seen = '';
        let thought = '';
        for await (const event of result) {
          if (event.type !== 'raw_model_stream_event') continue;
          // The program shows the reasoning as it streams, then the answer; the user presses stop mid-answer.
          if (event.data.type === 'model') thought += shown(event.data.event) ?? '';
          if (event.data.type === 'output_text_delta') {
            seen += event.data.delta;
            if (!controller.signal.aborted) controller.abort();
          }
        }
        await result.completed;
        expect(thought).toBe(plan);
        expect(seen).not.toBe('');
        expect(hooks(recorded, 'api_request_error')).toMatchObject([{ error: { type: 'AbortError' } }]);
        const { atif, counters } = await recorded.finish();
        expectNothingLost(counters);
        expectRunsClosed(recorded);
        const answered = (onlyTrajectory(atif).steps as Array<Record<string, any>>).filter((step) => step.source === 'agent');
        expect(answered.map((step) => [step.message, step.reasoning_content, step.extra.invocation.status, step.extra.llm_response.error.type])).toEqual([[seen, plan, 'failed', 'AbortError']]);
      }, 30_000);
    }
  }

  it('a run the caller aborts during a model request is interrupted, not failed (the openai client says APIUserAbortError)', async () => {
    useTracing('tracing off');
    const controller = new AbortController();
    // The API never answers; the client gives up when the run's signal aborts.
    const hanging = (_url: string | URL | Request, init?: RequestInit): Promise<Response> =>
      new Promise((_resolve, reject) => {
        init?.signal?.addEventListener('abort', () => reject(init.signal!.reason), { once: true });
        controller.abort();
      });
    const client = new OpenAI({ apiKey: 'sk-test-not-a-key', baseURL: 'https://fake-openai.test/v1', fetch: hanging, maxRetries: 0 });
    const recorded = recordedPlugin('agents-request-abort');
    uninstall = instrumentOpenAIAgents(recorded.hooks);
    const agent = new Agent({ name: 'Impatient', instructions: 'x', model: new OpenAIResponsesModel(client, 'gpt-4.1') });
    const error = await run(agent, 'hi', { signal: controller.signal }).catch((caught: unknown) => caught);
    expect((error as Error).constructor.name).toBe('APIUserAbortError');
    expect(hooks(recorded, 'api_request_error')).toMatchObject([{ error: { type: 'APIUserAbortError' } }]);
    expect(hooks(recorded, 'on_session_end')).toMatchObject([{ interrupted: true, failed: false }]);
    const { counters } = await recorded.finish();
    expectNothingLost(counters);
    expectRunsClosed(recorded);
  }, 30_000);

  for (const backend of backends()) {
    for (const tracing of TRACING) {
      for (const { where, reply, stops } of BREAK_POINTS) {
        it(`a streamed run whose loop breaks out ${where}, the plugin shut down right after the loop (completed not awaited): the turn ends interrupted (${backend}, ${tracing})`, async () => {
          useTracing(tracing);
          api.load({ 'gpt-4.1': [reply] });
          const recorded = recordedPlugin('agents-stream-break', backend);
          uninstall = instrumentOpenAIAgents(recorded.hooks);
          const agent = new Agent({ name: 'Weather Agent', instructions: 'You are a helpful weather assistant.', model: 'gpt-4.1', tools: [weatherTool()] });
          const result = await run(agent, 'What is the weather in Lima?', { stream: true });
          for await (const event of result) {
            // Breaking out cancels the run: the SDK settles `completed` only later.
            if (stops(event)) break;
          }
          expect(result.cancelled).toBe(true);
          // When the loop has exited, the turn has already ended.
          expect(hooks(recorded, 'on_session_end')).toMatchObject([{ interrupted: true, failed: false, turn_exit_reason: 'interrupted' }]);
          // A request still streaming is cut off with the run.
          expect(hooks(recorded, 'api_request_error')).toMatchObject(where === 'mid-answer' ? [{ error: { type: 'AbortError' } }] : []);
          const { atif, atof, counters } = await recorded.finish();
          expectNothingLost(counters);
          expectRunsClosed(recorded);
          // The turn's end in ATOF: `hermes.session.end` (`hermes.turn.end` is a completed turn's answer).
          const marks = (name: string) => atof.filter((event) => event.kind === 'mark' && event.name === name).map((event) => event.data);
          expect(marks('hermes.session.end')).toMatchObject([{ interrupted: true, failed: false, turn_exit_reason: 'interrupted' }]);
          expect(marks('hermes.turn.end')).toEqual([]);
          // The session closed by the run, not by the shutdown.
          const sessionEnds = atof.filter((event) => event.kind === 'scope' && event.scope_category === 'end' && event.metadata?.nemo_relay_scope_role === 'session');
          expect(sessionEnds.map((event) => event.data?.reason)).toEqual(['run_interrupted']);
          await expectTurnEndInAtif(recorded, onlyTrajectory(atif), { status: 'interrupted' });
          // The SDK winds the cancelled run down after the plugin closed: nothing more is emitted.
          const emitted = recorded.log.length;
          await result.completed;
          expect(recorded.log).toHaveLength(emitted);
        }, 30_000);
      }
    }

    it(`a paused run resumed elsewhere from state.toString() (new Runner, adapter and plugin, same folder) keeps both trajectories (${backend})`, async () => {
      useTracing('tracing on');
      api.load({
        'gpt-4.1': [
          { calls: [{ id: 'call_cancel', name: 'cancel_order', args: { orderId: 7 } }], usage: { input: 40, output: 9 } },
          { text: 'Order 7 is cancelled.', usage: { input: 60, output: 6, cached: 32 } },
        ],
      });
      const cancelOrder = tool({
        name: 'cancel_order',
        description: 'Cancel an order',
        parameters: z.object({ orderId: z.number() }),
        needsApproval: true,
        execute: async ({ orderId }) => `Cancelled order ${orderId}`,
      });
      const agent = new Agent({ name: 'Customer support', instructions: 'Help with orders.', model: 'gpt-4.1', tools: [cancelOrder] });

      // The first process: the run pauses for approval, its state is saved, the process ends.
      const before = recordedPlugin('agents-resume-elsewhere', backend);
      uninstall = instrumentOpenAIAgents(before.hooks);
      const paused = await run(agent, 'Cancel order 7.');
      expect(paused.interruptions).toHaveLength(1);
      const saved = paused.state.toString();
      uninstall();
      uninstall = undefined;
      const first = await before.finish();
      expectNothingLost(first.counters);
      const pausedDoc = onlyTrajectory(first.atif);

      // The second process: the same folder, the state from storage, approved and resumed.
      const after = recordedPlugin('agents-resume-elsewhere-2', backend, { atifOutputDirectory: path.join(before.dir, 'atif'), atofOutputDirectory: path.join(before.dir, 'atof-2') });
      uninstall = instrumentOpenAIAgents(after.hooks);
      const state = await RunState.fromString(agent, saved);
      for (const interruption of state.getInterruptions()) state.approve(interruption);
      const resumed = await new Runner().run(agent, state);
      expect(resumed.finalOutput).toBe('Order 7 is cancelled.');
      expect(hooks(after, 'post_approval_response')).toMatchObject([{ tool_call_id: 'call_cancel', choice: 'once' }]);
      expect(hooks(after, 'post_tool_call')).toMatchObject([{ tool_call_id: 'call_cancel', status: 'ok', result: 'Cancelled order 7' }]);
      const second = await after.finish();
      expectNothingLost(second.counters);
      expectRunsClosed(after);

      // Both trajectories are on disk: the resumed one did not replace the paused one's file.
      const folder = path.join(before.dir, 'atif');
      const docs = readdirSync(folder).map((file) => JSON.parse(readFileSync(path.join(folder, file), 'utf8')) as AtifDoc);
      expect(docs).toHaveLength(2);
      const kept = docs.find((doc) => doc.session_id === pausedDoc.session_id) as AtifDoc;
      expect(kept).toEqual(pausedDoc);
      expect(stepsOf(kept)[0]).toMatchObject({ source: 'user', message: 'Cancel order 7.' });
      expect(toolCallIds(kept)).toEqual(['call_cancel']);
      // The resumed run names the session it continues and the call it answers.
      const continued = docs.find((doc) => doc !== kept) as AtifDoc;
      expect(continued.session_id).toBe(`${pausedDoc.session_id}:resume:call_cancel`);
      expect(agentSteps(continued).map((step) => step.message)).toEqual(['Order 7 is cancelled.']);
      // Nothing counted twice, nothing lost: the two files hold what the SDK counted over both runs.
      const total = { prompt: 0, completion: 0, cached: 0 };
      for (const doc of docs) {
        const part = tokenTotals(doc);
        total.prompt += part.prompt;
        total.completion += part.completion;
        total.cached += part.cached;
      }
      expect(total).toEqual(sdkTotals(resumed.state.usage));
    }, 30_000);
  }
});
