/**
 * `doctor`: what a host in this environment would get. The runtime; the
 * backend `auto` resolves to (honouring `NEMO_RELAY_HOOKS_BACKEND`, exactly
 * as the plugin does) and why native was not used when it was not; the
 * native package version; whether the `NEMO_RELAY_HOOKS_*` (or
 * `HERMES_NEMO_RELAY_*`) settings and the `plugins.toml` they point to are
 * valid; whether the optional packages each configured destination
 * needs (OTLP exporters, `ws`, `aws4`) can be imported; and, unless
 * `--offline`, whether each remote destination answers a connection
 * (`../reachability.ts`: a connection only, nothing sent).
 *
 * The `plugins.toml` observability component is checked with the in-memory
 * relay's validator, which reports the same diagnostics native's `validate`
 * does (the native adapter does not expose `validate` on its own). Exit
 * code 1 when any diagnostic is an error, an unreachable destination included.
 *
 * @module
 */

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from '../../shared/logger.ts';
import { isJsonObject, type JsonObject } from '../../shared/json.ts';
import { componentEnabled, namesRedactionWhereNoneRuns, staticPluginDocument } from '../../formats/plugins-toml/document.ts';
import { redactionRequested } from '../../plugin/activation.ts';
import { REDACTION_NOT_RUN, WITHHELD } from '../../plugin/config/plugins-toml.ts';
import { GENAI_PRICES_PACKAGE, hasResolvableSources, withSourcesForValidation } from '../../plugin/price-sources.ts';
import { environmentVariables, loadSettings, namesItsFiles } from '../../plugin/config/settings.ts';
import { packageHost } from '../../plugin/config/host-identity.ts';
import { effectiveAtifTemplate } from '../../plugin/atif-file.ts';
import { displaySettingValue, displayUrl } from '../../shared/secret-text.ts';
import type { ConfigDiagnostic } from '../../relay/contract.ts';
import { unregisteredComponent, unregisteredComponentError, validatePluginConfig, type ObservabilitySettings } from '../../formats/plugins-toml/validate.ts';
import { skippedDestination } from '../../formats/plugins-toml/sinks.ts';
import { detectRuntime } from '../../shared/js-runtime.ts';
import { BACKEND_ENV, resolveBackend } from '../../backends/select.ts';
import { booleanFlag, HELP_FLAG, JSON_FLAG, stringFlag, type CommandSpec, type ParsedArgs } from '../args.ts';
import { checkInputFile } from '../files.ts';
import { installCommand, missingPackages, packagesNeeded } from '../../export/packages.ts';
import type { CliIo, Style } from '../io.ts';
import { packageVersion } from '../package-info.ts';
import { checkReachability, REACH_TIMEOUT_MS, reasonSaysFix, remoteDestinations, type DestinationCheck, type RemoteDestination } from '../reachability.ts';
import { isPlainFileName } from '../../shared/safe-path.ts';
import { stringsSafeForTerminal } from '../terminal-text.ts';

export const doctorSpec: CommandSpec = {
  name: 'doctor',
  summary: 'Check the runtime, the backend auto would load, and the NeMo Relay settings',
  usage: '[--plugins-toml <file>] [--offline]',
  details: [
    'Reports the JavaScript runtime, which backend "auto" picks here (and why native',
    'was not used, if it was not), the nemo-relay-node version, and problems in the',
    'NEMO_RELAY_HOOKS_* (or HERMES_NEMO_RELAY_*) variables and the plugins.toml they',
    'name, and that the packages each configured destination needs can be imported.',
    'Connects to each OTLP endpoint, ATOF stream and ATIF upload the plugins.toml',
    `names (a connection only: nothing is sent; at most ${REACH_TIMEOUT_MS / 1000} s) and reports it ok or`,
    'unreachable, with the reason. Exits 1 when any problem is an error; an',
    'unreachable destination is one.',
  ].join('\n'),
  flags: {
    'plugins-toml': { type: 'string', value: '<file>', description: 'Check this plugins.toml instead of NEMO_RELAY_HOOKS_PLUGINS_TOML.' },
    offline: { type: 'boolean', description: 'Do not connect to the remote destinations (they are listed as not checked).' },
    json: JSON_FLAG,
    help: HELP_FLAG,
  },
  positionals: { name: '', min: 0, max: 0 },
};

