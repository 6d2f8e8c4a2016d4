/**
 * The native plugin host: `plugins.toml` documents and dynamic plugins.
 *
 * **One activation per process.** Native refuses a second `initialize` while
 * one is live (`conflict: ...`). The adapter tracks the live activation at
 * module level, so a second call fails fast with `PluginActivationBusyError`
 * instead of a native message, whichever backend instance made the first.
 *
 * **The document is authoritative.** Native layers an explicit
 * `additionalPluginsToml` file *over* the document it is given, and
 * concatenates destination lists such as `atof.sinks`. Passing the file the
 * document was read from would therefore configure every sink twice (two
 * writers on one file). `options.tomlPath` is used only to resolve relative
 * dynamic-plugin manifest paths and in messages; it is never layered.
 *
 * **Ambient discovery is kept out by default.** Without an explicit layer,
 * native also reads the user file (`$XDG_CONFIG_HOME/nemo-relay/plugins.toml`,
 * or `~/.config/nemo-relay/plugins.toml`). An explicit layer replaces that
 * lookup, so the adapter passes the path of a file that does not exist
 * (native then only warns `plugin.configuration_file_missing`, which the
 * adapter drops) or, for dynamic plugins, a temporary file holding only
 * their records. No environment variable is touched (a change to
 * `process.env` would be process-wide, racy, and does not even reach native
 * code under Bun), and nothing is written for a static document. The system
 * file `/etc/nemo-relay/plugins.toml` is read in every case and cannot be
 * excluded through the 0.9.x API; when it contributes, the report gains a
 * `nemo_relay_hooks.ambient_config_inherited` warning naming it.
 * `allowConfigDiscovery: true` restores native's own lookup (user file and
 * system file, no warning), except with dynamic plugins: native takes one
 * explicit file, and that one holds their records.
 *
 * **Dynamic plugins.** 0.9.x has no API taking in-memory activation specs.
 * Specs become `[[plugins.dynamic]]` records (`manifest`, `config`) in the
 * temporary layer. Only those two fields exist in a record: a spec's
 * `environment_ref` cannot be expressed (it is dropped with a warning
 * diagnostic), its `kind` and `plugin_id` come from the manifest and are
 * checked against it, and `null` config values are dropped (TOML has no null).
 *
 * @module
 */

import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify as stringifyToml } from 'smol-toml';
import type {
  ConfigDiagnostic,
  DynamicPluginSpec,
  Json,
  JsonObject,
  OutputHealth,
  PluginConfigActivation,
  PluginConfigOptions,
  PluginConfigReport,
} from '../src/backends/native-surface.ts';
import { isJsonObject } from '../src/backends/native-surface.ts';
import { configuredHeaderValues, displayUrl, errorMessage, errorsText, withoutValues, withoutConfigPrefix, isPlaintextRemote, openTelemetrySettings, otlpEnvRefusals, safeLog, type Logger, type RemoteOutputLedger } from '../src/backends/native-surface.ts';
import type { NativeBinding, NativePluginHostActivation } from './binding.ts';
import { DynamicPluginError, InvalidPluginConfigError, PluginActivationBusyError } from './errors.ts';
import { json } from './payloads.ts';
import { stageAtifUploads, STAGING_PREFIX, type NativeAtifUploads } from './atif-uploads.ts';
import { endTornLine } from './atof.ts';

/** Diagnostic code added when a discovered file was layered although discovery is off. */
export const AMBIENT_CONFIG_INHERITED = 'nemo_relay_hooks.ambient_config_inherited';
/** Diagnostic code added when a dynamic spec carries an `environment_ref`. */
export const DYNAMIC_ENVIRONMENT_IGNORED = 'nemo_relay_hooks.dynamic_environment_ref_ignored';

export interface PluginHostContext {
  binding: NativeBinding;
  /** Let native read the user and system `plugins.toml` files. */
  allowConfigDiscovery: boolean;
  /** Drains native delivery; called before an activation closes. Never rejects. */
  drain(): Promise<void>;
  /** Reports a failure that must not reach the caller. */
  onError(operation: string, error: unknown): void;
  logger: Logger;
  /** Where the ATIF uploads this adapter sends for native (atif-uploads.ts) are counted. */
  remoteOutputs: RemoteOutputLedger;
}

