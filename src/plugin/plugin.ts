/**
 * `createNemoRelayPlugin`: the NeMo Relay observability plugin.
 *
 * It subscribes to the observer hooks and records them in a relay backend:
 * sessions become agent scopes, API requests LLM spans, tool calls tool
 * spans, and turns, approvals and subagents marks. Every handler fails open:
 * whatever the backend does, the host never sees an exception from here.
 *
 * The backend is chosen lazily, on the first hook. Choosing `"auto"` or
 * `"native"` loads code asynchronously, and activating a `plugins.toml` is
 * asynchronous too; hooks that arrive meanwhile are queued (as JSON
 * snapshots, since the host may mutate its payloads afterwards) and replayed
 * in order, so nothing is lost. `plugin.ready` settles once the backend is
 * live.
 *
 * @module
 */

import { guardEnv, processEnv as guardedProcessEnv } from '../shared/env.ts';
import type { HookName } from '../hooks/names.ts';
import type { Logger } from '../shared/logger.ts';
import { consoleLogger, safeLog } from '../shared/logger.ts';
import type { ConfigDiagnostic, OutputHealth, RelayBackend } from '../relay/contract.ts';
import { isSnapshot, snapshotPayload } from '../shared/snapshot.ts';
import type { BackendChoice, ResolvedBackend } from '../backends/select.ts';
import { BACKEND_ENV, resolveBackend } from '../backends/select.ts';
import { apiKeyOf, toolKeyOf, type LoosePayload } from './payload.ts';
import type { PluginCounters } from './state.ts';
import { emptyCounters, RelayRuntime } from './state.ts';
import type { Environment, LoadedSettings, NemoRelaySettingsOverrides } from './settings.ts';
import { loadSettings } from './settings.ts';

export interface NemoRelayPluginOptions {
  /** `"auto"` (default), `"native"`, `"memory"`, `"off"`, or a backend object (e.g. `createFakeRelay()`). */
  backend?: BackendChoice;
  /** Where `HERMES_NEMO_RELAY_*` settings are read from. Defaults to `process.env`. */
  env?: Environment;
  /** Receives warnings about swallowed failures. Defaults to the console. */
  logger?: Logger;
  /** Typed settings that override the environment. */
  settings?: NemoRelaySettingsOverrides;
  /** Sessions idle longer than this are closed and their partial trajectory written. Default 6 h; `0` disables. */
  sessionIdleTtlMs?: number;
  /** At most this many live sessions; the least recently active is closed first. Default 100,000. */
  maxSessions?: number;
  /**
   * How long a partial trajectory write (at `on_session_end`, after every
   * turn) waits, absorbing the ones requested meanwhile. Default 1,000 ms;
   * `0` writes after every turn. The final write at session close is never
   * delayed, and `flush()` writes pending ones at once.
   */
  trajectoryWriteDelayMs?: number;
}

export interface ShutdownOptions {
  /** Upper bound for the whole shutdown. Default 5,000 ms. */
  timeoutMs?: number;
}

export interface FlushOptions {
  /** Upper bound for the flush; what is still pending then goes on in the background. Default 5,000 ms. */
  timeoutMs?: number;
}

export type PluginState = 'idle' | 'starting' | 'ready' | 'failed' | 'shutting_down' | 'shutdown';

export interface PluginStatus {
  state: PluginState;
  backend: { kind: string; reason: string; version?: string };
  /** Live sessions. */
  sessions: number;
  /** LLM and tool spans started and not yet ended. */
  openSpans: { llm: number; tool: number };
  /** Hooks waiting for the backend or a plugin-config change. */
  queuedHooks: number;
  counters: PluginCounters & {
    /** Events the backend produced (hook calls when the backend does not count). */
    events: number;
  };
  /** Files being written, with their health. */
  outputs: OutputHealth[];
  pluginConfig: { path: string; active: boolean; dynamic: boolean; diagnostics: ConfigDiagnostic[] };
  /** Problems found in the settings (environment and plugins.toml). */
  diagnostics: ConfigDiagnostic[];
}

/**
 * A host registry the plugin can attach to. `HookRegistry` fits; so does
 * any object with the same `on` and `use`.
 */
