/**
 * The tool calls of one query, keyed by the SDK's `tool_use_id`.
 *
 * The CLI starts a tool as soon as the block that asks for it is complete,
 * while the reply still streams; its hooks (`PreToolUse`, `PostToolUse`,
 * `PostToolUseFailure`) and its approval callback fire in its time, often
 * before the caller has read the stream as far as that block. So what they
 * say is kept here, and a call's `pre_tool_call` is recorded when both the
 * caller read its block and a hook said the CLI took it up, whichever comes
 * second (then whatever the hooks already said), or at the latest when the
 * reply that asked for it ends (a call the CLI refused before any hook, for
 * input that does not fit the tool's schema). What they say later is
 * recorded as it comes.
 *
 * @module
 */

import type { AgentRun } from '../core/run.ts';
import { referenceServerTrajectory } from '../mcp/client.ts';
import type { TrajectoryRef } from '../../shared/trajectory-ref.ts';
import { contentText } from './messages.ts';
import { isRecord } from '../../shared/record.ts';
import { nonEmptyString } from '../../shared/text.ts';

/** How a tool call ended, from a hook or from the `tool_result` the model was sent. */
export interface ToolOutcome {
  readonly failed: boolean;
  readonly result?: unknown;
  /** The failure's text (`PostToolUseFailure.error`, or the error `tool_result`). */
  readonly error?: string;
  readonly interrupted?: boolean;
  /** The error's type when it is not the tool's: the query stopped before the CLI took the call up. */
  readonly errorType?: string;
  /** The trajectory of the instrumented MCP server that ran the call, as its result names it. */
  readonly serverTrajectory?: TrajectoryRef;
  /** The call ends at its `tool_result` (or when the query or its agent ends), which may add `serverTrajectory`. */
  readonly awaitsResult?: boolean;
  /**
   * A sub-agent's error result as the stream shows it, which does not say whether the call was cut
   * (`non_execution_kind` is the main agent's only): the record of it in the sub-agent's transcript, read later,
   * does (`toolDenialKind`), and replaces it. It stands when the transcript never says (see `settle`).
   */
  readonly provisional?: boolean;
}

/**
 * A permission question about a call and its answer: the caller's
 * `canUseTool`, one of the caller's hooks (`decidedBy` names it) or the
 * CLI's own rules (`decidedBy`: the kind of rule).
 */
export type Approval =
  | { readonly kind: 'request'; readonly description?: string }
  | {
      readonly kind: 'response';
      readonly approved: boolean;
      readonly description?: string;
      readonly decidedBy?: string;
      /** An approval that adds a rule allowing the tool from now on: for the session, or in a settings file (for good). */
      readonly lasting?: 'session' | 'always';
      /** The input the call runs with instead of the model's (`updatedInput`), when it differs. */
      readonly changedArgs?: Record<string, unknown>;
    };

interface ToolState {
  readonly id: string;
  name?: string;
  /** The tool the CLI's hooks name: the alias's target when `toolAliases` routed the model's call (`name`) elsewhere. */
  hookName?: string;
  input?: unknown;
  /** `PostToolUse`'s `tool_response`: the tool's own output, before it was rendered for the model. */
  response?: unknown;
  /** The run that recorded `pre_tool_call`, once it did. */
  run?: AgentRun;
  ended: boolean;
  outcome?: ToolOutcome;
  approvals: Approval[];
  /** Its approval was denied (with this reason): the call never ran, and its error result is the text the model was told. */
  denied?: string;
  /** A hook or an approval said the CLI took the call up: it starts it as soon as its block is complete, mid-reply. */
  begun: boolean;
}

/** Tools that run a sub-agent. */
export const AGENT_TOOLS = new Set(['Agent', 'Task']);

export class ToolBook {
  readonly #tools = new Map<string, ToolState>();
  /** The run of each recorded Agent call, kept after the call ends: a background sub-agent outlives it. */
  readonly #agentCalls = new Map<string, AgentRun>();
  /** Calls recorded and ended this query: the end of the reply that asked for one must not record it again. */
  readonly #ended = new Set<string>();
  /** Called before a tool's `post_tool_call` with the tool's own output: an Agent call ends its sub-agent first. */
  readonly #beforeEnd: (id: string, outcome: ToolOutcome, response: unknown) => void;

  constructor(beforeEnd: (id: string, outcome: ToolOutcome, response: unknown) => void) {
    this.#beforeEnd = beforeEnd;
  }

