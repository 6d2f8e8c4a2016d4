// The rules every adapter shares: which session a run belongs to, who opens
// and closes it, and how a sub-agent is linked. Driven through AdapterCore
// directly, with the hooks recorded in order.
import { describe, expect, it } from 'vitest';
import { HookRegistry } from '../../src/hooks/registry.ts';
import { HOOK_NAMES } from '../../src/hooks/names.ts';
import { AdapterCore } from '../../src/adapters/core/run.ts';
import { PausedSubagents } from '../../src/adapters/core/holds.ts';
import { MAX_HOST_SESSIONS } from '../../src/adapters/core/host-sessions.ts';
import { sessionIdFor } from '../../src/adapters/core/options.ts';
import { Guard } from '../../src/adapters/core/guard.ts';
import { chatFinishReason } from '../../src/adapters/core/finish.ts';
import { recordedValue } from '../../src/adapters/core/shapes.ts';
import { silentLogger } from '../../src/shared/logger.ts';

function recorder() {
  const hooks = new HookRegistry({ logger: silentLogger });
  const log: Array<[string, Record<string, unknown>]> = [];
  for (const name of HOOK_NAMES) hooks.on(name, (payload) => void log.push([name, payload as Record<string, unknown>]));
  return { hooks, log, names: () => log.map(([name]) => name) };
}

describe('session ids', () => {
  it('prefers options.sessionId, then the conversation id, then the run id', () => {
    const guard = new Guard(silentLogger);
    expect(sessionIdFor({ sessionId: 's' }, { runId: 'r', conversationId: 'c' }, guard)).toBe('s');
    expect(sessionIdFor({ sessionId: (run) => `fn-${run.agentName}` }, { runId: 'r', agentName: 'a' }, guard)).toBe('fn-a');
    expect(sessionIdFor({ sessionId: () => undefined }, { runId: 'r', conversationId: 'c' }, guard)).toBe('c');
    expect(sessionIdFor({}, { runId: 'r' }, guard)).toBe('r');
    expect(guard.failures).toBe(0);
  });

  it('gives a run whose sessionId function throws the default id, and says so once', () => {
    const warnings: string[] = [];
    const guard = new Guard({ ...silentLogger, warn: (message: string) => void warnings.push(message) });
    const throws = () => {
      throw new Error('no chat in this store');
    };
    expect(sessionIdFor({ sessionId: throws }, { runId: 'r', conversationId: 'c' }, guard)).toBe('c');
    expect(sessionIdFor({ sessionId: throws }, { runId: 'r2' }, guard)).toBe('r2');
    expect(guard.failures).toBe(2);
    expect(warnings).toEqual([expect.stringContaining('sessionId function, whose run took the default session id, failed (reported once')]);
  });
});

