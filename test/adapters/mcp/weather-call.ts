// One agent turn whose model asks for the `forecast` tool of an MCP server
// (a child process over stdio, written as a user writes one), each process
// with the NeMo Relay plugin writing its trajectory into one folder. Used by
// the tests of what the two processes' links name: rerun-same-folder.test.ts
// (a host that reuses its session ids) and redacted-session-ids.test.ts (a
// caller whose session id is redacted).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll } from 'vitest';
import { HookRegistry } from '../../../src/hooks/index.ts';
import { createNemoRelayPlugin, type NemoRelayPluginOptions } from '../../../src/plugin/plugin.ts';
import { instrumentMcpClient } from '../../../src/adapters/mcp/index.ts';
import { silentLogger } from '../../../src/shared/logger.ts';
import { repoRoot } from '../../support/doc-snippets.ts';

type Loose = Record<string, any>;

// The server, without any redaction: its session is named after the caller the request names (the caller's tool
// call id, or its session id), its file by the template it is given ('' for the default).
const SERVER = String.raw`
import { writeFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';
import { createNemoRelayPlugin, HookRegistry } from 'nemo-relay-hooks';
import { instrumentMcpServer } from 'nemo-relay-hooks/mcp';

const [backend, atifDir, doneFile, template, callerField] = process.argv.slice(2);
const hooks = new HookRegistry();
const plugin = createNemoRelayPlugin({ backend, settings: { atifEnabled: true, atifOutputDirectory: atifDir, ...(template ? { atifFilenameTemplate: template } : {}) } });
plugin.register(hooks);
const server = new McpServer({ name: 'weather', version: '1.0.0' });
server.registerTool('forecast', { inputSchema: { city: z.string() } }, async ({ city }) => ({ content: [{ type: 'text', text: city + ': rain' }] }));
instrumentMcpServer(server, hooks, { sessionId: ({ caller }) => 'server-for-' + (caller?.[callerField] ?? 'nobody') });
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

/** The server script, written inside the package (so 'nemo-relay-hooks' resolves to it), removed after the file's tests. */
export function weatherServer(name: string): string {
  const home = path.join(repoRoot, '.tmp', name);
  mkdirSync(home, { recursive: true });
  const folder = mkdtempSync(path.join(home, 'server-'));
  const script = path.join(folder, 'server.mjs');
  writeFileSync(script, SERVER);
  afterAll(() => rmSync(folder, { recursive: true, force: true }));
  return script;
}

export interface WeatherCall {
  backend: 'memory' | 'native';
  script: string;
  atifDir: string;
  /** Where the server writes its counters once its plugin shut down. */
  doneFile: string;
  sessionId: string;
  city: string;
  /** The server's `atifFilenameTemplate` ('' for the default). */
  serverTemplate: string;
  /** What of the caller the server names its session after. */
  serverNamesBy: 'tool_call_id' | 'session_id';
  /** The agent's plugin options beside its backend and logger. */
  plugin: Pick<NemoRelayPluginOptions, 'settings' | 'redact'>;
}

/**
 * One turn of the agent: the model asks for `forecast` (call `call_a`), the server answers, the model answers with
 * that text. Returns the agent's plugin after its shutdown and the server's counters (none on Deno, where the server
 * sees neither the stdin close nor the signal and is killed: docs/adapters/mcp.md; its session's trajectory was
 * written when the call ended).
 */
export async function runWeatherCall(options: WeatherCall): Promise<{ plugin: ReturnType<typeof createNemoRelayPlugin>; serverCounters: Loose | undefined; stderr: string }> {
  const hooks = new HookRegistry();
  const plugin = createNemoRelayPlugin({ ...options.plugin, backend: options.backend, logger: silentLogger });
  plugin.register(hooks);
  await plugin.ready;
  const client = instrumentMcpClient(new Client({ name: 'agent', version: '1.0.0' }), hooks, { logger: silentLogger });
  let stderr = '';
  const argv = [...runtimeArgs, options.script, options.backend, options.atifDir, options.doneFile, options.serverTemplate, options.serverNamesBy];
  const transport = new StdioClientTransport({ command: process.execPath, args: argv, env: process.env as Record<string, string>, stderr: 'pipe' });
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  await client.connect(transport);

  const session = { session_id: options.sessionId };
  const ids = { ...session, turn_id: 't1' };
  const args = { city: options.city };
  const toolCalls = [{ id: 'call_a', type: 'function', function: { name: 'forecast', arguments: JSON.stringify(args) } }];
  const asked = { id: 'r1', model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: toolCalls }, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } };
  const request = { body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'Weather in Oslo?' }] } };
  hooks.emit('on_session_start', { ...session, platform: 'cli' });
  hooks.emit('pre_llm_call', { ...ids, user_message: 'Weather in Oslo?', is_first_turn: true });
  hooks.emit('pre_api_request', { ...ids, api_request_id: 'a1', provider: 'openai', api_mode: 'chat_completions', model: 'gpt-4o', request });
  hooks.emit('post_api_request', { ...ids, api_request_id: 'a1', provider: 'openai', api_mode: 'chat_completions', model: 'gpt-4o', response: asked, usage: asked.usage, assistant_message: asked.choices[0]!.message, finish_reason: 'tool_calls' });
  hooks.emit('pre_tool_call', { ...ids, api_request_id: 'a1', tool_call_id: 'call_a', tool_name: 'forecast', args: args });
  const result = (await client.callTool({ name: 'forecast', arguments: args })) as Loose;
  const text = (result.content as { text: string }[])[0]!.text;
  hooks.emit('post_tool_call', { ...ids, api_request_id: 'a1', tool_call_id: 'call_a', tool_name: 'forecast', args: args, result: text, status: 'ok' });
  const final = { id: 'r2', model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }], usage: { prompt_tokens: 20, completion_tokens: 4, total_tokens: 24 } };
  hooks.emit('pre_api_request', { ...ids, api_request_id: 'a2', provider: 'openai', api_mode: 'chat_completions', model: 'gpt-4o', request });
  hooks.emit('post_api_request', { ...ids, api_request_id: 'a2', provider: 'openai', api_mode: 'chat_completions', model: 'gpt-4o', response: final, usage: final.usage, assistant_message: final.choices[0]!.message, finish_reason: 'stop' });
  hooks.emit('post_llm_call', { ...ids, assistant_response: text });
  hooks.emit('on_session_finalize', session);
  await client.close();
  await plugin.shutdown();
  // The server writes its counters last, after its plugin's shutdown: its trajectory is on disk by then.
  const until = process.versions.deno ? 0 : Date.now() + 30_000;
  let serverCounters: Loose | undefined;
  while (serverCounters === undefined && Date.now() < until) {
    try {
      serverCounters = JSON.parse(readFileSync(options.doneFile, 'utf8')) as Loose;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  return { plugin, serverCounters, stderr };
}
