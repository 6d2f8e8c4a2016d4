// MCP across processes on seeded random plans: a host that emits its own
// hooks (docs/adapters/mcp.md's fragment) with the NeMo Relay plugin calls
// tools of an MCP server running as a child process, over stdio or
// Streamable HTTP on loopback; that server's `relay` tool calls a second
// server, its own child (three trajectories). A plan mixes concurrent calls,
// tools that answer, refuse (`isError`), throw, report progress, a call the
// client cancels (AbortSignal: notifications/cancelled), and a server killed
// mid-call (the first, or the second under a relay). Each plan runs twice:
// without the plugin and the adapters (what the client sees on its own),
// then instrumented; the checks hold the instrumented run to the plain one
// and to what the program did. A failure names its seed.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { expect } from 'vitest';
import { HookRegistry } from '../../../src/hooks/index.ts';
import { createNemoRelayPlugin } from '../../../src/plugin/plugin.ts';
import { CALLER_META_KEY, instrumentMcpClient, TRAJECTORY_META_KEY } from '../../../src/adapters/mcp/index.ts';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { silentLogger } from '../../../src/shared/logger.ts';
import { repoRoot } from '../../support/doc-snippets.ts';
import { Draw } from '../../support/seeded-random.ts';
import { SERVER_SOURCE, type ServerConfig } from './cross-process-server.ts';

type Loose = Record<string, any>;
type Tool = 'echo' | 'refuse' | 'fail' | 'hang' | 'die' | 'relay';

export interface PlannedCall {
  id: string;
  /** The host's name for the tool: the MCP name, or prefixed as hosts name MCP tools. */
  hostName: string;
  tool: Tool;
  args: Record<string, unknown>;
  /** Progress notifications the tool sends (echo), or the one `hang` sends before it waits. */
  progress?: number;
  /** The client aborts the call once the server said it started. */
  cancel?: boolean;
}

export interface Plan {
  seed: number;
  transport: 'stdio' | 'http';
  nestedTransport: 'stdio' | 'http';
  /** Groups run one after another; the calls of a group run at once. */
  groups: PlannedCall[][];
}

export function drawPlan(seed: number): Plan {
  // Spread: neighbouring small seeds start mulberry32 alike.
  const draw = new Draw(Math.imul(seed, 0x9e3779b1));
  const transport = draw.pick(['stdio', 'http'] as const);
  const nestedTransport = draw.pick(['stdio', 'http'] as const);
  const groups: PlannedCall[][] = [];
  let n = 0;
  const call = (tool: Tool, extra: Partial<PlannedCall> = {}, inner?: Tool): PlannedCall => {
    n += 1;
    const id = `call_${seed}_${n}`;
    const text = `t${n}-${draw.pick(['oslo', 'bergen', 'ünïcode ✓', 'a "quoted" line\nand more', ''])}`;
    const args: Record<string, unknown> = { text, delay_ms: draw.int(0, 30) };
    if (inner !== undefined) args.tool = inner;
    if (extra.progress !== undefined && tool === 'echo') args.progress = extra.progress;
    const hostName = draw.chance(0.5) ? tool : `mcp__${transport}_server__${tool}`;
    return { id, hostName, tool, args, ...extra };
  };
  const groupCount = draw.int(2, 4);
  for (let g = 0; g < groupCount; g++) {
    const size = draw.int(1, 4);
    const group: PlannedCall[] = [];
    // Same-named calls at once: which open host call a request belongs to matters here.
    const repeated = draw.chance(0.4) ? draw.pick(['echo', 'relay', 'refuse'] as const) : undefined;
    for (let i = 0; i < size; i++) {
      const tool: Tool = repeated ?? draw.pick(['echo', 'echo', 'refuse', 'fail', 'hang', 'relay', 'relay'] as const);
      if (tool === 'hang') group.push(call('hang', { cancel: true, progress: 1 }));
      else if (tool === 'relay') group.push(call('relay', {}, draw.pick(['echo', 'refuse', 'fail'] as const)));
      else group.push(call(tool, draw.chance(0.3) && tool === 'echo' ? { progress: draw.int(1, 3) } : {}));
    }
    groups.push(group);
  }
  // A server killed mid-call ends the plan (the first server, or the second under a relay).
  const death = draw.pick(['none', 'none', 'server', 'nested'] as const);
  if (death === 'server') groups.push([call('die')]);
  if (death === 'nested') groups.push([call('relay', {}, 'die')]);
  return { seed, transport, nestedTransport, groups };
}

