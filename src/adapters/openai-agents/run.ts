/**
 * One observed `Runner.run()`: its lifecycle events, model attempts and
 * outcome, mapped onto one turn (`AgentRun`) of a session or of a sub-agent.
 *
 * - The turn begins at the run's first sign of life (its first event or
 *   model attempt, or its end): by then the SDK has opened the run's trace,
 *   whose group id or trace id names the session.
 * - Every model attempt is a provider attempt. A call that follows a failed
 *   attempt with the same input items is its retry (the runner re-sends the
 *   same input array); anything else is a new logical call.
 * - `agent_tool_start`/`agent_tool_end` are tool calls, by the model's call
 *   id. A tool failed when it timed out (its `timeoutErrorFunction` said so,
 *   or the SDK's timeout text), when the caller's signal stopped the run
 *   while it ran, when the SDK cancelled it because a call beside it failed
 *   with an error that escapes to the run, when the SDK marked its `function` span (a real one with
 *   tracing on, a no-op one with tracing off, which keeps the error here;
 *   a tool's error that escapes to the run too), when it returned the SDK's default
 *   failure text (a runner that makes no span per call), or when an MCP
 *   server answered it with `isError` (read from the server's `callTool`,
 *   which runs inside the call's span).
 * - `agent_handoff` is the transfer call the model made, answered with the
 *   next agent, who is a sub-agent linked to that call (as the LangChain
 *   adapter records the agents of a graph): its requests and tools are its
 *   own trajectory's. A handoff to an agent already in the chain (back to the
 *   run's own agent, the one it starts with) ends the sub-agents after it.
 * - A run that paused for approvals ends its turn `interrupted` and leaves
 *   the session open for the run that resumes it (`Adapter.hold`), and with
 *   it the links of the handoff chain it paused in: the resumed run
 *   continues each agent's sub-agent session. A run resumed where no pause
 *   is held reopens the chain as the state's handoffs left it, each agent a
 *   sub-agent of the one before, the first of the resumed turn.
 * - A run that throws ends its turn (and session) at once, failed, with
 *   whatever it left open; guardrail verdicts go on the turn's end.
 *
 * @module
 */

import { getCurrentTrace, getHandoff, ToolTimeoutError } from '@openai/agents';
import { ToolCallRefused, type AdapterCore, type AgentRun, type ApiCall, type ResponseParts, type RunStatus } from '../core/run.ts';
import { abortErrorOf, isAbortedSignal, localCalls, reportedToolError, type CallOfTool } from '../core/shapes.ts';
import { approvalPause } from '../core/pause.ts';
import { guardrailTurnEnd, type GuardrailRecord } from '../core/guardrails.ts';
import {
  chatMessages,
  finalText,
  functionCalls,
  guardrailRecords,
  hostedApprovalOf,
  offeredTools,
  providerApprovalAnswers,
  requestSettings,
  responseParts,
  runnerCallOf,
  toldOfCall,
  userTurn,
} from './items.ts';
import { currentToolFrame, type ToolFrame } from '../core/context.ts';
import { bindCallSpan, onStreamEnd, reportsFailure, prepareAgent, sdkCurrentSpan, type AttemptObserver, type ModelInfo, type RunObserver, type ToolGuardrailVerdict } from './patch.ts';
import { nonEmptyString } from '../../shared/text.ts';
import { isRecord } from '../../shared/record.ts';

type Loose = Record<string, unknown>;

/**
 * What the SDK's default tool error function answers (`tool.ts`): with
 * tracing off it is the only sign a tool threw.
 */
const SDK_TOOL_FAILURE_TEXT = 'An error occurred while running the tool. Please try again.';

/** The error the SDK sets on a call's span when the call's error escapes to the run; one it tells the model is '(non-fatal)'. */
const ESCAPED_TOOL_ERROR = 'Error running tool';

/** What the SDK answers for a call it cancelled (`toolExecution.ts`). */
const SDK_CANCELLED_TEXT = 'aborted';

/** How a tool output guardrail's decision describes the text the model got instead of the tool's output. */
const REPLACED_OUTPUT = "replaced the tool's output with: ";

/** What the SDK tells the model of a rejected call by default (`approvalRejection.ts`). */
const SDK_REJECTION_TEXT = 'Tool execution was not approved.';

/** What a run needs of the adapter that observes it. */
export interface RunHost {
  readonly core: AdapterCore;
  newRunId(): string;
  /** The run settled: the adapter forgets it. */
  settled(record: RunRecord): void;
  /** The paused run's session, and the links of the chain it paused in, stay open for the run that resumes `state`. */
  hold(state: object, sessionId: string, chain: readonly HandedTo[]): void;
  /** A top-level run ended with the response `responseId`: a run chained to it (`previousResponseId`) continues `sessionId`. */
  answeredIn(responseId: string, sessionId: string): void;
  /** The session of the run that ended with the response `responseId`, when the adapter still knows it. */
  sessionAfter(responseId: string): string | undefined;
}

/** What a paused run left open for the run that resumes it: its session, and the handoff chain it paused in. */
export interface HeldPause {
  readonly sessionId: string;
  /** Outermost first; each agent's turn ended with its sub-agent link kept open. */
  readonly chain: readonly HandedTo[];
}

/** The link of a nested run to the tool call (or the run) it runs inside. */
export interface ParentLink {
  readonly run: AgentRun;
  readonly toolCallId: string;
}

/** The parts of an SDK span read here. */
interface SpanLike {
  readonly spanId: string;
  readonly error: { message: string; data?: Loose } | null;
}

interface OpenTool {
  readonly name: string;
  /** The turn the call is in: the run's own, or a handed-to agent's. */
  readonly run: AgentRun;
  /** The SDK's `function` span of the call (tracing on): its error flag says the tool failed. */
  readonly span: SpanLike | undefined;
  /** A nested run already claimed this call as its parent. */
  claimed: boolean;
  /** A tool that says in its answer that it failed: one the SDK made of an MCP server's tool, an apply_patch tool. */
  readonly reports: boolean;
}

/** An agent a handoff went to, and its sub-agent turn. */
export interface HandedTo {
  readonly agent: unknown;
  readonly run: AgentRun;
}

/** The box a collected run's finalizer reads: the turn, once begun, and the handed-to agents' turns. No reference back to the record. */
export interface TurnBox {
  run: AgentRun | undefined;
  /** The handoff chain, outermost first: each one a sub-agent of the one before (the first, of `run`). */
  readonly handedTo: HandedTo[];
}

/** The `RunState` parts read here (a resumed run's input, a result's or an error's state). */
export function isRunState(value: unknown): value is Loose & { getInterruptions(): unknown[] } {
  return isRecord(value) && typeof value.getInterruptions === 'function' && '_context' in value;
}

