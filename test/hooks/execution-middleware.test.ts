import { describe, expect, it, vi } from 'vitest';
import {
  ExecutionBlocked,
  HookError,
  InvalidMiddlewareKindError,
  isExecutionBlocked,
  NextCalledTwiceError,
} from '../../src/hooks/errors.ts';
import type { LlmExecutionPayload, ToolExecutionPayload } from '../../src/hooks/middleware.ts';
import { MIDDLEWARE_SCHEMA_VERSION, TELEMETRY_SCHEMA_VERSION } from '../../src/hooks/names.ts';
import { HookRegistry } from '../../src/hooks/registry.ts';
import { flushMicrotasks, recordingLogger } from './helpers.ts';

const ids = { session_id: 's1', task_id: 't1', turn_id: 'turn-1', api_request_id: 'turn-1:api:1' };

function llmPayload(): LlmExecutionPayload {
  return { ...ids, provider: 'openai', model: 'm', request: { messages: [] } };
}

function toolPayload(): ToolExecutionPayload {
  return { ...ids, tool_call_id: 'c1', tool_name: 'read_file', args: { path: 'x' } };
}

function caught(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('execution middleware', () => {
  it('calls the terminal directly with the untouched payload when no middleware is registered', () => {
    const hooks = new HookRegistry();
    const payload = llmPayload();
    const terminal = vi.fn((received: LlmExecutionPayload) => ({ received }));
    const result = hooks.execute('llm_execution', payload, terminal);
    expect(terminal).toHaveBeenCalledTimes(1);
    expect(terminal.mock.calls[0]![0]).toBe(payload);
    expect(result).toBe(terminal.mock.results[0]!.value);
    // No middleware, no stamping: the payload is exactly what the host built.
    expect(payload).not.toHaveProperty('middleware_schema_version');
    expect(payload).not.toHaveProperty('telemetry_schema_version');
  });

  it('lets a terminal error through unchanged when no middleware is registered', () => {
    const hooks = new HookRegistry();
    const failure = new Error('provider down');
    expect(
      caught(() =>
        hooks.execute('llm_execution', llmPayload(), () => {
          throw failure;
        }),
      ),
    ).toBe(failure);
  });

  it('stamps both schema markers on the payload once middleware exists', () => {
    const hooks = new HookRegistry();
    const seen: unknown[] = [];
    hooks.use('tool_execution', (payload, next) => {
      seen.push(payload);
      return next();
    });
    hooks.execute('tool_execution', toolPayload(), (payload) => seen.push(payload));
    for (const payload of seen) {
      expect(payload).toMatchObject({
        telemetry_schema_version: TELEMETRY_SCHEMA_VERSION,
        middleware_schema_version: MIDDLEWARE_SCHEMA_VERSION,
        tool_name: 'read_file',
        tool_call_id: 'c1',
      });
    }
  });

  it('wraps the call like an onion, in registration order', () => {
    const hooks = new HookRegistry();
    const order: string[] = [];
    hooks.use('tool_execution', (_payload, next) => {
      order.push('outer before');
      const result = next();
      order.push('outer after');
      return result;
    });
    hooks.use('tool_execution', (_payload, next) => {
      order.push('inner before');
      const result = next();
      order.push('inner after');
      return result;
    });
    const result = hooks.execute('tool_execution', toolPayload(), () => {
      order.push('terminal');
      return 'done';
    });
    expect(result).toBe('done');
    expect(order).toEqual(['outer before', 'inner before', 'terminal', 'inner after', 'outer after']);
  });

  it('forwards a replacement payload given to next, and the current one when next gets nothing', () => {
    const hooks = new HookRegistry();
    hooks.use('llm_execution', (payload, next) => next({ ...payload, request: { messages: ['rewritten'] } }));
    let innerSaw: LlmExecutionPayload | undefined;
    hooks.use('llm_execution', (payload, next) => {
      innerSaw = payload;
      return next(undefined);
    });
    const terminal = vi.fn((payload: LlmExecutionPayload) => payload.request);
    expect(hooks.execute('llm_execution', llmPayload(), terminal)).toEqual({ messages: ['rewritten'] });
    expect(terminal.mock.calls[0]![0]).toBe(innerSaw);
    expect(innerSaw).toMatchObject({ middleware_schema_version: MIDDLEWARE_SCHEMA_VERSION, session_id: 's1' });
  });

  it('lets a middleware answer without calling next, so the real call never runs', () => {
    const hooks = new HookRegistry();
    hooks.use('llm_execution', () => ({ cached: true }));
    const terminal = vi.fn();
    expect(hooks.execute('llm_execution', llmPayload(), terminal)).toEqual({ cached: true });
    expect(terminal).not.toHaveBeenCalled();
  });

  describe('next is single-use', () => {
    it('throws NextCalledTwiceError on a second call and runs the terminal once', () => {
      const hooks = new HookRegistry({ logger: recordingLogger() });
      let second: unknown;
      hooks.use(
        'tool_execution',
        (_payload, next) => {
          const result = next();
          second = caught(() => next());
          return result;
        },
        { name: 'retry_plugin' },
      );
      const terminal = vi.fn(() => 'ran');
      expect(hooks.execute('tool_execution', toolPayload(), terminal)).toBe('ran');
      expect(terminal).toHaveBeenCalledTimes(1);
      expect(second).toBeInstanceOf(NextCalledTwiceError);
      expect(second).toBeInstanceOf(HookError);
      expect((second as NextCalledTwiceError).name).toBe('NextCalledTwiceError');
      expect((second as NextCalledTwiceError).middlewareName).toBe('retry_plugin');
    });

    it('returns the first result, with a warning, when the second-call error escapes the middleware', async () => {
      const logger = recordingLogger();
      const hooks = new HookRegistry({ logger });
      hooks.use('llm_execution', async (_payload, next) => {
        await next();
        return next();
      });
      const terminal = vi.fn(async () => 'first');
      await expect(hooks.execute('llm_execution', llmPayload(), terminal)).resolves.toBe('first');
      expect(terminal).toHaveBeenCalledTimes(1);
      expect(logger.at('warn')[0]?.details[0]).toBeInstanceOf(NextCalledTwiceError);
    });
  });

  describe('a middleware failing before next is logged and skipped', () => {
    it('continues with the same payload when it throws synchronously', () => {
      const logger = recordingLogger();
      const hooks = new HookRegistry({ logger });
      const failure = new Error('middleware bug');
      const payload = toolPayload();
      hooks.use(
        'tool_execution',
        () => {
          throw failure;
        },
        { name: 'buggy' },
      );
      const later = vi.fn((p: ToolExecutionPayload, next: (p?: ToolExecutionPayload) => unknown) => next());
      hooks.use('tool_execution', later);
      const terminal = vi.fn((p: ToolExecutionPayload) => p);
      const result = hooks.execute('tool_execution', payload, terminal);
      expect(result).toBe(payload);
      expect(later.mock.calls[0]![0]).toBe(payload);
      expect(terminal).toHaveBeenCalledTimes(1);
      expect(logger.at('warn')[0]?.message).toContain('buggy');
      expect(logger.at('warn')[0]?.details).toContain(failure);
    });

    it('continues with the same payload when it rejects asynchronously', async () => {
      const logger = recordingLogger();
      const hooks = new HookRegistry({ logger });
      const failure = new Error('async middleware bug');
      const payload = llmPayload();
      hooks.use('llm_execution', async () => {
        await Promise.resolve();
        throw failure;
      });
      const terminal = vi.fn((p: LlmExecutionPayload) => p);
      await expect(hooks.execute('llm_execution', payload, terminal)).resolves.toBe(payload);
      expect(terminal).toHaveBeenCalledTimes(1);
      expect(logger.at('warn')[0]?.details).toContain(failure);
    });

    it('reaches the terminal even when every middleware fails', () => {
      const hooks = new HookRegistry({ logger: recordingLogger() });
      for (let i = 0; i < 3; i++) {
        hooks.use('tool_execution', () => {
          throw new Error(`bug ${i}`);
        });
      }
      expect(hooks.execute('tool_execution', toolPayload(), () => 'tool ran')).toBe('tool ran');
    });
  });

  describe('a middleware failing after next returns the downstream result', () => {
    it('does so for a synchronous throw', () => {
      const logger = recordingLogger();
      const hooks = new HookRegistry({ logger });
      hooks.use('tool_execution', (_payload, next) => {
        next();
        throw new Error('post-processing bug');
      });
      const terminal = vi.fn(() => ({ ok: true }));
      expect(hooks.execute('tool_execution', toolPayload(), terminal)).toEqual({ ok: true });
      expect(terminal).toHaveBeenCalledTimes(1);
      expect(logger.at('warn')[0]?.message).toContain('after next()');
    });

    it('does so for an asynchronous rejection', async () => {
      const hooks = new HookRegistry({ logger: recordingLogger() });
      hooks.use('llm_execution', async (_payload, next) => {
        await next();
        throw new Error('post-processing bug');
      });
      const terminal = vi.fn(async () => 'response');
      await expect(hooks.execute('llm_execution', llmPayload(), terminal)).resolves.toBe('response');
      expect(terminal).toHaveBeenCalledTimes(1);
    });

    it('does so when it throws before the async downstream has settled', async () => {
      const hooks = new HookRegistry({ logger: recordingLogger() });
      hooks.use('llm_execution', (_payload, next) => {
        next();
        throw new Error('did not wait');
      });
      let release!: (value: string) => void;
      const terminal = vi.fn(() => new Promise<string>((resolve) => (release = resolve)));
      const result = hooks.execute('llm_execution', llmPayload(), terminal);
      release('late response');
      await expect(result).resolves.toBe('late response');
      expect(terminal).toHaveBeenCalledTimes(1);
    });
  });

  describe('a downstream error reaches the caller as the original object', () => {
    it('passes through a middleware that does not catch it (sync)', () => {
      const hooks = new HookRegistry();
      hooks.use('tool_execution', (_payload, next) => next());
      const failure = new Error('tool failed');
      expect(
        caught(() =>
          hooks.execute('tool_execution', toolPayload(), () => {
            throw failure;
          }),
        ),
      ).toBe(failure);
    });

    it('wins over a different error a middleware throws after catching it (sync)', () => {
      const logger = recordingLogger();
      const hooks = new HookRegistry({ logger });
      const masked: unknown[] = [];
      hooks.use('tool_execution', (_payload, next) => {
        try {
          return next();
        } catch (error) {
          masked.push(error);
          throw new Error('middleware wrapped it');
        }
      });
      const failure = new Error('tool failed');
      const error = caught(() =>
        hooks.execute('tool_execution', toolPayload(), () => {
          throw failure;
        }),
      );
      expect(error).toBe(failure);
      // The middleware saw the original too, not a wrapper.
      expect(masked[0]).toBe(failure);
    });

    it('wins over a different error a middleware throws after catching it (async)', async () => {
      const hooks = new HookRegistry({ logger: recordingLogger() });
      hooks.use('llm_execution', async (_payload, next) => {
        try {
          return await next();
        } catch {
          throw new TypeError('middleware bug while handling the failure');
        }
      });
      const failure = Object.assign(new Error('429 rate limited'), { status: 429 });
      const result = hooks.execute('llm_execution', llmPayload(), async () => {
        throw failure;
      });
      await expect(result).rejects.toBe(failure);
    });

    it('travels through several middleware layers as the same object', async () => {
      const hooks = new HookRegistry({ logger: recordingLogger() });
      hooks.use('llm_execution', async (_payload, next) => next());
      hooks.use('llm_execution', (_payload, next) => next());
      hooks.use('llm_execution', async (_payload, next) => {
        try {
          return await next();
        } catch {
          throw new Error('masking attempt');
        }
      });
      const failure = new Error('provider down');
      await expect(
        hooks.execute('llm_execution', llmPayload(), () => Promise.reject(failure)),
      ).rejects.toBe(failure);
    });

    it('can still be recovered from on purpose by returning a value', async () => {
      const hooks = new HookRegistry();
      hooks.use('llm_execution', async (_payload, next) => {
        try {
          return await next();
        } catch {
          return 'fallback response';
        }
      });
      await expect(
        hooks.execute('llm_execution', llmPayload(), () => Promise.reject(new Error('provider down'))),
      ).resolves.toBe('fallback response');
    });

    it('does not leave an unhandled rejection when a middleware drops the promise from next', async () => {
      const hooks = new HookRegistry();
      const unhandled = vi.fn();
      process.on('unhandledRejection', unhandled);
      try {
        hooks.use('llm_execution', (_payload, next) => {
          next();
          return 'answered without waiting';
        });
        const result = hooks.execute('llm_execution', llmPayload(), () => Promise.reject(new Error('late failure')));
        expect(result).toBe('answered without waiting');
        await flushMicrotasks();
        expect(unhandled).not.toHaveBeenCalled();
      } finally {
        process.off('unhandledRejection', unhandled);
      }
    });
  });

  describe('ExecutionBlocked', () => {
    it('propagates to the caller with checked_by filled from the middleware name', () => {
      const hooks = new HookRegistry();
      hooks.use(
        'llm_execution',
        () => {
          throw new ExecutionBlocked('Session cost budget exceeded', { metadata: { budget_usd: 5 } });
        },
        { name: 'budget_guard' },
      );
      const terminal = vi.fn();
      const error = caught(() => hooks.execute('llm_execution', llmPayload(), terminal));
      expect(terminal).not.toHaveBeenCalled();
      expect(error).toBeInstanceOf(ExecutionBlocked);
      expect(error).toBeInstanceOf(HookError);
      const blocked = error as ExecutionBlocked;
      expect(blocked.name).toBe('ExecutionBlocked');
      expect(blocked.reason).toBe('Session cost budget exceeded');
      expect(blocked.message).toBe('Session cost budget exceeded');
      expect(blocked.metadata).toEqual({ budget_usd: 5, checked_by: 'budget_guard' });
    });

    it('uses the function name when no name option was given, and keeps an explicit checked_by', async () => {
      const hooks = new HookRegistry();
      hooks.use('tool_execution', async function pathGuard() {
        throw new ExecutionBlocked('outside the workspace');
      });
      await expect(hooks.execute('tool_execution', toolPayload(), vi.fn())).rejects.toMatchObject({
        metadata: { checked_by: 'pathGuard' },
      });

      const other = new HookRegistry();
      other.use('tool_execution', () => {
        throw new ExecutionBlocked('denied', { metadata: { checked_by: 'policy-service' } });
      });
      expect(caught(() => other.execute('tool_execution', toolPayload(), vi.fn()))).toMatchObject({
        metadata: { checked_by: 'policy-service' },
      });
    });

    it('stops the chain even when later middleware exists (not fail-open)', () => {
      const hooks = new HookRegistry();
      const later = vi.fn((_p: unknown, next: () => unknown) => next());
      hooks.use('tool_execution', () => {
        throw new ExecutionBlocked('no');
      });
      hooks.use('tool_execution', later);
      const terminal = vi.fn();
      expect(caught(() => hooks.execute('tool_execution', toolPayload(), terminal))).toBeInstanceOf(ExecutionBlocked);
      expect(later).not.toHaveBeenCalled();
      expect(terminal).not.toHaveBeenCalled();
    });

    it('reaches the caller as the same object through outer middleware', async () => {
      const hooks = new HookRegistry();
      hooks.use('llm_execution', async (_payload, next) => next());
      const block = new ExecutionBlocked('inner says no');
      hooks.use(
        'llm_execution',
        () => {
          throw block;
        },
        { name: 'inner_guard' },
      );
      await expect(hooks.execute('llm_execution', llmPayload(), vi.fn())).rejects.toBe(block);
      expect(block.metadata.checked_by).toBe('inner_guard');
    });

    it('propagates when thrown after next, so an output guard can reject a result', () => {
      const hooks = new HookRegistry();
      hooks.use('llm_execution', (_payload, next) => {
        const response = next() as { text: string };
        if (response.text.includes('secret')) throw new ExecutionBlocked('response leaks a secret');
        return response;
      });
      const error = caught(() => hooks.execute('llm_execution', llmPayload(), () => ({ text: 'the secret is 42' })));
      expect(error).toBeInstanceOf(ExecutionBlocked);
    });

    it('is recognised across package copies by its brand, not only by instanceof', () => {
      expect(isExecutionBlocked(new ExecutionBlocked('x'))).toBe(true);
      const foreign = Object.defineProperty(new Error('x'), Symbol.for('nemo-relay-hooks.ExecutionBlocked'), {
        value: true,
      });
      expect(isExecutionBlocked(foreign)).toBe(true);
      expect(isExecutionBlocked(new Error('x'))).toBe(false);
      expect(isExecutionBlocked(null)).toBe(false);
    });
  });

  describe('sync and async', () => {
    it('keeps a fully synchronous chain synchronous: no promise is introduced', () => {
      const hooks = new HookRegistry();
      hooks.use('tool_execution', (_payload, next) => next());
      hooks.use('tool_execution', (_payload, next) => next());
      const result = hooks.execute('tool_execution', toolPayload(), () => 'sync result');
      expect(result).toBe('sync result');
    });

    it('stays synchronous through a skipped (throwing) middleware', () => {
      const hooks = new HookRegistry({ logger: recordingLogger() });
      hooks.use('tool_execution', () => {
        throw new Error('bug');
      });
      expect(hooks.execute('tool_execution', toolPayload(), () => 7)).toBe(7);
    });

    it('returns a promise once any step is async and resolves to the terminal result', async () => {
      const hooks = new HookRegistry();
      hooks.use('llm_execution', (_payload, next) => next());
      const result = hooks.execute('llm_execution', llmPayload(), async () => 'async result');
      expect(result).toBeInstanceOf(Promise);
      await expect(result).resolves.toBe('async result');
    });

    it('mixes an async middleware with a sync terminal', async () => {
      const hooks = new HookRegistry();
      hooks.use('tool_execution', async (_payload, next) => {
        await Promise.resolve();
        return next();
      });
      const result = hooks.execute('tool_execution', toolPayload(), () => 'sync terminal');
      expect(result).toBeInstanceOf(Promise);
      await expect(result).resolves.toBe('sync terminal');
    });

    it('handles non-native thenables returned by a middleware', async () => {
      const hooks = new HookRegistry();
      hooks.use('tool_execution', (_payload, next) => ({
        then(resolve: (value: unknown) => void) {
          resolve(`wrapped ${String(next())}`);
        },
      }));
      await expect(hooks.execute('tool_execution', toolPayload(), () => 'result')).resolves.toBe('wrapped result');
    });
  });

  it('keeps a running chain unaffected by unsubscribing during it', () => {
    const hooks = new HookRegistry();
    const order: string[] = [];
    const offs: (() => void)[] = [];
    offs.push(
      hooks.use('tool_execution', (_payload, next) => {
        order.push('first');
        offs[1]!();
        return next();
      }),
    );
    offs.push(
      hooks.use('tool_execution', (_payload, next) => {
        order.push('second');
        return next();
      }),
    );
    hooks.execute('tool_execution', toolPayload(), () => order.push('terminal'));
    expect(order).toEqual(['first', 'second', 'terminal']);
    order.length = 0;
    hooks.execute('tool_execution', toolPayload(), () => order.push('terminal'));
    expect(order).toEqual(['first', 'terminal']);
  });

  it('rejects a request kind passed to execute', () => {
    const hooks = new HookRegistry();
    expect(() => hooks.execute('llm_request' as never, llmPayload() as never, vi.fn())).toThrow(InvalidMiddlewareKindError);
    expect(() => hooks.execute('llm_request' as never, llmPayload() as never, vi.fn())).toThrow(
      /llm_execution, tool_execution/,
    );
  });
});
