// Tools whose `execute` returns nothing (`async () => {}`), `null` or `''`, as a user trial wrote them: the SDK tells
// the model a result of each (its JSON text, `"null"`, for the first two; `""` for the last), but the trajectory showed
// the two calls with no observation at all, as if the tools never returned. Each call's observation must be the text
// the provider request carried for it, on the Responses, Chat Completions and Anthropic wires, through generateText and
// streamText, and the same hooks on native write the same files. A tool without `execute` that the program answers with
// nothing (a JSON `null` output, in the next call's messages) is the same: the request carries `"null"`.
import { afterEach, describe, expect, it } from 'vitest';
import { generateText, stepCountIs, streamText, tool, type LanguageModel, type ModelMessage, type ToolSet } from 'ai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import * as z from 'zod';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { sameOnNative } from '../same-on-native.ts';
import { expectNothingLost, recordedPlugin } from '../support.ts';
import { FakeProvider, type Request } from './wire.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

type Step = Record<string, any>;

/** What each tool returns. */
const RETURNS: Record<string, unknown> = { nothing: undefined, null: null, empty: '' };

const WIRES = ['responses', 'chat', 'anthropic'] as const;
type WireName = (typeof WIRES)[number];

function modelOn(wire: WireName, fake: FakeProvider): LanguageModel {
  const fetch = fake.fetch as typeof globalThis.fetch;
  if (wire === 'anthropic') return createAnthropic({ apiKey: 'test-key', fetch })('claude-sonnet-4-5');
  const openai = createOpenAI({ apiKey: 'test-key', fetch });
  return wire === 'chat' ? openai.chat('gpt-4.1') : openai('gpt-4.1');
}

/** The result each call's tool message carried on the wire, by call id. */
function toldOnWire(wire: WireName, request: Request): Map<string, unknown> {
  const body = request.body;
  if (wire === 'responses') return new Map((body.input as Step[]).filter((item) => item.type === 'function_call_output').map((item) => [item.call_id, item.output]));
  if (wire === 'chat') return new Map((body.messages as Step[]).filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content]));
  const blocks = (body.messages as Step[]).flatMap((m) => (Array.isArray(m.content) ? m.content : []));
  return new Map(blocks.filter((b: Step) => b.type === 'tool_result').map((b: Step) => [b.tool_use_id, b.content]));
}

describe('a tool that returns nothing', () => {
  for (const wire of WIRES) {
    for (const mode of ['generateText', 'streamText'] as const) {
      it(`${wire}, ${mode}: each call's observation is the result the provider request carried`, async () => {
        const stream = mode === 'streamText';
        const kinds = Object.keys(RETURNS);
        const fake = new FakeProvider()
          .reply(wire, { id: 'resp_1', model: 'm-2025-04-14', toolCalls: kinds.map((kind) => ({ id: `call_${kind}`, name: kind, args: { id: 'job-7' } })), usage: { input: 100, output: 30 } }, { stream })
          .reply(wire, { id: 'resp_2', model: 'm-2025-04-14', text: 'All three done.', usage: { input: 200, output: 8 } }, { stream });
        const recorded = recordedPlugin(`ai-tool-returns-nothing-${wire}-${mode}`);
        uninstall = instrumentAiSdk(recorded.hooks);
        const tools: ToolSet = Object.fromEntries(
          kinds.map((kind) => [kind, tool({ description: 'runs a job', inputSchema: z.object({ id: z.string() }), execute: async (): Promise<unknown> => RETURNS[kind] })]),
        );
        const options = { model: modelOn(wire, fake), prompt: 'Run job-7 three ways.', tools, stopWhen: stepCountIs(3) };
        if (stream) await streamText(options).consumeStream();
        else await generateText(options);
        const told = toldOnWire(wire, fake.requests[1]!);
        // What the SDK sends: JSON text for a value that is not a string, `undefined` as `null`.
        expect(Object.fromEntries(told)).toEqual({ call_nothing: 'null', call_null: 'null', call_empty: '' });
        const { atif, counters } = await recorded.finish();
        expectNothingLost(counters);
        const results = (atif[0]!.steps as Step[]).flatMap((step) => step.observation?.results ?? []);
        for (const kind of kinds) {
          const result = results.find((one: Step) => one.source_call_id === `call_${kind}`);
          expect(result?.content, kind).toBe(told.get(`call_${kind}`));
          expect(result.extra.metadata.status, kind).toBe('ok');
        }
        await sameOnNative(recorded);
      });
    }
  }

  it('a tool the program answers with nothing (no execute, a JSON null output): the observation is the "null" the next request carried', async () => {
    const fake = new FakeProvider()
      .reply('chat', { id: 'resp_1', model: 'm-2025-04-14', toolCalls: [{ id: 'call_confirm', name: 'confirm', args: { id: 'job-7' } }], usage: { input: 50, output: 10 } })
      .reply('chat', { id: 'resp_2', model: 'm-2025-04-14', text: 'Confirmed.', usage: { input: 80, output: 3 } });
    const recorded = recordedPlugin('ai-tool-answered-with-nothing');
    uninstall = instrumentAiSdk(recorded.hooks, { sessionId: 'chat-1' });
    const tools: ToolSet = { confirm: tool({ description: 'asks the user to confirm a job', inputSchema: z.object({ id: z.string() }) }) };
    const model = modelOn('chat', fake);
    const messages: ModelMessage[] = [{ role: 'user', content: 'Run job-7 once I confirm.' }];
    const first = await generateText({ model, tools, messages });
    messages.push(...first.response.messages, { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_confirm', toolName: 'confirm', output: { type: 'json', value: null } }] });
    await generateText({ model, tools, messages });
    uninstall();
    const told = toldOnWire('chat', fake.requests[1]!);
    expect(Object.fromEntries(told)).toEqual({ call_confirm: 'null' });
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const results = (atif[0]!.steps as Step[]).flatMap((step) => step.observation?.results ?? []);
    expect(results.map((result: Step) => [result.source_call_id, result.content])).toEqual([['call_confirm', 'null']]);
    await sameOnNative(recorded);
  });
});
