/**
 * Options every framework adapter takes, and how a run's session id is chosen.
 *
 * @module
 */

import type { Logger } from '../../shared/logger.ts';
import type { Guard } from './guard.ts';

/** What an adapter knows about a top-level run when it picks the session id. */
export interface RunInfo {
  /** The framework's id of this run (AI SDK `callId`, Agents `traceId`, LangChain root `runId`). */
  readonly runId: string;
  /** The framework's conversation or thread id, when it has one. */
  readonly conversationId?: string;
  /** The agent's name, when the framework names it. */
  readonly agentName?: string;
}

/**
 * Who opens and closes sessions.
 * - `'run'` (default): every top-level run is a session; the adapter emits
 *   `on_session_start` when it begins and `on_session_end` plus
 *   `on_session_finalize` when it ends (concurrent runs of one session share
 *   it: the last one to end closes it).
 * - `'host'`: the host emits `on_session_start` and `on_session_finalize`
 *   itself; the adapter still closes each turn with `on_session_end`.
 */
export type SessionScope = 'run' | 'host';

/** What every framework adapter accepts: how sessions are named and scoped, the platform label and where failures are logged. */
export interface AdapterOptions {
  /** The session id: a fixed string, or a function of the top-level run (return `undefined` for the default; a throw is reported once and the run takes the default too). */
  sessionId?: string | ((run: RunInfo) => string | undefined);
  /** Default `'run'`. */
  sessionScope?: SessionScope;
  /** `platform` on every payload. Default: the framework's name. */
  platform?: string;
  /** Where the adapter reports its own failures (it never throws into the framework). Default: `console`. */
  logger?: Logger;
}

/**
 * The session id of a top-level run: `options.sessionId`, else the conversation id, else the run id. A function that
 * throws (`() => store.getStore().chatId` outside the store) gets the default: the run is recorded, not lost with it.
 */
export function sessionIdFor(options: AdapterOptions, run: RunInfo, guard: Guard): string {
  const chosen = options.sessionId;
  if (typeof chosen === 'string' && chosen !== '') return chosen;
  if (typeof chosen === 'function') {
    const id = guard.run('call of your sessionId function, whose run took the default session id,', () => chosen(run));
    if (typeof id === 'string' && id !== '') return id;
  }
  if (run.conversationId !== undefined && run.conversationId !== '') return run.conversationId;
  return run.runId;
}
