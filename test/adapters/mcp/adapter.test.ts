// nemo-relay-hooks/mcp on a real @modelcontextprotocol/sdk Client and
// McpServer, connected in one process by the SDK's InMemoryTransport (the
// two-process path over stdio is test/adapters/mcp/docs.test.ts): what the
// client puts on the wire, which host tool call it ties a request to, what
// the server records for a call with and without a context, for a tool that
// fails, and when it was instrumented before its tools were registered.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import { HookRegistry } from '../../../src/hooks/index.ts';
import { createNemoRelayPlugin } from '../../../src/plugin/plugin.ts';
import { currentMcpSession, instrumentMcpClient, instrumentMcpServer, instrumentMcpTransport, openAIAgentsMcpOptions, type McpSession } from '../../../src/adapters/mcp/index.ts';
import { propagationContextFromJson } from '../../../src/formats/propagation.ts';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { silentLogger } from '../../../src/shared/logger.ts';
import { startHttpReceiver } from '../../support/otlp-receiver.ts';

type Loose = Record<string, any>;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A server with a `forecast` tool (which records what it saw), a failing `broken` and an `isError` `refuse`. */
function weatherServer(seen: { meta: unknown[]; sessions: (McpSession | undefined)[] }): McpServer {
  const server = new McpServer({ name: 'weather-server', version: '2.1.0' });
  server.registerTool('forecast', { inputSchema: { city: z.string() } }, async ({ city }, extra) => {
    seen.meta.push(extra._meta);
    seen.sessions.push(currentMcpSession());
    return { content: [{ type: 'text', text: `${city}: rain` }] };
  });
  server.registerTool('broken', { inputSchema: {} }, async () => {
    throw new Error('station offline');
  });
  server.registerTool('refuse', { inputSchema: {} }, async () => ({ content: [{ type: 'text', text: 'no such city' }], isError: true }));
  return server;
}

async function connect(server: McpServer): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'agent', version: '1.0.0' });
  await client.connect(clientSide);
  cleanups.push(async () => {
    await client.close();
    await server.close();
  });
  return client;
}

function recorded(hooks: HookRegistry): { name: string; payload: Loose }[] {
  const log: { name: string; payload: Loose }[] = [];
  for (const name of ['on_session_start', 'on_session_finalize', 'pre_tool_call', 'post_tool_call', 'subagent_stop'] as const) {
    hooks.on(name, (payload) => void log.push({ name, payload }));
  }
  return log;
}

