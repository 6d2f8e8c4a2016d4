// The two programs of test/adapters/mcp/agents.test.ts, as the OpenAI Agents
// SDK's docs write an agent with an MCP server: an `Agent` with
// `mcpServers: [new MCPServerStdio(...)]`, `await server.connect()`, `run()`
// (here twice: once as it returns, once streamed), `await server.close()`,
// with a tool input guardrail on the server's tools;
// and the MCP server, an `McpServer` instrumented with `instrumentMcpServer`:
// the agent's child over stdio, or on its own over Streamable HTTP
// (`MCPServerStreamableHttp({ url })`), or over the SDK's SSE transport
// (`MCPServerSSE({ url })`, the server's `SSEServerTransport`). The program has
// a `toolMetaResolver` and a `customDataExtractor` of its own: given to the
// server as they are, or handed to `openAIAgentsMcpOptions` (over HTTP, with `traceparentFetch()` as the
// server's `fetch`). Both record with the NeMo Relay
// plugin, configured by the environment (backend, OTLP). Written into the
// package (.tmp/) so `nemo-relay-hooks` and the SDKs resolve as they do for a
// user.
import { STREAMABLE_HTTP_SERVER } from './streamable-http-source.ts';

/** argv[2]: the JSON of an AgentConfig. */
export interface AgentConfig {
  /** The server program's path (stdio: the agent starts it). */
  server: string;
  /** Streamable HTTP or SSE: the server's URL (it runs on its own). */
  url?: string;
  /** Which transport `url` speaks. */
  transport?: 'http' | 'sse';
  /** Spread `openAIAgentsMcpOptions(hooks)` into the server's options. */
  link: boolean;
  /** Where the agent's trajectories go; the server's go to `<out>-server`. */
  out: string;
}

export const AGENT_SOURCE = String.raw`
import { Agent, MCPServerSSE, MCPServerStdio, MCPServerStreamableHttp, ToolGuardrailFunctionOutputFactory, run } from '@openai/agents';
import { createNemoRelayPlugin, HookRegistry } from 'nemo-relay-hooks';
import { openAIAgentsMcpOptions, traceparentFetch } from 'nemo-relay-hooks/mcp';
import { instrumentOpenAIAgents } from 'nemo-relay-hooks/openai-agents';

const config = JSON.parse(process.argv[2]);
const hooks = new HookRegistry();
const plugin = createNemoRelayPlugin({ settings: { atifEnabled: true, atifOutputDirectory: config.out } });
plugin.register(hooks);
let session = 'weather-1';
instrumentOpenAIAgents(hooks, { sessionId: () => session });
// The tool calls recorded as failed, as the hooks say them.
hooks.on('post_tool_call', (call) => {
  if (call.status === 'error') console.log('failed call: ' + JSON.stringify([call.tool_call_id, call.error_type, call.error_message]));
});
// The runs they ended as failed.
hooks.on('on_session_end', (end) => {
  if (end.failed === true) console.log('failed run: ' + JSON.stringify([end.session_id, end.error_type, end.error_message]));
});

// A policy check on every MCP tool call whose first answer is slow (a cold cache): the first call reaches
// its MCP request after the calls the model asked for next.
let warm = false;
const policy = {
  name: 'policy',
  run: async () => {
    if (!warm) {
      warm = true;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return ToolGuardrailFunctionOutputFactory.allow();
  },
};

// The program's own: a tenant in every request's _meta (a city no tenant serves fails the call), and which server
// answered, and whether with an error, as the tool output's custom data.
const own = {
  toolMetaResolver: async ({ arguments: args }) => {
    if (args?.city === 'Atlantis') throw new Error('no tenant serves Atlantis');
    return { 'example.com/tenant': 'acme' };
  },
  // It cannot read a region from Reykjavik's answer (it throws), and Nuuk's it says as a string, not an object.
  customDataExtractor: ({ serverName, isError, arguments: args }) => {
    if (args?.city === 'Reykjavik') throw new RangeError('no region in the answer for Reykjavik');
    if (args?.city === 'Nuuk') return 'Nuuk';
    return { answered_by: serverName, is_error: isError === true };
  },
};
const linked = config.link ? openAIAgentsMcpOptions(hooks, own) : own;
// Linked over HTTP: each linked call's traceparent in its request's headers too.
const overHttp = config.link ? { fetch: traceparentFetch() } : {};
const server =
  config.url === undefined
    ? new MCPServerStdio({
        name: 'weather',
        command: process.execPath,
        args: [...(process.versions.deno ? ['run', '-A'] : []), config.server, config.out + '-server'],
        env: process.env,
        // The SDK's own option for the handshake (5 s by default): a child runtime starting on a loaded machine can take longer.
        clientSessionTimeoutSeconds: 60,
        toolInputGuardrails: [policy],
        ...linked,
      })
    : config.transport === 'sse'
      ? new MCPServerSSE({ name: 'weather', url: config.url, toolInputGuardrails: [policy], ...overHttp, ...linked })
      : new MCPServerStreamableHttp({ name: 'weather', url: config.url, toolInputGuardrails: [policy], ...overHttp, ...linked });
/** Each tool output's custom data, by call id. */
const customData = (result) => JSON.stringify(result.newItems.filter((item) => item.type === 'tool_call_output_item').map((item) => [item.rawItem.callId, item.customData ?? null]));
await server.connect();
try {
  const agent = new Agent({ name: 'Weather agent', instructions: 'Answer with the forecast and the alerts.', model: 'gpt-4.1', mcpServers: [server] });
  const answered = await run(agent, 'Weather and alerts for Oslo and Bergen?');
  console.log('run 1: ' + answered.finalOutput);
  console.log('custom data 1: ' + customData(answered));
  session = 'weather-2';
  const streamed = await run(agent, 'And for Tromsø?', { stream: true });
  for await (const _event of streamed) {
    // the events as they come
  }
  await streamed.completed;
  console.log('run 2: ' + streamed.finalOutput);
  console.log('custom data 2: ' + customData(streamed));
  // A run whose one call the program's extractor fails (3: it throws; 4: it returns a string): what the run does with it.
  for (const [n, city] of [[3, 'Reykjavik'], [4, 'Nuuk']]) {
    session = 'weather-' + n;
    try {
      const result = await run(agent, 'And for ' + city + '?');
      console.log('run ' + n + ': ' + result.finalOutput);
    } catch (error) {
      console.log('run ' + n + ' rejected: ' + JSON.stringify([error?.constructor?.name, error?.name, error?.message]));
    }
  }
} finally {
  await server.close();
}
await plugin.shutdown();
`;

