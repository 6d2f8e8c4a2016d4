// `experimental_toolCaller` (re-exported by `ai` from @ai-sdk/provider-utils src/types/tool-caller.ts): a tool that
// calls other tools. A `local` caller's `bind(tools)` returns the tool the SDK runs, given the tools that
// `experimental_toolCallers` routes to it (01-generate-text.mdx: those are hidden from the model unless 'direct' is
// listed). Code mode (@ai-sdk/code-mode, 03-ai-sdk-core/18-code-mode.mdx) is such a caller; it needs Node 22, so this
// program writes the smallest caller the type allows, a batch tool, and runs it with generateText and streamText over
// the real @ai-sdk/openai on a fake fetch speaking the Responses wire (wire.ts). The trajectory has what the model
// asked and got: the caller's call with the caller's output, the tools the model was offered (the caller alone). The
// calls the caller makes run inside its `execute`, which the SDK does not report to telemetry: they are not tool calls
// of the trajectory, as docs/adapters/ai-sdk.md says.
//
// A `provider` caller: OpenAI's programmatic tool calling (`openai.tools.programmaticToolCalling()`, @ai-sdk/openai
// src/tool/programmatic-tool-calling.ts), the routed tools sent with `allowed_callers: ['programmatic']`. OpenAI runs
// the model's program (a `program` item) and asks the program's host for the function calls it makes
// (`function_call` items with `caller: {type: 'program', caller_id}`); the host's outputs go back with the next
// request, whose response carries the program's result (`program_output`, a result the package defers to a later
// response: `supportsDeferredResults`). The wire is written from the package's response schema
// (src/responses/openai-responses-api.ts, `program`, `program_output`, the tool caller).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAI } from '@ai-sdk/openai';
import { createXai } from '@ai-sdk/xai';
import { openAiResponseEither, scriptedFetch } from '../../support/provider-wire.ts';
import { experimental_toolCaller, generateText, isStepCount, streamText, tool, wrapLanguageModel, type Tool, type ToolSet } from 'ai';
import * as z from 'zod';
import { aiSdkMiddleware, instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { sameOnNative } from '../same-on-native.ts';
import { finishedRun, recordedPlugin, type AtifDoc } from '../support.ts';
import { FakeProvider } from './wire.ts';
import { weather } from './weather-tool.ts';
import { createMemoryRelay } from '../../../src/backends/memory/index.ts';
import { silentLogger } from '../../../src/shared/logger.ts';
import { startHttpReceiver, type Receiver } from '../../support/otlp-receiver.ts';
import { replayWithOtlp } from '../../support/otlp-replay.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

const MODEL = 'gpt-4o-2024-08-06';
const batchInput = z.object({ calls: z.array(z.object({ tool: z.string(), input: z.record(z.string(), z.unknown()) })) });

/** A local caller: the model calls `batch` with several calls; it runs each with the tools routed to it. */
const batch = experimental_toolCaller(tool({ description: 'Run several tool calls at once.', inputSchema: batchInput }), {
  type: 'local',
  bind: (tools: ToolSet): Tool =>
    tool({
      description: `Run several tool calls at once. Tools: ${Object.keys(tools).join(', ')}.`,
      inputSchema: batchInput,
      execute: async ({ calls }, options) => await Promise.all(calls.map(async (call) => await tools[call.tool]!.execute!(call.input, options))),
    }),
});

describe('experimental_toolCaller: a local caller routed by experimental_toolCallers', () => {
  for (const mode of ['generateText', 'streamText'] as const) {
    it(`${mode}: the model is offered the caller alone; its call and output are recorded as the model got them; the calls it made inside are not tool calls of the trajectory`, async () => {
      const calls = [{ tool: 'weather', input: { city: 'Paris' } }, { tool: 'weather', input: { city: 'Oslo' } }];
      const fake = new FakeProvider()
        .reply('responses', { id: 'resp_1', model: MODEL, toolCalls: [{ id: 'call_batch', name: 'batch', args: { calls } }], usage: { input: 90, output: 30 } }, { stream: mode === 'streamText' })
        .reply('responses', { id: 'resp_2', model: MODEL, text: 'Sunny in Paris and Oslo, 21 °C.', usage: { input: 160, output: 12 } }, { stream: mode === 'streamText' });
      const openai = createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
      const recorded = recordedPlugin(`ai-tool-caller-${mode}`);
      uninstall = instrumentAiSdk(recorded.hooks);

      const options = {
        model: openai('gpt-4o'),
        tools: { batch, weather },
        experimental_toolCallers: { weather: ['batch'] as const },
        stopWhen: isStepCount(3),
        prompt: 'Weather in Paris and Oslo?',
      };
      const result = mode === 'generateText' ? await generateText(options) : streamText(options);
      const [steps, text] = await Promise.all([result.steps, result.text]);
      const results = steps[0]!.toolResults;
      expect(results.map((entry) => [entry.toolCallId, entry.toolName, entry.output])).toEqual([
        ['call_batch', 'batch', [{ city: 'Paris', forecast: 'sunny', tempC: 21 }, { city: 'Oslo', forecast: 'sunny', tempC: 21 }]],
      ]);
      // The model was offered the caller alone (weather is reachable only through it).
      const offered = fake.requests.map((request) => (request.body.tools as Array<{ name: string }>).map((entry) => entry.name));
      expect(offered).toEqual([['batch'], ['batch']]);

      const starts = recorded.log.filter((entry) => entry.hook === 'pre_api_request').map((entry) => entry.payload as Record<string, any>);
      expect(starts.map((payload) => (payload.request.body.tools as Array<{ function: { name: string } }>).map((entry) => entry.function.name))).toEqual(offered);
      const { doc } = await finishedRun(recorded);
      const agent = (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
      expect(agent.map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual(steps.map((step) => [step.usage.inputTokens, step.usage.outputTokens]));
      expect(agent[0]!.tool_calls.map((call: AtifDoc) => [call.tool_call_id, call.function_name, call.arguments])).toEqual([['call_batch', 'batch', { calls }]]);
      expect(agent[0]!.observation.results.map((entry: AtifDoc) => [entry.source_call_id, JSON.parse(entry.content)])).toEqual([['call_batch', results[0]!.output]]);
      expect(agent[1]!.message).toBe(text);
      // One tool call in the hooks: the caller's. The weather calls it made are inside it, told to nobody.
      expect(recorded.log.filter((entry) => entry.hook === 'pre_tool_call').map((entry) => [entry.payload.tool_call_id, entry.payload.tool_name])).toEqual([['call_batch', 'batch']]);
      await sameOnNative(recorded);
    });
  }
});

describe('experimental_toolCaller: a provider caller (OpenAI programmatic tool calling)', () => {
  let receivers: { genAi: Receiver; full: Receiver };
  beforeAll(async () => {
    receivers = { genAi: await startHttpReceiver(), full: await startHttpReceiver() };
  });
  afterAll(async () => {
    for (const receiver of Object.values(receivers)) await receiver.close();
  });

  for (const mode of ['generateText', 'streamText'] as const) it(`${mode}: the program is the provider's call, the calls it made are the host's tool calls with their outputs; its result, deferred to the next response, is the program call's outcome, once`, async () => {
    const MODEL_55 = 'gpt-5.5-2026-05-01';
    const program = { type: 'program', id: 'prog_1', call_id: 'call_prog', code: 'const [a, b] = await Promise.all([tools.weather({ city: "Paris" }), tools.weather({ city: "Oslo" })]); return `${a.forecast}/${b.forecast}`;', fingerprint: 'fp_1' };
    const calls = ['Paris', 'Oslo'].map((city, i) => ({ type: 'function_call', id: `fc_${i}`, call_id: `call_w${i}`, name: 'weather', arguments: JSON.stringify({ city }), status: 'completed', caller: { type: 'program', caller_id: 'call_prog' } }));
    const wire = scriptedFetch([
      openAiResponseEither({ id: 'resp_1', model: MODEL_55, hostedItems: [program], localCalls: calls, usage: { prompt_tokens: 100, completion_tokens: 40 } }),
      openAiResponseEither({ id: 'resp_2', model: MODEL_55, hostedItems: [{ type: 'program_output', id: 'po_1', call_id: 'call_prog', result: 'sunny/sunny', status: 'completed' }], text: 'Sunny in both.', usage: { prompt_tokens: 180, completion_tokens: 8 } }),
    ]);
    const openai = createOpenAI({ apiKey: 'test-key', fetch: wire.fetch });
    const recorded = recordedPlugin(`ai-tool-caller-programmatic-${mode}`);
    uninstall = instrumentAiSdk(recorded.hooks);

    const options = {
      model: openai('gpt-5.5'),
      tools: { program: openai.tools.programmaticToolCalling(), weather },
      experimental_toolCallers: { weather: ['program'] as const },
      stopWhen: isStepCount(4),
      prompt: 'Weather in Paris and Oslo?',
    };
    const streamed = mode === 'streamText' ? streamText(options) : undefined;
    const result = streamed === undefined ? await generateText(options) : { text: await streamed.text, steps: await streamed.steps };
    expect(result.text).toBe('Sunny in both.');
    // The weather tool went out callable by the program only; the host's outputs went back with the program's caller.
    expect((wire.requests[0]!.body.tools as Array<Record<string, unknown>>).map((entry) => [entry.type, entry.allowed_callers])).toEqual([['programmatic_tool_calling', undefined], ['function', ['programmatic']]]);
    const sent = (wire.requests[1]!.body.input as Array<Record<string, any>>).filter((item) => item.type === 'function_call_output');
    expect(sent.map((item) => [item.call_id, item.caller])).toEqual([['call_w0', { type: 'program', caller_id: 'call_prog' }], ['call_w1', { type: 'program', caller_id: 'call_prog' }]]);
    const [first, second] = result.steps;
    const programResult = second!.content.find((part) => part.type === 'tool-result' && part.toolCallId === 'call_prog') as { output: unknown } | undefined;
    expect(programResult?.output).toEqual({ result: 'sunny/sunny', status: 'completed' });

    const { doc } = await finishedRun(recorded);
    const agent = (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
    expect(agent.map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual(result.steps.map((step) => [step.usage.inputTokens, step.usage.outputTokens]));
    expect(agent[0]!.tool_calls.map((call: AtifDoc) => [call.tool_call_id, call.function_name, call.arguments, call.extra?.provider_executed])).toEqual([
      ['call_prog', 'program', { code: program.code, fingerprint: 'fp_1' }, true],
      ['call_w0', 'weather', { city: 'Paris' }, undefined],
      ['call_w1', 'weather', { city: 'Oslo' }, undefined],
    ]);
    expect(agent[0]!.observation.results.map((entry: AtifDoc) => [entry.source_call_id, JSON.parse(entry.content)])).toEqual(first!.toolResults.map((entry) => [entry.toolCallId, entry.output]));
    expect(agent[1]!.message).toBe(result.text);
    // The program's result came in the second response, apart from its call: it is the outcome of the program's call
    // (its tool call, opened with the first response, ends with it), once, and not a call of the second step.
    expect(agent[0]!.tool_calls[0]!.extra.provider_result).toBeUndefined();
    expect(agent[1]!.tool_calls ?? []).toEqual([]);
    const ends = recorded.log.filter((entry) => entry.hook === 'post_tool_call' && entry.payload.tool_call_id === 'call_prog').map((entry) => entry.payload);
    expect(ends.map((payload) => [payload.tool_name, payload.args, JSON.parse(payload.result as string), payload.status])).toEqual([['program', { code: program.code, fingerprint: 'fp_1' }, programResult!.output, 'ok']]);
    const observed = (doc.steps as AtifDoc[]).flatMap((step) => (step.observation?.results ?? []).filter((entry: AtifDoc) => entry.extra?.metadata?.tool_call_id === 'call_prog'));
    // The ATIF builders (memory's and native's) close a step's observation when the next model call starts: a result
    // that arrives after it is a trailing observation that names the call in its metadata.
    expect(observed.map((entry: AtifDoc) => [JSON.parse(entry.content), entry.extra.event_name])).toEqual([[programResult!.output, 'program']]);
    expect(JSON.stringify(doc).split('sunny/sunny').length - 1).toBe(1);
    // OTLP: the program's call is a tool span (it lasts while the provider's program waited on the host's calls) whose
    // output is the program's result; the host's calls are spans of their own.
    const before = { genAi: receivers.genAi.spans().length, full: receivers.full.spans().length };
    const lines = recorded.log.map((entry) => ({ hook: entry.hook, payload: entry.payload }));
    const endpoints = [{ type: 'gen_ai' as const, endpoint: receivers.genAi.url }, { type: 'full' as const, endpoint: receivers.full.url }];
    const replayed = await replayWithOtlp(createMemoryRelay({ logger: silentLogger }), lines as never, { endpoints, localFiles: false });
    expect(replayed.problems).toEqual([]);
    const tools = receivers.genAi.spans().slice(before.genAi).filter((span) => span.attributes['gen_ai.operation.name'] === 'execute_tool');
    expect(tools.map((span) => span.attributes['gen_ai.tool.call.id']).sort()).toEqual(['call_prog', 'call_w0', 'call_w1']);
    const programSpan = receivers.full.spans().slice(before.full).filter((span) => span.attributes['nemo_relay.scope_type'] === 'tool' && JSON.stringify(span.attributes).includes('call_prog'));
    expect(programSpan).toHaveLength(1);
    expect(JSON.stringify(programSpan[0]!.attributes)).toContain('sunny/sunny');
    await sameOnNative(recorded);
  });

  for (const stream of [false, true]) {
    it(`aiSdkMiddleware alone (wrapLanguageModel), ${stream ? 'streamed' : 'generated'}: the program's result is its call's outcome, once`, async () => {
      const program = { type: 'program', id: 'prog_1', call_id: 'call_prog', code: 'return 1;', fingerprint: 'fp_1' };
      const calls = [{ type: 'function_call', id: 'fc_0', call_id: 'call_w0', name: 'weather', arguments: JSON.stringify({ city: 'Paris' }), status: 'completed', caller: { type: 'program', caller_id: 'call_prog' } }];
      const wire = scriptedFetch([
        openAiResponseEither({ id: 'resp_1', model: 'gpt-5.5-2026-05-01', hostedItems: [program], localCalls: calls, usage: { prompt_tokens: 100, completion_tokens: 40 } }),
        openAiResponseEither({ id: 'resp_2', model: 'gpt-5.5-2026-05-01', hostedItems: [{ type: 'program_output', id: 'po_1', call_id: 'call_prog', result: 'Paris is sunny', status: 'completed' }], text: 'Sunny.', usage: { prompt_tokens: 180, completion_tokens: 8 } }),
      ]);
      const openai = createOpenAI({ apiKey: 'test-key', fetch: wire.fetch });
      const recorded = recordedPlugin(`ai-tool-caller-programmatic-mw-${stream}`);
      const model = wrapLanguageModel({ model: openai('gpt-5.5'), middleware: aiSdkMiddleware(recorded.hooks, { sessionId: `programmatic-mw-${stream}` }) });
      const options = { model, tools: { program: openai.tools.programmaticToolCalling(), weather }, experimental_toolCallers: { weather: ['program'] as const }, stopWhen: isStepCount(4), prompt: 'Weather in Paris?' };
      const text = stream ? await streamText(options).text : (await generateText(options)).text;
      expect(text).toBe('Sunny.');
      const { doc } = await finishedRun(recorded);
      const agent = (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
      expect(agent.map((step) => (step.tool_calls ?? []).map((call: AtifDoc) => [call.tool_call_id, call.extra?.provider_result]))).toEqual([[['call_prog', undefined], ['call_w0', undefined]], []]);
      const ends = recorded.log.filter((entry) => entry.hook === 'post_tool_call').map((entry) => [entry.payload.tool_call_id, JSON.parse(entry.payload.result as string)]);
      expect(ends).toEqual([['call_prog', { result: 'Paris is sunny', status: 'completed' }]]);
      expect(JSON.stringify(doc).split('Paris is sunny').length - 1).toBe(1);
      await sameOnNative(recorded);
    });
  }
});

describe('OpenAI programmatic tool calling: a program that did not complete', () => {
  // The program's terminal status is `completed` or `incomplete` (the package's `program_output` schema and the
  // openai client's ResponseOutputItem.ProgramOutput): an incomplete program is a call the provider ran that failed,
  // with what it said (its status and result) as the error, on every path that records its result.
  const failed = { type: 'program_output', id: 'po_1', call_id: 'call_prog', result: 'TimeoutError: program exceeded its time limit after tools.weather', status: 'incomplete' };
  for (const via of ['instrumentAiSdk', 'aiSdkMiddleware'] as const) {
    for (const mode of ['generateText', 'streamText'] as const) {
      it(`${mode} (${via}): the program call's outcome is an error with the provider's status and result`, async () => {
        const program = { type: 'program', id: 'prog_1', call_id: 'call_prog', code: 'return (await tools.weather({ city: "Paris" })).forecast;', fingerprint: 'fp_1' };
        const calls = [{ type: 'function_call', id: 'fc_0', call_id: 'call_w0', name: 'weather', arguments: JSON.stringify({ city: 'Paris' }), status: 'completed', caller: { type: 'program', caller_id: 'call_prog' } }];
        const wire = scriptedFetch([
          openAiResponseEither({ id: 'resp_1', model: 'gpt-5.5-2026-05-01', hostedItems: [program], localCalls: calls, usage: { prompt_tokens: 100, completion_tokens: 40 } }),
          openAiResponseEither({ id: 'resp_2', model: 'gpt-5.5-2026-05-01', hostedItems: [failed], text: 'The forecast took too long.', usage: { prompt_tokens: 180, completion_tokens: 8 } }),
        ]);
        const openai = createOpenAI({ apiKey: 'test-key', fetch: wire.fetch });
        const recorded = recordedPlugin(`ai-programmatic-incomplete-${via}-${mode}`);
        if (via === 'instrumentAiSdk') uninstall = instrumentAiSdk(recorded.hooks);
        const model = via === 'instrumentAiSdk' ? openai('gpt-5.5') : wrapLanguageModel({ model: openai('gpt-5.5'), middleware: aiSdkMiddleware(recorded.hooks, { sessionId: `programmatic-incomplete-${mode}` }) });
        const options = { model, tools: { program: openai.tools.programmaticToolCalling(), weather }, experimental_toolCallers: { weather: ['program'] as const }, stopWhen: isStepCount(4), prompt: 'Weather in Paris?' };
        const streamed = mode === 'streamText' ? streamText(options) : undefined;
        const result = streamed === undefined ? await generateText(options) : { text: await streamed.text, steps: await streamed.steps };
        expect(result.text).toBe('The forecast took too long.');
        // What the program got: the program's result, in the second step, says it did not complete.
        const got = result.steps[1]!.content.find((part) => part.type === 'tool-result' && part.toolCallId === 'call_prog') as { output: { result: string; status: string } } | undefined;
        expect(got?.output).toEqual({ result: failed.result, status: 'incomplete' });

        const ends = recorded.log.filter((entry) => entry.hook === 'post_tool_call' && entry.payload.tool_call_id === 'call_prog').map((entry) => entry.payload);
        expect(ends.map((payload) => [JSON.parse(payload.result as string), payload.status, payload.error_type, payload.error_message])).toEqual([[got!.output, 'error', 'ToolError', `${got!.output.status}: ${got!.output.result}`]]);
        const { doc } = await finishedRun(recorded);
        const agent = (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
        expect(agent[0]!.tool_calls.map((call: AtifDoc) => [call.tool_call_id, call.extra?.provider_executed])).toEqual([['call_prog', true], ['call_w0', undefined]]);
        expect(agent[1]!.tool_calls ?? []).toEqual([]);
        const observed = (doc.steps as AtifDoc[]).flatMap((step) => (step.observation?.results ?? []).filter((entry: AtifDoc) => entry.extra?.metadata?.tool_call_id === 'call_prog'));
        expect(observed.map((entry: AtifDoc) => [JSON.parse(entry.content), entry.extra.metadata.status])).toEqual([[got!.output, 'error']]);
        await sameOnNative(recorded);
      });
    }
  }
});

describe('a provider call whose response holds no result and whose tool does not defer one', () => {
  it("xAI's X search (@ai-sdk/xai sends the call alone): a call the provider ran, no tool call opened for it", async () => {
    const search = { type: 'x_search_call', id: 'xs_1', name: 'x_keyword_search', arguments: JSON.stringify({ query: 'rain in Paris' }), status: 'completed' };
    const wire = scriptedFetch([openAiResponseEither({ id: 'resp_x', model: 'grok-4-1-fast', hostedItems: [search], text: 'Posts say it rains.', usage: { prompt_tokens: 50, completion_tokens: 9 } })]);
    const xai = createXai({ apiKey: 'test-key', fetch: wire.fetch });
    const recorded = recordedPlugin('ai-xai-search-no-result');
    uninstall = instrumentAiSdk(recorded.hooks);
    // The cast: @ai-sdk/xai's tool type is built on another @ai-sdk/provider-utils release than `ai`'s (it runs the same).
    const result = await generateText({ model: xai.responses('grok-4-1-fast'), tools: { x_search: xai.tools.xSearch() as unknown as Tool }, prompt: 'Is it raining in Paris?' });
    expect(result.text).toBe('Posts say it rains.');
    expect(result.steps[0]!.content.filter((part) => part.type === 'tool-call' || part.type === 'tool-result').map((part) => [part.type, part.toolCallId])).toEqual([['tool-call', 'xs_1']]);
    const { doc } = await finishedRun(recorded);
    const agent = (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
    expect(agent[0]!.tool_calls.map((call: AtifDoc) => [call.tool_call_id, call.extra?.provider_executed])).toEqual([['xs_1', true]]);
    expect(recorded.log.filter((entry) => entry.hook === 'pre_tool_call' || entry.hook === 'post_tool_call')).toEqual([]);
    await sameOnNative(recorded);
  });
});
