// The Claude Agent SDK's other two kinds of MCP server, beside the stdio child
// of test/slow/claude-agent-sdk-mcp.test.ts: a Streamable HTTP server the CLI
// reaches by url (`mcpServers: { remote: { type: 'http', url } }`) and an
// in-process SDK server (`createSdkMcpServer` + `tool()`), each instrumented
// with `instrumentMcpServer` and recorded by a plugin of its own, as a server
// in another process would be. The real SDK and CLI, offline against the
// loopback Messages server. What the CLI sends in each `tools/call` is held
// here as it was seen (the docs say it): `_meta` with `claudecode/toolUseId`
// (the model's tool_use id) and a `progressToken` (the request's own JSON-RPC
// id), over HTTP no header of the caller's (no traceparent, no
// session: `mcp-session-id` is the server's own transport session). So each
// server trajectory names the agent's tool call, and each observation
// references the server trajectory of its own call, on both kinds. An
// in-process server instrumented on the agent's own hooks is told the rest
// of its caller from this process (the running call of that tool_use id):
// its sessions nest under their tool calls in the ATOF file (and in `view`),
// continue the agent's trace, and name the agent's session and trajectory,
// as a linked call from another process does; the agent's trajectory
// references them and does not embed them.
//
// Slow (each query spawns the CLI): test/slow.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import * as sdk from '@anthropic-ai/claude-agent-sdk';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { wrapClaudeAgentSdk } from '../../src/adapters/claude-agent-sdk/index.ts';
import { instrumentMcpServer } from '../../src/adapters/mcp/index.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { sameOnNative } from '../adapters/same-on-native.ts';
import { treesFromAtof } from '../../src/cli/view/from-atof.ts';
import type { AtofEvent as TypedAtofEvent } from '../../src/formats/atof/types.ts';
import { backends, expectNothingLost, findNode, recordedPlugin, type AtifDoc, type AtofEvent, type Recorded } from '../adapters/support.ts';
import { offlineClaudeEnv, startAnthropicMock, type MockRequest, type MockReply } from '../support/anthropic-mock.ts';
import { startHttpReceiver, type DecodedSpan } from '../support/otlp-receiver.ts';

/** The model's calls, in one reply: [tool_use id, tool the model names, city, answer]. */
const CALLS = [
  ['toolu_http_oslo', 'mcp__remote__forecast', 'Oslo', 'Oslo: rain'],
  ['toolu_sdk_rome', 'mcp__local__get_weather', 'Rome', 'Rome: sun'],
  ['toolu_sdk_paris', 'mcp__local__get_weather', 'Paris', 'Paris: sun'],
] as const;

function script(request: MockRequest): MockReply {
  if (request.assistantTurns === 0) {
    return { blocks: CALLS.map(([id, name, city]) => ({ type: 'tool_use' as const, id, name, input: { city } })), usage: { input: 30, output: 8 }, model: 'claude-mcp-2026-01-01' };
  }
  return { blocks: [{ type: 'text', text: 'Oslo: rain. Rome: sun.' }], usage: { input: 60, output: 6 }, model: 'claude-mcp-2026-01-01' };
}

/** A `tools/call` as it reached a server: its `_meta`, and over HTTP its headers. */
interface Seen {
  /** The request's JSON-RPC id. */
  id: unknown;
  meta: unknown;
  headers?: Record<string, unknown>;
}

/** A Streamable HTTP MCP server, a session per client, its McpServer instrumented on `hooks`; `seen` gets each tools/call. */
async function httpServer(hooks: Recorded['hooks'], seen: Seen[]): Promise<{ url: string; close: () => Promise<void> }> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const server = http.createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += String(chunk);
    const body: unknown = raw === '' ? undefined : JSON.parse(raw);
    const request = body as { id?: unknown; method?: string; params?: { _meta?: unknown } } | undefined;
    if (request?.method === 'tools/call') seen.push({ id: request.id, meta: request.params?._meta, headers: { ...req.headers } });
    const sessionId = req.headers['mcp-session-id'];
    let transport = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
    if (transport === undefined) {
      const created = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => void transports.set(id, created) });
      const mcp = new McpServer({ name: 'remote-weather', version: '1.0.0' });
      mcp.registerTool('forecast', { description: 'The forecast for a city', inputSchema: { city: z.string() } }, async ({ city }) => ({ content: [{ type: 'text', text: `${city}: rain` }] }));
      instrumentMcpServer(mcp, hooks);
      await mcp.connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res, body);
  });
  const sockets = new Set<import('node:net').Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

