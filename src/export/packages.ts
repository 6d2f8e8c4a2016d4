/**
 * The optional packages the senders need, per configured destination, and
 * whether they can be imported from here: one rule that the activation's
 * warning and `doctor`'s check both use.
 *
 * The OTLP exporters, `ws` and `aws4` are optional peer dependencies,
 * imported only when a destination of theirs sends. Without this check a
 * missing one shows only as failures in `status().outputs` once data is
 * sent; with it, the plugin says so at activation, naming the command that
 * fixes it.
 *
 * @module
 */

import { createRequire } from 'node:module';
import type { ObservabilitySettings } from '../formats/plugins-toml/observability-settings.ts';
import { runsFromOwnPackage } from '../shared/package-module.ts';
import { displayUrl } from '../shared/secret-text.ts';

/** A package a configured destination needs. */
export interface NeededPackage {
  /** The npm name. */
  name: string;
  /** The version range to install (the one this package is tested with). */
  range: string;
  /**
   * The destination that needs it, e.g. `OTLP traces to http://localhost:4318/v1/traces`, its address as
   * `displayUrl` shows it: doctor and the activation warning print this text, and people paste both into issues.
   */
  neededBy: string;
}

// The ranges of package.json's peerDependencies; test/package keeps them in step.
const RANGES: Readonly<Record<string, string>> = {
  '@opentelemetry/exporter-trace-otlp-proto': '^0.223.1',
  '@opentelemetry/exporter-trace-otlp-grpc': '^0.223.1',
  '@opentelemetry/exporter-logs-otlp-proto': '^0.223.1',
  '@opentelemetry/exporter-logs-otlp-grpc': '^0.223.1',
  '@grpc/grpc-js': '^1.14.7',
  ws: '^8.18.0',
  aws4: '^1.13.2',
};

/**
 * The packages the in-memory relay needs to send to `observability`'s
 * destinations (native sends with its own code and needs none). One entry
 * per package, naming the first destination that needs it.
 */
export function packagesNeeded(observability: ObservabilitySettings, runtime: string): NeededPackage[] {
  const needed = new Map<string, NeededPackage>();
  const need = (name: string, neededBy: string) => {
    if (!needed.has(name)) needed.set(name, { name, range: RANGES[name] ?? 'latest', neededBy });
  };
  const { opentelemetry } = observability;
  for (const [signal, destinations] of [['trace', opentelemetry.traces], ['logs', opentelemetry.logs]] as const) {
    for (const destination of destinations) {
      const wire = destination.transport === 'grpc' ? 'grpc' : 'proto';
      const what = `OTLP ${signal === 'trace' ? 'traces' : 'logs'} to ${displayUrl(destination.url)}`;
      need(`@opentelemetry/exporter-${signal}-otlp-${wire}`, what);
      if (wire === 'grpc' && Object.keys(destination.headers).length > 0) need('@grpc/grpc-js', what);
    }
  }
  // Bun has its own WebSocket; Node and Deno use `ws`.
  for (const sink of observability.streamSinks) if (sink.transport === 'websocket' && runtime !== 'bun') need('ws', `the ATOF websocket stream to ${displayUrl(sink.url)}`);
  for (const store of observability.storage) if (store.type === 's3') need('aws4', `the ATIF upload to s3://${store.bucket}`);
  return [...needed.values()];
}

/**
 * The packages of `needed` that cannot be resolved from this package's location (where its `import()` looks).
 * None when `resolve` is null: bundled into a host's file, the bundle's folder says nothing about what the
 * bundle holds (see `runsFromOwnPackage`).
 */
export function missingPackages(needed: readonly NeededPackage[], resolve: ((name: string) => unknown) | null = defaultResolve()): NeededPackage[] {
  if (resolve === null) return [];
  return needed.filter((pkg) => {
    try {
      resolve(pkg.name);
      return false;
    } catch {
      return true;
    }
  });
}

/** The command that installs `packages`. */
export function installCommand(packages: readonly NeededPackage[]): string {
  return `npm install ${packages.map((pkg) => `${pkg.name}@${pkg.range}`).join(' ')}`;
}

function defaultResolve(): ((name: string) => unknown) | null {
  // Bundled into a host's file, the bundle's folder says nothing about what it holds (and esbuild's CommonJS output
  // has no import.meta.url): a send that cannot import its exporter says so itself (export/otlp/pipeline.ts).
  if (!runsFromOwnPackage()) return null;
  const require = createRequire(import.meta.url);
  return (name) => require.resolve(name);
}
