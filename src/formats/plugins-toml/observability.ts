/**
 * The observability component's semantic checks (native's order and
 * messages): unknown and legacy fields, versions, file and stream sinks,
 * the ATIF section and its filename template, OpenTelemetry signals, and
 * the settings the relay then runs with.
 *
 * @module
 */

import type { JsonObject } from '../../shared/json.ts';
import { isJsonObject } from '../../shared/json.ts';
// Guarded: a refused read (Deno without --allow-env) answers undefined instead of throwing out of validation.
import { processEnv, readVariable, type VariableRead } from '../../shared/env.ts';
import type { ConfigDiagnostic } from './diagnostic.ts';
import { parseFilenameTemplate } from './atif-template.ts';
import { openTelemetrySettings, validateOpenTelemetry, type OpenTelemetrySettings } from './opentelemetry.ts';
import { destinationOf, readAtifStorage, readStreamSinks, validateStorageEntry, validateStreamSink } from './sinks.ts';
import { levelFor, POLICY_FIELDS, type Policy } from './policy.ts';
import { checkShape } from './shape.ts';
import { OBSERVABILITY_SCHEMA } from './schema.ts';
import {
  DEFAULT_ATIF_AGENT_NAME,
  DEFAULT_ATIF_AGENT_VERSION,
  DEFAULT_ATIF_FILENAME_TEMPLATE,
  DEFAULT_ATIF_MODEL_NAME,
  type AtifSettings,
  type FileSinkSettings,
  type ObservabilitySettings,
} from './observability-settings.ts';

const OBSERVABILITY_FIELDS = ['version', 'atof', 'atif', 'opentelemetry', 'openinference', 'policy', 'enable_full_payloads'];
const ATOF_FIELDS = ['enabled', 'sinks'];
const LEGACY_ATOF_FIELDS = ['output_directory', 'filename', 'mode', 'endpoints'];
const ATIF_FIELDS = [
  'enabled',
  'agent_name',
  'agent_version',
  'model_name',
  'tool_definitions',
  'extra',
  'output_directory',
  'filename_template',
  'storage',
];
const OTEL_FIELDS = ['enabled', 'endpoints', 'logs', 'metrics'];
const OTEL_ENDPOINT_FIELDS = [
  'type',
  'endpoint',
  'transport',
  'service_name',
  'service_namespace',
  'service_version',
  'instrumentation_scope',
  'timeout_millis',
  'max_queue_size',
  'max_export_batch_size',
  'scheduled_delay_millis',
  'headers',
  'header_env',
  'resource_attributes',
  'mark_projection',
  'mark_exclude_names',
  'attribute_mappings',
  'promote_metadata_prefixes',
];
const OTEL_LOGS_FIELDS = ['enabled', 'endpoints', 'minimum_severity', 'max_queue_size', 'max_export_batch_size', 'scheduled_delay_millis'];
const OTEL_METRICS_FIELDS = ['enabled', 'endpoints', 'export_interval_millis', 'temporality', 'max_instruments', 'cardinality_limit'];

export interface ObservabilityResult {
  diagnostics: ConfigDiagnostic[];
  settings: ObservabilitySettings;
}

/**
 * Validates the observability component in native's order (its shape;
 * unknown and legacy fields and versions; then each section's semantics)
 * and derives the settings the relay runs with.
 */
