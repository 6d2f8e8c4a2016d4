/**
 * The remote destinations of a `plugins.toml` observability component:
 * ATOF `stream` sinks and ATIF `storage` entries, as settings the exporters
 * take. Validation (native's diagnostics) stays in `validate.ts`; this module
 * reads what validated and decides which errors concern one destination only.
 *
 * Going further than native, which rejects the whole document when one
 * destination is wrong (a missing `header_env` variable, an empty bucket),
 * the memory relay skips just that destination, reports why, and activates
 * the rest (see `destinationOf`).
 *
 * @module
 */

import type { JsonObject } from '../../shared/json.ts';
import { isJsonObject } from '../../shared/json.ts';
import { destinationUrlProblem, headerValueProblem } from '../../shared/destination-rules.ts';
import type { ConfigDiagnostic } from './diagnostic.ts';
import { isNativeBlank, nativeTrim } from '../../shared/whitespace.ts';
import { rustDebugString } from '../../shared/rust-debug.ts';
import { refusedReadText, type VariableRead } from '../../shared/env.ts';

/** How a stream sink sends events: one HTTP POST each, a streamed NDJSON body, or a WebSocket. */
export type StreamTransport = 'http_post' | 'ndjson' | 'websocket';
/** Whether a stream sink keeps dotted field names or turns the dots into underscores. */
export type FieldNamePolicy = 'preserve' | 'replace_dots';

/** Native's default when a stream sink or HTTP storage sets no `timeout_millis`. */
const DEFAULT_DESTINATION_TIMEOUT_MILLIS = 10_000;

/** One ATOF `stream` sink: a remote receiver every event is sent to. */
export interface StreamSinkSettings {
  /** Position in `atof.sinks`, for messages. */
  index: number;
  /** The sink's configured name, used in messages. */
  name: string | undefined;
  /** The receiver's URL. */
  url: string;
  /** How events travel to the receiver. */
  transport: StreamTransport;
  /** `headers` plus the resolved `header_env` values. */
  headers: Record<string, string>;
  /** How long one send may take before it counts as failed. */
  timeoutMillis: number;
  /** Whether dotted field names are sent as they are. */
  fieldNamePolicy: FieldNamePolicy;
}

/** An ATIF `http` storage entry: each finished trajectory is POSTed to an endpoint. */
export interface HttpStorageSettings {
  /** Tells the storage kinds apart. */
  type: 'http';
  /** Position in `atif.storage`. */
  index: number;
  /** The URL trajectories are POSTed to. */
  endpoint: string;
  /** `headers` plus the resolved `header_env` values. */
  headers: Record<string, string>;
  /** How long one upload may take before it counts as failed. */
  timeoutMillis: number;
}

/** An ATIF `s3` storage entry: each finished trajectory is put as an object in a bucket. */
export interface S3StorageSettings {
  /** Tells the storage kinds apart. */
  type: 's3';
  /** Position in `atif.storage`. */
  index: number;
  /** The bucket objects are put in. */
  bucket: string;
  /** Prepended to every object key. */
  keyPrefix: string;
  /** The region requests are signed for (configured, else `AWS_REGION`/`AWS_DEFAULT_REGION`, else `us-east-1`). */
  region: string;
  /** A custom endpoint (MinIO, a local S3): path-style requests go there. */
  endpointUrl: string | undefined;
  /** Whether a plain `http://` custom endpoint is accepted. */
  allowHttp: boolean;
  /** The configured access key id, else `AWS_ACCESS_KEY_ID`; `undefined` when neither is set. */
  accessKeyId: string | undefined;
  /** The secret from `secret_access_key_var`, else `AWS_SECRET_ACCESS_KEY`; `undefined` when neither is set. */
  secretAccessKey: string | undefined;
  /** The session token of temporary credentials (`session_token_var`, else `AWS_SESSION_TOKEN`), when there is one. */
  sessionToken: string | undefined;
  /** How long one upload may take before it counts as failed. */
  timeoutMillis: number;
}

/** One ATIF remote storage entry, HTTP or S3. */
export type AtifStorageSettings = HttpStorageSettings | S3StorageSettings;

type Env = Record<string, string | undefined>;

/** The destination a diagnostic is about (`atof` `sinks[i]` of a stream sink, `atif` `storage[i]`), or null. */
export function destinationOf(diagnostic: ConfigDiagnostic, config: JsonObject): { section: 'atof' | 'atif'; index: number } | null {
  const match = /^(sinks|storage)\[(\d+)\]/.exec(diagnostic.field ?? '');
  if (match === null) return null;
  const index = Number(match[2]);
  if (match[1] === 'sinks' && diagnostic.component === 'atof') {
    const sink = listOf(config.atof, 'sinks')[index];
    // File sink errors stay fatal, as in native: the local file is what everything else relies on.
    return isJsonObject(sink) && sink.type === 'stream' ? { section: 'atof', index } : null;
  }
  if (match[1] === 'storage' && diagnostic.component === 'atif') return { section: 'atif', index };
  return null;
}

