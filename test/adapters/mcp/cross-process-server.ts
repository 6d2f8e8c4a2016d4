// The MCP server of the cross-process random tests (random-cross-process.ts),
// as a user writes one: an McpServer with the NeMo Relay plugin, over stdio
// (a child of its client) or Streamable HTTP on loopback (one transport and
// McpServer per MCP session, as the SDK's own example serves it). Its tools
// answer, refuse (`isError`), throw, wait to be cancelled, kill their own
// process mid-call, and call a second MCP server (a child of this one) with
// an instrumented client: the nested case. Written into the package
// (.tmp/) so `nemo-relay-hooks` and the SDK resolve as they do for a user.
// One argument: the JSON of a ServerConfig.
import { STREAMABLE_HTTP_SERVER } from './streamable-http-source.ts';

export interface ServerConfig {
  name: string;
  transport: 'stdio' | 'http';
  /** Without it: no plugin, no adapter (what a client sees without the adapter). */
  instrument: boolean;
  backend: 'memory' | 'native';
  /** The plugin writes atif/ and atof/ here, and status.json (its status() counters) at shutdown. */
  outDir: string;
  /** The server the `relay` tool calls. */
  downstream?: ServerConfig;
}

export const SERVER_SOURCE = String.raw`
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { EmptyResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { createNemoRelayPlugin, HookRegistry } from 'nemo-relay-hooks';
import { instrumentMcpClient, instrumentMcpServer } from 'nemo-relay-hooks/mcp';
${STREAMABLE_HTTP_SERVER}

const config = JSON.parse(process.argv[2]);
const script = fileURLToPath(import.meta.url);
const runtimeArgs = process.versions.deno ? ['run', '-A'] : [];
const hooks = new HookRegistry();
const plugin = config.instrument ? createNemoRelayPlugin({ backend: config.backend, settings: { atifEnabled: true, atifOutputDirectory: config.outDir + '/atif', atofEnabled: true, atofOutputDirectory: config.outDir + '/atof' } }) : undefined;
plugin?.register(hooks);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

let downstream;
let downstreamProcess;
/** The client of the second server, connected on first use. */
function nextServer() {
  downstream ??= (async () => {
    const client = new Client({ name: config.name + '-client', version: '1.0.0' });
    if (config.instrument) instrumentMcpClient(client, hooks);
    const args = [...runtimeArgs, script, JSON.stringify(config.downstream)];
    if (config.downstream.transport === 'stdio') {
      await client.connect(new StdioClientTransport({ command: process.execPath, args, env: process.env }));
      return client;
    }
    downstreamProcess = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    const port = await new Promise((resolve, reject) => {
      let out = '';
      downstreamProcess.stdout.setEncoding('utf8').on('data', (chunk) => {
        out += chunk;
        const found = /listening (\d+)/.exec(out);
        if (found) resolve(Number(found[1]));
      });
      downstreamProcess.on('exit', () => reject(new Error('the second server exited before listening')));
    });
    await client.connect(new StreamableHTTPClientTransport(new URL('http://127.0.0.1:' + port + '/mcp')));
    return client;
  })();
  return downstream;
}

const text = { text: z.string(), delay_ms: z.number().optional(), progress: z.number().optional() };

/** One McpServer with the tools (per MCP session over HTTP). */
function mcpServer() {
  const server = new McpServer({ name: config.name, version: '1.0.0' });
  server.registerTool('echo', { inputSchema: text }, async ({ text, delay_ms, progress }, extra) => {
    const token = extra._meta?.progressToken;
    for (let step = 1; step <= (progress ?? 0); step++) {
      if (token !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: step, total: progress } });
      await sleep(1);
    }
    // The SDK's client handles a notification a microtask after it reads it but an answer at once, so progress read
    // with the answer is lost (modelcontextprotocol/typescript-sdk#2580). An order, not a wait: a ping the client
    // answers. Its handler is queued behind the progress handlers, so by the time its answer is back every progress
    // notification has reached the caller, and only then does the result go out.
    if (token !== undefined && (progress ?? 0) > 0) await extra.sendRequest({ method: 'ping' }, EmptyResultSchema);
    await sleep(delay_ms ?? 0);
    return { content: [{ type: 'text', text: config.name + ' says ' + text }] };
  });
  server.registerTool('refuse', { inputSchema: text }, async ({ text, delay_ms }) => {
    await sleep(delay_ms ?? 0);
    return { content: [{ type: 'text', text: config.name + ' refuses ' + text }], isError: true };
  });
  server.registerTool('fail', { inputSchema: text }, async ({ text, delay_ms }) => {
    await sleep(delay_ms ?? 0);
    throw new Error(config.name + ' failed on ' + text);
  });
  // Says it started (a progress notification), then waits for the client to cancel.
  server.registerTool('hang', { inputSchema: text }, async ({ text }, extra) => {
    const token = extra._meta?.progressToken;
    if (token !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: 1 } });
    await new Promise((resolve) => (extra.signal.aborted ? resolve() : extra.signal.addEventListener('abort', resolve)));
    return { content: [{ type: 'text', text: config.name + ' finished ' + text + ' after it was cancelled' }] };
  });
  server.registerTool('die', { inputSchema: text }, async () => {
    process.kill(process.pid, 'SIGKILL');
    await new Promise(() => {});
  });
  server.registerTool('relay', { inputSchema: { ...text, tool: z.string() } }, async ({ tool, text, delay_ms }) => {
    const client = await nextServer();
    const result = await client.callTool({ name: tool, arguments: { text, delay_ms } });
    return { content: result.content, ...(result.isError ? { isError: true } : {}) };
  });
  if (config.instrument) instrumentMcpServer(server, hooks);
  return server;
}

let closing;
function shutdown() {
  closing ??= (async () => {
    if (downstream !== undefined) await (await downstream.catch(() => undefined))?.close();
    if (downstreamProcess !== undefined && downstreamProcess.exitCode === null && downstreamProcess.signalCode === null) {
      const exited = new Promise((resolve) => downstreamProcess.once('exit', resolve));
      downstreamProcess.kill('SIGTERM');
      await exited;
    }
    if (plugin !== undefined) {
      await plugin.shutdown();
      writeFileSync(config.outDir + '/status.json', JSON.stringify(plugin.status().counters));
    }
    process.exit(0);
  })();
}

if (config.transport === 'stdio') {
  await mcpServer().connect(new StdioServerTransport());
  process.stdin.on('close', shutdown);
} else {
  const http = streamableHttpServer(mcpServer);
  http.listen(0, '127.0.0.1', () => console.log('listening ' + http.address().port));
  const stop = () => {
    http.close();
    http.closeAllConnections();
    shutdown();
  };
  process.on('SIGTERM', stop);
  // Its parent holds stdin open: a parent killed mid-call leaves no orphan.
  process.stdin.on('close', stop);
  process.stdin.resume();
}
`;
