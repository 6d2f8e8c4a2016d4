// What the LangChain handler keeps while runs come and go: runs that never
// end (a stream nobody finishes reading, a process that drops a run), runs
// that fail, and threads whose session it keeps open for their next run. The handler is driven with LangChain's own callback calls, as
// CallbackManager makes them, 20,000 times each (a thread whose sub-agent
// paused for approval is a real program's run first); the hooks it emits say what
// it still holds open (sessions started and not finalized).
import { describe, expect, it } from 'vitest';
import { ChatAnthropic } from '@langchain/anthropic';
import { ChatOpenAI } from '@langchain/openai';
import { tool } from '@langchain/core/tools';
import { MemorySaver } from '@langchain/langgraph';
import { createAgent, humanInTheLoopMiddleware } from 'langchain';
import * as z from 'zod';
import { anthropicMessage, chatCompletion, scriptedFetch } from '../support/provider-wire.ts';
import { expectNothingAfterFinalize, type Recorded } from '../adapters/support.ts';
import { HOOK_NAMES } from '../../src/hooks/names.ts';
import { HookRegistry } from '../../src/hooks/registry.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { MAX_OPEN_RUNS, NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { MAX_HELD_SESSIONS } from '../../src/adapters/core/holds.ts';

const RUNS = 20_000;
const graph = { lc: 1, type: 'not_implemented', id: ['langgraph', 'pregel', 'CompiledStateGraph'] };
const node = { lc: 1, type: 'not_implemented', id: ['langchain_core', 'runnables', 'RunnableSequence'] };
const uuid = (n: number, kind: number) => `01a23370-0000-7000-8${kind}00-${n.toString(16).padStart(12, '0')}`;

function counting() {
  const hooks = new HookRegistry({ logger: silentLogger });
  const counts = new Map<string, number>();
  for (const name of HOOK_NAMES) hooks.on(name, () => void counts.set(name, (counts.get(name) ?? 0) + 1));
  const open = () => (counts.get('on_session_start') ?? 0) - (counts.get('on_session_finalize') ?? 0);
  return { hooks, counts, open };
}

