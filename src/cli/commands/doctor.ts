/**
 * `doctor`: what a host in this environment would get. The runtime; the
 * backend `auto` resolves to (honouring `NEMO_RELAY_HOOKS_BACKEND`, exactly
 * as the plugin does) and why native was not used when it was not; the
 * native package version; and whether the `HERMES_NEMO_RELAY_*` settings
 * and the `plugins.toml` they point to are valid.
 *
 * The `plugins.toml` observability component is checked with the in-memory
 * relay's validator, which reports the same diagnostics native's `validate`
 * does (the native adapter does not expose `validate` on its own). Exit
 * code 1 when any diagnostic is an error.
 *
 * @module
 */

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from '../../shared/logger.ts';
import { staticPluginDocument } from '../../plugin/config/plugins-toml.ts';
import { ENVIRONMENT_VARIABLES, loadSettings } from '../../plugin/config/settings.ts';
import type { ConfigDiagnostic } from '../../relay/contract.ts';
import { validatePluginConfig } from '../../backends/memory/index.ts';
import { skippedDestination } from '../../formats/plugins-toml/sinks.ts';
import { detectRuntime } from '../../shared/js-runtime.ts';
import { BACKEND_ENV, resolveBackend } from '../../backends/select.ts';
import { HELP_FLAG, stringFlag, type CommandSpec, type ParsedArgs } from '../args.ts';
import { checkInputFile } from '../files.ts';
import type { CliIo, Style } from '../io.ts';
import { packageVersion } from '../package-info.ts';

export const doctorSpec: CommandSpec = {
  name: 'doctor',
  summary: 'Check the runtime, the backend auto would load, and the NeMo Relay settings',
  usage: '[--plugins-toml <file>]',
  details: [
    'Reports the JavaScript runtime, which backend "auto" picks here (and why native',
    'was not used, if it was not), the nemo-relay-node version, and problems in the',
    'HERMES_NEMO_RELAY_* variables and the plugins.toml they name. Exits 1 when any',
    'problem is an error.',
  ].join('\n'),
  flags: {
    'plugins-toml': { type: 'string', value: '<file>', description: 'Check this plugins.toml instead of HERMES_NEMO_RELAY_PLUGINS_TOML.' },
    help: HELP_FLAG,
  },
  positionals: { name: '', min: 0, max: 0 },
};

