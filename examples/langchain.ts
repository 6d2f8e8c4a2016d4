/**
 * The LangChain adapter in one line: pass `new NemoRelayCallbackHandler(hooks)`
 * in `callbacks`. A `createAgent` agent with a tool runs against
 * `fakeModel()` (swap in your chat model), and the plugin writes its ATOF
 * events and ATIF trajectory; the LangGraph `thread_id` is the session id.
 *
 *   bun examples/langchain.ts [out-dir]
 *   deno run -A examples/langchain.ts [out-dir]
 *
 * In an application, import from 'nemo-relay-hooks' and 'nemo-relay-hooks/langchain'.
 */

import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AIMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { tool } from '@langchain/core/tools';
import { createAgent } from 'langchain';
import * as z from 'zod';
import { createNemoRelayPlugin, HookRegistry } from '../src/index.ts';
import { validateAtif } from '../src/formats/index.ts';
import { NemoRelayCallbackHandler } from '../src/adapters/langchain/index.ts';

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
console.log(`agent: ${String(result.messages.at(-1)!.content)}`);

await plugin.shutdown();
const [file] = readdirSync(path.join(out, 'atif'));
const trajectory = JSON.parse(readFileSync(path.join(out, 'atif', file!), 'utf8'));
const problems = validateAtif(trajectory);
console.log(problems.length === 0 ? `valid ATIF: ${trajectory.steps.length} steps in ${path.join(out, 'atif', file!)}` : problems);
