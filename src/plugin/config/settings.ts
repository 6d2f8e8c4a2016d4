/**
 * Plugin settings: the settings table (every variable, its typed setting,
 * its defaults and its meaning, which the docs are generated from), and
 * `loadSettings`, which resolves them from the environment, an optional
 * `plugins.toml` and the host's typed overrides.
 *
 * Precedence, lowest to highest: defaults, environment variables,
 * `options.settings`. Each variable has one neutral name
 * (`NEMO_RELAY_HOOKS_*`); the Hermes plugin's `HERMES_NEMO_RELAY_*` names
 * are read too, and the neutral one wins when both are set.
 *
 * Two sets of defaults:
 * - **default**: with nothing configured, the plugin records ATOF events and
 *   ATIF trajectories under `nemo-relay-output/` in the working directory,
 *   named after the host (`<host>-atof.jsonl`, `<host>-atif-{session_id}.json`,
 *   agent `<host>`, from its package.json). A `plugins.toml`, or
 *   `NEMO_RELAY_HOOKS_OUTPUTS=off`, turns those default outputs off; what is
 *   enabled explicitly still applies.
 * - **hermes**: as soon as any `HERMES_NEMO_RELAY_*` variable is set, the
 *   Hermes plugin's defaults apply unchanged (nothing is written until its
 *   environment enables it, `hermes-atof.jsonl`, `hermes-atif-{session_id}.json`,
 *   "Hermes Agent"), so a Hermes host sees no change.
 *
 * Invalid values never throw: they fall back to the default and produce a
 * diagnostic, so a typo is visible in `status()` and `nemo-relay-hooks
 * doctor` instead of silently producing no files.
 *
 * @module
 */

import type { ConfigDiagnostic, DynamicPluginSpec, JsonObject } from '../../relay/contract.ts';
import { deniedEnv, envNames, guardEnv, processEnv, REFUSED_ENV_FIX, type Environment } from '../../shared/env.ts';
import { adaptiveModeOf, loadPluginsToml, pluginsTomlDiagnostics } from './plugins-toml.ts';
import { componentEnabledMistyped, dynamicPluginSpecs, enabledComponentConfig } from '../../formats/plugins-toml/document.ts';
import { hostIdentity, type HostIdentity } from './host-identity.ts';
import {
  DEFAULT_OTLP_ENV_SETTINGS,
  OTLP_ENV_CHOICES,
  OTLP_ENVIRONMENT_VARIABLES,
  otlpPluginDocument,
  otlpSettingsFromEnv,
  type OtlpEnvSettings,
} from './otlp-env.ts';
import { errorMessage } from '../../shared/error-text.ts';
import { listSome } from '../../shared/text.ts';
import { nearMiss } from '../../shared/near-miss.ts';
import { isPlainFileName } from '../../shared/safe-path.ts';

/** How the env ATOF file is opened: appended to, or written afresh. */
export type AtofFileMode = 'append' | 'overwrite';
/** Whether subagents' trajectories are only embedded in their parent's file, or also written to files of their own. */
export type SubagentExportMode = 'embedded' | 'all';

