/**
 * OTLP without a `plugins.toml`: the common case configured from the
 * environment (`NEMO_RELAY_HOOKS_OTLP_ENABLED` plus the standard
 * `OTEL_EXPORTER_OTLP_*`, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`)
 * or typed settings. The plugin expresses it as the `plugins.toml`
 * observability document native reads, so both backends honour the same
 * settings through the same path; the env-configured ATOF file joins that
 * document (a plugins.toml activation replaces the direct exporters).
 *
 * @module
 */

import type { ConfigDiagnostic, JsonObject } from '../../relay/contract.ts';
import { headerKey, isHeaderName, isInvalidHeaderValue } from '../../shared/destination-rules.ts';

/** The attribute convention of the env-configured OTLP endpoint. */
export type OtlpEnvType = 'full' | 'gen_ai' | 'openinference';
/** The wire protocol of the env-configured OTLP endpoint (`OTEL_EXPORTER_OTLP_PROTOCOL`). */
export type OtlpEnvProtocol = 'http/protobuf' | 'grpc';

/** The OTLP part of the plugin settings. */
export interface OtlpEnvSettings {
  /** `NEMO_RELAY_HOOKS_OTLP_ENABLED` */
  otlpEnabled: boolean;
  /** `NEMO_RELAY_HOOKS_OTLP_TYPE`: full, gen_ai (default) or openinference */
  otlpType: OtlpEnvType;
  /** `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as is), else `OTEL_EXPORTER_OTLP_ENDPOINT` (+ `/v1/traces` over HTTP); empty: localhost */
  otlpEndpoint: string;
  /** `OTEL_EXPORTER_OTLP_PROTOCOL`: http/protobuf (default) or grpc */
  otlpProtocol: OtlpEnvProtocol;
  /** `OTEL_EXPORTER_OTLP_HEADERS` (or `NEMO_RELAY_HOOKS_OTLP_HEADERS`): `key=value,key2=value2`, values URL-encoded */
  otlpHeaders: string;
  /** `OTEL_SERVICE_NAME` */
  otlpServiceName: string;
  /** `OTEL_RESOURCE_ATTRIBUTES`: `key=value,...` */
  otlpResourceAttributes: string;
}

export const DEFAULT_OTLP_ENV_SETTINGS: Readonly<OtlpEnvSettings> = Object.freeze({
  otlpEnabled: false,
  otlpType: 'gen_ai',
  otlpEndpoint: '',
  otlpProtocol: 'http/protobuf',
  otlpHeaders: '',
  otlpServiceName: '',
  otlpResourceAttributes: '',
});

export const OTLP_ENV_CHOICES = {
  otlpType: ['full', 'gen_ai', 'openinference'],
  otlpProtocol: ['http/protobuf', 'grpc'],
} as const;

