/**
 * Validation of a `plugins.toml` document for the in-memory relay, with
 * native's diagnostic codes, messages and order.
 *
 * Native validates in two layers, and so does this module:
 * 1. Shape (serde): the document and each component are deserialized into
 *    typed structs. The first type error ends validation: for the document
 *    it is thrown (`invalid plugin config: ...`), for the observability
 *    config it becomes one `observability.invalid_plugin_config`
 *    diagnostic. Keys are visited in sorted order, as serde sees them.
 * 2. Semantics: unknown fields (warnings), legacy fields, versions, sinks,
 *    the ATIF filename template, OpenTelemetry signals.
 *
 * On top of native's diagnostics, the memory relay reports what it cannot
 * do itself as warnings with code `observability.backend_unsupported`
 * (OpenTelemetry) and
 * `plugin.backend_unsupported_component` (the other native component kinds,
 * dynamic plugins). Those parts are skipped; everything else still works.
 *
 * Relative paths resolve against the working directory, as native does.
 *
 * @module
 */

import type { Json, JsonObject } from '../../shared/json.ts';
import type { ConfigDiagnostic } from './diagnostic.ts';
import { isJsonObject } from '../../shared/json.ts';
import type { AtofMode } from '../atof/types.ts';
import { parseFilenameTemplate, type ParsedTemplate } from './atif-template.ts';
import { openTelemetrySettings, validateOpenTelemetry, type OpenTelemetrySettings } from './opentelemetry.ts';
import {
  destinationOf,
  readAtifStorage,
  readStreamSinks,
  validateStorageEntry,
  validateStreamSink,
  type AtifStorageSettings,
  type StreamSinkSettings,
} from './sinks.ts';

/** The ATIF `agent_version` native writes when none is configured (its Relay crate version). */
export const DEFAULT_ATIF_AGENT_VERSION = '0.9.0';
export const DEFAULT_ATIF_AGENT_NAME = 'NeMo Relay';
export const DEFAULT_ATIF_MODEL_NAME = 'unknown';
export const DEFAULT_ATIF_FILENAME_TEMPLATE = 'nemo-relay-atif-{session_id}.json';

export interface FileSinkSettings {
  /** Position in `atof.sinks`, for messages. */
  index: number;
  outputDirectory: string | undefined;
  filename: string | undefined;
  mode: AtofMode;
}

export interface AtifSettings {
  agentName: string;
  agentVersion: string;
  modelName: string;
  outputDirectory: string | undefined;
  template: ParsedTemplate;
  toolDefinitions: Json[] | undefined;
  extra: JsonObject | undefined;
}

/** What an enabled observability component asks the memory relay to do. */
export interface ObservabilitySettings {
  fileSinks: FileSinkSettings[];
  atif: AtifSettings | null;
  /** OTLP trace and log destinations (empty when the section is absent or disabled). */
  opentelemetry: OpenTelemetrySettings;
  /** ATOF stream sinks (of an enabled ATOF section). */
  streamSinks: StreamSinkSettings[];
  /** ATIF remote storage (of an enabled ATIF section). */
  storage: AtifStorageSettings[];
  /**
   * Error diagnostics that concern one stream sink or storage entry only:
   * native rejects the document for them; the memory relay skips that
   * destination and activates the rest.
   */
  skipped: ConfigDiagnostic[];
}

export interface PluginConfigValidation {
  diagnostics: ConfigDiagnostic[];
  /**
   * Set when the document itself does not have the expected shape (native
   * throws this text from `validate()`); `diagnostics` then holds it as one
   * `plugin.invalid_config` error.
   */
  shapeError?: string;
  /** The enabled observability component's settings, when it validated without errors. */
  observability: ObservabilitySettings | null;
}

type Behavior = 'ignore' | 'warn' | 'error';
interface Policy {
  unknown_component?: Behavior;
  unknown_field?: Behavior;
  unsupported_value?: Behavior;
}

/** Kinds native 0.9.2 registers; the memory relay implements only `observability`. */
const NATIVE_KINDS = new Set(['adaptive', 'nemo_guardrails', 'observability', 'pii_redaction', 'pricing']);

