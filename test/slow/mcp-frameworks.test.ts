// docs/adapters/mcp.md's LangChain and AI SDK agents with its MCP server in two
// processes (framework-programs.ts), and the AI SDK's client over
// @modelcontextprotocol/sdk's stdio transport: on memory, and on native where
// the suite's process loads it (Node). In the slow suite, on Node, Bun and
// Deno: each run is two processes importing a framework and the MCP SDK,
// seconds of CPU that npm test, at its limit on 2 cores, needs more.
import { describe, it } from 'vitest';
import { backends } from '../adapters/support.ts';
import { runtime } from '../support/child.ts';
import { checkFrameworkProgram } from '../adapters/mcp/framework-programs.ts';

describe('docs/adapters/mcp.md: MCP clients the frameworks own', () => {
  for (const backend of backends()) {
    for (const framework of ['langchain', 'ai-sdk', 'ai-sdk+sdk-stdio'] as const) {
      it(`${framework} (${backend})`, () => checkFrameworkProgram(framework, runtime, backend), 300_000);
    }
  }
});
