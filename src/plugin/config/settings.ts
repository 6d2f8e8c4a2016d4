/**
 * Plugin settings from `HERMES_NEMO_RELAY_*` environment variables, an
 * optional `plugins.toml`, and typed overrides.
 *
 * Environment variables configure the plugin; they do not enable it (a host
 * enables it by registering it). Precedence, lowest to highest: built-in
 * defaults, environment variables, `options.settings`. Invalid values never
 * throw: they fall back to the default and produce a diagnostic, so a typo
 * is visible in `status()` and `nemo-relay-hooks doctor` instead of silently
 * producing no files.
 *
 * @module
 */

import type { ConfigDiagnostic, DynamicPluginSpec, JsonObject } from '../../relay/contract.ts';
import { deniedEnv, guardEnv, type Environment } from '../../shared/env.ts';
import { adaptiveModeOf, loadPluginsToml, pluginsTomlDiagnostics } from './plugins-toml.ts';
import { dynamicPluginSpecs, enabledComponentConfig } from '../../formats/plugins-toml/document.ts';
import {
  DEFAULT_OTLP_ENV_SETTINGS,
  OTLP_ENV_CHOICES,
  OTLP_ENVIRONMENT_VARIABLES,
  otlpPluginDocument,
  otlpSettingsFromEnv,
  type OtlpEnvSettings,
} from './otlp-env.ts';

/** How the env ATOF file is opened: appended to, or written afresh. */
export type AtofFileMode = 'append' | 'overwrite';
/** Whether subagents' trajectories are only embedded in their parent's file, or also written to files of their own. */
export type SubagentExportMode = 'embedded' | 'all';

/** The resolved settings the plugin runs with (OTLP: see `otlp-env.ts`). */
export interface NemoRelaySettings extends OtlpEnvSettings {
  /** `HERMES_NEMO_RELAY_PLUGINS_TOML`: path of a relay `plugins.toml`. */
  pluginsTomlPath: string;
  /** The parsed `plugins.toml` document, or null. */
  pluginsConfig: JsonObject | null;
  /** Validated `[[dynamic_plugins]]` specs (empty when any spec is invalid). */
  dynamicPlugins: DynamicPluginSpec[];
  /** True when `plugins.toml` enables the `adaptive` component. */
  adaptiveEnabled: boolean;
  /** The `adaptive` component's `mode`, empty when it has none. */
  adaptiveMode: string;
  /** `HERMES_NEMO_RELAY_ATOF_ENABLED` */
  atofEnabled: boolean;
  /** `HERMES_NEMO_RELAY_ATOF_OUTPUT_DIRECTORY` (empty: working directory) */
  atofOutputDirectory: string;
  /** `HERMES_NEMO_RELAY_ATOF_FILENAME` */
  atofFilename: string;
  /** `HERMES_NEMO_RELAY_ATOF_MODE` */
  atofMode: AtofFileMode;
  /** `HERMES_NEMO_RELAY_ATIF_ENABLED` */
  atifEnabled: boolean;
  /** `HERMES_NEMO_RELAY_ATIF_OUTPUT_DIRECTORY` (empty: no ATIF file is written) */
  atifOutputDirectory: string;
  /** `HERMES_NEMO_RELAY_ATIF_FILENAME_TEMPLATE`, must contain `{session_id}` */
  atifFilenameTemplate: string;
  /** `HERMES_NEMO_RELAY_ATIF_SUBAGENT_EXPORT_MODE` */
  atifSubagentExportMode: SubagentExportMode;
  /** `HERMES_NEMO_RELAY_ATIF_AGENT_NAME` */
  atifAgentName: string;
  /** `HERMES_NEMO_RELAY_ATIF_AGENT_VERSION` */
  atifAgentVersion: string;
  /** `HERMES_NEMO_RELAY_ATIF_MODEL_NAME` (a session's `model` wins) */
  atifModelName: string;
}

/** Settings derived from plugins.toml, which a host cannot override. */
const DERIVED_SETTINGS = ['pluginsConfig', 'dynamicPlugins', 'adaptiveEnabled', 'adaptiveMode'] as const satisfies readonly DerivedSetting[];

/** The settings read from plugins.toml, which overrides cannot set. */
export type DerivedSetting = 'pluginsConfig' | 'dynamicPlugins' | 'adaptiveEnabled' | 'adaptiveMode';

/** Typed overrides accepted by `createNemoRelayPlugin({ settings })`. */
export type NemoRelaySettingsOverrides = Partial<Omit<NemoRelaySettings, DerivedSetting>>;

