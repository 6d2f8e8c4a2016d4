// An MCP server that asks its client back while it serves a tool call:
// sampling (the client's model answers), elicitation (the client's user
// answers: accept or decline), progress; and a resource read and a prompt get
// beside the call (sampling-programs.ts, written as the MCP SDK's docs write
// them). Two processes over stdio, both instrumented as docs/adapters/mcp.md
// says, the model on loopback, OTLP to a loopback collector, on the memory and
// the native backend. What ATIF, ATOF, OTLP and `view` say against what the
// programs did: the sampling's model call is the client's, a sub-agent of the
// tool call that caused it (its tokens counted once), inside the server's tool
// span; an elicitation, accepted or declined, is the tool's business (no call,
// no step, no error); the resource and the prompt make no call and no session;
// one trace.
// In the slow suite (Node, Bun, Deno; both backends where native loads): its agent and servers are processes
// of their own, seconds of CPU that npm test, at its limit on 2 cores, needs more.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { runtime as suiteRuntime } from '../support/child.ts';
import { loopbackApi, repoRoot, userEnv, type SnippetRun, type SnippetRuntime } from '../support/doc-snippets.ts';
import { startHttpReceiver, type DecodedSpan } from '../support/otlp-receiver.ts';
import { FakeProvider, type Turn } from '../adapters/ai-sdk/wire.ts';
import { AI_SDK_TRIP_AGENT, TRIP_AGENT, TRIP_SERVER } from '../adapters/mcp/sampling-programs.ts';
import { ancestry, brief, runAgent } from '../adapters/mcp/two-processes.ts';
import { findNode } from '../adapters/support.ts';

type Doc = Record<string, any>;
type Answer = 'accept' | 'decline';

const runtime: SnippetRuntime = suiteRuntime;

interface Trip {
  run: SnippetRun;
  api: FakeProvider;
  spans: DecodedSpan[];
  /** The two trajectories, each valid: the agent's and the server's, with their file names. */
  agent: { file: string; doc: Doc };
  server: { file: string; doc: Doc };
}

/**
 * Runs `agent` with the trip server, the model answering `replies` in turn, and hands `check` what they did; then
 * removes what they wrote.
 */
async function withTrip(agent: 'trip-agent.mjs' | 'ai-sdk-trip-agent.mjs', backend: 'memory' | 'native', answer: Answer, replies: Turn[], check: (trip: Trip) => void): Promise<void> {
  const api = new FakeProvider();
  const provider = await loopbackApi((url, init) => api.fetch(url, init));
  const collector = await startHttpReceiver();
  try {
    for (const reply of replies) api.reply('responses', reply);
    const env = userEnv({
      OPENAI_API_KEY: 'sk-test-not-a-key',
      OPENAI_BASE_URL: `${provider.url}/v1`,
      AI_SDK_LOG_WARNINGS: 'false',
      NO_COLOR: '1',
      TRIP_ANSWER: answer,
      NEMO_RELAY_HOOKS_BACKEND: backend,
      NEMO_RELAY_HOOKS_OTLP_ENABLED: 'true',
      NEMO_RELAY_HOOKS_OTLP_TYPE: 'full',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    });
    const run = await runAgent({ 'trip-server.mjs': TRIP_SERVER, [agent]: agent === 'trip-agent.mjs' ? TRIP_AGENT : AI_SDK_TRIP_AGENT }, agent, runtime, env);
    try {
      expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
      expect(run.stderr).not.toMatch(/failed|error|warn/i);
      // Two trajectories (the resource and the prompt open no session), valid.
      const folder = path.join(run.cwd, 'trajectories');
      const files = readdirSync(folder).sort();
      expect(files).toHaveLength(2);
      const docs = files.map((file) => ({ file, doc: JSON.parse(readFileSync(path.join(folder, file), 'utf8')) as Doc }));
      for (const { file, doc } of docs) expect(validateAtif(doc), file).toEqual([]);
      check({ run, api, spans: collector.spans(), agent: docs.find(({ doc }) => doc.session_id === 'user-42')!, server: docs.find(({ doc }) => doc.session_id !== 'user-42')! });
    } finally {
      rmSync(run.cwd, { recursive: true, force: true });
    }
  } finally {
    await provider.close();
    await collector.close();
  }
}

