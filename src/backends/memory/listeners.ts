/**
 * What the memory relay's plug-ins (the per-session ATIF exporter, the
 * plugins.toml host) and its delivery see of the relay: internal listeners,
 * line sinks, scope handles, the ATIF router. Declared apart from the core
 * so that they and the core import this file, not each other.
 *
 * @module
 */

import type { Logger } from '../../shared/logger.ts';
import type { AtofEvent } from '../../formats/atof/types.ts';
import type { AtofFileWriter } from './atof-batcher.ts';
import type { ScopeRecord } from './records.ts';
import type { SessionTrajectories } from '../session-trajectories.ts';

/**
 * A receiver inside the relay (ATIF trajectories, the plugin host). It takes
 * each event in the form the relay encodes it: an event object, or, on the
 * byte path, the ATOF line just written (so trajectories keep the relay on
 * that path). `top` is the event's top-level scope, if any.
 */
export interface InternalListener {
  /**
   * True for a receiver that reads event objects only (its `line` parses the
   * line back): when every receiver is one, the relay builds event objects
   * instead of writing lines nobody keeps.
   */
  readonly readsObjects?: boolean;
  event(event: AtofEvent, top: ScopeRecord | null): void;
  /**
   * The event's ATOF line is `bytes[start, end)` (newline included; valid
   * only during the call: copy what you keep). `phase` is a scope event's
   * start or end, null for a mark.
   */
  line(
    bytes: Uint8Array,
    start: number,
    end: number,
    uuid: string,
    parentUuid: string,
    phase: 'start' | 'end' | null,
    top: ScopeRecord | null,
  ): void;
}

/** What the plugin host and exporters need from the relay core. */
export interface RelayCore {
  readonly logger: Logger;
  addListener(listener: InternalListener): () => void;
  addLineSink(writer: AtofFileWriter): () => void;
  ownScope(handle: unknown, what?: string): ScopeRecord | null;
  /** The relay's per-session ATIF router, listening from its first use on. */
  sessionTrajectories(): SessionTrajectories;
}

const lineDecoder = new TextDecoder();

/**
 * An internal listener for receivers that read event objects only (remote
 * exporters). While lines are written for someone else (an ATOF file, ATIF
 * trajectories) the line just written is parsed back, and the relay stays
 * on its byte path for them; when these are the only receivers, the relay
 * switches to the object encoder and nothing is written or parsed.
 */
export function eventObjectListener(accept: (event: AtofEvent, top: ScopeRecord | null) => void): InternalListener {
  return {
    readsObjects: true,
    event: accept,
    line: (bytes, start, end, _uuid, _parent, _phase, top) => {
      accept(JSON.parse(lineDecoder.decode(bytes.subarray(start, end))) as AtofEvent, top);
    },
  };
}

