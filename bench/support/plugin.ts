/**
 * A `HookRegistry` with the NeMo Relay plugin on a fresh memory backend, as
 * the throughput and memory cases use it.
 *
 * @module
 */

import { HookRegistry } from '../../src/hooks/registry.ts';
import type { HookName } from '../../src/hooks/names.ts';
import { createNemoRelayPlugin, type NemoRelayPlugin, type NemoRelayPluginOptions, type NemoRelaySettingsOverrides } from '../../src/index.ts';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import { countingLogger } from './setups.ts';
import type { Payload } from './payloads.ts';

export interface BenchPlugin {
  hooks: HookRegistry;
  plugin: NemoRelayPlugin;
  emit(name: HookName, payload: Payload): void;
  readonly warnings: number;
}

export function memoryPlugin(
  label: string,
  settings: NemoRelaySettingsOverrides,
  options: Pick<NemoRelayPluginOptions, 'maxSessions' | 'sessionIdleTtlMs'> = {},
): BenchPlugin {
  // ATIF without an output directory registers no trajectory builder (the plugin warns); cases that want
  // builders give a folder, and keep their sessions open where no file may be written.
  const logger = countingLogger(label, /atif_without_output_directory/);
  const hooks = new HookRegistry({ logger });
  const plugin = createNemoRelayPlugin({ ...options, backend: createMemoryRelay({ logger }), env: {}, logger, settings });
  plugin.register(hooks);
  return {
    hooks,
    plugin,
    emit: (name, payload) => hooks.emit(name, payload as never),
    get warnings() {
      return logger.warnings;
    },
  };
}

/** ATOF to `/dev/null` (append; it cannot be truncated): the whole write path runs, nothing fills the disk. */
export const DEV_NULL_ATOF: NemoRelaySettingsOverrides = {
  atofEnabled: true,
  atofOutputDirectory: '/dev',
  atofFilename: 'null',
  atofMode: 'append',
};

/** Yields to the event loop, so background work (ATIF export chains) can run, as between a host's provider calls. */
export function tick(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
