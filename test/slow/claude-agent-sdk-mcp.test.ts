// A Claude Agent SDK program whose MCP server is a stdio child the bundled CLI
// starts and calls (`mcpServers: { weather: { type: 'stdio', command, args, env } }`):
// the program owns no MCP client. The server is an `McpServer` instrumented
// with `instrumentMcpServer` (or not: the plain run), the agent is the real
// SDK and CLI wrapped with `wrapClaudeAgentSdk`, offline against the loopback
// Messages server. The CLI names the model's `tool_use` id in each
// `tools/call` (`_meta["claudecode/toolUseId"]`) and hands the server's result,
// `_meta` included, to the SDK's stream (`tool_use_result`), never to the
// model: so each server trajectory names the agent's tool call, and each of
// the agent's MCP observations references the server trajectory of its own
// call, the sub-agent's calls too (read from its transcript). Nothing else in
// the agent's trajectory differs from the plain run.
// No one trace: the CLI sends the server no trace context.
//
// Slow (each query spawns the CLI, which spawns the server): test/slow.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as sdk from '@anthropic-ai/claude-agent-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wrapClaudeAgentSdk } from '../../src/adapters/claude-agent-sdk/index.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { backends, expectNothingLost, recordedPlugin, type AtifDoc } from '../adapters/support.ts';
import { offlineClaudeEnv, startAnthropicMock, type MockReply, type MockRequest } from '../support/anthropic-mock.ts';
import { repoRoot } from '../support/doc-snippets.ts';

/** argv[2]: the trajectory folder; argv[3]: `plain` for no plugin and no instrumentation. Backend: the environment's. */
const SERVER_SOURCE = String.raw`
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';
import { createNemoRelayPlugin, HookRegistry } from 'nemo-relay-hooks';
import { instrumentMcpServer } from 'nemo-relay-hooks/mcp';

const plain = process.argv[3] === 'plain';
const hooks = new HookRegistry();
const plugin = plain ? undefined : createNemoRelayPlugin({ settings: { atifEnabled: true, atifOutputDirectory: process.argv[2] } });
plugin?.register(hooks);

const server = new McpServer({ name: 'weather-server', version: '1.0.0' });
// What each tools/call carried (its id and _meta), beside the trajectory folder: what the CLI sends.
const seen = (extra) => appendFileSync(path.join(process.argv[2], '..', 'tools-call.jsonl'), JSON.stringify({ id: extra.requestId, meta: extra._meta }) + '\n');
server.registerTool('forecast', { description: 'The forecast for a city', inputSchema: { city: z.string() } }, async ({ city }, extra) => (seen(extra), {
  content: [{ type: 'text', text: city + ': rain' }],
}));
server.registerTool('alerts', { description: 'The weather alerts for a city', inputSchema: { city: z.string() } }, async ({ city }, extra) => (seen(extra), {
  content: [{ type: 'text', text: 'the alert service is down for ' + city }],
  isError: true,
}));
if (!plain) instrumentMcpServer(server, hooks);
await server.connect(new StdioServerTransport());
process.stdin.on('close', () => (plugin ? plugin.shutdown() : Promise.resolve()).then(() => process.exit(0)));
plugin?.installExitHandlers();
`;

const PROMPT = 'Weather and alerts for Oslo and Bergen?';
/** The second program's prompt: the main agent asks a sub-agent, which makes the MCP call. */
const SUB_PROMPT = 'Ask the researcher for the weather in Tromsø.';
/** The model's MCP calls, in one reply (the CLI runs them at once): [tool_use id, tool, city]. */
const CALLS = [
  ['toolu_mcp_oslo', 'forecast', 'Oslo'],
  ['toolu_mcp_bergen', 'forecast', 'Bergen'],
  ['toolu_mcp_alerts', 'alerts', 'Oslo'],
] as const;

function script(request: MockRequest): MockReply {
  if (request.system.includes('You are the researcher')) {
    if (request.assistantTurns === 0) return { blocks: [{ type: 'tool_use', id: 'toolu_mcp_sub', name: 'mcp__weather__forecast', input: { city: 'Tromsø' } }], usage: { input: 7, output: 3 }, model: 'claude-sub-2026-01-01' };
    return { blocks: [{ type: 'text', text: 'Tromsø: rain.' }], usage: { input: 15, output: 4 }, model: 'claude-sub-2026-01-01' };
  }
  if (JSON.stringify(request.body.messages).includes(SUB_PROMPT)) {
    if (request.assistantTurns === 0) return { blocks: [{ type: 'tool_use', id: 'toolu_agent', name: 'Agent', input: { description: 'weather', prompt: 'Forecast for Tromsø.', subagent_type: 'researcher', run_in_background: false } }], usage: { input: 30, output: 6 }, model: 'claude-mcp-2026-01-01' };
    return { blocks: [{ type: 'text', text: 'Tromsø: rain.' }], usage: { input: 50, output: 5 }, model: 'claude-mcp-2026-01-01' };
  }
  if (request.assistantTurns === 0) {
    return {
      blocks: [{ type: 'text', text: 'Checking.' }, ...CALLS.map(([id, tool, city]) => ({ type: 'tool_use' as const, id, name: `mcp__weather__${tool}`, input: { city } }))],
      usage: { input: 40, output: 12, cacheRead: 8 },
      model: 'claude-mcp-2026-01-01',
    };
  }
  return { blocks: [{ type: 'text', text: 'Oslo: rain. Bergen: rain. No alerts.' }], usage: { input: 90, output: 9 }, model: 'claude-mcp-2026-01-01' };
}

