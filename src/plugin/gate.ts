/**
 * `HookGate`: where every hook enters the plugin, and the one owner of the
 * plugin's state, the start-up queue and the plugins.toml activation.
 *
 * The state is one value. A backend that needs no loading (`memory`, `off`,
 * a backend object, `auto` on Bun and Deno) makes the gate ready at the
 * first hook, synchronously; native loads asynchronously, and plugins.toml
 * activates asynchronously once per process. Hooks that arrive meanwhile are
 * queued as plain copies (the host may mutate its payloads afterwards) with
 * the microsecond time they were emitted at, and replayed in order. The
 * queue is bounded (what overflows is counted) and drained in linear time.
 * If the process exits with hooks still queued, they are recorded
 * synchronously: into the live backend, or into an in-memory relay created
 * for the purpose when native never loaded.
 *
 * @module
 */

import type { Logger } from '../shared/logger.ts';
import { safeLog } from '../shared/logger.ts';
import { nowMicros } from '../shared/clock.ts';
import { atExit } from '../shared/exit-hook.ts';
import { copyToQueue } from '../shared/snapshot.ts';
import type { BackendChoice, ResolvedBackend } from '../backends/select.ts';
import { prepareMemoryPluginHost, resolveBackend, resolveBackendNow } from '../backends/select.ts';
import type { RedactHook } from './egress.ts';
import type { PluginsTomlOutcome } from './activation.ts';
import { activatePluginsToml, activatePluginsTomlNow, documentChecksNow, fallbackOutcome, hasPluginsToml, loadDocumentChecks, withoutActivation } from './activation.ts';
import { localOutputsOnly, truncatesAtofFile } from '../formats/plugins-toml/document.ts';
import type { Environment, LoadedSettings, NemoRelaySettings } from './config/settings.ts';
import { LiveRecording } from './recording.ts';
import type { ManagedExecution, ManagedGate } from './managed.ts';
import type { LoosePayload } from './payload.ts';
import type { PluginCounters, PluginState } from './status.ts';
import type { BackgroundWork } from './background-work.ts';
import { errorMessage } from '../shared/error-text.ts';
import { timerDelay } from '../shared/timers.ts';
import { nextTurn } from '../shared/slices.ts';

/** Records one hook on the live collaborators; `timestampUs` is set for a replayed hook. */
export type RecordHook = (live: LiveRecording, payload: LoosePayload, timestampUs: number | undefined) => void;

type GateState =
  | { phase: 'idle' }
  | { phase: 'starting' }
  | { phase: 'activating'; live: LiveRecording }
  | { phase: 'ready'; live: LiveRecording }
  | { phase: 'failed' }
  | { phase: 'shutting_down'; live: LiveRecording | null }
  | { phase: 'shutdown'; live: LiveRecording | null };

interface QueuedHook {
  record: RecordHook;
  payload: LoosePayload;
  timestampUs: number;
}

export interface GateOptions {
  choice: BackendChoice;
  env: Environment;
  logger: Logger;
  counters: PluginCounters;
  work: BackgroundWork;
  settings(): LoadedSettings;
  maxQueuedHooks: number;
  sessionIdleTtlMs: number;
  maxSessions: number;
  trajectoryWriteDelayMs: number;
  /** The host's redaction hook, if any. */
  redact?: RedactHook;
  /** The host's clock, if it gave one: each hook is stamped with it as it arrives. */
  clock?: () => number;
}

/** How long one slice of a start-up queue's replay may run before the host gets a turn. */
const DRAIN_SLICE_MS = 10;


export class HookGate implements ManagedGate {
  private state: GateState = { phase: 'idle' };
  /** Queued hooks from `head` on; the array is reset once drained, so a drain is linear. */
  private queue: QueuedHook[] = [];
  private head = 0;
  private overflowReported = false;
  /** When replaying the start-up queue must stop (epoch ms): set by a shutdown's budget. */
  private replayUntil = Number.POSITIVE_INFINITY;
  private removeExitTask: (() => void) | null = null;
  private waiters: ((live: LiveRecording | null) => void)[] = [];
  /** Ends the background work's wait for a backend load that a stand-in replaced (see `standInForSlowStart`). */
  private abandonStartup: (() => void) | null = null;
  /**
   * The plugins.toml activation under way, for the live recording it is for (the backend's, or a stand-in's):
   * until it is applied, that recording has no outputs. `abandon` ends the background work's wait for it.
   */
  private configuring: { live: LiveRecording; abandon: () => void } | null = null;
  private readyResolve!: () => void;
  /** Settles when the gate is ready (backend live, plugins.toml activated) or has failed open. */
  readonly ready: Promise<void>;

