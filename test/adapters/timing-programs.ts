// The two real programs the timing tests run (test/adapters/timing-checks.ts
// checks what they record): an AI SDK generateText/streamText call and a
// LangChain createAgent run, each with one slow tool, as the adapter docs set
// them up, against the held, paced loopback provider. Each scripts the
// provider's two answers, runs, closes its session, and says when it did what.
import { expect } from 'vitest';
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
import { wallMs } from '../support/doc-snippets.ts';
import type { FakeProvider } from './ai-sdk/wire.ts';
import { HOLD_MS, TOOL_MS, type ProgramTimes } from './timing-checks.ts';

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
function slowTool(toolRun: { startMs: number; endMs: number }, result: () => unknown, work?: () => Promise<unknown>): () => Promise<any> {
  return async () => {
    toolRun.startMs = wallMs();
    const answer = work === undefined ? await sleep(TOOL_MS).then(result) : await work();
    toolRun.endMs = wallMs();
    return answer;
  };
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
  return { runStartMs, runEndMs, closedMs, tool: toolRun, streamed };
}
