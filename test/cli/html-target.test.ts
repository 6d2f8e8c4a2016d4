import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, cliInProcess, EXAMPLES, tempDir } from './support.ts';

/** The demo's trajectory, replayed once for the file. */
async function demoTrajectory(): Promise<string> {
  const out = tempDir();
  expect((await cliInProcess(['replay', path.join(EXAMPLES, 'agent-session.hooks.jsonl'), '--out', out, '--quiet'])).code).toBe(0);
  return path.join(out, 'atif', 'agent-session-atif-demo-session-7f3a.json');
}

// A user gave `--html .`: the whole tree was printed, then `cannot write .: is a directory`.
describe('--html <folder>', () => {
  it('view writes <input>.html inside the folder, as cp names a copy', async () => {
    const trajectory = await demoTrajectory();
    const folder = tempDir();
    const result = cli(['view', trajectory, '--html', '.'], { cwd: folder });
    expect(result.stderr).toBe('wrote agent-session-atif-demo-session-7f3a.html\n');
    expect(result.code).toBe(0);
    expect(readFileSync(path.join(folder, 'agent-session-atif-demo-session-7f3a.html'), 'utf8')).toMatch(/^<!doctype html>/);
  });

  it('view names the page after an ATOF input without .jsonl, and view.html for several inputs', async () => {
    const folder = tempDir();
    const atof = path.join(EXAMPLES, 'native', 'plugin-session.atof.jsonl');
    expect((await cliInProcess(['view', atof, '--html', `${folder}/`])).code).toBe(0);
    expect(existsSync(path.join(folder, 'plugin-session.atof.html'))).toBe(true);
    expect((await cliInProcess(['view', atof, path.join(EXAMPLES, 'native', 'claude-code-session.atof.jsonl'), '--html', folder])).code).toBe(0);
    expect(existsSync(path.join(folder, 'view.html'))).toBe(true);
  });

  it('view refuses a target in a missing folder before printing anything', async () => {
    const folder = tempDir();
    const result = await cliInProcess(['view', path.join(EXAMPLES, 'native', 'plugin-session.atof.jsonl'), '--html', path.join(folder, 'nope', 'x.html')]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`nemo-relay-hooks: cannot write ${path.join(folder, 'nope', 'x.html')}: no folder ${path.join(folder, 'nope')} (create it first)\n`);
  });

  it('view refuses a missing folder given as "dir/" before printing anything', async () => {
    const folder = path.join(tempDir(), 'missing');
    const result = await cliInProcess(['view', path.join(EXAMPLES, 'native', 'plugin-session.atof.jsonl'), '--html', `${folder}/`]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('(create it first)');
  });

  it('compare writes <a>-vs-<b>.html inside the folder', async () => {
    const trajectory = await demoTrajectory();
    const other = path.join(tempDir(), 'rerun.json');
    copyFileSync(trajectory, other);
    const folder = tempDir();
    const result = await cliInProcess(['compare', trajectory, other, '--html', folder]);
    expect(result.code).toBe(0);
    const page = path.join(folder, 'agent-session-atif-demo-session-7f3a-vs-rerun.html');
    expect(result.stderr).toBe(`wrote ${page}\n`);
    expect(readFileSync(page, 'utf8')).toMatch(/^<!doctype html>/);
  });

  it('compare refuses a target in a missing folder as an input error (exit 2), printing nothing else', async () => {
    const trajectory = await demoTrajectory();
    const target = path.join(tempDir(), 'nope', 'diff.html');
    const result = await cliInProcess(['compare', trajectory, trajectory, '--html', target]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(`cannot write ${target}: no folder`);
  });

  it('convert and replay take --out as a folder and refuse a file there before reading the input, saying the path is a file (not "a parent is not a directory")', async () => {
    const file = path.join(tempDir(), 'out.txt');
    mkdirSync(path.dirname(file), { recursive: true });
    copyFileSync(path.join(EXAMPLES, 'native', 'plugin-session.atof.jsonl'), file);
    const converted = await cliInProcess(['convert', path.join(EXAMPLES, 'native', 'plugin-session.atof.jsonl'), '--out', file]);
    expect(converted.code).toBe(1);
    expect(converted.stdout).toBe('');
    expect(converted.stderr).toBe(`nemo-relay-hooks: cannot write to ${file}: it is a file, not a folder\n`);
    const replayed = await cliInProcess(['replay', path.join(EXAMPLES, 'agent-session.hooks.jsonl'), '--out', file]);
    expect(replayed.code).toBe(1);
    expect(replayed.stdout).toBe('');
    expect(replayed.stderr).toBe(`nemo-relay-hooks: cannot write to ${file}: it is a file, not a folder\n`);
  });
});