export interface PluginHost {
  // `any` payloads: the registry's callbacks are typed per hook, the plugin's handlers take them all.
  on(name: HookName, callback: (payload: any) => unknown): () => void;
  use(kind: 'llm_execution' | 'tool_execution', middleware: ExecutionMiddleware): () => void;
}

/** An execution middleware as the registry calls it. */
export type ExecutionMiddleware = (payload: any, next: (payload?: any) => any) => unknown;

type Handler = (payload: LoosePayload) => void;

export interface NemoRelayPlugin {
  /** Subscribes every hook (and the execution middlewares when managed execution applies). Returns the unsubscribe. */
  register(host: PluginHost): () => void;
  /** Settles when the backend is live (or has failed open). Never rejects. */
  readonly ready: Promise<void>;
  status(): PluginStatus;
  /** Writes everything recorded so far. Bounded by `timeoutMs`, never rejects. */
  flush(options?: FlushOptions): Promise<void>;
  /** Closes every session, writes every file and releases the backend. Idempotent, bounded, never rejects. */
  shutdown(options?: ShutdownOptions): Promise<void>;
  /**
   * Flushes on `beforeExit`, `SIGINT` and `SIGTERM` without changing the exit
   * code. Opt-in, because signal handlers change a host's process semantics.
   * Returns the uninstall function.
   */
  installExitHandlers(options?: ShutdownOptions): () => void;
  /** One handler per hook, keyed by hook name. */
  readonly handlers: Readonly<Record<HookName, (payload: object) => void>>;
  onSessionStart(payload: object): void;
  onSessionEnd(payload: object): void;
  onSessionFinalize(payload: object): void;
  onSessionReset(payload: object): void;
  onPreLlmCall(payload: object): void;
  onPostLlmCall(payload: object): void;
  onPreApiRequest(payload: object): void;
  onPostApiRequest(payload: object): void;
  onApiRequestError(payload: object): void;
  onPreToolCall(payload: object): void;
  onPostToolCall(payload: object): void;
  onPreApprovalRequest(payload: object): void;
  onPostApprovalResponse(payload: object): void;
  onSubagentStart(payload: object): void;
  onSubagentStop(payload: object): void;
  /** `llm_execution` middleware: managed LLM execution when enabled, else a pass-through. */
  llmExecution(payload: object, next: (payload?: object) => unknown): unknown;
  /** `tool_execution` middleware: managed tool execution when enabled, else a pass-through. */
  toolExecution(payload: object, next: (payload?: object) => unknown): unknown;
}

const DEFAULT_SHUTDOWN_TIMEOUT_MS = 5_000;
/** Unmanaged calls remembered until their end hook; more means ends that never came. */
const MAX_UNMANAGED_CALLS = 10_000;
const DEFAULT_IDLE_TTL_MS = 6 * 60 * 60 * 1000;
const DEFAULT_MAX_SESSIONS = 100_000;
const DEFAULT_TRAJECTORY_WRITE_DELAY_MS = 1_000;

/** Creates the NeMo Relay observability plugin. Creating it does no I/O. */
export function createNemoRelayPlugin(options: NemoRelayPluginOptions = {}): NemoRelayPlugin {
  return new RelayPlugin(options).api;
}

interface QueuedHook {
  handler: Handler;
  payload: LoosePayload;
  opensSession: boolean;
}

class RelayPlugin {
  readonly api: NemoRelayPlugin;
  private readonly options: NemoRelayPluginOptions;
  private readonly logger: Logger;
  private readonly counters = emptyCounters();
  private state: PluginState = 'idle';
  private runtime: RelayRuntime | null = null;
  private resolved: ResolvedBackend | null = null;
  private loadedSettings: LoadedSettings | null = null;
  private queue: QueuedHook[] = [];
  private readonly pending = new Set<Promise<unknown>>();
  private startup: Promise<void> | null = null;
  private shutdownPromise: Promise<void> | null = null;
  private readonly warnedHooks = new Set<string>();
  private readonly registrations = new WeakMap<PluginHost, () => void>();
  /** Calls that crossed the execution middleware unmanaged while managed execution may apply (see recordsLlmManually). */
  private readonly unmanagedLlmCalls = new Set<string>();
  private readonly unmanagedToolCalls = new Set<string>();
  private readyResolve!: () => void;

