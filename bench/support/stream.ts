/**
 * A synthetic Hermes hook stream: many sessions in flight at once (a
 * gateway host), each a scripted conversation, events interleaved round
 * robin across the live sessions.
 *
 * One session: `on_session_start`, then `TURNS` turns of
 *   pre_llm_call, (pre_api_request, post_api_request, pre_tool_call,
 *   post_tool_call) x TOOL_CALLS, pre_api_request, post_api_request,
 *   post_llm_call, on_session_end
 * then `on_session_finalize`. `on_session_end` is Hermes' per-turn
 * finalisation, so the plugin writes a partial ATIF trajectory after every
 * turn and the final one at `on_session_finalize`, as it would for real
 * (`endEveryTurn: false` keeps only the last turn's, for comparison).
 *
 * Payloads are built on the fly (prebuilding a million would distort the
 * memory figures); `generatorOnly()` replays the stream without emitting,
 * so its share of the time can be reported.
 *
 * @module
 */

import type { HookName } from '../../src/hooks/names.ts';
import * as fixtures from './payloads.ts';

export interface StreamOptions {
  /** Events to produce in total. */
  events: number;
  /** Sessions in flight at once. */
  concurrency: number;
  turns: number;
  toolCalls: number;
  /** Request body of every LLM call. */
  body?: fixtures.Payload;
  /** `on_session_end` after every turn (Hermes), or only after the last one. Default true. */
  endEveryTurn?: boolean;
  /** Session id prefix (keeps runs apart). */
  prefix?: string;
}

type Step = (session: string) => [HookName, fixtures.Payload];

function scriptOf(turns: number, toolCalls: number, body: fixtures.Payload, endEveryTurn = true): Step[] {
  const steps: Step[] = [];
  steps.push((s) => ['on_session_start', fixtures.sessionStart(s)]);
  for (let turn = 0; turn < turns; turn++) {
    steps.push((s) => ['pre_llm_call', fixtures.preLlmCall(fixtures.idsOf(s, turn))]);
    for (let call = 1; call <= toolCalls + 1; call++) {
      steps.push((s) => ['pre_api_request', fixtures.preApiRequest(fixtures.idsOf(s, turn), call, body)]);
      steps.push((s) => ['post_api_request', fixtures.postApiRequest(fixtures.idsOf(s, turn), call)]);
      if (call <= toolCalls) {
        steps.push((s) => ['pre_tool_call', fixtures.preToolCall(fixtures.idsOf(s, turn), call)]);
        steps.push((s) => ['post_tool_call', fixtures.postToolCall(fixtures.idsOf(s, turn), call)]);
      }
    }
    steps.push((s) => ['post_llm_call', fixtures.postLlmCall(fixtures.idsOf(s, turn))]);
    if (endEveryTurn || turn === turns - 1) steps.push((s) => ['on_session_end', fixtures.sessionEnd(fixtures.idsOf(s, turn))]);
  }
  steps.push((s) => ['on_session_finalize', fixtures.sessionFinalize(s)]);
  return steps;
}

/** Events of one session under `turns` x `toolCalls`. */
export function eventsPerSession(turns: number, toolCalls: number, endEveryTurn = true): number {
  return scriptOf(turns, toolCalls, fixtures.SMALL_BODY, endEveryTurn).length;
}

/** A resumable cursor over the stream: `take(n, sink)` produces the next `n` events. */
export class HookStream {
  readonly #steps: Step[];
  readonly #concurrency: number;
  readonly #prefix: string;
  readonly #cursor: Int32Array;
  readonly #ids: string[] = [];
  #remaining: number;
  #slot = 0;
  #started = 0;

  constructor(options: StreamOptions) {
    this.#steps = scriptOf(options.turns, options.toolCalls, options.body ?? fixtures.SMALL_BODY, options.endEveryTurn ?? true);
    this.#concurrency = options.concurrency;
    this.#prefix = options.prefix ?? 'sess';
    this.#cursor = new Int32Array(options.concurrency);
    this.#remaining = options.events;
    for (let slot = 0; slot < options.concurrency; slot++) this.#ids.push(`${this.#prefix}-${this.#started++}`);
  }

  /** Events not produced yet. */
  get remaining(): number {
    return this.#remaining;
  }

  /** Sessions started so far. */
  get sessions(): number {
    return this.#started;
  }

  /** Calls `sink(name, payload)` for the next `count` events (fewer at the end). Returns how many. */
  take(count: number, sink: (name: HookName, payload: fixtures.Payload) => void): number {
    const n = Math.min(count, this.#remaining);
    const steps = this.#steps;
    for (let i = 0; i < n; i++) {
      const slot = this.#slot;
      const position = this.#cursor[slot]!;
      const [name, payload] = steps[position]!(this.#ids[slot]!);
      sink(name, payload);
      if (position + 1 === steps.length) {
        this.#ids[slot] = `${this.#prefix}-${this.#started++}`;
        this.#cursor[slot] = 0;
      } else {
        this.#cursor[slot] = position + 1;
      }
      this.#slot = slot + 1 === this.#concurrency ? 0 : slot + 1;
    }
    this.#remaining -= n;
    return n;
  }
}
