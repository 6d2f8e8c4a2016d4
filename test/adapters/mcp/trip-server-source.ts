// The MCP server program of the asks-back tests (asks-back.test.ts, asks-back-langchain.test.ts), run as a child
// process: a trip server whose tools ask the client back or report failure, instrumented with instrumentMcpServer.
import { STREAMABLE_HTTP_SERVER } from './streamable-http-source.ts';

/**
 * argv[2]: the server's trajectory folder; argv[3]: `http` to serve Streamable HTTP on loopback (one server per MCP
 * session, as the MCP SDK's example serves it; it prints `listening <port>`), else stdio. The backend is the
 * environment's. Its tools ask the client back as the MCP SDK's examples do, without looking at the client's
 * capabilities (`name_sight` for sampling, `book_tour` for a form elicitation), or answer `isError` (`weather_alerts`).
 */
export const TRIP_SERVER = String.raw`
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { createNemoRelayPlugin, HookRegistry } from 'nemo-relay-hooks';
import { instrumentMcpServer } from 'nemo-relay-hooks/mcp';
${STREAMABLE_HTTP_SERVER}

const hooks = new HookRegistry();
const plugin = createNemoRelayPlugin({ settings: { atifEnabled: true, atifOutputDirectory: process.argv[2] } });
plugin.register(hooks);

function tripServer() {
  const server = new McpServer({ name: 'trip-server', version: '1.0.0' });
  server.registerTool('name_sight', { description: 'Names a sight in a city', inputSchema: { city: z.string() } }, async ({ city }) => {
    const sampled = await server.server.createMessage({
      messages: [{ role: 'user', content: { type: 'text', text: 'Name one sight in ' + city + '.' } }],
      maxTokens: 100,
    });
    return { content: [{ type: 'text', text: sampled.content.type === 'text' ? sampled.content.text : 'no sight' }] };
  });
  server.registerTool('book_tour', { description: 'Books a guided tour of a city', inputSchema: { city: z.string() } }, async ({ city }) => {
    const answer = await server.server.elicitInput({
      mode: 'form',
      message: 'Book a guided tour of ' + city + '?',
      requestedSchema: { type: 'object', properties: { book: { type: 'boolean', title: 'Book it' } }, required: ['book'] },
    });
    const booked = answer.action === 'accept' && answer.content?.book === true;
    return { content: [{ type: 'text', text: booked ? 'tour booked' : 'no tour: ' + answer.action }] };
  });
  server.registerTool('weather_alerts', { description: 'Weather alerts for a city', inputSchema: { city: z.string() } }, async ({ city }) => ({
    content: [{ type: 'text', text: 'The alerts service for ' + city + ' is down.' }],
    isError: true,
  }));
  return instrumentMcpServer(server, hooks);
}

if (process.argv[3] !== 'http') {
  await tripServer().connect(new StdioServerTransport());
  process.stdin.on('close', () => plugin.shutdown().then(() => process.exit(0)));
  plugin.installExitHandlers();
} else {
  const http = streamableHttpServer(tripServer);
  http.listen(0, '127.0.0.1', () => console.log('listening ' + http.address().port));
  process.on('SIGTERM', () => {
    http.close();
    http.closeAllConnections();
    plugin.shutdown().then(() => process.exit(0));
  });
}
`;