  constructor(options: NemoRelayPluginOptions) {
    this.options = options;
    this.logger = options.logger ?? consoleLogger;
    const ready = new Promise<void>((resolve) => {
      this.readyResolve = resolve;
    });
    const handlers = this.buildHandlers();
    const plugin = this;
    this.api = {
      register: (host) => this.register(host),
      // Reading `ready` starts the backend, so awaiting it is enough to warm up.
      get ready() {
        plugin.start();
        return ready;
      },
      status: () => this.status(),
      flush: (options) => this.flush(options),
      shutdown: (shutdownOptions) => this.shutdown(shutdownOptions),
      installExitHandlers: (shutdownOptions) => this.installExitHandlers(shutdownOptions),
      handlers,
      onSessionStart: handlers.on_session_start,
      onSessionEnd: handlers.on_session_end,
      onSessionFinalize: handlers.on_session_finalize,
      onSessionReset: handlers.on_session_reset,
      onPreLlmCall: handlers.pre_llm_call,
      onPostLlmCall: handlers.post_llm_call,
      onPreApiRequest: handlers.pre_api_request,
      onPostApiRequest: handlers.post_api_request,
      onApiRequestError: handlers.api_request_error,
      onPreToolCall: handlers.pre_tool_call,
      onPostToolCall: handlers.post_tool_call,
      onPreApprovalRequest: handlers.pre_approval_request,
      onPostApprovalResponse: handlers.post_approval_response,
      onSubagentStart: handlers.subagent_start,
      onSubagentStop: handlers.subagent_stop,
      llmExecution: (payload, next) => this.llmExecution(payload as LoosePayload, next as (p?: LoosePayload) => unknown),
      toolExecution: (payload, next) => this.toolExecution(payload as LoosePayload, next as (p?: LoosePayload) => unknown),
    };
  }

  // ---------------------------------------------------------------- handlers

  private buildHandlers(): Record<HookName, (payload: object) => void> {
    const session = (name: HookName, handler: Handler) => this.handlerFor(name, handler, true);
    const closing = (name: HookName, handler: Handler) => this.handlerFor(name, handler, false);
    return {
      on_session_start: session('on_session_start', (p) => {
        this.live().ensureSession(p);
      }),
      on_session_end: session('on_session_end', (p) => {
        const runtime = this.live();
        runtime.mark('hermes.session.end', p);
        runtime.exportAtif(runtime.ensureSession(p), 'partial');
      }),
      on_session_finalize: closing('on_session_finalize', (p) => this.live().closeSession(p)),
      on_session_reset: closing('on_session_reset', (p) => this.live().closeSession(p)),
      pre_llm_call: session('pre_llm_call', (p) => this.live().mark('hermes.turn.start', p)),
      post_llm_call: session('post_llm_call', (p) => this.live().mark('hermes.turn.end', p)),
      pre_api_request: session('pre_api_request', (p) => {
        const runtime = this.live();
        if (this.recordsLlmManually(runtime, p, false)) runtime.llmStart(p);
      }),
      post_api_request: session('post_api_request', (p) => {
        const runtime = this.live();
        if (this.recordsLlmManually(runtime, p, true)) runtime.llmEnd(p);
      }),
      api_request_error: session('api_request_error', (p) => {
        const runtime = this.live();
        if (this.recordsLlmManually(runtime, p, true)) runtime.llmError(p);
      }),
      pre_tool_call: session('pre_tool_call', (p) => {
        const runtime = this.live();
        if (this.recordsToolManually(runtime, p, false)) runtime.toolStart(p);
      }),
      post_tool_call: session('post_tool_call', (p) => {
        const runtime = this.live();
        if (this.recordsToolManually(runtime, p, true)) runtime.toolEnd(p);
      }),
      pre_approval_request: session('pre_approval_request', (p) => this.live().mark('hermes.approval.request', p)),
      post_approval_response: session('post_approval_response', (p) =>
        this.live().mark('hermes.approval.response', p),
      ),
      subagent_start: session('subagent_start', (p) => this.live().markSubagentStart(p)),
      subagent_stop: session('subagent_stop', (p) => this.live().markSubagentStop(p)),
    };
  }

