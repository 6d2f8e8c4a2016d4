// Tool options from the Agents SDK's docs, on OpenAIResponsesModel over the
// real openai client and the fake fetch (JSON and SSE): `toolUseBehavior` as
// a function (the program decides the final output from the tools' results),
// tools turned off with `isEnabled` (false, or a function), and an agent used
// as a tool with `customOutputExtractor` (the parent model gets what the
// extractor returns, the sub-agent's trajectory keeps its own answer).
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, OpenAIResponsesModel, run, tool, type ToolUseBehavior } from '@openai/agents';
import * as z from 'zod';
import { sameOnNative } from '../same-on-native.ts';
import { expectNothingLost, recordedPlugin } from '../support.ts';
import { agentSteps, expectRunsClosed, hooks, instrumentEachTest, observation, onlyTrajectory, sdkTotals, stepsOf, tokenTotals, TRACING, useTracing, weatherTool } from './support.ts';
import { dated, FakeOpenAI } from './wire.ts';

const api = new FakeOpenAI();
const model = new OpenAIResponsesModel(api.client(), 'gpt-4.1');
const small = new OpenAIResponsesModel(api.client(), 'gpt-4.1-nano');
const instrument = instrumentEachTest();
afterEach(() => api.load({}));

async function drained<T>(result: T, stream: boolean): Promise<T> {
  if (stream) {
    for await (const _event of result as unknown as AsyncIterable<unknown>) void _event;
    await (result as unknown as { completed: Promise<void> }).completed;
  }
  return result;
}

