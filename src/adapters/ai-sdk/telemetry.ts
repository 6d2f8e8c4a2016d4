/**
 * The AI SDK `Telemetry` integration: run, step, model-call and tool events
 * become hooks, and the two execution wrappers the SDK offers integrations do
 * the rest. `executeLanguageModelCall` runs once per provider attempt, inside
 * the SDK's retry loop, so every attempt is seen on every runtime (the
 * `ai:telemetry` tracing channel is not needed, and on Bun it drops
 * messages). `executeTool` runs the tool's `execute` inside our tool frame,
 * so a `generateText`/`streamText`/`ToolLoopAgent` run started by the tool
 * becomes that tool call's sub-agent. A run started inside a step but outside
 * its tools (the model call an `experimental_repairToolCall` function makes)
 * is found by the step's span of that tracing channel (`./step-context.ts`,
 * which binds a store to it and reads no messages): a sub-agent of the run,
 * under that step.
 *
 * Sessions outlive a run in two cases, each a bounded hold
 * (`SessionHolds`): the session was named by the host (`sessionId`) or the
 * framework (its next run is the next turn), or the run stopped to ask for
 * a tool approval (the run that carries the answer resumes that session, so
 * the request, the answer and what the tool did are one trajectory). A
 * sub-agent run that stopped for an approval keeps its link open the same
 * way, until the tool that ran it runs it again with the answers (the
 * docs' manual approval flow, inside the tool: one sub-agent trajectory)
 * or returns.
 *
 * @module
 */

import { registerObjectCall, runAttempt } from './attempt.ts';
import { claimAgentId } from './agent-id.ts';
import { exitReasonOf } from './stopped-by.ts';
import {
  approvalAnswers,
  approvalDecisions,
  approvalRequests,
  chatMessages,
  noteSentCall,
  offeredTools,
  refusedCalls,
  responseOfCallEnd,
  toldToolError,
  deferredResultTools,
  NO_DEFERRED_TOOLS,
  responseOfObjectStep,
  toolChoiceOf,
  toolOutputText,
  toolResults,
  unansweredCalls,
  type ApprovalAnswer,
  type ProgramToolResult,
  type SentCall,
} from './messages.ts';
import type { AdapterCore, AgentRun, ApiCall, RequestParts, ResponseParts } from '../core/run.ts';
import type { SentRequest } from '../core/sent-settings.ts';
import { MAX_HELD_SESSIONS, MAX_PENDING_APPROVALS, PausedSubagents, SessionHolds } from '../core/holds.ts';
import { APPROVAL_REQUIRED, approvalPause } from '../core/pause.ts';
import { currentToolFrame, runInToolFrame } from '../core/context.ts';
import { enclosingStep } from './step-context.ts';
import { abortErrorOf, lastUserMessage, linkApprovedCalls, reportedToolError, type CallOfTool, type ChatMessage } from '../core/shapes.ts';
import { mcpErrorText } from '../mcp/meta.ts';
import { toJson } from '../../shared/json.ts';
import { isRecord } from '../../shared/record.ts';
import { isNativeInteger } from '../../formats/native-text.ts';
import { nonEmptyString } from '../../shared/text.ts';
import { completionServedBy } from '../core/upstream.ts';
import { SETTING_NAMES, sentRequestOf, unsupportedSettings } from './sent.ts';
import { StreamedSoFar } from './streamed.ts';
import { judgmentRequest, responseOfJudgment, stateContent, unansweredJudgment } from './judgments.ts';
import { hidesInputs, hidesOutputs, INPUTS_LEFT_OUT, leftOutMessages, OUTPUTS_LEFT_OUT, withOutputsLeftOut } from './left-out.ts';

type Event = Record<string, unknown>;

/**
 * Runs open at once past which the least recently active one is ended as
 * abandoned: a `streamText` whose stream nobody reads to the end never
 * reports its end, and would otherwise be kept forever.
 */
export const MAX_OPEN_RUNS = 1_000;

/** A call waiting for its answer: an approval request, or a tool call the program answers (no `execute`). */
interface PendingApproval {
  readonly sessionId: string;
  readonly toolName: string;
  readonly input: unknown;
  readonly apiRequestId: string | undefined;
}

interface Held {
  /** The session is a named conversation: it stays open after the run that resumes it too. */
  readonly keeps: boolean;
}

interface RunState {
  readonly run: AgentRun;
  call: ApiCall | undefined;
  /** The session outlives this run (a named conversation). */
  readonly keepsSession: boolean;
  /** The tool calls whose approval this run asked for and nobody answered in it, by the ids the trajectory gives them. */
  readonly awaiting: string[];
  /** The API call that asked for each tool call this run resumes after its approval. */
  resumedCalls: Map<string, string> | undefined;
  /** How many messages the current model call's request carries. */
  callMessages: number;
  /** How many model calls the run has made (a retry is the same call): a later one continues the run (`leftOutMessages`). */
  modelCalls: number;
  /** The run keeps its outputs from telemetry (`left-out.ts`): what a stream delivered is not written either. */
  readonly hidesOutputs: boolean;
  /** The tool calls of the current model call's last attempt as the model sent them, by id (before the SDK parses them). */
  sent: Map<string, SentCall> | undefined;
  /** The names of the current model call's provider tools whose results may come in a later response (`deferredResultTools`). */
  deferred: ReadonlySet<string>;
  /**
   * The upstream a router named in the current model call's last attempt as the server sent it (`withSentCalls`): a
   * generated answer's body, or a stream's raw chunks (`includeRawChunks`). The call-end event carries neither.
   */
  served: string | undefined;
  /** The provider's approval requests this run approved, until the call the provider runs for each comes back. */
  providerApproved: CallOfTool[];
  /** `generateText`'s `output` (Output.object, ...): the SDK parses the answer with it after the run's end event. */
  readonly output: OutputSpec | undefined;
  /** The last attempt's `structuredOutputText` (the final answer apart from commentary), the text `output` parses. */
  structuredText: string | undefined;
  /** The current step's `toolChoice` (the run's, or what `prepareStep` gave the step). */
  toolChoice: unknown;
  /** What the provider package said of the current model call's last attempt: the body it sent, the settings it warned it dropped. */
  sentRequest: SentRequest | undefined;
  /** What the current model call's last attempt, when streamed, has delivered so far: its text, an error event. */
  streamed: StreamedSoFar | undefined;
  /** The run's tools' `toModelOutput`, by tool name: what the model is told of a call's result. */
  readonly modelOutputs: ReadonlyMap<string, ToModelOutput>;
}

