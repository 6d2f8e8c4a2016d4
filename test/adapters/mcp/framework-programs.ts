// docs/adapters/mcp.md's LangChain and AI SDK agents (`@langchain/mcp-adapters`'
// MultiServerMCPClient, `@ai-sdk/mcp`'s createMCPClient over its stdio
// transport), each with the page's weather server as a real child process
// over stdio, the models served on loopback (OPENAI_BASE_URL) and OTLP sent
// to a loopback collector. Each program runs twice: as written, and without
// MCP linking (no instrumentMcpClient / instrumentMcpTransport in the agent,
// no instrumentMcpServer in the server). The linked run must give one trace,
// two trajectories that point at each other, the tokens the provider
// reported, and an agent whose model requests and trajectory are the plain
// run's but for the reference.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { loopbackApi, userEnv, type SnippetRuntime } from '../../support/doc-snippets.ts';
import { startHttpReceiver, type Receiver } from '../../support/otlp-receiver.ts';
import { FakeProvider, type Wire } from '../ai-sdk/wire.ts';
import { ancestry, brief, depthSorted, mcpPrograms, runAgent } from './two-processes.ts';

type Doc = Record<string, any>;
/** `ai-sdk+sdk-stdio`: the AI SDK's agent with `@modelcontextprotocol/sdk`'s stdio transport instead of its own. */
export type Framework = 'langchain' | 'ai-sdk' | 'ai-sdk+sdk-stdio';

interface Program {
  file: string;
  /** The page's program as this variant writes it. */
  edit?: (code: string) => string;
  /** The wire the agent's model speaks (ChatOpenAI: Chat Completions; the AI SDK's `openai()`: Responses). */
  wire: Wire;
  /** What the program has for MCP linking, and what it has without. */
  linking: [string, string];
}

const PROGRAMS: Record<Framework, Program> = {
  langchain: { file: 'langchain-agent.mjs', wire: 'chat', linking: ["instrumentMcpClient(await mcp.getClient('weather'), hooks);\n", ''] },
  'ai-sdk': { file: 'ai-sdk-agent.mjs', wire: 'responses', linking: ['instrumentMcpTransport(transport, hooks)', 'transport'] },
  'ai-sdk+sdk-stdio': {
    file: 'ai-sdk-agent.mjs',
    wire: 'responses',
    linking: ['instrumentMcpTransport(transport, hooks)', 'transport'],
    edit: (code) =>
      without(
        without(code, ["import { Experimental_StdioMCPTransport } from '@ai-sdk/mcp/mcp-stdio';\n", "import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';\n"]),
        ['new Experimental_StdioMCPTransport(', 'new StdioClientTransport('],
      ),
  },
};
const SERVER_LINKING: [string, string] = ['instrumentMcpServer(server, hooks);\n', ''];
const FORECAST = 'Oslo: rain, 9 °C.';
const ANSWER = 'In Oslo it will rain, 9 °C.';

function without(code: string, [linked, plain]: [string, string]): string {
  expect(code.split(linked)).toHaveLength(2);
  return code.replace(linked, plain);
}

interface Outcome {
  folder: string;
  files: string[];
  docs: Map<string, Doc>;
  /** The bodies the provider was sent, in order. */
  requests: Doc[];
  urls: string[];
  collector: Receiver;
}