/** Validates a `plugins.toml` document. Never throws. */
export function validatePluginConfig(document: unknown): PluginConfigValidation {
  const shapeError = checkShape(document, DOCUMENT_SCHEMA);
  if (shapeError !== null) {
    const message = `invalid plugin config: ${shapeError}`;
    return {
      diagnostics: [{ level: 'error', code: 'plugin.invalid_config', message }],
      shapeError: message,
      observability: null,
    };
  }
  const doc = (isJsonObject(document) ? document : {}) as JsonObject;
  const policy = (doc.policy ?? {}) as Policy;
  const diagnostics: ConfigDiagnostic[] = [];
  const version = doc.version ?? 1;
  if (version !== 1) {
    diagnostics.push({
      level: 'error',
      code: 'plugin.unsupported_config_version',
      field: 'version',
      message: `plugin config version ${String(version)} is unsupported`,
    });
  }
  const components = (doc.components ?? []) as JsonObject[];
  const seen = new Set<string>();
  const reported = new Set<string>();
  for (const component of components) {
    const kind = component.kind as string;
    if (seen.has(kind) && NATIVE_KINDS.has(kind) && !reported.has(kind)) {
      reported.add(kind);
      diagnostics.push({
        level: 'error',
        code: 'plugin.duplicate_component',
        component: kind,
        message: `plugin component kind '${kind}' may only appear once`,
      });
    }
    seen.add(kind);
  }
  let observability: ObservabilitySettings | null = null;
  for (const component of components) {
    const kind = component.kind as string;
    const enabled = component.enabled !== false;
    if (kind === 'observability') {
      const config = (component.config ?? {}) as JsonObject;
      const result = validateObservability(config, policy);
      diagnostics.push(...result.diagnostics);
      const skipped = new Set(result.settings.skipped);
      if (enabled && observability === null && !result.diagnostics.some((d) => d.level === 'error' && !skipped.has(d))) {
        observability = result.settings;
      }
    } else if (NATIVE_KINDS.has(kind)) {
      if (enabled) {
        diagnostics.push({
          level: 'warning',
          code: 'plugin.backend_unsupported_component',
          component: kind,
          message: `plugin component kind '${kind}' is not supported by the in-memory relay and is ignored; use the native backend for it`,
        });
      }
    } else {
      const level = levelFor(policy.unknown_component);
      if (level !== null) {
        diagnostics.push({
          level,
          code: 'plugin.unknown_component',
          component: kind,
          message: `plugin component kind '${kind}' is unsupported`,
        });
      }
    }
  }
  const plugins = doc.plugins;
  if (isJsonObject(plugins) && Array.isArray(plugins.dynamic) && plugins.dynamic.length > 0) {
    diagnostics.push({
      level: 'warning',
      code: 'plugin.backend_unsupported_component',
      field: 'plugins.dynamic',
      message: 'dynamic plugins are not supported by the in-memory relay and are ignored; use the native backend for them',
    });
  }
  return { diagnostics, observability };
}

/** Native's `initialize` error text for a document with error diagnostics, or null when it may activate. */
export function activationError(validation: PluginConfigValidation): string | null {
  if (validation.shapeError !== undefined) return validation.shapeError;
  const errors = validation.diagnostics.filter((d) => d.level === 'error');
  if (errors.length === 0) return null;
  return `invalid config: ${errors.map((d) => d.message).join('; ')}`;
}

// ---- observability -----------------------------------------------------------------

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

interface ObservabilityResult {
  diagnostics: ConfigDiagnostic[];
  settings: ObservabilitySettings;
}