describe('OpenAI Agents SDK: tool options', () => {
  for (const tracing of TRACING) {
    for (const stream of [false, true]) {
      const how = `${stream ? 'streamed' : 'run'}, ${tracing}`;

      it(`toolUseBehavior as a function: the output it makes of the tools' results is the turn's answer, after one model call (${how})`, async () => {
        useTracing(tracing);
        api.load({ 'gpt-4.1': [{ calls: [{ id: 'call_oslo', name: 'get_weather', args: { city: 'Oslo' } }], usage: { input: 40, output: 8 } }] });
        const recorded = recordedPlugin('agents-tool-use-function');
        instrument(recorded.hooks);
        const toolUseBehavior: ToolUseBehavior = async (_context, toolResults) => {
          const first = toolResults[0]!;
          return { isFinalOutput: true, isInterrupted: undefined, finalOutput: `Report: ${first.type === 'function_output' ? String(first.output) : 'no output'}` };
        };
        const agent = new Agent({ name: 'Weather reporter', instructions: 'Look the weather up.', model, tools: [weatherTool()], toolUseBehavior });
        const result = await drained(stream ? await run(agent, 'Weather in Oslo?', { stream: true }) : await run(agent, 'Weather in Oslo?'), stream);
        expect(result.finalOutput).toBe('Report: The weather in Oslo is sunny.');
        expect(api.requests).toHaveLength(1);
        expect(hooks(recorded, 'post_llm_call')).toMatchObject([{ assistant_response: 'Report: The weather in Oslo is sunny.' }]);
        expect(hooks(recorded, 'on_session_end')).toMatchObject([{ completed: true }]);
        const { atif, counters } = await recorded.finish();
        expectNothingLost(counters);
        expectRunsClosed(recorded);
        const doc = onlyTrajectory(atif);
        expect(agentSteps(doc)).toHaveLength(1);
        expect(observation(doc, 'call_oslo')).toMatchObject({ content: 'The weather in Oslo is sunny.', extra: { metadata: { status: 'ok' } } });
        expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage));
        await sameOnNative(recorded);
      }, 60_000);

      it(`isEnabled false, or a function that says no: the tool is not offered, and the request as recorded offers what was sent (${how})`, async () => {
        useTracing(tracing);
        api.load({ 'gpt-4.1': [{ text: 'Sunny, I think.', usage: { input: 30, output: 4 } }] });
        const recorded = recordedPlugin('agents-is-enabled');
        instrument(recorded.hooks);
        const lookup = (name: string, isEnabled: boolean | (() => boolean)) => tool({ name, description: `The ${name} tool`, parameters: z.object({ city: z.string() }), isEnabled, execute: async () => 'unused' });
        const agent = new Agent({
          name: 'Weather agent',
          instructions: 'Answer weather questions.',
          model,
          tools: [weatherTool(), lookup('get_forecast', false), lookup('get_radar', () => false), lookup('get_alerts', () => true)],
        });
        const result = await drained(stream ? await run(agent, 'Weather in Oslo?', { stream: true }) : await run(agent, 'Weather in Oslo?'), stream);
        expect(result.finalOutput).toBe('Sunny, I think.');
        expect(api.requests[0]!.body.tools.map((t: Record<string, any>) => t.name)).toEqual(['get_weather', 'get_alerts']);
        expect(hooks(recorded, 'pre_api_request')[0]!.request.body.tools.map((t: Record<string, any>) => t.function.name)).toEqual(['get_weather', 'get_alerts']);
        const { atif, counters } = await recorded.finish();
        expectNothingLost(counters);
        const doc = onlyTrajectory(atif);
        expect(JSON.stringify(doc)).not.toContain('get_forecast');
        expect(JSON.stringify(doc)).not.toContain('get_radar');
        expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage));
        await sameOnNative(recorded);
      }, 60_000);

      it(`agent.asTool with customOutputExtractor: the parent's observation is what the extractor gave the model; the sub-agent keeps its own answer (${how})`, async () => {
        useTracing(tracing);
        api.load({
          'gpt-4.1': [
            { calls: [{ id: 'call_sum', name: 'summarize_text', args: { input: 'A long text about the weather in Oslo.' } }], usage: { input: 60, output: 12 } },
            { text: 'Oslo: sunny (summary).', usage: { input: 110, output: 6, cached: 32 } },
          ],
          'gpt-4.1-nano': [{ text: 'Sunny in Oslo.', usage: { input: 25, output: 4 } }],
        });
        const recorded = recordedPlugin('agents-custom-output-extractor');
        instrument(recorded.hooks);
        const summarizer = new Agent({ name: 'Summarizer', instructions: 'Summarize in one line.', model: small });
        const summarizerTool = summarizer.asTool({
          toolName: 'summarize_text',
          toolDescription: 'Generate a concise summary of the supplied text.',
          customOutputExtractor: (output) => `Summary: ${String(output.finalOutput)} (by ${output.lastAgent?.name})`,
        });
        const agent = new Agent({ name: 'Writer', instructions: 'Use the summarizer.', model, tools: [summarizerTool] });
        const result = await drained(stream ? await run(agent, 'Summarize the weather text.', { stream: true }) : await run(agent, 'Summarize the weather text.'), stream);
        expect(result.finalOutput).toBe('Oslo: sunny (summary).');
        const told = (api.requests[2]!.body.input as Array<Record<string, any>>).find((item) => item.type === 'function_call_output');
        expect(told?.output).toBe('Summary: Sunny in Oslo. (by Summarizer)');
        expect(hooks(recorded, 'subagent_stop')).toMatchObject([{ child_summary: 'Sunny in Oslo.' }]);

        const { atif, counters } = await recorded.finish();
        expectNothingLost(counters);
        expectRunsClosed(recorded);
        const doc = onlyTrajectory(atif);
        // The call's one result links the sub-agent and says what the parent model got.
        const results = stepsOf(doc).flatMap((step) => step.observation?.results ?? []).filter((r: Record<string, any>) => r.source_call_id === 'call_sum');
        const child = (doc.subagent_trajectories as Array<Record<string, any>>)[0]!;
        expect(results).toMatchObject([{ content: 'Summary: Sunny in Oslo. (by Summarizer)', subagent_trajectory_ref: [{ trajectory_id: child.trajectory_id }] }]);
        expect(hooks(recorded, 'post_tool_call')).toMatchObject([{ tool_call_id: 'call_sum', status: 'ok', result: 'Summary: Sunny in Oslo. (by Summarizer)' }]);
        expect(child.session_id).toBe(`${doc.session_id}:sub:call_sum`);
        expect(stepsOf(child)[0]).toMatchObject({ source: 'user', message: 'A long text about the weather in Oslo.' });
        expect(agentSteps(child).map((step) => [step.model_name, step.message])).toEqual([[dated('gpt-4.1-nano'), 'Sunny in Oslo.']]);
        expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage));
        await sameOnNative(recorded);
      }, 60_000);
    }
  }
});
