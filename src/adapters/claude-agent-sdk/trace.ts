/**
 * One `query()` as the observer hooks see it: a session keyed by the SDK's
 * `session_id`, one turn per user message, one API call per model request,
 * the tool calls, and a session per sub-agent.
 *
 * The main agent's model requests come from the message stream: each starts
 * when the CLI announces it (`system/status: requesting`, before it sends
 * it), the partial events (`message_start` … `message_delta` …
 * `message_stop`) carry its answer and final usage and `message_stop` ends
 * it; the assistant messages between them carry its content blocks, one
 * each. `system/api_retry` is an attempt that failed and is retried under the
 * same `api_request_id`.
 *
 * Everything is recorded in the order the caller reads the stream, except
 * what hooks add once it can no longer come too early: a tool's start once
 * the caller read its block (the CLI starts it then, mid-reply), its end
 * after its start. See `tools.ts` and `subagents.ts`.
 *
 * @module
 */

import { deliveredAnswer } from '../core/delivered.ts';
import type { AdapterCore, AgentRun, ApiCall, ResponseParts, RunStatus } from '../core/run.ts';
import { changedArgs, type CallOfTool, type ChatMessage } from '../core/shapes.ts';
import {
  ApiAttemptError,
  AssistantBlocks,
  contentText,
  mcpAnswerCut,
  mergeUsage,
  promptText,
  PROVIDER,
  rejectedByUser,
  resultOutcome,
  retryError,
  fallbackError,
  toolResults,
  anthropicUsage,
  type Loose,
  type ToolResultBlock,
} from './messages.ts';
import { isRecord } from '../../shared/record.ts';
import { nonEmptyString } from '../../shared/text.ts';
import { SubAgents, type SubAgent } from './subagents.ts';
import { AGENT_TOOLS, ToolBook, type Approval, type ToolOutcome } from './tools.ts';
import { carriedUsage, priorConversation, promptsWithIds, siblingTranscriptPath } from './transcript.ts';
import { countsAtLeast, QueryTokens } from './usage.ts';

/** The model request being streamed on the main thread. */
interface Streaming {
  readonly id: string;
  readonly model: string | undefined;
  readonly call: ApiCall;
  usage: Loose | undefined;
  stopReason: string | undefined;
  readonly blocks: AssistantBlocks;
  /** The stream's ids of the assistant messages it came as (one per block): a compaction names the ones it keeps. */
  readonly uuids: string[];
  /** The deltas of the block not yet come as an assistant message: the caller that asked for partial messages read them. */
  open: { text: string; reasoning: string };
}

type UserMessage = string | readonly unknown[] | undefined;

export interface TraceOptions {
  readonly agentName: string | undefined;
  /** The caller asked for `stream_event` messages itself. */
  readonly callerWantsPartials: boolean;
  /** Warns once that sub-agent usage is the stream's provisional one. */
  readonly provisionalUsage: () => void;
  /** The CLI keeps transcripts for the query (`persistSession` is not false): its sub-agents wait for theirs. */
  readonly transcripts: boolean;
  /**
   * The query goes on with an earlier conversation (`resume`, `continue`):
   * when it started (epoch ms; the transcript's older messages are that
   * conversation), the message it resumes at (`resumeSessionAt`) and the
   * session it resumes (`resume`).
   */
  readonly resumes: { readonly startedAt: number; readonly at: string | undefined; readonly session: string | undefined } | undefined;
  /** Whether the program aborted the query (`options.abortController`) by now. */
  readonly aborted?: () => boolean;
  /** The program's abort signal (`options.abortController.signal`): the calls running when it fires were cut by it. */
  readonly abortSignal?: AbortSignal;
}

export class QueryTrace {
  readonly #core: AdapterCore;
  readonly #options: TraceOptions;
  readonly #tools: ToolBook;
  readonly #agents: SubAgents;
  /** Every recorded step's tokens: what the CLI counts beyond them is stated at each turn's end. */
  readonly #tokens = new QueryTokens();
  /**
   * A compaction's boundary was read: the user messages it leaves are still to come (see #afterCompaction), the
   * messages of the conversation it keeps after its summary, and the summary as the model wrote it.
   */
  #compacted: { readonly command: UserMessage; readonly kept: readonly ChatMessage[]; readonly summary: string | undefined; summarized?: boolean } | undefined;
  /**
   * The CLI compacts the conversation before the request it announced (`status: compacting` after `requesting`): the
   * first request the API sees is the summary's, so the announced call is the compaction's. It ends with the summary
   * and the request the CLI announced starts then.
   */
  #compaction: ApiCall | undefined;
  /**
   * The summary the model wrote, as the `PostCompact` hook gives it: the CLI waits for the hook's answer before it
   * streams the boundary, so the hook has always run when the boundary is read.
   */
  #compactSummary: string | undefined;
  /** The stream's ids of the messages each history entry came from (see #compacted). */
  readonly #uuids = new WeakMap<ChatMessage, readonly string[]>();
  /** The running turn's user message while none of its requests was answered: a compaction then keeps it after the summary. */
  #turnPrompt: ChatMessage | undefined;
  /** Whether a resumed session's earlier spend was read (see #readCarried). */
  #carriedRead = false;
  /** Sub-agents that ended but whose transcript lags: looked at again with every message. */
  readonly #stopping = new Set<SubAgent>();
  readonly #userMessages: UserMessage[] = [];
  /**
   * The id the program gave each user message (the SDK's `uuid` on a streamed message), beside #userMessages: the CLI
   * keeps it as the id of the prompt it writes, so a compaction names the prompt by it (see #preserved).
   */
  readonly #userMessageIds: Array<string | undefined> = [];
  /** The user messages already in the conversation (a turn's, or sent into one while it ran). */
  #turns = 0;
  /**
   * How many of the user messages sent the CLI took in (`UserPromptSubmit`),
   * or undefined before it said: messages sent while it was busy go into the
   * running turn's next request, or are joined into one prompt, so messages
   * sent are not turns one to one.
   */
  #submitted: number | undefined;
  /** The `prompt_id` of the query's first prompt: its transcript record follows the conversation a resumed session sent. */
  #firstPromptId: string | undefined;
  #sessionId: string | undefined;
  #sessionTranscript: string | undefined;
  /** The model the CLI asks for: the latest init message's (a query's `model`, or the one `setModel` switched to). */
  #initModel: string | undefined;
  /**
   * The model the CLI switched to when the one asked for was overloaded (`system/model_fallback`): it asks for it for
   * the rest of the turn, and tries the one asked for again from the next turn on, whose init message it sends first.
   */
  #fallbackModel: string | undefined;
  #offeredTools: readonly string[] = [];
  #run: AgentRun | undefined;
  #resultSinceTurn = false;
  #lastResult: Loose | undefined;
  /** The result messages of the current turn (a background task's notification adds one). */
  readonly #turnResults: Loose[] = [];
  /** A request whose attempt failed and is retried; the next `message_start` is its next attempt. */
  #retrying: ApiCall | undefined;
  /**
   * The request the CLI announced and has not streamed yet: its attempt started
   * with the announcement, so its span holds the wait for the first byte.
   */
  #announced: ApiCall | undefined;
  /** Failed attempts seen before the session could start (the first request failed). */
  readonly #earlyFailures: ApiAttemptError[] = [];
  #streaming: Streaming | undefined;
  /** The conversation so far, as each request's `messages`. */
  readonly #history: ChatMessage[] = [];
  #finished = false;
  /** The calls the CLI had started and not answered when the program aborted the query (see #cutByAbort). */
  readonly #runningAtAbort = new Set<string>();
  #forgetSignal: () => void = () => {};

