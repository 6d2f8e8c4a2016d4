/**
 * The one model of a `plugins.toml` document: which components are on, the
 * observability component the relays run, the folders it writes into, and
 * the part a relay is given. The plugin (`src/plugin/`), the memory relay's
 * validator (`validate.ts`) and the CLI's `doctor` all read a document
 * through these functions, so they cannot disagree on what it says.
 *
 * **`enabled`.** A component is on when its `enabled` is absent or `true`:
 * native's rule (serde's `bool`, defaulting to on). Any value that is not a
 * boolean makes the whole document invalid (native: "invalid plugin config:
 * invalid type: integer `0`, expected a boolean"; `validate.ts` says the
 * same), so a reader that looks before validation (the plugin, creating
 * output folders) treats it as off and creates nothing for a document that
 * will be rejected. The Hermes plugin reads `bool(enabled)` instead, where
 * `1` or `"yes"` would turn a component on; the difference is intended and
 * changes nothing that runs: such a document is rejected before it activates,
 * and the plugin falls back to its environment settings. A section inside
 * the observability component (`atof`, `atif`, `opentelemetry`) is the other
 * way round: off unless `enabled = true`.
 *
 * **Hermes' extensions.** A document may carry `[[dynamic_plugins]]`
 * activation specs (read by `dynamicPluginSpecs`); a relay is given the
 * document without them, and without a gateway-only `[plugins]` table
 * (`staticPluginDocument`).
 *
 * Nothing here throws; problems become diagnostics.
 *
 * @module
 */

import path from 'node:path';
import type { Json, JsonObject } from '../../shared/json.ts';
import { isJsonObject } from '../../shared/json.ts';
import type { ConfigDiagnostic } from './diagnostic.ts';
import { isNativeBlank, nativeTrim } from '../../shared/whitespace.ts';

/** A Hermes `[[dynamic_plugins]]` activation spec, already validated. */
export interface DynamicPluginSpec {
  /** The plugin's id, unique within the document. */
  plugin_id: string;
  /** How the plugin runs: a Rust dynamic library or a worker process. */
  kind: 'rust_dynamic' | 'worker';
  /** Where the plugin's manifest is. */
  manifest_ref: string;
  /** The environment the plugin runs in, when it needs one. */
  environment_ref?: string;
  /** The plugin's own configuration, passed as is. */
  config: JsonObject;
}

/** Whether a `[[components]]` entry is on: the one meaning of a component's `enabled` (see the module doc). */
export function componentEnabled(component: JsonObject): boolean {
  return component.enabled === undefined || component.enabled === true;
}

/**
 * Whether a component of `kind` has an `enabled` that is no boolean: native
 * rejects the whole document for it (with its own message), so the
 * component is neither on nor off.
 */
export function componentEnabledMistyped(document: JsonObject | null, kind: string): boolean {
  const components = document?.components;
  if (!Array.isArray(components)) return false;
  return components.some((component) => isJsonObject(component) && component.kind === kind && component.enabled !== undefined && typeof component.enabled !== 'boolean');
}

/**
 * How an operator may write the `pii_redaction` kind: any case, with `_`,
 * `-`, a space or nothing between the words (`PII_Redaction`,
 * `pii-redaction`). Only the exact `pii_redaction` runs; the others name it.
 */
const REDACTION_NAME = /^pii[\s_-]?redaction$/i;
const REDACTION_IN_TEXT = /(?:^|[^\w-])pii[\s_-]?redaction(?![\w-])/i;

/**
 * The one rule for a document that cannot be used as written (not TOML,
 * refused for its shape or by validation, a kind no relay registers, a
 * backend that cannot activate it): whether it plausibly asks for
 * redaction. Then the environment's unredacted outputs must not record
 * either (fail closed). It does when the redaction kind is named, in any
 * spelling `REDACTION_NAME` takes, as a key or a string value anywhere in
 * the document (`[components]` written for `[[components]]`,
 * `components = "pii_redaction"`, `kind = "pii-redaction"`), except in a
 * component switched off with `enabled = false`. Given the text instead (a
 * file no parser reads), it does when a line names it outside a comment.
 */
