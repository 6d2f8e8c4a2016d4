// A gigabyte on one line (no newline at all): replay, convert and validate
// stop with the one-line error the README promises, not an uncaught
// RangeError. The file is sparse (all NUL bytes), so it takes no disk space,
// and the readers stop at the line limit, so memory stays bounded.
import { openSync, closeSync, ftruncateSync, rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { cli, expectNoStack, tempDir } from '../cli/support.ts';

const GIB = 1024 * 1024 * 1024;

describe('a 1 GB single-line file', () => {
  it('gives replay, convert and validate one clear line and exit 1', () => {
    const dir = tempDir('nrh-gib-');
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'one-line.jsonl');
    const fd = openSync(file, 'w');
    ftruncateSync(fd, GIB);
    closeSync(fd);
    const expected = `cannot read ${file}: line 1 is longer than ${128 * 1024 * 1024} bytes, more than a JSON line may hold (is this really JSONL?)`;
    for (const args of [['replay', file, '--out', path.join(dir, 'r')], ['convert', file, '--out', path.join(dir, 'c')]]) {
      const result = cli(args, { timeoutMs: 300_000 });
      expect(result.code, `${args[0]}: ${result.stderr}`).toBe(1);
      expectNoStack(result.stderr);
      expect(result.stderr).toBe(`nemo-relay-hooks: ${expected}\n`);
    }
    const validate = cli(['validate', file], { timeoutMs: 300_000 });
    expect(validate.code).toBe(1);
    expectNoStack(validate.stdout + validate.stderr);
    expect(validate.stdout).toBe(`✗ ${file}: ${expected}\n`);
  });
});
