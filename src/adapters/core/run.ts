/**
 * One agent run as the hooks see it: a session turn with its API calls and
 * tool calls, or a sub-agent's turn linked to the tool call that started it.
 * Every adapter maps its framework's events onto these few methods, so the
 * ids, the hook order and the payload shapes are written once.
 *
 * Nothing here runs unless somebody listens: payloads are built in thunks,
 * and `AdapterCore.startRun` returns `undefined` when no hook has a
 * subscriber, so the adapter skips the rest of that run.
 *
 * @module
 */

import { HOOK_NAMES, type HookName } from '../../hooks/index.ts';
import type { HookPayloads } from '../../hooks/payloads.ts';
import type { HookRegistry } from '../../hooks/registry.ts';
import { TurnIds, type ApiCallIds } from '../../hooks/index.ts';
import { consoleLogger } from '../../shared/logger.ts';
import { readProviderUsage, recordedUsage, type ProviderUsage } from '../../formats/usage.ts';
import { toJson } from '../../shared/json.ts';
import { chatFinishReason } from './finish.ts';
import { Guard } from './guard.ts';
import { hostSessionContinues } from './host-sessions.ts';
import { sessionIdFor, type AdapterOptions } from './options.ts';
import { settingsDifference, type SentRequest } from './sent-settings.ts';
import {
  argumentsObject,
  CHANGED_INPUT,
  answerMessage,
  chatTool,
  describeError,
  lastUserMessage,
  localCalls,
  recordedText,
  recordedValue,
  reportedToolError,
  textOrJson,
  type CallOfTool,
  type ChatMessage,
  type OfferedTool,
  type ProviderApprovalAnswer,
  type AnswerMedium,
} from './shapes.ts';

/** The request of one provider attempt, built only when a hook listens. */
export interface RequestParts {
  readonly messages: readonly ChatMessage[];
  readonly tools?: readonly OfferedTool[];
  readonly model?: string;
  /** The provider of this call, when it differs from the run's (a graph whose nodes use several). */
  readonly provider?: string;
  /** Extra request-body fields (temperature, max tokens, ...). */
  readonly settings?: Record<string, unknown>;
}

/** No calls: what a response without later provider results shares rather than allocates. */
const NO_CALLS: readonly CallOfTool[] = Object.freeze([]);

/** A provider response, reduced to what the trajectory needs. */
export interface ResponseParts {
  readonly text: string;
  readonly toolCalls: readonly CallOfTool[];
  readonly reasoning?: string;
  /** The images, audio and files the model answered with, beside its text. */
  readonly media?: readonly AnswerMedium[];
  /** The framework's usage as it reported it, tagged with its shape; the token table reads it. */
  readonly usage?: ProviderUsage;
  /** As the framework gave it; `attemptEnd` writes it in the one vocabulary (finish.ts). */
  readonly finishReason?: string;
  /** The model the provider reported it answered with (a dated snapshot, not the alias asked for). */
  readonly model?: string;
  readonly id?: string;
  /** What the call was charged, in USD, when the answer says (a gateway's bill): the usage's `cost_usd`, which no price book overrides. */
  readonly costUsd?: number;
  /**
   * The upstream a router says served the call (OpenRouter's `provider`, the AI Gateway's `routing.finalProvider`),
   * written as the response's `served_by`. `provider` stays the one the program called: prices are looked up by it.
   */
  readonly servedBy?: string;
  /**
   * The upstreams the router says it tried and that failed before `servedBy` answered, in order (the AI Gateway's
   * failed `routing.attempts`), written as the response's `failed_upstreams`.
   */
  readonly failedUpstreams?: readonly string[];
  /**
   * What the provider package says it sent (its body, the settings it warned it dropped), when the framework tells:
   * the recorded settings it did not send are written as the response's `settings_not_sent` / `settings_as_sent`.
   */
  readonly sent?: SentRequest;
}

export interface RunStart {
  /** The framework's id of the run. */
  readonly runId: string;
  readonly conversationId?: string;
  readonly agentName?: string;
  readonly model?: string;
  readonly provider?: string;
  /** Known at start? Otherwise it is taken from the first request's messages. */
  readonly userMessage?: () => string | readonly unknown[] | undefined;
  /** The conversation before the user message, when the framework passes one in. */
  readonly history?: () => readonly ChatMessage[] | undefined;
  /** The tool call this run was started from (a sub-agent). */
  readonly parent?: { readonly run: AgentRun; readonly toolCallId: string };
  /**
   * The run continues a session an earlier run left open (a resumed approval, the next turn of a named
   * conversation): not its first turn. A function is asked with the run's session id, once it is chosen.
   */
  readonly continuesSession?: boolean | ((sessionId: string) => boolean);
  /**
   * The earlier run of this sub-agent whose link it continues (that run stopped for an approval and left the link
   * open; the program ran it again with the answers): the link is already open, no second `subagent_start`, and the
   * sub-agent's duration counts from that run's start.
   */
  readonly continuesSubagent?: AgentRun;
}

