/**
 * The memory relay's remote outputs of a `plugins.toml` activation: ATOF
 * stream sinks fed from the relay's event listeners (each event serialized
 * once, exactly as the ATOF file line, for every sink), and the ATIF
 * storage the plugin-managed trajectories go to. The senders themselves
 * are backend-neutral (`src/export/`).
 *
 * @module
 */

import type { ConfigDiagnostic, OutputHealth } from '../../relay/contract.ts';
import type { StreamSinkSettings } from '../../formats/plugins-toml/sinks.ts';
import { createAtofStreamSink, type AtofStreamSink } from '../../export/streams/sink.ts';
import { serializeEvent } from './atof-line.ts';
import type { RelayCore } from './core.ts';

export interface StreamSinks {
  health(): OutputHealth[];
  /** Detaches from the relay, then sends what is queued (each sink within its `timeout_millis`). */
  close(): Promise<void>;
}

/** Starts `settings`' stream sinks and feeds them every event the relay emits from now on. */
export function attachStreamSinks(core: RelayCore, settings: readonly StreamSinkSettings[]): StreamSinks | null {
  if (settings.length === 0) return null;
  const sinks: AtofStreamSink[] = settings.map((entry) => createAtofStreamSink(entry, { logger: core.logger }));
  const detach = core.addListener((event) => {
    const line = serializeEvent(event);
    for (const sink of sinks) sink.accept(line);
  });
  return {
    health: () => sinks.map((sink) => sink.health()),
    close: async () => {
      detach();
      await Promise.all(sinks.map((sink) => sink.close()));
    },
  };
}

/**
 * The activation report's form of a destination-only error: a warning that
 * says the destination is skipped (native would have rejected the whole
 * document for it).
 */
export function skippedDestination(diagnostic: ConfigDiagnostic): ConfigDiagnostic {
  return {
    ...diagnostic,
    level: 'warning',
    message: `${diagnostic.message}; the in-memory relay skips this destination and activates the rest of the document`,
  };
}
