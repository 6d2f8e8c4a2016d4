/**
 * The NeMo Relay observability plugin.
 *
 * `plugin.ts` is the facade (`createNemoRelayPlugin`, `register`). Every
 * hook enters through `gate.ts` (the plugin's one state value, the start-up
 * queue, the once-per-process plugins.toml activation of `activation.ts`);
 * `handlers.ts` maps hooks to `span-recorder.ts` calls behind a fail-open guard;
 * `recording.ts` holds what records over one backend: `sessions.ts` (the session
 * table), `span-recorder.ts` (marks and spans), `trajectories.ts` (the ATIF files
 * the plugin writes, with one `atifTarget()`), `managed.ts` (managed
 * execution). `status.ts` and `shutdown.ts` answer `status()`, `flush()` and
 * `shutdown()`; `config/` reads the settings and plugins.toml.
 *
 * @module
 */

export { createNemoRelayPlugin } from './plugin.ts';
export type {
  FlushOptions,
  HookHost,
  HookHostMiddleware,
  NemoRelayPlugin,
  NemoRelayPluginOptions,
  PluginState,
  PluginStatus,
  RedactableEvent,
  RedactedFields,
  RedactHook,
  ShutdownOptions,
} from './plugin.ts';
export type { PluginCounters } from './status.ts';
export { ENVIRONMENT_VARIABLES, loadSettings } from './config/settings.ts';
export type {
  AtofFileMode,
  DerivedSetting,
  Environment,
  LoadedSettings,
  NemoRelaySettings,
  NemoRelaySettingsOverrides,
  SubagentExportMode,
} from './config/settings.ts';
export type { OtlpEnvProtocol, OtlpEnvSettings, OtlpEnvType } from './config/otlp-env.ts';
export { safeSessionFragment, atifFilePath, UnsafeAtifPathError } from './atif-file.ts';