  constructor(private readonly options: GateOptions) {
    this.ready = new Promise<void>((resolve) => {
      this.readyResolve = resolve;
    });
  }

  get publicState(): PluginState {
    return this.state.phase === 'activating' ? 'ready' : this.state.phase;
  }

  get queued(): number {
    return this.queue.length - this.head;
  }

  /** The live collaborators, once a backend is chosen (even while plugins.toml activates). */
  get live(): LiveRecording | null {
    return 'live' in this.state ? this.state.live : null;
  }

  /** Records `payload` now, or queues it until the backend and plugins.toml are live. */
  dispatch(record: RecordHook, payload: LoosePayload): void {
    this.options.counters.hooks += 1;
    const state = this.state;
    if (state.phase === 'ready' && this.head === this.queue.length) {
      record(state.live, payload, this.options.clock?.());
      return;
    }
    this.dispatchSlow(record, payload);
  }

  private dispatchSlow(record: RecordHook, payload: LoosePayload): void {
    if (this.state.phase === 'idle') this.start();
    const state = this.state;
    if (state.phase === 'ready' && this.head === this.queue.length) {
      // The hook that started a synchronous backend: the host's clock too, when it gave one (read after the start-up).
      record(state.live, payload, this.options.clock?.());
    } else if (state.phase === 'starting' || state.phase === 'activating' || state.phase === 'ready') {
      this.enqueue(record, payload);
    } else {
      // Failed, or shutting down: the session is over for this plugin.
      this.options.counters.dropped += 1;
    }
  }

  private enqueue(record: RecordHook, payload: LoosePayload): void {
    const { counters } = this.options;
    if (this.queued >= this.options.maxQueuedHooks) {
      counters.dropped += 1;
      counters.queueOverflow += 1;
      if (!this.overflowReported) {
        this.overflowReported = true;
        safeLog(this.options.logger, 'warn', `NeMo Relay start-up queue is full (${this.options.maxQueuedHooks} hooks) while the backend loads; further hooks are dropped and counted in status().counters.queueOverflow`);
      }
      return;
    }
    // The clock first: a queued hook keeps the time it was emitted at.
    const timestampUs = (this.options.clock ?? nowMicros)();
    // The host keeps ownership of its payload; a queued hook must record what it said then, and as it would live.
    this.queue.push({ record, payload: copyToQueue(payload), timestampUs });
    this.removeExitTask ??= atExit(() => this.recordQueuedAtExit(), 'record');
  }

  /** Chooses the backend (synchronously when it needs no loading). Idempotent. */
  start(): void {
    if (this.state.phase !== 'idle') return;
    this.state = { phase: 'starting' };
    const { choice, env, logger } = this.options;
    const now = resolveBackendNow(choice, { env, logger });
    if (now !== undefined) {
      this.activate(now);
      return;
    }
    const startup = resolveBackend(choice, { env, logger }).then((resolved) => {
      if (this.state.phase === 'starting' || (this.state.phase === 'shutting_down' && this.state.live === null)) this.activate(resolved);
    });
    // A shutdown that replaced the load with a stand-in stops waiting for it (the load itself cannot be cancelled).
    const abandoned = new Promise<void>((resolve) => {
      this.abandonStartup = resolve;
    });
    const settled = Promise.race([startup.catch((error: unknown) => this.failStartup(error)), abandoned]);
    // Loaded, failed or replaced: nothing is loading any more (a failed start gets no stand-in: its queue is dropped).
    this.options.work.track(settled.finally(() => (this.abandonStartup = null)));
  }

  /**
   * A shutdown whose budget is running out while native still starts (it
   * loads, or activates plugins.toml: either can outlast a short budget on
   * a busy machine) records the start-up queue into the in-memory relay
   * instead of dropping it: the same files (the document's, activated on
   * the memory relay, and the environment's), written within the budget.
   * What the stand-in needs loads first, while native goes on: native
   * finishing meanwhile records everything itself (its OTLP included). Then,
   * if native still starts, the stand-in takes its place, configured at once
   * (nothing left to load), and what native finishes later is left unused
   * (a late activation is closed). Nothing to do unless native still starts
   * (`slowStart`): with an ATOF file native's activation truncates, the
   * hooks stay queued (dropped, counted, if the budget ends first).
   */
  standInForSlowStart(): void {
    if (this.slowStart() === null) return;
    // Without a document the stand-in needs nothing loaded; else its activation's modules, loaded now and not
    // ahead of need: loading them alongside native's start slowed native down on a busy machine.
    if (this.options.settings().settings.pluginsConfig === null) return this.standIn();
    this.options.work.track(Promise.allSettled([prepareMemoryPluginHost(), loadDocumentChecks()]).then(() => this.standIn()));
  }

