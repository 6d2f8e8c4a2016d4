// OpenAI's programmatic tool calling in the OpenAI Agents SDK, as its tools docs write it: `programmaticToolCallingTool()`
// beside a function tool whose `allowedCallers` is `['programmatic']`, on OpenAIResponsesModel over the real openai
// client and a fake fetch speaking the Responses wire (@openai/agents-openai's converter reads the `program` item,
// `call_id`, `code`, `fingerprint`; the `function_call` items with `caller: {type: 'program', caller_id}`; and, in the
// response to their outputs, the `program_output` item, `call_id`, `result`, `status`). The model's program is a call
// the provider ran; the function calls it asked for are the runner's, with their outputs; the program's result, which
// comes in the next response, is the program call's outcome, once, and no call of the next step.
import { describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { Agent, OpenAIResponsesModel, programmaticToolCallingTool, run, tool } from '@openai/agents';
import * as z from 'zod';
import { openAiResponseEither, scriptedFetch } from '../../support/provider-wire.ts';
import { sameOnNative } from '../same-on-native.ts';
import { finishedRun, recordedPlugin, type AtifDoc } from '../support.ts';
import { instrumentEachTest, TRACING, useTracing } from './support.ts';

const MODEL = 'gpt-5.5-2026-05-01';
const CODE = 'const [a, b] = await Promise.all([tools.get_weather({ city: "Paris" }), tools.get_weather({ city: "Oslo" })]); return `${a}/${b}`;';

describe('OpenAI Agents SDK: programmatic tool calling', () => {
  const instrument = instrumentEachTest();
  for (const stream of [false, true]) {
    for (const tracing of TRACING) {
      it(`run(${stream ? '{ stream: true }' : ''}) (${tracing}): the program's result, in the next response, is its call's outcome, once`, async () => {
        useTracing(tracing);
        const program = { type: 'program', id: 'prog_1', call_id: 'call_prog', code: CODE, fingerprint: 'fp_1', status: 'completed' };
        const calls = ['Paris', 'Oslo'].map((city, i) => ({ type: 'function_call', id: `fc_${i}`, call_id: `call_w${i}`, name: 'get_weather', arguments: JSON.stringify({ city }), status: 'completed', caller: { type: 'program', caller_id: 'call_prog' } }));
        const output = { type: 'program_output', id: 'po_1', call_id: 'call_prog', result: 'sunny/sunny', status: 'completed' };
        const wire = scriptedFetch([
          openAiResponseEither({ id: 'resp_1', model: MODEL, hostedItems: [program], localCalls: calls, usage: { prompt_tokens: 100, completion_tokens: 40 } }),
          openAiResponseEither({ id: 'resp_2', model: MODEL, hostedItems: [output], text: 'Sunny in both.', usage: { prompt_tokens: 180, completion_tokens: 8 } }),
        ]);
        const model = new OpenAIResponsesModel(new OpenAI({ apiKey: 'test-key', fetch: wire.fetch }), 'gpt-5.5');
        const recorded = recordedPlugin(`agents-programmatic-${stream}`);
        instrument(recorded.hooks);
        const weather = tool({ name: 'get_weather', description: 'Get the weather for a given city', parameters: z.object({ city: z.string() }), allowedCallers: ['programmatic'], execute: async ({ city }) => `${city}: sunny` });
        const agent = new Agent({ name: 'Forecaster', instructions: 'Answer weather questions.', model, tools: [programmaticToolCallingTool(), weather] });
        const result = stream ? await run(agent, 'Weather in Paris and Oslo?', { stream: true }) : await run(agent, 'Weather in Paris and Oslo?');
        if (stream) await (result as { completed: Promise<void> }).completed;
        expect(result.finalOutput).toBe('Sunny in both.');
        // The SDK sent the tool as programmatic-only and the outputs back with their caller.
        expect((wire.requests[0]!.body as Record<string, any>).tools.map((entry: Record<string, unknown>) => [entry.type, entry.allowed_callers])).toEqual([['programmatic_tool_calling', undefined], ['function', ['programmatic']]]);
        const sent = ((wire.requests[1]!.body as Record<string, any>).input as Array<Record<string, any>>).filter((item) => item.type === 'function_call_output');
        expect(sent.map((item) => [item.call_id, item.output, item.caller])).toEqual([
          ['call_w0', 'Paris: sunny', { type: 'program', caller_id: 'call_prog' }],
          ['call_w1', 'Oslo: sunny', { type: 'program', caller_id: 'call_prog' }],
        ]);
        const usage = result.state.usage;

        const { doc } = await finishedRun(recorded);
        const agentSteps = (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
        expect(agentSteps.map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual([[100, 40], [180, 8]]);
        expect(agentSteps.reduce((sum, step) => sum + step.metrics.prompt_tokens, 0)).toBe(usage.inputTokens);
        expect(agentSteps[0]!.tool_calls.map((call: AtifDoc) => [call.tool_call_id, call.function_name, call.arguments, call.extra?.provider_executed])).toEqual([
          ['call_prog', 'programmatic_tool_calling', { code: CODE, fingerprint: 'fp_1' }, true],
          ['call_w0', 'get_weather', { city: 'Paris' }, undefined],
          ['call_w1', 'get_weather', { city: 'Oslo' }, undefined],
        ]);
        expect(agentSteps[0]!.observation.results.map((entry: AtifDoc) => [entry.source_call_id, entry.content])).toEqual([['call_w0', 'Paris: sunny'], ['call_w1', 'Oslo: sunny']]);
        expect(agentSteps[0]!.tool_calls[0]!.extra.provider_result).toBeUndefined();
        expect(agentSteps[1]!.message).toBe('Sunny in both.');
        expect(agentSteps[1]!.tool_calls ?? []).toEqual([]);
        const ends = recorded.log.filter((entry) => entry.hook === 'post_tool_call' && entry.payload.tool_call_id === 'call_prog').map((entry) => entry.payload);
        expect(ends.map((payload) => [payload.tool_name, JSON.parse(payload.result as string), payload.status])).toEqual([['programmatic_tool_calling', { result: 'sunny/sunny', status: 'completed' }, 'ok']]);
        const observed = (doc.steps as AtifDoc[]).flatMap((step) => (step.observation?.results ?? []).filter((entry: AtifDoc) => entry.extra?.metadata?.tool_call_id === 'call_prog'));
        expect(observed.map((entry: AtifDoc) => JSON.parse(entry.content))).toEqual([{ result: 'sunny/sunny', status: 'completed' }]);
        expect(JSON.stringify(doc).split('sunny/sunny').length - 1).toBe(1);
        await sameOnNative(recorded);
      });
    }
  }

  for (const stream of [false, true]) {
    it(`run(${stream ? '{ stream: true }' : ''}): a program that did not complete (\`status: 'incomplete'\`) is a call that failed, with the status and result OpenAI gave`, async () => {
      useTracing('tracing off');
      const program = { type: 'program', id: 'prog_1', call_id: 'call_prog', code: CODE, fingerprint: 'fp_1', status: 'completed' };
      const calls = [{ type: 'function_call', id: 'fc_0', call_id: 'call_w0', name: 'get_weather', arguments: JSON.stringify({ city: 'Paris' }), status: 'completed', caller: { type: 'program', caller_id: 'call_prog' } }];
      // The openai client's ResponseOutputItem.ProgramOutput: `status` is the program's terminal status, `completed` or `incomplete`.
      const output = { type: 'program_output', id: 'po_1', call_id: 'call_prog', result: 'TimeoutError: program exceeded its time limit', status: 'incomplete' };
      const wire = scriptedFetch([
        openAiResponseEither({ id: 'resp_1', model: MODEL, hostedItems: [program], localCalls: calls, usage: { prompt_tokens: 100, completion_tokens: 40 } }),
        openAiResponseEither({ id: 'resp_2', model: MODEL, hostedItems: [output], text: 'The forecast took too long.', usage: { prompt_tokens: 180, completion_tokens: 8 } }),
      ]);
      const model = new OpenAIResponsesModel(new OpenAI({ apiKey: 'test-key', fetch: wire.fetch }), 'gpt-5.5');
      const recorded = recordedPlugin(`agents-programmatic-incomplete-${stream}`);
      instrument(recorded.hooks);
      const weather = tool({ name: 'get_weather', description: 'Get the weather for a given city', parameters: z.object({ city: z.string() }), allowedCallers: ['programmatic'], execute: async ({ city }) => `${city}: sunny` });
      const agent = new Agent({ name: 'Forecaster', instructions: 'Answer weather questions.', model, tools: [programmaticToolCallingTool(), weather] });
      const result = stream ? await run(agent, 'Weather in Paris?', { stream: true }) : await run(agent, 'Weather in Paris?');
      if (stream) await (result as { completed: Promise<void> }).completed;
      expect(result.finalOutput).toBe('The forecast took too long.');
      // What the run got: the SDK's program_output item, its status as OpenAI sent it.
      const got = result.newItems.map((item) => item.rawItem as Record<string, unknown>).find((item) => item.type === 'program_output');
      expect([got?.callId, got?.output, got?.status]).toEqual(['call_prog', output.result, 'incomplete']);

      const ends = recorded.log.filter((entry) => entry.hook === 'post_tool_call' && entry.payload.tool_call_id === 'call_prog').map((entry) => entry.payload);
      expect(ends.map((payload) => [JSON.parse(payload.result as string), payload.status, payload.error_type, payload.error_message])).toEqual([[{ result: got!.output, status: got!.status }, 'error', 'ToolError', `${got!.status}: ${got!.output}`]]);
      const { doc } = await finishedRun(recorded);
      const agentSteps = (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
      expect(agentSteps[0]!.tool_calls.map((call: AtifDoc) => call.tool_call_id)).toEqual(['call_prog', 'call_w0']);
      expect(agentSteps[1]!.tool_calls ?? []).toEqual([]);
      const observed = (doc.steps as AtifDoc[]).flatMap((step) => (step.observation?.results ?? []).filter((entry: AtifDoc) => entry.extra?.metadata?.tool_call_id === 'call_prog'));
      expect(observed.map((entry: AtifDoc) => entry.extra.metadata.status)).toEqual(['error']);
      await sameOnNative(recorded);
    });
  }
});
