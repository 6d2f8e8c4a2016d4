// The OpenAI Agents SDK adapter when the model misbehaves, on agents written
// as the SDK's docs write them, on OpenAIResponsesModel over the real openai
// client and the fake fetch (Responses JSON and SSE): a call of a tool the
// agent does not have (the run throws ModelBehaviorError), a function tool
// called with arguments that are not JSON (the SDK tells the model and asks
// again; no tool event fires) or that fail its schema (the tool's invoke
// fails, as a tool that throws), and toolUseBehavior
// 'stop_on_first_tool', and an outputType the final answer fails. The calls are recorded as the model sent them, each
// with the outcome the SDK gave it; memory and native write the same files.
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, ModelBehaviorError, OpenAIResponsesModel, run } from '@openai/agents';
import * as z from 'zod';
import { sameOnNative } from '../same-on-native.ts';
import { expectNothingLost, expectTurnEndInAtif, recordedPlugin, viewLines, type Recorded } from '../support.ts';
import { agentSteps, hooks, instrumentEachTest, observation, onlyTrajectory, sdkTotals, stepsOf, toolCallIds, tokenTotals, TRACING, useTracing, weatherTool } from './support.ts';
import { FakeOpenAI } from './wire.ts';

const api = new FakeOpenAI();
const model = new OpenAIResponsesModel(api.client(), 'gpt-4.1');
const instrument = instrumentEachTest();
afterEach(() => api.load({}));

const GPT = 'gpt-4.1-2025-04-14';

/** The function_call_output the SDK sent the model for a call, in the request after it. */
function toldTheModel(request: number, callId: string): string {
  const item = (api.requests[request]!.body.input as Array<Record<string, any>>).find((i) => i.type === 'function_call_output' && i.call_id === callId);
  expect(item, `the output sent for ${callId}`).toBeDefined();
  return String(item!.output);
}

function expectEachCallOnce(recorded: Recorded, ids: string[]): void {
  for (const name of ['pre_tool_call', 'post_tool_call']) expect(hooks(recorded, name).map((p) => p.tool_call_id).sort()).toEqual([...ids].sort());
}

