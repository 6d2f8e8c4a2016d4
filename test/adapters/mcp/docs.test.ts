// docs/adapters/mcp.md: its two snippets, as written, are an agent and an MCP
// server in two processes over stdio (the agent spawns the server), each
// with the NeMo Relay plugin, the model served on loopback (OPENAI_BASE_URL)
// and OTLP sent to a loopback collector. One trace in the collector, two
// trajectories that point at each other, on the memory and the native
// backend, with Node (and Bun and Deno when the suite runs there).
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { loopbackApi, repoRoot, tsSnippets, type SnippetRuntime } from '../../support/doc-snippets.ts';
import { startHttpReceiver, type Receiver } from '../../support/otlp-receiver.ts';
import { runtime as suiteRuntime } from '../../support/child.ts';
import { FakeProvider } from '../ai-sdk/wire.ts';
import { ancestry, brief, depthSorted, MCP_PAGE, mcpPrograms, runAgent } from './two-processes.ts';

const page = MCP_PAGE;
const snippets = tsSnippets(readFileSync(path.join(repoRoot, page), 'utf8'));
const programs = mcpPrograms();
const serverSnippet = programs.get('weather-server.mjs');
const agentSnippet = programs.get('agent.mjs');

let api = new FakeProvider();
let provider: { url: string; close(): Promise<void> };
let collector: Receiver;
beforeAll(async () => {
  provider = await loopbackApi((url, init) => api.fetch(url, init));
  collector = await startHttpReceiver();
});
afterAll(async () => {
  await provider.close();
  await collector.close();
});

type Doc = Record<string, any>;

const runtimes: SnippetRuntime[] = suiteRuntime === 'node' ? ['node'] : [suiteRuntime];

