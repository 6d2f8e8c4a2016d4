// The two real programs the timing tests run (test/adapters/timing-checks.ts
// checks what they record): an AI SDK generateText/streamText call and a
// LangChain createAgent run, each with one slow tool, as the adapter docs set
// them up, against the held, paced loopback provider. Each scripts the
// provider's two answers, runs, closes its session, and says when it did what.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, streamText, tool as aiTool } from 'ai';
import { ChatOpenAI } from '@langchain/openai';
import { tool as lcTool } from '@langchain/core/tools';
import type { BaseMessage } from '@langchain/core/messages';
import { createAgent } from 'langchain';
import * as z from 'zod';
import { instrumentAiSdk } from '../../src/adapters/ai-sdk/index.ts';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import type { HookRegistry } from '../../src/hooks/registry.ts';
import { sleep } from '../../src/shared/timers.ts';
import { loopbackApi, wallMs } from '../support/doc-snippets.ts';
import { startHttpReceiver, type Receiver } from '../support/otlp-receiver.ts';
import { FakeProvider } from './ai-sdk/wire.ts';
import { backends, recordedPlugin } from './support.ts';
import { checkTimes, finishedRun, HOLD_MS, TOOL_MS, timedTool, type ProgramTimes } from './timing-checks.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

/** What a program saw; the test adds the server's exchanges and the OTLP spans. */
export type ProgramRun = Pick<ProgramTimes, 'runStartMs' | 'runEndMs' | 'closedMs' | 'tool' | 'streamed'>;

export interface ProgramSetup {
  /** Instrumented by the program; a plugin (and a recorder) are the test's. */
  hooks: HookRegistry;
  /** The provider behind the loopback server: the program scripts its answers. */
  api: FakeProvider;
  /** The loopback server's address. */
  serverUrl: string;
  streamed: boolean;
  /** What the tool does (default: waits TOOL_MS); its answer is the tool's result. */
  work?: () => Promise<unknown>;
}

const GPT = 'gpt-4.1-2025-04-14';

/** A tool body that does `work` (default: waits TOOL_MS, then answers `result`) and notes when it ran. */
function slowTool(toolRun: ProgramTimes['tool'], result: () => unknown, work?: () => Promise<unknown>): () => Promise<any> {
  return () => timedTool(toolRun, work ?? (() => sleep(TOOL_MS).then(result)));
}

/** generateText (or streamText, read to the end) with a weather tool and stopWhen, on the real OpenAI provider. */
export async function aiSdkProgram({ hooks, api, serverUrl, streamed, work }: ProgramSetup): Promise<ProgramRun> {
  const hold = { stream: streamed, holdMs: HOLD_MS };
  api.reply('responses', { id: 'resp_1', model: 'gpt-4o-2024-08-06', toolCalls: [{ id: 'call_paris', name: 'weather', args: { city: 'Paris' } }], usage: { input: 120, output: 18 } }, hold);
  api.reply('responses', { id: 'resp_2', model: 'gpt-4o-2024-08-06', text: 'It is sunny in Paris.', usage: { input: 170, output: 11 } }, hold);
  const uninstall = instrumentAiSdk(hooks, { sessionId: 'user-42' });
  const openai = createOpenAI({ apiKey: 'sk-test-not-a-key', baseURL: `${serverUrl}/v1` });
  const toolRun = { startMs: 0, endMs: 0 };
  const forecast = slowTool(toolRun, () => ({ city: 'Paris', forecast: 'sunny', tempC: 21 }), work);
  const weather = aiTool({
    description: 'Get the weather for a city',
    inputSchema: z.object({ city: z.string() }),
    execute: forecast,
  });
  const call = { model: openai('gpt-4o'), tools: { weather }, stopWhen: stepCountIs(5), prompt: 'What is the weather in Paris?' };

  const runStartMs = wallMs();
  const { text, read } = await aiSdkText(call, streamed);
  if (streamed) expect(read).toBe(text);
  const runEndMs = wallMs();
  uninstall(); // closes the session
  const closedMs = wallMs();
  expect(text).toBe('It is sunny in Paris.');
  expect(api.requests.map((request) => request.body.stream === true)).toEqual([streamed, streamed]);
  return { runStartMs, runEndMs, closedMs, tool: toolRun, streamed };
}