/** What `doctor --json` prints (documented in docs/cli/README.md). */
interface DoctorReport {
  command: 'doctor';
  ok: boolean;
  runtime: { name: string; version: string; platform: string; arch: string };
  package: { name: 'nemo-relay-hooks'; version: string };
  backend: { kind: string; reason: string; override: string | null };
  native: { installed: string | null; loaded: boolean };
  environment: { set: Record<string, string>; total: number };
  exporters: { format: 'atof' | 'atif' | 'otlp'; path: string | null; mode?: string }[];
  pluginsToml: { path: string; valid: boolean; summary: string } | null;
  /** The remote destinations of the document the backend would activate, each ok, unreachable or not checked (`--offline`). */
  destinations: DestinationCheck[];
  problems: ConfigDiagnostic[];
  errors: number;
  warnings: number;
}

export async function doctor(args: ParsedArgs, io: CliIo): Promise<number> {
  const report = await examine(args, io);
  if (booleanFlag(args, 'json')) io.out(`${JSON.stringify(report, null, 2)}\n`);
  // Paths, URLs and values come from the environment and plugins.toml: none may drive the terminal.
  else io.out(renderDoctor(stringsSafeForTerminal(report), io.style));
  return report.errors > 0 ? 1 : 0;
}

async function examine(args: ParsedArgs, io: CliIo): Promise<DoctorReport> {
  const problems: ConfigDiagnostic[] = [];
  const runtime = detectRuntime();

  // The backend, resolved as the plugin would, then released.
  const notes: string[] = [];
  const quietLogger: Logger = { debug: () => {}, info: () => {}, warn: (message) => notes.push(message), error: (message) => notes.push(message) };
  const resolved = await resolveBackend('auto', { env: io.env, logger: quietLogger });
  try {
    await resolved.backend.shutdown?.();
  } catch {
    // Releasing a backend the doctor only inspected cannot matter.
  }
  const override = io.env[BACKEND_ENV]?.trim() || null;
  if (resolved.kind === 'off') {
    problems.push({ level: 'error', code: 'backend.off', field: BACKEND_ENV, message: `telemetry would be off: ${resolved.reason}` });
  }
  for (const note of notes) {
    if (!resolved.reason.includes(note)) problems.push({ level: 'warning', code: 'backend.warning', message: note });
  }
  const installed = nativePackageVersion(io.cwd) ?? null;
  // Installed but not loadable (typically npm skipped the platform package): the host silently gets memory.
  if (installed !== null && resolved.kind === 'memory' && /native relay unavailable/.test(resolved.reason)) {
    problems.push({
      level: 'warning',
      code: 'backend.native_unavailable',
      message: `nemo-relay-node ${installed} is installed but did not load, so auto uses the in-memory relay: ${nativeWhy(resolved.reason)}`,
    });
  }

  // Settings from the environment (and the plugins.toml they name).
  const env = { ...io.env };
  const tomlFlag = stringFlag(args, 'plugins-toml');
  if (tomlFlag !== undefined) {
    checkInputFile(tomlFlag);
    delete env.HERMES_NEMO_RELAY_PLUGINS_TOML;
    env.NEMO_RELAY_HOOKS_PLUGINS_TOML = tomlFlag;
  }
  const names = environmentVariables().flatMap((variable) => [variable.name, ...(variable.hermes ? [variable.hermes] : [])]).filter((name) => !name.startsWith('OTEL_'));
  const set: Record<string, string> = {};
  // Header values and URL credentials are never printed (text or --json).
  for (const name of names) if ((env[name] ?? '') !== '') set[name] = displaySettingValue(name, env[name]!);
  // A host without a package.json is named after its own script, which doctor cannot know (its script is the CLI).
  const host = packageHost(io.cwd) ?? { name: '<script>', fileStem: '<script>', version: 'unknown' };
  const loaded = loadSettings(env, {}, { processEnv: env, host });
  problems.push(...loaded.diagnostics);
  const settings = loaded.settings;
  const exporters: DoctorReport['exporters'] = [];
  // 'default folder': the host named its files, not their folder (the plugin's start-up notice says the same).
  const byDefault = loaded.recordingByDefault ? (namesItsFiles(loaded.explicit) ? 'default folder' : 'default') : undefined;
  if (settings.atofEnabled) {
    // A name with a folder part is refused by the relay (settings.invalid_value says so): no file to show.
    const file = isPlainFileName(settings.atofFilename) ? path.join(settings.atofOutputDirectory || '.', settings.atofFilename) : null;
    exporters.push({ format: 'atof', path: file, mode: byDefault ?? settings.atofMode });
  }
  if (settings.atifEnabled) {
    exporters.push({ format: 'atif', path: settings.atifOutputDirectory ? path.join(settings.atifOutputDirectory, effectiveAtifTemplate(settings.atifFilenameTemplate)) : null, ...(byDefault ? { mode: byDefault } : {}) });
  }
  if (settings.otlpEnabled) {
    exporters.push({ format: 'otlp', path: settings.otlpEndpoint ? displayUrl(settings.otlpEndpoint) : (settings.otlpProtocol === 'grpc' ? 'http://localhost:4317' : 'http://localhost:4318/v1/traces'), mode: `${settings.otlpType}, ${settings.otlpProtocol}` });
  }

  let pluginsToml: DoctorReport['pluginsToml'] = null;
  let destinations: DestinationCheck[] = [];
  if (settings.pluginsTomlPath && !settings.pluginsConfig) {
    pluginsToml = { path: settings.pluginsTomlPath, valid: false, summary: 'not usable' };
  }
  // The document the backend would activate: the plugins.toml, or the one the OTLP variables make.
  if (settings.pluginsConfig) {
    const validation = validatePluginConfig(withSourcesForValidation(staticPluginDocument(settings.pluginsConfig)));
    if (hasResolvableSources(settings.pluginsConfig) && !packageInstalled(GENAI_PRICES_PACKAGE)) {
      problems.push({
        level: 'warning',
        code: 'pricing.source_unavailable',
        component: 'pricing',
        message: `the genai_prices price source needs ${GENAI_PRICES_PACKAGE}, which is not installed: npm install ${GENAI_PRICES_PACKAGE} (until then it prices nothing)`,
      });
    }
    // The memory validator flags components only native runs; with native loaded they are fine.
    // A wrong stream sink or storage entry is skipped by the plugin (on both backends), not fatal.
    const skipped = new Set(validation.observability?.skipped ?? []);
    const relevant = validation.diagnostics
      .filter((d) => !(resolved.kind === 'native' && d.code === 'plugin.backend_unsupported_component'))
      .map((d) => (skipped.has(d) ? skippedDestination(d, settings.pluginsConfig!) : d));
    problems.push(...relevant);
    // A kind no relay registers: validation only warns, but both backends refuse the document at activation.
    const unregistered = unregisteredComponent(staticPluginDocument(settings.pluginsConfig));
    if (unregistered !== null) {
      relevant.push({
        level: 'error',
        code: 'plugin.unregistered_component',
        component: unregistered,
        message: `plugin component kind '${unregistered}' is not one NeMo Relay has (adaptive, nemo_guardrails, observability, pii_redaction, pricing), so both backends reject the document (${unregisteredComponentError(unregistered)})`,
      });
      problems.push(relevant[relevant.length - 1]!);
    }
    // A document that names pii_redaction only where no relay reads it is not activated either.
    if (namesRedactionWhereNoneRuns(settings.pluginsConfig)) {
      relevant.push(REDACTION_NOT_RUN);
      problems.push(REDACTION_NOT_RUN);
    }
    // A document that asks for redaction and cannot be used writes nothing at all (fail closed): say so, and list
    // none of the environment's exporters the plugin would otherwise fall back to.
    if (relevant.some((d) => d.level === 'error') && redactionRequested(settings)) {
      problems.push(WITHHELD);
      exporters.length = 0;
    }
    const observability = validation.observability;
    // Native sends with its own code; the in-memory relay needs the optional packages of each destination.
    if (observability && resolved.kind !== 'native') {
      for (const pkg of missingPackages(packagesNeeded(observability, runtime))) {
        problems.push({
          level: 'error',
          code: 'package.missing',
          field: pkg.name,
          message: `${pkg.neededBy} needs ${pkg.name}, which cannot be imported here; fix: ${installCommand([pkg])}`,
        });
      }
    }
    if (observability) destinations = await reach(observability, booleanFlag(args, 'offline'), problems, resolved.kind);
    // Every section off (a misspelt `enabled` is only an unknown-field warning): the host would record nothing.
    if (observability && settings.pluginsTomlPath && settings.dynamicPlugins.length === 0 && !recordsAnything(observability)) {
      problems.push({
        level: 'warning',
        code: 'plugins_toml.records_nothing',
        field: (env.NEMO_RELAY_HOOKS_PLUGINS_TOML ?? '') !== '' ? 'NEMO_RELAY_HOOKS_PLUGINS_TOML' : 'HERMES_NEMO_RELAY_PLUGINS_TOML',
        message: `${settings.pluginsTomlPath}: its observability component enables no output (no ATOF file or stream sink, ATIF off, no OpenTelemetry endpoint), so nothing is recorded: set enabled = true in the sections it should write (docs/operators/plugins-toml.md)`,
      });
    }
    if (settings.pluginsTomlPath) {
      const what = observability
        ? `observability: ${observability.fileSinks.length} ATOF file sink${observability.fileSinks.length === 1 ? '' : 's'}, ATIF ${observability.atif ? 'on' : 'off'}${remoteSummary(observability)}`
        : 'no enabled, valid observability component';
      const dynamic = settings.dynamicPlugins.length > 0 ? `, ${settings.dynamicPlugins.length} dynamic plugin(s)` : '';
      const others = otherComponents(settings.pluginsConfig);
      pluginsToml = { path: settings.pluginsTomlPath, valid: !relevant.some((d) => d.level === 'error'), summary: `${what}${dynamic}${others.length > 0 ? `; ${others.join(', ')}` : ''}` };
    }
  }

  const errors = problems.filter((d) => d.level === 'error').length;
  return {
    command: 'doctor',
    ok: errors === 0,
    runtime: { name: runtime, version: runtimeVersion(runtime), platform: os.platform(), arch: os.arch() },
    package: { name: 'nemo-relay-hooks', version: packageVersion() },
    backend: { kind: resolved.kind, reason: resolved.reason, override },
    native: { installed: resolved.kind === 'native' ? (resolved.version ?? installed) : installed, loaded: resolved.kind === 'native' },
    environment: { set, total: names.length },
    exporters,
    pluginsToml,
    destinations,
    problems,
    errors,
    warnings: problems.length - errors,
  };
}

