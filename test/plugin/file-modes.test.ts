// One policy for the files the library records (issue 23 item 13): ATOF
// files and ATIF trajectories are created owner-only (0600) on both
// backends, whether the settings or a plugins.toml configured them, as
// native creates its plugins.toml outputs. A file that already exists keeps
// its mode (the host chose it).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HookRegistry } from '../../src/hooks/index.ts';
import { createNemoRelayPlugin } from '../../src/plugin/plugin.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { tempDir } from '../contract/backends.ts';
import { available } from '../native/support.ts';
import { writeObservabilityToml } from '../support/plugins-toml.ts';

const POSIX = process.platform !== 'win32';
if (!POSIX) console.info('file-modes: skipped on Windows (no POSIX modes)');
if (!available) console.info('file-modes: the native rows are skipped (nemo-relay-node is not loadable here)');

async function record(backend: 'memory' | 'native', env: Record<string, string>): Promise<void> {
  const plugin = createNemoRelayPlugin({ backend, env, logger: silentLogger });
  const hooks = new HookRegistry({ logger: silentLogger });
  plugin.register(hooks);
  await plugin.ready;
  const ids = { session_id: 'm1', turn_id: 't1', api_request_id: 'r1' };
  hooks.emit('on_session_start', { session_id: 'm1', model: 'gpt-4o' });
  hooks.emit('pre_llm_call', { ...ids, user_message: 'hi' });
  hooks.emit('pre_api_request', { ...ids, model: 'gpt-4o', retry_count: 0 });
  hooks.emit('post_api_request', { ...ids, model: 'gpt-4o', response: { usage: { input_tokens: 1, output_tokens: 1 } } });
  hooks.emit('post_llm_call', { ...ids, assistant_response: 'ok' });
  hooks.emit('on_session_end', { session_id: 'm1', completed: true });
  hooks.emit('on_session_finalize', { session_id: 'm1' });
  await plugin.shutdown({ timeoutMs: 10_000 });
}

function modes(dir: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const name of fs.readdirSync(dir)) {
    if (name.endsWith('.toml') || name.startsWith('.')) continue;
    out[name.replace(/[0-9a-f-]{36}|m1/g, 'ID')] = fs.statSync(path.join(dir, name)).mode & 0o777;
  }
  return out;
}

const backends = [['memory', true], ['native', available]] as const;

describe.skipIf(!POSIX)('file modes', () => {
  for (const [backend, runs] of backends) {
    it.skipIf(!runs)(`${backend}: ATOF and ATIF from the settings are created 0600`, async () => {
      const dir = tempDir(`modes-${backend}`);
      await record(backend, {
        NEMO_RELAY_HOOKS_ATOF_ENABLED: '1',
        NEMO_RELAY_HOOKS_ATOF_OUTPUT_DIRECTORY: dir,
        NEMO_RELAY_HOOKS_ATOF_FILENAME: 'events.jsonl',
        NEMO_RELAY_HOOKS_ATIF_ENABLED: '1',
        NEMO_RELAY_HOOKS_ATIF_OUTPUT_DIRECTORY: dir,
        NEMO_RELAY_HOOKS_ATIF_FILENAME_TEMPLATE: 'trajectory-{session_id}.json',
      });
      expect(modes(dir)).toEqual({ 'events.jsonl': 0o600, 'trajectory-ID.json': 0o600 });
    });

    it.skipIf(!runs)(`${backend}: ATOF and ATIF from a plugins.toml are created 0600`, async () => {
      const dir = tempDir(`modes-toml-${backend}`);
      const toml = writeObservabilityToml(dir, { atofDir: dir, atifDir: dir });
      await record(backend, { NEMO_RELAY_HOOKS_PLUGINS_TOML: toml });
      const found = modes(dir);
      expect(Object.keys(found).length).toBeGreaterThanOrEqual(2);
      for (const [name, mode] of Object.entries(found)) expect([name, mode.toString(8)]).toEqual([name, '600']);
    });
  }

  it('memory: an ATOF file that already exists keeps its mode', async () => {
    const dir = tempDir('modes-existing');
    fs.writeFileSync(path.join(dir, 'events.jsonl'), '');
    fs.chmodSync(path.join(dir, 'events.jsonl'), 0o640);
    await record('memory', { NEMO_RELAY_HOOKS_ATOF_ENABLED: '1', NEMO_RELAY_HOOKS_ATOF_OUTPUT_DIRECTORY: dir, NEMO_RELAY_HOOKS_ATOF_FILENAME: 'events.jsonl', NEMO_RELAY_HOOKS_ATOF_MODE: 'append' });
    expect(fs.statSync(path.join(dir, 'events.jsonl')).mode & 0o777).toBe(0o640);
    expect(fs.readFileSync(path.join(dir, 'events.jsonl'), 'utf8').length).toBeGreaterThan(0);
  });
});
