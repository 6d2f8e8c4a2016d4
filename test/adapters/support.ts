// One plugin on the memory backend writing ATOF and ATIF into a temp folder,
// and readers for what it wrote: the adapter tests check the files a user gets.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { HookRegistry } from '../../src/hooks/registry.ts';
import { createNemoRelayPlugin } from '../../src/index.ts';
import type { NemoRelaySettingsOverrides } from '../../src/plugin/config/settings.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { cliInProcess } from '../cli/support.ts';
import { processBackend } from '../support/slow-suite.ts';

/**
 * The backends of the tests whose agent and MCP servers run as processes of their own (a few seconds of CPU each,
 * most of it the children's start): `npm test` runs them on memory, and `npm run test:slow` runs the same files
 * again on native alone (test/support/slow-suite.ts), so CI checks both backends. `each`: the backends the file
 * checks (`backends()` unless it names its own).
 */
export function processBackends<B extends 'memory' | 'native'>(each: readonly B[] = backends() as B[]): B[] {
  return each.filter((backend) => backend === processBackend);
}

export interface Recorded {
  hooks: HookRegistry;
  /** The folder the plugin writes into (`atof/`, `atif/`). */
  dir: string;
  /** Every hook as emitted, in order. */
  log: Array<{ hook: string; payload: Record<string, unknown> }>;
  finish(): Promise<{ atif: AtifDoc[]; atof: AtofEvent[]; counters: Record<string, number> }>;
}

export type AtifDoc = Record<string, any>;

/** The first node of a `view` tree (or of its JSON report) that `predicate` picks, depth first. */
export function findNode<T extends { children?: readonly T[] }>(tree: T, predicate: (node: T) => boolean): T | undefined {
  if (predicate(tree)) return tree;
  for (const child of tree.children ?? []) {
    const found = findNode(child, predicate);
    if (found !== undefined) return found;
  }
  return undefined;
}
export type AtofEvent = Record<string, any>;

/**
 * The backends a run is checked on: memory everywhere, and native where it
 * loads (Node with nemo-relay-node installed). A missing native backend is
 * said once, not skipped silently.
 */
export function backends(): Array<'memory' | 'native'> {
  const isNode = typeof (globalThis as { Bun?: unknown }).Bun === 'undefined' && typeof (globalThis as { Deno?: unknown }).Deno === 'undefined';
  if (!isNode) return ['memory'];
  try {
    createRequire(import.meta.url).resolve('nemo-relay-node');
    return ['memory', 'native'];
  } catch {
    console.log('adapter tests: nemo-relay-node is not installed; the native backend is not checked');
    return ['memory'];
  }
}

/**
 * `first`: subscribes to the registry before the plugin does (a recorder that stamps each hook when it was
 * emitted, not after the plugin handled it); it is given the folder the plugin writes into.
 */
export function recordedPlugin(label: string, backend: 'memory' | 'native' = 'memory', more: NemoRelaySettingsOverrides = {}, first?: (hooks: HookRegistry, dir: string) => void): Recorded {
  const dir = mkdtempSync(path.join(tmpdir(), `nrh-adapter-${label}-`));
  const hooks = new HookRegistry({ logger: silentLogger });
  first?.(hooks, dir);
  const plugin = createNemoRelayPlugin({
    backend,
    logger: silentLogger,
    env: {},
    settings: {
      atofEnabled: true,
      atofOutputDirectory: path.join(dir, 'atof'),
      atifEnabled: true,
      atifOutputDirectory: path.join(dir, 'atif'),
      ...more,
    },
  });
  plugin.register(hooks);
  const log: Recorded['log'] = [];
  for (const name of ['on_session_start', 'on_session_end', 'on_session_finalize', 'pre_llm_call', 'post_llm_call', 'pre_api_request', 'post_api_request', 'api_request_error', 'pre_tool_call', 'post_tool_call', 'pre_approval_request', 'post_approval_response', 'subagent_start', 'subagent_stop'] as const) {
    hooks.on(name, (payload) => void log.push({ hook: name, payload: structuredClone(payload) as Record<string, unknown> }));
  }
  return {
    hooks,
    dir,
    log,
    async finish() {
      // The default 5 s bound is a host's, in wall-clock time: on a loaded machine the native backend's start-up
      // alone outlasted it (hooks of the run still queued at 5 s, then counted as dropped and as an error), which
      // is the bound working, not a loss these tests look for. Budgets are test/plugin/startup.test.ts's.
      await plugin.shutdown({ timeoutMs: 60_000 });
      // Every adapter run: nothing names a session after it closed (the plugin would open a second, empty one).
      expectNothingAfterFinalize(log);
      const status = plugin.status();
      // A plugin that received no hook never chose its backend.
      if (status.backend.kind !== 'unresolved') expect(status.backend.kind, status.backend.reason).toBe(backend);
      const counters = status.counters as unknown as Record<string, number>;
      const atifDir = path.join(dir, 'atif');
      const atof: AtofEvent[] = [];
      for (const file of safeList(path.join(dir, 'atof'))) {
        for (const line of readFileSync(path.join(dir, 'atof', file), 'utf8').split('\n')) if (line.trim() !== '') atof.push(JSON.parse(line));
      }
      const atif = safeList(atifDir).map((file) => JSON.parse(readFileSync(path.join(atifDir, file), 'utf8')) as AtifDoc);
      return { atif, atof, counters };
    },
  };
}

