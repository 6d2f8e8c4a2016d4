// flush() and shutdown() answer within their timeoutMs even when a custom
// backend never settles, and even when nothing else keeps the process
// alive: the host's `await` must come back (an unref'd timer once let Node
// exit with the await unsettled, exit code 13).
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/shared/logger.ts';
import { createNemoRelayPlugin } from '../../src/index.ts';
import { createFakeRelay } from '../../src/testing/index.ts';
import { runScript } from '../native/support.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ENTRY = pathToFileURL(path.join(ROOT, 'dist', 'src', 'index.js')).href;
const TESTING = pathToFileURL(path.join(ROOT, 'dist', 'src', 'testing', 'index.js')).href;

function stuckBackend() {
  const fake = createFakeRelay();
  const never = () => new Promise<void>(() => {});
  return new Proxy(fake, { get: (target, key) => (key === 'flush' || key === 'shutdown' ? never : Reflect.get(target, key)) });
}

describe('bounded flush and shutdown', () => {
  it('come back within timeoutMs when the backend never settles, and count it', async () => {
    const warnings: string[] = [];
    const logger = { ...silentLogger, warn: (message: string) => warnings.push(message) };
    const plugin = createNemoRelayPlugin({ backend: stuckBackend(), env: {}, logger });
    plugin.handlers.on_session_start({ session_id: 's1' });
    await plugin.flush({ timeoutMs: 50 });
    await plugin.shutdown({ timeoutMs: 50 });
    // One timed-out wait each: the flush, then the shutdown.
    expect(plugin.status().counters.errors).toBe(2);
    expect(plugin.status().state).toBe('shutdown');
    // Each warning names what it was still waiting for: here the backend's outputs, not a count of nothing.
    expect(warnings).toEqual([
      "NeMo Relay flush did not finish within 50 ms: the backend's outputs (ATOF and trajectory files, streams, exporters, uploads) were still writing; it goes on in the background",
      "NeMo Relay shutdown did not finish within 50 ms: the backend's outputs (ATOF and trajectory files, streams, exporters, uploads) were still writing",
    ]);
  });

  it('let a host with nothing else to do finish its await in a child process', () => {
    const result = runScript(`
import { createNemoRelayPlugin } from ${JSON.stringify(ENTRY)};
import { createFakeRelay } from ${JSON.stringify(TESTING)};
const fake = createFakeRelay();
const never = () => new Promise(() => {});
const backend = new Proxy(fake, { get: (t, k) => (k === 'flush' || k === 'shutdown' ? never : Reflect.get(t, k)) });
const plugin = createNemoRelayPlugin({ backend, env: {}, logger: { debug() {}, info() {}, warn() {}, error() {} } });
plugin.handlers.on_session_start({ session_id: 's1' });
await plugin.flush({ timeoutMs: 100 });
await plugin.shutdown({ timeoutMs: 100 });
console.log('@@RESULT@@' + JSON.stringify({ after: true, errors: plugin.status().counters.errors }));
`);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.result).toEqual({ after: true, errors: 2 });
  });
});