/**
 * The form a destination-only error takes once that destination is
 * skipped: a warning (native would have rejected the whole document).
 */
export function skippedDestination(diagnostic: ConfigDiagnostic, document?: JsonObject): ConfigDiagnostic {
  const variable = unsetVariableOf(diagnostic, document);
  const hint = variable !== undefined ? `; fix: set ${variable} in the host's environment before it starts` : '';
  return { ...diagnostic, level: 'warning', message: `${diagnostic.message}; this destination is skipped and the rest of the document activates${hint}` };
}

/**
 * The environment variable a destination's diagnostic is about: named in the
 * message (`storage[0].secret_access_key_var='X' references ...`), or, for a
 * stream sink's `header_env.<header>`, looked up in the document (native's
 * message names only the header).
 */
function unsetVariableOf(diagnostic: ConfigDiagnostic, document: JsonObject | undefined): string | undefined {
  if (!diagnostic.message.includes('references an environment variable')) return undefined;
  const named = /'([^']+)' references an environment variable/.exec(diagnostic.message);
  if (named) return named[1];
  const field = /^sinks\[(\d+)\]\.header_env\.(.+)$/.exec(diagnostic.field ?? '');
  if (!field || document === undefined) return undefined;
  const config = observabilityConfig(document);
  const sink = listOf(isJsonObject(config?.atof) ? config.atof : undefined, 'sinks')[Number(field[1])];
  const variable = isJsonObject(sink) && isJsonObject(sink.header_env) ? sink.header_env[field[2]!] : undefined;
  return typeof variable === 'string' ? variable : undefined;
}

function observabilityConfig(document: JsonObject): JsonObject | undefined {
  const components = Array.isArray(document.components) ? document.components : [];
  const component = components.find((c) => isJsonObject(c) && c.kind === 'observability' && c.enabled !== false);
  return isJsonObject(component) && isJsonObject(component.config) ? component.config : undefined;
}

/**
 * `document` without the stream sinks and storage entries that only
 * `skipped` (destination-only errors of its observability component)
 * concern, so that a backend that would reject the whole document for them
 * (native) activates the rest. Returns the document itself when there is
 * nothing to take out.
 */
export function withoutDestinations(document: JsonObject, skipped: readonly ConfigDiagnostic[]): JsonObject {
  const components = Array.isArray(document.components) ? document.components : [];
  const index = components.findIndex((c) => isJsonObject(c) && c.kind === 'observability' && c.enabled !== false);
  const component = components[index];
  if (skipped.length === 0 || !isJsonObject(component) || !isJsonObject(component.config)) return document;
  const config = component.config;
  const drop = { atof: new Set<number>(), atif: new Set<number>() };
  for (const diagnostic of skipped) {
    const target = destinationOf(diagnostic, config);
    if (target !== null) drop[target.section].add(target.index);
  }
  const pruned: JsonObject = { ...config };
  for (const [section, key] of [['atof', 'sinks'], ['atif', 'storage']] as const) {
    const part = config[section];
    if (drop[section].size === 0 || !isJsonObject(part) || !Array.isArray(part[key])) continue;
    pruned[section] = { ...part, [key]: part[key].filter((_, i) => !drop[section].has(i)) };
  }
  const copy = [...components];
  copy[index] = { ...component, config: pruned };
  return { ...document, components: copy };
}

/** The stream sinks of an enabled ATOF section, leaving out `skip`ped positions. */
export function readStreamSinks(config: JsonObject, skip: ReadonlySet<number>, env: Env): StreamSinkSettings[] {
  const atof = config.atof;
  if (!isJsonObject(atof) || atof.enabled !== true) return [];
  const out: StreamSinkSettings[] = [];
  listOf(atof, 'sinks').forEach((sink, index) => {
    if (!isJsonObject(sink) || sink.type !== 'stream' || skip.has(index) || typeof sink.url !== 'string') return;
    out.push({
      index,
      name: typeof sink.name === 'string' ? sink.name : undefined,
      url: sink.url,
      transport: sink.transport === 'ndjson' || sink.transport === 'websocket' ? sink.transport : 'http_post',
      headers: headersOf(sink, env),
      timeoutMillis: positive(sink.timeout_millis) ?? DEFAULT_DESTINATION_TIMEOUT_MILLIS,
      fieldNamePolicy: sink.field_name_policy === 'replace_dots' ? 'replace_dots' : 'preserve',
    });
  });
  return out;
}