/** The words of `status().outputs` kinds, for the destinations row and the problems. */
const DESTINATION_NAMES: Record<RemoteDestination['kind'], string> = {
  'otlp-traces': 'OTLP traces',
  'otlp-logs': 'OTLP logs',
  'atof-stream': 'ATOF stream',
  'atif-storage': 'ATIF upload',
};

/** Whether each remote destination answers (all at once, each bounded), an error for each that does not. */
async function reach(observability: ObservabilitySettings, offline: boolean, problems: ConfigDiagnostic[], backend: string): Promise<DestinationCheck[]> {
  const configured = remoteDestinations(observability);
  if (offline) return configured.map((destination) => ({ kind: destination.kind, url: destination.url, status: 'not checked' }));
  const checks = await checkReachability(configured, { native: backend === 'native' });
  checks.forEach((check, index) => {
    const field = configured[index]!.field;
    // The check trusts what the memory relay's senders trust; native's gRPC exporter trusts none of the added authorities.
    if (check.status === 'ok' && backend === 'native' && configured[index]!.grpc && /^https:/i.test(configured[index]!.target)) {
      problems.push({
        level: 'warning',
        code: 'destination.native_grpc_certificate',
        component: 'observability',
        ...(field !== undefined ? { field } : {}),
        message: `${DESTINATION_NAMES[check.kind]} ${check.url} over gRPC: native's gRPC exporter does not trust the system store, SSL_CERT_FILE or SSL_CERT_DIR (measured with nemo-relay-node 0.9.2), so it refuses a certificate a company CA signed although this check accepted it; send to such a collector with transport = "http_binary"`,
      });
    }
    if (check.status !== 'unreachable') return;
    problems.push({
      level: 'error',
      code: 'destination.unreachable',
      component: 'observability',
      ...(field !== undefined ? { field } : {}),
      // A reason that says what to do (trust a CA, fix the proxy) is not followed by advice that contradicts it.
      message: `${DESTINATION_NAMES[check.kind]} ${check.url} cannot be reached from here (${check.reason}): what the host sends there would fail${reasonSaysFix(check.reason ?? '') ? '' : '; start the receiver or fix the address'} (--offline skips this check)`,
    });
  });
  return checks;
}