// Process-wide: native allows one activation per process, whoever owns it.
let liveOwner: object | null = null;

/** Whether a plugin-config activation made by this module is live. */
export function pluginHostBusy(): boolean {
  return liveOwner !== null;
}

/** Activates `document` (and `specs`, when given) through native `initialize`. */
export async function activatePluginHost(
  context: PluginHostContext,
  document: JsonObject,
  options: PluginConfigOptions | undefined,
  specs: readonly DynamicPluginSpec[] | null,
): Promise<NativePluginActivation> {
  if (liveOwner !== null) {
    throw new PluginActivationBusyError(
      'conflict: a plugin-config activation is already live in this process; close() it before initializing again',
    );
  }
  const token = {};
  liveOwner = token; // held while initializing, so concurrent calls fail fast too
  let layer: TempLayer | null = null;
  const tomlPath = tomlPathOf(options);
  try {
    const doc = json(document);
    if (!isJsonObject(doc)) throw new InvalidPluginConfigError('invalid config: the plugin config document must be an object', []);
    // Native's refusal of a wrongly typed value quotes it (`invalid type: string "authorization=Bearer ...", expected
    // a map`): a header value is masked in every message it gives, as the memory relay's checks never quote one.
    const secrets = configuredHeaderValues(doc);
    const hide = (text: string) => withoutValues(text, secrets);
    const hidden = (list: ConfigDiagnostic[]) => list.map((d) => ({ ...d, message: hide(d.message) }));
    const extra: ConfigDiagnostic[] = [];
    const dynamic = specs !== null && specs.length > 0;
    if (dynamic) {
      layer = writeLayer(dynamicLayerText(specs, tomlPath, extra));
    } else if (!context.allowConfigDiscovery) {
      layer = missingLayer();
    }
    const Failure = dynamic ? DynamicPluginError : InvalidPluginConfigError;
    const layerPath = layer?.file ?? null;

    let validated: unknown;
    try {
      validated = context.binding.validate(doc, layerPath);
    } catch (error) {
      // Native reports a document it cannot read (`invalid plugin config: invalid type: map, expected a sequence`) by
      // throwing, with no diagnostics: the same error as one `plugin.invalid_config`, as the memory relay reports it.
      const reason = hide(withoutConfigPrefix(errorMessage(error)));
      throw new Failure(`invalid config${where(tomlPath)}: ${reason}`, [{ level: 'error', code: 'plugin.invalid_config', message: reason }], { cause: error });
    }
    const validation = reportOf(validated, layerPath);
    validation.diagnostics = hidden(validation.diagnostics);
    if (dynamic) validation.diagnostics.push(...specMismatches(validated, specs));
    const errors = validation.diagnostics.filter((d) => d.level === 'error');
    if (errors.length > 0) {
      throw new Failure(`invalid config${where(tomlPath)}: ${errorsText(errors)}`, sortErrorsFirst(validation.diagnostics));
    }

    // Validated as given (native's diagnostics for the storage entries); activated without them: this adapter uploads.
    const staged = stageAtifUploads(doc, context.logger, context.remoteOutputs);
    endTornSinkLines(doc, context.logger);
    let activation: NativePluginHostActivation;
    try {
      activation = await context.binding.initialize(staged.document, layerPath);
    } catch (error) {
      staged.discard();
      const message = errorMessage(error);
      if (/^conflict:/.test(message)) {
        throw new PluginActivationBusyError(`${message} (an activation made outside this adapter is live)`, { cause: error });
      }
      throw new Failure(hide(`invalid config${where(tomlPath)}: activation failed: ${withoutConfigPrefix(message)}${refusalHint(doc, message)}`), validation.diagnostics, { cause: error });
    }
    const uploads = staged.start();
    const raw = safeReport(activation);
    const report = reportOf(raw, layerPath);
    report.diagnostics = hidden(report.diagnostics);
    report.diagnostics.push(...extra);
    if (!context.allowConfigDiscovery) report.diagnostics.push(...inheritedWarnings(report.configPaths));
    const outputs = [...outputSpecsOf(raw, uploads), ...collectorSpecsOf(doc)];
    return new NativePluginActivation(context, activation, report, token, outputs, uploads);
  } catch (error) {
    liveOwner = null;
    throw error;
  } finally {
    layer?.remove();
  }
}