  private handlerFor(name: HookName, handler: Handler, opensSession: boolean): (payload: object) => void {
    const guarded: Handler = (payload) => {
      try {
        handler(payload);
      } catch (error) {
        // Most often a getter or a Proxy trap of the payload threw: handle the
        // event once more from a plain copy rather than lose it.
        if (!isSnapshot(payload) && this.retryFromCopy(name, handler, payload, error)) return;
        this.counters.errors += 1;
        // One warning per hook kind; the count keeps growing in status().
        const level = this.warnedHooks.has(name) ? 'debug' : 'warn';
        this.warnedHooks.add(name);
        safeLog(this.logger, level, `NeMo Relay ${name} handling failed (further failures of this hook are logged at debug): ${describe(error)}`);
      }
    };
    return (payload: object) => {
      try {
        this.dispatch(guarded, (payload ?? {}) as LoosePayload, opensSession);
      } catch (error) {
        this.counters.errors += 1;
        safeLog(this.logger, 'debug', `NeMo Relay ${name} dispatch failed`, error);
      }
    };
  }

  private retryFromCopy(name: HookName, handler: Handler, payload: LoosePayload, error: unknown): boolean {
    try {
      handler(snapshotPayload(payload));
    } catch {
      return false;
    }
    const key = `${name}:copied`;
    if (!this.warnedHooks.has(key)) {
      this.warnedHooks.add(key);
      safeLog(this.logger, 'warn', `NeMo Relay ${name}: reading the payload failed (${describe(error)}); recorded it from a plain copy, with unreadable fields as "[Unserializable: ...]" (reported once per hook)`);
    }
    return true;
  }

  private dispatch(handler: Handler, payload: LoosePayload, opensSession: boolean): void {
    this.counters.hooks += 1;
    if (this.state === 'idle') this.start();
    if (this.state === 'starting') {
      this.enqueue(handler, payload, opensSession);
      return;
    }
    if (this.state !== 'ready') {
      // Failed, or shutting down: the session is over for this plugin.
      this.counters.dropped += 1;
      return;
    }
    const runtime = this.runtime!;
    // A non-empty queue means a drain is already scheduled; joining it keeps order.
    if (runtime.barrier || this.queue.length > 0) {
      this.enqueue(handler, payload, opensSession);
      return;
    }
    if (opensSession && runtime.needsReinit()) {
      runtime.beginReinit();
      this.enqueue(handler, payload, opensSession);
      this.drainAfterBarrier();
      return;
    }
    handler(payload);
  }

  private enqueue(handler: Handler, payload: LoosePayload, opensSession: boolean): void {
    // The host keeps ownership of its payload; a queued hook must record what it said then.
    this.queue.push({ handler, payload: snapshotPayload(payload), opensSession });
  }

  private drainAfterBarrier(): void {
    const runtime = this.runtime;
    if (!runtime?.barrier) return;
    const barrier = runtime.barrier;
    this.trackWork(barrier.then(() => this.drainQueue()));
  }

  /** Replays queued hooks in order, stopping again if one starts a new barrier. */
  private drainQueue(): void {
    const runtime = this.runtime;
    if (!runtime || this.state === 'shutdown') return;
    while (this.queue.length > 0) {
      if (runtime.barrier) {
        this.drainAfterBarrier();
        return;
      }
      const next = this.queue[0]!;
      if (next.opensSession && runtime.needsReinit()) {
        runtime.beginReinit();
        this.drainAfterBarrier();
        return;
      }
      this.queue.shift();
      next.handler(next.payload);
    }
  }

  private live(): RelayRuntime {
    return this.runtime!;
  }

  /**
   * Whether the LLM call of this hook is recorded from the hooks (a manual
   * span) rather than by managed execution: always when managed execution
   * is off, and also for a call that ran unmanaged because the backend or
   * plugins.toml was still activating when it crossed the middleware
   * (otherwise it would be recorded nowhere). `ends` forgets the call.
   */
  private recordsLlmManually(runtime: RelayRuntime, payload: LoosePayload, ends: boolean): boolean {
    if (!runtime.managedLlmEnabled()) return true;
    return this.ranUnmanaged(this.unmanagedLlmCalls, apiKeyOf(payload), ends);
  }

