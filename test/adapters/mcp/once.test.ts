// Each MCP tool call recorded once, however the program set up its server and
// client with @modelcontextprotocol/sdk: tools registered after
// `instrumentMcpServer` (the first, and more after the first call), tools
// disabled and removed, a closed server connected again, a low-level
// `Server`'s `tools/call` handler set after it and replaced, a handler set
// over the instrumented one that hands the request on to it, the server or
// the client instrumented twice (with the same hooks, or with other hooks),
// and a client instrumented after `connect()`. The agent is the AI SDK's
// `generateText` on `@ai-sdk/openai` against a fake fetch, its tool calling an
// MCP SDK `Client` (docs/adapters/mcp.md's agent); the server is in this
// process over the SDK's InMemoryTransport, and once a child over stdio. What
// is counted: the server's sessions and tool starts per call id (hooks and
// ATOF), its trajectory files, the agent's references to them and the
// `_meta` the client got; memory and native write the same files.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { generateText, stepCountIs, tool } from 'ai';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { instrumentMcpClient, instrumentMcpServer, instrumentMcpTransport } from '../../../src/adapters/mcp/index.ts';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { silentLogger, type Logger } from '../../../src/shared/logger.ts';
import { runtime } from '../../support/child.ts';
import { repoRoot } from '../../support/doc-snippets.ts';
import { FakeProvider } from '../ai-sdk/wire.ts';
import { sameOnNative } from '../same-on-native.ts';
import { expectNothingLost, onlyTrajectory, recordedPlugin, type AtifDoc, type AtofEvent, type Recorded } from '../support.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

type Loose = Record<string, any>;

/** One call the model asks for: its id, the MCP tool, and the text the server answers (`failed`: as `isError`). */
interface Call {
  id: string;
  tool: string;
  args: Record<string, unknown>;
  text: string;
  failed?: boolean;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The agent (`user-42`) and the server, each with a plugin of its own (both memory: native is one per process). */
function sides(label: string): { agent: Recorded; server: Recorded } {
  const agent = recordedPlugin(`mcp-once-${label}-agent`);
  const server = recordedPlugin(`mcp-once-${label}-server`);
  cleanups.push(() => {
    rmSync(agent.dir, { recursive: true, force: true });
    rmSync(server.dir, { recursive: true, force: true });
  });
  return { agent, server };
}

/** A Client connected to `server` in this process. */
async function connected(server: McpServer | Server): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'weather-agent', version: '1.0.0' });
  await client.connect(clientSide);
  cleanups.push(() => client.close());
  return client;
}

/**
 * The agent's program: one `generateText` per call, the model asking for it, the tool's `execute` calling MCP as the
 * page's agent does. Returns each result as the client handed it to the program.
 */
class Agent {
  readonly api = new FakeProvider();
  readonly results: Loose[] = [];
  readonly #openai = createOpenAI({ apiKey: 'sk-test-not-a-key', fetch: this.api.fetch as typeof fetch });

  constructor(hooks: Recorded['hooks']) {
    cleanups.push(instrumentAiSdk(hooks, { sessionId: 'user-42', logger: silentLogger }));
  }

  async ask(client: Client, call: Call): Promise<void> {
    this.api.reply('responses', { id: `resp_${call.id}`, model: 'gpt-4o-2024-08-06', text: '', toolCalls: [{ id: call.id, name: call.tool, args: call.args }], usage: { input: 40, output: 9 } });
    this.api.reply('responses', { id: `resp_${call.id}_done`, model: 'gpt-4o-2024-08-06', text: `done ${call.id}`, usage: { input: 60, output: 3 } });
    const { text } = await generateText({
      model: this.#openai('gpt-4o'),
      prompt: `Run ${call.tool}.`,
      tools: {
        [call.tool]: tool({
          description: `The ${call.tool} tool`,
          inputSchema: z.record(z.string(), z.unknown()),
          execute: async (args) => {
            const result = (await client.callTool({ name: call.tool, arguments: args })) as Loose;
            this.results.push(result);
            return result;
          },
        }),
      },
      stopWhen: stepCountIs(2),
    });
    expect(text).toBe(`done ${call.id}`);
  }
}

