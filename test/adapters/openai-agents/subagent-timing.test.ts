// When a sub-agent's things happened in an Agents SDK run, checked against
// what the program really did (test/adapters/timing-subagent-checks.ts): an
// agent whose tool is another agent (`agent.asTool()`, as
// docs/adapters/openai-agents.md shows agents as tools), that agent with its
// own slow function tool, and a handoff to that agent (a sub-agent that goes
// on to the run's end), and the agent-tool called twice in one response (the
// SDK runs both at once), on OpenAIResponsesModel over the real openai client
// against a loopback Responses API that holds each answer (a stream: its
// events spread over the hold), run whole and streamed, with tracing on and
// off. On the memory backend, and the native one where it loads, with the
// spans also exported over OTLP to a loopback collector.
import OpenAI from 'openai';
import { Agent, OpenAIResponsesModel, run, tool } from '@openai/agents';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { instrumentOpenAIAgents } from '../../../src/adapters/openai-agents/index.ts';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { sleep } from '../../../src/shared/timers.ts';
import { loopbackApi, wallMs } from '../../support/doc-snippets.ts';
import { startHttpReceiver, type Receiver } from '../../support/otlp-receiver.ts';
import { paced } from '../../support/paced-wire.ts';
import { backends, expectNothingLost, recordedPlugin } from '../support.ts';
import { HOLD_MS, TOOL_MS } from '../timing-checks.ts';
import { checkHandoffTimes, checkParallelSubagents, checkSubagentTimes } from '../timing-subagent-checks.ts';
import { onlyTrajectory, TRACING, useTracing } from './support.ts';
import { FakeOpenAI } from './wire.ts';

const api = new FakeOpenAI();
/** Whether each request asked for a stream, in the order they came. */
const streamedRequests: boolean[] = [];
let server: Awaited<ReturnType<typeof loopbackApi>>;
let client: OpenAI;
let collector: Receiver;
beforeAll(async () => {
  server = await loopbackApi(async (url, init) => {
    const stream = /"stream":\s*true/.test(init.body);
    streamedRequests.push(stream);
    const receivedMs = wallMs();
    return paced(await api.fetch(url, init), { lastByteMs: HOLD_MS }, receivedMs);
  });
  client = new OpenAI({ apiKey: 'sk-test-not-a-key', baseURL: `${server.url}/v1`, maxRetries: 0 });
  collector = await startHttpReceiver();
});
afterAll(async () => {
  await server.close();
  await collector.close();
});

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

/** The weather agent's tool: takes TOOL_MS, and notes when it ran in `ran`. */
const weatherTool = (ran: { startMs: number; endMs: number }) =>
  tool({
    name: 'get_weather',
    description: 'Get the weather for a given city',
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      ran.startMs = wallMs();
      await sleep(TOOL_MS);
      ran.endMs = wallMs();
      return `Sunny in ${city}, 24 °C.`;
    },
  });

/** Reads a run to its end, whole or streamed, and returns its answer. */
async function runToEnd(agent: Agent, input: string, stream: boolean): Promise<unknown> {
  if (!stream) return (await run(agent, input)).finalOutput;
  const result = await run(agent, input, { stream: true });
  let text = '';
  for await (const chunk of result.toTextStream()) text += chunk;
  await result.completed;
  return text;
}

