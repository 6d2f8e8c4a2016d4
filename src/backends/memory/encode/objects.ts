/**
 * The object encoder: each event built as the ATOF event object native's
 * text parses to, around the relay's one copy of each payload
 * (`copyPayload`: plain JSON, keys sorted). Every receiver that reads
 * events takes the object by reference, and the ATOF sinks serialize it
 * once. It also writes any event the byte encoder gave up on.
 *
 * @module
 */

import type { Json, JsonObject } from '../../../relay/contract.ts';
import type { AtofEvent, AtofMarkEvent, AtofScopeEvent } from '../../../formats/atof/types.ts';
import { markEvent, scopeEvent } from '../../../formats/atof/build.ts';
import type { EncodedPushedScope, EncodedSpan } from './encoder.ts';
import { copyPayload, createTimestampFormatter, llmRequestData, toolEndProfile } from './event-parts.ts';
import { EncodedMetadata, endMetadataJson, type EndRule } from './metadata.ts';

const NO_ATTRIBUTES: string[] = [];

export class ObjectEncoder {
  private readonly format = createTimestampFormatter();
  /** Drop credential headers in each payload's copy (the relay's `dropCredentialHeaders`, set by the core). */
  drop = false;

  /**
   * `outgoing` is the relay's one change to an event before anyone receives
   * it (redaction: `Delivery.outgoing`); it runs on the event built around
   * the payloads' copy, so the kept start and every receiver see its result.
   */
  /** The last LLM request content copied for a span outside any scope (others keep theirs on their session's top scope). */
  private lastRequest: Json | undefined;

  /**
   * `sharesCopies`: whether an LLM request's copy may take the repeated
   * parts of the session's previous one (`shareRepeats`): not while a
   * transform runs, which may rewrite the objects it is given.
   */
  constructor(
    private readonly outgoing: <E extends AtofEvent>(event: E) => E = (event) => event,
    private readonly sharesCopies: () => boolean = () => true,
  ) {}

  /** A scope's start; sets the record's start metadata and keeps the start. */
  scopeStart(record: EncodedPushedScope, input: unknown, metadata: unknown): AtofScopeEvent {
    const converted = copyPayload(metadata, this.drop);
    record.startMetadata = EncodedMetadata.ofJson(converted);
    const start = this.outgoing(scopeEvent('start', record.uuid, record.parentUuid, record.propagationRootUuid, record.name, record.category, record.attributes, null, copyPayload(input, this.drop), converted, this.format(record.startUs)));
    record.keepStart(start);
    return start;
  }

  /** A scope's end: its output, and end metadata merged over the start's. */
  scopeEnd(record: EncodedPushedScope, output: unknown, metadata: unknown, endUs: number): AtofScopeEvent {
    const data = copyPayload(output, this.drop);
    const merged = endMetadataJson('merge', record.startMetadata.json, metadata, this.drop);
    return this.outgoing(scopeEvent('end', record.uuid, record.parentUuid, record.propagationRootUuid, record.name, record.category, record.attributes, null, data, merged, this.format(endUs)));
  }

  mark(uuid: string, parentUuid: string, propagationRootUuid: string, name: string, data: unknown, metadata: unknown, timestampUs: number): AtofMarkEvent {
    return this.outgoing(markEvent(uuid, parentUuid, propagationRootUuid, name, copyPayload(data, this.drop), copyPayload(metadata, this.drop), this.format(timestampUs)));
  }

  /**
   * A span's start; sets the record's start metadata. `data` is the tool's
   * arguments, or the LLM request's content when `headers` (the recorded
   * request headers) are given.
   */
  spanStart(record: EncodedSpan, data: unknown, headers: JsonObject | undefined, metadata: unknown): AtofScopeEvent {
    const content = headers === undefined ? copyPayload(data, this.drop, record.wholeMedia) : this.requestData(record, data, headers);
    const converted = copyPayload(metadata, this.drop);
    record.startMetadata = EncodedMetadata.ofJson(converted);
    return this.outgoing(scopeEvent('start', record.uuid, record.parentUuid, record.propagationRootUuid, record.name, record.kind, NO_ATTRIBUTES, record.profile, content, converted, this.format(record.startUs)));
  }

  /** An LLM start's data, sharing the repeated parts of its session's previous request. */
  private requestData(record: EncodedSpan, data: unknown, headers: JsonObject): JsonObject {
    if (!this.sharesCopies()) return llmRequestData(data, headers, this.drop, record.wholeMedia);
    const top = record.top;
    const request = llmRequestData(data, headers, this.drop, record.wholeMedia, top === null ? this.lastRequest : top.lastRequest);
    if (top === null) this.lastRequest = request.content;
    else top.lastRequest = request.content;
    return request;
  }

  /**
   * A span's end. `metadata` is the end's raw metadata (the thrown value
   * for `managed-error`), combined with the start's by `rule`;
   * `annotation` is a tool result annotation, undefined for none.
   */
  spanEnd(record: EncodedSpan, data: unknown, rule: EndRule, metadata: unknown, annotation: unknown, endUs: number): AtofScopeEvent {
    // Conversion order (and so the order of any getter's side effects) as on the byte path.
    const merged = endMetadataJson(rule, record.startMetadata.json, metadata, this.drop);
    const profile = annotation == null ? record.profile : toolEndProfile(record.profile, copyPayload(annotation, this.drop));
    return this.outgoing(scopeEvent('end', record.uuid, record.parentUuid, record.propagationRootUuid, record.name, record.kind, NO_ATTRIBUTES, profile, copyPayload(data, this.drop, record.wholeMedia), merged, this.format(endUs)));
  }
}
