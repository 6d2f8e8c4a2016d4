/**
 * Per-session ATIF exporters of the in-memory relay (`registerAtifExporter`).
 *
 * Unlike native's manual `AtifExporter`, which collects every event in the
 * process and so mixes interleaved sessions into one trajectory, each
 * exporter here only sees the subtree of the scope it was registered for
 * (routed by the router both backends share, `session-trajectories.ts`).
 * The scope's own start event was emitted before the exporter existed; it
 * is taken from the scope record, so the trajectory still starts with it.
 *
 * `exportJson()` is built on the relay's trajectory worker (`atif-offload.ts`),
 * off the host's thread, when the relay was created with `atifWorker: true`
 * and the worker is available; `exportJsonNow()` (at process exit) is built
 * in-thread from the same events.
 *
 * @module
 */

import type { AtifExporter, AtifExporterOptions } from '../../relay/contract.ts';
import type { RelayCore } from './listeners.ts';
import { existingAtifOffload } from './atif-offload.ts';

export function createAtifExporter(core: RelayCore, options: AtifExporterOptions): AtifExporter {
  const o = options ?? ({} as AtifExporterOptions);
  const builderOptions = {
    sessionId: String(o.sessionId ?? ''),
    agentName: String(o.agentName ?? ''),
    agentVersion: String(o.agentVersion ?? ''),
    ...(typeof o.modelName === 'string' ? { modelName: o.modelName } : {}),
    style: 'exporter' as const,
  };
  const record = core.ownScope(o.scope, 'registerAtifExporter scope');
  const router = core.sessionTrajectories();
  const session = router.open(record?.uuid, builderOptions, record?.start);
  if (record === null) router.close(session);
  const offload = existingAtifOffload(core);
  // The worker is opt-in: without it the exporter builds in-thread, with no offload bookkeeping per session.
  if (offload === undefined || !offload.enabled) {
    return {
      exportJson: async () => session.toJson(),
      exportJsonNow: () => session.toJson(),
      deregister: () => router.close(session),
    };
  }
  const offloaded = offload.open();
  return {
    exportJson: () => offload.exportJson(offloaded, session),
    exportJsonNow: () => offload.exportJsonNow(offloaded, session),
    deregister: () => {
      router.close(session);
      offload.forget(offloaded);
    },
  };
}
