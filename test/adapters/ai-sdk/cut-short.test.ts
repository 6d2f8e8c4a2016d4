// A web server's agent in flight when the server shuts down (a SIGTERM's shutdown(), as a user trial's server did):
// the AI SDK's run is inside a tool that waits when the plugin shuts down. The ATOF file ends the tool call
// `session_closed` and the session `runtime_shutdown`; the plugin's trajectory must say so as well, not end on a tool
// call with no result as if the agent simply stopped there: the call's result says `cut short: runtime_shutdown`, its
// turn ends interrupted with that reason, and `view` of the trajectory says it. Both backends.
import { afterEach, describe, expect, it } from 'vitest';
import { generateText, stepCountIs, tool } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import * as z from 'zod';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { backends, recordedPlugin, viewLines, type AtifDoc } from '../support.ts';
import { FakeProvider } from './wire.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

describe('an AI SDK run shut down while its tool runs', () => {
  for (const backend of backends()) {
    it(`${backend}: the trajectory says the tool call was cut short by the shutdown`, async () => {
      const fake = new FakeProvider()
        .reply('chat', { id: 'resp_1', model: 'gpt-4.1-2025-04-14', toolCalls: [{ id: 'call_lookup', name: 'lookup', args: { order: 'A-17' } }], usage: { input: 40, output: 12 } })
        .reply('chat', { id: 'resp_2', model: 'gpt-4.1-2025-04-14', text: 'Order A-17 shipped.', usage: { input: 60, output: 6 } });
      const recorded = recordedPlugin(`ai-cut-short-${backend}`, backend);
      uninstall = instrumentAiSdk(recorded.hooks);
      let started!: () => void;
      const running = new Promise<void>((resolve) => (started = resolve));
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const lookup = tool({
        description: 'Looks an order up (slow: a remote system)',
        inputSchema: z.object({ order: z.string() }),
        execute: async ({ order }) => {
          started();
          await released;
          return { order, status: 'shipped' };
        },
      });
      const model = createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof globalThis.fetch }).chat('gpt-4.1');
      const run = generateText({ model, prompt: 'Where is order A-17?', tools: { lookup }, stopWhen: stepCountIs(3) });
      await running;
      // The server shuts down with the tool still running.
      const { atif, atof, counters } = await recorded.finish();
      release();
      await run;
      expect([counters.errors, counters.abandonedSpans]).toEqual([0, 1]);
      // The ATOF file already said it: the tool ended session_closed, the session runtime_shutdown.
      expect(atof.find((event) => event.category === 'tool' && event.scope_category === 'end')?.metadata['error.type']).toBe('session_closed');
      expect(atof.filter((event) => event.category === 'agent' && event.scope_category === 'end').map((event) => event.data?.reason)).toContain('runtime_shutdown');
      expect(atif).toHaveLength(1);
      const doc = atif[0]!;
      expect(validateAtif(doc)).toEqual([]);
      const steps = doc.steps as AtifDoc[];
      const asked = steps.find((step) => step.tool_calls?.some((call: AtifDoc) => call.tool_call_id === 'call_lookup'))!;
      expect(asked.observation.results).toEqual([{ source_call_id: 'call_lookup', content: 'cut short: runtime_shutdown (the tool call never ended: its session closed first)', extra: { cut_short: 'runtime_shutdown' } }]);
      expect(asked.extra.turn_ends).toEqual([{ status: 'interrupted', reason: 'runtime_shutdown', timestamp: expect.any(String) }]);
      expect(steps.at(-1)).toBe(asked);
      expect(doc.notes).toBe(`The turn that ends at step ${asked.step_id} was cut short (runtime_shutdown): tool lookup never ended.`);
      const lines = await viewLines(recorded, 'atif');
      expect(lines.filter((line) => line.includes('tool lookup'))).toEqual([expect.stringContaining('ERROR cut short: runtime_shutdown')]);
      expect(lines.filter((line) => /─ turn /.test(line))).toEqual([expect.stringContaining('cut short: runtime_shutdown')]);
    });
  }
});
