// The declarations name Symbol.dispose/asyncDispose: carry their lib so a consumer without
// @types/node's copy (or whose lib stops at ES2022) type-checks them.
/// <reference lib="esnext.disposable" preserve="true" />
/**
 * `createNemoRelayPlugin`: the NeMo Relay observability plugin.
 *
 * It subscribes to the observer hooks and records them in a relay backend:
 * sessions become agent scopes, API requests LLM spans, tool calls tool
 * spans, and turns, approvals and subagents marks. Every handler fails open:
 * whatever the backend does, the host never sees an exception from here.
 *
 * This file is the facade; the work is done by named collaborators:
 * `gate.ts` (state, start-up queue, plugins.toml activation), `handlers.ts`
 * (hook → recorder table, fail-open guard), `recording.ts` (what records over
 * one backend: `sessions.ts`, `span-recorder.ts`, `trajectories.ts`,
 * `managed.ts`), `status.ts` and `shutdown.ts`.
 *
 * @module
 */

import { guardEnv, processEnv } from '../shared/env.ts';
import type { HookName } from '../hooks/names.ts';
import type { Logger, LoggerLike } from '../shared/logger.ts';
import { adaptLogger, safeLog } from '../shared/logger.ts';
import { asyncDisposeSymbol } from '../shared/dispose.ts';
import type { BackendChoice } from '../backends/select.ts';
import type { Environment, LoadedSettings, NemoRelaySettingsOverrides } from './config/settings.ts';
import { loadSettings } from './config/settings.ts';
import { HookGate } from './gate.ts';
import { buildHandlers } from './handlers.ts';
import { executionMiddleware, UnmanagedCalls } from './managed.ts';
import type { PluginStatus } from './status.ts';
import { assembleStatus, emptyCounters } from './status.ts';
import type { FlushOptions, ShutdownOptions } from './shutdown.ts';
import { flushPlugin, installExitHandlers, shutdownPlugin } from './shutdown.ts';
import { BackgroundWork } from './background-work.ts';
import type { PayloadFailures, TraceContextProvider } from '../hooks/index.ts';
import { HostPayloadFailures } from './host-payloads.ts';
import type { LoosePayload } from './payload.ts';
import type { RedactHook } from './egress.ts';
import { givenHost } from './config/host-identity.ts';
import { checkPluginOptions } from './config/plugin-options.ts';
import { safeClock, unlikelyClockMessage } from '../shared/clock.ts';

export type { RedactHook, RedactableEvent, RedactedFields } from './egress.ts';

export type { FlushOptions, ShutdownOptions } from './shutdown.ts';
export type { PluginState, PluginStatus } from './status.ts';

/** Options of `createNemoRelayPlugin`; every field is optional. */
export interface NemoRelayPluginOptions {
  /** `"auto"` (default), `"native"`, `"memory"`, `"off"`, or a backend object (e.g. `createFakeRelay()`). */
  backend?: BackendChoice;
  /** Where `HERMES_NEMO_RELAY_*` settings are read from. Defaults to `process.env`. */
  env?: Environment;
  /** Receives warnings about swallowed failures. Defaults to the console. */
  logger?: LoggerLike;
  /** Typed settings that override the environment. */
  settings?: NemoRelaySettingsOverrides;
  /** Sessions idle longer than this are closed and their partial trajectory written. Default 6 h; `0` disables. */
  sessionIdleTtlMs?: number;
  /** At most this many live sessions; the least recently active is closed first. Default 100,000. */
  maxSessions?: number;
  /**
   * How long a partial trajectory write (at `on_session_end`, after every
   * turn) waits, absorbing the ones requested meanwhile. Default 1,000 ms;
   * `0` writes after every turn, except that a write requested while the
   * session's previous one is still queued is absorbed by it (it writes the
   * newest state). The final write at session close is never delayed, and
   * `flush()` writes pending ones at once.
   */
  trajectoryWriteDelayMs?: number;
  /**
   * At most this many hooks wait while the native backend loads or
   * plugins.toml activates; more are dropped and counted
   * (`status().counters.queueOverflow`). Default 100,000.
   */
  maxQueuedHooks?: number;
  /**
   * Your own redaction, over every event's name and payloads (see
   * `RedactableEvent`): change the event you get in place, or return the
   * fields to replace. It runs after plugins.toml's `pii_redaction` on the
   * memory relay, before handing each call to native (native's own
   * component then runs after it). A throw clears the event's payloads and
   * name (fail closed) and is counted in `status().counters.redactionFailures`.
   * The host's own calls always receive their original values.
   */
  redact?: RedactHook;
  /**
   * Who the host is, when the working directory's package.json does not
   * say it (a CLI installed globally and run in someone else's project, a
   * script): `name` names the default files (`<name>-atof.jsonl`,
   * `<name>-atif-{session_id}.json`), the agent and its session scopes when
   * no setting and no adapter does; `version` is the agent's version.
   * Ignored in the Hermes profile. Default: the package.json's name and version.
   */
  host?: { name: string; version?: string };
  /**
   * When each event happened, in integer Unix microseconds: read once per
   * hook as the plugin receives it, and for what the plugin closes itself
   * (a session it evicts or closes at shutdown). For recording a stream
   * whose times are known (`replay` passes each recorded line's time).
   * A clock that throws or answers a non-number is replaced by the
   * library's for that reading. Default: the library's clock, which follows
   * the wall clock and never answers the same value twice.
   */
  clock?: () => number;
}