async function runProgram(framework: Framework, runtime: SnippetRuntime, backend: 'memory' | 'native', linked: boolean): Promise<Outcome & { cwd: string }> {
  const program = PROGRAMS[framework];
  const programs = mcpPrograms();
  const server = programs.get('weather-server.mjs')!;
  const agent = (program.edit ?? ((code: string) => code))(programs.get(program.file)!);
  const api = new FakeProvider();
  api.reply(program.wire, { id: 'resp_1', model: 'gpt-4o-2024-08-06', text: '', toolCalls: [{ id: 'call_oslo', name: 'forecast', args: { city: 'Oslo' } }], usage: { input: 90, output: 15 } });
  api.reply('responses', { id: 'resp_srv', model: 'gpt-4o-mini-2024-07-18', text: FORECAST, usage: { input: 30, output: 8 } });
  api.reply(program.wire, { id: 'resp_2', model: 'gpt-4o-2024-08-06', text: ANSWER, usage: { input: 130, output: 12 } });
  const provider = await loopbackApi((url, init) => api.fetch(url, init));
  const collector = await startHttpReceiver();
  let kept = false;
  try {
    const env = userEnv({
      OPENAI_API_KEY: 'sk-test-not-a-key',
      OPENAI_BASE_URL: `${provider.url}/v1`,
      AI_SDK_LOG_WARNINGS: 'false',
      NO_COLOR: '1',
      NEMO_RELAY_HOOKS_BACKEND: backend,
      NEMO_RELAY_HOOKS_OTLP_ENABLED: 'true',
      NEMO_RELAY_HOOKS_OTLP_TYPE: 'full',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    });
    const files = linked ? { 'weather-server.mjs': server, [program.file]: agent } : { 'weather-server.mjs': without(server, SERVER_LINKING), [program.file]: without(agent, program.linking) };
    const run = await runAgent(files, program.file, runtime, env);
    const label = `${framework} ${linked ? 'linked' : 'plain'} (${runtime}, ${backend})`;
    try {
      expect(run.status, `${label}\n${run.stdout}\n${run.stderr}`).toBe(0);
      expect(run.stdout, label).toContain(ANSWER);
      expect(run.stderr, label).not.toMatch(/failed|error/i);
      const folder = path.join(run.cwd, 'trajectories');
      const names = readdirSync(folder).sort();
      const docs = new Map(names.map((file) => [file, JSON.parse(readFileSync(path.join(folder, file), 'utf8')) as Doc]));
      for (const [file, doc] of docs) expect(validateAtif(doc), `${label}: ${file}`).toEqual([]);
      kept = true;
      return { cwd: run.cwd, folder, files: names, docs, requests: api.requests.map((request) => request.body), urls: api.requests.map((request) => request.url), collector };
    } catch (error) {
      rmSync(run.cwd, { recursive: true, force: true });
      throw error;
    }
  } finally {
    await provider.close();
    if (!kept) await collector.close();
  }
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/**
 * A trajectory with what differs between two runs of one program left out:
 * times, the reference to the server's, and random ids (each uuid becomes
 * its order of appearance, so which steps share an id still counts).
 */
function comparable(doc: Doc): unknown {
  const ids = new Map<string, string>();
  const kept = JSON.stringify(doc, (key, value: unknown) => (key.endsWith('timestamp') || key === 'subagent_trajectory_ref' ? undefined : value));
  return JSON.parse(kept, (_key, value: unknown) => {
    if (typeof value !== 'string') return value;
    return value.replace(UUID, (id) => {
      if (!ids.has(id)) ids.set(id, `<uuid ${ids.size}>`);
      return ids.get(id)!;
    });
  });
}

export async function checkFrameworkProgram(framework: Framework, runtime: SnippetRuntime, backend: 'memory' | 'native'): Promise<void> {
  const plain = await runProgram(framework, runtime, backend, false);
  const linked = await runProgram(framework, runtime, backend, true);
  const label = `${framework} (${runtime}, ${backend})`;
  try {
    // The plain run: two sessions that know nothing of each other (the server's model call is a session of its own).
    expect(plain.files, label).toHaveLength(2);
    const plainDoc = [...plain.docs.values()].find((doc) => doc.session_id === 'user-42')!;
    expect(plainDoc, label).toBeDefined();
    for (const doc of plain.docs.values()) expect(doc.extra?.caller, label).toBeUndefined();

    // Linked: two trajectories, pointing at each other.
    expect(linked.files, label).toHaveLength(2);
    const [agentFile, agentDoc] = [...linked.docs].find(([, doc]) => doc.session_id === 'user-42')!;
    const [serverFile, serverDoc] = [...linked.docs].find(([, doc]) => doc.session_id !== 'user-42')!;
    expect(serverDoc.session_id, label).toMatch(/^mcp-weather-server-[0-9a-f-]{36}$/);
    expect(serverDoc.extra.caller, label).toEqual({ session_id: 'user-42', tool_call_id: 'call_oslo', trajectory_id: agentDoc.trajectory_id, trajectory_path: agentFile });
    const call = agentDoc.steps.find((step: Doc) => step.tool_calls?.length > 0);
    expect(call.tool_calls.map((toolCall: Doc) => [toolCall.tool_call_id, toolCall.function_name, toolCall.arguments]), label).toEqual([['call_oslo', 'forecast', { city: 'Oslo' }]]);
    const observed = call.observation.results.find((entry: Doc) => entry.source_call_id === 'call_oslo');
    expect(observed.subagent_trajectory_ref, label).toEqual([{ session_id: serverDoc.session_id, trajectory_id: serverDoc.trajectory_id, trajectory_path: serverFile }]);
    expect(observed.content, label).toContain(FORECAST);
    expect(observed.content, label).not.toContain('nemo-relay');
    expect(serverDoc.steps.map((step: Doc) => [step.source, step.message]), label).toEqual([
      ['user', 'Write a one-line forecast for Oslo.'],
      ['agent', FORECAST],
      ['system', ''],
    ]);

    // Tokens: what the provider reported for each side's calls.
    expect(agentDoc.steps.filter((step: Doc) => step.source === 'agent').map((step: Doc) => [step.metrics?.prompt_tokens, step.metrics?.completion_tokens]), label).toEqual([
      [90, 15],
      [130, 12],
    ]);
    expect(agentDoc.final_metrics, label).toMatchObject({ total_prompt_tokens: 220, total_completion_tokens: 27 });
    expect(serverDoc.final_metrics, label).toMatchObject({ total_prompt_tokens: 30, total_completion_tokens: 8 });

    // The agent is the plain program's: its model was sent the same, and its trajectory is the same but for the reference.
    expect(linked.urls, label).toEqual(plain.urls);
    expect(linked.requests, label).toEqual(plain.requests);
    expect(plain.requests.map((body) => body.model), label).toEqual(['gpt-4o', 'gpt-4o-mini', 'gpt-4o']);
    expect(comparable(agentDoc), label).toEqual(comparable(plainDoc));

    // The server sends its spans as its call ends; the agent's are sent when it shuts down.
    const sessionSpan = `${serverDoc.agent.name}-session-${serverDoc.session_id}`;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arrived = await Promise.race([
      linked.collector.waitFor((received) => received.spans().some((span) => span.name === sessionSpan)).then(() => true),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), 30_000))),
    ]);
    clearTimeout(timer); // a pending timer would hold the test worker open
    expect(arrived, `${label}: the server's session span`).toBe(true);
    // One trace: every span of both processes under the agent's one root, the server's session under the agent's forecast tool span.
    const spans = linked.collector.spans();
    expect(new Set(spans.map((span) => span.traceId)).size, `${label}: ${JSON.stringify(spans.map(brief))}`).toBe(1);
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const roots = spans.filter((span) => span.parentSpanId === '');
    expect(roots.map(brief), label).toHaveLength(1);
    for (const span of spans) if (span.parentSpanId !== '') expect(byId.has(span.parentSpanId), `${label}: parent of ${brief(span)}`).toBe(true);
    const forecastSpans = spans.filter((span) => span.name === 'forecast');
    expect(forecastSpans.length, `${label}: ${JSON.stringify(spans.map(brief))}`).toBe(2);
    const [clientTool, serverTool] = depthSorted(forecastSpans, byId);
    const serverSession = byId.get(serverTool!.parentSpanId)!;
    expect(serverSession.name, label).toBe(`${serverDoc.agent.name}-session-${serverDoc.session_id}`);
    expect(serverSession.parentSpanId, label).toBe(clientTool!.spanId);
    expect(ancestry(clientTool!, byId).at(-1), label).toBe(roots[0]!.spanId);
    expect(roots[0]!.name, label).toBe(`${agentDoc.agent.name}-session-user-42`);
  } finally {
    rmSync(plain.cwd, { recursive: true, force: true });
    rmSync(linked.cwd, { recursive: true, force: true });
    await plain.collector.close();
    await linked.collector.close();
  }
}