/** A live activation; `outputs()` reports the files its observability component writes. */
export class NativePluginActivation implements PluginConfigActivation {
  readonly report: PluginConfigReport;
  readonly #context: PluginHostContext;
  readonly #activation: NativePluginHostActivation;
  readonly #token: object;
  readonly #outputs: OutputSpec[];
  readonly #uploads: NativeAtifUploads | null;
  #closing: Promise<void> | null = null;
  #closed = false;
  /** Set once native's close was called: even one that fails has removed the activation's sinks and exporters. */
  #tornDown = false;
  /** What native's failed close said of its OpenTelemetry delivery, per signal (native counts nothing else). */
  readonly #otlpFailures: Record<'otlp-traces' | 'otlp-logs', string | null> = { 'otlp-traces': null, 'otlp-logs': null };

  constructor(
    context: PluginHostContext,
    activation: NativePluginHostActivation,
    report: PluginConfigReport,
    token: object,
    outputs: OutputSpec[],
    uploads: NativeAtifUploads | null,
  ) {
    this.#context = context;
    this.#activation = activation;
    this.report = report;
    this.#token = token;
    this.#outputs = outputs;
    this.#uploads = uploads;
  }

  /** Whether `close()` completed. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Whether the activation still writes to its outputs: false from the
   * first close on, even one native failed (it keeps the activation owned so
   * that close() can be retried, but writes no ATOF line and exports nothing
   * through it any more).
   */
  get isActive(): boolean {
    return !this.#tornDown;
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  /** Health of the ATOF file sinks and ATIF directories the activation writes. */
  outputs(): OutputHealth[] {
    return this.#outputs.map((spec) => {
      const health = outputHealth(spec);
      const failure = spec.kind === 'otlp-traces' || spec.kind === 'otlp-logs' ? this.#otlpFailures[spec.kind] : null;
      if (failure !== null) {
        // One failed delivery per activation: a close native lets us retry reports the same loss again.
        health.errors = 1;
        health.lastError = failure;
      }
      return health;
    });
  }

  /** The OTLP collectors native's own exporter sends to (display URLs), signal by signal, with their `timeout_millis`. */
  collectors(): { url: string; timeoutMillis: number }[] {
    return this.#outputs
      .filter((spec) => spec.kind === 'otlp-traces' || spec.kind === 'otlp-logs')
      .map((spec) => ({ url: spec.path, timeoutMillis: spec.timeoutMillis ?? 10_000 }));
  }

  /** Once closed: the collector entries whose delivery failed (the rest of a closed activation is no longer listed). */
  failedCollectors(): OutputHealth[] {
    return this.outputs().filter((health) => (health.kind === 'otlp-traces' || health.kind === 'otlp-logs') && health.errors > 0);
  }

  async #close(): Promise<void> {
    await this.#context.drain();
    this.#tornDown = true;
    try {
      await this.#activation.close();
      this.#closed = true;
      if (liveOwner === this.#token) liveOwner = null;
    } catch (error) {
      // Native keeps a failed teardown active so close() can be retried.
      this.#context.onError('plugin activation close', error);
      this.#noteOtlpFailures(errorMessage(error));
      this.#closing = null;
      this.#uploads?.collect();
      return;
    }
    // Native wrote its last trajectories (partial ones included) on close: upload them, each destination within its timeout.
    await this.#uploads?.close();
  }

  /**
   * A close that failed because native's OpenTelemetry exporter could not
   * deliver is the only sign native gives that spans or log records were
   * lost (it makes one attempt per batch and counts nothing): the collector
   * entries of `outputs()` say so, instead of a clean `errors: 0`.
   */
  #noteOtlpFailures(message: string): void {
    const signals = [
      ['otlp-traces', /traces_export_failed|trace export|tracer provider/, /^otel\.(traces|spans)_/],
      ['otlp-logs', /logs_export_failed|logs_dropped \([1-9]|log export|log provider/, /^otel\.logs_/],
    ] as const;
    for (const [kind, pattern, ownCode] of signals) {
      if (!pattern.test(message)) continue;
      // Native's own counters of this signal (`otel.traces_export_failed (1)`) when it gave them, else its failure's words.
      const codes = [...message.matchAll(/otel\.[a-z_]+ \([1-9]\d*\)/g)].map((match) => match[0]).filter((code) => ownCode.test(code));
      const failure = /InternalFailure\("([^"]{1,300})"\)/.exec(message)?.[1];
      const words = codes.length > 0 ? [...new Set(codes)].join(', ') : (failure ?? 'export failed');
      const what = words.replace(/[a-z][a-z0-9+.-]*:\/\/[^\s"')\]]+/gi, (url) => displayUrl(url));
      this.#otlpFailures[kind] = `native reported a failed delivery when the activation closed: ${what}`;
    }
  }
}

