/**
 * Runs a recorded hook stream through `HookRegistry` and the NeMo Relay
 * plugin over a given backend, exactly as a host would, with ATOF and ATIF
 * enabled into a temp folder, then reads back (and validates) every file.
 */

import fs from 'node:fs';
import path from 'node:path';
import { HookRegistry } from '../../src/hooks/registry.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import type { HookName } from '../../src/hooks/names.ts';
import { createNemoRelayPlugin, type PluginStatus } from '../../src/index.ts';
import type { RelayBackend } from '../../src/relay/contract.ts';
import type { AtifTrajectory } from '../../src/formats/atif/types.ts';
import { readAtifDir, readValidAtof, type ReadEvent } from '../contract/files.ts';
import { recordingLogger, tempDir } from '../contract/backends.ts';
import type { HookLine } from '../fixtures/streams/script.ts';

export type SubagentExportMode = 'embedded' | 'all';

export interface ReplayOptions {
  /** `HERMES_NEMO_RELAY_ATIF_SUBAGENT_EXPORT_MODE`; unset (the default) when absent. */
  subagentExportMode?: SubagentExportMode;
  /**
   * Configure the files through a `plugins.toml` observability component
   * (the backend's plugin host writes them) instead of the env exporters.
   */
  pluginsToml?: boolean;
  /** Extra `HERMES_NEMO_RELAY_*` variables. */
  env?: Record<string, string>;
}

export interface ReplayResult {
  dir: string;
  atofPath: string;
  /** The ATOF events, validated. */
  events: ReadEvent[];
  /** The ATOF lines as written. */
  atofLines: string[];
  /** Every ATIF file by name, validated. */
  trajectories: Map<string, AtifTrajectory>;
  /** Every ATIF file's text by name. */
  trajectoryTexts: Map<string, string>;
  /** `status()` after shutdown. */
  status: PluginStatus;
  /** What the plugin logged at warn or error level. */
  problems: string[];
}

/** Reads a committed `.hooks.jsonl` stream. */
export function readStream(file: string): HookLine[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as HookLine);
}

/** The settings both backends run with: ATOF and ATIF enabled, into `dir`. */
export function exporterEnv(dir: string, options: ReplayOptions = {}): Record<string, string> {
  return {
    HERMES_NEMO_RELAY_ATOF_ENABLED: '1',
    HERMES_NEMO_RELAY_ATOF_OUTPUT_DIRECTORY: path.join(dir, 'atof'),
    HERMES_NEMO_RELAY_ATOF_MODE: 'overwrite',
    HERMES_NEMO_RELAY_ATIF_ENABLED: '1',
    HERMES_NEMO_RELAY_ATIF_OUTPUT_DIRECTORY: path.join(dir, 'atif'),
    ...(options.subagentExportMode === undefined ? {} : { HERMES_NEMO_RELAY_ATIF_SUBAGENT_EXPORT_MODE: options.subagentExportMode }),
    ...options.env,
  };
}

/** A `plugins.toml` whose observability component writes the same two kinds of file into `dir`, then `components` (more `[[components]]` tables). */
export function writePluginsToml(dir: string, components = ''): string {
  const file = path.join(dir, 'plugins.toml');
  fs.writeFileSync(
    file,
    [
      'version = 1',
      '',
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
      'filename = "hermes-atof.jsonl"',
      'mode = "overwrite"',
      '',
      '[components.config.atif]',
      'enabled = true',
      `output_directory = ${JSON.stringify(path.join(dir, 'atif'))}`,
      'filename_template = "trajectory-{session_id}.json"',
      '',
      ...(components === '' ? [] : [components]),
    ].join('\n'),
  );
  return file;
}

/** What a replay into `dir` wrote (its ATOF file, checked line by line, and its trajectories), with the plugin's status and warnings. */
export function runOutputs(dir: string, status: ReplayResult['status'], log: readonly { level: string; message: string }[]): ReplayResult {
  const atofPath = path.join(dir, 'atof', 'hermes-atof.jsonl');
  if (!fs.existsSync(atofPath)) throw new Error(`no ATOF file was written; the plugin logged: ${JSON.stringify(log)}`);
  const { events, lines: atofLines } = readValidAtof(atofPath);
  const atifDir = path.join(dir, 'atif');
  const trajectories = readAtifDir(atifDir);
  const trajectoryTexts = new Map([...trajectories.keys()].map((name) => [name, fs.readFileSync(path.join(atifDir, name), 'utf8')]));
  const problems = log.filter((line) => line.level === 'warn' || line.level === 'error').map((line) => line.message);
  return { dir, atofPath, events, atofLines, trajectories, trajectoryTexts, status, problems };
}

/** Emits `lines` through a registry the plugin is registered on, then shuts the plugin down. */
export async function replay(backend: RelayBackend, lines: readonly HookLine[], options: ReplayOptions = {}): Promise<ReplayResult> {
  const dir = tempDir(`replay-${backend.kind}`);
  const logger = recordingLogger();
  const env = options.pluginsToml ? { HERMES_NEMO_RELAY_PLUGINS_TOML: writePluginsToml(dir), ...options.env } : exporterEnv(dir, options);
  const plugin = createNemoRelayPlugin({ backend, env, logger });
  const hooks = new HookRegistry({ logger: silentLogger });
  const unregister = plugin.register(hooks);
  // A fresh copy per run: the registry stamps payloads in place, and each backend must see the stream as recorded.
  for (const line of lines) hooks.emit(line.hook as HookName, structuredClone(line.payload) as never);
  // Longer than a host's default 5 s: a loaded machine can take longer to write everything, and a run cut short compares half the output.
  await plugin.shutdown({ timeoutMs: 60_000 });
  unregister();

  return runOutputs(dir, plugin.status(), logger.lines);
}
