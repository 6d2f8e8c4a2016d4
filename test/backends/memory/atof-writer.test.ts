// The memory relay's ATOF JSONL file output: modes, folders, buffering,
// whole lines under write failures, health, and flushing at process exit.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryRelay } from '../../../src/backends/memory/index.ts';
import { AtofFileWriter, defaultAtofFilename, type WriterFs } from '../../../src/backends/memory/atof-batcher.ts';
import { parseAtofJsonl, validateAtofEvents } from '../../../src/formats/atof/validate.ts';
import { silentLogger } from '../../../src/shared/logger.ts';
import { makeDirectory } from '../../../src/shared/directory.ts';

const dirs: string[] = [];
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nrh-atof-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function readEvents(file: string) {
  const text = fs.readFileSync(file, 'utf8');
  const parsed = parseAtofJsonl(text);
  expect(parsed.errors).toEqual([]);
  expect(validateAtofEvents(parsed.events)).toEqual([]);
  return { text, events: parsed.events as { name: string }[] };
}

function emitSession(relay: ReturnType<typeof createMemoryRelay>, name: string) {
  const scope = relay.pushScope({ name, category: 'agent', metadata: { session_id: name } });
  relay.mark({ name: `${name}.mark`, parent: scope, data: { n: 1 } });
  relay.popScope(scope);
}