/** The settings with no environment and no overrides. */
export const DEFAULT_SETTINGS: Readonly<NemoRelaySettings> = Object.freeze({
  pluginsTomlPath: '',
  pluginsConfig: null,
  dynamicPlugins: [],
  adaptiveEnabled: false,
  adaptiveMode: 'observe_only',
  atofEnabled: false,
  atofOutputDirectory: '',
  atofFilename: 'hermes-atof.jsonl',
  atofMode: 'append',
  atifEnabled: false,
  atifOutputDirectory: '',
  atifFilenameTemplate: 'hermes-atif-{session_id}.json',
  atifSubagentExportMode: 'embedded',
  atifAgentName: 'Hermes Agent',
  atifAgentVersion: 'unknown',
  atifModelName: 'unknown',
  ...DEFAULT_OTLP_ENV_SETTINGS,
});

/** Every environment variable the plugin reads, with its default and meaning (for docs and `doctor`). */
export const ENVIRONMENT_VARIABLES: readonly { name: string; default: string; meaning: string }[] = [
  { name: 'HERMES_NEMO_RELAY_PLUGINS_TOML', default: '(unset)', meaning: 'Path to a NeMo Relay plugins.toml; when it activates, it is the primary configuration.' },
  { name: 'HERMES_NEMO_RELAY_ATOF_ENABLED', default: 'off', meaning: 'Write ATOF events (truthy: 1, true, yes, on).' },
  { name: 'HERMES_NEMO_RELAY_ATOF_OUTPUT_DIRECTORY', default: '(working directory)', meaning: 'Folder of the ATOF file; created when missing.' },
  { name: 'HERMES_NEMO_RELAY_ATOF_FILENAME', default: 'hermes-atof.jsonl', meaning: 'ATOF file name.' },
  { name: 'HERMES_NEMO_RELAY_ATOF_MODE', default: 'append', meaning: 'append or overwrite.' },
  { name: 'HERMES_NEMO_RELAY_ATIF_ENABLED', default: 'off', meaning: 'Write one ATIF trajectory per session.' },
  { name: 'HERMES_NEMO_RELAY_ATIF_OUTPUT_DIRECTORY', default: '(unset: nothing written)', meaning: 'Folder of the ATIF files.' },
  { name: 'HERMES_NEMO_RELAY_ATIF_FILENAME_TEMPLATE', default: 'hermes-atif-{session_id}.json', meaning: 'File name template; must contain {session_id}.' },
  { name: 'HERMES_NEMO_RELAY_ATIF_AGENT_NAME', default: 'Hermes Agent', meaning: 'agent.name in ATIF.' },
  { name: 'HERMES_NEMO_RELAY_ATIF_AGENT_VERSION', default: 'unknown', meaning: 'agent.version in ATIF.' },
  { name: 'HERMES_NEMO_RELAY_ATIF_MODEL_NAME', default: 'unknown', meaning: 'agent.model_name in ATIF when the session has no model.' },
  { name: 'HERMES_NEMO_RELAY_ATIF_SUBAGENT_EXPORT_MODE', default: 'embedded', meaning: 'embedded, or all to also write standalone files for subagents.' },
  { name: 'NEMO_RELAY_HOOKS_BACKEND', default: '(auto)', meaning: 'Force the backend: native, memory or off.' },
  ...OTLP_ENVIRONMENT_VARIABLES,
  { name: 'NEMO_RELAY_HOOKS_DEBUG', default: '(off)', meaning: 'Debug and info output of the default logger (truthy: 1, true, yes, on; false, 0, no, off stay off). DEBUG=nemo-relay-hooks does the same.' },
];

const TRUTHY = new Set(['1', 'true', 'yes', 'on']);
const FALSY = new Set(['', '0', 'false', 'no', 'off']);

export type { Environment } from '../../shared/env.ts';

/** What `loadSettings` returns. */
export interface LoadedSettings {
  /** The settings the plugin runs with. */
  settings: NemoRelaySettings;
  /** What was wrong with the environment, the overrides or plugins.toml (each one fell back to a default). */
  diagnostics: ConfigDiagnostic[];
}

