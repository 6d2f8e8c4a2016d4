import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type FileClaim, TrajectoryFiles, type TrajectoryFilesOptions } from '../../src/backends/trajectory-files.ts';
import { tempDir } from '../contract/backends.ts';

afterEach(() => {
  vi.useRealTimers();
});

function writer(options: Partial<TrajectoryFilesOptions> = {}) {
  const reported: string[] = [];
  const files = new TrajectoryFiles<string>({
    onError: (message) => reported.push(message),
    retry: { initialDelayMs: 200, maxDelayMs: 5000, maxRetries: Number.POSITIVE_INFINITY },
    maxListedFiles: 1000,
    ...options,
  });
  return { files, reported };
}

/** A folder that cannot be written into yet: a plain file stands at its path (ENOTDIR, as a full disk fails a write). */
function blockedFolder(): { dir: string; unblock(): void } {
  const dir = path.join(tempDir('trajectory-files'), 'atif');
  fs.writeFileSync(dir, 'in the way');
  return {
    dir,
    unblock() {
      fs.rmSync(dir);
      fs.mkdirSync(dir);
    },
  };
}

/** Waits for the thread pool's callbacks (fake timers leave setImmediate real). */
async function settle(files: TrajectoryFiles<string>): Promise<void> {
  await files.idle();
}

