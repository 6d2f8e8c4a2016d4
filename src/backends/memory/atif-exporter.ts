/**
 * Per-session ATIF exporters of the in-memory relay (`registerAtifExporter`).
 *
 * Unlike native's manual `AtifExporter`, which collects every event in the
 * process and so mixes interleaved sessions into one trajectory, each
 * exporter here only sees the subtree of the scope it was registered for
 * (routed by the router both backends share, `session-trajectories.ts`).
 * The scope's own start event was emitted before the exporter existed; it
 * is taken from the scope record, so the trajectory still starts with it.
 * `exportJson` builds in slices between the host's own work
 * (`shared/slices.ts`), as the plugins.toml trajectories are.
 *
 * @module
 */

import type { AtifExporter, AtifExporterOptions } from '../../relay/contract.ts';
import type { RelayCore } from './listeners.ts';
import { SliceRunner } from '../../shared/slices.ts';

/** The trajectories `exportJson` is building, one slice per turn of the event loop, one after another (made at the first). */
let builds: SliceRunner | undefined;

export function createAtifExporter(core: RelayCore, options: AtifExporterOptions): AtifExporter {
  const o = options ?? ({} as AtifExporterOptions);
  const builderOptions = {
    sessionId: String(o.sessionId ?? ''),
    ...(typeof o.trajectoryId === 'string' ? { trajectoryId: o.trajectoryId } : {}),
    agentName: String(o.agentName ?? ''),
    agentVersion: String(o.agentVersion ?? ''),
    ...(typeof o.modelName === 'string' ? { modelName: o.modelName } : {}),
    ...(typeof o.fallbackModelName === 'string' ? { fallbackModelName: o.fallbackModelName } : {}),
    ...(o.subagentAgents === 'own' ? { subagentAgents: 'own' as const } : {}),
    ...(o.turnEnds === true ? { turnEnds: true } : {}),
    ...(typeof o.priceLlmCall === 'function' ? { priceLlmCall: o.priceLlmCall } : {}),
    style: 'exporter' as const,
  };
  const record = core.ownScope(o.scope, 'registerAtifExporter scope');
  const router = core.sessionTrajectories();
  const session = router.open(record?.uuid, builderOptions, record?.start);
  if (record === null) router.close(session);
  return {
    // Built a slice per turn of the event loop: a long session's write does not stop the host (`exportJsonNow` is the synchronous one).
    exportJson: () => new Promise<string>((resolve, reject) => (builds ??= new SliceRunner()).run(session.toJsonInSlices(), resolve, reject)),
    // At process exit (the session will not close): calls still open are said as never ended.
    exportJsonNow: () => {
      session.cutOpenCalls();
      return session.toJson();
    },
    exportBytes: () => new Promise<Uint8Array>((resolve, reject) => (builds ??= new SliceRunner()).run(session.toBytesInSlices(), resolve, reject)),
    exportBytesNow: () => {
      session.cutOpenCalls();
      return session.toBytes();
    },
    deregister: () => router.close(session),
  };
}
