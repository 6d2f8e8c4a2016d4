/**
 * The Vercel AI SDK adapter in one line: `instrumentAiSdk(hooks)`. A
 * ToolLoopAgent with a tool runs against the SDK's mock model (swap in your
 * provider's model, e.g. `openai('gpt-4o')`), and the plugin writes its ATOF
 * events and ATIF trajectory.
 *
 *   node examples/ai-sdk.mjs [out-dir]
 *   bun examples/ai-sdk.mjs [out-dir]
 *   deno run -A examples/ai-sdk.mjs [out-dir]
 */

import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ToolLoopAgent, stepCountIs, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import * as z from 'zod';
import { createNemoRelayPlugin, HookRegistry } from 'nemo-relay-hooks';
import { validateAtif } from 'nemo-relay-hooks/formats';
import { instrumentAiSdk } from 'nemo-relay-hooks/ai-sdk';

const out = process.argv[2] ?? mkdtempSync(path.join(os.tmpdir(), 'nemo-relay-ai-sdk-'));

const hooks = new HookRegistry();
const plugin = createNemoRelayPlugin({
  backend: 'memory',
  settings: { atofEnabled: true, atofOutputDirectory: path.join(out, 'atof'), atifEnabled: true, atifOutputDirectory: path.join(out, 'atif') },
});
plugin.register(hooks);
const uninstall = instrumentAiSdk(hooks); // <- the adapter: every generateText/streamText/agent run now emits hooks

// A scripted model: one tool call, then the answer.
const replies = [
  { content: [{ type: 'tool-call', toolCallId: 'call_clock_1', toolName: 'clock', input: '{"zone":"UTC"}' }], finishReason: { unified: 'tool-calls', raw: 'tool_calls' } },
  { content: [{ type: 'text', text: 'It is noon in UTC.' }], finishReason: { unified: 'stop', raw: 'stop' } },
];
let turn = 0;
const model = new MockLanguageModelV4({
  modelId: 'mock-model',
  doGenerate: async () => ({
    ...replies[turn++],
    usage: { inputTokens: { total: 12, noCache: 12, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 4, text: 4, reasoning: undefined } },
    warnings: [],
  }),
});

const agent = new ToolLoopAgent({
  model,
  instructions: 'You tell the time.',
  stopWhen: stepCountIs(4),
  tools: { clock: tool({ description: 'the time in a zone', inputSchema: z.object({ zone: z.string() }), execute: async ({ zone }) => ({ zone, time: '12:00' }) }) },
});
const result = await agent.generate({ prompt: 'What time is it in UTC?' });
console.log(`agent: ${result.text}`);

await plugin.shutdown();
uninstall();
const [file] = readdirSync(path.join(out, 'atif'));
const trajectory = JSON.parse(readFileSync(path.join(out, 'atif', file), 'utf8'));
const problems = validateAtif(trajectory);
console.log(problems.length === 0 ? `valid ATIF: ${trajectory.steps.length} steps in ${path.join(out, 'atif', file)}` : problems);
