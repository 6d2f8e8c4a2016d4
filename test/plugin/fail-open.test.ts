import { describe, expect, it, vi } from 'vitest';
import { HOOK_NAMES } from '../../src/hooks/names.ts';
import type { Logger } from '../../src/shared/logger.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { createNemoRelayPlugin } from '../../src/index.ts';
import type { RelayBackend } from '../../src/relay/contract.ts';
import { createFakeRelay } from '../../src/testing/index.ts';

/** A backend whose every property access throws, the worst a host could plug in. */
function explodingBackend(): RelayBackend {
  return new Proxy({} as RelayBackend, {
    get(_target, property) {
      if (property === 'then') return undefined; // not a thenable
      throw new Error(`backend exploded on ${String(property)}`);
    },
  });
}

/** A backend whose methods exist but all throw. */
function throwingBackend(): RelayBackend {
  const fail = () => {
    throw new Error('backend call failed');
  };
  return {
    kind: 'throwing',
    pushScope: fail,
    popScope: fail,
    mark: fail,
    llmStart: fail,
    llmEnd: fail,
    toolStart: fail,
    toolEnd: fail,
    executeLlm: fail,
    executeTool: fail,
    registerAtofExporter: fail,
    registerAtifExporter: fail,
    initializePluginConfig: fail,
    flush: fail,
    shutdown: fail,
  } as unknown as RelayBackend;
}

const samplePayload = {
  session_id: 's1',
  turn_id: 't1',
  api_request_id: 't1:api:1',
  tool_call_id: 'call-1',
  tool_name: 'shell',
  child_session_id: 'child',
  parent_session_id: 's1',
};

describe('fail-open plugin handlers', () => {
  for (const [label, make] of [
    ['a Proxy that throws on every access', explodingBackend],
    ['a backend whose every call throws', throwingBackend],
  ] as const) {
    it(`never throws into the host with ${label}`, async () => {
      const plugin = createNemoRelayPlugin({
        backend: make(),
        env: { HERMES_NEMO_RELAY_ATOF_ENABLED: '1', HERMES_NEMO_RELAY_ATIF_ENABLED: '1' },
        logger: silentLogger,
      });
      for (const name of HOOK_NAMES) {
        expect(() => plugin.handlers[name]({ ...samplePayload })).not.toThrow();
      }
      await expect(plugin.flush()).resolves.toBeUndefined();
      await expect(plugin.shutdown({ timeoutMs: 1000 })).resolves.toBeUndefined();
      expect(() => plugin.status()).not.toThrow();
    });

    it(`still returns the tool's result through tool_execution with ${label}`, async () => {
      const plugin = createNemoRelayPlugin({
        backend: make(),
        env: {},
        settings: {},
        logger: silentLogger,
      });
      const result = await plugin.toolExecution({ ...samplePayload, args: { cmd: 'ls' } }, (payload) => ({
        ran: (payload as { args: unknown }).args,
      }));
      expect(result).toEqual({ ran: { cmd: 'ls' } });
    });
  }

  it('reports a failure once per hook kind and counts the rest', () => {
    const warn = vi.fn();
    const logger: Logger = { ...silentLogger, warn };
    const plugin = createNemoRelayPlugin({ backend: throwingBackend(), env: {}, logger });
    for (let i = 0; i < 5; i++) plugin.handlers.pre_approval_request({ session_id: 's1' });
    const warnings = warn.mock.calls.filter(([message]) => String(message).includes('pre_approval_request'));
    expect(warnings).toHaveLength(1);
    expect(plugin.status().counters.errors).toBeGreaterThanOrEqual(5);
  });

  it('survives a logger that throws', () => {
    const logger: Logger = {
      debug: () => {
        throw new Error('logger broke');
      },
      info: () => {
        throw new Error('logger broke');
      },
      warn: () => {
        throw new Error('logger broke');
      },
      error: () => {
        throw new Error('logger broke');
      },
    };
    const plugin = createNemoRelayPlugin({ backend: throwingBackend(), env: {}, logger });
    expect(() => plugin.handlers.on_session_start({ session_id: 's1' })).not.toThrow();
  });
});

describe('status() against a backend that returns garbage', () => {
  for (const garbage of ['not a list', [null], [{ bytes: 3 }], 42]) {
    it(`answers, counts and says it once when outputs() returns ${JSON.stringify(garbage)}`, async () => {
      const fake = createFakeRelay();
      const warnings: string[] = [];
      const logger: Logger = { ...silentLogger, warn: (message: string) => void warnings.push(message) };
      const backend = new Proxy(fake, { get: (target, key) => (key === 'outputs' ? () => garbage : Reflect.get(target, key)) });
      const plugin = createNemoRelayPlugin({ backend, env: {}, logger });
      plugin.handlers.on_session_start({ session_id: 's1' });
      for (let poll = 0; poll < 3; poll++) expect(plugin.status().outputs).toEqual([]);
      expect(plugin.status().counters.errors).toBe(3);
      expect(warnings.filter((message) => message.includes('outputs()'))).toHaveLength(1);
      await plugin.shutdown();
    });
  }
});