export function validateObservability(config: JsonObject, documentPolicy: Policy): ObservabilityResult {
  const typeError = checkShape(config, OBSERVABILITY_SCHEMA);
  if (typeError !== null) return { diagnostics: [invalidShape(typeError)], settings: emptySettings() };
  const checks = new Checks({ ...documentPolicy, ...((config.policy ?? {}) as Policy) });
  const version = config.version ?? 4;
  const atof = isJsonObject(config.atof) ? config.atof : null;
  const atif = isJsonObject(config.atif) ? config.atif : null;
  const otel = isJsonObject(config.opentelemetry) ? config.opentelemetry : null;

  checkFields(config, version, atof, atif, otel, checks);
  const atofEnabled = atof !== null && atof.enabled === true;
  const fileSinks = atof === null ? [] : atofFileSinks(atof, atofEnabled, checks);
  const atifSettings = atif === null ? null : atifSettingsOf(atif, checks);
  const backend: ConfigDiagnostic[] = [];
  let opentelemetry: OpenTelemetrySettings = { traces: [], logs: [] };
  if (otel !== null) {
    validateOpenTelemetry(otel, version, checks.unsupported, (d) => checks.out.push(d));
    // An error confined to one stream sink or store skips that destination (below), not the endpoints: doctor
    // summarized and checked none of them while the host, activating without that destination, sent to them all.
    const fatal = checks.out.some((d) => d.level === 'error' && destinationOf(d, config) === null);
    if (!fatal) opentelemetry = openTelemetrySettings(otel, version, processEnv(), (d) => backend.push(d));
  }

  const out = checks.out;
  out.push(...backend);
  // An error confined to one stream sink or storage entry skips that destination; the rest still runs.
  const skipped = out.filter((d) => d.level === 'error' && destinationOf(d, config) !== null);
  const skip = (section: 'atof' | 'atif') => new Set(skipped.map((d) => destinationOf(d, config)).filter((d) => d?.section === section).map((d) => d!.index));
  const env = processEnv();
  return {
    diagnostics: out,
    settings: {
      fileSinks: atofEnabled ? fileSinks : [],
      atif: atifSettings,
      streamSinks: readStreamSinks(config, skip('atof'), env),
      storage: atifSettings === null ? [] : readAtifStorage(config, skip('atif'), env),
      skipped,
      opentelemetry,
    },
  };
}

function emptySettings(): ObservabilitySettings {
  return { fileSinks: [], atif: null, opentelemetry: { traces: [], logs: [] }, streamSinks: [], storage: [], skipped: [] };
}

function invalidShape(typeError: string): ConfigDiagnostic {
  return {
    level: 'error',
    code: 'observability.invalid_plugin_config',
    component: 'observability',
    message: `invalid config: invalid observability plugin config: ${typeError}`,
  };
}

/** The diagnostics found so far, and the two kinds whose level the document's policy sets. */
class Checks {
  readonly out: ConfigDiagnostic[] = [];
  readonly unknownLevel: ConfigDiagnostic['level'] | null;
  readonly #valueLevel: ConfigDiagnostic['level'] | null;

  constructor(policy: Policy) {
    this.unknownLevel = levelFor(policy.unknown_field);
    this.#valueLevel = levelFor(policy.unsupported_value, 'error');
  }

  /** Every key of `object` not in `known`, sorted, at the policy's level for unknown fields. */
  unknown(component: string, object: JsonObject, known: readonly string[]): void {
    const level = this.unknownLevel;
    if (level === null) return;
    for (const key of Object.keys(object).sort()) {
      if (!known.includes(key)) {
        this.out.push({ level, code: 'observability.unknown_field', component, field: key, message: `field '${key}' is not recognized for '${component}'` });
      }
    }
  }

