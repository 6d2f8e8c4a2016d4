/**
 * Runs a host script through the NeMo Relay plugin on one backend with a
 * `plugins.toml` that writes ATOF, plugin-managed ATIF and OTLP (to real
 * loopback receivers) plus the component tables under test (pii_redaction,
 * pricing, adaptive, nemo_guardrails), and returns every output: what two
 * backends wrote for the same script and document can then be compared.
 *
 * The script drives a `HookRegistry` as a host does: it emits hooks and may
 * run managed calls with `hooks.execute(...)`, whose terminals stand for the
 * host's real call and are recorded (so a test sees what the host's call
 * received and whether it ran at all).
 */

import fs from 'node:fs';
import path from 'node:path';
import { HookRegistry } from '../../src/hooks/registry.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { createNemoRelayPlugin, type NemoRelayPluginOptions, type PluginStatus } from '../../src/index.ts';
import type { RelayBackend } from '../../src/relay/contract.ts';
import type { AtifTrajectory } from '../../src/formats/atif/types.ts';
import type { AtofEvent } from '../../src/formats/atof/types.ts';
import { recordingLogger, tempDir } from '../contract/backends.ts';
import { startHttpReceiver, type DecodedSpan, type Receiver } from './otlp-receiver.ts';
import { startReceiver, type Receiver as RemoteReceiver } from './receivers.ts';

export type OtlpType = 'full' | 'gen_ai' | 'openinference';

/** What a script may do: emit hooks, and run managed calls whose terminal is recorded. */
export interface ScriptContext {
  hooks: HookRegistry;
  /** Records that the host's real call ran, with what it received, and returns `result`. */
  terminal<T>(kind: 'llm' | 'tool', result: T): (payload: unknown) => T;
}

export type Script = (context: ScriptContext) => void | Promise<void>;

export interface ComponentRunOptions {
  /** TOML text of the `[[components]]` tables under test (appended after observability). */
  components: string;
  script: Script;
  /** OTLP endpoint types to send to; each gets its own receiver. Default none. */
  otlp?: readonly OtlpType[];
  /** Also write the plugin's own per-session ATIF files (the HERMES_NEMO_RELAY_ATIF_* settings) to `dir/settings-atif`. */
  settingsAtif?: boolean;
  /** Skip the plugins.toml observability component (the env exporters write ATOF and ATIF instead). */
  noObservability?: boolean;
  /** Extra plugin options (the `redact` hook, ...). */
  plugin?: Partial<NemoRelayPluginOptions>;
  /** Also stream ATOF events and upload ATIF trajectories to a loopback HTTP receiver (see `remoteBodies`). */
  remote?: boolean;
}

export interface ComponentRunResult {
  dir: string;
  /** The ATOF events as written (files parsed line by line), from the plugins.toml sink or the env sink. */
  events: AtofEvent[];
  atofText: string;
  /** Plugin-managed ATIF trajectories by file name. */
  trajectories: Map<string, AtifTrajectory>;
  /** The plugin's own per-session trajectories (with `settingsAtif`). */
  settingsTrajectories: Map<string, AtifTrajectory>;
  /** Every byte written under the run's folder, by relative path. */
  files: Map<string, string>;
  /** Spans received, per endpoint type. */
  spans: Partial<Record<OtlpType, DecodedSpan[]>>;
  /** Raw OTLP request bodies' byte length per endpoint type (the spans are decoded). */
  status: PluginStatus;
  /** Calls that reached the host's real call: kind and what it received. */
  terminalCalls: { kind: 'llm' | 'tool'; input: unknown }[];
  /** What the plugin logged at warn or error level. */
  problems: string[];
  /** Bodies the loopback stream and upload receiver got (with `remote`). */
  remoteBodies: string[];
  /** Everything the plugin logged. */
  log: { level: string; message: string }[];
}

function observabilityToml(dir: string, endpoints: { type: OtlpType; url: string }[], remote: string | null): string[] {
  const lines = [
    '[[components]]',
    'kind = "observability"',
    'enabled = true',
    '',
    '[components.config]',
    'version = 4',
    '',
    '[components.config.atof]',
    'enabled = true',
    '',
    '[[components.config.atof.sinks]]',
    'type = "file"',
    `output_directory = ${JSON.stringify(path.join(dir, 'atof'))}`,
    'filename = "events.jsonl"',
    'mode = "overwrite"',
    '',
    ...(remote === null ? [] : ['[[components.config.atof.sinks]]', 'type = "stream"', `url = ${JSON.stringify(`${remote}/events`)}`, 'transport = "http_post"', '']),
    '[components.config.atif]',
    'enabled = true',
    `output_directory = ${JSON.stringify(path.join(dir, 'atif'))}`,
    'filename_template = "trajectory-{session_id}.json"',
    '',
    ...(remote === null ? [] : ['[[components.config.atif.storage]]', 'type = "http"', `endpoint = ${JSON.stringify(`${remote}/trajectories`)}`, '']),
  ];
  if (endpoints.length > 0) lines.push('[components.config.opentelemetry]', 'enabled = true', '');
  for (const endpoint of endpoints) {
    lines.push(
      '[[components.config.opentelemetry.endpoints]]',
      `type = "${endpoint.type}"`,
      `endpoint = ${JSON.stringify(endpoint.url)}`,
      'transport = "http_binary"',
      'service_name = "component-test"',
      'scheduled_delay_millis = 50',
      '',
    );
  }
  return lines;
}

