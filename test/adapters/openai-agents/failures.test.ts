// Agents SDK runs that fail, the way its docs provoke them: input and output
// guardrail tripwires (a guardrail that runs its own agent, as in the docs),
// MaxTurnsExceededError, a provider error, a tool error that escapes, and a
// provider attempt retried by the runner. A run that throws ends its turn
// and session at once, before the plugin shuts down, with the failure and
// the guardrails' verdicts recorded.
import { afterEach, describe, expect, it } from 'vitest';
import {
  Agent,
  InputGuardrailTripwireTriggered,
  MaxTurnsExceededError,
  OutputGuardrailTripwireTriggered,
  run,
  tool,
  type InputGuardrail,
  type OutputGuardrail,
} from '@openai/agents';
import * as z from 'zod';
import { instrumentOpenAIAgents } from '../../../src/adapters/openai-agents/index.ts';
import { sleep } from '../../../src/shared/timers.ts';
import { checkRetry, expectNothingLost, recordedPlugin, type Recorded } from '../support.ts';
import { agentSteps, hooks, observation, onlyTrajectory, sdkTotals, stepsOf, toolCallIds, tokenTotals, TRACING, useTracing } from './support.ts';
import { FakeOpenAI, useAsDefaultClient } from './wire.ts';

const api = new FakeOpenAI();
useAsDefaultClient(api);

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

/** The run's own failure closed its turn and session: nothing waits for the plugin's shutdown. */
function expectEndedFailed(recorded: Recorded, errorType: string): Record<string, any> {
  const ends = hooks(recorded, 'on_session_end').filter((end) => end.parent_session_id === undefined && !String(end.session_id).includes(':sub:'));
  const last = ends.at(-1)!;
  expect(last).toMatchObject({ failed: true, completed: false, error_type: errorType });
  expect(hooks(recorded, 'on_session_finalize').map((payload) => payload.session_id)).toContain(last.session_id);
  expect(hooks(recorded, 'post_llm_call').filter((payload) => payload.session_id === last.session_id)).toEqual([]);
  return last;
}

const mathHomeworkAgent = new Agent({
  name: 'Guardrail check',
  instructions: 'Check if the user is asking you to do their math homework.',
  model: 'gpt-4.1-nano',
  outputType: z.object({ isMathHomework: z.boolean(), reasoning: z.string() }),
});

function mathGuardrail(runInParallel: boolean): InputGuardrail {
  return {
    name: 'Math Homework Guardrail',
    runInParallel,
    execute: async ({ input, context }) => {
      const result = await run(mathHomeworkAgent, input, { context });
      return { outputInfo: result.finalOutput, tripwireTriggered: result.finalOutput?.isMathHomework ?? false };
    },
  };
}

const verdict = { isMathHomework: true, reasoning: 'It asks to solve an equation.' };