/** A file (ATOF sink) or a directory of `prefix*suffix` files (ATIF) an activation writes. */
interface OutputSpec {
  kind: 'atof' | 'atif' | 'otlp-traces' | 'otlp-logs';
  path: string;
  /** OTLP only: how long one export may take (`timeout_millis`). */
  timeoutMillis?: number;
  /** ATIF only: file name parts around `{session_id}`. */
  template?: { prefix: string; suffix: string };
}

// Native resolves relative output directories against the working directory.
/**
 * The OTLP collectors the document's observability component sends to, read
 * as the in-memory relay reads them (the same URLs): listed in `outputs()`,
 * though native reports no counts for them.
 */
function collectorSpecsOf(doc: JsonObject): OutputSpec[] {
  const specs: OutputSpec[] = [];
  for (const component of Array.isArray(doc.components) ? doc.components : []) {
    if (!isJsonObject(component) || component.kind !== 'observability' || component.enabled === false) continue;
    const config = isJsonObject(component.config) ? component.config : {};
    if (!isJsonObject(config.opentelemetry)) continue;
    try {
      const otel = openTelemetrySettings(config.opentelemetry, config.version, process.env, () => {});
      for (const trace of otel.traces) specs.push({ kind: 'otlp-traces', path: displayUrl(trace.url), timeoutMillis: trace.timeoutMillis });
      for (const logs of otel.logs) specs.push({ kind: 'otlp-logs', path: displayUrl(logs.url), timeoutMillis: logs.timeoutMillis });
    } catch {
      // A collector this reading cannot make out is left unlisted; native still sends to it.
    }
  }
  return specs;
}

/**
 * Why native most likely refused a document's OpenTelemetry section, when
 * its own message says only that no endpoint was valid: the process
 * environment variables it refuses, and the endpoints the in-memory relay
 * would skip (a `header_env` variable unset, blank or padded, a zero batch
 * number, a trace endpoint on plain `http://` to another machine), by
 * field. No value is quoted.
 */
function refusalHint(doc: JsonObject, message: string): string {
  if (!message.includes('requires at least one valid trace, log, or metric endpoint')) return '';
  const causes = otlpEnvRefusals(process.env).map((r) => `${r.variable} is set in the process environment, which native refuses${r.kind === 'headers' ? ' (use headers or header_env per endpoint, or NEMO_RELAY_HOOKS_OTLP_HEADERS)' : ''}`);
  for (const component of Array.isArray(doc.components) ? doc.components : []) {
    if (!isJsonObject(component) || component.kind !== 'observability' || component.enabled === false) continue;
    const config = isJsonObject(component.config) ? component.config : {};
    if (!isJsonObject(config.opentelemetry)) continue;
    try {
      const endpoints = Array.isArray(config.opentelemetry.endpoints) ? config.opentelemetry.endpoints : [];
      openTelemetrySettings(config.opentelemetry, config.version, process.env, (d) => {
        if (d.code !== 'observability.otel_endpoint_skipped' || d.field === undefined) return;
        // Native's message names no cause: this one is not a value to look up, so say it.
        const at = /^endpoints\[(\d+)\]\.endpoint$/.exec(d.field);
        const endpoint = at === null ? undefined : endpoints[Number(at[1])];
        const plaintext = isJsonObject(endpoint) && typeof endpoint.endpoint === 'string' && isPlaintextRemote(endpoint.endpoint.trim());
        causes.push(`opentelemetry.${d.field}${plaintext ? ' is plain http:// to another machine, which native sends no trace to (use https://, or a collector on this host)' : ''}`);
      });
    } catch {
      // No hint then; native's message stands.
    }
  }
  return causes.length === 0 ? '' : ` (likely: ${causes.join('; ')})`;
}

