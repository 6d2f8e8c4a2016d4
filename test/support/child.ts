// Runs an ES module script in a child process with the runtime running the
// tests, for defects that kill or exit the process (a crash cannot be caught
// in the test's own process). Scripts import the built dist/ (Node 20 cannot
// run .ts; the suite's global setup rebuilds it), through `dist(...)`.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export const runtime: 'node' | 'bun' | 'deno' = process.versions.deno ? 'deno' : process.versions.bun ? 'bun' : 'node';

/** `file:` URL of a built module, e.g. `dist('src/index.js')`, as a JS string literal. */
export function dist(module: string): string {
  return JSON.stringify(pathToFileURL(path.join(root, 'dist', module)).href);
}

export interface ChildResult {
  status: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

export interface ChildOptions {
  env?: Record<string, string | undefined>;
  /** Deno permission flags; default `-A`. Ignored by Node and Bun. */
  denoPermissions?: string[];
  /** Runs the runtime through a shell with this prefix, e.g. `ulimit -n 40;`. */
  shellPrefix?: string;
  cwd?: string;
  /** A command the shell is started through, e.g. `['unshare', '-m']` for a private mount namespace. */
  launcher?: string[];
}

export function runChild(source: string, options: ChildOptions = {}): ChildResult {
  const { file, dir } = scriptFile(source);
  const { command, args, env } = childCommand(file, options);
  const child = spawnSync(command, args, { encoding: 'utf8' as const, timeout: 120_000, maxBuffer: 64 * 1024 * 1024, env, cwd: options.cwd ?? dir });
  return { status: child.status, signal: child.signal, stdout: child.stdout ?? '', stderr: child.stderr ?? '' };
}

function scriptFile(source: string): { file: string; dir: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nrh-child-'));
  const file = path.join(dir, 'script.mjs');
  fs.writeFileSync(file, source);
  return { file, dir };
}

/** The command that runs `file` with the test's runtime and `options`. */
function childCommand(file: string, options: ChildOptions): { command: string; args: string[]; env: Record<string, string> } {
  const args =
    runtime === 'deno'
      ? ['run', ...(options.denoPermissions ?? ['-A']), '--config', path.join(root, 'deno.json'), file]
      : [file];
  const env = { ...process.env, ...(options.env ?? {}) };
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key];
  // Deno's child_process rewrites the arguments of a spawn of its own
  // executable (adding -A, even when the executable is an argument of a
  // shell), so permission flags would be lost: Deno children start through a
  // shell command line that names nothing the rewrite recognises.
  const shell = options.shellPrefix !== undefined || options.launcher !== undefined || runtime === 'deno';
  if (!shell) return { command: process.execPath, args, env: env as Record<string, string> };
  const line = [process.execPath, ...args].map(quote).join(' ');
  const [launcher, ...launcherArgs] = [...(options.launcher ?? []), '/bin/sh'] as unknown as [string, ...string[]];
  // Deno's spawn passes the parent's whole environment on even when `env`
  // leaves a variable out: the shell unsets what the caller removed.
  const removed = Object.entries(options.env ?? {}).filter(([, value]) => value === undefined).map(([key]) => key);
  const unset = removed.length > 0 ? `unset ${removed.map(quote).join(' ')};` : '';
  return { command: launcher, args: [...launcherArgs, '-c', `${unset}${options.shellPrefix ?? ''} exec ${line}`], env: env as Record<string, string> };
}

/** `text` as one POSIX shell word. */
function quote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

export interface SpawnedChild extends ChildResult {
  /** The JSON the script printed after `@@RESULT@@`, if any. */
  result: unknown;
  /** Milliseconds from the script's `@@DONE@@` line (printed when shutdown() returned) to the process's exit; null without the line or the exit. */
  exitAfterDoneMs: number | null;
  /** Whether the runner had to kill the child (it did not exit within `killAfterMs`). */
  killed: boolean;
}

/**
 * Like `runChild`, but asynchronous, so that loopback servers in the test's
 * own process keep answering while the child runs. A child still running
 * `killAfterMs` after it started is killed (and `killed` says so): a host
 * that never exits fails its test instead of hanging the suite.
 */
export function spawnChild(source: string, options: ChildOptions & { killAfterMs?: number } = {}): Promise<SpawnedChild> {
  const { file, dir } = scriptFile(source);
  const { command, args, env } = childCommand(file, options);
  const child = spawn(command, args, { env, cwd: options.cwd ?? dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let doneAt: number | null = null;
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    stdout += chunk;
    if (doneAt === null && stdout.includes('@@DONE@@')) doneAt = Date.now();
  });
  child.stderr.on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => {
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, options.killAfterMs ?? 60_000);
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      const exitAfterDoneMs = doneAt === null ? null : Date.now() - doneAt;
      const marker = stdout.split('@@RESULT@@')[1]?.split('\n')[0];
      resolve({ status, signal, stdout, stderr, killed, exitAfterDoneMs, result: marker === undefined ? undefined : JSON.parse(marker) });
    });
  });
}
