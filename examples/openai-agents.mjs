/**
 * The OpenAI Agents SDK adapter in one line: `instrumentOpenAIAgents(hooks)`.
 * An agent with a tool runs against a scripted `Model` behind a custom
 * `ModelProvider` (no API key, no network; with OpenAI's models just drop the
 * provider), and the plugin writes its ATOF events and ATIF trajectory; the
 * runner's `groupId` is the session id.
 *
 *   node examples/openai-agents.mjs [out-dir]
 *   bun examples/openai-agents.mjs [out-dir]
 *   deno run -A examples/openai-agents.mjs [out-dir]
 */

import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Agent, Runner, Usage, setTracingDisabled, tool } from '@openai/agents';
import * as z from 'zod';
import { createNemoRelayPlugin, HookRegistry } from 'nemo-relay-hooks';
import { validateAtif } from 'nemo-relay-hooks/formats';
import { instrumentOpenAIAgents } from 'nemo-relay-hooks/openai-agents';

const out = process.argv[2] ?? mkdtempSync(path.join(os.tmpdir(), 'nemo-relay-openai-agents-'));

// Offline: no export to OpenAI's trace backend (the adapter does not need traces).
setTracingDisabled(true);

const hooks = new HookRegistry();
const plugin = createNemoRelayPlugin({
  backend: 'memory',
  settings: { atofEnabled: true, atofOutputDirectory: path.join(out, 'atof'), atifEnabled: true, atifOutputDirectory: path.join(out, 'atif') },
});
plugin.register(hooks);

const replies = [
  [{ type: 'function_call', callId: 'call_clock_1', name: 'clock', arguments: '{"zone":"UTC"}', status: 'completed' }],
  [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'It is noon in UTC.' }] }],
];
let turn = 0;
const model = {
  async getResponse() {
    return { output: replies[turn++], usage: new Usage({ requests: 1, inputTokens: 12, outputTokens: 4, totalTokens: 16 }), responseId: `resp-${turn}` };
  },
  async *getStreamedResponse() {
    throw new Error('not used in this example');
  },
};
const runner = new Runner({ modelProvider: { getModel: () => model }, groupId: 'agents-example' });
const uninstall = instrumentOpenAIAgents(hooks); // <- the adapter

const agent = new Agent({
  name: 'clock-agent',
  instructions: 'You tell the time.',
  model: 'scripted-model',
  tools: [tool({ name: 'clock', description: 'the time in a zone', parameters: z.object({ zone: z.string() }), execute: async ({ zone }) => JSON.stringify({ zone, time: '12:00' }) })],
});
const result = await runner.run(agent, 'What time is it in UTC?');
console.log(`agent: ${String(result.finalOutput)}`);

await plugin.shutdown();
uninstall();
const [file] = readdirSync(path.join(out, 'atif'));
const trajectory = JSON.parse(readFileSync(path.join(out, 'atif', file), 'utf8'));
const problems = validateAtif(trajectory);
console.log(problems.length === 0 ? `valid ATIF: ${trajectory.steps.length} steps in ${path.join(out, 'atif', file)}` : problems);