/** The resolved settings the plugin runs with (OTLP: see `otlp-env.ts`). */
export interface NemoRelaySettings extends OtlpEnvSettings {
  /** `NEMO_RELAY_HOOKS_OUTPUTS`: false turns the default outputs off (what is enabled explicitly still applies). */
  outputs: boolean;
  /** `NEMO_RELAY_HOOKS_PLUGINS_TOML`: path of a relay `plugins.toml`. */
  pluginsTomlPath: string;
  /** The parsed `plugins.toml` document, or null. */
  pluginsConfig: JsonObject | null;
  /** Validated `[[dynamic_plugins]]` specs (empty when any spec is invalid). */
  dynamicPlugins: DynamicPluginSpec[];
  /** True when `plugins.toml` enables the `adaptive` component. */
  adaptiveEnabled: boolean;
  /** The `adaptive` component's `mode`, empty when it has none. */
  adaptiveMode: string;
  /** `NEMO_RELAY_HOOKS_ATOF_ENABLED` */
  atofEnabled: boolean;
  /** `NEMO_RELAY_HOOKS_ATOF_OUTPUT_DIRECTORY` (empty: working directory) */
  atofOutputDirectory: string;
  /** `NEMO_RELAY_HOOKS_ATOF_FILENAME` */
  atofFilename: string;
  /** `NEMO_RELAY_HOOKS_ATOF_MODE` */
  atofMode: AtofFileMode;
  /** `NEMO_RELAY_HOOKS_ATIF_ENABLED` */
  atifEnabled: boolean;
  /** `NEMO_RELAY_HOOKS_ATIF_OUTPUT_DIRECTORY` (empty: no ATIF file is written) */
  atifOutputDirectory: string;
  /** `NEMO_RELAY_HOOKS_ATIF_FILENAME_TEMPLATE`, must contain `{session_id}` */
  atifFilenameTemplate: string;
  /** `NEMO_RELAY_HOOKS_ATIF_SUBAGENT_EXPORT_MODE` */
  atifSubagentExportMode: SubagentExportMode;
  /** `NEMO_RELAY_HOOKS_ATIF_AGENT_NAME` */
  atifAgentName: string;
  /** `NEMO_RELAY_HOOKS_ATIF_AGENT_VERSION` */
  atifAgentVersion: string;
  /** `NEMO_RELAY_HOOKS_ATIF_MODEL_NAME` */
  atifModelName: string;
}

/** Settings derived from plugins.toml, which a host cannot override. */
const DERIVED_SETTINGS = ['pluginsConfig', 'dynamicPlugins', 'adaptiveEnabled', 'adaptiveMode'] as const satisfies readonly DerivedSetting[];

/** The settings read from plugins.toml, which overrides cannot set. */
export type DerivedSetting = 'pluginsConfig' | 'dynamicPlugins' | 'adaptiveEnabled' | 'adaptiveMode';

/** Typed overrides accepted by `createNemoRelayPlugin({ settings })`. */
export type NemoRelaySettingsOverrides = Partial<Omit<NemoRelaySettings, DerivedSetting>>;

/** Where the plugin records when nothing is configured, relative to the working directory. */
export const DEFAULT_OUTPUT_DIRECTORY = 'nemo-relay-output';

/** Which defaults apply: the library's own, or the Hermes plugin's (any `HERMES_NEMO_RELAY_*` variable set). */
export type SettingsProfile = 'default' | 'hermes';

/**
 * The Hermes plugin's settings with nothing enabled: the defaults of the
 * `hermes` profile, and the shape (types) every override is checked against.
 * `Object.assign` rather than a spread here and in `OVERRIDE_CHOICES`: these
 * run at import, and on Bun a spread's first use compiles the builtin behind
 * it (bench/RESULTS.md, "Issue 21: the main entry's import on Bun, what runs
 * at import").
 */
const HERMES_DEFAULTS: Readonly<NemoRelaySettings> = Object.freeze(Object.assign<Omit<NemoRelaySettings, keyof OtlpEnvSettings>, OtlpEnvSettings>({
  outputs: true,
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
}, DEFAULT_OTLP_ENV_SETTINGS));

/** One variable the plugin reads: its typed setting, its names, its defaults and what it does. */
export interface EnvironmentVariable {
  /** The variable (`NEMO_RELAY_HOOKS_*`, or a standard `OTEL_*` one). */
  name: string;
  /** The Hermes plugin's name for it, read as well (the neutral name wins when both are set). */
  hermes?: string;
  /** The typed setting it feeds (`createNemoRelayPlugin({ settings: { <setting> } })`), when there is one. */
  setting?: keyof NemoRelaySettingsOverrides;
  /** The default, as text. */
  default: string;
  /** The default once a `HERMES_NEMO_RELAY_*` variable is set, when it differs. */
  hermesDefault?: string;
  /** What it does. */
  meaning: string;
}

type Parse = 'flag' | 'text' | readonly string[];

interface SettingRow extends EnvironmentVariable {
  setting: keyof NemoRelaySettingsOverrides;
  parse: Parse;
}

