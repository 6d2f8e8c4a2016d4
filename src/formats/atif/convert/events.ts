/**
 * The converter's input model: one ATOF event as the converter reads it, uuid
 * normalisation, and the predicates every later stage asks of an event.
 *
 * @module
 */

import type { Json, JsonObject } from '../../../shared/json.ts';
import type { AtofEvent } from '../../atof/types.ts';
import { type Instant, readStamp } from '../../instant.ts';
import { asObject } from '../payload/index.ts';

/** One event as the converter reads it. */
export interface ConvEvent {
  kind: string;
  phase: 'start' | 'end' | undefined;
  category: string | undefined;
  uuid: string;
  parent: string | undefined;
  name: string;
  /** `undefined` when the event's data is null or absent (native's `Option`). */
  data: Json | undefined;
  metadata: Json | undefined;
  profile: JsonObject | undefined;
  instant: Instant;
  /** The timestamp as native re-formats it. */
  timestamp: string;
}

const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** An ASCII capital: the only letters a uuid can lowercase. */
const UPPERCASE_RE = /[A-Z]/;

function normalizeUuid(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  // Relays write lowercase uuids: nothing to lowercase means nothing to check. Looked for first, because
  // V8's toLowerCase allocates its result before it finds that nothing changed (a uuid's copy per event);
  // the regex is as fast as toLowerCase, where a loop over the characters in JS was slower than both.
  return UPPERCASE_RE.test(value) && UUID_RE.test(value) ? value.toLowerCase() : value;
}

/** A uuid in any form `Uuid::parse_str` accepts, as the canonical lowercase hyphenated string. */
export function parseUuid(value: string): string | undefined {
  let text = value.trim() === value ? value : '';
  if (/^urn:uuid:/i.test(text)) text = text.slice(9);
  if (text.startsWith('{') && text.endsWith('}')) text = text.slice(1, -1);
  if (/^[0-9a-fA-F]{32}$/.test(text)) {
    text = `${text.slice(0, 8)}-${text.slice(8, 12)}-${text.slice(12, 16)}-${text.slice(16, 20)}-${text.slice(20)}`;
  }
  return UUID_RE.test(text) ? text.toLowerCase() : undefined;
}

/** `readStamp`'s answer, reused from event to event. */
const STAMP: { instant: Instant | undefined; text: string } = { instant: undefined, text: '' };

/** Where reading a builder's events stands: the next event to read, and the instant the last one read had. */
export interface ReadPosition {
  next: number;
  previous: Instant;
}

/** A position before the first event. */
export function startOfEvents(): ReadPosition {
  return { next: 0, previous: { seconds: 0, nanos: 0 } };
}

/**
 * Reads raw ATOF events into converter events, from `position.next` up to
 * `end`, appending them to `into` and moving `position` on. Events whose
 * timestamp cannot be parsed take their predecessor's instant so they keep
 * their arrival position (native never sees such events).
 *
 * Marks are not read: no stage of the conversion makes anything of one
 * (they are not steps, open no scope and name no tool call), so each pass
 * would only skip them. A malformed mark that claims a scope phase or the
 * `llm` category is read as before (the lookups would see it). Their instant still carries on to the next event,
 * so an event with an unparsable timestamp after a mark sorts as before;
 * and the sort is stable, so leaving marks out changes no other event's
 * order. Each event's reading depends only on it and its predecessors, so
 * a list read in steps equals one read at once.
 */
export function readEvents(events: readonly AtofEvent[], into: ConvEvent[], position: ReadPosition, end = events.length): void {
  let previous = position.previous;
  const stamp = STAMP;
  for (let i = position.next; i < end; i++) {
    const event = events[i] as AtofEvent;
    readStamp(event.timestamp, stamp);
    const parsed = stamp.instant;
    const instant = parsed ?? previous;
    previous = instant;
    const scopeCategory = (event as { scope_category?: unknown }).scope_category;
    if (event.kind === 'mark' && scopeCategory !== 'start' && scopeCategory !== 'end' && event.category !== 'llm') continue;
    const profile = asObject(event.category_profile as Json | undefined);
    into.push({
      kind: event.kind,
      phase: scopeCategory === 'start' || scopeCategory === 'end' ? scopeCategory : undefined,
      category: typeof event.category === 'string' ? event.category : undefined,
      uuid: normalizeUuid(event.uuid) ?? '',
      parent: normalizeUuid(event.parent_uuid),
      name: typeof event.name === 'string' ? event.name : '',
      data: event.data === null ? undefined : (event.data as Json | undefined),
      metadata: event.metadata === null ? undefined : (event.metadata as Json | undefined),
      profile,
      instant,
      timestamp: stamp.text,
    });
  }
  position.next = Math.max(position.next, end);
  position.previous = previous;
}

/** Every event of `events` read at once (`readEvents`). */
export function toConvEvents(events: readonly AtofEvent[]): ConvEvent[] {
  const out: ConvEvent[] = [];
  readEvents(events, out, startOfEvents());
  return out;
}

export function toolCallIdOf(event: ConvEvent): string | undefined {
  const id = event.profile?.tool_call_id;
  return typeof id === 'string' ? id : undefined;
}

export function modelNameOf(event: ConvEvent): string | undefined {
  const name = event.profile?.model_name;
  return typeof name === 'string' ? name : undefined;
}

export function annotationOf(event: ConvEvent): Json | undefined {
  const annotation = event.profile?.tool_result_annotation;
  return annotation === undefined || annotation === null ? undefined : annotation;
}

export const isStart = (event: ConvEvent): boolean => event.phase === 'start';
export const isAgentScope = (event: ConvEvent): boolean => event.category === 'agent';
export const isLlm = (event: ConvEvent): boolean => event.category === 'llm';

export function metadataString(event: ConvEvent, key: string): string | undefined {
  const value = asObject(event.metadata)?.[key];
  return typeof value === 'string' ? value : undefined;
}

/** An end the relay marked failed (`error.type` in its metadata: an API error, or a span the session left open). */
export function isFailedEnd(event: ConvEvent): boolean {
  return event.phase === 'end' && metadataString(event, 'error.type') !== undefined;
}

export function isStepEvent(event: ConvEvent): boolean {
  return (
    event.kind === 'scope' &&
    ((event.phase === 'start' && event.category === 'llm') ||
      (event.phase === 'end' && (event.category === 'llm' || event.category === 'tool')))
  );
}
