/**
 * ATOF line text exactly as native writes it, fast.
 *
 * Native's line writer differs from `JSON.stringify` in number text and in
 * the order of integer-like keys (the rules, and the exact writer, live in
 * `formats/native-text.ts`). Both are rare in real payloads, so the relay
 * serializes with `JSON.stringify` and falls back to the exact writer only
 * when a walk of the event's payloads finds a value that could differ
 * (`needsNativeJson`).
 *
 * Lines of events nobody needs as objects are written as bytes instead
 * (`write*` below, with payloads from `payload-bytes.ts`); both forms give
 * the same bytes.
 *
 * @module
 */

import type { Json } from '../../../relay/contract.ts';
import { formatTimestamp } from '../../../shared/clock.ts';
import { canonicalJson, writeStringifiedBytes } from '../../../formats/native-text/write.ts';
import { formatPayloadNumber } from '../../../formats/native-text/numbers.ts';
import { stringifyMayDiffer } from '../../../formats/native-text/keys.ts';
import { encoded, type LineBuilder } from '../../../shared/utf8-builder.ts';

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
 * The ATOF line of an event built by the object encoder, without its newline.
 *
 * Equal to `JSON.stringify(event)` (whose key order the builders fix),
 * except that payloads needing it go through the exact writer. The envelope
 * is assembled from its known-safe parts (uuids, RFC 3339 stamps and fixed
 * words need no escaping), so only the name and the payloads are
 * serialized: for a mark without data that is most of the cost saved.
 */
export function serializeEvent(event: AtofEventLike): string {
  if (event.kind === 'mark') {
    return markLine(event.uuid, event.parent_uuid!, event.propagation_root_uuid!, event.name, payloadJsonText(event.data), payloadJsonText(event.metadata), event.timestamp as string);
  }
  return scopeLine(
    event.scope_category!,
    event.uuid,
    event.parent_uuid!,
    event.propagation_root_uuid!,
    event.name,
    event.category!,
    attributesText(event.attributes!),
    event.category_profile === null ? 'null' : payloadJsonText(event.category_profile),
    payloadJsonText(event.data),
    payloadJsonText(event.metadata),
    event.timestamp as string,
  );
}

/**
 * The line of a scope event (scope, LLM or tool span) from its parts: the
 * payload parts already as native text, the rest as the builders in
 * the object encoder would put it in the event.
 */
function scopeLine(
  phase: 'start' | 'end',
  uuid: string,
  parentUuid: string,
  propagationRootUuid: string,
  name: string,
  category: string,
  attributes: string,
  profile: string,
  data: string,
  metadata: string,
  timestamp: string,
): string {
  return (
    `{"atof_version":"0.1","attributes":${attributes},"category":"${category}","category_profile":${profile},` +
    `"data":${data},"data_schema":null,"kind":"scope","metadata":${metadata},"name":${nameText(name)},` +
    `"parent_uuid":"${parentUuid}","propagation_root_uuid":"${propagationRootUuid}","scope_category":"${phase}",` +
    `"timestamp":"${timestamp}","uuid":"${uuid}"}`
  );
}

/** The line of a mark event from its parts (see `scopeLine`). */
function markLine(
  uuid: string,
  parentUuid: string,
  propagationRootUuid: string,
  name: string,
  data: string,
  metadata: string,
  timestamp: string,
): string {
  return (
    `{"atof_version":"0.1","category":null,"category_profile":null,"data":${data},"data_schema":null,"kind":"mark",` +
    `"metadata":${metadata},"name":${nameText(name)},"parent_uuid":"${parentUuid}",` +
    `"propagation_root_uuid":"${propagationRootUuid}","timestamp":"${timestamp}","uuid":"${uuid}"}`
  );
}

/** A scope's `attributes` (known flags only, so no escaping). */
export function attributesText(attributes: readonly string[]): string {
  return attributes.length === 0 ? '[]' : `["${attributes.join('","')}"]`;
}

/** Characters `JSON.stringify` escapes in a string (lone surrogates included). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * `JSON.stringify(text)`, cheaper for the common string that needs no
 * escape. Names and profile ids are written as given (a lone surrogate as
 * its escape), as the event builders leave them.
 */
