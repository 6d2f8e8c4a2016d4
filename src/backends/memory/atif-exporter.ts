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
 * @module
 */

import type { AtifExporter, AtifExporterOptions } from '../../relay/contract.ts';
import type { RelayCore } from './listeners.ts';

export function createAtifExporter(core: RelayCore, options: AtifExporterOptions): AtifExporter {
  const o = options ?? ({} as AtifExporterOptions);
  const builderOptions = {
    sessionId: String(o.sessionId ?? ''),
    agentName: String(o.agentName ?? ''),
    agentVersion: String(o.agentVersion ?? ''),
    ...(typeof o.modelName === 'string' ? { modelName: o.modelName } : {}),
    ...(typeof o.fallbackModelName === 'string' ? { fallbackModelName: o.fallbackModelName } : {}),
    ...(typeof o.priceLlmCall === 'function' ? { priceLlmCall: o.priceLlmCall } : {}),
    style: 'exporter' as const,
  };
  const record = core.ownScope(o.scope, 'registerAtifExporter scope');
  const router = core.sessionTrajectories();
  const session = router.open(record?.uuid, builderOptions, record?.start);
  if (record === null) router.close(session);
  return {
    exportJson: async () => session.toJson(),
    exportJsonNow: () => session.toJson(),
    deregister: () => router.close(session),
  };
}
