/**
 * What the memory relay's plug-ins (the per-session ATIF exporter, the
 * plugins.toml activation) see of the relay: its logger, its event listeners
 * and line sinks, and a way to read a scope handle. Declared apart from the
 * relay so that the plug-ins and the relay import it, not each other.
 *
 * @module
 */

import type { Logger } from '../../shared/logger.ts';
import type { AtofEvent } from '../../formats/atof/types.ts';
import type { AtofFileWriter } from './atof-writer.ts';
import type { ScopeRecord } from './records.ts';

/** A receiver inside the relay (ATIF builders, the plugin host). `top` is the event's top-level scope, if any. */
export type InternalListener = (event: AtofEvent, top: ScopeRecord | null) => void;

/** What the plugin host and exporters need from the relay core. */
export interface RelayCore {
  readonly logger: Logger;
  addListener(listener: InternalListener): () => void;
  addLineSink(writer: AtofFileWriter): () => void;
  ownScope(handle: unknown, what?: string): ScopeRecord | null;
}
