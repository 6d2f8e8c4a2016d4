/**
 * nemo-relay-hooks: the NeMo Relay observability plugin for agent hosts.
 * Register it on a `HookRegistry` and it records the hooks the host emits as
 * ATOF events and ATIF trajectories (by default under `./nemo-relay-output/`),
 * and sends them over OTLP, streams and uploads as configured.
 *
 * This entry holds what a plugin user needs. The rest has its own subpath:
 * - `nemo-relay-hooks/hooks`: the host API (payload types, middleware, ids);
 * - `nemo-relay-hooks/formats`: ATOF/ATIF types, `AtifBuilder`, the validators;
 * - `nemo-relay-hooks/backend`: the `RelayBackend` contract and its errors;
 * - `nemo-relay-hooks/memory`, `nemo-relay-hooks/native`: the two backends;
 * - `nemo-relay-hooks/testing`: the recording fake;
 * - `nemo-relay-hooks/ai-sdk`, `/openai-agents`, `/langchain`,
 *   `/claude-agent-sdk`: the framework adapters.
 *
 * @module
 */

export { createNemoRelayPlugin } from './plugin/plugin.ts';
export type {
  FlushOptions,
  HookHost,
  HookHostMiddleware,
  NemoRelayPlugin,
  NemoRelayPluginOptions,
  PluginState,
  PluginStatus,
  ShutdownOptions,
} from './plugin/plugin.ts';
export type { PluginCounters } from './plugin/status.ts';
export type {
  AtofFileMode,
  Environment,
  NemoRelaySettings,
  NemoRelaySettingsOverrides,
  SubagentExportMode,
} from './plugin/config/settings.ts';
export type { OtlpEnvProtocol, OtlpEnvType } from './plugin/config/otlp-env.ts';
export type { ConfigDiagnostic, OutputHealth } from './relay/contract.ts';

export { HookRegistry } from './hooks/index.ts';

export { resolveBackend } from './backends/select.ts';
export type { BackendChoice, BackendName, ResolvedBackend, ResolveBackendOptions } from './backends/select.ts';

export { createHookRecorder } from './hook-log/hook-recorder.ts';
export type { HookRecorder, HookRecorderOptions } from './hook-log/hook-recorder.ts';

export { setLogger } from './shared/logger.ts';
export type { LoggerLike } from './shared/logger.ts';