  private standIn(): void {
    const slow = this.slowStart();
    if (slow === null) return;
    const loading = slow === 'loading';
    const { settings } = this.options.settings();
    const what = loading ? 'before the backend loaded' : 'while the backend was still activating its configuration';
    const replaced = this.configuring;
    const live = this.memoryStandIn(`shutdown() ran short of its budget ${what}: the hooks queued at start-up were recorded by the in-memory relay`, 'activate');
    if (live === null) return;
    if (loading) this.abandonStartup?.();
    else replaced?.abandon();
    this.state = { phase: 'shutting_down', live };
    const files = settings.pluginsTomlPath ? "plugins.toml's files (its document activated on the relay) and the environment's" : "the environment's files";
    const remote = settings.pluginsConfig !== null ? '; its OTLP, streams, uploads and dynamic plugins get none of them' : '';
    const backend = loading ? 'had not loaded' : 'had loaded but was still activating its configuration';
    safeLog(this.options.logger, 'warn', `NeMo Relay backend ${backend} when shutdown()'s budget was running out: the ${this.queued} hooks queued at start-up are recorded by the in-memory relay, rather than dropped, into ${files} (the same bytes)${remote}`);
  }

  /**
   * Whether a shutting-down plugin's native backend still starts: loading,
   * or activating plugins.toml. Null otherwise, and when the backend is the
   * host's own object or the memory relay (which would stand in for itself),
   * or when native's activation truncates an ATOF file (`mode =
   * "overwrite"`): finishing after a stand-in wrote that file, it would
   * empty it.
   */
  private slowStart(): 'loading' | 'activating' | null {
    const state = this.state;
    if (state.phase !== 'shutting_down') return null;
    if (state.live === null) return this.abandonStartup !== null ? 'loading' : null;
    const kind = state.live.resolved.kind;
    if (kind === 'custom' || kind === 'memory' || this.configuring?.live !== state.live) return null;
    return truncatesAtofFile(this.options.settings().settings.pluginsConfig) ? null : 'activating';
  }

  /**
   * The in-memory relay standing in for native, with `reason` for status().
   * At exit it records to the environment's outputs at once (`fallback`):
   * a document's activation is asynchronous, and an exit cannot wait for it.
   * A shutdown activates the document on it (`activate`), which its budget
   * waits for. Null when it cannot be made.
   */
  private memoryStandIn(reason: string, config: 'fallback' | 'activate'): LiveRecording | null {
    const memory = resolveBackendNow('memory', { env: {}, logger: this.options.logger });
    if (memory === undefined) return null;
    memory.reason = reason;
    let live: LiveRecording;
    const loaded = this.options.settings();
    // The files only: remote destinations load exporters and connect, and dynamic plugins start workers, which the
    // rest of a budget cannot wait for (nor can the memory relay run dynamic plugins).
    const settings = config === 'activate' ? { ...loaded.settings, pluginsConfig: localOutputsOnly(loaded.settings.pluginsConfig), dynamicPlugins: [] } : loaded.settings;
    try {
      live = new LiveRecording({ ...this.options, resolved: memory, settings, origin: loaded });
      if (config === 'fallback' || !hasPluginsToml(settings, live.backend)) {
        live.applyConfig(config === 'fallback' ? fallbackOutcome(settings) : withoutActivation(live.backend, settings, this.options.logger));
        return live;
      }
    } catch {
      return null;
    }
    this.configure(live, settings, activatePluginsToml(live.backend, settings, this.options.logger));
    return live;
  }

  private activate(resolved: ResolvedBackend): void {
    let live: LiveRecording;
    const loaded = this.options.settings();
    const settings = loaded.settings;
    try {
      live = new LiveRecording({ ...this.options, resolved, settings, origin: loaded });
    } catch (error) {
      this.failStartup(error);
      return;
    }
    const shuttingDown = this.state.phase === 'shutting_down';
    const activates = hasPluginsToml(settings, live.backend);
    // A document needs its checks (loaded with the first plugin that has one): until then, hooks queue.
    const checked = settings.pluginsConfig === null || documentChecksNow() !== undefined;
    const now = !checked
      ? undefined
      : activates
        ? activatePluginsTomlNow(live.backend, settings, this.options.logger)
        : withoutActivation(live.backend, settings, this.options.logger);
    if (now !== undefined) {
      live.applyConfig(now);
      this.state = shuttingDown ? { phase: 'shutting_down', live } : { phase: 'ready', live };
      void this.drain();
      return;
    }
    this.state = shuttingDown ? { phase: 'shutting_down', live } : { phase: 'activating', live };
    this.configure(
      live,
      settings,
      activates ? activatePluginsToml(live.backend, settings, this.options.logger) : loadDocumentChecks().then(() => withoutActivation(live.backend, settings, this.options.logger)),
    );
  }