/** A tool's `toModelOutput`, as the SDK calls it on the tool's result before it tells the model. */
type ToModelOutput = (options: { toolCallId: string; input: unknown; output: unknown }) => unknown;

const NO_MODEL_OUTPUTS: ReadonlyMap<string, ToModelOutput> = new Map();

/** The tools of a run (its `tools` set) that tell the model something else than their result. */
function modelOutputsOf(tools: unknown): ReadonlyMap<string, ToModelOutput> {
  if (!isRecord(tools)) return NO_MODEL_OUTPUTS;
  let out: Map<string, ToModelOutput> | undefined;
  for (const [name, tool] of Object.entries(tools)) {
    const toModelOutput = isRecord(tool) ? tool.toModelOutput : undefined;
    if (typeof toModelOutput === 'function') (out ??= new Map()).set(name, toModelOutput.bind(tool) as ToModelOutput);
  }
  return out ?? NO_MODEL_OUTPUTS;
}

/** The part of the SDK's `Output` the adapter reads: the parser the SDK runs on the run's answer. */
interface OutputSpec {
  readonly responseFormat?: unknown;
  parseCompleteOutput(options: { text: string }, context: Record<string, unknown>): PromiseLike<unknown>;
}

function outputSpec(value: unknown): OutputSpec | undefined {
  return typeof value === 'object' && value !== null && typeof (value as { parseCompleteOutput?: unknown }).parseCompleteOutput === 'function' ? (value as OutputSpec) : undefined;
}

/** The SDK's own test for parsing a generateText run's output: it answered, and did not stop to call tools. */
function answersWithOutput(event: Event): boolean {
  const text = typeof event.text === 'string' ? event.text : '';
  return event.finishReason === 'stop' || (event.finishReason !== 'tool-calls' && text.length > 0);
}

/**
 * Whether `output` rejects the run's answer, asked of the parser the SDK will run on it next: `generateText` reports
 * its end before it parses, and a rejected answer reaches telemetry as nothing but an `onError` of a run already
 * ended. The error is the one the program gets (`NoObjectGeneratedError`); `undefined` when it parses.
 */
async function outputRejects(output: OutputSpec, event: Event, structuredText: string | undefined): Promise<unknown> {
  try {
    const format = (await output.responseFormat) as { type?: unknown } | undefined;
    const text = typeof event.text === 'string' ? event.text : '';
    await output.parseCompleteOutput({ text: format?.type === 'json' ? (structuredText ?? text) : text }, { response: event.response, usage: event.usage, finishReason: event.finishReason });
    return undefined;
  } catch (error) {
    return error ?? new Error('the output did not parse');
  }
}

/**
 * A `NoObjectGeneratedError` for a model call that did answer, with no text (`generateObject` throws it before its
 * step's end event): the tokens it carries are the call's, as the step's end would have given them.
 */
function unansweredObjectStep(error: unknown): Event | undefined {
  if (typeof error !== 'object' || error === null || (error as { name?: unknown }).name !== 'AI_NoObjectGeneratedError') return undefined;
  const { usage, response, finishReason } = error as Event;
  if (typeof usage !== 'object' || usage === null) return undefined;
  return { usage, response, finishReason, objectText: '' };
}

const OPERATIONS = new Set(['ai.generateText', 'ai.streamText', 'ai.generateObject', 'ai.streamObject', 'ai.decide', 'ai.extract']);
const CONVERSATION_KEYS = ['sessionId', 'session_id', 'conversationId', 'conversation_id', 'threadId', 'thread_id'];


/** A session id the call let telemetry see (`telemetry.includeRuntimeContext`). */
function conversationIdOf(event: Event): string | undefined {
  const context = event.runtimeContext;
  if (typeof context !== 'object' || context === null) return undefined;
  for (const key of CONVERSATION_KEYS) {
    const id = nonEmptyString((context as Record<string, unknown>)[key]);
    if (id !== undefined) return id;
  }
  return undefined;
}

const isInteger = (value: unknown): boolean => typeof value === 'number' && isNativeInteger(value);
const isCount = (value: unknown): boolean => isInteger(value) && (value as number) >= 0;

/**
 * The call's settings under the names a request's generation parameters have in Chat Completions, the spelling every
 * adapter's request uses and the exporters read (`PARAM_FIELDS`, formats/request-codecs.ts): the SDK's `topP` and
 * `maxOutputTokens` under their own names were read as nothing. A cap or seed that is not an integer as native takes one
 * is left out: the request's decode refuses the whole request for it (`requestFieldsTyped`).
 */
const VALID: Readonly<Record<string, (value: unknown) => boolean>> = {
  temperature: (value) => typeof value === 'number',
  topP: (value) => typeof value === 'number',
  maxOutputTokens: isCount,
  seed: isInteger,
};

/** `toolChoice`: the step's (the model call's own event does not carry it). `laterCall`: not the run's first model call. */
function requestOf(event: Event, toolChoice: unknown, laterCall: boolean): () => RequestParts {
  return () => {
    const settings: Record<string, unknown> = {};
    for (const [sdk, request] of SETTING_NAMES) if (VALID[sdk]!(event[sdk])) settings[request] = event[sdk];
    const choice = toolChoiceOf(toolChoice);
    if (choice !== undefined) settings.tool_choice = choice;
    return {
      messages: hidesInputs(event) ? leftOutMessages(laterCall) : chatMessages(event.instructions, event.messages),
      tools: offeredTools(event.tools),
      model: nonEmptyString(event.modelId),
      // A step `prepareStep` gave another provider's model goes to that provider, not the run's.
      provider: nonEmptyString(event.provider),
      settings,
    };
  };
}

