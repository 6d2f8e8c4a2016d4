// docs/adapters/mcp.md's LangChain and AI SDK agents with its MCP server in two
// processes (framework-programs.ts): one run per framework here, on the memory
// backend and the suite's runtime; test/slow/mcp-frameworks.test.ts runs them on native.
import { describe, it } from 'vitest';
import { runtime } from '../../support/child.ts';
import { checkFrameworkProgram } from './framework-programs.ts';

describe('docs/adapters/mcp.md: MCP clients the frameworks own', () => {
  for (const framework of ['langchain', 'ai-sdk'] as const) {
    it(`${framework}: one trace, two linked trajectories, the agent as without linking (memory)`, () => checkFrameworkProgram(framework, runtime, 'memory'), 180_000);
  }
});
