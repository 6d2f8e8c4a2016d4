/**
 * The events of one scope subtree: how a per-root trajectory picks its
 * events out of a stream that interleaves several roots.
 *
 * @module
 */

import type { AtofEvent } from '../atof/types.ts';

/**
 * A filter accepting only events in the scope subtree rooted at `rootUuid`:
 * the root's own events and any event whose parent chain reaches it.
 * Events must arrive in emission order (a scope's start before its children).
 */
export function createSubtreeFilter(rootUuid: string): (event: AtofEvent) => boolean {
  const members = new Set<string>([rootUuid]);
  return (event) => {
    if (event.uuid === rootUuid) return true;
    const parent = event.parent_uuid;
    if (parent === null || parent === undefined || !members.has(parent)) return false;
    if (event.kind === 'scope') members.add(event.uuid);
    return true;
  };
}