describe(page, () => {
  it('has the server and the agents as snippets, and one fragment', () => {
    expect([...programs.keys()]).toEqual(['weather-server.mjs', 'agent.mjs', 'langchain-agent.mjs', 'ai-sdk-agent.mjs']);
    expect(snippets).toHaveLength(programs.size + 1);
    expect(serverSnippet).toContain('instrumentMcpServer(server, hooks)');
    expect(agentSnippet).toContain('instrumentMcpClient(');
  });

  for (const runtime of runtimes) {
    for (const backend of ['memory', 'native'] as const) {
      it(`agent and server in two processes give one trace and two linked trajectories (${runtime}, ${backend})`, async () => {
        api = new FakeProvider();
        api.reply('responses', { id: 'resp_1', model: 'gpt-4o-2024-08-06', text: '', toolCalls: [{ id: 'call_oslo', name: 'forecast', args: { city: 'Oslo' } }], usage: { input: 90, output: 15 } });
        api.reply('responses', { id: 'resp_srv', model: 'gpt-4o-mini-2024-07-18', text: 'Oslo: rain, 9 °C.', usage: { input: 30, output: 8 } });
        api.reply('responses', { id: 'resp_2', model: 'gpt-4o-2024-08-06', text: 'In Oslo it will rain, 9 °C.', usage: { input: 130, output: 12 } });
        collector.requests.length = 0;
        const env = {
          ...process.env,
          OPENAI_API_KEY: 'sk-test-not-a-key',
          OPENAI_BASE_URL: `${provider.url}/v1`,
          AI_SDK_LOG_WARNINGS: 'false',
          NO_COLOR: '1',
          NEMO_RELAY_HOOKS_BACKEND: backend,
          NEMO_RELAY_HOOKS_OTLP_ENABLED: 'true',
          NEMO_RELAY_HOOKS_OTLP_TYPE: 'full',
          OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        };
        const result = await runAgent({ 'weather-server.mjs': serverSnippet!, 'agent.mjs': agentSnippet! }, 'agent.mjs', runtime, env);
        const { cwd } = result;
        try {
          expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
          expect(result.stdout).toContain('In Oslo it will rain, 9 °C.');
          expect(result.stderr).not.toMatch(/failed|error/i);
          expect(api.requests.map((request) => request.body.model)).toEqual(['gpt-4o', 'gpt-4o-mini', 'gpt-4o']);

          // Two trajectories, each valid, pointing at each other.
          const folder = path.join(cwd, 'trajectories');
          const files = readdirSync(folder).sort();
          expect(files).toHaveLength(2);
          const docs = new Map(files.map((file) => [file, JSON.parse(readFileSync(path.join(folder, file), 'utf8')) as Doc]));
          for (const [file, doc] of docs) expect(validateAtif(doc), file).toEqual([]);
          const [agentFile, agentDoc] = [...docs].find(([, doc]) => doc.session_id === 'user-42')!;
          const [serverFile, serverDoc] = [...docs].find(([, doc]) => doc.session_id !== 'user-42')!;
          expect(serverDoc.session_id).toMatch(/^mcp-weather-server-[0-9a-f-]{36}$/);
          expect(serverDoc.agent.name).toBe('weather-server');
          expect(serverDoc.extra.caller).toEqual({ session_id: 'user-42', tool_call_id: 'call_oslo', trajectory_id: 'user-42', trajectory_path: agentFile });
          expect(serverDoc.steps.map((step: Doc) => [step.source, step.message])).toEqual([
            ['user', 'Write a one-line forecast for Oslo.'],
            ['agent', 'Oslo: rain, 9 °C.'],
            ['system', ''],
          ]);
          // The last step is what the server answered its caller: the tool's result, under the caller's tool call id.
          expect(serverDoc.steps[2].observation.results.map((entry: Doc) => [entry.content, entry.extra.metadata.tool_call_id])).toEqual([['Oslo: rain, 9 °C.', 'call_oslo']]);
          const call = agentDoc.steps.find((step: Doc) => step.tool_calls?.length > 0);
          expect(call.tool_calls.map((toolCall: Doc) => [toolCall.tool_call_id, toolCall.function_name])).toEqual([['call_oslo', 'forecast']]);
          const observed = call.observation.results.find((entry: Doc) => entry.source_call_id === 'call_oslo');
          expect(observed.subagent_trajectory_ref).toEqual([{ session_id: serverDoc.session_id, trajectory_id: serverDoc.trajectory_id, trajectory_path: serverFile }]);
          expect(observed.content).toContain('Oslo: rain, 9 °C.');
          expect(agentDoc.steps.at(-1).message).toBe('In Oslo it will rain, 9 °C.');

          // `view` given both files shows the server's session under the agent's tool call.
          const viewed = spawnSync(process.execPath.includes('node') ? process.execPath : 'node', [path.join(repoRoot, 'dist/src/cli/main.js'), 'view', '--json', path.join(folder, serverFile), path.join(folder, agentFile)], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
          expect(viewed.status, viewed.stderr).toBe(0);
          const report = JSON.parse(viewed.stdout) as { files: { sessions: Doc[] }[] };
          expect(report.files.map((file) => file.sessions.length)).toEqual([0, 1]);
          const toolNode = findNode(report.files[1]!.sessions[0]!, (entry) => entry.kind === 'tool' && entry.title === 'tool forecast')!;
          expect(toolNode.children.map((child: Doc) => [child.kind, child.title])).toEqual([['subagent', `remote session ${serverDoc.session_id}`]]);

          // One trace: every span, from both processes, under the agent's one root.
          const spans = collector.spans();
          const traces = new Set(spans.map((span) => span.traceId));
          expect(traces.size, JSON.stringify(spans.map(brief))).toBe(1);
          const byId = new Map(spans.map((span) => [span.spanId, span]));
          const roots = spans.filter((span) => span.parentSpanId === '');
          expect(roots.map(brief)).toHaveLength(1);
          for (const span of spans) if (span.parentSpanId !== '') expect(byId.has(span.parentSpanId), `parent of ${brief(span)}`).toBe(true);
          // The server's session span hangs under the agent's forecast tool span.
          const forecastSpans = spans.filter((span) => /forecast/.test(span.name));
          expect(forecastSpans.length, JSON.stringify(spans.map(brief))).toBe(2);
          const [clientTool, serverTool] = depthSorted(forecastSpans, byId);
          const ancestors = ancestry(serverTool!, byId);
          expect(ancestors).toContain(clientTool!.spanId);
          const serverSession = byId.get(ancestors[ancestors.indexOf(clientTool!.spanId) - 1]!)!;
          expect(serverSession.parentSpanId).toBe(clientTool!.spanId);
          // The server's model call is in the trace too, under the server's session.
          expect(serverSession.name).toBe(`${serverDoc.agent.name}-session-${serverDoc.session_id}`);
          expect(spans.filter((span) => span.parentSpanId === serverSession.spanId).map((span) => span.name).sort()).toEqual(['forecast', 'openai.responses']);
          expect(roots[0]!.name).toBe(`${agentDoc.agent.name}-session-user-42`);
        } finally {
          rmSync(cwd, { recursive: true, force: true });
        }
      }, 130_000);
    }
  }
});

function findNode(tree: Doc, predicate: (node: Doc) => boolean): Doc | undefined {
  if (predicate(tree)) return tree;
  for (const child of tree.children ?? []) {
    const found = findNode(child, predicate);
    if (found !== undefined) return found;
  }
  return undefined;
}
