// docs/adapters/langchain.md: its snippet runs as written, importing the
// package by name (dist/), on Node, Bun and Deno, against a loopback server
// speaking Anthropic's Messages wire format (ANTHROPIC_BASE_URL), and the
// trajectory it writes is checked against what the run did.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { anthropicMessage, scriptedFetch, type WireReply } from '../support/provider-wire.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const page = readFileSync(path.join(root, 'docs/adapters/langchain.md'), 'utf8');
const snippet = /```ts\n([\s\S]*?)```/.exec(page)![1]!;
const CLAUDE = 'claude-sonnet-4-5-20250929';

let replies: WireReply[] = [];
let server: Server;
let baseUrl = '';
let api = scriptedFetch([]);

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const answer = await api.fetch(`http://loopback${request.url}`, { method: request.method, body: Buffer.concat(chunks).toString('utf8') } as RequestInit);
      response.writeHead(answer.status, Object.fromEntries(answer.headers));
      response.end(Buffer.from(await answer.arrayBuffer()));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function runChild(binary: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
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
      resolve({ status, stdout, stderr });
    });
  });
}

const runtimes: Array<[string, string, (file: string) => string[]]> = [
  ['node', '.mjs', (file) => [process.execPath.includes('node') ? process.execPath : 'node', file]],
  ['bun', '.ts', (file) => [path.join(root, 'node_modules/.bin/bun'), file]],
  ['deno', '.ts', (file) => [path.join(root, 'node_modules/.bin/deno'), 'run', '-A', file]],
];

describe('docs/adapters/langchain.md', () => {
  for (const [runtime, extension, command] of runtimes) {
    it(`its snippet runs as written on ${runtime} and records the run`, async () => {
      replies = [
        anthropicMessage({
          id: 'msg_01Ask',
          model: CLAUDE,
          content: [{ type: 'text', text: 'Let me look.' }, { type: 'tool_use', id: 'toolu_01Paris', name: 'get_weather', input: { city: 'Paris' } }],
          usage: { input_tokens: 270, output_tokens: 40, cache_creation_input_tokens: 3000 },
        }),
        anthropicMessage({ id: 'msg_02Say', model: CLAUDE, content: [{ type: 'text', text: 'It is sunny in Paris.' }], usage: { input_tokens: 194, output_tokens: 12, cache_read_input_tokens: 1216 } }),
      ];
      api = scriptedFetch(replies);
      // Inside the package (so 'nemo-relay-hooks' resolves to itself), run from an empty folder.
      const home = path.join(root, '.tmp', 'docs-snippets');
      mkdirSync(home, { recursive: true });
      const folder = mkdtempSync(path.join(home, `langchain-${runtime}-`));
      const file = path.join(folder, `snippet${extension}`);
      writeFileSync(file, snippet);
      const cwd = mkdtempSync(path.join(tmpdir(), `nrh-docs-langchain-${runtime}-`));
      const [binary, ...args] = command(file);
      const env = { ...process.env, ANTHROPIC_API_KEY: 'sk-ant-test-not-a-key', ANTHROPIC_BASE_URL: baseUrl, NO_COLOR: '1' };
      const result = await runChild(binary!, args, cwd, env);
      rmSync(folder, { recursive: true, force: true });
      expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
      expect(result.stdout).toContain('It is sunny in Paris.');
      expect(api.requests.map((r) => r.url)).toEqual([`http://loopback/v1/messages`, `http://loopback/v1/messages`]);
      const files = readdirSync(path.join(cwd, 'trajectories'));
      expect(files).toHaveLength(1);
      expect(files[0]).toMatch(/-atif-user-42\.json$/); // one file, for the thread_id
      const doc = JSON.parse(readFileSync(path.join(cwd, 'trajectories', files[0]!), 'utf8'));
      expect(validateAtif(doc)).toEqual([]);
      expect(doc.session_id).toBe('user-42');
      expect(doc.agent.name).toBe('weather_agent'); // createAgent's name
      const steps = doc.steps as Array<Record<string, any>>;
      expect(steps[0]).toMatchObject({ source: 'user', message: 'What is the weather in Paris?' });
      expect(steps.flatMap((step) => step.tool_calls ?? []).map((call: Record<string, any>) => call.tool_call_id)).toEqual(['toolu_01Paris']);
      expect(steps.filter((step) => step.source === 'agent').map((step) => step.model_name)).toEqual([CLAUDE, CLAUDE]);
      // 3,270 and 1,410 input tokens, as LangChain reports them: each counted once.
      expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: 4680, total_completion_tokens: 52, total_cached_tokens: 4216 });
      rmSync(cwd, { recursive: true, force: true });
    }, 130_000);
  }
});
