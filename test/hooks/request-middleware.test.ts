import { describe, expect, it } from 'vitest';
import { InvalidCallbackError, InvalidMiddlewareKindError } from '../../src/hooks/errors.ts';
import type { LlmRequestMiddlewarePayload, ToolRequestMiddlewarePayload } from '../../src/hooks/middleware.ts';
import { MIDDLEWARE_SCHEMA_VERSION, TELEMETRY_SCHEMA_VERSION, type MiddlewareKind } from '../../src/hooks/names.ts';
import { HookRegistry } from '../../src/hooks/registry.ts';
import { recordingLogger, thrown } from './helpers.ts';

describe('request middleware', () => {
  it('returns the same payload object when no middleware is registered', () => {
    const hooks = new HookRegistry();
    const request = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
    expect(hooks.applyRequest('llm_request', request)).toBe(request);
    const args = { path: 'x' };
    expect(hooks.applyRequest('tool_request', args, { tool_name: 'read_file' })).toBe(args);
    expect(hooks.requestTrace(request)).toEqual([]);
  });

  it('returns the same payload object when middleware runs but rewrites nothing', () => {
    const hooks = new HookRegistry();
    hooks.use('llm_request', () => undefined);
    hooks.use('llm_request', () => ({ request: 'not an object' }) as never);
    hooks.use('llm_request', () => ({ reason: 'no request key' }) as never);
    const request = { model: 'm' };
    expect(hooks.applyRequest('llm_request', request)).toBe(request);
  });

  it('discards in-place edits: only a returned rewrite changes the payload', () => {
    const hooks = new HookRegistry();
    hooks.use('llm_request', (payload) => {
      payload.request.model = 'mutated';
    });
    const request = { model: 'm' };
    const result = hooks.applyRequest('llm_request', request);
    expect(result).toBe(request);
    expect(request.model).toBe('m');
  });

  it('replaces the whole payload with a rewrite and records a trace entry', () => {
    const hooks = new HookRegistry();
    hooks.use('llm_request', () => ({
      request: { model: 'cheaper-model' },
      source: 'router',
      reason: 'budget',
      name: 'route_cheap',
    }));
    const request = { model: 'm', temperature: 0.2 };
    const result = hooks.applyRequest('llm_request', request);
    // Whole replacement, not a merge: temperature is gone.
    expect(result).toEqual({ model: 'cheaper-model' });
    expect(result).not.toBe(request);
    expect(request).toEqual({ model: 'm', temperature: 0.2 });
    expect(hooks.requestTrace(result)).toEqual([{ source: 'router', reason: 'budget', name: 'route_cheap' }]);
  });

  it('records {source: "plugin"} for an unlabelled rewrite, and ignores empty or non-string labels', () => {
    const hooks = new HookRegistry();
    hooks.use('tool_request', () => ({ args: { path: 'y' }, source: '', reason: 42 as never }));
    const result = hooks.applyRequest('tool_request', { path: 'x' }, { tool_name: 'read_file' });
    expect(result).toEqual({ path: 'y' });
    expect(hooks.requestTrace(result)).toEqual([{ source: 'plugin' }]);
  });

  it('runs middleware in registration order, each seeing the previous rewrite', () => {
    const hooks = new HookRegistry();
    const seen: unknown[] = [];
    hooks.use('tool_request', (payload) => {
      seen.push(payload.args);
      return { args: { ...payload.args, step: 1 }, name: 'first' };
    });
    hooks.use('tool_request', (payload) => {
      seen.push(payload.args);
      return { args: { ...payload.args, step: 2 }, name: 'second' };
    });
    const result = hooks.applyRequest('tool_request', { path: 'x' });
    expect(seen).toEqual([{ path: 'x' }, { path: 'x', step: 1 }]);
    expect(result).toEqual({ path: 'x', step: 2 });
    expect(hooks.requestTrace(result)).toEqual([{ name: 'first' }, { name: 'second' }]);
  });

  it('hands middleware private copies, the original, the context and both schema markers', () => {
    const hooks = new HookRegistry();
    let received: LlmRequestMiddlewarePayload | undefined;
    hooks.use('llm_request', (payload) => {
      received = payload;
    });
    const request = { model: 'm', nested: { deep: true } };
    hooks.applyRequest('llm_request', request, { session_id: 's1', api_request_id: 't:api:1', provider: 'openai' });
    expect(received).toMatchObject({
      session_id: 's1',
      api_request_id: 't:api:1',
      provider: 'openai',
      telemetry_schema_version: TELEMETRY_SCHEMA_VERSION,
      middleware_schema_version: MIDDLEWARE_SCHEMA_VERSION,
      request: { model: 'm', nested: { deep: true } },
      original_request: { model: 'm', nested: { deep: true } },
    });
    expect(received!.request).not.toBe(request);
    expect(received!.request.nested).not.toBe(request.nested);
    expect(received!.original_request).not.toBe(received!.request);
  });

  it('names the tool-request fields args and original_args', () => {
    const hooks = new HookRegistry();
    let received: ToolRequestMiddlewarePayload | undefined;
    hooks.use('tool_request', (payload) => {
      received = payload;
    });
    hooks.applyRequest('tool_request', { path: 'x' }, { tool_name: 'read_file', tool_call_id: 'c1' });
    expect(received).toMatchObject({ tool_name: 'read_file', tool_call_id: 'c1', args: { path: 'x' }, original_args: { path: 'x' } });
  });

  it('copies the rewrite so a middleware that keeps a reference cannot change it later', () => {
    const hooks = new HookRegistry();
    const kept = { model: 'rewritten' };
    hooks.use('llm_request', () => ({ request: kept }));
    const result = hooks.applyRequest('llm_request', { model: 'm' });
    kept.model = 'changed later';
    expect(result).toEqual({ model: 'rewritten' });
  });

  it('falls back to a shallow copy when the payload cannot be structured-cloned', () => {
    const hooks = new HookRegistry({ logger: recordingLogger() });
    const client = { send: () => 'ok' };
    const seen: unknown[] = [];
    hooks.use('llm_request', (payload) => {
      seen.push(payload.request.client);
      return { request: { ...payload.request, model: 'b' } };
    });
    const request = { model: 'a', client };
    const result = hooks.applyRequest('llm_request', request);
    expect(result).toEqual({ model: 'b', client });
    expect(result).not.toBe(request);
    expect(seen[0]).toBe(client);
  });

  it('logs and skips a throwing request middleware, and later middleware still runs', () => {
    const logger = recordingLogger();
    const hooks = new HookRegistry({ logger });
    const failure = new Error('policy plugin bug');
    hooks.use(
      'tool_request',
      () => {
        throw failure;
      },
      { name: 'broken_policy' },
    );
    hooks.use('tool_request', () => ({ args: { path: 'safe' } }));
    const result = hooks.applyRequest('tool_request', { path: 'x' });
    expect(result).toEqual({ path: 'safe' });
    expect(logger.at('warn')[0]?.message).toContain('broken_policy');
    expect(logger.at('warn')[0]?.details).toContain(failure);
  });

  it('ignores, with a warning, a request middleware that returns a promise', async () => {
    const logger = recordingLogger();
    const hooks = new HookRegistry({ logger });
    hooks.use('llm_request', (async () => ({ request: { model: 'x' } })) as never);
    hooks.use('llm_request', (async () => {
      throw new Error('rejected');
    }) as never);
    const request = { model: 'm' };
    expect(hooks.applyRequest('llm_request', request)).toBe(request);
    expect(logger.at('warn')).toHaveLength(2);
    expect(logger.at('warn')[0]?.message).toContain('synchronous');
  });

  it('reports presence with hasMiddleware and stops rewriting after unsubscribe', () => {
    const hooks = new HookRegistry();
    expect(hooks.hasMiddleware('llm_request')).toBe(false);
    const off = hooks.use('llm_request', () => ({ request: { model: 'x' } }));
    expect(hooks.hasMiddleware('llm_request')).toBe(true);
    expect(hooks.hasMiddleware('llm_execution')).toBe(false);
    off();
    off();
    expect(hooks.hasMiddleware('llm_request')).toBe(false);
    const request = { model: 'm' };
    expect(hooks.applyRequest('llm_request', request)).toBe(request);
  });

  it('rejects an unknown middleware kind with a TypeError listing the valid kinds', () => {
    const hooks = new HookRegistry();
    for (const call of [
      () => hooks.use('api_request' as MiddlewareKind, () => {}),
      () => hooks.hasMiddleware('api_request' as MiddlewareKind),
    ]) {
      const caught = thrown(call);
      expect(caught).toBeInstanceOf(TypeError);
      expect(caught).toBeInstanceOf(InvalidMiddlewareKindError);
      for (const kind of ['llm_request', 'tool_request', 'llm_execution', 'tool_execution']) {
        expect((caught as Error).message).toContain(kind);
      }
    }
  });

  it('rejects an execution kind passed to applyRequest', () => {
    const hooks = new HookRegistry();
    expect(() => hooks.applyRequest('llm_execution' as never, {})).toThrow(InvalidMiddlewareKindError);
    expect(() => hooks.applyRequest('llm_execution' as never, {})).toThrow(/llm_request, tool_request/);
  });

  it('rejects middleware that is not a function', () => {
    const hooks = new HookRegistry();
    expect(() => hooks.use('llm_request', {} as never)).toThrow(InvalidCallbackError);
  });

  it('returns an empty trace for objects that were not produced by a rewrite', () => {
    const hooks = new HookRegistry();
    const trace = hooks.requestTrace({});
    expect(trace).toEqual([]);
    expect(Object.isFrozen(trace)).toBe(true);
  });

  it('freezes the recorded trace so subscribers cannot edit it', () => {
    const hooks = new HookRegistry();
    hooks.use('llm_request', () => ({ request: {}, source: 'x' }));
    const trace = hooks.requestTrace(hooks.applyRequest('llm_request', { model: 'm' }));
    expect(Object.isFrozen(trace)).toBe(true);
    expect(Object.isFrozen(trace[0])).toBe(true);
    expect(trace).toEqual([{ source: 'x' }]);
  });
});