describe('OpenAI Agents SDK: calls the SDK refuses', () => {
  for (const tracing of TRACING) {
    for (const stream of [false, true]) {
      const how = `${stream ? 'streamed' : 'run'}, ${tracing}`;

      it(`arguments that are not JSON, then arguments that fail the schema: each failed with the text the model was told, then the model asks again (${how})`, async () => {
        useTracing(tracing);
        api.load({
          'gpt-4.1': [
            { calls: [{ id: 'call_json', name: 'get_weather', args: '{"city": "Par' }], usage: { input: 60, output: 12 } },
            { calls: [{ id: 'call_schema', name: 'get_weather', args: { town: 'Paris' } }], usage: { input: 110, output: 9 } },
            { calls: [{ id: 'call_ok', name: 'get_weather', args: { city: 'Paris' } }], usage: { input: 160, output: 9 } },
            { text: 'It is sunny in Paris.', usage: { input: 210, output: 7, cached: 64 } },
          ],
        });
        const recorded = recordedPlugin('agents-misbehave-args');
        instrument(recorded.hooks);
        const agent = new Agent({ name: 'Weather agent', instructions: 'You answer weather questions.', model, tools: [weatherTool()] });
        const result = stream ? await run(agent, 'What is the weather in Paris?', { stream: true }) : await run(agent, 'What is the weather in Paris?');
        if (stream) {
          for await (const _event of (result as unknown as AsyncIterable<unknown>)) void _event;
          await (result as unknown as { completed: Promise<void> }).completed;
        }
        expect(result.finalOutput).toBe('It is sunny in Paris.');
        expect(api.requests).toHaveLength(4);
        const { atif, counters } = await recorded.finish();
        expectNothingLost(counters);
        const doc = onlyTrajectory(atif);
        // As the model sent them: the raw text that does not parse, the object that does not fit.
        const calls = agentSteps(doc).flatMap((step) => step.tool_calls ?? []);
        expect(calls.map((call: Record<string, any>) => [call.tool_call_id, call.function_name, call.arguments])).toEqual([
          ['call_json', 'get_weather', { raw: '{"city": "Par' }],
          ['call_schema', 'get_weather', { town: 'Paris' }],
          ['call_ok', 'get_weather', { city: 'Paris' }],
        ]);
        // Failed, with exactly what the next request told the model; the good call ran.
        expect(observation(doc, 'call_json')).toMatchObject({ content: toldTheModel(1, 'call_json'), extra: { metadata: { status: 'error' } } });
        expect(observation(doc, 'call_schema')).toMatchObject({ content: toldTheModel(2, 'call_schema'), extra: { metadata: { status: 'error' } } });
        expect(toldTheModel(1, 'call_json')).toMatch(/parsing tool arguments/);
        expect(observation(doc, 'call_ok')).toMatchObject({ content: 'The weather in Paris is sunny.', extra: { metadata: { status: 'ok' } } });
        expectEachCallOnce(recorded, ['call_json', 'call_schema', 'call_ok']);
        // Each outcome before the request that carried it.
        const order = recorded.log.filter((e) => e.hook === 'pre_api_request' || e.hook === 'post_tool_call').map((e) => (e.hook === 'pre_api_request' ? 'request' : String(e.payload.tool_call_id)));
        expect(order).toEqual(['request', 'call_json', 'request', 'call_schema', 'request', 'call_ok', 'request']);
        expect(agentSteps(doc).map((step) => step.model_name)).toEqual([GPT, GPT, GPT, GPT]);
        expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage as never));
        // What `view` shows, from either file: two failed calls with what the model was told, then the one that ran.
        for (const of of ['atif', 'atof'] as const) {
          const tools = (await viewLines(recorded, of)).filter((line) => /(─ |✗ )tool \S+ /.test(line));
          expect(tools, of).toHaveLength(3);
          expect(tools[0], of).toMatch(/✗ tool get_weather .*ERROR ToolCallRefused: An error occurred while parsing tool arguments/);
          // The schema is checked inside the tool's invoke: that call ran, and failed as a tool does.
          expect(tools[1], of).toMatch(/✗ tool get_weather .*ERROR /);
          expect(tools[2], of).not.toContain('✗');
          expect(tools.join('\n'), of).not.toContain('not run');
        }
        await sameOnNative(recorded);
      });

      it(`a tool the agent does not have: the run throws ModelBehaviorError, and the call fails with it (${how})`, async () => {
        useTracing(tracing);
        api.load({ 'gpt-4.1': [{ text: 'Let me check.', calls: [{ id: 'call_unknown', name: 'get_forecast', args: { city: 'Paris' } }], usage: { input: 60, output: 14 } }] });
        const recorded = recordedPlugin('agents-misbehave-unknown');
        instrument(recorded.hooks);
        const agent = new Agent({ name: 'Weather agent', instructions: 'You answer weather questions.', model, tools: [weatherTool()] });
        const error = await (async () => {
          const result = stream ? await run(agent, 'Forecast for Paris?', { stream: true }) : await run(agent, 'Forecast for Paris?');
          if (stream) await (result as unknown as { completed: Promise<void> }).completed;
        })().then(
          () => undefined,
          (caught: unknown) => caught,
        );
        expect(error).toBeInstanceOf(ModelBehaviorError);
        expect((error as Error).message).toBe('Tool get_forecast not found in agent Weather agent.');
        expect(api.requests).toHaveLength(1);
        const { atif, counters } = await recorded.finish();
        expectNothingLost(counters);
        const doc = onlyTrajectory(atif);
        expect(toolCallIds(doc)).toEqual(['call_unknown']);
        const outcome = observation(doc, 'call_unknown')!;
        expect(outcome).toMatchObject({ content: 'Tool get_forecast not found in agent Weather agent.', extra: { metadata: { status: 'error', 'error.type': 'ModelBehaviorError' } } });
        expectEachCallOnce(recorded, ['call_unknown']);
        expect(hooks(recorded, 'pre_tool_call')[0]).toMatchObject({ tool_name: 'get_forecast', args: { city: 'Paris' } });
        expect(hooks(recorded, 'on_session_end').at(-1)).toMatchObject({ failed: true, error_type: 'ModelBehaviorError' });
        expect(stepsOf(doc).filter((step) => step.source === 'agent').map((step) => step.message)).toContain('Let me check.');
        expect(tokenTotals(doc)).toMatchObject({ prompt: 60, completion: 14 });
        await expectTurnEndInAtif(recorded, doc, { status: 'failed', error: error as Error });
        for (const of of ['atif', 'atof'] as const) {
          const tools = (await viewLines(recorded, of)).filter((line) => /(─ |✗ )tool \S+ /.test(line));
          expect(tools, of).toEqual([expect.stringMatching(/✗ tool get_forecast .*ERROR ModelBehaviorError: Tool get_forecast not found in agent Weather agent\./)]);
        }
        await sameOnNative(recorded);
      });

      it(`an outputType (zod) whose final answer does not parse: the run throws ModelBehaviorError; the turn failed with it, the answer and its tokens kept (${how})`, async () => {
        useTracing(tracing);
        const text = '{"city": "Lima", "temperature_c": "mild"}';
        api.load({ 'gpt-4.1': [{ text, usage: { input: 40, output: 15 } }] });
        const recorded = recordedPlugin('agents-misbehave-output-type');
        instrument(recorded.hooks);
        const agent = new Agent({ name: 'Reporter', instructions: 'Report the weather.', model, outputType: z.object({ city: z.string(), temperature_c: z.number() }) });
        const error = await (async () => {
          const result = stream ? await run(agent, 'Weather report for Lima.', { stream: true }) : await run(agent, 'Weather report for Lima.');
          if (stream) await (result as unknown as { completed: Promise<void> }).completed;
        })().then(
          () => undefined,
          (caught: unknown) => caught,
        );
        expect(error).toBeInstanceOf(ModelBehaviorError);
        expect((error as Error).message).toBe('Invalid output type: final assistant output did not match the expected schema.');
        expect(hooks(recorded, 'post_llm_call')).toEqual([]);
        expect(hooks(recorded, 'on_session_end').at(-1)).toMatchObject({ failed: true, error_type: 'ModelBehaviorError', error_message: (error as Error).message });
        const { atif, counters } = await recorded.finish();
        expectNothingLost(counters);
        const doc = onlyTrajectory(atif);
        expect(agentSteps(doc).map((step) => step.message)).toEqual([text]);
        expect(tokenTotals(doc)).toEqual({ prompt: 40, completion: 15, cached: 0 });
        expect((await viewLines(recorded, 'atof')).filter((line) => line.includes('└─ turn '))).toEqual([expect.stringContaining('failed: ModelBehaviorError')]);
        await expectTurnEndInAtif(recorded, doc, { status: 'failed', error: error as Error });
        await sameOnNative(recorded);
      });

      it(`toolUseBehavior 'stop_on_first_tool': the tool's output is the answer, and no model call follows (${how})`, async () => {
        useTracing(tracing);
        api.load({ 'gpt-4.1': [{ calls: [{ id: 'call_first', name: 'get_weather', args: { city: 'Paris' } }], usage: { input: 60, output: 10 } }] });
        const recorded = recordedPlugin('agents-stop-on-first');
        instrument(recorded.hooks);
        const agent = new Agent({ name: 'Weather agent', instructions: 'You answer weather questions.', model, tools: [weatherTool()], toolUseBehavior: 'stop_on_first_tool' });
        const result = stream ? await run(agent, 'Weather in Paris?', { stream: true }) : await run(agent, 'Weather in Paris?');
        if (stream) {
          for await (const _event of (result as unknown as AsyncIterable<unknown>)) void _event;
          await (result as unknown as { completed: Promise<void> }).completed;
        }
        expect(result.finalOutput).toBe('The weather in Paris is sunny.');
        expect(api.requests).toHaveLength(1);
        const { atif, counters } = await recorded.finish();
        expectNothingLost(counters);
        const doc = onlyTrajectory(atif);
        expect(toolCallIds(doc)).toEqual(['call_first']);
        expect(observation(doc, 'call_first')).toMatchObject({ content: 'The weather in Paris is sunny.', extra: { metadata: { status: 'ok' } } });
        expect(agentSteps(doc)).toHaveLength(1);
        expect(hooks(recorded, 'on_session_end').at(-1)).toMatchObject({ completed: true });
        expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage as never));
        await sameOnNative(recorded);
      });
    }
  }
});