describe('memory relay ATOF exporter', () => {
  it('creates missing folders and writes one JSON object per line', async () => {
    const dir = path.join(tempDir(), 'a', 'b', 'c');
    const relay = createMemoryRelay({ logger: silentLogger });
    const exporter = relay.registerAtofExporter({ outputDirectory: dir, filename: 'events.jsonl', mode: 'append' });
    expect(exporter.path).toBe(path.join(dir, 'events.jsonl'));
    expect(fs.existsSync(exporter.path)).toBe(true);
    emitSession(relay, 's1');
    await exporter.close();
    const { text, events } = readEvents(exporter.path);
    expect(events.map((e) => e.name)).toEqual(['s1', 's1.mark', 's1']);
    expect(text.endsWith('\n')).toBe(true);
  });

  it('appends to an existing file in append mode and truncates it at registration in overwrite mode', async () => {
    const dir = tempDir();
    const relay = createMemoryRelay({ logger: silentLogger });
    const first = relay.registerAtofExporter({ outputDirectory: dir, filename: 'e.jsonl', mode: 'append' });
    emitSession(relay, 'first');
    await first.close();
    const second = relay.registerAtofExporter({ outputDirectory: dir, filename: 'e.jsonl', mode: 'append' });
    emitSession(relay, 'second');
    await second.close();
    expect(readEvents(first.path).events).toHaveLength(6);

    const third = relay.registerAtofExporter({ outputDirectory: dir, filename: 'e.jsonl', mode: 'overwrite' });
    // Truncated now, before any event: like native's exporter constructor.
    expect(fs.readFileSync(third.path, 'utf8')).toBe('');
    emitSession(relay, 'third');
    await third.close();
    expect(readEvents(third.path).events.map((e) => e.name)).toEqual(['third', 'third.mark', 'third']);
  });

  it('buffers lines until flush, then writes them; flush and close can be repeated', async () => {
    const dir = tempDir();
    const relay = createMemoryRelay({ logger: silentLogger });
    const exporter = relay.registerAtofExporter({ outputDirectory: dir, filename: 'e.jsonl', mode: 'overwrite' });
    emitSession(relay, 's');
    expect(fs.readFileSync(exporter.path, 'utf8')).toBe('');
    await relay.flush();
    expect(readEvents(exporter.path).events).toHaveLength(3);
    await exporter.flush();
    await exporter.close();
    await exporter.close();
    emitSession(relay, 'after-close');
    expect(readEvents(exporter.path).events).toHaveLength(3);
  });

  it('writes without an explicit flush once the buffer passes its threshold', () => {
    const dir = tempDir();
    const writer = new AtofFileWriter({ path: path.join(dir, 'e.jsonl'), mode: 'overwrite', logger: silentLogger, highWaterChars: 100, flushDelayMs: 0 });
    writer.append(`${'x'.repeat(60)}\n`);
    expect(fs.readFileSync(writer.path, 'utf8')).toBe('');
    writer.append(`${'y'.repeat(60)}\n`);
    expect(fs.readFileSync(writer.path, 'utf8')).toBe(`${'x'.repeat(60)}\n${'y'.repeat(60)}\n`);
    writer.close();
  });

  it('keeps line order and UTF-8 text across the threshold, with a line larger than the whole buffer among them', () => {
    const dir = tempDir();
    const writer = new AtofFileWriter({ path: path.join(dir, 'e.jsonl'), mode: 'overwrite', logger: silentLogger, highWaterChars: 100, flushDelayMs: 0 });
    const lines = [
      `${'é'.repeat(40)}\n`,
      `${'漢'.repeat(30)}😀\n`,
      `${'€'.repeat(30_000)}\n`, // up to 90,000 bytes: more than the staging buffer holds
      'a\n',
      `${'😀'.repeat(50)}\n`,
    ];
    for (const line of lines) writer.append(line);
    writer.flushSync();
    expect(fs.readFileSync(writer.path, 'utf8')).toBe(lines.join(''));
    expect(writer.health().bytes).toBe(Buffer.byteLength(lines.join('')));
    writer.close();
  });

  it('takes a line written straight into its buffer, and leaves nothing of a dropped one', () => {
    const dir = tempDir();
    const writer = new AtofFileWriter({ path: path.join(dir, 'e.jsonl'), mode: 'overwrite', logger: silentLogger, flushDelayMs: 0 });
    const write = (text: string, keep: boolean) => {
      const out = writer.beginLine()!;
      expect(writer.beginLine()).toBeNull(); // one line at a time
      out.utf8(text);
      writer.endLine(keep);
    };
    write('{"n":1}\n', true);
    write('{"partial":', false);
    write('{"n":2}\n', true);
    writer.flushSync();
    expect(fs.readFileSync(writer.path, 'utf8')).toBe('{"n":1}\n{"n":2}\n');
    writer.close();
    expect(writer.beginLine()).toBeNull();
  });

  it('writes only whole lines when flushed while a line is open, and puts lines appended meanwhile before it', () => {
    const dir = tempDir();
    const writer = new AtofFileWriter({ path: path.join(dir, 'e.jsonl'), mode: 'overwrite', logger: silentLogger, flushDelayMs: 0 });
    writer.append('{"n":1}\n');
    const out = writer.beginLine()!;
    out.utf8('{"open":');
    expect(writer.flushSync()).toBe(true);
    expect(fs.readFileSync(writer.path, 'utf8')).toBe('{"n":1}\n');
    writer.append('{"nested":1}\n'); // emitted while the open line was written
    writer.appendBytes(new TextEncoder().encode('{"nested":2}\n'), 13);
    out.utf8('true}\n');
    writer.endLine(true);
    writer.close();
    expect(fs.readFileSync(writer.path, 'utf8')).toBe('{"n":1}\n{"nested":1}\n{"nested":2}\n{"open":true}\n');
  });

  it('shares one serialization between several exporters and reports each in outputs()', async () => {
    const dir = tempDir();
    const relay = createMemoryRelay({ logger: silentLogger });
    const a = relay.registerAtofExporter({ outputDirectory: dir, filename: 'a.jsonl', mode: 'overwrite' });
    const b = relay.registerAtofExporter({ outputDirectory: dir, filename: 'b.jsonl', mode: 'overwrite' });
    emitSession(relay, 's');
    await relay.flush();
    expect(fs.readFileSync(a.path, 'utf8')).toBe(fs.readFileSync(b.path, 'utf8'));
    const outputs = relay.outputs();
    expect(outputs.map((o) => o.path)).toEqual([a.path, b.path]);
    for (const output of outputs) {
      expect(output).toMatchObject({ kind: 'atof', errors: 0, bytes: fs.statSync(output.path).size });
      expect(Date.parse(output.lastWrite!)).not.toBeNaN();
    }
    await relay.shutdown();
    expect(relay.outputs()).toEqual([]);
  });

  it('uses native default file name pattern, in UTC', () => {
    expect(defaultAtofFilename(new Date('2026-11-29T15:37:46.123Z'))).toBe('nemo-relay-events-2026-11-29-15.37.46.jsonl');
  });
});

