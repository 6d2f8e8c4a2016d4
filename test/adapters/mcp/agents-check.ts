// An OpenAI Agents SDK program as the SDK's docs write one
// (`mcpServers: [new MCPServerStdio(...)]`, or `MCPServerStreamableHttp({ url })`, or `MCPServerSSE({ url })`)
// whose MCP server, instrumented with `instrumentMcpServer`, is its child over
// stdio or runs on its own over Streamable HTTP or SSE (agents-programs.ts).
// The model is the Responses API on loopback (JSON, then SSE for the streamed
// run), OTLP goes to a loopback collector. The program has a resolver and an
// extractor of its own, and runs with them as the server's options (without
// the adapter) and handed to `openAIAgentsMcpOptions(hooks, own)`: with it,
// one trace per run across both processes, each server trajectory names the
// agent's tool call, each agent observation references the server trajectory
// of its own call, the call answered with `isError` is a failed call (as it
// is without the options), the model is sent nothing the server added to a result's `_meta`, the server
// gets the program's `_meta` and the tool outputs its custom data, a run
// whose call the program's extractor fails (it throws, or returns a string)
// rejects as it does without them (its call linked all the same), and
// nothing else in the agent's trajectories differs from the run without it.
// Used by agents.test.ts (memory, stdio) and test/slow/mcp-agents.test.ts
// (native, Streamable HTTP, SSE).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { runtime } from '../../support/child.ts';
import { loopbackApi, repoRoot } from '../../support/doc-snippets.ts';
import { startHttpReceiver, type DecodedSpan, type Receiver } from '../../support/otlp-receiver.ts';
import { FakeOpenAI, dated } from '../openai-agents/wire.ts';
import { AGENT_SOURCE, SERVER_SOURCE, type AgentConfig } from './agents-programs.ts';

type Doc = Record<string, any>;

// A new fake per program: its response ids count from 1 for each.
let api = new FakeOpenAI();
let provider: { url: string; close(): Promise<void> };
let collector: Receiver;

/** The loopback model server and OTLP collector, for the test file that calls it (at its top level). */
export function serveAgentsPrograms(): void {
  beforeAll(async () => {
    provider = await loopbackApi((url, init) => api.fetch(url, init));
    collector = await startHttpReceiver();
  });
  afterAll(async () => {
    await provider.close();
    await collector.close();
  });
}

/**
 * The model's turns: run 1 asks for five calls at once (four of one tool, one refused with isError, one the program's
 * own resolver fails before its request), run 2 (streamed) for one.
 */
const SCRIPT = {
  'gpt-4.1': [
    {
      calls: [
        { id: 'call_oslo', name: 'forecast', args: { city: 'Oslo' } },
        { id: 'call_bergen', name: 'forecast', args: { city: 'Bergen' } },
        // The same tool with the same arguments at once: only the call it runs in tells the two apart.
        { id: 'call_oslo_again', name: 'forecast', args: { city: 'Oslo' } },
        { id: 'call_alerts', name: 'alerts', args: { city: 'Oslo' } },
        { id: 'call_atlantis', name: 'forecast', args: { city: 'Atlantis' } },
      ],
      usage: { input: 120, output: 40, cached: 64 },
    },
    { text: 'Oslo: rain. Bergen: rain. No alerts.', usage: { input: 210, output: 12 } },
    { calls: [{ id: 'call_tromso', name: 'forecast', args: { city: 'Tromsø' } }], usage: { input: 90, output: 15 } },
    { text: 'Tromsø: rain.', usage: { input: 130, output: 6, cached: 32 } },
    // Runs 3 and 4: one call each, which the program's extractor fails; the run ends there (no second turn).
    { calls: [{ id: 'call_reykjavik', name: 'forecast', args: { city: 'Reykjavik' } }], usage: { input: 80, output: 14 } },
    { calls: [{ id: 'call_nuuk', name: 'forecast', args: { city: 'Nuuk' } }], usage: { input: 70, output: 13 } },
  ],
};

