/**
 * The plugin's own reading of the `plugins.toml` its settings name: the
 * file read and parsed (bounded, regular files only), what the plugin falls
 * back to when a document writes nothing, the adaptive component's mode,
 * and the output folders created before activation. What a document means
 * (components, `enabled`, Hermes' `[[dynamic_plugins]]`) is the one model in
 * `src/formats/plugins-toml/document.ts`. Nothing here throws; problems
 * become diagnostics.
 *
 * @module
 */

import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { makeDirectory } from '../../shared/directory.ts';
import type { ConfigDiagnostic, JsonObject } from '../../relay/contract.ts';
import { namesRedaction, observabilityComponents, outputDirectories } from '../../formats/plugins-toml/document.ts';
import { isNonBlank } from '../../shared/text.ts';
import { isJsonObject, toJson } from '../../shared/json.ts';
import { errorMessage } from '../../shared/error-text.ts';
import { nearMiss } from '../../shared/near-miss.ts';
import { OBSERVABILITY_SCHEMA } from '../../formats/plugins-toml/schema.ts';
import type { Schema } from '../../formats/plugins-toml/shape.ts';

export interface LoadedPluginsToml {
  /** The parsed document, or null when the file is missing, unreadable or invalid. */
  document: JsonObject | null;
  diagnostics: ConfigDiagnostic[];
  /** True when the text is not TOML but names pii_redaction (`namesRedaction`): the environment's outputs must not record either. */
  withholdOutputs?: true;
}

/** The diagnostic that says why nothing is written. */
export const WITHHELD: ConfigDiagnostic = {
  level: 'error',
  code: 'plugins_toml.outputs_withheld',
  component: 'pii_redaction',
  message:
    'plugins.toml asks for pii_redaction but could not be activated, so nothing is written (no ATOF, ATIF, OTLP, stream or upload) rather than unredacted output; fix the document (see the diagnostics above) or remove the pii_redaction component',
};

/** The diagnostic for a document that names pii_redaction only where no relay reads it (`namesRedactionWhereNoneRuns`). */
export const REDACTION_NOT_RUN: ConfigDiagnostic = {
  level: 'error',
  code: 'plugins_toml.redaction_not_run',
  component: 'pii_redaction',
  message:
    'plugins.toml names pii_redaction only where no relay reads it (such as [[component]] for [[components]], or inside another component), so no redaction would run; it is not activated: write it as its own [[components]] table with kind = "pii_redaction"',
};

/**
 * The largest plugins.toml read. Real ones are a few KB; the cap keeps a
 * path to a huge or endless file from stalling or exhausting the host.
 */
const MAX_PLUGINS_TOML_BYTES = 4 * 1024 * 1024;

/**
 * Reads and parses `plugins.toml`. An empty path means "not configured".
 * `fallbackRecords`: whether the environment enables an output the plugin
 * records into when the document cannot be used; without one, the
 * diagnostic says that nothing is recorded (a configured plugins.toml turns
 * the default outputs off), not that the environment's outputs are used.
 */