/** What the client got for a call: the result, or the error it threw. */
type Outcome = { result: Loose; progress: number } | { error: { name: string; message: string; code?: unknown }; progress: number };

interface Output {
  /** The folder's entries (atif, atof, status.json). */
  entries: string[];
  atifFiles: string[];
  docs: { file: string; doc: Loose }[];
  events: Loose[];
  counters?: Loose;
}

interface Run {
  outcomes: Map<string, Outcome>;
  dir: string;
  agent: Output;
  first: Output;
  nested: Output;
  agentCounters?: Loose;
  /** Files left in the servers' working folder. */
  strays: string[];
  stderr: string;
}

const runtimeArgs = process.versions.deno ? ['run', '-A'] : [];

/** The server script written into the package (so its imports resolve as a user's would). */
export function writeServer(): { script: string; remove(): void } {
  const home = path.join(repoRoot, '.tmp', 'mcp-random');
  mkdirSync(home, { recursive: true });
  const folder = mkdtempSync(path.join(home, 'server-'));
  const script = path.join(folder, 'server.mjs');
  writeFileSync(script, SERVER_SOURCE);
  return { script, remove: () => rmSync(folder, { recursive: true, force: true }) };
}

export async function runPlan(plan: Plan, instrument: boolean, backend: 'memory' | 'native'): Promise<Run> {
  const dir = mkdtempSync(path.join(tmpdir(), `nrh-mcp-random-${plan.seed}-`));
  const cwd = path.join(dir, 'cwd');
  mkdirSync(cwd);
  const { script, remove } = writeServer();
  const nested: ServerConfig = { name: 'nested', transport: plan.nestedTransport, instrument, backend, outDir: path.join(dir, 'nested') };
  const config: ServerConfig = { name: 'first', transport: plan.transport, instrument, backend, outDir: path.join(dir, 'first'), downstream: nested };
  const hooks = new HookRegistry();
  const plugin = instrument ? createNemoRelayPlugin({ backend, settings: { atifEnabled: true, atifOutputDirectory: path.join(dir, 'agent', 'atif') }, logger: silentLogger }) : undefined;
  plugin?.register(hooks);
  if (plugin !== undefined) await plugin.ready;
  const client = new Client({ name: 'agent', version: '1.0.0' });
  if (instrument) instrumentMcpClient(client, hooks, { logger: silentLogger });
  let stderr = '';
  let server: ChildProcess | undefined;
  const args = [...runtimeArgs, script, JSON.stringify(config)];
  if (plan.transport === 'stdio') {
    const transport = new StdioClientTransport({ command: process.execPath, args, env: process.env as Record<string, string>, cwd, stderr: 'pipe' });
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await client.connect(transport);
  } else {
    server = spawn(process.execPath, args, { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    server.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const port = await new Promise<number>((resolve, reject) => {
      let out = '';
      server!.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk;
        const found = /listening (\d+)/.exec(out);
        if (found !== null) resolve(Number(found[1]));
      });
      server!.on('exit', () => reject(new Error(`the server exited before listening: ${stderr}`)));
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
  }

  const outcomes = new Map<string, Outcome>();
  const session = { session_id: `agent-${plan.seed}` };
  hooks.emit('on_session_start', { ...session, platform: 'cli' });
  let turn = 0;
  for (const group of plan.groups) {
    turn += 1;
    const ids = { ...session, turn_id: `t${turn}` };
    const api = `t${turn}:api`;
    const toolCalls = group.map((call) => ({ id: call.id, type: 'function', function: { name: call.hostName, arguments: JSON.stringify(call.args) } }));
    const response = { id: `r${turn}`, model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: toolCalls }, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } };
    hooks.emit('pre_llm_call', { ...ids, user_message: `group ${turn}`, is_first_turn: turn === 1 });
    hooks.emit('pre_api_request', { ...ids, api_request_id: api, provider: 'openai', api_mode: 'chat_completions', model: 'gpt-4o', request: { body: { model: 'gpt-4o', messages: [{ role: 'user', content: `group ${turn}` }] } } });
    hooks.emit('post_api_request', { ...ids, api_request_id: api, provider: 'openai', api_mode: 'chat_completions', model: 'gpt-4o', response, usage: response.usage, assistant_message: response.choices[0]!.message, finish_reason: 'tool_calls' });
    for (const call of group) hooks.emit('pre_tool_call', { ...ids, api_request_id: api, tool_call_id: call.id, tool_name: call.hostName, args: call.args });
    await Promise.all(
      group.map(async (call) => {
        const abort = new AbortController();
        let progress = 0;
        const onprogress = () => {
          progress += 1;
          if (call.cancel === true) abort.abort(new Error(`${call.id} cancelled by the host`));
        };
        const post = { ...ids, api_request_id: api, tool_call_id: call.id, tool_name: call.hostName, args: call.args };
        try {
          const result = (await client.callTool({ name: call.tool, arguments: call.args }, undefined, { signal: abort.signal, ...(call.progress !== undefined ? { onprogress } : {}) })) as Loose;
          outcomes.set(call.id, { result, progress });
          const text = JSON.stringify(result.content);
          hooks.emit('post_tool_call', { ...post, result: text, status: result.isError === true ? 'error' : 'ok', ...(result.isError === true ? { error_type: 'ToolError', error_message: text } : {}) });
        } catch (error) {
          const e = error as Error & { code?: unknown };
          outcomes.set(call.id, { error: { name: e.name, message: e.message, ...(e.code !== undefined ? { code: e.code } : {}) }, progress });
          hooks.emit('post_tool_call', { ...post, status: 'error', error_type: e.name, error_message: e.message });
        }
      }),
    );
  }
  const last = `t${turn + 1}`;
  const final = { id: 'final', model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content: 'done' }, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 } };
  hooks.emit('pre_api_request', { ...session, turn_id: `t${turn}`, api_request_id: `${last}:api`, provider: 'openai', api_mode: 'chat_completions', model: 'gpt-4o', request: { body: { model: 'gpt-4o', messages: [] } } });
  hooks.emit('post_api_request', { ...session, turn_id: `t${turn}`, api_request_id: `${last}:api`, provider: 'openai', api_mode: 'chat_completions', model: 'gpt-4o', response: final, usage: final.usage, assistant_message: final.choices[0]!.message, finish_reason: 'stop' });
  hooks.emit('post_llm_call', { ...session, turn_id: `t${turn}`, assistant_response: 'done' });
  hooks.emit('on_session_finalize', session);

  await client.close();
  if (server !== undefined && server.exitCode === null && server.signalCode === null) {
    const exited = new Promise((resolve) => server!.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  }
  await plugin?.shutdown();
  remove();
  // A nested server whose parent was killed shuts down on its own (its stdin closes) and nobody waits for it: wait
  // for its status file, which it writes last (native's shutdown can take seconds on a loaded machine). Not on Deno,
  // where it sees no stdin close (docs/adapters/mcp.md).
  const calls = plan.groups.flat();
  if (instrument && !process.versions.deno && calls.some((call) => call.tool === 'die') && calls.some((call) => call.tool === 'relay') && !calls.some((call) => call.args.tool === 'die')) {
    await statusWritten(nested.outDir, 30_000);
  }
  return { outcomes, dir, agent: outputOf(path.join(dir, 'agent')), first: outputOf(config.outDir, calls.some((call) => call.tool === 'die')), nested: outputOf(nested.outDir, calls.some((call) => call.args.tool === 'die')), agentCounters: plugin?.status().counters, strays: readdirSync(cwd), stderr };
}

