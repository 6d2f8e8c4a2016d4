/**
 * nemo-relay-hooks: zero-cost observer hooks for TypeScript agent hosts, and
 * the NeMo Relay observability plugin that turns them into ATOF events and
 * ATIF trajectories.
 *
 * - Hosts: `HookRegistry`, `HOOK_NAMES`, the payload types and the
 *   correlation-id helpers.
 * - Observability: `createNemoRelayPlugin`, the backend choice
 *   (`resolveBackend`), and the `RelayBackend` contract for custom backends.
 * - Formats: the ATOF/ATIF types, `AtifBuilder`, `validateAtif` and
 *   `validateAtofEvents`.
 * - Recording: `createHookRecorder` writes every emitted hook to a JSONL
 *   file that `nemo-relay-hooks replay` turns into ATOF/ATIF later.
 *
 * The in-memory relay is in `nemo-relay-hooks/memory`, the native adapter in
 * `nemo-relay-hooks/native`, and the recording fake in
 * `nemo-relay-hooks/testing`.
 *
 * @module
 */

export * from './hooks/index.ts';

export {
  createNemoRelayPlugin,
  ENVIRONMENT_VARIABLES,
  loadSettings,
  safeSessionFragment,
  atifFilePath,
  UnsafeAtifPathError,
} from './plugin/index.ts';
export type {
  AtofFileMode,
  Environment,
  LoadedSettings,
  NemoRelayPlugin,
  NemoRelayPluginOptions,
  NemoRelaySettings,
  NemoRelaySettingsOverrides,
  DerivedSetting,
  OtlpEnvProtocol,
  OtlpEnvSettings,
  OtlpEnvType,
  PluginCounters,
  HookHost,
  HookHostMiddleware,
  PluginHost,
  PluginState,
  PluginStatus,
  ShutdownOptions,
  FlushOptions,
  SubagentExportMode,
} from './plugin/index.ts';

export { BACKEND_ENV, resolveBackend } from './backends/select.ts';
export type { BackendChoice, BackendName, ResolvedBackend, ResolveBackendOptions } from './backends/select.ts';
export { detectRuntime } from './shared/js-runtime.ts';
export type { RuntimeGlobals, RuntimeName } from './shared/js-runtime.ts';
export type * from './relay/contract.ts';
export { SCOPE_CATEGORIES, isScopeCategory } from './relay/contract.ts';
export { toJson } from './shared/json.ts';
export type { ToJsonOptions } from './shared/json.ts';
export { formatTimestamp, nowMicros, parseTimestamp } from './shared/clock.ts';

export * from './formats/index.ts';

export { createHookRecorder } from './hook-log/hook-recorder.ts';
export type { HookRecorder, HookRecorderOptions, RecordableHost } from './hook-log/hook-recorder.ts';

export { adaptLogger, debugEnabled, getLogger, setLogger } from './shared/logger.ts';
export type { LogFunction, LoggerLike } from './shared/logger.ts';
