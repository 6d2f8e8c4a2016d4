// Tools with `toModelOutput`, as the AI SDK docs write them: the program keeps what `execute` returned, the model is
// told what `toModelOutput` makes of it (a summary, a few fields, a list of parts). A user trial found the trajectory's
// observation was the raw `execute` output, which the model never saw. Each call's outcome must be the text the next
// request told the model, as the provider's server received it, on Chat Completions, the Responses API and Anthropic,
// through generateText and streamText; a `toModelOutput` that returns a promise included.
import { afterEach, describe, expect, it } from 'vitest';
import { generateText, stepCountIs, streamText, tool, type ToolSet } from 'ai';
import * as z from 'zod';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { AI_SDK_PROVIDERS } from '../../support/ai-sdk-providers.ts';
import { expectNothingLost, onlyTrajectory, recordedPlugin } from '../support.ts';
import { FakeProvider, type Request, type Wire } from './wire.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

type Loose = Record<string, any>;

const MODELS = { chat: 'gpt-4o-mini-2024-07-18', responses: 'gpt-4o-2024-08-06', anthropic: 'claude-sonnet-4-5-20250929' } as const;
type ToolWire = keyof typeof MODELS;

const rows = Array.from({ length: 5 }, (_, i) => ({ day: i + 1, sales: 100 + i }));

/** The tools: a summary (`text`), a few fields (`json`, from an async toModelOutput), and, where told as text, a list of parts (`content`). */
function toolsFor(wire: ToolWire): ToolSet {
  const tools: ToolSet = {
    report: tool({
      description: 'The sales report of a month',
      inputSchema: z.object({ month: z.string() }),
      execute: async ({ month }) => ({ month, rows, summary: `${month}: sales up 4%` }),
      toModelOutput: ({ output }) => ({ type: 'text', value: output.summary }),
    }),
    totals: tool({
      description: 'The totals of a month',
      inputSchema: z.object({ month: z.string() }),
      execute: async ({ month }) => ({ month, rows }),
      toModelOutput: async ({ output }) => ({ type: 'json', value: { month: output.month, days: output.rows.length, sales: output.rows.reduce((sum, row) => sum + row.sales, 0) } }),
    }),
  };
  // Chat Completions tells the model a list of parts as its JSON text; the Responses API and Anthropic send parts of their own.
  if (wire === 'chat') {
    tools.notes = tool({
      description: 'The analyst notes of a month',
      inputSchema: z.object({ month: z.string() }),
      execute: async ({ month }) => ({ month, notes: ['strong weekend', 'returns down'], author: 'a.lee' }),
      toModelOutput: ({ output }) => ({ type: 'content', value: output.notes.map((text) => ({ type: 'text' as const, text })) }),
    });
  }
  return tools;
}

/** What the second request told the model of each call, by call id, as the server received it. */
function toldOnWire(wire: ToolWire, request: Request): Map<string, unknown> {
  const body = request.body;
  if (wire === 'chat') return new Map((body.messages as Loose[]).filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content]));
  if (wire === 'responses') return new Map((body.input as Loose[]).filter((item) => item.type === 'function_call_output').map((item) => [item.call_id, item.output]));
  const blocks = (body.messages as Loose[]).flatMap((m) => (Array.isArray(m.content) ? m.content : []));
  return new Map(blocks.filter((block: Loose) => block.type === 'tool_result').map((block: Loose) => [block.tool_use_id, block.content]));
}

describe.each(AI_SDK_PROVIDERS.map((packages) => [packages.major, packages] as const))('tools with toModelOutput (%s)', (_major, packages) => {
  const modelOf = (wire: ToolWire, fake: FakeProvider) => {
    const settings = { apiKey: 'test-key', fetch: fake.fetch as typeof globalThis.fetch };
    if (wire === 'anthropic') return packages.anthropic(settings)('claude-sonnet-4-5');
    return wire === 'chat' ? packages.openai(settings).chat('gpt-4o-mini') : packages.openai(settings).responses('gpt-4o');
  };

  for (const wire of Object.keys(MODELS) as ToolWire[]) {
    for (const mode of ['generateText', 'streamText'] as const) {
      it(`${wire}, ${mode}: each call's outcome is what the model was told, as the server received it`, async () => {
        const stream = mode === 'streamText';
        const tools = toolsFor(wire);
        const ids = Object.keys(tools).map((name) => `call_${name}`);
        const fake = new FakeProvider()
          .reply(wire as Wire, { id: 'r1', model: MODELS[wire], toolCalls: Object.keys(tools).map((name) => ({ id: `call_${name}`, name, args: { month: 'May' } })), usage: { input: 120, output: 30 } }, { stream })
          .reply(wire as Wire, { id: 'r2', model: MODELS[wire], text: 'May: sales up 4%, 515 in all.', usage: { input: 240, output: 12 } }, { stream });
        const recorded = recordedPlugin(`ai-tool-model-output-${wire}-${mode}`);
        uninstall = instrumentAiSdk(recorded.hooks);
        const options = { model: modelOf(wire, fake), prompt: 'How was May?', tools, stopWhen: stepCountIs(3) };
        const toolResults = stream ? (await (async () => {
          const result = streamText(options);
          await result.consumeStream();
          return (await result.steps)[0]!.toolResults;
        })()) : (await generateText(options)).steps[0]!.toolResults;
        // The program has what execute returned.
        expect(Object.fromEntries(toolResults.map((result) => [result.toolCallId, (result.output as Loose).rows?.length ?? (result.output as Loose).notes]))).toEqual({
          call_report: 5,
          call_totals: 5,
          ...(wire === 'chat' ? { call_notes: ['strong weekend', 'returns down'] } : {}),
        });
        const told = toldOnWire(wire, fake.requests[1]!);
        expect([...told.keys()].sort()).toEqual([...ids].sort());
        expect(told.get('call_report')).toBe('May: sales up 4%');
        expect(JSON.parse(told.get('call_totals') as string)).toEqual({ month: 'May', days: 5, sales: 510 });
        const { atif, counters } = await recorded.finish();
        expectNothingLost(counters);
        const results = (onlyTrajectory(atif).steps as Loose[]).flatMap((step) => step.observation?.results ?? []);
        for (const id of ids) {
          const result = results.find((one: Loose) => one.source_call_id === id);
          expect(result.content, id).toBe(told.get(id));
          expect(result.extra.metadata.status, id).toBe('ok');
        }
        // The post_tool_call hook says it too.
        const posted = new Map(recorded.log.filter((entry) => entry.hook === 'post_tool_call').map((entry) => [entry.payload.tool_call_id, entry.payload.result]));
        for (const id of ids) expect(posted.get(id), id).toBe(told.get(id));
      });
    }
  }
});
