/**
 * The object encoder: each event built as the ATOF event object native's
 * text parses to (keys sorted, payloads converted by `toSortedJson`), then
 * delivered (serialized once for the sinks). It serves `subscribe()`
 * callbacks, and writes any event the byte encoder gave up on.
 *
 * @module
 */

import type { JsonObject } from '../../../relay/contract.ts';
import { markEvent, scopeEvent } from '../../../formats/atof/build.ts';
import type { Delivery } from '../delivery.ts';
import type { ScopeRecord, SpanRecord } from '../records.ts';
import type { Encoder } from './encoder.ts';
import { createTimestampFormatter, llmRequestData, toolEndProfile, toSortedJson } from './event-parts.ts';
import { EncodedMetadata, endMetadataJson, type EndRule } from './metadata.ts';

const NO_ATTRIBUTES: string[] = [];

export class ObjectEncoder implements Encoder {
  private readonly format = createTimestampFormatter();

  constructor(private readonly delivery: Delivery) {}

  scopeStart(record: ScopeRecord, input: unknown, metadata: unknown): boolean {
    const converted = toSortedJson(metadata);
    record.startMetadata = EncodedMetadata.ofJson(converted);
    const start = this.delivery.outgoing(scopeEvent('start', record.uuid, record.parentUuid, record.propagationRootUuid, record.name, record.category, record.attributes, null, toSortedJson(input), converted, this.format(record.startUs)));
    record.keepStart(start);
    this.delivery.emit(start, record.top);
    return true;
  }

  scopeEnd(record: ScopeRecord, output: unknown, metadata: unknown, endUs: number): boolean {
    const data = toSortedJson(output);
    const merged = endMetadataJson('merge', record.startMetadata.json, metadata);
    const event = scopeEvent('end', record.uuid, record.parentUuid, record.propagationRootUuid, record.name, record.category, record.attributes, null, data, merged, this.format(endUs));
    this.delivery.emit(this.delivery.outgoing(event), record.top);
    return true;
  }

  mark(uuid: string, parentUuid: string, propagationRootUuid: string, name: string, data: unknown, metadata: unknown, timestampUs: number, top: ScopeRecord | null): boolean {
    this.delivery.emit(this.delivery.outgoing(markEvent(uuid, parentUuid, propagationRootUuid, name, toSortedJson(data), toSortedJson(metadata), this.format(timestampUs))), top);
    return true;
  }

  spanStart(record: SpanRecord, data: unknown, headers: JsonObject | undefined, metadata: unknown): boolean {
    const content = headers === undefined ? toSortedJson(data) : llmRequestData(data, headers);
    const converted = toSortedJson(metadata);
    record.startMetadata = EncodedMetadata.ofJson(converted);
    const event = scopeEvent('start', record.uuid, record.parentUuid, record.propagationRootUuid, record.name, record.kind, NO_ATTRIBUTES, record.profile, content, converted, this.format(record.startUs));
    this.delivery.emit(this.delivery.outgoing(event), record.top);
    return true;
  }

  spanEnd(record: SpanRecord, data: unknown, rule: EndRule, metadata: unknown, annotation: unknown, endUs: number): boolean {
    // Conversion order (and so the order of any getter's side effects) as before the encoders were split.
    const merged = endMetadataJson(rule, record.startMetadata.json, metadata);
    const profile = annotation == null ? record.profile : toolEndProfile(record.profile, toSortedJson(annotation));
    const event = scopeEvent('end', record.uuid, record.parentUuid, record.propagationRootUuid, record.name, record.kind, NO_ATTRIBUTES, profile, toSortedJson(data), merged, this.format(endUs));
    this.delivery.emit(this.delivery.outgoing(event), record.top);
    return true;
  }
}
