/**
 * Calls an ATOF file shows cut short or never ended, as `view` draws them:
 * - a tool or LLM call the relay ended because its session closed
 *   (`error.type: session_closed`) says `cut short: <reason>`, the reason
 *   the session's end gives (`runtime_shutdown`, `evicted_idle_ttl`, ...),
 *   and the turn it was in ends `interrupted`, as the plugin's trajectory
 *   of the same run says (`formats/atif/convert/cut-short.ts`, same rule:
 *   the next agent end gives the reason);
 * - a call with no end at all (a process that died without closing its
 *   sessions) says `never ended` where its duration would be.
 *
 * @module
 */

import { SESSION_CLOSED, cutShortText } from '../../formats/atif/convert/cut-short.ts';
import { isRecord } from '../../shared/record.ts';
import { nonEmptyString } from '../../shared/text.ts';
import { addTurnNote, type TurnNote } from './atof-turns.ts';
import { containsNode, type ViewNode } from './model.ts';

/** What this reads of an agent: its turns and what their ends said. */
interface TurnsOf {
  turnsInOrder: readonly { turn: ViewNode }[];
  turnNotes: Map<ViewNode, TurnNote[]>;
}

export class CutShortCalls {
  /** Every LLM and tool call row, for the ones that never ended. */
  readonly #calls: ViewNode[] = [];
  /** Calls ended `session_closed`, waiting for their session's end. */
  #pending: ViewNode[] = [];
  /** Each cut call and why its session closed. */
  readonly #cut = new Map<ViewNode, string>();

  started(call: ViewNode): void {
    this.#calls.push(call);
  }

  /** A scope's end: a call its session's close cut short, or an agent's end that says why the session closed. */
  ended(target: ViewNode, metadata: Record<string, unknown>, data: unknown): void {
    if (target.kind === 'llm' || target.kind === 'tool') {
      if (metadata['error.type'] !== SESSION_CLOSED) return;
      target.error = cutShortText(SESSION_CLOSED);
      this.#pending.push(target);
      return;
    }
    if ((target.kind !== 'session' && target.kind !== 'subagent') || this.#pending.length === 0) return;
    const reason = (isRecord(data) ? nonEmptyString(data.reason) : undefined) ?? SESSION_CLOSED;
    for (const call of this.#pending) {
      call.error = cutShortText(reason);
      this.#cut.set(call, reason);
    }
    this.#pending = [];
  }

  /** Once every event is read, before the turns are settled: calls with no end, and the turns cut short. */
  show(agents: Iterable<TurnsOf>): void {
    const open: ViewNode[] = [];
    for (const call of this.#calls) {
      if (call.source?.end !== undefined) continue;
      call.note = ['never ended', call.note].filter(Boolean).join(' · ');
      // For `compare`: the plugin's trajectory of a session never closed says such a call was cut short.
      call.source = { ...call.source, neverEnded: true };
      open.push(call);
    }
    if (this.#cut.size === 0 && open.length === 0) return;
    for (const agent of agents) {
      for (const { turn } of agent.turnsInOrder) {
        if (turn.source?.ending !== undefined) continue;
        // Not said on the row: a file still being written (`view --serve`) has calls running. `compare` reads it.
        if (open.some((call) => containsNode(turn, call))) turn.source = { ...turn.source, callsNeverEnded: true };
        const reason = [...this.#cut].find(([call]) => containsNode(turn, call))?.[1];
        if (reason === undefined) continue;
        turn.source = { ...turn.source, ending: 'interrupted' };
        addTurnNote(agent.turnNotes, turn, { text: cutShortText(reason), ending: true });
      }
    }
  }
}