/** The settings table: every plugin variable with a typed setting (OTLP's are in `otlp-env.ts`). */
const SETTING_ROWS: readonly SettingRow[] = [
  {
    name: 'NEMO_RELAY_HOOKS_OUTPUTS', setting: 'outputs', parse: 'flag', default: 'on',
    meaning: 'off turns the default outputs off: nothing is written unless it is enabled explicitly (NEMO_RELAY_HOOKS_BACKEND=off records nothing at all). Read from the process environment even when the host passes its own env.',
  },
  {
    name: 'NEMO_RELAY_HOOKS_PLUGINS_TOML', hermes: 'HERMES_NEMO_RELAY_PLUGINS_TOML', setting: 'pluginsTomlPath', parse: 'text', default: '(unset)',
    meaning: 'Path to a NeMo Relay plugins.toml; when it activates, it is the primary configuration. Once it is set the default outputs are off, even if the document is rejected (then only what the variables enable is written).',
  },
  {
    name: 'NEMO_RELAY_HOOKS_ATOF_ENABLED', hermes: 'HERMES_NEMO_RELAY_ATOF_ENABLED', setting: 'atofEnabled', parse: 'flag',
    default: 'on (off with a plugins.toml or NEMO_RELAY_HOOKS_OUTPUTS=off)', hermesDefault: 'off',
    meaning: 'Write ATOF events (1, true, yes, on / 0, false, no, off).',
  },
  {
    name: 'NEMO_RELAY_HOOKS_ATOF_OUTPUT_DIRECTORY', hermes: 'HERMES_NEMO_RELAY_ATOF_OUTPUT_DIRECTORY', setting: 'atofOutputDirectory', parse: 'text',
    default: DEFAULT_OUTPUT_DIRECTORY, hermesDefault: '(working directory)',
    meaning: 'Folder of the ATOF file, relative to the working directory; created when missing.',
  },
  {
    name: 'NEMO_RELAY_HOOKS_ATOF_FILENAME', hermes: 'HERMES_NEMO_RELAY_ATOF_FILENAME', setting: 'atofFilename', parse: 'text',
    default: '<host>-atof.jsonl', hermesDefault: 'hermes-atof.jsonl',
    meaning: 'ATOF file name (<host>: the name in the host\'s package.json).',
  },
  {
    name: 'NEMO_RELAY_HOOKS_ATOF_MODE', hermes: 'HERMES_NEMO_RELAY_ATOF_MODE', setting: 'atofMode', parse: ['append', 'overwrite'], default: 'append',
    meaning: 'append or overwrite.',
  },
  {
    name: 'NEMO_RELAY_HOOKS_ATIF_ENABLED', hermes: 'HERMES_NEMO_RELAY_ATIF_ENABLED', setting: 'atifEnabled', parse: 'flag',
    default: 'on (off with a plugins.toml or NEMO_RELAY_HOOKS_OUTPUTS=off)', hermesDefault: 'off',
    meaning: 'Write one ATIF trajectory per session.',
  },
  {
    name: 'NEMO_RELAY_HOOKS_ATIF_OUTPUT_DIRECTORY', hermes: 'HERMES_NEMO_RELAY_ATIF_OUTPUT_DIRECTORY', setting: 'atifOutputDirectory', parse: 'text',
    default: DEFAULT_OUTPUT_DIRECTORY, hermesDefault: '(unset: nothing is written)',
    meaning: 'Folder of the ATIF files, relative to the working directory.',
  },
  {
    name: 'NEMO_RELAY_HOOKS_ATIF_FILENAME_TEMPLATE', hermes: 'HERMES_NEMO_RELAY_ATIF_FILENAME_TEMPLATE', setting: 'atifFilenameTemplate', parse: 'text',
    default: '<host>-atif-{session_id}.json', hermesDefault: 'hermes-atif-{session_id}.json',
    meaning: 'File name template; must contain {session_id}.',
  },
  {
    name: 'NEMO_RELAY_HOOKS_ATIF_AGENT_NAME', hermes: 'HERMES_NEMO_RELAY_ATIF_AGENT_NAME', setting: 'atifAgentName', parse: 'text',
    default: '<host> (an adapter\'s framework agent name comes first)', hermesDefault: 'Hermes Agent',
    meaning: 'agent.name in ATIF; set, it wins over the name an adapter reports.',
  },
  {
    name: 'NEMO_RELAY_HOOKS_ATIF_AGENT_VERSION', hermes: 'HERMES_NEMO_RELAY_ATIF_AGENT_VERSION', setting: 'atifAgentVersion', parse: 'text',
    default: '<host version> (from package.json, else unknown)', hermesDefault: 'unknown',
    meaning: 'agent.version in ATIF.',
  },
  {
    name: 'NEMO_RELAY_HOOKS_ATIF_MODEL_NAME', hermes: 'HERMES_NEMO_RELAY_ATIF_MODEL_NAME', setting: 'atifModelName', parse: 'text',
    default: 'unknown (the model the session reports comes first)',
    meaning: 'agent.model_name in ATIF. Set under the neutral name, it wins over the session\'s model; under the Hermes name, as in Hermes, it applies only when the session reports none.',
  },
  {
    name: 'NEMO_RELAY_HOOKS_ATIF_SUBAGENT_EXPORT_MODE', hermes: 'HERMES_NEMO_RELAY_ATIF_SUBAGENT_EXPORT_MODE', setting: 'atifSubagentExportMode', parse: ['embedded', 'all'],
    default: 'embedded',
    meaning: 'embedded, or all to also write standalone files for subagents.',
  },
];