  constructor(core: AdapterCore, options: TraceOptions) {
    this.#core = core;
    this.#options = options;
    this.#agents = new SubAgents(options.transcripts, this.#tokens);
    this.#tools = new ToolBook((id, outcome, response) => this.#beforeToolEnd(id, outcome, response));
    const signal = options.abortSignal;
    if (signal !== undefined && !signal.aborted) {
      const noteRunning = (): void => this.#core.guard.run("noting the calls the program's abort cut", () => this.#tools.running().forEach((id) => this.#runningAtAbort.add(id)));
      signal.addEventListener('abort', noteRunning, { once: true });
      // A controller the program keeps across queries does not keep this one's trace.
      this.#forgetSignal = () => signal.removeEventListener('abort', noteRunning);
    }
  }

  /** A user message the SDK was given (the string prompt, or one pulled from the caller's iterable). */
  userMessage(message: unknown): void {
    this.#userMessages.push(promptText(message));
    this.#userMessageIds.push(isRecord(message) ? nonEmptyString(message.uuid) : undefined);
  }

  // ------------------------------------------------------------------ the stream

  /** Records one message of the stream; returns whether the caller sees it. */
  message(message: unknown): boolean {
    if (!isRecord(message)) return true;
    if (this.#finished) return message.type !== 'stream_event' || this.#options.callerWantsPartials;
    this.#core.guard.run('reading a Claude Agent SDK message', () => {
      this.#read(message);
      for (const agent of this.#stopping) this.#advance(agent);
    });
    if (message.type === 'stream_event') return this.#options.callerWantsPartials;
    // The CLI announces each request with this status only in partial-message mode.
    if (message.type === 'system' && message.subtype === 'status' && message.status === 'requesting') return this.#options.callerWantsPartials;
    return true;
  }

  #read(m: Loose): void {
    if (this.#sessionId === undefined) this.#sessionId = nonEmptyString(m.session_id);
    const parentToolUse = nonEmptyString(m.parent_tool_use_id);
    switch (m.type) {
      case 'stream_event':
        if (parentToolUse === undefined && isRecord(m.event)) this.#streamEvent(m.event);
        return;
      case 'assistant':
        if (parentToolUse === undefined) this.#assistant(m);
        else this.#subMessage(m, nonEmptyString(m.agent_id), parentToolUse);
        return;
      case 'user':
        if (parentToolUse === undefined) this.#results(m);
        else this.#subMessage(m, undefined, parentToolUse);
        return;
      case 'system':
        this.#system(m);
        return;
      case 'tool_progress': {
        const retry = isRecord(m.subagent_retry) ? m.subagent_retry : undefined;
        const agent = this.#agents.of(nonEmptyString(retry?.agent_id), parentToolUse);
        if (agent === undefined) return;
        this.#advance(agent);
        if (retry !== undefined) agent.retried(retryError(retry));
        return;
      }
      case 'result':
        this.#result(m);
        return;
      default:
        return;
    }
  }