/** The conversation before the run's last user message. */
function historyOf(instructions: unknown, messages: unknown): ChatMessage[] {
  const all = chatMessages(instructions, messages);
  for (let i = all.length - 1; i >= 0; i--) if (all[i]!.role === 'user') return all.slice(0, i);
  return all;
}

/**
 * A streamed attempt the SDK gave up after an error came down its stream,
 * to retry the call (`streamRetries`, or `onError` returning `{ retry: true }`).
 * The error reaches the caller's `onError`, not telemetry: this says what
 * is known.
 */
class StreamRetried extends Error {
  override name = 'StreamRetried';
  readonly isRetryable = true;
  constructor() {
    super('the response stream reported an error and the SDK retried the call');
  }
}

/**
 * A model call a steering message sent with `interrupt: true` cancelled
 * before it produced output (ai 7.0.177 and later): the SDK makes the call
 * again in the same step, with the message. Nothing failed; the attempt is
 * ended with this so the trajectory says why it stopped.
 */
class SteeringInterrupted extends Error {
  override name = 'SteeringInterrupted';
  readonly isRetryable = false;
  constructor() {
    super('a steering message interrupted the model call before it produced output; the SDK made the call again with the message');
  }
}

/**
 * The call starting now is a steering interrupt's redo of the one before:
 * its request adds user messages to the earlier one's. A retry (`maxRetries`,
 * `streamRetries`) sends the same messages again.
 */
function addsSteeringMessages(before: number, messages: unknown): boolean {
  if (!Array.isArray(messages) || messages.length <= before) return false;
  return messages.slice(before).every((message) => typeof message === 'object' && message !== null && (message as { role?: unknown }).role === 'user');
}

/**
 * An abort, by the names the SDK itself takes for one (a signal's
 * AbortError, a `timeout`'s TimeoutError, a cancelled response): streamText
 * reports such an error as `onAbort`, generateText as `onError`.
 */
function isAbortError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const name = (error as { name?: unknown }).name;
  return name === 'AbortError' || name === 'TimeoutError' || name === 'ResponseAborted';
}

/**
 * The attempt's `result` with its tool calls noted in `state.sent` as the model sent them: `doGenerate`'s content,
 * or the parts of `doStream`'s stream as they pass (the SDK parses each call, and repairs it, as it comes). The SDK
 * reports a call to telemetry only as it will run it: repaired or refined, its input is no longer the model's. The
 * upstream a router names in what the server sent is noted too (`state.served`), where a package (such as
 * @ai-sdk/openai-compatible) does not hand it on in its provider metadata.
 */
function withSentCalls<T>(state: RunState, result: T): T {
  const sent = new Map<string, SentCall>();
  state.sent = sent;
  state.served = undefined;
  state.sentRequest = undefined;
  state.streamed = undefined;
  if (typeof result !== 'object' || result === null) return result;
  const { content, stream, response, request, warnings } = result as { content?: unknown; stream?: unknown; response?: { body?: unknown }; request?: { body?: unknown }; warnings?: unknown };
  const sentRequest = sentRequestOf({ request, warnings });
  state.sentRequest = sentRequest;
  if (Array.isArray(content)) {
    for (const part of content) noteSentCall(sent, part);
    state.served = completionServedBy(response?.body);
    return result;
  }
  if (typeof (stream as ReadableStream | undefined)?.pipeThrough !== 'function') return result;
  const streamed = new StreamedSoFar();
  state.streamed = streamed;
  const noted = (stream as ReadableStream).pipeThrough(
    new TransformStream({
      transform(part, controller) {
        noteSentCall(sent, part);
        streamed.note(part);
        // A stream's warnings come in its first part.
        if ((part as { type?: unknown } | undefined)?.type === 'stream-start') sentRequest.unsupported.push(...unsupportedSettings((part as { warnings?: unknown }).warnings));
        // Only with `includeRawChunks`: each chunk as the server sent it.
        if ((part as { type?: unknown } | undefined)?.type === 'raw') state.served ??= completionServedBy((part as { rawValue?: unknown }).rawValue);
        controller.enqueue(part);
      },
    }),
  );
  return { ...result, stream: noted };
}

/** What the current attempt's stream delivered before it stopped, as the run may record it (`left-out.ts`). */
function deliveredSoFar(state: RunState): ResponseParts | undefined {
  const delivered = state.streamed?.delivered();
  return delivered === undefined || !state.hidesOutputs ? delivered : withOutputsLeftOut(delivered);
}

/** What the providers tell the model for a denied call (the reason, else a fixed sentence). */
function deniedText(reason: string | undefined): string {
  return reason ?? 'Tool call execution denied.';
}