let environment: readonly EnvironmentVariable[] | undefined;
/**
 * Every environment variable the plugin reads, with its default and meaning (the docs' table and `doctor` read it).
 * Made at the first call, not at import: the spread and rest it takes run, and on Bun compile the builtins behind
 * them, in every host that imports the main entry (bench/RESULTS.md, "Issue 21: the main entry's import on Bun,
 * what runs at import").
 */
export function environmentVariables(): readonly EnvironmentVariable[] {
  environment ??= [
    ...SETTING_ROWS.map(({ parse: _parse, ...row }) => row),
    { name: 'NEMO_RELAY_HOOKS_BACKEND', default: '(auto)', meaning: 'Force the backend: native, memory or off (off records nothing).' },
    ...OTLP_ENVIRONMENT_VARIABLES,
    { name: 'NEMO_RELAY_HOOKS_DEBUG', default: '(off)', meaning: 'Debug output of the default logger (1, true, yes, on; false, 0, no, off stay off). DEBUG=nemo-relay-hooks does the same.' },
  ];
  return environment;
}

/**
 * The Hermes plugin's variables: any of them set selects the `hermes` profile.
 * Derived at the first `loadSettings`, not at import: what the entry's import
 * runs is paid by every host that imports it (bench `import-cost`).
 */
let hermesNames: readonly string[] | undefined;
function hermesVariableNames(): readonly string[] {
  if (hermesNames === undefined) {
    const names: string[] = [];
    for (const variable of environmentVariables()) if (variable.hermes) names.push(variable.hermes);
    hermesNames = names;
  }
  return hermesNames;
}

const TRUTHY: readonly string[] = ['1', 'true', 'yes', 'on'];
const FALSY: readonly string[] = ['', '0', 'false', 'no', 'off'];

export type { Environment } from '../../shared/env.ts';

/** What `loadSettings` returns. */
export interface LoadedSettings {
  /** The settings the plugin runs with. */
  settings: NemoRelaySettings;
  /** What was wrong with the environment, the overrides or plugins.toml (each one fell back to a default). */
  diagnostics: ConfigDiagnostic[];
  /** Which defaults applied. */
  profile: SettingsProfile;
  /** The settings given a value explicitly (environment or overrides), as opposed to defaults. */
  explicit: ReadonlySet<keyof NemoRelaySettings>;
  /** True when the ATOF and ATIF outputs are the defaults nobody asked for (the plugin says where it records). */
  recordingByDefault: boolean;
  /**
   * Each file output that is on only because nobody configured it: with one configured (`atifEnabled` and a folder),
   * the other still records to the default folder, and the plugin says so too.
   */
  outputsByDefault: { atof: boolean; atif: boolean };
}