interface Output {
  agent: AtifDoc;
  /** The servers' trajectories (the HTTP one's and the in-process one's), by the tool call they name. */
  servers: Map<string, AtifDoc>;
  seen: Seen[];
  model: string;
  agentRecorded: Recorded;
  /** The agent's ATOF events (the in-process server's too, with one plugin). */
  agentEvents: AtofEvent[];
  /** The spans the agent's plugin sent (with one plugin only). */
  agentSpans: DecodedSpan[];
}

/** `sameHooks`: the in-process server is instrumented on the agent's own registry (one plugin for the program), not a plugin of its own. */
async function runProgram(backend: 'memory' | 'native', sameHooks = false): Promise<Output> {
  const mock = await startAnthropicMock(script);
  const offline = offlineClaudeEnv(mock.url);
  const collector = sameHooks ? await startHttpReceiver() : undefined;
  const otlp = collector === undefined ? {} : { otlpEnabled: true, otlpType: 'full' as const, otlpEndpoint: `${collector.url}/v1/traces` };
  const agentRecorded = recordedPlugin(`claude-mcp-http-${backend}`, backend, otlp);
  const serverRecorded = recordedPlugin(`claude-mcp-http-server-${backend}`, backend);
  const seen: Seen[] = [];
  const remote = await httpServer(serverRecorded.hooks, seen);
  try {
    const { query, tool, createSdkMcpServer } = wrapClaudeAgentSdk(sdk, agentRecorded.hooks);
    const local = createSdkMcpServer({
      name: 'local',
      version: '1.0.0',
      tools: [tool('get_weather', 'The weather in a city', { city: z.string() }, async ({ city }) => ({ content: [{ type: 'text', text: `${city}: sun` }] }))],
    });
    // Seen by the server's own handler, set before instrumenting: the instrumentation hands the request on as it
    // came. (One set after it is wrapped in turn and the call is still recorded once: test/adapters/mcp/once.test.ts.)
    const low = (local.instance as unknown as { server: { _requestHandlers: Map<string, (request: { id?: unknown; params?: { _meta?: unknown } }, extra: unknown) => unknown> } }).server;
    const handler = low._requestHandlers.get('tools/call')!;
    low._requestHandlers.set('tools/call', (request, extra) => {
      seen.push({ id: request.id, meta: request.params?._meta });
      return handler(request, extra);
    });
    instrumentMcpServer(local.instance, sameHooks ? agentRecorded.hooks : serverRecorded.hooks);
    let answer: string | undefined;
    for await (const message of query({
      prompt: 'Weather in Oslo and Rome?',
      options: {
        cwd: offline.home,
        env: offline.env,
        settingSources: [],
        mcpServers: { remote: { type: 'http', url: remote.url }, local },
        allowedTools: CALLS.map(([, name]) => name),
      },
    })) {
      if (message.type === 'result' && message.subtype === 'success') answer = message.result;
    }
    expect(answer).toBe('Oslo: rain. Rome: sun.');
    const agentRun = await agentRecorded.finish();
    const serverRun = await serverRecorded.finish();
    expectNothingLost(agentRun.counters);
    expectNothingLost(serverRun.counters);
    for (const doc of [...agentRun.atif, ...serverRun.atif]) expect(validateAtif(doc)).toEqual([]);
    // With one plugin, the in-process server's sessions are trajectories of their own in the agent's folder, beside the agent's.
    const [agent, ...others] = agentRun.atif.filter((doc) => doc.extra?.caller === undefined).concat(agentRun.atif.filter((doc) => doc.extra?.caller !== undefined));
    expect(others).toHaveLength(sameHooks ? 2 : 0);
    // One server session per call: the HTTP server's, and the in-process server's where it was recorded.
    expect(serverRun.atif).toHaveLength(sameHooks ? 1 : CALLS.length);
    const servers = new Map([...serverRun.atif, ...others].map((doc) => [String(doc.extra?.caller?.tool_call_id), doc]));
    return { agent: agent!, servers, seen, model: JSON.stringify(mock.requests.map((request) => request.body)), agentRecorded, agentEvents: agentRun.atof, agentSpans: collector?.spans() ?? [] };
  } finally {
    await remote.close();
    await collector?.close();
    await mock.close();
    rmSync(offline.home, { recursive: true, force: true });
    rmSync(serverRecorded.dir, { recursive: true, force: true });
  }
}

function observed(doc: AtifDoc, callId: string): AtifDoc {
  const result = (doc.steps as AtifDoc[]).flatMap((step) => step.observation?.results ?? []).find((entry: AtifDoc) => entry.source_call_id === callId);
  expect(result, `the observation of ${callId}`).toBeDefined();
  return result;
}

