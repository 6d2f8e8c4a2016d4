/**
 * Tool results as ATIF observation results: `content` when the output is text
 * or content parts, `extra.tool_result` otherwise, merged per `source_call_id`.
 *
 * @module
 */

import type { Json, JsonObject } from '../../../shared/json.ts';
import { asObject, isAtifContentParts } from '../payload/index.ts';
import type { AtifObservation, AtifObservationResult } from '../types.ts';
import { type ConvEvent, annotationOf } from './events.ts';
import { eventExtra, sortedObject } from './step-builders.ts';

export interface DeferredObservation {
  result: AtifObservationResult;
  timestamp: string | undefined;
}

export function observationContent(value: Json): Json | undefined {
  if (typeof value === 'string') return value;
  return Array.isArray(value) && isAtifContentParts(value) ? value : undefined;
}

function toolResultExtra(value: Json): Json | undefined {
  if (value === null || typeof value === 'string') return undefined;
  if (Array.isArray(value) && isAtifContentParts(value)) return undefined;
  return value;
}

export function observationExtra(event: ConvEvent): JsonObject {
  const extra = eventExtra(event);
  const toolResult = event.data === undefined ? undefined : toolResultExtra(event.data);
  if (toolResult !== undefined) extra.tool_result = toolResult;
  const annotation = annotationOf(event);
  if (annotation !== undefined) extra.tool_result_annotation = annotation;
  return sortedObject(extra);
}

export function mergeObservationResult(observation: AtifObservation, result: AtifObservationResult): void {
  const id = result.source_call_id;
  if (id !== undefined) {
    const existing = resultFor(observation.results, id);
    if (existing !== undefined) {
      if (existing.content === undefined && result.content !== undefined) insertContent(existing, result.content);
      if (result.subagent_trajectory_ref !== undefined) {
        const refs = existing.subagent_trajectory_ref;
        if (refs === undefined) insertRefs(existing, [...result.subagent_trajectory_ref]);
        else refs.push(...result.subagent_trajectory_ref);
      }
      if (result.extra !== undefined) {
        if (existing.extra === undefined) existing.extra = result.extra;
        else {
          const target = asObject(existing.extra);
          const incoming = asObject(result.extra);
          if (target !== undefined && incoming !== undefined) {
            const merged: JsonObject = { ...target };
            for (const key of Object.keys(incoming)) {
              if (!Object.prototype.hasOwnProperty.call(merged, key)) merged[key] = incoming[key] as Json;
            }
            existing.extra = sortedObject(merged);
          }
        }
      }
      return;
    }
  }
  observation.results.push(result);
}

/** The result for the call `id` (a loop: a closure per merge was an allocation per tool result). */
function resultFor(results: readonly AtifObservationResult[], id: string): AtifObservationResult | undefined {
  for (let i = 0; i < results.length; i++) if ((results[i] as AtifObservationResult).source_call_id === id) return results[i];
  return undefined;
}

/** Rebuilds a result so `content` sits in its struct position. */
function insertContent(result: AtifObservationResult, content: Json): void {
  const { source_call_id, subagent_trajectory_ref, extra } = result;
  for (const key of Object.keys(result)) delete (result as Record<string, unknown>)[key];
  if (source_call_id !== undefined) result.source_call_id = source_call_id;
  result.content = content;
  if (subagent_trajectory_ref !== undefined) result.subagent_trajectory_ref = subagent_trajectory_ref;
  if (extra !== undefined) result.extra = extra;
}

export function insertRefs(result: AtifObservationResult, refs: NonNullable<AtifObservationResult['subagent_trajectory_ref']>): void {
  const { source_call_id, content, extra } = result;
  for (const key of Object.keys(result)) delete (result as Record<string, unknown>)[key];
  if (source_call_id !== undefined) result.source_call_id = source_call_id;
  if (content !== undefined) result.content = content;
  result.subagent_trajectory_ref = refs;
  if (extra !== undefined) result.extra = extra;
}
