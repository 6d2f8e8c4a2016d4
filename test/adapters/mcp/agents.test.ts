// docs/adapters/mcp.md, "The OpenAI Agents SDK's MCP servers": the Agents SDK
// program of agents-check.ts (five MCP calls at once, then a streamed run)
// with its server as its child over stdio, on the memory backend;
// test/slow/mcp-agents.test.ts runs it on native and over Streamable HTTP and SSE.
import { describe, expect, it } from 'vitest';
import { MCPServerStdio, type MCPToolCustomDataContext, type MCPToolMetaContext } from '@openai/agents';
import { HookRegistry } from '../../../src/hooks/index.ts';
import { openAIAgentsMcpOptions } from '../../../src/adapters/mcp/index.ts';
import { runtime } from '../../support/child.ts';
import { checkLinkedProgram, checkPlainProgram, serveAgentsPrograms } from './agents-check.ts';

serveAgentsPrograms();

describe('an OpenAI Agents SDK agent whose MCP server is instrumented', () => {
  it('without openAIAgentsMcpOptions: every MCP call is a trace and a trajectory of its own, unlinked', () => checkPlainProgram(), 120_000);

  it('spreads into MCPServerStdio\'s options as the SDK types them, which keeps them', () => {
    const options = openAIAgentsMcpOptions(new HookRegistry());
    const server = new MCPServerStdio({ name: 'weather', fullCommand: 'node weather-server.mjs', ...options });
    expect([server.toolMetaResolver, server.customDataExtractor]).toEqual([options.toolMetaResolver, options.customDataExtractor]);
    // A program's own, typed as the SDK types them, goes in and the result still fits the server's options (tsc checks it).
    const own = openAIAgentsMcpOptions(new HookRegistry(), {
      toolMetaResolver: (context: MCPToolMetaContext) => ({ 'example.com/server': context.serverName }),
      customDataExtractor: async (context: MCPToolCustomDataContext) => ({ tool: context.toolDisplayName }),
    });
    const composed = new MCPServerStdio({ name: 'weather', fullCommand: 'node weather-server.mjs', ...own });
    expect([composed.toolMetaResolver, composed.customDataExtractor]).toEqual([own.toolMetaResolver, own.customDataExtractor]);
  });

  it(`with openAIAgentsMcpOptions: one trace per run across both processes, and trajectories that point at each other (${runtime}, memory, stdio)`, () => checkLinkedProgram('memory', 'stdio'), 120_000);
});