/**
 * Ends the torn last line of each ATOF file sink native will append to (an
 * earlier writer cut off mid-line): native appends straight after it, and
 * its first line and the fragment would become one line nobody can parse.
 */
function endTornSinkLines(doc: JsonObject, logger: Logger): void {
  for (const component of Array.isArray(doc.components) ? doc.components : []) {
    if (!isJsonObject(component) || component.kind !== 'observability' || component.enabled === false) continue;
    const config = isJsonObject(component.config) ? component.config : {};
    const atof = isJsonObject(config.atof) ? config.atof : {};
    if (atof.enabled === false || !Array.isArray(atof.sinks)) continue;
    for (const sink of atof.sinks) {
      if (!isJsonObject(sink) || (sink.type !== undefined && sink.type !== 'file') || (sink.mode ?? 'append') !== 'append') continue;
      if (typeof sink.filename !== 'string') continue;
      const file = path.resolve(typeof sink.output_directory === 'string' ? sink.output_directory : '.', sink.filename);
      if (endTornLine(file)) safeLog(logger, 'warn', `ATOF file ${file} ended with a torn line (an earlier writer was cut off); it was ended before native appends`);
    }
  }
}

function outputSpecsOf(raw: unknown, uploads: NativeAtifUploads | null): OutputSpec[] {
  const report = isJsonObject(raw) ? raw : {};
  const resolved = isJsonObject(report.resolved_config) ? report.resolved_config : {};
  const components = Array.isArray(resolved.components) ? resolved.components : [];
  const specs: OutputSpec[] = [];
  for (const component of components) {
    if (!isJsonObject(component) || component.kind !== 'observability' || component.enabled === false) continue;
    const config = isJsonObject(component.config) ? component.config : {};
    const atof = isJsonObject(config.atof) ? config.atof : {};
    if (atof.enabled !== false && Array.isArray(atof.sinks)) {
      for (const sink of atof.sinks) {
        if (!isJsonObject(sink) || (sink.type !== undefined && sink.type !== 'file')) continue;
        if (typeof sink.filename !== 'string') continue;
        const dir = typeof sink.output_directory === 'string' ? sink.output_directory : '.';
        specs.push({ kind: 'atof', path: path.resolve(dir, sink.filename) });
      }
    }
    const atif = isJsonObject(config.atif) ? config.atif : null;
    if (atif !== null && atif.enabled === true) {
      // With uploads, native writes into the staging folder; the configured folder is where recovery copies land.
      const dir = uploads !== null ? uploads.outputDirectory : typeof atif.output_directory === 'string' ? atif.output_directory : '.';
      const template = typeof atif.filename_template === 'string' ? atif.filename_template : 'nemo-relay-atif-{session_id}.json';
      const [prefix = '', suffix = ''] = template.split('{session_id}');
      specs.push({ kind: 'atif', path: path.resolve(dir), template: { prefix, suffix } });
    }
  }
  return specs;
}

function outputHealth(spec: OutputSpec): OutputHealth {
  const health: OutputHealth = { kind: spec.kind, path: spec.path, lastWrite: null, bytes: 0, errors: 0 };
  if (spec.kind === 'otlp-traces' || spec.kind === 'otlp-logs') {
    health.unobserved = 'native sends to this collector with its own exporter and reports no counts for it';
    return health;
  }
  try {
    if (spec.template === undefined) {
      const stat = statSync(spec.path);
      health.bytes = stat.size;
      if (stat.size > 0) health.lastWrite = stat.mtime.toISOString();
      return health;
    }
    let latest = 0;
    for (const name of readdirSync(spec.path)) {
      if (!name.startsWith(spec.template.prefix) || !name.endsWith(spec.template.suffix) || name.startsWith(STAGING_PREFIX)) continue;
      const stat = statSync(path.join(spec.path, name));
      health.bytes += stat.size;
      latest = Math.max(latest, stat.mtimeMs);
    }
    if (latest > 0) health.lastWrite = new Date(latest).toISOString();
  } catch (error) {
    // Nothing written yet is not an error; anything else is.
    if ((error as { code?: unknown } | null)?.code !== 'ENOENT') {
      health.errors = 1;
      health.lastError = errorMessage(error);
    }
  }
  return health;
}

