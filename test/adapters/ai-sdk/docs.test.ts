// docs/adapters/ai-sdk.md: its snippet runs as written, importing the package
// by name (dist/), on Node, Bun and Deno, against the OpenAI API as a loopback
// server speaking the Responses wire format (OPENAI_BASE_URL, which
// @ai-sdk/openai reads), and the trajectory it writes is checked.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { FakeProvider } from './wire.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const page = readFileSync(path.join(root, 'docs/adapters/ai-sdk.md'), 'utf8');
const snippets = [...page.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);

let api = new FakeProvider();
let server: Server;
let baseUrl = '';

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      try {
        const answer = await api.fetch(`http://fake${request.url}`, { body: Buffer.concat(chunks).toString('utf8') });
        response.writeHead(answer.status, Object.fromEntries(answer.headers));
        response.end(Buffer.from(await answer.arrayBuffer()));
      } catch (error) {
        response.writeHead(500, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { message: String(error), type: 'server_error' } }));
      }
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

describe('docs/adapters/ai-sdk.md', () => {
  it('has one snippet, the one run below', () => {
    expect(snippets).toHaveLength(1);
  });

  for (const [runtime, extension, command] of runtimes) {
    it(`its snippet runs as written on ${runtime} and records the run`, async () => {
      api = new FakeProvider();
      api.reply('responses', { id: 'resp_1', model: 'gpt-4o-2024-08-06', text: 'Let me check.', toolCalls: [{ id: 'call_paris', name: 'weather', args: { city: 'Paris' } }], usage: { input: 120, cached: 0, output: 18 } });
      api.reply('responses', { id: 'resp_2', model: 'gpt-4o-2024-08-06', text: 'It is sunny in Paris, 21°C.', usage: { input: 170, cached: 64, output: 11 } });
      // Inside the package (so 'nemo-relay-hooks' resolves to itself), run from an empty folder.
      const home = path.join(root, '.tmp', 'docs-snippets');
      mkdirSync(home, { recursive: true });
      const folder = mkdtempSync(path.join(home, `ai-sdk-${runtime}-`));
      const file = path.join(folder, `snippet${extension}`);
      writeFileSync(file, snippets[0]!);
      const cwd = mkdtempSync(path.join(tmpdir(), `nrh-docs-ai-sdk-${runtime}-`));
      const [binary, ...args] = command(file);
      const env = { ...process.env, OPENAI_API_KEY: 'sk-test-not-a-key', OPENAI_BASE_URL: baseUrl, AI_SDK_LOG_WARNINGS: 'false', NO_COLOR: '1' };
      // Not spawnSync: the API answers from this process's event loop.
      const result = await runChild(binary!, args, cwd, env);
      rmSync(folder, { recursive: true, force: true });
      expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
      expect(result.stdout).toContain('It is sunny in Paris, 21°C.');
      expect(api.requests.map((request) => new URL(request.url).pathname)).toEqual(['/v1/responses', '/v1/responses']);

      const files = readdirSync(path.join(cwd, 'trajectories'));
      expect(files).toHaveLength(1);
      const doc = JSON.parse(readFileSync(path.join(cwd, 'trajectories', files[0]!), 'utf8'));
      expect(validateAtif(doc)).toEqual([]);
      expect(doc.session_id).toBe('user-42');
      expect(doc.agent.name).toBe('weather-agent');
      const steps = doc.steps as Array<Record<string, any>>;
      expect(steps.map((step) => [step.source, step.message])).toEqual([
        ['user', 'What is the weather in Paris?'],
        ['agent', 'Let me check.'],
        ['agent', 'It is sunny in Paris, 21°C.'],
      ]);
      expect(steps[1]!.tool_calls.map((call: Record<string, any>) => call.tool_call_id)).toEqual(['call_paris']);
      expect(JSON.parse(steps[1]!.observation.results[0].content)).toEqual({ city: 'Paris', forecast: 'sunny', tempC: 21 });
      expect(steps.filter((step) => step.source === 'agent').map((step) => step.model_name)).toEqual(['gpt-4o-2024-08-06', 'gpt-4o-2024-08-06']);
      expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: 290, total_completion_tokens: 29, total_cached_tokens: 64 });
      rmSync(cwd, { recursive: true, force: true });
    }, 130_000);
  }
});
