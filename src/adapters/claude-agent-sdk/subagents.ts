/**
 * The sub-agents of one query (the Agent tool, formerly Task): each is its
 * own session, linked to the tool call that started it.
 *
 * What the SDK tells about a sub-agent comes from several places:
 * - `task_started` (stream) or an assistant message with `agent_id` and
 *   `parent_tool_use_id`: which tool call started which agent;
 * - `SubagentStart` / `SubagentStop` (hooks): its type, its last text and
 *   its transcript's path;
 * - its transcript: every model request it made, with its text, its tool
 *   calls and its final usage (the stream carries only some of its messages,
 *   with provisional usage, and no partial events);
 * - `tool_progress.subagent_retry` (stream): an attempt that failed and was
 *   retried (foreground agents only; a background agent's retries are not
 *   streamed);
 * - `task_notification` / `task_updated` (stream): how it ended;
 * - the Agent call's own result (`PostToolUse`'s `tool_response`, the
 *   stream's `tool_use_result`): a foreground agent's final answer, its text
 *   blocks and the API's usage of that reply.
 *
 * A sub-agent is recorded once the parent's tool call is: its requests as
 * its transcript completes them (a request is complete when the next record
 * follows it, or when the agent ends). The CLI writes transcripts in batches,
 * after it streams: the stream can say an agent stopped before its
 * transcript holds a single record, and a foreground agent's call can return
 * before its transcript holds the final answer. Unless the query keeps no
 * transcript (`persistSession: false`), the agent waits for it (its record
 * of the final answer says what the call's result does not: the response's
 * id, its stop reason, its thinking) until the query ends; only then does an
 * agent whose transcript is short fall back to the stream's messages and,
 * for the final answer, to the Agent call's result.
 *
 * @module
 */

import type { AdapterCore, AgentRun, ApiCall, RequestParts, RunStatus } from '../core/run.ts';
import type { ChatMessage } from '../core/shapes.ts';
import { ApiAttemptError, AssistantBlocks, contentText, PROVIDER, toolResults, toolUseIds, anthropicUsage, rejectedByUser, resultOutcome, type Loose } from './messages.ts';
import { isRecord } from '../../shared/record.ts';
import { tokenCount, tokenUsage } from '../../formats/usage.ts';
import { nonEmptyString } from '../../shared/text.ts';
import type { ToolBook } from './tools.ts';
import { guessedTranscriptPath, TranscriptTail } from './transcript.ts';
import type { QueryTokens } from './usage.ts';

/** An assistant message being read, record by record (one content block each). */
interface Request {
  readonly id: string;
  model?: string;
  usage?: unknown;
  stopReason?: string;
  readonly blocks: AssistantBlocks;
}

/** A foreground agent's final answer, as its Agent call's result reports it. */
interface Report {
  readonly blocks: AssistantBlocks;
  readonly usage: unknown;
}

/** The tool calls (`<id>`) and tool results (`result:<id>`, read as toolResults reads them) of a message, the stream's or a transcript's record. */
function toolIds(message: Loose): string[] {
  const content = isRecord(message.message) ? message.message.content : undefined;
  if (!Array.isArray(content)) return [];
  return [...toolUseIds(content), ...toolResults(content).map((result) => `result:${result.toolUseId}`)];
}