export type RunStatus = 'completed' | 'failed' | 'interrupted';

const now = (): number => Date.now() / 1000;

/**
 * What keeps each session open: the top-level runs counted into it, the sub-agent links open under it
 * (`subagent_start` sent, `subagent_stop` not yet), and its close when it waits for those links. One object, so that
 * adapter instances sharing sessions (LangChain handlers made per request on one `HookRegistry`) share all three: a
 * link opened under one instance and closed under another (a paused sub-agent resumed by the next request's handler)
 * is one link, and a session one instance closes waits for the links another opened.
 */
export class OpenSessions {
  readonly runs = new Map<string, number>();
  readonly links = new Map<string, number>();
  /**
   * A session's close (its `on_session_finalize`, or for a sub-agent its link's end) waiting for the links under it:
   * a sub-agent that ends after its parent (a streamed run cut short while its tools' agents still wind down) would
   * send its `subagent_stop` to a closed session, which the plugin would open again as a session with nothing in it.
   */
  readonly closeAfterLinks = new Map<string, () => void>();
}

/** The hooks, the options and the session bookkeeping one adapter instance shares across its runs. */
export class AdapterCore {
  readonly hooks: HookRegistry;
  readonly options: AdapterOptions;
  readonly platform: string;
  readonly guard: Guard;
  readonly #sessions: OpenSessions;

  /**
   * `sessions`: when several instances on the same hooks must share sessions
   * (a LangChain handler made per request), so that a session opens and
   * closes once whichever instance runs it, and its sub-agents' links are
   * counted whichever instance opens or closes them.
   */
  constructor(hooks: HookRegistry, options: AdapterOptions, platform: string, sessions: OpenSessions = new OpenSessions()) {
    this.#sessions = sessions;
    this.hooks = hooks;
    this.options = options;
    this.platform = options.platform ?? platform;
    this.guard = new Guard(options.logger ?? consoleLogger);
  }

  /** True when any hook has a subscriber: 15 lookups, no allocation. */
  listening(): boolean {
    for (let i = 0; i < HOOK_NAMES.length; i++) if (this.hooks.has(HOOK_NAMES[i]!)) return true;
    return false;
  }

  /** Opens a run (and its session or sub-agent link); `undefined` when nobody listens. */
  startRun(start: RunStart): AgentRun | undefined {
    if (!this.listening()) return undefined;
    const sessionId =
      start.parent === undefined
        ? sessionIdFor(this.options, { runId: start.runId, conversationId: start.conversationId, agentName: start.agentName }, this.guard)
        : `${start.parent.run.sessionId}:sub:${start.parent.toolCallId}`;
    const run = new AgentRun(this, sessionId, start);
    run.begin();
    return run;
  }

  /** Counts a top-level run into its session; true for the first one (the session opens). */
  openSession(sessionId: string): boolean {
    const { runs, closeAfterLinks } = this.#sessions;
    const open = runs.get(sessionId) ?? 0;
    runs.set(sessionId, open + 1);
    // Its close still waited for a sub-agent: the session never closed, and goes on.
    if (open === 0 && closeAfterLinks.delete(sessionId)) return false;
    return open === 0;
  }

  /** Sessions with a top-level run still counted in. */
  get openSessionCount(): number {
    return this.#sessions.runs.size;
  }

  /** Counts a top-level run out of its session, and closes the session when it was the last one. */
  releaseSession(sessionId: string, reason: string): void {
    if (this.closeSession(sessionId)) this.closeAfterLinks(sessionId, () => this.emit('on_session_finalize', () => ({ session_id: sessionId, platform: this.platform, reason })));
  }

  /** A sub-agent link opened under `sessionId`. */
  linkOpened(sessionId: string): void {
    const { links } = this.#sessions;
    links.set(sessionId, (links.get(sessionId) ?? 0) + 1);
  }

  /** A sub-agent link under `sessionId` closed: the session's close runs if it waited for the last one. */
  linkClosed(sessionId: string): void {
    const { links, closeAfterLinks } = this.#sessions;
    const open = (links.get(sessionId) ?? 1) - 1;
    if (open > 0) {
      links.set(sessionId, open);
      return;
    }
    links.delete(sessionId);
    const close = closeAfterLinks.get(sessionId);
    if (close === undefined) return;
    closeAfterLinks.delete(sessionId);
    close();
  }

