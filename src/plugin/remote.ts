/**
 * Work that crosses processes (an MCP tool call, say), read from the hooks:
 *
 * - a session started from another process: `on_session_start`'s
 *   `propagation_context` (the caller's context, native's JSON text) opens
 *   its scope continuing the caller's trace, and its `caller` names the
 *   caller's session, tool call and trajectory in the scope's metadata,
 *   which the ATIF builder writes as the trajectory's `extra.caller`;
 * - a tool call whose work ran elsewhere: `subagent_stop`'s
 *   `child_trajectory` is kept for the open tool call and written on its end
 *   event as `subagent_trajectory_ref`, which the ATIF builder puts on the
 *   tool call's observation.
 *
 * @module
 */

import type { JsonObject, PropagationContext } from '../relay/contract.ts';
import type { AtifSubagentTrajectoryRef } from '../formats/atif/types.ts';
import { propagationContextFromJson } from '../formats/propagation.ts';
import { errorMessage } from '../shared/error-text.ts';
import { callerRefOf, trajectoryRefOf } from '../shared/trajectory-ref.ts';
import type { LoosePayload } from './payload.ts';

/** The context a session-opening payload continues: undefined without one, or `{ error }` for one that cannot be read. */
export function receivedContext(payload: LoosePayload): { context: PropagationContext } | { error: string } | undefined {
  const text = payload.propagation_context;
  if (text === undefined || text === null || text === '') return undefined;
  if (typeof text !== 'string') return { error: `propagation_context must be the context's JSON text, got ${typeof text}` };
  try {
    return { context: propagationContextFromJson(text) };
  } catch (error) {
    return { error: errorMessage(error) };
  }
}

/** The caller of a session started from another process, its string fields only; undefined for none. */
export function callerOf(payload: LoosePayload): JsonObject | undefined {
  return callerRefOf(payload.caller) as JsonObject | undefined;
}

/**
 * What the session scope's metadata says of its caller: `caller` itself
 * (the ATIF builder writes it as the trajectory's `extra.caller`) and the
 * lineage fields the ATIF and OTLP readers join on.
 */
export function callerMetadata(caller: JsonObject): Record<string, unknown> {
  const metadata: Record<string, unknown> = { caller };
  if (caller.session_id !== undefined) metadata.parent_session_id = caller.session_id;
  if (caller.tool_call_id !== undefined) metadata.parent_tool_call_id = caller.tool_call_id;
  const trajectory = caller.trajectory_id ?? caller.session_id;
  if (trajectory !== undefined) metadata.parent_trajectory_id = trajectory;
  return metadata;
}

/**
 * A `subagent_stop` payload's `child_trajectory`, as an ATIF trajectory
 * reference (a `trajectory_id` or a `trajectory_path` is required, as ATIF
 * v1.7 requires); undefined when it has neither.
 */
export function remoteTrajectoryRef(payload: LoosePayload): AtifSubagentTrajectoryRef | undefined {
  return trajectoryRefOf(payload.child_trajectory);
}
