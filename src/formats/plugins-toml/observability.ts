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
import { processEnv } from '../../shared/env.ts';
import type { ConfigDiagnostic } from './diagnostic.ts';
import { parseFilenameTemplate } from './atif-template.ts';
import { openTelemetrySettings, validateOpenTelemetry, type OpenTelemetrySettings } from './opentelemetry.ts';
import { destinationOf, readAtifStorage, readStreamSinks, validateStorageEntry, validateStreamSink } from './sinks.ts';
import { levelFor, type Policy } from './policy.ts';
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
} from './settings.ts';

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
const POLICY_FIELDS = ['unknown_component', 'unknown_field', 'unsupported_value'];

export interface ObservabilityResult {
  diagnostics: ConfigDiagnostic[];
  settings: ObservabilitySettings;
}

export function validateObservability(config: JsonObject, documentPolicy: Policy): ObservabilityResult {
  const empty: ObservabilitySettings = { fileSinks: [], atif: null, opentelemetry: { traces: [], logs: [] }, streamSinks: [], storage: [], skipped: [] };
  const typeError = checkShape(config, OBSERVABILITY_SCHEMA);
  if (typeError !== null) {
    return {
      diagnostics: [
        {
          level: 'error',
          code: 'observability.invalid_plugin_config',
          component: 'observability',
          message: `invalid config: invalid observability plugin config: ${typeError}`,
        },
      ],
      settings: empty,
    };
  }
  const policy: Policy = { ...documentPolicy, ...((config.policy ?? {}) as Policy) };
  const out: ConfigDiagnostic[] = [];
  const unknownLevel = levelFor(policy.unknown_field);
  const valueLevel = levelFor(policy.unsupported_value, 'error');
  const unknown = (component: string, object: JsonObject, known: readonly string[]): void => {
    if (unknownLevel === null) return;
    for (const key of Object.keys(object).sort()) {
      if (!known.includes(key)) {
        out.push({
          level: unknownLevel,
          code: 'observability.unknown_field',
          component,
          field: key,
          message: `field '${key}' is not recognized for '${component}'`,
        });
      }
    }
  };
  const unsupported = (component: string, field: string, message: string): void => {
    if (valueLevel !== null) out.push({ level: valueLevel, code: 'observability.unsupported_value', component, field, message });
  };

  const version = config.version ?? 4;
  const atof = isJsonObject(config.atof) ? config.atof : null;
  const atif = isJsonObject(config.atif) ? config.atif : null;
  const otel = isJsonObject(config.opentelemetry) ? config.opentelemetry : null;

  // 1. Unknown fields, legacy sections and versions, in native's order.
  unknown('observability', config, OBSERVABILITY_FIELDS);
  if ('openinference' in config) {
    out.push({
      level: 'error',
      code: 'observability.legacy_openinference_section',
      component: 'observability',
      field: 'openinference',
      message:
        'the standalone OpenInference section was removed in observability config version 3; configure an opentelemetry endpoint with type = "openinference"',
    });
  }
  if (version !== 3 && version !== 4) {
    out.push({
      level: 'error',
      code: 'observability.unsupported_config_version',
      component: 'observability',
      field: 'version',
      message: `observability config version ${String(version)} is unsupported; use version 4 (or version 3 for trace-only compatibility)`,
    });
  }
  if (atof !== null) {
    unknown('atof', atof, ATOF_FIELDS);
    for (const field of LEGACY_ATOF_FIELDS) {
      if (field in atof) {
        out.push({
          level: 'error',
          code: 'observability.legacy_atof_field',
          component: 'atof',
          field,
          message: `ATOF ${field} was removed in observability config version 2; configure typed ATOF sinks instead`,
        });
      }
    }
  }
  if (atif !== null) unknown('atif', atif, ATIF_FIELDS);
  if (otel !== null) {
    unknown('opentelemetry', otel, OTEL_FIELDS);
    const endpoints = Array.isArray(otel.endpoints) ? (otel.endpoints as JsonObject[]) : [];
    endpoints.forEach((endpoint, i) => {
      if (unknownLevel === null) return;
      for (const key of Object.keys(endpoint).sort()) {
        if (!OTEL_ENDPOINT_FIELDS.includes(key)) {
          out.push({
            level: unknownLevel,
            code: 'observability.unknown_field',
            component: 'opentelemetry',
            field: `endpoints[${i}].${key}`,
            message: `unknown OpenTelemetry endpoint field ${JSON.stringify(key)}`,
          });
        }
      }
    });
    if (isJsonObject(otel.logs)) {
      unknown('opentelemetry.logs', otel.logs, OTEL_LOGS_FIELDS);
      // Native reports a log endpoint's unknown keys against the logs section.
      const logEndpoints = Array.isArray(otel.logs.endpoints) ? otel.logs.endpoints.filter(isJsonObject) : [];
      for (const endpoint of logEndpoints) unknown('opentelemetry.logs', endpoint, OTEL_ENDPOINT_FIELDS);
    }
    if (isJsonObject(otel.metrics)) unknown('opentelemetry.metrics', otel.metrics, OTEL_METRICS_FIELDS);
  }
  if (isJsonObject(config.policy)) unknown('policy', config.policy, POLICY_FIELDS);

  // 2. Section semantics: ATOF sinks, the ATIF template, OpenTelemetry signals.
  const fileSinks: FileSinkSettings[] = [];
  const backend: ConfigDiagnostic[] = [];
  const atofEnabled = atof !== null && atof.enabled === true;
  if (atof !== null) {
    const sinks = Array.isArray(atof.sinks) ? (atof.sinks as JsonObject[]) : [];
    if (atofEnabled && sinks.length === 0) {
      unsupported('atof', 'sinks', 'ATOF requires at least one configured sink when enabled');
    }
    const names = new Set<string>();
    sinks.forEach((sink, i) => {
      if (sink.type === 'file') {
        const mode = sink.mode ?? 'append';
        if (mode !== 'append' && mode !== 'overwrite') {
          unsupported('atof', `sinks[${i}].mode`, `ATOF sinks[${i}].mode must be 'append' or 'overwrite'`);
          return;
        }
        fileSinks.push({
          index: i,
          outputDirectory: typeof sink.output_directory === 'string' ? sink.output_directory : undefined,
          filename: typeof sink.filename === 'string' ? sink.filename : undefined,
          mode,
        });
        return;
      }
      validateStreamSink(sink, i, names, unsupported, readEnv);
    });
  }

  let atifSettings: AtifSettings | null = null;
  if (atif !== null) {
    const template = typeof atif.filename_template === 'string' ? atif.filename_template : DEFAULT_ATIF_FILENAME_TEMPLATE;
    const parsed = parseFilenameTemplate(template);
    if ('error' in parsed) unsupported('atif', 'filename_template', parsed.error);
    const storage = Array.isArray(atif.storage) ? (atif.storage as JsonObject[]) : [];
    storage.forEach((store, i) => validateStorageEntry(store, i, unsupported, readEnv));
    if (atif.enabled === true) {
      if (!('error' in parsed)) {
        atifSettings = {
          agentName: typeof atif.agent_name === 'string' ? atif.agent_name : DEFAULT_ATIF_AGENT_NAME,
          agentVersion: typeof atif.agent_version === 'string' ? atif.agent_version : DEFAULT_ATIF_AGENT_VERSION,
          modelName: typeof atif.model_name === 'string' ? atif.model_name : DEFAULT_ATIF_MODEL_NAME,
          outputDirectory: typeof atif.output_directory === 'string' ? atif.output_directory : undefined,
          template: parsed,
          toolDefinitions: Array.isArray(atif.tool_definitions) ? atif.tool_definitions : undefined,
          extra: isJsonObject(atif.extra) ? atif.extra : undefined,
        };
      }
    }
  }

  let opentelemetry: OpenTelemetrySettings = { traces: [], logs: [] };
  if (otel !== null) {
    validateOpenTelemetry(otel, version, unsupported, (d) => out.push(d));
    if (!out.some((d) => d.level === 'error')) opentelemetry = openTelemetrySettings(otel, version, processEnv(), (d) => backend.push(d));
  }

  out.push(...backend);
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

function readEnv(name: string): string | undefined {
  return processEnv()[name];
}
