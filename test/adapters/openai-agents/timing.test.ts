// WHEN things happened, not only what: the Agents SDK program of the docs
// (a function tool, `run(agent, input)` and `run(agent, input, { stream:
// true })`), its OpenAIResponsesModel on the real openai client against a
// loopback Responses API that takes its time (a JSON answer held 300 ms; a
// stream whose first event waits 200 ms and whose last goes at 500 ms),
// and a tool that awaits 200 ms. The spans in the ATOF file, the ATIF
// steps' stamps and `view`'s durations are checked against the server's
// and the tool's own clocks (test/adapters/timing-checks.ts), with tracing
// on and off, on each backend.
import OpenAI from 'openai';
import { Agent, run, setDefaultOpenAIClient } from '@openai/agents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loopbackApi, wallMs } from '../../support/doc-snippets.ts';
import { paced, type Pace } from '../../support/paced-wire.ts';
import { backends, expectNothingLost, recordedPlugin } from '../support.ts';
import { checkTimes, timedTool, type ProgramTimes } from '../timing-checks.ts';
import { onlyTrajectory, instrumentEachTest, TRACING, useTracing, weatherTool } from './support.ts';
import { FakeOpenAI } from './wire.ts';

const JSON_PACE: Pace = { lastByteMs: 150 };
const STREAM_PACE: Pace = { firstByteMs: 100, lastByteMs: 250 };

const api = new FakeOpenAI();
const toolRuns: Array<ProgramTimes['tool']> = [];
let server: Awaited<ReturnType<typeof loopbackApi>>;
beforeAll(async () => {
  server = await loopbackApi(async (url, init) => {
    const receivedMs = wallMs();
    return paced(await api.fetch(url, init), /"stream":\s*true/.test(init.body) ? STREAM_PACE : JSON_PACE, receivedMs);
  });
  // The SDK's default client, as a program that sets its own: the real openai client, its retries off.
  setDefaultOpenAIClient(new OpenAI({ apiKey: 'sk-test-not-a-key', baseURL: `${server.url}/v1`, maxRetries: 0 }));
});
afterAll(() => server.close());

const instrument = instrumentEachTest();

const getWeather = weatherTool(async ({ city }) => {
  const ran = { startMs: 0, endMs: 0 };
  toolRuns.push(ran);
  await timedTool(ran);
  return `The weather in ${city} is sunny.`;
});

describe('OpenAI Agents SDK: the times a recorded run says are the times it took', () => {
  for (const backend of backends()) {
    for (const tracing of TRACING) {
      for (const stream of [false, true]) {
        it(`${stream ? 'run(agent, input, { stream: true })' : 'run(agent, input)'}, ${tracing}, ${backend} backend`, async () => {
          useTracing(tracing);
          server.exchanges.length = 0;
          toolRuns.length = 0;
          api.load({
            'gpt-4.1': [
              { calls: [{ id: 'call_tokyo', name: 'get_weather', args: { city: 'Tokyo' } }], usage: { input: 90, output: 14 } },
              { text: 'It is sunny in Tokyo.', usage: { input: 130, output: 8 } },
            ],
          });
          const recorded = recordedPlugin('agents-timing', backend);
          instrument(recorded.hooks);
          const agent = new Agent({ name: 'Weather Agent', instructions: 'You are a helpful weather assistant.', model: 'gpt-4.1', tools: [getWeather] });
          const runStartMs = wallMs();
          let answer: unknown;
          if (stream) {
            const result = await run(agent, 'What is the weather in Tokyo?', { stream: true });
            let text = '';
            for await (const chunk of result.toTextStream()) text += chunk;
            await result.completed;
            answer = text;
          } else {
            answer = (await run(agent, 'What is the weather in Tokyo?')).finalOutput;
          }
          const runEndMs = wallMs();
          expect(answer).toBe('It is sunny in Tokyo.');
          expect(api.requests.map((request) => [request.api, request.body.stream === true])).toEqual([
            ['responses', stream],
            ['responses', stream],
          ]);
          expect(toolRuns).toHaveLength(1);

          const { atif, atof, counters } = await recorded.finish();
          expectNothingLost(counters);
          const pace = stream ? STREAM_PACE : JSON_PACE;
          // In process: each span starts as the SDK calls the model, before the request leaves.
          checkTimes(atof, onlyTrajectory(atif), { runStartMs, runEndMs, exchanges: server.exchanges, answerMs: pace.lastByteMs, tool: toolRuns[0]!, streamed: stream });
        }, 30_000);
      }
    }
  }
});
