/**
 * An ATOF session's turns as the trajectory of the same run counts them.
 * The hooks give a run resumed after a pause (an OpenAI Agents SDK run
 * resumed from its state once an approval is answered, a LangGraph
 * `Command`) a turn of its own, a new turn id with no user message; the
 * user asked once, and native's converter writes no user step for it: the
 * turn it resumed goes on. So such a turn is read as that turn (its rows
 * follow the earlier run's, its id is kept as a resumed run's), and each
 * turn is titled by its number among the turns left, `turn 2` being the
 * second user message. How a resumed turn ended is its last run's end,
 * as the trajectory says it; `compare` reads every run's end from
 * `source.resumedRuns`.
 *
 * @module
 */

import type { ViewNode } from './model.ts';
import { continuesConversation, userMessage } from './turn-continues.ts';

/** A part of a turn row's note an end mark gave: how a run ended (`ending`), or the guardrails that tripped in it. */
export interface TurnNote {
  text: string;
  ending: boolean;
}

/** Adds a part to a turn's note, unless its last part says it already (a turn ended twice the same way says it once). */
export function addTurnNote(notes: Map<ViewNode, TurnNote[]>, turn: ViewNode, part: TurnNote): void {
  const parts = notes.get(turn) ?? [];
  if (parts.at(-1)?.text !== part.text) parts.push(part);
  notes.set(turn, parts);
}

/** A run resumed after a pause, as the turn it resumed keeps it (`source.resumedRuns`). */
export interface ResumedRun {
  turn_id?: string;
  /** How it ended (`completed`, `interrupted`, `failed`), when its end says. */
  ending?: string;
  /** Its turn start mark. */
  event?: unknown;
}

/**
 * Reads each turn that goes on with the conversation as the turn before it (of the same agent), numbers the turns
 * left, and writes what their ends said on their rows: a resumed turn's earlier runs' ends are not its end.
 */
export function settleTurns(turns: readonly { turn: ViewNode; container: ViewNode }[], notes: ReadonlyMap<ViewNode, TurnNote[]>): void {
  const kept: { turn: ViewNode; parts: TurnNote[] }[] = [];
  for (const { turn, container } of turns) {
    const previous = kept.at(-1);
    if (previous !== undefined && continuesConversation(turn, userMessage(previous.turn) ?? previous.turn.note)) {
      container.children.splice(container.children.indexOf(turn), 1);
      resume(previous.turn, turn);
      previous.parts = [...previous.parts.filter((part) => !part.ending), ...(notes.get(turn) ?? [])];
      continue;
    }
    kept.push({ turn, parts: [...(notes.get(turn) ?? [])] });
  }
  kept.forEach(({ turn, parts }, index) => {
    turn.title = `turn ${index + 1}`;
    const texts = parts.map((part) => part.text).filter((text, at, all) => at === 0 || all[at - 1] !== text);
    if (texts.length > 0) turn.note = [turn.note, ...texts].filter(Boolean).join(' · ');
  });
}

/** `run`, a turn that resumed `turn`: its rows follow the earlier run's, and `turn` keeps its id and how it ended. */
function resume(turn: ViewNode, run: ViewNode): void {
  turn.children.push(...run.children);
  if (run.endUs !== undefined && (turn.endUs === undefined || run.endUs > turn.endUs)) turn.endUs = run.endUs;
  const source = turn.source ?? {};
  const resumed: ResumedRun = {
    ...(run.id !== undefined ? { turn_id: run.id } : {}),
    ...(typeof run.source?.ending === 'string' ? { ending: run.source.ending } : {}),
    ...(run.source?.event !== undefined ? { event: run.source.event } : {}),
  };
  turn.source = { ...source, resumedRuns: [...resumedRunsOf(turn), resumed] };
}

/** The runs resumed after a pause that a turn of an ATOF file holds, in order. */
export function resumedRunsOf(turn: ViewNode): ResumedRun[] {
  const runs = turn.source?.resumedRuns;
  return Array.isArray(runs) ? (runs as ResumedRun[]) : [];
}