describe('OpenAI Agents SDK runs that fail', () => {
  for (const tracing of TRACING) {
    for (const runInParallel of [false, true]) {
      it(`an input guardrail tripwire (runInParallel: ${runInParallel}) ends the run at once, with the verdict and the guardrail's own agent recorded (${tracing})`, async () => {
        useTracing(tracing);
        api.load({
          'gpt-4.1-nano': [{ text: JSON.stringify(verdict), usage: { input: 30, output: 12 } }],
          // Only asked when the guardrail runs beside the model call.
          'gpt-4.1': [{ text: 'x = 4', usage: { input: 25, output: 4 } }],
        });
        const recorded = recordedPlugin('agents-input-guardrail');
        uninstall = instrumentOpenAIAgents(recorded.hooks);
        const agent = new Agent({ name: 'Customer support agent', instructions: 'You help customers.', model: 'gpt-4.1', inputGuardrails: [mathGuardrail(runInParallel)] });
        const error = await run(agent, 'Hello, can you help me solve for x: 2x + 3 = 11?').then(
          () => undefined,
          (caught: unknown) => caught,
        );
        expect(error).toBeInstanceOf(InputGuardrailTripwireTriggered);

        const end = expectEndedFailed(recorded, 'InputGuardrailTripwireTriggered');
        expect(end.guardrails).toEqual([{ kind: 'input', name: 'Math Homework Guardrail', tripwire_triggered: true, output_info: verdict }]);
        expect(end.turn_exit_reason).toMatch(/^error: Input guardrail triggered/);
        const turn = hooks(recorded, 'pre_llm_call').find((payload) => payload.session_id === end.session_id)!;
        expect(turn.user_message).toBe('Hello, can you help me solve for x: 2x + 3 = 11?');
        // The guardrail's agent is a sub-agent of the run, with its own model call.
        const sub = hooks(recorded, 'subagent_start').find((start) => start.parent_session_id === end.session_id)!;
        expect(sub).toMatchObject({ child_role: 'Guardrail check', child_goal: 'Hello, can you help me solve for x: 2x + 3 = 11?' });
        expect(hooks(recorded, 'post_api_request').filter((payload) => payload.session_id === sub.child_session_id).map((payload) => payload.response.assistant_message.content)).toEqual([JSON.stringify(verdict)]);

        const { atif, counters } = await recorded.finish();
        expectNothingLost(counters);
        const doc = onlyTrajectory(atif);
        const child = (doc.subagent_trajectories as Array<Record<string, any>>)[0]!;
        expect(JSON.parse(agentSteps(child)[0]!.message)).toEqual(verdict);
      }, 30_000);
    }

    it(`a blocking input guardrail that trips before any model call: the run's input, its failure and its session are recorded (${tracing})`, async () => {
      useTracing(tracing);
      api.load({ 'gpt-4.1': [{ text: 'never asked', usage: { input: 1, output: 1 } }] });
      const recorded = recordedPlugin('agents-blocked-input');
      uninstall = instrumentOpenAIAgents(recorded.hooks);
      const noSecrets: InputGuardrail = {
        name: 'No secrets',
        runInParallel: false,
        execute: async ({ input }) => ({ outputInfo: { matched: 'password' }, tripwireTriggered: JSON.stringify(input).includes('password') }),
      };
      const agent = new Agent({ name: 'Guarded', instructions: 'x', model: 'gpt-4.1', inputGuardrails: [noSecrets] });
      const error = await run(agent, 'my password is hunter2').catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(InputGuardrailTripwireTriggered);
      expect(api.requests).toEqual([]);
      const end = expectEndedFailed(recorded, 'InputGuardrailTripwireTriggered');
      expect(end.guardrails).toEqual([{ kind: 'input', name: 'No secrets', tripwire_triggered: true, output_info: { matched: 'password' } }]);
      expect(hooks(recorded, 'pre_llm_call')).toMatchObject([{ user_message: 'my password is hunter2' }]);
      // With tracing on, the session is the run's trace, as for a run that got further.
      const traceId = (error as InputGuardrailTripwireTriggered).state?._trace?.traceId;
      if (tracing === 'tracing on') expect(end.session_id).toBe(traceId);
      const { counters, atif, atof } = await recorded.finish();
      expectNothingLost(counters);
      // No model call, no step: ATIF has no file for such a session; ATOF has the input, the failure and the verdict.
      expect(atif).toEqual([]);
      const marks = atof.filter((event) => event.kind === 'mark');
      expect(marks.find((mark) => mark.name === 'hermes.turn.start')?.data.user_message).toBe('my password is hunter2');
      expect(marks.find((mark) => mark.name === 'hermes.session.end')?.data).toMatchObject({ failed: true, guardrails: [{ name: 'No secrets', tripwire_triggered: true }] });
    }, 30_000);

    it(`an output guardrail tripwire ends the run at once; the blocked answer and the verdict are recorded (${tracing})`, async () => {
      useTracing(tracing);
      api.load({ 'gpt-4.1': [{ text: JSON.stringify({ response: 'Call me at 650-555-0100.' }), usage: { input: 33, output: 11 } }] });
      const recorded = recordedPlugin('agents-output-guardrail');
      uninstall = instrumentOpenAIAgents(recorded.hooks);
      const MessageOutput = z.object({ response: z.string() });
      const sensitiveDataCheck: OutputGuardrail<typeof MessageOutput> = {
        name: 'Sensitive data check',
        async execute({ agentOutput }) {
          const phoneNumberInResponse = agentOutput.response.includes('650');
          return { outputInfo: { phone_number_detected: phoneNumberInResponse }, tripwireTriggered: phoneNumberInResponse };
        },
      };
      const agent = new Agent({ name: 'Assistant', instructions: 'You are a helpful assistant.', model: 'gpt-4.1', outputType: MessageOutput, outputGuardrails: [sensitiveDataCheck] });
      const error = await run(agent, 'What is your number?').catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OutputGuardrailTripwireTriggered);
      const end = expectEndedFailed(recorded, 'OutputGuardrailTripwireTriggered');
      expect(end.guardrails).toEqual([{ kind: 'output', name: 'Sensitive data check', tripwire_triggered: true, output_info: { phone_number_detected: true } }]);
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      const doc = onlyTrajectory(atif);
      expect(stepsOf(doc)[0]).toMatchObject({ source: 'user', message: 'What is your number?' });
      expect(JSON.parse(agentSteps(doc)[0]!.message)).toEqual({ response: 'Call me at 650-555-0100.' });
    }, 30_000);

    it(`guardrails that pass are recorded on the turn's end too (${tracing})`, async () => {
      useTracing(tracing);
      api.load({
        'gpt-4.1-nano': [{ text: JSON.stringify({ isMathHomework: false, reasoning: 'A greeting.' }), usage: { input: 20, output: 9 } }],
        'gpt-4.1': [{ text: 'Hello! How can I help?', usage: { input: 25, output: 7 } }],
      });
      const recorded = recordedPlugin('agents-guardrails-pass');
      uninstall = instrumentOpenAIAgents(recorded.hooks);
      const polite: OutputGuardrail = { name: 'Politeness', execute: async () => ({ outputInfo: { polite: true }, tripwireTriggered: false }) };
      const agent = new Agent({ name: 'Support', instructions: 'Help.', model: 'gpt-4.1', inputGuardrails: [mathGuardrail(false)], outputGuardrails: [polite] });
      const result = await run(agent, 'Hello!');
      expect(result.finalOutput).toBe('Hello! How can I help?');
      const end = hooks(recorded, 'on_session_end').find((payload) => payload.completed === true && payload.guardrails !== undefined)!;
      expect(end.guardrails).toEqual([
        { kind: 'input', name: 'Math Homework Guardrail', tripwire_triggered: false, output_info: { isMathHomework: false, reasoning: 'A greeting.' } },
        { kind: 'output', name: 'Politeness', tripwire_triggered: false, output_info: { polite: true } },
      ]);
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      const doc = onlyTrajectory(atif);
      expect(agentSteps(doc).at(-1)!.message).toBe('Hello! How can I help?');
      // The guardrail's own agent is a sub-agent: the run's usage counts it, and so do the trajectories.
      expect(tokenTotals(doc)).toEqual({ prompt: 45, completion: 16, cached: 0 });
    }, 30_000);

    it(`MaxTurnsExceededError ends the run at once with every tool call it made (${tracing})`, async () => {
      useTracing(tracing);
      const loop = (n: number) => ({ calls: [{ id: `call_${n}`, name: 'get_time', args: {} }], usage: { input: 10 * n, output: 5 } });
      api.load({ 'gpt-4.1': [loop(1), loop(2), loop(3)] });
      const recorded = recordedPlugin('agents-max-turns');
      uninstall = instrumentOpenAIAgents(recorded.hooks);
      const getTime = tool({ name: 'get_time', description: 'The time', parameters: z.object({}), execute: async () => '12:00' });
      const agent = new Agent({ name: 'Looper', instructions: 'Keep checking the time.', model: 'gpt-4.1', tools: [getTime] });
      const error = await run(agent, 'What time is it?', { maxTurns: 2 }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(MaxTurnsExceededError);
      const end = expectEndedFailed(recorded, 'MaxTurnsExceededError');
      expect(end.turn_exit_reason).toBe('error: Max turns (2) exceeded');
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      const doc = onlyTrajectory(atif);
      expect(toolCallIds(doc)).toEqual(['call_1', 'call_2']);
      expect(observation(doc, 'call_2')?.content).toBe('12:00');
      expect(tokenTotals(doc)).toEqual(sdkTotals((error as MaxTurnsExceededError).state!.usage));
    }, 30_000);

    it(`a provider error that escapes is a failed attempt and a failed run (${tracing})`, async () => {
      useTracing(tracing);
      api.load({ 'gpt-4.1': [{ status: 400, message: 'Invalid schema for function get_weather' }] });
      const recorded = recordedPlugin('agents-provider-error');
      uninstall = instrumentOpenAIAgents(recorded.hooks);
      const agent = new Agent({ name: 'Broken', instructions: 'x', model: 'gpt-4.1' });
      const error = await run(agent, 'hi').catch((caught: unknown) => caught);
      expect((error as { status?: number }).status).toBe(400);
      const end = expectEndedFailed(recorded, 'BadRequestError');
      expect(end.turn_exit_reason).toContain('Invalid schema for function get_weather');
      expect(hooks(recorded, 'api_request_error')).toMatchObject([{ status_code: 400, retry_count: 0, error: { type: 'BadRequestError' } }]);
      const { counters } = await recorded.finish();
      expectNothingLost(counters);
    }, 30_000);

    it(`a failed attempt and the runner's retry share one api_request_id (${tracing})`, async () => {
      useTracing(tracing);
      api.load({ 'gpt-4.1': [{ status: 503, message: 'The server is overloaded' }, { text: 'Recovered.', usage: { input: 12, output: 3 } }] });
      const recorded = recordedPlugin('agents-retry');
      uninstall = instrumentOpenAIAgents(recorded.hooks);
      const agent = new Agent({
        name: 'Patient',
        instructions: 'x',
        model: 'gpt-4.1',
        modelSettings: { retry: { maxRetries: 2, backoff: { initialDelayMs: 1, jitter: false }, policy: () => true } },
      });
      const result = await run(agent, 'hi');
      expect(result.finalOutput).toBe('Recovered.');
      const attempts = recorded.log.filter((entry) => ['pre_api_request', 'api_request_error', 'post_api_request'].includes(entry.hook));
      expect(attempts.map((entry) => [entry.hook, entry.payload.retry_count ?? null])).toEqual([
        ['pre_api_request', 0],
        ['api_request_error', 0],
        ['pre_api_request', 1],
        ['post_api_request', null],
      ]);
      expect(new Set(attempts.map((entry) => entry.payload.api_request_id)).size).toBe(1);
      expect(attempts[1]!.payload).toMatchObject({ status_code: 503, error: { type: 'InternalServerError' } });
      const { atof, atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      checkRetry(atof);
      const doc = onlyTrajectory(atif);
      expect(agentSteps(doc).at(-1)!.message).toBe('Recovered.');
    }, 30_000);

    it(`a streamed attempt that fails before its first event is retried under the same api_request_id (${tracing})`, async () => {
      useTracing(tracing);
      api.load({ 'gpt-4.1': [{ status: 503, message: 'The server is overloaded' }, { text: 'Recovered, streaming.', usage: { input: 14, output: 4 } }] });
      const recorded = recordedPlugin('agents-stream-retry');
      uninstall = instrumentOpenAIAgents(recorded.hooks);
      const agent = new Agent({
        name: 'Patient streamer',
        instructions: 'x',
        model: 'gpt-4.1',
        modelSettings: { retry: { maxRetries: 1, backoff: { initialDelayMs: 1, jitter: false }, policy: () => true } },
      });
      const result = await run(agent, 'hi', { stream: true });
      let text = '';
      for await (const chunk of result.toTextStream()) text += chunk;
      await result.completed;
      expect(text).toBe('Recovered, streaming.');
      const attempts = recorded.log.filter((entry) => ['pre_api_request', 'api_request_error', 'post_api_request'].includes(entry.hook));
      expect(attempts.map((entry) => [entry.hook, entry.payload.retry_count ?? null])).toEqual([
        ['pre_api_request', 0],
        ['api_request_error', 0],
        ['pre_api_request', 1],
        ['post_api_request', null],
      ]);
      expect(new Set(attempts.map((entry) => entry.payload.api_request_id)).size).toBe(1);
      const { atof, atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      checkRetry(atof);
      expect(agentSteps(onlyTrajectory(atif)).at(-1)!.message).toBe('Recovered, streaming.');
    }, 30_000);

    it(`tools that fail: the SDK's error text is the failed observation; a tool error that escapes fails the run (${tracing})`, async () => {
      useTracing(tracing);
      api.load({
        'gpt-4.1': [
          { calls: [{ id: 'call_flaky', name: 'flaky', args: {} }], usage: { input: 10, output: 2 } },
          { calls: [{ id: 'call_fatal', name: 'fatal', args: {} }], usage: { input: 20, output: 2 } },
        ],
      });
      const recorded = recordedPlugin('agents-tool-errors');
      uninstall = instrumentOpenAIAgents(recorded.hooks);
      const flaky = tool({ name: 'flaky', description: 'fails', parameters: z.object({}), execute: async (): Promise<string> => { throw new Error('flaky backend'); } });
      const fatal = tool({ name: 'fatal', description: 'fails hard', parameters: z.object({}), errorFunction: null, execute: async (): Promise<string> => { throw new Error('disk on fire'); } });
      const agent = new Agent({ name: 'Toolbox', instructions: 'x', model: 'gpt-4.1', tools: [flaky, fatal] });
      const error = await run(agent, 'go').catch((caught: unknown) => caught);
      expect(String((error as Error).message)).toContain('disk on fire');
      const ended = hooks(recorded, 'post_tool_call');
      expect(ended.map((payload) => [payload.tool_call_id, payload.status])).toEqual([
        ['call_flaky', 'error'],
        ['call_fatal', 'error'],
      ]);
      expect(ended[0]!.result).toBe('An error occurred while running the tool. Please try again.');
      expect(ended[1]!.error_message).toContain('disk on fire');
      expectEndedFailed(recorded, (error as Error).name);
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      const doc = onlyTrajectory(atif);
      expect(observation(doc, 'call_flaky')?.extra?.metadata?.status).toBe('error');
      expect(observation(doc, 'call_fatal')?.extra?.metadata?.status).toBe('error');
    }, 30_000);

    it(`a tool error that escapes cancels the call made beside it: that call fails as the SDK cancelled it (${tracing})`, async () => {
      useTracing(tracing);
      api.load({ 'gpt-4.1': [{ calls: [{ id: 'call_fatal', name: 'fatal', args: {} }, { id: 'call_slow', name: 'slow', args: {} }], usage: { input: 10, output: 2 } }] });
      const recorded = recordedPlugin('agents-sibling-cancelled');
      uninstall = instrumentOpenAIAgents(recorded.hooks);
      let stopped = false;
      const fatal = tool({ name: 'fatal', description: 'fails hard', parameters: z.object({}), errorFunction: null, execute: async (): Promise<string> => { await sleep(10); throw new Error('disk on fire'); } });
      const slow = tool({
        name: 'slow',
        description: 'waits for its signal',
        parameters: z.object({}),
        execute: (_input, _context, details) => new Promise<string>((resolve) => details?.signal?.addEventListener('abort', () => resolve(String((stopped = true))), { once: true })),
      });
      const agent = new Agent({ name: 'Toolbox', instructions: 'x', model: 'gpt-4.1', tools: [fatal, slow] });
      const error = await run(agent, 'go').catch((caught: unknown) => caught);
      expect((error as Error).message).toContain('disk on fire');
      expect(stopped).toBe(true);
      expect(hooks(recorded, 'post_tool_call').map((payload) => [payload.tool_call_id, payload.status, payload.result, payload.error_type])).toEqual([
        ['call_fatal', 'error', 'Error: disk on fire', 'ToolError'],
        ['call_slow', 'error', 'aborted', 'SiblingCancellationError'],
      ]);
      const { counters } = await recorded.finish();
      expectNothingLost(counters);
    }, 30_000);
  }
});