/** The OTLP rows of the settings table (see `environmentVariables()` in settings.ts). */
export const OTLP_ENVIRONMENT_VARIABLES: readonly { name: string; hermes?: string; setting?: keyof OtlpEnvSettings; default: string; meaning: string }[] = [
  { name: 'NEMO_RELAY_HOOKS_OTLP_ENABLED', hermes: 'HERMES_NEMO_RELAY_OTLP_ENABLED', setting: 'otlpEnabled', default: 'off', meaning: 'Send OTLP traces without a plugins.toml (both backends).' },
  { name: 'NEMO_RELAY_HOOKS_OTLP_TYPE', hermes: 'HERMES_NEMO_RELAY_OTLP_TYPE', setting: 'otlpType', default: 'gen_ai', meaning: 'full, gen_ai or openinference.' },
  { name: 'NEMO_RELAY_HOOKS_OTLP_HEADERS', hermes: 'HERMES_NEMO_RELAY_OTLP_HEADERS', setting: 'otlpHeaders', default: '(unset)', meaning: 'Headers like OTEL_EXPORTER_OTLP_HEADERS, without the process-wide variable native refuses.' },
  { name: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', setting: 'otlpEndpoint', default: '(unset)', meaning: 'Trace endpoint URL, used as is (a bare origin gets /v1/traces).' },
  { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', setting: 'otlpEndpoint', default: 'http://localhost:4318 (grpc: :4317)', meaning: 'Base URL; /v1/traces is added over HTTP.' },
  { name: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', setting: 'otlpProtocol', default: '(unset)', meaning: 'Like OTEL_EXPORTER_OTLP_PROTOCOL, for traces only; wins over it.' },
  { name: 'OTEL_EXPORTER_OTLP_PROTOCOL', setting: 'otlpProtocol', default: 'http/protobuf', meaning: 'http/protobuf or grpc.' },
  { name: 'OTEL_EXPORTER_OTLP_TRACES_HEADERS', setting: 'otlpHeaders', default: '(unset)', meaning: 'Like OTEL_EXPORTER_OTLP_HEADERS, for traces only; wins over it.' },
  { name: 'OTEL_EXPORTER_OTLP_HEADERS', setting: 'otlpHeaders', default: '(unset)', meaning: 'key=value,... sent with every request.' },
  { name: 'OTEL_SERVICE_NAME', setting: 'otlpServiceName', default: 'unknown_service', meaning: 'service.name of the resource.' },
  { name: 'OTEL_RESOURCE_ATTRIBUTES', setting: 'otlpResourceAttributes', default: '(unset)', meaning: 'key=value,... added to the resource.' },
];

type Env = Readonly<Record<string, string | undefined>>;
/** The variable of a pair that is set (the neutral name first), or undefined. */
type SetName = (variable: { name: string; hermes?: string }) => string | undefined;

/** Reads the OTLP settings the environment sets (only those). Bad values fall back with a diagnostic. */
export function otlpSettingsFromEnv(env: Env, setName: SetName, flag: (name: string) => boolean, diagnostics: ConfigDiagnostic[]): { values: Partial<OtlpEnvSettings>; headersFrom?: string } {
  const read = (name: string): string => (typeof env[name] === 'string' ? env[name]!.trim() : '');
  const values: Partial<OtlpEnvSettings> = {};
  const enabled = setName({ name: 'NEMO_RELAY_HOOKS_OTLP_ENABLED', hermes: 'HERMES_NEMO_RELAY_OTLP_ENABLED' });
  if (enabled !== undefined) values.otlpEnabled = flag(enabled);
  const typeName = setName({ name: 'NEMO_RELAY_HOOKS_OTLP_TYPE', hermes: 'HERMES_NEMO_RELAY_OTLP_TYPE' });
  if (typeName !== undefined) {
    const type = read(typeName).toLowerCase();
    if ((OTLP_ENV_CHOICES.otlpType as readonly string[]).includes(type)) values.otlpType = type as OtlpEnvType;
    else diagnostics.push(invalid(typeName, `${typeName}=${JSON.stringify(env[typeName])} must be full, gen_ai or openinference; using gen_ai`));
  }
  const protocol = read('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') || read('OTEL_EXPORTER_OTLP_PROTOCOL');
  if (protocol === 'grpc' || protocol === 'http/protobuf') values.otlpProtocol = protocol;
  else if (protocol !== '') {
    diagnostics.push(invalid('OTEL_EXPORTER_OTLP_PROTOCOL', `OTEL_EXPORTER_OTLP_PROTOCOL=${JSON.stringify(protocol)} is not supported (http/protobuf or grpc, as native); using http/protobuf`));
  }
  const tracesEndpoint = read('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const base = read('OTEL_EXPORTER_OTLP_ENDPOINT');
  if (tracesEndpoint !== '') values.otlpEndpoint = tracesEndpoint;
  else if (base !== '') values.otlpEndpoint = values.otlpProtocol !== 'grpc' ? withTracesPath(base) : base;
  const ownName = setName({ name: 'NEMO_RELAY_HOOKS_OTLP_HEADERS', hermes: 'HERMES_NEMO_RELAY_OTLP_HEADERS' });
  // The first of these that is set gives the headers; its name is what a warning about an entry names.
  const headersFrom = [ownName, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS', 'OTEL_EXPORTER_OTLP_HEADERS'].find((name) => name !== undefined && read(name) !== '');
  if (headersFrom !== undefined) values.otlpHeaders = read(headersFrom);
  if (read('OTEL_SERVICE_NAME') !== '') values.otlpServiceName = read('OTEL_SERVICE_NAME');
  if (read('OTEL_RESOURCE_ATTRIBUTES') !== '') values.otlpResourceAttributes = read('OTEL_RESOURCE_ATTRIBUTES');
  return headersFrom === undefined ? { values } : { values, headersFrom };
}

export interface AtofFileForDocument {
  enabled: boolean;
  outputDirectory: string;
  filename: string;
  mode: 'append' | 'overwrite';
}

/**
 * The `plugins.toml` document that sends what the OTLP settings ask for (and writes the env ATOF file).
 * `from`: where `otlpHeaders` and `otlpResourceAttributes` came from (a variable, or the setting's name), which
 * warnings about their entries name.
 */
export function otlpPluginDocument(settings: OtlpEnvSettings, atof: AtofFileForDocument, from: { headers: string; resourceAttributes: string }, diagnostics: ConfigDiagnostic[]): JsonObject {
  const grpc = settings.otlpProtocol === 'grpc';
  const endpoint: JsonObject = {
    type: settings.otlpType,
    endpoint: settings.otlpEndpoint || (grpc ? 'http://localhost:4317' : 'http://localhost:4318/v1/traces'),
    transport: grpc ? 'grpc' : 'http_binary',
  };
  if (settings.otlpServiceName) endpoint.service_name = settings.otlpServiceName;
  const headers = keyValues(settings.otlpHeaders, from.headers, diagnostics, true);
  if (Object.keys(headers).length > 0) endpoint.headers = headers;
  const resource = keyValues(settings.otlpResourceAttributes, from.resourceAttributes, diagnostics);
  if (resource['service.name'] !== undefined && !settings.otlpServiceName) endpoint.service_name = resource['service.name'];
  delete resource['service.name'];
  if (Object.keys(resource).length > 0) endpoint.resource_attributes = resource;
  const config: JsonObject = { version: 4, opentelemetry: { enabled: true, endpoints: [endpoint] } };
  if (atof.enabled) {
    const sink: JsonObject = { type: 'file', filename: atof.filename, mode: atof.mode };
    if (atof.outputDirectory) sink.output_directory = atof.outputDirectory;
    config.atof = { enabled: true, sinks: [sink] };
  }
  return { version: 1, components: [{ kind: 'observability', enabled: true, config }] };
}

/**
 * The base URL with `/v1/traces` added to its path, as the OpenTelemetry
 * variables define it (trailing slashes first removed); a query or fragment
 * stays after the path, where a plain concatenation would put the path
 * inside it.
 */
function withTracesPath(base: string): string {
  const at = base.search(/[?#]/);
  const [head, tail] = at === -1 ? [base, ''] : [base.slice(0, at), base.slice(at)];
  return `${head.replace(/\/+$/, '')}/v1/traces${tail}`;
}

/**
 * `key=value,key2=value2` with URL-encoded values, as the OpenTelemetry
 * variables define them. For headers (`headers`), an entry native would
 * refuse the whole document for (a name that is not an HTTP token, a value
 * with a control character) is left out with a warning, and of two names
 * differing only in ASCII case the later wins, with a warning: the rest of
 * the headers, and the endpoint, still work. Warnings name the entry by its
 * position, never its text (it may hold a credential).
 */
function keyValues(text: string, name: string, diagnostics: ConfigDiagnostic[], headers = false): Record<string, string> {
  const out: Record<string, string> = {};
  const entryOf = new Map<string, { key: string; index: number }>();
  for (const [index, item] of text.split(',').entries()) {
    if (item.trim() === '') continue;
    const at = item.indexOf('=');
    if (at <= 0) {
      // The entry itself is not quoted: it may be a token written without its header name.
      diagnostics.push(invalid(name, `${name} entry ${index + 1} is not key=value; ignored`));
      continue;
    }
    const key = item.slice(0, at).trim();
    let value = item.slice(at + 1).trim();
    try {
      value = decodeURIComponent(value);
    } catch {
      /* kept as written */
    }
    if (headers) {
      if (!isHeaderName(key)) {
        diagnostics.push(invalid(name, `${name} entry ${index + 1}: its name is not an HTTP header name (letters, digits and !#$%&'*+-.^_\`|~ only); ignored`));
        continue;
      }
      if (isInvalidHeaderValue(value)) {
        diagnostics.push(invalid(name, `${name} entry ${index + 1}: its value has a control character (a line break, say), which no HTTP request can carry; ignored`));
        continue;
      }
      const lower = headerKey(key);
      const earlier = entryOf.get(lower);
      if (earlier !== undefined) {
        diagnostics.push(invalid(name, `${name} entry ${index + 1} names the header of entry ${earlier.index + 1} again (names are compared ignoring case); the later is used`));
        delete out[earlier.key];
      }
      entryOf.set(lower, { key, index });
    }
    out[key] = value;
  }
  return out;
}

function invalid(field: string, message: string): ConfigDiagnostic {
  return { level: 'warning', code: 'settings.invalid_value', field, message };
}