/** Resolves settings from the environment and overrides. Never throws. */
export function loadSettings(given: Environment, overrides: NemoRelaySettingsOverrides = {}): LoadedSettings {
  const diagnostics: ConfigDiagnostic[] = [];
  // A runtime may refuse to let us read the environment (Deno without --allow-env): defaults, and a diagnostic.
  const env = guardEnv(given);
  const read = (name: string): string => {
    const value = env[name];
    return typeof value === 'string' ? value.trim() : '';
  };
  const flag = (name: string): boolean => {
    const value = read(name).toLowerCase();
    if (TRUTHY.has(value)) return true;
    if (!FALSY.has(value)) {
      diagnostics.push(invalidValue(name, `${name}=${JSON.stringify(env[name])} is not a recognised boolean (1, true, yes, on / 0, false, no, off); treating it as off`));
    }
    return false;
  };

  const atofModeRaw = read('HERMES_NEMO_RELAY_ATOF_MODE').toLowerCase();
  let atofMode: AtofFileMode = 'append';
  if (atofModeRaw === 'overwrite') atofMode = 'overwrite';
  else if (atofModeRaw !== '' && atofModeRaw !== 'append') {
    diagnostics.push(invalidValue('HERMES_NEMO_RELAY_ATOF_MODE', `HERMES_NEMO_RELAY_ATOF_MODE=${JSON.stringify(env.HERMES_NEMO_RELAY_ATOF_MODE)} must be append or overwrite; using append`));
  }

  const exportModeRaw = read('HERMES_NEMO_RELAY_ATIF_SUBAGENT_EXPORT_MODE').toLowerCase();
  let atifSubagentExportMode: SubagentExportMode = 'embedded';
  if (exportModeRaw === 'all') atifSubagentExportMode = 'all';
  else if (exportModeRaw !== '' && exportModeRaw !== 'embedded') {
    diagnostics.push(invalidValue('HERMES_NEMO_RELAY_ATIF_SUBAGENT_EXPORT_MODE', `HERMES_NEMO_RELAY_ATIF_SUBAGENT_EXPORT_MODE=${JSON.stringify(env.HERMES_NEMO_RELAY_ATIF_SUBAGENT_EXPORT_MODE)} must be embedded or all; using embedded`));
  }

  const fromEnv: NemoRelaySettings = {
    ...DEFAULT_SETTINGS,
    dynamicPlugins: [],
    pluginsTomlPath: read('HERMES_NEMO_RELAY_PLUGINS_TOML'),
    atofEnabled: flag('HERMES_NEMO_RELAY_ATOF_ENABLED'),
    atofOutputDirectory: read('HERMES_NEMO_RELAY_ATOF_OUTPUT_DIRECTORY'),
    atofFilename: read('HERMES_NEMO_RELAY_ATOF_FILENAME') || DEFAULT_SETTINGS.atofFilename,
    atofMode,
    atifEnabled: flag('HERMES_NEMO_RELAY_ATIF_ENABLED'),
    atifOutputDirectory: read('HERMES_NEMO_RELAY_ATIF_OUTPUT_DIRECTORY'),
    atifFilenameTemplate: read('HERMES_NEMO_RELAY_ATIF_FILENAME_TEMPLATE') || DEFAULT_SETTINGS.atifFilenameTemplate,
    atifSubagentExportMode,
    atifAgentName: read('HERMES_NEMO_RELAY_ATIF_AGENT_NAME') || DEFAULT_SETTINGS.atifAgentName,
    atifAgentVersion: read('HERMES_NEMO_RELAY_ATIF_AGENT_VERSION') || DEFAULT_SETTINGS.atifAgentVersion,
    atifModelName: read('HERMES_NEMO_RELAY_ATIF_MODEL_NAME') || DEFAULT_SETTINGS.atifModelName,
    ...otlpSettingsFromEnv(env, flag, diagnostics),
  };
  const settings: NemoRelaySettings = { ...fromEnv, ...validOverrides(overrides, diagnostics) };

  const toml = loadPluginsToml(settings.pluginsTomlPath);
  diagnostics.push(...toml.diagnostics);
  settings.pluginsConfig = toml.document;
  diagnostics.push(...pluginsTomlDiagnostics(toml.document));
  if (settings.otlpEnabled) {
    if (settings.pluginsConfig === null && !settings.pluginsTomlPath) {
      // Both backends then read OTLP (and the env ATOF file) from the same plugins.toml document.
      settings.pluginsConfig = otlpPluginDocument(
        settings,
        { enabled: settings.atofEnabled, outputDirectory: settings.atofOutputDirectory, filename: settings.atofFilename, mode: settings.atofMode },
        diagnostics,
      );
    } else {
      diagnostics.push({
        level: 'warning',
        code: 'settings.otlp_with_plugins_toml',
        field: 'HERMES_NEMO_RELAY_OTLP_ENABLED',
        message: 'HERMES_NEMO_RELAY_OTLP_ENABLED is ignored when HERMES_NEMO_RELAY_PLUGINS_TOML is set: configure OTLP in its [components.config.opentelemetry] section',
      });
    }
  }
  const dynamic = dynamicPluginSpecs(toml.document, settings.pluginsTomlPath);
  diagnostics.push(...dynamic.diagnostics);
  settings.dynamicPlugins = dynamic.specs;
  const adaptive = enabledComponentConfig(toml.document, 'adaptive');
  settings.adaptiveEnabled = adaptive !== null;
  settings.adaptiveMode = adaptiveModeOf(adaptive);

  if (settings.atifEnabled && !settings.atifFilenameTemplate.includes('{session_id}')) {
    diagnostics.push({
      level: 'warning',
      code: 'settings.template_without_session_id',
      field: 'HERMES_NEMO_RELAY_ATIF_FILENAME_TEMPLATE',
      message: `ATIF filename template ${JSON.stringify(settings.atifFilenameTemplate)} has no {session_id}: every session would overwrite the same file, so "-{session_id}" is appended before the extension`,
    });
  }
  if (settings.atifEnabled && /[\\/]/.test(settings.atifFilenameTemplate.split('{session_id}').join(''))) {
    diagnostics.push({
      level: 'warning',
      code: 'settings.template_with_path',
      field: 'HERMES_NEMO_RELAY_ATIF_FILENAME_TEMPLATE',
      message: `ATIF filename template ${JSON.stringify(settings.atifFilenameTemplate)} contains a path separator: files land in sub-folders of the output directory, and any that would leave it are refused at write time`,
    });
  }
  const denied = deniedEnv(env);
  if (denied !== null) {
    diagnostics.push({
      level: 'warning',
      code: 'settings.permission_denied',
      field: denied.names[0]!,
      message: `the runtime refused to read ${denied.names.join(', ')} (${denied.message}); using the defaults (Deno: run with --allow-env)`,
    });
  }
  if (settings.atifEnabled && !settings.atifOutputDirectory && !settings.pluginsConfig) {
    diagnostics.push({
      level: 'warning',
      code: 'settings.atif_without_output_directory',
      field: 'HERMES_NEMO_RELAY_ATIF_OUTPUT_DIRECTORY',
      message: 'ATIF is enabled but HERMES_NEMO_RELAY_ATIF_OUTPUT_DIRECTORY is empty: no ATIF file will be written',
    });
  }
  return { settings, diagnostics };
}

