// When a sub-agent's things happened in an AI SDK run, checked against what
// the program really did (test/adapters/timing-subagent-checks.ts): a tool
// whose execute runs generateText (streamText, read to the end, when the
// parent streams), a sub-agent as docs/adapters/ai-sdk.md describes, with its
// own slow tool, on the real OpenAI provider against a loopback Responses API
// that holds each answer (streamed: paced over the hold). On the memory
// backend, and the native one where it loads, with the spans also exported
// over OTLP to a loopback collector. And a model asking for that tool twice
// in one step, whose two sub-agents the SDK runs at once.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, tool } from 'ai';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { sleep } from '../../../src/shared/timers.ts';
import { wallMs } from '../../support/doc-snippets.ts';
import { backends, recordedPlugin } from '../support.ts';
import { HOLD_MS, TOOL_MS } from '../timing-checks.ts';
import { aiSdkText, timingLoopback } from '../timing-programs.ts';
import { finishParallelSubagents, finishSubagentRun } from '../timing-subagent-checks.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

const loopback = timingLoopback();

describe('AI SDK: a sub-agent run inside a tool keeps the times it really took', () => {
  for (const backend of backends()) {
    for (const streamed of [false, true]) {
      it(`${streamed ? 'streamText' : 'generateText'} in a tool's execute on ${backend}: the sub-agent sits inside the call, its calls as long as they took`, async () => {
        const api = loopback.reset();
        const { server, collector } = loopback;
        const hold = { stream: streamed, holdMs: HOLD_MS };
        const usage = { input: 100, output: 10 };
        api.reply('responses', { id: 'resp_1', model: 'gpt-4o-2024-08-06', toolCalls: [{ id: 'call_research', name: 'research', args: { city: 'Paris' } }], usage }, hold);
        api.reply('responses', { id: 'resp_2', model: 'gpt-4o-2024-08-06', toolCalls: [{ id: 'call_paris', name: 'weather', args: { city: 'Paris' } }], usage }, hold);
        api.reply('responses', { id: 'resp_3', model: 'gpt-4o-2024-08-06', text: 'Sunny, 21 °C.', usage }, hold);
        api.reply('responses', { id: 'resp_4', model: 'gpt-4o-2024-08-06', text: 'It is sunny in Paris.', usage }, hold);
        const recorded = recordedPlugin(`ai-sub-timing-${streamed ? 'stream' : 'generate'}`, backend, { otlpEnabled: true, otlpType: 'full', otlpEndpoint: `${collector.url}/v1/traces` });
        const uninstall = instrumentAiSdk(recorded.hooks, { sessionId: 'user-42' });
        const openai = createOpenAI({ apiKey: 'sk-test-not-a-key', baseURL: `${server.url}/v1` });

        const subTool = { startMs: 0, endMs: 0 };
        const weather = tool({
          description: 'Get the weather for a city',
          inputSchema: z.object({ city: z.string() }),
          execute: async ({ city }) => {
            subTool.startMs = wallMs();
            await sleep(TOOL_MS);
            subTool.endMs = wallMs();
            return { city, forecast: 'sunny', tempC: 21 };
          },
        });
        const sub = { runStartMs: 0, runEndMs: 0 };
        const parentTool = { startMs: 0, endMs: 0 };
        const research = tool({
          description: 'Research the weather of a city with a weather agent',
          inputSchema: z.object({ city: z.string() }),
          execute: async ({ city }, { abortSignal }) => {
            parentTool.startMs = wallMs();
            const call = { model: openai('gpt-4o'), tools: { weather }, stopWhen: stepCountIs(5), prompt: `What is the weather in ${city}?`, abortSignal };
            sub.runStartMs = wallMs();
            const { text } = await aiSdkText(call, streamed);
            sub.runEndMs = wallMs();
            parentTool.endMs = wallMs();
            return text;
          },
        });
        const call = { model: openai('gpt-4o'), tools: { research }, stopWhen: stepCountIs(5), prompt: 'What is the weather in Paris?' };

        const runStartMs = wallMs();
        const { text } = await aiSdkText(call, streamed);
        const runEndMs = wallMs();
        uninstall(); // closes the session
        const closedMs = wallMs();
        expect(text).toBe('It is sunny in Paris.');
        expect(api.requests.map((request) => request.body.stream === true)).toEqual([streamed, streamed, streamed, streamed]);

        await finishSubagentRun(recorded, {
          parent: { runStartMs, runEndMs, closedMs, tool: parentTool, streamed },
          sub: { ...sub, tool: subTool, streamed },
        }, loopback);
      }, 60_000);
    }
  }
});