export class SubAgent {
  readonly agentId: string;
  toolUseId: string | undefined;
  agentType: string | undefined;
  prompt: string | undefined;
  /** Run in the background (`task_started.is_backgrounded`): its call was answered at once, and it outlives the turn. */
  background = false;
  /** Its last text, as `SubagentStop` reports it. */
  summary: string | undefined;
  /** Its final answer, as the Agent call's result reports it (a foreground agent that completed). */
  #report: Report | undefined;
  /** Its Agent call returned (see returned()). */
  #returned = false;
  /** Its task notification was read; `total_tokens` its usage says (see notified()). */
  #notified = false;
  #notifiedTotal: number | undefined;
  run: AgentRun | undefined;
  /** How it ended, once known; `ended` once recorded. */
  stop: { status: RunStatus; summary?: string } | undefined;
  ended = false;
  /** Failed attempts, each with the request (0-based, in the order it made them) the agent was making. */
  readonly #retries: Array<{ error: ApiAttemptError; request: number }> = [];
  /** The CLI's message that it gave up on a request (its retries ran out) was read: that request's last attempt. */
  #gaveUp = false;
  /** How many requests were recorded. */
  #emitted = 0;
  #tail: TranscriptTail | undefined;
  /** Records read before the run could start, and the messages the stream showed (the fallback without a transcript). */
  readonly #pending: Loose[] = [];
  readonly #streamed: Loose[] = [];
  #fromTranscript = false;
  /** Whether the CLI writes transcripts for this query (it does unless `persistSession: false`). */
  readonly #transcriptExpected: boolean;
  /** Requests the stream showed, and those the transcript held: the transcript may lag the stream. */
  readonly #streamedIds = new Set<string>();
  readonly #transcriptIds = new Set<string>();
  /** Tool calls and tool results the transcript held (by tool call id): what the stream showed beyond them is not in it. */
  readonly #transcriptTools = new Set<string>();
  #request: Request | undefined;
  /**
   * Tool results read while the reply that made the calls was still being
   * read: the CLI runs a call as soon as its block arrives, so a fast result
   * (a denial, say) is written between two blocks of one reply. They follow
   * the reply, which is one request whatever came between its blocks.
   */
  readonly #heldResults: Loose[] = [];
  #lastText = '';
  /** Whether the last request recorded asked for tools (so it was not the agent's final answer). */
  #lastCalledTools = false;
  /** The model that answered its latest answered request: what its failed attempts are named with (see #failedAttempts). */
  #answeredModel: string | undefined;
  /** Its conversation so far, as each request's `messages`. */
  readonly #history: ChatMessage[] = [];

  readonly #tokens: QueryTokens;

  constructor(agentId: string, transcriptExpected: boolean, tokens: QueryTokens) {
    this.agentId = agentId;
    this.#transcriptExpected = transcriptExpected;
    this.#tokens = tokens;
  }

