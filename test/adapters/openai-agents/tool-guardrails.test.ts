// Tool guardrails, as the Agents SDK docs write them: `defineToolInputGuardrail`
// and `defineToolOutputGuardrail` on a `tool({ inputGuardrails, outputGuardrails })`,
// answering with `ToolGuardrailFunctionOutputFactory.allow`, `rejectContent` or
// `throwException`. What the program saw (did the tool run, what the model was
// told, did the run throw) is what the hooks, ATOF, ATIF and `view` say: a call
// an input guardrail refused never ran (denied, by that guardrail, with the text
// the model got); a call whose output an output guardrail replaced ran, and the
// model got the guardrail's text instead of the tool's.
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, defineToolInputGuardrail, defineToolOutputGuardrail, run, Runner, tool, ToolGuardrailFunctionOutputFactory } from '@openai/agents';
import * as z from 'zod';
import { instrumentOpenAIAgents } from '../../../src/adapters/openai-agents/index.ts';
import { backends, expectNothingLost, recordedPlugin, viewLines } from '../support.ts';
import { hooks, observation, onlyTrajectory, TRACING, useTracing } from './support.ts';
import { FakeOpenAI, useAsDefaultClient } from './wire.ts';

const api = new FakeOpenAI();
useAsDefaultClient(api);

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

type Verdict = 'allow' | 'rejectContent' | 'throwException';

/** The docs' weather tool, guarded on both sides; `ran` says whether its `execute` was called. */
function guardedWeather(input: Verdict, output: Verdict) {
  const seen = { ran: false };
  const noOslo = defineToolInputGuardrail({
    name: 'No Oslo',
    run: async ({ toolCall }) => {
      const asksOslo = toolCall.arguments.includes('Oslo');
      if (!asksOslo || input === 'allow') return ToolGuardrailFunctionOutputFactory.allow({ city_checked: true });
      return input === 'rejectContent' ? ToolGuardrailFunctionOutputFactory.rejectContent('Weather for Oslo is not available.', { city: 'Oslo' }) : ToolGuardrailFunctionOutputFactory.throwException({ city: 'Oslo' });
    },
  });
  const noSecrets = defineToolOutputGuardrail({
    name: 'No secrets',
    run: async ({ output: toolOutput }) => {
      if (!String(toolOutput).includes('secret') || output === 'allow') return ToolGuardrailFunctionOutputFactory.allow();
      return output === 'rejectContent' ? ToolGuardrailFunctionOutputFactory.rejectContent('[withheld by policy]', { leak: true }) : ToolGuardrailFunctionOutputFactory.throwException({ leak: true });
    },
  });
  const getWeather = tool({
    name: 'get_weather',
    description: 'Get the weather for a given city',
    parameters: z.object({ city: z.string() }),
    inputGuardrails: [noOslo],
    outputGuardrails: [noSecrets],
    execute: async ({ city }) => {
      seen.ran = true;
      return `The weather in ${city} is sunny (station secret 42).`;
    },
  });
  return { getWeather, seen };
}

const oneCall = (answer: string) => ({
  'gpt-4.1': [
    { calls: [{ id: 'call_weather', name: 'get_weather', args: { city: 'Oslo' } }], usage: { input: 10, output: 4 } },
    { text: answer, usage: { input: 30, output: 6 } },
  ],
});

/** What the model was sent for the call in the request after it: none when the run stopped first. */
function toldTheModel(): unknown {
  const outputs = api.requests.flatMap((request) => (Array.isArray(request.body.input) ? request.body.input : [])).filter((item: Record<string, unknown>) => item.type === 'function_call_output');
  return outputs.at(-1)?.output;
}

function toolLines(lines: string[]): string[] {
  return lines.filter((line) => /(─ |✗ )tool get_weather /.test(line) || /approval: /.test(line));
}

