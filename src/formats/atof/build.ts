/**
 * ATOF event objects built field by field, the way native writes them:
 * every key in sorted order (serde_json sorts a record's own keys too), so
 * `JSON.stringify` of the object gives native's bytes without a sort. Both
 * backends build events here: the memory relay for every event on its
 * object path (and a scope's start when an ATIF exporter asks for it), the
 * native adapter for the session start it replays into a trajectory.
 *
 * The payloads (`data`, `metadata`, profiles) are taken as given: convert
 * them first (plain JSON, keys sorted).
 *
 * @module
 */

import type { Json } from '../../shared/json.ts';
import { ATOF_VERSION, type AtofCategory, type AtofCategoryProfile, type AtofMarkEvent, type AtofScopeEvent } from './types.ts';

/** A scope's (or LLM or tool span's) start or end event. */
export function scopeEvent(
  phase: 'start' | 'end',
  uuid: string,
  parentUuid: string | null,
  propagationRootUuid: string,
  name: string,
  category: AtofCategory,
  attributes: string[],
  categoryProfile: AtofCategoryProfile | null,
  data: Json,
  metadata: Json,
  timestamp: string,
): AtofScopeEvent {
  // Key order is the serialized order: keep it alphabetical.
  return {
    atof_version: ATOF_VERSION,
    attributes,
    category,
    category_profile: categoryProfile,
    data,
    data_schema: null,
    kind: 'scope',
    metadata,
    name,
    parent_uuid: parentUuid,
    propagation_root_uuid: propagationRootUuid,
    scope_category: phase,
    timestamp,
    uuid,
  };
}

/** A mark event (`category` and `category_profile` null). */
export function markEvent(
  uuid: string,
  parentUuid: string | null,
  propagationRootUuid: string,
  name: string,
  data: Json,
  metadata: Json,
  timestamp: string,
): AtofMarkEvent {
  return {
    atof_version: ATOF_VERSION,
    category: null,
    category_profile: null,
    data,
    data_schema: null,
    kind: 'mark',
    metadata,
    name,
    parent_uuid: parentUuid,
    propagation_root_uuid: propagationRootUuid,
    timestamp,
    uuid,
  };
}