/** Whether a host recording by default named its files but not their folder: it did configure something, and only the folder is the default. */
export function namesItsFiles(explicit: ReadonlySet<keyof NemoRelaySettings>): boolean {
  return explicit.has('atofFilename') || explicit.has('atifFilenameTemplate');
}

/** Where `loadSettings` looks besides `env`: for the host's name and the process-wide `NEMO_RELAY_HOOKS_OUTPUTS`. */
export interface SettingsContext {
  /** The process environment, where `NEMO_RELAY_HOOKS_OUTPUTS` is read when `env` does not set it. Default: `process.env`. */
  processEnv?: Environment;
  /** Who the host is; default: from the working directory's package.json. */
  host?: HostIdentity;
}

/** Resolves settings from the environment and overrides. Never throws. */
export function loadSettings(given: Environment, overrides: NemoRelaySettingsOverrides = {}, context: SettingsContext = {}): LoadedSettings {
  const diagnostics: ConfigDiagnostic[] = [];
  // A runtime may refuse to let us read the environment (Deno without --allow-env): defaults, and a diagnostic.
  const env = guardEnv(given);
  const text = (name: string): string => {
    const value = env[name];
    return typeof value === 'string' ? value.trim() : '';
  };
  /** The row's variable that is set (the neutral name first), or undefined. */
  const setName = (variable: { name: string; hermes?: string }): string | undefined => {
    if (text(variable.name) !== '') return variable.name;
    if (variable.hermes !== undefined && text(variable.hermes) !== '') return variable.hermes;
    return undefined;
  };
  const flag = (name: string): boolean => {
    const value = text(name).toLowerCase();
    if (TRUTHY.includes(value)) return true;
    if (!FALSY.includes(value)) {
      diagnostics.push(invalidValue(name, `${name}=${JSON.stringify(env[name])} is not a recognised boolean (1, true, yes, on / 0, false, no, off); treating it as off`));
    }
    return false;
  };

  const profile: SettingsProfile = hermesVariableNames().some((name) => text(name) !== '') ? 'hermes' : 'default';
  const explicit = new Set<keyof NemoRelaySettings>();
  const fromEnv: Partial<Record<keyof NemoRelaySettings, unknown>> = {};
  for (const row of SETTING_ROWS) {
    let name = setName(row);
    // The one switch an operator can always reach: read from the process when the host's env does not set it.
    if (name === undefined && row.setting === 'outputs') {
      const outer = guardEnv(context.processEnv ?? processEnv())[row.name];
      if (typeof outer === 'string' && outer.trim() !== '') {
        const value = outer.trim().toLowerCase();
        if (TRUTHY.includes(value) || FALSY.includes(value)) fromEnv.outputs = TRUTHY.includes(value);
        else diagnostics.push(invalidValue(row.name, `${row.name}=${JSON.stringify(outer)} is not a recognised boolean (1, true, yes, on / 0, false, no, off); treating it as on`));
        if (fromEnv.outputs !== undefined) explicit.add('outputs');
      }
      continue;
    }
    if (name === undefined) continue;
    // Hermes' model name is a fallback for sessions that report none; every other value set is the host's word.
    if (!(row.setting === 'atifModelName' && name === row.hermes)) explicit.add(row.setting);
    if (row.parse === 'flag') fromEnv[row.setting] = flag(name);
    else if (row.parse === 'text') fromEnv[row.setting] = text(name);
    else {
      const value = text(name).toLowerCase();
      if (row.parse.includes(value)) fromEnv[row.setting] = value;
      else {
        explicit.delete(row.setting);
        diagnostics.push(invalidValue(name, `${name}=${JSON.stringify(env[name])} must be ${row.parse.join(' or ')}; using ${row.parse[0]}`));
      }
    }
  }
  const otlp = otlpSettingsFromEnv(env, setName, flag, diagnostics);
  for (const key of Object.keys(otlp.values) as (keyof OtlpEnvSettings)[]) explicit.add(key);
  const overridden = validOverrides(overrides, diagnostics);
  for (const key of Object.keys(overridden) as (keyof NemoRelaySettings)[]) explicit.add(key);

  const chosen = { ...fromEnv, ...otlp.values, ...overridden } as Partial<NemoRelaySettings>;
  const defaults = profile === 'hermes' ? HERMES_DEFAULTS : neutralDefaults(chosen, context);
  const settings: NemoRelaySettings = { ...defaults, dynamicPlugins: [], ...chosen };

  // The default outputs: on unless a plugins.toml is configured (it owns the outputs) or the switch is off.
  const defaultOutputs = profile === 'default' && settings.outputs && !settings.pluginsTomlPath;
  if (!explicit.has('atofEnabled')) settings.atofEnabled = defaultOutputs;
  if (!explicit.has('atifEnabled')) settings.atifEnabled = defaultOutputs;
  const toml = loadPluginsToml(settings.pluginsTomlPath, settings.atofEnabled || settings.atifEnabled);
  diagnostics.push(...toml.diagnostics);
  settings.pluginsConfig = toml.document;
  if (toml.withholdOutputs) {
    // Fail closed: the environment's outputs would record what the unreadable document may redact.
    settings.atofEnabled = false;
    settings.atifEnabled = false;
  }
  diagnostics.push(...pluginsTomlDiagnostics(toml.document));
  const outputsByDefault = {
    atof: defaultOutputs && !explicit.has('atofEnabled') && !explicit.has('atofOutputDirectory'),
    atif: defaultOutputs && !explicit.has('atifEnabled') && !explicit.has('atifOutputDirectory'),
  };
  const recordingByDefault = outputsByDefault.atof && outputsByDefault.atif;

  if (settings.otlpEnabled) {
    if (settings.pluginsConfig === null && !settings.pluginsTomlPath) {
      // Both backends then read OTLP (and the env ATOF file) from the same plugins.toml document.
      settings.pluginsConfig = otlpPluginDocument(
        settings,
        { enabled: settings.atofEnabled, outputDirectory: settings.atofOutputDirectory, filename: settings.atofFilename, mode: settings.atofMode },
        {
          headers: overridden.otlpHeaders !== undefined ? 'otlpHeaders' : (otlp.headersFrom ?? 'otlpHeaders'),
          resourceAttributes: overridden.otlpResourceAttributes !== undefined ? 'otlpResourceAttributes' : 'OTEL_RESOURCE_ATTRIBUTES',
        },
        diagnostics,
      );
    } else {
      diagnostics.push({
        level: 'warning',
        code: 'settings.otlp_with_plugins_toml',
        field: 'NEMO_RELAY_HOOKS_OTLP_ENABLED',
        message: 'NEMO_RELAY_HOOKS_OTLP_ENABLED is ignored when a plugins.toml is configured: configure OTLP in its [components.config.opentelemetry] section',
      });
    }
  }
  const dynamic = dynamicPluginSpecs(toml.document, settings.pluginsTomlPath);
  diagnostics.push(...dynamic.diagnostics);
  settings.dynamicPlugins = dynamic.specs;
  const adaptive = enabledComponentConfig(toml.document, 'adaptive');
  settings.adaptiveEnabled = adaptive !== null;
  settings.adaptiveMode = adaptiveModeOf(adaptive);
  // A pricing- or adaptive-only document (as the pricing and cache pages show one) turns the
  // default outputs off and records nothing itself: say so rather than record nothing quietly.
  // An observability component whose `enabled` is no boolean is not missing: the relay rejects
  // the document and says why, and "add an observability component" would send the operator astray.
  if (
    toml.document !== null &&
    enabledComponentConfig(toml.document, 'observability') === null &&
    !componentEnabledMistyped(toml.document, 'observability') &&
    dynamic.specs.length === 0 &&
    !settings.atofEnabled &&
    !settings.atifEnabled
  ) {
    diagnostics.push({
      level: 'warning',
      code: 'plugins_toml.records_nothing',
      field: variableName('pluginsTomlPath', profile),
      message: `${settings.pluginsTomlPath} has no enabled observability component and no ${profile === 'hermes' ? 'HERMES_NEMO_RELAY' : 'NEMO_RELAY_HOOKS'}_ATOF_ENABLED or _ATIF_ENABLED output is on, so nothing is recorded: add an observability component (docs/operators/plugins-toml.md) or enable an output`,
    });
  }

  const templateField = variableName('atifFilenameTemplate', profile);
  if (settings.atifEnabled && !settings.atifFilenameTemplate.includes('{session_id}')) {
    diagnostics.push({
      level: 'warning',
      code: 'settings.template_without_session_id',
      field: templateField,
      message: `ATIF filename template ${JSON.stringify(settings.atifFilenameTemplate)} has no {session_id}: every session would overwrite the same file, so "-{session_id}" is appended before the extension`,
    });
  }
  if (settings.atifEnabled && /[\\/]/.test(settings.atifFilenameTemplate.split('{session_id}').join(''))) {
    diagnostics.push({
      level: 'warning',
      code: 'settings.template_with_path',
      field: templateField,
      message: `ATIF filename template ${JSON.stringify(settings.atifFilenameTemplate)} contains a path separator: files land in sub-folders of the output directory, and any that would leave it are refused at write time`,
    });
  }
  if (settings.atofEnabled && !isPlainFileName(settings.atofFilename)) {
    // The relay refuses such a name at registration, after which no ATOF file is written at all:
    // said here, so doctor and status().diagnostics name it before the first hook does.
    const field = variableName('atofFilename', profile);
    diagnostics.push({
      level: 'error',
      code: 'settings.invalid_value',
      field,
      message: `${field}=${JSON.stringify(settings.atofFilename)} is not a plain file name, so no ATOF file is written; fix: give the name alone and the folder in ${variableName('atofOutputDirectory', profile)}`,
    });
  }
  diagnostics.push(...unknownVariables(given));
  const denied = deniedEnv(env);
  if (denied !== null) {
    diagnostics.push({
      level: 'warning',
      code: 'settings.permission_denied',
      field: denied.names[0]!,
      message: `the runtime refused to read ${denied.names.length === 1 ? '' : `${denied.names.length} variables: `}${listSome(denied.names, 3)} (${denied.message}); using the defaults (${REFUSED_ENV_FIX})`,
    });
  }
  if (settings.atifEnabled && !settings.atifOutputDirectory && !settings.pluginsConfig) {
    const folder = variableName('atifOutputDirectory', profile);
    diagnostics.push({
      level: 'warning',
      code: 'settings.atif_without_output_directory',
      field: folder,
      message: `ATIF is enabled but has no output directory, so no trajectory file is written; fix: set ${folder} (or settings.atifOutputDirectory) to a folder`,
    });
  }
  return { settings, diagnostics, profile, explicit, recordingByDefault, outputsByDefault };
}

