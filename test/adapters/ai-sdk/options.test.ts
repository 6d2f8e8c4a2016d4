// AI SDK options the docs show and real programs use, which change what a run's steps are: `prepareStep` choosing
// another model (another provider's) and narrowing the tools per step, a tool whose `execute` throws and a call to a
// tool that does not exist (no `experimental_repairToolCall`), `output: Output.array/choice/json` (answers that parse
// and answers that do not), and `experimental_transform: smoothStream()`. Each runs as the SDK's docs write it, over
// the real OpenAI and Anthropic packages and the fake fetch that speaks their wire (wire.ts); the trajectory, the
// ATOF events and `view` must say what the program saw and what the SDK reports (models, tools, text, tokens, finish
// reasons, one model call per request), on memory and native alike.
import { afterEach, describe, expect, it } from 'vitest';
import { NoObjectGeneratedError, Output, ToolLoopAgent, cosineSimilarity, dynamicTool, embed, embedMany, generateText, jsonSchema, smoothStream, stepCountIs, streamText, tool, type LanguageModelUsage, type ToolSet } from 'ai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import * as z from 'zod';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { sameOnNative } from '../same-on-native.ts';
import { expectNothingLost, expectTurnEndInAtif, finishedRun, onlyTrajectory, recordedPlugin, viewLines, type AtifDoc, type AtofEvent, type Recorded } from '../support.ts';
import { FakeProvider, type Request } from './wire.ts';
import { weather } from './weather-tool.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

type Step = Record<string, any>;
const MINI = 'gpt-4o-mini-2024-07-18';
const SONNET = 'claude-sonnet-4-5-20250929';
const MODES = ['generateText', 'streamText'] as const;

const openai = (fake: FakeProvider) => createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
const anthropic = (fake: FakeProvider) => createAnthropic({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch });
const hooksOf = (recorded: Recorded, name: string) => recorded.log.filter((entry) => entry.hook === name).map((entry) => entry.payload as Record<string, any>);
const results = (doc: AtifDoc): Step[] => (doc.steps as Step[]).flatMap((step) => step.observation?.results ?? []);

/** What the SDK reported of a run: its steps (with the model and usage of each) and its totals. */
interface SdkRun {
  text: string;
  steps: ReadonlyArray<{ model: { provider: string; modelId: string }; response: { modelId: string }; usage: LanguageModelUsage; finishReason: string }>;
  totalUsage: LanguageModelUsage;
}

/** The names of the tools a request offered, as the provider's wire says them (Chat Completions' and Anthropic's shapes). */
function toolNames(tools: unknown): string[] {
  return ((tools ?? []) as Step[]).map((t) => t.function?.name ?? t.name);
}

/**
 * One model call per request, each as the SDK reported its step: the model that answered, the provider it went to,
 * the tools it was offered, its tokens and finish reason; the run's totals its `totalUsage`. The ATOF LLM spans name
 * the same models.
 */
