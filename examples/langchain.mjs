/**
 * The LangChain adapter in one line: pass `new NemoRelayCallbackHandler(hooks)`
 * in `callbacks`. A `createAgent` agent with a tool runs against
 * `fakeModel()` (swap in your chat model), and the plugin writes its ATOF
 * events and ATIF trajectory; the LangGraph `thread_id` is the session id.
 *
 *   node examples/langchain.mjs [out-dir]
 *   bun examples/langchain.mjs [out-dir]
 *   deno run -A examples/langchain.mjs [out-dir]
 */

import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AIMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { tool } from '@langchain/core/tools';
import { createAgent } from 'langchain';
import * as z from 'zod';
import { createNemoRelayPlugin, HookRegistry } from 'nemo-relay-hooks';
import { validateAtif } from 'nemo-relay-hooks/formats';
import { NemoRelayCallbackHandler } from 'nemo-relay-hooks/langchain';

const out = process.argv[2] ?? mkdtempSync(path.join(os.tmpdir(), 'nemo-relay-langchain-'));

const hooks = new HookRegistry();
const plugin = createNemoRelayPlugin({
  backend: 'memory',
  settings: { atofEnabled: true, atofOutputDirectory: path.join(out, 'atof'), atifEnabled: true, atifOutputDirectory: path.join(out, 'atif') },
});
plugin.register(hooks);

const usage = { input_tokens: 12, output_tokens: 4, total_tokens: 16 };
const model = fakeModel()
  .respond(new AIMessage({ content: '', tool_calls: [{ id: 'call_clock_1', name: 'clock', args: { zone: 'UTC' } }], usage_metadata: usage, response_metadata: { model_name: 'fake-model' } }))
  .respond(new AIMessage({ content: 'It is noon in UTC.', usage_metadata: usage, response_metadata: { model_name: 'fake-model' } }));
const clock = tool(async ({ zone }) => JSON.stringify({ zone, time: '12:00' }), { name: 'clock', description: 'the time in a zone', schema: z.object({ zone: z.string() }) });
const agent = createAgent({ model, tools: [clock], name: 'clock-agent' });

const result = await agent.invoke(
  { messages: [{ role: 'user', content: 'What time is it in UTC?' }] },
  { callbacks: [new NemoRelayCallbackHandler(hooks)], configurable: { thread_id: 'langchain-example' } }, // <- the adapter
);
console.log(`agent: ${String(result.messages.at(-1).content)}`);

await plugin.shutdown();
const [file] = readdirSync(path.join(out, 'atif'));
const trajectory = JSON.parse(readFileSync(path.join(out, 'atif', file), 'utf8'));
const problems = validateAtif(trajectory);
console.log(problems.length === 0 ? `valid ATIF: ${trajectory.steps.length} steps in ${path.join(out, 'atif', file)}` : problems);
