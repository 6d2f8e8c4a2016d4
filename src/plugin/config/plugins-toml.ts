/**
 * Reading a NeMo Relay `plugins.toml` the way Hermes does.
 *
 * The file is the relay's plugin document (`version`, `[[components]]`,
 * `[policy]`) plus one Hermes extension, `[[dynamic_plugins]]` activation
 * specs. A gateway-only `[plugins]` table is refused: Hermes has no CLI
 * lifecycle resolver for enablement, trust policy and worker environments.
 * Nothing here throws; problems become diagnostics.
 *
 * @module
 */

import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { makeDirectory } from '../../shared/directory.ts';
import path from 'node:path';
import type { ConfigDiagnostic, DynamicPluginSpec, Json, JsonObject } from '../../relay/contract.ts';
import { isJsonObject, toJson } from '../../shared/json.ts';
import { errorMessage } from '../../shared/error-text.ts';

export interface LoadedPluginsToml {
  /** The parsed document, or null when the file is missing, unreadable or invalid. */
  document: JsonObject | null;
  diagnostics: ConfigDiagnostic[];
}

/**
 * The largest plugins.toml read. Real ones are a few KB; the cap keeps a
 * path to a huge or endless file from stalling or exhausting the host.
 */
const MAX_PLUGINS_TOML_BYTES = 4 * 1024 * 1024;

/** Reads and parses `plugins.toml`. An empty path means "not configured". */
export function loadPluginsToml(filePath: string): LoadedPluginsToml {
  if (!filePath) return { document: null, diagnostics: [] };
  const unreadable = (reason: string): LoadedPluginsToml => ({
    document: null,
    diagnostics: [
      {
        level: 'error',
        code: 'plugins_toml.unreadable',
        field: 'NEMO_RELAY_HOOKS_PLUGINS_TOML',
        message: `cannot read plugins.toml at ${String(filePath)}: ${reason}; using the environment's outputs instead`,
      },
    ],
  });
  if (typeof filePath !== 'string') return unreadable(`the path must be a string, got ${typeof filePath}`);
  let textContent: string;
  try {
    // Only a regular file: reading a FIFO or a device (/dev/zero) blocks the host's thread or never ends.
    const stats = statSync(filePath);
    if (!stats.isFile()) return unreadable('not a regular file');
    if (stats.size > MAX_PLUGINS_TOML_BYTES) return unreadable(`${stats.size} bytes, more than the ${MAX_PLUGINS_TOML_BYTES} a plugins.toml may have`);
    textContent = readFileSync(filePath, 'utf8');
  } catch (error) {
    return unreadable(errorMessage(error));
  }
  let parsed: unknown;
  try {
    parsed = tomlParser()(textContent);
  } catch (error) {
    return {
      document: null,
      diagnostics: [
        {
          level: 'error',
          code: 'plugins_toml.invalid_toml',
          field: 'NEMO_RELAY_HOOKS_PLUGINS_TOML',
          message: `invalid TOML in ${filePath}: ${firstLine(errorMessage(error))}; using the environment's outputs instead`,
        },
      ],
    };
  }
  // TOML dates become ISO strings: the relay document is plain JSON.
  const document = toJson(parsed);
  return { document: isJsonObject(document) ? document : null, diagnostics: [] };
}

/** The relay's base document: everything except the Hermes- and gateway-only keys. */
export function staticPluginDocument(document: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(document)) {
    if (key !== 'dynamic_plugins' && key !== 'plugins') out[key] = value;
  }
  return out;
}

/**
 * Whether a `[[components]]` entry is on. The one meaning of a component's
 * `enabled`, as Hermes reads it: a missing `enabled` is on, any falsy value off.
 */
function componentEnabled(component: JsonObject): boolean {
  return !('enabled' in component) || Boolean(component.enabled);
}

/** The configs (`{}` when a component has none) of the enabled components of `kind`, in document order. */
export function enabledComponents(document: JsonObject | null, kind: string): JsonObject[] {
  const out: JsonObject[] = [];
  const components = document?.components;
  if (!Array.isArray(components)) return out;
  for (const component of components) {
    if (!isJsonObject(component) || component.kind !== kind || !componentEnabled(component)) continue;
    out.push(isJsonObject(component.config) ? component.config : {});
  }
  return out;
}

/** The enabled observability components' configs: the one walker every observability question uses. */
export function observabilityComponents(document: JsonObject | null): JsonObject[] {
  return enabledComponents(document, 'observability');
}

