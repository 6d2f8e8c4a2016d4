/**
 * The shapes native deserializes a `plugins.toml` document and its
 * observability component into (its serde structs, field by field).
 *
 * @module
 */

import { ANY, BEHAVIOR, BOOL, optional, STRING, U32, U64, USIZE, type Schema } from './shape.ts';

/** A `[policy]` table, in the document and in each component's config. */
export const POLICY_SCHEMA: Schema = {
  t: 'struct',
  name: 'ConfigPolicy',
  fields: { unknown_component: BEHAVIOR, unknown_field: BEHAVIOR, unsupported_value: BEHAVIOR },
};

export const DOCUMENT_SCHEMA: Schema = {
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

/** Header values are often credentials: a type error in them does not quote the value (`headers = "authorization=Bearer ..."`). */
const HEADERS: Schema = { t: 'stringMap', secret: true };
const ATTRIBUTES: Schema = { t: 'stringMap' };
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
    max_queue_size: USIZE,
    max_export_batch_size: USIZE,
    scheduled_delay_millis: U64,
    headers: HEADERS,
    header_env: HEADERS,
    resource_attributes: ATTRIBUTES,
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
  fields: { endpoint: STRING, transport: STRING, headers: HEADERS, header_env: HEADERS, resource_attributes: ATTRIBUTES, timeout_millis: U64 },
  required: ['endpoint'],
};

export const OBSERVABILITY_SCHEMA: Schema = {
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
