/**
 * Correlation ids for hosts.
 *
 * The hook core treats every id as an opaque string; these helpers only save
 * hosts from inventing formats. Random ids are RFC 4122 v4 UUIDs from the
 * global `crypto.randomUUID()` (Node 20, Bun, Deno). The one structured id is
 * `api_request_id`, `${turn_id}:api:${api_call_count}`, which the Hermes
 * contract fixes so that consumers can tell API calls of a turn apart.
 *
 * @module
 */

/** A new `session_id`: one conversation, across turns. */
export function newSessionId(): string {
  return crypto.randomUUID();
}

/** A new `task_id`: the unit of work a turn belongs to (Hermes' per-run task). */
export function newTaskId(): string {
  return crypto.randomUUID();
}

/** A new `turn_id`: one user turn, from `pre_llm_call` to `on_session_end`. */
export function newTurnId(): string {
  return crypto.randomUUID();
}

/**
 * A new `tool_call_id`, for when the provider did not supply one. Prefer the
 * provider's own id: it is what the model and the transcript refer to.
 */
export function newToolCallId(): string {
  return crypto.randomUUID();
}

/**
 * The `api_request_id` of the `apiCallCount`-th API call of a turn:
 * `${turnId}:api:${apiCallCount}`.
 *
 * Mint it ONCE per API call, before the retry loop, and share it across
 * that call's retries: retries are told apart by `retry_count`, so
 * `pre_api_request`, `api_request_error` and `post_api_request` of every
 * attempt correlate to the same id.
 */
export function apiRequestId(turnId: string, apiCallCount: number): string {
  return `${turnId}:api:${apiCallCount}`;
}

/** Options of `TurnIds`. */
export interface TurnIdsOptions {
  /** The session the turn belongs to. */
  sessionId: string;
  /** Defaults to a new task id. */
  taskId?: string;
  /** Defaults to a new turn id. */
  turnId?: string;
}

/** The ids of one API call, from {@link TurnIds.nextApiCall}. */
export interface ApiCallIds {
  /** The id of this API call; retries share it. */
  readonly api_request_id: string;
  /** 1-based. */
  readonly api_call_count: number;
}

/**
 * The ids of one turn, plus its API-call counter. The own enumerable fields
 * are exactly the wire fields, so `{ ...turn }` spreads
 * `session_id`, `task_id` and `turn_id` into a payload.
 *
 * @example
 * const turn = new TurnIds({ sessionId });
 * const api = turn.nextApiCall(); // before the retry loop
 * for (let retry_count = 0; ; retry_count++) {
 *   hooks.emit('pre_api_request', () => ({ ...turn, ...api, retry_count }));
 *   ...
 * }
 */
export class TurnIds {
  /** The session id. */
  readonly session_id: string;
  /** The task id. */
  readonly task_id: string;
  /** The turn id. */
  readonly turn_id: string;
  #apiCallCount = 0;

  /** Mints the ids of one turn. */
  constructor(options: TurnIdsOptions) {
    this.session_id = options.sessionId;
    this.task_id = options.taskId ?? newTaskId();
    this.turn_id = options.turnId ?? newTurnId();
  }

  /** API calls minted so far in this turn. */
  get apiCallCount(): number {
    return this.#apiCallCount;
  }

  /** Counts one more API call and returns its ids. Call once per call, not per retry. */
  nextApiCall(): ApiCallIds {
    this.#apiCallCount += 1;
    return { api_request_id: apiRequestId(this.turn_id, this.#apiCallCount), api_call_count: this.#apiCallCount };
  }
}
