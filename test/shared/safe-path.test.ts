// The one file-name rule: plain names, confined relative paths, containment
// on real paths, and opening without following a planted link.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { assertRealFolderInside, isConfinedRelativePath, isPlainFileName, openNoFollow, resolveContained, UnsafePathError } from '../../src/shared/safe-path.ts';

const dirs: string[] = [];
function tempDir(): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'nrh-safe-')));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe('file-name predicates', () => {
  it('accepts plain file names only', () => {
    for (const name of ['e.jsonl', 'a b', '..x', 'x..']) expect(isPlainFileName(name), name).toBe(true);
    for (const name of ['', '.', '..', 'a/b', 'a\\b', '../x', 'a\0b', 3, undefined]) expect(isPlainFileName(name), String(name)).toBe(false);
  });

  it('accepts relative paths that cannot climb out, as native does for plugins.toml sinks', () => {
    for (const name of ['e.jsonl', 'sub/e.jsonl', 'a//b.jsonl', 'a/./b']) expect(isConfinedRelativePath(name), name).toBe(true);
    for (const name of ['', '.', '..', '../../x.jsonl', 'sub/../x', 'a/', '/etc/x', 'a\0b', 'C:\\x']) {
      expect(isConfinedRelativePath(name), name).toBe(false);
    }
  });
});

describe('containment on real paths', () => {
  it('refuses a folder part that is a link out of the output folder, although the text looks contained', () => {
    const root = tempDir();
    const outside = tempDir();
    fs.symlinkSync(outside, path.join(root, 'sub'));
    expect(() => resolveContained(root, 'sub/s.json')).toThrow(UnsafePathError);
    expect(() => resolveContained(root, '../x.json')).toThrow(UnsafePathError);
  });

  it('accepts folders that do not exist yet and links that stay inside', () => {
    const root = tempDir();
    fs.mkdirSync(path.join(root, 'real'));
    fs.symlinkSync(path.join(root, 'real'), path.join(root, 'inner'));
    expect(resolveContained(root, 'new/deeper/s.json')).toBe(path.join(root, 'new/deeper/s.json'));
    expect(resolveContained(root, 'inner/s.json')).toBe(path.join(root, 'inner/s.json'));
  });

  it('checks a folder before its files are named (the CLI\'s <out>/atif/) by the same rule, and says where the link leads', () => {
    const root = tempDir();
    const outside = tempDir();
    fs.symlinkSync(outside, path.join(root, 'atif'));
    fs.mkdirSync(path.join(root, 'real'));
    fs.symlinkSync(path.join(root, 'real'), path.join(root, 'atof'));
    let refusal: unknown;
    try {
      assertRealFolderInside(root, path.join(root, 'atif'));
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(UnsafePathError);
    expect((refusal as UnsafePathError).leadsTo).toBe(outside);
    expect(() => assertRealFolderInside(root, path.join(root, 'atof'))).not.toThrow();
    expect(() => assertRealFolderInside(root, path.join(root, 'new'))).not.toThrow();
    expect(() => assertRealFolderInside(root, root)).not.toThrow();
  });
});

describe('openNoFollow', () => {
  for (const intent of ['append', 'truncate'] as const) {
    it(`refuses a symlink planted at the file (${intent}) and leaves its target alone`, () => {
      const dir = tempDir();
      const victim = path.join(dir, 'victim');
      fs.writeFileSync(victim, 'precious');
      fs.symlinkSync(victim, path.join(dir, 'out.jsonl'));
      expect(() => openNoFollow(path.join(dir, 'out.jsonl'), intent)).toThrow(/symbolic link/);
      expect(fs.readFileSync(victim, 'utf8')).toBe('precious');
    });
  }

  it('creates, appends to and truncates ordinary files', () => {
    const file = path.join(tempDir(), 'f');
    for (const [intent, text] of [['append', 'a'], ['append', 'b'], ['truncate', 'c']] as const) {
      const fd = openNoFollow(file, intent);
      fs.writeSync(fd, text);
      fs.closeSync(fd);
    }
    expect(fs.readFileSync(file, 'utf8')).toBe('c');
  });
});
