// When a sub-agent's things happened in a LangChain run, checked against what
// the program really did (test/adapters/timing-subagent-checks.ts): a
// createAgent whose tool invokes another createAgent with the tool's
// `config`, as docs/adapters/langchain.md shows sub-agents started by a tool,
// each agent with its slow tool on the real ChatOpenAI client against a
// loopback Chat Completions API that holds each answer (streamed: paced over
// the hold), the parent invoked and streamed (`streamMode: "messages"`, so
// the models stream on the wire), with the handler as the docs pass it. On
// the memory backend, and the native one where it loads; and a model that
// calls that tool twice in one message, whose two sub-agents run at once, with the spans also
// exported over OTLP to a loopback collector.
import { tool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { createAgent } from 'langchain';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { sleep } from '../../src/shared/timers.ts';
import { wallMs } from '../support/doc-snippets.ts';
import { backends, recordedPlugin } from './support.ts';
import { HOLD_MS, TOOL_MS } from './timing-checks.ts';
import { runLangchainAgent, timingLoopback } from './timing-programs.ts';
import { finishParallelSubagents, finishSubagentRun } from './timing-subagent-checks.ts';

const GPT = 'gpt-4.1-2025-04-14';

const loopback = timingLoopback();

describe('LangChain: an agent invoked inside a tool keeps the times it really took', () => {
  for (const backend of backends()) {
    for (const streamed of [false, true]) {
      it(`createAgent ${streamed ? '.stream (messages)' : '.invoke'} whose tool invokes an agent on ${backend}: the sub-agent sits inside the call, its calls as long as they took`, async () => {
        const api = loopback.reset();
        const { server, collector } = loopback;
        const hold = { stream: streamed, holdMs: HOLD_MS };
        api.reply('chat', { id: 'chatcmpl-1', model: GPT, toolCalls: [{ id: 'call_research', name: 'research', args: { city: 'Paris' } }], usage: { input: 90, output: 14 } }, hold);
        api.reply('chat', { id: 'chatcmpl-2', model: GPT, toolCalls: [{ id: 'call_paris', name: 'get_weather', args: { city: 'Paris' } }], usage: { input: 60, output: 12 } }, hold);
        api.reply('chat', { id: 'chatcmpl-3', model: GPT, text: 'Sunny, 21 °C.', usage: { input: 80, output: 6 } }, hold);
        api.reply('chat', { id: 'chatcmpl-4', model: GPT, text: 'It is sunny in Paris.', usage: { input: 130, output: 7 } }, hold);
        const recorded = recordedPlugin(`lc-sub-timing-${streamed ? 'stream' : 'invoke'}`, backend, { otlpEnabled: true, otlpType: 'full', otlpEndpoint: `${collector.url}/v1/traces` });
        const handler = new NemoRelayCallbackHandler(recorded.hooks);
        const model = () => new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test-not-a-key', configuration: { baseURL: `${server.url}/v1` } });

        const subTool = { startMs: 0, endMs: 0 };
        const getWeather = tool(
          async () => {
            subTool.startMs = wallMs();
            await sleep(TOOL_MS);
            subTool.endMs = wallMs();
            return 'Sunny, 21 °C.';
          },
          { name: 'get_weather', description: 'Get the weather for a city', schema: z.object({ city: z.string() }) },
        );
        const weatherAgent = createAgent({ model: model(), tools: [getWeather], name: 'weather_agent' });
        const sub = { runStartMs: 0, runEndMs: 0 };
        const parentTool = { startMs: 0, endMs: 0 };
        const research = tool(
          async ({ city }, config) => {
            parentTool.startMs = sub.runStartMs = wallMs();
            const out = await weatherAgent.invoke({ messages: [{ role: 'user', content: `What is the weather in ${city}?` }] }, config);
            parentTool.endMs = sub.runEndMs = wallMs();
            return String(out.messages.at(-1)!.content);
          },
          { name: 'research', description: 'Ask the weather agent', schema: z.object({ city: z.string() }) },
        );
        const lead = createAgent({ model: model(), tools: [research], name: 'lead' });

        const { messages, ...run } = await runLangchainAgent(lead, handler, streamed);
        expect(messages.at(-1)?.content).toBe('It is sunny in Paris.');
        // The parent's streaming reaches the sub-agent's model through the tool's config, so all four stream or none.
        expect(api.requests.map((request) => request.body.stream === true)).toEqual([streamed, streamed, streamed, streamed]);

        await finishSubagentRun(recorded, {
          parent: { ...run, tool: parentTool, streamed },
          sub: { ...sub, tool: subTool, streamed },
        }, loopback);
      }, 60_000);
    }
  }
});

describe('LangChain: two agents invoked at once by one tool keep their own times', () => {
  for (const backend of backends()) {
    it(`one message calling the tool twice on ${backend}: each sub-agent sits inside its own call, with its own calls' times`, async () => {
      const api = loopback.reset();
      const { server } = loopback;
      const hold = { holdMs: HOLD_MS };
      const usage = { input: 60, output: 10 };
      api.reply('chat', { id: 'chatcmpl-1', model: GPT, toolCalls: [{ id: 'call_paris', name: 'research', args: { city: 'Paris' } }, { id: 'call_rome', name: 'research', args: { city: 'Rome' } }], usage }, hold);
      // The two sub-agents ask at once; whichever asks first gets the first answer (each names its own city).
      api.reply('chat', { id: 'chatcmpl-2', model: GPT, toolCalls: [{ id: 'call_w1', name: 'get_weather', args: { city: 'Paris' } }], usage }, hold);
      api.reply('chat', { id: 'chatcmpl-3', model: GPT, toolCalls: [{ id: 'call_w2', name: 'get_weather', args: { city: 'Rome' } }], usage }, hold);
      api.reply('chat', { id: 'chatcmpl-4', model: GPT, text: 'Sunny.', usage }, hold);
      api.reply('chat', { id: 'chatcmpl-5', model: GPT, text: 'Sunny.', usage }, hold);
      api.reply('chat', { id: 'chatcmpl-6', model: GPT, text: 'Sunny in both.', usage }, hold);
      const recorded = recordedPlugin(`lc-sub-parallel-${backend}`, backend);
      const handler = new NemoRelayCallbackHandler(recorded.hooks);
      const model = () => new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test-not-a-key', configuration: { baseURL: `${server.url}/v1` } });
      // Rome's tool takes twice as long, so a span given to the other sub-agent shows.
      const toolRuns: Record<string, { startMs: number; endMs: number; ms: number }> = { Paris: { startMs: 0, endMs: 0, ms: TOOL_MS }, Rome: { startMs: 0, endMs: 0, ms: 2 * TOOL_MS } };
      const getWeather = tool(
        async ({ city }) => {
          const ran = toolRuns[city]!;
          ran.startMs = wallMs();
          await sleep(ran.ms);
          ran.endMs = wallMs();
          return 'Sunny.';
        },
        { name: 'get_weather', description: 'Get the weather for a city', schema: z.object({ city: z.string() }) },
      );
      const weatherAgent = createAgent({ model: model(), tools: [getWeather], name: 'weather_agent' });
      const research = tool(
        async ({ city }, config) => String((await weatherAgent.invoke({ messages: [{ role: 'user', content: `What is the weather in ${city}?` }] }, config)).messages.at(-1)!.content),
        { name: 'research', description: 'Ask the weather agent', schema: z.object({ city: z.string() }) },
      );
      const lead = createAgent({ model: model(), tools: [research], name: 'lead' });
      const result = await lead.invoke({ messages: [{ role: 'user', content: 'Weather in Paris and Rome?' }] }, { callbacks: [handler], configurable: { thread_id: 'user-42' } });
      handler.close();
      expect(result.messages.at(-1)?.content).toBe('Sunny in both.');
      // The sub-agents really ran at once: the second asked before the first had its answer.
      expect(server.exchanges[2]!.receivedMs).toBeLessThan(server.exchanges[1]!.lastByteMs);

      await finishParallelSubagents(recorded, toolRuns);
    }, 60_000);
  }
});
