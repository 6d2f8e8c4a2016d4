// `view --serve` without a browser: what the server answers, what it refuses
// (paths outside the folders, other hosts), how it follows the folders, and
// that Ctrl-C ends it cleanly. The pages in Chromium: test/slow/serve-browser.test.ts.
import { appendFileSync, copyFileSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawn, spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, cliInProcess, command, EXAMPLES, expectNoStack, ROOT, runtime, tempDir } from './support.ts';
import { get, serve } from './serve-support.ts';

interface Entry { text: { started: string; duration: string; tokens: string; cost: string }; durationUs: number | null; key: string; file: string; kind: string; session: string; llmCalls: number; toolCalls: number; errors: number; promptTokens: number; completionTokens: number; cachedTokens: number }

/** One request written byte for byte (no client normalizes its path); resolves with the status line's code, the headers and the body. */
function raw(url: string, requestLine: string): Promise<{ status: number; head: string; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(`${requestLine}\r\nHost: ${hostname}:${port}\r\nConnection: close\r\n\r\n`));
    let text = '';
    socket.setEncoding('latin1').on('data', (chunk: string) => (text += chunk));
    socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? resolve({ status: -1, head: '', body: text }) : reject(error)));
    socket.on('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      const end = text.indexOf('\r\n\r\n');
      resolve({ status, head: text.slice(0, end), body: text.slice(end + 4) });
    });
  });
}

async function sessions(url: string): Promise<Entry[]> {
  return (JSON.parse((await get(`${url}api/sessions`)).body) as { sessions: Entry[] }).sessions;
}