  private recordsToolManually(runtime: RelayRuntime, payload: LoosePayload, ends: boolean): boolean {
    if (!runtime.managedToolEnabled()) return true;
    return this.ranUnmanaged(this.unmanagedToolCalls, toolKeyOf(payload), ends);
  }

  private ranUnmanaged(calls: Set<string>, key: string, ends: boolean): boolean {
    if (!calls.has(key)) return false;
    if (ends) calls.delete(key);
    return true;
  }

  /** Notes a call that crossed the execution middleware unmanaged, so its hooks record it. */
  private noteUnmanaged(calls: Set<string>, key: string): void {
    calls.add(key);
    // Calls whose end hook never comes must not pile up: forget the oldest.
    if (calls.size > MAX_UNMANAGED_CALLS) calls.delete(calls.values().next().value as string);
  }

  // ---------------------------------------------------------------- middleware

  private llmExecution(payload: LoosePayload, next: (payload?: LoosePayload) => unknown): unknown {
    const runtime = this.readyRuntime();
    try {
      if (runtime?.managedLlmEnabled()) return runtime.executeLlm(payload, next);
      // Not ready yet (activating): managed execution may apply to later calls, so this one is noted.
      if (runtime === null) this.noteUnmanaged(this.unmanagedLlmCalls, apiKeyOf(payload));
    } catch (error) {
      this.noteMiddlewareFailure('llm_execution', error);
    }
    return next(payload);
  }

  private toolExecution(payload: LoosePayload, next: (payload?: LoosePayload) => unknown): unknown {
    const runtime = this.readyRuntime();
    try {
      if (runtime?.managedToolEnabled()) return runtime.executeTool(payload, next);
      if (runtime === null) this.noteUnmanaged(this.unmanagedToolCalls, toolKeyOf(payload));
    } catch (error) {
      this.noteMiddlewareFailure('tool_execution', error);
    }
    return next(payload);
  }

  private readyRuntime(): RelayRuntime | null {
    if (this.state === 'idle') this.start();
    if (this.state !== 'ready' || !this.runtime || this.runtime.barrier) return null;
    return this.runtime;
  }

  private noteMiddlewareFailure(kind: string, error: unknown): void {
    this.counters.errors += 1;
    safeLog(this.logger, 'warn', `NeMo Relay ${kind} failed before the call; running it unmanaged: ${describe(error)}`);
  }

  // ---------------------------------------------------------------- registration

  private register(host: PluginHost): () => void {
    // Registering twice on one host would handle every hook twice.
    const existing = this.registrations.get(host);
    if (existing !== undefined) {
      safeLog(this.logger, 'warn', 'NeMo Relay plugin is already registered on this host; the second register() changes nothing');
      return existing;
    }
    const settings = this.settings().settings;
    const unsubscribers: (() => void)[] = [];
    for (const [name, handler] of Object.entries(this.api.handlers) as [HookName, (payload: object) => void][]) {
      unsubscribers.push(host.on(name, handler));
    }
    // Execution middleware makes every LLM and tool call pass through a
    // chain; install it only when managed execution can apply, so hosts
    // without adaptive components or dynamic plugins keep the direct path.
    if (settings.adaptiveEnabled || settings.dynamicPlugins.length > 0) {
      unsubscribers.push(host.use('llm_execution', this.api.llmExecution as ExecutionMiddleware));
      unsubscribers.push(host.use('tool_execution', this.api.toolExecution as ExecutionMiddleware));
      // Dynamic plugins must be active before the first call crosses the boundary.
      if (settings.dynamicPlugins.length > 0) this.start();
    }
    let registered = true;
    const unregister = () => {
      if (!registered) return;
      registered = false;
      this.registrations.delete(host);
      for (const unsubscribe of unsubscribers) unsubscribe();
    };
    this.registrations.set(host, unregister);
    return unregister;
  }

  // ---------------------------------------------------------------- startup

  private settings(): LoadedSettings {
    if (!this.loadedSettings) {
      this.loadedSettings = loadSettings(this.options.env ?? processEnv(), this.options.settings);
      for (const diagnostic of this.loadedSettings.diagnostics) {
        safeLog(this.logger, diagnostic.level === 'error' ? 'error' : 'warn', `${diagnostic.code}: ${diagnostic.message}`);
      }
    }
    return this.loadedSettings;
  }

