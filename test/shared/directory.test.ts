import { existsSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeDirectory } from '../../src/shared/directory.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { createNemoRelayPlugin } from '../../src/index.ts';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';

const tempDir = () => mkdtempSync(path.join(os.tmpdir(), 'nrh-dir-'));
const hasProc = existsSync('/proc/self');
if (!hasProc) console.info('[directory tests] /proc cases skipped: no /proc on this system');

describe('makeDirectory', () => {
  it('creates missing parents and accepts a folder that exists', () => {
    const target = path.join(tempDir(), 'a', 'b', 'c');
    makeDirectory(target);
    makeDirectory(target);
    expect(statSync(target).isDirectory()).toBe(true);
  });

  it('fails with ENOTDIR when a file stands in the way', () => {
    const file = path.join(tempDir(), 'file');
    writeFileSync(file, 'x');
    expect(() => makeDirectory(path.join(file, 'below'))).toThrow(/ENOTDIR/);
  });

  it.skipIf(!hasProc)('fails instead of looping forever under /proc', () => {
    expect(() => makeDirectory('/proc/nrh-does-not-exist/atof')).toThrow(/ENOENT|EACCES|EPERM|EROFS/);
  });

  it.skipIf(!hasProc)('lets the plugin go on when its output folders are under /proc', async () => {
    const plugin = createNemoRelayPlugin({
      backend: createMemoryRelay({ logger: silentLogger }),
      env: {},
      logger: silentLogger,
      settings: { atofEnabled: true, atofOutputDirectory: '/proc/nrh-nope/atof', atifEnabled: true, atifOutputDirectory: '/proc/nrh-nope/atif' },
    });
    // A model call, so the session has a trajectory to write (one without a step is not written at all).
    plugin.handlers.on_session_start({ session_id: 's1' });
    plugin.handlers.pre_api_request({ session_id: 's1', api_request_id: 'a1', provider: 'openai', model: 'gpt-4o' });
    plugin.handlers.post_api_request({ session_id: 's1', api_request_id: 'a1', response: { choices: [{ message: { role: 'assistant', content: 'hi' } }] } });
    plugin.handlers.on_session_finalize({ session_id: 's1' });
    await plugin.shutdown({ timeoutMs: 5_000 });
    expect(plugin.status().state).toBe('shutdown');
    expect(plugin.status().counters.errors).toBeGreaterThan(0);
  });
});
