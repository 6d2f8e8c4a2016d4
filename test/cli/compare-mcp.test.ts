// `compare` of one run's trajectory against its own ATOF file when the agent's MCP server runs in its process, on
// the same hooks (a real @modelcontextprotocol/sdk Client and McpServer joined by the SDK's InMemoryTransport, the
// AI SDK's generateText calling the server's tool, the model a fake provider speaking the Responses API): the ATOF
// file nests the server's session under the agent's tool call, the agent's trajectory references the server's,
// which the plugin wrote beside it.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { generateText, stepCountIs, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { instrumentAiSdk } from '../../src/adapters/ai-sdk/index.ts';
import { instrumentMcpClient, instrumentMcpServer } from '../../src/adapters/mcp/index.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { FakeProvider } from '../adapters/ai-sdk/wire.ts';
import { recordedPlugin } from '../adapters/support.ts';
import { cliInProcess, tempDir } from './support.ts';

let dir: string;
/** The agent's trajectory, the server's, and the ATOF file holding both sessions. */
let files: { agent: string; server: string; atof: string };

beforeAll(async () => {
  const api = new FakeProvider();
  api.reply('responses', { id: 'resp_1', model: 'gpt-4o-2024-08-06', text: '', toolCalls: [{ id: 'call_oslo', name: 'forecast', args: { city: 'Oslo' } }], usage: { input: 90, output: 15 } });
  api.reply('responses', { id: 'resp_2', model: 'gpt-4o-2024-08-06', text: 'Rain in Oslo.', usage: { input: 130, output: 12 } });
  const openai = createOpenAI({ apiKey: 'sk-test-not-a-key', fetch: api.fetch as typeof fetch });
  const recorded = recordedPlugin('compare-mcp');
  dir = recorded.dir;
  const uninstall = instrumentAiSdk(recorded.hooks, { sessionId: 'user-42', logger: silentLogger });
  const server = new McpServer({ name: 'weather-server', version: '1.0.0' });
  server.registerTool('forecast', { inputSchema: { city: z.string() } }, async ({ city }) => ({ content: [{ type: 'text', text: `${city}: rain` }] }));
  instrumentMcpServer(server, recorded.hooks, { logger: silentLogger });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = instrumentMcpClient(new Client({ name: 'agent', version: '1.0.0' }), recorded.hooks, { logger: silentLogger });
  await client.connect(clientSide);
  try {
    const { text } = await generateText({
      model: openai('gpt-4o'),
      prompt: 'What is the weather in Oslo?',
      tools: {
        forecast: tool({
          description: 'The forecast for a city',
          inputSchema: z.object({ city: z.string() }),
          execute: async ({ city }) => (await client.callTool({ name: 'forecast', arguments: { city } })).content,
        }),
      },
      stopWhen: stepCountIs(3),
    });
    expect(text).toBe('Rain in Oslo.');
  } finally {
    await client.close();
    await server.close();
    uninstall();
  }
  const { counters } = await recorded.finish();
  expect(counters.errors ?? 0).toBe(0);
  const trajectories = readdirSync(path.join(dir, 'atif'));
  expect(trajectories).toHaveLength(2);
  const server_ = trajectories.find((name) => name.includes('mcp-weather-server-'))!;
  const [atof] = readdirSync(path.join(dir, 'atof'));
  files = { agent: path.join(dir, 'atif', trajectories.find((name) => name !== server_)!), server: path.join(dir, 'atif', server_), atof: path.join(dir, 'atof', atof!) };
}, 60_000);

