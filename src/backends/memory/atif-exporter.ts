/**
 * Per-session ATIF exporters of the in-memory relay (`registerAtifExporter`).
 *
 * Unlike native's manual `AtifExporter`, which collects every event in the
 * process and so mixes interleaved sessions into one trajectory, each
 * exporter here only sees the subtree of the scope it was registered for.
 * The scope's own start event was emitted before the exporter existed; it
 * is taken from the scope record, so the trajectory still starts with it.
 *
 * @module
 */

import type { AtifExporter, AtifExporterOptions } from '../../relay/contract.ts';
import { AtifBuilder } from '../../formats/atif/builder.ts';
import { createSubtreeFilter } from '../../formats/atif/subtree.ts';
import type { RelayCore } from './core.ts';

export function createAtifExporter(core: RelayCore, options: AtifExporterOptions): AtifExporter {
  const o = options ?? ({} as AtifExporterOptions);
  const builder = new AtifBuilder({
    sessionId: String(o.sessionId ?? ''),
    agentName: String(o.agentName ?? ''),
    agentVersion: String(o.agentVersion ?? ''),
    ...(typeof o.modelName === 'string' ? { modelName: o.modelName } : {}),
    style: 'exporter',
  });
  const record = core.ownScope(o.scope, 'registerAtifExporter scope');
  let remove: (() => void) | null = null;
  if (record !== null) {
    builder.add(record.start);
    const inSubtree = createSubtreeFilter(record.uuid);
    const top = record.top;
    // `top` is a cheap pre-filter: events of other trees never reach the set lookups.
    remove = core.addListener((event, eventTop) => {
      if (eventTop === top && inSubtree(event)) builder.add(event);
    });
  }
  return {
    exportJson: async () => builder.toJson(),
    exportJsonNow: () => builder.toJson(),
    deregister: () => {
      if (remove !== null) {
        remove();
        remove = null;
      }
    },
  };
}