/** The part of a fallback reason that says why native did not load. */
function nativeWhy(reason: string): string {
  const match = /native relay unavailable \((.*)\); using the in-memory relay/.exec(reason);
  return match?.[1] ?? reason;
}

/**
 * Why the environment enables no exporter: the row named the switch whatever
 * the cause, and a user who never set it was sent looking for it.
 */
function noExporters(report: DoctorReport): string {
  if (report.pluginsToml !== null) return 'none from the environment (a plugins.toml is configured: it owns the outputs)';
  if (Object.keys(report.environment.set).some((name) => name.startsWith('HERMES_NEMO_RELAY_'))) {
    return 'none (a HERMES_NEMO_RELAY_* variable is set: the Hermes defaults apply, and nothing is enabled)';
  }
  return 'none (NEMO_RELAY_HOOKS_OUTPUTS=off, and nothing enabled explicitly)';
}

function renderDoctor(report: DoctorReport, style: Style): string {
  const rows: [string, string][] = [];
  rows.push(['runtime', `${report.runtime.name} ${report.runtime.version} (${report.runtime.platform} ${report.runtime.arch})`]);
  rows.push(['package', `nemo-relay-hooks ${report.package.version}`]);
  const override = report.backend.override;
  rows.push(['backend', `${style.bold(report.backend.kind)}: ${report.backend.reason}${override ? style.dim(` (${BACKEND_ENV}=${override})`) : ''}`]);
  const installed = report.native.installed;
  rows.push([
    'native',
    report.native.loaded
      ? `nemo-relay-node ${installed ?? '(version unknown)'}, loaded`
      : installed
        ? `nemo-relay-node ${installed} installed, not loaded here`
        : // The backend row says what runs instead: memory under auto, nothing when NEMO_RELAY_HOOKS_BACKEND=native asked for it.
          `nemo-relay-node not installed (optional peer dependency${report.backend.kind === 'memory' ? '; the in-memory relay is used' : ''})`,
  ]);
  const set = Object.entries(report.environment.set);
  rows.push(['env', `${set.length} of ${report.environment.total} NEMO_RELAY_HOOKS_* (or HERMES_NEMO_RELAY_*) variables set`]);
  for (const [name, value] of set) rows.push(['', style.dim(`${name}=${value}`)]);
  const outputs = report.exporters.map((exporter) =>
    exporter.format === 'atof'
      ? exporter.path === null
        ? `ATOF → ${style.yellow('(its file name is refused: nothing is written)')}`
        : `ATOF → ${exporter.path} (${exporter.mode === 'default' ? 'the default output: no file output is configured' : exporter.mode === 'default folder' ? 'the default folder: no output folder is configured' : exporter.mode})`
      : exporter.format === 'otlp'
        ? `OTLP ${exporter.mode} → ${exporter.path}`
        : `ATIF → ${exporter.path ?? style.yellow('(no output directory: nothing is written)')}`,
  );
  rows.push(['exporters', outputs.length > 0 ? outputs.join('; ') : noExporters(report)]);
  const toml = report.pluginsToml;
  if (toml === null) rows.push(['plugins.toml', style.dim('not configured (NEMO_RELAY_HOOKS_PLUGINS_TOML unset)')]);
  else if (toml.summary === 'not usable') rows.push(['plugins.toml', `${toml.path}: ${style.red('not usable')}`]);
  else rows.push(['plugins.toml', `${toml.path}: ${toml.valid ? style.green('valid') : style.red('invalid')} (${toml.summary})`]);
  report.destinations.forEach((check, index) => {
    const status = check.status === 'ok' ? style.green('ok') : check.status === 'unreachable' ? `${style.red('unreachable')} (${check.reason})` : style.dim('not checked (--offline)');
    rows.push([index === 0 ? 'destinations' : '', `${DESTINATION_NAMES[check.kind]} ${check.url}${check.via !== undefined ? ` via proxy ${check.via}` : ''}: ${status}`]);
  });

  const width = Math.max(...rows.map(([key]) => key.length)) + 2;
  const lines = [style.bold('nemo-relay-hooks doctor'), ...rows.map(([key, value]) => `  ${key.padEnd(width)}${value}`)];
  if (report.problems.length > 0) {
    lines.push('', 'Problems:');
    for (const problem of report.problems) lines.push(`  ${diagnosticLine(problem, style)}`);
  }
  const { errors, warnings } = report;
  lines.push(
    '',
    errors > 0
      ? style.red(`✗ ${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}`)
      : warnings > 0
        ? style.yellow(`! no errors, ${warnings} warning${warnings === 1 ? '' : 's'}`)
        : style.green('✓ everything looks fine'),
  );
  return `${lines.join('\n')}\n`;
}

