// Native's ATOF file sink fails silently on a full disk: it loses lines,
// and after one failed write it never writes again. The adapter compares
// what it sent with what reached the file, counts the difference as
// dropped, and replaces the exporter so writing resumes once space returns.
// A 64 KiB tmpfs in a private mount namespace (unshare -m) is the full disk.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { dist, runChild } from '../support/child.ts';
import { available } from './support.ts';

function tmpfsWhy(): string | null {
  const probe = spawnSync('unshare', ['-m', 'sh', '-c', 'mount -t tmpfs -o size=64k tmpfs /mnt'], { encoding: 'utf8' });
  if (probe.error) return `unshare is not available (${probe.error.message})`;
  if (probe.status !== 0) return `cannot mount a tmpfs in a private mount namespace (${probe.stderr.trim()})`;
  return null;
}
const why = available ? tmpfsWhy() : 'nemo-relay-node cannot load here';
if (why !== null) console.warn(`[native disk faults] skipped: ${why}`);

describe.skipIf(why !== null)('native ATOF sink on a full disk', () => {
  it('counts events that did not reach the file as dropped, reports them in outputs, and writes again once space returns', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nrh-full-'));
    const result = runChild(
      `
      import fs from 'node:fs';
      const { loadNativeRelay } = await import(${dist('native/index.js')});
      const dir = ${JSON.stringify(dir)};
      const relay = loadNativeRelay();
      relay.registerAtofExporter({ outputDirectory: dir, filename: 'events.jsonl', mode: 'overwrite' });
      // Fill the disk, then emit: native's writes fail.
      try { fs.writeFileSync(dir + '/filler', Buffer.alloc(1024 * 1024)); } catch {}
      for (let i = 0; i < 200; i++) relay.mark({ name: 'lost-' + i, data: { pad: 'x'.repeat(200) } });
      await relay.flush();
      const duringFault = { dropped: relay.stats().dropped, output: relay.outputs()[0] };
      fs.rmSync(dir + '/filler');
      await new Promise((resolve) => setTimeout(resolve, 300)); // past the first retry delay
      await relay.flush();
      for (let i = 0; i < 50; i++) relay.mark({ name: 'after-' + i });
      await relay.shutdown();
      const names = fs.readFileSync(dir + '/events.jsonl', 'utf8').split('\\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l).name);
      console.log('@@' + JSON.stringify({ duringFault, dropped: relay.stats().dropped, after: names.filter((n) => n.startsWith('after-')).length, lost: names.filter((n) => n.startsWith('lost-')).length }));
    `,
      { launcher: ['unshare', '-m'], shellPrefix: `mount -t tmpfs -o size=64k tmpfs '${dir}' &&` },
    );
    expect(result.status, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout.split('@@')[1]!) as {
      duringFault: { dropped: number; output: { dropped?: number; lastError?: string; errors: number } };
      dropped: number;
      after: number;
      lost: number;
    };
    // The tmpfs is gone with the namespace; the counts say what happened in it.
    expect(report.duringFault.dropped).toBeGreaterThan(0);
    expect(report.duringFault.output.dropped).toBe(report.duringFault.dropped);
    expect(report.duringFault.output.lastError).toMatch(/did not reach/);
    // Writing resumed: every event after the fault is in the file, and the count is exact.
    expect(report.after).toBe(50);
    expect(report.dropped).toBe(200 - report.lost);
  });
});

describe.skipIf(!available)('native ATOF sink that cannot be created', () => {
  it('does not throw for a file where the folder should be: it is listed with the error, counts what it loses, and starts once the path works', async () => {
    const { loadNativeRelay } = await import('../../native/index.ts');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nrh-notdir-'));
    const blocker = path.join(dir, 'out');
    fs.writeFileSync(blocker, 'x');
    const relay = loadNativeRelay();
    const sink = relay.registerAtofExporter({ outputDirectory: blocker, filename: 'events.jsonl', mode: 'append' });
    for (let i = 0; i < 5; i++) relay.mark({ name: `lost-${i}` });
    await relay.flush();
    const output = relay.outputs().find((o) => o.path === sink.path);
    expect(output).toMatchObject({ kind: 'atof', dropped: 5 });
    expect(output!.lastError).toMatch(/cannot create the ATOF file|did not reach/);
    expect(relay.stats().dropped).toBe(5);
    fs.rmSync(blocker);
    fs.mkdirSync(blocker);
    await new Promise((resolve) => setTimeout(resolve, 250)); // past the first retry delay
    await relay.flush();
    relay.mark({ name: 'kept' });
    await relay.shutdown();
    const names = fs.readFileSync(path.join(blocker, 'events.jsonl'), 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { name: string }).name);
    expect(names).toEqual(['kept']);
    expect(relay.stats().dropped).toBe(5);
  });
});