describe('finish reasons: one vocabulary, Chat Completions\' spelling', () => {
  it('spells each provider\'s and framework\'s reason as Chat Completions does where its definition covers it, and keeps the rest', () => {
    const cases: Array<[string | undefined, boolean, string | undefined]> = [
      // Chat Completions' own, as they are.
      ['stop', false, 'stop'],
      ['length', false, 'length'],
      ['tool_calls', true, 'tool_calls'],
      ['content_filter', false, 'content_filter'],
      ['function_call', true, 'tool_calls'],
      // A forced tool call OpenAI answers with `stop` stays the provider's word.
      ['stop', true, 'stop'],
      // Anthropic Messages.
      ['end_turn', false, 'stop'],
      ['stop_sequence', false, 'stop'],
      ['max_tokens', false, 'length'],
      ['model_context_window_exceeded', false, 'length'],
      ['tool_use', true, 'tool_calls'],
      ['refusal', false, 'content_filter'],
      ['pause_turn', false, 'pause_turn'],
      // Amazon Bedrock Converse (ChatBedrockConverse keeps them as Bedrock spells them).
      ['guardrail_intervened', false, 'content_filter'],
      ['content_filtered', false, 'content_filter'],
      // The AI SDK's unified reasons.
      ['tool-calls', true, 'tool_calls'],
      ['content-filter', false, 'content_filter'],
      ['error', false, 'error'],
      ['other', false, 'other'],
      // Gemini, as native's codec reads it.
      ['STOP', false, 'stop'],
      ['STOP', true, 'tool_calls'],
      ['MAX_TOKENS', false, 'length'],
      ['SAFETY', false, 'content_filter'],
      ['RECITATION', false, 'content_filter'],
      ['MALFORMED_FUNCTION_CALL', false, 'MALFORMED_FUNCTION_CALL'],
      // Cohere (ChatCohere keeps v1's `finish_reason`, which says COMPLETE after tool calls too; v2 says TOOL_CALL).
      ['COMPLETE', false, 'stop'],
      ['COMPLETE', true, 'tool_calls'],
      ['STOP_SEQUENCE', false, 'stop'],
      ['TOOL_CALL', true, 'tool_calls'],
      ['ERROR_TOXIC', false, 'content_filter'],
      ['ERROR_LIMIT', false, 'ERROR_LIMIT'],
      // Nothing said.
      [undefined, false, undefined],
      ['', true, undefined],
    ];
    expect(cases.map(([reason, calls]) => chatFinishReason(reason, calls))).toEqual(cases.map(([, , expected]) => expected));
  });

  it('is what every adapter\'s post_api_request says, in the hook and in its response', () => {
    const { hooks, log } = recorder();
    const run = new AdapterCore(hooks, {}, 'test').startRun({ runId: 'r1', userMessage: () => 'hi' })!;
    const call = run.newApiCall();
    call.attemptStart(() => ({ messages: [{ role: 'user', content: 'hi' }], model: 'claude-sonnet-4-5' }));
    call.attemptEnd({ text: '', toolCalls: [{ id: 'toolu_1', name: 'f', arguments: {} }], finishReason: 'tool_use', model: 'claude-sonnet-4-5-20250929' });
    const post = log.find(([name]) => name === 'post_api_request')![1];
    expect(post.finish_reason).toBe('tool_calls');
    expect((post.response as Record<string, unknown>).finish_reason).toBe('tool_calls');
  });
});

describe('the model asked for and the model that answered', () => {
  it('never gives a later request the model an earlier answer named, when the framework does not say what it asked for', () => {
    const { hooks, log } = recorder();
    // A run whose model the framework does not expose (OpenAIChatCompletionsModel keeps it private).
    const run = new AdapterCore(hooks, {}, 'test').startRun({ runId: 'r1', userMessage: () => 'hi' })!;
    for (const id of ['a', 'b']) {
      const call = run.newApiCall();
      call.attemptStart(() => ({ messages: [{ role: 'user', content: 'hi' }] }));
      call.attemptEnd({ text: id, toolCalls: [], finishReason: 'stop', model: 'gpt-4.1-2025-04-14' });
    }
    run.end('completed');
    const pres = log.filter(([name]) => name === 'pre_api_request').map(([, payload]) => payload);
    expect(pres.map((payload) => [payload.model, (payload.request as { body: Record<string, unknown> }).body.model])).toEqual([
      [undefined, undefined],
      [undefined, undefined],
    ]);
    expect(log.filter(([name]) => name === 'post_api_request').map(([, payload]) => payload.response_model)).toEqual(['gpt-4.1-2025-04-14', 'gpt-4.1-2025-04-14']);
    // The turn still names the model that answered.
    expect(log.find(([name]) => name === 'on_session_end')![1].model).toBe('gpt-4.1-2025-04-14');
  });

  it('keeps the model a run asked for on its requests, and the reported one on its responses', () => {
    const { hooks, log } = recorder();
    const run = new AdapterCore(hooks, {}, 'test').startRun({ runId: 'r1', model: 'gpt-4.1', userMessage: () => 'hi' })!;
    const call = run.newApiCall();
    call.attemptStart(() => ({ messages: [{ role: 'user', content: 'hi' }] }));
    call.attemptEnd({ text: 'x', toolCalls: [], finishReason: 'stop', model: 'gpt-4.1-2025-04-14' });
    run.end('completed');
    const pre = log.find(([name]) => name === 'pre_api_request')![1];
    expect([pre.model, (pre.request as { body: Record<string, unknown> }).body.model]).toEqual(['gpt-4.1', 'gpt-4.1']);
    expect(log.find(([name]) => name === 'post_api_request')![1].response_model).toBe('gpt-4.1-2025-04-14');
  });
});