  #system(m: Loose): void {
    switch (m.subtype) {
      case 'status':
        if (nonEmptyString(m.parent_tool_use_id) !== undefined) return;
        if (m.status === 'requesting') this.#requestAnnounced();
        else if (m.status === 'compacting') this.#compacting();
        else if (m.compact_result === 'failed') this.#compactionFailed();
        return;
      case 'init':
        // The CLI sends one as the query starts and before each later turn of a streaming-input conversation, naming the
        // model its requests ask for: the query's `model`, or the one `setModel` switched to (a `/model` command).
        this.#initModel = nonEmptyString(m.model) ?? this.#initModel;
        this.#fallbackModel = undefined;
        if (Array.isArray(m.tools)) this.#offeredTools = m.tools.filter((name): name is string => typeof name === 'string');
        return;
      case 'api_retry':
        this.#failedAttempt(retryError(m));
        return;
      case 'model_fallback':
        // The request the CLI gave up on for the model asked for was refused too (it says no `api_retry` for it); its
        // next attempt, and the turn's later requests, ask for the fallback.
        this.#failedAttempt(fallbackError(m));
        this.#fallbackModel = nonEmptyString(m.fallback_model) ?? this.#fallbackModel;
        return;
      case 'task_started': {
        const agent = this.#agents.of(nonEmptyString(m.task_id), nonEmptyString(m.tool_use_id));
        if (agent === undefined || (m.task_type !== undefined && m.task_type !== 'local_agent')) return;
        agent.agentType ??= nonEmptyString(m.subagent_type);
        agent.prompt ??= nonEmptyString(m.prompt);
        if (m.is_backgrounded === true) agent.background = true;
        this.#advance(agent);
        return;
      }
      case 'permission_denied': {
        // The CLI's own rules refused the call (permission mode, a deny rule, the classifier): asked and answered without the caller.
        // It reports a PermissionRequest hook's denial too, which the hook's own output already recorded.
        const id = nonEmptyString(m.tool_use_id);
        if (id === undefined || this.#tools.denied(id)) return;
        this.#tools.approval(id, { kind: 'request', description: nonEmptyString(m.decision_reason) ?? nonEmptyString(m.tool_name) });
        this.#tools.approval(id, { kind: 'response', approved: false, description: nonEmptyString(m.message), decidedBy: nonEmptyString(m.decision_reason_type) ?? 'permissions' });
        return;
      }
      case 'compact_boundary': {
        // `/compact` is a user message the CLI takes in without `UserPromptSubmit` and answers without a streamed request
        // (its summary request is not in the stream): it is a turn of its own, whose end states the summary's tokens.
        const metadata = isRecord(m.compact_metadata) ? m.compact_metadata : {};
        let command: UserMessage;
        if (metadata.trigger === 'manual' && (this.#run === undefined || this.#resultSinceTurn)) {
          this.#submitted = Math.min((this.#submitted ?? this.#turns) + 1, this.#userMessages.length);
          if (this.#turn(undefined) !== undefined) command = this.#history.at(-1)?.content as UserMessage;
        }
        // The next request starts at the summary the stream shows next, as the CLI's does: what was compacted is not sent,
        // only the messages the CLI keeps (named by id) and, when it compacts as a turn starts, that turn's prompt.
        const kept = this.#preserved(metadata);
        const prompt = metadata.trigger === 'auto' ? this.#turnPrompt : undefined;
        if (prompt !== undefined && !kept.includes(prompt)) kept.push(prompt);
        this.#history.length = 0;
        this.#compacted = { command, kept, summary: this.#compactSummary };
        this.#compactSummary = undefined;
        return;
      }
      case 'task_progress':
        this.#advanceKnown(nonEmptyString(m.task_id), nonEmptyString(m.tool_use_id));
        return;
      case 'task_updated': {
        const patch = isRecord(m.patch) ? m.patch : {};
        const status = patch.status === 'completed' ? 'completed' : patch.status === 'failed' ? 'failed' : patch.status === 'killed' ? 'interrupted' : undefined;
        if (status !== undefined) this.#agentStopped(nonEmptyString(m.task_id), undefined, status, nonEmptyString(patch.error));
        return;
      }
      case 'task_notification': {
        const status = m.status === 'completed' ? 'completed' : m.status === 'failed' ? 'failed' : 'interrupted';
        this.#agents.of(nonEmptyString(m.task_id), nonEmptyString(m.tool_use_id))?.notified(m.usage);
        this.#agentStopped(nonEmptyString(m.task_id), nonEmptyString(m.tool_use_id), status, nonEmptyString(m.summary));
        return;
      }
      default:
        return;
    }
  }

  // ------------------------------------------------------------------ the main agent's requests

  #streamEvent(event: Loose): void {
    switch (event.type) {
      case 'message_start': {
        const message = isRecord(event.message) ? event.message : {};
        this.#requestStarted(nonEmptyString(message.id) ?? '', nonEmptyString(message.model), isRecord(message.usage) ? message.usage : undefined);
        return;
      }
      case 'message_delta': {
        const streaming = this.#streaming;
        if (streaming === undefined) return;
        streaming.usage = mergeUsage(streaming.usage, event.usage);
        const delta = isRecord(event.delta) ? event.delta : {};
        streaming.stopReason = nonEmptyString(delta.stop_reason) ?? streaming.stopReason;
        return;
      }
      case 'content_block_start':
        if (this.#streaming !== undefined) this.#streaming.open = { text: '', reasoning: '' };
        return;
      case 'content_block_delta': {
        const open = this.#streaming?.open;
        const delta = isRecord(event.delta) ? event.delta : {};
        if (open === undefined) return;
        if (delta.type === 'text_delta' && typeof delta.text === 'string') open.text += delta.text;
        else if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string') open.reasoning += delta.thinking;
        return;
      }
      case 'message_stop':
        // A reply `interrupt()` cut is stopped by the CLI without a stop reason (an answered one always has one): it
        // stays open for the turn's result, which says it was aborted (#result), or for what comes next.
        if (this.#streaming?.stopReason !== undefined) this.#requestEnded();
        return;
      default:
        return;
    }
  }

  /**
   * The CLI is about to send a request: its attempt starts now, not at its
   * first streamed byte, which comes after the model's time to first token.
   * The model that answers is not known yet: a turn started here takes it
   * from the answer, as one started by the answer did.
   */
  #requestAnnounced(): void {
    if (this.#streaming !== undefined) this.#requestEnded();
    if (this.#announced?.attemptOpen === true) return;
    const run = this.#turn(undefined, true);
    if (run === undefined) return;
    this.#announced = this.#nextAttempt(run);
  }

  #requestStarted(id: string, model: string | undefined, usage: Loose | undefined): void {
    if (this.#streaming !== undefined) this.#requestEnded();
    const announced = this.#announced;
    this.#announced = undefined;
    if (announced?.attemptOpen === true) {
      this.#streaming = { id, model, call: announced, usage, stopReason: undefined, blocks: new AssistantBlocks(), uuids: [], open: { text: '', reasoning: '' } };
      return;
    }
    const run = this.#turn(model);
    if (run === undefined) return;
    this.#streaming = { id, model, call: this.#nextAttempt(run), usage, stopReason: undefined, blocks: new AssistantBlocks(), uuids: [], open: { text: '', reasoning: '' } };
  }

  /** The next attempt of `run`'s request, started: a retry of the refused one, else a new call. */
  #nextAttempt(run: AgentRun): ApiCall {
    let call = this.#retrying;
    this.#retrying = undefined;
    if (call === undefined || call.settled || call.run !== run) call = run.newApiCall();
    this.#describe(call);
    for (const error of this.#earlyFailures.splice(0)) {
      call.attemptStart();
      call.attemptError(error);
    }
    call.attemptStart();
    return call;
  }

  /** The model the CLI's next request asks for: the fallback it switched to in this turn, else the init message's. */
  #askedModel(): string | undefined {
    return this.#fallbackModel ?? this.#initModel;
  }

  /**
   * The request a call sends: the conversation so far (a retry sends it again), the tools offered, and the model the
   * CLI asks for (what it sends: see #askedModel); the one that answered is the response's.
   */
  #describe(call: ApiCall): void {
    const history = this.#history.length;
    const model = this.#askedModel();
    call.describe(() => ({ messages: this.#history.slice(0, history), tools: this.#offeredTools.map((name) => ({ name })), model }));
  }

  #assistant(m: Loose): void {
    const message = isRecord(m.message) ? m.message : {};
    const error = nonEmptyString(m.error);
    if (error !== undefined && (this.#streaming === undefined || this.#streaming.id !== nonEmptyString(message.id))) {
      // A synthetic message saying the request failed for good (retries exhausted, or not retryable).
      this.#requestFailed(new ApiAttemptError(error, contentText(message.content) || error, undefined, false));
      return;
    }
    let streaming = this.#streaming;
    if (streaming === undefined || streaming.id !== nonEmptyString(message.id)) {
      // A request without partial events (an older CLI): its first block opens it.
      this.#requestStarted(nonEmptyString(message.id) ?? '', nonEmptyString(message.model), isRecord(message.usage) ? message.usage : undefined);
      streaming = this.#streaming;
      if (streaming === undefined) return;
    }
    streaming.blocks.add(message.content);
    streaming.open = { text: '', reasoning: '' };
    const uuid = nonEmptyString(m.uuid);
    if (uuid !== undefined) streaming.uuids.push(uuid);
    this.#startBegun(streaming);
  }

  /** The calls of the reply being read whose block the caller has read and which the CLI took up: they run already. */
  #startBegun(streaming: Streaming): void {
    for (const tool of streaming.blocks.toolCalls) if (this.#tools.begun(tool.id)) this.#startTool(tool, streaming.call);
  }

  #startTool(tool: CallOfTool, call: ApiCall): void {
    this.#tools.start(tool.id, tool.name, tool.arguments, call.run, call.ids.api_request_id);
    const agent = AGENT_TOOLS.has(tool.name) ? this.#agents.byToolUse(tool.id) : undefined;
    if (agent !== undefined) this.#advance(agent);
  }

  #requestEnded(): void {
    const streaming = this.#streaming;
    if (streaming === undefined) return;
    this.#streaming = undefined;
    const { call, blocks } = streaming;
    call.attemptEnd({
      text: blocks.text,
      toolCalls: blocks.toolCalls,
      reasoning: blocks.reasoning,
      usage: anthropicUsage(streaming.usage),
      finishReason: streaming.stopReason,
      model: streaming.model,
      id: streaming.id,
    });
    this.#tokens.add(streaming.model, this.#askedModel(), streaming.usage);
    this.#remember(blocks.chatMessage(), streaming.uuids);
    this.#turnPrompt = undefined;
    // The calls not started yet: the CLI took them up after the reply, or refused them before any hook.
    for (const tool of blocks.toolCalls) this.#startTool(tool, call);
  }

  #failedAttempt(error: ApiAttemptError): void {
    if (this.#streaming !== undefined) {
      // The stream broke off mid-response and the request is retried.
      const streaming = this.#streaming;
      const { call, blocks } = streaming;
      this.#streaming = undefined;
      call.attemptError(error, false, this.#delivered(streaming));
      this.#retrying = call;
      // The CLI drops the calls that reply asked for, those it had started too: no result of theirs comes.
      this.#tools.abandon(blocks.toolCalls.map((tool) => tool.id), 'the reply that asked for it broke off; the request was retried');
      return;
    }
    const announced = this.#announced;
    this.#announced = undefined;
    if (announced?.attemptOpen === true) {
      // Refused before it streamed (a 529): the attempt announced is the one that failed.
      announced.attemptError(error);
      this.#retrying = announced;
      return;
    }
    const run = this.#run;
    if (run === undefined) {
      this.#earlyFailures.push(error);
      return;
    }
    let call = this.#retrying;
    if (call === undefined || call.settled) {
      // A request refused before it streamed (a 529): it sent the conversation so far, as its retry will.
      call = run.newApiCall();
      this.#describe(call);
    }
    call.attemptStart();
    call.attemptError(error);
    this.#retrying = call;
  }

  /** The request failed for good. */
  /** `counted`: the CLI counts the cut reply's tokens (its result's `modelUsage`), so the failed attempt has them. */
  #requestFailed(error: ApiAttemptError, counted = false): void {
    const streaming = this.#streaming;
    this.#streaming = undefined;
    const announced = this.#announced?.attemptOpen === true ? this.#announced : undefined;
    this.#announced = undefined;
    let call = streaming?.call ?? announced ?? this.#retrying;
    this.#retrying = undefined;
    if (call === undefined || call.settled) {
      const run = this.#turn(undefined);
      if (run === undefined) return;
      call = run.newApiCall();
      this.#describe(call);
    }
    for (const early of this.#earlyFailures.splice(0)) {
      call.attemptStart();
      call.attemptError(early);
    }
    if (!call.attemptOpen) call.attemptStart();
    const own = streaming !== undefined && streaming.call === call ? streaming : undefined;
    if (own !== undefined && counted) this.#tokens.add(own.model, this.#askedModel(), own.usage);
    call.attemptError(error, true, own === undefined ? undefined : this.#delivered(own, true, counted));
    // The calls whose blocks the program read are the step's: recorded, they end as they stand (tools.ts `close`).
    if (own !== undefined) for (const tool of own.blocks.toolCalls) this.#startTool(tool, call);
  }

  /**
   * What a reply cut short had handed the caller (core's one rule for a cut stream): the blocks the caller read whole
   * and, when it asked for partial messages, the deltas of the block still streaming. `withCalls`: its tool_use blocks
   * too, for a reply the query ended (the CLI may have run them: they stay the step's); a reply that broke off and is
   * retried has its calls dropped by the CLI (#failedAttempt). `counted`: with the tokens the stream said, which the CLI
   * counts.
   */
  #delivered(streaming: Streaming, withCalls = false, counted = false): ResponseParts | undefined {
    const open = this.#options.callerWantsPartials ? streaming.open : { text: '', reasoning: '' };
    const toolCalls = withCalls ? streaming.blocks.toolCalls : [];
    const usage = counted ? anthropicUsage(streaming.usage) : undefined;
    return deliveredAnswer({ text: streaming.blocks.text + open.text, reasoning: streaming.blocks.reasoning + open.reasoning, model: streaming.model, id: streaming.id, toolCalls, usage });
  }

  /**
   * The tool results of a user message; one the CLI wrote for a call the user stopped ends that call interrupted. A
   * background agent's such call ends when the agent does (subagents.ts): the CLI streams its answer before or after the
   * agent's stop, as the timing falls.
   */
  #results(m: Loose, agent?: SubAgent): void {
    const main = agent === undefined;
    if (main) this.#afterCompaction(m);
    for (const result of toolResults(isRecord(m.message) ? m.message.content : undefined)) {
      if (main) this.#remember({ role: 'tool', tool_call_id: result.toolUseId, content: result.content }, nonEmptyString(m.uuid));
      // A foreground Agent call's result, read before its PostToolUse hook: what it reports of its agent's final answer.
      if (main && !result.isError) this.#agents.byToolUse(result.toolUseId)?.reported(m.tool_use_result);
      const interrupted = result.isError && rejectedByUser(m, result.toolUseId);
      if (agent?.background === true && interrupted && !this.#tools.denied(result.toolUseId)) continue;
      const cut = agent !== undefined && this.#cutByAbort(result);
      const outcome = { ...resultOutcome(m, result), ...(interrupted || cut ? { interrupted: true } : {}) };
      // A sub-agent's error result in the stream does not say whether the program's abort cut the call (the main
      // agent's does): its transcript, which the sub-agent's steps are read from, does, and has the last word.
      const provisional = agent !== undefined && this.#options.transcripts && outcome.failed && outcome.interrupted !== true && !this.#tools.denied(result.toolUseId);
      this.#tools.ended(result.toolUseId, provisional ? { ...outcome, provisional } : outcome);
    }
  }

  /**
   * Whether the program's abort (`options.abortController`) cut the call this error result answers. A sub-agent's
   * result does not say so (the main agent's says it in its meta), but either the call was running when the program
   * aborted (the CLI had started it, no hook or result had said it returned), which then killed it (a Bash command's
   * `Exit code 137`, on a runtime where the CLI outlives the abort long enough to stream it), or the result is the
   * CLI's words for an MCP call whose server link ended, read after the abort: an in-process server lives in the
   * program, and the abort ends that link.
   */
  #cutByAbort(result: ToolResultBlock): boolean {
    if (!result.isError) return false;
    return this.#runningAtAbort.has(result.toolUseId) || (mcpAnswerCut(result) && this.#options.aborted?.() === true);
  }

