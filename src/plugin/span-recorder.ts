/**
 * Recording hooks as backend calls: marks, LLM and tool spans, and closing
 * sessions (ending the spans they left open, popping their scope, writing
 * their trajectory).
 *
 * Every method takes the hook's `timestampUs` when it was captured earlier
 * (a hook queued during start-up or activation), so a replayed hook keeps
 * the time it was emitted at; `undefined` lets the backend stamp it now.
 *
 * @module
 */

import type { Logger } from '../shared/logger.ts';
import { safeLog } from '../shared/logger.ts';
import type { LlmHandle, RelayBackend, ToolHandle } from '../relay/contract.ts';
import type { LoosePayload } from './payload.ts';
import { apiKeyOf, isRecord, metadataOf, providerOf, sessionIdOf, toolArgsOf, toolKeyOf, toolNameOf, truthy } from './payload.ts';
import type { EvictionReason, SessionState, SessionTable } from './sessions.ts';
import type { PluginCounters } from './status.ts';
import type { TrajectoryWriter } from './trajectories.ts';
import { stringOf } from '../shared/text.ts';
import { remoteTrajectoryRef } from './remote.ts';
import { errorMessage } from '../shared/error-text.ts';

/** Tool statuses that record the tool span as failed. */
const FAILED_TOOL_STATUSES = new Set(['error', 'failed', 'failure', 'timeout', 'timed_out', 'blocked', 'denied', 'cancelled']);

export interface RecorderOptions {
  backend: RelayBackend;
  sessions: SessionTable;
  trajectories: TrajectoryWriter;
  counters: PluginCounters;
  logger: Logger;
  /** Sends what is queued now (a session continuing another process ended: that process may be stopped any time). */
  exportNow?(): void;
  /** The host's clock (`createNemoRelayPlugin`'s `clock`), for what the plugin closes itself; else the backend's. */
  clock?: () => number;
}

/** Held start hooks per session (and managed calls remembered) at most. */
const MAX_DEFERRED = 10_000;

export class Recorder {
  private readonly backend: RelayBackend;
  /** Calls that ran managed, until their end hook comes. */
  private readonly managedKeys = new Set<string>();
  private readonly sessions: SessionTable;
  private readonly counters: PluginCounters;
  private supersededReported = false;

  constructor(private readonly options: RecorderOptions) {
    this.backend = options.backend;
    this.sessions = options.sessions;
    this.counters = options.counters;
  }

  // ---------------------------------------------------------------- sessions

  openSession(payload: LoosePayload, timestampUs?: number): SessionState {
    return this.sessions.ensure(payload, timestampUs);
  }

  /** `on_session_end`: a turn is over, the session goes on; its partial trajectory is written. */
  endTurn(payload: LoosePayload, timestampUs?: number): void {
    const state = this.mark('hermes.session.end', payload, timestampUs);
    this.options.trajectories.write(state, 'partial');
  }

  /** Closes a session: ends its open spans, pops its scope, writes its trajectory. */
  closeSession(payload: LoosePayload, timestampUs?: number): void {
    const state = this.sessions.remove(sessionIdOf(payload));
    if (state) this.finish(state, payload, timestampUs);
  }

  /** Closes a session the table evicted; its partial trajectory is written. */
  evicted(state: SessionState, reason: EvictionReason): void {
    this.counters.evictedSessions += 1;
    safeLog(this.options.logger, 'debug', `NeMo Relay session ${state.trajectoryName} evicted (${reason}); its partial trajectory is written`);
    try {
      this.finish(state, { session_id: state.sessionId, reason: `evicted_${reason}` }, this.options.clock?.());
    } catch (error) {
      this.fail(`session ${state.trajectoryName} eviction failed`, error);
    }
  }

  /** Closes every live session (shutdown). */
  closeAll(reason: string): void {
    for (const [sessionId, state] of [...this.sessions.live]) {
      try {
        this.closeSession({ session_id: sessionId, reason }, this.options.clock?.());
      } catch (error) {
        // Named as its trajectory is: redaction governs what the log says too.
        this.fail(`session ${state.trajectoryName} close failed`, error);
      }
    }
  }

