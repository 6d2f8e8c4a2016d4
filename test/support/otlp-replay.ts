/**
 * Runs a recorded hook stream through the NeMo Relay plugin with a
 * `plugins.toml` that writes ATOF and ATIF files (unless `localFiles` is
 * false) and sends OTLP to the given endpoint lines, then shuts everything down, so the test can read what the
 * receiver got and what landed on disk.
 */

import fs from 'node:fs';
import path from 'node:path';
import { HookRegistry } from '../../src/hooks/registry.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import type { HookName } from '../../src/hooks/names.ts';
import { createNemoRelayPlugin, type PluginStatus } from '../../src/index.ts';
import type { RelayBackend } from '../../src/relay/contract.ts';
import { recordingLogger, tempDir } from '../contract/backends.ts';
import type { HookLine } from '../fixtures/streams/script.ts';

export interface OtlpEndpointToml {
  type: 'full' | 'gen_ai' | 'openinference';
  endpoint: string;
  transport?: 'http_binary' | 'grpc';
  /** Extra `key = value` lines for the endpoint table (a `resource_attributes` or `scheduled_delay_millis` line replaces the default one). */
  extra?: string[];
}

export interface OtlpReplayOptions {
  endpoints: OtlpEndpointToml[];
  /** Lines of an `[components.config.opentelemetry.logs]` table (v4), e.g. `['enabled = true']`. */
  logs?: string[];
  env?: Record<string, string>;
  /** `shutdown({ timeoutMs })`. */
  timeoutMs?: number;
  /**
   * Waits for `plugin.ready` (backend live, plugins.toml activated) before the first hook: for a test of what a short
   * shutdown budget leaves the exporters, on a machine so loaded that the activation alone could spend the budget.
   */
  awaitReady?: boolean;
  /** Shut the backend down too (releases native's process-wide activation). Default true. */
  shutdownBackend?: boolean;
  /** Write the ATOF and ATIF files too. Default true; false leaves OTLP as the only output. */
  localFiles?: boolean;
}

export interface OtlpReplayResult {
  dir: string;
  atofLines: string[];
  atifFiles: string[];
  status: PluginStatus;
  problems: string[];
}

export function otlpPluginsToml(dir: string, options: OtlpReplayOptions): string {
  const lines = [
    'version = 1',
    '',
    '[[components]]',
    'kind = "observability"',
    'enabled = true',
    '',
    '[components.config]',
    'version = 4',
    '',
  ];
  if (options.localFiles !== false) lines.push(
    '[components.config.atof]',
    'enabled = true',
    '',
    '[[components.config.atof.sinks]]',
    'type = "file"',
    `output_directory = ${JSON.stringify(path.join(dir, 'atof'))}`,
    'filename = "events.jsonl"',
    'mode = "append"',
    '',
    '[components.config.atif]',
    'enabled = true',
    `output_directory = ${JSON.stringify(path.join(dir, 'atif'))}`,
    'filename_template = "trajectory-{session_id}.json"',
    '',
  );
  lines.push(
    '[components.config.opentelemetry]',
    'enabled = true',
    '',
  );
  for (const endpoint of options.endpoints) {
    lines.push(
      '[[components.config.opentelemetry.endpoints]]',
      `type = "${endpoint.type}"`,
      `endpoint = ${JSON.stringify(endpoint.endpoint)}`,
      `transport = "${endpoint.transport ?? 'http_binary'}"`,
      'service_name = "otlp-test"',
      'service_namespace = "tests"',
      'service_version = "1.2.3"',
      'instrumentation_scope = "nemo-relay-hooks.test"',
      ...((endpoint.extra ?? []).some((line) => line.startsWith('scheduled_delay_millis')) ? [] : ['scheduled_delay_millis = 100']),
      ...((endpoint.extra ?? []).some((line) => line.startsWith('resource_attributes')) ? [] : ['resource_attributes = { "deployment.environment" = "test" }']),
      ...(endpoint.extra ?? []),
      '',
    );
  }
  if (options.logs) lines.push('[components.config.opentelemetry.logs]', ...options.logs, '');
  const file = path.join(dir, 'plugins.toml');
  fs.writeFileSync(file, lines.join('\n'));
  return file;
}

/** Emits `lines` through a registry the plugin is registered on, then shuts the plugin (and backend) down. */
export async function replayWithOtlp(backend: RelayBackend, lines: readonly HookLine[], options: OtlpReplayOptions): Promise<OtlpReplayResult> {
  const dir = tempDir(`otlp-${backend.kind}`);
  const logger = recordingLogger();
  const toml = otlpPluginsToml(dir, options);
  const plugin = createNemoRelayPlugin({ backend, env: { HERMES_NEMO_RELAY_PLUGINS_TOML: toml, ...options.env }, logger });
  const hooks = new HookRegistry({ logger: silentLogger });
  const unregister = plugin.register(hooks);
  if (options.awaitReady === true) await plugin.ready;
  for (const line of lines) hooks.emit(line.hook as HookName, structuredClone(line.payload) as never);
  // Unless a test bounds it, longer than a host's default 5 s: a loaded machine can take longer to drain the exporters.
  await plugin.shutdown({ timeoutMs: options.timeoutMs ?? 60_000 });
  unregister();
  const status = plugin.status();
  if (options.shutdownBackend !== false) await backend.shutdown?.();
  const atofFile = path.join(dir, 'atof', 'events.jsonl');
  const atifDir = path.join(dir, 'atif');
  return {
    dir,
    atofLines: fs.existsSync(atofFile) ? fs.readFileSync(atofFile, 'utf8').split('\n').filter((l) => l.trim() !== '') : [],
    atifFiles: fs.existsSync(atifDir) ? fs.readdirSync(atifDir).sort() : [],
    status,
    problems: logger.lines.filter((l) => l.level === 'warn' || l.level === 'error').map((l) => l.message),
  };
}