describe('OpenAI Agents SDK: an agent used as a tool keeps the times it really took', () => {
  for (const backend of backends()) {
    for (const tracing of TRACING) {
      for (const stream of [false, true]) {
        it(`agent.asTool() under ${stream ? 'run(agent, input, { stream: true })' : 'run(agent, input)'}, ${tracing}, ${backend}: the sub-agent sits inside the call, its calls as long as they took`, async () => {
          useTracing(tracing);
          server.exchanges.length = 0;
          streamedRequests.length = 0;
          collector.requests.length = 0;
          api.load({
            'gpt-4.1': [
              { calls: [{ id: 'call_weather', name: 'ask_weather_agent', args: { input: 'Weather in Tokyo?' } }], usage: { input: 90, output: 14 } },
              { text: 'It is sunny in Tokyo.', usage: { input: 130, output: 8 } },
            ],
            'gpt-4.1-mini': [
              { calls: [{ id: 'call_tokyo', name: 'get_weather', args: { city: 'Tokyo' } }], usage: { input: 60, output: 12 } },
              { text: 'Sunny, 24 °C.', usage: { input: 80, output: 6 } },
            ],
          });
          const recorded = recordedPlugin(`agents-sub-timing-${stream ? 'stream' : 'run'}`, backend, { otlpEnabled: true, otlpType: 'full', otlpEndpoint: `${collector.url}/v1/traces` });
          uninstall = instrumentOpenAIAgents(recorded.hooks);

          const subTool = { startMs: 0, endMs: 0 };
          const weatherAgent = new Agent({ name: 'weather_agent', instructions: 'Answer with the weather.', model: new OpenAIResponsesModel(client, 'gpt-4.1-mini'), tools: [weatherTool(subTool)] });
          const assistant = new Agent({
            name: 'assistant',
            instructions: 'Use the weather agent.',
            model: new OpenAIResponsesModel(client, 'gpt-4.1'),
            tools: [weatherAgent.asTool({ toolName: 'ask_weather_agent', toolDescription: 'Ask the weather agent' })],
          });

          const runStartMs = wallMs();
          const answer = await runToEnd(assistant, 'What is the weather in Tokyo?', stream);
          const runEndMs = wallMs();
          uninstall(); // closes the session
          uninstall = undefined;
          const closedMs = wallMs();
          expect(answer).toBe('It is sunny in Tokyo.');
          // asTool runs its agent whole, whatever the parent does.
          expect(streamedRequests).toEqual([stream, false, false, stream]);

          const { atof, atif, counters } = await recorded.finish();
          expectNothingLost(counters);
          const doc = onlyTrajectory(atif);
          expect(validateAtif(doc)).toEqual([]);
          const [parentAsk, subAsk, subAnswer, parentAnswer] = server.exchanges;
          checkSubagentTimes(atof, doc, {
            // The SDK runs the agent-tool itself: its run covers at least the sub-agent's exchanges.
            parent: { runStartMs, runEndMs, closedMs, tool: { startMs: subAsk!.receivedMs, endMs: subAnswer!.lastByteMs }, streamed: stream },
            // The sub-agent runs after the parent's model asked for it, and ends before its answer is sent on.
            sub: { runStartMs: parentAsk!.lastByteMs, runEndMs: parentAnswer!.receivedMs, tool: subTool, streamed: false },
            exchanges: server.exchanges,
            otlp: collector.spans(),
          });
        }, 60_000);
      }
    }
  }
});

describe('OpenAI Agents SDK: the agent a handoff goes to keeps the times it really took', () => {
  for (const backend of backends()) {
    for (const stream of [false, true]) {
      it(`a handoff under ${stream ? 'run(agent, input, { stream: true })' : 'run(agent, input)'}, ${backend}: the next agent starts after the transfer, its calls as long as they took`, async () => {
        useTracing('tracing on');
        server.exchanges.length = 0;
        streamedRequests.length = 0;
        collector.requests.length = 0;
        api.load({
          'gpt-4.1': [{ calls: [{ id: 'call_handoff', name: 'transfer_to_weather_agent', args: {} }], usage: { input: 90, output: 9 } }],
          'gpt-4.1-mini': [
            { calls: [{ id: 'call_tokyo', name: 'get_weather', args: { city: 'Tokyo' } }], usage: { input: 60, output: 12 } },
            { text: 'It is sunny in Tokyo.', usage: { input: 80, output: 6 } },
          ],
        });
        const recorded = recordedPlugin(`agents-handoff-timing-${stream ? 'stream' : 'run'}`, backend, { otlpEnabled: true, otlpType: 'full', otlpEndpoint: `${collector.url}/v1/traces` });
        uninstall = instrumentOpenAIAgents(recorded.hooks);
        const subTool = { startMs: 0, endMs: 0 };
        const weatherAgent = new Agent({ name: 'weather_agent', instructions: 'Answer with the weather.', handoffDescription: 'Knows the weather', model: new OpenAIResponsesModel(client, 'gpt-4.1-mini'), tools: [weatherTool(subTool)] });
        const triage = new Agent({ name: 'triage_agent', instructions: 'Hand off to the right agent.', model: new OpenAIResponsesModel(client, 'gpt-4.1'), handoffs: [weatherAgent] });

        const runStartMs = wallMs();
        const answer = await runToEnd(triage, 'What is the weather in Tokyo?', stream);
        const runEndMs = wallMs();
        uninstall(); // closes the session
        uninstall = undefined;
        const closedMs = wallMs();
        expect(answer).toBe('It is sunny in Tokyo.');
        expect(streamedRequests).toEqual([stream, stream, stream]);

        const { atof, atif, counters } = await recorded.finish();
        expectNothingLost(counters);
        const doc = onlyTrajectory(atif);
        expect(validateAtif(doc)).toEqual([]);
        checkHandoffTimes(atof, doc, { runStartMs, runEndMs, closedMs, exchanges: server.exchanges, tool: subTool, otlp: collector.spans() });
      }, 60_000);
    }
  }
});