  #state(id: string): ToolState {
    let state = this.#tools.get(id);
    if (state === undefined) {
      state = { id, ended: false, approvals: [], begun: false };
      this.#tools.set(id, state);
    }
    return state;
  }

  /** The run that recorded this Agent call's `pre_tool_call`, if it did. */
  agentCallRun(id: string): AgentRun | undefined {
    return this.#agentCalls.get(id);
  }

  /** `PreToolUse` (or a later hook of the call): the CLI took the call up; what was called is kept until the call is recorded. */
  announced(id: string, name: unknown, input: unknown): void {
    const state = this.#state(id);
    state.begun = true;
    state.hookName ??= nonEmptyString(name);
    state.name ??= state.hookName;
    if (state.input === undefined) state.input = input;
  }

  /** Whether a hook or an approval said the CLI took the call up (not a sub-agent's call: those come from transcripts). */
  begun(id: string): boolean {
    return this.#tools.get(id)?.begun === true;
  }

  /**
   * The call is recorded (once): the caller read the block that asks for it and the CLI took it up, or the reply
   * that asked for it ended; then what is known of it.
   */
  start(id: string, name: string, args: unknown, run: AgentRun, apiRequestId: string): void {
    // A call that ended already (a tool that returned while the reply that asked for it still streamed) is not a new one.
    if (this.#ended.has(id)) return;
    const state = this.#state(id);
    if (state.run !== undefined) return;
    state.name = name;
    state.run = run;
    if (AGENT_TOOLS.has(name)) this.#agentCalls.set(id, run);
    run.toolStart({ id, name, arguments: args ?? state.input ?? {} }, apiRequestId);
    this.#flushApprovals(state);
    if (state.outcome !== undefined && !awaiting(state.outcome)) this.#end(state);
  }

  /**
   * `PostToolUse`: the tool returned. The call ends with the `tool_result`
   * the model is sent (what it saw), or with this output if none comes.
   */
  returned(id: string, response: unknown): void {
    this.#state(id).response = response;
  }

  /**
   * A `tool_result`, or `PostToolUseFailure`: how the call ended; the first
   * one wins. One that awaits the result keeps the call open until the next
   * one, which adds only the server trajectory its result names.
   */
  ended(id: string, outcome: ToolOutcome): void {
    const state = this.#state(id);
    const first = state.outcome;
    if (first !== undefined && !awaiting(first)) return;
    // The transcript's word on a sub-agent's call replaces the stream's (keeping the server trajectory it named).
    if (first === undefined || first.provisional === true) state.outcome = first?.serverTrajectory !== undefined && outcome.serverTrajectory === undefined ? { ...outcome, serverTrajectory: first.serverTrajectory } : outcome;
    else state.outcome = { ...first, awaitsResult: false, ...(outcome.serverTrajectory !== undefined ? { serverTrajectory: outcome.serverTrajectory } : {}) };
    if (state.run !== undefined && !awaiting(state.outcome)) this.#end(state);
  }

  /** The calls the CLI took up (a hook said so) that neither returned nor ended yet: running, as far as anyone said. */
  running(): string[] {
    return [...this.#tools.values()].filter((state) => state.begun && !state.ended && state.outcome === undefined && state.response === undefined && state.denied === undefined).map((state) => state.id);
  }

  /** Whether a denial of this call was already recorded (by the caller's callback or hook, before the CLI reports it). */
  denied(id: string): boolean {
    return this.#tools.get(id)?.denied !== undefined;
  }

  approval(id: string, approval: Approval): void {
    const state = this.#state(id);
    state.begun = true;
    if (approval.kind === 'response' && !approval.approved) state.denied ??= approval.description ?? 'denied';
    state.approvals.push(approval);
    if (state.run !== undefined) this.#flushApprovals(state);
  }

  #flushApprovals(state: ToolState): void {
    const run = state.run!;
    for (const approval of state.approvals) {
      if (approval.kind === 'request') run.approvalRequest(state.id, approval.description, state.name);
      else run.approvalResponse(state.id, approval.approved, approval.description, approval.decidedBy, approval.lasting, approval.changedArgs);
    }
    state.approvals.length = 0;
  }

  #end(state: ToolState): void {
    if (state.ended) return;
    state.ended = true;
    const outcome = state.outcome!;
    this.#beforeEnd(state.id, outcome, state.response);
    this.#tools.delete(state.id);
    this.#ended.add(state.id);
    const run = state.run!;
    // `toolAliases` routed the call: the model's name stays the call's, and the tool that ran is said beside it.
    const routedTo = state.hookName !== undefined && state.hookName !== state.name ? state.hookName : undefined;
    if (outcome.serverTrajectory !== undefined) {
      const host = { session_id: run.sessionId, turn_id: run.ids.turn_id, tool_call_id: state.id, ...(state.name !== undefined ? { tool_name: state.name } : {}) };
      referenceServerTrajectory(run.core.hooks, host, outcome.serverTrajectory, outcome.failed);
    }
    if (!outcome.failed) {
      run.toolEnd(state.id, { result: resultText(outcome.result), name: state.name, routedTo });
      return;
    }
    if (state.denied !== undefined) {
      run.toolEnd(state.id, { denied: outcome.error ?? state.denied, name: state.name, routedTo });
      return;
    }
    const error = new Error(outcome.error ?? (outcome.interrupted === true ? 'interrupted' : 'tool failed'));
    error.name = outcome.errorType ?? (outcome.interrupted === true ? 'Interrupted' : 'ToolError');
    run.toolEnd(state.id, { error, result: outcome.error, name: state.name, routedTo });
  }

  /** A recorded call still open ends: denied when it was, with the tool's output when it returned, else interrupted (`text`). */
  #endAsItStands(state: ToolState, text: string): void {
    if (state.run === undefined || state.ended) return;
    state.outcome ??= state.denied !== undefined ? { failed: true } : state.response !== undefined ? { failed: false, result: state.response } : { failed: true, interrupted: true, error: text };
    this.#end(state);
  }

  /** A sub-agent was stopped: the calls its run started and that have no outcome end interrupted, with this text. */
  interruptOpen(run: AgentRun, text: string): void {
    for (const state of [...this.#tools.values()]) {
      if (state.run !== run || state.ended) continue;
      state.outcome ??= state.denied !== undefined ? { failed: true } : { failed: true, interrupted: true, error: text };
      this.#end(state);
    }
  }

  /**
   * A sub-agent ended: its calls still waiting for the transcript's word on a streamed error result end as the stream
   * said (a tool error), so none outlives its agent.
   */
  settle(run: AgentRun): void {
    for (const state of [...this.#tools.values()]) if (state.run === run && !state.ended && state.outcome?.provisional === true) this.#end(state);
  }

  /** These calls get no result (`text` says why): those recorded end as they stand, the others are forgotten. */
  abandon(ids: readonly string[], text: string): void {
    for (const id of ids) {
      const state = this.#tools.get(id);
      if (state === undefined) continue;
      if (state.run === undefined) this.#tools.delete(id);
      else this.#endAsItStands(state, text);
    }
  }

  /**
   * The query ended: calls still open end as they stand (one that returned, with the tool's own output: the `tool_result`
   * the model would be sent never came); nothing is kept.
   * `stoppedBy`: the error the query stopped with (an error result such as
   * `error_max_budget_usd`), which a call the CLI never took up (no hook, no
   * approval, no result) fails with: it did not run, so it was not cut.
   */
  close(stoppedBy?: Error): void {
    for (const state of this.#tools.values()) {
      if (stoppedBy !== undefined && !state.begun && state.outcome === undefined && state.response === undefined) state.outcome = { failed: true, error: stoppedBy.message, errorType: stoppedBy.name };
      // A call no hook said the CLI took up (the program stopped reading right after its block): whether it ran is not known.
      this.#endAsItStands(state, state.begun ? 'the query ended before the tool returned' : 'the query ended before the CLI said whether it ran the tool');
    }
    this.#tools.clear();
    this.#agentCalls.clear();
    this.#ended.clear();
  }

  get size(): number {
    return this.#tools.size;
  }
}

/** An outcome that does not end its call yet: it waits for the call's `tool_result`, or for the transcript's word. */
function awaiting(outcome: ToolOutcome): boolean {
  return outcome.awaitsResult === true || outcome.provisional === true;
}

/**
 * A tool's output as the trajectory shows it: MCP content blocks as their
 * text, strings as they are, anything else as JSON.
 */
function resultText(result: unknown): unknown {
  if (Array.isArray(result) && result.every((block) => isRecord(block) && typeof block.type === 'string')) return contentText(result);
  return result;
}