  private finish(state: SessionState, output: unknown, timestampUs?: number): void {
    const failures: string[] = [];
    // Held starts whose end never came are recorded, then ended as abandoned like any open span.
    if (state.deferred !== undefined) for (const key of [...state.deferred.keys()]) this.materialize(state, key);
    this.endAbandonedSpans(state, failures, timestampUs);
    if (state.handle) {
      try {
        this.backend.popScope(state.handle, timestampUs !== undefined ? { output, timestampUs } : { output });
      } catch (error) {
        failures.push(`session scope pop failed: ${errorMessage(error)}`);
      }
    }
    this.options.trajectories.finish(state);
    if (state.continuesRemote) this.options.exportNow?.();
    if (failures.length > 0) {
      this.counters.errors += failures.length;
      safeLog(this.options.logger, 'warn', `NeMo Relay session ${state.trajectoryName} teardown completed with errors: ${failures.join('; ')}`);
    }
  }

  // ---------------------------------------------------------------- marks

  mark(name: string, payload: LoosePayload, timestampUs?: number): SessionState {
    const state = this.sessions.ensure(payload, timestampUs);
    this.backend.mark({ name, parent: state.handle, data: payload, metadata: metadataOf(payload), ...stamp(timestampUs) });
    return state;
  }

  markSubagentStart(payload: LoosePayload, timestampUs?: number): void {
    const parent = this.sessions.ensure(payload, timestampUs);
    const metadata = metadataOf(payload);
    this.sessions.linkSubagent(parent, payload, metadata);
    this.backend.mark({ name: 'hermes.subagent.start', parent: parent.handle, data: payload, metadata, ...stamp(timestampUs) });
  }

  markSubagentStop(payload: LoosePayload, timestampUs?: number): void {
    this.sessions.unlinkSubagent(payload);
    const state = this.mark('hermes.subagent.stop', payload, timestampUs);
    // A child that ran in another process: the tool call that ran it references its trajectory.
    const ref = remoteTrajectoryRef(payload);
    if (ref === undefined || !truthy(payload.tool_call_id)) return;
    const key = toolKeyOf(payload);
    if (!state.toolSpans.has(key)) return;
    const refs = (state.remoteTrajectories ??= new Map()).get(key);
    if (refs === undefined) state.remoteTrajectories.set(key, [ref]);
    else refs.push(ref);
  }

  // ---------------------------------------------------------------- calls held while managed execution may record them

  /**
   * With managed execution on, a call's start hook waits: a managed call
   * records itself (then `managedStarted` drops the hook), and a call the
   * host only reports through its hooks is recorded from them at its end,
   * starting at the time its start hook came. Without this a host that
   * enables `adaptive` but never runs calls through `execute` recorded no
   * LLM or tool span at all (on native too).
   */
  defer(kind: 'llm' | 'tool', payload: LoosePayload, timestampUs: number): void {
    const state = this.sessions.ensure(payload, timestampUs);
    const deferred = (state.deferred ??= new Map());
    const key = `${kind}:${kind === 'llm' ? apiKeyOf(payload) : toolKeyOf(payload)}`;
    deferred.set(key, { kind, payload, timestampUs });
    // Starts whose call never ends must not pile up: the oldest is recorded now (and ends when its session does).
    if (deferred.size > MAX_DEFERRED) this.materialize(state, deferred.keys().next().value as string);
  }

  /** A call is running managed: its held start hook is dropped, and its end hook will record nothing. */
  managedStarted(kind: 'llm' | 'tool', payload: LoosePayload): void {
    const key = `${kind}:${kind === 'llm' ? apiKeyOf(payload) : toolKeyOf(payload)}`;
    const state = this.sessions.live.get(sessionIdOf(payload));
    state?.deferred?.delete(key);
    this.managedKeys.add(key);
    if (this.managedKeys.size > MAX_DEFERRED) this.managedKeys.delete(this.managedKeys.values().next().value as string);
  }

  /**
   * Whether a call's end hook is managed execution's to record (then it
   * records nothing). `ends` forgets the call.
   */
  recordedByManaged(kind: 'llm' | 'tool', payload: LoosePayload, ends: boolean): boolean {
    const key = `${kind}:${kind === 'llm' ? apiKeyOf(payload) : toolKeyOf(payload)}`;
    if (!this.managedKeys.has(key)) return false;
    if (ends) this.managedKeys.delete(key);
    return true;
  }