/**
 * argv[2]: the trajectory folder (each request's `_meta`, as the tool handler gets it, goes to `<folder>-meta.jsonl`,
 * the trace-context headers of the HTTP request it came in to `<folder>-headers.jsonl`, the ATOF events to
 * `<folder>-atof/`);
 * argv[3]: `http` to serve Streamable HTTP on loopback, `sse` to serve the SSE transport (either prints
 * `listening <port>`), else stdio.
 */
export const SERVER_SOURCE = String.raw`
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { createNemoRelayPlugin, HookRegistry } from 'nemo-relay-hooks';
import { instrumentMcpServer } from 'nemo-relay-hooks/mcp';
${STREAMABLE_HTTP_SERVER}

const hooks = new HookRegistry();
const plugin = createNemoRelayPlugin({ settings: { atifEnabled: true, atifOutputDirectory: process.argv[2], atofEnabled: true, atofOutputDirectory: process.argv[2] + '-atof' } });
plugin.register(hooks);

let answers = 0;
/** The request's _meta as the handler got it, and the W3C trace headers of its HTTP request (none over stdio), one line per call. */
function received(city, extra) {
  appendFileSync(process.argv[2] + '-meta.jsonl', JSON.stringify({ city, meta: extra._meta ?? null }) + '\n');
  const headers = extra.requestInfo?.headers ?? {};
  appendFileSync(process.argv[2] + '-headers.jsonl', JSON.stringify({ city, traceparent: headers.traceparent ?? null, tracestate: headers.tracestate ?? null }) + '\n');
}
/** The server (one per MCP session over HTTP, as the SDK's example serves it). */
function weatherServer() {
  const server = new McpServer({ name: 'weather-server', version: '1.0.0' });
  server.registerTool('forecast', { description: 'The forecast for a city', inputSchema: { city: z.string() } }, async ({ city }, extra) => {
    received(city, extra);
    // Each answer is numbered: two calls with the same arguments get different answers.
    const answer = ++answers;
    // Oslo answers after Bergen: the answers come back in another order than the calls went out.
    if (city === 'Oslo') await new Promise((resolve) => setTimeout(resolve, 50));
    return { content: [{ type: 'text', text: city + ': rain (answer ' + answer + ')' }] };
  });
  server.registerTool('alerts', { description: 'The weather alerts for a city', inputSchema: { city: z.string() } }, async ({ city }, extra) => {
    received(city, extra);
    return { content: [{ type: 'text', text: 'the alert service is down for ' + city }], isError: true };
  });
  return instrumentMcpServer(server, hooks);
}

/** Listens on a free loopback port and says which; stopped with SIGTERM, the files are written, then it exits. */
function serve(http) {
  http.listen(0, '127.0.0.1', () => console.log('listening ' + http.address().port));
  process.on('SIGTERM', () => {
    http.close();
    http.closeAllConnections();
    plugin.shutdown().then(() => process.exit(0));
  });
}

if (process.argv[3] === 'sse') {
  // The SDK's SSE transport: a GET opens the event stream (one server per stream), POSTs to /messages?sessionId= carry the requests.
  const transports = new Map();
  const http = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    if (req.method === 'GET' && url.pathname === '/sse') {
      const transport = new SSEServerTransport('/messages', res);
      transports.set(transport.sessionId, transport);
      res.on('close', () => transports.delete(transport.sessionId));
      await weatherServer().connect(transport);
      return;
    }
    const transport = req.method === 'POST' && url.pathname === '/messages' ? transports.get(url.searchParams.get('sessionId')) : undefined;
    if (transport === undefined) {
      res.writeHead(404).end();
      return;
    }
    await transport.handlePostMessage(req, res);
  });
  serve(http);
} else if (process.argv[3] !== 'http') {
  await weatherServer().connect(new StdioServerTransport());
  process.stdin.on('close', () => plugin.shutdown().then(() => process.exit(0)));
  plugin.installExitHandlers();
} else {
  const http = streamableHttpServer(weatherServer);
  serve(http);
}
`;
