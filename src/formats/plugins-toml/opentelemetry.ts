/**
 * The `[components.config.opentelemetry]` section of a `plugins.toml`
 * observability component (config version 3: traces; version 4: traces and
 * logs), read the way native 0.9.2 reads it: the same defaults, the same
 * validation rules, codes and messages.
 *
 * Two layers, as in `validate.ts`:
 * - `validateOpenTelemetry` gives the diagnostics native's `validate()`
 *   gives (the document-level parity test compares them);
 * - `openTelemetrySettings` turns a valid section into the endpoints to run,
 *   with what native checks only at activation (a `header_env` variable
 *   that is not set, `OTEL_EXPORTER_OTLP_HEADERS`). Native then rejects the
 *   whole document, ATOF and ATIF included; here the endpoint is skipped with
 *   a warning and everything else activates.
 *
 * @module
 */

import type { JsonObject } from '../../shared/json.ts';
import { isJsonObject } from '../../shared/json.ts';
import { displayUrl } from '../../shared/secret-text.ts';
import { destinationUrlProblem, headerKey, isHeaderName, isInvalidHeaderValue, isLoopbackHost, isPlaintextRemote } from '../../shared/destination-rules.ts';
import type { ConfigDiagnostic } from './diagnostic.ts';
import { isNativeBlank, isNativeBlankName, nativeTrim } from '../../shared/whitespace.ts';
import { rustDebugString } from '../../shared/rust-debug.ts';
import { readVariable, refusedReadText } from '../../shared/env.ts';

/** Which attribute convention a trace endpoint's spans follow: native's full set, GenAI semantic conventions, or OpenInference. */
export type OtlpType = 'full' | 'gen_ai' | 'openinference';
/** How OTLP data is sent: protobuf over HTTP, or gRPC. */
export type OtlpTransport = 'http_binary' | 'grpc';
/** What an ATOF mark becomes in traces: an event on its parent span, or a span of its own. */
export type MarkProjection = 'event' | 'tool';

/** Where and how one OTLP signal is sent (a trace endpoint or the log destination), ready to run. */
export interface OtlpDestinationSettings {
  /** HTTP protobuf or gRPC. */
  transport: OtlpTransport;
  /** The URL requests go to (for HTTP traces, with `/v1/traces` added to a bare origin, as native does). */
  url: string;
  /** `headers` plus the resolved `header_env` values. */
  headers: Record<string, string>;
  /** The `service.name` resource attribute. */
  serviceName: string;
  /** The `service.namespace` resource attribute, when set. */
  serviceNamespace: string | undefined;
  /** The `service.version` resource attribute, when set. */
  serviceVersion: string | undefined;
  /** The instrumentation scope name items are reported under. */
  instrumentationScope: string;
  /** Extra resource attributes. */
  resourceAttributes: Record<string, string>;
  /** How long one export may take before it counts as failed. */
  timeoutMillis: number;
  /** Items held while waiting for export; beyond it new items are dropped (and counted). */
  maxQueueSize: number;
  /** The most items sent in one request. */
  maxExportBatchSize: number;
  /** How long items wait for a batch to fill before it is sent anyway. */
  scheduledDelayMillis: number;
}

/** One trace destination, ready to run. */
export interface OtlpEndpointSettings extends OtlpDestinationSettings {
  /** Position in `opentelemetry.endpoints`, for messages. */
  index: number;
  /** The attribute convention of its spans. */
  type: OtlpType;
  /** What marks become in this endpoint's traces. */
  markProjection: MarkProjection;
  /** Marks that stay events even when `markProjection` is `'tool'`. */
  markExcludeNames: string[];
  /** Each `key` attribute is also written under `alias` (its value before metadata promotion). */
  attributeMappings: { key: string; alias: string }[];
  /** Metadata keys starting with one of these move out of the metadata into top-level span attributes. */
  promoteMetadataPrefixes: string[];
}

/** One log destination (v4 `[opentelemetry.logs]`): one record per mark. */
export interface OtlpLogsSettings extends OtlpDestinationSettings {
  /** Marks below this severity are not sent. */
  minimumSeverity: number;
}

/** The OpenTelemetry section: the trace endpoints and log destinations to export to. */
export interface OpenTelemetrySettings {
  /** Trace endpoints, one exporter each. */
  traces: OtlpEndpointSettings[];
  /** Log destinations (config version 4 only). */
  logs: OtlpLogsSettings[];
}

type Env = Readonly<Record<string, string | undefined>>;
type Report = (component: string, field: string, message: string) => void;

/** Native's defaults (the OpenTelemetry SDK's BatchSpanProcessor ones). */
const OTLP_DEFAULTS = Object.freeze({
  serviceName: 'unknown_service',
  instrumentationScope: 'opentelemetry',
  timeoutMillis: 10_000,
  maxQueueSize: 2048,
  maxExportBatchSize: 512,
  scheduledDelayMillis: 5000,
});
/** A log table's `scheduled_delay_millis` when it sets none (native's log batch processor's default). */
const LOG_SCHEDULED_DELAY_MILLIS = 1000;

const SEVERITIES: Record<string, number> = { trace: 1, debug: 5, info: 9, warn: 13, warning: 13, error: 17 };

/**
 * Native's `validate()` diagnostics for the section's semantics (shape
 * errors are reported earlier, by the serde-style schema). `unsupported`
 * reports with the document's `unsupported_value` policy; `warn` always
 * reports a warning.
 */