/** The server's one call, answered `told` (an elicitation declined is a tool that answered), no model call of its own. */
function expectServerCall(server: Trip['server'], agentFile: string, told: string): void {
  expect(server.doc.extra.caller).toEqual({ session_id: 'user-42', tool_call_id: 'call_trip', trajectory_id: 'user-42', trajectory_path: agentFile });
  expect(server.doc.steps.map((step: Doc) => step.source)).toEqual(['system']);
  expect(server.doc.steps[0].observation.results.map((entry: Doc) => [entry.content, entry.extra.metadata.tool_call_id, entry.extra.metadata.status])).toEqual([[told, 'call_trip', 'ok']]);
  expect(server.doc.final_metrics).not.toHaveProperty('total_prompt_tokens');
}

function checkTrip(backend: 'memory' | 'native', answer: Answer): Promise<void> {
  const told = answer === 'accept' ? 'Vigeland Park (tour booked)' : 'Vigeland Park (no tour: decline)';
  const final = answer === 'accept' ? 'Visit Vigeland Park; your tour is booked.' : 'Visit Vigeland Park on your own.';
  const replies: Turn[] = [
    { id: 'resp_1', model: 'gpt-4o-2024-08-06', text: '', toolCalls: [{ id: 'call_trip', name: 'plan_trip', args: { city: 'Oslo' } }], usage: { input: 90, output: 15 } },
    { id: 'resp_sample', model: 'gpt-4o-mini-2024-07-18', text: 'Vigeland Park', usage: { input: 30, output: 4 } },
    { id: 'resp_2', model: 'gpt-4o-2024-08-06', text: final, usage: { input: 130, output: 12 } },
  ];
  return withTrip('trip-agent.mjs', backend, answer, replies, ({ run, api, spans, agent, server }) => {
    // What the programs did: the server sampled, asked, reported progress; the client read a resource and a prompt.
    const lines = run.stdout.trim().split('\n');
    expect([lines[2], ...lines.slice(4)]).toEqual([final, 'resource: Oslo: fjords, museums, parks.', 'prompt: Plan a day in Oslo.']);
    // The progress the agent's `onprogress` got: what the MCP SDK's client guarantees. The server sends its last
    // progress just before its result, and the client retires the call's progress handler as it reads the result
    // while it hands a notification on a microtask later: when the pipe joins the two writes into one read (a loaded
    // machine), that last one is dropped (modelcontextprotocol/typescript-sdk#2580; the server's order on the wire,
    // the last progress before the result, is sampling-in-process.test.ts's to check). The first two each precede a
    // request the client answers before the server goes on: always delivered.
    expect(['progress: asking the model | asking the user | done', 'progress: asking the model | asking the user']).toContain(lines[3]);
    // The handlers get the server's requests as its program sent them: the adapter's name of the caller is gone.
    expect(JSON.parse(lines[0]!.replace(/^sampling: /, ''))).toEqual({ messages: [{ role: 'user', content: { type: 'text', text: 'Name one sight in Oslo.' } }], maxTokens: 100 });
    expect(lines[1]).toMatch(/^elicitation: \{"mode":"form","message":"Book a guided tour of Vigeland Park\?","requestedSchema":.*\} -> /);
    expect(lines[1]).not.toContain('_meta');
    expect(api.requests.map((request) => request.body.model)).toEqual(['gpt-4o', 'gpt-4o-mini', 'gpt-4o']);

    const [agentFile, agentDoc] = [agent.file, agent.doc];
    const [serverFile, serverDoc] = [server.file, server.doc];

    // The agent: one turn, its user step and two model calls; the sampling is no turn of its own but a sub-agent of
    // the tool call whose server asked for it, embedded, referenced from that call's result beside the server's.
    expect(agentDoc.steps.map((step: Doc) => [step.source, step.message, step.model_name ?? null, (step.tool_calls ?? []).map((call: Doc) => call.tool_call_id)])).toEqual([
      ['user', 'Plan a day in Oslo.', null, []],
      ['agent', '', 'gpt-4o-2024-08-06', ['call_trip']],
      ['agent', final, 'gpt-4o-2024-08-06', []],
    ]);
    const results = agentDoc.steps[1].observation.results as Doc[];
    expect(results).toHaveLength(1);
    expect(results[0]!.source_call_id).toBe('call_trip');
    expect(JSON.parse(results[0]!.content)).toEqual([{ type: 'text', text: told }]);
    expect(results[0]!.subagent_trajectory_ref.map((ref: Doc) => ref.session_id)).toEqual(['user-42:sub:call_trip', serverDoc.session_id]);
    expect(results[0]!.subagent_trajectory_ref[1]).toEqual({ session_id: serverDoc.session_id, trajectory_id: serverDoc.trajectory_id, trajectory_path: serverFile });
    const sampling = agentDoc.subagent_trajectories as Doc[];
    expect(sampling.map((doc) => doc.session_id)).toEqual(['user-42:sub:call_trip']);
    expect(sampling[0]!.steps.map((step: Doc) => [step.source, step.message, step.model_name ?? null])).toEqual([
      ['user', 'Name one sight in Oslo.', null],
      ['agent', 'Vigeland Park', 'gpt-4o-mini-2024-07-18'],
    ]);
    // Tokens once: the agent's own calls in its totals, the sampling's in the sub-agent's.
    expect(agentDoc.final_metrics).toMatchObject({ total_prompt_tokens: 220, total_completion_tokens: 27 });
    expect(sampling[0]!.final_metrics).toMatchObject({ total_prompt_tokens: 30, total_completion_tokens: 4 });

    expectServerCall(server, agentFile, told);

    // `view` of both files: the sampling under the tool call beside the server's session, its tokens in the
    // session's totals once (the server's record of the call is its session's tool call).
    const folder = path.join(run.cwd, 'trajectories');
    const viewed = spawnSync(process.execPath.includes('node') ? process.execPath : 'node', [path.join(repoRoot, 'dist/src/cli/main.js'), 'view', '--json', path.join(folder, serverFile), path.join(folder, agentFile)], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
    expect(viewed.status, viewed.stderr).toBe(0);
    const report = JSON.parse(viewed.stdout) as { files: { sessions: Doc[] }[] };
    expect(report.files.map((file) => file.sessions.length)).toEqual([0, 1]);
    const session = report.files[1]!.sessions[0]!;
    expect(session.totals).toMatchObject({ llmCalls: 3, toolCalls: 2, errors: 0, promptTokens: 250, completionTokens: 31 });
    expect(session.own).toMatchObject({ llmCalls: 2, toolCalls: 1, promptTokens: 220, completionTokens: 27 });
    const toolNode = findNode(session, (node) => node.kind === 'tool' && node.title === 'tool plan_trip')!;
    expect(toolNode.children.map((child: Doc) => [child.kind, child.title])).toEqual([
      ['subagent', 'subagent user-42:sub:call_trip'],
      ['subagent', `remote session ${serverDoc.session_id}`],
    ]);

    // ATOF: one tool scope on each side (plan_trip), the server's session under the agent's tool scope, one root.
    const atof = (name: string) => readFileSync(path.join(run.cwd, 'nemo-relay-output', name), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Doc);
    const agentEvents = atof('agent-atof.jsonl');
    const serverEvents = atof('server-atof.jsonl');
    const toolScopes = (events: Doc[]) => events.filter((event) => event.kind === 'scope' && event.category === 'tool').map((event) => `${event.scope_category} ${event.name}`);
    expect(toolScopes(agentEvents)).toEqual(['start plan_trip', 'end plan_trip']);
    expect(toolScopes(serverEvents)).toEqual(['start plan_trip', 'end plan_trip']);
    const agentTool = agentEvents.find((event) => event.kind === 'scope' && event.category === 'tool')!;
    const root = agentEvents[0]!;
    expect(serverEvents[0]!.parent_uuid).toBe(agentTool.uuid);
    expect(new Set([...agentEvents, ...serverEvents].map((event) => event.propagation_root_uuid))).toEqual(new Set([root.uuid]));
    expect(JSON.stringify(serverEvents)).not.toMatch(/resources\/read|prompts\/get|guide:\/\/|sampling\/createMessage|elicitation/);

    // OTLP: one trace; the sampling's model call inside the server's tool span (the server waited for it) and in
    // the sub-agent that hangs under the agent's session, beside the tool call that caused it.
    expect(new Set(spans.map((span) => span.traceId)).size, JSON.stringify(spans.map(brief))).toBe(1);
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    expect(spans.filter((span) => span.parentSpanId === '')).toHaveLength(1);
    // Only the sessions, the tool calls and the model calls: progress, the resource and the prompt make no span.
    expect(spans.map((span) => span.name.replace(/mcp-trip-server-[0-9a-f-]{36}/, 'mcp-trip-server-<id>')).sort()).toEqual([
      'openai.responses',
      'openai.responses',
      'openai.responses',
      'plan_trip',
      'plan_trip',
      'trip-agent-session-user-42',
      'trip-agent-session-user-42:sub:call_trip',
      'trip-server-session-mcp-trip-server-<id>',
    ]);
    const models = spans.filter((span) => span.name === 'openai.responses');
    expect(models).toHaveLength(3);
    const samplingSpan = models.find((span) => byId.get(span.parentSpanId)?.name === 'trip-agent-session-user-42:sub:call_trip')!;
    expect(samplingSpan, JSON.stringify(spans.map(brief))).toBeDefined();
    const [agentToolSpan, serverToolSpan] = spans.filter((span) => span.name === 'plan_trip').sort((a, b) => ancestry(a, byId).length - ancestry(b, byId).length);
    expect(ancestry(serverToolSpan!, byId)).toContain(agentToolSpan!.spanId);
    expect(within(samplingSpan, serverToolSpan!)).toBe(true);
    expect(within(serverToolSpan!, agentToolSpan!)).toBe(true);
  });
}

/**
 * The AI SDK's MCP client (`createMCPClient` over `instrumentMcpTransport`): it cannot sample, and answers the
 * elicitation with `onElicitationRequest`, which gets the request as the server's program sent it.
 */
function checkAiSdkTrip(backend: 'memory' | 'native'): Promise<void> {
  const told = 'the harbour (tour booked)';
  const replies: Turn[] = [
    { id: 'resp_1', model: 'gpt-4o-2024-08-06', text: '', toolCalls: [{ id: 'call_trip', name: 'plan_trip', args: { city: 'Oslo' } }], usage: { input: 90, output: 15 } },
    { id: 'resp_2', model: 'gpt-4o-2024-08-06', text: 'Walk the harbour with a guide.', usage: { input: 130, output: 12 } },
  ];
  return withTrip('ai-sdk-trip-agent.mjs', backend, 'accept', replies, ({ run, api, agent, server }) => {
    const [asked, final] = run.stdout.trim().split('\n');
    expect(final).toBe('Walk the harbour with a guide.');
    const params = JSON.parse(/^elicitation: (.*) -> accept$/.exec(asked!)![1]!) as Doc;
    expect(params).toMatchObject({ mode: 'form', message: 'Book a guided tour of the harbour?' });
    expect(JSON.stringify(params)).not.toContain('nemo-relay');
    expect(api.requests.map((request) => request.body.model)).toEqual(['gpt-4o', 'gpt-4o']);
    expect(agent.doc.steps.map((step: Doc) => [step.source, step.message])).toEqual([
      ['user', 'Plan a day in Oslo.'],
      ['agent', ''],
      ['agent', 'Walk the harbour with a guide.'],
    ]);
    const results = agent.doc.steps[1].observation.results as Doc[];
    expect(results.map((result) => [result.source_call_id, result.subagent_trajectory_ref])).toEqual([
      ['call_trip', [{ session_id: server.doc.session_id, trajectory_id: server.doc.trajectory_id, trajectory_path: server.file }]],
    ]);
    expect(results[0]!.content).toContain(told);
    expect(agent.doc).not.toHaveProperty('subagent_trajectories');
    expectServerCall(server, agent.file, told);
  });
}

/** `inner` starts and ends within `outer`. */
function within(inner: DecodedSpan, outer: DecodedSpan): boolean {
  return BigInt(inner.startTimeUnixNano) >= BigInt(outer.startTimeUnixNano) && BigInt(inner.endTimeUnixNano) <= BigInt(outer.endTimeUnixNano);
}

describe('an MCP server that samples, elicits and reports progress, and serves a resource and a prompt', () => {
  for (const backend of ['memory', 'native'] as const) {
    for (const answer of ['accept', 'decline'] as const) {
      it(`the sampling is a sub-agent of the call that caused it, the elicitation (${answer}) the tool's, one trace (${runtime}, ${backend})`, () => checkTrip(backend, answer), 130_000);
    }
    it(`the AI SDK's MCP client answers the elicitation given as the server sent it (${runtime}, ${backend})`, () => checkAiSdkTrip(backend), 130_000);
  }
});