export function loadPluginsToml(filePath: string, fallbackRecords = true): LoadedPluginsToml {
  if (!filePath) return { document: null, diagnostics: [] };
  const fallback = fallbackRecords ? "using the environment's outputs instead" : 'nothing is recorded (the environment enables no output either)';
  const unreadable = (reason: string): LoadedPluginsToml => ({
    document: null,
    diagnostics: [
      {
        level: 'error',
        code: 'plugins_toml.unreadable',
        field: 'NEMO_RELAY_HOOKS_PLUGINS_TOML',
        message: `cannot read plugins.toml at ${String(filePath)}: ${reason}; ${fallback}`,
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
  const withheld = () => namesRedaction(textContent);
  const refused = (code: string, message: string): LoadedPluginsToml => {
    const failClosed = withheld();
    const then = failClosed ? 'it names pii_redaction, so nothing is written rather than unredacted output (fail closed)' : fallback;
    const diagnostic: ConfigDiagnostic = { level: 'error', code, field: 'NEMO_RELAY_HOOKS_PLUGINS_TOML', message: `${message}; ${then}` };
    return failClosed ? { document: null, diagnostics: [diagnostic, WITHHELD], withholdOutputs: true } : { document: null, diagnostics: [diagnostic] };
  };
  let parse: TomlParse;
  try {
    parse = tomlParser();
  } catch (error) {
    // A host bundled into one file (esbuild, Rollup, `bun build`) and deployed without node_modules: the parser is
    // loaded by `require`, which those bundlers do not follow. Said as what it is, not as invalid TOML.
    return refused(
      'plugins_toml.parser_unavailable',
      `cannot read plugins.toml at ${filePath}: its TOML parser, smol-toml (a dependency of nemo-relay-hooks), cannot be loaded (${firstLine(errorMessage(error))}); a bundled host needs smol-toml installed next to the bundle, or nemo-relay-hooks kept out of the bundle`,
    );
  }
  let parsed: unknown;
  try {
    parsed = parse(textContent);
  } catch (error) {
    return refused('plugins_toml.invalid_toml', `invalid TOML in ${filePath}${tomlPosition(error)}: ${firstLine(errorMessage(error))}`);
  }
  // TOML dates become ISO strings: the relay document is plain JSON.
  const document = toJson(parsed);
  return { document: isJsonObject(document) ? document : null, diagnostics: [] };
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

/** Problems in an observability component that the relay accepts silently but that do not write what a reader expects. */
export function pluginsTomlDiagnostics(document: JsonObject | null): ConfigDiagnostic[] {
  const out: ConfigDiagnostic[] = [];
  const config = observabilityComponents(document)[0];
  const atif = config?.atif;
  if (isJsonObject(atif) && atif.enabled !== true) {
    out.push({
      level: 'warning',
      code: 'plugins_toml.atif_writes_nothing',
      field: 'components.config.atif',
      message: '[components.config.atif] is not enabled (enabled = true), so plugins.toml writes no ATIF trajectory; the NEMO_RELAY_HOOKS_ATIF_* settings apply instead',
    });
  } else if (isJsonObject(atif) && !isNonBlank(atif.output_directory)) {
    const uploads = Array.isArray(atif.storage) && atif.storage.length > 0;
    // Both backends then write into the working directory (native's default); saying "nothing" sent users looking in vain.
    out.push({
      level: 'warning',
      code: 'plugins_toml.atif_in_working_directory',
      field: 'components.config.atif.output_directory',
      message: `[components.config.atif] has no output_directory, so plugins.toml ${uploads ? 'keeps the recovery copy of each trajectory whose upload fails' : 'writes each trajectory'} in the working directory (${process.cwd()}); fix: set output_directory to the folder they belong in`,
    });
  }
  if (config !== undefined) out.push(...unknownDestinationKeys(config));
  return out;
}

/**
 * Keys of an ATOF sink or ATIF storage entry that neither backend reads
 * (native ignores them without a word, and the memory relay does as native
 * does): `output_dir` for `output_directory` left the file in the working
 * directory, a misspelt `timeout_millis` the default timeout.
 */
function unknownDestinationKeys(config: JsonObject): ConfigDiagnostic[] {
  const out: ConfigDiagnostic[] = [];
  for (const [section, list] of [['atof', 'sinks'], ['atif', 'storage']] as const) {
    const table = config[section];
    const entries = isJsonObject(table) && Array.isArray(table[list]) ? table[list] : [];
    entries.forEach((entry, i) => {
      if (!isJsonObject(entry) || typeof entry.type !== 'string') return;
      const known = destinationKeys(section, list, entry.type);
      if (known === undefined) return;
      for (const key of Object.keys(entry)) {
        if (key === 'type' || known.includes(key)) continue;
        const near = nearMiss(key, known);
        out.push({
          level: 'warning',
          code: 'plugins_toml.unknown_field',
          field: `components.config.${section}.${list}[${i}].${key}`,
          message: `${section} ${list}[${i}].${key} is not a key of a ${JSON.stringify(entry.type)} ${list === 'sinks' ? 'sink' : 'storage entry'}${near !== undefined ? ` (did you mean ${near}?)` : ''}, so it changes nothing: neither backend reads it (the keys: ${known.join(', ')})`,
        });
      }
    });
  }
  return out;
}

/** The keys the schema gives one variant of `atof.sinks` or `atif.storage`. */
function destinationKeys(section: 'atof' | 'atif', list: 'sinks' | 'storage', type: string): string[] | undefined {
  const unwrap = (schema: Schema | undefined): Schema | undefined => (schema?.t === 'option' || schema?.t === 'seq' ? schema.of : schema);
  const table = unwrap(OBSERVABILITY_SCHEMA.t === 'struct' ? OBSERVABILITY_SCHEMA.fields[section] : undefined);
  const entries = unwrap(table?.t === 'struct' ? table.fields[list] : undefined);
  const variant = entries?.t === 'tagged' ? entries.variants[type] : undefined;
  return variant === undefined ? undefined : Object.keys(variant.fields);
}

/**
 * Creates the output folders the document's enabled observability component
 * names, so the relay can open its files; each folder it creates is added to
 * `created` (for `removeEmptyCreated` when the activation fails).
 */
export function ensureOutputDirectories(document: JsonObject, created: string[]): void {
  for (const directory of outputDirectories(document)) makeDirectory(directory, created);
}

/** smol-toml's line and column of a syntax error (its message has them only in a code block the diagnostic leaves out). */
function tomlPosition(error: unknown): string {
  const { line, column } = (error ?? {}) as { line?: unknown; column?: unknown };
  return typeof line === 'number' && typeof column === 'number' ? ` at line ${line}, column ${column}` : '';
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