export async function doctor(args: ParsedArgs, io: CliIo): Promise<number> {
  const { style } = io;
  const rows: [string, string][] = [];
  const problems: ConfigDiagnostic[] = [];
  const runtime = detectRuntime();
  rows.push(['runtime', `${runtime} ${runtimeVersion(runtime)} (${os.platform()} ${os.arch()})`]);
  rows.push(['package', `nemo-relay-hooks ${packageVersion()}`]);

  // The backend, resolved as the plugin would, then released.
  const notes: string[] = [];
  const quietLogger: Logger = { debug: () => {}, info: () => {}, warn: (message) => notes.push(message), error: (message) => notes.push(message) };
  const resolved = await resolveBackend('auto', { env: io.env, logger: quietLogger });
  try {
    await resolved.backend.shutdown?.();
  } catch {
    // Releasing a backend the doctor only inspected cannot matter.
  }
  const override = io.env[BACKEND_ENV]?.trim();
  rows.push(['backend', `${style.bold(resolved.kind)}: ${resolved.reason}${override ? style.dim(` (${BACKEND_ENV}=${override})`) : ''}`]);
  if (resolved.kind === 'off') {
    problems.push({ level: 'error', code: 'backend.off', field: BACKEND_ENV, message: `telemetry would be off: ${resolved.reason}` });
  }
  for (const note of notes) {
    if (!resolved.reason.includes(note)) problems.push({ level: 'warning', code: 'backend.warning', message: note });
  }
  const installed = nativePackageVersion(io.cwd);
  const nativeLine =
    resolved.kind === 'native'
      ? `nemo-relay-node ${resolved.version ?? installed ?? '(version unknown)'}, loaded`
      : installed
        ? `nemo-relay-node ${installed} installed, not loaded here`
        : 'nemo-relay-node not installed (optional peer dependency; the in-memory relay is used)';
  rows.push(['native', nativeLine]);

  // Settings from the environment (and the plugins.toml they name).
  const env = { ...io.env };
  const tomlFlag = stringFlag(args, 'plugins-toml');
  if (tomlFlag !== undefined) {
    checkInputFile(tomlFlag);
    env.HERMES_NEMO_RELAY_PLUGINS_TOML = tomlFlag;
  }
  const set = ENVIRONMENT_VARIABLES.filter((variable) => variable.name.startsWith('HERMES_NEMO_RELAY_') && (env[variable.name] ?? '') !== '');
  const total = ENVIRONMENT_VARIABLES.filter((variable) => variable.name.startsWith('HERMES_NEMO_RELAY_')).length;
  rows.push(['env', `${set.length} of ${total} HERMES_NEMO_RELAY_* variables set`]);
  for (const variable of set) rows.push(['', style.dim(`${variable.name}=${env[variable.name]}`)]);
  const loaded = loadSettings(env);
  problems.push(...loaded.diagnostics);
  const settings = loaded.settings;
  const outputs: string[] = [];
  if (settings.atofEnabled) outputs.push(`ATOF → ${path.join(settings.atofOutputDirectory || '.', settings.atofFilename)} (${settings.atofMode})`);
  if (settings.atifEnabled) outputs.push(`ATIF → ${settings.atifOutputDirectory ? path.join(settings.atifOutputDirectory, settings.atifFilenameTemplate) : '(no output directory)'}`);
  if (settings.otlpEnabled) outputs.push(`OTLP ${settings.otlpType} → ${settings.otlpEndpoint || (settings.otlpProtocol === 'grpc' ? 'http://localhost:4317' : 'http://localhost:4318/v1/traces')} (${settings.otlpProtocol})`);
  rows.push(['exporters', outputs.length > 0 ? outputs.join('; ') : 'none enabled by the environment']);

  if (!settings.pluginsTomlPath) {
    rows.push(['plugins.toml', style.dim('not configured (HERMES_NEMO_RELAY_PLUGINS_TOML unset)')]);
  } else if (!settings.pluginsConfig) {
    rows.push(['plugins.toml', `${settings.pluginsTomlPath}: ${style.red('not usable')}`]);
  } else {
    const validation = validatePluginConfig(staticPluginDocument(settings.pluginsConfig));
    // The memory validator flags components only native runs; with native loaded they are fine.
    // A wrong stream sink or storage entry is skipped by the plugin (on both backends), not fatal.
    const skipped = new Set(validation.observability?.skipped ?? []);
    const relevant = validation.diagnostics
      .filter((d) => !(resolved.kind === 'native' && d.code === 'plugin.backend_unsupported_component'))
      .map((d) => (skipped.has(d) ? skippedDestination(d) : d));
    problems.push(...relevant);
    const observability = validation.observability;
    const what = observability
      ? `observability: ${observability.fileSinks.length} ATOF file sink${observability.fileSinks.length === 1 ? '' : 's'}, ATIF ${observability.atif ? 'on' : 'off'}${remoteSummary(observability)}`
      : 'no enabled, valid observability component';
    const dynamic = settings.dynamicPlugins.length > 0 ? `, ${settings.dynamicPlugins.length} dynamic plugin(s)` : '';
    const errors = relevant.filter((d) => d.level === 'error').length;
    rows.push(['plugins.toml', `${settings.pluginsTomlPath}: ${errors === 0 ? style.green('valid') : style.red('invalid')} (${what}${dynamic})`]);
  }

  const errors = problems.filter((d) => d.level === 'error');
  const warnings = problems.filter((d) => d.level !== 'error');
  const width = Math.max(...rows.map(([key]) => key.length)) + 2;
  const lines = [style.bold('nemo-relay-hooks doctor'), ...rows.map(([key, value]) => `  ${key.padEnd(width)}${value}`)];
  if (problems.length > 0) {
    lines.push('', 'Problems:');
    for (const problem of problems) lines.push(`  ${diagnosticLine(problem, style)}`);
  }
  lines.push(
    '',
    errors.length > 0
      ? style.red(`✗ ${errors.length} error${errors.length === 1 ? '' : 's'}, ${warnings.length} warning${warnings.length === 1 ? '' : 's'}`)
      : warnings.length > 0
        ? style.yellow(`! no errors, ${warnings.length} warning${warnings.length === 1 ? '' : 's'}`)
        : style.green('✓ everything looks fine'),
  );
  io.out(`${lines.join('\n')}\n`);
  return errors.length > 0 ? 1 : 0;
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
function remoteSummary(observability: { streamSinks: readonly unknown[]; storage: readonly unknown[] }): string {
  const parts: string[] = [];
  const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  if (observability.streamSinks.length > 0) parts.push(count(observability.streamSinks.length, 'ATOF stream sink', 'ATOF stream sinks'));
  if (observability.storage.length > 0) parts.push(count(observability.storage.length, 'ATIF store', 'ATIF stores'));
  return parts.map((part) => `, ${part}`).join('');
}