/** Variables read outside the plugin's settings (the CLI's own knobs). */
const OTHER_VARIABLES: readonly string[] = ['NEMO_RELAY_HOOKS_MAX_LINE_BYTES'];
/** Every name the plugin reads, derived at the first check (see `hermesVariableNames`). */
let knownNames: ReadonlySet<string> | undefined;
function knownVariableNames(): ReadonlySet<string> {
  if (knownNames === undefined) {
    const names = new Set(OTHER_VARIABLES);
    for (const variable of environmentVariables()) {
      names.add(variable.name);
      if (variable.hermes) names.add(variable.hermes);
    }
    knownNames = names;
  }
  return knownNames;
}

/**
 * A variable with the plugin's prefix that it does not read is a setting
 * the operator believes applies (a typo, or a name from another tool):
 * one warning each, naming it, instead of silence.
 */
function unknownVariables(env: Environment): ConfigDiagnostic[] {
  const out: ConfigDiagnostic[] = [];
  for (const name of envNames(env)) {
    if (!name.startsWith('NEMO_RELAY_HOOKS_') && !name.startsWith('HERMES_NEMO_RELAY_')) continue;
    if (knownVariableNames().has(name)) continue;
    const near = openTelemetryName(name) ?? nearMiss(name, [...knownVariableNames()]);
    out.push({
      level: 'warning',
      code: 'settings.unknown_variable',
      field: name,
      message: `${name} is set but is not a variable the plugin reads, so it changes nothing (${near !== undefined ? `did you mean ${near}?` : "a typo, or another tool's name?"}); the variables it reads: docs/operators/configuration.md`,
    });
  }
  return out;
}

