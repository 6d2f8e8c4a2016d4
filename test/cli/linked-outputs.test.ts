// `demo` and `replay` never write through a symlink planted at one of their
// output files (append would add to the link's target, overwrite would empty
// it): they refuse with one line and leave the target untouched.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, cliInProcess, EXAMPLES, expectNoStack, tempDir } from './support.ts';

function plant(dir: string, name: string): string {
  const victim = path.join(tempDir('nrh-victim-'), 'victim.txt');
  fs.writeFileSync(victim, 'precious\n');
  fs.mkdirSync(dir, { recursive: true });
  fs.symlinkSync(victim, path.join(dir, name));
  return victim;
}

describe('CLI outputs planted as symlinks', () => {
  for (const backend of ['memory', 'auto']) {
    it(`demo (--backend ${backend}) refuses a symlinked hooks.jsonl`, () => {
      const out = tempDir();
      const victim = plant(out, 'hooks.jsonl');
      const result = cli(['demo', '--out', out, '--fast', '--backend', backend]);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(/hooks\.jsonl: it is a symbolic link/);
      expectNoStack(result.stderr);
      expect(fs.readFileSync(victim, 'utf8')).toBe('precious\n');
    });

    it(`demo (--backend ${backend}) refuses a symlinked atof/demo-atof.jsonl`, async () => {
      const out = tempDir();
      const victim = plant(path.join(out, 'atof'), 'demo-atof.jsonl');
      const result = await cliInProcess(['demo', '--out', out, '--fast', '--backend', backend]);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(/demo-atof\.jsonl: it is a symbolic link/);
      expect(fs.readFileSync(victim, 'utf8')).toBe('precious\n');
    });
  }

  it('replay refuses a symlinked atof/<recording>-atof.jsonl', () => {
    const out = tempDir();
    const victim = plant(path.join(out, 'atof'), 'plain-chat-atof.jsonl');
    const result = cli(['replay', path.join(EXAMPLES, 'plain-chat.hooks.jsonl'), '--out', out]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/symbolic link/);
    expectNoStack(result.stderr);
    expect(fs.readFileSync(victim, 'utf8')).toBe('precious\n');
  });
});
