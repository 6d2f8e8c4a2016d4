// An agent and its MCP server (a child process over stdio), each with the
// NeMo Relay plugin writing into one trajectory folder, run twice into that
// folder with the same session ids, as a host that reuses its ids does on
// every run. Each run's links must name that run's files: the server's
// trajectory names its caller's file (the `_meta` the client sends, handed
// out in the caller's first turn, before its file is written), and the
// caller's trajectory names the server's file (the `_meta` the server
// answers with, handed out as its session closes, before its file is
// written). An earlier run's files are already at the plain names.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, describe, expect, it } from 'vitest';
import { HookRegistry } from '../../../src/hooks/index.ts';
import { createNemoRelayPlugin } from '../../../src/plugin/plugin.ts';
import { instrumentMcpClient } from '../../../src/adapters/mcp/index.ts';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { silentLogger } from '../../../src/shared/logger.ts';
import { repoRoot } from '../../support/doc-snippets.ts';
import { backends } from '../support.ts';

type Loose = Record<string, any>;

// The server as a user writes one: an McpServer with a tool, instrumented, its session named after the caller's tool call.
const SERVER = String.raw`
import { writeFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';
import { createNemoRelayPlugin, HookRegistry } from 'nemo-relay-hooks';
import { instrumentMcpServer } from 'nemo-relay-hooks/mcp';

const [backend, atifDir, doneFile] = process.argv.slice(2);
const hooks = new HookRegistry();
const plugin = createNemoRelayPlugin({ backend, settings: { atifEnabled: true, atifOutputDirectory: atifDir, atifFilenameTemplate: '{session_id}.json' } });
plugin.register(hooks);
const server = new McpServer({ name: 'weather', version: '1.0.0' });
server.registerTool('forecast', { inputSchema: { city: z.string() } }, async ({ city }) => ({ content: [{ type: 'text', text: city + ': rain' }] }));
instrumentMcpServer(server, hooks, { sessionId: ({ caller }) => 'server-for-' + (caller?.tool_call_id ?? 'nobody') });
await server.connect(new StdioServerTransport());
let closing;
const shutdown = () => {
  closing ??= plugin.shutdown().then(() => {
    writeFileSync(doneFile, JSON.stringify(plugin.status().counters));
    process.exit(0);
  });
};
process.stdin.on('close', shutdown);
process.on('SIGTERM', shutdown);
`;

