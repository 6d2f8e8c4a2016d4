// More of test/adapters/mcp/frameworks.test.ts (docs/adapters/mcp.md's LangChain
// and AI SDK agents with its MCP server in two processes): the native backend
// (on Node: under Bun and Deno the adapter tests run memory only), and the AI SDK's client over
// @modelcontextprotocol/sdk's stdio transport, on both backends.
import { describe, it } from 'vitest';
import { backends } from '../adapters/support.ts';
import { runtime } from '../support/child.ts';
import { checkFrameworkProgram } from '../adapters/mcp/framework-programs.ts';

describe('docs/adapters/mcp.md: MCP clients the frameworks own (more)', () => {
  for (const backend of backends()) {
    for (const framework of ['langchain', 'ai-sdk', 'ai-sdk+sdk-stdio'] as const) {
      if (backend === 'memory' && framework !== 'ai-sdk+sdk-stdio') continue; // npm test runs it
      it(`${framework} (${backend})`, () => checkFrameworkProgram(framework, runtime, backend), 300_000);
    }
  }
});