/** A file system whose writes can be made to fail part-way. */
function flakyFs(plan: { okWrites?: number; failWrites: number; partialBytes: number; failTruncate?: boolean }): WriterFs & { writes: number } {
  const real = fs as unknown as WriterFs;
  const flaky = {
    writes: 0,
    makeDirectory,
    openSync: real.openSync,
    fstatSync: real.fstatSync,
    closeSync: real.closeSync,
    ftruncateSync(fd: number, length: number) {
      // Truncating to zero at open still works; rolling back a torn write does not.
      if (plan.failTruncate && length > 0) throw new Error('EIO: truncate failed');
      real.ftruncateSync(fd, length);
    },
    writeSync(fd: number, buffer: Uint8Array, offset: number, length: number) {
      flaky.writes++;
      if (plan.okWrites !== undefined && plan.okWrites > 0) {
        plan.okWrites--;
        return real.writeSync(fd, buffer, offset, length);
      }
      if (plan.failWrites > 0) {
        // A torn write: a short write lands some bytes, then the next write fails.
        if (plan.partialBytes > 0) {
          const n = real.writeSync(fd, buffer, offset, Math.min(plan.partialBytes, length));
          plan.partialBytes = 0;
          return n;
        }
        plan.failWrites--;
        throw new Error('ENOSPC: no space left on device');
      }
      return real.writeSync(fd, buffer, offset, length);
    },
  };
  return flaky;
}

