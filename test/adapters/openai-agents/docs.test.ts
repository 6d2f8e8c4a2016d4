// docs/adapters/openai-agents.md: its snippet runs as written, importing the
// package by name (dist/), on Node, Bun and Deno, against the OpenAI API as a
// loopback server speaking the Responses wire format (OPENAI_BASE_URL), with
// the SDK's trace export off (OPENAI_AGENTS_DISABLE_TRACING) so nothing
// leaves the machine; the trajectory it writes is checked.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { FakeOpenAI, dated } from './wire.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const page = readFileSync(path.join(root, 'docs/adapters/openai-agents.md'), 'utf8');
const snippet = /```ts\n([\s\S]*?)```/.exec(page)![1]!;

const api = new FakeOpenAI();
let server: Server;
let baseUrl = '';

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const answer = await api.fetch(`http://fake${request.url}`, { method: request.method, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(answer.status, Object.fromEntries(answer.headers));
      response.end(Buffer.from(await answer.arrayBuffer()));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
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

describe('docs/adapters/openai-agents.md', () => {
  for (const [runtime, extension, command] of runtimes) {
    it(`its snippet runs as written on ${runtime} and records the run`, async () => {
      api.load({
        'gpt-4.1': [
          { calls: [{ id: 'call_tokyo', name: 'get_weather', args: { city: 'Tokyo' } }], usage: { input: 90, output: 14, cached: 32 } },
          { text: 'It is sunny in Tokyo.', usage: { input: 130, output: 8, cached: 64 } },
        ],
      });
      // Inside the package (so 'nemo-relay-hooks' resolves to itself), run from an empty folder.
      const home = path.join(root, '.tmp', 'docs-snippets');
      mkdirSync(home, { recursive: true });
      const folder = mkdtempSync(path.join(home, `openai-agents-${runtime}-`));
      const file = path.join(folder, `snippet${extension}`);
      writeFileSync(file, snippet);
      const cwd = mkdtempSync(path.join(tmpdir(), `nrh-docs-agents-${runtime}-`));
      const [binary, ...args] = command(file);
      const env = { ...process.env, OPENAI_API_KEY: 'sk-test-not-a-key', OPENAI_BASE_URL: baseUrl, OPENAI_AGENTS_DISABLE_TRACING: '1', NO_COLOR: '1', NODE_ENV: 'production' };
      // Not spawnSync: the API answers from this process's event loop.
      const result = await runChild(binary!, args, cwd, env);
      rmSync(folder, { recursive: true, force: true });
      expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
      expect(result.stdout).toContain('It is sunny in Tokyo.');
      const files = readdirSync(path.join(cwd, 'trajectories'));
      expect(files).toHaveLength(1);
      const doc = JSON.parse(readFileSync(path.join(cwd, 'trajectories', files[0]!), 'utf8'));
      expect(validateAtif(doc)).toEqual([]);
      expect(doc.agent.name).toBe('Weather Agent');
      const steps = doc.steps as Array<Record<string, any>>;
      expect(steps[0]).toMatchObject({ source: 'user', message: 'What is the weather in Tokyo?' });
      expect(steps.flatMap((step) => step.tool_calls ?? []).map((call: Record<string, any>) => call.tool_call_id)).toEqual(['call_tokyo']);
      expect(steps.filter((step) => step.source === 'agent').map((step) => step.model_name)).toEqual([dated('gpt-4.1'), dated('gpt-4.1')]);
      expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: 220, total_completion_tokens: 22, total_cached_tokens: 96 });
      rmSync(cwd, { recursive: true, force: true });
    }, 130_000);
  }
});