  /** Records a held start hook as the span's start (at its own time), before its end is recorded. */
  private materialize(state: SessionState, key: string): void {
    const held = state.deferred?.get(key);
    if (held === undefined) return;
    state.deferred!.delete(key);
    // Into this session's state (a closing session is no longer in the table).
    if (held.kind === 'llm') this.startLlmIn(state, held.payload, held.timestampUs);
    else this.startToolIn(state, held.payload, held.timestampUs);
  }

  private materializeFor(kind: 'llm' | 'tool', payload: LoosePayload, state: SessionState): void {
    if (state.deferred === undefined || state.deferred.size === 0) return;
    this.materialize(state, `${kind}:${kind === 'llm' ? apiKeyOf(payload) : toolKeyOf(payload)}`);
  }

  // ---------------------------------------------------------------- LLM spans

  llmStart(payload: LoosePayload, timestampUs?: number): void {
    this.startLlmIn(this.sessions.ensure(payload, timestampUs), payload, timestampUs);
  }

  private startLlmIn(state: SessionState, payload: LoosePayload, timestampUs: number | undefined): void {
    const key = apiKeyOf(payload);
    if (state.llmSpans.size > 0) this.endSuperseded(state, 'llm', key, timestampUs);
    const request = payload.request;
    const body = isRecord(request) ? (request.body ?? null) : {};
    const span = this.backend.llmStart({
      name: providerOf(payload),
      parent: state.handle,
      request: { headers: {}, content: body },
      metadata: metadataOf(payload),
      modelName: truthy(payload.model) ? stringOf(payload.model) : '',
      ...stamp(timestampUs),
    });
    state.llmSpans.set(key, span);
  }

  /** An end whose start the recorder never saw: counted, and kept as a mark so the trajectory still shows it. */
  private unmatchedEnd(name: string, payload: LoosePayload, timestampUs: number | undefined): void {
    // Counted once recorded: a payload whose getter throws fails the mark and is recorded again from a plain copy.
    this.mark(name, payload, timestampUs);
    this.counters.unmatchedEnds += 1;
  }

  llmEnd(payload: LoosePayload, timestampUs?: number): void {
    const state = this.sessions.ensure(payload, timestampUs);
    this.materializeFor('llm', payload, state);
    const key = apiKeyOf(payload);
    const span = state.llmSpans.get(key);
    if (!span) return this.unmatchedEnd('hermes.api.response.unmatched', payload, timestampUs);
    // Every payload field is read before the span leaves the map, so a
    // getter that throws leaves it there for the retry from a plain copy.
    const end = { response: responseOf(payload), metadata: metadataOf(payload), ...stamp(timestampUs) };
    state.llmSpans.delete(key);
    this.backend.llmEnd(span, end);
  }

  llmError(payload: LoosePayload, timestampUs?: number): void {
    const state = this.sessions.ensure(payload, timestampUs);
    this.materializeFor('llm', payload, state);
    const key = apiKeyOf(payload);
    const span = state.llmSpans.get(key);
    if (!span) return this.unmatchedEnd('hermes.api.error', payload, timestampUs);
    const error = withStatusCode(truthy(payload.error) ? payload.error : {}, payload.status_code);
    // The error travels in the response (ATIF shows it) and in the metadata,
    // and the span ends as an error where the backend can say so (memory;
    // native forces OK on a manual LLM end). What the answer had delivered
    // before it failed (a cut stream's text, its usage) is that response's.
    const delivered = payload.response;
    const response = isRecord(delivered) ? { ...delivered, error } : { error };
    const metadata = metadataOf(payload);
    metadata['error.type'] = errorTypeOf(error, payload);
    state.llmSpans.delete(key);
    this.backend.llmEnd(span, { response, metadata, status: 'error', ...stamp(timestampUs) });
  }

  // ---------------------------------------------------------------- tool spans

  toolStart(payload: LoosePayload, timestampUs?: number): void {
    this.startToolIn(this.sessions.ensure(payload, timestampUs), payload, timestampUs);
  }

