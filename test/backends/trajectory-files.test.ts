import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TrajectoryFiles, type TrajectoryFilesOptions } from '../../src/backends/trajectory-files.ts';
import { tempDir } from '../contract/backends.ts';

// The exit tasks, captured instead of installed on the test process.
const exitTasks = vi.hoisted(() => [] as (() => void)[]);
vi.mock('../../src/shared/exit-hook.ts', () => ({
  atExit: (task: () => void) => {
    exitTasks.push(task);
    return () => {
      const index = exitTasks.indexOf(task);
      if (index >= 0) exitTasks.splice(index, 1);
    };
  },
}));

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

describe('TrajectoryFiles', () => {
  it('writes the whole text, leaves no temporary file, and lists what it wrote per file and in total', () => {
    const dir = tempDir('trajectory-files');
    const { files } = writer();
    expect(files.write('s1', { path: path.join(dir, 'a.json'), text: '{"a":1}' })).toBe(true);
    expect(files.write('s2', { path: path.join(dir, 'sub', 'b.json'), text: '{"b":"é"}' })).toBe(true);
    expect(fs.readFileSync(path.join(dir, 'a.json'), 'utf8')).toBe('{"a":1}');
    expect(fs.readFileSync(path.join(dir, 'sub', 'b.json'), 'utf8')).toBe('{"b":"é"}');
    expect(fs.readdirSync(dir).sort()).toEqual(['a.json', 'sub']);
    const listed = files.files();
    expect(listed.map((h) => [path.basename(h.path), h.bytes, h.errors])).toEqual([
      ['a.json', 7, 0],
      ['b.json', 10, 0],
    ]);
    expect(listed.every((h) => h.kind === 'atif' && typeof h.lastWrite === 'string')).toBe(true);
    expect(files.summary(dir)).toMatchObject({ kind: 'atif', path: dir, bytes: 17, errors: 0 });
    expect(files.summary(dir).dropped).toBeUndefined();
  });

  it('keeps a failed write, reports it, and writes it once the folder works (retryNow)', () => {
    const { dir, unblock } = blockedFolder();
    const { files, reported } = writer();
    const target = path.join(dir, 't.json');
    expect(files.write('s1', { path: target, text: 'first' })).toBe(false);
    expect(files.isKept('s1')).toBe(true);
    expect(reported).toHaveLength(1);
    expect(reported[0]).toContain(`writing ATIF trajectory ${target}: `);
    expect(files.summary(dir)).toMatchObject({ errors: 1, dropped: 1 });
    expect(files.files()[0]).toMatchObject({ path: target, errors: 1, bytes: 0, lastWrite: null });
    expect(files.files()[0]!.lastError).toMatch(/ENOTDIR|EEXIST|not a directory/i);
    unblock();
    files.retryNow();
    expect(fs.readFileSync(target, 'utf8')).toBe('first');
    expect(files.isKept('s1')).toBe(false);
    expect(files.summary(dir).dropped).toBeUndefined();
    files.close();
  });

  it('never lets a kept older text land over a newer write of the same trajectory', () => {
    const { dir, unblock } = blockedFolder();
    const { files } = writer();
    const target = path.join(dir, 't.json');
    files.write('s1', { path: target, text: 'old' });
    unblock();
    expect(files.write('s1', { path: target, text: 'new' })).toBe(true);
    files.retryNow();
    expect(fs.readFileSync(target, 'utf8')).toBe('new');
    expect(files.isKept('s1')).toBe(false);
  });

  it('tries kept writes again on its own, with a delay that doubles', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { dir, unblock } = blockedFolder();
    const { files, reported } = writer({ retry: { initialDelayMs: 100, maxDelayMs: 1000, maxRetries: Number.POSITIVE_INFINITY } });
    const target = path.join(dir, 't.json');
    files.write('s1', { path: target, text: 'x' });
    vi.advanceTimersByTime(99);
    expect(reported).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(reported).toHaveLength(2); // the first retry, 100 ms later, failed too
    vi.advanceTimersByTime(199);
    expect(reported).toHaveLength(2);
    vi.advanceTimersByTime(1);
    expect(reported).toHaveLength(3); // the second, 200 ms after that
    unblock();
    vi.advanceTimersByTime(400);
    expect(fs.readFileSync(target, 'utf8')).toBe('x');
    expect(reported).toHaveLength(3);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('gives a write up after maxRetries failed retries, and still counts it as not written', () => {
    const { dir } = blockedFolder();
    const { files, reported } = writer({ retry: { initialDelayMs: 100, maxDelayMs: 1000, maxRetries: 2 } });
    files.write('s1', { path: path.join(dir, 't.json'), text: 'x' });
    files.retryNow();
    expect(files.isKept('s1')).toBe(true);
    files.retryNow();
    expect(files.isKept('s1')).toBe(false);
    expect(reported).toHaveLength(3);
    files.retryNow();
    expect(reported).toHaveLength(3);
    expect(files.summary(dir)).toMatchObject({ errors: 3, dropped: 1 });
    files.close();
  });

  it('lists at most maxListedFiles files, dropping the first written, and none at 0', () => {
    const dir = tempDir('trajectory-files');
    const { files } = writer({ maxListedFiles: 2 });
    for (const name of ['a', 'b', 'c']) files.write(name, { path: path.join(dir, `${name}.json`), text: name });
    expect(files.files().map((h) => path.basename(h.path))).toEqual(['b.json', 'c.json']);
    const unlisted = writer({ maxListedFiles: 0 }).files;
    unlisted.write('a', { path: path.join(dir, 'd.json'), text: 'd' });
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

  it('writes in the background: the same file, owner-only, no temporary left, listed; a failure is kept and retried', async () => {
    const dir = tempDir('trajectory-files');
    const { files } = writer();
    const target = path.join(dir, 'sub', 'bg.json');
    const written = files.writeInBackground('s1', { path: target, text: '{"b":"é"}' });
    // The write is under way, not done, when the call returns: the host's thread goes on.
    expect(fs.existsSync(target)).toBe(false);
    expect(await written).toBe(true);
    expect(fs.readFileSync(target, 'utf8')).toBe('{"b":"é"}');
    if (process.platform !== 'win32') expect(fs.statSync(target).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(path.join(dir, 'sub'))).toEqual(['bg.json']);
    expect(files.files()[0]).toMatchObject({ path: target, bytes: 10, errors: 0 });
    const { dir: blocked, unblock } = blockedFolder();
    const kept = path.join(blocked, 'k.json');
    expect(await files.writeInBackground('s2', { path: kept, text: 'kept' })).toBe(false);
    expect(files.isKept('s2')).toBe(true);
    unblock();
    files.retryNow();
    expect(fs.readFileSync(kept, 'utf8')).toBe('kept');
    files.close();
  });

  it('never renames a background write over a newer text that landed meanwhile (the exit write), nor lets an older kept retry overtake it', async () => {
    const dir = tempDir('trajectory-files');
    const { files } = writer();
    const target = path.join(dir, 't.json');
    const older = files.writeInBackground('s1', { path: target, text: 'older, still being written' });
    expect(files.write('s1', { path: target, text: 'newer' })).toBe(true);
    expect(await older).toBe(true);
    expect(fs.readFileSync(target, 'utf8')).toBe('newer');
    expect(fs.readdirSync(dir)).toEqual(['t.json']);
    // A kept (failed) older text retried while a newer background write is under way: the newer one lands last.
    const { dir: blocked, unblock } = blockedFolder();
    const other = path.join(blocked, 'o.json');
    files.write('s2', { path: other, text: 'old' });
    unblock();
    const newer = files.writeInBackground('s2', { path: other, text: 'new' });
    files.retryNow();
    expect(await newer).toBe(true);
    expect(fs.readFileSync(other, 'utf8')).toBe('new');
    expect(files.isKept('s2')).toBe(false);
    files.close();
  });

  it('removes the temporary file of a background write still under way at exit, after the exit task wrote the newest text', async () => {
    const dir = tempDir('trajectory-files');
    const { files } = writer();
    const target = path.join(dir, 'x.json');
    files.installExitTask(() => files.write('s1', { path: target, text: 'at exit' }));
    const exitTask = exitTasks.at(-1)!;
    const underWay = files.writeInBackground('s1', { path: target, text: 'x'.repeat(8 << 20) });
    // The pool creates the temporary file; its rename needs this thread, which the loop holds (as an exit does).
    const temporaries = () => fs.readdirSync(dir).filter((name) => name.endsWith('.tmp'));
    for (let i = 0; i < 1e7 && temporaries().length === 0; i++);
    expect(temporaries()).toHaveLength(1);
    exitTask();
    expect(fs.readFileSync(target, 'utf8')).toBe('at exit');
    expect(temporaries()).toEqual([]);
    // Had the process lived on, the overtaken write would not land either.
    expect(await underWay).toBe(true);
    expect(fs.readFileSync(target, 'utf8')).toBe('at exit');
    expect(temporaries()).toEqual([]);
    files.close();
  });
});