/** An execution middleware as a hook host calls it. */
export type HookHostMiddleware = (payload: any, next: (payload?: any) => any) => unknown;

/**
 * A host registry the plugin can attach to. `HookRegistry` fits; so does
 * any object with the same `on` and `use`.
 */
export interface HookHost {
  // `any` payloads: the registry's callbacks are typed per hook, the plugin's handlers take them all.
  /** Subscribes to a hook; returns the unsubscribe. */
  on(name: HookName, callback: (payload: any) => unknown): () => void;
  /** Registers execution middleware; returns the unregister. */
  use(kind: 'llm_execution' | 'tool_execution', middleware: HookHostMiddleware): () => void;
  /** Optional: registers what answers `traceContext()` (work continuing a session in another process); returns the remover. */
  provideTraceContext?(provider: TraceContextProvider): () => void;
  /** Optional: the emits whose payload failed (`HookRegistry` counts them), reported in `status()`. */
  payloadFailures?(): PayloadFailures;
  /** Optional: whether `callback` is still subscribed to `name` (`HookRegistry` answers), so a second `register()` after the host's `clear()` subscribes again. */
  subscribed?(name: HookName, callback: (payload: any) => unknown): boolean;
}

/** The plugin: register it on a hook host, read its status, flush and shut it down. */
export interface NemoRelayPlugin {
  /** Subscribes every hook (and the execution middlewares when managed execution applies). Returns the unsubscribe. */
  register(host: HookHost): () => void;
  /** Settles when the backend is live and plugins.toml activated (or it has failed open). Never rejects. */
  readonly ready: Promise<void>;
  /** The backend and why it was chosen, counters, live sessions, open spans and each output's health (kept after shutdown). */
  status(): PluginStatus;
  /** Writes everything recorded so far. Bounded by `timeoutMs`, never rejects. */
  flush(options?: FlushOptions): Promise<void>;
  /** Closes every session, writes every file and releases the backend. Idempotent, bounded, never rejects. */
  shutdown(options?: ShutdownOptions): Promise<void>;
  /** `await using plugin = createNemoRelayPlugin(...)`: `shutdown()` when the scope ends. */
  [Symbol.asyncDispose](): Promise<void>;
  /**
   * Flushes on `beforeExit`, `SIGINT` and `SIGTERM` without changing the exit
   * code. Opt-in, because signal handlers change a host's process semantics.
   * Returns the uninstall function.
   */
  installExitHandlers(options?: ShutdownOptions): () => void;
  /**
   * One handler per hook, keyed by hook name, for hosts that call the plugin
   * directly instead of registering it: `plugin.handlers.pre_tool_call(payload)`.
   */
  readonly handlers: Readonly<Record<HookName, (payload: object) => void>>;
  /** `llm_execution` middleware: managed LLM execution when enabled, else a pass-through. */
  llmExecution(payload: object, next: (payload?: object) => unknown): unknown;
  /** `tool_execution` middleware: managed tool execution when enabled, else a pass-through. */
  toolExecution(payload: object, next: (payload?: object) => unknown): unknown;
}

