/**
 * What the memory relay's plug-ins (the per-session ATIF exporter, the
 * plugins.toml host) and its delivery see of the relay: internal listeners,
 * line sinks, scope handles, the ATIF router. Declared apart from the core
 * so that they and the core import this file, not each other.
 *
 * @module
 */

import type { Logger } from '../../shared/logger.ts';
import type { ResponseCache } from '../../components/cache/response-cache.ts';
import type { AtofEvent } from '../../formats/atof/types.ts';
import type { AtofFileWriter } from './atof-batcher.ts';
import type { ScopeRecord } from './records.ts';
import type { SessionTrajectories } from '../session-trajectories.ts';

/**
 * A receiver inside the relay (the ATIF trajectories, the plugins.toml
 * host's ATIF files, OTLP export and ATOF streams): every event object, in
 * emission order. The object is shared with every other receiver, so it
 * is read, never changed. `top` is the event's top-level scope, if any.
 */
export type InternalListener = (event: AtofEvent, top: ScopeRecord | null) => void;

/** What the plugin host and exporters need from the relay core. */
export interface RelayCore {
  readonly logger: Logger;
  /** `readsMarks` false: the listener is given scope events only (marks can then skip the event object). */
  addListener(listener: InternalListener, readsMarks?: boolean | 'turn'): () => void;
  addLineSink(writer: AtofFileWriter): () => void;
  ownScope(handle: unknown, what?: string): ScopeRecord | null;
  /** The relay's per-session ATIF router, listening from its first use on. */
  sessionTrajectories(): SessionTrajectories;
  /** Installs a transform every event passes through before any receiver (components' first); returns its removal. */
  addEventTransform(transform: (event: AtofEvent) => AtofEvent, stage: 'component' | 'host'): () => void;
  /** The `adaptive` response and tool cache of the active plugins.toml, or null. */
  responseCache: ResponseCache | null;
  /** Counts a redaction that failed on a part (cleared instead); logs it unless `quiet`. */
  reportRedactionFailure(what: string, error: unknown, quiet: boolean): void;
}
