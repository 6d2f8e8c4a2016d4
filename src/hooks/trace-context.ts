/**
 * Trace context: what a recorder (the NeMo Relay plugin) can say about a
 * session or one of its open tool calls, so that work continuing it in
 * another process (an MCP server, an HTTP tool) joins the same trace and
 * the two trajectories can point at each other.
 *
 * Hooks flow one way, from the host to its observers; this is the one
 * question going back. An adapter asks `hooks.traceContext({ session_id,
 * tool_call_id })` before it sends the call and puts the answer on the wire
 * (`traceparent`, NeMo Relay's propagation context); the process receiving
 * it passes the context to `on_session_start` (`propagation_context`).
 *
 * @module
 */

import { trajectoryRefOf, type TrajectoryRef } from '../shared/trajectory-ref.ts';

export type { TrajectoryRef };

/** What a recorder knows about a session or an open tool call. */
export interface TraceContext {
  /** The W3C `traceparent` of the tool call's span (or the session's). */
  traceparent?: string;
  /** NeMo Relay's propagation context, the JSON text native's `propagationContextToJson` writes. */
  propagation?: string;
  /** Where the session's trajectory is written. */
  trajectory?: TrajectoryRef;
  /**
   * The session as the recorder's outputs name it: its id as the configured
   * redaction leaves it (the id itself without redaction). What work done
   * elsewhere may name its caller by.
   */
  session_id?: string;
}

/** Which session, and optionally which of its open tool calls, the question is about. */
export interface TraceContextRequest {
  /** The session, as the hooks name it. */
  session_id: string;
  /** An open tool call of the session (between its `pre_tool_call` and `post_tool_call`). */
  tool_call_id?: string;
  /** The tool call's turn and tool name, for hosts whose tool calls have no id. */
  turn_id?: string;
  /** The tool's name, for hosts whose tool calls have no id. */
  tool_name?: string;
}

/** Answers for the sessions it records; `undefined` when it knows nothing of this one. */
export type TraceContextProvider = (request: Readonly<TraceContextRequest>) => TraceContext | undefined | Promise<TraceContext | undefined>;

const STRING_FIELDS = ['traceparent', 'propagation', 'session_id'] as const;

/** The answers merged, first provider first; only string fields are kept, so nothing odd reaches a wire. */
export function mergeTraceContexts(answers: readonly unknown[]): TraceContext {
  const merged: TraceContext = {};
  for (const answer of answers) {
    if (typeof answer !== 'object' || answer === null) continue;
    const source = answer as Record<string, unknown>;
    for (const key of STRING_FIELDS) {
      const value = source[key];
      if (merged[key] === undefined && typeof value === 'string' && value !== '') merged[key] = value;
    }
    if (merged.trajectory === undefined) {
      const ref = trajectoryRefOf(source.trajectory);
      if (ref !== undefined) merged.trajectory = ref;
    }
  }
  return merged;
}