describe('instrumentMcpServer', () => {
  it('records a call from a client without the adapter as an ordinary root session with the tool run as its tool call', async () => {
    const hooks = new HookRegistry();
    const log = recorded(hooks);
    const seen = { meta: [] as unknown[], sessions: [] as (McpSession | undefined)[] };
    const server = instrumentMcpServer(weatherServer(seen), hooks);
    const client = await connect(server);
    const result = await client.callTool({ name: 'forecast', arguments: { city: 'Oslo' } });
    expect(result.content).toEqual([{ type: 'text', text: 'Oslo: rain' }]);
    expect(result._meta).toBeUndefined(); // nobody records: no trajectory to name
    expect(log.map((entry) => entry.name)).toEqual(['on_session_start', 'pre_tool_call', 'post_tool_call', 'on_session_finalize']);
    const start = log[0]!.payload;
    expect(start.session_id).toMatch(/^mcp-weather-server-[0-9a-f-]{36}$/);
    expect(start).toMatchObject({ platform: 'mcp', agent_name: 'weather-server', agent_version: '2.1.0' });
    expect(start.propagation_context).toBeUndefined();
    expect(start.caller).toBeUndefined();
    expect(log[1]!.payload).toMatchObject({ session_id: start.session_id, tool_name: 'forecast', args: { city: 'Oslo' } });
    expect(log[1]!.payload.tool_call_id).toMatch(/^mcp-request-\d+$/);
    expect(log[2]!.payload).toMatchObject({ session_id: start.session_id, tool_call_id: log[1]!.payload.tool_call_id, status: 'ok', result: 'Oslo: rain' });
    // Inside the handler the session is the one its hooks use; outside, none.
    expect(seen.sessions[0]).toMatchObject({ session_id: start.session_id, tool_name: 'forecast', tool_call_id: log[1]!.payload.tool_call_id, platform: 'mcp' });
    expect(currentMcpSession()).toBeUndefined();
  });

  it('records a tool that throws and one that answers isError as failed calls, and the client sees what it would without the adapter', async () => {
    const hooks = new HookRegistry();
    const log = recorded(hooks);
    const client = await connect(instrumentMcpServer(weatherServer({ meta: [], sessions: [] }), hooks));
    const thrown = await client.callTool({ name: 'broken', arguments: {} });
    expect(thrown.isError).toBe(true);
    expect(JSON.stringify(thrown.content)).toContain('station offline');
    const refused = await client.callTool({ name: 'refuse', arguments: {} });
    expect(refused).toEqual({ content: [{ type: 'text', text: 'no such city' }], isError: true });
    const ends = log.filter((entry) => entry.name === 'post_tool_call').map((entry) => entry.payload);
    expect(ends.map((end) => [end.tool_name, end.status])).toEqual([
      ['broken', 'error'],
      ['refuse', 'error'],
    ]);
    expect(ends[0]!.error_message).toContain('station offline');
    expect(ends[1]!.error_message).toBe('no such city');
    expect(log.filter((entry) => entry.name === 'on_session_finalize').map((entry) => entry.payload.reason)).toEqual(['mcp_call_failed', 'mcp_call_failed']);
  });

  it('instruments tools registered after it, once however often it is called, and leaves a non-server alone with a warning', async () => {
    const hooks = new HookRegistry();
    const log = recorded(hooks);
    const server = new McpServer({ name: 'late', version: '1.0.0' });
    instrumentMcpServer(server, hooks);
    instrumentMcpServer(server, hooks);
    server.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
    const client = await connect(server);
    await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    expect(log.map((entry) => entry.name)).toEqual(['on_session_start', 'pre_tool_call', 'post_tool_call', 'on_session_finalize']);
    const warnings: string[] = [];
    const other = { tools: [] };
    expect(instrumentMcpServer(other, hooks, { logger: { ...silentLogger, warn: (message: string) => void warnings.push(message) } })).toBe(other);
    expect(warnings.join()).toContain('no @modelcontextprotocol/sdk Server or McpServer');
  });

  it('instruments a low-level Server whose tools/call handler is its own', async () => {
    const hooks = new HookRegistry();
    const log = recorded(hooks);
    const server = new Server({ name: 'low-level', version: '0.1.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: 'ping', inputSchema: { type: 'object' } }] }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => ({ content: [{ type: 'text', text: `pong from ${request.params.name}` }] }));
    instrumentMcpServer(server, hooks);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'agent', version: '1.0.0' });
    await client.connect(clientSide);
    cleanups.push(async () => {
      await client.close();
      await server.close();
    });
    expect((await client.callTool({ name: 'ping', arguments: {} })).content).toEqual([{ type: 'text', text: 'pong from ping' }]);
    expect(log.map((entry) => [entry.name, entry.payload.agent_name ?? entry.payload.tool_name ?? entry.payload.reason])).toEqual([
      ['on_session_start', 'low-level'],
      ['pre_tool_call', 'ping'],
      ['post_tool_call', 'ping'],
      ['on_session_finalize', 'mcp_call_complete'],
    ]);
  });

  it('continues a caller that sends only a W3C traceparent (an OpenTelemetry-instrumented client)', async () => {
    const hooks = new HookRegistry();
    const log = recorded(hooks);
    const client = await connect(instrumentMcpServer(weatherServer({ meta: [], sessions: [] }), hooks));
    await client.callTool({ name: 'forecast', arguments: { city: 'Oslo' }, _meta: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' } });
    const context = propagationContextFromJson(log[0]!.payload.propagation_context);
    expect(context).toEqual({ version: 1, rootUuid: '4bf92f35-77b3-4da6-a3ce-929d0e0e4736', parentUuid: '00000000-0000-0000-00f0-67aa0ba902b7' });
  });
});

// Memory only here: native's runtime is one per process, so two plugins in one
// process would share it (the agent's builder would see the server's scopes).
// Native in two processes is test/adapters/mcp/docs.test.ts.
describe('instrumentMcpClient with a host that emits its own hooks, and the plugin on both sides', () => {
  for (const backend of ['memory'] as const) {
    it(`ties each request to the host's open tool call and the two trajectories point at each other (${backend})`, async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'nrh-mcp-'));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      const settings = { atifEnabled: true, atifOutputDirectory: dir, atifFilenameTemplate: '{session_id}.json' };
      const agentHooks = new HookRegistry();
      const atof = (file: string) => ({ atofEnabled: true, atofOutputDirectory: atofDir, atofFilename: file });
      const atofDir = mkdtempSync(path.join(tmpdir(), 'nrh-mcp-atof-'));
      cleanups.push(() => rmSync(atofDir, { recursive: true, force: true }));
      const agentPlugin = createNemoRelayPlugin({ backend, settings: { ...settings, ...atof('agent.jsonl') }, logger: silentLogger });
      agentPlugin.register(agentHooks);
      const serverHooks = new HookRegistry();
      const collector = await startHttpReceiver();
      cleanups.push(() => collector.close());
      const otlp = { otlpEnabled: true, otlpType: 'full' as const, otlpEndpoint: `${collector.url}/v1/traces` };
      const serverPlugin = createNemoRelayPlugin({ backend, settings: { ...settings, ...atof('server.jsonl'), ...otlp }, env: { OTEL_BSP_SCHEDULE_DELAY: '600000' }, logger: silentLogger });
      serverPlugin.register(serverHooks);
      // Both backends loaded before the first call: a trace context question waits for the load only so long
      // (the plugin's bound), and on a loaded machine the load can take longer; the links are what this test checks.
      await Promise.all([agentPlugin.ready, serverPlugin.ready]);
      const seen = { meta: [] as unknown[], sessions: [] as (McpSession | undefined)[] };
      const server = weatherServer(seen);
      instrumentMcpServer(server, serverHooks, { sessionId: ({ caller }) => `server-for-${caller?.tool_call_id ?? 'nobody'}` });
      const client = instrumentMcpClient(await connect(server), agentHooks);
      const serverLog = recorded(serverHooks);

      // The host: a session, a model call that asks for two tools, the MCP calls, the answer.
      const ids = { session_id: 'agent-1', turn_id: 't1' };
      const request = { method: 'POST', headers: {}, body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'Weather in Oslo?' }] } };
      const toolCalls = [
        { id: 'call_a', type: 'function', function: { name: 'mcp__weather__forecast', arguments: '{"city":"Oslo"}' } },
        { id: 'call_b', type: 'function', function: { name: 'local_lookup', arguments: '{}' } },
      ];
      const response = { id: 'r1', model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: toolCalls }, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 } };
      agentHooks.emit('on_session_start', { session_id: 'agent-1', platform: 'cli' });
      agentHooks.emit('pre_llm_call', { ...ids, user_message: 'Weather in Oslo?', is_first_turn: true });
      agentHooks.emit('pre_api_request', { ...ids, api_request_id: 't1:api:1', provider: 'openai', api_mode: 'chat_completions', model: 'gpt-4o', request });
      agentHooks.emit('post_api_request', { ...ids, api_request_id: 't1:api:1', provider: 'openai', api_mode: 'chat_completions', model: 'gpt-4o', response, usage: response.usage, assistant_message: response.choices[0]!.message, finish_reason: 'tool_calls' });
      // Two tool calls open at once: the MCP request goes with the one named after its tool.
      agentHooks.emit('pre_tool_call', { ...ids, api_request_id: 't1:api:1', tool_call_id: 'call_b', tool_name: 'local_lookup', args: {} });
      agentHooks.emit('pre_tool_call', { ...ids, api_request_id: 't1:api:1', tool_call_id: 'call_a', tool_name: 'mcp__weather__forecast', args: { city: 'Oslo' } });
      const result = await client.callTool({ name: 'forecast', arguments: { city: 'Oslo' } });
      // The server's session ended with the call: its spans are sent now, not with the next batch (10 minutes here) or at shutdown.
      const sent = await Promise.race([
        collector.waitFor((received) => received.spans().some((span) => span.name.endsWith('-session-server-for-call_a'))).then(() => true),
        new Promise<false>((resolve) => setTimeout(() => resolve(false), 45_000)),
      ]);
      expect(sent).toBe(true);
      agentHooks.emit('post_tool_call', { ...ids, api_request_id: 't1:api:1', tool_call_id: 'call_a', tool_name: 'mcp__weather__forecast', args: { city: 'Oslo' }, result: 'Oslo: rain', status: 'ok' });
      agentHooks.emit('post_tool_call', { ...ids, api_request_id: 't1:api:1', tool_call_id: 'call_b', tool_name: 'local_lookup', args: {}, result: '{}', status: 'ok' });
      // No tool call is open now: the request goes out unchanged, and the server records a root session. Its
      // answer names no trajectory: a caller that did not name itself would pass the reference on to its program.
      const unlinked = await client.callTool({ name: 'forecast', arguments: { city: 'Bergen' } });
      expect(unlinked).toEqual({ content: [{ type: 'text', text: 'Bergen: rain' }] });
      const final = { id: 'r2', model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content: 'Rain in Oslo.' }, finish_reason: 'stop' }], usage: { prompt_tokens: 30, completion_tokens: 4, total_tokens: 34 } };
      agentHooks.emit('pre_api_request', { ...ids, api_request_id: 't1:api:2', provider: 'openai', api_mode: 'chat_completions', model: 'gpt-4o', request });
      agentHooks.emit('post_api_request', { ...ids, api_request_id: 't1:api:2', provider: 'openai', api_mode: 'chat_completions', model: 'gpt-4o', response: final, usage: final.usage, assistant_message: final.choices[0]!.message, finish_reason: 'stop' });
      agentHooks.emit('post_llm_call', { ...ids, assistant_response: 'Rain in Oslo.' });
      agentHooks.emit('on_session_end', { ...ids, completed: true });
      agentHooks.emit('on_session_finalize', { session_id: 'agent-1', reason: 'done' });
      await agentPlugin.shutdown();
      await serverPlugin.shutdown();

      // On the wire: the traceparent and propagation context of call_a's span, and the caller.
      const meta = seen.meta[0] as Loose;
      const context = propagationContextFromJson(meta['nemo-relay/propagation']);
      expect(meta.traceparent).toBe(`00-${context.rootUuid!.replaceAll('-', '')}-${context.parentUuid.replaceAll('-', '').slice(16)}-01`);
      expect(meta['nemo-relay/caller']).toEqual({ session_id: 'agent-1', tool_call_id: 'call_a', trajectory_id: 'agent-1', trajectory_path: 'agent-1.json' });
      expect(seen.meta[1] === undefined || (seen.meta[1] as Loose)['nemo-relay/propagation'] === undefined).toBe(true);
      expect(serverLog.filter((entry) => entry.name === 'on_session_start').map((entry) => [entry.payload.session_id, entry.payload.propagation_context !== undefined])).toEqual([
        ['server-for-call_a', true],
        ['server-for-nobody', false],
      ]);
      // The server's session asked no model: its trajectory is the tool's run, one system step with the result, naming its caller.
      const ref = { session_id: 'server-for-call_a', trajectory_id: 'server-for-call_a', trajectory_path: 'server-for-call_a.json' };
      // The adapter read the reference and removed it and the caller the server named back: the host gets the result the tool returned.
      expect(result).toEqual({ content: [{ type: 'text', text: 'Oslo: rain' }] });
      expect(readdirSync(dir).sort()).toEqual(['agent-1.json', 'server-for-call_a.json', 'server-for-nobody.json']);
      const read = (file: string) => JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as Loose;
      for (const file of readdirSync(dir)) expect(validateAtif(read(file)), file).toEqual([]);
      const serverDoc = read('server-for-call_a.json');
      expect(serverDoc.extra).toEqual({ caller: { session_id: 'agent-1', tool_call_id: 'call_a', trajectory_id: 'agent-1', trajectory_path: 'agent-1.json' } });
      expect(serverDoc.steps.map((step: Loose) => [step.source, step.observation.results[0].content])).toEqual([['system', 'Oslo: rain']]);
      expect(read('server-for-nobody.json').extra).toBeUndefined();
      const agentDoc = read('agent-1.json');
      const results = agentDoc.steps.flatMap((step: Loose) => step.observation?.results ?? []);
      expect(results.map((entry: Loose) => [entry.source_call_id, entry.subagent_trajectory_ref])).toEqual([
        ['call_a', [ref]],
        ['call_b', undefined],
      ]);
      // ATOF: the server's session scope hangs under the agent's tool span, and its whole tree has the agent session's root.
      const events = (file: string) => readFileSync(path.join(atofDir, file), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Loose);
      const agentEvents = events('agent.jsonl');
      const serverEvents = events('server.jsonl');
      // Session scopes are named after the agent each trajectory names (`<agent>-session-<id>`).
      const scopeOf = (doc: Loose) => `${doc.agent.name}-session-${doc.session_id}`;
      const agentRoot = agentEvents.find((event) => event.name === scopeOf(agentDoc) && event.scope_category === 'start')!;
      const toolSpan = agentEvents.find((event) => event.category === 'tool' && event.scope_category === 'start' && event.metadata?.tool_call_id === 'call_a')!;
      const serverRoot = serverEvents.find((event) => event.name === scopeOf(serverDoc) && event.scope_category === 'start')!;
      expect(serverRoot.parent_uuid).toBe(toolSpan.uuid);
      expect(context).toEqual({ version: 1, rootUuid: agentRoot.propagation_root_uuid, parentUuid: toolSpan.uuid });
      const tree = serverEvents.filter((event) => event.propagation_root_uuid === agentRoot.propagation_root_uuid);
      expect(tree.length).toBeGreaterThan(2);
      expect(new Set(tree.map((event) => event.name))).toEqual(new Set([scopeOf(serverDoc), 'forecast']));
      const unrelated = serverEvents.find((event) => event.name === scopeOf(read('server-for-nobody.json')) && event.scope_category === 'start')!;
      expect(unrelated.propagation_root_uuid).toBe(unrelated.uuid);
      expect(agentPlugin.status().counters.errors).toBe(0);
      expect(serverPlugin.status().counters.errors).toBe(0);
    }, 60_000);
  }
});

