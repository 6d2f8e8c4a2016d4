// docs/adapters/openai-agents.md: its snippet runs as written, importing the
// package by name (dist/), on Node, Bun and Deno, against the OpenAI API as a
// loopback server speaking the Responses wire format (OPENAI_BASE_URL), with
// the SDK's trace export off (OPENAI_AGENTS_DISABLE_TRACING) so nothing
// leaves the machine; the trajectory it writes is checked.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { loopbackApi, repoRoot, runSnippet, SNIPPET_RUNTIMES, tsSnippets, userEnv } from '../../support/doc-snippets.ts';
import { FakeOpenAI, dated } from './wire.ts';

const page = readFileSync(path.join(repoRoot, 'docs/adapters/openai-agents.md'), 'utf8');
const snippet = tsSnippets(page)[0]!;

const api = new FakeOpenAI();
let server: { url: string; close(): Promise<void> };
beforeAll(async () => {
  server = await loopbackApi((url, init) => api.fetch(url, init));
});
afterAll(() => server.close());

describe('docs/adapters/openai-agents.md', () => {
  for (const runtime of SNIPPET_RUNTIMES) {
    it(`its snippet runs as written on ${runtime} and records the run`, async () => {
      api.load({
        'gpt-4.1': [
          { calls: [{ id: 'call_tokyo', name: 'get_weather', args: { city: 'Tokyo' } }], usage: { input: 90, output: 14, cached: 32 } },
          { text: 'It is sunny in Tokyo.', usage: { input: 130, output: 8, cached: 64 } },
        ],
      });
      const env = userEnv({ OPENAI_API_KEY: 'sk-test-not-a-key', OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_AGENTS_DISABLE_TRACING: '1', NO_COLOR: '1', NODE_ENV: 'production' });
      const result = await runSnippet(snippet, runtime, 'openai-agents', env);
      try {
        expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
        expect(result.stdout).toContain('It is sunny in Tokyo.');
        const files = readdirSync(path.join(result.cwd, 'trajectories'));
        expect(files).toHaveLength(1);
        const doc = JSON.parse(readFileSync(path.join(result.cwd, 'trajectories', files[0]!), 'utf8'));
        expect(validateAtif(doc)).toEqual([]);
        expect(doc.agent.name).toBe('Weather Agent');
        const steps = doc.steps as Array<Record<string, any>>;
        expect(steps[0]).toMatchObject({ source: 'user', message: 'What is the weather in Tokyo?' });
        expect(steps.flatMap((step) => step.tool_calls ?? []).map((call: Record<string, any>) => call.tool_call_id)).toEqual(['call_tokyo']);
        expect(steps.filter((step) => step.source === 'agent').map((step) => step.model_name)).toEqual([dated('gpt-4.1'), dated('gpt-4.1')]);
        expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: 220, total_completion_tokens: 22, total_cached_tokens: 96 });
      } finally {
        rmSync(result.cwd, { recursive: true, force: true });
      }
    }, 130_000);
  }
});
