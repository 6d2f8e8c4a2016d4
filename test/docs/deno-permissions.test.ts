// README.md's Deno permissions, used as written. The README names the flags
// the plugin needs and the ones the frameworks add; a user runs its starts
// with exactly those, not with -A (the other snippet tests use -A). The host
// start runs with the plugin's flags and writes its files without a
// permission message; with no flag at all it still runs and says what it could
// not read or write; the AI SDK start runs with the flags the paragraph
// names. Deno runs every case, whichever runtime runs the suite.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { FakeProvider } from '../adapters/ai-sdk/wire.ts';
import { loopbackApi, repoRoot, runSnippet, tsSnippets, userEnv } from '../support/doc-snippets.ts';

const page = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
const snippets = tsSnippets(page);
const host = snippets.find((snippet) => snippet.includes("hooks.emit('on_session_start'"))!;
const aiSdk = snippets.find((snippet) => snippet.includes("from 'nemo-relay-hooks/ai-sdk'"))!;
/** The README's paragraph on Deno, from the plugin's flags to the frameworks'. */
const paragraph = /On Deno the plugin[\s\S]*?\n\n/.exec(page)?.[0] ?? '';
/** The flags of the paragraph's `deno run ...` command: what the plugin needs. */
const pluginFlags = /`deno run ((?:--allow-[a-z]+ ?)+)`/.exec(paragraph)?.[1]!.trim().split(' ') ?? [];
/** Every --allow-* flag the paragraph names: the plugin's and the frameworks'. */
const allFlags = [...new Set(paragraph.match(/--allow-[a-z]+/g) ?? [])];

let api = new FakeProvider();
let server: { url: string; close(): Promise<void> };
beforeAll(async () => {
  server = await loopbackApi((url, init) => api.fetch(url, init));
});
afterAll(() => server.close());

describe("README.md's Deno permissions", () => {
  it('names the plugin flags and the frameworks flags', () => {
    expect(pluginFlags).toEqual(['--allow-env', '--allow-read', '--allow-write']);
    expect(allFlags).toEqual(expect.arrayContaining([...pluginFlags, '--allow-net']));
  });

  it("runs the host start with the plugin's flags: both files written, no permission message", async () => {
    const run = await runSnippet(host, 'deno', 'deno-flags-host', userEnv({ NO_COLOR: '1' }), pluginFlags);
    try {
      expect(run.status, run.stderr).toBe(0);
      expect(run.stderr).not.toMatch(/NotCapable|permission|--allow-/);
      expect(readdirSync(path.join(run.cwd, 'nemo-relay-output')).sort()).toEqual(['snippet-atif-s1.json', 'snippet-atof.jsonl']);
    } finally {
      rmSync(run.cwd, { recursive: true, force: true });
    }
  });

  it('runs the host start with no flag: the host still runs, and the plugin says what it could not read or write', async () => {
    const run = await runSnippet(host, 'deno', 'deno-flags-none', userEnv({ NO_COLOR: '1' }), []);
    try {
      expect(run.status, run.stderr).toBe(0);
      expect(run.stderr).toMatch(/settings\.permission_denied: the runtime refused to read \d+ variables.*run with --allow-env/);
      expect(run.stderr).toMatch(/Requires (read|write) access to .*nemo-relay-output.*--allow-(read|write)/);
    } finally {
      rmSync(run.cwd, { recursive: true, force: true });
    }
  });

  it('runs the AI SDK start with the flags the paragraph names and records the call', async () => {
    api = new FakeProvider();
    api.reply('responses', { id: 'resp_1', model: 'gpt-4o-2024-08-06', text: 'Hello!', usage: { input: 9, cached: 0, output: 3 } });
    const env = userEnv({ OPENAI_API_KEY: 'sk-test-not-a-key', OPENAI_BASE_URL: `${server.url}/v1`, AI_SDK_LOG_WARNINGS: 'false', NO_COLOR: '1' });
    const run = await runSnippet(aiSdk, 'deno', 'deno-flags-ai-sdk', env, allFlags);
    try {
      expect(run.status, `${allFlags.join(' ')}\n${run.stderr}`).toBe(0);
      expect(run.stdout.trim()).toBe('Hello!');
      expect(run.stderr).not.toMatch(/NotCapable/);
      const folder = path.join(run.cwd, 'nemo-relay-output');
      const trajectory = JSON.parse(readFileSync(path.join(folder, 'snippet-atif-user-42.json'), 'utf8'));
      expect(validateAtif(trajectory)).toEqual([]);
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