// What test/adapters/mcp/random-cross-process.test.ts found, each alone.
describe('instrumentMcpClient and instrumentMcpServer with calls at once', () => {
  /** A recorder stand-in that answers every tool call's trace context, so the caller goes on the wire. */
  function answering(hooks: HookRegistry): void {
    hooks.provideTraceContext((request) => ({ traceparent: `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01`, trajectory: { session_id: request.session_id, trajectory_id: request.session_id } }));
  }

  function callerOfMeta(meta: unknown): Loose | undefined {
    return (meta as Loose | undefined)?.['nemo-relay/caller'];
  }

  it('ties same-named host tool calls open at once to the requests with their arguments, in the order they were opened', async () => {
    const hooks = new HookRegistry();
    answering(hooks);
    const server = new McpServer({ name: 'weather-server', version: '1.0.0' });
    const seen: [string, unknown][] = [];
    server.registerTool('forecast', { inputSchema: { city: z.string() } }, async ({ city }, extra) => {
      seen.push([city, callerOfMeta(extra._meta)?.tool_call_id]);
      return { content: [{ type: 'text', text: `${city}: rain` }] };
    });
    const client = instrumentMcpClient(await connect(server), hooks);
    const ids = { session_id: 'agent', turn_id: 't1' };
    const open = (id: string, city: string) => hooks.emit('pre_tool_call', { ...ids, tool_call_id: id, tool_name: 'mcp__weather__forecast', args: { city } });
    const call = (city: string) => client.callTool({ name: 'forecast', arguments: { city } });
    // Started in the order opened, as a host running them at once does.
    open('call_oslo', 'Oslo');
    open('call_bergen', 'Bergen');
    await Promise.all([call('Oslo'), call('Bergen')]);
    // Started in another order: the arguments tell them apart.
    open('call_tromso', 'Tromsø');
    open('call_molde', 'Molde');
    await Promise.all([call('Molde'), call('Tromsø')]);
    expect(seen.sort()).toEqual([
      ['Bergen', 'call_bergen'],
      ['Molde', 'call_molde'],
      ['Oslo', 'call_oslo'],
      ['Tromsø', 'call_tromso'],
    ]);
  });

  it('ties a request made inside an instrumented tool handler to that handler’s call, with others of the same server running', async () => {
    const hooks = new HookRegistry();
    answering(hooks);
    const log = recorded(hooks);
    // The second server, called from the first's handler with a client on the same hooks.
    const inner = { meta: [] as unknown[], sessions: [] as (McpSession | undefined)[] };
    const innerHooks = new HookRegistry();
    answering(innerHooks);
    recorded(innerHooks);
    const innerServer = instrumentMcpServer(weatherServer(inner), innerHooks, { sessionId: ({ caller }) => `forecast-for-${caller?.session_id}` });
    const innerClient = instrumentMcpClient(await connect(innerServer), hooks);
    const outer = new McpServer({ name: 'gateway', version: '1.0.0' });
    let release!: () => void;
    const bothRunning = new Promise<void>((resolve) => (release = resolve));
    let running = 0;
    outer.registerTool('lookup', { inputSchema: { city: z.string() } }, async ({ city }) => {
      running += 1;
      if (running === 2) release();
      await bothRunning; // two of this server's calls open at once
      const answer = await innerClient.callTool({ name: 'forecast', arguments: { city } });
      return { content: answer.content as { type: 'text'; text: string }[] };
    });
    instrumentMcpServer(outer, hooks, { sessionId: ({ caller }) => `gateway-for-${caller?.tool_call_id ?? 'nobody'}` });
    const client = await connect(outer);
    const results = await Promise.all([
      client.callTool({ name: 'lookup', arguments: { city: 'Oslo' }, _meta: { 'nemo-relay/caller': { session_id: 'agent', tool_call_id: 'call_oslo' } } }),
      client.callTool({ name: 'lookup', arguments: { city: 'Bergen' }, _meta: { 'nemo-relay/caller': { session_id: 'agent', tool_call_id: 'call_bergen' } } }),
    ]);
    expect(results.map((result) => result.content)).toEqual([[{ type: 'text', text: 'Oslo: rain' }], [{ type: 'text', text: 'Bergen: rain' }]]);
    const callers = inner.meta.map((meta) => callerOfMeta(meta));
    expect(callers.map((caller) => [caller?.session_id, caller?.tool_call_id]).sort()).toEqual([
      ['gateway-for-call_bergen', 'call_bergen'],
      ['gateway-for-call_oslo', 'call_oslo'],
    ]);
    // And each of the gateway's calls references the trajectory of the call it made (the stand-in names the session).
    const links = log.filter((entry) => entry.name === 'subagent_stop').map((entry) => [entry.payload.session_id, entry.payload.tool_call_id, entry.payload.child_session_id]);
    expect(links.sort()).toEqual([
      ['gateway-for-call_bergen', 'call_bergen', 'forecast-for-gateway-for-call_bergen'],
      ['gateway-for-call_oslo', 'call_oslo', 'forecast-for-gateway-for-call_oslo'],
    ]);
  });

  it('records a call the client cancelled as failed with error type cancelled, whatever the handler returned after', async () => {
    const hooks = new HookRegistry();
    const log = recorded(hooks);
    const server = new McpServer({ name: 'slow', version: '1.0.0' });
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    server.registerTool('wait', { inputSchema: {} }, async (_args, extra) => {
      started();
      await new Promise((resolve) => extra.signal.addEventListener('abort', resolve));
      return { content: [{ type: 'text', text: 'finished anyway' }] };
    });
    instrumentMcpServer(server, hooks);
    const client = await connect(server);
    const abort = new AbortController();
    const call = client.callTool({ name: 'wait', arguments: {} }, undefined, { signal: abort.signal });
    await running;
    abort.abort(new Error('the user pressed stop'));
    await expect(call).rejects.toThrow('the user pressed stop');
    await vi.waitFor(() => expect(log.map((entry) => entry.name)).toContain('on_session_finalize'));
    const end = log.find((entry) => entry.name === 'post_tool_call')!.payload;
    expect(end).toMatchObject({ tool_name: 'wait', status: 'error', error_type: 'cancelled', error_message: 'the client cancelled the call: Error: the user pressed stop' });
    expect(end.result).toBe(end.error_message);
    expect(log.filter((entry) => entry.name === 'on_session_finalize').map((entry) => entry.payload.reason)).toEqual(['mcp_call_cancelled']);
  });
});

