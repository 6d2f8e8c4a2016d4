// When things happened in a LangChain run, checked against what the program
// really did (test/adapters/timing-checks.ts): createAgent with a tool on the
// real ChatOpenAI client, invoked and streamed (`streamMode: "messages"`, so
// the model streams on the wire), with the handler as
// docs/adapters/langchain.md passes it, against a loopback Chat Completions
// API that holds each answer (streamed: paced over the hold), and a tool that
// takes its time. On the memory backend, and the native one where it loads,
// with the spans also exported over OTLP to a loopback collector.
import { describe, expect, it } from 'vitest';
import { ChatOpenAI } from '@langchain/openai';
import { tool } from '@langchain/core/tools';
import type { BaseMessage } from '@langchain/core/messages';
import { createAgent } from 'langchain';
import * as z from 'zod';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { wallMs } from '../support/doc-snippets.ts';
import { backends, recordedPlugin } from './support.ts';
import { HOLD_MS, loopbackProvider, timedTool } from './timing-checks.ts';

const GPT = 'gpt-4.1-2025-04-14';

const provider = loopbackProvider();

describe('LangChain: the recorded times are when the program did each thing', () => {
  for (const backend of backends()) {
    for (const streamed of [false, true]) {
      it(`createAgent ${streamed ? '.stream (messages)' : '.invoke'} on ${backend}: each model call spans its exchange, the tool its run`, async () => {
        const api = provider.fresh();
        const hold = { stream: streamed, holdMs: HOLD_MS };
        api.reply('chat', { id: 'chatcmpl-1', model: GPT, toolCalls: [{ id: 'call_paris', name: 'get_weather', args: { city: 'Paris' } }], usage: { input: 90, output: 14 } }, hold);
        api.reply('chat', { id: 'chatcmpl-2', model: GPT, text: 'It is sunny in Paris.', usage: { input: 130, output: 7 } }, hold);
        const recorded = recordedPlugin(`lc-timing-${streamed ? 'stream' : 'invoke'}`, backend, { otlpEnabled: true, otlpType: 'full', otlpEndpoint: provider.otlpEndpoint });
        const handler = new NemoRelayCallbackHandler(recorded.hooks);
        const toolRun = { startMs: 0, endMs: 0 };
        const getWeather = tool(
          async ({ city }) => {
            await timedTool(toolRun);
            return `It is sunny in ${city}.`;
          },
          { name: 'get_weather', description: 'Get the weather for a city', schema: z.object({ city: z.string() }) },
        );
        const agent = createAgent({
          model: new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test-not-a-key', configuration: { baseURL: `${provider.url}/v1` } }),
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

        await provider.check(recorded, { runStartMs, runEndMs, closedMs, tool: toolRun, streamed });
      }, 60_000);
    }
  }
});
