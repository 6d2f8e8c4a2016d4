// Tool failures the Agents SDK turns into something else than a throw, written
// as its docs write them: a tool's own `errorFunction` (the model is told its
// text), and a `customDataExtractor` that throws after the tool returned (the
// SDK ends the call with the error's text, then fails the run). The SDK marks
// the call's `function` span in both: a real span with tracing on, a no-op
// one with tracing off (`setTracingDisabled`, `OPENAI_AGENTS_DISABLE_TRACING`),
// which the adapter reads alike, per call, calls made at once and streamed
// runs included. A tool whose output only reads like an error is a result.
// A runner whose own config disables tracing makes no span per call: there
// only the SDK's default text says a call failed (pinned last).
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, Runner, run, tool } from '@openai/agents';
import * as z from 'zod';
import { instrumentOpenAIAgents } from '../../../src/adapters/openai-agents/index.ts';
import { backends, expectNothingLost, recordedPlugin } from '../support.ts';
import { hooks, observation, onlyTrajectory, TRACING, useTracing } from './support.ts';
import { FakeOpenAI, useAsDefaultClient } from './wire.ts';

const api = new FakeOpenAI();
useAsDefaultClient(api);

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

const SDK_TOOL_FAILURE_TEXT = 'An error occurred while running the tool. Please try again.';

/** The inventory service: a city it does not know is an error, which the tool's `errorFunction` tells the model. */
const checkStock = tool({
  name: 'check_stock',
  description: 'How many umbrellas a store has',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => {
    await new Promise((resolve) => setTimeout(resolve, city === 'Atlantis' ? 5 : 15));
    if (city === 'Atlantis') throw new Error(`no store in ${city}`);
    // An ordinary answer worded like the error text: a result, whatever it reads like.
    return city === 'Bergen' ? 'Stock check failed: none left' : `12 umbrellas in ${city}`;
  },
  errorFunction: (_context, error) => `Stock check failed: ${error instanceof Error ? error.message : String(error)}`,
});

const flaky = tool({
  name: 'flaky',
  description: 'fails',
  parameters: z.object({}),
  execute: async (): Promise<string> => {
    throw new Error('flaky backend');
  },
});