/** The storage entries of an enabled ATIF section, leaving out `skip`ped positions. */
export function readAtifStorage(config: JsonObject, skip: ReadonlySet<number>, env: Env): AtifStorageSettings[] {
  const atif = config.atif;
  if (!isJsonObject(atif) || atif.enabled !== true) return [];
  const out: AtifStorageSettings[] = [];
  listOf(atif, 'storage').forEach((store, index) => {
    if (!isJsonObject(store) || skip.has(index)) return;
    const timeoutMillis = positive(store.timeout_millis) ?? DEFAULT_DESTINATION_TIMEOUT_MILLIS;
    if (store.type === 'http' && typeof store.endpoint === 'string') {
      out.push({ type: 'http', index, endpoint: store.endpoint, headers: headersOf(store, env), timeoutMillis });
    } else if (store.type === 's3' && typeof store.bucket === 'string') {
      out.push({
        type: 's3',
        index,
        bucket: store.bucket,
        keyPrefix: typeof store.key_prefix === 'string' ? store.key_prefix : '',
        region: stringOr(store.region) ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1',
        endpointUrl: stringOr(store.endpoint_url) ?? env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL,
        allowHttp: store.allow_http === true,
        accessKeyId: stringOr(store.access_key_id) ?? env.AWS_ACCESS_KEY_ID,
        secretAccessKey: fromVar(store.secret_access_key_var, env) ?? env.AWS_SECRET_ACCESS_KEY,
        sessionToken: fromVar(store.session_token_var, env) ?? env.AWS_SESSION_TOKEN,
        timeoutMillis,
      });
    }
  });
  return out;
}

function headersOf(entry: JsonObject, env: Env): Record<string, string> {
  const headers: Record<string, string> = {};
  if (isJsonObject(entry.headers)) for (const [key, value] of Object.entries(entry.headers)) if (typeof value === 'string') headers[key] = value;
  if (isJsonObject(entry.header_env)) {
    for (const [key, variable] of Object.entries(entry.header_env)) {
      const value = typeof variable === 'string' ? env[variable] : undefined;
      if (value !== undefined && !isNativeBlank(value)) headers[key] = value;
    }
  }
  return headers;
}

function listOf(section: unknown, key: string): unknown[] {
  if (!isJsonObject(section)) return [];
  const list = section[key];
  return Array.isArray(list) ? list : [];
}

function positive(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;
}

function stringOr(value: unknown): string | undefined {
  return typeof value === 'string' && !isNativeBlank(value) ? value : undefined;
}

function fromVar(name: unknown, env: Env): string | undefined {
  return typeof name === 'string' && name !== '' ? stringOr(env[name]) : undefined;
}

// ---- validation (native's diagnostics, in native's order) -----------------------------

type Unsupported = (component: string, field: string, message: string) => void;
type ReadEnv = (name: string) => VariableRead;

/** RFC 9110 token characters: what a header name may be made of. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Control characters other than tab cannot appear in a header value. */
const BAD_HEADER_VALUE = /[\u0000-\u0008\u000a-\u001f\u007f]/;