export class RunRecord implements RunObserver {
  readonly #adapter: RunHost;
  readonly #runner: Loose;
  readonly #input: unknown;
  readonly #options: Loose | undefined;
  readonly #parent: ParentLink | undefined;
  /** The session a paused run left open, when this run resumes it. */
  readonly #heldSessionId: string | undefined;
  /** The handoff chain that paused run left open (links kept), when this run resumes it. */
  readonly #heldChain: readonly HandedTo[];
  readonly box: TurnBox = { run: undefined, handedTo: [] };
  /** The agent the run starts with: its steps are the run's own (a resumed run's, the one it is resumed with). */
  readonly #ownAgent: unknown;
  /** The agent whose turn it is (handoffs change it). */
  #agent: unknown;
  /**
   * A resumed run: the handoff chain it paused in and the decisions taken on the calls it paused for, read when the run
   * is called. By its first sign of life the SDK may have settled them: a run whose decisions are all rejections runs no
   * tool, so its first sign is the next model call, and by then the state holds no interruption.
   */
  readonly #resumed: { chain: unknown[]; decisions: Decision[]; agent: unknown } | undefined;
  #call: ApiCall | undefined;
  #lastInput: unknown;
  #lastFailed = false;
  /** What the current attempt's stream has handed on, when it streams (`AttemptObserver.streaming`). */
  #delivered: (() => ResponseParts | undefined) | undefined;
  /** The function calls of the latest response: handoffs are matched against them. */
  #lastCalls: CallOfTool[] = [];
  readonly #tools = new Map<string, OpenTool>();
  /** Tool calls by their `function` span, for a nested run started from one. */
  readonly #toolBySpan = new WeakMap<object, string>();
  /** Function tool calls that timed out (their `timeoutErrorFunction` answered), by call id, until their `agent_tool_end`. */
  readonly #threw = new Map<string, unknown>();
  /** A call of the current step failed with an error that escapes to the run: the SDK cancels the calls beside it. */
  #escapedInStep = false;
  /**
   * Calls whose answer said they failed (an MCP server's `isError`, an editor's `status: 'failed'`), by call id, with
   * the answer's text, until their `agent_tool_end`.
   */
  readonly #reportedErrors = new Map<string, string>();
  /**
   * Calls a tool guardrail stopped or changed (`rejectContent`, `throwException`), by call id, until their end: the SDK
   * ends them through the same tool events as a call that ran and answered.
   */
  readonly #guarded = new Map<string, ToolGuardrailVerdict>();
  /** Rejected calls whose outcome the next request's input will show, with the turn they are in. */
  readonly #denied = new Map<string, { name: string; run: AgentRun; fallback: string }>();
  /**
   * The last response's calls no event has recorded yet, with the turn and request that asked for them: a call the SDK
   * refuses (arguments that are not JSON; a tool the agent does not have) never reaches a tool event.
   */
  readonly #asked = new Map<string, { call: CallOfTool; run: AgentRun; apiRequestId: string | undefined }>();
  /**
   * Calls the SDK answers to the model in this order whichever finishes first, whose end is not recorded yet, and the
   * ends held until the calls before them ended: a resumed run's calls it was paused for (after the step's calls that
   * ran before the pause), a step's calls where some were rejected without asking. A rejected call's end comes with the
   * next request (the text the model is told); a handoff of the step ends after them all.
   */
  #resumedOrder: string[] = [];
  readonly #heldEnds = new Map<string, () => void>();
  /** The input the SDK prepared for the model, as an input guardrail was given it before the turn's first event. */
  #guardrailInput: unknown;
  #nestedRuns = 0;
  #finalOutput: unknown;
  #settled = false;

  constructor(adapter: RunHost, runner: Loose, agent: unknown, input: unknown, options: Loose | undefined, parent: ParentLink | undefined, held: HeldPause | undefined) {
    this.#adapter = adapter;
    this.#runner = runner;
    this.#ownAgent = agent;
    this.#agent = isRunState(input) ? (input._currentAgent ?? agent) : agent;
    this.#resumed = isRunState(input) ? { chain: pausedChain(input, agent, this.#agent), decisions: approvalDecisions(input, pendingCalls(input)), agent: this.#agent } : undefined;
    // A handoff the model asked for beside a call that paused the run happens when the run resumes: its transfer call is
    // in the paused run's last response.
    if (isRunState(input)) this.#lastCalls = functionCalls((isRecord(input._lastTurnResponse) ? input._lastTurnResponse : undefined)?.output);
    this.#input = input;
    this.#options = options;
    this.#parent = parent;
    this.#heldSessionId = held?.sessionId;
    this.#heldChain = held?.chain ?? [];
  }

  get settled(): boolean {
    return this.#settled;
  }

  // ------------------------------------------------------------ the turn

