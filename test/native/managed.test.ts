import { describe, expect, it } from 'vitest';
import type { LlmRequest } from '../../src/relay/contract.ts';
import { Frame, ScopeState } from '../../native/scopes.ts';
import type { NativeScopeStack } from '../../native/binding.ts';
import { createRequire } from 'node:module';
import { available, NativeFixture, relay } from './support.ts';

class ProviderError extends Error {
  override name = 'ProviderError';
  readonly status = 529;
}

describe.skipIf(!available)('native managed execution', () => {
  const fixture = new NativeFixture('managed');
  const recorded = fixture.recorded.bind(fixture);

  it('returns the host call result object itself and records it', async () => {
    const response = { id: 'msg', content: [{ type: 'text', text: 'hi' }], usage: { input_tokens: 1n, output_tokens: 2 }, sdk: () => 'method' };
    let seen: LlmRequest | undefined;
    const events = await recorded(async (r) => {
      const s = r.pushScope({ name: 's', category: 'agent' });
      const result = await r.executeLlm(
        { name: 'anthropic', parent: s, request: { headers: { authorization: 'Bearer t' }, content: { model: 'm' } }, modelName: 'm' },
        async (request) => {
          seen = request;
          return response;
        },
      );
      expect(result).toBe(response);
      r.popScope(s);
    });
    // The call sees the request as native forwards it, credentials and traceparent included.
    expect(seen?.headers).toMatchObject({ authorization: 'Bearer t', traceparent: expect.any(String) });
    const end = events.find((e) => e.name === 'anthropic' && e.scope_category === 'end');
    expect(end?.data).toEqual({ content: [{ text: 'hi', type: 'text' }], id: 'msg', usage: { input_tokens: '1', output_tokens: 2 } });
    expect(end?.metadata).toMatchObject({ 'otel.status_code': 'OK' });
  });

  it('rejects with the original error object of a failed LLM call and records the failure', async () => {
    const failure = new ProviderError('overloaded');
    const events = await recorded(async (r) => {
      const s = r.pushScope({ name: 's', category: 'agent' });
      const outcome = r.executeLlm({ name: 'anthropic', parent: s, request: { headers: {}, content: {} } }, async () => {
        throw failure;
      });
      await expect(outcome).rejects.toBe(failure);
      r.popScope(s);
    });
    const end = events.find((e) => e.name === 'anthropic' && e.scope_category === 'end');
    expect(end?.data).toBeNull();
    expect(end?.metadata).toMatchObject({ 'otel.status_code': 'ERROR', 'exception.type': 'ProviderError' });
    expect(fixture.backend?.stats()).toMatchObject({ events: 4, errors: 0 });
  });

  it('wraps a tool result in {result} and hands back the tool result itself', async () => {
    const result = { rows: [1, 2], at: new Date(0), cycle: undefined as unknown };
    result.cycle = result;
    let seenArgs: unknown;
    const events = await recorded(async (r) => {
      const s = r.pushScope({ name: 's', category: 'agent' });
      const out = await r.executeTool({ name: 'query', parent: s, args: { sql: 'select 1' }, toolCallId: 'call-9' }, (args) => {
        seenArgs = args;
        return result;
      });
      expect(out).toBe(result);
      r.popScope(s);
    });
    expect(seenArgs).toEqual({ sql: 'select 1' });
    const end = events.find((e) => e.name === 'query' && e.scope_category === 'end');
    expect(end?.data).toEqual({ at: '1970-01-01T00:00:00.000Z', cycle: '[Circular]', rows: [1, 2] });
    expect(end?.category_profile).toMatchObject({ tool_call_id: 'call-9' });
  });

  it('rejects with exactly what a failing tool threw, even a non-Error', async () => {
    const thrown = { reason: 'quota', retryAfter: 3 };
    const events = await recorded(async (r) => {
      const s = r.pushScope({ name: 's', category: 'agent' });
      await expect(
        r.executeTool({ name: 'flaky', parent: s, args: {} }, () => {
          throw thrown;
        }),
      ).rejects.toBe(thrown);
      await expect(
        r.executeTool({ name: 'sync-throw', parent: s, args: {} }, () => {
          throw new TypeError('bad args');
        }),
      ).rejects.toBeInstanceOf(TypeError);
      r.popScope(s);
    });
    const ends = events.filter((e) => e.scope_category === 'end' && e.category === 'tool');
    expect(ends.map((e) => (e.metadata as Record<string, unknown>)['otel.status_code'])).toEqual(['ERROR', 'ERROR']);
    expect((ends[1]?.metadata as Record<string, unknown>)['exception.type']).toBe('TypeError');
  });

  it('reaches the host call with a request that is not an object', async () => {
    fixture.backend = relay();
    const out = await fixture.backend.executeLlm({ name: 'p', request: null as unknown as LlmRequest }, () => 'answer');
    expect(out).toBe('answer');
    expect(fixture.backend.stats()).toMatchObject({ events: 2, errors: 0 });
  });

  it('runs the host call directly when native refuses to start the managed call', async () => {
    fixture.backend = relay();
    // A parent whose native handle is not a real one makes native throw synchronously.
    const lib = createRequire(import.meta.url)('nemo-relay-node') as { createScopeStack(): NativeScopeStack };
    const bogus = new ScopeState({ uuid: 'not-a-uuid', name: 'x', parentUuid: null }, null, new Frame(lib.createScopeStack(), 'x'), true, 'x');
    const llm = await fixture.backend.executeLlm({ name: 'p', parent: bogus as never, request: { headers: {}, content: {} } }, () => 'answer');
    const tool = await fixture.backend.executeTool({ name: 't', parent: bogus as never, args: {} }, (args) => ({ args }));
    expect(llm).toBe('answer');
    expect(tool).toEqual({ args: {} });
    expect(fixture.backend.stats()).toMatchObject({ events: 0, errors: 2, dropped: 4 });
  });
});