/** Hook payloads of `name` in `recorded`'s log. */
function hooksOf(recorded: Recorded, name: string): Loose[] {
  return recorded.log.filter((entry) => entry.hook === name).map((entry) => entry.payload);
}

/** How many times each value occurs. */
function counts(values: unknown[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const value of values) out[String(value)] = (out[String(value)] ?? 0) + 1;
  return out;
}

/** The ATOF tool starts, by the call id they name. */
function toolStarts(atof: AtofEvent[]): Record<string, number> {
  return counts(atof.filter((event) => event.kind === 'scope' && event.category === 'tool' && event.scope_category === 'start').map((event) => event.category_profile?.tool_call_id));
}

/**
 * Each of `calls` was recorded once on both sides: one server session, one tool start (hooks and ATOF) and one
 * trajectory file per call, holding what the client got; one reference to it on the agent's call, and the program
 * got the result as the tool returned it.
 */
async function expectEachOnce(agentSide: Recorded, serverSide: Recorded, agent: Agent, calls: Call[]): Promise<void> {
  const ids = calls.map((call) => call.id);
  const once = Object.fromEntries(ids.map((id) => [id, 1]));
  expect(agent.results.map((result) => result.content[0].text)).toEqual(calls.map((call) => call.text));
  expect(agent.results.map((result) => result.isError === true)).toEqual(calls.map((call) => call.failed === true));
  for (const result of agent.results) expect(result._meta).toBeUndefined();

  const started = hooksOf(serverSide, 'on_session_start');
  expect(started.map((payload) => payload.caller?.tool_call_id)).toEqual(ids);
  expect(counts(hooksOf(serverSide, 'pre_tool_call').map((payload) => payload.tool_call_id))).toEqual(once);
  const ended = hooksOf(serverSide, 'post_tool_call');
  expect(ended.map((payload) => [payload.tool_call_id, payload.status, payload.result])).toEqual(calls.map((call) => [call.id, call.failed === true ? 'error' : 'ok', call.text]));
  expect(counts(hooksOf(agentSide, 'subagent_stop').map((payload) => payload.tool_call_id))).toEqual(once);

  const served = await serverSide.finish();
  expectNothingLost(served.counters);
  expect(toolStarts(served.atof)).toEqual(once);
  const files = readdirSync(path.join(serverSide.dir, 'atif')).sort();
  expect(files).toHaveLength(calls.length);
  const byCall = new Map<string, { file: string; doc: AtifDoc }>();
  for (const file of files) {
    const doc = JSON.parse(readFileSync(path.join(serverSide.dir, 'atif', file), 'utf8')) as AtifDoc;
    expect(validateAtif(doc), file).toEqual([]);
    byCall.set(doc.extra.caller.tool_call_id, { file, doc });
  }
  for (const call of calls) {
    const { doc } = byCall.get(call.id)!;
    expect(doc.steps.map((step: AtifDoc) => step.observation.results.map((result: AtifDoc) => result.content))).toEqual([[call.text]]);
  }

  const run = await agentSide.finish();
  expectNothingLost(run.counters);
  expect(toolStarts(run.atof)).toEqual(once);
  const doc = onlyTrajectory(run.atif);
  const observed = doc.steps.flatMap((step: AtifDoc) => step.observation?.results ?? []);
  for (const call of calls) {
    const server = byCall.get(call.id)!;
    const result = observed.filter((entry: AtifDoc) => entry.source_call_id === call.id);
    expect(result, call.id).toHaveLength(1);
    expect(result[0].subagent_trajectory_ref).toEqual([{ session_id: server.doc.session_id, trajectory_id: server.doc.trajectory_id, trajectory_path: server.file }]);
  }
  await sameOnNative(serverSide);
  await sameOnNative(agentSide);
}

/** A logger that keeps its warnings. */
function warningsTo(into: string[]): Logger {
  return { ...silentLogger, warn: (message: string) => void into.push(message) };
}

