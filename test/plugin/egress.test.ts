// The plugin hands every backend a wrapper (credential headers dropped, the
// host's redact hook where the backend cannot run it): the wrapper must keep
// every method the backend has, with its arguments, or a capability is lost
// without a word (a shutdown budget that never arrived held a process open;
// a new contract method would simply vanish). A method added to the
// contract fails the typecheck here (CONTRACT lists every key), then this
// test until the wrapper decides what it does with its payloads.
import { describe, expect, it } from 'vitest';
import { egressBackend, withoutSensitiveHeaders } from '../../src/plugin/egress.ts';
import type { RelayBackend } from '../../src/relay/contract.ts';
import { BACKENDS } from '../contract/backends.ts';

/** Every key of the contract: the typecheck fails when one is added or removed. */
const CONTRACT: Record<keyof RelayBackend, true> = {
  kind: true,
  version: true,
  pushScope: true,
  popScope: true,
  mark: true,
  llmStart: true,
  llmEnd: true,
  toolStart: true,
  toolEnd: true,
  executeLlm: true,
  executeTool: true,
  addEventTransform: true,
  propagationContext: true,
  registerAtofExporter: true,
  registerAtifExporter: true,
  initializePluginConfig: true,
  initializePluginConfigSync: true,
  activateDynamicPlugins: true,
  flush: true,
  shutdown: true,
  stats: true,
  outputs: true,
};

/** Every contract function a backend object answers to, own or inherited. */
function methodsOf(backend: object): string[] {
  const names = new Set<string>();
  for (let o: object | null = backend; o !== null && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const name of Object.getOwnPropertyNames(o)) {
      if (Object.hasOwn(CONTRACT, name) && typeof (backend as Record<string, unknown>)[name] === 'function') names.add(name);
    }
  }
  return [...names].sort();
}

describe('the egress wrapper', () => {
  for (const backend of BACKENDS) {
    describe.skipIf(!backend.available)(backend.name, () => {
      it('keeps every contract method the backend has, with or without a redact hook', async () => {
        const raw = backend.create();
        try {
          expect(methodsOf(raw).length).toBeGreaterThan(10);
          expect(methodsOf(egressBackend(raw))).toEqual(methodsOf(raw));
          expect(methodsOf(egressBackend(raw, { redact: () => {} }))).toEqual(methodsOf(raw));
        } finally {
          await raw.shutdown?.();
        }
      });
    });
  }

  it("passes the caller's arguments through (shutdown's budget, a handle's propagation context)", async () => {
    const calls: unknown[][] = [];
    const spy = new Proxy({} as RelayBackend, {
      get: (_target, name) => (name === 'kind' ? 'spy' : (...args: unknown[]) => void calls.push([name, ...args])),
    });
    const wrapped = egressBackend(spy);
    await wrapped.shutdown!({ timeoutMs: 300 });
    const handle = {};
    wrapped.propagationContext!(handle as never);
    expect(calls).toEqual([
      ['shutdown', { timeoutMs: 300 }],
      ['propagationContext', handle],
    ]);
  });

  it('drops credential headers under a headers key in any case, and leaves ids of the same length alone', () => {
    const payload = {
      task_id: { authorization: 'kept: not a headers object' },
      turn_id: 't1',
      Headers: { Authorization: 'Bearer a', 'X-Team': 'agents' },
      nested: [{ HEADERS: { cookie: 'c', accept: 'json' } }, { hEaDeRs: { 'x-api-key': 'k' } }],
    };
    const cleaned = withoutSensitiveHeaders(payload);
    expect(cleaned).toEqual({
      task_id: { authorization: 'kept: not a headers object' },
      turn_id: 't1',
      Headers: { 'X-Team': 'agents' },
      nested: [{ HEADERS: { accept: 'json' } }, { hEaDeRs: {} }],
    });
    expect(payload.Headers).toEqual({ Authorization: 'Bearer a', 'X-Team': 'agents' });
    const plain = { task_id: 'a', turn_id: 'b', request: { headers: { accept: 'json' } } };
    expect(withoutSensitiveHeaders(plain)).toBe(plain);
  });

  it('drops credentials from headers in every form a program holds them in, copying only on a change', () => {
    const pairs = [['Authorization', 'Bearer a'], ['accept', 'json']];
    const flat = ['x-api-key', 'k', 'accept', 'json'];
    const har = [{ name: 'Cookie', value: 'c' }, { name: 'accept', value: 'json' }];
    const map = new Map([['Proxy-Authorization', 'p'], ['accept', 'json']]);
    const text = 'Authorization: Bearer a\r\naccept: json\r\n';
    const fetchHeaders = new Headers({ authorization: 'Bearer a', accept: 'json' });
    fetchHeaders.append('__proto__', 'a valid header name');
    const cleaned = withoutSensitiveHeaders({ a: { headers: pairs }, b: { headers: flat }, c: { headers: har }, d: { headers: map }, e: { headers: text }, f: { headers: fetchHeaders } });
    expect(cleaned.a.headers).toEqual([['accept', 'json']]);
    expect(cleaned.b.headers).toEqual(['accept', 'json']);
    expect(cleaned.c.headers).toEqual([{ name: 'accept', value: 'json' }]);
    expect([...(cleaned.d.headers as Map<string, string>)]).toEqual([['accept', 'json']]);
    expect(cleaned.e.headers).toBe('accept: json\r\n');
    // A Headers keeps its entries behind methods: recorded as a plain object of them.
    expect(Object.getPrototypeOf(cleaned.f.headers)).toBe(Object.prototype);
    expect(Object.entries(cleaned.f.headers)).toEqual([['__proto__', 'a valid header name'], ['accept', 'json']]);
    // The host's own values are untouched.
    expect(pairs).toHaveLength(2);
    expect(map.size).toBe(2);
    // Nothing to drop: the same values come back, no copy.
    const clean = { headers: [['accept', 'json']], other: { headers: 'accept: json' }, list: { headers: ['accept', 'json'] } };
    expect(withoutSensitiveHeaders(clean)).toBe(clean);
    // Text that is not under a headers key is never read as headers.
    const prose = { note: 'Authorization: Bearer kept, not a headers value' };
    expect(withoutSensitiveHeaders(prose)).toBe(prose);
  });

  it('cleans class instances and null-prototype objects, and never turns an inherited key into an own one', () => {
    class Request {
      headers = { Cookie: 'c', accept: 'json' };
    }
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { headers: { 'api-key': 'k', accept: 'json' } });
    expect(withoutSensitiveHeaders({ request: new Request(), bare })).toEqual({ request: { headers: { accept: 'json' } }, bare: { headers: { accept: 'json' } } });
    // A host that gave Object.prototype an enumerable key: the walk sees it, the cleaned copy does not gain it.
    const proto = Object.prototype as Record<string, unknown>;
    proto.polluted = { headers: { authorization: 'x' } };
    try {
      const payload = { request: { headers: { authorization: 'y', accept: 'json' } } };
      const cleaned = withoutSensitiveHeaders(payload);
      expect(Object.keys(cleaned)).toEqual(['request']);
      expect(Object.keys(cleaned.request.headers)).toEqual(['accept']);
      const untouched = { a: 1 };
      expect(withoutSensitiveHeaders(untouched)).toBe(untouched);
    } finally {
      delete proto.polluted;
    }
  });
});