interface TempLayer {
  file: string;
  remove(): void;
}

/**
 * An explicit layer that does not exist: native then skips the user file
 * and reports only a `plugin.configuration_file_missing` warning, which
 * `reportOf` drops. Nothing is written, so this works without write access
 * (Deno without `--allow-write`, read-only file systems).
 */
function missingLayer(): TempLayer {
  const file = path.join(os.tmpdir(), `nemo-relay-hooks-no-ambient-config-${process.pid}-${randomSuffix()}`, 'plugins.toml');
  return { file, remove: () => {} };
}

function randomSuffix(): string {
  return Math.random().toString(36).slice(2, 12);
}

function writeLayer(text: string): TempLayer {
  let dir: string;
  let file: string;
  try {
    dir = mkdtempSync(path.join(os.tmpdir(), 'nemo-relay-hooks-layer-'));
    file = path.join(dir, 'plugins.toml');
    writeFileSync(file, text);
  } catch (error) {
    throw new DynamicPluginError(
      `cannot write the temporary plugins.toml holding the dynamic plugin records (${errorMessage(error)}); ` +
        'nemo-relay-node 0.9.x takes dynamic plugins only from a file (under Deno, allow writes to the temp directory)',
      [],
      { cause: error },
    );
  }
  return {
    file,
    remove: () => {
      try {
        rmSync(dir, { recursive: true, force: true });
      } catch {
        // A leftover empty temp file is harmless.
      }
    },
  };
}

function dynamicLayerText(specs: readonly DynamicPluginSpec[], tomlPath: string | undefined, extra: ConfigDiagnostic[]): string {
  const base = tomlPath ? path.dirname(path.resolve(tomlPath)) : process.cwd();
  const records = specs.map((given, index) => {
    const spec = specFields(given);
    const manifest = typeof spec.manifest_ref === 'string' ? spec.manifest_ref.trim() : '';
    if (manifest === '') {
      throw new DynamicPluginError(`dynamic plugin spec ${index} has no manifest_ref`, [
        { level: 'error', code: 'plugin.dynamic.invalid_spec', field: `dynamic_plugins[${index}].manifest_ref`, message: 'manifest_ref is required' },
      ]);
    }
    if (typeof spec.environment_ref === 'string' && spec.environment_ref.trim() !== '') {
      const diagnostic: ConfigDiagnostic = {
        level: 'warning',
        code: DYNAMIC_ENVIRONMENT_IGNORED,
        field: `dynamic_plugins[${index}].environment_ref`,
        message: 'nemo-relay-node 0.9.x cannot take an environment_ref for a dynamic plugin; it was ignored',
      };
      if (typeof spec.plugin_id === 'string') diagnostic.component = spec.plugin_id;
      extra.push(diagnostic);
    }
    const record: Record<string, unknown> = { manifest: path.resolve(base, manifest) };
    const config = withoutNulls(json(spec.config));
    if (isJsonObject(config) && Object.keys(config).length > 0) record.config = config;
    return record;
  });
  return stringifyToml({ version: 1, plugins: { dynamic: records } });
}

/** The fields of a spec, read once; a hostile spec reads as empty. */
function specFields(spec: DynamicPluginSpec): Partial<DynamicPluginSpec> {
  try {
    return { manifest_ref: spec?.manifest_ref, environment_ref: spec?.environment_ref, plugin_id: spec?.plugin_id, kind: spec?.kind, config: spec?.config };
  } catch {
    return {};
  }
}

// TOML has no null: drop null members and null array items.
function withoutNulls(value: Json): Json {
  if (Array.isArray(value)) return value.filter((item) => item !== null).map(withoutNulls);
  if (isJsonObject(value)) {
    const out: JsonObject = {};
    for (const [key, item] of Object.entries(value)) if (item !== null) out[key] = withoutNulls(item);
    return out;
  }
  return value;
}