async function until<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('nemo-relay-hooks view --serve', () => {
  it('serves the sessions of a folder (ATIF and ATOF), follows new files and lines, refuses escapes, and stops on Ctrl-C', async () => {
    const recorded = tempDir();
    expect((await cliInProcess(['replay', path.join(EXAMPLES, 'agent-session.hooks.jsonl'), '--out', recorded, '--quiet'])).code).toBe(0);
    const folder = tempDir('nrh-serve-');
    mkdirSync(path.join(folder, 'runs'));
    copyFileSync(path.join(recorded, 'atif', 'agent-session-atif-demo-session-7f3a.json'), path.join(folder, 'runs', 'first.json'));
    writeFileSync(path.join(folder, 'package.json'), '{"name":"not-a-session"}');
    // A link to a file outside the folder is not followed.
    symlinkSync('/etc/hostname', path.join(folder, 'outside.json'));
    const server = await serve([folder, '--port', '0']);
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      const first = await sessions(server.url);
      expect(first).toHaveLength(1);
      expect(first[0]).toMatchObject({ kind: 'atif', session: 'demo-session-7f3a', llmCalls: 7, toolCalls: 5, errors: 2, promptTokens: 6654, completionTokens: 290, cachedTokens: 4352 });
      expect(first[0]!.file).toBe(path.join(folder, 'runs', 'first.json'));
      // The row's figures come as the text the terminal view prints for the same session (one formatting rule).
      expect(first[0]!.text).toMatchObject({ tokens: '6,654 in (4,352 cached) / 290 out', cost: '' });
      expect(first[0]!.text.duration).toMatch(/^\d/);
      expect(first[0]!.text.started).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      const terminal = await cliInProcess(['view', path.join(folder, 'runs', 'first.json')]);
      expect(terminal.stdout).toContain(first[0]!.text.duration);
      expect(terminal.stdout.split('\n')[0]).toContain(first[0]!.text.tokens);

      const index = await get(server.url);
      expect(index.status).toBe(200);
      expect(index.type).toBe('text/html; charset=utf-8');
      expect(index.body).toContain("connect-src 'self'");
      const page = await get(`${server.url}session?key=${encodeURIComponent(first[0]!.key)}`);
      expect(page.status).toBe(200);
      expect(page.body).toContain('tool delegate_task');

      // Nothing outside the catalog: no path is read from a request.
      for (const bad of ['session?key=%2Fetc%2Fpasswd%23x', 'session?key=..%2F..%2Fetc%2Fpasswd', '..%2F..%2Fetc%2Fpasswd', '//etc/passwd', 'runs/first.json', 'compare?a=x&b=y']) {
        const answer = await get(`${server.url}${bad}`);
        expect(answer.status, bad).toBe(404);
        expect(answer.body).not.toContain('root:');
      }
      expect((await get(server.url, { host: 'attacker.example:80' })).status).toBe(403);

      // A new session file appears; an ATOF file grows line by line.
      const atofLines = readFileSync(path.join(recorded, 'atof', 'agent-session-atof.jsonl'), 'utf8').trimEnd().split('\n');
      const half = Math.floor(atofLines.length / 2);
      writeFileSync(path.join(folder, 'live.atof.jsonl'), `${atofLines.slice(0, half).join('\n')}\n`);
      const partial = await until(async () => (await sessions(server.url)).find((entry) => entry.kind === 'atof'), 'the ATOF session');
      expect(partial.llmCalls).toBeLessThan(7);
      // A line still being written is not read until its newline arrives.
      const rest = `${atofLines.slice(half).join('\n')}\n`;
      appendFileSync(path.join(folder, 'live.atof.jsonl'), rest.slice(0, 40));
      await new Promise((resolve) => setTimeout(resolve, 2500));
      const unchanged = (await sessions(server.url)).find((entry) => entry.kind === 'atof')!;
      expect({ ...unchanged, modifiedMs: 0 }).toEqual({ ...partial, modifiedMs: 0 });
      appendFileSync(path.join(folder, 'live.atof.jsonl'), rest.slice(40));
      const whole = await until(async () => (await sessions(server.url)).find((entry) => entry.kind === 'atof' && entry.llmCalls === 7), 'the rest of the ATOF lines');
      expect(whole).toMatchObject({ toolCalls: 5, errors: 2, promptTokens: 6654, completionTokens: 290 });

      // A hook stream in the folder is listed as not read, with what to do.
      copyFileSync(path.join(EXAMPLES, 'agent-session.hooks.jsonl'), path.join(folder, 'recorded.hooks.jsonl'));
      const problems = await until(async () => {
        const body = JSON.parse((await get(`${server.url}api/sessions`)).body) as { problems: { file: string; problem: string }[] };
        return body.problems.find((entry) => entry.file.endsWith('recorded.hooks.jsonl'));
      }, 'the hook stream listed as a problem');
      expect(problems.problem).toBe('a recorded hook stream; run "nemo-relay-hooks replay" on it first');

      const both = await sessions(server.url);
      const compare = await get(`${server.url}compare?a=${encodeURIComponent(both[0]!.key)}&b=${encodeURIComponent(both[1]!.key)}`);
      expect(compare.status).toBe(200);
      expect(compare.body).toContain('<span class="ok">equivalent</span>: 10 steps the same');
    } finally {
      const ended = await server.stop();
      expect(ended.signal).toBeNull();
      expect(ended.code).toBe(0);
      expect(ended.stderr).toBe('stopped\n');
    }
  });

  it('answers escapes written byte for byte, links out of the folder and a file turned into a FIFO with a 4xx, never the file', async () => {
    const recorded = tempDir();
    expect((await cliInProcess(['replay', path.join(EXAMPLES, 'tool-loop.hooks.jsonl'), '--out', recorded, '--quiet'])).code).toBe(0);
    const atif = path.join(recorded, 'atif', 'tool-loop-atif-loop-session-4e19.json');
    // Outside the served folder: a session file and a secret beside it.
    const outside = tempDir('nrh-serve-outside-');
    copyFileSync(atif, path.join(outside, 'outside-session.json'));
    writeFileSync(path.join(outside, 'secret.json'), '{"secret":"outside-the-folder-7d1e"}');
    const folder = tempDir('nrh-serve-');
    copyFileSync(atif, path.join(folder, 'inside.json'));
    copyFileSync(path.join(recorded, 'atof', 'tool-loop-atof.jsonl'), path.join(folder, 'live.jsonl'));
    symlinkSync(outside, path.join(folder, 'linked-folder'));
    symlinkSync(path.join(outside, 'outside-session.json'), path.join(folder, 'linked.json'));
    const server = await serve([folder, '--port', '0']);
    try {
      const listed = await sessions(server.url);
      expect(listed.map((entry) => path.basename(entry.file)).sort()).toEqual(['inside.json', 'live.jsonl']);
      const secretPath = path.join(outside, 'secret.json');
      const targets = [
        '/../../../../../../etc/passwd',
        `/..${secretPath}`,
        '/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
        '/%2E%2E%2F%2E%2E%2F%2E%2E%2Fetc%2Fpasswd',
        '/..%5c..%5c..%5cetc%5cpasswd',
        '/%252e%252e/%252e%252e/etc/passwd',
        secretPath,
        `/${encodeURIComponent(secretPath)}`,
        `/session?key=${encodeURIComponent(secretPath)}`,
        `/session?key=${encodeURIComponent(`${folder}/../${path.basename(outside)}/secret.json#x`)}`,
        `/session?key=${encodeURIComponent(`${folder}/linked-folder/outside-session.json#loop-session-4e19`)}`,
        `/session?key=${encodeURIComponent(`${folder}/linked.json#loop-session-4e19`)}`,
        `/compare?a=${encodeURIComponent(secretPath)}&b=${encodeURIComponent(secretPath)}`,
        '/inside.json',
        '/linked-folder/secret.json',
        `/${'a'.repeat(200_000)}`,
        `/session?key=${'%2e'.repeat(50_000)}`,
      ];
      const served: string[] = [];
      for (const target of targets) {
        // Origin form, and the absolute form HTTP/1.1 servers must accept too (RFC 9112 §3.2.2).
        for (const requestLine of [`GET ${target} HTTP/1.1`, `GET http://127.0.0.1${target} HTTP/1.1`]) {
          const answer = await raw(server.url, requestLine);
          const shown = requestLine.length > 120 ? `${requestLine.slice(0, 120)}… (${requestLine.length} bytes)` : requestLine;
          const leaked = ['root:', 'outside-the-folder-7d1e', '"schema_version"', 'loop-session-4e19'].filter((text) => answer.body.includes(text));
          // Past the HTTP parser's header limit (16 KiB in Node) the runtime answers, before the server sees the request:
          // Node with 431, Deno by closing the connection.
          const refusedByParser = answer.status === -1 && requestLine.length > 16 * 1024;
          if ((!refusedByParser && (answer.status < 400 || answer.status >= 500)) || leaked.length > 0) served.push(`${shown}: ${answer.status}${leaked.length > 0 ? `, body has ${leaked.join(', ')}` : ''}`);
        }
      }
      expect(served).toEqual([]);
      expect((await get(server.url)).status).toBe(200);
      // The absolute form is routed by its path (it was answered as "/" whatever it asked for), and its host is checked like Host.
      const api = await raw(server.url, `GET ${server.url}api/sessions HTTP/1.1`);
      expect(api.status).toBe(200);
      expect(api.body).toContain('"sessions":[{"key":');
      expect((await raw(server.url, 'GET http://attacker.example/api/sessions HTTP/1.1')).status).toBe(403);
      expect((await raw(server.url, 'GET * HTTP/1.1')).status).toBe(400);

      // A served file turned into a FIFO (no writer) is dropped from the index; the server keeps answering.
      rmSync(path.join(folder, 'live.jsonl'));
      expect(spawnSync('mkfifo', [path.join(folder, 'live.jsonl')]).status).toBe(0);
      rmSync(path.join(folder, 'inside.json'));
      expect(spawnSync('mkfifo', [path.join(folder, 'inside.json')]).status).toBe(0);
      await until(async () => ((await sessions(server.url)).length === 0 ? true : undefined), 'the FIFOs left out of the index');
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect((await get(server.url)).status).toBe(200);
      expect(await sessions(server.url)).toEqual([]);
    } finally {
      const ended = await server.stop();
      expect(ended.signal).toBeNull();
      expect(ended.code).toBe(0);
      expectNoStack(ended.stderr);
    }
  });

  it('answers a path with doubled slashes as the path with single ones, and never redirects (//evil.com stays here)', async () => {
    const recorded = tempDir();
    expect((await cliInProcess(['replay', path.join(EXAMPLES, 'tool-loop.hooks.jsonl'), '--out', recorded, '--quiet'])).code).toBe(0);
    const folder = tempDir('nrh-serve-');
    copyFileSync(path.join(recorded, 'atif', 'tool-loop-atif-loop-session-4e19.json'), path.join(folder, 'run.json'));
    const server = await serve([folder, '--port', '0']);
    try {
      // A URL joined with one slash too many, as a user trial typed it: the index, not a 404.
      const joined = await get(`${server.url}/api/sessions`);
      expect(joined.status).toBe(200);
      const [entry] = (JSON.parse(joined.body) as { sessions: Entry[] }).sessions;
      expect(entry).toMatchObject({ session: 'loop-session-4e19' });
      for (const requestLine of ['GET //api/sessions HTTP/1.1', 'GET /api//sessions?limit=1 HTTP/1.1', `GET http://127.0.0.1//api/sessions HTTP/1.1`]) {
        const answer = await raw(server.url, requestLine);
        expect(answer.status, requestLine).toBe(200);
        expect(answer.body, requestLine).toContain('"session":"loop-session-4e19"');
      }
      const page = await raw(server.url, `GET ///session?key=${encodeURIComponent(entry!.key)} HTTP/1.1`);
      expect(page.status).toBe(200);
      expect(page.body).toContain('loop-session-4e19');
      // A path that reads as another host is a path here: not found, and no Location that would send a browser there.
      for (const target of ['//evil.com', '//evil.com/', '///evil.com/api/sessions', '/\\evil.com', '/%2F%2Fevil.com']) {
        const answer = await raw(server.url, `GET ${target} HTTP/1.1`);
        expect(answer.status, target).toBe(404);
        expect(answer.head.toLowerCase(), target).not.toContain('location:');
      }
    } finally {
      expect((await server.stop()).code).toBe(0);
    }
  });

  it('serves a folder named through a link as its real path, and still skips links inside it that lead out', async () => {
    const recorded = tempDir();
    expect((await cliInProcess(['replay', path.join(EXAMPLES, 'tool-loop.hooks.jsonl'), '--out', recorded, '--quiet'])).code).toBe(0);
    const outside = tempDir('nrh-serve-outside-');
    copyFileSync(path.join(recorded, 'atif', 'tool-loop-atif-loop-session-4e19.json'), path.join(outside, 'outside-session.json'));
    symlinkSync(outside, path.join(recorded, 'linked-folder'));
    symlinkSync(path.join(outside, 'outside-session.json'), path.join(recorded, 'linked.json'));
    // The folder the user names is a link (`rplink -> rp`): theirs, so it is followed.
    const link = path.join(tempDir('nrh-serve-link-'), 'rplink');
    symlinkSync(recorded, link);
    const server = await serve([link, '--port', '0']);
    try {
      const listed = await sessions(server.url);
      expect(listed.map((entry) => entry.file).sort()).toEqual([path.join(link, 'atif', 'tool-loop-atif-loop-session-4e19.json'), path.join(link, 'atof', 'tool-loop-atof.jsonl')]);
      const page = await get(`${server.url}session?key=${encodeURIComponent(listed[0]!.key)}`);
      expect(page.status).toBe(200);
      expect(page.body).toContain('loop-session-4e19');
    } finally {
      expect((await server.stop()).code).toBe(0);
    }
  });

  it('gives one line and an exit code for a missing folder, a bad port, a port in use, --serve with --json', async () => {
    const missing = cli(['view', '--serve', '/nonexistent/folder']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('nemo-relay-hooks: cannot serve /nonexistent/folder: no such file or directory\n');
    const port = await cliInProcess(['view', '--serve', '.', '--port', 'eighty']);
    expect(port.code).toBe(2);
    expect(port.stderr).toMatch(/^nemo-relay-hooks: --port must be a number from 0 to 65535 \(got "eighty"\)/);
    expect((await cliInProcess(['view', '--serve', '--json'])).code).toBe(2);
    expect((await cliInProcess(['view', 'x.json', '--port', '1'])).stderr).toMatch(/--port goes with --serve/);
    const first = await serve([tempDir(), '--port', '0']);
    try {
      const taken = new URL(first.url).port;
      const second = await cliInProcess(['view', '--serve', tempDir(), '--port', taken]);
      expect(second.code).toBe(1);
      expect(second.stderr).toBe(`nemo-relay-hooks: cannot serve on 127.0.0.1:${taken}: the port is in use (--port 0 picks a free one)\n`);
      for (const result of [missing, port, second]) expectNoStack(result.stderr);
    } finally {
      expect((await first.stop()).code).toBe(0);
    }
  });

  it('stops cleanly on a Ctrl-C sent the moment the URL is printed', async () => {
    // The signal handlers once went in after the URL line: a SIGINT sent from the
    // reader's own data callback killed the process (no exit code) in three runs of ten.
    const { file, args: prefix } = command();
    for (let i = 0; i < 10; i++) {
      const child = spawn(file, [...prefix, 'view', '--serve', tempDir(), '--port', '0'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      child.stdout.once('data', () => child.kill('SIGINT'));
      const ended = await new Promise<{ code: number | null; signal: string | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
      // Deno reports its child that handled SIGINT and exited 0 as killed by SIGINT (see serve-support.ts).
      const clean = runtime === 'deno' && ended.signal === 'SIGINT' && stderr === 'stopped\n' ? { code: 0, signal: null } : ended;
      expect({ ...clean, stderr, run: i }).toEqual({ code: 0, signal: null, stderr: 'stopped\n', run: i });
    }
  });
});