  /** A value the relay cannot run with, at the policy's level for unsupported values (an arrow: handed to the section checks). */
  readonly unsupported = (component: string, field: string, message: string): void => {
    if (this.#valueLevel !== null) this.out.push({ level: this.#valueLevel, code: 'observability.unsupported_value', component, field, message });
  };

  error(code: string, component: string, field: string, message: string): void {
    this.out.push({ level: 'error', code: `observability.${code}`, component, field, message });
  }
}

/** Step 1, in native's order: unknown fields, the legacy sections and fields, the version. */
function checkFields(config: JsonObject, version: unknown, atof: JsonObject | null, atif: JsonObject | null, otel: JsonObject | null, checks: Checks): void {
  checks.unknown('observability', config, OBSERVABILITY_FIELDS);
  if ('openinference' in config) {
    checks.error(
      'legacy_openinference_section',
      'observability',
      'openinference',
      'the standalone OpenInference section was removed in observability config version 3; configure an opentelemetry endpoint with type = "openinference"',
    );
  }
  if (version !== 3 && version !== 4) {
    checks.error(
      'unsupported_config_version',
      'observability',
      'version',
      `observability config version ${String(version)} is unsupported; use version 4 (or version 3 for trace-only compatibility)`,
    );
  }
  if (atof !== null) {
    checks.unknown('atof', atof, ATOF_FIELDS);
    for (const field of LEGACY_ATOF_FIELDS) {
      if (field in atof) checks.error('legacy_atof_field', 'atof', field, `ATOF ${field} was removed in observability config version 2; configure typed ATOF sinks instead`);
    }
  }
  if (atif !== null) checks.unknown('atif', atif, ATIF_FIELDS);
  if (otel !== null) checkOpenTelemetryFields(otel, checks);
  if (isJsonObject(config.policy)) checks.unknown('policy', config.policy, POLICY_FIELDS);
}

function checkOpenTelemetryFields(otel: JsonObject, checks: Checks): void {
  checks.unknown('opentelemetry', otel, OTEL_FIELDS);
  const level = checks.unknownLevel;
  const endpoints = Array.isArray(otel.endpoints) ? (otel.endpoints as JsonObject[]) : [];
  endpoints.forEach((endpoint, i) => {
    if (level === null) return;
    for (const key of Object.keys(endpoint).sort()) {
      if (!OTEL_ENDPOINT_FIELDS.includes(key)) {
        checks.out.push({
          level,
          code: 'observability.unknown_field',
          component: 'opentelemetry',
          field: `endpoints[${i}].${key}`,
          message: `unknown OpenTelemetry endpoint field ${JSON.stringify(key)}`,
        });
      }
    }
  });
  if (isJsonObject(otel.logs)) {
    checks.unknown('opentelemetry.logs', otel.logs, OTEL_LOGS_FIELDS);
    // Native reports a log endpoint's unknown keys against the logs section.
    const logEndpoints = Array.isArray(otel.logs.endpoints) ? otel.logs.endpoints.filter(isJsonObject) : [];
    for (const endpoint of logEndpoints) checks.unknown('opentelemetry.logs', endpoint, OTEL_ENDPOINT_FIELDS);
  }
  if (isJsonObject(otel.metrics)) checks.unknown('opentelemetry.metrics', otel.metrics, OTEL_METRICS_FIELDS);
}

/** The ATOF section's file sinks (stream sinks are checked here and read later, by `readStreamSinks`). */
function atofFileSinks(atof: JsonObject, enabled: boolean, checks: Checks): FileSinkSettings[] {
  const fileSinks: FileSinkSettings[] = [];
  const sinks = Array.isArray(atof.sinks) ? (atof.sinks as JsonObject[]) : [];
  if (enabled && sinks.length === 0) checks.unsupported('atof', 'sinks', 'ATOF requires at least one configured sink when enabled');
  const names = new Set<string>();
  sinks.forEach((sink, i) => {
    if (sink.type !== 'file') {
      validateStreamSink(sink, i, names, checks.unsupported, readEnv);
      return;
    }
    const mode = sink.mode ?? 'append';
    if (mode !== 'append' && mode !== 'overwrite') {
      checks.unsupported('atof', `sinks[${i}].mode`, `ATOF sinks[${i}].mode must be 'append' or 'overwrite'`);
      return;
    }
    fileSinks.push({
      index: i,
      outputDirectory: typeof sink.output_directory === 'string' ? sink.output_directory : undefined,
      filename: typeof sink.filename === 'string' ? sink.filename : undefined,
      mode,
    });
  });
  return fileSinks;
}

/** The ATIF section: its filename template and storage entries checked, its settings when enabled and the template parses. */
function atifSettingsOf(atif: JsonObject, checks: Checks): AtifSettings | null {
  const template = typeof atif.filename_template === 'string' ? atif.filename_template : DEFAULT_ATIF_FILENAME_TEMPLATE;
  const parsed = parseFilenameTemplate(template);
  if ('error' in parsed) checks.unsupported('atif', 'filename_template', parsed.error);
  const storage = Array.isArray(atif.storage) ? (atif.storage as JsonObject[]) : [];
  storage.forEach((store, i) => validateStorageEntry(store, i, checks.unsupported, readEnv));
  if (atif.enabled !== true || 'error' in parsed) return null;
  return {
    agentName: typeof atif.agent_name === 'string' ? atif.agent_name : DEFAULT_ATIF_AGENT_NAME,
    agentVersion: typeof atif.agent_version === 'string' ? atif.agent_version : DEFAULT_ATIF_AGENT_VERSION,
    modelName: typeof atif.model_name === 'string' ? atif.model_name : DEFAULT_ATIF_MODEL_NAME,
    outputDirectory: typeof atif.output_directory === 'string' ? atif.output_directory : undefined,
    template: parsed,
    toolDefinitions: Array.isArray(atif.tool_definitions) ? atif.tool_definitions : undefined,
    extra: isJsonObject(atif.extra) ? atif.extra : undefined,
  };
}

function readEnv(name: string): VariableRead {
  return readVariable(processEnv(), name);
}
