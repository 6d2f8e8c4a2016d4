/**
 * The converter's input model: one ATOF event as the converter reads it, uuid
 * normalisation, and the predicates every later stage asks of an event.
 *
 * @module
 */

import type { Json, JsonObject } from '../../../shared/json.ts';
import type { AtofEvent } from '../../atof/types.ts';
import { type Instant, parseInstant, rfc3339Of } from '../../instant.ts';
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

function normalizeUuid(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  // Relays write lowercase uuids: nothing to lowercase means nothing to check.
  const lower = value.toLowerCase();
  return lower === value || !UUID_RE.test(value) ? value : lower;
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

/**
 * Reads raw ATOF events into converter events. Events whose timestamp
 * cannot be parsed take their predecessor's instant so they keep their
 * arrival position (native never sees such events).
 *
 * With `into`, the events after the `into.length` already read are
 * appended to it: each event's reading depends only on it and its
 * predecessors, so a list read in steps equals one read at once. `end`:
 * read only the events before it.
 */
export function toConvEvents(events: readonly AtofEvent[], into: ConvEvent[] = [], end = events.length): ConvEvent[] {
  const out = into;
  let previous: Instant = out.length > 0 ? (out[out.length - 1] as ConvEvent).instant : { seconds: 0, nanos: 0 };
  for (let i = out.length; i < end; i++) {
    const event = events[i] as AtofEvent;
    const parsed = parseInstant(event.timestamp);
    const instant = parsed ?? previous;
    previous = instant;
    const scopeCategory = (event as { scope_category?: unknown }).scope_category;
    const profile = asObject(event.category_profile as Json | undefined);
    out.push({
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
      timestamp: parsed !== undefined ? rfc3339Of(event.timestamp, parsed) : String(event.timestamp),
    });
  }
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
