// The contract rules both backends apply, each written once in src/relay/rules.ts.
import { describe, expect, it } from 'vitest';
import {
  endAfterStart,
  isPlainFileName,
  mergeEndMetadata,
  scopeAttributeFlags,
  scopeAttributeMask,
  scopeAttributeNames,
  toolErrorEndMetadata,
} from '../../src/relay/rules.ts';
import * as memory from '../../src/backends/memory/index.ts';
import * as native from '../../native/index.ts';
import * as backend from '../../src/relay/index.ts';
import { InvalidPluginConfigError, PluginActivationBusyError, RelayError } from '../../src/relay/errors.ts';

describe('contract rules', () => {
  it('calls a file name plain only when joining it to its folder stays in the folder', () => {
    for (const name of ['events.jsonl', 'a b.json', '.hidden', '..x', 'x..']) expect(isPlainFileName(name), name).toBe(true);
    for (const name of ['', '.', '..', '../x', 'a/b', 'a\\b', '/abs', 'a\u0000b', 42, null, undefined]) expect(isPlainFileName(name), String(name)).toBe(false);
  });

  it('keeps the known scope flags, sorted and once, and survives a hostile array', () => {
    expect(scopeAttributeFlags(['relocatable', 'x', 'parallel', 'parallel'])).toEqual(['parallel', 'relocatable']);
    expect(scopeAttributeFlags('parallel')).toEqual([]);
    expect(scopeAttributeMask(['relocatable'])).toBe(2);
    expect(scopeAttributeMask([])).toBeNull();
    expect(scopeAttributeNames(3)).toEqual(['parallel', 'relocatable']);
    const hostile = new Proxy(['parallel', 'relocatable'], {
      get(target, key, receiver) {
        if (key === '1') throw new Error('boom');
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
    expect(scopeAttributeFlags(hostile)).toEqual(['parallel']);
  });

  it('moves an end stamped at or before its start to 1 µs after it', () => {
    expect(endAfterStart(10, 11)).toBe(11);
    expect(endAfterStart(10, 10)).toBe(11);
    expect(endAfterStart(10, 3)).toBe(11);
  });

  it('marks an error-ended tool ERROR, keeping object metadata and nesting anything else', () => {
    expect(toolErrorEndMetadata({ 'error.type': 'timeout', a: 1 })).toEqual({ 'error.type': 'timeout', a: 1, 'otel.status_code': 'ERROR' });
    expect(toolErrorEndMetadata('text')).toEqual({ metadata: 'text', 'otel.status_code': 'ERROR' });
    expect(toolErrorEndMetadata(null)).toEqual({ 'otel.status_code': 'ERROR' });
  });

  it('merges end metadata over start metadata only when both are objects', () => {
    const start = { a: 1, b: 2 };
    expect(mergeEndMetadata(start, { b: 3 })).toEqual({ a: 1, b: 3 });
    expect(start).toEqual({ a: 1, b: 2 });
    expect(mergeEndMetadata(start, null)).toBe(start);
    expect(mergeEndMetadata(start, 'end')).toBe('end');
    expect(mergeEndMetadata('start', { b: 3 })).toEqual({ b: 3 });
  });
});

describe('contract errors', () => {
  it('are one class per failure kind, exported once (nemo-relay-hooks/backend); a native-only error is a RelayError too', () => {
    expect(backend.InvalidPluginConfigError).toBe(InvalidPluginConfigError);
    expect(backend.PluginActivationBusyError).toBe(PluginActivationBusyError);
    expect('InvalidPluginConfigError' in memory).toBe(false);
    expect('InvalidPluginConfigError' in native).toBe(false);
    expect(new native.NativeUnavailableError('load-failed', 'x')).toBeInstanceOf(RelayError);
  });

  it('reject a bad plugins.toml on the memory backend with the shared class and its diagnostics', async () => {
    const relay = memory.createMemoryRelay();
    const failure = await relay.initializePluginConfig({ version: 99, components: 'nope' } as never).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(InvalidPluginConfigError);
    expect((failure as InvalidPluginConfigError).diagnostics.length).toBeGreaterThan(0);
    await relay.shutdown();
  });
});
