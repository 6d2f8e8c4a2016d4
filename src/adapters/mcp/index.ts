/**
 * `nemo-relay-hooks/mcp`: one trace across MCP processes. On the client,
 * `instrumentMcpClient(client, hooks)` puts the trace context of the host's
 * tool call in each `tools/call` request's `params._meta` (W3C
 * `traceparent`, and NeMo Relay's propagation context under
 * `nemo-relay/propagation`; over HTTP, `traceparentFetch()` given to the
 * SDK's HTTP transport puts the `traceparent` in the request's headers too);
 * on the server, `instrumentMcpServer(server,
 * hooks)` records each tool call as a session continuing it, and
 * `currentMcpSession()` gives a tool handler that session. With the NeMo
 * Relay plugin on both sides, a collector gets one trace (the server's spans
 * under the client's tool span), and the two trajectories point at each
 * other: the server's names its caller in `extra.caller`, the client's tool
 * observation references the server's in `subagent_trajectory_ref`.
 *
 * Works with `@modelcontextprotocol/sdk` 1.x `Client`, `McpServer` and
 * `Server`, over any transport; the SDK itself is not imported. A client of
 * its own (the AI SDK's `createMCPClient`) is instrumented through its
 * transport: `instrumentMcpTransport(transport, hooks)`.
 *
 * @module
 */

export { instrumentMcpClient, type HostToolCall, type McpClientLike, type McpClientOptions, type McpToolRequest } from './client.ts';
export { instrumentMcpTransport, type McpHttpTransportConfig, type McpTransportLike } from './transport.ts';
export { traceparentFetch, type FetchLike } from './http-headers.ts';
export { currentMcpSession, instrumentMcpServer, type McpCallInfo, type McpServerOptions, type McpSession } from './server.ts';
export { openAIAgentsMcpOptions, type AgentsMcpMetaContext, type AgentsMcpOptions, type AgentsMcpResultContext, type AgentsMcpServerOptions } from './agents.ts';
export { CALLER_META_KEY, PROPAGATION_META_KEY, TRAJECTORY_META_KEY, type McpCaller } from './meta.ts';