function invalidValue(fieldName: string, message: string): ConfigDiagnostic {
  return { level: 'warning', code: 'settings.invalid_value', field: fieldName, message };
}

const OVERRIDE_CHOICES: Partial<Record<keyof NemoRelaySettingsOverrides, readonly string[]>> = {
  atofMode: ['append', 'overwrite'],
  atifSubagentExportMode: ['embedded', 'all'],
  ...OTLP_ENV_CHOICES,
};

/**
 * The host's typed overrides that are usable: each must have the type of its
 * default (and one of the allowed words where there is a choice). Anything
 * else gets a diagnostic and the environment's value stays, so a bad
 * setting cannot make `register()` throw or reach the file system.
 */
function validOverrides(overrides: unknown, diagnostics: ConfigDiagnostic[]): Partial<NemoRelaySettings> {
  const out: Record<string, unknown> = {};
  if (overrides === undefined || overrides === null) return out as Partial<NemoRelaySettings>;
  if (typeof overrides !== 'object') {
    diagnostics.push(invalidValue('settings', `settings must be an object of overrides, got ${typeof overrides}; ignoring it`));
    return out as Partial<NemoRelaySettings>;
  }
  let keys: string[];
  try {
    keys = Object.keys(overrides);
  } catch (error) {
    diagnostics.push(invalidValue('settings', `settings could not be read (${errorText(error)}); ignoring it`));
    return out as Partial<NemoRelaySettings>;
  }
  for (const key of keys) {
    let value: unknown;
    try {
      value = (overrides as Record<string, unknown>)[key];
    } catch (error) {
      diagnostics.push(invalidValue(`settings.${key}`, `settings.${key} could not be read (${errorText(error)}); ignoring it`));
      continue;
    }
    if (value === undefined) continue;
    if (!(key in DEFAULT_SETTINGS) || (DERIVED_SETTINGS as readonly string[]).includes(key)) {
      diagnostics.push(invalidValue(`settings.${key}`, `settings.${key} is not a setting the host can override; ignoring it`));
      continue;
    }
    const expected = typeof DEFAULT_SETTINGS[key as keyof NemoRelaySettings];
    const choices = OVERRIDE_CHOICES[key as keyof NemoRelaySettingsOverrides];
    if (typeof value !== expected || (choices !== undefined && !choices.includes(value as string))) {
      const wanted = choices !== undefined ? `one of ${choices.join(', ')}` : `a ${expected}`;
      diagnostics.push(invalidValue(`settings.${key}`, `settings.${key} must be ${wanted}, got ${describeValue(value)}; ignoring it`));
      continue;
    }
    out[key] = value;
  }
  return out as Partial<NemoRelaySettings>;
}

function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return typeof value;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