  /** Runs `close` now, or once the sub-agent links open under `sessionId` have closed. */
  closeAfterLinks(sessionId: string, close: () => void): void {
    if (this.#sessions.links.has(sessionId)) this.#sessions.closeAfterLinks.set(sessionId, close);
    else close();
  }

  /** Counts a top-level run out; true for the last one (the session closes). */
  closeSession(sessionId: string): boolean {
    const { runs } = this.#sessions;
    const open = (runs.get(sessionId) ?? 1) - 1;
    if (open <= 0) runs.delete(sessionId);
    else runs.set(sessionId, open);
    return open <= 0;
  }

  emit<K extends HookName>(name: K, build: () => HookPayloads[K]): void {
    if (!this.hooks.has(name)) return;
    const payload = this.guard.run(`building the ${name} payload`, build);
    if (payload !== undefined) this.hooks.emit(name, payload);
  }
}

interface OpenTool {
  readonly name: string;
  readonly args: Record<string, unknown>;
  readonly startedMs: number;
  /** The text of an MCP result the call got that says it failed (`isError`), for a framework that throws its own error for it. */
  reportedFailure?: string;
  /** The attempts that failed before the one under way, when the host ran the call again (`toolAttemptFailed`). */
  failedAttempts?: FailedToolAttempt[];
  /** When the attempt under way started, once a failed one came before it. */
  attemptStartedMs?: number;
}

/** A failed attempt of a tool call the host ran again under the same id: `post_tool_call.failed_attempts`. */
export interface FailedToolAttempt {
  readonly error_type: string;
  readonly error_message: string;
  readonly duration_ms: number;
}

/**
 * The tool calls under way, by registry, session and call id: code that is
 * told which call it works for but runs outside it (an MCP server's sampling
 * request, answered where the client's transport delivers it) can run as that
 * call's code (`runInToolFrame`). Every adapter's tool calls are here from
 * their start to their end.
 */
const running = new WeakMap<HookRegistry, Map<string, AgentRun>>();

const runningKey = (sessionId: string, toolCallId: string): string => `${sessionId}\0${toolCallId}`;

function toolCallStarted(run: AgentRun, toolCallId: string): void {
  let calls = running.get(run.core.hooks);
  if (calls === undefined) {
    calls = new Map();
    running.set(run.core.hooks, calls);
  }
  calls.set(runningKey(run.sessionId, toolCallId), run);
}

function toolCallEnded(run: AgentRun, toolCallId: string): void {
  const calls = running.get(run.core.hooks);
  const key = runningKey(run.sessionId, toolCallId);
  if (calls?.get(key) === run) calls.delete(key);
}

/** The run of tool call `toolCallId` of session `sessionId` recorded on `hooks`, while the call runs. */
export function runningToolCall(hooks: HookRegistry, sessionId: string, toolCallId: string): { readonly run: AgentRun; readonly toolCallId: string } | undefined {
  const run = running.get(hooks)?.get(runningKey(sessionId, toolCallId));
  return run === undefined || run.ended ? undefined : { run, toolCallId };
}

/**
 * The one tool call with id `toolCallId` running on `hooks`, whatever its
 * session: for work told the call's id but not its session (an MCP server in
 * the program's own process, whose request names only the Claude Code CLI's
 * `tool_use` id); undefined for none, or when two sessions run a call of
 * that id (which is then not told apart).
 */
export function runningToolCallById(hooks: HookRegistry, toolCallId: string): { readonly run: AgentRun; readonly toolCallId: string } | undefined {
  let found: AgentRun | undefined;
  for (const [key, run] of running.get(hooks) ?? []) {
    if (run.ended || key !== runningKey(run.sessionId, toolCallId)) continue;
    if (found !== undefined) return undefined;
    found = run;
  }
  return found === undefined ? undefined : { run: found, toolCallId };
}

export class AgentRun {
  readonly core: AdapterCore;
  readonly sessionId: string;
  readonly ids: TurnIds;
  readonly parent: RunStart['parent'];
  readonly agentName: string | undefined;
  readonly runId: string;
  /** The run's model: the one asked for, else the first one a response named (the session is named after it). */
  model: string | undefined;
  provider: string | undefined;
  #modelAnswered = false;
  readonly #start: RunStart;
  /** When the sub-agent's link opened (`subagent_start`), for `subagent_stop.duration_ms`: a continued one's, earlier. */
  readonly linkStartedMs: number;
  readonly #tools = new Map<string, OpenTool>();
  #turnStarted = false;
  #userMessage: string | readonly unknown[] | undefined;
  #lastText = '';
  #ended = false;
  /** The session had a turn before this run's: a held session, a resumed one, or one another run of it holds open now. */
  #continues: boolean;
  /** A sub-agent run that ended with its link kept open: how it ended, for `closeLink`. */
  #heldLink: { status: RunStatus; text: string } | undefined;
  /**
   * The provider approval requests this run recorded, and the calls it recorded a decision on: a framework may show
   * one again (an interruption beside the response that asked; the history of every later request holding the answer).
   */
  readonly #providerAsked = new Set<string>();
  readonly #answered = new Set<string>();
  /** The calls the provider runs whose result this run waits for from a later response ({@link providerResultAwaited}). */
  readonly #awaitingProviderResult = new Set<string>();

