// The Streamable HTTP server the MCP SDK's docs write (one transport per session, made on the session's first POST),
// as source text for the server programs the MCP tests run in child processes. Each program imports `createServer`
// (node:http), `randomUUID` (node:crypto) and `StreamableHTTPServerTransport`, then calls
// `streamableHttpServer(makeServer)` with the function that makes and instruments its `McpServer`.
export const STREAMABLE_HTTP_SERVER = String.raw`
function streamableHttpServer(makeServer) {
  const transports = new Map();
  return createServer(async (req, res) => {
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? transports.get(id) : undefined;
    if (transport === undefined) {
      if (req.method !== 'POST' || id !== undefined) {
        res.writeHead(404).end();
        return;
      }
      const created = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (sid) => transports.set(sid, created) });
      created.onclose = () => transports.delete(created.sessionId);
      await makeServer().connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res);
  });
}
`;