async function expectStepsAsSdk(recorded: Recorded, doc: AtifDoc, atof: AtofEvent[], sdk: SdkRun, requests: Request[]): Promise<void> {
  const starts = hooksOf(recorded, 'pre_api_request');
  expect(starts, 'one model call per request').toHaveLength(requests.length);
  expect(starts.map((p) => [p.provider, toolNames(p.request?.body?.tools)])).toEqual(sdk.steps.map((step, i) => [step.model.provider, toolNames(requests[i]!.body.tools)]));
  expect(starts.map((p) => p.model)).toEqual(sdk.steps.map((step) => step.model.modelId));
  const answered = (doc.steps as Step[]).filter((step) => step.source === 'agent' && step.metrics !== undefined);
  expect(answered.map((step) => [step.model_name, step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual(
    sdk.steps.map((step) => [step.response.modelId, step.usage.inputTokens, step.usage.outputTokens]),
  );
  expect(hooksOf(recorded, 'post_api_request').map((p) => p.finish_reason)).toEqual(sdk.steps.map((step) => (step.finishReason === 'tool-calls' ? 'tool_calls' : step.finishReason)));
  expect([doc.final_metrics.total_prompt_tokens, doc.final_metrics.total_completion_tokens]).toEqual([sdk.totalUsage.inputTokens, sdk.totalUsage.outputTokens]);
  const llmStarts = atof.filter((event) => event.kind === 'scope' && event.category === 'llm' && event.scope_category === 'start');
  expect(llmStarts.map((event) => [event.name, event.metadata.provider, event.category_profile.model_name])).toEqual(sdk.steps.map((step) => [step.model.provider, step.model.provider, step.model.modelId]));
  // What `view` shows of either file: one LLM row per request, with that step's tokens.
  for (const of of ['atif', 'atof'] as const) {
    const rows = (await viewLines(recorded, of)).filter((line) => /─ LLM /.test(line));
    expect(rows.map((row, i) => [row.includes(` ${sdk.steps[i]?.usage.inputTokens} in`), row.includes(`/ ${sdk.steps[i]?.usage.outputTokens} out`)]), of).toEqual(sdk.steps.map(() => [true, true]));
  }
}

const time = tool({ description: 'The local time of a city', inputSchema: z.object({ city: z.string() }), execute: async () => '14:00' });

describe('AI SDK: prepareStep', () => {
  for (const mode of MODES) {
    it(`${mode} (ToolLoopAgent): a stronger model of another provider for step 0, with one tool forced; the agent's own model after: each step names the model and provider that answered it and the tools it was offered`, async () => {
      const stream = mode === 'streamText';
      const fake = new FakeProvider();
      fake.reply('anthropic', { id: 'msg_1', model: SONNET, text: 'Let me look.', toolCalls: [{ id: 'toolu_w', name: 'weather', args: { city: 'Paris' } }], usage: { input: 140, output: 22, cached: 100 } }, { stream });
      fake.reply('chat', { id: 'chatcmpl-2', model: MINI, text: 'Sunny in Paris, 21°C.', usage: { input: 210, output: 9 } }, { stream });
      const recorded = recordedPlugin(`ai-options-prepare-${mode}`);
      uninstall = instrumentAiSdk(recorded.hooks);
      const strong = anthropic(fake)('claude-sonnet-4-5');
      // As the SDK's loop-control docs write it: a different model, tool choice and active tools for the first step.
      const agent = new ToolLoopAgent({
        model: openai(fake).chat('gpt-4o-mini'),
        tools: { weather, time },
        stopWhen: stepCountIs(4),
        prepareStep: async ({ stepNumber }) => (stepNumber === 0 ? { model: strong, toolChoice: { type: 'tool', toolName: 'weather' }, activeTools: ['weather'] } : { activeTools: [] }),
      });
      let sdk: SdkRun;
      if (stream) {
        const result = await agent.stream({ prompt: 'Weather in Paris?' });
        sdk = { text: await result.text, steps: await result.steps, totalUsage: await result.totalUsage };
      } else {
        sdk = await agent.generate({ prompt: 'Weather in Paris?' });
      }
      expect(sdk.text).toBe('Sunny in Paris, 21°C.');
      expect(sdk.steps.map((step) => [step.model.provider, step.response.modelId])).toEqual([
        ['anthropic.messages', SONNET],
        ['openai.chat', MINI],
      ]);
      expect(fake.requests.map((r) => [r.url.includes('anthropic') ? 'anthropic' : 'openai', r.body.model, toolNames(r.body.tools)])).toEqual([
        ['anthropic', 'claude-sonnet-4-5', ['weather']],
        ['openai', 'gpt-4o-mini', []],
      ]);

      const { doc, atof } = await finishedRun(recorded);
      await expectStepsAsSdk(recorded, doc, atof, sdk, fake.requests);
      // The tool choice each request asked for, in the one spelling requests are written in (Chat Completions'):
      // step 0 forced the weather tool; step 1 left it to the model.
      expect(hooksOf(recorded, 'pre_api_request').map((p) => p.request.body.tool_choice)).toEqual([{ type: 'function', function: { name: 'weather' } }, undefined]);
      expect((doc.steps as Step[]).at(-1)!.message).toBe(sdk.text);
      expect(JSON.parse(results(doc).find((r) => r.source_call_id === 'toolu_w')!.content)).toEqual({ city: 'Paris', forecast: 'sunny', tempC: 21 });
      // What `view` shows from either file, the same: each LLM row the model that answered and the one its request asked
      // for (the provider each call went to is in the details pane: the ATOF scope's name, the step's ancestry).
      const llmRows = async (of: 'atif' | 'atof') => (await viewLines(recorded, of)).filter((line) => /─ LLM /.test(line)).map((line) => line.replace(/^.*─ LLM /, '').split('  ')[0]);
      const models = [`${SONNET} (asked claude-sonnet-4-5)`, `${MINI} (asked gpt-4o-mini)`];
      expect(await llmRows('atif')).toEqual(models);
      expect(await llmRows('atof')).toEqual(models);
      await sameOnNative(recorded);
    });
  }
});

describe('AI SDK: prepareStep that rewrites the prompt', () => {
  for (const mode of MODES) {
    it(`${mode}: other instructions and fewer messages for a later step (the docs' context management): each request is recorded as sent; the turn's user step and history are the run's`, async () => {
      const stream = mode === 'streamText';
      const fake = new FakeProvider();
      fake.reply('chat', { id: 'chatcmpl-1', model: MINI, toolCalls: [{ id: 'call_1', name: 'weather', args: { city: 'Paris' } }], usage: { input: 120, output: 14 } }, { stream });
      fake.reply('chat', { id: 'chatcmpl-2', model: MINI, text: 'Sunny.', usage: { input: 60, output: 3 } }, { stream });
      const recorded = recordedPlugin(`ai-options-prepare-messages-${mode}`);
      uninstall = instrumentAiSdk(recorded.hooks);
      const history = [
        { role: 'user' as const, content: 'Hi, I plan a trip.' },
        { role: 'assistant' as const, content: 'Where to?' },
        { role: 'user' as const, content: 'Weather in Paris?' },
      ];
      const options = {
        model: openai(fake).chat('gpt-4o-mini'),
        instructions: 'You are a travel assistant.',
        messages: history,
        tools: { weather },
        stopWhen: stepCountIs(3),
        // Keep the request small after the first step: other instructions, the last three messages only.
        prepareStep: async ({ stepNumber, messages }: { stepNumber: number; messages: unknown[] }) =>
          stepNumber === 0 ? undefined : { instructions: 'Answer in one word.', messages: messages.slice(-3) as never },
      };
      let sdk: SdkRun;
      if (stream) {
        const result = streamText(options);
        sdk = { text: await result.text, steps: await result.steps, totalUsage: await result.totalUsage };
      } else {
        const result = await generateText(options);
        sdk = { text: result.text, steps: result.steps, totalUsage: result.totalUsage };
      }
      expect(sdk.text).toBe('Sunny.');
      const sent = fake.requests.map((r) => (r.body.messages as Step[]).map((m) => m.role));
      expect(sent).toEqual([
        ['system', 'user', 'assistant', 'user'],
        ['system', 'user', 'assistant', 'tool'],
      ]);
      expect(fake.requests[1]!.body.messages[0].content).toBe('Answer in one word.');

      const { doc, atof } = await finishedRun(recorded);
      await expectStepsAsSdk(recorded, doc, atof, sdk, fake.requests);
      // Each request as the provider got it: its instructions and its messages, in order.
      const recordedRequests = hooksOf(recorded, 'pre_api_request').map((p) => (p.request.body.messages as Step[]).map((m) => [m.role, typeof m.content === 'string' ? m.content : null]));
      expect(recordedRequests).toEqual(fake.requests.map((r) => (r.body.messages as Step[]).map((m) => [m.role, typeof m.content === 'string' ? m.content : null])));
      // The turn is the run's: its last user message, the earlier ones its history (not the step's pruned prompt).
      const steps = doc.steps as Step[];
      expect(steps.filter((step) => step.source === 'user').map((step) => step.message)).toEqual(['Weather in Paris?']);
      await sameOnNative(recorded);
    });
  }
});

describe('AI SDK: a tool that throws and a tool that does not exist, with no repair', () => {
  for (const mode of MODES) {
    it(`${mode}: both calls failed with the error the SDK answered the model with (a tool-error part), once, before the next request`, async () => {
      const stream = mode === 'streamText';
      const fake = new FakeProvider();
      fake.reply('anthropic', {
        id: 'msg_1',
        model: SONNET,
        toolCalls: [
          { id: 'toolu_broken', name: 'stocks', args: { symbol: 'NVDA' } },
          { id: 'toolu_missing', name: 'news', args: { topic: 'NVDA' } },
        ],
        usage: { input: 100, output: 30 },
      }, { stream });
      fake.reply('anthropic', { id: 'msg_2', model: SONNET, text: 'I could not get the price.', usage: { input: 260, output: 10 } }, { stream });
      const recorded = recordedPlugin(`ai-options-tool-errors-${mode}`);
      uninstall = instrumentAiSdk(recorded.hooks);
      const tools = {
        stocks: tool({
          description: 'The price of a stock',
          inputSchema: z.object({ symbol: z.string() }),
          execute: async (): Promise<number> => {
            throw new Error('quote service unavailable');
          },
        }),
      } satisfies ToolSet;
      const options = { model: anthropic(fake)('claude-sonnet-4-5'), prompt: 'Price of NVDA and its news?', tools, stopWhen: stepCountIs(3) };
      let sdk: SdkRun & { content: Step[] };
      if (stream) {
        const result = streamText(options);
        const steps = await result.steps;
        sdk = { text: await result.text, steps, totalUsage: await result.totalUsage, content: steps[0]!.content as never };
      } else {
        const result = await generateText(options);
        sdk = { text: result.text, steps: result.steps, totalUsage: result.totalUsage, content: result.steps[0]!.content as never };
      }
      expect(sdk.text).toBe('I could not get the price.');
      const errors = new Map(sdk.content.filter((part) => part.type === 'tool-error').map((part) => [part.toolCallId as string, part.error as Error]));
      expect([...errors.keys()].sort()).toEqual(['toolu_broken', 'toolu_missing']);
      expect(errors.get('toolu_broken')!.message).toBe('quote service unavailable');
      expect(String(errors.get('toolu_missing'))).toMatch(/AI_NoSuchToolError: Model tried to call unavailable tool 'news'/);
      // What the model was told of each, in the next request's tool_result blocks.
      const told = new Map(
        (fake.requests[1]!.body.messages as Step[]).flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b: Step) => b.type === 'tool_result').map((b: Step) => [b.tool_use_id, b]),
      );
      expect(told.get('toolu_broken')).toMatchObject({ is_error: true });
      expect(told.get('toolu_broken')!.content).toContain('quote service unavailable');
      expect(told.get('toolu_missing')).toMatchObject({ is_error: true });

      const { doc, atof } = await finishedRun(recorded);
      await expectStepsAsSdk(recorded, doc, atof, sdk, fake.requests);
      const calls = (doc.steps as Step[]).flatMap((step) => step.tool_calls ?? []);
      expect(calls.map((call: Step) => [call.tool_call_id, call.function_name, call.arguments]).sort()).toEqual([
        ['toolu_broken', 'stocks', { symbol: 'NVDA' }],
        ['toolu_missing', 'news', { topic: 'NVDA' }],
      ]);
      const outcome = (id: string) => results(doc).find((r) => r.source_call_id === id)!;
      expect(outcome('toolu_broken').extra.metadata.status).toBe('error');
      // Each outcome is the text the model was told of it.
      for (const id of ['toolu_broken', 'toolu_missing']) expect(outcome(id).content, id).toBe(told.get(id)!.content);
      expect(outcome('toolu_missing').extra.metadata).toMatchObject({ status: 'error', 'error.type': 'AI_NoSuchToolError' });
      expect(outcome('toolu_missing').content).toBe(String(errors.get('toolu_missing')));
      // Each call started and ended once, both before the request that followed.
      for (const name of ['pre_tool_call', 'post_tool_call']) expect(hooksOf(recorded, name).map((p) => p.tool_call_id).sort()).toEqual(['toolu_broken', 'toolu_missing']);
      const order = recorded.log.filter((e) => e.hook === 'pre_api_request' || e.hook === 'post_tool_call').map((e) => (e.hook === 'pre_api_request' ? 'request' : 'tool'));
      expect(order).toEqual(['request', 'tool', 'tool', 'request']);
      for (const of of ['atif', 'atof'] as const) {
        const lines = (await viewLines(recorded, of)).filter((line) => /✗ tool /.test(line));
        expect(lines.some((line) => /tool stocks .*quote service unavailable/.test(line)), of).toBe(true);
        expect(lines.some((line) => /tool news .*AI_NoSuchToolError/.test(line)), of).toBe(true);
      }
      await sameOnNative(recorded);
    });
  }
});

const PROMPT = 'Three cities with sunny weather, please.';
const USAGE = { input: 70, output: 25, cached: 0 };

/** `output` as ai 7's docs write each kind, the model's text for it, and what the program gets parsed. */
const OUTPUTS = [
  { kind: 'Output.array', output: () => Output.array({ element: z.object({ city: z.string(), tempC: z.number() }) }), text: '{"elements":[{"city":"Lisbon","tempC":24},{"city":"Madrid","tempC":27}]}', parsed: [{ city: 'Lisbon', tempC: 24 }, { city: 'Madrid', tempC: 27 }], bad: '{"elements":[{"city":"Lisbon"}]}' },
  { kind: 'Output.choice', output: () => Output.choice({ options: ['sunny', 'rainy', 'cloudy'] }), text: '{"result":"sunny"}', parsed: 'sunny', bad: '{"result":"snowy"}' },
  { kind: 'Output.json', output: () => Output.json(), text: '{"cities":["Lisbon","Madrid"],"note":"both sunny"}', parsed: { cities: ['Lisbon', 'Madrid'], note: 'both sunny' }, bad: '{"cities": ["Lisbon"' },
] as const;

describe('AI SDK: output as Output.array, Output.choice and Output.json', () => {
  for (const spec of OUTPUTS) {
    for (const mode of MODES) {
      it(`${mode} with ${spec.kind}: the answer is the model's JSON, once, with the SDK's tokens`, async () => {
        const stream = mode === 'streamText';
        const fake = new FakeProvider().reply('responses', { id: 'resp_1', model: 'gpt-4o-2024-08-06', text: spec.text, usage: USAGE }, { stream });
        const recorded = recordedPlugin(`ai-options-${spec.kind}-${mode}`);
        uninstall = instrumentAiSdk(recorded.hooks);
        const options = { model: openai(fake)('gpt-4o'), output: spec.output() as never, prompt: PROMPT };
        let sdk: SdkRun & { output: unknown };
        if (stream) {
          const result = streamText(options);
          sdk = { output: await result.output, text: await result.text, steps: await result.steps, totalUsage: await result.totalUsage };
        } else {
          sdk = await generateText(options);
        }
        expect(sdk.output).toEqual(spec.parsed);
        // The request asked for JSON (a schema, or a json_object format for Output.json).
        expect(fake.requests[0]!.body.text?.format?.type).toMatch(/^json_/);
        const { doc, atof } = await finishedRun(recorded);
        await expectStepsAsSdk(recorded, doc, atof, sdk, fake.requests);
        expect((doc.steps as Step[]).map((step) => [step.source, step.message])).toEqual([
          ['user', PROMPT],
          ['agent', sdk.text],
        ]);
        expect(JSON.parse(sdk.text)).toEqual(JSON.parse(spec.text));
        expect(hooksOf(recorded, 'post_llm_call').map((p) => p.assistant_response)).toEqual([sdk.text]);
        await sameOnNative(recorded);
      });
    }

    it(`generateText with ${spec.kind}: an answer that does not parse ends the turn failed with the SDK's NoObjectGeneratedError; the step keeps the model's text and tokens`, async () => {
      const fake = new FakeProvider().reply('responses', { id: 'resp_1', model: 'gpt-4o-2024-08-06', text: spec.bad, usage: USAGE });
      const recorded = recordedPlugin(`ai-options-${spec.kind}-bad`);
      uninstall = instrumentAiSdk(recorded.hooks);
      let error: unknown;
      try {
        await generateText({ model: openai(fake)('gpt-4o'), output: spec.output() as never, prompt: PROMPT });
      } catch (caught) {
        error = caught;
      }
      expect(NoObjectGeneratedError.isInstance(error)).toBe(true);
      const thrown = error as NoObjectGeneratedError;
      expect(hooksOf(recorded, 'post_llm_call')).toEqual([]);
      const { doc, agent } = await finishedRun(recorded);
      expect(agent.map((step) => [step.message, step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual([[spec.bad, thrown.usage!.inputTokens, thrown.usage!.outputTokens]]);
      await expectTurnEndInAtif(recorded, doc, { status: 'failed', error: thrown });
      await sameOnNative(recorded);
    });

    it(`streamText with ${spec.kind}: an answer that does not parse rejects \`output\` after the run; the turn completed with the model's text`, async () => {
      const fake = new FakeProvider().reply('responses', { id: 'resp_1', model: 'gpt-4o-2024-08-06', text: spec.bad, usage: USAGE }, { stream: true });
      const recorded = recordedPlugin(`ai-options-${spec.kind}-bad-stream`);
      uninstall = instrumentAiSdk(recorded.hooks);
      const result = streamText({ model: openai(fake)('gpt-4o'), output: spec.output() as never, prompt: PROMPT });
      const text = await result.text;
      await expect(result.output).rejects.toSatisfy((error) => NoObjectGeneratedError.isInstance(error));
      const { agent } = await finishedRun(recorded);
      expect(agent.map((step) => step.message)).toEqual([text]);
      expect(text).toBe(spec.bad);
      expect(hooksOf(recorded, 'on_session_end')).toMatchObject([{ completed: true }]);
      await sameOnNative(recorded);
    });
  }
});

describe('AI SDK: output with tools (a ToolLoopAgent that calls a tool, then answers in the schema)', () => {
  for (const mode of MODES) {
    it(`${mode}: the answer is the last step's JSON; the tool step before it is recorded as any`, async () => {
      const stream = mode === 'streamText';
      const fake = new FakeProvider();
      fake.reply('responses', { id: 'resp_1', model: 'gpt-4o-2024-08-06', toolCalls: [{ id: 'call_w', name: 'weather', args: { city: 'Lisbon' } }], usage: { input: 90, output: 14 } }, { stream });
      fake.reply('responses', { id: 'resp_2', model: 'gpt-4o-2024-08-06', text: '{"elements":[{"city":"Lisbon","tempC":21}]}', usage: { input: 160, output: 18 } }, { stream });
      const recorded = recordedPlugin(`ai-options-output-tools-${mode}`);
      uninstall = instrumentAiSdk(recorded.hooks);
      const agent = new ToolLoopAgent({
        model: openai(fake)('gpt-4o'),
        tools: { weather },
        output: Output.array({ element: z.object({ city: z.string(), tempC: z.number() }) }),
        stopWhen: stepCountIs(3),
      });
      let sdk: SdkRun & { output: unknown };
      if (stream) {
        const result = await agent.stream({ prompt: PROMPT });
        sdk = { output: await result.output, text: await result.text, steps: await result.steps, totalUsage: await result.totalUsage };
      } else {
        const result = await agent.generate({ prompt: PROMPT });
        sdk = { output: result.output, text: result.text, steps: result.steps, totalUsage: result.totalUsage };
      }
      expect(sdk.output).toEqual([{ city: 'Lisbon', tempC: 21 }]);
      const { doc, atof } = await finishedRun(recorded);
      await expectStepsAsSdk(recorded, doc, atof, sdk, fake.requests);
      expect((doc.steps as Step[]).at(-1)!.message).toBe(sdk.text);
      expect(hooksOf(recorded, 'post_llm_call').map((p) => p.assistant_response)).toEqual([sdk.text]);
      expect(hooksOf(recorded, 'on_session_end')).toMatchObject([{ completed: true }]);
      await sameOnNative(recorded);
    });
  }
});

describe('AI SDK: experimental_transform: smoothStream()', () => {
  const ANSWER = 'The weather in Paris is sunny, 21°C, with a light breeze from the west.\nTomorrow: showers.';
  for (const chunking of ['word', 'line'] as const) {
    it(`streamText with tools, smoothStream({ chunking: '${chunking}' }): the recorded text is the whole answer, once, as the program read it`, async () => {
      const fake = new FakeProvider();
      fake.reply('responses', { id: 'resp_1', model: 'gpt-4o-2024-08-06', text: 'Checking the forecast.', toolCalls: [{ id: 'call_w', name: 'weather', args: { city: 'Paris' } }], usage: { input: 90, output: 15 } }, { stream: true });
      fake.reply('responses', { id: 'resp_2', model: 'gpt-4o-2024-08-06', text: ANSWER, usage: { input: 200, output: 25 } }, { stream: true });
      const recorded = recordedPlugin(`ai-options-smooth-${chunking}`);
      uninstall = instrumentAiSdk(recorded.hooks);
      const result = streamText({
        model: openai(fake)('gpt-4o'),
        prompt: 'Weather in Paris?',
        tools: { weather },
        stopWhen: stepCountIs(3),
        experimental_transform: smoothStream({ delayInMs: 1, chunking }),
      });
      let read = '';
      for await (const delta of result.textStream) read += delta;
      const sdk: SdkRun = { text: await result.text, steps: await result.steps, totalUsage: await result.totalUsage };
      expect(read).toBe(`Checking the forecast.${ANSWER}`);
      expect(sdk.text).toBe(ANSWER);
      const { doc, atof } = await finishedRun(recorded);
      await expectStepsAsSdk(recorded, doc, atof, sdk, fake.requests);
      const agent = (doc.steps as Step[]).filter((step) => step.source === 'agent');
      expect(agent.map((step) => step.message)).toEqual(['Checking the forecast.', ANSWER]);
      // Each model call's response, in the hooks and in its ATOF span, is the step's text as the SDK reports it.
      expect(hooksOf(recorded, 'post_api_request').map((p) => p.assistant_message.content)).toEqual(sdk.steps.map((step) => (step as unknown as { text: string }).text));
      const llmEnds = atof.filter((event) => event.kind === 'scope' && event.category === 'llm' && event.scope_category === 'end');
      expect(llmEnds.map((event) => JSON.stringify(event.data)).map((data) => [data.includes(JSON.stringify('Checking the forecast.')), data.includes(JSON.stringify(ANSWER))])).toEqual([
        [true, false],
        [false, true],
      ]);
      expect(hooksOf(recorded, 'post_llm_call').map((p) => p.assistant_response)).toEqual([ANSWER]);
      await sameOnNative(recorded);
    });
  }
});

describe('AI SDK: tools as the docs write them beyond tool({ execute })', () => {
  for (const mode of MODES) {
    it(`${mode}: a dynamicTool, a tool with toModelOutput, a tool streaming preliminary results (async generator) with onInputStart/onInputDelta/onInputAvailable: each call once, its final result its outcome`, async () => {
      const stream = mode === 'streamText';
      const fake = new FakeProvider();
      fake.reply('chat', {
        id: 'chatcmpl-1',
        model: MINI,
        toolCalls: [
          { id: 'call_search', name: 'wiki', args: { query: 'office hours' } },
          { id: 'call_weather', name: 'weather', args: { city: 'Paris' } },
          { id: 'call_report', name: 'report', args: { month: 'May' } },
        ],
        usage: { input: 150, output: 40 },
      }, { stream });
      fake.reply('chat', { id: 'chatcmpl-2', model: MINI, text: 'Open 9-17; sunny; sales up.', usage: { input: 320, output: 12 } }, { stream });
      const recorded = recordedPlugin(`ai-options-tools-${mode}`);
      uninstall = instrumentAiSdk(recorded.hooks);
      const inputEvents: string[] = [];
      const preliminary: unknown[] = [];
      const rows = Array.from({ length: 5 }, (_, i) => ({ day: i + 1, sales: 100 + i }));
      const tools = {
        // A tool whose schema is known only at run time (what MCP tools become): input and output are `unknown`.
        wiki: dynamicTool({
          description: 'Search the company wiki',
          inputSchema: jsonSchema({ type: 'object', properties: { query: { type: 'string' } }, required: ['query'] }),
          execute: async (input) => ({ hits: [`${(input as { query: string }).query}: 9-17`] }),
        }),
        // Preliminary results, as the docs' streaming tool writes them: the last value yielded is the result.
        weather: tool({
          description: 'Get the weather for a city',
          inputSchema: z.object({ city: z.string() }),
          onInputStart: ({ toolCallId }) => void inputEvents.push(`start ${toolCallId}`),
          onInputDelta: ({ toolCallId }) => void inputEvents.push(`delta ${toolCallId}`),
          onInputAvailable: ({ toolCallId, input }) => void inputEvents.push(`available ${toolCallId} ${input.city}`),
          async *execute({ city }) {
            yield { status: 'loading' as const, city };
            yield { status: 'done' as const, city, forecast: 'sunny' };
          },
        }),
        // The model is told a summary; the program's result keeps the rows.
        report: tool({
          description: 'The sales report of a month',
          inputSchema: z.object({ month: z.string() }),
          execute: async ({ month }) => ({ month, rows, summary: `${month}: sales up 4%` }),
          toModelOutput: ({ output }) => ({ type: 'text', value: output.summary }),
        }),
      } satisfies ToolSet;
      const options = { model: openai(fake).chat('gpt-4o-mini'), prompt: 'Office hours, weather in Paris, and the May report?', tools, stopWhen: stepCountIs(3) };
      let sdk: SdkRun & { toolResults: Step[] };
      if (stream) {
        const result = streamText(options);
        for await (const part of result.fullStream) if (part.type === 'tool-result' && part.preliminary === true) preliminary.push(part.output);
        const steps = await result.steps;
        sdk = { text: await result.text, steps, totalUsage: await result.totalUsage, toolResults: steps[0]!.toolResults as never };
      } else {
        const result = await generateText(options);
        sdk = { text: result.text, steps: result.steps, totalUsage: result.totalUsage, toolResults: result.steps[0]!.toolResults as never };
      }
      expect(sdk.text).toBe('Open 9-17; sunny; sales up.');
      if (stream) {
        expect(preliminary).toEqual([{ status: 'loading', city: 'Paris' }, { status: 'done', city: 'Paris', forecast: 'sunny' }]);
        expect(inputEvents[0]).toBe('start call_weather');
        expect(inputEvents.filter((event) => event.startsWith('delta')).length).toBeGreaterThan(0);
      } else {
        expect(inputEvents).toEqual(['start call_weather', 'available call_weather Paris']);
      }
      expect(inputEvents.at(-1)).toBe('available call_weather Paris');
      const sdkResults = Object.fromEntries(sdk.toolResults.map((part) => [part.toolCallId, part.output]));
      expect(sdkResults.call_weather).toEqual({ status: 'done', city: 'Paris', forecast: 'sunny' });
      // What the model was told of the report: the summary toModelOutput made, not the rows.
      const toolMessages = (fake.requests[1]!.body.messages as Step[]).filter((m) => m.role === 'tool');
      expect(toolMessages.find((m) => m.tool_call_id === 'call_report')!.content).toBe('May: sales up 4%');

      const { doc, atof } = await finishedRun(recorded);
      await expectStepsAsSdk(recorded, doc, atof, sdk, fake.requests);
      const calls = (doc.steps as Step[]).flatMap((step) => step.tool_calls ?? []);
      expect(calls.map((call: Step) => [call.tool_call_id, call.function_name, call.arguments])).toEqual([
        ['call_search', 'wiki', { query: 'office hours' }],
        ['call_weather', 'weather', { city: 'Paris' }],
        ['call_report', 'report', { month: 'May' }],
      ]);
      for (const name of ['pre_tool_call', 'post_tool_call']) expect(hooksOf(recorded, name).map((p) => p.tool_call_id).sort()).toEqual(['call_report', 'call_search', 'call_weather']);
      // Each outcome is what the model was told of the call: the tool's result as the SDK reports it (the final value
      // of the generator, once), or what toModelOutput made of it (the report's summary, not its rows).
      const outcome = (id: string) => results(doc).find((r) => r.source_call_id === id)!;
      for (const id of ['call_search', 'call_weather', 'call_report']) expect(outcome(id).extra.metadata.status, id).toBe('ok');
      for (const id of ['call_search', 'call_weather']) expect(JSON.parse(outcome(id).content), id).toEqual(sdkResults[id]);
      expect(outcome('call_report').content).toBe(toolMessages.find((m) => m.tool_call_id === 'call_report')!.content);
      // The request after them carries what the model was told, the report's summary included.
      const second = hooksOf(recorded, 'pre_api_request')[1]!.request.body.messages as Step[];
      expect(second.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content])).toEqual(toolMessages.map((m) => [m.tool_call_id, m.content]));
      await sameOnNative(recorded);
    });
  }
});

describe('AI SDK: embed and embedMany in a RAG program', () => {
  it('embedMany indexes the documents, embed runs in the retrieval tool, generateText answers: the trajectory is the run alone, the embedding calls are not recorded', async () => {
    const fake = new FakeProvider();
    const docs = ['The office opens at 9.', 'The office closes at 17.', 'Parking is free on Sundays.'];
    fake.embeddings('text-embedding-3-small', [[1, 0, 0], [0.9, 0.1, 0], [0, 0, 1]], 18);
    fake.reply('chat', { id: 'chatcmpl-1', model: MINI, toolCalls: [{ id: 'call_info', name: 'getInformation', args: { question: 'When does the office open?' } }], usage: { input: 120, output: 18 } });
    fake.embeddings('text-embedding-3-small', [[0.95, 0.05, 0]], 7);
    fake.reply('chat', { id: 'chatcmpl-2', model: MINI, text: 'It opens at 9.', usage: { input: 190, output: 6 } });
    const recorded = recordedPlugin('ai-options-rag');
    uninstall = instrumentAiSdk(recorded.hooks);
    const provider = openai(fake);
    const embeddingModel = provider.embedding('text-embedding-3-small');
    // As the AI SDK's RAG guide writes it: index the chunks, then a tool that finds the nearest to the question.
    const indexed = await embedMany({ model: embeddingModel, values: docs });
    const store = docs.map((content, i) => ({ content, embedding: indexed.embeddings[i]! }));
    const result = await generateText({
      model: provider.chat('gpt-4o-mini'),
      system: 'Answer from the knowledge base only; call getInformation first.',
      prompt: 'When does the office open?',
      stopWhen: stepCountIs(3),
      tools: {
        getInformation: tool({
          description: 'Get information from the knowledge base',
          inputSchema: z.object({ question: z.string() }),
          execute: async ({ question }) => {
            const { embedding } = await embed({ model: embeddingModel, value: question });
            return store
              .map((entry) => ({ content: entry.content, similarity: cosineSimilarity(embedding, entry.embedding) }))
              .filter((entry) => entry.similarity > 0.5)
              .map((entry) => entry.content);
          },
        }),
      },
    });
    expect(result.text).toBe('It opens at 9.');
    expect(fake.requests.map((r) => new URL(r.url).pathname)).toEqual(['/v1/embeddings', '/v1/chat/completions', '/v1/embeddings', '/v1/chat/completions']);

    const { doc, atof } = await finishedRun(recorded);
    const chatRequests = fake.requests.filter((r) => r.url.endsWith('/chat/completions'));
    await expectStepsAsSdk(recorded, doc, atof, result, chatRequests);
    expect(hooksOf(recorded, 'on_session_start')).toHaveLength(1);
    expect(JSON.parse(results(doc).find((r) => r.source_call_id === 'call_info')!.content)).toEqual(['The office opens at 9.', 'The office closes at 17.']);
    // Nothing names an embedding model, and the totals are the run's (the embeddings' tokens are not the model's).
    expect(JSON.stringify(atof)).not.toContain('text-embedding-3-small');
    expect(doc.final_metrics.total_prompt_tokens).toBe(result.totalUsage.inputTokens);
    await sameOnNative(recorded);
  });
});

describe('AI SDK: streamText callbacks, consumeStream() and toUIMessageStream()', () => {
  for (const read of ['consumeStream', 'toUIMessageStream'] as const) {
    it(`onStepFinish and onFinish, the stream read by ${read}(): what the callbacks are given is what the trajectory says`, async () => {
      const fake = new FakeProvider();
      fake.reply('anthropic', { id: 'msg_1', model: SONNET, text: 'Checking.', toolCalls: [{ id: 'toolu_w', name: 'weather', args: { city: 'Paris' } }], usage: { input: 100, output: 20, cached: 40, cacheWrite: 10 } }, { stream: true });
      fake.reply('anthropic', { id: 'msg_2', model: SONNET, text: 'Sunny, 21°C.', usage: { input: 200, output: 9, cached: 140 } }, { stream: true });
      const recorded = recordedPlugin(`ai-options-callbacks-${read}`);
      uninstall = instrumentAiSdk(recorded.hooks);
      const stepUsages: LanguageModelUsage[] = [];
      const errors: unknown[] = [];
      let finished: SdkRun | undefined;
      const result = streamText({
        model: anthropic(fake)('claude-sonnet-4-5'),
        prompt: 'Weather in Paris?',
        tools: { weather },
        stopWhen: stepCountIs(3),
        onStepFinish: (step) => void stepUsages.push(step.usage),
        onFinish: ({ text, steps, totalUsage }) => void (finished = { text, steps, totalUsage }),
        onError: ({ error }) => void errors.push(error),
      });
      if (read === 'consumeStream') await result.consumeStream();
      else {
        const types: string[] = [];
        for await (const chunk of result.toUIMessageStream()) types.push(chunk.type);
        expect(types).toContain('tool-output-available');
        expect(types.at(-1)).toBe('finish');
      }
      await result.totalUsage;
      expect(errors).toEqual([]);
      expect(finished!.text).toBe('Sunny, 21°C.');
      expect(stepUsages).toEqual(finished!.steps.map((step) => step.usage));
      // Anthropic's cache counts: the SDK's input tokens are the uncached, the cache reads and the cache writes.
      expect(stepUsages[0]!.inputTokens).toBe(150);

      const { doc, atof } = await finishedRun(recorded);
      await expectStepsAsSdk(recorded, doc, atof, finished!, fake.requests);
      const answered = (doc.steps as Step[]).filter((step) => step.source === 'agent' && step.metrics !== undefined);
      // The trajectory's cached tokens are the cache's part of the prompt, reads and writes (as providers.test.ts holds).
      expect(answered.map((step) => step.metrics.cached_tokens)).toEqual(stepUsages.map((usage) => (usage.inputTokenDetails.cacheReadTokens ?? 0) + (usage.inputTokenDetails.cacheWriteTokens ?? 0)));
      expect(hooksOf(recorded, 'post_llm_call').map((p) => p.assistant_response)).toEqual([finished!.text]);
      await sameOnNative(recorded);
    });
  }

  it('onError: a request the provider refuses ends the turn failed with the error onError was given; consumeStream() resolves', async () => {
    const fake = new FakeProvider().fail('anthropic', 400, 'prompt is too long: 210000 tokens > 200000 maximum');
    const recorded = recordedPlugin('ai-options-callbacks-error');
    uninstall = instrumentAiSdk(recorded.hooks);
    const errors: Error[] = [];
    let finished = false;
    const result = streamText({
      model: anthropic(fake)('claude-sonnet-4-5'),
      prompt: 'Weather in Paris?',
      tools: { weather },
      onError: ({ error }) => void errors.push(error as Error),
      onFinish: () => void (finished = true),
    });
    await result.consumeStream();
    expect(finished).toBe(false);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toBe('prompt is too long: 210000 tokens > 200000 maximum');
    // One request, failed as the program was told: its status, not retryable, the error onError was given.
    expect(fake.requests).toHaveLength(1);
    expect(hooksOf(recorded, 'api_request_error')).toEqual([expect.objectContaining({ status_code: 400, retryable: false, error: { type: errors[0]!.name, message: errors[0]!.message } })]);
    expect(hooksOf(recorded, 'on_session_end')).toMatchObject([{ completed: false, failed: true, error_type: errors[0]!.name, error_message: errors[0]!.message }]);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = onlyTrajectory(atif);
    await expectTurnEndInAtif(recorded, doc, { status: 'failed', error: errors[0]! });
    await sameOnNative(recorded);
  });
});
