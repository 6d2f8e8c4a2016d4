/**
 * Tool calls whose tool threw, waiting for the graph node that ran them to say what the model was told.
 *
 * A tool that throws inside a `ToolNode` (`createAgent`'s, LangGraph's prebuilt one) is not what the model reads:
 * the node catches the error and gives the model a `ToolMessage` of its own making (`handleToolErrors`' sentence,
 * `… Please fix your mistakes.`, or what a `wrapToolCall` middleware returns), and LangChain tells callbacks only the
 * error (`handleToolError`). That message is in the node's output, so the call's end waits for the node's end: its
 * observation is then the `ToolMessage` for its call, and the thrown error when the node made none (the error
 * escaped, `handleToolErrors: false`, and the node failed). Either way the call is failed as the tool failed: the
 * error (or the MCP result's failure) is its error, and its duration is the tool's own.
 *
 * A call the node runs again under its id (a retry) is one call: see `retry`.
 *
 * Bounded: a node's held calls end with the node (its end, its failure, or the run that forgets it).
 *
 * @module
 */

import type { AgentRun } from '../core/run.ts';
import { describeError, reportedToolError } from '../core/shapes.ts';
import { contentText } from './messages.ts';

/** A failed call waiting for its node. */
interface HeldFailure {
  readonly run: AgentRun;
  readonly toolCallId: string;
  /** What the tool threw. */
  readonly error: unknown;
  /** The text of the MCP result that said the call failed (`isError`), when the MCP client adapter was told of one. */
  readonly reported: string | undefined;
  readonly endedMs: number;
}

/** A `ToolMessage` in a node's output (only its call id and content are read). */
export interface ToldMessage {
  readonly tool_call_id?: unknown;
  readonly content?: unknown;
}

export class HeldToolFailures {
  readonly #byNode = new Map<string, HeldFailure[]>();

  /**
   * Keeps a failed call of `run` until the node `nodeRunId` (the chain run that ran the tool) ends; a tool no chain
   * ran (the program's own loop runs it, and makes the `ToolMessage` itself) ends now, observed as the thrown error.
   */
  hold(nodeRunId: string | undefined, run: AgentRun, toolCallId: string, error: unknown): void {
    const failure = { run, toolCallId, error, reported: run.reportedFailure(toolCallId), endedMs: Date.now() };
    if (nodeRunId === undefined) return endFailure(failure, undefined);
    const held = this.#byNode.get(nodeRunId);
    if (held === undefined) this.#byNode.set(nodeRunId, [failure]);
    else held.push(failure);
  }

  /**
   * Ends the calls held for the node `nodeRunId`, each with the `ToolMessage` for its call among `told()` (the node's
   * output: what the model read), else with the thrown error. No-op for a node that holds none.
   */
  settle(nodeRunId: string, told?: () => readonly ToldMessage[]): void {
    const held = this.#byNode.get(nodeRunId);
    if (held === undefined) return;
    this.#byNode.delete(nodeRunId);
    const messages = told?.() ?? [];
    for (const failure of held) endFailure(failure, messages.find((message) => message.tool_call_id === failure.toolCallId));
  }

  /**
   * A call of `run` that starts again under `toolCallId` (a `wrapToolCall` middleware that retries the tool,
   * `toolRetryMiddleware`): the attempt held for it failed and the model did not read its error. The call goes on
   * as one call: that attempt is recorded as failed inside it (`AgentRun.toolAttemptFailed`), and the call ends once,
   * with the last attempt, observed as what the model read. True when a failed attempt was held for the call (the
   * call is still open: the caller starts no other).
   */
  retry(run: AgentRun, toolCallId: string): boolean {
    // Every tool start asks; almost always nothing is held, and then no iterator is made.
    if (this.#byNode.size === 0) return false;
    for (const [node, held] of this.#byNode) {
      const index = held.findIndex((failure) => failure.run === run && failure.toolCallId === toolCallId);
      if (index < 0) continue;
      const [failure] = held.splice(index, 1);
      if (held.length === 0) this.#byNode.delete(node);
      const { error, reported, endedMs } = failure!;
      run.toolAttemptFailed(toolCallId, reported === undefined ? error : reportedToolError(reported), endedMs);
      return true;
    }
    return false;
  }
}

/** Ends a failed call: observed as the `ToolMessage` the model read when there is one, else as the thrown error. */
function endFailure(failure: HeldFailure, told: ToldMessage | undefined): void {
  const { run, toolCallId, error, reported, endedMs } = failure;
  const thrown = describeError(error);
  // Without a message, what a call that failed with `error` is observed as when it has no result (`AgentRun.toolEnd`);
  // for a reported failure the thrown error still says it, as the error of the call is the result's text.
  const result = told !== undefined ? contentText(told.content) : reported !== undefined ? `${thrown.type}: ${thrown.message}` : undefined;
  run.toolEnd(toolCallId, { result, error: reported === undefined ? error : reportedToolError(reported), endedMs });
}