/** The `config` of the first enabled component of `kind`, `{}` when it has none, or null when absent. */
export function enabledComponentConfig(document: JsonObject | null, kind: string): JsonObject | null {
  return enabledComponents(document, kind)[0] ?? null;
}

/** The adaptive component's mode: `tool_parallelism.mode`, else `mode`, else `observe_only`. */
export function adaptiveModeOf(config: JsonObject | null): string {
  if (!config) return 'observe_only';
  const toolParallelism = config.tool_parallelism;
  if (isJsonObject(toolParallelism)) {
    const mode = toolParallelism.mode;
    if (typeof mode === 'string' && mode.trim()) return mode.trim();
  }
  const mode = config.mode;
  if (typeof mode === 'string' && mode.trim()) return mode.trim();
  return 'observe_only';
}

/**
 * True when the document's enabled observability component writes `exporter`
 * files: the relay turns an exporter on only with `enabled = true`, and an
 * ATIF exporter writes nothing without an `output_directory`. A table that
 * would write nothing does not take the output from the NEMO_RELAY_HOOKS_*
 * settings (see `pluginsTomlDiagnostics`).
 */
export function observabilityExporterEnabled(document: JsonObject | null, exporter: 'atof' | 'atif'): boolean {
  const config = observabilityComponents(document)[0];
  const exporterConfig = config?.[exporter];
  if (!isJsonObject(exporterConfig) || exporterConfig.enabled !== true) return false;
  return exporter === 'atof' || nonEmptyString(exporterConfig.output_directory);
}

/** Problems in an observability component that the relay accepts silently but that write nothing. */
export function pluginsTomlDiagnostics(document: JsonObject | null): ConfigDiagnostic[] {
  const out: ConfigDiagnostic[] = [];
  const config = observabilityComponents(document)[0];
  const atif = config?.atif;
  if (isJsonObject(atif) && !(atif.enabled === true && nonEmptyString(atif.output_directory))) {
    const why = atif.enabled === true ? 'has no output_directory' : 'is not enabled (enabled = true)';
    out.push({
      level: 'warning',
      code: 'plugins_toml.atif_writes_nothing',
      field: 'components.config.atif',
      message: `[components.config.atif] ${why}, so plugins.toml writes no ATIF trajectory; the NEMO_RELAY_HOOKS_ATIF_* settings apply instead`,
    });
  }
  return out;
}

function nonEmptyString(value: unknown): boolean {
  return typeof value === 'string' && value.trim() !== '';
}

export interface DynamicPluginSpecsResult {
  specs: DynamicPluginSpec[];
  diagnostics: ConfigDiagnostic[];
}

/**
 * Validates Hermes `[[dynamic_plugins]]` specs. Any invalid spec means none
 * are activated (a partial plugin set could enforce half a policy), and
 * relative paths resolve against the `plugins.toml` file's folder.
 */
export function dynamicPluginSpecs(document: JsonObject | null, tomlPath: string): DynamicPluginSpecsResult {
  const diagnostics: ConfigDiagnostic[] = [];
  if (!document) return { specs: [], diagnostics };
  const rawSpecs = document.dynamic_plugins;
  const gateway = document.plugins;
  if (gateway !== undefined) {
    if (!isJsonObject(gateway)) {
      diagnostics.push(
        dynamicError(
          'plugins_toml.invalid_plugins_section',
          'plugins',
          'Invalid NeMo Relay plugins config: expected [plugins] to be an object; no dynamic plugins will be activated. Continuing with static observability only.',
        ),
      );
      return { specs: [], diagnostics };
    }
    if (Object.keys(gateway).length > 0) {
      diagnostics.push(
        dynamicError(
          'plugins_toml.gateway_plugins_refused',
          'plugins',
          'Cannot activate Relay gateway [[plugins.dynamic]] records: this host has no CLI lifecycle resolver for enablement, trust policy, and worker environments. Use [[dynamic_plugins]] activation specs instead; no dynamic plugins will be activated. Continuing with static observability only.',
        ),
      );
      return { specs: [], diagnostics };
    }
  }
  if (rawSpecs === undefined || rawSpecs === null) return { specs: [], diagnostics };
  if (!Array.isArray(rawSpecs)) {
    diagnostics.push({
      level: 'warning',
      code: 'plugins_toml.invalid_dynamic_plugins',
      field: 'dynamic_plugins',
      message: 'Ignoring invalid NeMo Relay dynamic_plugins config: expected an array of plugin specs',
    });
    return { specs: [], diagnostics };
  }

  const specs: DynamicPluginSpec[] = [];
  let invalid = false;
  rawSpecs.forEach((raw, index) => {
    const problem = specProblem(raw);
    if (problem) {
      diagnostics.push({
        level: 'warning',
        code: 'plugins_toml.invalid_dynamic_plugin',
        field: `dynamic_plugins[${index}]`,
        message: `Invalid NeMo Relay dynamic_plugins[${index}]: ${problem}`,
      });
      invalid = true;
      return;
    }
    const spec = raw as JsonObject;
    const resolved: DynamicPluginSpec = {
      plugin_id: (spec.plugin_id as string).trim(),
      kind: spec.kind as DynamicPluginSpec['kind'],
      manifest_ref: configRelativePath((spec.manifest_ref as string).trim(), tomlPath),
      config: (spec.config ?? {}) as JsonObject,
    };
    if (spec.environment_ref !== undefined && spec.environment_ref !== null) {
      resolved.environment_ref = configRelativePath((spec.environment_ref as string).trim(), tomlPath);
    }
    specs.push(resolved);
  });
  if (invalid) {
    diagnostics.push(
      dynamicError(
        'plugins_toml.dynamic_plugins_disabled',
        'dynamic_plugins',
        'NeMo Relay dynamic plugin configuration is invalid; no dynamic plugins will be activated. Continuing with static observability only.',
      ),
    );
    return { specs: [], diagnostics };
  }
  return { specs, diagnostics };
}

