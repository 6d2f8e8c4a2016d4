/**
 * What names a session's own trajectory (its ATIF `session_id` and
 * `trajectory_id`, its file name, the path `hooks.traceContext()` and an MCP
 * call's `_meta` hand out): the session id as the configured redaction
 * leaves it. One rule, used by every place that names a session's
 * trajectory.
 *
 * Those names are part of no event, so neither `pii_redaction` nor a
 * `redact` hook would reach them by themselves; the session scope's start
 * event carries the id as its input (`{ session_id }`), which both do
 * reach. The name is therefore the `session_id` of that start as the
 * configured redaction writes it:
 *
 * - `pii_redaction`'s policies on the session scope's start (its `input`
 *   surface), the rules every output gets;
 * - the `redact` hook's answer on that very start (its `data.session_id`),
 *   in the order the backend runs them (the memory relay: the component
 *   first; elsewhere the hook first, native's component after it).
 *
 * A redaction that leaves no `session_id` string there (it removed the
 * field, a policy cleared the payload, the hook threw) leaves the name
 * `[REDACTED]`: fail closed, never the id itself. Two sessions whose ids
 * redact to the same text still get two files (the `~n` claim of
 * `atif-file.ts`) and two trajectory ids (`trajectoryIdOf`).
 *
 * Without any redaction configured the name is the session id itself, the
 * same string: nothing is computed or allocated.
 *
 * @module
 */

import { isJsonObject } from '../shared/json.ts';
import { nonEmptyString } from '../shared/text.ts';

/** The name of a session whose id a redaction governs and left no text for. */
export const REDACTED_SESSION_NAME = '[REDACTED]';

/** The session id as one redaction step leaves it: a session scope's start in, its `session_id` (or none) out. */
export type SessionIdStep = (start: SessionStart) => SessionStart;

/** The parts of a session scope's start a redaction may change, as the outputs get them. */
export interface SessionStart {
  /** The scope's name (`<agent>-session-<id>`). */
  name: string;
  /** The scope's input: `{ session_id }` as the plugin writes it. */
  data: unknown;
  /** The scope's metadata. */
  metadata: unknown;
}

/** Names sessions' trajectories: `(sessionId, scopeName) => name`. */
export type TrajectoryNamer = (sessionId: string, scopeName: string) => string;

/**
 * The namer for the configured steps, in the order they run; null when no
 * step is configured (then a session's trajectory is named by its id).
 */
export function trajectoryNamer(steps: readonly (SessionIdStep | null)[]): TrajectoryNamer | null {
  const configured = steps.filter((step): step is SessionIdStep => step !== null);
  if (configured.length === 0) return null;
  return (sessionId, scopeName) => {
    let start: SessionStart = { name: scopeName, data: { session_id: sessionId }, metadata: { session_id: sessionId, trajectory_id: sessionId } };
    for (const step of configured) start = step(start);
    const redacted = isJsonObject(start.data) ? start.data.session_id : undefined;
    return nonEmptyString(redacted) ?? REDACTED_SESSION_NAME;
  };
}

/**
 * The `redact` hook as a step: its own answer on the session scope's start,
 * as the backend recorded that start (`take` hands it over once; the memory
 * relay's answer has its `pii_redaction` in it already). The hook is not
 * asked again, so the name is what the event says. No answer (the start was
 * not recorded) leaves nothing: fail closed.
 */
export function hookAnswerStep(take: () => SessionStart | null): SessionIdStep {
  return (start) => take() ?? { ...start, data: null };
}

/**
 * The session's `trajectory_id`: its name, and for the n-th trajectory of
 * that name in the output folder (a session id reused, or two ids that
 * redact alike) the name with `~n`, as its file is named: two sessions are
 * never joined on one id. Only for a redacted name: without redaction the
 * id stays the session id, as it always was.
 */
export function trajectoryIdOf(name: string, instance: number): string {
  return instance > 1 ? `${name}~${instance}` : name;
}
