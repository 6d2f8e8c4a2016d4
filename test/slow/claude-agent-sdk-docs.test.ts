// docs/adapters/claude-agent-sdk.md's snippet, run as written (its first
// ```ts block, unchanged) on Node, Bun and Deno, as a program of its own
// against the loopback Anthropic API: it must print the answer and leave a
// valid trajectory with the tool call it made. The snippet imports the
// package by name, so it is saved inside the package (.tmp/) where that
// name resolves to the package itself.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { offlineClaudeEnv, startAnthropicMock, type AnthropicMock } from '../support/anthropic-mock.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const page = readFileSync(path.join(root, 'docs/adapters/claude-agent-sdk.md'), 'utf8');
const snippet = /```ts\n([\s\S]*?)```/.exec(page)![1]!;
const bin = (name: string) => path.join(root, 'node_modules', '.bin', name);

function run(command: string, args: string[], cwd: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 150_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

let mock: AnthropicMock;
const snippets = path.join(root, '.tmp', 'docs-snippets');

beforeAll(async () => {
  mock = await startAnthropicMock((request) =>
    request.toolResults.length === 0
      ? { blocks: [{ type: 'tool_use', id: 'toolu_weather_docs', name: 'mcp__weather__get_weather', input: { city: 'Paris' } }], usage: { input: 20, output: 7 }, model: 'claude-docs-model' }
      : { blocks: [{ type: 'text', text: `It is ${request.toolResults[0]!.content} in Paris.` }], usage: { input: 40, output: 9, cacheRead: 12 }, model: 'claude-docs-model' },
  );
  mkdirSync(snippets, { recursive: true });
  // .mjs for Node (the snippet is TypeScript that is also plain JavaScript), .ts for Bun and Deno.
  writeFileSync(path.join(snippets, 'claude-agent-sdk.mjs'), snippet);
  writeFileSync(path.join(snippets, 'claude-agent-sdk.ts'), snippet);
});

afterAll(async () => {
  await mock.close();
});

// Under Node the snippet runs on all three runtimes; the Bun and Deno runs of this suite run it on their own only.
const here = typeof (globalThis as { Bun?: unknown }).Bun !== 'undefined' ? 'bun' : typeof (globalThis as { Deno?: unknown }).Deno !== 'undefined' ? 'deno' : 'node';
const runtimes = [
  ['node', 'node', [path.join(snippets, 'claude-agent-sdk.mjs')]],
  ['bun', bin('bun'), [path.join(snippets, 'claude-agent-sdk.ts')]],
  ['deno', bin('deno'), ['run', '-A', '--config', path.join(root, 'deno.json'), path.join(snippets, 'claude-agent-sdk.ts')]],
] as const;

describe('docs/adapters/claude-agent-sdk.md', () => {
  for (const [runtime, command, args] of runtimes.filter(([runtime]) => here === 'node' || runtime === here)) {
    it(`its snippet runs as written on ${runtime} and leaves a valid trajectory of what it did`, async () => {
      const cwd = mkdtempSync(path.join(tmpdir(), `nrh-claude-docs-${runtime}-`));
      const offline = offlineClaudeEnv(mock.url);
      try {
        const requestsBefore = mock.requests.length;
        const result = await run(command, [...args], cwd, { ...offline.env, NO_COLOR: '1' });
        expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
        expect(result.stdout).toContain('It is Paris: sunny, 21 °C in Paris.');
        expect(mock.requests.length - requestsBefore).toBe(2);
        const files = readdirSync(path.join(cwd, 'trajectories'));
        expect(files).toHaveLength(1);
        const doc = JSON.parse(readFileSync(path.join(cwd, 'trajectories', files[0]!), 'utf8'));
        expect(validateAtif(doc)).toEqual([]);
        const steps = doc.steps as Array<Record<string, any>>;
        expect(steps[0]).toMatchObject({ source: 'user', message: 'What is the weather in Paris?' });
        const agent = steps.filter((step) => step.source === 'agent');
        expect(agent.map((step) => step.model_name)).toEqual(['claude-docs-model', 'claude-docs-model']);
        expect(agent[0]!.tool_calls.map((call: Record<string, unknown>) => [call.function_name, call.arguments])).toEqual([['mcp__weather__get_weather', { city: 'Paris' }]]);
        expect(agent[0]!.observation.results[0].content).toBe('Paris: sunny, 21 °C');
        expect(agent.map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual([[20, 7], [52, 9]]);
      } finally {
        rmSync(cwd, { recursive: true, force: true });
        rmSync(offline.home, { recursive: true, force: true });
      }
    }, 160_000);
  }
});
