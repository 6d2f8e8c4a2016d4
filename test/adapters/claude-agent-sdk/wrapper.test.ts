// What wrapClaudeAgentSdk promises about the SDK and the caller's options,
// checked without starting the CLI. What it records from real queries is
// checked on the real SDK and CLI in test/slow/claude-agent-sdk.test.ts.
import * as sdk from '@anthropic-ai/claude-agent-sdk';
import { describe, expect, it } from 'vitest';
import { wrapClaudeAgentSdk } from '../../../src/adapters/claude-agent-sdk/index.ts';
import { HookRegistry } from '../../../src/hooks/registry.ts';

function listeningHooks(): HookRegistry {
  const hooks = new HookRegistry();
  hooks.on('pre_api_request', () => {});
  return hooks;
}

/** An SDK whose query() remembers what it was given and streams nothing. */
function capturingSdk() {
  const calls: Array<{ prompt: unknown; options?: Record<string, any> }> = [];
  const fake = {
    query(params: { prompt: unknown; options?: Record<string, any> }) {
      calls.push(params);
      return (async function* () {})();
    },
    tool: () => 'tool',
  };
  return { fake, calls };
}

describe('wrapClaudeAgentSdk', () => {
  it('leaves the SDK module as it was and returns every export, query() wrapped', () => {
    const before = Object.keys(sdk);
    const query = sdk.query;
    const wrapped = wrapClaudeAgentSdk(sdk, listeningHooks());
    expect(Object.keys(sdk)).toEqual(before);
    expect(sdk.query).toBe(query);
    expect(wrapped.query).not.toBe(query);
    for (const key of before) if (key !== 'query') expect((wrapped as Record<string, unknown>)[key], key).toBe((sdk as Record<string, unknown>)[key]);
  });

  it('is the SDK\'s own query() when no hook has a subscriber', () => {
    const { fake, calls } = capturingSdk();
    const params = { prompt: 'hi', options: { model: 'm' } };
    const stream = wrapClaudeAgentSdk(fake, new HookRegistry()).query(params);
    expect(calls).toEqual([params]);
    expect(calls[0]).toBe(params);
    expect(typeof (stream as AsyncGenerator)[Symbol.asyncIterator]).toBe('function');
  });

  it('adds partial messages and its hook callbacks after the caller\'s, without touching the caller\'s options', async () => {
    const { fake, calls } = capturingSdk();
    const mine = async () => ({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'ask' } });
    const callerHooks = { PreToolUse: [{ matcher: 'Bash', timeout: 5, hooks: [mine] }] };
    const options = { model: 'm', hooks: callerHooks };
    const copy = structuredClone({ model: 'm', matcher: 'Bash' });
    for await (const _ of wrapClaudeAgentSdk(fake, listeningHooks()).query({ prompt: 'hi', options }) as AsyncIterable<unknown>) void _;
    const given = calls[0]!.options!;
    expect(given.includePartialMessages).toBe(true);
    expect(given.model).toBe('m');
    expect(given.hooks.PreToolUse).toHaveLength(2);
    // The caller's matcher as it was, its callback's output read for a permission decision and returned as it is.
    expect(given.hooks.PreToolUse[0]).toMatchObject({ matcher: 'Bash', timeout: 5 });
    expect(await given.hooks.PreToolUse[0].hooks[0]({ hook_event_name: 'PreToolUse', tool_use_id: 't1', tool_name: 'Bash', tool_input: {} }, 't1', { signal: new AbortController().signal })).toEqual(await mine());
    expect(await given.hooks.PreToolUse[1].hooks[0]({ hook_event_name: 'PreToolUse', tool_use_id: 't1', tool_name: 'Bash', tool_input: {} }, 't1', { signal: new AbortController().signal })).toEqual({});
    for (const event of ['PostToolUse', 'PostToolUseFailure', 'SubagentStart', 'SubagentStop']) expect(given.hooks[event], event).toHaveLength(1);
    // The caller's objects are unchanged.
    expect(options).toEqual({ model: 'm', hooks: callerHooks });
    expect(callerHooks.PreToolUse).toHaveLength(1);
    expect({ model: options.model, matcher: callerHooks.PreToolUse[0]!.matcher }).toEqual(copy);
    expect('includePartialMessages' in options).toBe(false);
  });

  it('still asks the caller\'s canUseTool and returns its decision', async () => {
    const { fake, calls } = capturingSdk();
    const asked: string[] = [];
    const canUseTool = async (name: string) => {
      asked.push(name);
      return { behavior: 'deny' as const, message: 'not today' };
    };
    for await (const _ of wrapClaudeAgentSdk(fake, listeningHooks()).query({ prompt: 'hi', options: { canUseTool } }) as AsyncIterable<unknown>) void _;
    const wrappedCanUseTool = calls[0]!.options!.canUseTool;
    expect(wrappedCanUseTool).not.toBe(canUseTool);
    expect(await wrappedCanUseTool('Bash', { command: 'ls' }, { signal: new AbortController().signal, toolUseID: 'toolu_1' })).toEqual({ behavior: 'deny', message: 'not today' });
    expect(asked).toEqual(['Bash']);
  });

  it('ends a query the caller aborts (options.abortController) as interrupted, not failed', async () => {
    const recorded: Array<[string, Record<string, unknown>]> = [];
    const hooks = new HookRegistry();
    for (const name of ['on_session_end', 'api_request_error'] as const) hooks.on(name, (payload) => void recorded.push([name, payload as Record<string, unknown>]));
    const abortController = new AbortController();
    // The SDK's stream up to a request in flight, then its throw once the caller aborted.
    const fake = {
      query(_params: { prompt: unknown; options?: unknown }) {
        return (async function* () {
          yield { type: 'system', subtype: 'init', session_id: 'sess-abort', model: 'claude-x', tools: [] };
          yield { type: 'stream_event', session_id: 'sess-abort', parent_tool_use_id: null, event: { type: 'message_start', message: { id: 'msg_1', model: 'claude-x', usage: { input_tokens: 3, output_tokens: 1 } } } };
          abortController.abort();
          throw new sdk.AbortError('Operation aborted');
        })();
      },
    };
    let thrown: unknown;
    try {
      for await (const _ of wrapClaudeAgentSdk(fake, hooks).query({ prompt: 'hi', options: { abortController } }) as AsyncIterable<unknown>) void _;
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(sdk.AbortError);
    const end = recorded.find(([name]) => name === 'on_session_end')![1];
    expect(end).toMatchObject({ session_id: 'sess-abort', interrupted: true, failed: false, completed: false });
    // The request in flight ends with the query, as cut short.
    expect(recorded.filter(([name]) => name === 'api_request_error').map(([, p]) => (p.error as Record<string, unknown> | undefined)?.type ?? p.error_type)).toEqual(['interrupted']);
  });
});