  private start(): void {
    if (this.state !== 'idle') return;
    this.state = 'starting';
    const choice = this.options.backend ?? 'auto';
    const env = guardEnv(this.options.env ?? processEnv());
    if (typeof choice === 'object' && choice !== null && !env[BACKEND_ENV]?.trim()) {
      // A backend object needs no loading: start synchronously so the very
      // first hook is recorded in order, with nothing queued.
      this.activate({ backend: choice, kind: 'custom', reason: `backend object passed by the host (kind ${safeKind(choice)})` });
      return;
    }
    const startup = resolveBackend(choice, { env, logger: this.logger })
      .then((resolved) => {
        if (this.state === 'starting' || this.state === 'shutting_down') this.activate(resolved);
      })
      .catch((error: unknown) => this.failStartup(error));
    this.startup = startup;
    this.trackWork(startup);
  }

  private activate(resolved: ResolvedBackend): void {
    this.resolved = resolved;
    try {
      const runtime = new RelayRuntime({
        backend: resolved.backend,
        settings: this.settings().settings,
        logger: this.logger,
        counters: this.counters,
        track: (work) => this.trackWork(work),
        sessionIdleTtlMs: this.options.sessionIdleTtlMs ?? DEFAULT_IDLE_TTL_MS,
        maxSessions: Math.max(1, this.options.maxSessions ?? DEFAULT_MAX_SESSIONS),
        trajectoryWriteDelayMs: Math.max(0, this.options.trajectoryWriteDelayMs ?? DEFAULT_TRAJECTORY_WRITE_DELAY_MS),
        now: () => Date.now(),
      });
      runtime.start();
      this.runtime = runtime;
    } catch (error) {
      this.failStartup(error);
      return;
    }
    if (this.state === 'starting') this.state = 'ready';
    this.readyResolve();
    if (this.runtime.barrier) this.drainAfterBarrier();
    else this.drainQueue();
  }

  private failStartup(error: unknown): void {
    // Cached: a backend that cannot start is not retried on every hook.
    this.state = this.state === 'shutting_down' ? 'shutting_down' : 'failed';
    this.counters.errors += 1;
    this.counters.dropped += this.queue.length;
    this.queue = [];
    safeLog(this.logger, 'warn', `NeMo Relay plugin disabled: backend start failed: ${describe(error)}`);
    this.readyResolve();
  }

  private trackWork(work: Promise<unknown>): void {
    const settled = work.then(
      () => undefined,
      (error: unknown) => {
        this.counters.errors += 1;
        safeLog(this.logger, 'warn', `NeMo Relay background work failed: ${describe(error)}`);
      },
    );
    this.pending.add(settled);
    void settled.finally(() => this.pending.delete(settled));
  }

  private async settle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  // ---------------------------------------------------------------- flush and shutdown