const DEFAULT_IDLE_TTL_MS = 6 * 60 * 60 * 1000;
const DEFAULT_MAX_SESSIONS = 100_000;
const DEFAULT_TRAJECTORY_WRITE_DELAY_MS = 1_000;
const DEFAULT_MAX_QUEUED_HOOKS = 100_000;
/** How long a trace context question waits for the backend to load (it is asked before a remote call goes out). */
const TRACE_CONTEXT_WAIT_MS = 2_000;

/** Creates the NeMo Relay observability plugin. Creating it does no I/O. */
export function createNemoRelayPlugin(options: NemoRelayPluginOptions = {}): NemoRelayPlugin {
  const logger = adaptLogger(options.logger);
  // Reads of a refused variable (Deno without --allow-env) answer undefined, for settings and backend choice alike.
  const env = guardEnv(options.env ?? processEnv());
  const checked = checkPluginOptions(options);
  const counters = emptyCounters();
  const work = new BackgroundWork(counters, logger);
  let loaded: LoadedSettings | null = null;
  const settings = (): LoadedSettings => {
    if (!loaded) {
      const host = givenHost(options.host);
      loaded = loadSettings(env, options.settings, host !== undefined ? { host } : {});
      loaded.diagnostics.unshift(...checked.diagnostics);
      for (const diagnostic of loaded.diagnostics) {
        safeLog(logger, diagnostic.level === 'error' ? 'error' : 'warn', `${diagnostic.code}: ${diagnostic.message}`);
      }
    }
    return loaded;
  };
  const gate = new HookGate({
    choice: options.backend ?? 'auto',
    env,
    logger,
    counters,
    work,
    settings,
    maxQueuedHooks: Math.max(0, checked.numbers.maxQueuedHooks ?? DEFAULT_MAX_QUEUED_HOOKS),
    sessionIdleTtlMs: checked.numbers.sessionIdleTtlMs ?? DEFAULT_IDLE_TTL_MS,
    maxSessions: Math.max(1, checked.numbers.maxSessions ?? DEFAULT_MAX_SESSIONS),
    trajectoryWriteDelayMs: Math.max(0, checked.numbers.trajectoryWriteDelayMs ?? DEFAULT_TRAJECTORY_WRITE_DELAY_MS),
    ...(typeof options.redact === 'function' ? { redact: options.redact } : {}),
    ...(typeof options.clock === 'function' ? { clock: safeClock(options.clock, (reading) => safeLog(logger, 'warn', unlikelyClockMessage('NeMo Relay options.clock', reading))) } : {}),
  });
  const unmanaged = new UnmanagedCalls();
  const handlers = buildHandlers({ gate, unmanaged, counters, logger });
  const middleware = { gate, unmanaged, counters, logger };
  // Work continuing a session or tool call in another process asks for its trace context; hooks queued while the backend loads are recorded first.
  const traceContext: TraceContextProvider = async (request) => {
    try {
      gate.start();
      if (gate.settling()) await gate.whenLive(TRACE_CONTEXT_WAIT_MS);
      return gate.live?.traceContext(request as LoosePayload);
    } catch (error) {
      counters.errors += 1;
      safeLog(logger, 'warn', 'NeMo Relay trace context failed', error);
      return undefined;
    }
  };
  const llmExecution = executionMiddleware('llm_execution', middleware);
  const toolExecution = executionMiddleware('tool_execution', middleware);
  const lifecycle = { gate, work, counters, logger };
  let shutdownPromise: Promise<void> | null = null;
  const shutdown = (shutdownOptions?: ShutdownOptions) => (shutdownPromise ??= shutdownPlugin(lifecycle, shutdownOptions));

  const api: NemoRelayPlugin = {
    register: (host) => register(host),
    // Reading `ready` starts the backend, so awaiting it is enough to warm up.
    get ready() {
      gate.start();
      return gate.ready;
    },
    status: () => status(),
    flush: (flushOptions) => flushPlugin(lifecycle, flushOptions),
    shutdown,
    [asyncDisposeSymbol()]: () => shutdown(),
    installExitHandlers: (shutdownOptions) => installExitHandlers(shutdown, () => shutdownPromise !== null, shutdownOptions),
    handlers,
    llmExecution: llmExecution as NemoRelayPlugin['llmExecution'],
    toolExecution: toolExecution as NemoRelayPlugin['toolExecution'],
  };

  const registrations = new WeakMap<HookHost, () => void>();
  const hostFailures = new HostPayloadFailures();
  function register(host: HookHost): () => void {
    // Registering twice on one host would handle every hook twice.
    const existing = registrations.get(host);
    if (existing !== undefined) {
      if (stillSubscribed(host)) {
        safeLog(logger, 'warn', 'NeMo Relay plugin is already registered on this host; the second register() changes nothing');
        return existing;
      }
      // The host dropped the subscriptions itself (HookRegistry.clear()): the old registration is over, and this one subscribes again.
      existing();
    }
    const { settings: resolved } = settings();
    const unsubscribers: (() => void)[] = [];
    for (const [name, handler] of Object.entries(handlers) as [HookName, (payload: object) => void][]) {
      unsubscribers.push(host.on(name, handler));
    }
    if (typeof host.provideTraceContext === 'function') unsubscribers.push(host.provideTraceContext(traceContext));
    hostFailures.track(host);
    // Execution middleware makes every LLM and tool call pass through a
    // chain; install it only when managed execution can apply, so hosts
    // without adaptive components or dynamic plugins keep the direct path.
    if (resolved.adaptiveEnabled || resolved.dynamicPlugins.length > 0) {
      unsubscribers.push(host.use('llm_execution', llmExecution as HookHostMiddleware));
      unsubscribers.push(host.use('tool_execution', toolExecution as HookHostMiddleware));
      // Managed execution must be live before the first call crosses the boundary.
      gate.start();
    }
    let registered = true;
    const unregister = () => {
      if (!registered) return;
      registered = false;
      registrations.delete(host);
      for (const unsubscribe of unsubscribers) unsubscribe();
      hostFailures.untrack(host);
    };
    registrations.set(host, unregister);
    return unregister;
  }

  /** False when the host says one of the plugin's hook handlers is no longer subscribed; a host that cannot say is taken at its word. */
  function stillSubscribed(host: HookHost): boolean {
    if (typeof host.subscribed !== 'function') return true;
    try {
      for (const [name, handler] of Object.entries(handlers) as [HookName, (payload: object) => void][]) {
        if (host.subscribed(name, handler) !== true) return false;
      }
      return true;
    } catch {
      return true;
    }
  }

  function status(): PluginStatus {
    const live = gate.live;
    const resolved = live?.resolved;
    let stats: { events: number; errors: number; dropped: number } | undefined;
    try {
      stats = resolved?.backend.stats?.();
    } catch {
      stats = undefined;
    }
    const config = live?.config ?? { kind: 'none' as const };
    return assembleStatus({
      state: gate.publicState,
      backend: resolved
        ? { kind: resolved.kind, reason: resolved.reason, ...(resolved.version !== undefined ? { version: resolved.version } : {}) }
        : null,
      stats,
      // Read before outputs(), whose failures count from the next status() on.
      counters: { ...counters },
      payloadFailures: hostFailures.counts(),
      queuedHooks: gate.queued,
      sessions: live?.sessions.size ?? 0,
      openSpans: live?.sessions.openSpans() ?? { llm: 0, tool: 0 },
      outputs: live?.outputs() ?? [],
      pluginConfig: {
        path: loaded?.settings.pluginsTomlPath ?? '',
        active: live?.configActive() ?? false,
        dynamic: (live?.configActive() ?? false) && config.kind === 'active' && config.dynamic,
        diagnostics: config.kind === 'none' ? [] : config.diagnostics,
      },
      diagnostics: loaded?.diagnostics ?? [],
    });
  }

  return api;
}