interface Output {
  agent: AtifDoc;
  /** The server's trajectories by file name. */
  server: Map<string, AtifDoc>;
  /** What the model was sent, as JSON text. */
  model: string;
  /** The `tool_use_result` of each MCP call's user message, as the program read it. */
  toolUseResults: Map<string, unknown>;
  /** Each tools/call as the server's handler got it: its JSON-RPC id and `_meta`. */
  seen: Array<{ id: unknown; meta: Record<string, unknown> }>;
}

let folder: string;
beforeAll(() => {
  const home = path.join(repoRoot, '.tmp', 'claude-mcp');
  mkdirSync(home, { recursive: true });
  folder = mkdtempSync(path.join(home, 'run-'));
  // Inside the package: `nemo-relay-hooks` and the SDK resolve as they do for a user.
  writeFileSync(path.join(folder, 'weather-server.mjs'), SERVER_SOURCE);
});
afterAll(() => {
  rmSync(folder, { recursive: true, force: true });
});

/** Waits for the server's `count` trajectory files: it writes each as its call ends, off the host thread. */
async function serverFiles(dir: string, count: number): Promise<Map<string, AtifDoc>> {
  const deadline = Date.now() + 60_000;
  const list = (): string[] => (existsSync(dir) ? readdirSync(dir).filter((file) => file.endsWith('.json')).sort() : []);
  while (list().length < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  return new Map(list().map((file) => [file, JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as AtifDoc]));
}

async function runProgram(backend: 'memory' | 'native', instrumented: boolean, viaSubAgent = false): Promise<Output> {
  // A mock per run: its message ids count from 1 for each.
  const mock = await startAnthropicMock(script);
  const recorded = recordedPlugin(`claude-mcp-${backend}`, backend);
  const offline = offlineClaudeEnv(mock.url);
  const serverOut = path.join(recorded.dir, 'server-atif');
  const toolUseResults = new Map<string, unknown>();
  const runtimeArgs = typeof (globalThis as { Deno?: unknown }).Deno !== 'undefined' ? ['run', '-A'] : [];
  try {
    const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
    let answer: string | undefined;
    for await (const message of query({
      prompt: viaSubAgent ? SUB_PROMPT : PROMPT,
      options: {
        ...(viaSubAgent ? { agents: { researcher: { description: 'Finds the weather', prompt: 'You are the researcher.', tools: ['mcp__weather__forecast'] } } } : {}),
        cwd: offline.home,
        env: offline.env,
        settingSources: [],
        mcpServers: {
          weather: {
            type: 'stdio',
            command: process.execPath,
            args: [...runtimeArgs, path.join(folder, 'weather-server.mjs'), serverOut, ...(instrumented ? [] : ['plain'])],
            env: { PATH: process.env.PATH ?? '', NEMO_RELAY_HOOKS_BACKEND: backend },
          },
        },
        allowedTools: ['mcp__weather__forecast', 'mcp__weather__alerts', 'Agent'],
      },
    })) {
      if (message.type === 'user' && Array.isArray(message.message.content)) {
        for (const block of message.message.content) if (block.type === 'tool_result') toolUseResults.set(block.tool_use_id, message.tool_use_result);
      }
      if (message.type === 'result' && message.subtype === 'success') answer = message.result;
    }
    expect(answer).toBe(viaSubAgent ? 'Tromsø: rain.' : 'Oslo: rain. Bergen: rain. No alerts.');
    const server = await serverFiles(serverOut, instrumented ? (viaSubAgent ? 1 : CALLS.length) : 0);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    for (const doc of [...atif, ...server.values()]) expect(validateAtif(doc)).toEqual([]);
    const seenFile = path.join(recorded.dir, 'tools-call.jsonl');
    const seen = existsSync(seenFile) ? readFileSync(seenFile, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Output['seen'][number]) : [];
    return { agent: atif[0]!, server, model: JSON.stringify(mock.requests.map((request) => request.body)), toolUseResults, seen };
  } finally {
    await mock.close();
    rmSync(offline.home, { recursive: true, force: true });
    rmSync(recorded.dir, { recursive: true, force: true });
  }
}

function observed(doc: AtifDoc, callId: string): AtifDoc {
  const result = (doc.steps as AtifDoc[]).flatMap((step) => step.observation?.results ?? []).find((entry: AtifDoc) => entry.source_call_id === callId);
  expect(result, `the observation of ${callId}`).toBeDefined();
  return result;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** A trajectory without what differs from one run to the next (ids, times, the order the calls ended in) and without the server references. */
function comparable(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) {
    const entries = value.map((entry) => comparable(entry));
    return key === 'results' ? entries.sort((a, b) => String((a as AtifDoc).source_call_id).localeCompare(String((b as AtifDoc).source_call_id))) : entries;
  }
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([name]) => name !== 'subagent_trajectory_ref')
        .map(([name, entry]) => [name, comparable(entry, name)]),
    );
  }
  if (typeof value === 'number' && /timestamp|duration|_ms$/.test(key)) return 0;
  if (typeof value === 'string') return key === 'timestamp' ? 'TIME' : value.replace(UUID, 'UUID');
  return value;
}