/** Runs `options.script` through the plugin on `backend` and collects every output. */
export async function runComponents(backend: RelayBackend, options: ComponentRunOptions): Promise<ComponentRunResult> {
  const dir = tempDir(`components-${backend.kind}`);
  const receivers = new Map<OtlpType, Receiver>();
  for (const type of options.otlp ?? []) receivers.set(type, await startHttpReceiver());
  const remote: RemoteReceiver | null = options.remote ? await startReceiver() : null;
  try {
    const endpoints = [...receivers].map(([type, receiver]) => ({ type, url: receiver.url }));
    const toml = ['version = 1', '', ...(options.noObservability ? [] : observabilityToml(dir, endpoints, remote?.origin ?? null)), options.components].join('\n');
    const tomlPath = path.join(dir, 'plugins.toml');
    fs.writeFileSync(tomlPath, toml);
    const env: Record<string, string> = { HERMES_NEMO_RELAY_PLUGINS_TOML: tomlPath };
    if (options.settingsAtif || options.noObservability) {
      env.HERMES_NEMO_RELAY_ATIF_ENABLED = '1';
      env.HERMES_NEMO_RELAY_ATIF_OUTPUT_DIRECTORY = path.join(dir, 'settings-atif');
      // The env ATOF file too: it must stay unwritten whenever the document writes ATOF itself or is withheld.
      env.HERMES_NEMO_RELAY_ATOF_ENABLED = '1';
      env.HERMES_NEMO_RELAY_ATOF_OUTPUT_DIRECTORY = path.join(dir, 'settings-atof');
    }
    if (options.noObservability) {
      env.HERMES_NEMO_RELAY_ATOF_ENABLED = '1';
      env.HERMES_NEMO_RELAY_ATOF_OUTPUT_DIRECTORY = path.join(dir, 'atof');
      env.HERMES_NEMO_RELAY_ATOF_FILENAME = 'events.jsonl';
    }
    const logger = recordingLogger();
    const plugin = createNemoRelayPlugin({ backend, env, logger, trajectoryWriteDelayMs: 0, ...options.plugin });
    const hooks = new HookRegistry({ logger: silentLogger });
    const unregister = plugin.register(hooks);
    await plugin.ready;
    const terminalCalls: ComponentRunResult['terminalCalls'] = [];
    await options.script({
      hooks,
      terminal: (kind, result) => (payload) => {
        terminalCalls.push({ kind, input: structuredClone(payload) });
        return result;
      },
    });
    // The default 5 s bound is for hosts; a loaded test machine can take longer to drain the OTLP exporters,
    // and a run cut short would compare half the spans.
    await plugin.shutdown({ timeoutMs: 60_000 });
    unregister();
    const status = plugin.status();
    await backend.shutdown?.();
    // Everything sent has arrived once the plugin shut down (its flush waits for the exporters).
    const spans: ComponentRunResult['spans'] = {};
    for (const [type, receiver] of receivers) spans[type] = receiver.spans();
    const atofFile = path.join(dir, 'atof', 'events.jsonl');
    const atofText = fs.existsSync(atofFile) ? fs.readFileSync(atofFile, 'utf8') : '';
    const events = atofText
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as AtofEvent);
    return {
      dir,
      events,
      atofText,
      trajectories: readJsonDir(path.join(dir, 'atif')),
      settingsTrajectories: readJsonDir(path.join(dir, 'settings-atif')),
      files: readTree(dir),
      spans,
      status,
      terminalCalls,
      problems: logger.lines.filter((l) => l.level === 'warn' || l.level === 'error').map((l) => l.message),
      log: logger.lines,
      remoteBodies: remote === null ? [] : remote.requests.map((r) => r.body),
    };
  } finally {
    for (const receiver of receivers.values()) await receiver.close();
    await remote?.close();
  }
}

function readJsonDir(dir: string): Map<string, AtifTrajectory> {
  const out = new Map<string, AtifTrajectory>();
  if (!fs.existsSync(dir)) return out;
  for (const name of fs.readdirSync(dir).sort()) {
    if (name.endsWith('.json')) out.set(name, JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as AtifTrajectory);
  }
  return out;
}

/** Every file under `dir` (the plugins.toml excluded), by relative path. */
function readTree(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (folder: string) => {
    for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name !== 'plugins.toml') out.set(path.relative(dir, full), fs.readFileSync(full, 'latin1'));
    }
  };
  walk(dir);
  return out;
}