function diagnosticLine(diagnostic: ConfigDiagnostic, style: Style): string {
  const where = [diagnostic.component, diagnostic.field].filter(Boolean).join(' ');
  const level = diagnostic.level === 'error' ? style.red('error') : style.yellow('warning');
  return `${level} ${diagnostic.code}${where ? ` (${where})` : ''}: ${diagnostic.message}`;
}

function runtimeVersion(runtime: string): string {
  const versions = process.versions as Record<string, string | undefined>;
  if (runtime === 'bun') return versions.bun ?? '?';
  if (runtime === 'deno') return versions.deno ?? '?';
  return versions.node ?? '?';
}

/** The installed `nemo-relay-node` version, found without loading the binding. */
function nativePackageVersion(cwd: string): string | undefined {
  const bases = [import.meta.url, path.join(cwd, 'noop.js')];
  for (const base of bases) {
    try {
      const require = createRequire(base);
      const entry = require.resolve('nemo-relay-node');
      let dir = path.dirname(entry);
      for (let i = 0; i < 4; i++) {
        try {
          const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
          if (manifest.name === 'nemo-relay-node') return manifest.version;
        } catch {
          // Not here; one level up.
        }
        dir = path.dirname(dir);
      }
    } catch {
      // Not resolvable from this base.
    }
  }
  return undefined;
}