/** The text of every file the plugin wrote (ATOF, ATIF, anything else in its folder), for checks of what must be written nowhere. */
export function writtenFiles(recorded: Recorded): string {
  const files = (readdirSync(recorded.dir, { recursive: true, encoding: 'utf8' }) as string[]).sort();
  return files.map((file) => {
    try {
      return readFileSync(path.join(recorded.dir, file), 'utf8');
    } catch {
      return ''; // a folder
    }
  }).join('\n');
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

/**
 * No hook names a session after its `on_session_finalize` (unless a later `on_session_start` opened it again): the
 * plugin would open such a session anew, a second one with only that hook in it.
 */
export function expectNothingAfterFinalize(log: Recorded['log']): void {
  const closed = new Set<string>();
  const late: string[] = [];
  for (const { hook, payload } of log) {
    const session = (payload.session_id ?? payload.parent_session_id) as string | undefined;
    if (session === undefined) continue;
    if (hook === 'on_session_start') closed.delete(session);
    else if (closed.has(session)) late.push(`${hook} for ${session}`);
    if (hook === 'on_session_finalize') closed.add(session);
  }
  expect(late).toEqual([]);
}

/** The plugin recorded every hook: none failed, none ended a span it had not started, none left one open. */
export function expectNothingLost(counters: Record<string, number>): void {
  expect(counters.errors).toBe(0);
  expect(counters.unmatchedEnds).toBe(0);
  expect(counters.abandonedSpans).toBe(0);
}

/** The one trajectory of the run, valid. */
export function onlyTrajectory(atif: AtifDoc[]): AtifDoc {
  expect(atif).toHaveLength(1);
  const doc = atif[0]!;
  expect(validateAtif(doc)).toEqual([]);
  return doc;
}

/** How a turn that did not complete ended, as the program saw it: the error it caught, or an interruption. */
export type TurnEnding = { status: 'failed'; error: { name: string; message: string } } | { status: 'interrupted' };

/**
 * A trajectory's turn that did not complete, as the plugin's own file says it (docs/operators/outputs.md): the
 * trajectory's last step carries `extra.turn_ends` with the error the program caught (no step added, the counts
 * native's converter writes), `notes` says it in a sentence for readers that skip `extra`, the file is valid, and
 * `view` of the ATIF shows the turn's row as `view` of ATOF does.
 */
export async function expectTurnEndInAtif(recorded: Recorded, doc: AtifDoc, ending: TurnEnding): Promise<void> {
  expect(validateAtif(doc)).toEqual([]);
  const steps = doc.steps as AtifDoc[];
  expect(doc.final_metrics.total_steps).toBe(steps.length);
  const last = steps.at(-1)!;
  const error = ending.status === 'failed' ? { error_type: ending.error.name, error_message: ending.error.message } : {};
  expect(steps.filter((step) => step.extra?.turn_ends !== undefined)).toEqual([last]);
  expect(last.extra.turn_ends).toEqual([{ status: ending.status, ...error, timestamp: expect.any(String) }]);
  expect(Date.parse(last.extra.turn_ends[0].timestamp)).toBeGreaterThanOrEqual(Date.parse(last.timestamp));
  const said = ending.status === 'failed' ? `failed: ${ending.error.name}: ${ending.error.message}` : 'was interrupted.';
  expect(doc.notes).toBe(`The turn that ends at step ${last.step_id} ${said}`);
  const turns = (await viewLines(recorded, 'atif')).filter((line) => /─ turn \d/.test(line));
  expect(turns.at(-1)).toContain(ending.status === 'failed' ? `failed: ${ending.error.name}` : 'interrupted');
}

/** A finished run that lost nothing and wrote one valid trajectory: it, its agent steps, and the ATOF events. */
export async function finishedRun(recorded: Recorded): Promise<{ doc: AtifDoc; agent: AtifDoc[]; atof: AtofEvent[] }> {
  const { atif, atof, counters } = await recorded.finish();
  expectNothingLost(counters);
  const doc = onlyTrajectory(atif);
  return { doc, agent: (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent'), atof };
}

/** The checks every framework's run must pass, with the scenario's ids and the mock's usage. */
export interface Expectation {
  userPrompt: string;
  model: string;
  /** The parent's tool calls, in order: [id, failed]. */
  parentTools: Array<[string, boolean]>;
  /** The tool call that ran the sub-agent. */
  subagentCall: string;
  subagentTools: string[];
  /** The mock's usage per successful parent model call: [prompt, completion]. */
  parentUsage: Array<[number, number]>;
  childUsage: Array<[number, number]>;
  /** What the failed tool's observation says (default: the thrown message). */
  failureText?: RegExp;
}

export function checkTrajectory(doc: AtifDoc, expected: Expectation): void {
  expect(validateAtif(doc)).toEqual([]);
  const steps = doc.steps as AtifDoc[];
  const userSteps = steps.filter((step) => step.source === 'user');
  expect(userSteps.some((step) => JSON.stringify(step.message).includes(expected.userPrompt))).toBe(true);
  const agentSteps = steps.filter((step) => step.source === 'agent' && step.model_name !== undefined);
  expect(agentSteps.every((step) => step.model_name === expected.model)).toBe(true);
  const calls = agentSteps.flatMap((step) => (step.tool_calls ?? []).map((call: AtifDoc) => call.tool_call_id));
  for (const [id] of expected.parentTools) expect(calls).toContain(id);
  expect(calls).toContain(expected.subagentCall);
  const results = steps.flatMap((step) => step.observation?.results ?? []) as AtifDoc[];
  for (const [id, failed] of expected.parentTools) {
    const result = results.find((r) => r.source_call_id === id);
    expect(result, `observation for ${id}`).toBeDefined();
    expect(result!.extra?.metadata?.status).toBe(failed ? 'error' : 'ok');
    if (failed) expect(JSON.stringify(result!.content)).toMatch(expected.failureText ?? /exploded/);
  }
  const metrics = agentSteps.filter((step) => step.metrics?.prompt_tokens !== undefined).map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens]);
  expect(metrics).toEqual(expected.parentUsage);
  const subResult = results.find((r) => r.source_call_id === expected.subagentCall && r.subagent_trajectory_ref !== undefined);
  expect(subResult, 'the sub-agent is linked to its tool call').toBeDefined();
  const children = doc.subagent_trajectories as AtifDoc[] | undefined;
  expect(children).toHaveLength(1);
  const child = children![0]!;
  expect(subResult!.subagent_trajectory_ref[0].trajectory_id).toBe(child.trajectory_id);
  const childSteps = child.steps as AtifDoc[];
  const childCalls = childSteps.flatMap((step) => (step.tool_calls ?? []).map((call: AtifDoc) => call.tool_call_id));
  for (const id of expected.subagentTools) expect(childCalls).toContain(id);
  const childMetrics = childSteps.filter((step) => step.metrics?.prompt_tokens !== undefined).map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens]);
  expect(childMetrics).toEqual(expected.childUsage);
}