describe('an McpServer instrumented before its tools', () => {
  it('records each call once: the first tool registered after it, tools registered after the first call, a disabled and a removed tool, and after close() and a new connection', async () => {
    const { agent: agentSide, server: serverSide } = sides('mcp-server');
    const server = instrumentMcpServer(new McpServer({ name: 'weather-server', version: '1.0.0' }), serverSide.hooks);
    const forecast = server.registerTool('forecast', { inputSchema: { city: z.string() } }, async ({ city }) => ({ content: [{ type: 'text', text: `${city}: rain` }] }));
    const agent = new Agent(agentSide.hooks);
    const client = instrumentMcpClient(await connected(server), agentSide.hooks);
    const calls: Call[] = [{ id: 'call_1', tool: 'forecast', args: { city: 'Oslo' }, text: 'Oslo: rain' }];
    await agent.ask(client, calls[0]!);
    // The SDK installs its tools/call handler with the first tool and keeps it: a tool registered now is served by it.
    server.registerTool('alerts', { inputSchema: { city: z.string() } }, async ({ city }) => ({ content: [{ type: 'text', text: `${city}: no alerts` }] }));
    calls.push({ id: 'call_2', tool: 'alerts', args: { city: 'Rome' }, text: 'Rome: no alerts' });
    await agent.ask(client, calls.at(-1)!);
    // A disabled tool and a removed one: the SDK answers the call isError, one failed call each.
    forecast.disable();
    calls.push({ id: 'call_3', tool: 'forecast', args: { city: 'Oslo' }, text: 'MCP error -32602: Tool forecast disabled', failed: true });
    await agent.ask(client, calls.at(-1)!);
    forecast.remove();
    calls.push({ id: 'call_4', tool: 'forecast', args: { city: 'Oslo' }, text: 'MCP error -32602: Tool forecast not found', failed: true });
    await agent.ask(client, calls.at(-1)!);
    // Closed, then connected to a new client: the same instrumented handler.
    await client.close();
    await server.close();
    const again = instrumentMcpClient(await connected(server), agentSide.hooks);
    calls.push({ id: 'call_5', tool: 'alerts', args: { city: 'Bergen' }, text: 'Bergen: no alerts' });
    await agent.ask(again, calls.at(-1)!);
    await expectEachOnce(agentSide, serverSide, agent, calls);
  }, 60_000);

  it('records each call once when instrumented twice with the same hooks, and warns and records nothing into other hooks', async () => {
    const { agent: agentSide, server: serverSide } = sides('twice');
    const other = recordedPlugin('mcp-once-other');
    cleanups.push(() => rmSync(other.dir, { recursive: true, force: true }));
    const warnings: string[] = [];
    const server = instrumentMcpServer(new McpServer({ name: 'weather-server', version: '1.0.0' }), serverSide.hooks);
    server.registerTool('forecast', { inputSchema: { city: z.string() } }, async ({ city }) => ({ content: [{ type: 'text', text: `${city}: rain` }] }));
    expect(instrumentMcpServer(server, serverSide.hooks, { logger: warningsTo(warnings) })).toBe(server);
    expect(warnings).toEqual([]);
    instrumentMcpServer(server.server, other.hooks, { logger: warningsTo(warnings) });
    expect(warnings).toEqual([expect.stringContaining('instrumentMcpServer was called again with other hooks')]);
    const agent = new Agent(agentSide.hooks);
    const client = instrumentMcpClient(await connected(server), agentSide.hooks);
    const calls: Call[] = [{ id: 'call_1', tool: 'forecast', args: { city: 'Oslo' }, text: 'Oslo: rain' }];
    await agent.ask(client, calls[0]!);
    expect(other.log).toEqual([]);
    await expectEachOnce(agentSide, serverSide, agent, calls);
  }, 60_000);

  it('records each call once when two copies of the adapter instrument it (the package built, and its sources)', async () => {
    const { agent: agentSide, server: serverSide } = sides('two-copies');
    // Two copies of nemo-relay-hooks in one program (a dependency of the program's with a copy of its own): each
    // module has its own state; what the server is instrumented with is on the server.
    const built = (await import('nemo-relay-hooks/mcp')) as { instrumentMcpServer: typeof instrumentMcpServer; instrumentMcpClient: typeof instrumentMcpClient };
    expect(built.instrumentMcpServer).not.toBe(instrumentMcpServer);
    const server = new McpServer({ name: 'weather-server', version: '1.0.0' });
    server.registerTool('forecast', { inputSchema: { city: z.string() } }, async ({ city }) => ({ content: [{ type: 'text', text: `${city}: rain` }] }));
    built.instrumentMcpServer(server, serverSide.hooks);
    instrumentMcpServer(server, serverSide.hooks);
    const agent = new Agent(agentSide.hooks);
    const client = built.instrumentMcpClient(instrumentMcpClient(await connected(server), agentSide.hooks), agentSide.hooks);
    const calls: Call[] = [{ id: 'call_1', tool: 'forecast', args: { city: 'Oslo' }, text: 'Oslo: rain' }];
    await agent.ask(client, calls[0]!);
    await expectEachOnce(agentSide, serverSide, agent, calls);
  }, 60_000);

  it('records a call once when a handler set over the instrumented one hands the request on to it', async () => {
    const { agent: agentSide, server: serverSide } = sides('middleware');
    const server = new McpServer({ name: 'weather-server', version: '1.0.0' });
    server.registerTool('forecast', { inputSchema: { city: z.string() } }, async ({ city }) => ({ content: [{ type: 'text', text: `${city}: rain` }] }));
    instrumentMcpServer(server, serverSide.hooks);
    // A middleware of the program's (the Claude Agent SDK test's request log): it reads the instrumented handler back
    // from the SDK's map and sets its own, which the instrumentation wraps in turn.
    const handlers = (server.server as unknown as { _requestHandlers: Map<string, (request: Loose, extra: unknown) => Promise<unknown>> })._requestHandlers;
    const instrumented = handlers.get('tools/call')!;
    const seen: unknown[] = [];
    handlers.set('tools/call', (request, extra) => {
      seen.push(request.id);
      return instrumented(request, extra);
    });
    const agent = new Agent(agentSide.hooks);
    const client = instrumentMcpClient(await connected(server), agentSide.hooks);
    const calls: Call[] = [
      { id: 'call_1', tool: 'forecast', args: { city: 'Oslo' }, text: 'Oslo: rain' },
      { id: 'call_2', tool: 'forecast', args: { city: 'Rome' }, text: 'Rome: rain' },
    ];
    for (const call of calls) await agent.ask(client, call);
    expect(seen).toHaveLength(2);
    await expectEachOnce(agentSide, serverSide, agent, calls);
  }, 60_000);
});