describe('OpenAI Agents SDK tool failures told to the model as text', () => {
  for (const tracing of TRACING) {
    for (const stream of [false, true]) {
      for (const backend of backends()) {
        it(`a tool's own errorFunction: that call failed, the others not, calls made at once (${tracing}, ${stream ? 'streamed' : 'not streamed'}, ${backend})`, async () => {
          useTracing(tracing);
          api.load({
            'gpt-4.1': [
              {
                calls: [
                  { id: 'call_atlantis', name: 'check_stock', args: { city: 'Atlantis' } },
                  { id: 'call_bergen', name: 'check_stock', args: { city: 'Bergen' } },
                  { id: 'call_oslo', name: 'check_stock', args: { city: 'Oslo' } },
                  { id: 'call_flaky', name: 'flaky', args: {} },
                ],
                usage: { input: 10, output: 8 },
              },
              { text: 'Oslo has 12 umbrellas.', usage: { input: 40, output: 6 } },
            ],
          });
          const recorded = recordedPlugin('agents-error-function', backend);
          uninstall = instrumentOpenAIAgents(recorded.hooks);
          const agent = new Agent({ name: 'Store agent', instructions: 'You check stock.', model: 'gpt-4.1', tools: [checkStock, flaky] });
          if (stream) {
            const result = await run(agent, 'Umbrellas in Atlantis, Bergen and Oslo?', { stream: true });
            for await (const _event of result) {
              // Consumed as the docs do; the events are not what is checked.
            }
            await result.completed;
            expect(result.finalOutput).toBe('Oslo has 12 umbrellas.');
          } else {
            const result = await run(agent, 'Umbrellas in Atlantis, Bergen and Oslo?');
            expect(result.finalOutput).toBe('Oslo has 12 umbrellas.');
          }
          // What the model was told of each call: the errorFunction's text for the failed one.
          const told = Object.fromEntries(
            (api.requests[1]!.body.input as Array<Record<string, any>>).filter((item) => item.type === 'function_call_output').map((item) => [item.call_id, item.output]),
          );
          expect(told).toEqual({
            call_atlantis: 'Stock check failed: no store in Atlantis',
            call_bergen: 'Stock check failed: none left',
            call_oslo: '12 umbrellas in Oslo',
            call_flaky: SDK_TOOL_FAILURE_TEXT,
          });
          const ended = new Map(hooks(recorded, 'post_tool_call').map((payload) => [payload.tool_call_id, payload]));
          expect([...ended.keys()].sort()).toEqual(['call_atlantis', 'call_bergen', 'call_flaky', 'call_oslo']);
          expect(ended.get('call_atlantis')).toMatchObject({ status: 'error', error_type: 'ToolError', error_message: 'Error: no store in Atlantis', result: told.call_atlantis });
          expect(ended.get('call_bergen')).toMatchObject({ status: 'ok', result: told.call_bergen });
          expect(ended.get('call_bergen')!.error_message ?? undefined).toBeUndefined();
          expect(ended.get('call_oslo')).toMatchObject({ status: 'ok', result: told.call_oslo });
          expect(ended.get('call_flaky')).toMatchObject({ status: 'error', result: SDK_TOOL_FAILURE_TEXT });
          const { atif, counters } = await recorded.finish();
          expectNothingLost(counters);
          const doc = onlyTrajectory(atif);
          // The file keeps the SDK's error beside what the model was told.
          expect(observation(doc, 'call_atlantis')).toMatchObject({ content: told.call_atlantis, extra: { metadata: { status: 'error', 'error.type': 'ToolError', 'error.message': 'Error: no store in Atlantis' } } });
          expect(observation(doc, 'call_bergen')).toMatchObject({ content: told.call_bergen, extra: { metadata: { status: 'ok' } } });
          expect(observation(doc, 'call_oslo')?.extra?.metadata?.status).toBe('ok');
        }, 30_000);
      }
    }

    it(`a customDataExtractor that throws after the tool returned: the call failed with its error, and so did the run (${tracing})`, async () => {
      useTracing(tracing);
      api.load({
        'gpt-4.1': [{ calls: [{ id: 'call_weather', name: 'get_weather', args: { city: 'Oslo' } }], usage: { input: 10, output: 2 } }],
      });
      const recorded = recordedPlugin('agents-extractor-throws');
      uninstall = instrumentOpenAIAgents(recorded.hooks);
      const getWeather = tool({
        name: 'get_weather',
        description: 'Get the weather for a given city',
        parameters: z.object({ city: z.string() }),
        execute: async ({ city }) => `The weather in ${city} is sunny.`,
        customDataExtractor: () => {
          throw new RangeError('the region table is empty');
        },
      });
      const agent = new Agent({ name: 'Weather Agent', instructions: 'You are a helpful weather assistant.', model: 'gpt-4.1', tools: [getWeather] });
      const error = (await new Runner().run(agent, 'What is the weather in Oslo?').catch((caught: unknown) => caught)) as Error;
      expect([error.name, error.message]).toEqual(['ToolCallError', 'Failed to run function tools: RangeError: the region table is empty']);
      const ended = hooks(recorded, 'post_tool_call');
      expect(ended).toHaveLength(1);
      // The call ends with what the SDK gave as its output, the error's text, as failed.
      expect(ended[0]).toMatchObject({ tool_call_id: 'call_weather', status: 'error', error_type: 'ToolError', error_message: 'RangeError: the region table is empty', result: 'RangeError: the region table is empty' });
      const sessionEnd = hooks(recorded, 'on_session_end').at(-1)!;
      expect(sessionEnd).toMatchObject({ failed: true, error_type: 'ToolCallError' });
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expect(observation(onlyTrajectory(atif), 'call_weather')?.extra?.metadata?.status).toBe('error');
    }, 30_000);
  }

  it("a runner whose own config disables tracing makes no span per call: only the SDK's default text says a call failed", async () => {
    useTracing('tracing on');
    api.load({
      'gpt-4.1': [
        {
          calls: [
            { id: 'call_atlantis', name: 'check_stock', args: { city: 'Atlantis' } },
            { id: 'call_flaky', name: 'flaky', args: {} },
          ],
          usage: { input: 10, output: 4 },
        },
        { text: 'No stock known.', usage: { input: 30, output: 4 } },
      ],
    });
    const recorded = recordedPlugin('agents-no-spans');
    uninstall = instrumentOpenAIAgents(recorded.hooks);
    const agent = new Agent({ name: 'Store agent', instructions: 'You check stock.', model: 'gpt-4.1', tools: [checkStock, flaky] });
    const result = await new Runner({ tracingDisabled: true }).run(agent, 'Umbrellas in Atlantis?');
    expect(result.finalOutput).toBe('No stock known.');
    const ended = new Map(hooks(recorded, 'post_tool_call').map((payload) => [payload.tool_call_id, payload]));
    // The errorFunction's text reads as a result (nothing else says otherwise); the default text is the SDK's own sign.
    expect(ended.get('call_atlantis')).toMatchObject({ status: 'ok', result: 'Stock check failed: no store in Atlantis' });
    expect(ended.get('call_flaky')).toMatchObject({ status: 'error', error_type: 'string', result: SDK_TOOL_FAILURE_TEXT });
    expectNothingLost((await recorded.finish()).counters);
  }, 30_000);

  it('a runner that makes no span per call: a tool error that escapes to the run (errorFunction: null) reads as the call\'s result, the run\'s failure says it', async () => {
    // The adapter leaves the tool's invoke as the SDK made it (the SDK keys its input parsing on it), so nothing sees
    // the throw itself; with spans, the span the SDK marks says the call failed. Without them only the run's failure does.
    useTracing('tracing on');
    api.load({ 'gpt-4.1': [{ calls: [{ id: 'call_fatal', name: 'fatal', args: {} }], usage: { input: 10, output: 2 } }] });
    const recorded = recordedPlugin('agents-no-spans-fatal');
    uninstall = instrumentOpenAIAgents(recorded.hooks);
    const fatal = tool({ name: 'fatal', description: 'fails hard', parameters: z.object({}), errorFunction: null, execute: async (): Promise<string> => { throw new Error('disk on fire'); } });
    const agent = new Agent({ name: 'Toolbox', instructions: 'x', model: 'gpt-4.1', tools: [fatal] });
    const error = await new Runner({ tracingDisabled: true }).run(agent, 'go').catch((caught: unknown) => caught);
    expect((error as Error).message).toContain('disk on fire');
    expect(hooks(recorded, 'post_tool_call')).toMatchObject([{ tool_call_id: 'call_fatal', status: 'ok', result: 'Error: disk on fire' }]);
    expect(hooks(recorded, 'on_session_end')).toMatchObject([{ failed: true }]);
    expectNothingLost((await recorded.finish()).counters);
  }, 30_000);
});