describe('AdapterCore', () => {
  it('opens and closes the session around a top-level run', () => {
    const { hooks, names } = recorder();
    const run = new AdapterCore(hooks, {}, 'test').startRun({ runId: 'r1', userMessage: () => 'hi' })!;
    run.end('completed', 'bye');
    expect(names()).toEqual(['on_session_start', 'pre_llm_call', 'post_llm_call', 'on_session_end', 'on_session_finalize']);
  });

  it('leaves session start and finalize to the host when sessionScope is "host"', () => {
    const { hooks, names } = recorder();
    const core = new AdapterCore(hooks, { sessionScope: 'host', sessionId: 'conv' }, 'test');
    core.startRun({ runId: 'r1', userMessage: () => 'one' })!.end('completed');
    core.startRun({ runId: 'r2', userMessage: () => 'two' })!.end('completed');
    expect(names()).toEqual(['pre_llm_call', 'post_llm_call', 'on_session_end', 'pre_llm_call', 'post_llm_call', 'on_session_end']);
  });

  it('with sessionScope "host", a run of a host session that already had a turn is not its first, whichever adapter instance on the hooks ran it', () => {
    const { hooks, log } = recorder();
    const options = { sessionScope: 'host' as const, sessionId: (run: { runId: string }) => run.runId.split('/')[0] };
    const core = new AdapterCore(hooks, options, 'test');
    core.startRun({ runId: 'conv/1', userMessage: () => 'one' })!.end('completed');
    core.startRun({ runId: 'conv/2', userMessage: () => 'two' })!.end('completed');
    // Another session: its own first turn.
    core.startRun({ runId: 'other/1', userMessage: () => 'elsewhere' })!.end('completed');
    // Another instance recording into the same hooks (a handler made per request): the same session.
    new AdapterCore(hooks, options, 'test').startRun({ runId: 'conv/3', userMessage: () => 'three' })!.end('completed');
    // Another host, another registry: nothing shared.
    const { hooks: elsewhere, log: elsewhereLog } = recorder();
    new AdapterCore(elsewhere, options, 'test').startRun({ runId: 'conv/1', userMessage: () => 'one' })!.end('completed');
    const turns = (entries: typeof log) => entries.filter(([name]) => name === 'pre_llm_call').map(([, payload]) => [payload.session_id, payload.is_first_turn]);
    expect(turns(log)).toEqual([
      ['conv', true],
      ['conv', false],
      ['other', true],
      ['conv', false],
    ]);
    expect(turns(elsewhereLog)).toEqual([['conv', true]]);
  });

  it('remembers the newest host sessions that had a turn, a bounded number', () => {
    const { hooks, log } = recorder();
    const core = new AdapterCore(hooks, { sessionScope: 'host', sessionId: (run) => run.runId.split('/')[0] }, 'test');
    const turn = (runId: string) => core.startRun({ runId, userMessage: () => runId })!.end('completed');
    turn('first/1');
    for (let i = 0; i < MAX_HOST_SESSIONS; i++) turn(`s${i}/1`);
    // `first` is forgotten (its next run reads as a first turn); the newest are remembered.
    turn('first/2');
    turn(`s${MAX_HOST_SESSIONS - 1}/2`);
    const firstTurn = (runId: string) => log.find(([name, payload]) => name === 'pre_llm_call' && payload.user_message === runId)![1].is_first_turn;
    expect([firstTurn('first/1'), firstTurn('first/2'), firstTurn(`s${MAX_HOST_SESSIONS - 1}/2`)]).toEqual([true, true, false]);
  });

  it('lets overlapping runs of one session share it: the last to end closes it', () => {
    const { hooks, log } = recorder();
    const core = new AdapterCore(hooks, { sessionId: 'shared' }, 'test');
    const a = core.startRun({ runId: 'a' })!;
    const b = core.startRun({ runId: 'b' })!;
    a.end('completed');
    expect(log.filter(([name]) => name === 'on_session_finalize')).toHaveLength(0);
    b.end('failed', undefined, new Error('x'));
    expect(log.filter(([name]) => name === 'on_session_start')).toHaveLength(1);
    expect(log.filter(([name]) => name === 'on_session_finalize')).toHaveLength(1);
    expect(log.find(([name, p]) => name === 'on_session_end' && p.failed === true)).toBeDefined();
  });

  it('links a sub-agent to the tool call it runs in, and closes its session before subagent_stop', () => {
    const { hooks, log, names } = recorder();
    const core = new AdapterCore(hooks, { sessionId: 'parent' }, 'test');
    const parent = core.startRun({ runId: 'p' })!;
    parent.toolStart({ id: 'call_1', name: 'delegate', arguments: '{}' });
    const child = core.startRun({ runId: 'c', agentName: 'helper', userMessage: () => 'do it', parent: { run: parent, toolCallId: 'call_1' } })!;
    expect(child.sessionId).toBe('parent:sub:call_1');
    child.end('completed', 'done');
    parent.toolEnd('call_1', { result: 'done' });
    parent.end('completed');
    expect(names()).toEqual([
      'on_session_start', 'pre_llm_call', 'pre_tool_call', 'subagent_start', 'pre_llm_call', 'post_llm_call', 'on_session_end', 'on_session_finalize', 'subagent_stop', 'post_tool_call', 'post_llm_call', 'on_session_end', 'on_session_finalize',
    ]);
    const start = log.find(([name]) => name === 'subagent_start')![1];
    expect(start).toMatchObject({ parent_session_id: 'parent', child_session_id: 'parent:sub:call_1', tool_call_id: 'call_1', child_role: 'helper', child_goal: 'do it' });
  });

  it('shares one api_request_id across the attempts of a call and counts retries', () => {
    const { hooks, log } = recorder();
    const run = new AdapterCore(hooks, {}, 'test').startRun({ runId: 'r' })!;
    const call = run.newApiCall();
    call.attemptStart(() => ({ messages: [{ role: 'user', content: 'hi' }] }));
    call.attemptError(Object.assign(new Error('503'), { statusCode: 503, isRetryable: true }));
    call.attemptStart();
    call.attemptEnd({ text: 'ok', toolCalls: [], usage: { shape: 'anthropic_messages', usage: { input_tokens: 1, output_tokens: 1, cache_read_input_tokens: 2 } } });
    const api = log.filter(([name]) => name.includes('api_request'));
    expect(api.map(([name, p]) => [name, p.api_request_id, p.retry_count])).toEqual([
      ['pre_api_request', call.ids.api_request_id, 0],
      ['api_request_error', call.ids.api_request_id, 0],
      ['pre_api_request', call.ids.api_request_id, 1],
      ['post_api_request', call.ids.api_request_id, undefined],
    ]);
    expect(api[1]![1]).toMatchObject({ status_code: 503, retryable: true, error: { message: '503' } });
    expect(api[3]![1].usage).toEqual({ prompt_tokens: 3, completion_tokens: 1, total_tokens: 4, prompt_tokens_details: { cached_tokens: 2 } });
  });

  it('tracks no run and calls no session function when no hook has a subscriber', () => {
    let asked = 0;
    const core = new AdapterCore(new HookRegistry(), { sessionId: () => `s${++asked}` }, 'test');
    expect(core.startRun({ runId: 'r' })).toBeUndefined();
    expect(asked).toBe(0);
  });
});

