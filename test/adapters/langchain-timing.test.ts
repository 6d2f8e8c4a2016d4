// When things happened in a LangChain run, checked against what the program
// really did (test/adapters/timing-checks.ts): createAgent with a tool on the
// real ChatOpenAI client, invoked and streamed (`streamMode: "messages"`, so
// the model streams on the wire), with the handler as
// docs/adapters/langchain.md passes it, against a loopback Chat Completions
// API that holds each answer (streamed: paced over the hold), and a tool that
// takes its time. On the memory backend, and the native one where it loads,
// with the spans also exported over OTLP to a loopback collector.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatOpenAI } from '@langchain/openai';
import { tool } from '@langchain/core/tools';
import type { BaseMessage } from '@langchain/core/messages';
import { createAgent } from 'langchain';
import * as z from 'zod';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { sleep } from '../../src/shared/timers.ts';
import { loopbackApi, wallMs } from '../support/doc-snippets.ts';
import { FakeProvider } from './ai-sdk/wire.ts';
import { startHttpReceiver, type Receiver } from '../support/otlp-receiver.ts';
import { backends, expectNothingLost, recordedPlugin } from './support.ts';
import { HOLD_MS, TOOL_MS, checkTimes } from './timing-checks.ts';

const GPT = 'gpt-4.1-2025-04-14';

let api = new FakeProvider();
let server: Awaited<ReturnType<typeof loopbackApi>>;
let collector: Receiver;
beforeAll(async () => {
  server = await loopbackApi((url, init) => api.fetch(url, init));
  collector = await startHttpReceiver();
});
afterAll(async () => {
  await server.close();
  await collector.close();
});

describe('LangChain: the recorded times are when the program did each thing', () => {
  for (const backend of backends()) {
    for (const streamed of [false, true]) {
      it(`createAgent ${streamed ? '.stream (messages)' : '.invoke'} on ${backend}: each model call spans its exchange, the tool its run`, async () => {
        api = new FakeProvider();
        server.exchanges.length = 0;
        const hold = { stream: streamed, holdMs: HOLD_MS };
        api.reply('chat', { id: 'chatcmpl-1', model: GPT, toolCalls: [{ id: 'call_paris', name: 'get_weather', args: { city: 'Paris' } }], usage: { input: 90, output: 14 } }, hold);
        api.reply('chat', { id: 'chatcmpl-2', model: GPT, text: 'It is sunny in Paris.', usage: { input: 130, output: 7 } }, hold);
        collector.requests.length = 0;
        const recorded = recordedPlugin(`lc-timing-${streamed ? 'stream' : 'invoke'}`, backend, { otlpEnabled: true, otlpType: 'full', otlpEndpoint: `${collector.url}/v1/traces` });
        const handler = new NemoRelayCallbackHandler(recorded.hooks);
        const toolRun = { startMs: 0, endMs: 0 };
        const getWeather = tool(
          async ({ city }) => {
            toolRun.startMs = wallMs();
            await sleep(TOOL_MS);
            toolRun.endMs = wallMs();
            return `It is sunny in ${city}.`;
          },
          { name: 'get_weather', description: 'Get the weather for a city', schema: z.object({ city: z.string() }) },
        );
        const agent = createAgent({
          model: new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test-not-a-key', configuration: { baseURL: `${server.url}/v1` } }),
          tools: [getWeather],
          name: 'weather_agent',
        });
        const input = { messages: [{ role: 'user', content: 'What is the weather in Paris?' }] };
        const config = { callbacks: [handler], configurable: { thread_id: 'user-42' } };

        const runStartMs = wallMs();
        let messages: BaseMessage[];
        if (streamed) {
          let last: { messages: BaseMessage[] } | undefined;
          for await (const [kind, chunk] of await agent.stream(input, { ...config, streamMode: ['messages', 'values'] })) if (kind === 'values') last = chunk as { messages: BaseMessage[] };
          messages = last!.messages;
        } else {
          messages = (await agent.invoke(input, config)).messages;
        }
        const runEndMs = wallMs();
        handler.close(); // closes the thread's session
        const closedMs = wallMs();
        expect(messages.at(-1)?.content).toBe('It is sunny in Paris.');
        expect(api.requests.map((request) => request.body.stream === true)).toEqual([streamed, streamed]);

        const { atof, atif, counters } = await recorded.finish();
        expectNothingLost(counters);
        expect(atif).toHaveLength(1);
        expect(validateAtif(atif[0]!)).toEqual([]);
        checkTimes(atof, atif[0]!, { runStartMs, runEndMs, closedMs, exchanges: server.exchanges, tool: toolRun, streamed, otlp: collector.spans() });
      }, 60_000);
    }
  }
});
