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
/** The ATIF `agent.name` native writes when none is configured. */
export const DEFAULT_ATIF_AGENT_NAME = 'NeMo Relay';
/** The ATIF `agent.model_name` native writes when none is configured. */
export const DEFAULT_ATIF_MODEL_NAME = 'unknown';
/** The ATIF file name native uses when no `filename_template` is configured. */
export const DEFAULT_ATIF_FILENAME_TEMPLATE = 'nemo-relay-atif-{session_id}.json';

/** One ATOF `file` sink: where its JSONL lands and whether it appends. */
export interface FileSinkSettings {
  /** Position in `atof.sinks`, for messages. */
  index: number;
  /** The folder the file goes in; `undefined` for the relay's default folder. */
  outputDirectory: string | undefined;
  /** The file's plain name inside that folder; `undefined` for the default name. */
  filename: string | undefined;
  /** Whether an existing file is appended to or replaced. */
  mode: AtofMode;
}

/** The ATIF section: what each trajectory's agent block says and where the file lands. */
export interface AtifSettings {
  /** `agent.name` of every trajectory. */
  agentName: string;
  /** `agent.version` of every trajectory. */
  agentVersion: string;
  /** `agent.model_name` of every trajectory. */
  modelName: string;
  /** The folder trajectories go in; `undefined` for the relay's default folder. */
  outputDirectory: string | undefined;
  /** The validated `filename_template`, rendered once per trajectory root. */
  template: ParsedTemplate;
  /** `agent.tool_definitions` to write, when configured. */
  toolDefinitions: Json[] | undefined;
  /** `agent.extra` to write, when configured. */
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
