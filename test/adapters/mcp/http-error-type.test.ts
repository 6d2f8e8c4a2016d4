// One failure, one name on both sides of a Streamable HTTP call: the AI SDK's
// `generateText` with `@ai-sdk/mcp`'s `{ type: 'http', url }` client (through
// `instrumentMcpTransport`) calls an instrumented `McpServer` served on
// loopback by the MCP SDK's `StreamableHTTPServerTransport` (one per MCP
// session, as its docs serve it), each side recording into its own plugin.
// A tool that throws (the SDK answers `isError` with its message) and one that
// answers `isError` itself: the agent's adapter names such a call `ToolError`
// (`reportedToolError`), so the server's trajectory and its ATOF event must
// too: a trace or a query by error type then finds both halves of the call.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createMCPClient } from '@ai-sdk/mcp';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, type ToolSet } from 'ai';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import * as z from 'zod';
import { instrumentAiSdk } from '../../../src/adapters/ai-sdk/index.ts';
import { instrumentMcpServer, instrumentMcpTransport } from '../../../src/adapters/mcp/index.ts';
import { FakeProvider } from '../ai-sdk/wire.ts';
import { expectNothingLost, recordedPlugin, type AtifDoc } from '../support.ts';

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

type Doc = Record<string, any>;
const MODEL = 'gpt-4o-2024-08-06';

/** The instrumented weather server on 127.0.0.1, one `McpServer` and transport per MCP session. */
async function serve(hooks: Parameters<typeof instrumentMcpServer>[1]): Promise<{ url: string; close(): Promise<void> }> {
  const makeServer = () => {
    const server = new McpServer({ name: 'weather-server', version: '1.0.0' });
    server.registerTool('boom', { description: 'Throws', inputSchema: { city: z.string() } }, async ({ city }) => {
      throw new Error(`boom in ${city}`);
    });
    server.registerTool('refuse', { description: 'Answers isError', inputSchema: { city: z.string() } }, async ({ city }) => ({ content: [{ type: 'text' as const, text: `no data for ${city}` }], isError: true }));
    return instrumentMcpServer(server, hooks);
  };
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer(async (req, res) => {
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? transports.get(id) : undefined;
    if (transport === undefined) {
      const created = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (sid) => void transports.set(sid, created) });
      await makeServer().connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    close: async () => {
      await Promise.all([...transports.values()].map((transport) => transport.close()));
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

const failedResults = (doc: Doc): Doc[] => (doc.steps as Doc[]).flatMap((step) => step.observation?.results ?? []).filter((entry: Doc) => entry.extra?.metadata?.status === 'error');

describe('MCP over Streamable HTTP: a failed call has one error type on both sides', () => {
  it("the server names an isError answer ToolError, as the agent's adapter does", async () => {
    const server = recordedPlugin('mcp-http-error-type-server');
    const agent = recordedPlugin('mcp-http-error-type-agent');
    const http = await serve(server.hooks);
    const fake = new FakeProvider();
    fake.reply('responses', { id: 'resp_1', model: MODEL, toolCalls: [{ id: 'call_boom', name: 'boom', args: { city: 'Oslo' } }, { id: 'call_refuse', name: 'refuse', args: { city: 'Oslo' } }], usage: { input: 50, output: 10 } });
    fake.reply('responses', { id: 'resp_2', model: MODEL, text: 'No forecast today.', usage: { input: 90, output: 5 } });
    uninstall = instrumentAiSdk(agent.hooks, { sessionId: 'user-42' });
    try {
      const mcp = await createMCPClient({ transport: instrumentMcpTransport({ type: 'http', url: http.url }, agent.hooks) });
      try {
        await generateText({ model: createOpenAI({ apiKey: 'test-key', fetch: fake.fetch as typeof fetch })('gpt-4o'), prompt: 'Weather in Oslo?', tools: (await mcp.tools()) as ToolSet, stopWhen: stepCountIs(3) });
      } finally {
        await mcp.close();
      }
    } finally {
      await http.close();
    }
    uninstall();
    uninstall = undefined;
    const agentOut = await agent.finish();
    const serverOut = await server.finish();
    expectNothingLost(agentOut.counters);
    expectNothingLost(serverOut.counters);

    const agentFailures = failedResults(agentOut.atif[0] as AtifDoc);
    expect(agentFailures.map((entry) => [entry.source_call_id, entry.extra.metadata['error.type'], entry.extra.metadata['error.message']]).sort()).toEqual([
      ['call_boom', 'ToolError', 'boom in Oslo'],
      ['call_refuse', 'ToolError', 'no data for Oslo'],
    ]);
    // Each server trajectory names its caller and records the same failure under the same name.
    const serverFailures = serverOut.atif.flatMap((doc) => failedResults(doc as Doc).map((entry) => [(doc as Doc).extra.caller.tool_call_id, entry.extra.metadata['error.type'], entry.extra.metadata['error.message']]));
    expect(serverFailures.sort()).toEqual([
      ['call_boom', 'ToolError', 'boom in Oslo'],
      ['call_refuse', 'ToolError', 'no data for Oslo'],
    ]);
    const serverEnds = server.log.filter((entry) => entry.hook === 'post_tool_call').map((entry) => [entry.payload.tool_call_id, entry.payload.error_type]);
    expect(serverEnds.sort()).toEqual([
      ['call_boom', 'ToolError'],
      ['call_refuse', 'ToolError'],
    ]);
  });
});
