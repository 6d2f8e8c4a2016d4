// What the LangChain handler keeps while runs come and go: runs that never
// end (a stream nobody finishes reading, a process that drops a run), runs
// that fail, and threads whose session it keeps open for their next run. The handler is driven with LangChain's own callback calls, as
// CallbackManager makes them, 20,000 times each; the hooks it emits say what
// it still holds open (sessions started and not finalized).
import { describe, expect, it } from 'vitest';
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
});
