// A binding that loads and then fails on every call (Node 20.0-20.15:
// `process.getBuiltinModule is not a function`) is refused at load after one
// real call, with the reason, so `auto` falls back to the memory relay
// instead of recording nothing. The old Node is simulated in a child process
// by deleting process.getBuiltinModule before the binding loads.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { loadNativeRelay, NativeUnavailableError } from '../../native/index.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { dist, runChild, runtime } from '../support/child.ts';
import { available } from './support.ts';

describe.skipIf(!available)('native binding probe at load', () => {
  it('refuses a binding whose first call fails, with reason probe-failed', () => {
    const real = createRequire(import.meta.url)('nemo-relay-node') as Record<string, unknown>;
    const broken = {
      ...real,
      getHandle() {
        throw new TypeError('process.getBuiltinModule is not a function');
      },
    };
    let caught: unknown;
    try {
      loadNativeRelay({ module: broken, version: '0.9.2', logger: silentLogger });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(NativeUnavailableError);
    expect((caught as NativeUnavailableError).reason).toBe('probe-failed');
    expect((caught as Error).message).toMatch(/first call failed \(process\.getBuiltinModule is not a function\)/);
  });

  it('on a runtime without process.getBuiltinModule, loading fails with the reason (child process)', () => {
    const result = runChild(`
      delete process.getBuiltinModule;
      const { loadNativeRelay } = await import(${dist('native/index.js')});
      try { loadNativeRelay(); console.log('@@loaded'); } catch (error) { console.log('@@' + error.reason + ': ' + error.message); }
    `);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout.split('@@')[1]).toMatch(/^probe-failed: .*getBuiltinModule/);
  });

  it.skipIf(runtime !== 'node')('auto falls back to memory and records the hooks (child process)', () => {
    const result = runChild(`
      delete process.getBuiltinModule;
      const { HookRegistry, createNemoRelayPlugin } = await import(${dist('src/index.js')});
      const registry = new HookRegistry();
      const plugin = createNemoRelayPlugin({ backend: 'auto' });
      plugin.register(registry);
      await plugin.ready;
      console.log('@@' + JSON.stringify(plugin.status().backend));
      await plugin.shutdown();
    `);
    expect(result.status, result.stderr).toBe(0);
    const backend = JSON.parse(result.stdout.split('@@')[1]!) as { kind: string; reason: string };
    expect(backend.kind).toBe('memory');
    expect(backend.reason).toMatch(/first call failed/);
  });
});
if (!available) console.warn('[native probe] skipped: nemo-relay-node cannot load here');
if (runtime !== 'node') console.warn('[native probe] the auto fallback case runs on Node only (auto picks memory on Bun and Deno anyway)');
