// The AI SDK adapter when the model misbehaves, on programs written as the
// SDK's docs write them (generateText / streamText with tools and stopWhen,
// experimental_repairToolCall, prepareStep), driving the real OpenAI
// provider over the fake fetch that speaks Chat Completions (JSON and SSE).
// A call the SDK refuses (NoSuchToolError, InvalidToolInputError) never runs
// its tool and fires no tool event: the trajectory still holds it as the
// model asked for it, failed with the error text the model was sent, before
// the model call that follows; memory and native write the same files.
import { STREAM_REPAIR_OUTSIDE_STEP } from './stream-repair.ts';
import { afterEach, describe, expect, it } from 'vitest';
import { NoSuchToolError, generateText, stepCountIs, streamText, tool, type LanguageModel, type ToolSet } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import * as z from 'zod';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { sameOnNative } from '../same-on-native.ts';
import { expectNothingLost, recordedPlugin, viewLines, type AtifDoc, type Recorded } from '../support.ts';
import { FakeProvider, type Turn } from './wire.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

const MINI = 'gpt-4o-mini-2024-07-18';
const GPT = 'gpt-4.1-2025-04-14';

const chat = (fake: FakeProvider, model = 'gpt-4o-mini'): LanguageModel => createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch }).chat(model);

const tools = {
  weather: tool({
    description: 'Get the weather for a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => ({ city, forecast: 'sunny', tempC: 21 }),
  }),
} satisfies ToolSet;

/** A `prepareStep` as the SDK's docs write one: before the first step, a model plans it, and its answer is the step's instructions. */
const planFirstStep =
  (fake: FakeProvider) =>
  async ({ stepNumber }: { stepNumber: number }): Promise<{ instructions: string } | undefined> => {
    if (stepNumber > 0) return undefined;
    const plan = await generateText({ model: chat(fake, 'gpt-4.1'), prompt: 'Plan the first step.' });
    return { instructions: plan.text };
  };

type Step = Record<string, any>;
const stepsOf = (doc: AtifDoc): Step[] => doc.steps as Step[];
const answered = (doc: AtifDoc): Step[] => stepsOf(doc).filter((step) => step.source === 'agent' && step.metrics !== undefined);
const results = (doc: AtifDoc): Step[] => stepsOf(doc).flatMap((step) => step.observation?.results ?? []);
const hooksOf = (recorded: Recorded, name: string) => recorded.log.filter((entry) => entry.hook === name).map((entry) => entry.payload as Record<string, any>);

/** The text the SDK sent the model for a call, in the tool message of a later request (Chat Completions). */
function toldTheModel(fake: FakeProvider, request: number, callId: string): string {
  const message = (fake.requests[request]!.body.messages as Step[]).find((m) => m.role === 'tool' && m.tool_call_id === callId);
  expect(message, `the tool message for ${callId}`).toBeDefined();
  return String(message!.content);
}

/** Each call id started once and ended once, and every start before the request that follows its model call. */
function expectEachCallOnce(recorded: Recorded, ids: string[]): void {
  for (const name of ['pre_tool_call', 'post_tool_call']) expect(hooksOf(recorded, name).map((p) => p.tool_call_id).sort()).toEqual([...ids].sort());
}

/** The order of the run's requests and tool hooks, by hook name and id. */
function sequence(recorded: Recorded): string[] {
  return recorded.log.filter((e) => e.hook === 'pre_api_request' || e.hook === 'post_tool_call').map((e) => (e.hook === 'pre_api_request' ? 'request' : `${e.payload.tool_call_id}:${e.payload.status}`));
}