/** Resolves once `folder` holds status.json, or after `withinMs` (the check that follows then says what is missing). */
async function statusWritten(folder: string, withinMs: number): Promise<void> {
  const until = Date.now() + withinMs;
  while (!existsSync(path.join(folder, 'status.json')) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
}

/**
 * What a plugin left in its folder. A process killed while its writer was
 * writing a line may leave that line cut short, with no newline after it:
 * for a `killed` one that last piece is not an event.
 */
function outputOf(folder: string, killed = false): Output {
  const list = (sub: string) => (existsSync(path.join(folder, sub)) ? readdirSync(path.join(folder, sub)) : []);
  const atifFiles = list('atif');
  const docs = atifFiles.filter((file) => file.endsWith('.json')).map((file) => ({ file, doc: JSON.parse(readFileSync(path.join(folder, 'atif', file), 'utf8')) as Loose }));
  const events = list('atof').flatMap((file) => {
    const lines = readFileSync(path.join(folder, 'atof', file), 'utf8').split('\n');
    if (killed) lines.pop();
    return lines.filter((line) => line !== '').map((line) => JSON.parse(line) as Loose);
  });
  const status = path.join(folder, 'status.json');
  return { entries: existsSync(folder) ? readdirSync(folder).sort() : [], atifFiles, docs, events, ...(existsSync(status) ? { counters: JSON.parse(readFileSync(status, 'utf8')) as Loose } : {}) };
}

/**
 * The outcome without the progress count: the SDK's client handles a
 * notification a microtask after it arrives and a response at once, so
 * progress that arrives with the answer is dropped, in either run (the count
 * is checked on its own).
 */
function unlinked(outcome: Outcome): Omit<Outcome, 'progress'> {
  const { progress: _, ...rest } = outcome;
  return rest;
}

/** The last step's observation results of an ATIF document. */
function lastResults(doc: Loose): Loose[] {
  return doc.steps.at(-1)?.observation?.results ?? [];
}

/** Each session's tool starts in ATOF (their `data` is the call's arguments). */
function toolStarts(events: Loose[]): Map<string, Loose[]> {
  const starts = new Map<string, Loose[]>();
  for (const event of events) {
    if (event.category !== 'tool' || event.scope_category !== 'start') continue;
    const session = event.metadata?.session_id as string;
    starts.set(session, [...(starts.get(session) ?? []), event]);
  }
  return starts;
}

/** A tool result's text, as the server adapter records it: its text parts joined. */
function textOf(result: Loose): string {
  return (result.content as Loose[]).map((part) => part.text).join('\n');
}

/** The plain runs, by seed: without the plugin the backend plays no part, so one serves both. */
const plainRuns = new Map<number, Run>();

export async function checkSeed(seed: number, backend: 'memory' | 'native'): Promise<void> {
  const plan = drawPlan(seed);
  let plain = plainRuns.get(seed);
  if (plain === undefined) {
    plain = await runPlan(plan, false, backend);
    rmSync(plain.dir, { recursive: true, force: true });
    plainRuns.set(seed, plain);
  }
  const run = await runPlan(plan, true, backend);
  try {
    checkRun(plan, backend, plain, run);
  } catch (error) {
    const home = path.join(repoRoot, '.tmp', 'mcp-random');
    mkdirSync(home, { recursive: true });
    const dump = path.join(home, `seed-${seed}-${backend}.json`);
    if (error instanceof Error) error.message += ` (the run: ${dump})`;
    writeFileSync(dump, JSON.stringify({ plan, outcomes: [...run.outcomes], agent: run.agent, first: run.first, nested: run.nested, stderr: run.stderr }, null, 1));
    throw error;
  } finally {
    rmSync(run.dir, { recursive: true, force: true });
  }
}

function checkRun(plan: Plan, backend: string, plain: Run, run: Run): void {
  const calls = plan.groups.flat();
  const label = `seed ${plan.seed} (${plan.transport}, nested ${plan.nestedTransport}, ${backend})`;
  const died = calls.some((call) => call.tool === 'die');
  const nestedDied = calls.some((call) => call.args.tool === 'die');
  // The client sees what it would without the adapter, the server's reference included (the adapter removes it).
  for (const call of calls) expect(unlinked(run.outcomes.get(call.id)!), `${label}: ${call.id} ${call.tool}`).toEqual(unlinked(plain.outcomes.get(call.id)!));
  // Nothing written where it was not asked for. A server killed mid-call may
  // leave the trajectories of the calls it answered just before unwritten,
  // and the writer's temporary files of them (docs/adapters/mcp.md).
  expect(run.strays, label).toEqual([]);
  expect(plain.first.entries, label).toEqual([]);
  // status.json is written at shutdown: a killed server has none, nor one on
  // Deno, where a server sees neither its stdin close nor a signal (docs/adapters/mcp.md).
  if (!process.versions.deno) {
    expect(run.first.entries.includes('status.json'), label).toBe(!died);
    expect(run.nested.entries.includes('status.json'), label).toBe(calls.some((call) => call.tool === 'relay') && !nestedDied);
  }
  for (const output of [run.first, run.nested]) for (const entry of output.entries) expect(['atif', 'atof', 'status.json'], label).toContain(entry);
  for (const [output, killed] of [[run.first, died], [run.nested, nestedDied], [run.agent, false]] as const) {
    expect(output.atifFiles.filter((file) => !file.endsWith('.json') && !(killed && /^\..+\.json\.[\w.]+\.tmp$/.test(file))), label).toEqual([]);
  }
  // Nothing lost or failed without being counted: none of either here.
  for (const counters of [run.agentCounters, run.first.counters, run.nested.counters]) if (counters !== undefined) expect(counters, label).toMatchObject({ errors: 0, dropped: 0 });

  // The agent's trajectory: exactly the calls made, with their arguments.
  expect(run.agent.docs, label).toHaveLength(1);
  const { file: agentFile, doc: agentDoc } = run.agent.docs[0]!;
  expect(validateAtif(agentDoc), label).toEqual([]);
  const toolCalls = agentDoc.steps.flatMap((step: Loose) => step.tool_calls ?? []);
  expect(toolCalls.map((entry: Loose) => [entry.tool_call_id, entry.function_name, entry.arguments]), label).toEqual(calls.map((call) => [call.id, call.hostName, call.args]));
  const firstStarts = toolStarts(run.first.events);
  const nestedStarts = toolStarts(run.nested.events);
  const observed = new Map<string, Loose>(agentDoc.steps.flatMap((step: Loose) => step.observation?.results ?? []).map((entry: Loose) => [entry.source_call_id, entry]));

  // The first server: one trajectory per call it answered (all but the one that killed it), naming its caller.
  const firstDocs = new Map<string, { file: string; doc: Loose }>();
  for (const entry of run.first.docs) {
    expect(validateAtif(entry.doc), `${label}: ${entry.file}`).toEqual([]);
    const id = entry.doc.extra?.caller?.tool_call_id as string;
    expect(firstDocs.has(id), `${label}: two server trajectories for ${id}`).toBe(false);
    firstDocs.set(id, entry);
  }
  const answered = calls.filter((call) => call.tool !== 'die').map((call) => call.id);
  // Every call the first server ran has its trajectory: all but the one that killed it, and a cancelled one it never heard the cancellation of (below).
  for (const id of firstDocs.keys()) expect(answered, label).toContain(id);
  if (!died) for (const id of answered) if (!firstDocs.has(id)) expect(calls.find((call) => call.id === id)?.cancel, `${label}: ${id} has no server trajectory`).toBe(true);
  const nestedDocs = new Map(run.nested.docs.map((entry) => [entry.doc.extra?.caller?.tool_call_id as string, entry]));
  const relayed = calls.filter((call) => call.tool === 'relay' && call.args.tool !== 'die').map((call) => call.id);
  if (nestedDied) for (const id of nestedDocs.keys()) expect(relayed, label).toContain(id);
  else expect([...nestedDocs.keys()].sort(), label).toEqual(relayed.sort());

  let abandoned = 0;
  for (const call of calls) {
    const what = `${label}: ${call.id} ${call.tool}${call.args.tool !== undefined ? ` -> ${String(call.args.tool)}` : ''}`;
    const outcome = run.outcomes.get(call.id)!;
    const server = firstDocs.get(call.id);
    if (call.tool === 'die') {
      // A killed server answers nothing: the client's call fails, and the agent's observation references no trajectory.
      expect('error' in outcome, what).toBe(true);
      expect(observed.get(call.id)?.subagent_trajectory_ref, what).toBeUndefined();
      continue;
    }
    // What the client got (the plain run's result: the adapter removed the server's reference), and what the agent's trajectory says of it.
    const refs = observed.get(call.id)?.subagent_trajectory_ref as Loose[] | undefined;
    const named = refs?.[0];
    if ('result' in outcome) {
      // Neither the server's reference nor the caller it named back: the adapter removed both.
      expect(outcome.result._meta?.[TRAJECTORY_META_KEY], what).toBeUndefined();
      expect(outcome.result._meta?.[CALLER_META_KEY], what).toBeUndefined();
      expect(refs, what).toHaveLength(1);
      expect(observed.get(call.id)?.content, what).toBe(JSON.stringify(outcome.result.content));
      // Every notification the tool sent: the server pings the client after its progress and answers only after the
      // ping's reply, which the client sends after handling the progress (see cross-process-server.ts, #2580).
      expect(outcome.progress, what).toBe(call.progress ?? 0);
    } else {
      // Cancelled by the client: no answer, nothing to reference. The client cancels on the tool's progress, so that
      // progress came through the adapter on both sides.
      expect(call.cancel, what).toBe(true);
      expect(outcome.progress, what).toBeGreaterThanOrEqual(1);
      expect(outcome.error.code, what).toBe(-32001);
      expect(observed.get(call.id)?.subagent_trajectory_ref, what).toBeUndefined();
    }
    if (server === undefined && died) continue;
    if (server === undefined && 'error' in outcome) {
      // The client closed before its cancellation reached the server (HTTP
      // sends it on its own request): the server's shutdown ended the call,
      // counted as abandoned, and the session had no step to write.
      const ends = run.first.events.filter((event) => event.category === 'tool' && event.scope_category === 'end' && event.category_profile?.tool_call_id === call.id);
      expect(ends.map((event) => event.metadata['error.type']), what).toEqual(['session_closed']);
      abandoned += 1;
      continue;
    }
    // The first server's trajectory: its caller, the call's tool, its result and status.
    expect(server, what).toBeDefined();
    const { file, doc } = server!;
    expect(doc.extra.caller, what).toEqual({ session_id: agentDoc.session_id, tool_call_id: call.id, trajectory_id: agentDoc.trajectory_id, trajectory_path: agentFile });
    const [result, ...more] = lastResults(doc);
    expect(more, what).toEqual([]);
    expect(result.extra.event_name, what).toBe(call.tool);
    expect(result.extra.metadata.tool_call_id, what).toBe(call.id);
    // Its ATOF: the one tool call, with the arguments the client sent.
    expect(firstStarts.get(doc.session_id)?.map((event) => [event.name, event.category_profile?.tool_call_id, event.data]), what).toEqual([[call.tool, call.id, call.args]]);
    if ('result' in outcome) {
      expect(named, what).toEqual({ session_id: doc.session_id, trajectory_id: doc.trajectory_id, trajectory_path: file });
      expect(result.content, what).toBe(textOf(outcome.result));
      expect(result.extra.metadata.status, what).toBe(outcome.result.isError === true ? 'error' : 'ok');
    } else {
      expect(result.extra.metadata, what).toMatchObject({ status: 'error', 'error.type': 'cancelled' });
      expect(result.content, what).toMatch(/^the client cancelled the call: /);
    }
    if (call.tool !== 'relay') continue;
    // The nested call: the second server's trajectory names the first's session and tool call, which references it.
    const inner = nestedDocs.get(call.id);
    if (call.args.tool === 'die') {
      expect(inner, what).toBeUndefined();
      expect(result.subagent_trajectory_ref, what).toBeUndefined();
      continue;
    }
    if (inner === undefined && nestedDied) continue;
    expect(inner, what).toBeDefined();
    expect(validateAtif(inner!.doc), what).toEqual([]);
    expect(inner!.doc.extra.caller, what).toEqual({ session_id: doc.session_id, tool_call_id: call.id, trajectory_id: doc.trajectory_id, trajectory_path: file });
    const [innerResult] = lastResults(inner!.doc);
    expect(innerResult.extra.event_name, what).toBe(call.args.tool);
    expect(nestedStarts.get(inner!.doc.session_id)?.map((event) => [event.name, event.category_profile?.tool_call_id, event.data]), what).toEqual([[call.args.tool, call.id, { text: call.args.text, delay_ms: call.args.delay_ms }]]);
    expect(innerResult.content, what).toBe(result.content);
    expect(result.subagent_trajectory_ref, what).toEqual([{ session_id: inner!.doc.session_id, trajectory_id: inner!.doc.trajectory_id, trajectory_path: inner!.file }]);
  }
  if (run.first.counters !== undefined) expect(run.first.counters.abandonedSpans, label).toBe(abandoned);
}
