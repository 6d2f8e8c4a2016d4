// Runs the nemo-relay-hooks CLI in a child process, the way users do: Node
// runs the built dist/ (rebuilt by the suite's globalSetup), Bun and Deno
// run the TypeScript entry directly, so each runtime's test run exercises
// that runtime's CLI.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAtofJsonl, validateAtif, validateAtofEvents } from '../../src/formats/index.ts';
import { runCli } from '../../src/cli/dispatch.ts';
import { PLAIN, type CliIo } from '../../src/cli/io.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const EXAMPLES = path.join(ROOT, 'examples');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export const runtime: 'node' | 'bun' | 'deno' = process.versions.deno ? 'deno' : process.versions.bun ? 'bun' : 'node';

export function command(): { file: string; args: string[] } {
  if (runtime === 'deno') return { file: process.execPath, args: ['run', '-A', path.join(ROOT, 'src/cli/main.ts')] };
  if (runtime === 'bun') return { file: process.execPath, args: [path.join(ROOT, 'src/cli/main.ts')] };
  return { file: process.execPath, args: [path.join(ROOT, 'dist/src/cli/main.js')] };
}

export function cli(args: readonly string[], options: { env?: Record<string, string | undefined>; cwd?: string; timeoutMs?: number; input?: string | Uint8Array } = {}): CliResult {
  const { file, args: prefix } = command();
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1', FORCE_COLOR: undefined, NEMO_RELAY_HOOKS_BACKEND: undefined };
  for (const [key, value] of Object.entries(options.env ?? {})) env[key] = value;
  const removed = Object.keys(env).filter((key) => env[key] === undefined);
  for (const key of removed) delete env[key];
  // Deno's spawn passes the parent's whole environment on even when `env`
  // leaves a variable out: there, a shell unsets what was removed first.
  const unset = runtime === 'deno' ? removed.filter((key) => key in process.env) : [];
  const [program, programArgs] =
    unset.length === 0
      ? [file, [...prefix, ...args]]
      : ['/bin/sh', ['-c', `unset ${unset.join(' ')}; exec "$0" "$@"`, file, ...prefix, ...args]];
  const result = spawnSync(program, programArgs, {
    cwd: options.cwd ?? ROOT,
    env: env as NodeJS.ProcessEnv,
    encoding: 'utf8',
    timeout: options.timeoutMs ?? 120_000,
    maxBuffer: 64 * 1024 * 1024,
    ...(options.input !== undefined ? { input: options.input } : {}),
  });
  if (result.error) throw result.error;
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

/**
 * Runs the CLI in this process: the same dispatcher and commands as the
 * executable, with stdout and stderr captured, no terminal, and the
 * environment a child of `cli()` would get (the working directory is the
 * checkout's). For cases about what a command prints and its exit code:
 * a child process per case costs a runtime start and the CLI's load each
 * time, while what the executable itself adds (the entry, stdin, signals,
 * the exit) keeps its cases on `cli()`.
 *
 * `options.env` is set on `process.env` for the call too (a few settings
 * are read from the process, as in the executable) and restored after it.
 */
export async function cliInProcess(args: readonly string[], options: { env?: Record<string, string | undefined> } = {}): Promise<CliResult> {
  const overrides: Record<string, string | undefined> = { NO_COLOR: '1', FORCE_COLOR: undefined, NEMO_RELAY_HOOKS_BACKEND: undefined, ...options.env };
  const saved = new Map(Object.keys(overrides).map((key) => [key, process.env[key]] as const));
  const put = (key: string, value: string | undefined) => {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  };
  for (const [key, value] of Object.entries(overrides)) put(key, value);
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    out: (text) => void (stdout += text),
    err: (text) => void (stderr += text),
    stderrIsTty: false,
    style: PLAIN,
    env: { ...process.env },
    cwd: ROOT,
  };
  try {
    const code = await runCli(args, io);
    return { code, stdout, stderr };
  } finally {
    for (const [key, value] of saved) put(key, value);
  }
}

export function tempDir(prefix = 'nrh-cli-'): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** No stack trace: no "    at " frames and no multi-line error dumps. */
export function expectNoStack(stderr: string): void {
  if (/^\s+at /m.test(stderr)) throw new Error(`stderr has a stack trace:\n${stderr}`);
}

/** Validation errors of an ATIF or ATOF file, as readable strings (empty = valid). */
export function fileErrors(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  if (file.endsWith('.json')) return validateAtif(JSON.parse(text)).map((e) => `${e.path}: ${e.rule}: ${e.message}`);
  const parsed = parseAtofJsonl(text);
  return [...parsed.errors, ...validateAtofEvents(parsed.events)].map((e) => `${e.path}: ${e.rule}: ${e.message}`);
}

/** Every .json/.jsonl file under `dir` (recursively). */
export function outputFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...outputFiles(full));
    else if (/\.jsonl?$/.test(entry.name)) found.push(full);
  }
  return found.sort();
}