export function validateOpenTelemetry(otel: JsonObject, version: unknown, unsupported: Report, push: (d: ConfigDiagnostic) => void): void {
  if (version === 3 && ('logs' in otel || 'metrics' in otel)) {
    unsupported(
      'opentelemetry',
      'logs' in otel ? 'logs' : 'metrics',
      'observability config version 3 is trace-only; use version 4 for OpenTelemetry logs or metrics',
    );
  }
  const endpoints = endpointsOf(otel);
  const destinations: { key: string; index: number; type: string }[] = [];
  endpoints.forEach((endpoint, i) => {
    // In native's order: the endpoint, the transport, the attribute mappings, the prefixes, the batch, the headers.
    if (typeof endpoint.endpoint === 'string' && isNativeBlank(endpoint.endpoint)) {
      unsupported('opentelemetry', `endpoints[${i}].endpoint`, 'OpenTelemetry endpoint must be a nonblank string');
    }
    if (endpoint.transport !== undefined && endpoint.transport !== 'http_binary' && endpoint.transport !== 'grpc') {
      unsupported('opentelemetry', `endpoints[${i}].transport`, "OpenTelemetry endpoint transport must be 'http_binary' or 'grpc'");
    }
    const mappingProblem = attributeMappingsProblem(Array.isArray(endpoint.attribute_mappings) ? endpoint.attribute_mappings : []);
    if (mappingProblem !== null) unsupported('opentelemetry', `endpoints[${i}].attribute_mappings`, mappingProblem);
    const prefixProblem = promotionPrefixesProblem(Array.isArray(endpoint.promote_metadata_prefixes) ? endpoint.promote_metadata_prefixes : []);
    if (prefixProblem !== null) unsupported('opentelemetry', `endpoints[${i}].promote_metadata_prefixes`, prefixProblem);
    const batchWarning = (field: string, message: string) =>
      push({ level: 'warning', code: 'observability.invalid_otel_endpoint', component: 'opentelemetry', field: `endpoints[${i}].${field}`, message: `OpenTelemetry endpoints[${i}].${field} ${message}` });
    // Only what the endpoint sets is checked (a default or an OTEL_BSP_* value is not).
    for (const field of ['max_queue_size', 'max_export_batch_size', 'scheduled_delay_millis']) {
      if (endpoint[field] === 0) batchWarning(field, 'must be greater than 0');
    }
    if (typeof endpoint.max_queue_size === 'number' && typeof endpoint.max_export_batch_size === 'number' && endpoint.max_export_batch_size > endpoint.max_queue_size) {
      batchWarning('max_export_batch_size', 'must be less than or equal to max_queue_size');
    }
    validateHeaders(endpoint, i, unsupported);
    if (typeof endpoint.endpoint === 'string' && typeof endpoint.type === 'string') {
      // Every earlier endpoint of another type on the same destination is named, each in its own message; a blank
      // endpoint's destination is "".
      const transport = endpoint.transport === 'grpc' ? 'grpc' : 'http_binary';
      const shown = isNativeBlank(endpoint.endpoint) ? '' : displayDestination(transport === 'grpc' ? grpcUrl(endpoint.endpoint) : tracesUrl(endpoint.endpoint));
      for (const previous of destinations) {
        if (previous.key !== `${transport} ${shown}` || previous.type === endpoint.type) continue;
        push({
          level: 'error',
          code: 'observability.unsafe_otel_destination_collision',
          component: 'opentelemetry',
          field: `endpoints[${i}].endpoint`,
          message: `OpenTelemetry endpoints[${previous.index}] (${previous.type}) and endpoints[${i}] (${endpoint.type}) use the same ${transport} destination ${JSON.stringify(displayUrl(shown))}; different projection types must use independent destinations`,
        });
      }
      destinations.push({ key: `${transport} ${shown}`, index: i, type: endpoint.type });
    }
  });
  const logsEnabled = isJsonObject(otel.logs) && otel.logs.enabled === true;
  const metricsEnabled = isJsonObject(otel.metrics) && otel.metrics.enabled === true;
  if (otel.enabled === true && endpoints.length === 0 && !logsEnabled && !metricsEnabled) {
    unsupported('opentelemetry', 'endpoints', 'enabled OpenTelemetry section requires at least one endpoint or an enabled log/metric signal');
  }
  if (isJsonObject(otel.logs) && typeof otel.logs.minimum_severity === 'string' && !(otel.logs.minimum_severity.toLowerCase() in SEVERITIES)) {
    unsupported('opentelemetry.logs', 'minimum_severity', 'OpenTelemetry logs.minimum_severity must be trace, debug, info, warn, warning, or error');
  }
  for (const signal of ['logs', 'metrics'] as const) {
    const section = otel[signal];
    if (isJsonObject(section) && Array.isArray(section.endpoints)) section.endpoints.forEach((e, i) => isJsonObject(e) && validateHeaders(e, i, unsupported, signal));
    // Explicit log endpoints are checked even when logs are off; derived ones only when on.
    if (version === 4 && isJsonObject(section) && (section.enabled === true || Array.isArray(section.endpoints))) validateSignalDestinations(signal, section, endpoints, unsupported, push);
    if (version === 4 && isJsonObject(section) && section.enabled === true && endpoints.length === 0 && section.endpoints === undefined) {
      unsupported(
        `opentelemetry.${signal}`,
        'endpoints',
        `OpenTelemetry ${signal}.endpoints invalid config: enabled OpenTelemetry ${signal} section has no explicit or derivable trace endpoints`,
      );
    }
  }
}