describe('a low-level Server', () => {
  it('records each call once, its tools/call handler set after instrumentMcpServer and replaced, with the answer of the one set last', async () => {
    const { agent: agentSide, server: serverSide } = sides('low-level');
    const server = instrumentMcpServer(new Server({ name: 'weather-server', version: '1.0.0' }, { capabilities: { tools: {} } }), serverSide.hooks);
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: 'forecast', inputSchema: { type: 'object' } }] }));
    server.setRequestHandler(CallToolRequestSchema, async () => ({ content: [{ type: 'text', text: 'first handler' }] }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => ({ content: [{ type: 'text', text: `${String(request.params.arguments?.city)}: rain` }] }));
    const agent = new Agent(agentSide.hooks);
    const client = instrumentMcpClient(await connected(server), agentSide.hooks);
    const calls: Call[] = [{ id: 'call_1', tool: 'forecast', args: { city: 'Oslo' }, text: 'Oslo: rain' }];
    await agent.ask(client, calls[0]!);
    await expectEachOnce(agentSide, serverSide, agent, calls);
  }, 60_000);
});

/**
 * The client side's cases: an instrumented server whose tool logs the `_meta` each request brought, the agent, and a
 * third plugin (`other`) whose hooks a second instrumentation is given.
 */
async function clientSideCase(label: string) {
  const { agent: agentSide, server: serverSide } = sides(label);
  const other = recordedPlugin(`mcp-once-${label}-other`);
  cleanups.push(() => rmSync(other.dir, { recursive: true, force: true }));
  const server = new McpServer({ name: 'weather-server', version: '1.0.0' });
  const requests: Loose[] = [];
  server.registerTool('forecast', { inputSchema: { city: z.string() } }, async ({ city }, extra) => {
    requests.push(extra._meta ?? {});
    return { content: [{ type: 'text', text: `${city}: rain` }] };
  });
  instrumentMcpServer(server, serverSide.hooks);
  const agent = new Agent(agentSide.hooks);
  const call: Call = { id: 'call_1', tool: 'forecast', args: { city: 'Oslo' }, text: 'Oslo: rain' };
  /** The agent's call through `client`: one request naming its caller once, nothing in `other`, each record once. */
  const askOnce = async (client: Client): Promise<void> => {
    await agent.ask(client, call);
    expect(requests).toHaveLength(1);
    expect(requests[0]!['nemo-relay/caller']).toMatchObject({ session_id: 'user-42', tool_call_id: 'call_1' });
    expect(other.log).toEqual([]);
    await expectEachOnce(agentSide, serverSide, agent, [call]);
  };
  return { agentSide, other, server, askOnce };
}