afterAll(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

interface Report {
  equivalent: boolean;
  pairs: { title: string; status: string }[];
  onlyRecorded: { fact: string; run: string; values: string[] }[];
}

async function compared(a: string, b: string): Promise<{ code: number; report: Report; text: string }> {
  const json = await cliInProcess(['compare', a, b, '--json']);
  const text = await cliInProcess(['compare', a, b]);
  expect(text.code).toBe(json.code);
  return { code: json.code, report: JSON.parse(json.stdout) as Report, text: text.stdout };
}

describe('compare: a run with an MCP server in its process, its trajectory against its ATOF file', () => {
  it("reads the server's trajectory beside the agent's, so the two files of the run are equivalent, the server's call compared", async () => {
    const serverId = JSON.parse(readFileSync(files.server, 'utf8')).session_id as string;
    for (const [a, b] of [[files.agent, files.atof], [files.atof, files.agent]] as const) {
      const { code, report, text } = await compared(a, b);
      expect(code, text).toBe(0);
      expect(report.equivalent).toBe(true);
      expect(report.pairs.map((pair) => [pair.title, pair.status])).toEqual([
        ['turn 1', 'same'],
        ['LLM gpt-4o-2024-08-06 (asked gpt-4o) → forecast', 'same'],
        [`remote session ${serverId}`, 'same'],
        ['tool forecast', 'same'],
        ['LLM gpt-4o-2024-08-06 (asked gpt-4o)', 'same'],
      ]);
      expect(report.onlyRecorded).toEqual([]);
    }
  });

  it("without the server's trajectory beside the agent's, leaves the server's session out of the ATOF run too, and says so", async () => {
    const serverId = JSON.parse(readFileSync(files.server, 'utf8')).session_id as string;
    const alone = path.join(tempDir('nrh-compare-mcp-alone-'), path.basename(files.agent));
    copyFileSync(files.agent, alone);
    const { code, report, text } = await compared(alone, files.atof);
    // On stderr, what `view` of the file says (its totals leave the server's run out).
    const said = await cliInProcess(['compare', alone, files.atof]);
    expect(said.stderr).toBe((await cliInProcess(['view', alone])).stderr);
    expect(said.stderr).toBe(`nemo-relay-hooks: ${alone}: session user-42's totals leave out a trajectory it references, not found beside it: ${path.basename(files.server)}\n`);
    expect(code, text).toBe(0);
    expect(report.pairs.map((pair) => pair.title)).toEqual(['turn 1', 'LLM gpt-4o-2024-08-06 (asked gpt-4o) → forecast', 'LLM gpt-4o-2024-08-06 (asked gpt-4o)']);
    expect(report.onlyRecorded).toEqual([{ fact: 'remote', run: 'b', values: [serverId] }]);
    expect(text).toContain(`only b's file records another process's sessions, which the other file references and does not hold (not compared): ${serverId}`);
  });

  it("never reads a reference outside the trajectory's folder", async () => {
    const serverId = JSON.parse(readFileSync(files.server, 'utf8')).session_id as string;
    const elsewhere = path.join(dir, 'elsewhere');
    mkdirSync(elsewhere);
    const outside = path.join(elsewhere, path.basename(files.agent));
    // The same run, its reference pointing up and out to the server's trajectory, which is there.
    writeFileSync(outside, readFileSync(files.agent, 'utf8').replaceAll(`"trajectory_path":"${path.basename(files.server)}"`, `"trajectory_path":"../atif/${path.basename(files.server)}"`));
    expect(readFileSync(outside, 'utf8')).toContain('"trajectory_path":"../atif/');
    const { report } = await compared(outside, files.atof);
    expect(report.pairs.map((pair) => pair.title)).not.toContain(`remote session ${serverId}`);
    expect(report.onlyRecorded).toEqual([{ fact: 'remote', run: 'b', values: [serverId] }]);
  });

  it("nor through a link in the trajectory's folder to a folder outside it", async () => {
    const serverId = JSON.parse(readFileSync(files.server, 'utf8')).session_id as string;
    const folder = tempDir('nrh-compare-mcp-link-');
    const linked = path.join(folder, path.basename(files.agent));
    symlinkSync(path.join(dir, 'atif'), path.join(folder, 'link'));
    writeFileSync(linked, readFileSync(files.agent, 'utf8').replaceAll(`"trajectory_path":"${path.basename(files.server)}"`, `"trajectory_path":"link/${path.basename(files.server)}"`));
    expect(readFileSync(linked, 'utf8')).toContain('"trajectory_path":"link/');
    const { report } = await compared(linked, files.atof);
    expect(report.pairs.map((pair) => pair.title)).not.toContain(`remote session ${serverId}`);
    expect(report.onlyRecorded).toEqual([{ fact: 'remote', run: 'b', values: [serverId] }]);
  });
});