describe('AI SDK: two sub-agents run at once by one step keep their own times', () => {
  for (const backend of backends()) {
    it(`two calls of a generateText tool in one step on ${backend}: each sub-agent sits inside its own call, with its own calls' times`, async () => {
      const api = loopback.reset();
      const { server } = loopback;
      const hold = { holdMs: HOLD_MS };
      const usage = { input: 60, output: 10 };
      api.reply('responses', { id: 'resp_1', model: 'gpt-4o-2024-08-06', toolCalls: [{ id: 'call_paris', name: 'research', args: { city: 'Paris' } }, { id: 'call_rome', name: 'research', args: { city: 'Rome' } }], usage }, hold);
      // The two sub-agents ask at once; whichever asks first gets the first answer (each names its own city).
      api.reply('responses', { id: 'resp_2', model: 'gpt-4o-2024-08-06', toolCalls: [{ id: 'call_w1', name: 'weather', args: { city: 'Paris' } }], usage }, hold);
      api.reply('responses', { id: 'resp_3', model: 'gpt-4o-2024-08-06', toolCalls: [{ id: 'call_w2', name: 'weather', args: { city: 'Rome' } }], usage }, hold);
      api.reply('responses', { id: 'resp_4', model: 'gpt-4o-2024-08-06', text: 'Sunny.', usage }, hold);
      api.reply('responses', { id: 'resp_5', model: 'gpt-4o-2024-08-06', text: 'Sunny.', usage }, hold);
      api.reply('responses', { id: 'resp_6', model: 'gpt-4o-2024-08-06', text: 'Sunny in both.', usage }, hold);
      const recorded = recordedPlugin(`ai-sub-parallel-${backend}`, backend);
      const uninstall = instrumentAiSdk(recorded.hooks, { sessionId: 'user-42' });
      const openai = createOpenAI({ apiKey: 'sk-test-not-a-key', baseURL: `${server.url}/v1` });
      // Rome's tool takes twice as long, so a span given to the other sub-agent shows.
      const toolRuns: Record<string, { startMs: number; endMs: number; ms: number }> = { Paris: { startMs: 0, endMs: 0, ms: TOOL_MS }, Rome: { startMs: 0, endMs: 0, ms: 2 * TOOL_MS } };
      const weather = tool({
        description: 'Get the weather for a city',
        inputSchema: z.object({ city: z.string() }),
        execute: async ({ city }) => {
          const ran = toolRuns[city]!;
          ran.startMs = wallMs();
          await sleep(ran.ms);
          ran.endMs = wallMs();
          return { city, forecast: 'sunny' };
        },
      });
      const research = tool({
        description: 'Research the weather of a city with a weather agent',
        inputSchema: z.object({ city: z.string() }),
        execute: async ({ city }, { abortSignal }) => (await generateText({ model: openai('gpt-4o'), tools: { weather }, stopWhen: stepCountIs(5), prompt: `What is the weather in ${city}?`, abortSignal })).text,
      });
      const { text } = await generateText({ model: openai('gpt-4o'), tools: { research }, stopWhen: stepCountIs(5), prompt: 'Weather in Paris and Rome?' });
      uninstall();
      expect(text).toBe('Sunny in both.');
      // The sub-agents really ran at once: the second asked before the first had its answer.
      expect(server.exchanges[2]!.receivedMs).toBeLessThan(server.exchanges[1]!.lastByteMs);

      await finishParallelSubagents(recorded, toolRuns);
    }, 60_000);
  }
});