// A client that is not the SDK's `Client` (the AI SDK's createMCPClient) is
// instrumented through its transport; the two-process programs are
// test/slow/mcp-frameworks.test.ts. Here the SDK's own Client over an
// InMemoryTransport stands in for any client writing JSON-RPC to it.
describe('instrumentMcpTransport', () => {
  function answering(hooks: HookRegistry): void {
    hooks.provideTraceContext((request) => ({ traceparent: `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01`, trajectory: { session_id: request.session_id, trajectory_id: request.session_id } }));
  }

  async function overTransport(server: McpServer, hooks: HookRegistry, client = new Client({ name: 'agent', version: '1.0.0' })): Promise<Client> {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    await client.connect(instrumentMcpTransport(clientSide, hooks));
    cleanups.push(async () => {
      await client.close();
      await server.close();
    });
    return client;
  }

  it('sends the open tool call’s context, links the answer and hands the client the result without the reference', async () => {
    const agentHooks = new HookRegistry();
    answering(agentHooks);
    const log = recorded(agentHooks);
    const serverHooks = new HookRegistry();
    answering(serverHooks);
    recorded(serverHooks);
    const seen = { meta: [] as unknown[], sessions: [] as (McpSession | undefined)[] };
    const server = instrumentMcpServer(weatherServer(seen), serverHooks, { sessionId: ({ caller }) => `server-for-${caller?.tool_call_id ?? 'nobody'}` });
    const client = await overTransport(server, agentHooks);
    agentHooks.emit('pre_tool_call', { session_id: 'agent', turn_id: 't1', tool_call_id: 'call_a', tool_name: 'forecast', args: { city: 'Oslo' } });
    const linked = await client.callTool({ name: 'forecast', arguments: { city: 'Oslo' } });
    agentHooks.emit('post_tool_call', { session_id: 'agent', turn_id: 't1', tool_call_id: 'call_a', tool_name: 'forecast', args: { city: 'Oslo' }, result: 'Oslo: rain' });
    const plain = await client.callTool({ name: 'forecast', arguments: { city: 'Bergen' } });
    expect(linked).toEqual({ content: [{ type: 'text', text: 'Oslo: rain' }] });
    expect(plain).toEqual({ content: [{ type: 'text', text: 'Bergen: rain' }] });
    expect((seen.meta[0] as Loose)['nemo-relay/caller']).toEqual({ session_id: 'agent', tool_call_id: 'call_a', trajectory_id: 'agent' });
    expect((seen.meta[0] as Loose).traceparent).toBe(`00-${'1'.repeat(32)}-${'2'.repeat(16)}-01`);
    expect((seen.meta[1] as Loose | undefined)?.['nemo-relay/caller']).toBeUndefined();
    const links = log.filter((entry) => entry.name === 'subagent_stop').map((entry) => entry.payload);
    expect(links).toHaveLength(1);
    expect(links[0]).toMatchObject({ session_id: 'agent', tool_call_id: 'call_a', child_session_id: 'server-for-call_a', child_status: 'completed', child_trajectory: { session_id: 'server-for-call_a', trajectory_id: 'server-for-call_a' } });
  });

  it('hands every message to a handler set before the client’s, which the SDK’s Client calls from its own', async () => {
    const hooks = new HookRegistry();
    answering(hooks);
    recorded(hooks);
    const server = new McpServer({ name: 'weather-server', version: '1.0.0' });
    server.registerTool('forecast', { inputSchema: { city: z.string() } }, async ({ city }) => ({ content: [{ type: 'text', text: `${city}: rain` }] }));
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const earlier: unknown[] = [];
    const transport = instrumentMcpTransport(clientSide, hooks);
    transport.onmessage = (message) => void earlier.push(message);
    const client = new Client({ name: 'agent', version: '1.0.0' });
    await client.connect(transport);
    cleanups.push(async () => {
      await client.close();
      await server.close();
    });
    hooks.emit('pre_tool_call', { session_id: 'agent', tool_call_id: 'call_a', tool_name: 'forecast', args: { city: 'Oslo' } });
    expect(await client.callTool({ name: 'forecast', arguments: { city: 'Oslo' } })).toEqual({ content: [{ type: 'text', text: 'Oslo: rain' }] });
    expect(earlier).toHaveLength(2); // the initialize answer and the tool's
  });

  it('leaves a request an instrumented Client already linked to that Client: one caller, one link', async () => {
    const agentHooks = new HookRegistry();
    answering(agentHooks);
    const log = recorded(agentHooks);
    const serverHooks = new HookRegistry();
    answering(serverHooks);
    recorded(serverHooks);
    const seen = { meta: [] as unknown[], sessions: [] as (McpSession | undefined)[] };
    const server = instrumentMcpServer(weatherServer(seen), serverHooks);
    const client = await overTransport(server, agentHooks, instrumentMcpClient(new Client({ name: 'agent', version: '1.0.0' }), agentHooks));
    agentHooks.emit('pre_tool_call', { session_id: 'agent', tool_call_id: 'call_a', tool_name: 'forecast', args: { city: 'Oslo' } });
    const result = await client.callTool({ name: 'forecast', arguments: { city: 'Oslo' } });
    expect(result).toEqual({ content: [{ type: 'text', text: 'Oslo: rain' }] });
    expect((seen.meta[0] as Loose)['nemo-relay/caller']).toEqual({ session_id: 'agent', tool_call_id: 'call_a', trajectory_id: 'agent' });
    expect(log.filter((entry) => entry.name === 'subagent_stop').map((entry) => entry.payload.tool_call_id)).toEqual(['call_a']);
  });
});

