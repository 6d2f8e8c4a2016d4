// Tools whose `execute` throws something other than a plain Error: a string (`throw 'quote service down'`), an Error
// subclass that keeps the inherited name, an object. The SDK tells the model its own text of each (a string as it
// is, an Error as `toString()`, anything else as JSON); a user trial's trajectory said `string: quote service down`
// where the model read `quote service down`. Each call's outcome must be the text the model was told, as a thrown
// Error's is (options.test.ts), through generateText and streamText.
import { afterEach, describe, expect, it } from 'vitest';
import { generateText, stepCountIs, streamText, tool, type ToolSet } from 'ai';
import { createAnthropic } from '@ai-sdk/anthropic';
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
const SONNET = 'claude-sonnet-4-5-20250929';

class QuoteError extends Error {}

const THROWN: Record<string, () => unknown> = {
  string: () => 'quote service down',
  subclass: () => new QuoteError('quote service down'),
  object: () => ({ code: 503, reason: 'quote service down' }),
};

describe('a tool that throws something other than an Error', () => {
  for (const mode of ['generateText', 'streamText'] as const) {
    it(`${mode}: each call's outcome is the text the model was told of it`, async () => {
      const stream = mode === 'streamText';
      const ids = Object.keys(THROWN);
      const fake = new FakeProvider()
        .reply('anthropic', { id: 'msg_1', model: SONNET, toolCalls: ids.map((kind) => ({ id: `toolu_${kind}`, name: kind, args: { symbol: 'NVDA' } })), usage: { input: 100, output: 30 } }, { stream })
        .reply('anthropic', { id: 'msg_2', model: SONNET, text: 'No quotes today.', usage: { input: 200, output: 8 } }, { stream });
      const recorded = recordedPlugin(`ai-tool-throws-${mode}`);
      uninstall = instrumentAiSdk(recorded.hooks);
      const tools: ToolSet = Object.fromEntries(
        ids.map((kind) => [kind, tool({ description: 'a quote', inputSchema: z.object({ symbol: z.string() }), execute: async (): Promise<string> => { throw THROWN[kind]!(); } })]),
      );
      const options = { model: createAnthropic({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch })('claude-sonnet-4-5'), prompt: 'Quotes?', tools, stopWhen: stepCountIs(3) };
      if (stream) await streamText(options).consumeStream();
      else await generateText(options);
      const told = new Map(
        (fake.requests[1]!.body.messages as Step[]).flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b: Step) => b.type === 'tool_result').map((b: Step) => [b.tool_use_id, b.content]),
      );
      expect(told.get('toolu_string')).toBe('quote service down');
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      const results = (atif[0]!.steps as Step[]).flatMap((step) => step.observation?.results ?? []);
      for (const kind of ids) {
        const result = results.find((one: Step) => one.source_call_id === `toolu_${kind}`);
        expect(result.content, kind).toBe(told.get(`toolu_${kind}`));
        expect(result.extra.metadata.status, kind).toBe('error');
      }
    });
  }
});
