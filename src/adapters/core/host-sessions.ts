/**
 * The sessions a host owns (`sessionScope: 'host'`) in which an adapter began a turn: the host opens and closes them
 * itself, so no run of the adapter sees the session open before it, and without this every run would be its first
 * turn. Kept per `HookRegistry`, so that every adapter instance recording into the host's hooks (a LangChain handler
 * made per request, an AI SDK run beside an Agents SDK run) counts the same session's turns.
 *
 * Bounded: the newest {@link MAX_HOST_SESSIONS} sessions are remembered; a run of a session forgotten before it is
 * taken as its first turn again. The host's `on_session_finalize` is not seen here (it goes to the host's
 * subscribers, and listening to it would make every adapter record with no plugin registered), so a host that starts a
 * new session under an id it used before has its first turn read as a later one: a new session wants a new id.
 *
 * @module
 */

import type { HookRegistry } from '../../hooks/registry.ts';

/** How many host sessions, the most recently continued, an adapter remembers having had a turn. */
export const MAX_HOST_SESSIONS = 10_000;

/** By registry: the sessions with a turn, least recently seen first. */
const turnsByHooks = new WeakMap<HookRegistry, Set<string>>();

/** A turn of the host's session `sessionId` begins: true when an earlier one began (this one is not the first). */
export function hostSessionContinues(hooks: HookRegistry, sessionId: string): boolean {
  let sessions = turnsByHooks.get(hooks);
  if (sessions === undefined) turnsByHooks.set(hooks, (sessions = new Set()));
  // Re-inserted last: the most recently continued is the last to be forgotten.
  const seen = sessions.delete(sessionId);
  sessions.add(sessionId);
  if (sessions.size > MAX_HOST_SESSIONS) sessions.delete(sessions.values().next().value as string);
  return seen;
}