/**
 * The OpenTelemetry variable a name under the plugin's prefix stands for:
 * the endpoint, protocol, headers, service name and resource attributes are
 * OpenTelemetry's own `OTEL_*` names (`NEMO_RELAY_HOOKS_OTLP_ENDPOINT` →
 * `OTEL_EXPORTER_OTLP_ENDPOINT`), too far from the misspelt one for a near miss.
 */
function openTelemetryName(name: string): string | undefined {
  const rest = /^(?:NEMO_RELAY_HOOKS|HERMES_NEMO_RELAY)_(?:OTLP|OTEL)_(.+)$/.exec(name)?.[1];
  if (rest === undefined) return undefined;
  return [`OTEL_EXPORTER_OTLP_${rest}`, `OTEL_${rest}`].find((candidate) => knownVariableNames().has(candidate));
}

/** The library's defaults, named after the host where a name is not given (the host is looked up only then). */
function neutralDefaults(chosen: Partial<NemoRelaySettings>, context: SettingsContext): NemoRelaySettings {
  const named = chosen.atofFilename !== undefined && chosen.atifFilenameTemplate !== undefined && chosen.atifAgentName !== undefined && chosen.atifAgentVersion !== undefined;
  const host = context.host ?? (named ? { name: 'agent', fileStem: 'agent', version: 'unknown' } : hostIdentity());
  return {
    ...HERMES_DEFAULTS,
    dynamicPlugins: [],
    atofOutputDirectory: DEFAULT_OUTPUT_DIRECTORY,
    atofFilename: `${host.fileStem}-atof.jsonl`,
    atifOutputDirectory: DEFAULT_OUTPUT_DIRECTORY,
    atifFilenameTemplate: `${host.fileStem}-atif-{session_id}.json`,
    atifAgentName: host.name,
    atifAgentVersion: host.version,
  };
}

