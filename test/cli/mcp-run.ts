// A real two-process MCP run as docs/adapters/mcp.md's programs record it (agent.mjs and weather-server.mjs as
// written, over stdio, the model served on loopback), the server's own model call refused (HTTP 400), so generateText
// throws inside the tool and the server answers `isError`. Each process writes its own trajectory (in `trajectories/`)
// and its own ATOF file (in `nemo-relay-output/`). Used by view-mcp.test.ts and serve-mcp.test.ts.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { runtime } from '../support/child.ts';
import { loopbackApi, userEnv } from '../support/doc-snippets.ts';
import { FakeProvider } from '../adapters/ai-sdk/wire.ts';
import { mcpPrograms, runAgent } from '../adapters/mcp/two-processes.ts';

export interface McpRun {
  /** The folder both processes ran in (remove it when done). */
  cwd: string;
  serverAtif: string;
  agentAtif: string;
  /** The server's session id (the agent's is `user-42`). */
  serverId: string;
  /** Each process's ATOF lines. */
  atof: { server: string; agent: string };
}

export async function recordMcpRun(): Promise<McpRun> {
  const api = new FakeProvider();
  api.reply('responses', { id: 'resp_1', model: 'gpt-4o-2024-08-06', text: '', toolCalls: [{ id: 'call_oslo', name: 'forecast', args: { city: 'Oslo' } }], usage: { input: 90, output: 15 } });
  api.fail('responses', 400, 'Invalid model for this key');
  api.reply('responses', { id: 'resp_2', model: 'gpt-4o-2024-08-06', text: 'No forecast for Oslo today.', usage: { input: 130, output: 12 } });
  const provider = await loopbackApi((url, init) => api.fetch(url, init));
  let cwd: string;
  try {
    const programs = mcpPrograms();
    const env = userEnv({ OPENAI_API_KEY: 'sk-test-not-a-key', OPENAI_BASE_URL: `${provider.url}/v1`, AI_SDK_LOG_WARNINGS: 'false', NO_COLOR: '1' });
    const run = await runAgent({ 'weather-server.mjs': programs.get('weather-server.mjs')!, 'agent.mjs': programs.get('agent.mjs')! }, 'agent.mjs', runtime, env);
    cwd = run.cwd;
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toContain('No forecast for Oslo today.');
  } finally {
    await provider.close();
  }
  const folder = path.join(cwd, 'trajectories');
  const files = readdirSync(folder);
  expect(files).toHaveLength(2);
  const server = files.find((name) => name.includes('mcp-weather-server-'))!;
  const serverAtif = path.join(folder, server);
  const agentAtif = path.join(folder, files.find((name) => name !== server)!);
  const serverId = JSON.parse(readFileSync(serverAtif, 'utf8')).session_id as string;
  // Each process writes the default ATOF file, named after its program, in the folder they both run in.
  const outputs = path.join(cwd, 'nemo-relay-output');
  const texts = readdirSync(outputs).map((name) => readFileSync(path.join(outputs, name), 'utf8'));
  expect(texts).toHaveLength(2);
  const sessionOf = (text: string) => JSON.parse(text.slice(0, text.indexOf('\n'))).metadata.session_id;
  const atof = { server: texts.find((text) => sessionOf(text) === serverId)!, agent: texts.find((text) => sessionOf(text) === 'user-42')! };
  expect(atof.server).toBeDefined();
  expect(atof.agent).toBeDefined();
  return { cwd, serverAtif, agentAtif, serverId, atof };
}