  /**
   * The user messages a compaction leaves, as the CLI's next request sends them: the summary (the stream's next user
   * message), then `/compact` as it was sent and what it printed (a replayed message naming the command it ran).
   */
  #afterCompaction(m: Loose): void {
    const compacted = this.#compacted;
    if (compacted === undefined || !isRecord(m.message) || toolResults(m.message.content).length > 0) return;
    const text = promptText(m.message);
    if (text === undefined) return;
    if (!compacted.summarized) {
      compacted.summarized = true;
      this.#remember({ role: 'user', content: text }, nonEmptyString(m.uuid));
      this.#history.push(...compacted.kept);
      if (compacted.command !== undefined) this.#history.push({ role: 'user', content: compacted.command });
      if (compacted.command === undefined) this.#compacted = undefined;
      this.#summarized(compacted.summary ?? (typeof text === 'string' ? text : contentText(text)));
      return;
    }
    if (m.isReplay === true && isRecord(m.local_command_run)) this.#history.push({ role: 'user', content: text });
    this.#compacted = undefined;
  }

  /** A history entry, with the ids of the stream's messages it came from. */
  #remember(entry: ChatMessage, uuids: string | readonly string[] | undefined): void {
    this.#history.push(entry);
    if (uuids !== undefined && uuids.length > 0) this.#uuids.set(entry, typeof uuids === 'string' ? [uuids] : uuids);
  }

  /**
   * The history entries a compaction keeps after its summary: the messages `preserved_messages` names, by the ids the
   * stream gave them, or the program its prompts (the CLI writes a prompt under the `uuid` it came with); the other
   * prompts, which the stream gives no id, by the session's transcript, which holds them with theirs. The CLI writes
   * that file as it goes, so a prompt of the running turn may not be in it yet. None when it summarized everything.
   */
  #preserved(metadata: Loose): ChatMessage[] {
    const preserved = isRecord(metadata.preserved_messages) ? metadata.preserved_messages : undefined;
    const ids = new Set((Array.isArray(preserved?.uuids) ? preserved.uuids : []).filter((id): id is string => typeof id === 'string'));
    if (ids.size === 0) return [];
    const unnamed = (entry: ChatMessage): boolean => entry.role === 'user' && !this.#uuids.has(entry);
    const transcript = this.#sessionTranscript;
    const prompts = transcript !== undefined && this.#history.some(unnamed) ? promptsWithIds(transcript, ids).map((prompt) => JSON.stringify(prompt)) : [];
    const kept: ChatMessage[] = [];
    // From the last: a prompt sent twice is kept once per record the compaction names, the later ones first.
    for (let index = this.#history.length - 1; index >= 0; index--) {
      const entry = this.#history[index]!;
      const prompt = unnamed(entry) ? prompts.lastIndexOf(JSON.stringify(entry.content)) : -1;
      if (prompt >= 0) prompts.splice(prompt, 1);
      if (prompt >= 0 || this.#uuids.get(entry)?.some((uuid) => ids.has(uuid)) === true) kept.unshift(entry);
    }
    return kept;
  }

  /** The CLI compacts before sending the request it announced: that announcement was the summary request's. */
  #compacting(): void {
    const announced = this.#announced;
    if (announced?.attemptOpen !== true || this.#compaction !== undefined) return;
    this.#announced = undefined;
    this.#compaction = announced;
  }

  /** The compaction failed before a summary: the request the CLI announced goes out as it was. */
  #compactionFailed(): void {
    const compaction = this.#compaction;
    this.#compaction = undefined;
    if (compaction?.attemptOpen === true && this.#announced === undefined) this.#announced = compaction;
  }

  /**
   * The summary came (the stream's first user message after the boundary): the compaction's call ends with the summary
   * the model wrote (the hook's; else the CLI's message holding it), without tokens, which are said only in
   * `modelUsage` (the turn's end states them); the request the CLI announced before it compacted starts, with the
   * compacted conversation.
   */
  #summarized(summary: string): void {
    const compaction = this.#compaction;
    this.#compaction = undefined;
    if (compaction?.attemptOpen !== true) return;
    compaction.attemptEnd({ text: summary, toolCalls: [] });
    if (this.#announced === undefined && !compaction.run.ended) this.#announced = this.#nextAttempt(compaction.run);
  }

  /** The turn or the query ended while the CLI compacted: the summary request's call ends with it. */
  #compactionCut(interrupted: boolean): void {
    const compaction = this.#compaction;
    this.#compaction = undefined;
    if (compaction?.attemptOpen !== true) return;
    compaction.attemptError(new ApiAttemptError(interrupted ? 'interrupted' : 'failed', interrupted ? 'the query ended during the compaction' : 'the turn ended during the compaction', undefined, false), true);
  }

  #result(m: Loose): void {
    // A reply still streaming when the turn's result comes was cut: `interrupt()` ends the turn without the reply's
    // `message_stop`, and the reply is what an abort leaves, a failed attempt with what the program had read of it.
    const streaming = this.#streaming;
    if (streaming !== undefined && resultAborted(m)) {
      // The CLI counts the cut reply's tokens in `modelUsage` and keeps it in the conversation: so do its step and history.
      this.#requestFailed(queryCut('interrupted'), true);
      this.#remember(streaming.blocks.chatMessage(), streaming.uuids);
    } else if (streaming !== undefined) this.#requestEnded();
    this.#compactionCut(resultAborted(m));
    // The turn ended while the CLI waited to retry a refused request (`interrupt()` then), or before an announced one
    // streamed: that is an attempt the turn ended, and the turn ends as this result says, not as a query left with a
    // request open.
    if (this.#retrying !== undefined || this.#announced?.attemptOpen === true) {
      const interrupted = resultAborted(m);
      this.#requestFailed(new ApiAttemptError(interrupted ? 'interrupted' : 'failed', interrupted ? 'the query ended during the request' : 'the turn ended during the request', undefined, false));
    }
    this.#lastResult = m;
    this.#turnResults.push(m);
    this.#resultSinceTurn = true;
    if (this.#run !== undefined && typeof m.result === 'string') this.#run.noteAssistantText(m.result);
  }

  /**
   * The turn the next request belongs to, started on first need (with the
   * model the API answered with, for the session's name; started by a
   * request's announcement, `answerToCome`, with none until its answer names
   * it). A request after a result belongs to the next user message, when the
   * caller sent one.
   */
  #turn(model: string | undefined, answerToCome = false): AgentRun | undefined {
    const sessionId = this.#sessionId;
    if (sessionId === undefined) return undefined;
    const current = this.#run;
    // Without the hook's count, each request after a result takes the next message sent.
    const counted = this.#submitted !== undefined;
    const taken = Math.min(this.#submitted ?? this.#turns + 1, this.#userMessages.length);
    if (current !== undefined && !(this.#resultSinceTurn && this.#turns < taken)) {
      if (counted && !this.#resultSinceTurn) {
        // Messages the CLI took while the turn ran go into its next request, after the tool results, in one user message as on the wire.
        const sent = joinedMessages(this.#userMessages.slice(this.#turns, taken));
        if (sent !== undefined) this.#history.push({ role: 'user', content: sent });
        this.#turns = Math.max(this.#turns, taken);
      }
      return current;
    }
    // Messages queued while the CLI was busy start the next turn together, joined as the CLI joins them.
    const first = this.#turns;
    const userMessage = joinedMessages(this.#userMessages.slice(first, Math.max(taken, first + 1)));
    this.#turns = Math.max(taken, Math.min(first + 1, this.#userMessages.length));
    this.#resultSinceTurn = false;
    if (current === undefined) this.#resumedConversation();
    this.#readCarried();
    const before = this.#history.length;
    this.#turnPrompt = userMessage === undefined ? undefined : { role: 'user', content: userMessage };
    // A prompt of one message is written under the id the program gave it; what the CLI writes for several joined, the
    // stream does not say, so those are looked up in the transcript.
    const id = this.#turns === first + 1 ? this.#userMessageIds[first] : undefined;
    if (this.#turnPrompt !== undefined) this.#remember(this.#turnPrompt, id);
    const start = {
      runId: sessionId,
      conversationId: sessionId,
      agentName: this.#options.agentName,
      model: model ?? (answerToCome ? undefined : this.#askedModel()),
      provider: PROVIDER,
      userMessage: userMessage === undefined ? undefined : () => userMessage,
      // A later turn of the conversation, or a query that resumes one: not its first turn, and what came before as far as the stream showed it.
      history: before === 0 ? undefined : () => this.#history.slice(0, before),
      continuesSession: current !== undefined || this.#options.resumes !== undefined,
    };
    if (current === undefined) {
      this.#run = this.#core.startRun(start);
      return this.#run;
    }
    // The session stays open across the turn change: one query, one session (the host's, with sessionScope 'host').
    const owned = current.ownsSession;
    this.#endTurn(current, undefined, undefined, owned);
    this.#run = this.#core.startRun(start);
    if (owned) this.#core.releaseSession(current.sessionId, 'next_turn');
    return this.#run;
  }

  /**
   * A resumed session's first request sends the conversation before it,
   * which this query's stream never shows: it is read from the session's
   * transcript (named, with the prompt's id, by the `UserPromptSubmit` hook,
   * which fires before that request). Without a transcript the history
   * starts at this query.
   */
  #resumedConversation(): void {
    const resumes = this.#options.resumes;
    if (resumes === undefined || this.#history.length > 0 || this.#sessionTranscript === undefined) return;
    const from = { promptId: this.#firstPromptId, prompt: this.#userMessages[0], before: resumes.startedAt, resumeAt: resumes.at };
    let prior = priorConversation(this.#sessionTranscript, from);
    // A fork's file may not hold its copies of the conversation yet: the session it forked from does.
    const source = prior.length === 0 && resumes.session !== undefined ? siblingTranscriptPath(this.#sessionTranscript, resumes.session) : undefined;
    if (source !== undefined && source !== this.#sessionTranscript) prior = priorConversation(source, from);
    this.#history.push(...prior);
  }

  /**
   * A resumed (or forked) session's CLI starts its `modelUsage` from what the session spent before this query, which
   * the earlier queries' trajectories hold: not this query's to state. Read as the first turn starts, before this
   * query's CLI writes its own totals.
   */
  #readCarried(): void {
    const resumes = this.#options.resumes;
    const path = this.#sessionTranscript;
    if (this.#carriedRead || resumes === undefined || path === undefined) return;
    this.#carriedRead = true;
    // A fork's file holds none: the session it forked from does.
    const source = resumes.session === undefined ? undefined : siblingTranscriptPath(path, resumes.session);
    this.#tokens.carried(carriedUsage(path) ?? (source === undefined || source === path ? undefined : carriedUsage(source)));
  }

  #endTurn(run: AgentRun, status?: RunStatus, error?: unknown, keepSessionOpen = false, spent?: Loose): void {
    const result = this.#lastResult;
    const resultInterrupted = result !== undefined && resultAborted(result);
    const resultFailed = result !== undefined && !resultInterrupted && resultIsError(result);
    const final = status ?? (result === undefined || resultInterrupted ? 'interrupted' : resultFailed ? 'failed' : 'completed');
    const failure = error ?? (resultFailed ? resultError(result) : undefined);
    let turnEnd = this.#turnResults.length === 0 ? undefined : resultSummary(this.#turnResults);
    // Model requests the stream never showed (a web search's, a compaction's): their tokens, so the turns' totals are not short.
    const unattributed = turnEnd === undefined ? undefined : this.#tokens.unattributed(spent ?? turnEnd.model_usage);
    if (turnEnd !== undefined && unattributed !== undefined) turnEnd = { ...turnEnd, unattributed_usage: unattributed };
    this.#turnResults.length = 0;
    run.end(final, result !== undefined && typeof result.result === 'string' ? result.result : undefined, failure, { keepSessionOpen, turnEnd });
  }

  // ------------------------------------------------------------------ sub-agents

  #subMessage(m: Loose, agentId: string | undefined, parentToolUse: string): void {
    const agent = this.#agents.of(agentId, parentToolUse);
    if (agent === undefined) return;
    agent.streamed(m);
    if (m.type === 'user') this.#results(m, agent);
    this.#advance(agent);
  }

  #advance(agent: SubAgent, force = false): void {
    agent.guessTranscript(this.#sessionTranscript);
    agent.advance(this.#core, this.#tools, this.#options.provisionalUsage, force);
    if (agent.ended || agent.stop === undefined) this.#stopping.delete(agent);
    else this.#stopping.add(agent);
  }

  #advanceKnown(agentId: string | undefined, toolUseId: string | undefined): void {
    const agent = this.#agents.of(agentId, toolUseId);
    if (agent !== undefined) this.#advance(agent);
  }

  #agentStopped(agentId: string | undefined, toolUseId: string | undefined, status: RunStatus, summary: string | undefined): void {
    const agent = this.#agents.of(agentId, toolUseId);
    if (agent === undefined) return;
    agent.stop ??= { status, summary };
    this.#advance(agent);
  }

  /** An Agent call's result says its sub-agent finished (a foreground agent): the sub-agent ends first. */
  #beforeToolEnd(id: string, outcome: ToolOutcome, response: unknown): void {
    const agent = this.#agents.byToolUse(id);
    if (agent === undefined || agent.ended) return;
    if (outcome.failed) {
      // A call the user stopped (`interrupt()`) stopped its sub-agent too: interrupted, not failed.
      agent.stop ??= { status: outcome.interrupted === true ? 'interrupted' : 'failed', summary: outcome.error };
      this.#advance(agent);
      return;
    }
    agent.returned();
    if (!isRecord(response) || response.status !== 'completed') {
      if (agent.stop !== undefined) this.#advance(agent);
      return;
    }
    agent.reported(response);
    agent.stop ??= { status: 'completed' };
    // Its call returns now, so the agent ended before: it ends here when its transcript holds its final answer, or when
    // there is no transcript (the answer is then the result's). One the CLI has not written that far waits for it: its
    // record says what the result does not (the response's id, its stop reason, its thinking).
    this.#advance(agent);
  }

  // ------------------------------------------------------------------ the SDK's hooks

  /** One of the SDK's hook inputs (the callbacks this adapter registers); never throws. */
  hook(input: unknown): void {
    if (this.#finished || !isRecord(input)) return;
    this.#core.guard.run(`the Claude Agent SDK ${String(input.hook_event_name)} hook`, () => this.#hook(input));
  }

  #hook(input: Loose): void {
    this.#sessionTranscript ??= nonEmptyString(input.transcript_path);
    const agentId = nonEmptyString(input.agent_id);
    if (input.hook_event_name === 'UserPromptSubmit' && agentId === undefined) {
      this.#firstPromptId ??= nonEmptyString(input.prompt_id);
      this.#promptSubmitted(input.prompt);
    }
    const toolUseId = nonEmptyString(input.tool_use_id);
    switch (input.hook_event_name) {
      case 'PreToolUse':
        if (toolUseId === undefined) break;
        this.#tools.announced(toolUseId, input.tool_name, input.tool_input);
        // The CLI starts the call now; when the caller has already read its block, so does its span.
        if (agentId === undefined && this.#streaming !== undefined) this.#startBegun(this.#streaming);
        break;
      case 'PostToolUse':
        if (toolUseId === undefined) break;
        this.#tools.announced(toolUseId, input.tool_name, input.tool_input);
        if (AGENT_TOOLS.has(nonEmptyString(input.tool_name) ?? '') && isRecord(input.tool_response)) {
          // Links the agent to its call even before the stream shows `task_started`.
          const agent = this.#agents.of(nonEmptyString(input.tool_response.agentId), toolUseId);
          if (agent !== undefined && input.tool_response.status === 'completed') {
            // A foreground agent finished: it ends before its call does, with the final answer its result reports.
            agent.reported(input.tool_response);
            agent.stop ??= { status: 'completed' };
            this.#advance(agent);
          }
        }
        this.#tools.returned(toolUseId, input.tool_response);
        break;
      case 'PostToolUseFailure':
        if (toolUseId === undefined) break;
        this.#tools.announced(toolUseId, input.tool_name, input.tool_input);
        this.#tools.ended(toolUseId, {
          failed: true,
          error: nonEmptyString(input.error) ?? 'tool failed',
          interrupted: input.is_interrupt === true,
          // An MCP tool's result (`isError`) follows in the stream with its `_meta`, which may name the server's trajectory.
          awaitsResult: isRecord(input.mcp_server) && input.is_interrupt !== true,
        });
        break;
      case 'PostCompact':
        // The main agent's compaction (a sub-agent's names its agent_id): the summary as the model wrote it.
        if (agentId === undefined) this.#compactSummary = nonEmptyString(input.compact_summary);
        break;
      case 'SubagentStart': {
        const agent = this.#agents.of(agentId, undefined);
        if (agent !== undefined) agent.agentType ??= nonEmptyString(input.agent_type);
        break;
      }
      case 'SubagentStop': {
        const agent = this.#agents.of(agentId, undefined);
        if (agent === undefined) break;
        const path = nonEmptyString(input.agent_transcript_path);
        if (path !== undefined) agent.transcriptAt(path);
        // Not the end yet: the transcript may still lack the last request. The stream's task events (or the Agent call's result) end it.
        agent.summary ??= nonEmptyString(input.last_assistant_message);
        this.#advance(agent);
        return;
      }
      default:
        break;
    }
    if (agentId !== undefined) this.#advanceKnown(agentId, undefined);
  }

  /**
   * The CLI took user messages into the conversation: one, or several sent
   * while it was busy, joined into this prompt.
   */
  #promptSubmitted(prompt: unknown): void {
    const from = this.#submitted ?? 0;
    let count = 1;
    if (typeof prompt === 'string') {
      for (let n = 2; from + n <= this.#userMessages.length; n++) {
        if (joinedMessages(this.#userMessages.slice(from, from + n)) === prompt) {
          count = n;
          break;
        }
      }
    }
    this.#submitted = from + count;
  }

  /** The caller's `canUseTool` was asked about a call, or answered. */
  approval(toolUseId: string, approval: Approval): void {
    if (this.#finished) return;
    this.#core.guard.run('recording an approval', () => this.#tools.approval(toolUseId, approval));
  }

  /**
   * One of the caller's `PreToolUse` or `PermissionRequest` callbacks
   * returned: a permission it decided (allow or deny) is an approval asked
   * and answered by that hook. `ask`, `defer` and no decision leave the call
   * to the next check.
   */
  hookDecision(input: unknown, toolUseId: unknown, output: unknown): void {
    if (this.#finished || !isRecord(input) || !isRecord(output)) return;
    this.#core.guard.run(`reading the decision of a ${String(input.hook_event_name)} hook`, () => {
      const id = nonEmptyString(input.tool_use_id) ?? nonEmptyString(toolUseId);
      if (id === undefined) return;
      const specific = isRecord(output.hookSpecificOutput) ? output.hookSpecificOutput : {};
      let behavior: unknown;
      let reason: string | undefined;
      let updatedInput: unknown;
      if (input.hook_event_name === 'PreToolUse') {
        // `decision: approve | block` is the older spelling of the same answer.
        behavior = specific.permissionDecision ?? (output.decision === 'approve' ? 'allow' : output.decision === 'block' ? 'deny' : undefined);
        reason = nonEmptyString(specific.permissionDecisionReason) ?? nonEmptyString(output.reason);
        updatedInput = specific.updatedInput;
      } else if (input.hook_event_name === 'PermissionRequest' && isRecord(specific.decision)) {
        behavior = specific.decision.behavior;
        reason = nonEmptyString(specific.decision.message);
        updatedInput = specific.decision.updatedInput;
      }
      if (behavior !== 'allow' && behavior !== 'deny') return;
      const approved = behavior === 'allow';
      this.#tools.approval(id, { kind: 'request', description: nonEmptyString(input.tool_name) });
      const changed = approved ? changedArgs(input.tool_input, updatedInput) : undefined;
      this.#tools.approval(id, { kind: 'response', approved, description: reason, decidedBy: `${input.hook_event_name} hook`, ...(changed === undefined ? {} : { changedArgs: changed }) });
    });
  }

  // ------------------------------------------------------------------ the end

  /**
   * The stream ended (`status` undefined: as the last result says), the
   * caller stopped reading (`interrupted`) or it threw (`failed`). Every
   * session of the query ends, in order, and nothing of it is kept.
   */
  finish(status?: RunStatus, error?: unknown): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#core.guard.run('ending the Claude Agent SDK query', () => this.#finish(status, error));
    this.#agents.clear();
    this.#history.length = 0;
    this.#userMessages.length = 0;
    this.#userMessageIds.length = 0;
    this.#turnResults.length = 0;
    this.#earlyFailures.length = 0;
    this.#forgetSignal();
    this.#runningAtAbort.clear();
  }

  #finish(status: RunStatus | undefined, error: unknown): void {
    const announced = this.#announced?.attemptOpen === true;
    const answered = this.#resultSinceTurn && this.#streaming === undefined && this.#retrying === undefined && !announced;
    for (const agent of this.#agents.open()) {
      agent.stop ??= { status: 'interrupted' };
      this.#advance(agent, true);
    }
    this.#stopping.clear();
    const cut = status === undefined ? undefined : queryCut(status);
    if (this.#streaming !== undefined) {
      if (status === undefined) this.#requestEnded();
      else this.#requestFailed(cut!);
    }
    if (announced) this.#requestFailed(cut ?? new ApiAttemptError('failed', 'the request was not answered', undefined, false));
    this.#compactionCut(status === 'interrupted');
    if (this.#retrying !== undefined || this.#earlyFailures.length > 0) this.#requestFailed(cut ?? new ApiAttemptError('failed', 'the request was not retried', undefined, false));
    if (this.#run === undefined && this.#sessionId !== undefined) this.#turn(undefined);
    // A turn its error result ended (max turns, budget) stopped before the calls the CLI had not taken up: they never ran.
    const result = this.#lastResult;
    const stoppedBy = this.#resultSinceTurn && result !== undefined && resultIsError(result) && !resultAborted(result) ? resultError(result) : undefined;
    this.#tools.close(stoppedBy);
    const run = this.#run;
    this.#run = undefined;
    // A caller that stops reading after the turn's result has what the turn gave: it ends as that result says. So does a
    // query the SDK ends by throwing because that result is an error (an interrupted turn, max turns): the throw only reports it.
    const byResult = answered && (status === 'interrupted' || (this.#lastResult !== undefined && resultIsError(this.#lastResult)));
    if (run !== undefined) this.#endTurn(run, byResult ? undefined : status, byResult ? undefined : error, false, this.#spentInAll());
  }

  /**
   * What the CLI spent in all, as it wrote it to the session's transcript as it ended (a `cost-state` record): beyond
   * the last result's `modelUsage` when it asked the model after that result (a suggestion of the next prompt), which
   * no result counts. Undefined when the file holds no record that counts at least that result's (an earlier
   * process's, the CLI stopped before it wrote one).
   */
  #spentInAll(): Loose | undefined {
    const path = this.#sessionTranscript;
    const reported = this.#lastResult?.modelUsage;
    if (path === undefined || !this.#options.transcripts || !isRecord(reported)) return undefined;
    const written = carriedUsage(path);
    return countsAtLeast(written, reported) ? written : undefined;
  }
}

/**
 * What the SDK itself reports about a turn, for its `on_session_end`: the
 * main loop's usage summed over the turn's results (each result covers its
 * own part), the per-model usage and cost so far (the latest result's, as
 * they are cumulative), the number of model round trips and the time taken.
 */
function resultSummary(results: readonly Loose[]): Record<string, unknown> {
  const last = results.at(-1)!;
  const usage: Record<string, number> = {};
  let turns = 0;
  let durationMs = 0;
  for (const result of results) {
    if (typeof result.num_turns === 'number') turns += result.num_turns;
    if (typeof result.duration_ms === 'number') durationMs += result.duration_ms;
    if (!isRecord(result.usage)) continue;
    for (const [key, value] of Object.entries(result.usage)) if (typeof value === 'number') usage[key] = (usage[key] ?? 0) + value;
  }
  return {
    result_subtype: last.subtype,
    result_usage: usage,
    model_usage: isRecord(last.modelUsage) ? last.modelUsage : undefined,
    total_cost_usd: typeof last.total_cost_usd === 'number' ? last.total_cost_usd : undefined,
    num_turns: turns,
    duration_ms: durationMs,
  };
}

/** User messages the CLI took in together, as one: texts joined by a line break, content parts one after another. */
function joinedMessages(messages: readonly UserMessage[]): UserMessage {
  const present = messages.filter((message): message is string | readonly unknown[] => message !== undefined);
  if (present.length <= 1) return present[0];
  if (present.every((message) => typeof message === 'string')) return present.join('\n');
  return present.flatMap((message) => (typeof message === 'string' ? [{ type: 'text', text: message }] : [...message]));
}

/**
 * The error of a request the query cut (the program stopped reading, aborted or interrupted it: `interrupted`) or that
 * the SDK's throw ended (`failed`): one rule for every way a reply is cut, so each is the same failed attempt.
 */
function queryCut(status: RunStatus): ApiAttemptError {
  return status === 'failed' ? new ApiAttemptError('failed', 'the query failed during the request', undefined, false) : new ApiAttemptError('interrupted', 'the query ended during the request', undefined, false);
}

/** A turn cut by `interrupt()` ends with an error result whose terminal reason says it was aborted. */
function resultAborted(result: Loose): boolean {
  return result.terminal_reason === 'aborted_streaming' || result.terminal_reason === 'aborted_tools';
}

function resultIsError(result: Loose): boolean {
  return result.is_error === true || (result.subtype !== undefined && result.subtype !== 'success');
}

function resultError(result: Loose): Error {
  const errors = Array.isArray(result.errors) ? result.errors.filter((e): e is string => typeof e === 'string') : [];
  const error = new Error(errors.join('; ') || (typeof result.result === 'string' && result.result !== '' ? result.result : String(result.subtype ?? 'error')));
  error.name = typeof result.subtype === 'string' && result.subtype !== 'success' ? result.subtype : 'ResultError';
  return error;
}