let plainRun: Promise<Output> | undefined;
/** The server without the plugin, on memory: what the agent's trajectory is held to. */
const plain = (): Promise<Output> => (plainRun ??= runProgram('memory', false));

describe('a Claude Agent SDK query whose stdio MCP server the CLI starts, instrumented with instrumentMcpServer', () => {
  it('without instrumentation: the calls are the agent\'s, referencing nothing', async () => {
    const out = await plain();
    expect(out.server.size).toBe(0);
    for (const [id] of CALLS) expect(observed(out.agent, id).subagent_trajectory_ref).toBeUndefined();
    // What the program reads is the server's content (the CLI gives a result without `_meta` as its content list).
    expect(out.toolUseResults.get('toolu_mcp_oslo')).toEqual([{ type: 'text', text: 'Oslo: rain' }]);
    // What the CLI sends in each tools/call's `_meta`: the model's tool_use id, and a progress token that is the
    // request's own JSON-RPC id; nothing else of the caller's (no session, no trace context).
    expect(out.seen.map((entry) => entry.meta['claudecode/toolUseId']).sort()).toEqual(CALLS.map(([id]) => id).sort());
    for (const entry of out.seen) expect(entry.meta).toEqual({ 'claudecode/toolUseId': expect.any(String), progressToken: entry.id });
  });

  for (const backend of backends()) {
    it(`each server trajectory names the agent's tool call, and each MCP observation references the server trajectory of its call (${backend})`, async () => {
      const out = await runProgram(backend, true);
      expect(out.server.size).toBe(CALLS.length);
      const sessionId = out.agent.session_id as string;
      for (const [id, tool, city] of CALLS) {
        const named = [...out.server].filter(([, doc]) => doc.extra?.caller?.tool_call_id === id);
        expect(named, `the server trajectories of ${id}`).toHaveLength(1);
        const [serverFile, server] = named[0]!;
        // The CLI names the tool call only: no session, no trajectory of the caller.
        expect(server.extra.caller).toEqual({ tool_call_id: id });
        expect(server.session_id).not.toBe(sessionId);
        const answer = (server.steps as AtifDoc[]).at(-1)!.observation.results[0];
        expect([answer.extra.event_name, answer.extra.metadata.tool_call_id, answer.extra.metadata.status]).toEqual([tool, id, tool === 'alerts' ? 'error' : 'ok']);
        expect(answer.content).toBe(tool === 'alerts' ? `the alert service is down for ${city}` : `${city}: rain`);
        const observation = observed(out.agent, id);
        expect(observation.subagent_trajectory_ref).toEqual([{ trajectory_id: server.trajectory_id, session_id: server.session_id, trajectory_path: serverFile }]);
        expect(JSON.stringify(observation.content)).toContain(answer.content);
      }
      // The model is sent the tools' content, never the result's `_meta` (the program reads it in `tool_use_result`).
      expect(out.model).toContain('Oslo: rain');
      expect(out.model).not.toContain('nemo-relay/');
      expect(out.toolUseResults.get('toolu_mcp_oslo')).toMatchObject({ _meta: { 'nemo-relay/caller': { tool_call_id: 'toolu_mcp_oslo' } } });
      // Nothing else in the agent's trajectory changed.
      expect(comparable(out.agent)).toEqual(comparable((await plain()).agent));
    });
  }

  it('links a sub-agent\'s MCP call the same way, read from its transcript (memory)', async () => {
    const out = await runProgram('memory', true, true);
    expect(out.server.size).toBe(1);
    const [serverFile, server] = [...out.server][0]!;
    expect(server.extra.caller).toEqual({ tool_call_id: 'toolu_mcp_sub' });
    const sub = (out.agent.subagent_trajectories as AtifDoc[] | undefined) ?? [];
    expect(sub).toHaveLength(1);
    const observation = observed(sub[0]!, 'toolu_mcp_sub');
    expect(observation.content).toBe('Tromsø: rain');
    expect(observation.subagent_trajectory_ref).toEqual([{ trajectory_id: server.trajectory_id, session_id: server.session_id, trajectory_path: serverFile }]);
    expect(out.model).not.toContain('nemo-relay/');
  });
});