/**
 * Native's checks of where logs (or metrics) go. Explicit endpoints: each
 * blank endpoint is an error, and the first of a blank endpoint, an HTTP
 * endpoint whose path ends in `/v1/traces`, or two on one destination is
 * reported once more for the list. Without them, the signal is derived
 * from each HTTP trace endpoint whose path is empty, `/` or ends in
 * `/v1/traces`; any other path is a warning (and nothing is derived from
 * it), and two trace endpoints deriving one destination are an error (with
 * which native reports no such warning).
 */
function validateSignalDestinations(signal: 'logs' | 'metrics', section: JsonObject, traces: JsonObject[], unsupported: Report, push: (d: ConfigDiagnostic) => void): void {
  const component = `opentelemetry.${signal}`;
  if (!Array.isArray(section.endpoints)) {
    let collision: string | null = null;
    const warnings: ConfigDiagnostic[] = [];
    const seen = new Map<string, number>();
    traces.forEach((endpoint, i) => {
      if (typeof endpoint.endpoint !== 'string') return;
      const grpc = endpoint.transport === 'grpc';
      const problem = grpc ? null : signalDerivationProblem(endpoint.endpoint, signal);
      if (problem !== null) {
        warnings.push({ level: 'warning', code: 'observability.invalid_otel_endpoint', component, field: `endpoints[${i}]`, message: `invalid config: OpenTelemetry endpoints[${i}] ${problem}` });
        return;
      }
      const transport = grpc ? 'grpc' : 'http_binary';
      // A blank gRPC endpoint's destination is "", as for trace collisions.
      const shown = isNativeBlank(endpoint.endpoint) ? '' : displayDestination(grpc ? grpcUrl(endpoint.endpoint) : signalUrlFromTraces(tracesUrl(endpoint.endpoint), signal));
      const previous = seen.get(`${transport} ${shown}`);
      if (previous === undefined) seen.set(`${transport} ${shown}`, i);
      else collision ??= `OpenTelemetry ${signal}.endpoints[${previous}] and ${signal}.endpoints[${i}] use the same ${transport} destination ${JSON.stringify(displayUrl(shown))}`;
    });
    if (collision !== null) unsupported(component, 'endpoints', `OpenTelemetry ${signal}.endpoints invalid config: ${collision}`);
    else warnings.forEach(push);
    return;
  }
  let first: string | null = section.enabled === true && section.endpoints.length === 0 ? `enabled OpenTelemetry ${signal} section requires at least one explicit endpoint` : null;
  const seen = new Map<string, number>();
  section.endpoints.forEach((endpoint, i) => {
    if (!isJsonObject(endpoint) || typeof endpoint.endpoint !== 'string') return;
    if (isNativeBlank(endpoint.endpoint)) {
      unsupported(component, `endpoints[${i}].endpoint`, `OpenTelemetry ${signal}.endpoints[${i}].endpoint must be a nonblank string`);
      first ??= `OpenTelemetry ${signal}.endpoints[${i}].endpoint must be nonblank`;
      return;
    }
    const transport = endpoint.transport === 'grpc' ? 'grpc' : 'http_binary';
    if (transport === 'http_binary' && /\/v1\/traces\/*$/.test(urlPath(endpoint.endpoint) ?? '')) {
      first ??= `OpenTelemetry ${signal}.endpoints[${i}] ends in /v1/traces; configure a ${signal} endpoint or a bare authority`;
      return;
    }
    const shown = displayDestination(transport === 'grpc' ? grpcUrl(endpoint.endpoint) : signalUrl(endpoint.endpoint, signal));
    const previous = seen.get(`${transport} ${shown}`);
    if (previous === undefined) seen.set(`${transport} ${shown}`, i);
    else first ??= `OpenTelemetry ${signal}.endpoints[${previous}] and ${signal}.endpoints[${i}] use the same ${transport} destination ${JSON.stringify(displayUrl(shown))}`;
  });
  if (first !== null) unsupported(component, 'endpoints', `OpenTelemetry ${signal}.endpoints invalid config: ${first}`);
}

/**
 * A `gen_ai` endpoint's spans are the conventions' attributes only: native applies no `attribute_mappings` there and
 * sends no marks, `mark_projection = "tool"` included, and the memory relay sends what native sends. Native says
 * nothing of it; a setting that does nothing gets a warning here rather than being dropped quietly.
 */
function genAiIgnored(endpoint: JsonObject, index: number, push: (d: ConfigDiagnostic) => void): void {
  const ignored: [field: string, what: string][] = [];
  if (Array.isArray(endpoint.attribute_mappings) && endpoint.attribute_mappings.length > 0) ignored.push(['attribute_mappings', 'its attribute_mappings']);
  if (endpoint.mark_projection === 'tool') ignored.push(['mark_projection', 'mark_projection = "tool" (a gen_ai endpoint sends no marks)']);
  for (const [field, what] of ignored) {
    push({
      level: 'warning',
      code: 'observability.ignored_on_gen_ai',
      component: 'opentelemetry',
      field: `endpoints[${index}].${field}`,
      message: `OpenTelemetry endpoints[${index}] is a gen_ai endpoint, which does not apply ${what} on either backend; use type = "openinference" or "full" for them`,
    });
  }
}

/** The path of an endpoint URL (Rust's trim first), or null when it does not parse. */
function urlPath(endpoint: string): string | null {
  try {
    return new URL(nativeTrim(endpoint)).pathname;
  } catch {
    return null;
  }
}

/** Why logs (or metrics) cannot be derived from an HTTP trace endpoint, as native words it, or null when they can. */
function signalDerivationProblem(endpoint: string, signal: 'logs' | 'metrics'): string | null {
  if (isNativeBlank(endpoint)) return `cannot derive ${signal} endpoint from "": relative URL without a base`;
  const path = urlPath(endpoint);
  if (path === null || path === '/' || path === '' || path.endsWith('/v1/traces')) return null;
  return `path ${rustDebugString(path)} cannot derive /v1/${signal}; configure opentelemetry.${signal}.endpoints explicitly`;
}

/**
 * The endpoints to run for a section that validated without errors. Problems
 * native finds only at activation skip that endpoint with a warning.
 */
export function openTelemetrySettings(otel: JsonObject, version: unknown, env: Env, push: (d: ConfigDiagnostic) => void): OpenTelemetrySettings {
  const out: OpenTelemetrySettings = { traces: [], logs: [] };
  if (otel.enabled !== true) return out;
  for (const refusal of otlpEnvRefusals(env)) {
    // Native refuses the whole document here; the memory relay's exporter reads these variables itself.
    push({
      level: 'warning',
      code: refusal.kind === 'headers' ? 'observability.otel_env_headers' : 'observability.otel_env_compression',
      component: 'opentelemetry',
      message:
        refusal.kind === 'headers'
          ? `${refusal.variable} is set in the environment: the OpenTelemetry exporter sends those headers to every plugins.toml endpoint (native refuses the document instead, because process-global OTLP headers can leak across endpoints); configure headers or header_env per endpoint`
          : `${refusal.variable} is set in the environment: the OpenTelemetry exporter compresses with gzip when it says gzip and sends uncompressed otherwise (native refuses the document while it is set, to any value, even empty)`,
    });
  }
  const bsp = bspDefaults(env);
  // Every trace endpoint that could send, those native sends no trace to included: logs still derive from them.
  const derivable: OtlpEndpointSettings[] = [];
  endpointsOf(otel).forEach((endpoint, index) => {
    const common = commonSettings(endpoint, `endpoints[${index}]`, env, bsp, push);
    if (common === null) return;
    if (endpoint.type === 'gen_ai') genAiIgnored(endpoint, index, push);
    derivable.push({
      index,
      type: endpoint.type as OtlpType,
      ...common,
      url: withoutUserinfo(common.transport === 'grpc' ? grpcUrl(String(endpoint.endpoint)) : tracesUrl(String(endpoint.endpoint))),
      markProjection: endpoint.mark_projection === 'tool' ? 'tool' : 'event',
      markExcludeNames: strings(endpoint.mark_exclude_names),
      attributeMappings: (Array.isArray(endpoint.attribute_mappings) ? endpoint.attribute_mappings : [])
        .filter(isJsonObject)
        .map((m) => ({ key: String(m.key), alias: String(m.alias) })),
      promoteMetadataPrefixes: strings(endpoint.promote_metadata_prefixes),
    });
    // Checked last, so that an endpoint skipped for it has nothing else native refuses (`sendsOnlyLogs`).
    if (isPlaintextRemote(nativeTrim(String(endpoint.endpoint)))) push(plaintextTraceSkipped(otel, version, endpoint, index));
    else out.traces.push(derivable[derivable.length - 1]!);
  });
  const logs = otel.logs;
  if (version === 4 && isJsonObject(logs) && logs.enabled === true) {
    const minimumSeverity = SEVERITIES[String(logs.minimum_severity ?? 'trace').toLowerCase()] ?? 1;
    // OTEL_BSP_* are the span processor's: native's log batches do not follow them (nor OTEL_BLRP_*). Their delay
    // defaults to a second, not the spans' five: native with no delay set sends them as it does with
    // `scheduled_delay_millis = 1000`, whatever the trace endpoint's delay.
    const batch = {
      maxQueueSize: numberOr(logs.max_queue_size, OTLP_DEFAULTS.maxQueueSize),
      maxExportBatchSize: numberOr(logs.max_export_batch_size, OTLP_DEFAULTS.maxExportBatchSize),
      scheduledDelayMillis: numberOr(logs.scheduled_delay_millis, LOG_SCHEDULED_DELAY_MILLIS),
    };
    if (Array.isArray(logs.endpoints)) {
      logs.endpoints.filter(isJsonObject).forEach((endpoint, index) => {
        const common = commonSettings(endpoint, `logs.endpoints[${index}]`, env, bsp, push);
        if (common === null) return;
        const url = withoutUserinfo(common.transport === 'grpc' ? grpcUrl(String(endpoint.endpoint)) : signalUrl(String(endpoint.endpoint), 'logs'));
        out.logs.push({ ...common, ...batch, url, minimumSeverity });
      });
    } else {
      // Derived from each trace endpoint, with that endpoint's resource, scope and headers.
      const seen = new Set<string>();
      for (const trace of derivable) {
        if (!derivesLogs(endpointsOf(otel)[trace.index]!)) continue;
        const url = trace.transport === 'grpc' ? trace.url : signalUrlFromTraces(trace.url, 'logs');
        if (seen.has(`${trace.transport} ${url}`)) continue;
        seen.add(`${trace.transport} ${url}`);
        const { index: _index, type: _type, markProjection: _p, markExcludeNames: _e, attributeMappings: _m, promoteMetadataPrefixes: _x, ...common } = trace;
        out.logs.push({ ...common, ...batch, url, minimumSeverity });
      }
    }
  }
  return out;
}

/**
 * Whether logs are derived from trace endpoint `endpoint` (version 4, logs
 * on with no endpoints of their own): over gRPC always, over HTTP when its
 * path is empty, `/` or ends in `/v1/traces` (native derives none from
 * another path; validate() warns).
 */
export function logsDeriveFrom(otel: JsonObject, version: unknown, endpoint: JsonObject): boolean {
  const logs = otel.logs;
  return version === 4 && isJsonObject(logs) && logs.enabled === true && !Array.isArray(logs.endpoints) && derivesLogs(endpoint);
}

/**
 * Whether native, given trace endpoint `endpoint`, sends it logs and no
 * trace: its URL is fine but plain `http://` off this machine, and logs
 * derive from it. Native takes a document with such an endpoint (the logs
 * are an endpoint), so the plugin leaves it in (`withoutOtelEndpoints`):
 * taking it out would lose those logs.
 */
export function sendsOnlyLogs(otel: JsonObject, version: unknown, endpoint: JsonObject): boolean {
  if (typeof endpoint.endpoint !== 'string') return false;
  const text = nativeTrim(endpoint.endpoint);
  if (destinationUrlProblem(text, ['http:', 'https:']) !== null || nativeEndpointProblem(endpoint.endpoint) !== null) return false;
  return isPlaintextRemote(text) && logsDeriveFrom(otel, version, endpoint);
}

function derivesLogs(endpoint: JsonObject): boolean {
  return endpoint.transport === 'grpc' || signalDerivationProblem(String(endpoint.endpoint), 'logs') === null;
}

/**
 * The warning for a trace endpoint native sends no trace to, being plain
 * `http://` off this machine (`isPlaintextRemote`). Native says nothing of
 * it: alone, the whole document is refused with a message naming no cause;
 * beside a log table, its traces are dropped silently while its logs go out.
 */
function plaintextTraceSkipped(otel: JsonObject, version: unknown, endpoint: JsonObject, index: number): ConfigDiagnostic {
  const url = nativeTrim(String(endpoint.endpoint));
  const grpc = endpoint.transport === 'grpc';
  const logsUrl = grpc ? grpcUrl(url) : signalUrlFromTraces(tracesUrl(url), 'logs');
  const logsKept = logsDeriveFrom(otel, version, endpoint) ? `; its log records still go to ${displayUrl(withoutUserinfo(logsUrl))} (native sends them)` : '';
  const local = new URL(url);
  local.hostname = 'localhost';
  return {
    level: 'warning',
    code: 'observability.otel_endpoint_skipped',
    component: 'opentelemetry',
    field: `endpoints[${index}].endpoint`,
    message:
      `OpenTelemetry endpoints[${index}].endpoint sends traces over plain http:// to ${JSON.stringify(new URL(url).hostname)}, another machine, which native refuses (it sends traces over http:// only to localhost, 127.0.0.0/8 or [::1]); ` +
      `no traces are sent to this endpoint (${displayUrl(url)}) and everything else still runs${logsKept}; fix: use https://, or a collector on this host (${displayUrl(withoutUserinfo(local.href))})`,
  };
}

/**
 * The process environment variables for which native 0.9.2 refuses every
 * trace endpoint (and so the whole document): OTLP headers for all
 * endpoints, when not empty, and an OTLP compression, when set at all.
 */
export function otlpEnvRefusals(env: Env): { variable: string; kind: 'headers' | 'compression' }[] {
  const out: { variable: string; kind: 'headers' | 'compression' }[] = [];
  for (const variable of ['OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_TRACES_HEADERS']) {
    if (env[variable] !== undefined && env[variable] !== '') out.push({ variable, kind: 'headers' });
  }
  for (const variable of ['OTEL_EXPORTER_OTLP_COMPRESSION', 'OTEL_EXPORTER_OTLP_TRACES_COMPRESSION']) {
    if (env[variable] !== undefined) out.push({ variable, kind: 'compression' });
  }
  return out;
}

interface Bsp {
  timeoutMillis: number;
  maxQueueSize: number;
  maxExportBatchSize: number;
  scheduledDelayMillis: number;
}

/**
 * `OTEL_BSP_*` replace the built-in batch defaults; an endpoint's own fields win over both. A value counts as native
 * (the Rust SDK's `parse::<usize>()`) reads it: ASCII digits with an optional leading `+`, nothing around them, no
 * sign, fraction, exponent or hex, at most 2^64 - 1; anything else is as if the variable were not set. A batch size
 * of 0 is not set either (native then sends its default batches); a queue of 0 stays, and skips the endpoint.
 */
function bspDefaults(env: Env): Bsp {
  const read = (name: string, fallback: number): number => {
    const text = env[name];
    if (text === undefined || !/^\+?[0-9]+$/.test(text) || BigInt(text) > 0xffff_ffff_ffff_ffffn) return fallback;
    return Number(text);
  };
  const batch = read('OTEL_BSP_MAX_EXPORT_BATCH_SIZE', OTLP_DEFAULTS.maxExportBatchSize);
  return {
    timeoutMillis: read('OTEL_BSP_EXPORT_TIMEOUT', OTLP_DEFAULTS.timeoutMillis),
    maxQueueSize: read('OTEL_BSP_MAX_QUEUE_SIZE', OTLP_DEFAULTS.maxQueueSize),
    maxExportBatchSize: batch === 0 ? OTLP_DEFAULTS.maxExportBatchSize : batch,
    scheduledDelayMillis: read('OTEL_BSP_SCHEDULE_DELAY', OTLP_DEFAULTS.scheduledDelayMillis),
  };
}

function commonSettings(endpoint: JsonObject, where: string, env: Env, bsp: Bsp, push: (d: ConfigDiagnostic) => void) {
  if (typeof endpoint.endpoint !== 'string' || isNativeBlank(endpoint.endpoint)) return null;
  const headers: Record<string, string> = {};
  if (isJsonObject(endpoint.headers)) for (const [k, v] of Object.entries(endpoint.headers)) headers[k] = String(v);
  // Beyond native: an endpoint that could never send is skipped with its reason, not failed request by request.
  const skip = (field: string, why: string, fix?: string) => {
    push({
      level: 'warning',
      code: 'observability.otel_endpoint_skipped',
      component: 'opentelemetry',
      field: `${where}.${field}`,
      message: `OpenTelemetry ${where}.${field} ${why}; this endpoint (${displayUrl(endpoint.endpoint as string)}) is skipped and nothing is sent to it (everything else still runs)${fix !== undefined ? `; fix: ${fix}` : ''}`,
    });
    return null;
  };
  if (isJsonObject(endpoint.header_env)) {
    for (const [header, variable] of Object.entries(endpoint.header_env)) {
      const name = String(variable);
      const { value, refused } = readVariable(env, name);
      if (refused !== undefined) return skip(`header_env.${header}`, `could not be read: ${refusedReadText(name, refused)}`);
      if (value === undefined || isNativeBlank(value)) {
        return skip(`header_env.${header}`, `references an environment variable (${name}) that is ${value === undefined ? 'not set' : 'blank'}`, `set ${name} in the host's environment before it starts`);
      }
      if (nativeTrim(value) !== value) {
        // Native refuses such a value (the whole document); it is never quoted, being a credential as often as not.
        push({
          level: 'warning',
          code: 'observability.otel_endpoint_skipped',
          component: 'opentelemetry',
          field: `${where}.header_env.${header}`,
          message: `OpenTelemetry ${where}.header_env.${header}: the value of ${name} begins or ends with whitespace, which native refuses; this endpoint (${displayUrl(endpoint.endpoint)}) is skipped and nothing is sent to it (everything else still runs); fix: remove the whitespace around the value of ${name}`,
        });
        return null;
      }
      headers[header] = value;
    }
  }
  const urlProblem = destinationUrlProblem(nativeTrim(endpoint.endpoint), ['http:', 'https:']) ?? nativeEndpointProblem(endpoint.endpoint);
  if (urlProblem !== null) return skip('endpoint', urlProblem);
  const credentials = userinfoOf(nativeTrim(endpoint.endpoint));
  if (credentials) {
    // Never quoted: they are credentials.
    push({
      level: 'warning',
      code: 'observability.otel_endpoint_credentials',
      component: 'opentelemetry',
      field: `${where}.endpoint`,
      message: `OpenTelemetry ${where}.endpoint carries a user name or password, which is not sent (native does not send it either); put the credentials in headers or header_env`,
    });
  }
  const grpc = endpoint.transport === 'grpc';
  for (const [header, value] of Object.entries(headers)) {
    const field = isJsonObject(endpoint.header_env) && header in endpoint.header_env ? `header_env.${header}` : `headers.${header}`;
    // Native refuses a binary (-bin) gRPC header at activation: the whole document.
    if (grpc && /-bin$/i.test(header)) return skip(field, 'is a binary (-bin) gRPC header, which native refuses');
    // Over HTTP any text goes: native sends a value's UTF-8 bytes, and so does the wire here (exporters.ts).
    // gRPC metadata here carries printable ASCII only (grpc-js refuses the rest, quoting the value in its error).
    const problem = grpc
      ? /[^\u0020-\u007e]/.test(value) ? 'contains characters other than printable ASCII, which the gRPC exporter cannot send' : null
      : isInvalidHeaderValue(value) ? 'contains a control character (a line break, say), which no HTTP request can carry' : null;
    if (problem !== null) return skip(field, `value ${problem}`);
  }
  // Native refuses a queue, batch or (document) delay of 0 at activation: the whole document. Here the endpoint.
  const maxQueueSize = numberOr(endpoint.max_queue_size, bsp.maxQueueSize);
  if (maxQueueSize === 0) return skip(endpoint.max_queue_size !== undefined ? 'max_queue_size' : 'max_queue_size (OTEL_BSP_MAX_QUEUE_SIZE)', 'is 0, which native refuses (it must be at least 1)');
  if (endpoint.max_export_batch_size === 0) return skip('max_export_batch_size', 'is 0, which native refuses (it must be at least 1)');
  if (endpoint.scheduled_delay_millis === 0) return skip('scheduled_delay_millis', 'is 0, which native refuses (it must be at least 1)');
  const resourceAttributes: Record<string, string> = {};
  if (isJsonObject(endpoint.resource_attributes)) for (const [k, v] of Object.entries(endpoint.resource_attributes)) resourceAttributes[k] = String(v);
  return {
    transport: (endpoint.transport === 'grpc' ? 'grpc' : 'http_binary') as OtlpTransport,
    headers,
    serviceName: typeof endpoint.service_name === 'string' && endpoint.service_name !== '' ? endpoint.service_name : OTLP_DEFAULTS.serviceName,
    serviceNamespace: typeof endpoint.service_namespace === 'string' ? endpoint.service_namespace : undefined,
    serviceVersion: typeof endpoint.service_version === 'string' ? endpoint.service_version : undefined,
    instrumentationScope:
      typeof endpoint.instrumentation_scope === 'string' && !isNativeBlank(endpoint.instrumentation_scope) ? endpoint.instrumentation_scope : OTLP_DEFAULTS.instrumentationScope,
    resourceAttributes,
    // A timeout of 0 does not time every request out on native: it sends as with its default.
    timeoutMillis: numberOr(endpoint.timeout_millis, bsp.timeoutMillis) || OTLP_DEFAULTS.timeoutMillis,
    maxQueueSize,
    maxExportBatchSize: Math.min(maxQueueSize, numberOr(endpoint.max_export_batch_size, bsp.maxExportBatchSize)),
    scheduledDelayMillis: numberOr(endpoint.scheduled_delay_millis, bsp.scheduledDelayMillis),
  };
}

/**
 * Native's checks of an endpoint's `headers` and `header_env`: every
 * problem, duplicates first. Native walks each table in hash order, so
 * which of two names differing only in case it calls the duplicate, and the
 * order of the other messages, vary from run to run; here both follow the
 * document. A header value is never quoted. A log or metric endpoint
 * (`signal`) gets its own wording for duplicates and for a name in both
 * tables, checked last, and a trace endpoint's for the rest, `endpoints[i]`
 * included.
 */
function validateHeaders(endpoint: JsonObject, i: number, unsupported: Report, signal?: 'logs' | 'metrics'): void {
  const where = `endpoints[${i}]`;
  const headers = isJsonObject(endpoint.headers) ? endpoint.headers : {};
  const headerEnv = isJsonObject(endpoint.header_env) ? endpoint.header_env : {};
  for (const [table, entries] of [['headers', headers], ['header_env', headerEnv]] as const) {
    const seen = new Set<string>();
    for (const name of Object.keys(entries)) {
      if (!seen.has(headerKey(name))) seen.add(headerKey(name));
      else if (signal === undefined) unsupported('opentelemetry', `${where}.${table}.${name}`, `OpenTelemetry ${where}.${table} contains duplicate header ${rustDebugString(name)} ignoring ASCII case`);
      else unsupported(`opentelemetry.${signal}`, `${where}.${table}.${name}`, `OpenTelemetry ${signal}.${where}.${table}.${name} contains a duplicate header ignoring ASCII case`);
    }
  }
  for (const [name, value] of Object.entries(headers)) {
    if (!isHeaderName(name)) unsupported('opentelemetry', `${where}.headers.${name}`, `OpenTelemetry ${where}.headers.${name} header name ${rustDebugString(name)} is invalid`);
    if (typeof value === 'string' && isInvalidHeaderValue(value)) unsupported('opentelemetry', `${where}.headers.${name}`, `OpenTelemetry header ${rustDebugString(name)} has an invalid value`);
  }
  const named = new Set(Object.keys(headers).map(headerKey));
  for (const [name, variable] of Object.entries(headerEnv)) {
    if (!isHeaderName(name)) unsupported('opentelemetry', `${where}.header_env.${name}`, `OpenTelemetry ${where}.header_env.${name} header name ${rustDebugString(name)} is invalid`);
    if (signal === undefined && named.has(headerKey(name))) unsupported('opentelemetry', `${where}.header_env.${name}`, `OpenTelemetry ${where} header ${rustDebugString(name)} cannot appear in both headers and header_env`);
    if (typeof variable === 'string' && isNativeBlank(variable)) unsupported('opentelemetry', `${where}.header_env.${name}`, `OpenTelemetry ${where}.header_env.${name} must name a non-empty environment variable`);
  }
  if (signal === undefined) return;
  for (const name of Object.keys(headerEnv)) {
    if (named.has(headerKey(name))) unsupported(`opentelemetry.${signal}`, `${where}.header_env.${name}`, `OpenTelemetry ${signal}.${where}.header_env.${name} cannot also appear in headers`);
  }
}

/**
 * What makes native refuse an endpoint URL that a WHATWG parser takes
 * (measured on 0.9.2): only ASCII spaces and controls are trimmed at its
 * edges (a no-break space is not), a tab or line break inside is not
 * dropped, a path holds no space, backtick, `<` or `>`, and a host name
 * only ASCII letters, digits, `-` and `.`. Null when native takes it.
 */
function nativeEndpointProblem(endpoint: string): string | null {
  const text = endpoint.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '');
  if (nativeTrim(text) !== text) return 'begins or ends with a space character other than an ASCII one, which native does not trim';
  if (/[\t\n\r]/.test(text)) return 'contains a tab or line break, which native refuses';
  const match = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^/?#:]*)(?::\d*)?([^?#]*)/i.exec(text);
  if (match === null) return null;
  if (!match[1]!.startsWith('[') && !/^[A-Za-z0-9.-]+$/.test(match[1]!)) return 'names a host with characters other than ASCII letters, digits, - and ., which native refuses';
  if (/[ `<>]/.test(match[2]!)) return 'has a space, backtick, < or > in its path, which native refuses (percent-encode it)';
  return null;
}

/** Whether a URL carries a user name or password. */
function userinfoOf(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.username !== '' || parsed.password !== '';
  } catch {
    return false;
  }
}

/** The URL without its user name and password (native does not send them). */
function withoutUserinfo(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/?#]*@/i, '$1');
}

/** Native's check of an endpoint's `attribute_mappings`: its first problem, or null. */
function attributeMappingsProblem(mappings: readonly unknown[]): string | null {
  const aliases = new Set<string>();
  for (const mapping of mappings) {
    if (!isJsonObject(mapping) || typeof mapping.key !== 'string' || typeof mapping.alias !== 'string') continue;
    if (isNativeBlankName(mapping.key)) return 'attribute mapping key must not be blank';
    if (isNativeBlankName(mapping.alias)) return 'attribute mapping alias must not be blank';
    // Aliases are compared trimmed (Rust's trim), and named as written.
    const alias = nativeTrim(mapping.alias);
    if (aliases.has(alias)) return `attribute mapping alias ${rustDebugString(mapping.alias)} is duplicated`;
    aliases.add(alias);
  }
  return null;
}

/** Segments of letters, digits, `_` or `-`, joined by single dots (native's metadata attribute key). */
const PROMOTED_KEY = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/;

/** Native's check of an endpoint's `promote_metadata_prefixes`: its first problem, or null. */
function promotionPrefixesProblem(prefixes: readonly unknown[]): string | null {
  const seen = new Set<string>();
  for (const prefix of prefixes) {
    if (typeof prefix !== 'string') continue;
    if (isNativeBlankName(prefix)) return 'metadata promotion prefix must not be blank';
    const shown = rustDebugString(prefix);
    if (nativeTrim(prefix) !== prefix) return `metadata promotion prefix ${shown} must not have surrounding whitespace`;
    if (/[*?[\]]/.test(prefix)) return `metadata promotion prefix ${shown} must be a literal prefix, not a glob`;
    if (!PROMOTED_KEY.test(prefix.endsWith('.') ? prefix.slice(0, -1) : prefix)) {
      return `metadata promotion prefix ${shown} must contain letter, number, underscore, or hyphen segments separated by single dots, with an optional trailing dot`;
    }
    if (seen.has(prefix)) return `metadata promotion prefix ${shown} is duplicated`;
    seen.add(prefix);
  }
  return null;
}

/** Native's HTTP trace URL: a bare origin gets `/v1/traces`; any path (even `/`) is kept. */
function tracesUrl(endpoint: string): string {
  return withDefaultPath(endpoint, '/v1/traces');
}

/** Native's HTTP log (or metric) URL: a bare origin, or one with the path `/` (kept for traces), gets `/v1/logs`. */
function signalUrl(endpoint: string, signal: 'logs' | 'metrics'): string {
  return withDefaultPath(endpoint, `/v1/${signal}`, true);
}

/** The log (or metric) URL native derives from an HTTP trace URL: its `/v1/traces` (or an empty path) becomes `/v1/logs`, the query kept. */
function signalUrlFromTraces(url: string, signal: 'logs' | 'metrics'): string {
  const match = /^([a-z][a-z0-9+.-]*:\/\/[^/?#]*)([^?#]*)(.*)$/i.exec(url);
  if (match === null) return url;
  const [, origin, path, rest] = match as unknown as [string, string, string, string];
  if (path === '' || path === '/') return `${origin}/v1/${signal}${rest}`;
  return path.endsWith('/v1/traces') ? `${origin}${path.slice(0, -'/v1/traces'.length)}/v1/${signal}${rest}` : url;
}

function grpcUrl(endpoint: string): string {
  return nativeTrim(endpoint);
}

/** `path` added when the endpoint has none (before a query or fragment, which stay), or `/` with `rootToo`. */
function withDefaultPath(endpoint: string, path: string, rootToo = false): string {
  const trimmed = nativeTrim(endpoint);
  const match = /^([a-z][a-z0-9+.-]*:\/\/[^/?#]*)([^?#]*)(.*)$/i.exec(trimmed);
  if (match === null) return trimmed;
  return match[2] === '' || (rootToo && match[2] === '/') ? `${match[1]}${path}${match[3]}` : trimmed;
}

/** Native shows loopback hosts as `<loopback>` and a bare origin with `/`. */
function displayDestination(url: string): string {
  const match = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#:]*|\[[^\]]*\])(:\d+)?(.*)$/i.exec(url);
  if (match === null) return url;
  const host = isLoopbackHost(match[2]!) ? '<loopback>' : match[2]!.toLowerCase();
  const scheme = match[1]!.toLowerCase();
  // The port is always shown, a scheme's default included.
  const port = match[3] ?? (scheme === 'http://' ? ':80' : scheme === 'https://' ? ':443' : '');
  return `${scheme}${host}${port}${match[4] === '' ? '/' : match[4]}`;
}

function endpointsOf(otel: JsonObject): JsonObject[] {
  return Array.isArray(otel.endpoints) ? (otel.endpoints.filter(isJsonObject) as JsonObject[]) : [];
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

