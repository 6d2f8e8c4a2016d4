// Running a documentation page's snippet as a user would: the code exactly as
// written, in a file inside the package (so 'nemo-relay-hooks' resolves to
// the package itself, dist/), started from an empty folder by Node, Bun or
// Deno, with a provider's API served on loopback from a fake `fetch`.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { nowMicros } from '../../src/shared/clock.ts';
import { runtime as suiteRuntime } from './child.ts';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export type SnippetRuntime = 'node' | 'bun' | 'deno';
/**
 * The runtimes a page's snippets run on: the suite's own. npm test runs them with Node, and the Bun and Deno suites
 * (`npm run test:bun`, `npm run test:deno`, both in .ci/run) with theirs, so CI runs each once; before, every suite
 * started all three, and npm test's Bun and Deno children were a share of its CPU (bench/RESULTS.md, "npm test's
 * time: the two-process MCP files on memory").
 */
export const SNIPPET_RUNTIMES: readonly SnippetRuntime[] = [suiteRuntime];

/** The ```ts blocks of a Markdown page, in order. */
export function tsSnippets(page: string): string[] {
  return [...page.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);
}

/** One request the loopback server answered, in wall-clock milliseconds (Unix, fractional). */
export interface LoopbackExchange {
  url: string;
  /** Its body had arrived. */
  receivedMs: number;
  /** The answer's last byte was handed to the socket. */
  lastByteMs: number;
}

/** Wall-clock now, in Unix milliseconds to the microsecond, by the clock the plugin stamps its events with. */
export function wallMs(): number {
  return nowMicros() / 1000;
}

/**
 * Serves `answer` on 127.0.0.1; `url` is the server's address. A streamed
 * answer is written as its body yields, so a paced stream reaches the client
 * paced; `exchanges` says when each request came and its answer ended.
 */
export async function loopbackApi(answer: (url: string, init: { method: string; body: string }) => Promise<Response>): Promise<{ url: string; exchanges: LoopbackExchange[]; close(): Promise<void> }> {
  const exchanges: LoopbackExchange[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const receivedMs = wallMs();
      const url = `http://fake${request.url}`;
      try {
        const reply = await answer(url, { method: request.method ?? 'GET', body: Buffer.concat(chunks).toString('utf8') });
        response.writeHead(reply.status, Object.fromEntries(reply.headers));
        if (reply.body !== null) for await (const chunk of reply.body as unknown as AsyncIterable<Uint8Array>) response.write(chunk);
        exchanges.push({ url, receivedMs, lastByteMs: wallMs() });
        response.end();
      } catch (error) {
        if (response.headersSent) {
          response.destroy();
          return;
        }
        response.writeHead(500, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { message: String(error), type: 'server_error' } }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exchanges,
    close: () => closeLoopback(server),
  };
}

/** Closes a loopback server whose answers were all sent, with the sockets clients keep open (Deno's fetch keeps them, which would hold `close()`). */
export function closeLoopback(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/**
 * The environment a user runs a snippet in: this process's, without the suite's `NEMO_RELAY_HOOKS_OUTPUTS=off`
 * (test/support/default-outputs.ts), so the plugin's default outputs are on, as after `npm install`, and land in the
 * run's empty folder; `extra` on top.
 */
export function userEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const { NEMO_RELAY_HOOKS_OUTPUTS: _off, ...env } = process.env;
  return { ...env, ...extra };
}

export interface SnippetRun {
  status: number | null;
  stdout: string;
  stderr: string;
  /** The empty folder it ran in (what it wrote is there); the caller removes it. */
  cwd: string;
}

/**
 * Runs `code` on `runtime` from a new empty folder. Asynchronous, so a loopback API in this process can answer.
 * `denoFlags`: the permission flags Deno runs it with (default `-A`), as a page tells a user to.
 */
export function runSnippet(code: string, runtime: SnippetRuntime, label: string, env: NodeJS.ProcessEnv, denoFlags: readonly string[] = ['-A']): Promise<SnippetRun> {
  const name = runtime === 'node' ? 'snippet.mjs' : 'snippet.ts';
  return runFiles({ [name]: code }, name, runtime, label, env, denoFlags);
}

/**
 * Writes `files` into one new folder inside the package (so 'nemo-relay-hooks' is the package) and runs `main`, one of
 * them, on `runtime` from a new empty folder, where what it writes lands.
 */
export async function runFiles(files: Record<string, string>, main: string, runtime: SnippetRuntime, label: string, env: NodeJS.ProcessEnv, denoFlags: readonly string[] = ['-A']): Promise<SnippetRun> {
  const home = path.join(repoRoot, '.tmp', 'docs-snippets');
  mkdirSync(home, { recursive: true });
  const folder = mkdtempSync(path.join(home, `${label}-${runtime}-`));
  for (const [name, code] of Object.entries(files)) writeFileSync(path.join(folder, name), code);
  const cwd = mkdtempSync(path.join(tmpdir(), `nrh-docs-${label}-${runtime}-`));
  const file = path.join(folder, main);
  const deno = [path.join(repoRoot, 'node_modules/.bin/deno'), 'run', ...denoFlags, file];
  const [binary, ...args] =
    runtime === 'node'
      ? [process.execPath.includes('node') ? process.execPath : 'node', file]
      : runtime === 'bun'
        ? [path.join(repoRoot, 'node_modules/.bin/bun'), file]
        : denoFlags.length === 1 && denoFlags[0] === '-A'
          ? deno
          : // Deno's child_process adds -A to a spawn of a deno executable, even one a shell is handed as an argument:
            // other flags go in a shell command line, where nothing is recognised.
            ['/bin/sh', '-c', `exec ${deno.map((word) => `'${word.replaceAll("'", `'\\''`)}'`).join(' ')}`];
  try {
    return await new Promise<SnippetRun>((resolve, reject) => {
      const child = spawn(binary!, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const timer = setTimeout(() => child.kill(), 120_000);
      child.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.on('close', (status) => {
        clearTimeout(timer);
        resolve({ status, stdout, stderr, cwd });
      });
    });
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