describe('TrajectoryFiles', () => {
  it('writes the whole text, leaves no temporary file, and lists what it wrote per file and in total', async () => {
    const dir = tempDir('trajectory-files');
    const { files } = writer();
    const a = files.write('s1', { path: path.join(dir, 'a.json'), text: '{"a":1}' });
    const b = files.write('s2', { path: path.join(dir, 'sub', 'b.json'), text: '{"b":"é"}' });
    expect(await a).toBe(true);
    expect(await b).toBe(true);
    expect(fs.readFileSync(path.join(dir, 'a.json'), 'utf8')).toBe('{"a":1}');
    expect(fs.readFileSync(path.join(dir, 'sub', 'b.json'), 'utf8')).toBe('{"b":"é"}');
    expect(fs.readdirSync(dir).sort()).toEqual(['a.json', 'sub']);
    expect(fs.readdirSync(path.join(dir, 'sub'))).toEqual(['b.json']);
    const listed = files.files();
    expect(listed.map((h) => [path.basename(h.path), h.bytes, h.errors])).toEqual([
      ['a.json', 7, 0],
      ['b.json', 10, 0],
    ]);
    expect(listed.every((h) => h.kind === 'atif' && typeof h.lastWrite === 'string')).toBe(true);
    expect(files.summary(dir)).toMatchObject({ kind: 'atif', path: dir, bytes: 17, errors: 0 });
    expect(files.summary(dir).dropped).toBeUndefined();
    if (process.platform !== 'win32') expect(fs.statSync(path.join(dir, 'a.json')).mode & 0o777).toBe(0o600);
  });

  it('returns before the file is written: the system calls run in the thread pool', async () => {
    const dir = tempDir('trajectory-files');
    const { files } = writer();
    const target = path.join(dir, 'a.json');
    const landed = files.write('s1', { path: target, text: 'x' });
    expect(fs.existsSync(target)).toBe(false);
    expect(await landed).toBe(true);
    expect(fs.readFileSync(target, 'utf8')).toBe('x');
  });

  it('writes the oldest waiting texts on the host thread past the waiting limit, and all of them land', async () => {
    const dir = tempDir('trajectory-files');
    const { files } = writer({ waitingLimit: 10 });
    const written = Array.from({ length: 70 }, (_, i) => files.write(`s${i}`, { path: path.join(dir, `${i}.json`), text: `[${String(i).padStart(3, '0')}]` }));
    // 64 writes run in the pool; of the six 5-character texts waiting, the four oldest were written before write() returned.
    const onDisk = (i: number) => fs.existsSync(path.join(dir, `${i}.json`));
    expect(Array.from({ length: 70 }, (_, i) => i).filter(onDisk)).toEqual([64, 65, 66, 67]);
    expect(await Promise.all(written)).toEqual(Array.from({ length: 70 }, () => true));
    for (let i = 0; i < 70; i++) expect(fs.readFileSync(path.join(dir, `${i}.json`), 'utf8')).toBe(`[${String(i).padStart(3, '0')}]`);
    expect(files.summary(dir)).toMatchObject({ bytes: 350, errors: 0 });
  });

  it('keeps a newer text of a trajectory whose write is running waiting even past the limit, so it lands last', async () => {
    const dir = tempDir('trajectory-files');
    const { files } = writer({ waitingLimit: 0 });
    const target = path.join(dir, 't.json');
    const first = files.write('t', { path: target, text: '"old"' });
    const second = files.write('t', { path: target, text: '"new"' });
    expect(fs.existsSync(target)).toBe(false);
    expect([await first, await second]).toEqual([true, true]);
    expect(fs.readFileSync(target, 'utf8')).toBe('"new"');
  });

  it('writes a claimed trajectory beside a file already at its name, then only there: a text queued before the claim landed too', async () => {
    const dir = tempDir('trajectory-files');
    const asked = path.join(dir, 'a.json');
    fs.writeFileSync(asked, 'another process');
    const claim: FileClaim = { held: null, next: (taken) => (taken === asked ? path.join(dir, 'a~2.json') : null) };
    const { files, reported } = writer();
    const first = files.write('s1', { path: asked, text: 'first', claim });
    // Asked for before the first landed: it waits, and must follow the claim, not rename over a.json.
    const second = files.write('s1', { path: asked, text: 'second', claim });
    expect([await first, await second]).toEqual([true, true]);
    expect(claim.held).toBe(path.join(dir, 'a~2.json'));
    expect(await files.write('s1', { path: asked, text: 'third', claim })).toBe(true);
    expect(fs.readFileSync(asked, 'utf8')).toBe('another process');
    expect(fs.readFileSync(path.join(dir, 'a~2.json'), 'utf8')).toBe('third');
    expect(fs.readdirSync(dir).sort()).toEqual(['a.json', 'a~2.json']);
    // Listed under the name it has, not the one it asked for.
    expect(files.files().map((h) => [path.basename(h.path), h.bytes, h.errors])).toEqual([['a~2.json', 5, 0]]);
    expect(reported).toEqual([]);
  });

  it('reports a claim with no name left as a failed write, kept for a retry, and never touches the taken file', async () => {
    const dir = tempDir('trajectory-files');
    const asked = path.join(dir, 'a.json');
    fs.writeFileSync(asked, 'another process');
    const { files, reported } = writer();
    expect(await files.write('s1', { path: asked, text: 'mine', claim: { held: null, next: () => null } })).toBe(false);
    expect(fs.readFileSync(asked, 'utf8')).toBe('another process');
    expect(reported).toEqual([expect.stringMatching(/^writing ATIF trajectory .*a\.json: .*EEXIST/)]);
    expect(files.isKept('s1')).toBe(true);
    files.close();
  });

  it('writes the texts of one trajectory in order: a newer write waits for the running one and replaces a waiting one', async () => {
    const dir = tempDir('trajectory-files');
    const { files } = writer();
    const target = path.join(dir, 't.json');
    const seen: string[] = [];
    // Every rename lands whole; sample the file between the pool's steps to see every version that landed.
    const sampler = setInterval(() => {
      try {
        const text = fs.readFileSync(target, 'utf8');
        if (seen.at(-1) !== text) seen.push(text);
      } catch {
        // Not there yet.
      }
    }, 0);
    const results: Promise<boolean>[] = [];
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 5; i++) results.push(files.write('s1', { path: target, text: `v${round * 5 + i}`.padEnd(20_000, '.') }));
      files.write('s2', { path: path.join(dir, `other-${round}.json`), text: 'o' });
      await new Promise((resolve) => setImmediate(resolve));
    }
    await settle(files);
    clearInterval(sampler);
    expect(fs.readFileSync(target, 'utf8').trimEnd().replace(/\.+$/, '')).toBe('v99');
    const order = seen.map((text) => Number(text.replace(/\.+$/, '').slice(1)));
    expect(order).toEqual([...order].sort((x, y) => x - y));
    const outcomes = await Promise.all(results);
    // The first of each burst starts at once or waits; the ones replaced while waiting never land.
    expect(outcomes.at(-1)).toBe(true);
    expect(outcomes.filter((landed) => !landed).length).toBeGreaterThan(0);
    expect(fs.readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    expect(files.summary(dir)).toMatchObject({ errors: 0 });
  });

  it('keeps a failed write, reports it, and writes it once the folder works (retryNow)', async () => {
    const { dir, unblock } = blockedFolder();
    const { files, reported } = writer();
    const target = path.join(dir, 't.json');
    expect(await files.write('s1', { path: target, text: 'first' })).toBe(false);
    expect(files.isKept('s1')).toBe(true);
    expect(reported).toHaveLength(1);
    expect(reported[0]).toContain(`writing ATIF trajectory ${target}: `);
    expect(files.summary(dir)).toMatchObject({ errors: 1, dropped: 1 });
    expect(files.files()[0]).toMatchObject({ path: target, errors: 1, bytes: 0, lastWrite: null });
    expect(files.files()[0]!.lastError).toMatch(/ENOTDIR|EEXIST|not a directory/i);
    unblock();
    files.retryNow();
    await settle(files);
    expect(fs.readFileSync(target, 'utf8')).toBe('first');
    expect(files.isKept('s1')).toBe(false);
    expect(files.summary(dir).dropped).toBeUndefined();
    files.close();
  });

  it('ends a retry pass at the first write that fails again, and tries the rest on the next pass', async () => {
    const { dir, unblock } = blockedFolder();
    const { files } = writer();
    for (const key of ['a', 'b', 'c']) files.write(key, { path: path.join(dir, `${key}.json`), text: key });
    await settle(files);
    expect(files.summary(dir).errors).toBe(3);
    files.retryNow();
    await settle(files);
    expect(files.summary(dir).errors).toBe(4);
    expect(files.summary(dir)).toMatchObject({ dropped: 3 });
    unblock();
    files.retryNow();
    await settle(files);
    expect(fs.readdirSync(dir).sort()).toEqual(['a.json', 'b.json', 'c.json']);
    expect(files.summary(dir).dropped).toBeUndefined();
    files.close();
  });

  it('never lets a kept older text land over a newer write of the same trajectory', async () => {
    const { dir, unblock } = blockedFolder();
    const { files } = writer();
    const target = path.join(dir, 't.json');
    await files.write('s1', { path: target, text: 'old' });
    unblock();
    expect(await files.write('s1', { path: target, text: 'new' })).toBe(true);
    files.retryNow();
    await settle(files);
    expect(fs.readFileSync(target, 'utf8')).toBe('new');
    expect(files.isKept('s1')).toBe(false);
  });

  it('a newer text waiting behind a failing write is written next, and the older one is not kept', async () => {
    const { dir, unblock } = blockedFolder();
    const { files } = writer();
    const target = path.join(dir, 't.json');
    const old = files.write('s1', { path: target, text: 'old' });
    const newer = files.write('s1', { path: target, text: 'new' });
    expect(await old).toBe(false);
    expect(await newer).toBe(false);
    expect(files.summary(dir).errors).toBe(2);
    unblock();
    files.retryNow();
    await settle(files);
    expect(fs.readFileSync(target, 'utf8')).toBe('new');
    expect(files.summary(dir).dropped).toBeUndefined();
  });

  it('tries kept writes again on its own, with a delay that doubles', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { dir, unblock } = blockedFolder();
    const { files } = writer({ retry: { initialDelayMs: 100, maxDelayMs: 1000, maxRetries: Number.POSITIVE_INFINITY } });
    const target = path.join(dir, 't.json');
    await files.write('s1', { path: target, text: 'x' });
    vi.advanceTimersByTime(99);
    await settle(files);
    expect(files.summary(dir).errors).toBe(1);
    vi.advanceTimersByTime(1);
    await settle(files);
    expect(files.summary(dir).errors).toBe(2); // the first retry, 100 ms later, failed too
    vi.advanceTimersByTime(199);
    await settle(files);
    expect(files.summary(dir).errors).toBe(2);
    vi.advanceTimersByTime(1);
    await settle(files);
    expect(files.summary(dir).errors).toBe(3); // the second, 200 ms after that
    unblock();
    vi.advanceTimersByTime(400);
    await settle(files);
    expect(fs.readFileSync(target, 'utf8')).toBe('x');
    expect(files.summary(dir).errors).toBe(3);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('gives a write up after maxRetries failed retries, and still counts it as not written', async () => {
    const { dir } = blockedFolder();
    const { files } = writer({ retry: { initialDelayMs: 100, maxDelayMs: 1000, maxRetries: 2 } });
    await files.write('s1', { path: path.join(dir, 't.json'), text: 'x' });
    files.retryNow();
    await settle(files);
    expect(files.isKept('s1')).toBe(true);
    files.retryNow();
    await settle(files);
    expect(files.isKept('s1')).toBe(false);
    expect(files.summary(dir).errors).toBe(3);
    files.retryNow();
    await settle(files);
    expect(files.summary(dir).errors).toBe(3);
    expect(files.summary(dir)).toMatchObject({ errors: 3, dropped: 1 });
    files.close();
  });

  // An operator's trial on a read-only disk: one warning per session's trajectory and per retry
  // (every 5 s at most), for as long as the disk stayed so.
  it('says the first failure of a streak, counts the rest, and says the next streak again', async () => {
    const { dir, unblock } = blockedFolder();
    const { files, reported } = writer();
    for (const key of ['a', 'b', 'c']) files.write(key, { path: path.join(dir, `${key}.json`), text: key });
    await settle(files);
    files.retryNow();
    await settle(files);
    expect(reported).toHaveLength(1);
    // The three writes run at once on the thread pool: whichever fails first is the one said, and
    // the retry pass starts from it (a loaded machine finished c's first in CI).
    const said = /^writing ATIF trajectory .*([abc])\.json: .*\(until a trajectory is written again, later failures are counted in status\(\)\.outputs, not said\)$/.exec(reported[0]!);
    expect(said, reported[0]).not.toBeNull();
    expect(reported[0]).toContain('(a file stands where a folder of the path should be: remove it or point the output folder elsewhere)');
    expect(files.summary(dir)).toMatchObject({ errors: 4, dropped: 3 });
    expect(files.files().map((h) => [path.basename(h.path), h.errors]).sort()).toEqual(
      ['a', 'b', 'c'].map((key) => [`${key}.json`, key === said![1] ? 2 : 1]),
    );
    unblock();
    files.retryNow();
    await settle(files);
    expect(fs.readdirSync(dir).sort()).toEqual(['a.json', 'b.json', 'c.json']);
    fs.rmSync(dir, { recursive: true });
    fs.writeFileSync(dir, 'in the way again');
    files.write('d', { path: path.join(dir, 'd.json'), text: 'd' });
    await settle(files);
    expect(reported).toHaveLength(2);
    expect(reported[1]).toContain('d.json');
    files.close();
  });

  it('lists at most maxListedFiles files, dropping the first written, and none at 0', async () => {
    const dir = tempDir('trajectory-files');
    const { files } = writer({ maxListedFiles: 2 });
    for (const name of ['a', 'b', 'c']) files.write(name, { path: path.join(dir, `${name}.json`), text: name });
    expect(files.files().map((h) => path.basename(h.path))).toEqual(['b.json', 'c.json']);
    const unlisted = writer({ maxListedFiles: 0 }).files;
    await unlisted.write('a', { path: path.join(dir, 'd.json'), text: 'd' });
    expect(unlisted.files()).toEqual([]);
    expect(unlisted.summary(dir)).toMatchObject({ bytes: 1, errors: 0 });
  });

  it('writes a one-off copy with the mode asked for, and does not retry it', () => {
    const dir = tempDir('trajectory-files');
    const { files } = writer();
    const target = path.join(dir, 'copy.json');
    expect(files.writeOnce({ path: target, text: 'kept', mode: 0o600 })).toBe(true);
    if (process.platform !== 'win32') expect(fs.statSync(target).mode & 0o777).toBe(0o600);
    const { dir: blocked } = blockedFolder();
    expect(files.writeOnce({ path: path.join(blocked, 'x.json'), text: 'x' })).toBe(false);
    expect(files.summary(dir)).toMatchObject({ errors: 1 });
    expect(files.summary(dir).dropped).toBeUndefined();
  });

  it('counts a failure that is not a write in the totals and reports it', () => {
    const { files, reported } = writer();
    files.fail('ATIF file name: {metadata.user} did not resolve');
    expect(files.summary('/x')).toMatchObject({ errors: 1, lastError: 'ATIF file name: {metadata.user} did not resolve' });
    expect(reported).toEqual(['ATIF file name: {metadata.user} did not resolve']);
  });
});

