/**
 * The memory relay's one encoder seam: how an event becomes what its
 * receivers take. Two encoders implement it:
 * - `bytes.ts` writes each event's ATOF line straight from the caller's
 *   payloads (no event object, no sorted copies) and hands internal
 *   listeners the line; it serves every configuration without an in-process
 *   `subscribe()` callback, ATIF trajectories included;
 * - `objects.ts` builds the event object (sorted JSON payloads) for
 *   subscribers, and is the fallback for a line the byte encoder cannot
 *   write (a payload past the engine's limits).
 * The relay picks one when subscribers come or go; each call returns
 * whether it wrote the event, and on `false` the relay hands the same call
 * to the object encoder, which always writes it.
 *
 * @module
 */

import type { JsonObject } from '../../../relay/contract.ts';
import type { ScopeRecord, SpanRecord } from '../records.ts';
import type { EndRule } from './metadata.ts';

export interface Encoder {
  /** A scope's start; sets the record's start metadata and start. */
  scopeStart(record: ScopeRecord, input: unknown, metadata: unknown): boolean;
  /** A scope's end: its output, and end metadata merged over the start's. */
  scopeEnd(record: ScopeRecord, output: unknown, metadata: unknown, endUs: number): boolean;
  mark(
    uuid: string,
    parentUuid: string,
    propagationRootUuid: string,
    name: string,
    data: unknown,
    metadata: unknown,
    timestampUs: number,
    top: ScopeRecord | null,
  ): boolean;
  /**
   * A span's start; sets the record's start metadata. `data` is the tool's
   * arguments, or the LLM request's content when `headers` (the recorded
   * request headers) are given.
   */
  spanStart(record: SpanRecord, data: unknown, headers: JsonObject | undefined, metadata: unknown): boolean;
  /**
   * A span's end. `metadata` is the end's raw metadata (the thrown value
   * for `managed-error`), combined with the start's by `rule`;
   * `annotation` is a tool result annotation, undefined for none.
   */
  spanEnd(record: SpanRecord, data: unknown, rule: EndRule, metadata: unknown, annotation: unknown, endUs: number): boolean;
}
