import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TrajectoryFiles, type TrajectoryFilesOptions } from '../../src/backends/trajectory-files.ts';
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
});