function specProblem(raw: Json): string | null {
  if (!isJsonObject(raw)) return 'expected an object';
  const { plugin_id: pluginId, kind, manifest_ref: manifestRef, environment_ref: environmentRef } = raw;
  const config = raw.config ?? {};
  if (typeof pluginId !== 'string' || !pluginId.trim()) return 'plugin_id is required';
  if (kind !== 'rust_dynamic' && kind !== 'worker') return 'kind must be rust_dynamic or worker';
  if (typeof manifestRef !== 'string' || !manifestRef.trim()) return 'manifest_ref is required';
  if (!isJsonObject(config)) return 'config must be an object';
  if (environmentRef !== undefined && environmentRef !== null) {
    if (typeof environmentRef !== 'string' || !environmentRef.trim()) return 'environment_ref must be a non-empty string';
  }
  return null;
}

/** Resolves a plugin path relative to the physical `plugins.toml` it came from. */
export function configRelativePath(value: string, tomlPath: string): string {
  if (path.isAbsolute(value)) return value;
  const configPath = tomlPath ? path.resolve(tomlPath) : path.resolve('plugins.toml');
  return path.resolve(path.dirname(configPath), value);
}

/**
 * Creates the output folders an enabled observability component names, so
 * the relay can open its files: `atof.sinks[].output_directory` (and the
 * legacy flat `atof.output_directory`) and `atif.output_directory`.
 */
export function ensureOutputDirectories(document: JsonObject): string[] {
  const created: string[] = [];
  for (const config of observabilityComponents(document)) {
    const directories: unknown[] = [];
    for (const exporter of ['atof', 'atif'] as const) {
      const exporterConfig = config[exporter];
      if (!isJsonObject(exporterConfig)) continue;
      directories.push(exporterConfig.output_directory);
      const sinks = exporterConfig.sinks;
      if (Array.isArray(sinks)) {
        for (const sink of sinks) if (isJsonObject(sink)) directories.push(sink.output_directory);
      }
    }
    for (const directory of directories) {
      if (typeof directory === 'string' && directory.trim()) {
        makeDirectory(directory);
        created.push(directory);
      }
    }
  }
  return created;
}

function dynamicError(code: string, fieldName: string, message: string): ConfigDiagnostic {
  return { level: 'error', code, field: fieldName, message };
}


function firstLine(message: string): string {
  const newline = message.indexOf('\n');
  return newline === -1 ? message : message.slice(0, newline);
}

type TomlParse = (text: string) => unknown;
let parseToml: TomlParse | null = null;

/**
 * The TOML parser, loaded at the first plugins.toml read rather than with
 * the package: most hosts never configure one. `require` keeps
 * `loadSettings` synchronous (smol-toml ships a CommonJS build).
 */
function tomlParser(): TomlParse {
  parseToml ??= (createRequire(import.meta.url)('smol-toml') as { parse: TomlParse }).parse;
  return parseToml;
}