/**
 * The log's API-request hooks, checked to open with one call tried twice under one api_request_id: the failed
 * attempt, then the one that answered (`whole`: and nothing after them). Returns those hooks, for the test's own
 * checks of the failure.
 */
export function expectRetriedFirstCall(log: Recorded['log'], whole = false): Recorded['log'] {
  const attempts = log.filter((entry) => entry.hook === 'pre_api_request' || entry.hook === 'api_request_error' || entry.hook === 'post_api_request');
  const id = attempts[0]?.payload.api_request_id;
  expect(id, 'an API request was recorded').toBeDefined();
  expect((whole ? attempts : attempts.slice(0, 4)).map((entry) => [entry.hook, entry.payload.api_request_id, entry.payload.retry_count])).toEqual([
    ['pre_api_request', id, 0],
    ['api_request_error', id, 0],
    ['pre_api_request', id, 1],
    ['post_api_request', id, undefined],
  ]);
  return attempts;
}

/** Each API call's attempts' models as their LLM spans name them (`category_profile.model_name` of each start), call by call. */
export function llmModels(atof: AtofEvent[], apiRequestIds: readonly unknown[]): unknown[][] {
  const starts = atof.filter((event) => event.kind === 'scope' && event.category === 'llm' && event.scope_category === 'start');
  return apiRequestIds.map((id) => starts.filter((event) => event.metadata?.api_request_id === id).map((event) => event.category_profile?.model_name ?? null));
}

