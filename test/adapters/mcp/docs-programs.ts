// docs/adapters/mcp.md's agents that are a Client the program owns (`agent.mjs`,
// the AI SDK's with `instrumentMcpClient`) or an OpenAI Agents SDK's own MCP
// server (`agents-sdk-agent.mjs`, with `openAIAgentsMcpOptions`), each with the
// page's weather server in two processes over stdio (the agent spawns the
// server), each with the NeMo Relay plugin, the model served on loopback
// (OPENAI_BASE_URL) and OTLP sent to a loopback collector. One trace in the
// collector, two trajectories that point at each other. Used by docs.test.ts
// and test/slow/mcp-agents.test.ts.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { loopbackApi, repoRoot, userEnv, type SnippetRuntime } from '../../support/doc-snippets.ts';
import { startHttpReceiver } from '../../support/otlp-receiver.ts';
import { FakeProvider } from '../ai-sdk/wire.ts';
import { findNode } from '../support.ts';
import { ancestry, brief, depthSorted, mcpPrograms, runAgent } from './two-processes.ts';

type Doc = Record<string, any>;

/** The page's agents this check runs. */
export type DocsAgent = 'agent.mjs' | 'agents-sdk-agent.mjs';

const programs = mcpPrograms();

/** Runs `agent` and the page's server as written, and checks the trace and the two trajectories. */
export async function checkDocsAgent(agent: DocsAgent, runtime: SnippetRuntime, backend: 'memory' | 'native'): Promise<void> {
  const api = new FakeProvider();
  const provider = await loopbackApi((url, init) => api.fetch(url, init));
  const collector = await startHttpReceiver();
  try {
    api.reply('responses', { id: 'resp_1', model: 'gpt-4o-2024-08-06', text: '', toolCalls: [{ id: 'call_oslo', name: 'forecast', args: { city: 'Oslo' } }], usage: { input: 90, output: 15 } });
    api.reply('responses', { id: 'resp_srv', model: 'gpt-4o-mini-2024-07-18', text: 'Oslo: rain, 9 °C.', usage: { input: 30, output: 8 } });
    api.reply('responses', { id: 'resp_2', model: 'gpt-4o-2024-08-06', text: 'In Oslo it will rain, 9 °C.', usage: { input: 130, output: 12 } });
    const env = userEnv({
      OPENAI_API_KEY: 'sk-test-not-a-key',
      OPENAI_BASE_URL: `${provider.url}/v1`,
      // The Agents SDK's own trace export: off, so nothing leaves the machine.
      OPENAI_AGENTS_DISABLE_TRACING: '1',
      AI_SDK_LOG_WARNINGS: 'false',
      NO_COLOR: '1',
      NEMO_RELAY_HOOKS_BACKEND: backend,
      NEMO_RELAY_HOOKS_OTLP_ENABLED: 'true',
      NEMO_RELAY_HOOKS_OTLP_TYPE: 'full',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    });
    const result = await runAgent({ 'weather-server.mjs': programs.get('weather-server.mjs')!, [agent]: programs.get(agent)! }, agent, runtime, env);
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
  } finally {
    await provider.close();
    await collector.close();
  }
}

