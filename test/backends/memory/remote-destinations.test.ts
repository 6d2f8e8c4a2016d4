// The memory relay's own plugin host (used directly, without the plugin):
// a stream sink or storage entry whose configuration native would reject
// the whole document for is skipped with a warning, and the rest activates.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMemoryRelay } from '../../../src/backends/memory/index.ts';
import { InvalidPluginConfigError } from '../../../src/relay/index.ts';
import { silentLogger } from '../../../src/shared/logger.ts';
import type { Json, JsonObject } from '../../../src/relay/contract.ts';
import { tempDir } from '../../contract/backends.ts';
import { observabilityDocument } from '../../support/plugins-toml.ts';

const doc = (dir: string, extraSinks: Json[], storage: Json[]) =>
  observabilityDocument({
    atof: { enabled: true, sinks: [{ type: 'file', output_directory: dir, filename: 'e.jsonl', mode: 'overwrite' }, ...extraSinks] },
    atif: { enabled: true, output_directory: dir, filename_template: 't-{session_id}.json', storage },
  });

describe('memory plugin host: destinations with configuration errors', () => {
  it('skips them with warnings, activates the file sink and ATIF, and lists only the valid destinations', async () => {
    const dir = tempDir('bad-destinations');
    const relay = createMemoryRelay({ logger: silentLogger });
    const activation = await relay.initializePluginConfig(
      <JsonObject>doc(
        dir,
        [
          { type: 'stream', url: 'http://127.0.0.1:9/a', header_env: { authorization: 'NRH_REMOTE_TEST_NEVER_SET' } },
          { type: 'stream', url: 'ftp://nope', transport: 'http_post' },
          { type: 'stream', url: 'http://127.0.0.1:9/ok', transport: 'ndjson' },
        ],
        [{ type: 's3', bucket: '' }, { type: 'http', endpoint: 'http://127.0.0.1:9/atif' }],
      ),
    );
    expect(new Set(activation.report.diagnostics.map((d) => d.field))).toEqual(new Set(['sinks[1].header_env.authorization', 'sinks[2].url', 'storage[0].bucket']));
    expect(activation.report.diagnostics.every((d) => d.level === 'warning' && d.message.includes('this destination is skipped and the rest of the document activates'))).toBe(true);
    // An unset variable is named, with the fix.
    expect(activation.report.diagnostics.find((d) => d.field === 'sinks[1].header_env.authorization')?.message).toMatch(
      /skipped and the rest of the document activates; fix: set NRH_REMOTE_TEST_NEVER_SET in the host's environment before it starts$/,
    );
    expect(relay.outputs!().map((o) => [o.kind, o.path])).toEqual([
      ['atof', path.join(dir, 'e.jsonl')],
      ['atif', dir],
      ['atof-stream', 'http://127.0.0.1:9/ok'],
      ['atif-storage', 'http://127.0.0.1:9/atif'],
    ]);
    await activation.close();
    expect(fs.existsSync(path.join(dir, 'e.jsonl'))).toBe(true);
  });

  it('still rejects a document whose error is not about one destination', async () => {
    const relay = createMemoryRelay({ logger: silentLogger });
    const bad = doc(tempDir('bad-doc'), [{ type: 'stream', url: 'http://x', header_env: { a: 'NRH_REMOTE_TEST_NEVER_SET' } }], []);
    (bad.components[0]!.config.atof.sinks[0] as Record<string, unknown>).mode = 'sideways';
    await expect(relay.initializePluginConfig(<JsonObject>bad)).rejects.toBeInstanceOf(InvalidPluginConfigError);
  });
});
