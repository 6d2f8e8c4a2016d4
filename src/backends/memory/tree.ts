/**
 * Where a scope sits in its tree, and the ids native derives from the tree:
 * the parent and propagation root of a new scope, and the session headers
 * and `traceparent` a managed LLM request carries.
 *
 * - A scope pushed without a parent is top-level and gets its own implicit
 *   root uuid, as if pushed on a fresh native scope stack; marks and spans
 *   without a parent hang off one process-level implicit root. Implicit
 *   roots never appear as events.
 * - `propagation_root_uuid` is the tree's outermost Agent scope (below a
 *   non-agent top-level scope, the first Agent), else the implicit root.
 *
 * @module
 */

import type { JsonObject, LlmRequest, PropagationContext } from '../../relay/contract.ts';
import type { AtofCategory } from '../../formats/atof/types.ts';
import { uuidv7 } from '../../shared/uuid.ts';
import type { ScopeRecord } from './records.ts';

/** A new scope's place: its parent's uuid, its propagation root, and whether that root is an Agent. */
export interface ScopePlace {
  uuid: string;
  parentUuid: string;
  root: string;
  agentRooted: boolean;
}

/**
 * Mints a new scope's uuid (after its implicit root, for a top-level scope) and places it.
 * A top-level scope continuing a received context hangs off the caller's span
 * and keeps the caller's root for its whole tree, as on native's stack seeded
 * by `createScopeStackFromPropagation` (whose implicit root is that span); a
 * rootless context roots an Agent at itself.
 */
export function placeScope(parent: ScopeRecord | null, category: AtofCategory, received?: PropagationContext): ScopePlace {
  if (parent === null && received !== undefined) {
    const uuid = uuidv7();
    // native: a rootless context under a non-agent scope writes no propagation_root_uuid at all; the nearest we write is the caller's span.
    const root = received.rootUuid ?? (category === 'agent' ? uuid : received.parentUuid);
    return { uuid, parentUuid: received.parentUuid, root, agentRooted: received.rootUuid !== undefined || category === 'agent' };
  }
  if (parent === null) {
    // The implicit root is minted first, so it sorts before the scope (as native's stack root does).
    const implicitRoot = uuidv7();
    const uuid = uuidv7();
    const agentRooted = category === 'agent';
    return { uuid, parentUuid: implicitRoot, root: agentRooted ? uuid : implicitRoot, agentRooted };
  }
  const uuid = uuidv7();
  // The propagation root is the outermost Agent scope; below a non-agent
  // top-level scope the first Agent claims it (as native does).
  if (parent.agentRooted) return { uuid, parentUuid: parent.uuid, root: parent.propagationRootUuid, agentRooted: true };
  if (category === 'agent') return { uuid, parentUuid: parent.uuid, root: uuid, agentRooted: true };
  return { uuid, parentUuid: parent.uuid, root: parent.propagationRootUuid, agentRooted: false };
}

/**
 * The session headers native adds to a managed LLM request: the nearest
 * Agent scope's `metadata.subagent_id`, else its `metadata.session_id` (else
 * its name) as `x-dynamo-session-id`,
 * and the next Agent above it as `x-dynamo-parent-session-id`.
 */
export function sessionHeaders(parent: ScopeRecord | null): JsonObject | undefined {
  let agent = parent;
  while (agent !== null && agent.category !== 'agent') agent = agent.parent;
  if (agent === null) return undefined;
  let above = agent.parent;
  while (above !== null && above.category !== 'agent') above = above.parent;
  return above === null
    ? { 'x-dynamo-session-id': sessionKey(agent) }
    : { 'x-dynamo-parent-session-id': sessionKey(above), 'x-dynamo-session-id': sessionKey(agent) };
}

function sessionKey(scope: ScopeRecord): string {
  const metadata = scope.startMetadata.json;
  if (typeof metadata === 'object' && metadata !== null && !Array.isArray(metadata)) {
    // A subagent's scope is known by its subagent id first, as native keys it.
    const subagent = metadata.subagent_id;
    if (typeof subagent === 'string') return subagent;
    const id = metadata.session_id;
    if (typeof id === 'string') return id;
  }
  return scope.name;
}

/**
 * The request a managed LLM call receives: the caller's headers (credentials
 * included: they are only dropped from the record) with a W3C `traceparent`
 * (trace id = the top-level scope's uuid, span id = the low 64 bits of the
 * LLM span's uuid, as native) and the session headers; the content is the
 * caller's own object.
 */
export function forwardedRequest(request: LlmRequest, session: JsonObject | undefined, parent: ScopeRecord | null, spanUuid: string): LlmRequest {
  const headers: Record<string, string> = {};
  const source = request.headers;
  if (typeof source === 'object' && source !== null) {
    for (const key of Object.keys(source)) {
      if (key.toLowerCase() !== 'traceparent') headers[key] = (source as Record<string, string>)[key]!;
    }
  }
  const spanHex = spanUuid.replaceAll('-', '');
  // The trace is the tree's top scope, or for a tree continuing another process's context, that context's root.
  const traceHex = parent === null ? spanHex : (parent.top.remoteParent ? parent.top.propagationRootUuid : parent.top.uuid).replaceAll('-', '');
  headers.traceparent = `00-${traceHex}-${spanHex.slice(16)}-01`;
  if (session !== undefined) for (const key in session) headers[key] = session[key] as string;
  return { headers, content: request.content };
}