/** Both attempts of the retried call: one api_request_id, an error then a success. */
export function checkRetry(atof: AtofEvent[]): void {
  const llmEnds = atof.filter((event) => event.kind === 'scope' && event.category === 'llm' && event.scope_category === 'end');
  const byId = new Map<string, AtofEvent[]>();
  for (const event of llmEnds) {
    const id = event.metadata?.api_request_id;
    if (typeof id !== 'string') continue;
    byId.set(id, [...(byId.get(id) ?? []), event]);
  }
  const retried = [...byId.values()].filter((events) => events.length === 2);
  expect(retried, 'one API call with two attempts').toHaveLength(1);
  const [first, second] = retried[0]!;
  expect(first!.metadata['error.type']).toBeDefined();
  expect(second!.metadata['error.type']).toBeUndefined();
}

/**
 * What `nemo-relay-hooks view` prints of the files a recorded run wrote (its ATIF files, or its ATOF file), one
 * line each: what a user reads to find out what the agent did.
 */
export async function viewLines(recorded: Recorded, of: 'atif' | 'atof'): Promise<string[]> {
  const dir = path.join(recorded.dir, of);
  const result = await cliInProcess(['view', ...safeList(dir).map((file) => path.join(dir, file))]);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout.split('\n');
}

/** `view`'s LLM and tool rows, from their kind on, without their durations (`37.0ms`, `<1ms`, `785µs`), which vary. */
export async function viewRows(recorded: Recorded, of: 'atif' | 'atof'): Promise<string[]> {
  return (await viewLines(recorded, of)).filter((line) => /─ (LLM|tool) /.test(line)).map(rowWithoutDuration);
}

/** A `view` row from its kind on (`LLM …`, `✗ LLM …`), without its duration in whatever unit it is shown. */
export function rowWithoutDuration(line: string): string {
  return line
    .replace(/^.*─ /, '')
    .split('  ')
    .filter((part) => !/^<?\d+(\.\d+)?(µs|ms|s)$/.test(part))
    .join('  ');
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const TIME_KEYS = new Set(['timestamp', 'time', 'started_at', 'ended_at', 'start_time', 'end_time', 'duration_ms', 'latency_ms', 'created_at', 'elapsed_ms']);
/**
 * What two recordings of one program share: run ids (LangChain's, new each run) become their order of first
 * appearance, times and durations are left out; everything else (texts, tokens, models, tool call ids) stays.
 * (langchain-global.test.ts: the explicit handler against `instrumentLangChain`; the random wire's seeds likewise.)
 */
export function comparable(value: unknown): unknown {
  const ids = new Map<string, string>();
  const text = JSON.stringify(value, (key, inner) => (TIME_KEYS.has(key) || /_(ms|ns|at)$|duration|timestamp/.test(key) ? undefined : inner));
  return JSON.parse(text.replace(UUID, (id) => ids.get(id) ?? (ids.set(id, `<id${ids.size}>`), `<id${ids.size - 1}>`)));
}
