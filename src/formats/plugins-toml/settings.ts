/**
 * What a validated `plugins.toml` observability component asks a relay to
 * do: its file sinks, ATIF, OpenTelemetry and remote destinations, with
 * native's defaults.
 *
 * @module
 */

import type { Json, JsonObject } from '../../shared/json.ts';
import type { ConfigDiagnostic } from './diagnostic.ts';
import type { AtofMode } from '../atof/types.ts';
import type { ParsedTemplate } from './atif-template.ts';
import type { OpenTelemetrySettings } from './opentelemetry.ts';
import type { AtifStorageSettings, StreamSinkSettings } from './sinks.ts';

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
  /** ATOF JSONL file sinks (of an enabled ATOF section). */
  fileSinks: FileSinkSettings[];
  /** ATIF trajectory writing, or `null` when the ATIF section is absent or disabled. */
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
