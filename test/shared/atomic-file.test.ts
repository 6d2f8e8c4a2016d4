import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type ExclusiveName, writeFileAtomic, writeFileAtomicInPool } from '../../src/shared/atomic-file.ts';

const tempDir = () => mkdtempSync(path.join(os.tmpdir(), 'nrh-atomic-'));

describe('writeFileAtomic', () => {
  it('creates the folder, writes the text as UTF-8 and returns its byte length', () => {
    const target = path.join(tempDir(), 'nested', 'deeper', 'trajectory.json');
    const text = '{"text":"héllo ✓ 🚀"}';
    expect(writeFileAtomic(target, text)).toBe(Buffer.byteLength(text, 'utf8'));
    expect(readFileSync(target, 'utf8')).toBe(text);
  });

  it('writes bytes as they are (a view into a larger buffer included) and returns their length', () => {
    const target = path.join(tempDir(), 'trajectory.json');
    const whole = new TextEncoder().encode('xx{"text":"héllo ✓ 🚀"}yy');
    const bytes = whole.subarray(2, whole.length - 2);
    expect(writeFileAtomic(target, bytes)).toBe(bytes.length);
    expect(readFileSync(target, 'utf8')).toBe('{"text":"héllo ✓ 🚀"}');
  });

  it('writes bytes as they are in the thread pool too', async () => {
    const target = path.join(tempDir(), 'pooled', 'trajectory.json');
    const whole = new TextEncoder().encode('xx{"text":"héllo ✓ 🚀"}yy');
    const bytes = whole.subarray(2, whole.length - 2);
    const written = await new Promise<number>((resolve, reject) => {
      writeFileAtomicInPool(target, bytes, {}, (error, count) => (error ? reject(error as Error) : resolve(count)));
    });
    expect(written).toBe(bytes.length);
    expect(readFileSync(target, 'utf8')).toBe('{"text":"héllo ✓ 🚀"}');
  });

  it('replaces an existing file and leaves no temporary file beside it', () => {
    const dir = tempDir();
    const target = path.join(dir, 'trajectory.json');
    writeFileAtomic(target, 'first');
    writeFileAtomic(target, 'second');
    expect(readFileSync(target, 'utf8')).toBe('second');
    expect(readdirSync(dir)).toEqual(['trajectory.json']);
  });

  it('throws the file system error and removes its temporary file when the rename fails', () => {
    const dir = tempDir();
    const target = path.join(dir, 'taken');
    mkdirSync(path.join(target, 'child'), { recursive: true }); // a non-empty folder cannot be renamed over
    expect(() => writeFileAtomic(target, 'text')).toThrow(/EISDIR|ENOTEMPTY|EEXIST|EPERM/);
    expect(readdirSync(dir)).toEqual(['taken']);
  });

  it('creates a folder removed between two writes again, and names a file in the way', () => {
    const dir = tempDir();
    const folder = path.join(dir, 'trajectories');
    writeFileAtomic(path.join(folder, 'a.json'), 'a', { mode: 0o600 });
    rmSync(folder, { recursive: true });
    writeFileAtomic(path.join(folder, 'b.json'), 'b', { mode: 0o600 });
    expect(readdirSync(folder)).toEqual(['b.json']);
    if (process.platform !== 'win32') expect(statSync(path.join(folder, 'b.json')).mode & 0o777).toBe(0o600);
    writeFileSync(path.join(dir, 'file'), 'in the way');
    expect(() => writeFileAtomic(path.join(dir, 'file', 'c.json'), 'c')).toThrow(/ENOTDIR/);
    expect(readdirSync(dir).sort()).toEqual(['file', 'trajectories']);
  });
});

/** Names `base` then `base~2`, `base~3`, ... up to `~last`, recording where the text landed. */
function numbered(base: string, last = 5): ExclusiveName & { landedAt: string[] } {
  const landedAt: string[] = [];
  return {
    landedAt,
    next(taken) {
      const match = /~(\d+)\.json$/.exec(taken);
      const n = match === null ? 2 : Number(match[1]) + 1;
      return n > last ? null : base.replace(/\.json$/, `~${n}.json`);
    },
    landed(name) {
      landedAt.push(name);
    },
  };
}

