/**
 * The NeMo Relay observability plugin.
 *
 * @module
 */

export { createNemoRelayPlugin } from './plugin.ts';
export type {
  ExecutionMiddleware,
  NemoRelayPlugin,
  NemoRelayPluginOptions,
  PluginHost,
  PluginState,
  PluginStatus,
  ShutdownOptions,
  FlushOptions,
} from './plugin.ts';
export type { PluginCounters } from './state.ts';
export { DEFAULT_SETTINGS, ENVIRONMENT_VARIABLES, loadSettings } from './settings.ts';
export type {
  AtofFileMode,
  Environment,
  LoadedSettings,
  NemoRelaySettings,
  NemoRelaySettingsOverrides,
  SubagentExportMode,
} from './settings.ts';
export { safeSessionFragment, atifFilePath, UnsafeAtifPathError } from './atif-file.ts';
