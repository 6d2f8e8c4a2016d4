/**
 * The random-stream differential with managed execution: the stream of a
 * seed drawn with `managed` (random-stream.ts), where the host runs some of
 * its LLM and tool calls through `hooks.execute('llm_execution' |
 * 'tool_execution', ...)` between their start and end hooks, as Hermes does.
 * The host's real call returns or throws at once, a microtask later, or
 * late (while other sessions and subagents go on: its `SettleLine`), and a
 * call the host never finished is settled at the stream's end. The host also
 * has middleware of its own: a request middleware it applies to each
 * managed call's request, an outer execution middleware that rewrites some
 * payloads, and an inner asynchronous one.
 *
 * Run through the plugin on the memory relay and on native with a
 * plugins.toml observability component and, per setting, no `adaptive`
 * component (the calls are recorded from their hooks), `adaptive` without
 * a cache (managed execution records them), and `adaptive` with a response
 * and tool cache. Compared: what each `execute` handed back to the host (its
 * own value or error object, or which value), what the host's real call
 * received and how often it ran, the ATOF events and lines, and the ATIF
 * files (as random-diff.ts compares a plugins.toml run).
 *
 * The same seed gives the same stream, so a failure names its seed and
 * `compareManagedSeed(seed)` replays it.
 */

import { HookRegistry } from '../../src/hooks/registry.ts';
import type { HookName } from '../../src/hooks/names.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { createNemoRelayPlugin } from '../../src/index.ts';
import type { RelayBackend } from '../../src/relay/contract.ts';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import { loadNativeRelay } from '../../native/index.ts';
import { recordingLogger, tempDir } from '../contract/backends.ts';
import { attemptsAsMemory, normalize } from './normalize.ts';
import { runOutputs, writePluginsToml, type ReplayResult } from './replay.ts';
import { randomStream, type ExecuteLine, type RandomStream, type StreamLine } from './random-stream.ts';
import { resultsInOrderOf } from '../support/random-cache.ts';
import { compareRuns, failedLlmAsNative, firstDifference, hasFailedCall, observedAsNative, relabelFiles } from './random-diff.ts';

/** The `[[components]]` tables of each setting, after the observability component. */
export const MANAGED_SETTINGS: Record<string, string> = {
  'no adaptive': '',
  adaptive: ['[[components]]', 'kind = "adaptive"', 'enabled = true', '', '[components.config.tool_parallelism]', 'mode = "observe_only"', ''].join('\n'),
  'adaptive with a cache': [
    '[[components]]',
    'kind = "adaptive"',
    'enabled = true',
    '',
    '[components.config.response_cache]',
    'namespace = "random-managed"',
    // The streams' requests carry no temperature: looked up anyway, so lookups, stores and misses happen.
    'cache_nondeterministic = true',
    '',
    '[components.config.response_cache.tools]',
    'enabled = true',
    'cache_errors = true',
    '',
    '[components.config.response_cache.tools.classes.reads]',
    'cacheable = true',
    'members = ["read_*", "*search*", "terminal", "ツール", "tool with spaces"]',
    '',
  ].join('\n'),
};

/** What one `execute` handed back to the host. */
export type HostResult =
  | { value: unknown; own: boolean }
  | { error: { name: string; message: string }; own: boolean }
  | { pending: true };

export interface ManagedReplay extends ReplayResult {
  /** By execute id, in the order the calls started. */
  results: Map<string, HostResult>;
  /** What the host's real calls received, in the order they ran. */
  calls: { id: string; input: unknown }[];
}

interface Running {
  line: ExecuteLine;
  /** Opens the gate of a `late` call. */
  release(): void;
  /** Settles when `execute` did. */
  done: Promise<void>;
}

/** Whether the host's own middleware rewrites a call's payload (those whose id ends in an even digit). */
function rewrites(id: string): boolean {
  return /[02468]$/.test(id);
}

/**
 * Replays `lines` through a registry with the plugin and the host's own
 * middleware on `backend`, plugins.toml holding observability and
 * `components`.
 */
export async function replayManaged(backend: RelayBackend, lines: readonly StreamLine[], components: string): Promise<ManagedReplay> {
  const dir = tempDir(`managed-${backend.kind}`);
  const logger = recordingLogger();
  const plugin = createNemoRelayPlugin({ backend, env: { HERMES_NEMO_RELAY_PLUGINS_TOML: writePluginsToml(dir, components) }, logger });
  const hooks = new HookRegistry({ logger: silentLogger });
  // The host's own middleware: outside the plugin's (registered first), a rewrite of some payloads...
  // (an LLM call's request is left as its hooks report it: native's ATIF files hold a failed attempt's request on a
  // user step of its own, memory's on the retry's step, and random-diff.ts compares them as equal only so).
  hooks.use('llm_execution', (payload, next) => (rewrites(String(payload.api_request_id)) ? next({ ...payload, host_attempt: true }) : next()), { name: 'host-outer' });
  hooks.use('tool_execution', (payload, next) => (rewrites(String(payload.tool_call_id)) ? next({ ...payload, args: { ...payload.args, host_rewrite: true } }) : next()), { name: 'host-outer' });
  hooks.use('llm_request', ({ request }) => (request.max_tokens === 0 ? { request: { ...request, max_tokens: 1 }, reason: 'a zero token cap' } : undefined), { name: 'host-request' });
  const unregister = plugin.register(hooks);
  // ... and inside it (registered after), an asynchronous pass-through.
  hooks.use('llm_execution', async (_payload, next) => next(), { name: 'host-inner' });
  hooks.use('tool_execution', async (_payload, next) => next(), { name: 'host-inner' });
  await plugin.ready;

  const results = new Map<string, HostResult>();
  const calls: ManagedReplay['calls'] = [];
  const running = new Map<string, Running>();
  for (const line of lines) {
    if (line.hook === '@execute') {
      running.set(line.payload.id, await start(hooks, line, results, calls));
    } else if (line.hook === '@settle') {
      const call = running.get(line.payload.id)!;
      running.delete(line.payload.id);
      call.release();
      await call.done;
    } else {
      // A fresh copy per run: the registry stamps payloads in place, and each backend must see the stream as recorded.
      const payload = structuredClone(line.payload);
      // The request an API call's hooks report is the one the host's request middleware made, as its managed call's.
      const request = payload.request as { body?: unknown } | undefined;
      if (line.hook === 'pre_api_request' && typeof request?.body === 'object' && request.body !== null) request.body = hooks.applyRequest('llm_request', request.body, payload);
      hooks.emit(line.hook as HookName, payload as never);
    }
  }
  // Calls the host never finished: they fail now, in the order they started.
  for (const call of running.values()) {
    call.release();
    await call.done;
  }
  await plugin.shutdown({ timeoutMs: 60_000 });
  unregister();

  return {
    ...runOutputs(dir, plugin.status(), logger.lines),
    results,
    calls,
  };
}