describe('a Claude Agent SDK query whose MCP servers are an HTTP url and an in-process SDK server, each instrumented with instrumentMcpServer', () => {
  const cases = [...backends().map((backend) => [backend, false] as const), ...backends().map((backend) => [backend, true] as const)];
  for (const [backend, sameHooks] of cases) {
    it(`each tools/call names the model's tool_use id and nothing of the caller's else; the trajectories link both ways (${backend}${sameHooks ? ', the in-process server on the agent\'s hooks' : ''})`, async () => {
      const out = await runProgram(backend, sameHooks);
      try {
        // What the CLI sends, as seen: the HTTP call first or the in-process one, one each.
        const byId = new Map(out.seen.map((entry) => [(entry.meta as Record<string, unknown>)['claudecode/toolUseId'], entry]));
        expect([...byId.keys()].sort()).toEqual(CALLS.map(([id]) => id).sort());
        // The progress token is the request's own JSON-RPC id: it names nothing of the caller's.
        for (const entry of out.seen) expect(entry.meta).toEqual({ 'claudecode/toolUseId': expect.any(String), progressToken: entry.id });
        const headers = byId.get('toolu_http_oslo')!.headers!;
        expect(Object.keys(headers).filter((name) => /trace|baggage|claude|anthropic|session/i.test(name))).toEqual(['mcp-session-id']);
        expect(headers['user-agent']).toMatch(/^claude-code\//);

        expect(out.servers.size).toBe(CALLS.length);
        const sessionId = out.agent.session_id as string;
        for (const [id, name, , text] of CALLS) {
          const server = out.servers.get(id);
          expect(server, `the server trajectory of ${id}`).toBeDefined();
          // The CLI names the tool call only: no session, no trajectory of the caller. An in-process server on the
          // agent's hooks finds the rest in this process.
          const inProcess = sameHooks && name.startsWith('mcp__local__');
          expect(server!.extra.caller).toEqual(inProcess ? { session_id: sessionId, tool_call_id: id, trajectory_id: out.agent.trajectory_id, trajectory_path: expect.stringMatching(new RegExp(`${sessionId}\\.json$`)) } : { tool_call_id: id });
          expect(server!.session_id).not.toBe(sessionId);
          const result = (server!.steps as AtifDoc[]).at(-1)!.observation.results[0];
          expect([result.extra.event_name, result.extra.metadata.tool_call_id, result.extra.metadata.status, result.content]).toEqual([name.split('__')[2], id, 'ok', text]);
          const observation = observed(out.agent, id);
          expect(observation.content).toBe(text);
          expect(observation.subagent_trajectory_ref).toEqual([{ trajectory_id: server!.trajectory_id, session_id: server!.session_id, trajectory_path: expect.any(String) }]);
          expect(observation.subagent_trajectory_ref[0].trajectory_path).toMatch(new RegExp(`${server!.trajectory_id}\\.json$`));
        }
        // The agent's trajectory references the server trajectories, as another process's: it embeds none.
        expect(out.agent).not.toHaveProperty('subagent_trajectories');
        // The ATOF file: an in-process server's session (on the agent's hooks) hangs under its tool call's span, in
        // the agent's trace, as a linked call from another process does; `view` shows it there, and not on its own.
        const events = out.agentEvents;
        const starts = events.filter((event) => event.kind === 'scope' && event.scope_category === 'start');
        const agentRoot = starts.find((event) => event.category === 'agent' && (event.metadata as AtifDoc)?.session_id === sessionId)!;
        const trees = treesFromAtof(events as unknown as readonly TypedAtofEvent[]);
        // (On native the file holds the HTTP server plugin's sessions too: one runtime per process writes both.)
        const roots = trees.map((tree) => tree.title).filter((title) => !title.startsWith('session mcp-remote-weather-'));
        if (sameHooks) expect(roots).toEqual([`session ${sessionId}`]);
        for (const [id, name] of sameHooks ? CALLS.filter(([, name]) => name.startsWith('mcp__local__')) : []) {
          const server = out.servers.get(id)!;
          const toolSpan = starts.find((event) => event.category === 'tool' && (event.metadata as AtifDoc)?.tool_call_id === id)!;
          const serverRoot = starts.find((event) => event.category === 'agent' && (event.metadata as AtifDoc)?.session_id === server.session_id)!;
          expect(serverRoot.parent_uuid, `the session of ${id}`).toBe(toolSpan.uuid);
          expect(serverRoot.propagation_root_uuid).toBe(agentRoot.propagation_root_uuid);
          const toolNode = findNode(trees.find((tree) => tree.title === `session ${sessionId}`)!, (node) => node.kind === 'tool' && node.title.includes(name) && node.source?.start === toolSpan);
          expect(toolNode?.children.map((child) => child.title), `view: under ${id}`).toEqual([`remote session ${server.session_id}`]);
          // OTLP: the server's session span is the tool call span's child, in the agent's trace.
          const sessionSpan = out.agentSpans.find((span) => span.name.endsWith(`-session-${server.session_id}`));
          expect([sessionSpan?.traceId, sessionSpan?.parentSpanId], `the session span of ${id}`).toEqual([agentRoot.propagation_root_uuid.replaceAll('-', ''), toolSpan.uuid.replaceAll('-', '').slice(16)]);
        }
        // The model is sent the tools' content, never the result's `_meta`.
        expect(out.model).toContain('Rome: sun');
        expect(out.model).not.toContain('nemo-relay/');
        await sameOnNative(out.agentRecorded);
      } finally {
        rmSync(out.agentRecorded.dir, { recursive: true, force: true });
      }
    });
  }
});

/** A sub-agent that calls the in-process server's tool once, started by the main agent's one Agent call. */
function subAgentScript(request: MockRequest): MockReply {
  if (request.system.includes('You are the researcher')) {
    if (request.assistantTurns === 0) return { blocks: [{ type: 'tool_use', id: 'toolu_sub_tromso', name: 'mcp__local__get_weather', input: { city: 'Tromsø' } }], usage: { input: 7, output: 3 }, model: 'claude-sub-2026-01-01' };
    return { blocks: [{ type: 'text', text: 'Tromsø: sun.' }], usage: { input: 15, output: 4 }, model: 'claude-sub-2026-01-01' };
  }
  if (request.assistantTurns === 0) {
    return { blocks: [{ type: 'tool_use', id: 'toolu_agent', name: 'Agent', input: { description: 'weather', prompt: 'Weather in Tromsø?', subagent_type: 'researcher', run_in_background: false } }], usage: { input: 30, output: 6 }, model: 'claude-mcp-2026-01-01' };
  }
  return { blocks: [{ type: 'text', text: 'Tromsø: sun.' }], usage: { input: 50, output: 5 }, model: 'claude-mcp-2026-01-01' };
}

describe('an in-process SDK server on the agent\'s hooks, called by a sub-agent', () => {
  it('records the call as a session of its own naming the tool call only, referenced from the sub-agent\'s observation (its call is recorded from the transcript, after it ran)', async () => {
    const mock = await startAnthropicMock(subAgentScript);
    const offline = offlineClaudeEnv(mock.url);
    const recorded = recordedPlugin('claude-mcp-in-process-sub');
    try {
      const { query, tool, createSdkMcpServer } = wrapClaudeAgentSdk(sdk, recorded.hooks);
      const local = createSdkMcpServer({
        name: 'local',
        version: '1.0.0',
        tools: [tool('get_weather', 'The weather in a city', { city: z.string() }, async ({ city }) => ({ content: [{ type: 'text', text: `${city}: sun` }] }))],
      });
      instrumentMcpServer(local.instance, recorded.hooks);
      const researcher = { description: 'Finds the weather', prompt: 'You are the researcher.', tools: ['mcp__local__get_weather'] };
      let answer: string | undefined;
      for await (const message of query({
        prompt: 'Ask the researcher.',
        options: { agents: { researcher }, cwd: offline.home, env: offline.env, settingSources: [], mcpServers: { local }, allowedTools: ['mcp__local__get_weather', 'Agent'] },
      })) {
        if (message.type === 'result' && message.subtype === 'success') answer = message.result;
      }
      expect(answer).toBe('Tromsø: sun.');
      const { atif, atof, counters } = await recorded.finish();
      expectNothingLost(counters);
      const agent = atif.find((doc) => doc.extra?.caller === undefined)!;
      const server = atif.find((doc) => doc.extra?.caller !== undefined)!;
      expect(server.extra.caller).toEqual({ tool_call_id: 'toolu_sub_tromso' });
      const sub = agent.subagent_trajectories as AtifDoc[];
      expect(sub).toHaveLength(1);
      expect(observed(sub[0]!, 'toolu_sub_tromso').subagent_trajectory_ref).toEqual([{ trajectory_id: server.trajectory_id, session_id: server.session_id, trajectory_path: expect.any(String) }]);
      expect(treesFromAtof(atof as unknown as readonly TypedAtofEvent[]).map((tree) => tree.title)).toEqual([`session ${agent.session_id}`, `session ${server.session_id}`]);
    } finally {
      await mock.close();
      rmSync(offline.home, { recursive: true, force: true });
      rmSync(recorded.dir, { recursive: true, force: true });
    }
  });
});
