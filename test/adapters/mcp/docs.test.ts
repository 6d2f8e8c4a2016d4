// docs/adapters/mcp.md: its snippets, as written, are agents and an MCP
// server in two processes over stdio (docs-programs.ts). Here: the AI SDK
// agent that owns its Client, on the memory and the native backend, and the
// OpenAI Agents SDK agent on memory (test/slow/mcp-agents.test.ts runs it on
// native), with Node (and Bun and Deno when the suite runs there). The
// LangChain and AI SDK MCP clients' programs are frameworks.test.ts.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot, tsSnippets, type SnippetRuntime } from '../../support/doc-snippets.ts';
import { runtime as suiteRuntime } from '../../support/child.ts';
import { AGENT_SOURCE } from './agents-programs.ts';
import { checkDocsAgent } from './docs-programs.ts';
import { MCP_PAGE, mcpPrograms } from './two-processes.ts';
import { processBackends } from '../support.ts';

const page = MCP_PAGE;
const snippets = tsSnippets(readFileSync(path.join(repoRoot, page), 'utf8'));
const programs = mcpPrograms();

const runtimes: SnippetRuntime[] = suiteRuntime === 'node' ? ['node'] : [suiteRuntime];

describe(page, () => {
  it('has the server and the agents as snippets, and five fragments', () => {
    expect([...programs.keys()]).toEqual(['weather-server.mjs', 'agent.mjs', 'langchain-agent.mjs', 'ai-sdk-agent.mjs', 'agents-sdk-agent.mjs']);
    expect(snippets).toHaveLength(programs.size + 5);
    // The AI SDK's HTTP configuration given to instrumentMcpTransport: ai-sdk-http.test.ts runs it over HTTP and SSE.
    expect(snippets.filter((snippet) => snippet.includes("transport: instrumentMcpTransport({ type: 'http', url: "))).toHaveLength(1);
    // The Agents SDK options with a resolver and an extractor of the program's own: agents-programs.ts's program hands its own in so.
    expect(snippets.filter((snippet) => snippet.includes('...openAIAgentsMcpOptions(hooks, {'))).toHaveLength(1);
    expect(AGENT_SOURCE).toContain('openAIAgentsMcpOptions(hooks, own)');
    // LangChain's loadMcpTools on a Client of the program's, its sampling handler asking ChatOpenAI with the handler:
    // sampling-langchain.test.ts runs that program.
    const sampling = snippets.filter((snippet) => snippet.includes("tools: await loadMcpTools('trip', client)"));
    expect(sampling).toHaveLength(1);
    const tested = readFileSync(path.join(repoRoot, 'test/adapters/mcp/sampling-langchain.test.ts'), 'utf8');
    for (const line of ['capabilities: { sampling: {}, elicitation: { form: {} } }', 'client.setRequestHandler(CreateMessageRequestSchema, async (request) => {', '{ callbacks: [handler] },', "loadMcpTools('trip', client)", "{ callbacks: [handler], configurable: { thread_id: 'user-42' } }"]) {
      expect(sampling[0]).toContain(line);
      expect(tested).toContain(line);
    }
    // An instrumented Client over Streamable HTTP given traceparentFetch(): http-traceparent.test.ts (with its run, http-traceparent-run.ts) runs that client.
    const overHttp = snippets.filter((snippet) => snippet.includes('{ fetch: traceparentFetch() }'));
    expect(overHttp).toHaveLength(1);
    const httpTested = ['http-traceparent.test.ts', 'http-traceparent-run.ts'].map((file) => readFileSync(path.join(repoRoot, 'test/adapters/mcp', file), 'utf8')).join('\n');
    for (const line of ["instrumentMcpClient(new Client({ name: 'weather-agent', version: '1.0.0' }), hooks)", 'new StreamableHTTPClientTransport(new URL(', 'fetch: traceparentFetch()']) {
      expect(overHttp[0]).toContain(line);
      expect(httpTested).toContain(line);
    }
    expect(programs.get('weather-server.mjs')).toContain('instrumentMcpServer(server, hooks)');
    expect(programs.get('agent.mjs')).toContain('instrumentMcpClient(');
    expect(programs.get('agents-sdk-agent.mjs')).toContain('...openAIAgentsMcpOptions(hooks)');
  });

  for (const runtime of runtimes) {
    for (const backend of processBackends(['memory', 'native'] as const)) {
      it(`agent and server in two processes give one trace and two linked trajectories (${runtime}, ${backend})`, () => checkDocsAgent('agent.mjs', runtime, backend), 130_000);
    }
    it(`OpenAI Agents SDK agent and server in two processes give one trace and two linked trajectories (${runtime}, memory)`, () => checkDocsAgent('agents-sdk-agent.mjs', runtime, 'memory'), 130_000);
  }
});
