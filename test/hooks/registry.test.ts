import { describe, expect, it, vi } from 'vitest';
import { InvalidCallbackError, InvalidMiddlewareKindError, UnknownHookError } from '../../src/hooks/errors.ts';
import { HOOK_NAMES, TELEMETRY_SCHEMA_VERSION, type HookName } from '../../src/hooks/names.ts';
import { HookRegistry } from '../../src/hooks/registry.ts';
import { flushMicrotasks, recordingLogger, thrown } from './helpers.ts';

describe('HookRegistry observer hooks', () => {
  it('never calls the payload thunk when nobody subscribed', () => {
    const hooks = new HookRegistry();
    const thunk = vi.fn(() => ({ tool_name: 'read_file' }));
    for (const name of HOOK_NAMES) {
      hooks.emit(name as 'pre_tool_call', thunk);
    }
    expect(thunk).not.toHaveBeenCalled();
  });

  it('reports no subscriber through has() until one subscribes, and again after it leaves', () => {
    const hooks = new HookRegistry();
    expect(hooks.has('post_tool_call')).toBe(false);
    const off = hooks.on('post_tool_call', () => {});
    expect(hooks.has('post_tool_call')).toBe(true);
    expect(hooks.has('pre_tool_call')).toBe(false);
    off();
    expect(hooks.has('post_tool_call')).toBe(false);
  });

  it('says whether one callback is subscribed, until it unsubscribes or clear() removes it', () => {
    const hooks = new HookRegistry();
    const mine = () => {};
    const other = () => {};
    expect(hooks.subscribed('post_tool_call', mine)).toBe(false);
    const off = hooks.on('post_tool_call', mine);
    hooks.on('post_tool_call', other);
    expect([hooks.subscribed('post_tool_call', mine), hooks.subscribed('pre_tool_call', mine)]).toEqual([true, false]);
    off();
    expect([hooks.subscribed('post_tool_call', mine), hooks.subscribed('post_tool_call', other)]).toEqual([false, true]);
    hooks.on('post_tool_call', mine);
    hooks.clear();
    expect([hooks.subscribed('post_tool_call', mine), hooks.subscribed('post_tool_call', other)]).toEqual([false, false]);
    expect(() => hooks.subscribed('on_run_start' as HookName, mine)).toThrow(UnknownHookError);
  });

  it('calls the thunk once and hands every subscriber the same payload object', () => {
    const hooks = new HookRegistry();
    const seen: unknown[] = [];
    hooks.on('pre_llm_call', (payload) => seen.push(payload));
    hooks.on('pre_llm_call', (payload) => seen.push(payload));
    const payload = { session_id: 's1', turn_id: 't1' };
    const thunk = vi.fn(() => payload);
    hooks.emit('pre_llm_call', thunk);
    expect(thunk).toHaveBeenCalledTimes(1);
    expect(seen).toHaveLength(2);
    expect(seen[0]).toBe(payload);
    expect(seen[1]).toBe(payload);
  });

  it('accepts a payload object as well as a thunk', () => {
    const hooks = new HookRegistry();
    const seen = vi.fn();
    hooks.on('on_session_start', seen);
    const payload = { session_id: 's1', model: 'm', platform: 'cli' };
    hooks.emit('on_session_start', payload);
    expect(seen).toHaveBeenCalledWith(payload);
  });

  it('stamps telemetry_schema_version onto the payload unless the host set one', () => {
    const hooks = new HookRegistry();
    const seen: Record<string, unknown>[] = [];
    hooks.on('on_session_end', (payload) => seen.push(payload));

    const unstamped: Record<string, unknown> = { session_id: 's1' };
    hooks.emit('on_session_end', unstamped);
    expect(seen[0]?.telemetry_schema_version).toBe(TELEMETRY_SCHEMA_VERSION);
    // Stamped in place: payloads pass by reference, no copy is made.
    expect(seen[0]).toBe(unstamped);

    hooks.emit('on_session_end', { session_id: 's1', telemetry_schema_version: 'hermes.observer.v2' });
    expect(seen[1]?.telemetry_schema_version).toBe('hermes.observer.v2');
  });

  it('stamps a copy when the payload is frozen, instead of throwing', () => {
    const hooks = new HookRegistry();
    const seen: Record<string, unknown>[] = [];
    hooks.on('on_session_start', (payload) => seen.push(payload));
    const frozen = Object.freeze({ session_id: 's1' });
    expect(() => hooks.emit('on_session_start', frozen)).not.toThrow();
    expect(seen[0]).toEqual({ session_id: 's1', telemetry_schema_version: TELEMETRY_SCHEMA_VERSION });
  });

  it('delivers a payload it cannot read or stamp as it is, and never throws into the host', () => {
    const hooks = new HookRegistry({ logger: recordingLogger() });
    const seen: unknown[] = [];
    hooks.on('pre_llm_call', (payload) => seen.push(payload));
    const trapping = new Proxy({}, { get() { throw new Error('get trap'); } });
    const revocable = Proxy.revocable({}, {});
    revocable.revoke();
    const frozenGetter = Object.freeze({ get session_id(): string { throw new Error('getter'); } });
    for (const payload of [trapping, revocable.proxy, frozenGetter]) {
      expect(() => hooks.emit('pre_llm_call', payload as never)).not.toThrow();
    }
    // Each subscriber still got the event: a stamped copy where spreading worked, else the object itself.
    expect(seen).toHaveLength(3);
    expect(seen[0]).toEqual({ telemetry_schema_version: TELEMETRY_SCHEMA_VERSION });
    expect(seen[1] === revocable.proxy).toBe(true);
    expect(seen[2] === frozenGetter).toBe(true);
  });

  it('runs the execution chain on a payload it cannot stamp, without throwing into the host', () => {
    const hooks = new HookRegistry({ logger: recordingLogger() });
    hooks.use('tool_execution', (payload, next) => next(payload));
    const revocable = Proxy.revocable({}, {});
    revocable.revoke();
    expect(hooks.execute('tool_execution', revocable.proxy as never, () => 'ran')).toBe('ran');
  });

  it('calls subscribers in registration order', () => {
    const hooks = new HookRegistry();
    const order: string[] = [];
    hooks.on('subagent_stop', () => order.push('a'));
    hooks.on('subagent_stop', () => order.push('b'));
    hooks.on('subagent_stop', () => order.push('c'));
    hooks.emit('subagent_stop', { child_session_id: 'c1' });
    expect(order).toEqual(['a', 'b', 'c']);
  });

  it('warns about a payload it cannot deliver once per hook and reason, and counts every one: a call site failing on each emit does not flood the log', () => {
    const logger = recordingLogger();
    const hooks = new HookRegistry({ logger });
    hooks.on('pre_tool_call', () => undefined);
    hooks.on('post_tool_call', () => undefined);
    for (let i = 0; i < 50; i++) {
      hooks.emit('pre_tool_call', undefined as never);
      hooks.emit('pre_tool_call', () => {
        throw new Error(`bad arguments ${i}`);
      });
    }
    hooks.emit('post_tool_call', 'ok' as never);
    expect(hooks.payloadFailures()).toEqual({ thunkThrew: { pre_tool_call: 50 }, notAnObject: { pre_tool_call: 50, post_tool_call: 1 } });
    expect(logger.at('warn').map((record) => record.message)).toEqual([
      expect.stringMatching(/^hook "pre_tool_call": payload is not an object \(undefined\); delivering an empty payload \(further ones of this hook: debug/),
      expect.stringMatching(/^hook "pre_tool_call": the payload function threw; event not delivered \(further/),
      expect.stringMatching(/^hook "post_tool_call": payload is not an object \(string\)/),
    ]);
    expect(logger.at('debug')).toHaveLength(98);
  });

  it('logs a throwing callback, still runs the others, and never throws from emit', () => {
    const logger = recordingLogger();
    const hooks = new HookRegistry({ logger });
    const boom = new Error('plugin bug');
    const after = vi.fn();
    hooks.on('post_api_request', function brokenPlugin() {
      throw boom;
    });
    hooks.on('post_api_request', after);

    expect(() => hooks.emit('post_api_request', { api_request_id: 't:api:1' })).not.toThrow();
    expect(after).toHaveBeenCalledTimes(1);
    const warnings = logger.at('warn');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toContain('post_api_request');
    expect(warnings[0]?.message).toContain('brokenPlugin');
    expect(warnings[0]?.details).toContain(boom);
  });

  it('logs a rejecting async callback without an unhandled rejection, and the others still run', async () => {
    const logger = recordingLogger();
    const hooks = new HookRegistry({ logger });
    const unhandled = vi.fn();
    process.on('unhandledRejection', unhandled);
    try {
      const failure = new Error('async plugin bug');
      const after = vi.fn();
      hooks.on('api_request_error', async () => {
        await Promise.resolve();
        throw failure;
      });
      hooks.on('api_request_error', after);

      expect(() => hooks.emit('api_request_error', { reason: 'rate_limit' })).not.toThrow();
      expect(after).toHaveBeenCalledTimes(1);
      await flushMicrotasks();
      expect(logger.at('warn').map((entry) => entry.details[0])).toEqual([failure]);
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off('unhandledRejection', unhandled);
    }
  });

  it('survives a logger that throws', () => {
    const throwingLogger = {
      debug: () => {
        throw new Error('logger down');
      },
      info: () => {
        throw new Error('logger down');
      },
      warn: () => {
        throw new Error('logger down');
      },
      error: () => {
        throw new Error('logger down');
      },
    };
    const hooks = new HookRegistry({ logger: throwingLogger });
    hooks.on('pre_tool_call', () => {
      throw new Error('plugin bug');
    });
    expect(() => hooks.emit('pre_tool_call', { tool_name: 'x' })).not.toThrow();
  });

  it('logs a throwing payload thunk and delivers nothing, without throwing', () => {
    const logger = recordingLogger();
    const hooks = new HookRegistry({ logger });
    const callback = vi.fn();
    hooks.on('pre_api_request', callback);
    const failure = new Error('host could not build the payload');
    expect(() =>
      hooks.emit('pre_api_request', () => {
        throw failure;
      }),
    ).not.toThrow();
    expect(callback).not.toHaveBeenCalled();
    expect(logger.at('warn')[0]?.details).toContain(failure);
  });

  it('counts each payload that could not be delivered as given, per hook and reason, and nothing else', () => {
    const hooks = new HookRegistry({ logger: recordingLogger() });
    const other = vi.fn();
    hooks.on('pre_tool_call', other);
    hooks.on('on_session_start', other);
    const throwing = () => {
      throw new Error('host could not build the payload');
    };
    hooks.emit('pre_tool_call', { tool_name: 'ls' });
    hooks.emit('pre_tool_call', () => ({ tool_name: 'ls' }));
    hooks.emit('pre_tool_call', throwing);
    hooks.hook('pre_tool_call').emit(throwing);
    hooks.emit('on_session_start', (() => 42) as never);
    hooks.emit('pre_llm_call', throwing); // nobody subscribed: the thunk never runs, nothing failed
    expect(hooks.payloadFailures()).toEqual({ thunkThrew: { pre_tool_call: 2 }, notAnObject: { on_session_start: 1 } });
    expect(other).toHaveBeenCalledTimes(3);
    // A copy: the caller cannot change the registry's counts.
    hooks.payloadFailures().thunkThrew.pre_tool_call = 0;
    expect(hooks.payloadFailures().thunkThrew.pre_tool_call).toBe(2);
  });

  it('delivers an empty stamped payload, with a warning, when a JS caller passes a non-object', () => {
    const logger = recordingLogger();
    const hooks = new HookRegistry({ logger });
    const callback = vi.fn();
    hooks.on('on_session_start', callback);
    hooks.emit('on_session_start', (() => null) as never);
    expect(callback).toHaveBeenCalledWith({ telemetry_schema_version: TELEMETRY_SCHEMA_VERSION });
    expect(logger.at('warn')[0]?.message).toContain('not an object');
  });

  it('rejects an unknown hook name with a TypeError that lists the valid names', () => {
    const hooks = new HookRegistry();
    for (const call of [
      () => hooks.on('on_run_start' as HookName, () => {}),
      () => hooks.emit('on_run_start' as HookName, {} as never),
      () => hooks.has('on_run_start' as HookName),
    ]) {
      const caught = thrown(call);
      expect(caught).toBeInstanceOf(TypeError);
      expect(caught).toBeInstanceOf(UnknownHookError);
      expect((caught as Error).name).toBe('UnknownHookError');
      expect((caught as Error).message).toContain('"on_run_start"');
      for (const name of HOOK_NAMES) expect((caught as Error).message).toContain(name);
    }
  });

  it('treats Object.prototype keys as unknown hook names and middleware kinds', () => {
    const hooks = new HookRegistry();
    for (const key of ['toString', 'constructor', '__proto__', 'hasOwnProperty', 'valueOf']) {
      expect(() => hooks.on(key as HookName, () => {})).toThrow(UnknownHookError);
      expect(() => hooks.has(key as HookName)).toThrow(UnknownHookError);
      expect(() => hooks.emit(key as HookName, {} as never)).toThrow(UnknownHookError);
      expect(() => hooks.use(key as never, (() => undefined) as never)).toThrow(InvalidMiddlewareKindError);
      expect(() => hooks.hasMiddleware(key as never)).toThrow(InvalidMiddlewareKindError);
      expect(() => hooks.applyRequest(key as never, {})).toThrow(InvalidMiddlewareKindError);
      expect(() => hooks.execute(key as never, {} as never, () => 1)).toThrow(InvalidMiddlewareKindError);
    }
    // Nothing was registered under those keys: every real hook is still unsubscribed.
    for (const name of HOOK_NAMES) expect(hooks.has(name)).toBe(false);
  });

  it('rejects a callback that is not a function', () => {
    const hooks = new HookRegistry();
    expect(() => hooks.on('pre_tool_call', 'nope' as never)).toThrow(InvalidCallbackError);
    expect(() => hooks.on('pre_tool_call', null as never)).toThrow(TypeError);
  });

  it('unsubscribes, and a second unsubscribe call does nothing', () => {
    const hooks = new HookRegistry();
    const a = vi.fn();
    const b = vi.fn();
    const offA = hooks.on('post_llm_call', a);
    hooks.on('post_llm_call', b);
    offA();
    offA();
    hooks.emit('post_llm_call', {});
    expect(a).not.toHaveBeenCalled();
    expect(b).toHaveBeenCalledTimes(1);
  });

  it('removes exactly one registration when the same callback is subscribed twice', () => {
    const hooks = new HookRegistry();
    const callback = vi.fn();
    const first = hooks.on('post_llm_call', callback);
    hooks.on('post_llm_call', callback);
    first();
    first();
    hooks.emit('post_llm_call', {});
    expect(callback).toHaveBeenCalledTimes(1);
  });

  it('does not let an old unsubscribe remove a registration made after clear()', () => {
    const hooks = new HookRegistry();
    const callback = vi.fn();
    const stale = hooks.on('on_session_reset', callback);
    hooks.clear();
    expect(hooks.has('on_session_reset')).toBe(false);
    hooks.on('on_session_reset', callback);
    stale();
    hooks.emit('on_session_reset', {});
    expect(callback).toHaveBeenCalledTimes(1);
  });

  it('neither skips nor double-calls others when a callback unsubscribes itself or another during emit', () => {
    const hooks = new HookRegistry();
    const calls: string[] = [];
    const offs: Record<string, () => void> = {};
    offs.a = hooks.on('pre_tool_call', () => {
      calls.push('a');
      offs.a!();
      offs.c!();
    });
    offs.b = hooks.on('pre_tool_call', () => calls.push('b'));
    offs.c = hooks.on('pre_tool_call', () => calls.push('c'));
    offs.d = hooks.on('pre_tool_call', () => calls.push('d'));

    hooks.emit('pre_tool_call', { tool_name: 'x' });
    // Snapshot semantics: the running emit keeps the list it started with.
    expect(calls).toEqual(['a', 'b', 'c', 'd']);

    calls.length = 0;
    hooks.emit('pre_tool_call', { tool_name: 'x' });
    expect(calls).toEqual(['b', 'd']);
  });

  it('does not deliver the current emit to a callback subscribed during it', () => {
    const hooks = new HookRegistry();
    const late = vi.fn();
    hooks.on('pre_tool_call', () => {
      hooks.on('pre_tool_call', late);
    });
    hooks.emit('pre_tool_call', { tool_name: 'x' });
    expect(late).not.toHaveBeenCalled();
    hooks.emit('pre_tool_call', { tool_name: 'x' });
    expect(late).toHaveBeenCalledTimes(1);
  });

  it('keeps registries independent of each other', () => {
    const one = new HookRegistry();
    const two = new HookRegistry();
    one.on('on_session_start', () => {});
    expect(two.has('on_session_start')).toBe(false);
  });

  it('types each callback with the payload of its hook', () => {
    const hooks = new HookRegistry();
    hooks.on('pre_tool_call', (payload) => {
      const toolName: string = payload.tool_name;
      const version: string = payload.telemetry_schema_version;
      void toolName;
      void version;
    });
    // @ts-expect-error pre_tool_call requires tool_name
    hooks.emit('pre_tool_call', () => ({ tool_call_id: 'c1' }));
    // @ts-expect-error api_call_count is a number
    hooks.emit('pre_api_request', { api_call_count: 'one' });
    expect(hooks.has('pre_tool_call')).toBe(true);
  });
});
