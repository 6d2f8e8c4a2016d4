/**
 * Reading a reference to a trajectory, and a caller, from a value that came
 * from elsewhere: another process's `_meta`, a host's payload, a provider's
 * answer, an event's metadata. The plugin writes such references on the way
 * out (a tool call whose work ran in another process, a session started by
 * one) and reads them back in four layers (hooks, plugin, the MCP adapter,
 * the ATIF converter); one reader keeps them agreeing on what counts.
 *
 * The rule is ATIF v1.7's for `subagent_trajectory_ref`: string fields only,
 * blank ones dropped (blank as native's `trim` reads it), and a reference
 * needs a `trajectory_id` or a `trajectory_path`. Key order is what the
 * trajectory's text writes: a reference as `subagent_trajectory_ref` lists
 * it, a caller as the session's `extra.caller` has always listed it.
 *
 * @module
 */

import { isRecord } from './record.ts';
import { isNonBlank } from './text.ts';

/** A reference to a trajectory, as ATIF's `subagent_trajectory_ref` writes one. */
export interface TrajectoryRef {
  /** The trajectory's `trajectory_id`. */
  trajectory_id?: string;
  /** The trajectory's `session_id`. */
  session_id?: string;
  /** The trajectory's file name, when a file is written for it. */
  trajectory_path?: string;
}

/** Who started work in another process: its session, its tool call, and where its trajectory is written. */
export interface CallerRef extends TrajectoryRef {
  /** The caller's tool call the work does. */
  tool_call_id?: string;
}

const REF_KEYS = ['trajectory_id', 'session_id', 'trajectory_path'] as const;
const CALLER_KEYS = ['session_id', 'trajectory_id', 'trajectory_path', 'tool_call_id'] as const;

/** The non-blank string fields `keys` of `value`, or undefined when it is no object or has none. */
function nonBlankFields<K extends string>(value: unknown, keys: readonly K[]): Partial<Record<K, string>> | undefined {
  if (!isRecord(value)) return undefined;
  const out: Partial<Record<K, string>> = {};
  let any = false;
  for (const key of keys) {
    const field = value[key];
    if (typeof field === 'string' && isNonBlank(field)) {
      out[key] = field;
      any = true;
    }
  }
  return any ? out : undefined;
}

/** The trajectory `value` names; undefined without a `trajectory_id` or `trajectory_path`. */
export function trajectoryRefOf(value: unknown): TrajectoryRef | undefined {
  const ref = nonBlankFields(value, REF_KEYS);
  return ref !== undefined && (ref.trajectory_id !== undefined || ref.trajectory_path !== undefined) ? ref : undefined;
}

/** The caller `value` names (any of its fields is enough); undefined for none. */
export function callerRefOf(value: unknown): CallerRef | undefined {
  return nonBlankFields(value, CALLER_KEYS);
}
