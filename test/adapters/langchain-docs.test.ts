// docs/adapters/langchain.md: its snippet runs as written, importing the
// package by name (dist/), on Node, Bun and Deno, against a loopback server
// speaking Anthropic's Messages wire format (ANTHROPIC_BASE_URL), and the
// trajectory it writes is checked against what the run did.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { SNIPPET_RUNTIMES, loopbackApi, repoRoot, runSnippet, tsSnippets, userEnv } from '../support/doc-snippets.ts';
import { anthropicMessage, scriptedFetch, type WireReply } from '../support/provider-wire.ts';

const snippet = tsSnippets(readFileSync(path.join(repoRoot, 'docs/adapters/langchain.md'), 'utf8'))[0]!;
const CLAUDE = 'claude-sonnet-4-5-20250929';

let replies: WireReply[] = [];
let server: { url: string; close(): Promise<void> };
let api = scriptedFetch([]);

beforeAll(async () => {
  server = await loopbackApi((url, init) => api.fetch(url, init as RequestInit));
});
afterAll(() => server.close());

describe('docs/adapters/langchain.md', () => {
  for (const runtime of SNIPPET_RUNTIMES) {
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
      const env = userEnv({ ANTHROPIC_API_KEY: 'sk-ant-test-not-a-key', ANTHROPIC_BASE_URL: server.url, NO_COLOR: '1' });
      const result = await runSnippet(snippet, runtime, 'langchain', env);
      const cwd = result.cwd;
      expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
      expect(result.stdout).toContain('It is sunny in Paris.');
      expect(api.requests.map((r) => r.url)).toEqual([`http://fake/v1/messages`, `http://fake/v1/messages`]);
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