describe('ATOF file writer under write failures', () => {
  const line = (n: number) => `${JSON.stringify({ atof_version: '0.1', kind: 'mark', n })}\n`;

  it('rolls a torn write back to the last whole line and writes everything on the next flush', () => {
    const dir = tempDir();
    const file = path.join(dir, 'e.jsonl');
    const fsImpl = flakyFs({ okWrites: 1, failWrites: 1, partialBytes: 7 });
    const writer = new AtofFileWriter({ path: file, mode: 'overwrite', logger: silentLogger, fs: fsImpl, flushDelayMs: 0 });
    writer.append(line(1));
    expect(writer.flushSync()).toBe(true);
    writer.append(line(2));
    writer.append(line(3));
    expect(writer.flushSync()).toBe(false);
    // Nothing of the failed chunk is left behind: still one whole line.
    expect(fs.readFileSync(file, 'utf8')).toBe(line(1));
    expect(writer.health()).toMatchObject({ errors: 1, lastError: 'ENOSPC: no space left on device' });
    expect(writer.flushSync()).toBe(true);
    expect(fs.readFileSync(file, 'utf8')).toBe(line(1) + line(2) + line(3));
    writer.close();
    expect(writer.droppedLines).toBe(0);
  });

  it('keeps taking lines while writes fail and writes them all, in order, once the disk recovers', () => {
    const dir = tempDir();
    const file = path.join(dir, 'e.jsonl');
    const writer = new AtofFileWriter({
      path: file,
      mode: 'overwrite',
      logger: silentLogger,
      fs: flakyFs({ failWrites: 3, partialBytes: 0 }),
      highWaterChars: 64,
      flushDelayMs: 0,
    });
    const expected: string[] = [];
    for (let i = 0; i < 12; i++) {
      expected.push(line(i));
      writer.append(line(i)); // every other line passes the threshold and tries a write: three fail
      if (i === 5) expect(fs.readFileSync(file, 'utf8')).toBe('');
    }
    expect(writer.flushSync()).toBe(true);
    expect(fs.readFileSync(file, 'utf8')).toBe(expected.join(''));
    expect(writer.health().errors).toBe(3);
    writer.close();
    expect(writer.droppedLines).toBe(0);
  });

  it('keeps an open line intact when a write fails under it', () => {
    const dir = tempDir();
    const file = path.join(dir, 'e.jsonl');
    const writer = new AtofFileWriter({ path: file, mode: 'overwrite', logger: silentLogger, fs: flakyFs({ failWrites: 1, partialBytes: 0 }), flushDelayMs: 0 });
    writer.append(line(1));
    const out = writer.beginLine()!;
    out.utf8('{"open":');
    expect(writer.flushSync()).toBe(false);
    out.utf8('1}\n');
    writer.endLine(true);
    expect(writer.flushSync()).toBe(true);
    expect(fs.readFileSync(file, 'utf8')).toBe(`${line(1)}{"open":1}\n`);
    writer.close();
  });

  it('completes a torn line first when the file cannot be truncated', () => {
    const dir = tempDir();
    const file = path.join(dir, 'e.jsonl');
    const writer = new AtofFileWriter({
      path: file,
      mode: 'overwrite',
      logger: silentLogger,
      fs: flakyFs({ failWrites: 1, partialBytes: 5, failTruncate: true }),
      flushDelayMs: 0,
    });
    writer.append(line(1));
    writer.append(line(2));
    expect(writer.flushSync()).toBe(false);
    writer.append(line(3));
    expect(writer.flushSync()).toBe(true);
    expect(fs.readFileSync(file, 'utf8')).toBe(line(1) + line(2) + line(3));
    writer.close();
  });

  it('keeps lines while the file cannot be opened, retries, and counts what it must give up as dropped', () => {
    const dir = tempDir();
    const blocker = path.join(dir, 'not-a-dir');
    fs.writeFileSync(blocker, 'x');
    const file = path.join(blocker, 'e.jsonl');
    const writer = new AtofFileWriter({ path: file, mode: 'append', logger: silentLogger, flushDelayMs: 0, maxBufferedChars: 100 });
    expect(writer.health().errors).toBe(1);
    writer.append(line(1));
    expect(writer.flushSync()).toBe(false);
    fs.rmSync(blocker);
    expect(writer.flushSync()).toBe(true);
    expect(fs.readFileSync(file, 'utf8')).toBe(line(1));
    fs.rmSync(file);
    fs.rmdirSync(blocker);
    fs.writeFileSync(blocker, 'x'); // the open fd still works: writes go to the unlinked file

    const stuck = new AtofFileWriter({ path: path.join(blocker, 'f.jsonl'), mode: 'append', logger: silentLogger, flushDelayMs: 0, maxBufferedChars: 100 });
    for (let i = 0; i < 5; i++) stuck.append(line(i));
    expect(stuck.flushSync()).toBe(false);
    expect(stuck.droppedLines).toBe(5);
    stuck.append(line(6));
    stuck.close();
    expect(stuck.droppedLines).toBe(6);
    stuck.append(line(7));
    expect(stuck.droppedLines).toBe(7);
    writer.close();
  });

  // An operator's trial: a folder at the file's path gave `EISDIR: illegal operation on a
  // directory`, which names the fault and not what to do about it.
  it('says what to do about the failure it warns of, and keeps the system\'s own message in health()', () => {
    const dir = tempDir();
    const file = path.join(dir, 'e.jsonl');
    fs.mkdirSync(file);
    const warnings: string[] = [];
    const logger = { ...silentLogger, warn: (message: string) => void warnings.push(message) };
    const writer = new AtofFileWriter({ path: file, mode: 'append', logger, flushDelayMs: 0 });
    writer.append(line(1));
    expect(writer.flushSync()).toBe(false);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^ATOF file .*e\.jsonl: EISDIR: .* \(a folder stands at the file's path: remove it or choose another file name\)$/);
    expect(writer.health().lastError).toMatch(/^EISDIR: [^(]*$/);
    fs.rmdirSync(file);
    expect(writer.flushSync()).toBe(true);
    expect(fs.readFileSync(file, 'utf8')).toBe(line(1));
    writer.close();
  });

  it('never throws to the caller when the output folder cannot be created', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'file'), 'x');
    const relay = createMemoryRelay({ logger: silentLogger });
    const exporter = relay.registerAtofExporter({ outputDirectory: path.join(dir, 'file', 'sub'), filename: 'e.jsonl', mode: 'append' });
    emitSession(relay, 's');
    await expect(relay.flush()).resolves.toBeUndefined();
    expect(relay.outputs()[0]).toMatchObject({ kind: 'atof', bytes: 0, lastWrite: null });
    expect(relay.outputs()[0]!.errors).toBeGreaterThan(0);
    await exporter.close();
    expect(relay.stats().dropped).toBe(3);
  });
});

