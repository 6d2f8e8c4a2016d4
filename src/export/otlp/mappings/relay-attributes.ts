/**
 * The `nemo_relay.*` attributes native puts on `full` spans (and, in part,
 * on `openinference` spans): the raw relay event, flattened.
 *
 * @module
 */

import type { AtofMarkEvent, AtofScopeEvent } from '../../../formats/atof/types.ts';
import type { Attributes } from '../model.ts';
import { put, spread, spreadTwice, stringOf, objectOf } from '../attributes.ts';
import { SpanKind } from '../model.ts';
import type { FinishedScope, SpanShape } from './types.ts';
import { responseModel } from '../../../formats/atif/payload/surface.ts';

export function identity(out: Attributes, start: AtofScopeEvent): void {
  out['nemo_relay.uuid'] = start.uuid;
  if (start.parent_uuid !== null) out['nemo_relay.parent_uuid'] = start.parent_uuid;
  out['nemo_relay.scope_type'] = start.category;
}

export function handleAttributes(out: Attributes, start: AtofScopeEvent): void {
  out['nemo_relay.handle_attributes'] = JSON.stringify(start.attributes ?? []);
}

/** `nemo_relay.start.data|input.*` (the start payload is both). */
export function startData(out: Attributes, start: AtofScopeEvent): void {
  spreadTwice(out, 'nemo_relay.start.data', 'nemo_relay.start.input', start.data);
}

/** `nemo_relay.end.data|output.*`. */
export function endData(out: Attributes, end: AtofScopeEvent): void {
  spreadTwice(out, 'nemo_relay.end.data', 'nemo_relay.end.output', end.data);
}

/** Root only: the logical session id and the relay instance (the root's uuid). */
export function session(out: Attributes, scope: FinishedScope): void {
  if (!scope.isRoot) return;
  put(out, 'session.id', objectOf(scope.start.metadata)?.session_id);
  out['nemo_relay.session.instance_id'] = scope.start.uuid;
}

/** The model the span's request named (its profile's `model_name`). */
export function modelName(scope: FinishedScope): string | undefined {
  return stringOf(scope.start.category_profile?.model_name ?? undefined) ?? stringOf(scope.end.category_profile?.model_name ?? undefined);
}

/**
 * The model that answered, as native names an LLM span's model on `full`
 * and `openinference` spans: the response's `model` when it has one, else
 * the requested model.
 */
export function answeringModelName(scope: FinishedScope): string | undefined {
  return responseModel(scope.end.data ?? undefined) ?? modelName(scope);
}

export function toolCallId(scope: FinishedScope): string | undefined {
  return stringOf(scope.start.category_profile?.tool_call_id ?? undefined) ?? stringOf(scope.end.category_profile?.tool_call_id ?? undefined);
}

/** `error.type` of an end marked failed. */
export function errorType(end: AtofScopeEvent): string | undefined {
  const metadata = objectOf(end.metadata);
  if (metadata === null || metadata['otel.status_code'] !== 'ERROR') return undefined;
  return stringOf(metadata['error.type']);
}

/** A mark as native's span event attributes. */
export function markAttributes(mark: AtofMarkEvent, withMetadata = true): Attributes {
  const out: Attributes = { 'nemo_relay.mark.uuid': mark.uuid };
  if (mark.parent_uuid !== null) out['nemo_relay.mark.parent_uuid'] = mark.parent_uuid;
  spread(out, 'nemo_relay.mark.data', mark.data);
  if (withMetadata) spread(out, 'nemo_relay.mark.metadata', mark.metadata);
  return out;
}

/** The zero-length INTERNAL `mark:<name>` span of `mark_projection = "tool"`. */
export function markSpan(mark: AtofMarkEvent): SpanShape {
  const attributes = markAttributes(mark);
  attributes['nemo_relay.mark.projection'] = 'tool';
  attributes['nemo_relay.scope_type'] = 'tool';
  return { name: `mark:${mark.name}`, kind: SpanKind.INTERNAL, attributes };
}