  /**
   * The turn, opened on first use. `state`: the run's state as its result or
   * error carries it, for a run that ends before its first event (its trace
   * names the session).
   */
  #turn(state?: unknown, turnInput?: unknown): AgentRun | undefined {
    if (this.box.run !== undefined || this.#settled) return this.box.run;
    const adapter = this.#adapter;
    const input = this.#input;
    // What the SDK sends with the input: a `session`'s items go before it (merged before the run's first sign of life,
    // in the input `agent_start` carries, the one an input guardrail is given, and the state a run that ended before
    // it holds). Read there, not from the session: a Conversations session would answer over the network.
    const resumed = isRunState(input);
    const sent = resumed ? input : (turnInput ?? this.#guardrailInput ?? (isRunState(state) ? state._originalInput : undefined) ?? input);
    const config = isRecord(this.#runner.config) ? this.#runner.config : {};
    const agent = this.#ownAgent as Loose | undefined;
    const names = runNames(this.#runner, resumed ? input : isRunState(state) ? state : undefined, this.#options);
    // A nested run (a sub-agent) joins the trace of the run it runs in, whose id names that run: the trace names no
    // nested run, so each one gets an id of its own, as with tracing off.
    const traced = this.#parent !== undefined ? undefined : resumed ? resumedRunId(names.runId, input) : names.runId;
    const run = adapter.core.startRun({
      runId: this.#heldSessionId ?? traced ?? adapter.newRunId(),
      // A run chained to an earlier one's response (`previousResponseId`, the API keeping the conversation) continues its session.
      conversationId: this.#heldSessionId ?? names.conversationId ?? this.#chainedSession(),
      agentName: nonEmptyString(agent?.name),
      model: modelNameOf(agent, config),
      parent: this.#parent,
      continuesSession: this.#heldSessionId !== undefined,
      ...(resumed ? {} : { userMessage: () => userTurn(input).message, history: () => userTurn(sent).history }),
    });
    this.box.run = run;
    // The resumed run took the paused run's place in the session.
    if (run !== undefined && this.#heldSessionId !== undefined) adapter.core.closeSession(run.sessionId);
    if (run !== undefined && this.#resumed !== undefined) {
      // Loops, not callbacks: a closure here would share this function's context with the `userMessage` closures the
      // turn keeps, and so keep the record (and an abandoned run) alive.
      const held = this.#heldChain;
      if (heldLeadsTo(held, this.#resumed.agent)) {
        // The chain the paused run left open: each agent's link goes on, its next turn in the same sub-agent session, so
        // the calls it asked for are answered beside the step that made them.
        for (const entry of held) this.#continueHanded(this.#current() ?? run, entry);
      } else {
        // Not held here (paused in another process, or its state collected first): the chain reopens as it stood,
        // outermost first, each agent a sub-agent of the one before (the first, of this turn), so the innermost, where
        // the decisions are taken, sits where it sat, and a handoff back up the chain returns to an agent of it.
        closeHeldLinks(held);
        let index = 0;
        for (const agent of this.#resumed.chain) this.#handTo(this.#current() ?? run, agent, `${run.ids.turn_id}:agent:${++index}`);
      }
      this.#approvalDecisions(this.#current() ?? run, this.#resumed.decisions);
    }
    return run;
  }

  /** The session of the run whose last response this run continues (`previousResponseId`), when known here. */
  #chainedSession(): string | undefined {
    const previous = nonEmptyString(this.#options?.previousResponseId);
    return previous === undefined || this.#parent !== undefined ? undefined : this.#adapter.sessionAfter(previous);
  }

  /** The turn steps go to now: the innermost handed-to agent's, else the run's own. */
  #current(): AgentRun | undefined {
    return this.box.handedTo.at(-1)?.run ?? this.box.run;
  }

  /**
   * Control went to `to` through the call `toolCallId` of `from`: back to the
   * run's own agent or to one already in the chain, the sub-agents after it
   * end (they handed over: completed); any other agent is a new sub-agent of `from`.
   */
  #handTo(from: AgentRun, to: unknown, toolCallId: string): void {
    const chain = this.box.handedTo;
    const keep = chainKept(chain.map((entry) => entry.agent), to, this.#ownAgent);
    if (keep !== undefined) return endHandedTo(chain, keep, 'completed');
    const config = isRecord(this.#runner.config) ? this.#runner.config : {};
    const input = this.#input;
    const child = this.#adapter.core.startRun({
      runId: this.#adapter.newRunId(),
      agentName: nonEmptyString((to as Loose | undefined)?.name),
      model: modelNameOf(to as Loose | undefined, config),
      parent: { run: from, toolCallId },
      ...(isRunState(input) ? {} : { userMessage: () => userTurn(input).message }),
    });
    if (child !== undefined) chain.push({ agent: to, run: child });
  }

  /** An agent of the chain a paused run left open: its next turn, in its sub-agent session, under the same call. */
  #continueHanded(from: AgentRun, held: HandedTo): void {
    const config = isRecord(this.#runner.config) ? this.#runner.config : {};
    const child = this.#adapter.core.startRun({
      runId: held.run.runId,
      agentName: held.run.agentName,
      model: modelNameOf(held.agent as Loose | undefined, config),
      parent: { run: from, toolCallId: held.run.parent!.toolCallId },
      continuesSession: true,
      continuesSubagent: held.run,
    });
    if (child !== undefined) this.box.handedTo.push({ agent: held.agent, run: child });
  }

  /** A resumed run: the decisions taken on the calls that paused it. */
  #approvalDecisions(run: AgentRun, decisions: readonly Decision[]): void {
    this.#resumedOrder = decisions.map((decision) => decision.call.id);
    for (const { call, approved, fallback } of decisions) {
      // OpenAI's hosted MCP request: its answer is recorded from the request that carries it to OpenAI, and it runs nothing here.
      if (call.providerApproval === true) continue;
      run.approvalResponse(call.id, approved, call.name);
      if (approved) continue;
      // A rejected call never runs: its outcome is the text the model is told, seen in the next request.
      run.toolStart(call);
      this.#denied.set(call.id, { name: call.name, run, fallback });
    }
  }

  /** Records a call's end, or holds it while a call the SDK answers before it (a resumed run's, `#resumedOrder`) has not ended. */
  #endInOrder(id: string, end: () => void): void {
    if (!this.#resumedOrder.includes(id)) return end();
    this.#heldEnds.set(id, end);
    while (this.#resumedOrder.length > 0 && this.#heldEnds.has(this.#resumedOrder[0]!)) {
      const next = this.#resumedOrder.shift()!;
      const held = this.#heldEnds.get(next)!;
      this.#heldEnds.delete(next);
      held();
    }
  }

  /** The step is over (it hands off, the next request goes out, the run ends): the ends held are recorded, in order. */
  #releaseHeld(): void {
    const order = this.#resumedOrder;
    this.#resumedOrder = [];
    for (const id of order) {
      const held = this.#heldEnds.get(id);
      this.#heldEnds.delete(id);
      held?.();
    }
  }

  // ------------------------------------------------------------ lifecycle events

  event(type: string, args: readonly unknown[]): void {
    // `agent_start`'s third argument: the input of the agent's turn, as the SDK prepared it for the model.
    if (this.#settled || this.#turn(undefined, type === 'agent_start' ? args[2] : undefined) === undefined) return;
    const run = this.#current()!;
    switch (type) {
      case 'agent_start':
        this.#agent = args[1];
        prepareAgent(args[1]);
        return;
      case 'agent_handoff':
        this.#handoff(run, args[1], args[2]);
        return;
      case 'agent_tool_start':
        this.#toolStart(run, args[2], args[3]);
        return;
      case 'agent_tool_end':
        this.#toolEnd(run, args[2], args[3], args[4]);
        return;
      case 'agent_end':
        this.#finalOutput = args[2];
        return;
      default:
        return;
    }
  }

  #toolStart(run: AgentRun, tool: unknown, details: unknown): void {
    const call = toolCallOf(tool, details);
    if (call === undefined) return;
    this.#asked.delete(call.id);
    const span = functionSpan();
    if (span !== undefined) keepErrors(span);
    this.#tools.set(call.id, { name: call.name, run, span, claimed: false, reports: reportsFailure(tool) });
    if (span !== undefined) {
      this.#toolBySpan.set(span, call.id);
      bindCallSpan(span, this, call.id);
    }
    // An input guardrail refused the call before the SDK started it (it starts it only to answer with the refusal).
    const refused = this.#guarded.get(call.id);
    if (refused?.kind === 'input') guardrailDecided(run, call.id, refused);
    run.toolStart(call, this.#call?.ids.api_request_id);
  }

  #toolEnd(run: AgentRun, tool: unknown, result: unknown, details: unknown): void {
    const call = toolCallOf(tool, details);
    if (call === undefined) return;
    const open = this.#tools.get(call.id);
    this.#tools.delete(call.id);
    // The turn the call started in (a handoff in the same step comes after the tools run).
    if (open !== undefined) run = open.run;
    const guarded = this.#guarded.get(call.id);
    this.#guarded.delete(call.id);
    if (guarded !== undefined) return this.#guardedEnd(run, call, open !== undefined, result, guarded);
    const spanError = open?.span === undefined ? null : spanErrorOf(open.span);
    // The caller's signal stopped the run while the call ran (the call's `signal` is the run's): what the tool then
    // answered is not what it was asked for.
    const spanRecord = open?.span === undefined ? undefined : (open.span.error ?? noOpSpanErrors.get(open.span));
    if (spanRecord?.message === ESCAPED_TOOL_ERROR) this.#escapedInStep = true;
    const threw = this.#threw.get(call.id) ?? timedOut(tool, result) ?? this.#callerCancelled() ?? (spanError === null ? this.#siblingCancelled(result) : undefined);
    this.#threw.delete(call.id);
    const { id, name } = call;
    const ended = run;
    // An MCP result with `isError`, an editor's `status: 'failed'`: an ordinary output to the SDK; the answer said so.
    const reported = this.#reportedErrors.get(id);
    this.#reportedErrors.delete(id);
    if (threw !== undefined) this.#endInOrder(id, () => ended.toolEnd(id, { result, error: threw, name }));
    else if (spanError !== null) this.#endInOrder(id, () => ended.toolEnd(id, { result, error: spanError, name }));
    else if (result === SDK_TOOL_FAILURE_TEXT) this.#endInOrder(id, () => ended.toolEnd(id, { result, failed: true, name }));
    else if (reported !== undefined) this.#endInOrder(id, () => ended.toolEnd(id, { result, error: reportedToolError(reported), name }));
    else this.#endInOrder(id, () => ended.toolEnd(id, { result, name }));
  }