/** Native report → contract report, without the adapter's own temporary layer. */
function reportOf(raw: unknown, ownLayer: string | null): PluginConfigReport {
  const report = isJsonObject(raw) ? raw : {};
  const config = isJsonObject(report.config) ? report.config : {};
  const diagnostics: ConfigDiagnostic[] = [];
  for (const list of [config.diagnostics, config.runtime_diagnostics]) {
    if (!Array.isArray(list)) continue;
    for (const item of list) {
      const diagnostic = diagnosticOf(item);
      // The adapter's own deliberately missing layer (missingLayer) is not the caller's concern.
      if (ownLayer !== null && diagnostic.code === 'plugin.configuration_file_missing' && diagnostic.message.includes(ownLayer)) continue;
      diagnostics.push(diagnostic);
    }
  }
  const dynamic = Array.isArray(report.dynamic_plugins) ? report.dynamic_plugins : [];
  for (const entry of dynamic) {
    if (!isJsonObject(entry) || !isJsonObject(entry.failure)) continue;
    const diagnostic: ConfigDiagnostic = {
      level: 'error',
      code: `plugin.dynamic.${typeof entry.failure.code === 'string' ? entry.failure.code : 'failure'}`,
      field: 'plugins.dynamic',
      message: typeof entry.failure.message === 'string' ? entry.failure.message : 'dynamic plugin failed validation',
    };
    if (typeof entry.plugin_id === 'string') diagnostic.component = entry.plugin_id;
    diagnostics.push(diagnostic);
  }
  const configPaths = Array.isArray(report.config_paths)
    ? report.config_paths.filter((p): p is string => typeof p === 'string' && p !== ownLayer)
    : [];
  return { diagnostics, configPaths };
}

function diagnosticOf(item: unknown): ConfigDiagnostic {
  const raw = isJsonObject(item) ? item : {};
  const diagnostic: ConfigDiagnostic = {
    level: raw.level === 'error' ? 'error' : 'warning',
    code: typeof raw.code === 'string' ? raw.code : 'unknown',
    message: typeof raw.message === 'string' ? raw.message : JSON.stringify(item),
  };
  if (typeof raw.component === 'string') diagnostic.component = raw.component;
  if (typeof raw.field === 'string') diagnostic.field = raw.field;
  return diagnostic;
}

/** A spec whose `kind` or `plugin_id` disagrees with its manifest (native only reads the manifest). */
function specMismatches(validated: unknown, specs: readonly DynamicPluginSpec[]): ConfigDiagnostic[] {
  const entries = isJsonObject(validated) && Array.isArray(validated.dynamic_plugins) ? validated.dynamic_plugins : [];
  const out: ConfigDiagnostic[] = [];
  specs.forEach((given, index) => {
    const entry = entries[index];
    if (!isJsonObject(entry)) return;
    const spec = specFields(given);
    for (const field of ['kind', 'plugin_id'] as const) {
      const declared = spec[field];
      const actual = entry[field];
      if (typeof declared === 'string' && typeof actual === 'string' && declared !== actual) {
        const diagnostic: ConfigDiagnostic = {
          level: 'error',
          code: 'plugin.dynamic.spec_mismatch',
          field: `dynamic_plugins[${index}].${field}`,
          message: `dynamic_plugins[${index}].${field} is '${declared}' but its manifest declares '${actual}'`,
        };
        if (typeof entry.plugin_id === 'string') diagnostic.component = entry.plugin_id;
        out.push(diagnostic);
      }
    }
  });
  return out;
}

function inheritedWarnings(configPaths: readonly string[]): ConfigDiagnostic[] {
  return configPaths.map((file) => ({
    level: 'warning' as const,
    code: AMBIENT_CONFIG_INHERITED,
    field: 'config_paths',
    message: `${file} was layered over the plugin config by nemo-relay-node; the system plugins.toml cannot be excluded`,
  }));
}

function safeReport(activation: NativePluginHostActivation): unknown {
  try {
    return activation.report;
  } catch {
    return {};
  }
}

function sortErrorsFirst(diagnostics: ConfigDiagnostic[]): ConfigDiagnostic[] {
  return [...diagnostics].sort((a, b) => (a.level === b.level ? 0 : a.level === 'error' ? -1 : 1));
}

function where(tomlPath: string | undefined): string {
  return tomlPath ? ` (${tomlPath})` : '';
}

function tomlPathOf(options: PluginConfigOptions | undefined): string | undefined {
  try {
    const value = options?.tomlPath;
    return typeof value === 'string' && value !== '' ? value : undefined;
  } catch {
    return undefined;
  }
}