describe('LangChain handler: bounded over runs that never end and runs that fail', () => {
  it(`${RUNS} runs that never end: at most ${MAX_OPEN_RUNS} stay open, the older ones end as interrupted, and their tools and attempts with them`, async () => {
    const { hooks, counts, open } = counting();
    const handler = new NemoRelayCallbackHandler(hooks);
    let most = 0;
    for (let i = 0; i < RUNS; i++) {
      const root = uuid(i, 1);
      const model = uuid(i, 2);
      const llm = uuid(i, 3);
      const tools = uuid(i, 4);
      const toolRun = uuid(i, 5);
      handler.handleChainStart(graph, { messages: [{ role: 'user', content: `question ${i}` }] }, root, undefined, [], {}, undefined, 'agent');
      handler.handleChainStart(node, {}, model, root as never, [], { langgraph_node: 'model_request' }, undefined, 'model_request');
      handler.handleChatModelStart({}, [[{ role: 'user', content: `question ${i}` }]], llm, model, {}, [], { ls_provider: 'openai', ls_model_name: 'gpt-4.1' });
      handler.handleLLMEnd({ generations: [[{ text: '', message: { content: '', tool_calls: [{ id: `call_${i}`, name: 'lookup', args: {} }] } }]] }, llm, model);
      handler.handleChainEnd({}, model);
      handler.handleChainStart(node, {}, tools, root as never, [], { langgraph_node: 'tools' }, undefined, 'tools');
      handler.handleToolStart({}, '{}', toolRun, tools, [], {}, 'lookup', `call_${i}`);
      // ...and nothing more: the consumer walked away.
      most = Math.max(most, open());
    }
    expect(most).toBe(MAX_OPEN_RUNS);
    expect(open()).toBe(MAX_OPEN_RUNS);
    const ended = RUNS - MAX_OPEN_RUNS;
    expect(counts.get('on_session_end')).toBe(ended);
    // Each ended run closed the tool it left running before its session closed.
    expect(counts.get('post_tool_call')).toBe(ended);
    expect(counts.get('pre_tool_call')).toBe(RUNS);
  });

  it(`${RUNS} runs that fail: every session closes, and what the failed runs left open ends with them`, async () => {
    const { hooks, counts, open } = counting();
    const handler = new NemoRelayCallbackHandler(hooks);
    let most = 0;
    for (let i = 0; i < RUNS; i++) {
      const root = uuid(i, 1);
      const model = uuid(i, 2);
      const llm = uuid(i, 3);
      handler.handleChainStart(graph, { messages: [{ role: 'user', content: `question ${i}` }] }, root, undefined, [], {}, undefined, 'agent');
      handler.handleChainStart(node, {}, model, root as never, [], { langgraph_node: 'model_request' }, undefined, 'model_request');
      handler.handleChatModelStart({}, [[{ role: 'user', content: `question ${i}` }]], llm, model, {}, [], { ls_provider: 'openai', ls_model_name: 'gpt-4.1' });
      // The provider call fails every other time; the other half fail with the model call still open (no LLM end at all).
      if (i % 2 === 0) handler.handleLLMError(Object.assign(new Error('503'), { status: 503 }), llm, model);
      handler.handleChainError(new Error('the model failed'), model);
      handler.handleChainError(new Error('the model failed'), root);
      most = Math.max(most, open());
    }
    expect(most).toBe(0); // measured after each run: none stays open
    expect(open()).toBe(0);
    expect(counts.get('on_session_end')).toBe(RUNS);
    expect(counts.get('on_session_finalize')).toBe(RUNS);
    // Every attempt ended: the open ones as failed when their run ended.
    expect(counts.get('api_request_error')).toBe(RUNS);
    expect(counts.get('pre_api_request')).toBe(RUNS);
  });
  it(`${RUNS} threads run once each: at most ${MAX_HELD_SESSIONS} stay open for their next run, the oldest close first, close() closes the rest`, async () => {
    const { hooks, counts, open } = counting();
    const handler = new NemoRelayCallbackHandler(hooks);
    let most = 0;
    for (let i = 0; i < RUNS; i++) {
      const root = uuid(i, 1);
      handler.handleChainStart(graph, { messages: [{ role: 'user', content: `question ${i}` }] }, root, undefined, [], { thread_id: `thread-${i}` }, undefined, 'agent');
      handler.handleChainEnd({ messages: [] }, root);
      most = Math.max(most, open());
    }
    expect(most).toBe(MAX_HELD_SESSIONS);
    expect(counts.get('on_session_end')).toBe(RUNS);
    expect(counts.get('on_session_finalize')).toBe(RUNS - MAX_HELD_SESSIONS);
    // The thread most recently run is still open: its next run is a turn of the same session.
    handler.handleChainStart(graph, { messages: [{ role: 'user', content: 'again' }] }, uuid(RUNS, 1), undefined, [], { thread_id: `thread-${RUNS - 1}` }, undefined, 'agent');
    expect(counts.get('on_session_start')).toBe(RUNS);
    handler.handleChainEnd({ messages: [] }, uuid(RUNS, 1));
    handler.close();
    expect(open()).toBe(0);
  });

  it(`a thread whose tool's agent paused for approval under another handler, then ${MAX_HELD_SESSIONS} newer threads: the oldest closes after that sub-agent's link, not before`, async () => {
    const hooks = new HookRegistry({ logger: silentLogger });
    const log: Recorded['log'] = [];
    for (const name of HOOK_NAMES) hooks.on(name, (payload) => void log.push({ hook: name, payload: payload as unknown as Record<string, unknown> }));
    // The server's first handler (it releases the held threads) and the one its request for thread ops-9 made.
    const first = new NemoRelayCallbackHandler(hooks);
    const { fetch } = scriptedFetch([
      chatCompletion({ id: 'chatcmpl-sup1', model: 'gpt-4.1-2025-04-14', content: null, toolCalls: [{ id: 'call_ask_ops', name: 'ask_ops', args: { question: 'Delete /tmp/old.log' } }], usage: { prompt_tokens: 40, completion_tokens: 8 } }),
      anthropicMessage({ id: 'msg_ops1', model: 'claude-sonnet-4-5-20250929', content: [{ type: 'tool_use', id: 'toolu_delete', name: 'delete_file', input: { path: '/tmp/old.log' } }], usage: { input_tokens: 70, output_tokens: 20 } }),
    ]);
    const deleteFile = tool(async ({ path }) => `deleted ${path}`, { name: 'delete_file', description: 'Delete a file', schema: z.object({ path: z.string() }) });
    const ops = createAgent({
      model: new ChatAnthropic({ model: 'claude-sonnet-4-5', apiKey: 'sk-ant-test', maxRetries: 0, clientOptions: { fetch } }),
      tools: [deleteFile],
      name: 'ops',
      middleware: [humanInTheLoopMiddleware({ interruptOn: { delete_file: { allowedDecisions: ['approve', 'reject'] } } })],
    });
    const askOps = tool(async ({ question }, config) => (await ops.invoke({ messages: [{ role: 'user', content: question }] }, config)).messages.at(-1)!.text, {
      name: 'ask_ops',
      description: 'Ask the ops agent',
      schema: z.object({ question: z.string() }),
    });
    const assistant = createAgent({ model: new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, configuration: { fetch } }), tools: [askOps], name: 'assistant', checkpointer: new MemorySaver() });
    const paused = await assistant.invoke({ messages: [{ role: 'user', content: 'Clean up the old log' }] }, { callbacks: [new NemoRelayCallbackHandler(hooks)], configurable: { thread_id: 'ops-9' } });
    expect((paused as unknown as { __interrupt__?: unknown[] }).__interrupt__).toHaveLength(1);
    // Nobody resumes ops-9; newer threads push it out of the held ones.
    for (let i = 0; i < MAX_HELD_SESSIONS; i++) {
      const root = uuid(i, 1);
      first.handleChainStart(graph, { messages: [{ role: 'user', content: `question ${i}` }] }, root, undefined, [], { thread_id: `thread-${i}` }, undefined, 'agent');
      first.handleChainEnd({ messages: [] }, root);
    }
    const ofOps9 = () =>
      log
        .filter((e) => (e.hook === 'on_session_start' || e.hook === 'on_session_finalize' || e.hook.startsWith('subagent_')) && String(e.payload.session_id ?? e.payload.parent_session_id).startsWith('ops-9'))
        .map((e) => [e.hook, e.payload.session_id ?? e.payload.child_session_id, e.payload.reason ?? e.payload.child_status]);
    // Released, but its sub-agent's link is still open: the session waits for it.
    expect(ofOps9()).toEqual([
      ['on_session_start', 'ops-9', undefined],
      ['subagent_start', 'ops-9:sub:call_ask_ops', undefined],
    ]);
    first.close(); // the paused sub-agent closes, interrupted, and then its parent's session
    expect(ofOps9()).toEqual([
      ['on_session_start', 'ops-9', undefined],
      ['subagent_start', 'ops-9:sub:call_ask_ops', undefined],
      ['on_session_finalize', 'ops-9:sub:call_ask_ops', 'subagent_complete'],
      ['subagent_stop', 'ops-9:sub:call_ask_ops', 'interrupted'],
      ['on_session_finalize', 'ops-9', 'held_too_long'],
    ]);
    expectNothingAfterFinalize(log);
  });
});