  /**
   * The end of a call a tool guardrail stopped or changed, as the SDK reports it: with the text the model is told (a
   * `rejectContent`), or with the guardrail's error, which fails the run (a `throwException`).
   * - An input guardrail: the tool never ran. Denied by that guardrail, with that text; a `throwException` is raised
   *   before the SDK starts the call, so the call starts here, as the model asked for it.
   * - An output guardrail: the tool ran and answered; the model gets the guardrail's text instead (ok, that text), or
   *   nothing (failed with the guardrail's error). The guardrail's decision says the output was withheld; the output
   *   itself is not recorded: the guardrail kept it from the model, and a recording should not hold what it withheld.
   */
  #guardedEnd(run: AgentRun, call: CallOfTool, started: boolean, result: unknown, verdict: ToolGuardrailVerdict): void {
    const { id, name } = call;
    const thrown = verdict.behavior === 'throwException' ? guardrailError(verdict) : undefined;
    if (verdict.kind === 'input') {
      const asked = this.#asked.get(id);
      this.#asked.delete(id);
      const ending = asked?.run ?? run;
      const text = thrown?.message ?? (typeof result === 'string' ? result : (verdict.message ?? ''));
      if (!started) return this.#endInOrder(id, () => deniedUnstarted({ call, run: ending, apiRequestId: asked?.apiRequestId ?? this.#call?.ids.api_request_id }, verdict, text));
      this.#endInOrder(id, () => ending.toolEnd(id, { name, denied: text }));
      return;
    }
    // The decision after the call's end: the tool ran and answered first.
    this.#endInOrder(id, () => {
      if (thrown !== undefined) run.toolEnd(id, { result: `${thrown.name}: ${thrown.message}`, error: thrown, name });
      else run.toolEnd(id, { result, name });
      guardrailDecided(run, id, verdict, thrown === undefined ? `${REPLACED_OUTPUT}${verdict.message ?? String(result)}` : thrown.message);
    });
  }

  #handoff(run: AgentRun, from: unknown, to: unknown): void {
    const target = nonEmptyString((to as Loose | undefined)?.name) ?? 'agent';
    const toolName = handoffToolName(from, target);
    const index = this.#lastCalls.findIndex((call) => call.name === toolName || (toolName === undefined && call.name.startsWith('transfer_to')));
    const call = index >= 0 ? this.#lastCalls.splice(index, 1)[0]! : { id: `handoff:${target}:${this.#adapter.newRunId()}`, name: toolName ?? `transfer_to_${target}`, arguments: '{}' };
    this.#asked.delete(call.id);
    run.toolStart(call, this.#call?.ids.api_request_id);
    this.#agent = to;
    prepareAgent(to);
    // The step's calls come before it (the SDK hands off once they ran): behind any of them not yet recorded (a rejected
    // call's text comes with the next request), the transfer and the change of agent wait, so that a handoff ending
    // the agent that made them ends it after them.
    if (this.#resumedOrder.length > 0 && !this.#resumedOrder.includes(call.id)) this.#resumedOrder.push(call.id);
    this.#endInOrder(call.id, () => {
      run.toolEnd(call.id, { result: JSON.stringify({ assistant: target }) });
      this.#handTo(run, to, call.id);
    });
  }

  guardrailInput(input: unknown): void {
    // The first turn's: a later one (input added to a running run) is no history of this turn's.
    if (this.box.run === undefined && this.#guardrailInput === undefined) this.#guardrailInput = input;
  }

  toolFrame(callId: string): ToolFrame | undefined {
    const tool = this.#tools.get(callId);
    return tool === undefined || this.#settled ? undefined : { run: tool.run, toolCallId: callId };
  }

  toolGuardrail(callId: string, verdict: ToolGuardrailVerdict): void {
    if (this.#settled || verdict.behavior === 'allow') return;
    // A call of this run's: asked for by its last response (an input guardrail runs before the call starts) or running.
    if (!this.#asked.has(callId) && !this.#tools.has(callId)) return;
    // The first that stops the call decides it: the SDK runs none after it.
    if (!this.#guarded.has(callId)) this.#guarded.set(callId, verdict);
  }

  toolThrew(callId: string, error: unknown): void {
    if (!this.#settled && this.#tools.has(callId)) this.#threw.set(callId, error);
  }

  reportingCall(): ((text: string) => void) | undefined {
    // The call runs in its own `function` span: that span, not the tool's name or arguments, says which call this is
    // (calls of one tool with the same arguments made at once included). A `callTool` (or an editor's method) the
    // program calls itself inside another tool is not one.
    const span = functionSpan();
    const callId = span === undefined ? undefined : this.#toolBySpan.get(span);
    if (callId === undefined || this.#settled || this.#tools.get(callId)?.reports !== true) return undefined;
    return (text) => {
      if (!this.#settled && this.#tools.has(callId)) this.#reportedErrors.set(callId, text);
    };
  }

  /** The tool call (or, failing that, the run itself) a run starting inside this one belongs to. */
  linkNested(): ParentLink | undefined {
    if (this.#turn() === undefined || this.#settled) return undefined;
    const run = this.#current()!;
    // Inside one of this run's function tools: that call, exactly.
    const frame = currentToolFrame();
    const span = currentSpan();
    let id = frame !== undefined && this.#tools.get(frame.toolCallId)?.run === frame.run ? frame.toolCallId : span === undefined ? undefined : this.#toolBySpan.get(span);
    if (id === undefined) {
      // Tracing off: the oldest open call no nested run has claimed (the runner starts them in order).
      for (const [callId, tool] of this.#tools) {
        if (!tool.claimed) {
          id = callId;
          break;
        }
      }
    }
    const tool = id === undefined ? undefined : this.#tools.get(id);
    if (id !== undefined && tool !== undefined) {
      tool.claimed = true;
      return { run: tool.run, toolCallId: id };
    }
    // A run started outside any tool call (a guardrail that runs an agent): a sub-agent of the run itself.
    this.#nestedRuns += 1;
    return { run, toolCallId: `${run.ids.turn_id}:run:${this.#nestedRuns}` };
  }

  // ------------------------------------------------------------ model attempts

  attempt(request: Loose, model: ModelInfo): AttemptObserver | undefined {
    if (this.#settled || this.#turn() === undefined) return undefined;
    const input = request.input;
    // The step before is over: what it held is recorded first (a handoff held behind a rejection changes the agent).
    this.#settleRefused(input);
    this.#settleDenied(input);
    this.#releaseHeld();
    const run = this.#current()!;
    this.#escapedInStep = false;
    // The answers to OpenAI's hosted MCP approval requests go to the provider in this request.
    for (const { answer, decidedBy } of providerApprovalAnswers(input, request.tools)) run.providerApprovalAnswer(answer, decidedBy);
    const retry = this.#call !== undefined && this.#lastFailed && input === this.#lastInput && !this.#call.settled;
    const call = retry ? this.#call! : run.newApiCall();
    this.#call = call;
    this.#lastInput = input;
    this.#delivered = undefined;
    this.#lastFailed = false;
    const config = isRecord(this.#runner.config) ? this.#runner.config : {};
    const requested = model.requestedName ?? modelNameOf(this.#agent as Loose | undefined, config) ?? modelNameOfObject(model.model);
    // Set per attempt: after a handoff the next agent may use another kind of model.
    run.provider = providerOfModel(model.model);
    call.attemptStart(() => ({
      messages: chatMessages(request.systemInstructions, input, request.tools),
      tools: offeredTools(request.tools, request.handoffs),
      model: requested,
      settings: requestSettings(request),
    }));
    return {
      call,
      response: (response) => {
        const parts = responseParts(response, requested, request.tools);
        // The runner runs only the calls its provider did not.
        const local = localCalls(parts.toolCalls);
        this.#lastCalls = local;
        this.#asked.clear();
        for (const asked of local) this.#asked.set(asked.id, { call: asked, run, apiRequestId: call.ids.api_request_id });
        if (!call.attemptOpen) return;
        call.attemptEnd(parts);
        this.#rejectedForTheRun(run, local, call.ids.api_request_id);
      },
      error: (error) => {
        this.#lastFailed = true;
        if (call.attemptOpen) call.attemptError(error, false, this.#delivered?.());
      },
      streamEnded: () => {
        if (!call.attemptOpen) return;
        const cancelled = this.#callerCancelled();
        call.attemptError(cancelled ?? Object.assign(new Error('the stream ended before the response did'), { name: 'StreamEnded' }), false, this.#delivered?.());
      },
      // A stream stopped or broken before its response keeps the text it had handed on, the answer the user saw.
      streaming: (delivered) => {
        this.#delivered = delivered;
      },
    };
  }

  /**
   * Calls of a tool rejected for the rest of the run (`state.reject(item, { alwaysReject: true })` on an earlier call):
   * the SDK answers them with the rejection without asking and without any event, so their outcome is recorded here.
   * It answers the step's calls in their order: the ends of the others are held until the calls before them ended.
   */
  #rejectedForTheRun(run: AgentRun, calls: readonly CallOfTool[], apiRequestId: string | undefined): void {
    const state = this.#input;
    if (!isRunState(state) || calls.length === 0) return;
    const transfers = transferNames(this.#agent);
    const tools = calls.filter((call) => !transfers.has(call.name));
    const rejected = approvalDecisions(state, tools.map((call) => ({ call, agent: this.#agent }))).filter((decision) => !decision.approved);
    if (rejected.length === 0) return;
    this.#resumedOrder = tools.map((call) => call.id);
    for (const { call, fallback } of rejected) {
      this.#asked.delete(call.id);
      run.toolStart(call, apiRequestId);
      this.#denied.set(call.id, { name: call.name, run, fallback });
    }
  }

  /**
   * Calls the SDK answered without running them (no tool event: arguments that are not JSON): the
   * function_call_result the model now gets is the error it was told.
   */
  #settleRefused(input: unknown): void {
    if (this.#asked.size === 0 || !Array.isArray(input)) return;
    for (const item of input) {
      const told = toldOfCall(item);
      const asked = told === undefined || this.#denied.has(told.id) ? undefined : this.#asked.get(told.id);
      if (told === undefined || asked === undefined) continue;
      const id = told.id;
      this.#asked.delete(id);
      const text = told.text ?? JSON.stringify((item as Loose).output ?? null);
      // Refused by an input guardrail run before approval (`toolExecution.preApprovalInputGuardrails`): no tool event.
      const verdict = this.#guarded.get(id);
      this.#guarded.delete(id);
      if (verdict?.kind === 'input') this.#endInOrder(id, () => deniedUnstarted(asked, verdict, text));
      else this.#endInOrder(id, () => asked.run.toolRefused(asked.call, { error: new ToolCallRefused(text), text }, asked.apiRequestId));
    }
    this.#asked.clear();
  }

  /** Rejected calls: the result the model now gets of each (a function's, or a local built-in tool's output item) is its outcome. */
  #settleDenied(input: unknown): void {
    if (this.#denied.size === 0 || !Array.isArray(input)) return;
    for (const item of input) {
      const told = toldOfCall(item);
      const denied = told === undefined ? undefined : this.#denied.get(told.id);
      if (told === undefined || denied === undefined) continue;
      const id = told.id;
      this.#denied.delete(id);
      this.#endInOrder(id, () => denied.run.toolEnd(id, { name: denied.name, denied: told.text ?? denied.fallback }));
    }
  }

  // ------------------------------------------------------------ the outcome

  returned(result: unknown): void {
    const streamed = isRecord(result) && typeof (result as { toStream?: unknown }).toStream === 'function' && result.completed instanceof Promise;
    if (!streamed) {
      this.#finish(result);
      return;
    }
    // Ended when the stream ends, before the caller's loop over it resumes
    // (a cancelled one: as it is cancelled): a program that shuts the plugin
    // down right after its loop (without awaiting `completed`) would
    // otherwise lose the turn's end. `completed` stays the fallback;
    // whichever comes first settles the run.
    onStreamEnd(result, {
      done: () => this.#finish(result),
      failed: (error) => this.failed(error),
      cancelled: () => this.#cancelled(result),
    });
    (result.completed as Promise<unknown>).then(
      () => this.#finish(result),
      (error: unknown) => this.failed(error),
    );
  }

  failed(error: unknown): void {
    const run = this.#settle(isRecord(error) ? error.state : undefined);
    if (run === undefined) return;
    const state = isRecord(error) ? error.state : undefined;
    const guardrails = guardrailsOf(state, isRecord(error) ? error.result : undefined);
    // The caller's own signal stopped it: the openai client reports that as its `APIUserAbortError`, not an AbortError.
    const status: RunStatus = isAbort(error) || this.#callerCancelled() !== undefined ? 'interrupted' : 'failed';
    // Calls an input guardrail's `throwException` stopped before any tool event (one run before approval).
    for (const [id, asked] of this.#asked) {
      const verdict = this.#guarded.get(id);
      if (verdict?.kind !== 'input' || verdict.behavior !== 'throwException') continue;
      this.#asked.delete(id);
      deniedUnstarted(asked, verdict, guardrailError(verdict).message);
    }
    // The model's calls the SDK threw on (a tool the agent does not have): each is what the run failed with.
    if (status === 'failed' && isRecord(error) && error.name === 'ModelBehaviorError') {
      const message = error instanceof Error ? error.message : String(error);
      for (const { call, run: asking, apiRequestId } of this.#asked.values()) asking.toolRefused(call, { error, text: message }, apiRequestId);
    }
    this.#asked.clear();
    this.#closeOpen(error);
    endHandedTo(this.box.handedTo, 0, status, undefined, error);
    run.end(status, undefined, error, { turnEnd: guardrailTurnEnd(guardrails) });
  }

  /**
   * The stream was cancelled: the caller's loop broke out of it (the SDK cancels the run), or the run's signal aborted.
   * The SDK has closed the stream, so the caller's loop is over, and winds the run down later: the turn ends now.
   */
  #cancelled(result: Loose): void {
    const run = this.#settle(result.state);
    if (run !== undefined) this.#endCancelled(run, guardrailsOf(result.state, undefined));
  }

  #finish(result: unknown): void {
    const run = this.#settle(isRecord(result) ? result.state : undefined);
    if (run === undefined) return;
    const record = isRecord(result) ? result : {};
    const state = record.state;
    const guardrails = guardrailsOf(state, undefined);
    const interruptions = Array.isArray(record.interruptions) ? record.interruptions : [];
    if (interruptions.length > 0) {
      const ids: string[] = [];
      // Asked by the agent whose turn it is (a handed-to agent asks in its own trajectory).
      const asking = this.#current() ?? run;
      for (const item of interruptions) {
        const call = approvalCall(item);
        if (call === undefined) continue;
        ids.push(call.id);
        asking.approvalRequest(call.id, `${call.name} needs approval`, typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments));
      }
      this.#closeOpen(undefined);
      const hold = run.ownsSession && isRunState(state);
      const paused = approvalPause(ids);
      // Held, the chain's links stay open too: the run that resumes the state continues each agent's trajectory.
      const chain = hold ? [...this.box.handedTo] : [];
      endHandedTo(this.box.handedTo, 0, paused.status, undefined, undefined, paused.turnEnd, hold);
      run.end(paused.status, undefined, undefined, { keepSessionOpen: hold, turnEnd: { ...guardrailTurnEnd(guardrails), ...paused.turnEnd } });
      if (hold) this.#adapter.hold(state as object, run.sessionId, chain);
      return;
    }
    if (record.cancelled === true) return this.#endCancelled(run, guardrails);
    this.#closeOpen(undefined);
    const last = run.ownsSession ? safeLastResponseId(record) : undefined;
    if (last !== undefined) this.#adapter.answeredIn(last, run.sessionId);
    const output = this.#finalOutput ?? (record.state === undefined ? undefined : safeFinalOutput(record));
    // The last agent's answer is the run's: each agent of the chain that led to it ends with it.
    const text = finalText(output);
    endHandedTo(this.box.handedTo, 0, 'completed', text);
    run.end('completed', text, undefined, { turnEnd: guardrailTurnEnd(guardrails) });
  }

  /** Settles the run, once: its turn to end, if it has one (opened now for a run that ends before its first event). */
  #settle(state: unknown): AgentRun | undefined {
    if (this.#settled) return undefined;
    const run = this.#turn(state);
    this.#settled = true;
    this.#adapter.settled(this);
    return run;
  }

  /** A cancelled stream's turn: interrupted, with what it left open failed with the abort. */
  #endCancelled(run: AgentRun, guardrails: readonly GuardrailRecord[]): void {
    this.#closeOpen(this.#callerCancelled() ?? Object.assign(new Error('the stream was cancelled'), { name: 'AbortError' }));
    endHandedTo(this.box.handedTo, 0, 'interrupted');
    run.end('interrupted', undefined, undefined, { turnEnd: guardrailTurnEnd(guardrails) });
  }

  /**
   * A call the SDK cancelled because another call of its step failed with an error that escapes to the run (it ends
   * it with the text 'aborted' and fails the run with the other call's error): its failure, as the SDK names it. Seen
   * by that other call's span, so not under a runner that makes none.
   */
  #siblingCancelled(result: unknown): Error | undefined {
    if (result !== SDK_CANCELLED_TEXT || !this.#escapedInStep) return undefined;
    return Object.assign(new Error('Cancelled because a sibling task failed.'), { name: 'SiblingCancellationError' });
  }

  /** The run's `signal` (`run(agent, input, { signal })`), when the caller aborted it: why, as an AbortError. */
  #callerCancelled(): Error | undefined {
    const signal = this.#options?.signal;
    if (!isAbortedSignal(signal)) return undefined;
    return abortErrorOf(signal.reason, 'the run was cancelled by its signal');
  }

  /** Ends what the run left open: a model attempt, tools that never returned, rejected calls never reported. */
  #closeOpen(error: unknown): void {
    const call = this.#call;
    if (call !== undefined && call.attemptOpen) call.attemptError(error ?? new Error('the run ended during the request'), true, this.#delivered?.());
    for (const [id, tool] of this.#tools) tool.run.toolEnd(id, { error: this.#threw.get(id) ?? error ?? new Error('the run ended before the tool did'), name: tool.name });
    this.#tools.clear();
    this.#threw.clear();
    this.#reportedErrors.clear();
    this.#guarded.clear();
    for (const [id, { name, run, fallback }] of this.#denied) this.#endInOrder(id, () => run.toolEnd(id, { name, denied: fallback }));
    this.#denied.clear();
    this.#releaseHeld();
  }
}

// ------------------------------------------------------------ helpers

/**
 * Ends the handed-to agents' turns after the first `keep`, innermost first (a sub-agent ends before the agent it belongs
 * to). `keepLinks`: the run paused, each agent's link stays open for the run that resumes it (`closeHeldLinks` if none).
 */
export function endHandedTo(chain: HandedTo[], keep: number, status: RunStatus, text?: string, error?: unknown, turnEndExtra?: Record<string, unknown>, keepLinks = false): void {
  while (chain.length > keep) chain.pop()!.run.end(status, text, error, { keepSessionOpen: keepLinks, ...(turnEndExtra === undefined ? {} : { turnEnd: turnEndExtra }) });
}

/**
 * The chain a paused run held leads to the agent whose turn the state says it is. Known here, it is the chain, whatever
 * a handoff's input filter left of the state's handoff items.
 */
function heldLeadsTo(held: readonly HandedTo[], current: unknown): boolean {
  return held.length > 0 && sameAgent(held.at(-1)!.agent, current);
}

/** Closes the links a paused chain kept open that no run continues, innermost first. */
export function closeHeldLinks(chain: readonly HandedTo[]): void {
  for (let i = chain.length - 1; i >= 0; i--) chain[i]!.run.closeLink();
}

/**
 * How many agents of a handoff chain stay when control goes to `to`: none
 * for the run's own agent, up to `to` for an agent of the chain; undefined
 * when `to` is new to it (it joins the chain).
 */
function chainKept(chain: readonly unknown[], to: unknown, own: unknown): number | undefined {
  if (sameAgent(to, own)) return 0;
  const index = chain.findIndex((agent) => sameAgent(agent, to));
  return index >= 0 ? index + 1 : undefined;
}

/**
 * The handoff chain a paused run stood in, outermost first: its handoffs
 * replayed from the state's generated items (the SDK keeps the run's
 * `handoff_output_item`s, with their target agents, in the state and its
 * string form). It must end with the agent whose turn it is; where it does
 * not (a handoff's input filter dropped the items), that agent alone.
 */
function pausedChain(state: Loose, own: unknown, current: unknown): unknown[] {
  if (sameAgent(current, own)) return [];
  let chain: unknown[] = [];
  const items: unknown[] = Array.isArray(state._generatedItems) ? state._generatedItems : [];
  for (const item of items) {
    if (!isRecord(item) || item.type !== 'handoff_output_item' || !isRecord(item.targetAgent)) continue;
    const keep = chainKept(chain, item.targetAgent, own);
    chain = keep === undefined ? [...chain, item.targetAgent] : chain.slice(0, keep);
  }
  return chain.length > 0 && sameAgent(chain.at(-1), current) ? chain : [current];
}

/**
 * A decision on a call. `fallback`: for a rejected call, what the model is told as far as the state says it (its
 * rejection message, else the SDK's default), for a run that ends before the next request shows the exact text.
 */
interface Decision {
  readonly call: CallOfTool;
  readonly approved: boolean;
  readonly fallback: string;
}

/** A call a decision is read for, with the agent that asked; `local`: a local built-in tool's (shell, apply_patch, computer). */
interface Pending {
  readonly call: CallOfTool;
  readonly agent: unknown;
  readonly local?: boolean;
}

/** The calls a paused state waits for, with the agent that asked. */
function pendingCalls(state: Loose & { getInterruptions(): unknown[] }): Pending[] {
  const pending: Pending[] = [];
  for (const item of state.getInterruptions()) {
    const call = approvalCall(item);
    const raw = isRecord(item) && isRecord(item.rawItem) ? item.rawItem : undefined;
    if (call !== undefined) pending.push({ call, agent: (item as Loose).agent, local: raw?.type !== 'function_call' && runnerCallOf(raw) !== undefined });
  }
  return pending;
}

/**
 * The decisions the state holds on `calls` (a call not decided is left out: the SDK asks for it), read as the SDK reads
 * them: per agent, where the call's agent is known.
 */
function approvalDecisions(state: Loose, calls: readonly Pending[]): Decision[] {
  const context = state._context as
    | {
        isToolApproved?: (approval: { toolName: string; callId: string; agent?: unknown; functionTool?: boolean }) => boolean | undefined;
        getRejectionMessage?: (toolName: string, callId: string, options?: { functionTool?: boolean }) => string | undefined;
      }
    | undefined;
  const decisions: Decision[] = [];
  for (const { call, agent, local } of calls) {
    // The SDK keeps a local built-in tool's decisions apart from function tools', not per agent.
    const approved = context?.isToolApproved?.(local === true ? { toolName: call.name, callId: call.id, functionTool: false } : { toolName: call.name, callId: call.id, ...(isRecord(agent) ? { agent } : {}) });
    if (approved === undefined) continue;
    const message = approved ? undefined : context?.getRejectionMessage?.(call.name, call.id, local === true ? { functionTool: false } : {});
    decisions.push({ call, approved, fallback: typeof message === 'string' ? message : SDK_REJECTION_TEXT });
  }
  return decisions;
}

/** The names of the transfer calls an agent's handoffs offer. */
function transferNames(agent: unknown): Set<string> {
  const names = new Set<string>();
  const handoffs = isRecord(agent) && Array.isArray(agent.handoffs) ? agent.handoffs : [];
  for (const candidate of handoffs) {
    try {
      const name = nonEmptyString((getHandoff(candidate as never) as unknown as Loose).toolName);
      if (name !== undefined) names.add(name);
    } catch {
      // An entry the SDK cannot read offers no transfer we could match.
    }
  }
  return names;
}

/** The same agent: the object, or one of the same name (a clone). */
function sameAgent(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const name = nonEmptyString((a as Loose | undefined)?.name);
  return name !== undefined && name === nonEmptyString((b as Loose | undefined)?.name);
}

/**
 * What names a run's session: the runner's `groupId` (or the trace's), else
 * the run's server-side `conversationId`, else the id of its `session`
 * memory, else its trace id. Read from the state a run resumes or ended
 * with, else from the trace the caller runs in.
 */
export function runNames(runner: Loose, state: Loose | undefined, options: Loose | undefined): { runId?: string; conversationId?: string } {
  const trace = traceOf(state);
  const config = isRecord(runner.config) ? runner.config : {};
  return {
    runId: nonEmptyString(trace?.traceId),
    conversationId: nonEmptyString(config.groupId) ?? nonEmptyString(trace?.groupId) ?? nonEmptyString(options?.conversationId) ?? memorySessionId(options?.session),
  };
}

/**
 * The id of a run's `session` memory, where it keeps one to read without a
 * call: `MemorySession.sessionId`, `OpenAIConversationsSession.sessionId`
 * (its conversation id, set once the run has read its items). Never
 * `getSessionId()`: on a Conversations session that creates a conversation
 * on the server, and telemetry makes no API call.
 */
function memorySessionId(session: unknown): string | undefined {
  if (!isRecord(session)) return undefined;
  try {
    return nonEmptyString(session.sessionId);
  } catch {
    return undefined;
  }
}

/**
 * The run id of a run resuming a paused state whose session this adapter
 * does not hold (paused in another process, or its state collected first):
 * the paused run's trace id and the first call it answers. The trace id
 * alone would name the paused run's session again, and a second trajectory
 * of that name replaces the first one's file when another process wrote it.
 */
function resumedRunId(traceId: string | undefined, state: Loose & { getInterruptions(): unknown[] }): string | undefined {
  if (traceId === undefined) return undefined;
  let callId: string | undefined;
  try {
    callId = approvalCall(state.getInterruptions()[0])?.id;
  } catch {
    callId = undefined;
  }
  return callId === undefined ? undefined : `${traceId}:resume:${callId}`;
}

function traceOf(state: Loose | undefined): Loose | undefined {
  let trace: unknown = state?._trace;
  if (!isRecord(trace)) {
    try {
      trace = getCurrentTrace();
    } catch {
      return undefined;
    }
  }
  // A disabled trace has the id "no-op": not a name for a session.
  return isRecord(trace) && trace.traceId !== 'no-op' ? trace : undefined;
}

/** The id of the SDK's spans with tracing off (`NoopSpan`). */
const NO_OP = 'no-op';

/** The span the caller runs in; none with tracing off (the SDK's no-op span names nothing). */
function currentSpan(): SpanLike | undefined {
  const span = sdkCurrentSpan() as SpanLike | null;
  return span === null || span.spanId === NO_OP ? undefined : span;
}

/** The errors the SDK set on a call's no-op `function` span, which keeps none itself. */
const noOpSpanErrors = new WeakMap<object, NonNullable<SpanLike['error']>>();
const keptNoOpSpans = new WeakSet<object>();

/**
 * The SDK's `function` span of the tool call the caller runs in (from its `agent_tool_start` on), tracing on or off:
 * the SDK makes one for each call, a no-op one with tracing off (`setTracingDisabled`,
 * `OPENAI_AGENTS_DISABLE_TRACING`). A runner whose own config disables tracing (`tracingDisabled: true`) makes none.
 */
function functionSpan(): SpanLike | undefined {
  const span = sdkCurrentSpan();
  return isRecord(span) && isRecord(span.spanData) && span.spanData.type === 'function' ? (span as unknown as SpanLike) : undefined;
}

/**
 * The SDK marks a call's `function` span when the call failed but the run goes on (a tool's `errorFunction`, its
 * default one included, told the model) and before it ends a call it fails after the tool returned (a
 * `customDataExtractor` that threw). A real span keeps the error; a no-op one drops it, so that one span keeps it here.
 */
function keepErrors(span: SpanLike): void {
  const record = span as unknown as Loose;
  const setError = record.setError;
  if (span.spanId !== NO_OP || typeof setError !== 'function' || keptNoOpSpans.has(span)) return;
  keptNoOpSpans.add(span);
  try {
    Object.defineProperty(span, 'setError', {
      configurable: true,
      writable: true,
      value: function setError_(this: unknown, error: NonNullable<SpanLike['error']>): unknown {
        // As a real span keeps it: the last one set.
        if (isRecord(error)) noOpSpanErrors.set(span, error);
        return setError.call(this, error);
      },
    });
  } catch {
    // A span that cannot take it: the call is read as before.
  }
}

/** The error the SDK set on a call's `function` span, if it set one: the call failed. */
function spanErrorOf(span: SpanLike): Error | null {
  const error = span.error ?? noOpSpanErrors.get(span) ?? null;
  if (error === null) return null;
  const detail = error.data?.error;
  return reportedToolError(typeof detail === 'string' && detail !== '' ? detail : error.message);
}

/** The model name an agent asks for: its own string model, else the runner's. */
function modelNameOf(agent: Loose | undefined, config: Loose): string | undefined {
  return nonEmptyString(agent?.model) ?? nonEmptyString(config.model) ?? (isRecord(agent?.model) ? modelNameOfObject(agent!.model as object) : isRecord(config.model) ? modelNameOfObject(config.model) : undefined);
}

/** A `Model` object's model name, where it keeps one (`OpenAIResponsesModel._model`, or a `model`/`modelId` field). */
function modelNameOfObject(model: object): string | undefined {
  const record = model as Loose;
  return nonEmptyString(record.model) ?? nonEmptyString(record.modelId) ?? nonEmptyString(record._model);
}

/** `openai` for the SDK's own OpenAI models (Responses, Chat Completions, Responses over WebSocket); unknown for others. */
function providerOfModel(model: object): string | undefined {
  const name = (model as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name.startsWith('OpenAI') && name.endsWith('Model') ? 'openai' : undefined;
}

function toolCallOf(tool: unknown, details: unknown): CallOfTool | undefined {
  const call = isRecord(details) && isRecord(details.toolCall) ? details.toolCall : undefined;
  if (call === undefined) return undefined;
  const id = nonEmptyString(call.callId) ?? nonEmptyString(call.call_id) ?? nonEmptyString(call.id);
  if (id === undefined) return undefined;
  // A local built-in tool's call (shell, apply_patch, computer) names no tool and has no `arguments`: what it asked is its action.
  const local = runnerCallOf(call, [tool]);
  if (local !== undefined && call.type !== 'function_call') return { ...local, id };
  return { id, name: nonEmptyString(call.name) ?? nonEmptyString((tool as Loose | undefined)?.name) ?? 'tool', arguments: call.arguments ?? '{}' };
}

function approvalCall(item: unknown): CallOfTool | undefined {
  if (!isRecord(item)) return undefined;
  const hosted = hostedApprovalOf(item);
  if (hosted !== undefined) return hosted;
  const raw = isRecord(item.rawItem) ? item.rawItem : {};
  const id = nonEmptyString(raw.callId) ?? nonEmptyString(raw.call_id) ?? nonEmptyString(raw.id);
  if (id === undefined) return undefined;
  const name = nonEmptyString(item.toolName) ?? nonEmptyString(raw.name) ?? 'tool';
  // A local built-in tool's call (a `shellTool({ needsApproval })`): what it asks is its action, not `arguments`.
  const local = raw.type === 'function_call' ? undefined : runnerCallOf(raw);
  return { id, name, arguments: local?.arguments ?? raw.arguments ?? '{}' };
}

function handoffToolName(from: unknown, target: string): string | undefined {
  const handoffs = isRecord(from) && Array.isArray(from.handoffs) ? from.handoffs : [];
  for (const candidate of handoffs) {
    try {
      const handoff = getHandoff(candidate as never) as unknown as Loose;
      if (handoff.agentName === target) return nonEmptyString(handoff.toolName);
    } catch {
      // An entry the SDK cannot read is not the one we look for.
    }
  }
  return undefined;
}

/**
 * A call that timed out, read from what the SDK answers for it: its own timeout text (`timeoutBehavior`
 * 'error_as_result' without a `timeoutErrorFunction`) or the text of its `ToolTimeoutError` ('raise_exception'). A
 * `timeoutErrorFunction`'s answer is reported by the function (patch.ts).
 */
function timedOut(tool: unknown, result: unknown): Error | undefined {
  if (!isRecord(tool) || typeof result !== 'string' || typeof tool.timeoutMs !== 'number' || typeof tool.name !== 'string') return undefined;
  const error = new ToolTimeoutError({ toolName: tool.name, timeoutMs: tool.timeoutMs });
  return result === error.message || result === String(error) ? error : undefined;
}

/**
 * A tool guardrail's decision on a call: a `deny` decided by the guardrail (`tool input guardrail: <name>`), with what
 * the model was told (`text`; a `rejectContent`'s message when not given). No approval request: the SDK asked nobody.
 */
function guardrailDecided(run: AgentRun, callId: string, verdict: ToolGuardrailVerdict, text = verdict.message): void {
  run.approvalResponse(callId, false, text, `tool ${verdict.kind} guardrail: ${verdict.name}`);
}

/**
 * A call an input guardrail refused that the SDK never started (no `agent_tool_start`): started here as the model asked
 * for it, and denied by the guardrail with `text`.
 */
function deniedUnstarted(asked: { call: CallOfTool; run: AgentRun; apiRequestId: string | undefined }, verdict: ToolGuardrailVerdict, text: string): void {
  guardrailDecided(asked.run, asked.call.id, verdict, text);
  asked.run.toolStart(asked.call, asked.apiRequestId);
  asked.run.toolEnd(asked.call.id, { name: asked.call.name, denied: text });
}

/** The error the SDK fails the run with for a guardrail's `throwException` (its `Tool… guardrail triggered: <name>`). */
function guardrailError(verdict: ToolGuardrailVerdict): Error {
  const kind = verdict.kind === 'input' ? 'Input' : 'Output';
  return Object.assign(new Error(`Tool ${verdict.kind} guardrail triggered: ${verdict.name}`), { name: `Tool${kind}GuardrailTripwireTriggered` });
}

function guardrailsOf(state: unknown, tripped: unknown): GuardrailRecord[] {
  const record = isRecord(state) ? state : {};
  return guardrailRecords([
    { results: record._inputGuardrailResults, kind: 'input' },
    { results: record._outputGuardrailResults, kind: 'output' },
    { results: tripped, kind: 'input' },
  ]);
}

function isAbort(error: unknown): boolean {
  return isRecord(error) && error.name === 'AbortError';
}

/** The id of a run's last response (`result.lastResponseId`, what a next run passes as `previousResponseId`). */
function safeLastResponseId(result: Loose): string | undefined {
  try {
    return nonEmptyString(result.lastResponseId);
  } catch {
    return undefined;
  }
}

function safeFinalOutput(result: Loose): unknown {
  try {
    return result.finalOutput;
  } catch {
    return undefined;
  }
}
