/**
 * The name of a session's agent scope, written by the plugin and read back
 * by `convert`: one rule in one place.
 *
 * - Hermes profile (any `HERMES_NEMO_RELAY_*` variable set): the Hermes
 *   plugin's `hermes-session-<id>`, unchanged.
 * - Otherwise `<agent name>-session-<id>`, where the agent name is the one
 *   the session's trajectory carries (the host's setting, an adapter's
 *   framework agent name, else the host's package name): a trace or an ATOF
 *   file then says which agent each session was, not "hermes".
 *
 * @module
 */

/** The Hermes plugin's session scope prefix. */
export const HERMES_SESSION_PREFIX = 'hermes-session-';

const SESSION_INFIX = '-session-';

/** `hermes-session-<id>`, or `<agentName>-session-<id>`. */
export function sessionScopeName(profile: 'default' | 'hermes', agentName: string, sessionId: string): string {
  return profile === 'hermes' ? `${HERMES_SESSION_PREFIX}${sessionId}` : `${agentName}${SESSION_INFIX}${sessionId}`;
}

/** What a root scope's name says about a plugin session: the Hermes form, or the agent's. */
export type SessionScopeParts = { form: 'hermes'; sessionId: string } | { form: 'agent'; agentName: string; sessionId: string };

/** The session id the plugin uses when the host gives none (its metadata then carries no `session_id`). */
const NO_SESSION_ID = 'default';

/**
 * Reads a plugin session's scope name back. `hermes-session-<id>` is read
 * by its prefix (files of the Hermes plugin and of earlier versions); the
 * agent form needs the session id (the scope's `metadata.session_id`, else
 * the plugin's "default") to know where the agent name ends, since both may
 * contain "-session-".
 */
export function parseSessionScopeName(name: string, reportedSessionId: string | undefined): SessionScopeParts | undefined {
  const sessionId = reportedSessionId ?? NO_SESSION_ID;
  const suffix = `${SESSION_INFIX}${sessionId}`;
  if (name === `${HERMES_SESSION_PREFIX}${sessionId}`) return { form: 'hermes', sessionId };
  if (name.endsWith(suffix) && name.length > suffix.length) return { form: 'agent', agentName: name.slice(0, -suffix.length), sessionId };
  if (name.startsWith(HERMES_SESSION_PREFIX) && name.length > HERMES_SESSION_PREFIX.length) return { form: 'hermes', sessionId: name.slice(HERMES_SESSION_PREFIX.length) };
  return undefined;
}