function nameText(text: string): string {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`;
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

/** Native's text of a converted payload (`data`, `metadata`, `category_profile`). */
export function payloadJsonText(value: Json): string {
  if (value === null) return 'null';
  if (typeof value !== 'object') return typeof value === 'number' ? formatPayloadNumber(value) : JSON.stringify(value);
  return stringifyMayDiffer(value) ? canonicalJson(value) : JSON.stringify(value);
}

// ---- lines of event objects as bytes ------------------------------------------

/**
 * Writes `serializeEvent(event)` and its newline as bytes: the line of an
 * event object the object encoder built (its payloads are the relay's
 * copies), written into a sink's buffer the way the byte encoder writes
 * lines, instead of as a string that is encoded afterwards.
 */
export function writeEventLine(out: LineBuilder, event: AtofEventLike): void {
  if (event.kind === 'mark') {
    writeMarkHead(out);
    writePayloadJsonText(out, event.data);
    out.raw(MARK_METADATA_KEY);
    writePayloadJsonText(out, event.metadata);
    writeNameAndParents(out, event.name, event.parent_uuid!, event.propagation_root_uuid!);
  } else {
    writeScopeHead(out, attributesText(event.attributes!), event.category!);
    if (event.category_profile === null) out.ascii('null');
    else writePayloadJsonText(out, event.category_profile);
    out.raw(DATA_KEY);
    writePayloadJsonText(out, event.data);
    out.raw(SCOPE_METADATA_KEY);
    writePayloadJsonText(out, event.metadata);
    const uuid = event.uuid;
    const root = event.propagation_root_uuid!;
    if (uuid === root) writeNameAndParentsOnce(out, event.name, event.parent_uuid!, root);
    else writeNameAndParents(out, event.name, event.parent_uuid!, root);
    out.raw(event.scope_category === 'start' ? PHASE_START : PHASE_END);
  }
  out.raw(TIMESTAMP_KEY);
  out.ascii(event.timestamp as string);
  out.raw(UUID_KEY);
  out.ascii(event.uuid);
  out.raw(LINE_END);
}

/**
 * Writes `payloadJsonText(value)` as bytes: `JSON.stringify`'s text written
 * in one pass where it is native's (`writeStringifiedBytes`), else the
 * exact text. Strings are written as `JSON.stringify` writes them (a lone
 * surrogate as its escape).
 */
export function writePayloadJsonText(out: LineBuilder, value: Json): void {
  if (typeof value === 'string') {
    out.jsonStringAsGiven(value);
    return;
  }
  if (typeof value !== 'object' || value === null) {
    out.ascii(payloadJsonText(value));
    return;
  }
  if (!writeStringifiedBytes(out, value)) out.utf8(payloadJsonText(value));
}

// ---- lines as bytes ---------------------------------------------------------
// A line is written in order: head, category_profile (scopes), data, the
// metadata key, metadata, tail. Between the heads and tails the caller
// writes the payload parts.

const SCOPE_HEAD = encoded('{"atof_version":"0.1","attributes":');
const SCOPE_CATEGORY = encoded(',"category":"');
const SCOPE_PROFILE = encoded('","category_profile":');
const MARK_HEAD = encoded('{"atof_version":"0.1","category":null,"category_profile":null,"data":');
/** Between `category_profile` and `data` of a scope line. */
export const DATA_KEY = encoded(',"data":');
/** Between `data` and `metadata` of a scope line. */
export const SCOPE_METADATA_KEY = encoded(',"data_schema":null,"kind":"scope","metadata":');
/** Between `data` and `metadata` of a mark line. */
export const MARK_METADATA_KEY = encoded(',"data_schema":null,"kind":"mark","metadata":');
const NAME_KEY = encoded(',"name":');
const PARENT_KEY = encoded(',"parent_uuid":"');
const ROOT_KEY = encoded('","propagation_root_uuid":"');
const PHASE_START = encoded('","scope_category":"start');
const PHASE_END = encoded('","scope_category":"end');
const TIMESTAMP_KEY = encoded('","timestamp":"');
const UUID_KEY = encoded('","uuid":"');
const LINE_END = encoded('"}\n');

/** Writes a scope line up to its `category_profile` value. */
export function writeScopeHead(out: LineBuilder, attributes: string, category: string): void {
  out.raw(SCOPE_HEAD);
  out.ascii(attributes);
  out.raw(SCOPE_CATEGORY);
  out.ascii(category);
  out.raw(SCOPE_PROFILE);
}

/** Writes a scope line from after its metadata to its newline; `timestampUs` in Unix microseconds. */
export function writeScopeTail(
  out: LineBuilder,
  name: string,
  parentUuid: string,
  propagationRootUuid: string,
  phase: 'start' | 'end',
  timestampUs: number,
  uuid: string,
): void {
  // A scope that is its own propagation root (a session) never repeats its triple.
  if (uuid === propagationRootUuid) writeNameAndParentsOnce(out, name, parentUuid, propagationRootUuid);
  else writeNameAndParents(out, name, parentUuid, propagationRootUuid);
  out.raw(phase === 'start' ? PHASE_START : PHASE_END);
  out.raw(TIMESTAMP_KEY);
  writeTimestamp(out, timestampUs);
  out.raw(UUID_KEY);
  out.ascii(uuid);
  out.raw(LINE_END);
}

/** Writes a mark line up to its `data` value. */
export function writeMarkHead(out: LineBuilder): void {
  out.raw(MARK_HEAD);
}

/** Writes a mark line from after its metadata to its newline; `timestampUs` in Unix microseconds. */
export function writeMarkTail(out: LineBuilder, name: string, parentUuid: string, propagationRootUuid: string, timestampUs: number, uuid: string): void {
  writeNameAndParents(out, name, parentUuid, propagationRootUuid);
  out.raw(TIMESTAMP_KEY);
  writeTimestamp(out, timestampUs);
  out.raw(UUID_KEY);
  out.ascii(uuid);
  out.raw(LINE_END);
}

/**
 * `,"name":…,"parent_uuid":"…","propagation_root_uuid":"…` of a line. Events
 * of one name under one parent (a session's marks of a kind, its calls of
 * one tool or provider) repeat these ~150 bytes, so a triple seen a third
 * time is kept encoded and copied from then on. Not on the second: a
 * scope's own start and end are a pair that never repeats (its uuid is its
 * root), and keeping bytes costs an allocation.
 *
 * Triples are found by their parent: a parent's events use a handful of
 * names, while one name (a provider, a common tool) is used under every
 * session in flight. Looked up by name, a host with more sessions in flight
 * than a name's slots evicted each triple before its third use and wrote
 * every one out in full (bench/RESULTS.md, "the name and parents of a line,
 * by parent").
 */
function writeNameAndParents(out: LineBuilder, name: string, parentUuid: string, propagationRootUuid: string): void {
  const known = segments.get(parentUuid);
  let segment: Segment | undefined;
  if (known !== undefined) {
    for (let i = 0; i < known.length; i++) {
      const candidate = known[i]!;
      if (candidate.name === name && candidate.rootUuid === propagationRootUuid) {
        segment = candidate;
        break;
      }
    }
    if (segment !== undefined && segment.bytes !== null) {
      out.raw(segment.bytes);
      return;
    }
  }
  const from = out.length;
  writeNameAndParentsOnce(out, name, parentUuid, propagationRootUuid);
  if (segment !== undefined) {
    if (++segment.seen === 3) segment.bytes = out.bytes.slice(from, out.length);
    return;
  }
  if (segmentCount >= MAX_SEGMENTS) {
    segments.clear();
    segmentCount = 0;
  }
  const fresh: Segment = { name, rootUuid: propagationRootUuid, seen: 1, bytes: null };
  const list = segmentCount === 0 ? undefined : known;
  if (list === undefined) segments.set(parentUuid, [fresh]);
  else if (list.length < SEGMENTS_PER_PARENT) list.push(fresh);
  else list[(list.length + segmentCount) % SEGMENTS_PER_PARENT] = fresh;
  segmentCount++;
}

function writeNameAndParentsOnce(out: LineBuilder, name: string, parentUuid: string, propagationRootUuid: string): void {
  out.raw(NAME_KEY);
  out.jsonStringAsGiven(name);
  out.raw(PARENT_KEY);
  out.ascii(parentUuid);
  out.raw(ROOT_KEY);
  out.ascii(propagationRootUuid);
}

interface Segment {
  readonly name: string;
  readonly rootUuid: string;
  /** Times the triple was written. */
  seen: number;
  /** The encoded segment, once seen three times. */
  bytes: Uint8Array | null;
}

/** Triples remembered in all (cleared when full) and per parent (one replaced when full). */
const MAX_SEGMENTS = 1024;
const SEGMENTS_PER_PARENT = 8;
/** Triples by parent uuid. */
const segments = new Map<string, Segment[]>();
let segmentCount = 0;

const OFFSET = encoded('+00:00');
/** The last second written and its text up to the seconds (events come in bursts within a second). */
let baseSecond = Number.NaN;
let baseBytes: Uint8Array = OFFSET;

/**
 * Writes `formatTimestamp(micros)` (native's RFC 3339: no fraction for a
 * whole second, 3 digits for whole milliseconds, else 6) as bytes.
 */
function writeTimestamp(out: LineBuilder, micros: number): void {
  const second = Math.floor(micros / 1_000_000);
  if (second !== baseSecond) {
    const whole = formatTimestamp(second * 1_000_000); // "...T14:59:29+00:00"
    baseBytes = encoded(whole.slice(0, whole.length - 6));
    baseSecond = second;
  }
  out.raw(baseBytes);
  const fraction = micros - second * 1_000_000;
  if (fraction !== 0) {
    out.byte(0x2e); // .
    if (fraction % 1000 === 0) out.digits(fraction / 1000, 3);
    else out.digits(fraction, 6);
  }
  out.raw(OFFSET);
}
