/**
 * The tool-calling loop of LangChain's model docs, run bare (no runnable around it): `modelWithTools.invoke(messages)`,
 * `tool.invoke(toolCall)` for each of the answer's `tool_calls`, then the model again with the conversation so far.
 * LangChain tells the handler of each call and each tool as a run of its own, with no parent: nothing but the
 * conversation says they are one turn. A model call outside any run whose answer asks for tools leaves its turn open
 * here, and:
 *
 * - a tool run outside any run whose call id (`toolCall.id`) names one of that answer's calls is that call's span;
 * - a model call outside any run whose messages are that call's messages, its answer, then tool messages for its calls
 *   (no new user message) is the turn's next call;
 * - anything else that begins in the turn's session (a new user message) ends the turn first, completed with its last
 *   answer, as a turn whose answer asked for tools ends where no loop follows; so do `close()` and, past
 *   `MAX_OPEN_TURNS`, the oldest.
 *
 * Shared by the handlers on one hook registry, as the sessions are: a handler made per call continues the turn.
 *
 * @module
 */

import type { AgentRun } from '../core/run.ts';
import type { CallOfTool, ChatMessage } from '../core/shapes.ts';
import { jsonEqual } from '../../shared/json.ts';

/** Bare turns kept open for a loop's next call at once; beyond it the oldest ends. */
export const MAX_OPEN_TURNS = 1_000;

interface OpenTurn {
  readonly run: AgentRun;
  /** The request of the turn's last model call, as recorded, and its answer's calls. */
  readonly request: readonly ChatMessage[];
  readonly calls: ReadonlySet<string>;
  /** The answer's calls no tool run took yet. */
  readonly open: Set<string>;
  /** Ends the turn, completed with its last answer (the handler that opened it knows how its session is kept). */
  readonly end: () => void;
}

export class BareTurns {
  readonly #bySession = new Map<string, OpenTurn>();
  readonly #byCall = new Map<string, OpenTurn>();

  get size(): number {
    return this.#bySession.size;
  }

  /** `run`'s last model call (`request`) answered with `calls` for the program to run: the turn waits for the loop. */
  keep(run: AgentRun, request: readonly ChatMessage[], calls: readonly CallOfTool[], end: () => void): void {
    const previous = this.#bySession.get(run.sessionId);
    if (previous !== undefined) this.#drop(previous);
    const ids = calls.map((call) => call.id).filter((id) => id !== '');
    const turn: OpenTurn = { run, request, calls: new Set(ids), open: new Set(ids), end };
    this.#bySession.set(run.sessionId, turn);
    for (const id of ids) this.#byCall.set(id, turn);
    while (this.#bySession.size > MAX_OPEN_TURNS) this.#end(this.#bySession.values().next().value!);
  }

  /** The turn whose last answer made the call `id` that no tool run took yet: the tool run takes it. */
  claim(id: string): AgentRun | undefined {
    const turn = this.#byCall.get(id);
    if (turn === undefined || turn.run.ended || !turn.open.delete(id)) return undefined;
    return turn.run;
  }

  /**
   * The turn a model call with `messages` continues: they are its last request, its answer (the same calls), then a
   * tool message for each of some of those calls, and nothing else. The turn is no longer waiting: the call is its.
   */
  continued(messages: readonly ChatMessage[]): AgentRun | undefined {
    let first = messages.length;
    while (first > 0 && messages[first - 1]!.role === 'tool') first -= 1;
    if (first === messages.length || first === 0) return undefined;
    const turn = this.#byCall.get(String(messages[first]!.tool_call_id));
    if (turn === undefined || turn.run.ended) return undefined;
    const answer = messages[first - 1]!;
    const asked = Array.isArray(answer.tool_calls) ? answer.tool_calls.map((call) => (typeof call === 'object' && call !== null ? (call as { id?: unknown }).id : undefined)) : [];
    if (answer.role !== 'assistant' || asked.length !== turn.calls.size || !asked.every((id) => turn.calls.has(String(id)))) return undefined;
    if (!messages.slice(first).every((message) => turn.calls.has(String(message.tool_call_id)))) return undefined;
    if (first - 1 !== turn.request.length || !jsonEqual(messages.slice(0, first - 1), turn.request)) return undefined;
    this.#drop(turn);
    return turn.run;
  }

  /** Something else begins in `sessionId` (the next user message): its open turn ends first. */
  endSession(sessionId: string): void {
    const turn = this.#bySession.get(sessionId);
    if (turn !== undefined) this.#end(turn);
  }

  endAll(): void {
    for (const turn of [...this.#bySession.values()]) this.#end(turn);
  }

  #end(turn: OpenTurn): void {
    this.#drop(turn);
    turn.end();
  }

  #drop(turn: OpenTurn): void {
    if (this.#bySession.get(turn.run.sessionId) === turn) this.#bySession.delete(turn.run.sessionId);
    for (const id of turn.calls) if (this.#byCall.get(id) === turn) this.#byCall.delete(id);
  }
}