describe('an exclusive write (a name claimed, never replaced)', () => {
  for (const [label, write] of [
    ['on the host thread', async (target: string, text: string, options: { mode?: number; exclusive: ExclusiveName }) => writeFileAtomic(target, text, options)],
    ['in the thread pool', (target: string, text: string, options: { mode?: number; exclusive: ExclusiveName }) => inPool(target, text, options)],
  ] as const) {
    it(`${label}: lands at the first free name the owner offers, whole, with its mode, and leaves the taken files and no temporary file`, async () => {
      const dir = tempDir();
      const target = path.join(dir, 'a.json');
      writeFileSync(target, 'another process');
      writeFileSync(path.join(dir, 'a~2.json'), 'an earlier run');
      const claim = numbered(target);
      expect(await write(target, 'mine', { mode: 0o600, exclusive: claim })).toBe(4);
      expect(claim.landedAt).toEqual([path.join(dir, 'a~3.json')]);
      expect(readFileSync(target, 'utf8')).toBe('another process');
      expect(readFileSync(path.join(dir, 'a~2.json'), 'utf8')).toBe('an earlier run');
      expect(readFileSync(path.join(dir, 'a~3.json'), 'utf8')).toBe('mine');
      if (process.platform !== 'win32') expect(statSync(path.join(dir, 'a~3.json')).mode & 0o777).toBe(0o600);
      expect(readdirSync(dir).sort()).toEqual(['a.json', 'a~2.json', 'a~3.json']);
    });

    it(`${label}: throws EEXIST when the owner has no name left, and leaves nothing of its own`, async () => {
      const dir = tempDir();
      const target = path.join(dir, 'a.json');
      writeFileSync(target, 'one');
      writeFileSync(path.join(dir, 'a~2.json'), 'two');
      const claim = numbered(target, 2);
      await expect(write(target, 'mine', { exclusive: claim })).rejects.toThrow(/EEXIST/);
      expect(claim.landedAt).toEqual([]);
      expect(readdirSync(dir).sort()).toEqual(['a.json', 'a~2.json']);
    });
  }

  it('creates the folder of a name that has one of its own ({session_id}/trajectory.json)', () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 's1'));
    writeFileSync(path.join(dir, 's1', 'trajectory.json'), 'taken');
    const landedAt: string[] = [];
    writeFileAtomic(path.join(dir, 's1', 'trajectory.json'), 'mine', {
      exclusive: { next: (taken) => (taken.includes('s1~2') ? null : path.join(dir, 's1~2', 'trajectory.json')), landed: (name) => landedAt.push(name) },
    });
    expect(landedAt).toEqual([path.join(dir, 's1~2', 'trajectory.json')]);
    expect(readFileSync(path.join(dir, 's1~2', 'trajectory.json'), 'utf8')).toBe('mine');
    expect(readdirSync(path.join(dir, 's1'))).toEqual(['trajectory.json']);
  });

  it('of many writers claiming one name at once, each gets a name of its own and none is replaced', async () => {
    const dir = tempDir();
    const target = path.join(dir, 'a.json');
    const claims = Array.from({ length: 16 }, () => numbered(target, 100));
    await Promise.all(claims.map((claim, i) => inPool(target, `writer ${i}`, { exclusive: claim })));
    const names = claims.map((claim) => claim.landedAt[0]!);
    expect(new Set(names).size).toBe(16);
    names.forEach((name, i) => expect(readFileSync(name, 'utf8')).toBe(`writer ${i}`));
    expect(readdirSync(dir)).toHaveLength(16);
  });
});

/** `writeFileAtomicInPool` as a promise of its callback. */
function inPool(target: string, content: string | Uint8Array, options: { mode?: number; exclusive?: ExclusiveName } = {}): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    writeFileAtomicInPool(target, content, options, (error, count) => (error ? reject(error as Error) : resolve(count)));
  });
}

describe('writeFileAtomicInPool', () => {
  it('creates the folder, writes the text as UTF-8 with the mode asked for, and calls back later with its byte length', async () => {
    const target = path.join(tempDir(), 'nested', 'trajectory.json');
    const text = '{"text":"héllo ✓ 🚀"}';
    let called = false;
    const written = new Promise<number>((resolve, reject) => {
      writeFileAtomicInPool(target, text, { mode: 0o600 }, (error, count) => {
        called = true;
        if (error) reject(error as Error);
        else resolve(count);
      });
    });
    expect(called).toBe(false);
    expect(await written).toBe(Buffer.byteLength(text, 'utf8'));
    expect(readFileSync(target, 'utf8')).toBe(text);
    expect(readdirSync(path.dirname(target))).toEqual(['trajectory.json']);
    if (process.platform !== 'win32') expect(statSync(target).mode & 0o777).toBe(0o600);
  });

  it('writes an empty text as an empty file', async () => {
    const target = path.join(tempDir(), 'empty.json');
    expect(await inPool(target, '')).toBe(0);
    expect(readFileSync(target, 'utf8')).toBe('');
  });

  it('reports the file system error and removes its temporary file when the rename fails', async () => {
    const dir = tempDir();
    const target = path.join(dir, 'taken');
    mkdirSync(path.join(target, 'child'), { recursive: true });
    await expect(inPool(target, 'text')).rejects.toThrow(/EISDIR|ENOTEMPTY|EEXIST|EPERM/);
    expect(readdirSync(dir)).toEqual(['taken']);
  });

  it('reports a file in the way of the folder, and leaves nothing behind', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'file'), 'in the way');
    await expect(inPool(path.join(dir, 'file', 'c.json'), 'c')).rejects.toThrow(/ENOTDIR|EEXIST/);
    expect(readdirSync(dir)).toEqual(['file']);
  });

  it('abandoned, never calls back and leaves neither the file nor a temporary file', async () => {
    for (const content of ['abandoned text', new TextEncoder().encode('abandoned bytes')]) {
      const dir = tempDir();
      const target = path.join(dir, 'trajectory.json');
      let called = false;
      const write = writeFileAtomicInPool(target, content, {}, () => {
        called = true;
      });
      write.abandon();
      write.abandon(); // a second call changes nothing
      // Let every step the pool had started come back, and the cleanup after it run.
      for (let i = 0; i < 20; i++) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(called).toBe(false);
      expect(readdirSync(dir)).toEqual([]);
    }
  });

  it('abandoned after it finished, changes nothing', async () => {
    const target = path.join(tempDir(), 'trajectory.json');
    let finish!: (count: number) => void;
    const finished = new Promise<number>((resolve) => (finish = resolve));
    const write = writeFileAtomicInPool(target, 'kept', {}, (_error, count) => finish(count));
    expect(await finished).toBe(4);
    write.abandon();
    expect(readFileSync(target, 'utf8')).toBe('kept');
  });
});
