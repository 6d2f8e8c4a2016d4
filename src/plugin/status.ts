/**
 * What `status()` reports: the plugin's counters and the status document
 * assembled from the gate, the backend and the settings.
 *
 * @module
 */

import type { PayloadFailures } from '../hooks/registry.ts';
import type { ConfigDiagnostic, OutputHealth } from '../relay/contract.ts';
import { sum } from './host-payloads.ts';

/** What the plugin counts for `status()`. */
export interface PluginCounters {
  /** Hook calls handled. */
  hooks: number;
  /** Failures swallowed to keep the host running. */
  errors: number;
  /** End hooks with no open span (recorded as fallback marks). */
  unmatchedEnds: number;
  /** Hook calls that could not be recorded (backend off or failed, start-up queue full, payload function threw). */
  dropped: number;
  /** Sessions closed by the idle TTL or the session cap. */
  evictedSessions: number;
  /** Spans still open when their session closed, ended by the plugin. */
  abandonedSpans: number;
  /** Hooks refused because the start-up queue was full (also counted in `dropped`). */
  queueOverflow: number;
  /** Events the host's `redact` hook failed on (their name and payloads were cleared instead). */
  redactionFailures: number;
  /** Calls that crossed `llm_execution`/`tool_execution` before plugins.toml was live, waited past the bound and ran unmanaged: only their own hooks can record them. */
  unmanagedCalls: number;
}

export function emptyCounters(): PluginCounters {
  return { hooks: 0, errors: 0, unmatchedEnds: 0, dropped: 0, evictedSessions: 0, abandonedSpans: 0, queueOverflow: 0, redactionFailures: 0, unmanagedCalls: 0 };
}

/** Where the plugin is in its life: before the first hook, starting the backend, recording, failed open, shutting down, shut down. */
export type PluginState = 'idle' | 'starting' | 'ready' | 'failed' | 'shutting_down' | 'shutdown';

/** What `plugin.status()` reports. */
export interface PluginStatus {
  /** The plugin's state. */
  state: PluginState;
  /** The backend recording, why it was chosen (one sentence, naming a fix when native could not load) and its version. */
  backend: { kind: string; reason: string; version?: string };
  /** Live sessions. */
  sessions: number;
  /** LLM and tool spans started and not yet ended. */
  openSpans: { llm: number; tool: number };
  /** Hooks waiting for the backend or the plugins.toml activation. */
  queuedHooks: number;
  /** What the plugin counted: hooks, errors, unmatched ends, drops, evictions. */
  counters: PluginCounters & {
    /** Events the backend produced (hook calls when the backend does not count). */
    events: number;
    /** Hooks the host emitted with a payload function that threw: delivered to no subscriber, so not recorded (also counted in `dropped`). Counted by the registry. */
    undelivered: number;
    /** Hooks the host emitted with a payload that is not an object: delivered, and recorded, as an empty payload. Counted by the registry. */
    emptyPayloads: number;
  };
  /**
   * Per hook, the emits counted in `undelivered` (`thunkThrew`) and
   * `emptyPayloads` (`notAnObject`), from the registries the plugin is (or
   * was) registered on, while it was: where to look in the host.
   */
  payloadFailures: PayloadFailures;
  /** Files being written, with their health. */
  outputs: OutputHealth[];
  /** The plugins.toml document: its path, whether it is active (and with dynamic plugins), and what its activation reported. */
  pluginConfig: { path: string; active: boolean; dynamic: boolean; diagnostics: ConfigDiagnostic[] };
  /** Problems found in the settings (environment and plugins.toml). */
  diagnostics: ConfigDiagnostic[];
}

/** The parts `status()` is assembled from. */
export interface StatusParts {
  state: PluginState;
  backend: { kind: string; reason: string; version?: string } | null;
  stats: { events: number; errors: number; dropped: number } | undefined;
  counters: PluginCounters;
  payloadFailures: PayloadFailures;
  queuedHooks: number;
  sessions: number;
  openSpans: { llm: number; tool: number };
  outputs: OutputHealth[];
  pluginConfig: { path: string; active: boolean; dynamic: boolean; diagnostics: ConfigDiagnostic[] };
  diagnostics: ConfigDiagnostic[];
}

/** Why no backend is reported: after a shutdown nothing is loading any more. */
function unresolvedReason(state: PluginState): string {
  if (state === 'idle') return 'no hook has been handled yet';
  if (state === 'shutting_down' || state === 'shutdown') return 'shut down before a backend was chosen';
  return 'loading';
}

export function assembleStatus(parts: StatusParts): PluginStatus {
  const { stats, counters, payloadFailures } = parts;
  // The registry counts what never reached the plugin; the plugin's own counters cannot.
  const undelivered = sum(payloadFailures.thunkThrew);
  return {
    state: parts.state,
    backend: parts.backend ?? { kind: 'unresolved', reason: unresolvedReason(parts.state) },
    sessions: parts.sessions,
    openSpans: parts.openSpans,
    queuedHooks: parts.queuedHooks,
    counters: {
      ...counters,
      events: stats?.events ?? counters.hooks,
      errors: counters.errors + (stats?.errors ?? 0),
      dropped: counters.dropped + undelivered + (stats?.dropped ?? 0),
      undelivered,
      emptyPayloads: sum(payloadFailures.notAnObject),
    },
    payloadFailures,
    outputs: parts.outputs,
    pluginConfig: parts.pluginConfig,
    diagnostics: parts.diagnostics,
  };
}
