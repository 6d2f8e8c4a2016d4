// docs/adapters/ai-sdk.md: its snippet runs as written, importing the package
// by name (dist/), on Node, Bun and Deno, against the OpenAI API as a loopback
// server speaking the Responses wire format (OPENAI_BASE_URL, which
// @ai-sdk/openai reads), and the trajectory it writes is checked. On Node it
// runs again with @ai-sdk/openai 3.x, what npm installs on Node 20 (the
// import names the alias, test/support/ai-sdk-providers.ts); Bun and Deno
// do not skip a major for its engines.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { SNIPPET_RUNTIMES, loopbackApi, repoRoot, runSnippet, tsSnippets, userEnv } from '../../support/doc-snippets.ts';
import { FakeProvider } from './wire.ts';

const snippets = tsSnippets(readFileSync(path.join(repoRoot, 'docs/adapters/ai-sdk.md'), 'utf8'));

let api = new FakeProvider();
let server: { url: string; close(): Promise<void> };
beforeAll(async () => {
  server = await loopbackApi((url, init) => api.fetch(url, init));
});
afterAll(() => server.close());

describe('docs/adapters/ai-sdk.md', () => {
  it('has two programs, the ones run below, the chat route as a fragment (chat-route.test.ts serves that route), the gateway call as one (gateway.test.ts runs it), the OpenRouter call (openrouter.test.ts runs it), the Azure call (azure.test.ts runs it), the Ollama call (ollama.test.ts runs it) and the Bedrock call (bedrock.test.ts runs it)', () => {
    expect(snippets).toHaveLength(8);
    expect(snippets[1]).toContain('return result.toUIMessageStreamResponse();');
    expect(snippets[2]).toContain("model: 'anthropic/claude-sonnet-4.5',");
    expect(snippets[3]).toContain("model: openrouter('anthropic/claude-sonnet-4.5'),");
    expect(snippets[4]).toContain("baseURL: 'http://localhost:11434/v1'");
    expect(snippets[5]).toContain("model: azure('weather-gpt4o'),");
    expect(snippets[6]).toContain("model: ollama('qwen3'),");
    expect(snippets[7]).toContain("model: bedrock('us.anthropic.claude-3-5-sonnet-20241022-v2:0'),");
  });

  const runs = [...SNIPPET_RUNTIMES.map((runtime) => ({ runtime, major: '4.x' })), ...(SNIPPET_RUNTIMES.includes('node') ? [{ runtime: 'node' as const, major: '3.x' }] : [])];
  for (const { runtime, major } of runs) {
    it(`its snippet runs as written on ${runtime} with @ai-sdk/openai ${major} and records the run`, async () => {
      api = new FakeProvider();
      api.reply('responses', { id: 'resp_1', model: 'gpt-4o-2024-08-06', text: 'Let me check.', toolCalls: [{ id: 'call_paris', name: 'weather', args: { city: 'Paris' } }], usage: { input: 120, cached: 0, output: 18 } });
      api.reply('responses', { id: 'resp_2', model: 'gpt-4o-2024-08-06', text: 'It is sunny in Paris, 21°C.', usage: { input: 170, cached: 64, output: 11 } });
      const env = userEnv({ OPENAI_API_KEY: 'sk-test-not-a-key', OPENAI_BASE_URL: `${server.url}/v1`, AI_SDK_LOG_WARNINGS: 'false', NO_COLOR: '1' });
      const code = major === '4.x' ? snippets[0]! : snippets[0]!.replace("from '@ai-sdk/openai';", "from '@ai-sdk/openai-3';");
      expect(code).toContain(major === '4.x' ? "'@ai-sdk/openai'" : "'@ai-sdk/openai-3'");
      const result = await runSnippet(code, runtime, `ai-sdk-${major}`, env);
      const cwd = result.cwd;
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

  for (const runtime of SNIPPET_RUNTIMES) {
    it(`its OpenAI-compatible (Ollama) snippet runs on ${runtime} and records the call with the server's usage`, async () => {
      api = new FakeProvider();
      api.reply('chat', { server: 'ollama', id: 'chatcmpl-ollama', model: 'llama3.2', text: 'Hello!', usage: { input: 26, output: 3 } });
      // The one change to the program: Ollama's address is the loopback server's.
      const code = snippets[4]!.replace("'http://localhost:11434/v1'", `'${server.url}/v1'`);
      expect(code).not.toBe(snippets[4]);
      const result = await runSnippet(code, runtime, 'ai-sdk-ollama', userEnv({ AI_SDK_LOG_WARNINGS: 'false', NO_COLOR: '1' }));
      expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
      expect(result.stdout).toContain('Hello! 26 3');
      expect(api.requests.map((request) => new URL(request.url).pathname)).toEqual(['/v1/chat/completions']);
      const files = readdirSync(path.join(result.cwd, 'trajectories'));
      expect(files).toHaveLength(1);
      const doc = JSON.parse(readFileSync(path.join(result.cwd, 'trajectories', files[0]!), 'utf8'));
      expect(validateAtif(doc)).toEqual([]);
      const steps = doc.steps as Array<Record<string, any>>;
      expect(steps.map((step) => [step.source, step.message])).toEqual([
        ['user', 'Say hello.'],
        ['agent', 'Hello!'],
      ]);
      expect(steps[1]!.model_name).toBe('llama3.2');
      expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: 26, total_completion_tokens: 3 });
      rmSync(result.cwd, { recursive: true, force: true });
    }, 130_000);
  }
});