describe('the client side', () => {
  it('a Client instrumented after connect() and twice links each call once: one caller in the request, one reference; other hooks are warned of and get nothing', async () => {
    const { agentSide, other, server, askOnce } = await clientSideCase('client');
    const client = await connected(server);
    const warnings: string[] = [];
    instrumentMcpClient(client, agentSide.hooks, { logger: warningsTo(warnings) });
    instrumentMcpClient(client, agentSide.hooks, { logger: warningsTo(warnings) });
    expect(warnings).toEqual([]);
    instrumentMcpClient(client, other.hooks, { logger: warningsTo(warnings) });
    expect(warnings).toEqual([expect.stringContaining('instrumentMcpClient was called again with other hooks')]);
    await askOnce(client);
  }, 60_000);

  it('a transport instrumented twice (the object, and an HTTP config whose fetch already links) links each call once; other hooks are warned of and get nothing', async () => {
    const { agentSide, other, server, askOnce } = await clientSideCase('transport');
    const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair();
    await server.connect(serverEnd);
    const warnings: string[] = [];
    instrumentMcpTransport(clientEnd, agentSide.hooks, { logger: warningsTo(warnings) });
    instrumentMcpTransport(clientEnd, agentSide.hooks, { logger: warningsTo(warnings) });
    expect(warnings).toEqual([]);
    instrumentMcpTransport(clientEnd, other.hooks, { logger: warningsTo(warnings) });
    expect(warnings).toEqual([expect.stringContaining('instrumentMcpTransport was called again with other hooks')]);
    // The config form (the AI SDK's `createMCPClient` transport): one whose fetch already links is left as it is.
    const config = instrumentMcpTransport({ type: 'http' as const, url: 'http://127.0.0.1:9/mcp' }, agentSide.hooks);
    expect(instrumentMcpTransport(config, agentSide.hooks)).toBe(config);
    expect(instrumentMcpTransport(config, other.hooks, { logger: warningsTo(warnings) })).toBe(config);
    expect(warnings).toHaveLength(2);
    const client = new Client({ name: 'weather-agent', version: '1.0.0' });
    await client.connect(clientEnd);
    cleanups.push(() => client.close());
    await askOnce(client);
  }, 60_000);
});

