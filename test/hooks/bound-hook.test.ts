import { describe, expect, it } from 'vitest';
import { BoundHook, HookRegistry, UnknownHookError } from '../../src/hooks/index.ts';
import { silentLogger } from '../../src/shared/logger.ts';

describe('hooks.hook(name): a bound hook', () => {
  it('is inactive with nobody subscribed, and its emit never calls the thunk', () => {
    const hooks = new HookRegistry();
    const preTool = hooks.hook('pre_tool_call');
    let calls = 0;
    expect(preTool.active).toBe(false);
    preTool.emit(() => {
      calls += 1;
      return { tool_name: 't' };
    });
    expect(calls).toBe(0);
  });

  it('turns active when a subscriber arrives and inactive when the last one leaves', () => {
    const hooks = new HookRegistry();
    const preTool = hooks.hook('pre_tool_call');
    const offA = hooks.on('pre_tool_call', () => {});
    const offB = hooks.on('pre_tool_call', () => {});
    expect(preTool.active).toBe(true);
    offA();
    expect(preTool.active).toBe(true);
    offB();
    expect(preTool.active).toBe(false);
  });

  it('sees subscribers that were there before it was bound', () => {
    const hooks = new HookRegistry();
    const seen: unknown[] = [];
    hooks.on('post_tool_call', (p) => seen.push(p.tool_call_id));
    const postTool = hooks.hook('post_tool_call');
    expect(postTool.active).toBe(true);
    postTool.emit({ tool_call_id: 'c1' } as never);
    expect(seen).toEqual(['c1']);
  });

  it('delivers like emit(name): the same stamped object to every subscriber, thunks called once', () => {
    const hooks = new HookRegistry();
    const got: object[] = [];
    hooks.on('pre_llm_call', (p) => got.push(p));
    hooks.on('pre_llm_call', (p) => got.push(p));
    let calls = 0;
    hooks.hook('pre_llm_call').emit(() => {
      calls += 1;
      return { session_id: 's' } as never;
    });
    expect(calls).toBe(1);
    expect(got).toHaveLength(2);
    expect(got[0]).toBe(got[1]);
    expect(got[0]).toMatchObject({ session_id: 's', telemetry_schema_version: 'hermes.observer.v1' });
  });

  it('keeps failures away from the host, as emit does', () => {
    const hooks = new HookRegistry({ logger: silentLogger });
    hooks.on('on_session_start', () => {
      throw new Error('subscriber bug');
    });
    const start = hooks.hook('on_session_start');
    expect(() => start.emit({ session_id: 's' } as never)).not.toThrow();
    expect(() =>
      start.emit(() => {
        throw new Error('thunk bug');
      }),
    ).not.toThrow();
  });

  it('returns one object per name, and goes inactive on clear()', () => {
    const hooks = new HookRegistry();
    const a = hooks.hook('subagent_start');
    expect(hooks.hook('subagent_start')).toBe(a);
    expect(a).toBeInstanceOf(BoundHook);
    hooks.on('subagent_start', () => {});
    expect(a.active).toBe(true);
    hooks.clear();
    expect(a.active).toBe(false);
  });

  it('refuses an unknown name with the same error as emit', () => {
    const hooks = new HookRegistry();
    expect(() => hooks.hook('pre_tool' as never)).toThrow(UnknownHookError);
    expect(() => hooks.hook('__proto__' as never)).toThrow(UnknownHookError);
  });

  it('is bound to its own registry only', () => {
    const one = new HookRegistry();
    const two = new HookRegistry();
    one.on('pre_tool_call', () => {});
    expect(one.hook('pre_tool_call').active).toBe(true);
    expect(two.hook('pre_tool_call').active).toBe(false);
  });
});