const here = path.dirname(fileURLToPath(import.meta.url));
const bun = path.resolve(here, '../../../node_modules/.bin/bun');
const bunAvailable = fs.existsSync(bun) && spawnSync(bun, ['--version']).status === 0;
if (!bunAvailable) console.warn('[atof-writer exit tests] skipped: node_modules/.bin/bun is not available to run a TypeScript child process');

describe.skipIf(!bunAvailable)('ATOF file writer at process exit', () => {
  for (const ending of ['natural end', 'process.exit(0)']) {
    it(`writes every buffered line at ${ending} without an explicit flush`, () => {
      const dir = tempDir();
      const script = path.join(dir, 'child.ts');
      const entry = path.resolve(here, '../../../src/backends/memory/index.ts');
      fs.writeFileSync(
        script,
        `import { createMemoryRelay } from ${JSON.stringify(entry)};
const relay = createMemoryRelay();
relay.registerAtofExporter({ outputDirectory: ${JSON.stringify(dir)}, filename: 'exit.jsonl', mode: 'overwrite' });
for (let i = 0; i < 1000; i++) relay.mark({ name: 'm' + i, data: { i } });
${ending === 'natural end' ? '' : 'process.exit(0);'}
`,
      );
      const result = spawnSync(bun, [script], { encoding: 'utf8' });
      expect(result.status, result.stderr).toBe(0);
      const { events } = readEvents(path.join(dir, 'exit.jsonl'));
      expect(events).toHaveLength(1000);
    });
  }
});

const hasProc = fs.existsSync('/proc/self');
if (!hasProc) console.warn('[atof-writer folder tests] /proc case skipped: no /proc on this system');