/** createAgent with a tool on ChatOpenAI, invoked (or streamed, `streamMode: "messages"`), with the handler as the docs pass it. */
export async function langchainProgram({ hooks, api, serverUrl, streamed, work }: ProgramSetup): Promise<ProgramRun> {
  const hold = { stream: streamed, holdMs: HOLD_MS };
  api.reply('chat', { id: 'chatcmpl-1', model: GPT, toolCalls: [{ id: 'call_paris', name: 'get_weather', args: { city: 'Paris' } }], usage: { input: 90, output: 14 } }, hold);
  api.reply('chat', { id: 'chatcmpl-2', model: GPT, text: 'It is sunny in Paris.', usage: { input: 130, output: 7 } }, hold);
  const handler = new NemoRelayCallbackHandler(hooks);
  const toolRun = { startMs: 0, endMs: 0 };
  const getWeather = lcTool(slowTool(toolRun, () => 'It is sunny in Paris.', work), {
    name: 'get_weather',
    description: 'Get the weather for a city',
    schema: z.object({ city: z.string() }),
  });
  const agent = createAgent({
    model: new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test-not-a-key', configuration: { baseURL: `${serverUrl}/v1` } }),
    tools: [getWeather],
    name: 'weather_agent',
  });
  const { messages, ...run } = await runLangchainAgent(agent, handler, streamed);
  expect(messages.at(-1)?.content).toBe('It is sunny in Paris.');
  expect(api.requests.map((request) => request.body.stream === true)).toEqual([streamed, streamed]);
  return { ...run, tool: toolRun, streamed };
}

/**
 * An AI SDK call run to its text: generateText, or streamText with its text stream read to the end (`read`, what the
 * stream delivered, for a program that checks it against the final text).
 */
export async function aiSdkText(call: Parameters<typeof generateText>[0] & Parameters<typeof streamText>[0], streamed: boolean): Promise<{ text: string; read?: string }> {
  if (!streamed) return { text: (await generateText(call)).text };
  const result = streamText(call);
  let read = '';
  for await (const delta of result.textStream) read += delta;
  return { text: await result.text, read };
}

/**
 * A createAgent run as the docs run one, with the handler, on thread `user-42`, asking for Paris's weather: invoked, or
 * streamed (`streamMode: "messages"`, the last `values` chunk its state); then the handler closed, which closes the
 * thread's session. Its messages, and when it started, returned and closed.
 */
export async function runLangchainAgent(
  agent: { invoke: ReturnType<typeof createAgent>['invoke']; stream: ReturnType<typeof createAgent>['stream'] },
  handler: NemoRelayCallbackHandler,
  streamed: boolean,
): Promise<{ messages: BaseMessage[]; runStartMs: number; runEndMs: number; closedMs: number }> {
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
  return { messages, runStartMs, runEndMs, closedMs: wallMs() };
}

/** The loopback provider and OTLP collector a timing test file starts and closes; `reset` gives each test a fresh provider and empties both logs. */
export interface TimingLoopback {
  readonly api: FakeProvider;
  readonly server: Awaited<ReturnType<typeof loopbackApi>>;
  readonly collector: Receiver;
  reset(): FakeProvider;
}

/** Starts (beforeAll) and closes (afterAll) a timing test file's loopback provider, serving the latest `reset`'s FakeProvider, and its OTLP collector. */
export function timingLoopback(): TimingLoopback {
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
  return {
    get api() {
      return api;
    },
    get server() {
      return server;
    },
    get collector() {
      return collector;
    },
    reset() {
      api = new FakeProvider();
      server.exchanges.length = 0;
      collector.requests.length = 0;
      return api;
    },
  };
}

/**
 * The timing test of one program: on each backend, its answers whole and
 * streamed (`modes` names the two calls), against a loopback provider (a
 * FakeProvider behind loopbackApi) and an OTLP collector the file starts and
 * closes; its files complete and valid, and `checkTimes` on them with the
 * server's exchanges and the spans the plugin exported.
 */
export function describeTimes(framework: string, label: string, modes: readonly [whole: string, streamed: string], program: (setup: ProgramSetup) => Promise<ProgramRun>): void {
  const loopback = timingLoopback();
  describe(`${framework}: the recorded times are when the program did each thing`, () => {
    for (const backend of backends()) {
      for (const streamed of [false, true]) {
        it(`${modes[streamed ? 1 : 0]} on ${backend}: each model call spans its exchange, the tool its run`, async () => {
          const api = loopback.reset();
          const { server, collector } = loopback;
          const recorded = recordedPlugin(`${label}-${streamed ? 'stream' : 'whole'}`, backend, { otlpEnabled: true, otlpType: 'full', otlpEndpoint: `${collector.url}/v1/traces` });
          const run = await program({ hooks: recorded.hooks, api, serverUrl: server.url, streamed });

          const { atof, doc } = await finishedRun(recorded);
          checkTimes(atof, doc, { ...run, exchanges: server.exchanges, otlp: collector.spans() });
        }, 60_000);
      }
    }
  });
}