describe('PausedSubagents: sub-agents waiting for an approval with their link open', () => {
  /** A parent with `count` sub-agents (one per tool call), each ended as paused for an approval. */
  function pausedChildren(count: number) {
    const { hooks, log } = recorder();
    const core = new AdapterCore(hooks, { sessionId: 'parent' }, 'test');
    const parent = core.startRun({ runId: 'p' })!;
    const children = Array.from({ length: count }, (_, i) => {
      parent.toolStart({ id: `call_${i}`, name: 'delegate', arguments: '{}' });
      const child = core.startRun({ runId: `c${i}`, agentName: 'helper', parent: { run: parent, toolCallId: `call_${i}` } })!;
      child.end('interrupted', undefined, undefined, { keepSessionOpen: true });
      return child;
    });
    const stopped = () => log.filter(([name]) => name === 'subagent_stop').map(([, p]) => p.child_session_id);
    return { core, parent, children, stopped };
  }

  it('closes the oldest past its bound, and one replaced at its key, each once', () => {
    const { children, stopped } = pausedChildren(4);
    const closed: string[] = [];
    const paused = new PausedSubagents(2, (run) => void closed.push(run.sessionId));
    paused.keep('a', children[0]!);
    paused.keep('b', children[1]!);
    expect(stopped()).toEqual([]);
    paused.keep('c', children[2]!); // past the bound: 'a', the oldest, closes
    expect(stopped()).toEqual(['parent:sub:call_0']);
    paused.keep('b', children[3]!); // a second sub-agent at 'b': the first is not coming back
    expect(stopped()).toEqual(['parent:sub:call_0', 'parent:sub:call_1']);
    expect(closed).toEqual(stopped());
    expect(paused.size).toBe(2);
    paused.closeAll();
    expect(stopped()).toEqual(['parent:sub:call_0', 'parent:sub:call_1', 'parent:sub:call_2', 'parent:sub:call_3']);
    paused.closeAll();
    expect(stopped()).toHaveLength(4);
  });

  it('hands a taken sub-agent to the run that continues it: no subagent_stop until that run ends', () => {
    const { core, parent, children, stopped } = pausedChildren(2);
    const paused = new PausedSubagents(10);
    paused.keep('a', children[0]!);
    paused.keep('b', children[1]!);
    const held = paused.take('a')!;
    expect(held).toBe(children[0]);
    expect(paused.take('a')).toBeUndefined();
    const next = core.startRun({ runId: 'c0-again', agentName: 'helper', parent: { run: parent, toolCallId: 'call_0' }, continuesSubagent: held })!;
    expect(next.sessionId).toBe('parent:sub:call_0');
    paused.close('a'); // nothing waits there any more
    held.closeLink(); // the link is the continuing run's now
    expect(stopped()).toEqual([]);
    next.end('completed', 'done');
    expect(stopped()).toEqual(['parent:sub:call_0']);
    paused.closeChildrenOf(parent);
    expect(stopped()).toEqual(['parent:sub:call_0', 'parent:sub:call_1']);
    expect(paused.size).toBe(0);
  });
});