describe('ATOF file writer creating its folder', () => {
  it('creates the folder through the injected file system', () => {
    const made: string[] = [];
    const file = path.join(tempDir(), 'a', 'b', 'e.jsonl');
    const writer = new AtofFileWriter({
      path: file,
      mode: 'append',
      logger: silentLogger,
      fs: { ...flakyFs({ failWrites: 0, partialBytes: 0 }), makeDirectory: (folder) => { made.push(folder); makeDirectory(folder); } },
      flushDelayMs: 0,
    });
    writer.append('{"n":1}\n');
    expect(writer.flushSync()).toBe(true);
    writer.close();
    expect(made).toEqual([path.dirname(file)]);
    expect(fs.readFileSync(file, 'utf8')).toBe('{"n":1}\n');
  });

  // Node's own recursive mkdir is the one that spins (Bun's does not), so the child is Node on the built
  // entry (the suite's global setup builds dist/); a time limit turns a spinning thread into a failure.
  it.skipIf(!hasProc)('fails, counted, on a folder under /proc instead of spinning the thread', () => {
    const dir = tempDir();
    const script = path.join(dir, 'child.mjs');
    const entry = path.resolve(here, '../../../dist/src/backends/memory/index.js');
    fs.writeFileSync(
      script,
      `import { createMemoryRelay } from ${JSON.stringify(pathToFileURL(entry).href)};
const relay = createMemoryRelay({ logger: { info() {}, warn() {}, error() {} } });
relay.registerAtofExporter({ outputDirectory: '/proc/nrh-does-not-exist/atof', filename: 'e.jsonl', mode: 'append' });
relay.mark({ name: 'm', data: {} });
await relay.flush();
const [output] = relay.outputs();
console.log(JSON.stringify({ errors: output.errors, lastError: output.lastError }));
`,
    );
    const result = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 30_000 });
    expect(result.signal, 'the child was stopped at its time limit: the folder creation spun').toBeNull();
    expect(result.status, result.stderr).toBe(0);
    const out = JSON.parse(result.stdout.trim()) as { errors: number; lastError: string };
    expect(out.errors).toBeGreaterThan(0);
    expect(out.lastError).toMatch(/ENOENT|EACCES|EPERM|EROFS/);
  });
});