describe('OpenAI Agents SDK tool guardrails', () => {
  for (const tracing of TRACING) {
    for (const backend of backends()) {
      const label = `${tracing}, ${backend}`;

      it(`an input guardrail's rejectContent: the call never ran, denied by the guardrail, with the text the model was told (${label})`, async () => {
        useTracing(tracing);
        api.load(oneCall('Oslo is not available.'));
        const recorded = recordedPlugin('agents-tool-input-reject', backend);
        uninstall = instrumentOpenAIAgents(recorded.hooks);
        const { getWeather, seen } = guardedWeather('rejectContent', 'allow');
        const agent = new Agent({ name: 'Weather agent', instructions: 'Answer with the weather.', model: 'gpt-4.1', tools: [getWeather] });
        const result = await run(agent, 'Weather in Oslo?');
        expect(result.finalOutput).toBe('Oslo is not available.');
        expect(seen.ran).toBe(false);
        expect(toldTheModel()).toBe('Weather for Oslo is not available.');

        expect(hooks(recorded, 'post_approval_response')).toMatchObject([
          { tool_call_id: 'call_weather', choice: 'deny', decided_by: 'tool input guardrail: No Oslo', description: 'Weather for Oslo is not available.' },
        ]);
        expect(hooks(recorded, 'pre_approval_request')).toEqual([]);
        expect(hooks(recorded, 'post_tool_call')).toMatchObject([{ tool_call_id: 'call_weather', status: 'denied', result: 'Weather for Oslo is not available.', error_type: null }]);

        const { atif, atof, counters } = await recorded.finish();
        expectNothingLost(counters);
        expect(observation(onlyTrajectory(atif), 'call_weather')).toMatchObject({ content: 'Weather for Oslo is not available.', extra: { metadata: { status: 'denied' } } });
        expect(atof.find((event) => event.kind === 'mark' && event.name === 'hermes.approval.response')?.data).toMatchObject({ choice: 'deny', decided_by: 'tool input guardrail: No Oslo' });
        // ATOF has the guardrail's decision; ATIF, which has no place for marks, the denied call and its text.
        expect(toolLines(await viewLines(recorded, 'atof')).join('\n')).toMatch(/approval: deny +by tool input guardrail: No Oslo · Weather for Oslo is not available\./);
        for (const of of ['atof', 'atif'] as const) {
          expect(toolLines(await viewLines(recorded, of)).find((line) => line.includes('tool get_weather'))).toMatch(/✗ tool get_weather .*ERROR denied: Weather for Oslo is not available\.$/);
        }
      }, 30_000);

      it(`an input guardrail's throwException: the call never ran and the run failed; the call is denied by the guardrail (${label})`, async () => {
        useTracing(tracing);
        api.load(oneCall('never asked'));
        const recorded = recordedPlugin('agents-tool-input-throw', backend);
        uninstall = instrumentOpenAIAgents(recorded.hooks);
        const { getWeather, seen } = guardedWeather('throwException', 'allow');
        const agent = new Agent({ name: 'Weather agent', instructions: 'Answer with the weather.', model: 'gpt-4.1', tools: [getWeather] });
        const error = (await run(agent, 'Weather in Oslo?').catch((caught: unknown) => caught)) as Error & { error?: Error };
        expect(error.name).toBe('ToolCallError');
        expect(error.error?.name).toBe('ToolInputGuardrailTripwireTriggered');
        expect(seen.ran).toBe(false);
        expect(toldTheModel()).toBeUndefined();

        expect(hooks(recorded, 'post_approval_response')).toMatchObject([{ tool_call_id: 'call_weather', choice: 'deny', decided_by: 'tool input guardrail: No Oslo', description: 'Tool input guardrail triggered: No Oslo' }]);
        // Started and ended, as one call: not an end without a start.
        expect(hooks(recorded, 'pre_tool_call').map((payload) => payload.tool_call_id)).toEqual(['call_weather']);
        expect(hooks(recorded, 'post_tool_call')).toMatchObject([{ tool_call_id: 'call_weather', status: 'denied', result: 'Tool input guardrail triggered: No Oslo' }]);
        expect(hooks(recorded, 'on_session_end').at(-1)).toMatchObject({ failed: true, error_type: 'ToolCallError' });

        const { atif, atof, counters } = await recorded.finish();
        expectNothingLost(counters);
        expect(observation(onlyTrajectory(atif), 'call_weather')).toMatchObject({ content: 'Tool input guardrail triggered: No Oslo', extra: { metadata: { status: 'denied' } } });
        expect(atof.filter((event) => String(event.name).includes('unmatched'))).toEqual([]);
        expect(toolLines(await viewLines(recorded, 'atof')).join('\n')).toMatch(/approval: deny +by tool input guardrail: No Oslo · Tool input guardrail triggered: No Oslo/);
        for (const of of ['atof', 'atif'] as const) {
          expect(toolLines(await viewLines(recorded, of)).find((line) => line.includes('tool get_weather'))).toMatch(/✗ tool get_weather .*ERROR denied: Tool input guardrail triggered: No Oslo$/);
        }
      }, 30_000);

      it(`an output guardrail's rejectContent: the tool ran, and the model got the guardrail's text instead of its output (${label})`, async () => {
        useTracing(tracing);
        api.load(oneCall('The weather report was withheld.'));
        const recorded = recordedPlugin('agents-tool-output-reject', backend);
        uninstall = instrumentOpenAIAgents(recorded.hooks);
        const { getWeather, seen } = guardedWeather('allow', 'rejectContent');
        const agent = new Agent({ name: 'Weather agent', instructions: 'Answer with the weather.', model: 'gpt-4.1', tools: [getWeather] });
        const result = await run(agent, 'Weather in Oslo?');
        expect(result.finalOutput).toBe('The weather report was withheld.');
        expect(seen.ran).toBe(true);
        expect(toldTheModel()).toBe('[withheld by policy]');

        // The tool ran (ok) and the model got the guardrail's text; the guardrail's decision says the output was replaced.
        expect(hooks(recorded, 'post_tool_call')).toMatchObject([{ tool_call_id: 'call_weather', status: 'ok', result: '[withheld by policy]' }]);
        expect(hooks(recorded, 'post_approval_response')).toMatchObject([
          { tool_call_id: 'call_weather', choice: 'deny', decided_by: 'tool output guardrail: No secrets', description: "replaced the tool's output with: [withheld by policy]" },
        ]);
        // The output the guardrail withheld is not recorded either.
        expect(JSON.stringify(recorded.log)).not.toContain('station secret 42');

        const { atif, atof, counters } = await recorded.finish();
        expectNothingLost(counters);
        expect(observation(onlyTrajectory(atif), 'call_weather')).toMatchObject({ content: '[withheld by policy]', extra: { metadata: { status: 'ok' } } });
        expect(atof.find((event) => event.kind === 'mark' && event.name === 'hermes.approval.response')?.data).toMatchObject({
          choice: 'deny',
          decided_by: 'tool output guardrail: No secrets',
          description: "replaced the tool's output with: [withheld by policy]",
        });
        // `view` of the ATOF file: the call ran (not failed), then the guardrail's deny of its output, named and said,
        // and no error: the run did not fail, as the trajectory's view below says too.
        const viewed = await viewLines(recorded, 'atof');
        expect(toolLines(viewed)).toEqual([
          expect.stringMatching(/─ tool get_weather .*\{"city":"Oslo"\}$/),
          expect.stringMatching(/─ approval: deny +by tool output guardrail: No secrets · replaced the tool's output with: \[withheld by policy\]$/),
        ]);
        expect(viewed.join('\n')).not.toMatch(/✗|error/);
        // ATIF has no place for the decision: the call ran, and its observation is what the model got.
        expect(toolLines(await viewLines(recorded, 'atif'))).toEqual([expect.stringMatching(/─ tool get_weather .*\{"city":"Oslo"\}$/)]);
      }, 30_000);

      it(`an output guardrail's throwException: the tool ran, the run failed with the guardrail's error (${label})`, async () => {
        useTracing(tracing);
        api.load(oneCall('never asked'));
        const recorded = recordedPlugin('agents-tool-output-throw', backend);
        uninstall = instrumentOpenAIAgents(recorded.hooks);
        const { getWeather, seen } = guardedWeather('allow', 'throwException');
        const agent = new Agent({ name: 'Weather agent', instructions: 'Answer with the weather.', model: 'gpt-4.1', tools: [getWeather] });
        const error = (await run(agent, 'Weather in Oslo?').catch((caught: unknown) => caught)) as Error & { error?: Error };
        expect(error.error?.name).toBe('ToolOutputGuardrailTripwireTriggered');
        expect(seen.ran).toBe(true);

        expect(hooks(recorded, 'post_tool_call')).toMatchObject([
          { tool_call_id: 'call_weather', status: 'error', error_type: 'ToolOutputGuardrailTripwireTriggered', error_message: 'Tool output guardrail triggered: No secrets' },
        ]);
        expect(hooks(recorded, 'post_approval_response')).toMatchObject([{ tool_call_id: 'call_weather', choice: 'deny', decided_by: 'tool output guardrail: No secrets' }]);
        expect(JSON.stringify(recorded.log)).not.toContain('station secret 42');
        const { counters } = await recorded.finish();
        expectNothingLost(counters);
      }, 30_000);

      it(`two calls at once, streamed: the guardrail's refusal is the refused call's alone (${label})`, async () => {
        useTracing(tracing);
        api.load({
          'gpt-4.1': [
            {
              calls: [
                { id: 'call_oslo', name: 'get_weather', args: { city: 'Oslo' } },
                { id: 'call_bergen', name: 'get_weather', args: { city: 'Bergen' } },
              ],
              usage: { input: 10, output: 8 },
            },
            { text: 'Bergen is sunny; Oslo is not available.', usage: { input: 40, output: 9 } },
          ],
        });
        const recorded = recordedPlugin('agents-tool-guardrails-two', backend);
        uninstall = instrumentOpenAIAgents(recorded.hooks);
        const { getWeather } = guardedWeather('rejectContent', 'allow');
        const agent = new Agent({ name: 'Weather agent', instructions: 'Answer with the weather.', model: 'gpt-4.1', tools: [getWeather] });
        const result = await run(agent, 'Weather in Oslo and Bergen?', { stream: true });
        for await (const _event of result) {
          // Consumed as the docs do; the events are not what is checked.
        }
        await result.completed;
        expect(result.finalOutput).toBe('Bergen is sunny; Oslo is not available.');
        expect(hooks(recorded, 'post_approval_response').map((payload) => [payload.tool_call_id, payload.decided_by])).toEqual([['call_oslo', 'tool input guardrail: No Oslo']]);
        expect(hooks(recorded, 'post_tool_call').map((payload) => [payload.tool_call_id, payload.status, payload.result]).sort()).toEqual([
          ['call_bergen', 'ok', 'The weather in Bergen is sunny (station secret 42).'],
          ['call_oslo', 'denied', 'Weather for Oslo is not available.'],
        ]);
        const { atif, counters } = await recorded.finish();
        expectNothingLost(counters);
        const doc = onlyTrajectory(atif);
        expect(observation(doc, 'call_oslo')?.extra?.metadata?.status).toBe('denied');
        expect(observation(doc, 'call_bergen')?.extra?.metadata?.status).toBe('ok');
      }, 30_000);

      for (const verdict of ['rejectContent', 'throwException'] as const) {
        it(`an input guardrail run before approval (preApprovalInputGuardrails) that answers ${verdict}: denied by it, never asked, never run (${label})`, async () => {
          useTracing(tracing);
          api.load(oneCall('Oslo is not available.'));
          const recorded = recordedPlugin('agents-tool-pre-approval', backend);
          uninstall = instrumentOpenAIAgents(recorded.hooks);
          const noOslo = defineToolInputGuardrail({
            name: 'No Oslo',
            run: async () => (verdict === 'rejectContent' ? ToolGuardrailFunctionOutputFactory.rejectContent('Weather for Oslo is not available.') : ToolGuardrailFunctionOutputFactory.throwException()),
          });
          let ran = false;
          const getWeather = tool({
            name: 'get_weather',
            description: 'Get the weather for a given city',
            parameters: z.object({ city: z.string() }),
            needsApproval: true,
            inputGuardrails: [noOslo],
            execute: async ({ city }) => String((ran = true)) + city,
          });
          const agent = new Agent({ name: 'Weather agent', instructions: 'Answer with the weather.', model: 'gpt-4.1', tools: [getWeather] });
          const runner = new Runner({ toolExecution: { preApprovalInputGuardrails: true } });
          const outcome = await runner.run(agent, 'Weather in Oslo?').then(
            (result) => ({ interruptions: result.interruptions.length, output: result.finalOutput }),
            (error: unknown) => ({ error: (error as { error?: Error }).error?.name }),
          );
          expect(ran).toBe(false);
          const text = verdict === 'rejectContent' ? 'Weather for Oslo is not available.' : 'Tool input guardrail triggered: No Oslo';
          if (verdict === 'rejectContent') {
            expect(outcome).toEqual({ interruptions: 0, output: 'Oslo is not available.' });
            expect(toldTheModel()).toBe(text);
          } else {
            expect(outcome).toEqual({ error: 'ToolInputGuardrailTripwireTriggered' });
          }
          expect(hooks(recorded, 'pre_approval_request')).toEqual([]);
          expect(hooks(recorded, 'post_approval_response')).toMatchObject([{ tool_call_id: 'call_weather', choice: 'deny', decided_by: 'tool input guardrail: No Oslo', description: text }]);
          expect(hooks(recorded, 'pre_tool_call').map((payload) => payload.tool_call_id)).toEqual(['call_weather']);
          expect(hooks(recorded, 'post_tool_call')).toMatchObject([{ tool_call_id: 'call_weather', status: 'denied', result: text }]);
          const { atif, counters } = await recorded.finish();
          expectNothingLost(counters);
          expect(observation(onlyTrajectory(atif), 'call_weather')).toMatchObject({ content: text, extra: { metadata: { status: 'denied' } } });
        }, 30_000);
      }

      it(`guardrails that allow: nothing but the call, as without them (${label})`, async () => {
        useTracing(tracing);
        api.load(oneCall('Sunny in Bergen.'));
        const recorded = recordedPlugin('agents-tool-guardrails-allow', backend);
        uninstall = instrumentOpenAIAgents(recorded.hooks);
        const { getWeather, seen } = guardedWeather('allow', 'allow');
        const agent = new Agent({ name: 'Weather agent', instructions: 'Answer with the weather.', model: 'gpt-4.1', tools: [getWeather] });
        await run(agent, 'Weather in Oslo?');
        expect(seen.ran).toBe(true);
        expect(hooks(recorded, 'post_approval_response')).toEqual([]);
        expect(hooks(recorded, 'post_tool_call')).toMatchObject([{ tool_call_id: 'call_weather', status: 'ok', result: 'The weather in Oslo is sunny (station secret 42).' }]);
        const { counters } = await recorded.finish();
        expectNothingLost(counters);
      }, 30_000);
    }
  }
});
