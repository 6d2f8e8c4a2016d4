// README.md's AI SDK start, run as written (importing the package by name,
// from an empty folder, on the runtime running the suite) against the OpenAI
// Responses API served on loopback (OPENAI_BASE_URL, which @ai-sdk/openai
// reads). With nothing configured, the plugin records to
// ./nemo-relay-output/ and says where: the trajectory it wrote is checked.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { loopbackApi, repoRoot, runSnippet, tsSnippets, userEnv, type SnippetRuntime } from '../support/doc-snippets.ts';
import { FakeProvider } from '../adapters/ai-sdk/wire.ts';

const page = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
const aiSdk = tsSnippets(page).find((snippet) => snippet.includes("from 'nemo-relay-hooks/ai-sdk'"))!;
const runtime: SnippetRuntime = process.versions.deno ? 'deno' : process.versions.bun ? 'bun' : 'node';

let api = new FakeProvider();
let server: { url: string; close(): Promise<void> };
beforeAll(async () => {
  server = await loopbackApi((url, init) => api.fetch(url, init));
});
afterAll(() => server.close());

describe('README.md', () => {
  it(`its AI SDK start runs as written on ${runtime}, records by default and says where`, async () => {
    expect(aiSdk).toBeDefined();
    api = new FakeProvider();
    api.reply('responses', { id: 'resp_1', model: 'gpt-4o-2024-08-06', text: 'Hello!', usage: { input: 9, cached: 0, output: 3 } });
    const run = await runSnippet(aiSdk, runtime, 'readme-ai-sdk', userEnv({ OPENAI_API_KEY: 'sk-test-not-a-key', OPENAI_BASE_URL: `${server.url}/v1`, AI_SDK_LOG_WARNINGS: 'false', NO_COLOR: '1' }));
    try {
      expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
      expect(run.stdout.trim()).toBe('Hello!');
      const folder = path.join(run.cwd, 'nemo-relay-output');
      expect(run.stderr).toContain(`recording to ${folder}`);
      const files = readdirSync(folder).sort();
      // Named after the script (the folder has no package.json); the session is the one the snippet named.
      expect(files).toEqual(['snippet-atif-user-42.json', 'snippet-atof.jsonl']);
      const trajectory = JSON.parse(readFileSync(path.join(folder, files[0]!), 'utf8'));
      expect(validateAtif(trajectory)).toEqual([]);
      expect(trajectory.session_id).toBe('user-42');
      expect(trajectory.steps.map((step: { source: string; message: unknown }) => [step.source, step.message])).toEqual([
        ['user', 'Say hello.'],
        ['agent', 'Hello!'],
      ]);
      expect(trajectory.final_metrics).toMatchObject({ total_prompt_tokens: 9, total_completion_tokens: 3 });
    } finally {
      rmSync(run.cwd, { recursive: true, force: true });
    }
  });
});
