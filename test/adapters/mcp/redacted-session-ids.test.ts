// An agent whose session id is a user's email, with the `redact` hook of
// docs/operators/redaction.md, calls its MCP server (a child process over
// stdio) whose own plugin writes into the same trajectory folder and
// redacts nothing. The request's `_meta` names the caller as the agent's
// redaction leaves it, so the server never receives the email: nothing
// either process writes names it. The links still join the two files: the
// server's trajectory names the agent's file, and the agent's tool result
// names the server's.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, describe, expect, it } from 'vitest';
import { HookRegistry } from '../../../src/hooks/index.ts';
import { createNemoRelayPlugin } from '../../../src/plugin/plugin.ts';
import type { RedactableEvent } from '../../../src/plugin/egress.ts';
import { instrumentMcpClient } from '../../../src/adapters/mcp/index.ts';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { silentLogger } from '../../../src/shared/logger.ts';
import { repoRoot } from '../../support/doc-snippets.ts';
import { backends } from '../support.ts';

type Loose = Record<string, any>;

const EMAIL = 'ana@example.com';

// The server as a user writes one, without any redaction: its session is named after the caller the request names.
const SERVER = String.raw`
import { writeFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';
import { createNemoRelayPlugin, HookRegistry } from 'nemo-relay-hooks';
import { instrumentMcpServer } from 'nemo-relay-hooks/mcp';

const [backend, atifDir, doneFile] = process.argv.slice(2);
const hooks = new HookRegistry();
const plugin = createNemoRelayPlugin({ backend, settings: { atifEnabled: true, atifOutputDirectory: atifDir } });
plugin.register(hooks);
const server = new McpServer({ name: 'weather', version: '1.0.0' });
server.registerTool('forecast', { inputSchema: { city: z.string() } }, async ({ city }) => ({ content: [{ type: 'text', text: city + ': rain' }] }));
instrumentMcpServer(server, hooks, { sessionId: ({ caller }) => 'server-for-' + (caller?.session_id ?? 'nobody') });
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

/** The `redact` hook of docs/operators/redaction.md. */
function pageHook(event: RedactableEvent): void {
  const scrub = (text: string) => text.replace(/[\w.+-]+@[\w-]+\.[\w.]+/g, '<email>');
  event.name = scrub(event.name);
  event.data = JSON.parse(scrub(JSON.stringify(event.data)));
  event.metadata = JSON.parse(scrub(JSON.stringify(event.metadata)));
}

const runtimeArgs = process.versions.deno ? ['run', '-A'] : [];
const home = path.join(repoRoot, '.tmp', 'mcp-redacted');
mkdirSync(home, { recursive: true });
const scriptFolder = mkdtempSync(path.join(home, 'server-'));
const script = path.join(scriptFolder, 'server.mjs');
writeFileSync(script, SERVER);
const folders: string[] = [scriptFolder];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

describe('an agent whose session id is an email calls its MCP server, with the redaction page\'s hook', () => {
  for (const backend of backends()) {
    it(`the server never receives the email; the two trajectories name each other's files (${backend})`, async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'nrh-mcp-redacted-'));
      folders.push(dir);
      const atifDir = path.join(dir, 'atif');
      const hooks = new HookRegistry();
      const plugin = createNemoRelayPlugin({ backend, settings: { atifEnabled: true, atifOutputDirectory: atifDir, atofEnabled: true, atofOutputDirectory: path.join(dir, 'atof') }, logger: silentLogger, redact: pageHook });
      plugin.register(hooks);
      await plugin.ready;
      const client = instrumentMcpClient(new Client({ name: 'agent', version: '1.0.0' }), hooks, { logger: silentLogger });
      const doneFile = path.join(dir, 'server-done.json');
      let stderr = '';
      const transport = new StdioClientTransport({ command: process.execPath, args: [...runtimeArgs, script, backend, atifDir, doneFile], env: process.env as Record<string, string>, stderr: 'pipe' });
      transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      await client.connect(transport);

      const session = { session_id: EMAIL };
      const ids = { ...session, turn_id: 't1' };
      const args = { city: 'Oslo' };
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
      hooks.emit('post_llm_call', { ...ids, assistant_response: text });
      hooks.emit('on_session_finalize', session);
      await client.close();
      await plugin.shutdown();
      // The server writes its counters after its plugin's shutdown; on Deno it is killed instead (docs/adapters/mcp.md),
      // and its trajectory was written when the call ended.
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
      expect(plugin.status().counters.errors).toBe(0);

      // Nothing either process wrote names the email: the server, which redacts nothing, was never sent it.
      const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((name) => /\.jsonl?$/.test(name) && name !== 'server-done.json');
      expect(files.length).toBe(3);
      for (const file of files) {
        expect(file).not.toContain('ana');
        expect(readFileSync(path.join(dir, file), 'utf8').includes(EMAIL), file).toBe(false);
      }
      const names = readdirSync(atifDir).sort();
      const agentFile = names.find((name) => name.includes('-atif-_email_-'))!;
      const serverFile = names.find((name) => name.startsWith('server-for-') || name.includes('-server-for-'))!;
      expect([agentFile, serverFile].every((name) => name !== undefined), names.join(', ')).toBe(true);
      const read = (file: string) => {
        const doc = JSON.parse(readFileSync(path.join(atifDir, file), 'utf8')) as Loose;
        expect(validateAtif(doc), file).toEqual([]);
        return doc;
      };
      const agent = read(agentFile);
      const server = read(serverFile);
      expect([agent.session_id, agent.trajectory_id]).toEqual(['<email>', '<email>']);
      expect(server.session_id).toBe('server-for-<email>');
      // The server's trajectory names the agent's file as written, and the agent's tool result names the server's.
      expect(server.extra.caller).toEqual({ session_id: '<email>', tool_call_id: 'call_a', trajectory_id: '<email>', trajectory_path: agentFile });
      const refs = agent.steps.flatMap((step: Loose) => step.observation?.results ?? []).flatMap((entry: Loose) => entry.subagent_trajectory_ref ?? []);
      expect(refs).toEqual([{ session_id: 'server-for-<email>', trajectory_id: 'server-for-<email>', trajectory_path: serverFile }]);
    }, 90_000);
  }
});
