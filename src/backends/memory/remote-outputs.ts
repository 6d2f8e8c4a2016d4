/**
 * The memory relay's remote outputs of a `plugins.toml` activation: ATOF
 * stream sinks fed from the relay's event listeners (each event serialized
 * once, exactly as the ATOF file line, for every sink), and the ATIF
 * storage the plugin-managed trajectories go to. The senders themselves
 * are backend-neutral (`src/export/`).
 *
 * @module
 */

import type { StreamSinkSettings } from '../../formats/plugins-toml/sinks.ts';
import { createAtofStreamSink, type AtofStreamSink } from '../../export/streams/sink.ts';
import { serializeEvent } from './encode/event-text.ts';
import type { RelayCore } from './listeners.ts';
import { RemoteOutputLedger } from '../remote-output-ledger.ts';

const ledgers = new WeakMap<RelayCore, RemoteOutputLedger>();

/** The ledger of `core`'s remote outputs (one per relay). */
export function remoteOutputsOf(core: RelayCore): RemoteOutputLedger {
  let ledger = ledgers.get(core);
  if (ledger === undefined) {
    ledger = new RemoteOutputLedger();
    ledgers.set(core, ledger);
  }
  return ledger;
}

export interface StreamSinks {
  /** Detaches from the relay, then sends what is queued (each sink within its `timeout_millis`). */
  close(): Promise<void>;
}

/** Starts `settings`' stream sinks and feeds them every event the relay emits from now on. */
export function attachStreamSinks(core: RelayCore, settings: readonly StreamSinkSettings[]): StreamSinks | null {
  if (settings.length === 0) return null;
  const sinks: AtofStreamSink[] = settings.map((entry) => createAtofStreamSink(entry, { logger: core.logger }));
  const ledger = remoteOutputsOf(core);
  const finish = sinks.map((sink, i) =>
    ledger.track(
      () => sink.health(),
      () => sink.flush(settings[i]!.timeoutMillis),
      (reason) => sink.abandon(reason),
    ),
  );
  const detach = core.addListener((event) => {
    const line = serializeEvent(event);
    for (const sink of sinks) sink.accept(line);
  });
  return {
    close: async () => {
      detach();
      await Promise.all(sinks.map((sink, i) => sink.close().finally(finish[i])));
    },
  };
}