/** Native's checks of one `type = "stream"` ATOF sink. */
export function validateStreamSink(sink: JsonObject, i: number, names: Set<string>, unsupported: Unsupported, readEnv: ReadEnv): void {
  const field = (name: string) => `sinks[${i}].${name}`;
  const report = (name: string, message: string) => unsupported('atof', field(name), `ATOF sinks[${i}]${message}`);
  if (typeof sink.name === 'string') {
    if (isNativeBlank(sink.name)) report('name', '.name must be non-empty');
    else if (nativeTrim(sink.name) !== sink.name) report('name', '.name must not have leading or trailing whitespace');
    else if (names.has(sink.name)) unsupported('atof', field('name'), `ATOF stream sink name ${rustDebugString(sink.name)} must be unique`);
    names.add(sink.name);
  }
  const transport = sink.transport ?? 'http_post';
  const known = transport === 'http_post' || transport === 'websocket' || transport === 'ndjson';
  if (typeof sink.url === 'string') {
    if (isNativeBlank(sink.url)) report('url', '.url must be non-empty');
    else if (known && !urlFits(sink.url, transport === 'websocket' ? ['ws:', 'wss:'] : ['http:', 'https:'])) {
      report('url', `.url must be a valid URL for transport ${rustDebugString(transport)}`);
    }
  }
  if (!known) report('transport', ".transport must be 'http_post', 'websocket', or 'ndjson'");
  if (sink.timeout_millis === 0) report('timeout_millis', '.timeout_millis must be greater than 0');
  const policy = sink.field_name_policy;
  if (policy !== undefined && policy !== 'preserve' && policy !== 'replace_dots') report('field_name_policy', ".field_name_policy must be 'preserve' or 'replace_dots'");
  const headers = isJsonObject(sink.headers) ? sink.headers : {};
  checkHeaders(headers, (header, message) => report(`headers.${header}`, `.headers.${header} ${message}`));
  const headerEnv = isJsonObject(sink.header_env) ? sink.header_env : {};
  for (const header of Object.keys(headerEnv).sort()) {
    const name = `header_env.${header}`;
    if (header in headers) unsupported('atof', field(name), `ATOF sinks[${i}] header ${rustDebugString(header)} cannot appear in both headers and header_env`);
    if (!HEADER_NAME.test(header)) report(name, `.${name} header name '${header}' is invalid`);
    const variable = String(headerEnv[header]);
    const { value, refused } = readEnv(variable);
    if (refused !== undefined) report(name, `.${name} could not be read: ${refusedReadText(variable, refused)}`);
    else if (value === undefined) report(name, `.${name} references an environment variable that is not set: environment variable not found`);
    else if (isNativeBlank(value)) report(name, `.${name} references an environment variable that is blank`);
    else if (headerValueProblem(value) !== null) report(name, `.${name}: the value of ${String(headerEnv[header])} ${headerValueProblem(value)!}`);
  }
}

/** Native's checks of one `[[atif.storage]]` entry. */
export function validateStorageEntry(store: JsonObject, i: number, unsupported: Unsupported, readEnv: ReadEnv): void {
  const report = (name: string, message: string) => unsupported('atif', `storage[${i}].${name}`, `ATIF storage[${i}].${name} ${message}`);
  const unsetVariable = (name: string, variable: unknown) => {
    if (typeof variable !== 'string') return;
    const { value, refused } = readEnv(variable);
    if (refused !== undefined) unsupported('atif', `storage[${i}].${name}`, `ATIF storage[${i}].${name} could not be read: ${refusedReadText(variable, refused)}`);
    else if (value === undefined) unsupported('atif', `storage[${i}].${name}`, `ATIF storage[${i}].${name}='${variable}' references an environment variable that is not set`);
  };
  if (store.type === 'http') {
    if (typeof store.endpoint === 'string' && !(/^https?:\/\//.test(store.endpoint) && urlFits(store.endpoint, ['http:', 'https:']))) {
      report('endpoint', 'must be a valid http:// or https:// URL');
    }
    if (store.timeout_millis === 0) report('timeout_millis', 'must be positive');
    const headers = isJsonObject(store.headers) ? store.headers : {};
    checkHeaders(headers, (header, message) => report(`headers.${header}`, message));
    const headerEnv = isJsonObject(store.header_env) ? store.header_env : {};
    for (const header of Object.keys(headerEnv).sort()) {
      if (!HEADER_NAME.test(header)) report(`header_env.${header}`, `header name '${header}' is invalid`);
      unsetVariable(`header_env.${header}`, headerEnv[header]);
      const value = typeof headerEnv[header] === 'string' ? readEnv(headerEnv[header]).value : undefined;
      const problem = value === undefined ? null : headerValueProblem(value);
      if (problem !== null) report(`header_env.${header}`, `: the value of ${String(headerEnv[header])} ${problem}`);
    }
  } else if (store.type === 's3') {
    if (typeof store.bucket !== 'string' || isNativeBlank(store.bucket)) report('bucket', 'must be non-empty');
    unsetVariable('secret_access_key_var', store.secret_access_key_var);
    unsetVariable('session_token_var', store.session_token_var);
  }
}

function checkHeaders(headers: JsonObject, report: (header: string, message: string) => void): void {
  for (const header of Object.keys(headers).sort()) {
    if (!HEADER_NAME.test(header)) report(header, `header name '${header}' is invalid`);
    else if (typeof headers[header] === 'string' && BAD_HEADER_VALUE.test(headers[header])) report(header, 'value is invalid: failed to parse header value');
    else if (typeof headers[header] === 'string') {
      // Beyond native's rule: a value Node's HTTP client refuses would fail every request.
      const problem = headerValueProblem(headers[header]);
      if (problem !== null) report(header, `value ${problem}`);
    }
  }
}

function urlFits(text: string, schemes: readonly string[]): boolean {
  return destinationUrlProblem(text, schemes) === null;
}
