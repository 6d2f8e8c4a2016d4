// A payload whose size is out of proportion to its memory (a sparse array
// with a length of four billion) must not kill the host on either backend.
// Before the bound, toJson walked every index and the process died of heap
// exhaustion (exit 134), so each case runs in a child process.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { dist, runChild } from '../support/child.ts';
import { available } from '../native/support.ts';

const backends = [
  { name: 'memory', load: `import { createMemoryRelay } from ${dist('src/backends/memory/index.js')}; const relay = createMemoryRelay();` },
  { name: 'native', load: `import { loadNativeRelay } from ${dist('native/index.js')}; const relay = loadNativeRelay();` },
];

describe('payloads bounded in size on every backend', () => {
  for (const backend of backends) {
    const skip = backend.name === 'native' && !available;
    it.skipIf(skip)(`${backend.name}: records a mark whose payload holds a[2**32-2] = 1, cut to a bounded array`, () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nrh-sparse-'));
      const result = runChild(`
        ${backend.load}
        relay.registerAtofExporter({ outputDirectory: ${JSON.stringify(dir)}, filename: 'events.jsonl', mode: 'overwrite' });
        const a = []; a[2 ** 32 - 2] = 1;
        relay.mark({ name: 'sparse', data: { a } });
        await relay.shutdown();
      `);
      expect(result.signal, result.stderr).toBeNull();
      expect(result.status, result.stderr).toBe(0);
      const lines = fs.readFileSync(path.join(dir, 'events.jsonl'), 'utf8').trim().split('\n');
      const mark = lines.map((line) => JSON.parse(line) as { name: string; data: { a: unknown[] } }).find((e) => e.name === 'sparse');
      expect(mark?.data.a.at(-1)).toMatch(/^\[Truncated: \d+ more items\]$/);
    });
  }
  if (!available) console.warn('[bounded payloads] native case skipped: nemo-relay-node cannot load here');
});