const runtimeArgs = process.versions.deno ? ['run', '-A'] : [];
const home = path.join(repoRoot, '.tmp', 'mcp-rerun');
mkdirSync(home, { recursive: true });
const scriptFolder = mkdtempSync(path.join(home, 'server-'));
const script = path.join(scriptFolder, 'server.mjs');
writeFileSync(script, SERVER);
const folders: string[] = [scriptFolder];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** One run of the agent: a session `agent-1` whose model asks for `forecast` (call `call_a`), answered by the server. */
async function run(backend: 'memory' | 'native', atifDir: string, tag: string): Promise<{ agentFiles: string[]; serverCounters: Loose | undefined; agentErrors: number }> {
  const hooks = new HookRegistry();
  const plugin = createNemoRelayPlugin({ backend, settings: { atifEnabled: true, atifOutputDirectory: atifDir, atifFilenameTemplate: '{session_id}.json' }, logger: silentLogger });
  plugin.register(hooks);
  await plugin.ready;
  const client = instrumentMcpClient(new Client({ name: 'agent', version: '1.0.0' }), hooks, { logger: silentLogger });
  const doneFile = path.join(path.dirname(atifDir), `server-done-${tag}.json`);
  let stderr = '';
  const transport = new StdioClientTransport({ command: process.execPath, args: [...runtimeArgs, script, backend, atifDir, doneFile], env: process.env as Record<string, string>, stderr: 'pipe' });
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  await client.connect(transport);

  const session = { session_id: 'agent-1' };
  const ids = { ...session, turn_id: 't1' };
  const args = { city: `Oslo (${tag})` };
  const toolCalls = [{ id: 'call_a', type: 'function', function: { name: 'forecast', arguments: JSON.stringify(args) } }];
  const asked = { id: 'r1', model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: toolCalls }, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } };
  const request = { body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'Weather in Oslo?' }] } };
  hooks.emit('on_session_start', { ...session, platform: 'cli' });
  hooks.emit('pre_llm_call', { ...ids, user_message: 'Weather in Oslo?', is_first_turn: true });
  hooks.emit('pre_api_request', { ...ids, api_request_id: 'a1', provider: 'openai', api_mode: 'chat_completions', model: 'gpt-4o', request });
  hooks.emit('post_api_request', { ...ids, api_request_id: 'a1', provider: 'openai', api_mode: 'chat_completions', model: 'gpt-4o', response: asked, usage: asked.usage, assistant_message: asked.choices[0]!.message, finish_reason: 'tool_calls' });
  hooks.emit('pre_tool_call', { ...ids, api_request_id: 'a1', tool_call_id: 'call_a', tool_name: 'forecast', args });
  const result = (await client.callTool({ name: 'forecast', arguments: args })) as Loose;
  const text = (result.content as { text: string }[])[0]!.text;
  hooks.emit('post_tool_call', { ...ids, api_request_id: 'a1', tool_call_id: 'call_a', tool_name: 'forecast', args, result: text, status: 'ok' });
  const final = { id: 'r2', model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }], usage: { prompt_tokens: 20, completion_tokens: 4, total_tokens: 24 } };
  hooks.emit('pre_api_request', { ...ids, api_request_id: 'a2', provider: 'openai', api_mode: 'chat_completions', model: 'gpt-4o', request });
  hooks.emit('post_api_request', { ...ids, api_request_id: 'a2', provider: 'openai', api_mode: 'chat_completions', model: 'gpt-4o', response: final, usage: final.usage, assistant_message: final.choices[0]!.message, finish_reason: 'stop' });
  hooks.emit('post_llm_call', { ...ids, assistant_response: text });
  hooks.emit('on_session_finalize', session);
  await client.close();
  await plugin.shutdown();
  // The server writes its counters last, after its plugin's shutdown: its trajectory is on disk by then. On Deno it
  // sees neither the stdin close nor the signal and is killed (docs/adapters/mcp.md): its session's trajectory was
  // written when the call ended, which is what this test reads.
  const until = process.versions.deno ? 0 : Date.now() + 30_000;
  let serverCounters: Loose | undefined;
  while (serverCounters === undefined && Date.now() < until) {
    try {
      serverCounters = JSON.parse(readFileSync(doneFile, 'utf8')) as Loose;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  if (!process.versions.deno) expect(serverCounters, `the server's shutdown (its stderr: ${stderr})`).toBeDefined();
  const agentFiles = plugin.status().outputs.filter((output) => output.kind === 'atif').map((output) => path.basename(output.path));
  return { agentFiles, serverCounters, agentErrors: plugin.status().counters.errors };
}

describe('an agent and its MCP server run twice into one folder with the same session ids', () => {
  for (const backend of backends()) {
    it(`the second run's links name the second run's files, which hold its calls (${backend})`, async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'nrh-mcp-rerun-'));
      folders.push(dir);
      const atifDir = path.join(dir, 'atif');
      const first = await run(backend, atifDir, 'run 1');
      const second = await run(backend, atifDir, 'run 2');
      expect([first.agentFiles, second.agentFiles]).toEqual([['agent-1.json'], ['agent-1~2.json']]);
      for (const outcome of [first, second]) {
        expect(outcome.agentErrors).toBe(0);
        if (outcome.serverCounters !== undefined) expect(outcome.serverCounters.errors).toBe(0);
      }
      expect(readdirSync(atifDir).sort()).toEqual(['agent-1.json', 'agent-1~2.json', 'server-for-call_a.json', 'server-for-call_a~2.json']);
      const read = (file: string) => {
        const doc = JSON.parse(readFileSync(path.join(atifDir, file), 'utf8')) as Loose;
        expect(validateAtif(doc), file).toEqual([]);
        return doc;
      };
      const refOf = (doc: Loose) => doc.steps.flatMap((step: Loose) => step.observation?.results ?? []).flatMap((entry: Loose) => entry.subagent_trajectory_ref ?? []);
      const toolResults = (doc: Loose) => doc.steps.map((step: Loose) => step.observation?.results?.[0]?.content);
      for (const [tag, agentFile, serverFile] of [
        ['run 1', 'agent-1.json', 'server-for-call_a.json'],
        ['run 2', 'agent-1~2.json', 'server-for-call_a~2.json'],
      ] as const) {
        const agent = read(agentFile);
        const server = read(serverFile);
        // The caller's link names the server file this run wrote, and that file holds this run's call.
        expect(refOf(agent), agentFile).toEqual([{ session_id: 'server-for-call_a', trajectory_id: 'server-for-call_a', trajectory_path: serverFile }]);
        expect(toolResults(server), serverFile).toEqual([`Oslo (${tag}): rain`]);
        // And the server's trajectory names this run's caller file, whose steps are this run's.
        expect(server.extra.caller, serverFile).toEqual({ session_id: 'agent-1', tool_call_id: 'call_a', trajectory_id: 'agent-1', trajectory_path: agentFile });
        expect(agent.steps.at(-1).message, agentFile).toBe(`Oslo (${tag}): rain`);
      }
    }, 90_000);
  }
});
