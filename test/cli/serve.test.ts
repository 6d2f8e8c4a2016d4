// `view --serve` without a browser: what the server answers, what it refuses
// (paths outside the folders, other hosts), how it follows the folders, and
// that Ctrl-C ends it cleanly. The pages in Chromium: test/slow/serve-browser.test.ts.
import { appendFileSync, copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, cliInProcess, command, EXAMPLES, expectNoStack, ROOT, runtime, tempDir } from './support.ts';
import { serve } from './serve-support.ts';

interface Entry { text: { started: string; duration: string; tokens: string; cost: string }; durationUs: number | null; key: string; file: string; kind: string; session: string; llmCalls: number; toolCalls: number; errors: number; promptTokens: number; completionTokens: number; cachedTokens: number }

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; type: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, type: String(res.headers['content-type']) }));
    });
    req.on('error', reject);
    req.end();
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
      expect(first[0]!.text).toMatchObject({ tokens: '6,654 in / 290 out', cost: '' });
      expect(first[0]!.text.duration).toMatch(/^\d/);
      expect(first[0]!.text.started).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      const terminal = await cliInProcess(['view', path.join(folder, 'runs', 'first.json')]);
      expect(terminal.stdout).toContain(first[0]!.text.duration);

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
