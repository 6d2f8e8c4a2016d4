/**
 * The `off` backend: accepts every call, records nothing, never throws.
 *
 * It stands in when telemetry is switched off (`backend: "off"`,
 * `NEMO_RELAY_HOOKS_BACKEND=off`) and when an explicitly requested native
 * backend cannot load, so the plugin keeps one code path. It counts what it
 * dropped, so `status()` can show how much telemetry was lost. Managed
 * execution runs the host's call unchanged.
 *
 * @module
 */

import path from 'node:path';
import type {
  AtifExporter,
  AtifExporterOptions,
  AtofExporter,
  AtofExporterOptions,
  BackendStats,
  DynamicPluginSpec,
  JsonObject,
  LlmHandle,
  ManagedLlmCall,
  ManagedLlmOptions,
  ManagedToolCall,
  ManagedToolOptions,
  OutputHealth,
  PluginConfigActivation,
  RelayBackend,
  ScopeHandle,
  ToolHandle,
} from '../relay/contract.ts';
import { stringOf } from '../shared/text.ts';

/** Diagnostic code of a plugin config that was not activated because the backend is off. */
const BACKEND_OFF = 'nemo_relay_hooks.backend_off';

export interface NoopRelay extends RelayBackend {
  readonly kind: 'off';
  /** Why the backend is off, when it stands in for another one. */
  readonly reason: string;
  executeLlm(options: ManagedLlmOptions, call: ManagedLlmCall): Promise<unknown>;
  executeTool(options: ManagedToolOptions, call: ManagedToolCall): Promise<unknown>;
  shutdown(): Promise<void>;
  stats(): BackendStats;
  outputs(): OutputHealth[];
}

// Handles carry nothing: one frozen object per kind is enough.
const SCOPE = Object.freeze({ kind: 'off-scope' }) as unknown as ScopeHandle;
const LLM = Object.freeze({ kind: 'off-llm' }) as unknown as LlmHandle;
const TOOL = Object.freeze({ kind: 'off-tool' }) as unknown as ToolHandle;

/** Creates a backend that drops everything. */
export function createNoopRelay(options: { reason?: string } = {}): NoopRelay {
  let dropped = 0;
  const drop = (events = 1): void => {
    dropped += events;
  };
  const offActivation = (): PluginConfigActivation => ({
    report: {
      diagnostics: [{ level: 'warning', code: BACKEND_OFF, message: 'the relay backend is off; the plugin config was not activated' }],
      configPaths: [],
    },
    close: () => Promise.resolve(),
  });
  return {
    kind: 'off',
    reason: options.reason ?? 'telemetry is off',
    pushScope: () => {
      drop();
      return SCOPE;
    },
    popScope: () => drop(),
    mark: () => drop(),
    llmStart: () => {
      drop();
      return LLM;
    },
    llmEnd: () => drop(),
    toolStart: () => {
      drop();
      return TOOL;
    },
    toolEnd: () => drop(),
    executeLlm: async (options, call) => {
      drop(2);
      return call(options?.request);
    },
    executeTool: async (options, call) => {
      drop(2);
      return call(options?.args);
    },
    registerAtofExporter: (options: AtofExporterOptions): AtofExporter => ({
      path: safePath(options),
      flush: () => Promise.resolve(),
      close: () => Promise.resolve(),
    }),
    registerAtifExporter: (options: AtifExporterOptions): AtifExporter => ({
      // What native's exporter returns when it saw no event: a valid, empty trajectory.
      exportJson: () => Promise.resolve(emptyTrajectory(options)),
      deregister: () => {},
    }),
    initializePluginConfig: (_document: JsonObject) => Promise.resolve(offActivation()),
    activateDynamicPlugins: (_document: JsonObject, _specs: readonly DynamicPluginSpec[]) => Promise.resolve(offActivation()),
    // Nothing is recorded, so there is nothing to drop: the plugin then skips its walk over every payload.
    dropCredentialHeaders: () => () => {},
    flush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
    stats: () => ({ events: 0, errors: 0, dropped }),
    outputs: () => [],
  };
}

function safePath(options: AtofExporterOptions | undefined): string {
  try {
    return path.resolve(stringOf(options?.outputDirectory) || '.', stringOf(options?.filename));
  } catch {
    return '';
  }
}

function emptyTrajectory(options: AtifExporterOptions | undefined): string {
  const sessionId = stringOf(options?.sessionId);
  const agent: Record<string, string> = { name: stringOf(options?.agentName), version: stringOf(options?.agentVersion) };
  if (typeof options?.modelName === 'string') agent.model_name = options.modelName;
  else if (typeof options?.fallbackModelName === 'string') agent.model_name = options.fallbackModelName;
  return JSON.stringify({
    schema_version: 'ATIF-v1.7',
    session_id: sessionId,
    trajectory_id: typeof options?.trajectoryId === 'string' ? options.trajectoryId : sessionId,
    agent,
    steps: [],
    final_metrics: { total_steps: 0 },
  });
}
