// The plugin hands every backend a wrapper (credential headers dropped, the
// host's redact hook where the backend cannot run it): the wrapper must keep
// every method the backend has, with its arguments, or a capability is lost
// without a word (a shutdown budget that never arrived held a process open;
// a new contract method would simply vanish). A method added to the
// contract fails the typecheck here (CONTRACT lists every key), then this
// test until the wrapper decides what it does with its payloads.
import { describe, expect, it } from 'vitest';
import { egressBackend } from '../../src/plugin/egress.ts';
import type { RelayBackend } from '../../src/relay/contract.ts';
import { BACKENDS } from '../contract/backends.ts';
import { createFakeRelay } from '../../src/testing/index.ts';

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
  dropCredentialHeaders: true,
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
      // Asked once, at the start: this spy's answer is no removal, so the wrapper walks payloads itself.
      ['dropCredentialHeaders'],
      ['shutdown', { timeoutMs: 300 }],
      ['propagationContext', handle],
    ]);
  });

  it('leaves the walk to a backend that drops credential headers in its own copy, keeps it with a redact hook, and removes the drop at shutdown', async () => {
    const payload = { request: { headers: { authorization: 'Bearer a', accept: 'json' } } };
    for (const redact of [undefined, () => {}]) {
      const seen: unknown[] = [];
      let held = 0;
      let removed = 0;
      const backend = {
        ...createFakeRelay(),
        mark: (o: { data?: unknown }) => void seen.push(o.data),
        dropCredentialHeaders: () => {
          held += 1;
          return () => void (removed += 1);
        },
      } as unknown as RelayBackend;
      const wrapped = egressBackend(backend, redact === undefined ? {} : { redact });
      wrapped.mark({ name: 'm', data: payload });
      await wrapped.shutdown!();
      if (redact === undefined) {
        // The backend's copy drops them: the host's own object reaches it, walked by no one here.
        expect(seen[0]).toBe(payload);
        expect([held, removed]).toEqual([1, 1]);
      } else {
        // The hook sees the payload first, so the wrapper drops them before it.
        expect(seen[0]).toEqual({ request: { headers: { accept: 'json' } } });
        expect([held, removed]).toEqual([0, 0]);
      }
    }
  });
});
