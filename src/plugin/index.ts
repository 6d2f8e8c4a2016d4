/**
 * The NeMo Relay observability plugin.
 *
 * @module
 */

export { createNemoRelayPlugin } from './plugin.ts';
export type {
  ExecutionMiddleware,
  FlushOptions,
  HookHost,
  HookHostMiddleware,
  NemoRelayPlugin,
  NemoRelayPluginOptions,
  PluginHost,
  PluginState,
  PluginStatus,
  ShutdownOptions,
} from './plugin.ts';
export type { PluginCounters } from './status.ts';
export { DEFAULT_SETTINGS, ENVIRONMENT_VARIABLES, loadSettings } from './config/settings.ts';
export type {
  AtofFileMode,
  Environment,
  LoadedSettings,
  NemoRelaySettings,
  NemoRelaySettingsOverrides,
  SubagentExportMode,
} from './config/settings.ts';
export { safeSessionFragment, atifFilePath, UnsafeAtifPathError } from './atif-file.ts';