  private startToolIn(state: SessionState, payload: LoosePayload, timestampUs: number | undefined): void {
    const key = toolKeyOf(payload);
    if (state.toolSpans.size > 0) this.endSuperseded(state, 'tool', key, timestampUs);
    const span = this.backend.toolStart({
      name: toolNameOf(payload),
      parent: state.handle,
      args: toolArgsOf(payload),
      metadata: metadataOf(payload),
      toolCallId: truthy(payload.tool_call_id) ? stringOf(payload.tool_call_id) : '',
      ...stamp(timestampUs),
    });
    state.toolSpans.set(key, span);
  }

  toolEnd(payload: LoosePayload, timestampUs?: number): void {
    const state = this.sessions.ensure(payload, timestampUs);
    this.materializeFor('tool', payload, state);
    const key = toolKeyOf(payload);
    const span = state.toolSpans.get(key);
    if (!span) return this.unmatchedEnd('hermes.tool.response.unmatched', payload, timestampUs);
    const metadata = metadataOf(payload);
    const failed = toolFailed(payload);
    if (failed) metadata['error.type'] = truthy(payload.error_type) ? stringOf(payload.error_type) : stringOf(payload.status ?? 'error');
    // Not the seed's: why the call failed, which the result (what the model was told) often does not say.
    if (failed && truthy(payload.error_message)) metadata['error.message'] = stringOf(payload.error_message);
    // The tool that ran when an alias routed the call elsewhere: the span keeps the name the model called.
    if (truthy(payload.routed_to)) metadata.routed_to = stringOf(payload.routed_to);
    const remote = state.remoteTrajectories?.get(key);
    if (remote !== undefined) metadata.subagent_trajectory_ref = remote;
    const result = payload.result ?? null;
    state.toolSpans.delete(key);
    if (remote !== undefined) state.remoteTrajectories!.delete(key);
    this.backend.toolEnd(span, { result, status: failed ? 'error' : 'ok', metadata, ...stamp(timestampUs) });
  }

  // ---------------------------------------------------------------- spans left open

  // A span left open would read as a crash; ending it says the session closed first.
  private endAbandonedSpans(state: SessionState, failures: string[], timestampUs: number | undefined): void {
    // The usual session closes with no span open: no iterators then.
    if (state.llmSpans.size === 0 && state.toolSpans.size === 0) return;
    for (const [key, span] of state.llmSpans) {
      this.endAbandonedLlm(key, span, 'session_closed', 'the session closed before the API request finished', failures, timestampUs);
    }
    state.llmSpans.clear();
    for (const [key, span] of state.toolSpans) this.endAbandonedTool(key, span, 'session_closed', failures, timestampUs);
    state.toolSpans.clear();
  }

  private endAbandonedLlm(key: string, span: LlmHandle, reason: string, explanation: string, failures: string[], timestampUs: number | undefined): void {
    this.counters.abandonedSpans += 1;
    try {
      this.backend.llmEnd(span, {
        response: { error: { type: reason, message: explanation } },
        metadata: { 'error.type': reason, api_request_id: key },
        ...stamp(timestampUs),
      });
    } catch (error) {
      failures.push(`open LLM span ${key} end failed: ${errorMessage(error)}`);
    }
  }

  private endAbandonedTool(key: string, span: ToolHandle, reason: string, failures: string[], timestampUs: number | undefined): void {
    this.counters.abandonedSpans += 1;
    try {
      this.backend.toolEnd(span, { result: null, status: 'error', metadata: { 'error.type': reason, tool_call_id: key }, ...stamp(timestampUs) });
    } catch (error) {
      failures.push(`open tool span ${key} end failed: ${errorMessage(error)}`);
    }
  }

