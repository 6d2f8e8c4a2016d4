// When things happened in an AI SDK run, checked against what the program
// really did (test/adapters/timing-checks.ts): generateText and streamText
// with a tool and stopWhen, as docs/adapters/ai-sdk.md sets them up, on the
// real OpenAI provider against a loopback Responses API that holds each
// answer (streamed: paced over the hold), and a tool that takes its time.
// On the memory backend, and the native one where it loads, with the spans
// also exported over OTLP to a loopback collector.
import { describe, expect, it } from 'vitest';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import * as z from 'zod';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { wallMs } from '../../support/doc-snippets.ts';
import { backends, recordedPlugin } from '../support.ts';
import { HOLD_MS, loopbackProvider, timedTool } from '../timing-checks.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

const provider = loopbackProvider();

describe('AI SDK: the recorded times are when the program did each thing', () => {
  for (const backend of backends()) {
    for (const streamed of [false, true]) {
      it(`${streamed ? 'streamText' : 'generateText'} on ${backend}: each model call spans its exchange, the tool its run`, async () => {
        const api = provider.fresh();
        const hold = { stream: streamed, holdMs: HOLD_MS };
        api.reply('responses', { id: 'resp_1', model: 'gpt-4o-2024-08-06', toolCalls: [{ id: 'call_paris', name: 'weather', args: { city: 'Paris' } }], usage: { input: 120, output: 18 } }, hold);
        api.reply('responses', { id: 'resp_2', model: 'gpt-4o-2024-08-06', text: 'It is sunny in Paris.', usage: { input: 170, output: 11 } }, hold);
        const recorded = recordedPlugin(`ai-timing-${streamed ? 'stream' : 'generate'}`, backend, { otlpEnabled: true, otlpType: 'full', otlpEndpoint: provider.otlpEndpoint });
        const uninstall = instrumentAiSdk(recorded.hooks, { sessionId: 'user-42' });
        const openai = createOpenAI({ apiKey: 'sk-test-not-a-key', baseURL: `${provider.url}/v1` });
        const toolRun = { startMs: 0, endMs: 0 };
        const weather = tool({
          description: 'Get the weather for a city',
          inputSchema: z.object({ city: z.string() }),
          execute: async ({ city }) => {
            await timedTool(toolRun);
            return { city, forecast: 'sunny', tempC: 21 };
          },
        });
        const call = { model: openai('gpt-4o'), tools: { weather }, stopWhen: stepCountIs(5), prompt: 'What is the weather in Paris?' };

        const runStartMs = wallMs();
        let text: string;
        if (streamed) {
          const result = streamText(call);
          let read = '';
          for await (const delta of result.textStream) read += delta;
          text = await result.text;
          expect(read).toBe(text);
        } else {
          text = (await generateText(call)).text;
        }
        const runEndMs = wallMs();
        uninstall(); // closes the session
        const closedMs = wallMs();
        expect(text).toBe('It is sunny in Paris.');
        expect(api.requests.map((request) => request.body.stream === true)).toEqual([streamed, streamed]);

        await provider.check(recorded, { runStartMs, runEndMs, closedMs, tool: toolRun, streamed });
      }, 60_000);
    }
  }
});