  /** The transcript's path, a guess from the session's, or the one `SubagentStop` names. */
  transcriptAt(path: string): void {
    if (this.#tail === undefined) this.#tail = new TranscriptTail(path);
    else this.#tail.retarget(path);
  }

  guessTranscript(sessionTranscript: string | undefined): void {
    if (this.#tail !== undefined || sessionTranscript === undefined) return;
    const path = guessedTranscriptPath(sessionTranscript, this.agentId);
    if (path !== undefined) this.#tail = new TranscriptTail(path);
  }

  /** A message of this agent in the stream (assistant or user, `parent_tool_use_id` set). */
  streamed(message: Loose): void {
    if (this.ended) return;
    this.#streamed.push(message);
    const id = message.type === 'assistant' && isRecord(message.message) ? nonEmptyString(message.message.id) : undefined;
    if (id !== undefined) this.#streamedIds.add(id);
  }

  /** Its Agent call returned, whatever its result said: nothing more of the agent is coming from the call. */
  returned(): void {
    this.#returned = true;
  }

  /**
   * Its task notification (the stream's `task_notification`, after `task_updated`): how it ended, and its `usage`, whose
   * `total_tokens` is its last reply's prompt and output tokens together, as the API counted them (the CLI's count of
   * the agent's last message: its input, cache reads and writes, and output, or the running count of its stream when
   * higher). For a background agent that is the only figure of its final answer's output tokens besides its
   * transcript: its call returned as it started, so no result reports the answer.
   */
  notified(usage: unknown): void {
    this.#notified = true;
    if (isRecord(usage)) this.#notifiedTotal = tokenCount(usage.total_tokens);
  }

  /**
   * The Agent call's result said the agent completed: its `content` is the final answer's text blocks and its `usage`
   * the API's usage of that reply (the transcript's record of it, when it comes, says the same).
   */
  reported(response: unknown): void {
    if (this.ended || !isRecord(response) || response.status !== 'completed' || !Array.isArray(response.content)) return;
    const blocks = new AssistantBlocks();
    blocks.add(response.content.filter((block) => isRecord(block) && block.type === 'text'));
    this.#report = { blocks, usage: isRecord(response.usage) ? response.usage : undefined };
  }

  /**
   * Whether the transcript holds all the agent did: every request the stream
   * showed, and the last text `SubagentStop` reported. The CLI writes the
   * transcript after it streams, so the stream's end of a task can come
   * first, even before the transcript's first record. When nothing reported
   * its last text (the program's abort cut the hooks, `SubagentStop`
   * included), a completed agent's transcript holds all once the last request
   * read asked for no tool: that is its answer, which the stream never shows.
   */
  #complete(): boolean {
    // Without a transcript, a foreground agent that completed waits for its call's result (the CLI streams the task's
    // end before it returns the call): its final answer, which the stream shows only when the program forwards the
    // agent's text (`forwardSubagentText`), and then with provisional usage; the result has the API's.
    // A background agent that completed waits for its notification, which the CLI sends right after `task_updated`: its
    // usage gives the API's output tokens of the final answer (see #notifiedUsage).
    if (!this.#fromTranscript) {
      if (this.#transcriptExpected || this.stop?.status !== 'completed') return !this.#transcriptExpected;
      return this.background ? this.#notified : this.#report !== undefined || this.#returned;
    }
    for (const id of this.#streamedIds) if (!this.#transcriptIds.has(id)) return false;
    const summary = this.summary?.trim();
    if (summary === undefined || summary === '') return this.stop?.status !== 'completed' || (this.#request?.blocks.toolCalls.length ?? 0) === 0;
    // The last request read is still being read (nothing follows it yet): its text is the agent's last so far.
    return (this.#request?.blocks.text ?? this.#lastText).trim() === summary;
  }

  /**
   * A failed attempt (`tool_progress.subagent_retry`, which names no request): it belongs to the request after every
   * one the agent is known to have made. The stream shows each request that called tools before the tools run, so
   * before any later request; the transcript, read later, may not hold them yet.
   */
  retried(error: ApiAttemptError): void {
    this.#retries.push({ error, request: new Set([...this.#streamedIds, ...this.#transcriptIds]).size });
  }

  /**
   * Records what can be recorded now: starts the session once the parent's
   * tool call is recorded and the agent's model is known (or it ended), then
   * the requests its transcript completed, then its end once the transcript
   * holds everything (or `force`: the query ended).
   */
  advance(core: AdapterCore, tools: ToolBook, onProvisional: () => void, force = false): void {
    if (this.ended) return;
    const records = this.#tail?.read() ?? [];
    if (records.length > 0) {
      this.#fromTranscript = true;
      for (const record of records) {
        this.#pending.push(record);
        const id = record.type === 'assistant' && isRecord(record.message) ? nonEmptyString(record.message.id) : undefined;
        if (id !== undefined) this.#transcriptIds.add(id);
        for (const tool of toolIds(record)) this.#transcriptTools.add(tool);
      }
    }
    if (this.run === undefined) {
      // Started as soon as the parent's call is recorded, so the parent's trajectory links it from that call.
      const parentRun = this.toolUseId === undefined ? undefined : tools.agentCallRun(this.toolUseId);
      if (parentRun === undefined) return;
      this.run = core.startRun({
        runId: this.agentId,
        agentName: this.agentType,
        provider: PROVIDER,
        userMessage: this.prompt === undefined ? undefined : () => this.prompt,
        parent: { run: parentRun, toolCallId: this.toolUseId! },
      });
      if (this.run === undefined) {
        this.ended = true;
        this.#forget();
        return;
      }
      if (this.prompt !== undefined) this.#history.push({ role: 'user', content: this.prompt });
    }
    const run = this.run;
    this.#drain(run, tools);
    if (this.stop === undefined || (!force && !this.#complete())) return;
    const rest = this.#untranscribed();
    if (rest.length > 0) {
      // No transcript, or not all of it (persistSession: false, or the agent's call returned, or the query ended, before
      // the CLI wrote it): what the stream showed beyond it, with its provisional usage.
      onProvisional();
      for (const message of rest) this.#pending.push(message);
      this.#drain(run, tools);
    }
    this.#reportedUsage();
    this.#notifiedUsage();
    this.#emitRequest(run, tools);
    // Its final answer, which the transcript does not hold yet (or the stream never shows): the Agent call's result.
    if (this.#report !== undefined && this.stop.status === 'completed' && (this.#emitted === 0 || this.#lastCalledTools)) this.#emitReport(run, tools, this.#report);
    const last = this.#retries.at(-1);
    if (this.stop.status === 'failed' && last !== undefined && !this.#gaveUp) {
      // It failed while its request was being retried: the retries ran out, and the last attempt was refused as the ones
      // before it (the stream does not say so; the CLI's message in the transcript comes after the agent's end).
      this.#retries.push({ error: new ApiAttemptError(last.error.name, this.stop.summary ?? last.error.message, last.error.status, false), request: last.request });
    }
    this.#unanswered(run);
    this.ended = true;
    // Stopped (interrupt(), or the task killed): the calls it left running end interrupted, the same whenever the CLI
    // writes its own answer for them into the transcript (see #results).
    if (this.stop.status === 'interrupted') tools.interruptOpen(run, 'the sub-agent was stopped before the tool returned');
    // Calls whose streamed error result the transcript never confirmed or corrected end as the stream said.
    tools.settle(run);
    run.end(this.stop.status, this.stop.summary ?? this.summary ?? this.#lastText);
    this.#forget();
  }

  /**
   * The final answer as the stream forwarded it (`forwardSubagentText`: its id, thinking and text, with the provisional
   * usage of the reply's first event) takes the API's usage of it from the Agent call's result, which reports that
   * reply: the one that asked for no tool and whose text is the result's. A transcript's record has the API's already.
   */
  #reportedUsage(): void {
    const request = this.#request;
    const report = this.#report;
    if (request === undefined || report === undefined || report.usage === undefined || this.stop?.status !== 'completed') return;
    if (this.#transcriptIds.has(request.id) || request.blocks.toolCalls.length > 0 || request.blocks.text.trim() !== report.blocks.text.trim()) return;
    request.usage = report.usage;
  }

  /**
   * A background agent's final answer as the stream forwarded it (`forwardSubagentText`), with the provisional output
   * tokens of the reply's first event: its notification's `total_tokens` less the reply's prompt tokens (the forwarded
   * message's, which are the API's) is the reply's output, as the API counted it. Taken only for the reply that asked
   * for no tool (the agent's last: nothing follows its answer), and never below what the stream said.
   */
  #notifiedUsage(): void {
    const request = this.#request;
    const total = this.#notifiedTotal;
    if (request === undefined || total === undefined || !this.background || this.stop?.status !== 'completed') return;
    if (this.#transcriptIds.has(request.id) || request.blocks.toolCalls.length > 0 || !isRecord(request.usage)) return;
    const counted = tokenUsage('anthropic_messages', request.usage);
    if (counted?.prompt === undefined) return;
    const output = total - counted.prompt;
    if (output >= (counted.completion ?? 0)) request.usage = { ...request.usage, output_tokens: output };
  }

  /**
   * The stream's messages the transcript read does not hold: all of them without a transcript, else those after the
   * part the CLI wrote (the transcript is written in order, so what it holds is the conversation's start).
   */
  #untranscribed(): Loose[] {
    if (!this.#fromTranscript) return [...this.#streamed];
    return this.#streamed.filter((message) => {
      const id = message.type === 'assistant' && isRecord(message.message) ? nonEmptyString(message.message.id) : undefined;
      const tools = toolIds(message);
      if (message.type === 'assistant') return id === undefined || !this.#transcriptIds.has(id) || tools.some((tool) => !this.#transcriptTools.has(tool));
      return tools.length > 0 && tools.some((tool) => !this.#transcriptTools.has(tool));
    });
  }

  #drain(run: AgentRun, tools: ToolBook): void {
    for (const record of this.#pending) this.#record(record, run, tools);
    this.#pending.length = 0;
  }

  #record(record: Loose, run: AgentRun, tools: ToolBook): void {
    const message = isRecord(record.message) ? record.message : undefined;
    if (message === undefined) return;
    if (record.type === 'assistant' && (record.isApiErrorMessage === true || nonEmptyString(record.error) !== undefined)) {
      // The CLI's own message that the request failed for good, no reply of the API's: the request's last attempt, refused.
      this.#emitRequest(run, tools);
      this.#gaveUp = true;
      const kind = nonEmptyString(record.error) ?? 'api_error';
      const status = typeof record.apiErrorStatus === 'number' ? record.apiErrorStatus : undefined;
      this.#retries.push({ error: new ApiAttemptError(kind, contentText(message.content) || kind, status, false), request: this.#emitted });
      return;
    }
    if (record.type === 'assistant') {
      const id = nonEmptyString(message.id) ?? '';
      if (this.#request !== undefined && this.#request.id !== id) this.#emitRequest(run, tools);
      if (this.#request === undefined) this.#request = { id, blocks: new AssistantBlocks() };
      const request = this.#request;
      request.model = nonEmptyString(message.model) ?? request.model;
      if (isRecord(message.usage)) request.usage = message.usage;
      request.stopReason = nonEmptyString(message.stop_reason) ?? request.stopReason;
      request.blocks.add(message.content);
      return;
    }
    if (this.#request !== undefined) {
      this.#heldResults.push(record);
      return;
    }
    this.#results(record, tools);
  }

  /** The reply read so far as one request, then the tool results that came while it was read. */
  #emitRequest(run: AgentRun, tools: ToolBook): void {
    if (this.#request === undefined) return;
    this.#emit(this.#request, run, tools);
    this.#request = undefined;
    for (const record of this.#heldResults.splice(0)) this.#results(record, tools);
  }

  #results(record: Loose, tools: ToolBook): void {
    const content = isRecord(record.message) ? record.message.content : undefined;
    for (const result of toolResults(content)) {
      this.#history.push({ role: 'tool', tool_call_id: result.toolUseId, content: result.content });
      // The CLI's answer for a call the user stopped reaches the transcript late or not at all, and the stream shows it
      // never: the call ends when the agent does, interrupted (a denial keeps its text, what the model was told).
      if (result.isError && rejectedByUser(record, result.toolUseId) && !tools.denied(result.toolUseId)) continue;
      tools.ended(result.toolUseId, resultOutcome(record, result));
    }
  }

  /** A request of the agent, asked with its conversation so far. */
  #newCall(run: AgentRun): { call: ApiCall; asked: (model?: string) => () => RequestParts } {
    const call = run.newApiCall();
    const history = this.#history.length;
    // The model a sub-agent asks for is not in its messages; the one that answered is its response's.
    const asked = (model?: string) => () => ({ messages: this.#history.slice(0, history), ...(model === undefined ? {} : { model }) });
    call.describe(asked());
    return { call, asked };
  }

  /**
   * Failed attempts of one call, named with a model as the main agent's are (with the query's). What a sub-agent asks
   * for is said nowhere: not in its requests, and its definition's `model` (an alias, `inherit`, nothing) the CLI
   * resolves with its settings and the Agent call's input. So they name the model that answered the sub-agent: this
   * request's answer after its retry, else its latest; none before any answer. The answered attempt names none, as before.
   */
  #failedAttempts(call: ApiCall, asked: (model?: string) => () => RequestParts, failures: readonly ApiAttemptError[], model: string | undefined, last = false): void {
    failures.forEach((error, index) => {
      call.attemptStart(asked(model));
      call.attemptError(error, last && index === failures.length - 1);
    });
    if (model !== undefined) call.describe(asked());
  }

  #emit(request: Request, run: AgentRun, tools: ToolBook, identified = true): void {
    const { call, asked } = this.#newCall(run);
    const index = this.#emitted++;
    // This request's failed attempts, and any said of an earlier one (none: recorded rather than lost).
    const failures = this.#retries.filter((retry) => retry.request <= index).map((retry) => retry.error);
    this.#failedAttempts(call, asked, failures, request.model ?? this.#answeredModel);
    this.#retries.splice(0, this.#retries.length, ...this.#retries.filter((retry) => retry.request > index));
    call.attemptStart();
    const { text, toolCalls, reasoning } = request.blocks;
    if (text !== '') this.#lastText = text;
    this.#lastCalledTools = toolCalls.length > 0;
    this.#answeredModel = request.model ?? this.#answeredModel;
    call.attemptEnd({ text, toolCalls, reasoning, usage: anthropicUsage(request.usage), finishReason: request.stopReason, model: request.model, ...(identified ? { id: request.id } : {}) });
    this.#tokens.add(request.model, undefined, request.usage);
    this.#history.push(request.blocks.chatMessage());
    for (const tool of toolCalls) tools.start(tool.id, tool.name, tool.arguments, run, call.ids.api_request_id);
  }

  /**
   * The final answer as the Agent call's result gives it: its text and the API's usage of it. The result names neither
   * the response's id nor the model that answered: the step is named with the model that answered the agent's latest
   * request, as its failed attempts are (see #failedAttempts).
   */
  #emitReport(run: AgentRun, tools: ToolBook, report: Report): void {
    this.#emit({ id: '', model: this.#answeredModel, usage: report.usage, stopReason: undefined, blocks: report.blocks }, run, tools, false);
  }

  /** A request refused and not retried before the agent ended (stopped while the CLI waited): a call whose attempts failed. */
  #unanswered(run: AgentRun): void {
    const retries = this.#retries.splice(0);
    if (retries.length === 0) return;
    const { call, asked } = this.#newCall(run);
    this.#failedAttempts(call, asked, retries.map((retry) => retry.error), this.#answeredModel, true);
  }

  #forget(): void {
    this.#report = undefined;
    this.#pending.length = 0;
    this.#heldResults.length = 0;
    this.#streamed.length = 0;
    this.#retries.length = 0;
    this.#history.length = 0;
    this.#tail = undefined;
  }
}

/** Every sub-agent of one query, by agent id and by the tool call that started it. */
export class SubAgents {
  readonly #byAgent = new Map<string, SubAgent>();
  readonly #byToolUse = new Map<string, SubAgent>();
  readonly #transcriptExpected: boolean;
  readonly #tokens: QueryTokens;

  /** `transcriptExpected`: the CLI writes a transcript per sub-agent (the query did not set `persistSession: false`); `tokens` counts their steps. */
  constructor(transcriptExpected: boolean, tokens: QueryTokens) {
    this.#transcriptExpected = transcriptExpected;
    this.#tokens = tokens;
  }

  /** The agent with this id or started by this tool call, created on first mention. */
  of(agentId: string | undefined, toolUseId: string | undefined): SubAgent | undefined {
    let agent = agentId === undefined ? undefined : this.#byAgent.get(agentId);
    agent ??= toolUseId === undefined ? undefined : this.#byToolUse.get(toolUseId);
    if (agent === undefined) {
      const id = agentId ?? (toolUseId === undefined ? undefined : `tool-${toolUseId}`);
      if (id === undefined) return undefined;
      agent = new SubAgent(id, this.#transcriptExpected, this.#tokens);
    }
    if (agentId !== undefined) this.#byAgent.set(agentId, agent);
    if (toolUseId !== undefined && agent.toolUseId === undefined) {
      agent.toolUseId = toolUseId;
      this.#byToolUse.set(toolUseId, agent);
    }
    return agent;
  }

  byToolUse(toolUseId: string): SubAgent | undefined {
    return this.#byToolUse.get(toolUseId);
  }

  *open(): IterableIterator<SubAgent> {
    for (const agent of new Set(this.#byAgent.values())) if (!agent.ended) yield agent;
    for (const agent of this.#byToolUse.values()) if (!agent.ended && !this.#byAgent.has(agent.agentId)) yield agent;
  }

  clear(): void {
    this.#byAgent.clear();
    this.#byToolUse.clear();
  }
}
