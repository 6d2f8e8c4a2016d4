// More of test/adapters/mcp/agents.test.ts and docs.test.ts (the OpenAI
// Agents SDK's own MCP servers with `openAIAgentsMcpOptions`): the page's
// Agents SDK snippet on native, and the five-call program on native over
// stdio, on both backends over Streamable HTTP (the server on its own), and
// over the SDK's SSE transport (`MCPServerSSE`, the server's
// `SSEServerTransport`) on memory.
// On Node only for native: under Bun and Deno the adapter tests run memory only.
import { describe, it } from 'vitest';
import { backends } from '../adapters/support.ts';
import { runtime } from '../support/child.ts';
import { checkLinkedProgram, serveAgentsPrograms } from '../adapters/mcp/agents-check.ts';
import { checkDocsAgent } from '../adapters/mcp/docs-programs.ts';

serveAgentsPrograms();

describe('OpenAI Agents SDK MCP servers with openAIAgentsMcpOptions (more)', () => {
  for (const backend of backends()) {
    for (const transport of ['stdio', 'http'] as const) {
      if (backend === 'memory' && transport === 'stdio') continue; // npm test runs it
      it(`the five-call program (${runtime}, ${backend}, ${transport})`, () => checkLinkedProgram(backend, transport), 180_000);
    }
    if (backend === 'memory') it(`the five-call program (${runtime}, memory, sse)`, () => checkLinkedProgram('memory', 'sse'), 180_000);
    if (backend === 'native') it(`docs/adapters/mcp.md's Agents SDK snippet (${runtime}, native)`, () => checkDocsAgent('agents-sdk-agent.mjs', runtime, 'native'), 180_000);
  }
});
