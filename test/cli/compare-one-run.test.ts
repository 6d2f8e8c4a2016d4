// `compare` on one run's two files (its ATIF trajectory and its ATOF file),
// recorded by the plugin from programs written as each framework's docs
// write them, on the real provider clients over a fake fetch: they must
// compare equivalent, and what only one file records is said as such.
// Both cases were found by the random-wire runs' compare check
// (test/adapters/random-wire-compare.ts, run by the slow suite).
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { ToolLoopAgent, stepCountIs, tool as aiTool } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { ChatOpenAI } from '@langchain/openai';
import { tool as lcTool } from '@langchain/core/tools';
import { createAgent, humanInTheLoopMiddleware } from 'langchain';
import { Command, END, MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import * as z from 'zod';
import { instrumentAiSdk } from '../../src/adapters/ai-sdk/index.ts';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { expectNothingLost, recordedPlugin } from '../adapters/support.ts';
import { FakeProvider } from '../adapters/ai-sdk/wire.ts';
import { chatCompletion, scriptedFetch } from '../support/provider-wire.ts';
import { cliInProcess } from './support.ts';
import { filesOf } from './view-json.ts';
import { compared, differencesOf } from './compare-json.ts';

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

describe('compare: one run, its ATIF file against its ATOF file', () => {
  it('AI SDK: a tool that runs a sub-agent fails (the sub-agent\'s provider refuses): the trajectory keeps the sub-agent\'s link as the call\'s result, so only the ATOF file says the call failed', async () => {
    const fake = new FakeProvider();
    fake.reply('responses', { id: 'resp_1', model: 'gpt-4.1-2025-04-14', toolCalls: [{ id: 'call_research', name: 'research', args: { topic: 'Lisbon trams' } }], usage: { input: 80, output: 20 } });
    fake.fail('responses', 400, 'The model gpt-4.1 does not exist or you do not have access to it.');
    fake.reply('responses', { id: 'resp_2', model: 'gpt-4.1-2025-04-14', text: 'I could not research Lisbon trams.', usage: { input: 140, output: 12 } });
    const recorded = recordedPlugin('compare-subagent-failed');
    uninstall = instrumentAiSdk(recorded.hooks, { sessionId: 'trams-1' });
    const model = createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch, maxRetries: 0 } as never)('gpt-4.1');
    // The SDK docs' sub-agent pattern: a tool whose execute runs another agent and returns its text.
    const researcher = new ToolLoopAgent({ id: 'researcher', model, instructions: 'You research travel questions.', maxRetries: 0 });
    const research = aiTool({
      description: 'Research a topic with a sub-agent',
      inputSchema: z.object({ topic: z.string() }),
      execute: async ({ topic }, { abortSignal }) => (await researcher.generate({ prompt: topic, abortSignal })).text,
    });
    const agent = new ToolLoopAgent({ id: 'travel-agent', model, instructions: 'You are a travel assistant.', tools: { research }, stopWhen: stepCountIs(3), maxRetries: 0 });
    expect((await agent.generate({ prompt: 'Tell me about Lisbon trams.' })).text).toBe('I could not research Lisbon trams.');
    uninstall();
    uninstall = undefined;
    const { counters } = await recorded.finish();
    expectNothingLost(counters);
    const files = filesOf(recorded.dir);
    const report = await compared(files.atif, files.atof);
    expect(differencesOf(report)).toEqual([]);
    expect(report.code).toBe(0);
    // The sub-agent's turn failed too: the trajectory says so (`extra.turn_ends`), as the ATOF file does, so it was compared.
    expect(report.onlyRecorded).toEqual([{ fact: 'error', run: 'b', values: [expect.stringMatching(/^research: AI_APICallError: The model gpt-4\.1 does not exist/)] }]);
    const subagent = (JSON.parse(readFileSync(files.atif, 'utf8')) as { subagent_trajectories: Array<{ steps: Array<{ extra?: { turn_ends?: unknown } }> }> }).subagent_trajectories[0]!;
    expect(subagent.steps.at(-1)!.extra?.turn_ends).toMatchObject([{ status: 'failed', error_type: 'AI_APICallError' }]);
    const text = (await cliInProcess(['compare', files.atof, files.atif])).stdout.split('\n');
    expect(text.filter((line) => line.startsWith('only a'))[0]).toMatch(/^only a's file records that calls which ran a sub-agent failed \(not compared\): research: AI_APICallError: /);
    expect(text.at(-2)).toMatch(/^runs are equivalent: /);
  }, 30_000);

  it('LangGraph: a node its retryPolicy ran again pauses for an approval; the Command that resumes it starts it afresh, asking again with the user\'s message: one user turn from either file', async () => {
    const { fetch } = scriptedFetch([
      { status: 503, json: { error: { message: 'The server is overloaded', type: 'server_error', code: null, param: null } } },
      chatCompletion({ id: 'chatcmpl-r1', model: 'gpt-4.1-2025-04-14', content: null, toolCalls: [{ id: 'call_rm_1', name: 'remove', args: { path: '/tmp/report.txt' } }], usage: { prompt_tokens: 40, completion_tokens: 12 } }),
      chatCompletion({ id: 'chatcmpl-r2', model: 'gpt-4.1-2025-04-14', content: null, toolCalls: [{ id: 'call_rm_2', name: 'remove', args: { path: '/tmp/report.txt' } }], usage: { prompt_tokens: 40, completion_tokens: 12 } }),
      chatCompletion({ id: 'chatcmpl-r3', model: 'gpt-4.1-2025-04-14', content: 'Removed /tmp/report.txt.', usage: { prompt_tokens: 80, completion_tokens: 7 } }),
    ]);
    const remove = lcTool(async ({ path }) => `removed ${path}`, { name: 'remove', description: 'Remove a file', schema: z.object({ path: z.string() }) });
    const cleaner = createAgent({
      model: new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, configuration: { fetch } }),
      tools: [remove],
      middleware: [humanInTheLoopMiddleware({ interruptOn: { remove: true } })],
    });
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('cleaner', cleaner.graph, { retryPolicy: { maxAttempts: 3, initialInterval: 1, jitter: false } })
      .addEdge(START, 'cleaner')
      .addEdge('cleaner', END)
      .compile({ checkpointer: new MemorySaver() });
    const recorded = recordedPlugin('compare-node-retried-resumed');
    const handler = new NemoRelayCallbackHandler(recorded.hooks);
    const config = { callbacks: [handler], configurable: { thread_id: 'cleanup-11' } };
    const paused = (state: object) => '__interrupt__' in state;
    expect(paused(await graph.invoke({ messages: [{ role: 'user', content: 'Remove /tmp/report.txt' }] }, config))).toBe(true);
    // LangGraph keeps no checkpoint of the retried attempt: the node starts afresh, its model asked again, and pauses again.
    expect(paused(await graph.invoke(new Command({ resume: { decisions: [{ type: 'approve' }] } }), config))).toBe(true);
    expect((await graph.invoke(new Command({ resume: { decisions: [{ type: 'approve' }] } }), config)).messages.at(-1)!.content).toBe('Removed /tmp/report.txt.');
    handler.close();
    const { counters } = await recorded.finish();
    expectNothingLost(counters);
    const files = filesOf(recorded.dir);
    const report = await compared(files.atif, files.atof);
    expect(differencesOf(report)).toEqual([]);
    expect(report.code).toBe(0);
    // The first decision never reached the middleware (the node started afresh): one decision, two pauses.
    expect(report.onlyRecorded).toEqual([
      { fact: 'approval', run: 'b', values: ['remove: once'] },
      { fact: 'turn', run: 'b', values: ['“Remove /tmp/report.txt”: interrupted, resumed, interrupted, resumed, completed'] },
    ]);
  }, 30_000);
});