interface Output {
  agent: Map<string, Doc>;
  server: Map<string, Doc>;
  spans: DecodedSpan[];
  /** What the model was sent, as JSON text. */
  model: string;
  /** Each request's `_meta` as the server's tool handler got it, by city, in arrival order. */
  received: { city: string; meta: Doc | null }[];
  /** The W3C trace headers of each request's HTTP request (none over stdio), in the same order. */
  headers: { city: string; traceparent: string | null; tracestate: string | null }[];
  /** Each run's tool outputs' custom data, by call id, as the program read them. */
  customData: [string, Doc | null][][];
  /** The agent's tool calls its hooks said failed: call id, error type, error message. */
  failedCalls: [string, string, string][];
  /** Runs 3 and 4 as the program saw them: what each rejected with (constructor, name, message), by run number. */
  rejections: Record<string, [string, string, string]>;
  /** The sessions the hooks ended as failed: session id, error type, error message. */
  failedRuns: [string, string, string][];
}

/** Runs the server on its own over Streamable HTTP or SSE; resolves with its URL and how to stop it (SIGTERM: it writes its files, then exits). */
export async function serveHttp(script: string, out: string, env: NodeJS.ProcessEnv, args: string[], transport: 'http' | 'sse'): Promise<{ url: string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [...args, script, out, transport], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let seen = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      seen += chunk;
      const found = /listening (\d+)/.exec(seen);
      if (found) resolve(Number(found[1]));
    });
    child.on('exit', (code) => reject(new Error(`the server exited (${code}) before listening`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    url: `http://127.0.0.1:${port}/${transport === 'sse' ? 'sse' : 'mcp'}`,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export type Transport = 'stdio' | 'http' | 'sse';

export async function runProgram(link: boolean, backend: 'memory' | 'native', transport: Transport = 'stdio'): Promise<Output> {
  const home = path.join(repoRoot, '.tmp', 'mcp-agents');
  mkdirSync(home, { recursive: true });
  const folder = mkdtempSync(path.join(home, `${runtime}-${backend}-`));
  try {
    writeFileSync(path.join(folder, 'server.mjs'), SERVER_SOURCE);
    writeFileSync(path.join(folder, 'agent.mjs'), AGENT_SOURCE);
    const config: AgentConfig = { server: path.join(folder, 'server.mjs'), link, out: path.join(folder, 'trajectories') };
    api = new FakeOpenAI(SCRIPT);
    collector.requests.length = 0;
    const env = {
      ...process.env,
      OPENAI_API_KEY: 'sk-test-not-a-key',
      OPENAI_BASE_URL: `${provider.url}/v1`,
      OPENAI_AGENTS_DISABLE_TRACING: '1',
      NO_COLOR: '1',
      NEMO_RELAY_HOOKS_BACKEND: backend,
      NEMO_RELAY_HOOKS_OTLP_ENABLED: 'true',
      NEMO_RELAY_HOOKS_OTLP_TYPE: 'full',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    };
    const [binary, ...args] = runtime === 'deno' ? [process.execPath, 'run', '-A'] : [process.execPath];
    let http: Awaited<ReturnType<typeof serveHttp>> | undefined;
    if (transport !== 'stdio') {
      http = await serveHttp(config.server, `${config.out}-server`, env, args, transport);
      config.url = http.url;
      config.transport = transport;
    }
    const result = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(binary!, [...args, path.join(folder, 'agent.mjs'), JSON.stringify(config)], { cwd: folder, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      child.on('error', reject);
      child.on('close', (status) => resolve({ status, stdout, stderr }));
    });
    await http?.stop();
    expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout).toContain('run 1: Oslo: rain. Bergen: rain. No alerts.');
    expect(result.stdout).toContain('run 2: Tromsø: rain.');
    expect(result.stderr).not.toMatch(/failed|error|warn/i);
    const read = (dir: string): Map<string, Doc> =>
      new Map(existsSync(dir) ? readdirSync(dir).sort().map((file) => [file, JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as Doc]) : []);
    const received = readFileSync(`${config.out}-server-meta.jsonl`, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Output['received'][number]);
    const headers = readFileSync(`${config.out}-server-headers.jsonl`, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Output['headers'][number]);
    const customData = [1, 2].map((n) => JSON.parse(new RegExp(`^custom data ${n}: (.*)$`, 'm').exec(result.stdout)![1]!) as [string, Doc | null][]);
    const failedCalls = [...result.stdout.matchAll(/^failed call: (.*)$/gm)].map((found) => JSON.parse(found[1]!) as [string, string, string]);
    const rejections = Object.fromEntries([...result.stdout.matchAll(/^run (\d) rejected: (.*)$/gm)].map((found) => [found[1]!, JSON.parse(found[2]!) as [string, string, string]]));
    const failedRuns = [...result.stdout.matchAll(/^failed run: (.*)$/gm)].map((found) => JSON.parse(found[1]!) as [string, string, string]);
    const out = { agent: read(config.out), server: read(`${config.out}-server`), spans: collector.spans(), model: JSON.stringify(api.requests), received, headers, customData, failedCalls, rejections, failedRuns };
    for (const [file, doc] of [...out.agent, ...out.server]) expect(validateAtif(doc), file).toEqual([]);
    return out;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

interface Run {
  readonly session: string;
  /** Id, tool, city. */
  readonly calls: readonly (readonly [string, string, string])[];
  readonly tokens: Doc;
}

/** Run by run: its session, its calls (id, tool, city) and its tokens as the model server reported them. */
const RUNS: readonly Run[] = [
  {
    session: 'weather-1',
    calls: [
      ['call_oslo', 'forecast', 'Oslo'],
      ['call_bergen', 'forecast', 'Bergen'],
      ['call_oslo_again', 'forecast', 'Oslo'],
      ['call_alerts', 'alerts', 'Oslo'],
      ['call_atlantis', 'forecast', 'Atlantis'],
    ],
    tokens: { total_prompt_tokens: 330, total_completion_tokens: 52, total_cached_tokens: 64 },
  },
  { session: 'weather-2', calls: [['call_tromso', 'forecast', 'Tromsø']], tokens: { total_prompt_tokens: 220, total_completion_tokens: 21, total_cached_tokens: 32 } },
];

/**
 * Runs 3 and 4: one call each, answered by the server, whose result the program's extractor fails (it throws; it
 * returns a string, which the SDK refuses with its UserError). The SDK ends the call with the error's text as its
 * output and the run rejects with its ToolCallError around that error, with or without the options.
 */
const EXTRACTOR_RUNS: readonly (Run & { n: string; error: string })[] = [
  { n: '3', session: 'weather-3', calls: [['call_reykjavik', 'forecast', 'Reykjavik']], tokens: { total_prompt_tokens: 80, total_completion_tokens: 14, total_cached_tokens: 0 }, error: 'RangeError: no region in the answer for Reykjavik' },
  { n: '4', session: 'weather-4', calls: [['call_nuuk', 'forecast', 'Nuuk']], tokens: { total_prompt_tokens: 70, total_completion_tokens: 13, total_cached_tokens: 0 }, error: 'UserError: customDataExtractor must return an object or null.' },
];

/** A run's calls whose request went out (the program's resolver fails Atlantis's call before it). */
const served = (run: Run): readonly (readonly [string, string, string])[] => run.calls.filter(([, , city]) => city !== 'Atlantis');

/** The cities of the requests that reach the server (the program's resolver fails Atlantis's call before its request). */
const SERVED_CITIES = ['Bergen', 'Nuuk', 'Oslo', 'Oslo', 'Oslo', 'Reykjavik', 'Tromsø'];

/** The program's extractor's custom data, run by run, by call id: none for the call that failed before its request. */
const answeredBy = (isError: boolean): Doc => ({ answered_by: 'weather', is_error: isError });
const CUSTOM_DATA = [
  [
    ['call_oslo', answeredBy(false)],
    ['call_bergen', answeredBy(false)],
    ['call_oslo_again', answeredBy(false)],
    ['call_alerts', answeredBy(true)],
    ['call_atlantis', null],
  ],
  [['call_tromso', answeredBy(false)]],
];

/** What the SDK's default tool error function tells the model. */
const SDK_TOOL_FAILURE_TEXT = 'An error occurred while running the tool. Please try again.';

/**
 * How the hooks end the call the program's resolver failed: the SDK tells the model its default text and marks the
 * call's (no-op, tracing off) function span with its redacted error, as it marks a real one.
 */
const ATLANTIS_FAILED: [string, string, string] = ['call_atlantis', 'ToolError', 'Tool execution failed. Error details are redacted.'];

/** How the hooks end the call answered with isError: failed with the text the server answered, as the server's own trajectory says. */
const ALERTS_FAILED: [string, string, string] = ['call_alerts', 'ToolError', 'the alert service is down for Oslo'];

/** Every call the hooks say failed, with or without the options, sorted by call id. */
const FAILED_CALLS = [ALERTS_FAILED, ATLANTIS_FAILED, ['call_nuuk', 'ToolError', 'UserError: customDataExtractor must return an object or null.'], ['call_reykjavik', 'ToolError', 'RangeError: no region in the answer for Reykjavik']];

/** What the server answers (a forecast numbered by its arrival). */
const SERVER_TEXT: Record<string, (city: string) => RegExp> = { forecast: (city) => new RegExp(`^${city}: rain \\(answer \\d\\)$`), alerts: (city) => new RegExp(`^the alert service is down for ${city}$`) };

function agentDoc(out: Output, session: string): [string, Doc] {
  const found = [...out.agent].find(([, doc]) => doc.session_id === session);
  expect(found, `the trajectory of ${session}`).toBeDefined();
  return found!;
}

function observed(doc: Doc, callId: string): Doc {
  const result = (doc.steps as Doc[]).flatMap((step) => step.observation?.results ?? []).find((entry: Doc) => entry.source_call_id === callId);
  expect(result, `the observation of ${callId}`).toBeDefined();
  return result;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/**
 * A trajectory without what differs from one run of a program to the next
 * (ids, times; the order the calls ended in, and so the server's numbering
 * of its answers) and without the server references.
 */
function comparable(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) {
    const entries = value.map((entry) => comparable(entry));
    return key === 'results' ? entries.sort((a, b) => String((a as Doc).source_call_id).localeCompare(String((b as Doc).source_call_id))) : entries;
  }
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([name]) => name !== 'subagent_trajectory_ref')
        .map(([name, entry]) => [name, comparable(entry, name)]),
    );
  }
  if (typeof value === 'number' && /timestamp|duration/.test(key)) return 0;
  if (typeof value === 'string') return key === 'timestamp' ? 'TIME' : value.replace(UUID, 'UUID').replace(/\(answer \d+\)/g, '(answer N)');
  return value;
}

/** The program without the options, on memory: what the SDK does on its own, and what the linked runs are held to. */
let plainRun: Promise<Output> | undefined;
export const plain = (): Promise<Output> => (plainRun ??= runProgram(false, 'memory'));

/** Without the options, what the SDK does on its own: every MCP call is a trace and a trajectory of its own, unlinked. */
export async function checkPlainProgram(): Promise<void> {
  const out = await plain();
  expect(new Set(out.spans.map((span) => span.traceId)).size).toBe(4 + 7);
  expect(out.server.size).toBe(7);
  for (const doc of out.server.values()) expect(doc.extra?.caller).toBeUndefined();
  for (const run of [...RUNS, ...EXTRACTOR_RUNS]) for (const [id] of run.calls) expect(observed(agentDoc(out, run.session)[1], id).subagent_trajectory_ref).toBeUndefined();
  // The program's own resolver and extractor, as the SDK runs them: its _meta on every request that went out, its custom data on every output.
  expect(out.received.map((entry) => entry.city).sort()).toEqual(SERVED_CITIES);
  for (const { meta } of out.received) expect(meta).toEqual({ 'example.com/tenant': 'acme' });
  expect(out.customData).toEqual(CUSTOM_DATA);
  // An isError result is an ordinary output to the SDK, which the adapter reads from the server's answer: without the
  // options too, a failed call; so is the one the resolver failed, and those the extractor failed.
  expect(observed(agentDoc(out, 'weather-1')[1], 'call_alerts').extra.metadata).toMatchObject({ status: 'error', 'error.type': 'ToolError' });
  expect(out.failedCalls.sort()).toEqual(FAILED_CALLS);
  checkExtractorRuns(out);
}

/**
 * Runs 3 and 4, whose call the program's extractor failed: the run rejects with the SDK's ToolCallError around the
 * extractor's error (the same with the options: checked against these constants either way), the session ends as
 * failed with it, and the call ends failed with the error's text as its output: the SDK marks the call's function
 * span (a no-op one, tracing off) before it ends the call, which the Agents adapter reads.
 */
function checkExtractorRuns(out: Output): void {
  for (const run of EXTRACTOR_RUNS) {
    const message = `Failed to run function tools: ${run.error}`;
    expect(out.rejections[run.n], `run ${run.n}`).toEqual(['ToolCallError', 'ToolCallError', message]);
    expect(out.failedRuns.filter(([session]) => session === run.session)).toEqual([[run.session, 'ToolCallError', message]]);
    const [, doc] = agentDoc(out, run.session);
    const [id] = run.calls[0]!;
    expect(observed(doc, id)).toMatchObject({ content: run.error, extra: { metadata: { status: 'error', 'error.type': 'ToolError' } } });
    expect(doc.final_metrics).toMatchObject(run.tokens);
  }
  expect(out.failedRuns.map(([session]) => session).sort()).toEqual(EXTRACTOR_RUNS.map((run) => run.session));
}

/** With the options: one trace per run across both processes, and trajectories that point at each other. */
export async function checkLinkedProgram(backend: 'memory' | 'native', transport: Transport): Promise<void> {
  const linked = await runProgram(true, backend, transport);

  // With them: each server trajectory names the agent's call it did, and that call's observation references it.
  expect(linked.agent.size).toBe(4);
  expect(linked.server.size).toBe(7);
  const referenced = new Set<string>();
  for (const run of RUNS) {
    const [agentFile, doc] = agentDoc(linked, run.session);
    for (const [id, tool, city] of run.calls) {
      const observation = observed(doc, id);
      if (city === 'Atlantis') {
        // The program's own resolver threw: the SDK failed the call before its request, as it does without the adapter.
        expect(observation).toMatchObject({ content: SDK_TOOL_FAILURE_TEXT, extra: { metadata: { status: 'error' } } });
        expect(observation.subagent_trajectory_ref).toBeUndefined();
        continue;
      }
      const serverFiles = [...linked.server].filter(([, server]) => server.extra?.caller?.tool_call_id === id);
      expect(serverFiles, `the server trajectories of ${id}`).toHaveLength(1);
      const [serverFile, server] = serverFiles[0]!;
      referenced.add(serverFile);
      expect(server.extra.caller).toEqual({ session_id: run.session, tool_call_id: id, trajectory_id: doc.trajectory_id, trajectory_path: agentFile });
      // The server's call is the one the agent made (its tool, its arguments, its answer).
      const answer = (server.steps as Doc[]).at(-1)!.observation.results[0];
      expect([answer.extra.event_name, answer.extra.metadata.status]).toEqual([tool, tool === 'alerts' ? 'error' : 'ok']);
      expect(answer.content).toMatch(SERVER_TEXT[tool]!(city));
      // The answer the agent's call got is the one of the trajectory it references (same-argument calls included), and
      // it failed exactly when the server's call did (an isError result).
      expect(JSON.parse(observation.content)).toEqual({ type: 'text', text: answer.content });
      expect(observation.extra.metadata.status).toBe(answer.extra.metadata.status);
      if (tool === 'alerts') expect(observation.extra.metadata).toMatchObject({ 'error.type': 'ToolError', 'otel.status_code': 'ERROR' });
      expect(observation.subagent_trajectory_ref).toEqual([{ trajectory_id: server.trajectory_id, session_id: server.session_id, trajectory_path: serverFile }]);
    }
    // Tokens: what the model server reported, nothing added.
    expect(doc.final_metrics).toMatchObject(run.tokens);
    expect((doc.steps as Doc[]).filter((step) => step.source === 'agent').map((step) => step.model_name)).toEqual([dated('gpt-4.1'), dated('gpt-4.1')]);
  }
  // The calls the program's extractor failed are linked all the same: the options read the result before they call it.
  for (const run of EXTRACTOR_RUNS) {
    const [agentFile, doc] = agentDoc(linked, run.session);
    const [id] = run.calls[0]!;
    const serverFiles = [...linked.server].filter(([, server]) => server.extra?.caller?.tool_call_id === id);
    expect(serverFiles, `the server trajectories of ${id}`).toHaveLength(1);
    const [serverFile, server] = serverFiles[0]!;
    referenced.add(serverFile);
    expect(server.extra.caller).toEqual({ session_id: run.session, tool_call_id: id, trajectory_id: doc.trajectory_id, trajectory_path: agentFile });
    expect(observed(doc, id).subagent_trajectory_ref).toEqual([{ trajectory_id: server.trajectory_id, session_id: server.session_id, trajectory_path: serverFile }]);
  }
  checkExtractorRuns(linked);
  expect(referenced.size).toBe(7);
  // The program's own _meta reached the server with the adapter's keys beside it, each request naming its own call.
  expect(linked.received.map((entry) => entry.city).sort()).toEqual(SERVED_CITIES);
  const callers = linked.received.map(({ meta }) => {
    expect(meta).toMatchObject({ 'example.com/tenant': 'acme', traceparent: expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/), 'nemo-relay/propagation': expect.any(String) });
    expect(Object.keys(meta!).sort()).toEqual(['example.com/tenant', 'nemo-relay/caller', 'nemo-relay/propagation', 'traceparent']);
    return meta!['nemo-relay/caller'].tool_call_id as string;
  });
  expect(callers.sort()).toEqual([...RUNS, ...EXTRACTOR_RUNS].flatMap((run) => served(run).map(([id]) => id)).sort());
  // Over HTTP (the program gives the server traceparentFetch()), each request's headers carry its _meta's traceparent.
  expect(linked.headers).toEqual(linked.received.map(({ city, meta }) => ({ city, traceparent: transport === 'stdio' ? null : meta!.traceparent, tracestate: null })));
  // The program's extractor gave each tool output its custom data, as without the adapter (which adds none).
  expect(linked.customData).toEqual(CUSTOM_DATA);
  // The hooks say the isError call failed with the text the server answered, as the server's own trajectory does.
  expect(linked.failedCalls.sort()).toEqual(FAILED_CALLS);

  // The model was sent the tools' content and nothing the server added to a result's `_meta` for the options (which
  // cannot remove it): the SDK's tool output is the result's content.
  expect(linked.model).toContain('rain (answer');
  expect(linked.model).not.toContain('nemo-relay/');

  // Nothing else in the agent's trajectories changed (from the plain run on memory: the backends write the same), the
  // failed calls included.
  const unlinked = await plain();
  for (const run of [...RUNS, ...EXTRACTOR_RUNS]) expect(comparable(agentDoc(linked, run.session)[1])).toEqual(comparable(agentDoc(unlinked, run.session)[1]));
  // And the program saw the same rejections, the hooks the same failed runs.
  expect([linked.rejections, linked.failedRuns]).toEqual([unlinked.rejections, unlinked.failedRuns]);

  // One trace per run: the agent's session span its one root, each server session span under the agent's span of its call.
  expect(new Set(linked.spans.map((span) => span.traceId)).size).toBe(4);
  const byId = new Map(linked.spans.map((span) => [span.spanId, span]));
  for (const run of [...RUNS, ...EXTRACTOR_RUNS]) {
    const root = linked.spans.find((span) => span.name === `Weather agent-session-${run.session}`)!;
    const spans = linked.spans.filter((span) => span.traceId === root.traceId);
    expect(spans.filter((span) => span.parentSpanId === '').map((span) => span.name)).toEqual([root.name]);
    for (const span of spans) if (span.parentSpanId !== '') expect(byId.has(span.parentSpanId), span.name).toBe(true);
    const serverSessions = spans.filter((span) => span.name.startsWith('weather-server-session-'));
    expect(serverSessions).toHaveLength(served(run).length);
    const parents = serverSessions.map((span) => byId.get(span.parentSpanId)!);
    expect(parents.map((span) => [span.attributes['nemo_relay.start.metadata.session_id'], span.attributes['nemo_relay.tool_call_id']]).sort()).toEqual(served(run).map(([id]) => [run.session, id]).sort());
    for (const span of serverSessions) {
      const server = [...linked.server.values()].find((doc) => span.name === `weather-server-session-${doc.session_id}`)!;
      expect(byId.get(span.parentSpanId)!.attributes['nemo_relay.tool_call_id']).toBe(server.extra.caller.tool_call_id);
    }
  }
}
