import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/hooks/logger.ts';
import { createNemoRelayPlugin } from '../../src/plugin/index.ts';
import { createFakeRelay } from '../../src/testing/index.ts';

describe('status().outputs', () => {
  it('lists at most 1,000 ATIF files, dropping the first written, so a long-lived host does not grow without bound', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'nrh-outputs-'));
    try {
      const plugin = createNemoRelayPlugin({
        backend: createFakeRelay(),
        env: { HERMES_NEMO_RELAY_ATIF_ENABLED: '1', HERMES_NEMO_RELAY_ATIF_OUTPUT_DIRECTORY: dir },
        logger: silentLogger,
      });
      for (let i = 0; i < 1005; i++) {
        plugin.onSessionStart({ session_id: `s${i}` });
        plugin.onSessionFinalize({ session_id: `s${i}` });
      }
      await plugin.flush();
      expect(readdirSync(dir)).toHaveLength(1005);
      const listed = plugin.status().outputs.filter((output) => output.kind === 'atif').map((output) => path.basename(output.path));
      expect(listed).toHaveLength(1000);
      expect(listed[0]).toBe('hermes-atif-s5.json');
      expect(listed[999]).toBe('hermes-atif-s1004.json');
      await plugin.shutdown();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the off backend', () => {
  it('writes no file at all, not even an empty trajectory, and counts what it dropped', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'nrh-off-'));
    const plugin = createNemoRelayPlugin({
      backend: 'off',
      env: {},
      logger: silentLogger,
      settings: { atofEnabled: true, atofOutputDirectory: dir, atifEnabled: true, atifOutputDirectory: dir },
    });
    await plugin.ready;
    plugin.onSessionStart({ session_id: 'o1' });
    plugin.onPreLlmCall({ session_id: 'o1', turn_id: 't1' });
    plugin.onSessionEnd({ session_id: 'o1', turn_id: 't1' });
    plugin.onSessionFinalize({ session_id: 'o1' });
    await plugin.shutdown();
    expect(readdirSync(dir)).toEqual([]);
    expect(plugin.status().backend.kind).toBe('off');
    expect(plugin.status().counters.dropped).toBeGreaterThan(0);
  });
});