// The rule both sides keep: an instrumented server adds to a result's `_meta` only for a caller that named itself
// (a client without the adapter would pass it on: LangChain's MCP adapters show `_meta` to the model), and then its
// trajectory and that caller as the request named it (a client that sees only the result tells its calls apart by it).
describe('instrumentMcpServer and a result\'s _meta', () => {
  it('names its trajectory and the caller back only to a caller that named itself, the tool\'s own _meta kept', async () => {
    const hooks = new HookRegistry();
    hooks.provideTraceContext((request) => ({ traceparent: `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01`, trajectory: { session_id: request.session_id, trajectory_id: request.session_id } }));
    recorded(hooks); // a server records nothing when nothing listens
    const server = new McpServer({ name: 'weather-server', version: '1.0.0' });
    server.registerTool('forecast', { inputSchema: { city: z.string() } }, async ({ city }) => ({ content: [{ type: 'text', text: `${city}: rain` }], _meta: { station: 'ENGM' } }));
    const client = await connect(instrumentMcpServer(server, hooks, { sessionId: ({ caller }) => `server-for-${caller?.tool_call_id ?? 'nobody'}` }));
    const caller = { session_id: 'agent', tool_call_id: 'call_a', trajectory_id: 'agent' };
    const named = await client.callTool({ name: 'forecast', arguments: { city: 'Oslo' }, _meta: { 'nemo-relay/caller': caller } });
    expect(named._meta).toEqual({ station: 'ENGM', 'nemo-relay/trajectory': { session_id: 'server-for-call_a', trajectory_id: 'server-for-call_a' }, 'nemo-relay/caller': caller });
    const anonymous = await client.callTool({ name: 'forecast', arguments: { city: 'Bergen' } });
    expect(anonymous).toEqual({ content: [{ type: 'text', text: 'Bergen: rain' }], _meta: { station: 'ENGM' } });
  });

  // The `_meta` the Claude Code CLI sends with every tools/call (test/slow/claude-agent-sdk-mcp.test.ts runs the CLI),
  // which never shows the model a result's `_meta`: the tool call is the only caller it names.
  it('takes the Claude Code CLI\'s claudecode/toolUseId as the caller\'s tool call, and names it back with its trajectory', async () => {
    const hooks = new HookRegistry();
    hooks.provideTraceContext((request) => ({ trajectory: { session_id: request.session_id, trajectory_id: request.session_id } }));
    const log = recorded(hooks);
    const server = new McpServer({ name: 'weather-server', version: '1.0.0' });
    server.registerTool('forecast', { inputSchema: { city: z.string() } }, async ({ city }) => ({ content: [{ type: 'text', text: `${city}: rain` }] }));
    const client = await connect(instrumentMcpServer(server, hooks, { sessionId: ({ caller }) => `server-for-${caller?.tool_call_id ?? 'nobody'}` }));
    const result = await client.callTool({ name: 'forecast', arguments: { city: 'Oslo' }, _meta: { progressToken: 2, 'claudecode/toolUseId': 'toolu_01' } });
    expect(result._meta).toEqual({ 'nemo-relay/trajectory': { session_id: 'server-for-toolu_01', trajectory_id: 'server-for-toolu_01' }, 'nemo-relay/caller': { tool_call_id: 'toolu_01' } });
    expect(log[0]).toMatchObject({ name: 'on_session_start', payload: { session_id: 'server-for-toolu_01', caller: { tool_call_id: 'toolu_01' } } });
    expect(log[0]!.payload.propagation_context).toBeUndefined();
    expect(log[1]).toMatchObject({ name: 'pre_tool_call', payload: { tool_call_id: 'toolu_01' } });
    // The adapter's own caller wins over the CLI's id when both are sent.
    const caller = { session_id: 'agent', tool_call_id: 'call_a' };
    const both = await client.callTool({ name: 'forecast', arguments: { city: 'Bergen' }, _meta: { 'claudecode/toolUseId': 'toolu_02', 'nemo-relay/caller': caller } });
    expect((both._meta as Loose)['nemo-relay/caller']).toEqual(caller);
  });

  it('reaches the program of an instrumented Client as the tool returned it, the tool\'s own _meta kept', async () => {
    const agentHooks = new HookRegistry();
    agentHooks.provideTraceContext((request) => ({ traceparent: `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01`, trajectory: { session_id: request.session_id, trajectory_id: request.session_id } }));
    const log = recorded(agentHooks);
    const serverHooks = new HookRegistry();
    serverHooks.provideTraceContext((request) => ({ traceparent: `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01`, trajectory: { session_id: request.session_id, trajectory_id: request.session_id } }));
    recorded(serverHooks);
    const server = new McpServer({ name: 'weather-server', version: '1.0.0' });
    server.registerTool('forecast', { inputSchema: { city: z.string() } }, async ({ city }) => ({ content: [{ type: 'text', text: `${city}: rain` }], _meta: { station: 'ENGM' } }));
    const client = instrumentMcpClient(await connect(instrumentMcpServer(server, serverHooks)), agentHooks);
    agentHooks.emit('pre_tool_call', { session_id: 'agent', tool_call_id: 'call_a', tool_name: 'forecast', args: { city: 'Oslo' } });
    expect(await client.callTool({ name: 'forecast', arguments: { city: 'Oslo' } })).toEqual({ content: [{ type: 'text', text: 'Oslo: rain' }], _meta: { station: 'ENGM' } });
    expect(log.filter((entry) => entry.name === 'subagent_stop').map((entry) => entry.payload.tool_call_id)).toEqual(['call_a']);
  });
});