function validateObservability(config: JsonObject, documentPolicy: Policy): ObservabilityResult {
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

function processEnv(): Record<string, string | undefined> {
  try {
    return (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {};
  } catch {
    return {};
  }
}

function levelFor(behavior: Behavior | undefined, fallback: 'warning' | 'error' = 'warning'): 'warning' | 'error' | null {
  if (behavior === 'ignore') return null;
  if (behavior === 'warn') return 'warning';
  if (behavior === 'error') return 'error';
  return fallback;
}

// ---- serde-style shape checks --------------------------------------------------------

type Schema =
  | { t: 'string' | 'bool' | 'u32' | 'u64' | 'any' | 'map' }
  | { t: 'option'; of: Schema }
  | { t: 'seq'; of: Schema }
  | { t: 'stringMap' }
  | { t: 'struct'; name: string; fields: Record<string, Schema>; required?: readonly string[] }
  | { t: 'tagged'; name: string; variants: Record<string, Schema & { t: 'struct' }> }
  | { t: 'enum'; variants: readonly string[] };

const STRING: Schema = { t: 'string' };
const BOOL: Schema = { t: 'bool' };
const U32: Schema = { t: 'u32' };
const U64: Schema = { t: 'u64' };
const ANY: Schema = { t: 'any' };
const optional = (of: Schema): Schema => ({ t: 'option', of });
const BEHAVIOR: Schema = { t: 'enum', variants: ['ignore', 'warn', 'error'] };
const POLICY_SCHEMA: Schema = {
  t: 'struct',
  name: 'ConfigPolicy',
  fields: { unknown_component: BEHAVIOR, unknown_field: BEHAVIOR, unsupported_value: BEHAVIOR },
};

const DOCUMENT_SCHEMA: Schema = {
  t: 'struct',
  name: 'PluginConfig',
  fields: {
    version: U32,
    components: {
      t: 'seq',
      of: {
        t: 'struct',
        name: 'PluginComponentSpec',
        fields: { kind: STRING, enabled: BOOL, config: { t: 'map' } },
        required: ['kind'],
      },
    },
    policy: POLICY_SCHEMA,
  },
};

const HEADERS: Schema = { t: 'stringMap' };
const OTEL_ENDPOINT: Schema = {
  t: 'struct',
  name: 'OpenTelemetryEndpointConfig',
  fields: {
    type: { t: 'enum', variants: ['full', 'gen_ai', 'openinference'] },
    endpoint: STRING,
    transport: STRING,
    service_name: STRING,
    service_namespace: optional(STRING),
    service_version: optional(STRING),
    instrumentation_scope: STRING,
    timeout_millis: U64,
    max_queue_size: U64,
    max_export_batch_size: U64,
    scheduled_delay_millis: U64,
    headers: HEADERS,
    header_env: HEADERS,
    resource_attributes: HEADERS,
    mark_projection: { t: 'enum', variants: ['inherit', 'event', 'tool'] },
    mark_exclude_names: { t: 'seq', of: STRING },
    attribute_mappings: {
      t: 'seq',
      of: { t: 'struct', name: 'AttributeMapping', fields: { key: STRING, alias: STRING }, required: ['key', 'alias'] },
    },
    promote_metadata_prefixes: { t: 'seq', of: STRING },
  },
  required: ['type', 'endpoint'],
};
const OTEL_SIGNAL_ENDPOINT: Schema = {
  t: 'struct',
  name: 'OpenTelemetrySignalEndpointConfig',
  fields: { endpoint: STRING, transport: STRING, headers: HEADERS, header_env: HEADERS, resource_attributes: HEADERS, timeout_millis: U64 },
  required: ['endpoint'],
};

const OBSERVABILITY_SCHEMA: Schema = {
  t: 'struct',
  name: 'ObservabilityPluginConfig',
  fields: {
    version: U32,
    enable_full_payloads: BOOL,
    policy: POLICY_SCHEMA,
    atof: optional({
      t: 'struct',
      name: 'AtofSectionConfig',
      fields: {
        enabled: BOOL,
        sinks: {
          t: 'seq',
          of: {
            t: 'tagged',
            name: 'AtofSinkSectionConfig',
            variants: {
              file: {
                t: 'struct',
                name: 'AtofFileSinkConfig',
                fields: { output_directory: optional(STRING), filename: optional(STRING), mode: STRING },
              },
              stream: {
                t: 'struct',
                name: 'AtofStreamSinkConfig',
                fields: {
                  url: STRING,
                  transport: STRING,
                  headers: HEADERS,
                  header_env: HEADERS,
                  timeout_millis: U64,
                  field_name_policy: STRING,
                  name: optional(STRING),
                },
                required: ['url'],
              },
            },
          },
        },
      },
    }),
    atif: optional({
      t: 'struct',
      name: 'AtifSectionConfig',
      fields: {
        enabled: BOOL,
        agent_name: STRING,
        agent_version: STRING,
        model_name: STRING,
        tool_definitions: optional({ t: 'seq', of: ANY }),
        extra: ANY,
        output_directory: optional(STRING),
        filename_template: STRING,
        storage: {
          t: 'seq',
          of: {
            t: 'tagged',
            name: 'AtifStorageConfig',
            variants: {
              http: {
                t: 'struct',
                name: 'AtifHttpStorageConfig',
                fields: { endpoint: STRING, headers: HEADERS, header_env: HEADERS, timeout_millis: U64 },
                required: ['endpoint'],
              },
              s3: {
                t: 'struct',
                name: 'AtifS3StorageConfig',
                fields: {
                  bucket: STRING,
                  key_prefix: optional(STRING),
                  region: optional(STRING),
                  endpoint_url: optional(STRING),
                  access_key_id: optional(STRING),
                  secret_access_key_var: optional(STRING),
                  session_token_var: optional(STRING),
                  allow_http: BOOL,
                },
              },
            },
          },
        },
      },
    }),
    opentelemetry: optional({
      t: 'struct',
      name: 'OpenTelemetrySectionConfig',
      fields: {
        enabled: BOOL,
        endpoints: { t: 'seq', of: OTEL_ENDPOINT },
        logs: optional({ t: 'struct', name: 'OpenTelemetryLogsConfig', fields: { enabled: BOOL, endpoints: { t: 'seq', of: OTEL_SIGNAL_ENDPOINT } } }),
      },
    }),
  },
};

/** Returns serde's error text for the first shape error, visiting keys in sorted order, or null. */
function checkShape(value: unknown, schema: Schema): string | null {
  switch (schema.t) {
    case 'any':
      return null;
    case 'option':
      return value === null ? null : checkShape(value, schema.of);
    case 'string':
      return typeof value === 'string' ? null : invalidType(value, 'a string');
    case 'bool':
      return typeof value === 'boolean' ? null : invalidType(value, 'a boolean');
    case 'u32':
    case 'u64': {
      const expected = schema.t;
      if (typeof value !== 'number') return invalidType(value, expected);
      if (!Number.isInteger(value)) return invalidType(value, expected);
      const max = expected === 'u32' ? 0xffff_ffff : Number.MAX_SAFE_INTEGER;
      if (value < 0 || value > max) return `invalid value: integer \`${value}\`, expected ${expected}`;
      return null;
    }
    case 'map':
      return isJsonObject(value) ? null : invalidType(value, 'a map');
    case 'stringMap': {
      if (!isJsonObject(value)) return invalidType(value, 'a map');
      for (const key of Object.keys(value).sort()) {
        const error = checkShape(value[key], STRING);
        if (error !== null) return error;
      }
      return null;
    }
    case 'seq': {
      if (!Array.isArray(value)) return invalidType(value, 'a sequence');
      for (const item of value) {
        const error = checkShape(item, schema.of);
        if (error !== null) return error;
      }
      return null;
    }
    case 'enum': {
      if (typeof value !== 'string') return invalidType(value, 'variant identifier');
      return schema.variants.includes(value) ? null : `unknown variant \`${value}\`, expected ${expectedVariants(schema.variants)}`;
    }
    case 'struct':
      return checkStruct(value, schema, undefined);
    case 'tagged': {
      if (!isJsonObject(value)) return invalidType(value, `internally tagged enum ${schema.name}`);
      if (!('type' in value)) return 'missing field `type`';
      const tag = value.type;
      if (typeof tag !== 'string') return invalidType(tag, 'variant identifier');
      const variant = schema.variants[tag];
      if (variant === undefined) return `unknown variant \`${tag}\`, expected ${expectedVariants(Object.keys(schema.variants))}`;
      return checkStruct(value, variant, 'type');
    }
  }
}

function checkStruct(value: unknown, schema: Schema & { t: 'struct' }, skip: string | undefined): string | null {
  if (!isJsonObject(value)) return invalidType(value, `struct ${schema.name}`);
  for (const key of Object.keys(value).sort()) {
    if (key === skip) continue;
    const field = schema.fields[key];
    if (field === undefined) continue;
    const error = checkShape(value[key], field);
    if (error !== null) return error;
  }
  for (const key of schema.required ?? []) {
    if (!(key in value)) return `missing field \`${key}\``;
  }
  return null;
}

function expectedVariants(variants: readonly string[]): string {
  const quoted = variants.map((v) => `\`${v}\``);
  return quoted.length === 2 ? `${quoted[0]} or ${quoted[1]}` : `one of ${quoted.join(', ')}`;
}

/** serde's `invalid type: <unexpected>, expected <what>`. */
function invalidType(value: unknown, expected: string): string {
  return `invalid type: ${unexpected(value)}, expected ${expected}`;
}

function unexpected(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'boolean':
      return `boolean \`${value}\``;
    case 'number':
      return Number.isInteger(value) ? `integer \`${value}\`` : `floating point \`${value}\``;
    case 'string':
      return `string ${JSON.stringify(value)}`;
  }
  return Array.isArray(value) ? 'sequence' : 'map';
}