/** Starts one managed call; resolves once the host's call has run (or `execute` settled without it: a cache hit, a refusal). */
async function start(hooks: HookRegistry, line: ExecuteLine, results: Map<string, HostResult>, calls: ManagedReplay['calls']): Promise<Running> {
  const { id, kind, timing, outcome } = line.payload;
  const payload = structuredClone(line.payload.payload);
  if (kind === 'llm_execution') payload.request = hooks.applyRequest('llm_request', payload.request as object, payload);
  const own = 'throws' in outcome ? Object.assign(new Error(outcome.throws.message), { name: outcome.throws.name }, outcome.throws.status === undefined ? {} : { status: outcome.throws.status }) : null;
  const value = 'returns' in outcome ? structuredClone(outcome.returns) : undefined;
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let ran!: () => void;
  const called = new Promise<void>((resolve) => (ran = resolve));
  const settle = () => {
    if (own !== null) throw own;
    return value;
  };
  const terminal = (input: unknown) => {
    calls.push({ id, input: structuredClone(input) });
    ran();
    if (timing === 'sync') return settle();
    return (timing === 'async' ? Promise.resolve() : gate).then(settle);
  };
  results.set(id, { pending: true });
  let pending: Promise<unknown>;
  try {
    pending = Promise.resolve(hooks.execute(kind, payload as never, terminal as never));
  } catch (error) {
    pending = Promise.reject(error);
  }
  const done = pending.then(
    (v) => void results.set(id, { value: v, own: v === value && typeof v === 'object' && v !== null }),
    (e: unknown) => void results.set(id, { error: { name: (e as Error)?.name, message: (e as Error)?.message }, own: e === own }),
  );
  if (timing === 'late') await Promise.race([called, done]);
  else {
    release();
    await done;
  }
  return { line, release, done };
}

/** The host's results and calls, comparable: uuids labelled (a traceparent a request carries). */
function hostView(run: ManagedReplay): unknown {
  return normalize({ results: Object.fromEntries(run.results), calls: run.calls });
}

/**
 * Runs the managed stream of `seed` under every setting on both backends;
 * every difference found, each naming the seed and the setting.
 */
export async function compareManagedSeed(seed: number, options: { large?: boolean; settings?: readonly string[] } = {}): Promise<string[]> {
  const stream: RandomStream = randomStream(seed, { large: options.large, managed: true });
  const found: string[] = [];
  const drop = stream.concurrentSubagents ? ['propagation_root_uuid'] : [];
  const normalizing = drop.length > 0 ? { drop } : {};
  for (const setting of options.settings ?? Object.keys(MANAGED_SETTINGS)) {
    const components = MANAGED_SETTINGS[setting]!;
    const memoryRun = await replayManaged(createMemoryRelay({ logger: silentLogger }), stream.managedLines, components);
    const nativeRun = await replayManaged(loadNativeRelay({ logger: silentLogger }), stream.managedLines, components);
    const report = (difference: string) => found.push(`seed ${seed}${options.large ? ' (large)' : ''}, ${setting}: ${difference}`);
    const host = firstDifference(hostView(memoryRun), hostView(nativeRun));
    if (host !== null) report(`host: ${host}`);
    // As random-diff.ts compares a plugins.toml run (documented differences of native's `atif` component).
    const failed = [...nativeRun.trajectories.values()].some(hasFailedCall);
    const native = relabelFiles(failed ? { ...nativeRun, trajectories: new Map([...nativeRun.trajectories].map(([name, doc]) => [name, attemptsAsMemory(structuredClone(doc))] as const)) } : nativeRun);
    const memory = relabelFiles(observedAsNative(failedLlmAsNative(memoryRun)));
    // Native lists the tool results of a step without tool calls of its own in a random order
    // (docs/backends/memory-and-native.md, "Tool results one ATIF step holds ..."): in memory's order, compared by content.
    let reordered = false;
    for (const [name, doc] of native.trajectories) {
      const mine = memory.trajectories.get(name);
      const inOrder = mine === undefined ? null : resultsInOrderOf(mine as never, doc as never);
      if (inOrder === null) continue;
      native.trajectories.set(name, inOrder as never);
      reordered = true;
    }
    for (const difference of compareRuns(memory, native, normalizing, !failed && !reordered)) report(difference);
  }
  if (found.length > 0) found.push(`managed stream of seed ${seed}: ${stream.managedLines.length} lines\n  ${stream.outline.join('\n  ')}`);
  return found;
}