describe('OpenAI Agents SDK: one agent-tool called twice at once keeps each run’s own times', () => {
  for (const backend of backends()) {
    it(`agent.asTool() called twice in one response, ${backend}: each sub-agent sits inside its own call, with its own calls' times`, async () => {
      useTracing('tracing on');
      server.exchanges.length = 0;
      streamedRequests.length = 0;
      const usage = { input: 60, output: 10 };
      api.load({
        'gpt-4.1': [
          { calls: [{ id: 'call_paris', name: 'ask_weather_agent', args: { input: 'Weather in Paris?' } }, { id: 'call_rome', name: 'ask_weather_agent', args: { input: 'Weather in Rome?' } }], usage },
          { text: 'Sunny in both.', usage },
        ],
        // The two sub-agents ask at once; whichever asks first gets the first answer (each names its own city).
        'gpt-4.1-mini': [
          { calls: [{ id: 'call_w1', name: 'get_weather', args: { city: 'Paris' } }], usage },
          { calls: [{ id: 'call_w2', name: 'get_weather', args: { city: 'Rome' } }], usage },
          { text: 'Sunny.', usage },
          { text: 'Sunny.', usage },
        ],
      });
      const recorded = recordedPlugin(`agents-sub-parallel-${backend}`, backend);
      uninstall = instrumentOpenAIAgents(recorded.hooks);
      // Rome's tool takes twice as long, so a span given to the other sub-agent shows.
      const toolRuns: Record<string, { startMs: number; endMs: number; ms: number }> = { Paris: { startMs: 0, endMs: 0, ms: TOOL_MS }, Rome: { startMs: 0, endMs: 0, ms: 2 * TOOL_MS } };
      const getWeather = tool({
        name: 'get_weather',
        description: 'Get the weather for a given city',
        parameters: z.object({ city: z.string() }),
        execute: async ({ city }) => {
          const ran = toolRuns[city]!;
          ran.startMs = wallMs();
          await sleep(ran.ms);
          ran.endMs = wallMs();
          return 'Sunny.';
        },
      });
      const weatherAgent = new Agent({ name: 'weather_agent', instructions: 'Answer with the weather.', model: new OpenAIResponsesModel(client, 'gpt-4.1-mini'), tools: [getWeather] });
      const assistant = new Agent({ name: 'assistant', instructions: 'Use the weather agent.', model: new OpenAIResponsesModel(client, 'gpt-4.1'), tools: [weatherAgent.asTool({ toolName: 'ask_weather_agent', toolDescription: 'Ask the weather agent' })] });
      const answer = await runToEnd(assistant, 'Weather in Paris and Rome?', false);
      uninstall();
      uninstall = undefined;
      expect(answer).toBe('Sunny in both.');
      // The sub-agents really ran at once: the second asked before the first had its answer.
      expect(server.exchanges[2]!.receivedMs).toBeLessThan(server.exchanges[1]!.lastByteMs);

      const { atof, atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      const doc = onlyTrajectory(atif);
      expect(validateAtif(doc)).toEqual([]);
      checkParallelSubagents(atof, doc, toolRuns);
    }, 60_000);
  }
});