describe('ATOF file writer on a shared, damaged or vanishing file', () => {
  const line = (n: number) => `${JSON.stringify({ atof_version: '0.1', kind: 'mark', name: `m${n}`, n })}\n`;

  it('never truncates a shared append-mode file: lines another process appended survive a torn write', () => {
    const dir = tempDir();
    const file = path.join(dir, 'shared.jsonl');
    const writer = new AtofFileWriter({
      path: file,
      mode: 'append',
      logger: silentLogger,
      fs: flakyFs({ okWrites: 1, failWrites: 1, partialBytes: 9 }),
      flushDelayMs: 0,
    });
    writer.append(line(1));
    expect(writer.flushSync()).toBe(true);
    // Another process appends two whole lines to the same file.
    fs.appendFileSync(file, line(100) + line(101));
    writer.append(line(2));
    writer.append(line(3));
    expect(writer.flushSync()).toBe(false);
    expect(writer.flushSync()).toBe(true);
    writer.close();
    const text = fs.readFileSync(file, 'utf8');
    const lines = text.split('\n').filter((l) => l !== '');
    // Every line of both writers is there whole; the torn fragment is a line of its own.
    for (const n of [1, 100, 101, 2, 3]) expect(lines).toContain(line(n).trimEnd());
    expect(lines).toHaveLength(6);
    expect(text.endsWith('\n')).toBe(true);
    expect(writer.health().tornLines).toBe(1);
    expect(writer.droppedLines).toBe(0);
  });

  it('does not take a line another process is still writing for a torn one', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'busy.jsonl');
    // Two processes append 200 KB of whole lines to the file every 2 ms or so, as hosts flushing their batches do:
    // each write() spans many pages, and until its last page is in, the file's last byte is inside a line.
    const child = path.join(dir, 'appender.mjs');
    fs.writeFileSync(
      child,
      `import fs from 'node:fs';
const fd = fs.openSync(process.argv[2], 'a');
const chunk = Buffer.from((JSON.stringify({ atof_version: '0.1', kind: 'mark', name: 'other', pad: 'x'.repeat(900) }) + '\\n').repeat(200));
const end = Date.now() + 1500;
const write = () => {
  if (Date.now() > end) return;
  fs.writeSync(fd, chunk);
  setTimeout(write, 2);
};
write();
`,
    );
    const ran = [1, 2].map(
      () =>
        new Promise<number | null>((resolve) => {
          const proc = spawn(process.execPath, [...(typeof (globalThis as { Deno?: unknown }).Deno !== 'undefined' ? ['run', '-A'] : []), child, file], { stdio: 'ignore' });
          proc.on('exit', (code) => resolve(code));
        }),
    );
    const writer = new AtofFileWriter({ path: file, mode: 'append', logger: silentLogger, flushDelayMs: 0 });
    let n = 0;
    const end = Date.now() + 1000;
    while (Date.now() < end) {
      writer.append(line(n++));
      writer.flushSync();
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    writer.close();
    expect(await Promise.all(ran)).toEqual([0, 0]);
    expect(writer.health().tornLines, "torn lines counted").toBeUndefined();
    // Every line in the file is whole: the writer's own, each once, and the other processes'.
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    expect(lines.pop()).toBe('');
    const mine = lines.map((text) => JSON.parse(text) as { name: string; n?: number }).filter((event) => event.name !== 'other');
    expect(mine.map((event) => event.n)).toEqual(Array.from({ length: n }, (_, i) => i));
  });

  it('ends a torn last line left by an earlier run before its first line, and reports it', () => {
    const dir = tempDir();
    const file = path.join(dir, 'torn.jsonl');
    fs.writeFileSync(file, `${line(1)}{"atof_version":"0.1","kind":"ma`);
    const writer = new AtofFileWriter({ path: file, mode: 'append', logger: silentLogger, flushDelayMs: 0 });
    writer.append(line(2));
    writer.close();
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    expect(lines).toEqual([line(1).trimEnd(), '{"atof_version":"0.1","kind":"ma', line(2).trimEnd(), '']);
    expect(writer.health().tornLines).toBe(1);
  });

  it('reopens a file deleted while open, so later lines reach the file readers see, and counts it', () => {
    const dir = tempDir();
    const file = path.join(dir, 'deleted.jsonl');
    const writer = new AtofFileWriter({ path: file, mode: 'append', logger: silentLogger, flushDelayMs: 0 });
    writer.append(line(1));
    writer.flushSync();
    fs.rmSync(file);
    writer.append(line(2));
    expect(writer.flushSync()).toBe(true);
    expect(fs.readFileSync(file, 'utf8')).toBe(line(2));
    expect(writer.health()).toMatchObject({ reopens: 1 });
    expect(writer.health().lastError).toMatch(/deleted while open/);
    writer.close();
  });

  it('reopens a file replaced by a rename while open', () => {
    const dir = tempDir();
    const file = path.join(dir, 'replaced.jsonl');
    const writer = new AtofFileWriter({ path: file, mode: 'append', logger: silentLogger, flushDelayMs: 0 });
    writer.append(line(1));
    writer.flushSync();
    fs.renameSync(file, path.join(dir, 'rotated.jsonl'));
    fs.writeFileSync(file, '');
    writer.append(line(2));
    writer.flushSync();
    writer.close();
    expect(fs.readFileSync(file, 'utf8')).toBe(line(2));
    expect(fs.readFileSync(path.join(dir, 'rotated.jsonl'), 'utf8')).toBe(line(1));
    expect(writer.health().reopens).toBe(1);
  });

  for (const mode of ['append', 'overwrite'] as const) {
    it(`does not follow a symlink planted at the file (${mode}): the link's target is untouched and the failure reported`, async () => {
      const dir = tempDir();
      const outside = path.join(tempDir(), 'victim.txt');
      fs.writeFileSync(outside, 'precious\n');
      fs.symlinkSync(outside, path.join(dir, 'hermes-atof.jsonl'));
      const relay = createMemoryRelay({ logger: silentLogger });
      relay.registerAtofExporter({ outputDirectory: dir, filename: 'hermes-atof.jsonl', mode });
      emitSession(relay, 's');
      await relay.flush();
      expect(fs.readFileSync(outside, 'utf8')).toBe('precious\n');
      expect(relay.outputs()[0]!.lastError).toMatch(/symbolic link/);
      await relay.shutdown();
    });
  }
});