  /** Applies `outcome` to `live` once it settles, then replays the queue into it: the background work waits for it. */
  private configure(live: LiveRecording, settings: NemoRelaySettings, outcome: Promise<PluginsTomlOutcome>): void {
    // A stand-in that replaced `live` (standInForSlowStart) stops waiting for this (it cannot be cancelled).
    const abandoned = new Promise<void>((resolve) => {
      this.configuring = { live, abandon: resolve };
    });
    // Applied only while `live` is the gate's recording and the plugin is not shut down.
    const current = () => this.state.phase !== 'shutdown' && this.live === live;
    const activation = outcome.then((outcome) => {
      // Finished after shutdown() gave up on it, or after a stand-in took its place: nothing is recorded
      // through it; applied, it would open its outputs and say it records there. It is released instead.
      if (!current()) return releaseLate(outcome, this.options.logger);
      this.configured(live);
      live.applyConfig(outcome);
      if (this.state.phase === 'activating') this.state = { phase: 'ready', live };
      void this.drain();
    });
    const settled = activation.catch((error: unknown) => {
      // The env exporters still apply (unless the document asks for redaction): the plugin records without the document.
      this.options.work.fail('NeMo Relay plugins.toml activation failed', error);
      if (!current()) return;
      this.configured(live);
      live.applyConfig(fallbackOutcome(settings));
      if (this.state.phase === 'activating') this.state = { phase: 'ready', live };
      void this.drain();
    });
    this.options.work.track(Promise.race([settled, abandoned]));
  }

  private configured(live: LiveRecording): void {
    if (this.configuring?.live === live) this.configuring = null;
  }

  private failStartup(error: unknown): void {
    // Cached: a backend that cannot start is not retried on every hook.
    if (this.state.phase !== 'shutting_down') this.state = { phase: 'failed' };
    this.options.counters.errors += 1;
    this.options.counters.dropped += this.clearQueue();
    safeLog(this.options.logger, 'warn', `NeMo Relay plugin disabled: backend start failed: ${errorMessage(error)}`);
    this.settleWaiters(null);
  }

  /**
   * Replays queued hooks in order, once the backend and plugins.toml are
   * live, in slices of about `DRAIN_SLICE_MS` with a turn of the event loop
   * between them: a long start-up queue (100,000 hooks take seconds on
   * native) must not block the host, nor a `shutdown({ timeoutMs })` whose
   * timer could then not fire. Resolves once the queue is empty, or when
   * `until` (epoch ms) has passed: what is left then stays queued (a
   * shutdown counts it as dropped). Never rejects.
   */
  async drain(until = Number.POSITIVE_INFINITY): Promise<void> {
    // The earliest end any caller gave binds every replay in progress (a shutdown's ends the start-up's).
    this.replayUntil = Math.min(this.replayUntil, until);
    for (;;) {
      const state = this.state;
      if (state.phase !== 'ready' && state.phase !== 'shutting_down') return;
      const end = Math.min(until, this.replayUntil);
      if (state.live !== null && !this.replay(state.live, Math.min(end, Date.now() + DRAIN_SLICE_MS))) {
        if (Date.now() >= end) return;
        await nextTurn();
        continue;
      }
      if (state.phase === 'ready') this.settleWaiters(state.live);
      return;
    }
  }

  /** Replays queued hooks until the queue is empty (true) or `until` (epoch ms) has passed (false). */
  private replay(live: LiveRecording, until: number): boolean {
    let replayed = 0;
    // A hook recorded during the drain (re-entrantly) joins the end of the queue, and is replayed in turn.
    while (this.head < this.queue.length) {
      if ((++replayed & 63) === 0 && Date.now() >= until) return false;
      const next = this.queue[this.head]!;
      this.queue[this.head++] = undefined as unknown as QueuedHook;
      try {
        next.record(live, next.payload, next.timestampUs);
      } catch (error) {
        // Recording never throws by design; one that does must not stop the hooks after it.
        this.options.counters.errors += 1;
        safeLog(this.options.logger, 'debug', 'NeMo Relay replaying a queued hook failed', error);
      }
    }
    this.clearQueue();
    return true;
  }