const here = path.dirname(fileURLToPath(import.meta.url));
const bun = path.resolve(here, '../../node_modules/.bin/bun');
const bunAvailable = fs.existsSync(bun) && spawnSync(bun, ['--version']).status === 0;
if (!bunAvailable) console.warn('[trajectory-files exit test] skipped: node_modules/.bin/bun is not available to run a TypeScript child process');

describe.skipIf(!bunAvailable)('TrajectoryFiles at a process exit', () => {
  /** A child that starts writes of `t.json` in the pool, then exits; `wait` ms of host work first lets the pool finish its step. */
  function exitWithWritesRunning(wait: number): { dir: string; stderr: string; status: number | null } {
    const dir = tempDir('trajectory-files-exit');
    const script = path.join(dir, 'child.ts');
    const entry = path.resolve(here, '../../src/backends/trajectory-files.ts');
    fs.mkdirSync(path.join(dir, 'atif'));
    fs.writeFileSync(
      script,
      `import { TrajectoryFiles } from ${JSON.stringify(entry)};
const files = new TrajectoryFiles({ onError: (m) => console.error(m), retry: { maxRetries: 3, initialDelayMs: 100, maxDelayMs: 100 }, maxListedFiles: 10 });
const target = ${JSON.stringify(path.join(dir, 'atif', 't.json'))};
files.write('s1', { path: target, text: 'old' });
files.write('s1', { path: target, text: 'newest' });
files.write('s2', { path: ${JSON.stringify(path.join(dir, 'atif', 'u.json'))}, text: 'only' });
const until = Date.now() + ${wait};
while (Date.now() < until);
process.exit(0);
`,
    );
    const result = spawnSync(bun, [script], { encoding: 'utf8' });
    return { dir: path.join(dir, 'atif'), stderr: result.stderr, status: result.status };
  }

  it('writes the newest text of every trajectory with a write running or waiting, and leaves no temporary file', () => {
    const { dir, stderr, status } = exitWithWritesRunning(200);
    expect(status, stderr).toBe(0);
    expect(stderr).toBe('');
    expect(fs.readFileSync(path.join(dir, 't.json'), 'utf8')).toBe('newest');
    expect(fs.readFileSync(path.join(dir, 'u.json'), 'utf8')).toBe('only');
    expect(fs.readdirSync(dir).sort()).toEqual(['t.json', 'u.json']);
  });

  it('writes the newest text when the process exits at once', () => {
    const { dir, stderr, status } = exitWithWritesRunning(0);
    expect(status, stderr).toBe(0);
    expect(fs.readFileSync(path.join(dir, 't.json'), 'utf8')).toBe('newest');
    expect(fs.readFileSync(path.join(dir, 'u.json'), 'utf8')).toBe('only');
  });
});