/** The integration object `registerTelemetry` takes; `dispose()` makes it inert. */
export class AiSdkTelemetry {
  readonly #core: AdapterCore;
  /** Open runs by `callId`, least recently active first. */
  readonly #runs = new Map<string, RunState>();
  readonly #holds: SessionHolds<Held>;
  /** Approval requests waiting for their answer, by approval id, oldest first. */
  readonly #approvals = new Map<string, PendingApproval>();
  /**
   * Tool calls a run ended with for the program to answer (tools without `execute`: a chat's client-side tools), by
   * tool call id, oldest first. A later run of the same session that carries the answer records it as the call's
   * outcome: a chat client sends the whole conversation again with the tool's output.
   */
  readonly #programCalls = new Map<string, PendingApproval>();
  /** Sub-agent runs that stopped for an approval with their link kept open, by their session; closing one forgets its requests. */
  readonly #pausedSubagents = new PausedSubagents(MAX_PENDING_APPROVALS, (run) => {
    for (const [approvalId, pending] of [...this.#approvals]) if (pending.sessionId === run.sessionId) this.#approvals.delete(approvalId);
    for (const [toolCallId, pending] of [...this.#programCalls]) if (pending.sessionId === run.sessionId) this.#programCalls.delete(toolCallId);
  });
  /** How many runs each run's steps started outside its tools (`#enclosingStep`), for their links' ids. */
  readonly #stepHelpers = new WeakMap<AgentRun, number>();
  #disposed = false;

  constructor(core: AdapterCore) {
    this.#core = core;
    this.#holds = new SessionHolds(core, MAX_HELD_SESSIONS);
  }

  /** What the integration keeps: open runs, held sessions, unanswered approvals (for tests of its bounds). */
  get retained(): { runs: number; heldSessions: number; approvals: number; sessions: number } {
    return { runs: this.#runs.size, heldSessions: this.#holds.size, approvals: this.#approvals.size, sessions: this.#core.openSessionCount };
  }

  /** New runs are no longer recorded; runs under way finish, and the sessions kept open between runs close. */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#approvals.clear();
    this.#programCalls.clear();
    this.#guard('uninstall', () => this.#holds.releaseAll('uninstalled'));
  }

  #guard(label: string, fn: () => void): void {
    this.#core.guard.run(label, fn);
  }

  readonly onStart = (event: Event): void => {
    if (this.#disposed || !OPERATIONS.has(nonEmptyString(event.operationId) ?? '')) return;
    this.#guard('onStart', () => {
      const callId = nonEmptyString(event.callId);
      if (callId === undefined || this.#runs.has(callId)) return;
      const agentId = claimAgentId();
      const frame = currentToolFrame();
      const step = frame === undefined ? this.#enclosingStep(callId) : undefined;
      const parent = frame !== undefined ? (frame.run.ended ? undefined : { run: frame.run, toolCallId: frame.toolCallId }) : step?.parent;
      // A sub-agent takes only the answers to its own requests: its messages may carry its parent's conversation.
      const link = parent === undefined ? undefined : `${parent.run.sessionId}:sub:${parent.toolCallId}`;
      const answers = link === undefined ? approvalAnswers(event.messages) : approvalAnswers(event.messages).filter((answer) => this.#approvals.get(answer.approvalId)?.sessionId === link);
      const resumed = this.#resumedSession(answers);
      // The same tool call running its sub-agent again without answers: a new run, the earlier one's link closes first.
      if (link !== undefined && resumed === undefined) this.#pausedSubagents.close(link);
      const heldLink = link === undefined ? undefined : this.#pausedSubagents.take(link);
      const instructions = event.instructions ?? event.system;
      const run = this.#core.startRun({
        runId: callId,
        conversationId: conversationIdOf(event) ?? resumed,
        agentName: nonEmptyString(event.functionId) ?? agentId ?? step?.name(nonEmptyString(event.operationId)),
        model: nonEmptyString(event.modelId),
        provider: nonEmptyString(event.provider),
        // A run that carries answers to approvals (its last message theirs) goes on with the turn that paused for them:
        // the user said nothing new, and its last user message is that turn's. No message of its own, as the OpenAI Agents
        // and LangChain adapters record a resumed run: the converter reads that as the paused turn resumed, not ended.
        // experimental_decide/extract: the shared state the model judges.
        // Inputs left out: the turn starts with the marker its user step shows (`leftOutMessages`); the SDK blanks the
        // answers to approvals too, so such a run cannot be told from a new turn.
        userMessage: () =>
          answers.length > 0 ? '' : hidesInputs(event) ? INPUTS_LEFT_OUT : (lastUserMessage(chatMessages(undefined, event.messages)) ?? nonEmptyString(event.prompt) ?? stateContent(event.state)),
        history: () => historyOf(instructions, event.messages),
        parent,
        continuesSession: resumed !== undefined,
        continuesSubagent: heldLink,
      });
      if (run === undefined) return;
      this.#endAbandoned(MAX_OPEN_RUNS - 1);
      const held = run.ownsSession ? this.#holds.take(run.sessionId) : undefined;
      const state: RunState = {
        run,
        call: undefined,
        keepsSession: run.ownsSession && (held?.keeps ?? run.sessionId !== callId),
        awaiting: [],
        resumedCalls: undefined,
        callMessages: 0,
        modelCalls: 0,
        hidesOutputs: hidesOutputs(event),
        sent: undefined,
        deferred: NO_DEFERRED_TOOLS,
        served: undefined,
        providerApproved: [],
        output: event.operationId === 'ai.generateText' ? outputSpec(event.output) : undefined,
        structuredText: undefined,
        toolChoice: undefined,
        sentRequest: undefined,
        streamed: undefined,
        modelOutputs: modelOutputsOf(event.tools),
      };
      this.#runs.set(callId, state);
      for (const answer of answers) this.#answer(state, answer, undefined);
      if (this.#programCalls.size > 0) for (const result of toolResults(event.messages).values()) this.#programAnswer(state, result);
    });
  };

  /** A step begins: its model calls ask for the tool choice it was given, which their own events do not say. */
  readonly onStepStart = (event: Event): void => {
    const state = this.#state(event);
    if (state !== undefined) state.toolChoice = event.toolChoice;
  };

  readonly onLanguageModelCallStart = (event: Event): void => {
    const state = this.#state(event);
    if (state === undefined) return;
    this.#guard('onLanguageModelCallStart', () => {
      // streamText retries a failed attempt by starting the model call again: same logical call.
      const previous = state.call;
      const pending = previous !== undefined && !previous.settled && previous.attempts > 0 ? previous : undefined;
      // A steering interrupt's redo is a new request (it carries the message), not a retry of the cancelled one.
      const steered = pending !== undefined && addsSteeringMessages(state.callMessages, event.messages);
      // An attempt still open was streaming when it stopped: the SDK gave it up for a new one (streamRetries, or a
      // steering interrupt), with what it had delivered. One that already failed (a fetch the interrupt aborted) was
      // reported by executeLanguageModelCall.
      const streamed = state.streamed;
      if (pending?.attemptOpen === true) pending.attemptError(steered ? new SteeringInterrupted() : streamed?.failed ? streamed.retriedError : new StreamRetried(), steered, deliveredSoFar(state));
      else if (steered) pending.settle();
      const retry = pending !== undefined && !steered;
      const call = retry ? pending : state.run.newApiCall();
      if (!retry) state.modelCalls += 1;
      call.describe(requestOf(event, state.toolChoice, state.modelCalls > 1));
      state.call = call;
      state.callMessages = Array.isArray(event.messages) ? event.messages.length : 0;
      state.deferred = deferredResultTools(event.tools);
    });
  };

  /** Once per provider attempt, inside the SDK's retry loop. The result and the error pass through untouched. */
  readonly executeLanguageModelCall = async <T>(options: { callId: string; execute: () => PromiseLike<T> }): Promise<T> => {
    const state = this.#runs.get(options.callId);
    const call = state?.call;
    if (call === undefined || call.settled) return await options.execute();
    this.#guard('executeLanguageModelCall', () => call.attemptStart());
    try {
      const result = await runAttempt(call, options.execute);
      if (state!.output !== undefined) {
        const structured = (result as { structuredOutputText?: unknown } | undefined)?.structuredOutputText;
        state!.structuredText = typeof structured === 'string' ? structured : undefined;
      }
      return withSentCalls(state!, result);
    } catch (error) {
      this.#guard('executeLanguageModelCall', () => call.attemptError(error));
      throw error;
    }
  };

  readonly onLanguageModelCallEnd = (event: Event): void => {
    const state = this.#state(event);
    const call = state?.call;
    if (call === undefined) return;
    this.#guard('onLanguageModelCallEnd', () => {
      const read = responseOfCallEnd(event, state!.sent, state!.deferred);
      const response = hidesOutputs(event) ? withOutputsLeftOut(read) : read;
      const servedBy = response.servedBy ?? state!.served;
      // The OpenAI package drops the `approval_request_id` of the call OpenAI ran once approved: its name and arguments say it.
      const sent = state!.sentRequest;
      this.#endAttempt(state!, call, { ...response, toolCalls: linkApprovedCalls(response.toolCalls, state!.providerApproved), ...(servedBy === undefined ? {} : { servedBy }), ...(sent === undefined ? {} : { sent }) });
    });
  };

  /**
   * `generateObject`/`streamObject`: their one model call. The SDK does not
   * report its retries to telemetry; `aiSdkMiddleware` on the model adds
   * them, finding the call by the prompt array its attempts are given.
   */
  readonly onObjectStepStart = (event: Event): void => {
    const state = this.#state(event);
    if (state === undefined) return;
    this.#guard('onObjectStepStart', () => {
      const call = state.run.newApiCall();
      state.call = call;
      registerObjectCall(event.promptMessages, call);
      call.attemptStart(() => ({ messages: hidesInputs(event) ? leftOutMessages(false) : chatMessages(undefined, event.promptMessages), model: nonEmptyString(event.modelId) }));
    });
  };

  readonly onObjectStepEnd = (event: Event): void => {
    const call = this.#state(event)?.call;
    if (call === undefined) return;
    this.#guard('onObjectStepEnd', () => call.attemptEnd(hidesOutputs(event) ? withOutputsLeftOut(responseOfObjectStep(event)) : responseOfObjectStep(event)));
  };

  /**
   * `experimental_decide` and `experimental_extract`: runs of their own (a turn, or a tool's sub-agent), reported by
   * events the SDK names apart from the text runs' (`ai.decide`, `ai.extract`). Each makes one model call; the SDK
   * retries it inside that call without telling telemetry, so the attempts are one.
   */
  readonly experimental_onDecideStart = (event: Event): void => this.onStart(event);
  readonly experimental_onExtractStart = (event: Event): void => this.onStart(event);
  readonly experimental_onDecisionModelCallStart = (event: Event): void => this.#judgmentCallStart(event);
  readonly experimental_onExtractionModelCallStart = (event: Event): void => this.#judgmentCallStart(event);
  readonly experimental_onDecisionModelCallEnd = (event: Event): void => this.#judgmentCallEnd(event);
  readonly experimental_onExtractionModelCallEnd = (event: Event): void => this.#judgmentCallEnd(event);
  readonly experimental_onDecideEnd = (event: Event): void => this.#judgmentEnd(event);
  readonly experimental_onExtractEnd = (event: Event): void => this.#judgmentEnd(event);

  #judgmentCallStart(event: Event): void {
    const state = this.#state(event);
    if (state === undefined) return;
    this.#guard('judgmentCallStart', () => {
      const call = state.run.newApiCall();
      state.call = call;
      call.attemptStart(() => (hidesInputs(event) ? { ...judgmentRequest(event), messages: leftOutMessages(false) } : judgmentRequest(event)));
    });
  }

  #judgmentCallEnd(event: Event): void {
    const call = this.#state(event)?.call;
    if (call === undefined || call.settled) return;
    this.#guard('judgmentCallEnd', () => call.attemptEnd(hidesOutputs(event) ? withOutputsLeftOut(responseOfJudgment(event)) : responseOfJudgment(event)));
  }

  /** The run's answer: the answers, as the program gets them. */
  #judgmentEnd(event: Event): void {
    const state = this.#take(event);
    if (state === undefined) return;
    this.#guard('judgmentEnd', () => this.#end(state, 'completed', hidesOutputs(event) ? OUTPUTS_LEFT_OUT : JSON.stringify(toJson(event.answers ?? null)), undefined, undefined));
  }

  readonly onToolExecutionStart = (event: Event): void => {
    const state = this.#state(event);
    if (state === undefined) return;
    this.#guard('onToolExecutionStart', () => {
      const call = (event.toolCall ?? {}) as Event;
      const id = nonEmptyString(call.toolCallId);
      if (id === undefined) return;
      const apiRequestId = state.resumedCalls?.get(id) ?? state.call?.ids.api_request_id;
      state.run.toolStart({ id, name: nonEmptyString(call.toolName) ?? 'tool', arguments: call.input }, apiRequestId);
    });
  };

  /** Runs the tool's `execute` inside its tool frame, so a run it starts is its sub-agent. */
  readonly executeTool = async <T>(options: { callId: string; toolCallId: string; execute: () => PromiseLike<T> }): Promise<T> => {
    const state = this.#runs.get(options.callId);
    if (state === undefined) return await options.execute();
    return await runInToolFrame({ run: state.run, toolCallId: options.toolCallId }, () => options.execute());
  };

  /**
   * A tool call's outcome. A tool with `toModelOutput` tells the model what that makes of the result: the outcome is
   * that (`toolOutputText`, as the next request's tool message says it), so the handler waits for it (the SDK waits
   * for its telemetry before it goes on). The SDK itself calls `toModelOutput` again for each message it builds.
   */
  readonly onToolExecutionEnd = (event: Event): void | Promise<void> => {
    const state = this.#state(event);
    if (state === undefined) return;
    // Outputs left out: the SDK hands no result to make the model's text of (`toModelOutput` would be run on nothing).
    const told = hidesOutputs(event) ? undefined : this.#toldOutput(state, event);
    if (told === undefined) return this.#toolEnded(state, event, undefined, undefined);
    const endedMs = Date.now();
    return told.then(
      (text) => this.#toolEnded(state, event, text, endedMs),
      () => this.#toolEnded(state, event, undefined, endedMs),
    );
  };

  /** What the tool's `toModelOutput` tells the model of the call's result, as text; `undefined` when it has none. */
  #toldOutput(state: RunState, event: Event): Promise<string> | undefined {
    const output = (event.toolOutput ?? {}) as Event;
    if (output.type !== 'tool-result' || state.modelOutputs.size === 0) return undefined;
    const call = (event.toolCall ?? {}) as Event;
    const toModelOutput = state.modelOutputs.get(nonEmptyString(call.toolName) ?? '');
    if (toModelOutput === undefined) return undefined;
    try {
      return Promise.resolve(toModelOutput({ toolCallId: call.toolCallId as string, input: call.input, output: output.output })).then(toolOutputText);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** `told`: what the model was told of the result, when not the result itself. */
  #toolEnded(state: RunState, event: Event, told: string | undefined, endedMs: number | undefined): void {
    this.#guard('onToolExecutionEnd', () => {
      const call = (event.toolCall ?? {}) as Event;
      const id = nonEmptyString(call.toolCallId);
      if (id === undefined) return;
      const output = (event.toolOutput ?? {}) as Event;
      // A sub-agent the tool left waiting for an approval ends with the tool.
      this.#pausedSubagents.close(`${state.run.sessionId}:sub:${id}`);
      const name = nonEmptyString(call.toolName);
      if (hidesOutputs(event)) {
        // The SDK kept the result, and a failure's error, from telemetry (only the output's type says it failed): the
        // outcome says it was left out, with the status it had.
        state.run.toolEnd(id, { result: OUTPUTS_LEFT_OUT, failed: output.type === 'tool-error', name, ...(endedMs === undefined ? {} : { endedMs }) });
        return;
      }
      if (output.type === 'tool-error') {
        // The outcome is what the model is told of it, the SDK's text of what `execute` threw.
        state.run.toolEnd(id, { error: output.error, result: toldToolError(output.error), name });
        return;
      }
      // An MCP tool's result with `isError` (the AI SDK's MCP tools return it, not throw): an output to the SDK, which
      // gives the model its text, but the call failed, as the server that answered it records.
      const reported = mcpErrorText(output.output);
      state.run.toolEnd(id, { result: told ?? output.output, ...(reported === undefined ? {} : { error: reportedToolError(reported) }), name, ...(endedMs === undefined ? {} : { endedMs }) });
    });
  }

  /**
   * Approvals the step asked for. A person's answer comes with a later run
   * (remembered until then); a `toolApproval` policy's decision is in the
   * same step's content.
   */
  readonly onStepEnd = (event: Event): void => {
    const state = this.#state(event);
    if (state === undefined) return;
    this.#guard('onStepEnd', () => {
      this.#endCallOfStep(state, event);
      const apiRequestId = state.call?.ids.api_request_id;
      // Refused by the SDK (no such tool, input that failed its schema): never executed, answered with the error.
      for (const call of refusedCalls(event.content)) {
        state.run.toolRefused({ id: call.toolCallId, name: call.toolName, arguments: call.input }, { error: call.error, text: call.text }, apiRequestId);
      }
      // Not answered in the step, not waiting for an approval: the program answers them (the SDK stops the run).
      for (const call of unansweredCalls(event.content)) {
        this.#remember(this.#programCalls, call.toolCallId, { sessionId: state.run.sessionId, toolName: call.toolName, input: call.input, apiRequestId });
      }
      const requests = approvalRequests(event.content);
      if (requests.length === 0) return;
      const decisions = new Map(approvalDecisions(event.content).map((decision) => [decision.approvalId, decision]));
      for (const request of requests) {
        state.run.approvalRequest(request.toolCallId, request.reason);
        const decision = decisions.get(request.approvalId);
        if (decision !== undefined) {
          this.#answer(state, decision, { toolName: request.toolName, input: request.input, apiRequestId, decidedBy: 'toolApproval' });
        } else if (!request.automatic) {
          state.awaiting.push(request.toolCallId);
          this.#remember(this.#approvals, request.approvalId, { sessionId: state.run.sessionId, toolName: request.toolName, input: request.input, apiRequestId });
        }
      }
    });
  };

  /**
   * A model call the SDK reports no end of, only its step's: a stream that ended on an error part without a finish
   * part (@ai-sdk/anthropic sends none after Anthropic's `error` event, an `overloaded_error` mid-answer). The step
   * ends with the text that came and finish reason `error`, as a stream whose package does send the finish
   * (`onLanguageModelCallEnd`) ends its call; left open, the call was closed at the session's end as never answered.
   */
  #endCallOfStep(state: RunState, event: Event): void {
    const call = state.call;
    if (call === undefined || !call.attemptOpen) return;
    const response = isRecord(event.response) ? event.response : {};
    const read = responseOfCallEnd({ content: event.content, usage: event.usage, finishReason: event.finishReason, modelId: response.modelId, responseId: response.id, providerMetadata: event.providerMetadata }, state.sent, state.deferred);
    this.#endAttempt(state, call, hidesOutputs(event) ? withOutputsLeftOut(read) : read);
  }

  /**
   * The model call's attempt answered: its response, or, when the provider sent an error event down the stream (OpenAI
   * Responses' `error` or `response.failed`, Anthropic's `error`), a failed attempt with that error and the answer that
   * came before it. Not final: the SDK may retry it (`streamRetries`).
   */
  #endAttempt(state: RunState, call: ApiCall, response: ResponseParts): void {
    const streamed = state.streamed;
    if (streamed?.failed === true) call.attemptError(streamed.error, false, response);
    else call.attemptEnd(response);
  }

  readonly onStepError = (event: Event): void => {
    const state = this.#state(event);
    if (state === undefined) return;
    this.#guard('onStepError', () => this.#failOpenCall(state, event.error));
  };

  readonly onEnd = (event: Event): void | Promise<void> => {
    const state = this.#take(event);
    if (state === undefined) return;
    // streamObject ends with the error its `object` rejects with (an answer that does not parse or match the schema).
    if (event.error !== undefined && event.error !== null) return this.#guard('onEnd', () => this.#end(state, 'failed', undefined, event.error, undefined));
    const output = state.output;
    if (output !== undefined && answersWithOutput(event)) {
      // The SDK waits for this before it parses: the turn ends as the program will see it.
      return outputRejects(output, event, state.structuredText).then((rejected) =>
        this.#guard('onEnd', () => (rejected === undefined ? this.#completed(state, event) : this.#end(state, 'failed', undefined, rejected, undefined))),
      );
    }
    this.#guard('onEnd', () => this.#completed(state, event));
  };

  #completed(state: RunState, event: Event): void {
    const text = hidesOutputs(event) ? OUTPUTS_LEFT_OUT : typeof event.text === 'string' ? event.text : 'object' in event ? JSON.stringify(toJson(event.object ?? null)) : undefined;
    const reason = exitReasonOf(event.stoppedBy);
    // Stopped for approvals (an `ai` 7 release before `stoppedBy` only says so by the requests left unanswered): no
    // final answer, the calls not run, a later run carries the decisions.
    if (reason === APPROVAL_REQUIRED || (reason === undefined && state.awaiting.length > 0)) {
      const paused = approvalPause(state.awaiting);
      return this.#end(state, paused.status, text, undefined, paused.turnEnd, true);
    }
    this.#end(state, 'completed', text, undefined, reason === undefined ? undefined : { turn_exit_reason: reason });
  }

  readonly onAbort = (event: Event): void => {
    const state = this.#take(event);
    if (state === undefined) return;
    this.#guard('onAbort', () => {
      // The signal's reason (streamText passes it on): the AbortError or TimeoutError a generateText run fails with.
      this.#failOpenCall(state, abortErrorOf(event.reason, 'the run was aborted'));
      this.#end(state, 'interrupted', undefined, undefined, undefined);
    });
  };

  readonly onError = (event: unknown): void => {
    const record = (typeof event === 'object' && event !== null ? event : {}) as Event;
    const state = this.#take(record);
    if (state === undefined) return;
    this.#guard('onError', () => {
      this.#failOpenCall(state, record.error);
      // generateText has no onAbort: a run its abortSignal (or timeout) stopped ends here, with the abort as its error.
      this.#end(state, isAbortError(record.error) ? 'interrupted' : 'failed', undefined, record.error, undefined);
    });
  };

  /**
   * Ends the run's turn; its session stays open (held) when it is a named conversation or waits for an approval, and
   * a sub-agent's link when it waits for an approval (the tool that ran it may run it again with the answers).
   */
  #end(state: RunState, status: 'completed' | 'failed' | 'interrupted', text: string | undefined, error: unknown, turnEnd: Record<string, unknown> | undefined, paused = false): void {
    const run = state.run;
    this.#pausedSubagents.closeChildrenOf(run);
    // A run that ended normally (paused for approvals, or stopped for another reason with requests unanswered) waits for the answers.
    const waits = (paused || status === 'completed') && state.awaiting.length > 0;
    const keep = !this.#disposed && run.ownsSession && (state.keepsSession || waits);
    const keepLink = run.parent !== undefined && !run.parent.run.ended && waits;
    run.end(status, text, error, { keepSessionOpen: keep || keepLink, ...(turnEnd === undefined ? {} : { turnEnd }) });
    if (keep) this.#holds.hold(run.sessionId, { keeps: state.keepsSession });
    if (keepLink) this.#pausedSubagents.keep(run.sessionId, run);
  }

  /** The session an answered approval belongs to, when this adapter saw the request. */
  #resumedSession(answers: readonly ApprovalAnswer[]): string | undefined {
    for (const answer of answers) {
      const pending = this.#approvals.get(answer.approvalId);
      if (pending !== undefined) return pending.sessionId;
    }
    return undefined;
  }

  #remember(pendings: Map<string, PendingApproval>, key: string, pending: PendingApproval): void {
    pendings.set(key, pending);
    while (pendings.size > MAX_PENDING_APPROVALS) pendings.delete(pendings.keys().next().value as string);
  }

  /**
   * The program's answer to a tool call an earlier run of this session ended with: the call's outcome, under the
   * model call that asked for it, so the output is that call's observation. Only once: the answer stays in the
   * history every later run is given. A run of another session (one the adapter closed, a run of its own when no
   * `sessionId` names the conversation) does not take it: the call is not in its trajectory.
   */
  #programAnswer(state: RunState, result: ProgramToolResult): void {
    const pending = this.#programCalls.get(result.toolCallId);
    if (pending === undefined || pending.sessionId !== state.run.sessionId) return;
    this.#programCalls.delete(result.toolCallId);
    const run = state.run;
    const name = pending.toolName;
    run.toolStart({ id: result.toolCallId, name, arguments: pending.input }, pending.apiRequestId);
    if (result.outcome === 'denied') run.toolEnd(result.toolCallId, { denied: deniedText(typeof result.output === 'string' ? result.output : undefined), name });
    else run.toolEnd(result.toolCallId, { result: result.output, failed: result.outcome === 'error', name });
  }

  /**
   * An approval decision: `post_approval_response`, and for a denied call
   * its outcome (the tool never runs, and the SDK tells the model it was
   * denied), so every tool call in the trajectory has one.
   */
  #answer(state: RunState, answer: ApprovalAnswer, request: (Partial<PendingApproval> & { decidedBy?: string }) | undefined): void {
    const pending = request ?? this.#approvals.get(answer.approvalId);
    this.#approvals.delete(answer.approvalId);
    const run = state.run;
    if (answer.provider === true) {
      // The provider runs an approved call itself, and tells the model of a denied one: no outcome of the program's.
      run.providerApprovalAnswer({ id: answer.approvalId, approved: answer.approved, ...(answer.reason === undefined ? {} : { reason: answer.reason }) }, request?.decidedBy);
      if (answer.approved) state.providerApproved.push({ id: answer.approvalId, name: pending?.toolName ?? answer.toolName ?? 'tool', arguments: pending?.input ?? answer.input });
      return;
    }
    run.approvalResponse(answer.toolCallId, answer.approved, answer.reason, request?.decidedBy);
    const apiRequestId = pending?.apiRequestId;
    if (answer.approved) {
      if (apiRequestId !== undefined) (state.resumedCalls ??= new Map()).set(answer.toolCallId, apiRequestId);
      return;
    }
    const name = pending?.toolName ?? answer.toolName ?? 'tool';
    run.toolStart({ id: answer.toolCallId, name, arguments: pending?.input ?? answer.input }, apiRequestId);
    run.toolEnd(answer.toolCallId, { denied: deniedText(answer.reason), name });
  }

  /** A model call that never got a response (a stream that broke, an abort) ends as an error. */
  #failOpenCall(state: RunState, error: unknown): void {
    const call = state.call;
    if (call === undefined || call.settled) return;
    const answered = unansweredObjectStep(error);
    if (answered !== undefined) return call.attemptEnd(responseOfObjectStep(answered));
    const judged = unansweredJudgment(error, state.run.requestedModel);
    if (judged !== undefined) return call.attemptEnd(judged);
    // An attempt that already failed was reported by executeLanguageModelCall. One still streaming (stopped, broken)
    // keeps the answer it had delivered: the text the program showed its user.
    if (call.attemptOpen) call.attemptError(error, true, deliveredSoFar(state));
    else if (call.attempts === 0) call.attemptError(error, true);
    else call.settle();
  }

  /** Ends the least recently active runs until at most `keep` are open. */
  #endAbandoned(keep: number): void {
    while (this.#runs.size > keep) {
      const [callId, state] = this.#runs.entries().next().value as [string, RunState];
      this.#runs.delete(callId);
      this.#failOpenCall(state, new Error('abandoned: the run never reported its end'));
      this.#end(state, 'interrupted', undefined, undefined, { reason: 'abandoned' });
    }
  }

  /**
   * A run the program starts inside a step of a run this adapter records, outside its tools (a model
   * call an `experimental_repairToolCall` function makes, as the SDK's docs write one, or `generateText`'s `prepareStep`): that run's
   * sub-agent, under the step (no tool call ran it), named for what it is (`generateText in step 1`) unless it has a
   * name of its own.
   */
  #enclosingStep(callId: string): { parent: { run: AgentRun; toolCallId: string }; name: (operation: string | undefined) => string } | undefined {
    const step = enclosingStep(callId);
    const outer = step === undefined ? undefined : this.#runs.get(step.callId);
    if (step === undefined || outer === undefined || outer.run.ended) return undefined;
    const run = outer.run;
    // No tool call ran it: a link of its own in the step, as LangChain's middleware model calls have (`:agent:`).
    const helpers = (this.#stepHelpers.get(run) ?? 0) + 1;
    this.#stepHelpers.set(run, helpers);
    return {
      parent: { run, toolCallId: `${run.ids.turn_id}:step:${step.stepNumber + 1}:agent:${helpers}` },
      name: (operation) => `${(operation ?? 'ai.generateText').replace(/^ai\./, '')} in step ${step.stepNumber + 1}`,
    };
  }

  #state(event: Event): RunState | undefined {
    if (this.#runs.size === 0) return undefined;
    const callId = nonEmptyString(event.callId);
    const state = callId === undefined ? undefined : this.#runs.get(callId);
    if (state !== undefined) this.#touch(state);
    return state;
  }

  /** Marks the run (and the runs its tools are part of) most recently active. */
  #touch(state: RunState): void {
    let run: AgentRun | undefined = state.run;
    while (run !== undefined) {
      const entry = this.#runs.get(run.runId);
      if (entry !== undefined) {
        this.#runs.delete(run.runId);
        this.#runs.set(run.runId, entry);
      }
      run = run.parent?.run;
    }
  }

  #take(event: Event): RunState | undefined {
    if (this.#runs.size === 0) return undefined;
    const callId = nonEmptyString(event.callId);
    const state = callId === undefined ? undefined : this.#runs.get(callId);
    if (state !== undefined) this.#runs.delete(callId!);
    return state;
  }
}
