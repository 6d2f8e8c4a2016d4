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

import type { JsonObject } from '../../shared/json.ts';
import { isJsonObject } from '../../shared/json.ts';
import type { ConfigDiagnostic } from './diagnostic.ts';
import { validateObservability } from './observability.ts';
import { levelFor, type Policy } from './policy.ts';
import { componentEnabled } from './document.ts';
import { checkShape } from './shape.ts';
import { DOCUMENT_SCHEMA } from './schema.ts';
import type { ObservabilitySettings } from './observability-settings.ts';
import { validatePiiRedaction, type PiiRedactionSettings } from './pii-redaction.ts';
import { validatePricing, type PricingSettings } from './pricing.ts';
import { validateAdaptive, type AdaptiveSettings } from './adaptive.ts';
import { validateGuardrails } from './guardrails.ts';

export type { AtifSettings, FileSinkSettings, ObservabilitySettings } from './observability-settings.ts';
export type { ParsedTemplate, TemplatePart } from './atif-template.ts';
export type {
  MarkProjection,
  OpenTelemetrySettings,
  OtlpEndpointSettings,
  OtlpDestinationSettings,
  OtlpLogsSettings,
  OtlpTransport,
  OtlpType,
} from './opentelemetry.ts';
export type {
  AtifStorageSettings,
  FieldNamePolicy,
  HttpStorageSettings,
  S3StorageSettings,
  StreamSinkSettings,
  StreamTransport,
} from './sinks.ts';

/** The outcome of `validatePluginConfig`: every diagnostic, and the observability settings when they are usable. */
export interface PluginConfigValidation {
  /** Every error and warning found in the document, each naming its component and field. */
  diagnostics: ConfigDiagnostic[];
  /**
   * Set when the document itself does not have the expected shape (native
   * throws this text from `validate()`); `diagnostics` then holds it as one
   * `plugin.invalid_config` error.
   */
  shapeError?: string;
  /** The enabled observability component's settings, when it validated without errors. */
  observability: ObservabilitySettings | null;
  /** The enabled `pii_redaction` component's settings, when it validated without errors. */
  piiRedaction?: PiiRedactionSettings | null;
  /** The enabled `pricing` component's catalogs, when it validated without errors. */
  pricing?: PricingSettings | null;
  /** The enabled `adaptive` component's settings, when it validated without errors. */
  adaptive?: AdaptiveSettings | null;
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
  let piiRedaction: PiiRedactionSettings | null = null;
  let pricing: PricingSettings | null = null;
  let adaptive: AdaptiveSettings | null = null;
  for (const component of components) {
    const kind = component.kind as string;
    const enabled = componentEnabled(component);
    const config = (component.config ?? {}) as JsonObject;
    if (kind === 'observability') {
      const config = (component.config ?? {}) as JsonObject;
      const result = validateObservability(config, policy);
      diagnostics.push(...result.diagnostics);
      const skipped = new Set(result.settings.skipped);
      if (enabled && observability === null && !result.diagnostics.some((d) => d.level === 'error' && !skipped.has(d))) {
        observability = result.settings;
      }
    } else if (kind === 'pii_redaction') {
      // Validated even when disabled, as native does: an invalid one rejects the document.
      const result = validatePiiRedaction(config, policy);
      diagnostics.push(...result.diagnostics);
      if (enabled && result.settings !== null) piiRedaction = result.settings;
    } else if (kind === 'pricing') {
      const result = validatePricing(config);
      diagnostics.push(...result.diagnostics);
      if (enabled && result.settings !== null) pricing = result.settings;
    } else if (kind === 'adaptive') {
      const result = validateAdaptive(config, policy);
      diagnostics.push(...result.diagnostics);
      if (enabled && result.settings !== null) {
        adaptive = result.settings;
        if (result.settings.responseCache?.backend === 'redis') {
          diagnostics.push({
            level: 'warning',
            code: 'plugin.backend_unsupported_component',
            component: 'adaptive',
            field: 'response_cache.backend.kind',
            message: "the response cache's redis store is not run by the in-memory relay: entries are kept in this process's memory; use the native backend for a shared store",
          });
        }
      }
    } else if (kind === 'nemo_guardrails') {
      const found = validateGuardrails(config, policy);
      diagnostics.push(...found);
      if (enabled && !found.some((d) => d.level === 'error')) {
        diagnostics.push({
          level: 'warning',
          code: 'plugin.backend_unsupported_component',
          component: kind,
          message: `plugin component kind '${kind}' is not run by the in-memory relay: no Guardrails check happens on this backend; use the native backend for it (deprecated upstream)`,
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
  return { diagnostics, observability, piiRedaction, pricing, adaptive };
}

/**
 * The kind of the first enabled component no relay registers, or null.
 * Native's `validate` only warns about it (`plugin.unknown_component`), but
 * its `initialize` then refuses the document (`not found: plugin component
 * 'frob' is not registered`), whatever `policy.unknown_component` says; a
 * disabled one is ignored. The memory relay refuses it alike, so a misspelt
 * kind (`pii-redaction`) is never a document that activates without it.
 */
export function unregisteredComponent(document: unknown): string | null {
  const components = isJsonObject(document) && Array.isArray(document.components) ? document.components : [];
  for (const component of components) {
    if (isJsonObject(component) && typeof component.kind === 'string' && !NATIVE_KINDS.has(component.kind) && componentEnabled(component)) return component.kind;
  }
  return null;
}

/** Native's `initialize` error for `unregisteredComponent`'s kind. */
export function unregisteredComponentError(kind: string): string {
  return `not found: plugin component '${kind}' is not registered`;
}

/** Native's `initialize` error text for a document with error diagnostics, or null when it may activate. */
export function activationError(validation: PluginConfigValidation): string | null {
  if (validation.shapeError !== undefined) return validation.shapeError;
  const errors = validation.diagnostics.filter((d) => d.level === 'error');
  if (errors.length === 0) return null;
  return `invalid config: ${errorsText(errors)}`;
}

/**
 * The error diagnostics' messages, joined. Native's own messages begin with
 * `invalid config: `, which the rejection's text already says once.
 */
export function errorsText(errors: readonly ConfigDiagnostic[]): string {
  return errors.map((d) => withoutConfigPrefix(d.message)).join('; ');
}

/** A native message without its leading `invalid config: `, for a text that says it once with its own context. */
export function withoutConfigPrefix(message: string): string {
  return message.replace(/^invalid config:\s*/, '');
}
