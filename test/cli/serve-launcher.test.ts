// `npx nemo-relay-hooks view --serve` stopped with a SIGTERM to npx: npm and
// its `sh -c` end, the signal never reaches the CLI, and a user trial found
// the server still answering. Under npm the CLI stops when the process that
// started it is gone; started otherwise (`nohup … &`), it keeps
// serving. Here a shell with npm's `npm_command` stands in for npm on every
// runtime; on Node, `npm exec` itself.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { command, ROOT, runtime, tempDir } from './support.ts';

interface Launched {
  launcher: ChildProcess;
  /** The CLI's pid (the launcher's child). */
  cli: number;
  url: string;
  stderr: () => string;
  /** Resolves when the CLI's end of the pipes closes: it exited. */
  ended: Promise<void>;
}

/** `view --serve` under `sh -c` (not exec'd: the shell stays its parent, as npm's does), with `env` exported. */
async function launch(line: string[], exports: string): Promise<Launched> {
  const quoted = line.map((word) => `'${word.replaceAll("'", `'\\''`)}'`).join(' ');
  const launcher = spawn('/bin/sh', ['-c', `${exports} ${quoted}; :`], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  launcher.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  launcher.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const ended = new Promise<void>((resolve) => launcher.stderr!.on('close', () => resolve()));
  for (let i = 0; i < 300 && !/ at (http:\S+) \(Ctrl-C stops\)/.test(stdout); i++) await new Promise((resolve) => setTimeout(resolve, 100));
  const url = / at (http:\S+) \(Ctrl-C stops\)/.exec(stdout)?.[1];
  if (url === undefined) throw new Error(`view --serve printed no URL:\n${stdout}\n${stderr}`);
  return { launcher, cli: childOf(launcher.pid!), url, stderr: () => stderr, ended };
}

/** The pid of a process's one child (the CLI; under Deno, `deno run`). */
function childOf(pid: number): number {
  const listed = spawnSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' }).stdout.trim().split(/\s+/).filter(Boolean);
  expect(listed, `children of ${pid}`).toHaveLength(1);
  return Number(listed[0]);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function within(promise: Promise<void>, ms: number): Promise<boolean> {
  return Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);
}

const serveLine = () => {
  const { file, args } = command();
  return [file, ...args, 'view', '--serve', tempDir(), '--port', '0'];
};

describe('view --serve started by npm', () => {
  it('stops, saying why, when the process that started it is killed (npm\'s shell stands in)', async () => {
    const run = await launch(serveLine(), 'export npm_command=exec;');
    try {
      run.launcher.kill('SIGKILL');
      expect(await within(run.ended, 10_000), 'the CLI outlived its launcher by 10 s').toBe(true);
      expect(run.stderr()).toBe('stopped (the npm process that started it ended)\n');
    } finally {
      if (alive(run.cli)) process.kill(run.cli, 'SIGKILL');
    }
  });

  it('keeps serving when it was not started by npm (nohup … & outlives its shell)', async () => {
    const run = await launch(serveLine(), 'unset npm_command;');
    try {
      run.launcher.kill('SIGKILL');
      expect(await within(run.ended, 3000)).toBe(false);
      expect(alive(run.cli)).toBe(true);
      process.kill(run.cli, 'SIGINT');
      expect(await within(run.ended, 10_000)).toBe(true);
      expect(run.stderr()).toBe('stopped\n');
    } finally {
      if (alive(run.cli)) process.kill(run.cli, 'SIGKILL');
    }
  });

  it.skipIf(runtime !== 'node')('npm exec: a SIGTERM to npm stops the server too', async () => {
    const npm = spawnSync('npm', ['--version'], { encoding: 'utf8' });
    if (npm.status !== 0) {
      console.info('[serve-launcher] npm is not on PATH: the npm exec case is skipped');
      return;
    }
    const line = ['npm', 'exec', '--offline', '--', 'node', path.join(ROOT, 'dist/src/cli/main.js'), 'view', '--serve', tempDir(), '--port', '0'];
    const npmExec = spawn(line[0]!, line.slice(1), { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    npmExec.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    npmExec.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const ended = new Promise<void>((resolve) => npmExec.stderr.on('close', () => resolve()));
    for (let i = 0; i < 300 && !stdout.includes('(Ctrl-C stops)'); i++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(stdout).toContain('(Ctrl-C stops)');
    const shell = childOf(npmExec.pid!);
    const cli = childOf(shell);
    try {
      npmExec.kill('SIGTERM');
      expect(await within(ended, 10_000), 'the CLI outlived npm by 10 s').toBe(true);
      expect(stderr).toContain('stopped (the npm process that started it ended)\n');
    } finally {
      if (alive(cli)) process.kill(cli, 'SIGKILL');
    }
  });
  if (runtime !== 'node') console.info('[serve-launcher] the npm exec case runs on Node (npm runs the built CLI with node)');
});
