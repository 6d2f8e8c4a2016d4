// docs/adapters/claude-agent-sdk.md: its snippet runs as written (the shared
// snippet runner: a file inside the package, so 'nemo-relay-hooks' resolves to
// dist/, started from an empty folder), with the SDK's real CLI against the
// loopback Anthropic API; it must print the answer and leave a valid
// trajectory of the tool call it made. Slow (the CLI starts once per
// runtime), so it is in test/slow. Under Node the snippet runs on all three
// runtimes; the Bun and Deno runs of this suite run it on their own only.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { offlineClaudeEnv, startAnthropicMock, type AnthropicMock } from '../support/anthropic-mock.ts';
import { SNIPPET_RUNTIMES, repoRoot, runSnippet, tsSnippets } from '../support/doc-snippets.ts';

const snippet = tsSnippets(readFileSync(path.join(repoRoot, 'docs/adapters/claude-agent-sdk.md'), 'utf8'))[0]!;

let mock: AnthropicMock;
beforeAll(async () => {
  mock = await startAnthropicMock((request) =>
    request.toolResults.length === 0
      ? { blocks: [{ type: 'tool_use', id: 'toolu_weather_docs', name: 'mcp__weather__get_weather', input: { city: 'Paris' } }], usage: { input: 20, output: 7 }, model: 'claude-docs-model' }
      : { blocks: [{ type: 'text', text: `It is ${request.toolResults[0]!.content} in Paris.` }], usage: { input: 40, output: 9, cacheRead: 12 }, model: 'claude-docs-model' },
  );
});
afterAll(() => mock.close());

describe('docs/adapters/claude-agent-sdk.md', () => {
  for (const runtime of SNIPPET_RUNTIMES) {
    it(`its snippet runs as written on ${runtime} and leaves a valid trajectory of what it did`, async () => {
      const offline = offlineClaudeEnv(mock.url);
      const requestsBefore = mock.requests.length;
      const result = await runSnippet(snippet, runtime, 'claude-agent-sdk', { ...offline.env, NO_COLOR: '1' });
      try {
        expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
        expect(result.stdout).toContain('It is Paris: sunny, 21 °C in Paris.');
        expect(mock.requests.length - requestsBefore).toBe(2);
        const files = readdirSync(path.join(result.cwd, 'trajectories'));
        expect(files).toHaveLength(1);
        const doc = JSON.parse(readFileSync(path.join(result.cwd, 'trajectories', files[0]!), 'utf8'));
        expect(validateAtif(doc)).toEqual([]);
        expect(doc.agent).toMatchObject({ name: 'claude-agent-sdk', model_name: 'claude-docs-model' });
        const steps = doc.steps as Array<Record<string, any>>;
        expect(steps[0]).toMatchObject({ source: 'user', message: 'What is the weather in Paris?' });
        const agent = steps.filter((step) => step.source === 'agent');
        expect(agent.map((step) => step.model_name)).toEqual(['claude-docs-model', 'claude-docs-model']);
        expect(agent[0]!.tool_calls.map((call: Record<string, unknown>) => [call.tool_call_id, call.function_name, call.arguments])).toEqual([['toolu_weather_docs', 'mcp__weather__get_weather', { city: 'Paris' }]]);
        expect(agent[0]!.observation.results[0].content).toBe('Paris: sunny, 21 °C');
        // Anthropic's input_tokens leave the cache read out; the step's prompt counts it in.
        expect(agent.map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens, step.metrics.cached_tokens ?? 0])).toEqual([[20, 7, 0], [52, 9, 12]]);
      } finally {
        rmSync(result.cwd, { recursive: true, force: true });
        rmSync(offline.home, { recursive: true, force: true });
      }
    }, 150_000);
  }
});
