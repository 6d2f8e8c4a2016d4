/**
 * ATOF line text exactly as native writes it, fast.
 *
 * Native's line writer differs from `JSON.stringify` in number text and in
 * the order of integer-like keys (the rules, and the exact writer, live in
 * `../formats/rust-json.ts`). Both are rare in real payloads, so the relay
 * serializes with `JSON.stringify` and falls back to the exact writer only
 * when a walk of the event's payloads finds a value that could differ
 * (`needsNativeJson`).
 *
 * @module
 */

import type { Json } from '../contract.ts';
import { canonicalJson, formatPayloadNumber, stringifyMayDiffer } from '../formats/rust-json.ts';

/**
 * True when `JSON.stringify` of this event may differ from native's text:
 * a payload (`data`, `metadata`, `category_profile`) holds a number that
 * the two write differently, or an object with an integer-like key. The
 * envelope itself is always safe (strings, nulls and flag arrays). The
 * walk visits payload values only and stops at the first hit; an event
 * without payloads costs nothing.
 */
export function needsNativeJson(event: { data: Json; metadata: Json; category_profile: Json }): boolean {
  return stringifyMayDiffer(event.data) || stringifyMayDiffer(event.metadata) || stringifyMayDiffer(event.category_profile);
}

/**
 * The ATOF line of an event built by `events.ts`, without its newline.
 *
 * Equal to `JSON.stringify(event)` (whose key order the builders fix),
 * except that payloads needing it go through the exact writer. The envelope
 * is assembled from its known-safe parts (uuids, RFC 3339 stamps and fixed
 * words need no escaping), so only the name and the payloads are
 * serialized: for a mark without data that is most of the cost saved.
 */
export function serializeEvent(event: AtofEventLike): string {
  const head = `{"atof_version":"0.1",`;
  const tail =
    `"data":${part(event.data)},"data_schema":null,"kind":"${event.kind}","metadata":${part(event.metadata)},` +
    `"name":${JSON.stringify(event.name)},"parent_uuid":"${event.parent_uuid}","propagation_root_uuid":"${event.propagation_root_uuid}",`;
  const end = `"timestamp":"${event.timestamp}","uuid":"${event.uuid}"}`;
  if (event.kind === 'mark') return `${head}"category":null,"category_profile":null,${tail}${end}`;
  const attributes = event.attributes!.length === 0 ? '[]' : JSON.stringify(event.attributes);
  const profile = event.category_profile === null ? 'null' : part(event.category_profile);
  return `${head}"attributes":${attributes},"category":"${event.category}","category_profile":${profile},${tail}"scope_category":"${event.scope_category}",${end}`;
}

/** The fields `serializeEvent` reads (an `AtofEvent` as the memory relay builds it). */
export interface AtofEventLike {
  kind: 'scope' | 'mark';
  attributes?: string[];
  category: string | null;
  category_profile: { [key: string]: Json } | null;
  data: Json;
  metadata: Json;
  name: string;
  parent_uuid: string | null;
  propagation_root_uuid?: string;
  scope_category?: 'start' | 'end';
  timestamp: string | number;
  uuid: string;
}

function part(value: Json): string {
  if (value === null) return 'null';
  if (typeof value !== 'object') return typeof value === 'number' ? formatPayloadNumber(value) : JSON.stringify(value);
  return stringifyMayDiffer(value) ? canonicalJson(value) : JSON.stringify(value);
}

