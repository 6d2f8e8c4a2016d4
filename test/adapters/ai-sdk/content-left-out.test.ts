// Runs whose telemetry keeps content from integrations (`recordInputs: false`, `recordOutputs: false`), through the
// real OpenAI package on the Responses wire. A QA trial found the blanked request (`{"messages":[],"model":...}`)
// written as a user step for every model call, so a one-turn run with a tool had two user turns nobody sent, and every
// tool outcome written as `"null"` with status ok, a value the tools never returned (and a stream cut short kept the
// text it had delivered, which the call asked to keep out). The trajectory must have the
// structure the same run has with its content recorded (one user step per run, the agent steps after it), and say
// where content was left out rather than invent it or show it as empty.
import { afterEach, describe, expect, it } from 'vitest';
import { generateText, stepCountIs, streamText, tool, type ModelMessage } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import * as z from 'zod';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { expectNothingLost, recordedPlugin } from '../support.ts';
import { FakeProvider } from './wire.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

type Step = Record<string, any>;

const INPUTS_LEFT_OUT = '[left out: recordInputs is false]';
const OUTPUTS_LEFT_OUT = '[left out: recordOutputs is false]';

const weather = tool({ description: 'the weather in a city', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => `SECRET-RESULT sunny in ${city}` });

/** A weather call, then the answer, as OpenAI's Responses API sends them. */
function toolThenAnswer(stream: boolean): FakeProvider {
  return new FakeProvider()
    .reply('responses', { id: 'resp_1', model: 'gpt-4o-2024-08-06', toolCalls: [{ id: 'call_w1', name: 'weather', args: { city: 'Paris' } }], usage: { input: 101, output: 17, cached: 40 } }, { stream })
    .reply('responses', { id: 'resp_2', model: 'gpt-4o-2024-08-06', text: 'SECRET-ANSWER It is sunny in Paris.', usage: { input: 203, output: 29 } }, { stream });
}

/** Each step as its source, its message and its tool calls' names. */
const shape = (steps: Step[]) => steps.map((step) => [step.source, step.message, (step.tool_calls ?? []).map((call: Step) => call.function_name)]);