// The program as a user runs it: the server a child over stdio, instrumented before its tools and again after
// them, one tool registering another when called (the SDK then tells the client its list changed).
const SERVER = String.raw`
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';
import { createNemoRelayPlugin, HookRegistry } from 'nemo-relay-hooks';
import { instrumentMcpServer } from 'nemo-relay-hooks/mcp';

const hooks = new HookRegistry();
const plugin = createNemoRelayPlugin({ settings: { atofEnabled: true, atofOutputDirectory: process.argv[2] + '/atof', atifEnabled: true, atifOutputDirectory: process.argv[2] + '/atif' } });
plugin.register(hooks);
const server = instrumentMcpServer(new McpServer({ name: 'weather-server', version: '1.0.0' }), hooks);
server.registerTool('forecast', { inputSchema: { city: z.string() } }, async ({ city }) => ({ content: [{ type: 'text', text: city + ': rain' }] }));
server.registerTool('enable_alerts', { inputSchema: {} }, async () => {
  server.registerTool('alerts', { inputSchema: { city: z.string() } }, async ({ city }) => ({ content: [{ type: 'text', text: city + ': no alerts' }] }));
  return { content: [{ type: 'text', text: 'alerts enabled' }] };
});
instrumentMcpServer(server, hooks);
await server.connect(new StdioServerTransport());
process.stdin.on('close', () => plugin.shutdown().then(() => process.exit(0)));
plugin.installExitHandlers();
`;

describe('the server a child over stdio', () => {
  const home = path.join(repoRoot, '.tmp', 'mcp-once');
  mkdirSync(home, { recursive: true });
  // Inside the package: 'nemo-relay-hooks' resolves as it does for a user.
  const folder = mkdtempSync(path.join(home, `${runtime}-`));
  const script = path.join(folder, 'server.mjs');
  writeFileSync(script, SERVER);
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('writes one trajectory and one tool start per call, a tool registered by another call included', async () => {
    const agentSide = recordedPlugin('mcp-once-stdio-agent');
    cleanups.push(() => rmSync(agentSide.dir, { recursive: true, force: true }));
    const out = path.join(folder, 'out');
    const agent = new Agent(agentSide.hooks);
    const client = new Client({ name: 'weather-agent', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [...(runtime === 'deno' ? ['run', '-A'] : []), script, out], env: process.env as Record<string, string>, stderr: 'ignore' }));
    instrumentMcpClient(client, agentSide.hooks);
    const calls: Call[] = [
      { id: 'call_1', tool: 'forecast', args: { city: 'Oslo' }, text: 'Oslo: rain' },
      { id: 'call_2', tool: 'enable_alerts', args: {}, text: 'alerts enabled' },
      { id: 'call_3', tool: 'alerts', args: { city: 'Rome' }, text: 'Rome: no alerts' },
    ];
    for (const call of calls) await agent.ask(client, call);
    await client.close();
    expect(agent.results.map((result) => [result.content[0].text, result._meta])).toEqual(calls.map((call) => [call.text, undefined]));
    const run = await agentSide.finish();
    expectNothingLost(run.counters);
    const agentDoc = onlyTrajectory(run.atif);
    // The server wrote each call's trajectory as the call ended, before it answered: on disk now.
    const files = readdirSync(path.join(out, 'atif')).sort();
    const docs = files.map((file) => JSON.parse(readFileSync(path.join(out, 'atif', file), 'utf8')) as AtifDoc);
    expect(docs.map((doc) => doc.extra.caller.tool_call_id).sort()).toEqual(['call_1', 'call_2', 'call_3']);
    for (const doc of docs) expect(validateAtif(doc)).toEqual([]);
    const observed = agentDoc.steps.flatMap((step: AtifDoc) => step.observation?.results ?? []);
    for (const [index, doc] of docs.entries()) {
      const call = calls.find((candidate) => candidate.id === doc.extra.caller.tool_call_id)!;
      expect(doc.steps.at(-1).observation.results.map((result: AtifDoc) => result.content)).toEqual([call.text]);
      const refs = observed.filter((entry: AtifDoc) => entry.source_call_id === call.id).flatMap((entry: AtifDoc) => entry.subagent_trajectory_ref);
      expect(refs).toEqual([{ session_id: doc.session_id, trajectory_id: doc.trajectory_id, trajectory_path: files[index] }]);
    }
    // The server's ATOF: a session that continues another process's call writes its lines as it ends.
    const atof = readdirSync(path.join(out, 'atof')).flatMap((file) =>
      readFileSync(path.join(out, 'atof', file), 'utf8')
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as AtofEvent),
    );
    expect(toolStarts(atof)).toEqual({ call_1: 1, call_2: 1, call_3: 1 });
    await sameOnNative(agentSide);
  }, 60_000);
});