// The Agents SDK hands the options the result's `_meta` and no call id: the caller the server names there is what ties
// the result back, so a server naming a call it was not sent must not link it (the programs are agents.test.ts and
// test/slow/mcp-agents.test.ts).
describe('openAIAgentsMcpOptions', () => {
  it('links a result only to an open call of its registry that a request went out for', async () => {
    const hooks = new HookRegistry();
    hooks.provideTraceContext((request) => ({ traceparent: `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01`, trajectory: { session_id: request.session_id, trajectory_id: request.session_id } }));
    const log = recorded(hooks);
    const links = () => log.filter((entry) => entry.name === 'subagent_stop').map((entry) => [entry.payload.session_id, entry.payload.tool_call_id, entry.payload.child_session_id]);
    const options = openAIAgentsMcpOptions(hooks, { logger: silentLogger });
    const ids = { session_id: 'agent', turn_id: 't1' };
    hooks.emit('pre_tool_call', { ...ids, tool_call_id: 'call_a', tool_name: 'forecast', args: { city: 'Oslo' } });
    hooks.emit('pre_tool_call', { ...ids, tool_call_id: 'call_b', tool_name: 'forecast', args: { city: 'Bergen' } });
    const meta = await options.toolMetaResolver({ toolName: 'forecast', arguments: { city: 'Oslo' } });
    expect(meta?.['nemo-relay/caller']).toEqual({ session_id: 'agent', tool_call_id: 'call_a', trajectory_id: 'agent' });
    const answer = (caller: unknown) => options.customDataExtractor({ resultMeta: { 'nemo-relay/trajectory': { session_id: 'srv', trajectory_id: 'srv' }, 'nemo-relay/caller': caller } });
    // Open but never sent, another session's, none: nothing linked, and no custom data.
    expect(await answer({ session_id: 'agent', tool_call_id: 'call_b' })).toBeUndefined();
    await answer({ session_id: 'other', tool_call_id: 'call_a' });
    await answer(undefined);
    expect(links()).toEqual([]);
    // The call the request went out for.
    await answer({ session_id: 'agent', tool_call_id: 'call_a' });
    expect(links()).toEqual([['agent', 'call_a', 'srv']]);
    // Once it ended, no more.
    hooks.emit('post_tool_call', { ...ids, tool_call_id: 'call_a', tool_name: 'forecast', args: { city: 'Oslo' }, result: 'Oslo: rain' });
    await answer({ session_id: 'agent', tool_call_id: 'call_a' });
    expect(links()).toHaveLength(1);
  });
});
