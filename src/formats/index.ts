/**
 * The formats: ATOF event and ATIF trajectory types, the ATIF builder
 * (ATOF events in, a trajectory out, as native's exporter builds it), the
 * ATIF and ATOF validators, and the `plugins.toml` observability validator
 * (the diagnostics native reports).
 *
 * @module
 */

export * from './atof/types.ts';
export * from './atif/types.ts';
export { AtifBuilder } from './atif/builder.ts';
export type { AtifBuilderOptions } from './atif/builder.ts';
export type { AtifBuilderStyle } from './atif/serialize.ts';
export type { ValidationError, ValidationResult } from './validation-result.ts';
export { validateAtif } from './atif/validate.ts';
export type { ValidateAtifOptions } from './atif/validate.ts';
export { validateAtofEvents, parseAtofJsonl } from './atof/validate.ts';
export type { AtofParseResult, AtofLineError, ValidateAtofOptions } from './atof/validate.ts';
export { validatePluginConfig } from './plugins-toml/validate.ts';
export type {
  AtifSettings,
  AtifStorageSettings,
  FieldNamePolicy,
  FileSinkSettings,
  HttpStorageSettings,
  MarkProjection,
  ObservabilitySettings,
  OpenTelemetrySettings,
  OtlpDestinationSettings,
  OtlpEndpointSettings,
  OtlpLogsSettings,
  OtlpTransport,
  OtlpType,
  ParsedTemplate,
  PluginConfigValidation,
  S3StorageSettings,
  StreamSinkSettings,
  StreamTransport,
  TemplatePart,
} from './plugins-toml/validate.ts';
export type { ConfigDiagnostic } from './plugins-toml/diagnostic.ts';