/** The variable a diagnostic about `setting` names: the neutral one, or the Hermes one in the Hermes profile. */
function variableName(setting: keyof NemoRelaySettings, profile: SettingsProfile): string {
  const row = SETTING_ROWS.find((candidate) => candidate.setting === setting);
  if (row === undefined) return String(setting);
  return profile === 'hermes' && row.hermes !== undefined ? row.hermes : row.name;
}

function invalidValue(fieldName: string, message: string): ConfigDiagnostic {
  return { level: 'warning', code: 'settings.invalid_value', field: fieldName, message };
}

const OVERRIDE_CHOICES: Partial<Record<keyof NemoRelaySettingsOverrides, readonly string[]>> = Object.assign({
  atofMode: ['append', 'overwrite'],
  atifSubagentExportMode: ['embedded', 'all'],
}, OTLP_ENV_CHOICES);

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
    diagnostics.push(invalidValue('settings', `settings could not be read (${errorMessage(error)}); ignoring it`));
    return out as Partial<NemoRelaySettings>;
  }
  for (const key of keys) {
    let value: unknown;
    try {
      value = (overrides as Record<string, unknown>)[key];
    } catch (error) {
      diagnostics.push(invalidValue(`settings.${key}`, `settings.${key} could not be read (${errorMessage(error)}); ignoring it`));
      continue;
    }
    if (value === undefined) continue;
    if (!(key in HERMES_DEFAULTS) || (DERIVED_SETTINGS as readonly string[]).includes(key)) {
      // Only on this path: the settings a host may pass, for the name a misspelt one meant.
      const near = key in HERMES_DEFAULTS ? undefined : nearMiss(key, Object.keys(HERMES_DEFAULTS).filter((name) => !(DERIVED_SETTINGS as readonly string[]).includes(name)));
      diagnostics.push(invalidValue(`settings.${key}`, `settings.${key} is not a setting the host can override${near !== undefined ? ` (did you mean ${near}?)` : ''}; ignoring it`));
      continue;
    }
    const expected = typeof HERMES_DEFAULTS[key as keyof NemoRelaySettings];
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

export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return typeof value;
}