/** ", 2 ATOF stream sinks, 1 ATIF store" for the destinations that will activate; empty without any. */
interface ObservabilityOutputs {
  fileSinks: readonly unknown[];
  atif: unknown;
  streamSinks: readonly unknown[];
  storage: readonly unknown[];
  opentelemetry: { traces: readonly { type: string }[]; logs: readonly unknown[] };
}

/** The destinations beyond files: streams, stores and the OpenTelemetry endpoints (with their span convention). */
function remoteSummary(observability: ObservabilityOutputs): string {
  const parts: string[] = [];
  const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  if (observability.streamSinks.length > 0) parts.push(count(observability.streamSinks.length, 'ATOF stream sink', 'ATOF stream sinks'));
  if (observability.storage.length > 0) parts.push(count(observability.storage.length, 'ATIF store', 'ATIF stores'));
  const { traces, logs } = observability.opentelemetry;
  if (traces.length > 0) parts.push(`${count(traces.length, 'OTLP trace endpoint', 'OTLP trace endpoints')} (${[...new Set(traces.map((endpoint) => endpoint.type))].join(', ')})`);
  if (logs.length > 0) parts.push(count(logs.length, 'OTLP log destination', 'OTLP log destinations'));
  return parts.map((part) => `, ${part}`).join('');
}

/** The kinds of the document's enabled components besides observability (redaction, pricing, ...), once each, in order. */
function otherComponents(document: JsonObject): string[] {
  const components = Array.isArray(document.components) ? document.components.filter(isJsonObject) : [];
  const kinds = components.filter((component) => componentEnabled(component)).map((component) => component.kind);
  return [...new Set(kinds.filter((kind): kind is string => typeof kind === 'string' && kind !== 'observability'))];
}

/** Whether the observability component writes or sends anything at all. */
function recordsAnything(observability: ObservabilityOutputs): boolean {
  const { fileSinks, atif, streamSinks, storage, opentelemetry } = observability;
  return fileSinks.length + streamSinks.length + storage.length + opentelemetry.traces.length + opentelemetry.logs.length > 0 || Boolean(atif);
}

/** Whether a package resolves from here (the host's node_modules). */
function packageInstalled(name: string): boolean {
  try {
    createRequire(import.meta.url).resolve(name);
    return true;
  } catch {
    return false;
  }
}