  constructor(core: AdapterCore, sessionId: string, start: RunStart) {
    this.core = core;
    this.sessionId = sessionId;
    this.#start = start;
    this.parent = start.parent;
    this.linkStartedMs = start.continuesSubagent?.linkStartedMs ?? Date.now();
    this.runId = start.runId;
    this.agentName = start.agentName;
    this.model = start.model;
    this.provider = start.provider;
    this.ids = new TurnIds({ sessionId });
    const continues = start.continuesSession;
    this.#continues = typeof continues === 'function' ? core.guard.run('reading the session', () => continues(sessionId)) === true : continues === true;
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** The model a request asked for when it does not say: the run's, unless that came from an answer (a dated snapshot nobody asked for). */
  get requestedModel(): string | undefined {
    return this.#modelAnswered ? undefined : this.model;
  }

  /** A response named the model that answered: the run takes it when it knew none. */
  noteAnsweredModel(model: string | undefined): void {
    if (model === undefined || this.model !== undefined) return;
    this.model = model;
    this.#modelAnswered = true;
  }

  /** True when the adapter should open and close the session itself. */
  get ownsSession(): boolean {
    return this.parent === undefined && this.core.options.sessionScope !== 'host';
  }

  begin(): void {
    const core = this.core;
    const parent = this.parent;
    if (parent !== undefined && this.#start.continuesSubagent !== undefined) {
      // The link an earlier run of this sub-agent kept open goes on, and is this run's to close from now on.
      this.#start.continuesSubagent.#heldLink = undefined;
    } else if (parent !== undefined) {
      core.linkOpened(parent.run.sessionId);
      core.emit('subagent_start', () => ({
        parent_session_id: parent.run.sessionId,
        parent_turn_id: parent.run.ids.turn_id,
        child_session_id: this.sessionId,
        child_subagent_id: this.runId,
        child_role: this.agentName,
        child_goal: textOrJson(this.#start.userMessage?.()),
        tool_call_id: parent.toolCallId,
        platform: core.platform,
      }));
    } else if (this.ownsSession) {
      if (core.openSession(this.sessionId)) core.emit('on_session_start', () => ({ session_id: this.sessionId, model: this.model, platform: core.platform, ...(this.agentName === undefined ? {} : { agent_name: this.agentName }) }));
      // Another run of the session is under way (two requests of one thread at once): its turn came first.
      else this.#continues = true;
    } else if (parent === undefined && hostSessionContinues(core.hooks, this.sessionId)) {
      // The host's session: an earlier run of it had its turn, whether or not it is still under way.
      this.#continues = true;
    }
    if (this.#start.userMessage !== undefined) {
      const message = core.guard.run('reading the user message', this.#start.userMessage);
      const history = this.#start.history === undefined ? undefined : core.guard.run('reading the conversation', this.#start.history);
      if (message !== undefined) this.startTurn(message, history);
    }
  }

  /** Emits `pre_llm_call` once; later calls do nothing. */
  startTurn(userMessage: string | readonly unknown[] | undefined, history?: readonly ChatMessage[]): void {
    if (this.#turnStarted) return;
    this.#turnStarted = true;
    this.#userMessage = userMessage;
    this.core.emit('pre_llm_call', () => ({
      ...this.ids,
      user_message: toJson(userMessage ?? '') as string,
      conversation_history: history === undefined ? [] : (toJson(history) as ChatMessage[]),
      is_first_turn: !this.#continues,
      model: this.model,
      platform: this.core.platform,
      ...(this.parent === undefined ? {} : { parent_session_id: this.parent.run.sessionId }),
      // A sub-agent's session opens on this hook: its own name for its trajectory.
      ...(this.agentName === undefined ? {} : { agent_name: this.agentName }),
    }));
  }

  /** Mints the ids of one logical API call; its retries share them. */
  newApiCall(): ApiCall {
    return new ApiCall(this, this.ids.nextApiCall());
  }

  toolStart(call: CallOfTool, apiRequestId?: string): void {
    if (this.#ended) return;
    this.startTurn(undefined);
    const args = argumentsObject(call.arguments);
    this.#tools.set(call.id, { name: call.name, args, startedMs: Date.now() });
    toolCallStarted(this, call.id);
    this.core.emit('pre_tool_call', () => ({
      ...this.ids,
      api_request_id: apiRequestId,
      tool_call_id: call.id,
      tool_name: call.name,
      args,
    }));
  }

  /**
   * The MCP request tool call `id` made was answered with a result that says
   * it failed (`isError`, its text `text`): told by the MCP client adapter,
   * which sees the result, for a framework that throws an error of its own
   * for it (LangChain's MCP tools), whose adapter then records the failure
   * the result reported (`reportedFailure`).
   */
  toolReportedFailure(id: string, text: string): void {
    const open = this.#tools.get(id);
    if (open !== undefined) open.reportedFailure = text;
  }

  /**
   * The attempt under way of the open call `id` failed with `error` and the host runs the call again under the same
   * id (a retry the model does not see): the call stays open, as one call, and ends once with what the model read;
   * this attempt is recorded in its end (`attempt_index`, `failed_attempts`). `endedMs`: when the attempt ended.
   */
  toolAttemptFailed(id: string, error: unknown, endedMs = Date.now()): void {
    const open = this.#tools.get(id);
    if (open === undefined) return;
    const { type, message } = describeError(error);
    const attempt = { error_type: type, error_message: message, duration_ms: endedMs - (open.attemptStartedMs ?? open.startedMs) };
    (open.failedAttempts ??= []).push(attempt);
    // The next attempt's own MCP result says whether it failed.
    open.reportedFailure = undefined;
    open.attemptStartedMs = Date.now();
  }

  /** The text of the failure tool call `id`'s MCP result reported (`toolReportedFailure`), while the call is open. */
  reportedFailure(id: string): string | undefined {
    return this.#tools.get(id)?.reportedFailure;
  }

  /**
   * Ends a tool call; `failed` carries the error (or the framework's error
   * text). `denied`: the call never ran because its approval was denied (the
   * text is what the model is told). `paused`: the call stopped to wait for
   * a human (a LangGraph `interrupt()`) and runs again, with the same id,
   * when the run is resumed: no result yet, and not a failure. `routedTo`:
   * the tool the host ran instead of the one the model named (an alias).
   * `endedMs`: when the call ended, for one recorded after it ended (its
   * outcome known only later), so its duration is the tool's own.
   */
  toolEnd(id: string, outcome: { result?: unknown; error?: unknown; failed?: boolean; name?: string; denied?: string; paused?: boolean; routedTo?: string; endedMs?: number }): void {
    // After the run ended, its open tools were already ended with it.
    if (this.#ended) return;
    const open = this.#tools.get(id);
    this.#tools.delete(id);
    toolCallEnded(this, id);
    const denied = outcome.denied;
    const paused = outcome.paused === true;
    const failed = denied === undefined && !paused && (outcome.failed === true || outcome.error !== undefined);
    this.core.emit('post_tool_call', () => {
      const error = failed ? describeError(outcome.error ?? outcome.result) : undefined;
      return {
        ...this.ids,
        tool_call_id: id,
        tool_name: open?.name ?? outcome.name ?? 'tool',
        args: open?.args,
        result: denied ?? (paused ? null : failed && outcome.result === undefined ? `${error!.type}: ${error!.message}` : resultText(outcome.result)),
        duration_ms: open === undefined ? undefined : (outcome.endedMs ?? Date.now()) - open.startedMs,
        status: denied !== undefined ? 'denied' : paused ? 'interrupted' : failed ? 'error' : 'ok',
        error_type: error?.type ?? null,
        error_message: error?.message ?? null,
        ...(outcome.routedTo === undefined ? {} : { routed_to: outcome.routedTo }),
        // The call ran more than once: the outcome is the last attempt's, the index says which, the others failed.
        ...(open?.failedAttempts === undefined ? {} : { attempt_index: open.failedAttempts.length, failed_attempts: open.failedAttempts }),
      };
    });
  }

  /**
   * A call the model asked for that the framework refused without running
   * it (no such tool, arguments that do not parse or do not fit the tool's
   * schema): recorded as the model sent it, failed with the framework's
   * error and the text it produced (what the model is told, when it is told
   * anything), so the call is not left without an outcome.
   */
  toolRefused(call: CallOfTool, outcome: { error: unknown; text: string }, apiRequestId?: string): void {
    this.toolStart(call, apiRequestId);
    this.toolEnd(call.id, { result: outcome.text, error: outcome.error, name: call.name });
  }

  /**
   * A response's calls as its step records them, and the results it carries of calls an earlier response made that
   * wait for one ({@link laterHostedResult}). A later result of a call this run is not waiting on stays a call of the
   * response that carried it, so its result is not lost.
   */
  sortProviderResults(calls: readonly CallOfTool[]): { calls: readonly CallOfTool[]; later: readonly CallOfTool[] } {
    // Almost every response carries no later result: its calls as they are.
    if (!calls.some((call) => call.providerResultLater === true)) return { calls, later: NO_CALLS };
    const own: CallOfTool[] = [];
    const later: CallOfTool[] = [];
    for (const call of calls) {
      if (call.providerResultLater !== true) own.push(call);
      else if (this.#awaitingProviderResult.has(call.id)) later.push(call);
      else own.push({ ...call, providerResultLater: false });
    }
    return { calls: own, later };
  }

  /**
   * A call the provider runs whose result comes in a later response (`providerResultPending`, OpenAI's programmatic
   * tool calling): its tool call opens with the response that made it, so the trajectory holds the call's outcome
   * under that call, once, when the result arrives ({@link providerResultArrived}), and its span lasts while the
   * provider's program waited on the program's function calls. A run that ends first ends it, as any open tool call.
   */
  providerResultAwaited(call: CallOfTool, apiRequestId?: string): void {
    if (this.#ended || this.#awaitingProviderResult.has(call.id)) return;
    this.#awaitingProviderResult.add(call.id);
    this.toolStart(call, apiRequestId);
  }

  /** The result of a call {@link providerResultAwaited} waits on, arrived in a later response: the call's outcome. */
  providerResultArrived(result: CallOfTool): void {
    if (!this.#awaitingProviderResult.delete(result.id)) return;
    const failed = result.providerError !== undefined;
    this.toolEnd(result.id, failed ? { result: recordedValue(result.providerResult), error: reportedToolError(result.providerError!) } : { result: recordedValue(result.providerResult) });
  }

  /** Approval asked for a tool call (the framework paused for a human or a policy). */
  approvalRequest(toolCallId: string, description: string | undefined, command?: string): void {
    if (this.#providerAsked.has(toolCallId)) return;
    this.core.emit('pre_approval_request', () => ({
      session_id: this.sessionId,
      turn_id: this.ids.turn_id,
      tool_call_id: toolCallId,
      session_key: this.sessionId,
      description,
      command,
      surface: this.core.platform,
    }));
  }

  /**
   * The approval decision: `once` (approved), or `session`/`always` when the
   * approval was given for the rest of the session or for good, or `deny`;
   * `decidedBy` when a policy, not a person, decided. `changedArgs`: the
   * input an allowing decision runs the call with instead of the model's
   * ({@link changedArgs}); the call's own arguments stay the model's, so
   * this is the one place that says what ran.
   */
  approvalResponse(toolCallId: string, approved: boolean, description?: string, decidedBy?: string, lasting?: 'session' | 'always', changedArgs?: Record<string, unknown>): void {
    const changed = approved ? changedArgs : undefined;
    this.#answered.add(toolCallId);
    this.core.emit('post_approval_response', () => ({
      session_id: this.sessionId,
      turn_id: this.ids.turn_id,
      tool_call_id: toolCallId,
      session_key: this.sessionId,
      description: description ?? (changed === undefined ? undefined : CHANGED_INPUT),
      surface: this.core.platform,
      choice: approved ? (lasting ?? 'once') : 'deny',
      ...(decidedBy === undefined ? {} : { decided_by: decidedBy }),
      ...(changed === undefined ? {} : { changed_args: changed }),
    }));
  }

  /**
   * A provider asked the program to approve a call of its response ({@link providerApprovalCall}):
   * `pre_approval_request` under the request's id, once.
   */
  providerApprovalAsked(call: CallOfTool): void {
    if (this.#providerAsked.has(call.id)) return;
    this.approvalRequest(call.id, `${call.name} needs approval`, textOrJson(call.arguments));
    this.#providerAsked.add(call.id);
  }

  /**
   * The program's answer to a provider's approval request, as the request that carries it says: a
   * `post_approval_response` of the request's id (`decidedBy` when a policy of the framework's answered), once. No
   * tool outcome: the provider runs an approved call itself, in the next response, and tells the model of a denied one.
   */
  providerApprovalAnswer(answer: ProviderApprovalAnswer, decidedBy?: string): void {
    if (this.#answered.has(answer.id)) return;
    this.approvalResponse(answer.id, answer.approved, answer.reason, decidedBy);
  }

  noteAssistantText(text: string): void {
    if (text !== '') this.#lastText = text;
  }

  /**
   * Closes the turn (and the session or the sub-agent link). Idempotent.
   * Tools still open (an aborted stream, a run that failed around them) end
   * first, as failed: nothing is left to a later hook that would land after
   * the session closed. (Open API attempts are the adapter's to end: a run
   * keeps no reference to its calls, whose request thunks may hold the
   * framework's run.) `keepSessionOpen`: the run paused
   * (an approval) and a later run resumes it in the same session;
   * `AdapterCore.releaseSession` closes it if none does. For a sub-agent,
   * its link stays open the same way: a later run continues it
   * (`continuesSubagent`) or `closeLink` closes it.
   */
  end(status: RunStatus, finalText?: string, error?: unknown, extra?: { keepSessionOpen?: boolean; turnEnd?: Record<string, unknown> }): void {
    if (this.#ended) return;
    const leftOpen = new RunEndedError(status);
    for (const id of [...this.#tools.keys()]) this.toolEnd(id, { error: leftOpen });
    this.#ended = true;
    const core = this.core;
    const text = finalText ?? this.#lastText;
    if (status === 'completed') {
      core.emit('post_llm_call', () => ({
        ...this.ids,
        user_message: toJson(this.#userMessage ?? '') as string,
        assistant_response: text,
        model: this.model,
        platform: core.platform,
      }));
    }
    core.emit('on_session_end', () => ({
      ...this.ids,
      completed: status === 'completed',
      failed: status === 'failed',
      interrupted: status === 'interrupted',
      turn_exit_reason: status === 'completed' ? 'final_response' : status === 'failed' ? `error: ${describeError(error).message}` : 'interrupted',
      ...(status === 'failed' ? { error_type: describeError(error).type, error_message: describeError(error).message } : {}),
      model: this.model,
      platform: core.platform,
      ...extra?.turnEnd,
    }));
    const parent = this.parent;
    if (parent !== undefined && extra?.keepSessionOpen === true) {
      this.#heldLink = { status, text };
    } else if (parent !== undefined) {
      this.#closeLink(status, text);
    } else if (this.ownsSession && extra?.keepSessionOpen !== true) {
      core.releaseSession(this.sessionId, `run_${status}`);
    }
  }

  /** Closes the sub-agent link this run kept open when it ended (no later run continued it). Idempotent. */
  closeLink(): void {
    const held = this.#heldLink;
    if (held === undefined) return;
    this.#heldLink = undefined;
    this.#closeLink(held.status, held.text);
  }

  #closeLink(status: RunStatus, text: string): void {
    const core = this.core;
    const parent = this.parent!;
    core.closeAfterLinks(this.sessionId, () => {
      core.emit('on_session_finalize', () => ({ session_id: this.sessionId, platform: core.platform, reason: 'subagent_complete' }));
      core.emit('subagent_stop', () => ({
        parent_session_id: parent.run.sessionId,
        parent_turn_id: parent.run.ids.turn_id,
        child_session_id: this.sessionId,
        child_role: this.agentName,
        child_summary: text,
        child_status: status,
        tool_call_id: parent.toolCallId,
        duration_ms: Date.now() - this.linkStartedMs,
      }));
      core.linkClosed(parent.run.sessionId);
    });
  }
}

/** One logical API call: attempts share its `api_request_id` and count up `retry_count`. */
export class ApiCall {
  readonly run: AgentRun;
  readonly ids: ApiCallIds;
  #attempts = 0;
  #open = false;
  #startedAt = 0;
  #request: (() => RequestParts) | undefined;
  #requestMemo: RequestParts | undefined;
  #settled = false;

  constructor(run: AgentRun, ids: ApiCallIds) {
    this.run = run;
    this.ids = ids;
  }

  /** Attempts started so far. */
  get attempts(): number {
    return this.#attempts;
  }

  /** True while an attempt has started and not ended. */
  get attemptOpen(): boolean {
    return this.#open;
  }

  /** True once a response or a final error closed the call. */
  get settled(): boolean {
    return this.#settled;
  }

  #parts(): RequestParts {
    if (this.#requestMemo === undefined) this.#requestMemo = this.#request?.() ?? { messages: [] };
    return this.#requestMemo;
  }

  #base(): Record<string, unknown> {
    const run = this.run;
    const parts = this.#parts();
    return {
      ...run.ids,
      ...this.ids,
      platform: run.core.platform,
      model: parts.model ?? run.requestedModel,
      provider: parts.provider ?? run.provider,
    };
  }

  /** Sets the request later attempts reuse (the framework may only show it once). */
  describe(request: () => RequestParts): void {
    this.#request = request;
    this.#requestMemo = undefined;
  }

  /** A provider attempt begins: `pre_api_request` with `retry_count` = attempts so far. */
  attemptStart(request?: () => RequestParts): void {
    const run = this.run;
    if (run.ended) return;
    if (request !== undefined) this.describe(request);
    const retryCount = this.#attempts;
    this.#attempts += 1;
    this.#open = true;
    this.#startedAt = now();
    if (retryCount === 0) {
      const core = run.core;
      if (core.hooks.has('pre_llm_call')) {
        const parts = core.guard.run('reading the request', () => this.#parts());
        run.startTurn(parts === undefined ? undefined : lastUserMessage(parts.messages));
      } else run.startTurn(undefined);
    }
    const startedAt = this.#startedAt;
    run.core.emit('pre_api_request', () => {
      const parts = this.#parts();
      const body: Record<string, unknown> = { ...(parts.settings ?? {}), model: parts.model ?? run.requestedModel, messages: toJson(parts.messages) };
      if (parts.tools !== undefined && parts.tools.length > 0) body.tools = parts.tools.map(chatTool);
      return {
        ...this.#base(),
        retry_count: retryCount,
        message_count: parts.messages.length,
        tool_count: parts.tools?.length ?? 0,
        started_at: startedAt,
        request: { body },
      };
    });
  }

  /**
   * The open attempt failed: `api_request_error` with its `retry_count`. `partial`: what the answer had delivered when
   * it failed (a stream the program stopped, or an error event mid-answer), written as the error's `response`, so the
   * trajectory's step shows the text the user saw and its tokens, with the error. The one rule for a cut stream.
   */
  attemptError(error: unknown, final = false, partial?: ResponseParts): void {
    if (this.run.ended) return;
    if (!this.#open) this.attemptStart();
    this.#open = false;
    if (final) this.#settled = true;
    const retryCount = this.#attempts - 1;
    const startedAt = this.#startedAt;
    const endedAt = now();
    this.run.core.emit('api_request_error', () => {
      const described = describeError(error);
      return {
        ...this.#base(),
        retry_count: retryCount,
        started_at: startedAt,
        ended_at: endedAt,
        api_duration: endedAt - startedAt,
        status_code: described.statusCode ?? null,
        retryable: described.retryable,
        reason: described.type,
        error: { type: described.type, message: described.message },
        ...(partial === undefined ? {} : { response: this.#responseBody(partial, partial.toolCalls).response }),
      };
    });
  }

  /** No more attempts will come (the last one's error was already reported). */
  settle(): void {
    this.#settled = true;
  }

  /** The open attempt succeeded: `post_api_request` with the assistant message and usage. */
  attemptEnd(response: ResponseParts): void {
    if (this.run.ended) return;
    if (!this.#open) this.attemptStart();
    this.#open = false;
    this.#settled = true;
    const run = this.run;
    run.noteAssistantText(response.text);
    run.noteAnsweredModel(response.model);
    const { calls, later } = run.sortProviderResults(response.toolCalls);
    const startedAt = this.#startedAt;
    const endedAt = now();
    run.core.emit('post_api_request', () => {
      const { response: body, message, usage, model, finish } = this.#responseBody(response, calls);
      return {
        ...this.#base(),
        started_at: startedAt,
        ended_at: endedAt,
        api_duration: endedAt - startedAt,
        finish_reason: finish,
        response_model: model,
        response: body,
        usage,
        assistant_message: message,
        assistant_content_chars: response.text.length,
        assistant_tool_call_count: calls.length,
      };
    });
    for (const call of calls) if (call.providerApproval === true) run.providerApprovalAsked(call);
    for (const result of later) run.providerResultArrived(result);
    for (const call of calls) if (call.providerResultPending === true) run.providerResultAwaited(call, this.ids.api_request_id);
  }

  /** A response as the hooks write it: its message, usage (with what it was charged), model and finish reason in the one vocabulary. */
  #responseBody(response: ResponseParts, calls: readonly CallOfTool[]): { response: Record<string, unknown>; message: ReturnType<typeof answerMessage>; usage: Record<string, unknown> | null; model: string | undefined; finish: string | null } {
    const run = this.run;
    const message = answerMessage({ text: response.text, toolCalls: calls, reasoning: response.reasoning, media: response.media });
    const parts = this.#parts();
    const counted = recordedUsage(readProviderUsage(response.usage), parts.provider ?? run.provider);
    const usage = (response.costUsd === undefined ? counted : { ...counted, cost_usd: response.costUsd }) ?? null;
    const model = response.model ?? parts.model ?? run.requestedModel;
    const finish = chatFinishReason(response.finishReason, localCalls(calls).length > 0) ?? null;
    const difference = settingsDifference(parts.settings, response.sent, parts.provider ?? run.provider);
    // `reasoning` at the top of the response is where the ATIF builder reads a step's reasoning_content.
    const body = { id: response.id, model, assistant_message: message, finish_reason: finish, usage, ...(response.reasoning ? { reasoning: response.reasoning } : {}), ...(response.servedBy === undefined ? {} : { served_by: response.servedBy }), ...(response.failedUpstreams === undefined ? {} : { failed_upstreams: [...response.failedUpstreams] }), ...difference };
    return { response: body, message, usage, model, finish };
  }
}

/**
 * A tool result as the model was told it: a string as it is, any other value as its JSON text ({@link recordedText}),
 * and a tool that returned nothing (`undefined`, `null`) as `null`, the text the frameworks that hand the adapters a
 * raw value send (the AI SDK: `"null"` on every provider's wire). A framework that tells the model something else
 * hands its own text (the Agents SDK's `"undefined"`, a LangChain `ToolMessage`'s `""`). Recorded as no value, the
 * trajectory showed no observation of a call the model was told a result of.
 */
function resultText(result: unknown): string {
  return typeof result === 'string' ? result : recordedText(result);
}

/** What a tool or API attempt still open when its run ended failed with. */
export class RunEndedError extends Error {
  override name = 'RunEnded';
  constructor(status: RunStatus) {
    super(`the run ended (${status}) before this finished`);
  }
}

/**
 * Why a call the framework refused failed, where the framework's own error
 * is not seen (only the text it produced, or the message part that says
 * the call could not be parsed).
 */
export class ToolCallRefused extends Error {
  override name = 'ToolCallRefused';
}