  private async flush(options: FlushOptions = {}): Promise<void> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
    const work = (async () => {
      await this.settle();
      this.drainQueue();
      this.runtime?.writePendingTrajectories();
      await this.settle();
      await this.runtime?.flushBackend();
    })();
    try {
      if ((await boundedBy(work, timeoutMs)) === 'timeout') {
        this.counters.errors += 1;
        safeLog(this.logger, 'warn', `NeMo Relay flush did not finish within ${timeoutMs} ms; ${this.pending.size} writes are still pending`);
      }
    } catch (error) {
      this.counters.errors += 1;
      safeLog(this.logger, 'warn', `NeMo Relay flush failed: ${describe(error)}`);
    }
  }

  private shutdown(options: ShutdownOptions = {}): Promise<void> {
    if (this.shutdownPromise) return this.shutdownPromise;
    const timeoutMs = options.timeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
    const previous = this.state;
    this.state = 'shutting_down';
    const work = (async () => {
      if (previous === 'idle') return;
      await this.settle();
      this.drainQueue();
      await this.settle();
      if (this.runtime) await this.runtime.shutdown();
      await this.settle();
    })();
    this.shutdownPromise = boundedBy(work, timeoutMs).then(
      (outcome) => {
        if (outcome === 'timeout') {
          this.counters.errors += 1;
          safeLog(this.logger, 'warn', `NeMo Relay shutdown did not finish within ${timeoutMs} ms; ${this.pending.size} writes were still pending`);
        }
      },
      (error: unknown) => {
        this.counters.errors += 1;
        safeLog(this.logger, 'warn', `NeMo Relay runtime shutdown completed with errors: ${describe(error)}`);
      },
    ).finally(() => {
      this.state = 'shutdown';
      this.counters.dropped += this.queue.length;
      this.queue = [];
    });
    return this.shutdownPromise;
  }

  private installExitHandlers(options: ShutdownOptions = {}): () => void {
    const proc = (globalThis as { process?: NodeJS.Process }).process;
    if (!proc || typeof proc.on !== 'function') return () => {};
    const onBeforeExit = () => {
      if (this.shutdownPromise) return;
      // Keeping the event loop busy with the shutdown is what makes beforeExit
      // wait for it. One more turn afterwards lets a signal the host sent
      // itself as its last act reach its handler, instead of the loop ending
      // first and turning a SIGTERM death into exit code 0.
      void this.shutdown(options).then(() => new Promise<void>((resolve) => setImmediate(resolve)));
    };
    const onSignal = (signal: NodeJS.Signals) => {
      void this.shutdown(options).finally(() => {
        uninstall();
        // Re-raise only when nobody else handles the signal, so the process
        // ends exactly as it would have without us (exit code 128 + signal).
        if (proc.listenerCount(signal) === 0) proc.kill(proc.pid, signal);
      });
    };
    const uninstall = () => {
      proc.off('beforeExit', onBeforeExit);
      proc.off('SIGINT', onSignal);
      proc.off('SIGTERM', onSignal);
    };
    proc.on('beforeExit', onBeforeExit);
    proc.on('SIGINT', onSignal);
    proc.on('SIGTERM', onSignal);
    return uninstall;
  }

  // ---------------------------------------------------------------- status

  private status(): PluginStatus {
    const runtime = this.runtime;
    const backend = this.resolved?.backend;
    let stats: { events: number; errors: number; dropped: number } | undefined;
    try {
      stats = backend?.stats?.();
    } catch {
      stats = undefined;
    }
    const settings = this.loadedSettings;
    return {
      state: this.state,
      backend: this.resolved
        ? {
            kind: this.resolved.kind,
            reason: this.resolved.reason,
            ...(this.resolved.version !== undefined ? { version: this.resolved.version } : {}),
          }
        : { kind: 'unresolved', reason: this.state === 'idle' ? 'no hook has been handled yet' : 'loading' },
      sessions: runtime?.sessions.size ?? 0,
      openSpans: runtime?.openSpans() ?? { llm: 0, tool: 0 },
      queuedHooks: this.queue.length,
      counters: {
        ...this.counters,
        events: stats?.events ?? this.counters.hooks,
        errors: this.counters.errors + (stats?.errors ?? 0),
        dropped: this.counters.dropped + (stats?.dropped ?? 0),
      },
      outputs: runtime?.outputs() ?? [],
      pluginConfig: {
        path: settings?.settings.pluginsTomlPath ?? '',
        ...(runtime?.pluginConfigState() ?? { active: false, dynamic: false }),
        diagnostics: runtime?.pluginConfigDiagnostics ?? [],
      },
      diagnostics: settings?.diagnostics ?? [],
    };
  }
}

async function boundedBy(work: Promise<void>, timeoutMs: number): Promise<'done' | 'timeout'> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    // Kept referenced: a host awaiting shutdown() must get its answer within
    // timeoutMs even when nothing else keeps the process alive (an unref'd
    // timer let Node exit with the await unsettled). It is cleared as soon
    // as the work is done, so it never holds a finished host.
    timer = setTimeout(() => resolve('timeout'), Number.isFinite(timeoutMs) ? Math.max(0, timeoutMs) : DEFAULT_SHUTDOWN_TIMEOUT_MS);
  });
  try {
    return await Promise.race([work.then(() => 'done' as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function processEnv(): Environment {
  return guardedProcessEnv();
}

function safeKind(backend: RelayBackend): string {
  try {
    return String(backend.kind ?? 'custom');
  } catch {
    return 'custom';
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  try {
    return String(error);
  } catch {
    return 'unknown error';
  }
}
