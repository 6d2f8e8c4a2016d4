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
    const mine = async () => ({});
    const callerHooks = { PreToolUse: [{ matcher: 'Bash', hooks: [mine] }] };
    const options = { model: 'm', hooks: callerHooks };
    const copy = structuredClone({ model: 'm', matcher: 'Bash' });
    for await (const _ of wrapClaudeAgentSdk(fake, listeningHooks()).query({ prompt: 'hi', options }) as AsyncIterable<unknown>) void _;
    const given = calls[0]!.options!;
    expect(given.includePartialMessages).toBe(true);
    expect(given.model).toBe('m');
    expect(given.hooks.PreToolUse).toHaveLength(2);
    expect(given.hooks.PreToolUse[0]).toBe(callerHooks.PreToolUse[0]);
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
});
