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

// The folders inside --out that the files go to follow the rule the plugin's
// outputs follow (src/shared/safe-path.ts): a sub-folder planted as a link out
// of the output folder is refused, before anything is written through it.
describe('CLI output sub-folders planted as symlinks out of --out', () => {
  /** `out/<name>` as a link to a new, empty folder elsewhere; returns that folder. */
  function linkOut(out: string, name: string): string {
    const elsewhere = tempDir('nrh-elsewhere-');
    fs.mkdirSync(path.dirname(path.join(out, name)), { recursive: true });
    fs.symlinkSync(elsewhere, path.join(out, name));
    return elsewhere;
  }

  function expectRefused(result: { code: number; stderr: string }, out: string, sub: string, elsewhere: string): void {
    const folder = path.join(out, sub);
    expect(result.code).toBe(1);
    // One line, naming the folder and where its link leads.
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain(`cannot write to ${folder}: it is a symbolic link out of`);
    expect(result.stderr).toContain(fs.realpathSync(elsewhere));
    expectNoStack(result.stderr);
    expect(fs.readdirSync(elsewhere)).toEqual([]);
    // Refused before the run and before the other sub-folder is made: --out holds only the link.
    expect(fs.readdirSync(out)).toEqual([sub]);
  }

  for (const sub of ['atif', 'atof']) {
    it(`replay refuses a linked ${sub}/`, async () => {
      const out = tempDir();
      const elsewhere = linkOut(out, sub);
      const result = await cliInProcess(['replay', path.join(EXAMPLES, 'plain-chat.hooks.jsonl'), '--out', out, '--quiet']);
      expectRefused(result, out, sub, elsewhere);
    });

    it(`demo refuses a linked ${sub}/`, async () => {
      const out = tempDir();
      const elsewhere = linkOut(out, sub);
      const result = await cliInProcess(['demo', '--out', out, '--fast', '--backend', 'memory']);
      expectRefused(result, out, sub, elsewhere);
    });
  }

  it('replay still writes through a linked sub-folder that stays inside --out', async () => {
    const out = tempDir();
    fs.mkdirSync(path.join(out, 'kept'));
    fs.symlinkSync(path.join(out, 'kept'), path.join(out, 'atif'));
    const result = await cliInProcess(['replay', path.join(EXAMPLES, 'plain-chat.hooks.jsonl'), '--out', out, '--quiet']);
    expect(result.code).toBe(0);
    expect(fs.readdirSync(path.join(out, 'kept')).filter((name) => name.endsWith('.json'))).toHaveLength(1);
  });

  it('convert refuses a --template folder that is a link out of --out', async () => {
    const out = tempDir();
    const elsewhere = linkOut(out, 'sub');
    const result = await cliInProcess(['convert', path.join(EXAMPLES, 'native', 'claude-code-session.atof.jsonl'), '--out', out, '--template', 'sub/{session_id}.json', '--quiet']);
    expect(result.code).toBe(1);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^nemo-relay-hooks: cannot write .*sub.*symbolic link out of/);
    expect(result.stderr).not.toContain('internal error');
    expect(fs.readdirSync(elsewhere)).toEqual([]);
  });
});
