import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from '../../src/shared/logger.ts';
import type { RelayBackend } from '../../src/relay/contract.ts';
import { createNoopRelay } from '../../src/backends/off.ts';
import { detectRuntime } from '../../src/shared/js-runtime.ts';
import { BACKEND_ENV, resolveBackend, resolveBackendNow, type ResolvedBackend } from '../../src/backends/select.ts';
import { NativeUnavailableError } from '../../native/index.ts';
import { available as nativeAvailable } from '../native/support.ts';

function recordingLogger(): Logger & { lines: { level: string; message: string }[] } {
  const lines: { level: string; message: string }[] = [];
  const at = (level: string) => (message: string) => {
    lines.push({ level, message });
  };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

const failingNative = () => {
  throw new NativeUnavailableError('module-missing', 'nemo-relay-node, an optional peer dependency, is not installed');
};
const fakeNative = (): RelayBackend => Object.assign(createNoopRelay(), { kind: 'native', version: '0.9.2' }) as unknown as RelayBackend;

describe('resolveBackend', () => {
  const resolved: ResolvedBackend[] = [];
  const resolve = async (...args: Parameters<typeof resolveBackend>) => {
    const result = await resolveBackend(...args);
    resolved.push(result);
    return result;
  };
  afterEach(async () => {
    for (const r of resolved.splice(0)) await r.backend.shutdown?.();
  });

  it('picks native on node when it loads', async () => {
    const logger = recordingLogger();
    const result = await resolve('auto', { env: {}, logger, runtime: 'node', nativeLoader: fakeNative });
    expect(result).toMatchObject({ kind: 'native', version: '0.9.2' });
    expect(result.reason).toBe('auto on node: native relay loaded (nemo-relay-node 0.9.2)');
    expect(logger.lines.filter((l) => l.level === 'warn')).toEqual([]);
  });

  it('falls back to memory on node when native cannot load, saying why (in status() and doctor), without a warning', async () => {
    const logger = recordingLogger();
    const result = await resolve('auto', { env: {}, logger, runtime: 'node', nativeLoader: failingNative });
    expect(result.kind).toBe('memory');
    expect(result.backend.kind).toBe('memory');
    expect(result.reason).toContain('native relay unavailable (nemo-relay-node, an optional peer dependency, is not installed)');
    // The in-memory relay is what most hosts run: a debug line, not a notice on every start.
    expect(logger.lines.map((l) => l.level)).toEqual(['debug']);
  });

  it.each(['bun', 'deno', 'unknown'] as const)('picks memory on %s without trying native', async (runtime) => {
    let tried = false;
    const result = await resolve('auto', {
      env: {},
      runtime,
      nativeLoader: () => {
        tried = true;
        return fakeNative();
      },
    });
    expect(result.kind).toBe('memory');
    expect(result.reason).toBe(`auto on ${runtime}: in-memory relay (native is an explicit opt-in there)`);
    expect(tried).toBe(false);
  });

  it('loads native on bun or deno when asked for explicitly', async () => {
    const result = await resolve('native', { env: {}, runtime: 'deno', nativeLoader: fakeNative });
    expect(result.kind).toBe('native');
  });

  it('turns telemetry off with one loud warning when native was asked for and cannot load', async () => {
    const logger = recordingLogger();
    const result = await resolve('native', { env: {}, logger, runtime: 'node', nativeLoader: failingNative });
    expect(result.kind).toBe('off');
    expect(result.backend.kind).toBe('off');
    expect(result.reason).toMatch(/^native relay requested but unavailable on node \(nemo-relay-node, an optional peer dependency, is not installed\); telemetry is OFF$/);
    expect(logger.lines).toEqual([{ level: 'warn', message: result.reason }]);
    // The off backend takes every call and never throws.
    const scope = result.backend.pushScope({ name: 's', category: 'agent' });
    result.backend.popScope(scope);
    expect(await result.backend.executeTool!({ name: 't', args: { a: 1 } }, (args) => args)).toEqual({ a: 1 });
    expect(result.backend.stats?.()).toEqual({ events: 0, errors: 0, dropped: 4 });
  });

  it('gives memory and off when asked for', async () => {
    expect((await resolve('memory', { env: {} })).kind).toBe('memory');
    const off = await resolve('off', { env: {} });
    expect(off).toMatchObject({ kind: 'off', reason: 'telemetry is off' });
  });

  it('uses a backend object as is', async () => {
    const backend = fakeNative();
    const result = await resolve(backend, { env: {} });
    expect(result).toMatchObject({ backend, kind: 'custom', reason: 'backend object passed by the host (kind native)', version: '0.9.2' });
  });

  it('lets NEMO_RELAY_HOOKS_BACKEND override the choice, a backend object included', async () => {
    const memory = await resolve('native', { env: { [BACKEND_ENV]: ' Memory ' }, nativeLoader: fakeNative });
    expect(memory).toMatchObject({ kind: 'memory', reason: `${BACKEND_ENV}=memory: in-memory relay requested` });
    const off = await resolve(fakeNative(), { env: { [BACKEND_ENV]: 'off' } });
    expect(off).toMatchObject({ kind: 'off', reason: `${BACKEND_ENV}=off: telemetry is off` });
    const native = await resolve('memory', { env: { [BACKEND_ENV]: 'native' }, runtime: 'bun', nativeLoader: fakeNative });
    expect(native.kind).toBe('native');
    expect(native.reason).toMatch(new RegExp(`^${BACKEND_ENV}=native: native relay requested`));
  });

  it('ignores an invalid NEMO_RELAY_HOOKS_BACKEND with a warning, and an empty one silently', async () => {
    const logger = recordingLogger();
    const result = await resolve('memory', { env: { [BACKEND_ENV]: 'quantum' }, logger });
    expect(result.kind).toBe('memory');
    expect(logger.lines).toEqual([{ level: 'warn', message: `ignoring ${BACKEND_ENV}="quantum": expected one of auto, native, memory, off` }]);
    const quiet = recordingLogger();
    expect((await resolve('off', { env: { [BACKEND_ENV]: '' }, logger: quiet })).kind).toBe('off');
    expect(quiet.lines).toEqual([]);
  });

  it('warns once of an invalid NEMO_RELAY_HOOKS_BACKEND when resolveBackendNow cannot decide and resolveBackend then does (the plugin asks both)', async () => {
    const logger = recordingLogger();
    const env = { [BACKEND_ENV]: 'nativ' };
    expect(resolveBackendNow('native', { env, logger, runtime: 'node' })).toBeUndefined();
    expect((await resolve('native', { env, logger, runtime: 'node', nativeLoader: fakeNative })).kind).toBe('native');
    expect(logger.lines).toEqual([{ level: 'warn', message: `ignoring ${BACKEND_ENV}="nativ": expected one of auto, native, memory, off` }]);
    // Decided at once, it warns at once.
    const now = recordingLogger();
    expect(resolveBackendNow('memory', { env, logger: now })?.kind).toBe('memory');
    expect(now.lines).toEqual([{ level: 'warn', message: `ignoring ${BACKEND_ENV}="nativ": expected one of auto, native, memory, off` }]);
  });

  it('treats an unknown choice as auto, with a warning', async () => {
    const logger = recordingLogger();
    const result = await resolve('fastest' as never, { env: {}, logger, runtime: 'bun' });
    expect(result.kind).toBe('memory');
    expect(logger.lines[0]).toEqual({ level: 'warn', message: 'unknown relay backend "fastest"; using "auto"' });
  });

  it('never rejects, even when the native loader rejects asynchronously or the logger throws', async () => {
    const throwingLogger: Logger = {
      debug: () => {
        throw new Error('logger');
      },
      info: () => {
        throw new Error('logger');
      },
      warn: () => {
        throw new Error('logger');
      },
      error: () => {
        throw new Error('logger');
      },
    };
    const result = await resolve('native', { env: {}, logger: throwingLogger, nativeLoader: () => Promise.reject(new Error('late failure')) });
    expect(result.kind).toBe('off');
    expect(result.reason).toContain('late failure');
  });

  const realNative = nativeAvailable && detectRuntime() === 'node';
  if (!realNative) {
    const why = nativeAvailable ? `auto picks native only on node (running on ${detectRuntime()})` : 'nemo-relay-node cannot load here';
    console.warn(`[select tests] skipping the real native load: ${why}`);
  }
  it.skipIf(!realNative)('loads the real native adapter on node through the dynamic import', async () => {
    const result = await resolve('auto', { env: {} });
    expect(result.kind).toBe('native');
    expect(result.backend.kind).toBe('native');
    expect(result.version).toMatch(/^0\.9\./);
  });
});

describe('detectRuntime', () => {
  it('tells node, bun and deno apart', () => {
    expect(detectRuntime({ process: { versions: { node: '20.0.0' } } })).toBe('node');
    expect(detectRuntime({ process: { versions: { node: '24.0.0', bun: '1.4.5' } } })).toBe('bun');
    expect(detectRuntime({ Bun: { version: '1.4.5' } })).toBe('bun');
    expect(detectRuntime({ process: { versions: { node: '26.3.0', deno: '2.9.6' } } })).toBe('deno');
    expect(detectRuntime({ Deno: {} })).toBe('deno');
    expect(detectRuntime({})).toBe('unknown');
  });

  it('detects the runtime running this test', () => {
    const versions = process.versions as Record<string, string | undefined>;
    const expected = versions.deno ? 'deno' : versions.bun ? 'bun' : 'node';
    expect(detectRuntime()).toBe(expected);
  });
});