export function namesRedaction(document: unknown): boolean {
  if (typeof document === 'string') return document.split('\n').some((line) => REDACTION_IN_TEXT.test(line.replace(/#.*/, '')));
  return namesRedactionIn(document);
}

/**
 * A document both relays accept that names the redaction kind only where
 * neither reads it, and so runs no redaction: `[[component]]` written for
 * `[[components]]` (an unknown top-level key, which native ignores without a
 * word), or a `pii_redaction` table inside another component's config. The
 * same rule as `namesRedaction`, over the document outside its components
 * and inside the components of other kinds; a document with an enabled
 * `pii_redaction` component, or whose `components` is not a list (refused
 * for its shape), is left to the relay.
 */
export function namesRedactionWhereNoneRuns(document: JsonObject): boolean {
  const components = document.components;
  if (components !== undefined && !Array.isArray(components)) return false;
  const list = components ?? [];
  if (list.some((component) => isJsonObject(component) && component.kind === 'pii_redaction' && componentEnabled(component))) return false;
  const outside = Object.entries(document).some(([key, value]) => key !== 'components' && (REDACTION_NAME.test(key.trim()) || namesRedactionIn(value)));
  return (
    outside ||
    list.some((component) => isJsonObject(component) && component.enabled !== false && !(typeof component.kind === 'string' && REDACTION_NAME.test(component.kind.trim())) && namesRedactionIn(component))
  );
}

function namesRedactionIn(value: unknown): boolean {
  if (typeof value === 'string') return REDACTION_NAME.test(value.trim());
  if (Array.isArray(value)) return value.some(namesRedactionIn);
  if (!isJsonObject(value)) return false;
  if (value.enabled === false && typeof value.kind === 'string' && REDACTION_NAME.test(value.kind.trim())) return false;
  return Object.entries(value).some(([key, child]) => REDACTION_NAME.test(key.trim()) || namesRedactionIn(child));
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

/** The relay's base document: everything except the Hermes- and gateway-only keys. */
export function staticPluginDocument(document: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(document)) {
    if (key !== 'dynamic_plugins' && key !== 'plugins') out[key] = value;
  }
  return out;
}

/**
 * True when the document's enabled observability component writes `exporter`
 * files: a section is on only with `enabled = true` (an ATIF section without
 * an `output_directory` writes into the working directory, on native as on
 * the memory relay).
 */
export function observabilityExporterEnabled(document: JsonObject | null, exporter: 'atof' | 'atif'): boolean {
  const config = observabilityComponents(document)[0];
  const exporterConfig = config?.[exporter];
  return isJsonObject(exporterConfig) && exporterConfig.enabled === true;
}

/**
 * The output folders the enabled observability components name, in document
 * order: `atof.sinks[].output_directory` (and the legacy flat
 * `atof.output_directory`) and `atif.output_directory`.
 */
export function outputDirectories(document: JsonObject): string[] {
  const out: string[] = [];
  for (const config of observabilityComponents(document)) {
    for (const exporter of ['atof', 'atif'] as const) {
      const exporterConfig = config[exporter];
      if (!isJsonObject(exporterConfig)) continue;
      const named: unknown[] = [exporterConfig.output_directory];
      const sinks = exporterConfig.sinks;
      if (Array.isArray(sinks)) {
        for (const sink of sinks) if (isJsonObject(sink)) named.push(sink.output_directory);
      }
      for (const directory of named) if (typeof directory === 'string' && !isNativeBlank(directory)) out.push(directory);
    }
  }
  return out;
}

/**
 * Whether an enabled observability component truncates an ATOF file when it
 * activates (`mode = "overwrite"`, on the sinks or the legacy flat table):
 * native does so as its activation opens the file, whenever that finishes.
 */
export function truncatesAtofFile(document: JsonObject | null): boolean {
  for (const config of observabilityComponents(document)) {
    const atof = config.atof;
    if (!isJsonObject(atof)) continue;
    const sinks = Array.isArray(atof.sinks) ? atof.sinks : [];
    for (const sink of [atof, ...sinks]) if (isJsonObject(sink) && sink.mode === 'overwrite') return true;
  }
  return false;
}

/**
 * `document` with only its local outputs: the observability components keep
 * their ATOF file sinks and ATIF files, without OpenTelemetry, ATOF stream
 * sinks or ATIF storage (whose exporters load and connect: what a shutdown
 * out of time cannot wait for). Null stays null.
 */
export function localOutputsOnly(document: JsonObject | null): JsonObject | null {
  if (document === null || !Array.isArray(document.components)) return document;
  const components = document.components.map((component) => {
    if (!isJsonObject(component) || component.kind !== 'observability' || !isJsonObject(component.config)) return component;
    const config: JsonObject = {};
    for (const [key, value] of Object.entries(component.config)) if (key !== 'opentelemetry') config[key] = value;
    const atof = config.atof;
    if (isJsonObject(atof) && Array.isArray(atof.sinks)) config.atof = { ...atof, sinks: atof.sinks.filter((sink) => !isJsonObject(sink) || sink.type !== 'stream') };
    const atif = config.atif;
    if (isJsonObject(atif) && 'storage' in atif) {
      const local: JsonObject = {};
      for (const [key, value] of Object.entries(atif)) if (key !== 'storage') local[key] = value;
      config.atif = local;
    }
    return { ...component, config };
  });
  return { ...document, components };
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
      plugin_id: nativeTrim(spec.plugin_id as string),
      kind: spec.kind as DynamicPluginSpec['kind'],
      manifest_ref: configRelativePath(nativeTrim(spec.manifest_ref as string), tomlPath),
      config: (spec.config ?? {}) as JsonObject,
    };
    if (spec.environment_ref !== undefined && spec.environment_ref !== null) {
      resolved.environment_ref = configRelativePath(nativeTrim(spec.environment_ref as string), tomlPath);
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
  if (typeof pluginId !== 'string' || isNativeBlank(pluginId)) return 'plugin_id is required';
  if (kind !== 'rust_dynamic' && kind !== 'worker') return 'kind must be rust_dynamic or worker';
  if (typeof manifestRef !== 'string' || isNativeBlank(manifestRef)) return 'manifest_ref is required';
  if (!isJsonObject(config)) return 'config must be an object';
  if (environmentRef !== undefined && environmentRef !== null) {
    if (typeof environmentRef !== 'string' || isNativeBlank(environmentRef)) return 'environment_ref must be a non-empty string';
  }
  return null;
}

/** Resolves a plugin path relative to the physical `plugins.toml` it came from. */
export function configRelativePath(value: string, tomlPath: string): string {
  if (path.isAbsolute(value)) return value;
  const configPath = tomlPath ? path.resolve(tomlPath) : path.resolve('plugins.toml');
  return path.resolve(path.dirname(configPath), value);
}

function dynamicError(code: string, fieldName: string, message: string): ConfigDiagnostic {
  return { level: 'error', code, field: fieldName, message };
}