describe('content the AI SDK keeps from telemetry', () => {
  for (const mode of ['generateText', 'streamText'] as const) {
    it(`${mode}, recordInputs: false: one user step saying the prompt was left out, then the agent steps`, async () => {
      const fake = toolThenAnswer(mode === 'streamText');
      const recorded = recordedPlugin(`ai-inputs-left-out-${mode}`);
      uninstall = instrumentAiSdk(recorded.hooks, { sessionId: 'noinputs' });
      const options = { model: createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch })('gpt-4o'), system: 'SECRET-SYSTEM', prompt: 'SECRET-PROMPT', tools: { weather }, stopWhen: stepCountIs(3), telemetry: { recordInputs: false } };
      const text = mode === 'streamText' ? await streamText(options).text : (await generateText(options)).text;
      expect(text).toBe('SECRET-ANSWER It is sunny in Paris.');
      expect(fake.requests.length).toBe(2);
      uninstall();
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      // The turn starts with what the user step says: the prompt was not recorded.
      expect(recorded.log.filter((entry) => entry.hook === 'pre_llm_call').map((entry) => entry.payload.user_message)).toEqual([INPUTS_LEFT_OUT]);
      const steps = atif[0]!.steps as Step[];
      expect(shape(steps)).toEqual([
        ['user', INPUTS_LEFT_OUT, []],
        ['agent', '', ['weather']],
        ['agent', 'SECRET-ANSWER It is sunny in Paris.', []],
      ]);
      // Outputs are still recorded: the tool's result, the tokens of both calls.
      expect(steps[1]!.observation.results.map((result: Step) => result.content)).toEqual(['SECRET-RESULT sunny in Paris']);
      expect(atif[0]!.final_metrics).toMatchObject({ total_prompt_tokens: 304, total_completion_tokens: 46, total_cached_tokens: 40, total_steps: 3 });
      expect(JSON.stringify(recorded.log)).not.toMatch(/SECRET-(PROMPT|SYSTEM)/);
      expect(JSON.stringify(atif)).not.toMatch(/SECRET-(PROMPT|SYSTEM)/);
    });
  }

  it('recordInputs: false, a conversation of two runs under one sessionId: one user step per run', async () => {
    const fake = new FakeProvider()
      .reply('chat', { id: 'resp_1', model: 'gpt-4o-2024-08-06', text: 'Hello.', usage: { input: 10, output: 2 } })
      .reply('chat', { id: 'resp_2', model: 'gpt-4o-2024-08-06', toolCalls: [{ id: 'call_w2', name: 'weather', args: { city: 'Lyon' } }], usage: { input: 30, output: 8 } })
      .reply('chat', { id: 'resp_3', model: 'gpt-4o-2024-08-06', text: 'Sunny in Lyon.', usage: { input: 50, output: 5 } });
    const recorded = recordedPlugin('ai-inputs-left-out-conversation');
    uninstall = instrumentAiSdk(recorded.hooks, { sessionId: 'chat-noinputs' });
    const model = createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch }).chat('gpt-4o');
    const messages: ModelMessage[] = [{ role: 'user', content: 'SECRET-HI' }];
    const first = await generateText({ model, messages, tools: { weather }, stopWhen: stepCountIs(3), telemetry: { recordInputs: false } });
    messages.push(...first.response.messages, { role: 'user', content: 'SECRET-WEATHER in Lyon?' });
    await generateText({ model, messages, tools: { weather }, stopWhen: stepCountIs(3), telemetry: { recordInputs: false } });
    uninstall();
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif.length).toBe(1);
    expect(shape(atif[0]!.steps as Step[])).toEqual([
      ['user', INPUTS_LEFT_OUT, []],
      ['agent', 'Hello.', []],
      ['user', INPUTS_LEFT_OUT, []],
      ['agent', '', ['weather']],
      ['agent', 'Sunny in Lyon.', []],
    ]);
    // The tool's result is an output, recorded; the user's messages are not.
    expect(JSON.stringify(atif)).not.toMatch(/SECRET-(HI|WEATHER)/);
  });

  for (const mode of ['generateText', 'streamText'] as const) {
    it(`${mode}, recordOutputs: false: the tool's outcome and the answer say they were left out; tokens and calls stay`, async () => {
      const fake = toolThenAnswer(mode === 'streamText');
      const recorded = recordedPlugin(`ai-outputs-left-out-${mode}`);
      uninstall = instrumentAiSdk(recorded.hooks, { sessionId: 'nooutputs' });
      const options = { model: createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch })('gpt-4o'), prompt: 'What is the weather in Paris?', tools: { weather }, stopWhen: stepCountIs(3), telemetry: { recordOutputs: false } };
      const text = mode === 'streamText' ? await streamText(options).text : (await generateText(options)).text;
      expect(text).toBe('SECRET-ANSWER It is sunny in Paris.');
      uninstall();
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      const steps = atif[0]!.steps as Step[];
      expect(shape(steps)).toEqual([
        ['user', 'What is the weather in Paris?', []],
        ['agent', OUTPUTS_LEFT_OUT, ['weather']],
        ['agent', OUTPUTS_LEFT_OUT, []],
      ]);
      const [result] = steps[1]!.observation.results as Step[];
      expect([result!.source_call_id, result!.content, result!.extra.metadata.status]).toEqual(['call_w1', OUTPUTS_LEFT_OUT, 'ok']);
      // The turn's end carries the run's answer: left out too, not an empty one.
      expect(recorded.log.find((entry) => entry.hook === 'post_llm_call')!.payload.assistant_response).toBe(OUTPUTS_LEFT_OUT);
      expect(atif[0]!.final_metrics).toMatchObject({ total_prompt_tokens: 304, total_completion_tokens: 46, total_cached_tokens: 40, total_steps: 3 });
      expect(JSON.stringify(recorded.log.filter((entry) => entry.hook !== 'pre_api_request'))).not.toMatch(/SECRET/);
    });
  }

  it('recordOutputs: false, a stream the program aborts mid-answer: the cut call keeps no text it delivered', async () => {
    const fake = new FakeProvider().reply('responses', { id: 'resp_1', model: 'gpt-4o-2024-08-06', text: 'SECRET-ANSWER Once upon a time there was a very long story.', usage: { input: 40, output: 9 } }, { stream: true, hang: true });
    const recorded = recordedPlugin('ai-outputs-left-out-abort');
    uninstall = instrumentAiSdk(recorded.hooks);
    const controller = new AbortController();
    const result = streamText({ model: createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch })('gpt-4o'), prompt: 'Tell me a story', abortSignal: controller.signal, telemetry: { recordOutputs: false } });
    let seen = '';
    for await (const delta of result.textStream) {
      seen += delta;
      controller.abort();
    }
    expect(seen).toMatch(/^SECRET-ANSWER/);
    const errors = recorded.log.filter((entry) => entry.hook === 'api_request_error');
    expect(errors.map((entry) => (entry.payload.response as Step | undefined)?.assistant_message?.content)).toEqual([OUTPUTS_LEFT_OUT]);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(JSON.stringify(recorded.log)).not.toMatch(/SECRET/);
    expect(JSON.stringify(atif)).not.toMatch(/SECRET/);
  });

  it('recordOutputs: false, a tool that throws: its outcome is left out and still failed', async () => {
    const fake = new FakeProvider()
      .reply('chat', { id: 'resp_1', model: 'gpt-4o-2024-08-06', toolCalls: [{ id: 'call_b1', name: 'broken', args: { city: 'Paris' } }], usage: { input: 40, output: 9 } })
      .reply('chat', { id: 'resp_2', model: 'gpt-4o-2024-08-06', text: 'SECRET-ANSWER The tool failed.', usage: { input: 60, output: 6 } });
    const recorded = recordedPlugin('ai-outputs-left-out-tool-error');
    uninstall = instrumentAiSdk(recorded.hooks, { sessionId: 'nooutputs-error' });
    const broken = tool({ description: 'always fails', inputSchema: z.object({ city: z.string() }), execute: async (): Promise<string> => { throw new Error('SECRET-FAILURE'); } });
    const model = createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch }).chat('gpt-4o');
    await generateText({ model, prompt: 'Try the broken tool.', tools: { broken }, stopWhen: stepCountIs(3), telemetry: { recordOutputs: false } });
    uninstall();
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const [result] = (atif[0]!.steps as Step[])[1]!.observation.results as Step[];
    expect([result!.source_call_id, result!.content, result!.extra.metadata.status]).toEqual(['call_b1', OUTPUTS_LEFT_OUT, 'error']);
  });
});