describe('recordedValue: media as what it was, without its bytes', () => {
  const base64 = Buffer.alloc(3000, 7).toString('base64');

  it('bytes of every kind say how many they were', () => {
    const bytes = new Uint8Array(2048);
    expect(recordedValue({ image: Buffer.alloc(10), data: bytes, raw: bytes.buffer, view: new DataView(bytes.buffer, 8), words: new Float32Array(4) })).toEqual({
      image: '[left out: 10 bytes]',
      data: '[left out: 2048 bytes]',
      raw: '[left out: 2048 bytes]',
      view: '[left out: 2040 bytes]',
      words: '[left out: 16 bytes]',
    });
  });

  it('a base64 data URL keeps its media type; a bare blob says its length; text, URLs and short values stay', () => {
    const text = 'word '.repeat(400);
    const plainDataUrl = `data:text/plain,${'a'.repeat(2000)}`;
    expect(
      recordedValue([`data:application/pdf;base64,${base64}`, base64, base64.slice(0, 1000), text, plainDataUrl, 'https://images.example/cat.png', `data:image/png;base64,${base64.slice(0, 100)}`]),
    ).toEqual([`data:application/pdf;base64,[left out: ${base64.length} characters of base64]`, `[left out: ${base64.length} characters of base64]`, base64.slice(0, 1000), text, plainDataUrl, 'https://images.example/cat.png', `data:image/png;base64,${base64.slice(0, 100)}`]);
  });

  it('other objects as plain JSON (an own __proto__ key stays a key), a cycle as "[Circular]"', () => {
    const url = new URL('https://images.example/cat.png');
    const own = JSON.parse(`{"__proto__": {"data": "${base64}"}}`) as Record<string, unknown>;
    const cyclic: Record<string, unknown> = { data: base64 };
    cyclic.self = cyclic;
    const out = recordedValue({ url, date: new Date(0), own, cyclic }) as Record<string, any>;
    expect(out.url).toBe('https://images.example/cat.png');
    expect(out.date).toBe('1970-01-01T00:00:00.000Z');
    expect(Object.getPrototypeOf(out.own)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(out.own, '__proto__')?.value).toEqual({ data: `[left out: ${base64.length} characters of base64]` });
    expect(out.cyclic).toEqual({ data: `[left out: ${base64.length} characters of base64]`, self: '[Circular]' });
  });
});