  /**
   * A second start under the key of a span that is still open (a host that
   * reuses an id, or the plugin registered twice) would orphan the first:
   * it is ended as superseded, so no span is ever left open.
   */
  private endSuperseded(state: SessionState, kind: 'llm' | 'tool', key: string, timestampUs: number | undefined): void {
    const failures: string[] = [];
    if (kind === 'llm') {
      const open = state.llmSpans.get(key);
      if (open === undefined) return;
      state.llmSpans.delete(key);
      this.endAbandonedLlm(key, open, 'superseded', 'another pre_api_request with the same api_request_id started before this one ended', failures, timestampUs);
    } else {
      const open = state.toolSpans.get(key);
      if (open === undefined) return;
      state.toolSpans.delete(key);
      this.endAbandonedTool(key, open, 'superseded', failures, timestampUs);
    }
    if (!this.supersededReported) {
      this.supersededReported = true;
      safeLog(this.options.logger, 'warn', `NeMo Relay: a ${kind === 'llm' ? 'pre_api_request' : 'pre_tool_call'} reused the id ${JSON.stringify(key)} of a span still open; the open one was ended as superseded (reported once; see status().counters.abandonedSpans)`);
    }
    for (const failure of failures) this.fail('superseded span', failure);
  }

  private fail(context: string, error: unknown): void {
    this.counters.errors += 1;
    safeLog(this.options.logger, 'warn', `${context}: ${errorMessage(error)}`);
  }
}

/** `{ timestampUs }` for a replayed hook; nothing to spread for a live one (the backend stamps it). */
function stamp(timestampUs: number | undefined): { timestampUs?: number } | undefined {
  return timestampUs === undefined ? undefined : { timestampUs };
}

/**
 * The response recorded on an LLM end. Hermes passes usage and the assistant
 * message beside a sanitised `response`; they are folded in when the
 * response lacks them, so ATIF gets the message and token metrics.
 */
function responseOf(payload: LoosePayload): unknown {
  const response = truthy(payload.response) ? payload.response : {};
  if (!isRecord(response)) return response;
  const usage = 'usage' in response ? undefined : payload.usage;
  const message = 'assistant_message' in response ? undefined : payload.assistant_message;
  const finish = 'finish_reason' in response ? undefined : payload.finish_reason;
  const model = !('model' in response) && truthy(payload.response_model) ? payload.response_model : undefined;
  const addUsage = usage !== undefined && usage !== null;
  const addMessage = message !== undefined && message !== null;
  const addFinish = finish !== undefined && finish !== null;
  if (!addUsage && !addMessage && !addFinish && model === undefined) return response;
  const merged = shallowCopy(response);
  if (addUsage) merged.usage = usage;
  if (addMessage) merged.assistant_message = message;
  if (addFinish) merged.finish_reason = finish;
  if (model !== undefined) merged.model = model;
  return merged;
}

/**
 * `{ ...source }`, built key by key. On V8 a spread copy that then gains
 * properties costs more (bench/RESULTS.md, "Figures behind the code");
 * the spread is kept for the shapes a key-by-key copy would get wrong (an
 * own `__proto__` key, symbol keys).
 */
function shallowCopy(source: Record<string, unknown>): Record<string, unknown> {
  const keys = Object.keys(source);
  if (keys.includes('__proto__') || Object.getOwnPropertySymbols(source).length > 0) return { ...source };
  const copy: Record<string, unknown> = {};
  for (let i = 0; i < keys.length; i++) copy[keys[i]!] = source[keys[i]!];
  return copy;
}

function toolFailed(payload: LoosePayload): boolean {
  const status = typeof payload.status === 'string' ? payload.status.toLowerCase() : '';
  if (status) return FAILED_TOOL_STATUSES.has(status);
  if (truthy(payload.error_type) || truthy(payload.error_message)) return true;
  const result = payload.result;
  return isRecord(result) && truthy(result.error);
}

function errorTypeOf(error: unknown, payload: LoosePayload): string {
  if (isRecord(error) && truthy(error.type)) return stringOf(error.type);
  if (truthy(payload.reason)) return stringOf(payload.reason);
  return 'api_request_error';
}

/**
 * The recorded error of a refused attempt, with the HTTP status the hook gave (`status_code`) where the error object
 * names none: the payload's own field reached no file, so a 429 and a 500 read alike but for the message's text.
 */
function withStatusCode(error: unknown, statusCode: unknown): unknown {
  if (typeof statusCode !== 'number' || !isRecord(error) || 'status_code' in error) return error;
  return { ...error, status_code: statusCode };
}