  private clearQueue(): number {
    const count = this.queued;
    this.queue = [];
    this.head = 0;
    return count;
  }

  private settleWaiters(live: LiveRecording | null): void {
    this.readyResolve();
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve(live);
  }

  /**
   * At process exit, queued hooks are recorded synchronously rather than
   * lost: into the live backend (plugins.toml never finished activating, so
   * the env exporters apply), or into an in-memory relay when native never
   * loaded. The relay's and the trajectories' own exit writes run after this.
   */
  private recordQueuedAtExit(): void {
    const queued = this.queued;
    if (queued === 0) return;
    const { settings } = this.options.settings();
    let live = this.live;
    if (live === null) {
      live = this.memoryStandIn('the process exited before the backend loaded: queued hooks recorded by the in-memory relay', 'fallback');
      if (live === null) return;
      // The document's outputs cannot be opened without waiting: what they miss is said, never lost silently.
      if (settings.pluginsConfig !== null) this.warnUnconfigured(queued, 'before the backend loaded', 'reach none of', settings);
    } else if (this.configuring?.live === live) {
      // Its activation never finished (at start-up, or a shutdown's stand-in's): the env exporters apply.
      this.configuring = null;
      live.applyConfig(fallbackOutcome(settings));
      // Native may have finished activating on its own thread without telling JavaScript yet: they may have arrived.
      this.warnUnconfigured(queued, 'while plugins.toml was still activating', 'may be missing from', settings);
    }
    this.state = { phase: 'shutting_down', live };
    // Nothing can wait at exit: the whole queue, now.
    this.replay(live, Number.POSITIVE_INFINITY);
  }

  /** At exit, hooks queued `when` the document was not active: one warning naming what they miss. */
  private warnUnconfigured(hooks: number, when: string, fate: string, settings: NemoRelaySettings): void {
    const source = settings.pluginsTomlPath ? `plugins.toml (${settings.pluginsTomlPath})` : 'the OTLP configuration from the environment';
    const environment = settings.atofEnabled || settings.atifEnabled ? " (they went to the environment's ATOF/ATIF files)" : '';
    safeLog(
      this.options.logger,
      'warn',
      `NeMo Relay: the process exited ${when}: the ${hooks} hooks queued at start-up ${fate} the outputs of ${source} (files, collectors, streams, uploads)${environment}; await plugin.ready before the first hook, or plugin.shutdown() before process.exit(), to record them`,
    );
  }

  /** Begins shutting down: hooks from now on are dropped. */
  beginShutdown(): PluginState {
    const previous = this.publicState;
    this.state = { phase: 'shutting_down', live: this.live };
    return previous;
  }

  /** Shut down: what is still queued is dropped (and counted). */
  finishShutdown(): void {
    this.state = { phase: 'shutdown', live: this.live };
    const left = this.clearQueue();
    this.options.counters.dropped += left;
    if (left > 0) {
      safeLog(this.options.logger, 'warn', `NeMo Relay shutdown's budget ran out with ${left} hooks from start-up still queued; they were not recorded (counted in status().counters.dropped); give shutdown() a longer timeoutMs to record them`);
    }
    this.removeExitTask?.();
    this.removeExitTask = null;
    this.settleWaiters(null);
  }

  // ---------------------------------------------------------------- managed execution

  managedNow(): ManagedExecution | null {
    if (this.state.phase === 'idle') this.start();
    const state = this.state;
    return state.phase === 'ready' && this.head === this.queue.length ? state.live.managed : null;
  }

  settling(): boolean {
    const phase = this.state.phase;
    return phase === 'starting' || phase === 'activating' || (phase === 'ready' && this.queued > 0);
  }

  whenLive(timeoutMs: number): Promise<ManagedExecution | null> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((waiter) => waiter !== settle);
        resolve(null);
      }, timerDelay(timeoutMs));
      const settle = (live: LiveRecording | null) => {
        clearTimeout(timer);
        resolve(live?.managed ?? null);
      };
      this.waiters.push(settle);
    });
  }
}

/** Closes an activation that finished after the plugin shut down. Never rejects. */
async function releaseLate(outcome: PluginsTomlOutcome, logger: Logger): Promise<void> {
  if (outcome.kind !== 'active') return;
  try {
    await outcome.activation.close();
  } catch (error) {
    safeLog(logger, 'debug', 'NeMo Relay closing a plugins.toml activation that finished after shutdown failed', error);
  }
}