describe('AI SDK: calls the SDK refuses are recorded as the model asked for them, failed with what the model was told', () => {
  for (const mode of ['generateText', 'streamText'] as const) {
    it(`${mode}: an unknown tool (NoSuchToolError) and input that fails the schema (InvalidToolInputError), then the model asks again`, async () => {
      const stream = mode === 'streamText';
      const fake = new FakeProvider();
      const first: Turn = {
        id: 'chatcmpl-1',
        model: MINI,
        text: 'Checking.',
        toolCalls: [
          { id: 'call_unknown', name: 'forecast', args: { city: 'Paris' } },
          { id: 'call_badinput', name: 'weather', args: { town: 'Paris' } },
        ],
        usage: { input: 120, output: 30 },
      };
      fake.reply('chat', first, { stream });
      fake.reply('chat', { id: 'chatcmpl-2', model: MINI, toolCalls: [{ id: 'call_ok', name: 'weather', args: { city: 'Paris' } }], usage: { input: 260, output: 12 } }, { stream });
      fake.reply('chat', { id: 'chatcmpl-3', model: MINI, text: 'Sunny, 21°C.', usage: { input: 330, output: 8, cached: 128 } }, { stream });
      const recorded = recordedPlugin(`ai-misbehave-${mode}`);
      uninstall = instrumentAiSdk(recorded.hooks);

      const options = { model: chat(fake), prompt: 'Weather in Paris?', tools, stopWhen: stepCountIs(5) };
      let steps: Array<{ content: Array<Record<string, any>>; usage: { inputTokens?: number; outputTokens?: number } }>;
      let totalUsage: { inputTokens?: number; outputTokens?: number };
      let text: string;
      if (stream) {
        const result = streamText(options);
        text = await result.text;
        steps = (await result.steps) as never;
        totalUsage = await result.totalUsage;
      } else {
        const result = await generateText(options);
        ({ text, totalUsage } = result);
        steps = result.steps as never;
      }
      expect(text).toBe('Sunny, 21°C.');
      expect(fake.requests).toHaveLength(3);
      // What the SDK itself says of the two calls: invalid, answered by a tool-error, never executed.
      const sdkErrors = new Map(steps[0]!.content.filter((part) => part.type === 'tool-error').map((part) => [part.toolCallId as string, String(part.error)]));
      expect([...sdkErrors.keys()]).toEqual(['call_unknown', 'call_badinput']);
      expect(sdkErrors.get('call_unknown')).toMatch(/AI_NoSuchToolError: Model tried to call unavailable tool 'forecast'/);
      expect(sdkErrors.get('call_badinput')).toMatch(/AI_InvalidToolInputError: Invalid input for tool weather/);

      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expect(atif).toHaveLength(1);
      const doc = atif[0]!;
      expect(validateAtif(doc)).toEqual([]);
      const [asked, again, last] = answered(doc);
      // The calls as the model sent them: name and arguments, the unknown tool's name included.
      expect(asked!.tool_calls.map((call: Step) => [call.tool_call_id, call.function_name, call.arguments])).toEqual([
        ['call_unknown', 'forecast', { city: 'Paris' }],
        ['call_badinput', 'weather', { town: 'Paris' }],
      ]);
      // Their outcome: failed, with the error the SDK produced, which is what the next request told the model.
      const outcome = (id: string) => results(doc).find((r) => r.source_call_id === id)!;
      for (const id of ['call_unknown', 'call_badinput']) {
        expect(outcome(id).extra.metadata.status).toBe('error');
        expect(outcome(id).content).toBe(sdkErrors.get(id));
        expect(toldTheModel(fake, 1, id)).toContain(JSON.stringify(sdkErrors.get(id)).slice(1, -1));
      }
      expect(outcome('call_unknown').extra.metadata['error.type']).toBe('AI_NoSuchToolError');
      expect(outcome('call_badinput').extra.metadata['error.type']).toBe('AI_InvalidToolInputError');
      // The model asked again, the tool ran, and nothing was invented or lost: three calls, each once, in order.
      expect(again!.tool_calls.map((call: Step) => call.tool_call_id)).toEqual(['call_ok']);
      expect(JSON.parse(outcome('call_ok').content)).toEqual({ city: 'Paris', forecast: 'sunny', tempC: 21 });
      expect(outcome('call_ok').extra.metadata.status).toBe('ok');
      expectEachCallOnce(recorded, ['call_unknown', 'call_badinput', 'call_ok']);
      expect(sequence(recorded)).toEqual(['request', 'call_unknown:error', 'call_badinput:error', 'request', 'call_ok:ok', 'request']);
      expect(last!.message).toBe('Sunny, 21°C.');
      // Tokens: each step what the SDK reported for it, the totals its totalUsage.
      expect(answered(doc).map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual(steps.map((step) => [step.usage.inputTokens, step.usage.outputTokens]));
      expect([doc.final_metrics.total_prompt_tokens, doc.final_metrics.total_completion_tokens]).toEqual([totalUsage.inputTokens, totalUsage.outputTokens]);
      // What `view` shows a user, from either file: the two calls failed with the SDK's errors, none `not run`.
      for (const of of ['atif', 'atof'] as const) {
        const tools = (await viewLines(recorded, of)).filter((line) => /(─ |✗ )tool \S+ /.test(line));
        expect(tools, of).toHaveLength(3);
        expect(tools[0], of).toMatch(/✗ tool forecast .*ERROR AI_NoSuchToolError: Model tried to call unavailable tool 'forecast'/);
        expect(tools[1], of).toMatch(/✗ tool weather .*ERROR AI_InvalidToolInputError: Invalid input for tool weather/);
        expect(tools[2], of).toMatch(/ tool weather .*\{"city":"Paris"\}/);
        expect(tools.join('\n'), of).not.toContain('not run');
      }
      await sameOnNative(recorded);
    });
  }
});

describe('AI SDK: experimental_repairToolCall with a model call of its own', () => {
  for (const mode of ['generateText', 'streamText'] as const) {
    it(`${mode}: the repaired call runs once with the repaired input; the repair's own generateText is recorded with its tokens`, async () => {
      const stream = mode === 'streamText';
      const fake = new FakeProvider();
      fake.reply('chat', { id: 'chatcmpl-1', model: MINI, toolCalls: [{ id: 'call_bad', name: 'weather', args: { town: 'Paris' } }, { id: 'call_gone', name: 'forecast', args: { city: 'Rome' } }], usage: { input: 100, output: 20 } }, { stream });
      // The repair's request (generateText, never streamed: the program's own call).
      fake.reply('chat', { id: 'chatcmpl-repair', model: GPT, text: '{"city":"Paris"}', usage: { input: 55, output: 7 } });
      fake.reply('chat', { id: 'chatcmpl-2', model: MINI, text: 'Sunny in Paris.', usage: { input: 240, output: 6 } }, { stream });
      const recorded = recordedPlugin(`ai-repair-${mode}`);
      uninstall = instrumentAiSdk(recorded.hooks);
      const repairModel = chat(fake, 'gpt-4.1');
      let repairUsage: { inputTokens?: number; outputTokens?: number } | undefined;
      const options = {
        model: chat(fake),
        prompt: 'Weather in Paris?',
        tools,
        stopWhen: stepCountIs(5),
        // As the SDK's docs write a repair: no repair for an unknown tool; a model asked to fix the input.
        experimental_repairToolCall: async ({ toolCall, inputSchema, error }: { toolCall: { input: string; toolName: string }; inputSchema: (options: { toolName: string }) => PromiseLike<unknown> | unknown; error: unknown }) => {
          if (NoSuchToolError.isInstance(error)) return null;
          const schema = await inputSchema({ toolName: toolCall.toolName });
          const repaired = await generateText({
            model: repairModel,
            prompt: [`The model tried to call the tool "${toolCall.toolName}" with the following inputs:`, toolCall.input, 'The tool accepts the following schema:', JSON.stringify(schema), 'Please fix the inputs. Answer with the JSON only.'].join('\n'),
          });
          repairUsage = repaired.usage;
          return { ...toolCall, input: repaired.text };
        },
      };
      let totalUsage: { inputTokens?: number; outputTokens?: number };
      if (stream) {
        const result = streamText(options as never);
        expect(await result.text).toBe('Sunny in Paris.');
        totalUsage = await result.totalUsage;
      } else {
        const result = await generateText(options as never);
        expect(result.text).toBe('Sunny in Paris.');
        totalUsage = result.totalUsage;
      }
      expect(fake.requests).toHaveLength(3);
      expect(fake.requests[1]!.body.model).toBe('gpt-4.1');
      expect(repairUsage).toMatchObject({ inputTokens: 55, outputTokens: 7 });

      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      const all = atif.flatMap((doc) => [doc, ...((doc.subagent_trajectories ?? []) as AtifDoc[])]);
      for (const doc of all) expect(validateAtif(doc)).toEqual([]);
      // Every model request is in exactly one trajectory, with the model that answered it and its tokens.
      const requests = all.flatMap((doc) => answered(doc).map((step) => [step.model_name, step.metrics.prompt_tokens, step.metrics.completion_tokens]));
      expect(requests.sort()).toEqual([[GPT, 55, 7], [MINI, 100, 20], [MINI, 240, 6]].sort());
      if (stream && STREAM_REPAIR_OUTSIDE_STEP) {
        // Node 26: streamText parses (and repairs) in its run's span, which names no step (./stream-repair.ts): the
        // repair's generateText is a session of its own beside the run's, with its prompt, model and tokens.
        expect(atif).toHaveLength(2);
        const run = atif.find((doc) => answered(doc).every((step) => step.model_name === MINI))!;
        const own = atif.find((doc) => doc !== run)!;
        expect(answered(run).map((step) => step.model_name)).toEqual([MINI, MINI]);
        expect([run.final_metrics.total_prompt_tokens, run.final_metrics.total_completion_tokens]).toEqual([totalUsage.inputTokens, totalUsage.outputTokens]);
        expect(run.subagent_trajectories ?? []).toEqual([]);
        expect(String(stepsOf(own)[0]!.message)).toContain('The model tried to call the tool "weather"');
        expect(answered(own).map((step) => [step.model_name, step.message])).toEqual([[GPT, '{"city":"Paris"}']]);
        await sameOnNative(recorded);
        return;
      }
      // One program run, one trajectory: the repair's generateText runs inside the run's first step (the SDK calls
      // the repair between the model's answer and the step's tools, in the step's span of its tracing channel), so it
      // is the run's sub-agent, under that step, named for what it is (docs/adapters/ai-sdk.md, "What a trajectory holds").
      expect(atif).toHaveLength(1);
      const main = atif[0]!;
      expect(answered(main).map((step) => step.model_name)).toEqual([MINI, MINI]);
      // The run's own totals are the SDK's totalUsage, which does not count the repair's call; the sub-agent's are its tokens.
      expect([main.final_metrics.total_prompt_tokens, main.final_metrics.total_completion_tokens]).toEqual([totalUsage.inputTokens, totalUsage.outputTokens]);
      const subagents = (main.subagent_trajectories ?? []) as AtifDoc[];
      expect(subagents).toHaveLength(1);
      const repair = subagents[0]!;
      expect(stepsOf(repair)[0]).toMatchObject({ source: 'user' });
      expect(String(stepsOf(repair)[0]!.message)).toContain('The model tried to call the tool "weather"');
      expect(answered(repair).map((step) => [step.model_name, step.message])).toEqual([[GPT, '{"city":"Paris"}']]);
      expect([repair.final_metrics.total_prompt_tokens, repair.final_metrics.total_completion_tokens]).toEqual([repairUsage!.inputTokens, repairUsage!.outputTokens]);
      // Linked from the run's steps before the step whose call it repaired (its model call ends once its calls are parsed).
      const calls = stepsOf(main).flatMap((step) => step.tool_calls ?? []) as Step[];
      const link = calls.find((call) => String(call.tool_call_id).startsWith('subagent:'))!;
      expect(String(link.function_name)).toMatch(/^generateText in step 1-session-/);
      const linked = results(main).find((r) => r.source_call_id === link.tool_call_id)!;
      expect(linked.subagent_trajectory_ref.map((ref: Step) => ref.session_id)).toEqual([repair.session_id]);
      const start = hooksOf(recorded, 'subagent_start');
      expect(start.map((p) => [p.parent_session_id, p.child_session_id, p.child_role])).toEqual([[main.session_id, repair.session_id, 'generateText in step 1']]);
      // The repaired call: the model's call, run once, with the input the repair gave it; the unknown tool: failed.
      const outcome = (id: string) => results(main).find((r) => r.source_call_id === id);
      expect(outcome('call_bad')!.extra.metadata.status).toBe('ok');
      expect(JSON.parse(outcome('call_bad')!.content)).toEqual({ city: 'Paris', forecast: 'sunny', tempC: 21 });
      expect(hooksOf(recorded, 'pre_tool_call').find((p) => p.tool_call_id === 'call_bad')!.args).toEqual({ city: 'Paris' });
      // The step says what the model sent ({"town":"Paris"}) and the input the call ran with instead, as an approval
      // that changed a call's input says it (changed_args); the unknown tool's call, refused, ran with nothing else.
      expect(calls.filter((call) => call !== link).map((call: Step) => [call.tool_call_id, call.arguments, call.extra ?? null])).toEqual([
        ['call_bad', { town: 'Paris' }, { changed_args: { city: 'Paris' } }],
        ['call_gone', { city: 'Rome' }, null],
      ]);
      expect(outcome('call_gone')!.extra.metadata.status).toBe('error');
      expect(outcome('call_gone')!.content).toMatch(/AI_NoSuchToolError/);
      expectEachCallOnce(recorded, ['call_bad', 'call_gone']);
      await sameOnNative(recorded);
    });
  }
});

// The repair a NoSuchToolError needs: the model named a tool it was not given, the repair names one it was. The step
// keeps the model's call as it sent it (its name, its arguments), and what it ran as beside it, as a repaired input is.
describe('AI SDK: a repair that renames the tool the model called', () => {
  for (const mode of ['generateText', 'streamText'] as const) {
    it(`${mode}: the step's call is the model's (its name and arguments), with the tool and input it ran with as changed_name and changed_args`, async () => {
      const stream = mode === 'streamText';
      const fake = new FakeProvider();
      fake.reply('chat', { id: 'chatcmpl-1', model: MINI, toolCalls: [{ id: 'call_renamed', name: 'nonexistent', args: { city: 'Paris' } }], usage: { input: 100, output: 20 } }, { stream });
      fake.reply('chat', { id: 'chatcmpl-2', model: MINI, text: 'Sunny in Lyon.', usage: { input: 240, output: 6 } }, { stream });
      const recorded = recordedPlugin(`ai-repair-rename-${mode}`);
      uninstall = instrumentAiSdk(recorded.hooks);
      const options = {
        model: chat(fake),
        prompt: 'Weather?',
        tools,
        stopWhen: stepCountIs(4),
        experimental_repairToolCall: async ({ toolCall, error }: { toolCall: Record<string, unknown>; error: unknown }) =>
          NoSuchToolError.isInstance(error) ? { ...toolCall, toolName: 'weather', input: JSON.stringify({ city: 'Lyon' }) } : null,
      };
      const text = stream ? await streamText(options as never).text : (await generateText(options as never)).text;
      expect(text).toBe('Sunny in Lyon.');
      // What the program ran, and what the next request told the model it had called.
      expect(JSON.parse(toldTheModel(fake, 1, 'call_renamed'))).toEqual({ city: 'Lyon', forecast: 'sunny', tempC: 21 });
      expect(hooksOf(recorded, 'pre_tool_call').map((p) => [p.tool_call_id, p.tool_name, p.args])).toEqual([['call_renamed', 'weather', { city: 'Lyon' }]]);

      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expect(atif).toHaveLength(1);
      const doc = atif[0]!;
      expect(validateAtif(doc)).toEqual([]);
      const calls = stepsOf(doc).flatMap((step) => step.tool_calls ?? []) as Step[];
      expect(calls.map((call) => [call.tool_call_id, call.function_name, call.arguments, call.extra ?? null])).toEqual([
        ['call_renamed', 'nonexistent', { city: 'Paris' }, { changed_name: 'weather', changed_args: { city: 'Lyon' } }],
      ]);
      expect(results(doc).map((r) => [r.source_call_id, JSON.parse(r.content), r.extra.metadata.status])).toEqual([['call_renamed', { city: 'Lyon', forecast: 'sunny', tempC: 21 }, 'ok']]);
      await sameOnNative(recorded);
    });
  }
});

describe('AI SDK: a streamed repair and a prepareStep that asks a model', () => {
  it('generateText: both model calls are sub-agents of the run, under its first step, each named for the run it is (streamText calls prepareStep outside its step: there a session of its own)', async () => {
    const fake = new FakeProvider();
    // prepareStep's generateText, before the step's request.
    fake.reply('chat', { id: 'chatcmpl-plan', model: GPT, text: 'Use the weather tool.', usage: { input: 12, output: 5 } });
    fake.reply('chat', { id: 'chatcmpl-1', model: MINI, toolCalls: [{ id: 'call_bad', name: 'weather', args: { town: 'Paris' } }], usage: { input: 100, output: 20 } });
    // The repair streams its own answer.
    fake.reply('chat', { id: 'chatcmpl-repair', model: GPT, text: '{"city":"Paris"}', usage: { input: 55, output: 7 } }, { stream: true });
    fake.reply('chat', { id: 'chatcmpl-2', model: MINI, text: 'Sunny in Paris.', usage: { input: 240, output: 6 } });
    const recorded = recordedPlugin('ai-repair-streamed');
    uninstall = instrumentAiSdk(recorded.hooks);
    const result = await generateText({
      model: chat(fake),
      prompt: 'Weather in Paris?',
      tools,
      stopWhen: stepCountIs(5),
      prepareStep: planFirstStep(fake),
      experimental_repairToolCall: async ({ toolCall }) => {
        const repaired = streamText({ model: chat(fake, 'gpt-4.1'), prompt: `Fix the inputs of ${toolCall.toolName}: ${toolCall.input}` });
        return { ...toolCall, input: await repaired.text };
      },
    });
    expect(result.text).toBe('Sunny in Paris.');
    const totalUsage = result.totalUsage;
    expect(fake.requests.map((request) => request.body.model)).toEqual(['gpt-4.1', 'gpt-4o-mini', 'gpt-4.1', 'gpt-4o-mini']);

    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    for (const doc of atif.flatMap((d) => [d, ...((d.subagent_trajectories ?? []) as AtifDoc[])])) expect(validateAtif(doc)).toEqual([]);
    expect(atif).toHaveLength(1);
    const main = atif[0]!;
    expect([main.final_metrics.total_prompt_tokens, main.final_metrics.total_completion_tokens]).toEqual([totalUsage.inputTokens, totalUsage.outputTokens]);
    const subagents = (main.subagent_trajectories ?? []) as AtifDoc[];
    expect(subagents.map((doc) => answered(doc).map((step) => [step.message, step.metrics.prompt_tokens, step.metrics.completion_tokens]))).toEqual([
      [['Use the weather tool.', 12, 5]],
      [['{"city":"Paris"}', 55, 7]],
    ]);
    expect(hooksOf(recorded, 'subagent_start').map((p) => p.child_role)).toEqual(['generateText in step 1', 'streamText in step 1']);
    await sameOnNative(recorded);
  });
});

describe('AI SDK: two runs repairing at once', () => {
  if (STREAM_REPAIR_OUTSIDE_STEP) console.log(`skipping "two runs repairing at once" on Node ${process.versions.node}: one of its runs is a streamText, whose repair is a session of its own on Node 26 (test/adapters/ai-sdk/stream-repair.ts); the generateText repair test covers the step there`);
  it.skipIf(STREAM_REPAIR_OUTSIDE_STEP)("each repair's generateText is a sub-agent of its own run; a run the program starts beside them is a session of its own", async () => {
    // One fake server per program run, so each run's requests get its own answers whatever the order they come in.
    const fakes = { gen: new FakeProvider(), stream: new FakeProvider(), beside: new FakeProvider() };
    fakes.gen.reply('chat', { id: 'chatcmpl-g1', model: MINI, toolCalls: [{ id: 'call_gen', name: 'weather', args: { town: 'Paris' } }], usage: { input: 100, output: 20 } });
    fakes.gen.reply('chat', { id: 'chatcmpl-grepair', model: GPT, text: '{"city":"Paris"}', usage: { input: 55, output: 7 } });
    fakes.gen.reply('chat', { id: 'chatcmpl-g2', model: MINI, text: 'Sunny in Paris.', usage: { input: 240, output: 6 } });
    fakes.stream.reply('chat', { id: 'chatcmpl-s1', model: MINI, toolCalls: [{ id: 'call_stream', name: 'weather', args: { town: 'Rome' } }], usage: { input: 110, output: 21 } }, { stream: true });
    fakes.stream.reply('chat', { id: 'chatcmpl-srepair', model: GPT, text: '{"city":"Rome"}', usage: { input: 66, output: 8 } });
    fakes.stream.reply('chat', { id: 'chatcmpl-s2', model: MINI, text: 'Sunny in Rome.', usage: { input: 250, output: 7 } }, { stream: true });
    fakes.beside.reply('chat', { id: 'chatcmpl-b', model: MINI, text: 'Hello.', usage: { input: 9, output: 2 } });
    const recorded = recordedPlugin('ai-repair-concurrent');
    uninstall = instrumentAiSdk(recorded.hooks);
    // Both repairs wait until both runs are repairing: each repair's generateText starts while the other run is open.
    let repairing = 0;
    let bothRepairing!: () => void;
    const together = new Promise<void>((resolve) => (bothRepairing = resolve));
    const repairUsage: Record<string, { inputTokens?: number; outputTokens?: number }> = {};
    const options = (fake: FakeProvider, prompt: string) => ({
      model: chat(fake),
      prompt,
      tools,
      stopWhen: stepCountIs(5),
      experimental_repairToolCall: async ({ toolCall }: { toolCall: { input: string; toolName: string } }) => {
        repairing += 1;
        if (repairing === 2) bothRepairing();
        await together;
        const repaired = await generateText({ model: chat(fake, 'gpt-4.1'), prompt: `Fix the inputs of ${toolCall.toolName}: ${toolCall.input}` });
        repairUsage[prompt] = repaired.usage;
        return { ...toolCall, input: repaired.text };
      },
    });
    const streamed = streamText(options(fakes.stream, 'Weather in Rome?') as never);
    // Started in the same synchronous frame as the streamText above, outside any run: not part of it.
    const beside = generateText({ model: chat(fakes.beside), prompt: 'Say hello.' });
    const [generated, streamedText, besideResult] = await Promise.all([generateText(options(fakes.gen, 'Weather in Paris?') as never), streamed.text, beside]);
    expect([generated.text, streamedText, besideResult.text]).toEqual(['Sunny in Paris.', 'Sunny in Rome.', 'Hello.']);
    expect(repairUsage['Weather in Paris?']).toMatchObject({ inputTokens: 55, outputTokens: 7 });
    expect(repairUsage['Weather in Rome?']).toMatchObject({ inputTokens: 66, outputTokens: 8 });
    const streamedTotal = await streamed.totalUsage;

    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    for (const doc of atif.flatMap((d) => [d, ...((d.subagent_trajectories ?? []) as AtifDoc[])])) expect(validateAtif(doc)).toEqual([]);
    // Three program runs, three trajectories; each run's repair under its own run, with its own model call and tokens.
    expect(atif).toHaveLength(3);
    const byPrompt = (prompt: string) => atif.find((doc) => String(stepsOf(doc)[0]!.message).includes(prompt))!;
    const cases = [
      { doc: byPrompt('Weather in Paris?'), total: generated.totalUsage, repaired: 'call_gen', fix: '{"city":"Paris"}', usage: repairUsage['Weather in Paris?']! },
      { doc: byPrompt('Weather in Rome?'), total: streamedTotal, repaired: 'call_stream', fix: '{"city":"Rome"}', usage: repairUsage['Weather in Rome?']! },
    ];
    for (const { doc, total, repaired, fix, usage } of cases) {
      expect([doc.final_metrics.total_prompt_tokens, doc.final_metrics.total_completion_tokens]).toEqual([total.inputTokens, total.outputTokens]);
      expect(stepsOf(doc).flatMap((step) => step.tool_calls ?? []).map((call: Step) => call.tool_call_id).filter((id: string) => !id.startsWith('subagent:'))).toEqual([repaired]);
      const subagents = (doc.subagent_trajectories ?? []) as AtifDoc[];
      expect(subagents).toHaveLength(1);
      expect(answered(subagents[0]!).map((step) => [step.model_name, step.message, step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual([[GPT, fix, usage.inputTokens, usage.outputTokens]]);
      expect(String(stepsOf(subagents[0]!)[0]!.message)).toContain(fix.includes('Paris') ? '"town":"Paris"' : '"town":"Rome"');
    }
    const alone = byPrompt('Say hello.');
    expect(alone.subagent_trajectories ?? []).toEqual([]);
    expect(answered(alone).map((step) => [step.message, step.metrics.prompt_tokens])).toEqual([['Hello.', 9]]);
    expect(hooksOf(recorded, 'subagent_start').map((p) => p.child_role).sort()).toEqual(['generateText in step 1', 'generateText in step 1']);
    await sameOnNative(recorded);
  });
});

describe('AI SDK: experimental_refineToolInput', () => {
  for (const mode of ['generateText', 'streamText'] as const) {
    it(`${mode}: a call whose input the program refined says what the model sent and what it ran with (changed_args)`, async () => {
      const stream = mode === 'streamText';
      const fake = new FakeProvider();
      fake.reply('chat', { id: 'chatcmpl-1', model: MINI, toolCalls: [{ id: 'call_padded', name: 'weather', args: { city: '  Paris ' } }, { id: 'call_plain', name: 'weather', args: { city: 'Rome' } }], usage: { input: 100, output: 20 } }, { stream });
      fake.reply('chat', { id: 'chatcmpl-2', model: MINI, text: 'Sunny in Paris and Rome.', usage: { input: 240, output: 8 } }, { stream });
      const recorded = recordedPlugin(`ai-refine-${mode}`);
      uninstall = instrumentAiSdk(recorded.hooks);
      const ran: string[] = [];
      const options = {
        model: chat(fake),
        prompt: 'Weather in Paris and Rome?',
        tools: { weather: tool({ description: 'Get the weather for a city', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => (ran.push(city), { city, forecast: 'sunny' }) }) },
        stopWhen: stepCountIs(5),
        experimental_refineToolInput: { weather: (input: { city: string }) => ({ city: input.city.trim() }) },
      };
      let totalUsage: { inputTokens?: number; outputTokens?: number };
      if (stream) {
        const result = streamText(options);
        expect(await result.text).toBe('Sunny in Paris and Rome.');
        totalUsage = await result.totalUsage;
      } else {
        const result = await generateText(options);
        expect(result.text).toBe('Sunny in Paris and Rome.');
        totalUsage = result.totalUsage;
      }
      expect(ran.sort()).toEqual(['Paris', 'Rome']);

      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expect(atif).toHaveLength(1);
      const [doc] = atif;
      expect(validateAtif(doc!)).toEqual([]);
      expect([doc!.final_metrics.total_prompt_tokens, doc!.final_metrics.total_completion_tokens]).toEqual([totalUsage.inputTokens, totalUsage.outputTokens]);
      // The model's arguments, and the input the padded call ran with; the call the refinement left as it was, as it was.
      expect(stepsOf(doc!).flatMap((step) => step.tool_calls ?? []).map((call: Step) => [call.tool_call_id, call.arguments, call.extra ?? null])).toEqual([
        ['call_padded', { city: '  Paris ' }, { changed_args: { city: 'Paris' } }],
        ['call_plain', { city: 'Rome' }, null],
      ]);
      // The tool's own span has the input it ran with.
      expect(Object.fromEntries(hooksOf(recorded, 'pre_tool_call').map((p) => [p.tool_call_id, p.args]))).toEqual({ call_padded: { city: 'Paris' }, call_plain: { city: 'Rome' } });
      await sameOnNative(recorded);
    });
  }
});

describe('AI SDK: prepareStep', () => {
  it('switches the model between steps and narrows activeTools / toolChoice: each step names the model that answered and the tools it was offered', async () => {
    const fake = new FakeProvider();
    fake.reply('chat', { id: 'chatcmpl-1', model: MINI, toolCalls: [{ id: 'call_w', name: 'weather', args: { city: 'Paris' } }], usage: { input: 90, output: 11 } });
    fake.reply('chat', { id: 'chatcmpl-2', model: GPT, text: 'Sunny in Paris.', usage: { input: 210, output: 9 } });
    const recorded = recordedPlugin('ai-prepare-step');
    uninstall = instrumentAiSdk(recorded.hooks);
    const strong = chat(fake, 'gpt-4.1');
    const more = {
      ...tools,
      time: tool({ description: 'The local time of a city', inputSchema: z.object({ city: z.string() }), execute: async () => '14:00' }),
    };
    const result = await generateText({
      model: chat(fake),
      prompt: 'Weather in Paris?',
      tools: more,
      stopWhen: stepCountIs(4),
      prepareStep: async ({ stepNumber }) =>
        stepNumber === 0 ? { activeTools: ['weather'], toolChoice: { type: 'tool', toolName: 'weather' } } : { model: strong, activeTools: [], toolChoice: 'none' },
    });
    expect(result.text).toBe('Sunny in Paris.');
    expect(result.steps.map((step) => step.response.modelId)).toEqual([MINI, GPT]);
    // What the provider was sent: the first request one tool and a forced choice, the second the other model and none.
    expect(fake.requests.map((r) => [r.body.model, (r.body.tools ?? []).map((t: Step) => t.function.name), r.body.tool_choice])).toEqual([
      ['gpt-4o-mini', ['weather'], { type: 'function', function: { name: 'weather' } }],
      // The provider sends no tool_choice without tools.
      ['gpt-4.1', [], undefined],
    ]);

    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(answered(doc).map((step) => step.model_name)).toEqual([MINI, GPT]);
    // Each request as sent: its model and the tools it offered.
    const sent = hooksOf(recorded, 'pre_api_request').map((p) => [p.model, (p.request?.body?.tools ?? []).map((t: Step) => t.function?.name ?? t.name)]);
    expect(sent).toEqual([
      ['gpt-4o-mini', ['weather']],
      ['gpt-4.1', []],
    ]);
    expect([doc.final_metrics.total_prompt_tokens, doc.final_metrics.total_completion_tokens]).toEqual([result.totalUsage.inputTokens, result.totalUsage.outputTokens]);
    await sameOnNative(recorded);
  });
});

describe('AI SDK: instrumented again after an uninstall, once the runtime collected what the first install bound', () => {
  // Bun's node:diagnostics_channel holds channels weakly, and a collected channel's finalizer deletes its name even
  // after a new channel took it: the step channel the first install bound, let go at its uninstall and collected, took
  // the second install's channel out of the registry once its finalizer ran, and a model call in prepareStep became a
  // session of its own (the slow random-wire file's seed 6 on Bun, one run in two). Bun, and Node with --expose-gc,
  // collect here; elsewhere the program runs in the same order without the collection.
  const collectNow = (): void => {
    (globalThis as { Bun?: { gc(force: boolean): void } }).Bun?.gc(true);
    (globalThis as { gc?: () => void }).gc?.();
  };
  /** Collects, then lets the finalizers run (tasks of their own). */
  const collect = async (): Promise<void> => {
    for (let i = 0; i < 3; i++) {
      collectNow();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };

  it("generateText: prepareStep's model call is still the sub-agent of the step it ran in", async () => {
    const fake = new FakeProvider();
    fake.reply('chat', { id: 'chatcmpl-plan', model: GPT, text: 'Use the weather tool.', usage: { input: 12, output: 5 } });
    fake.reply('chat', { id: 'chatcmpl-1', model: MINI, toolCalls: [{ id: 'call_1', name: 'weather', args: { city: 'Paris' } }], usage: { input: 100, output: 20 } });
    fake.reply('chat', { id: 'chatcmpl-2', model: MINI, text: 'Sunny in Paris.', usage: { input: 240, output: 6 } });
    const recorded = recordedPlugin('ai-reinstall');
    instrumentAiSdk(recordedPlugin('ai-reinstall-first').hooks)();
    // The first install's channel is collected before the second install binds; its finalizer runs after.
    collectNow();
    uninstall = instrumentAiSdk(recorded.hooks);
    await collect();
    const result = await generateText({
      model: chat(fake),
      prompt: 'Weather in Paris?',
      tools,
      stopWhen: stepCountIs(5),
      prepareStep: planFirstStep(fake),
    });
    expect(result.text).toBe('Sunny in Paris.');

    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif, 'one session: the planning call inside it').toHaveLength(1);
    const subagents = (atif[0]!.subagent_trajectories ?? []) as AtifDoc[];
    expect(subagents.map((doc) => answered(doc).map((step) => [step.message, step.metrics.prompt_tokens, step.metrics.completion_tokens]))).toEqual([[['Use the weather tool.', 12, 5]]]);
    expect(hooksOf(recorded, 'subagent_start').map((p) => p.child_role)).toEqual(['generateText in step 1']);
  });
});
