/**
 * A tracing processor that turns the Agents SDK's traces and spans into
 * observer hooks, plus the model wrapper that reports each provider attempt.
 *
 * - A trace is a top-level run (session: `groupId`, else the trace id).
 * - `turn` spans hold one logical model call; every `getResponse` of a wrapped
 *   model inside the turn is an attempt of it (the runner's retries run inside
 *   the same turn). Without a wrapped model, `generation`/`response` spans
 *   (which OpenAI's own models open) are the attempts.
 * - `function` spans are tool calls. Their data has no call id, so each is
 *   joined to the next unclaimed `function_call` of that name in the turn's
 *   response: the runner starts function spans in the response's order.
 * - An `agent` span under a `task` span whose parent is a `function` span is
 *   an agent run as a tool (`agent.asTool`): a sub-agent of that tool call.
 * - A `handoff` span is recorded as the transfer tool call the model made
 *   (`pre_tool_call`/`post_tool_call`, result `{"assistant": <to_agent>}`);
 *   the next agent's calls stay in the same session, as in the SDK.
 *
 * @module
 */

import type { AdapterCore, AgentRun, ApiCall, RequestParts } from '../core/run.ts';
import type { CallOfTool } from '../core/shapes.ts';
import { chatMessages, offeredTools, responseParts } from './items.ts';

type Loose = Record<string, unknown>;

/** The parts of an SDK span this reads. */
export interface SpanLike {
  readonly spanId: string;
  readonly traceId: string;
  readonly parentId: string | null;
  readonly spanData: Loose & { type: string };
  readonly error: { message: string; data?: Record<string, unknown> } | null;
}

export interface TraceLike {
  readonly traceId: string;
  readonly name: string;
  readonly groupId: string | null;
}

interface SpanState {
  readonly run: AgentRun | undefined;
  /** A sub-agent link waiting for its agent span (a `task` span under a tool). */
  readonly pendingParent?: { run: AgentRun; toolCallId: string };
  /** The sub-agent run this span's end closes. */
  readonly ownsRun?: boolean;
  readonly toolCallId?: string;
  /** Turn spans: the logical model call, whether a wrapped model reports its attempts, the unclaimed calls. */
  call?: ApiCall;
  wrapped?: boolean;
  pending?: CallOfTool[];
  turn?: SpanState;
}

const str = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

export class AgentsProcessor {
  readonly #core: AdapterCore;
  readonly #traces = new Map<string, AgentRun>();
  readonly #spans = new Map<string, SpanState>();
  readonly #spansByTrace = new Map<string, Set<string>>();
  /** Traces whose top-level agent span ended with an error. */
  readonly #failed = new Set<string>();
  #disposed = false;

  constructor(core: AdapterCore) {
    this.#core = core;
  }

  dispose(): void {
    this.#disposed = true;
  }

  // ------------------------------------------------------------ TracingProcessor

  async onTraceStart(trace: TraceLike): Promise<void> {
    if (this.#disposed) return;
    this.#core.guard.run('onTraceStart', () => {
      const run = this.#core.startRun({ runId: trace.traceId, conversationId: str(trace.groupId), agentName: str(trace.name) });
      if (run !== undefined) this.#traces.set(trace.traceId, run);
    });
  }

  async onTraceEnd(trace: TraceLike): Promise<void> {
    this.#core.guard.run('onTraceEnd', () => {
      const run = this.#traces.get(trace.traceId);
      this.#traces.delete(trace.traceId);
      // Spans the SDK never ended (a run that threw) must not outlive their trace.
      const spans = this.#spansByTrace.get(trace.traceId);
      this.#spansByTrace.delete(trace.traceId);
      if (spans !== undefined) for (const id of spans) this.#spans.delete(id);
      const failed = this.#failed.delete(trace.traceId);
      run?.end(failed ? 'failed' : 'completed');
    });
  }

  async onSpanStart(span: SpanLike): Promise<void> {
    this.#core.guard.run('onSpanStart', () => this.spanStarted(span));
  }

  async onSpanEnd(span: SpanLike): Promise<void> {
    this.#core.guard.run('onSpanEnd', () => this.#spanEnded(span));
  }

  async shutdown(): Promise<void> {}

  async forceFlush(): Promise<void> {}

  // ------------------------------------------------------------ spans

  /** Idempotent: the model wrapper may see a turn before the (queued) processor call does. */
  spanStarted(span: SpanLike): SpanState | undefined {
    const known = this.#spans.get(span.spanId);
    if (known !== undefined) return known;
    const topRun = this.#traces.get(span.traceId);
    if (topRun === undefined) return undefined;
    const parent = span.parentId === null ? undefined : this.#spans.get(span.parentId);
    const inherited = parent?.run ?? topRun;
    const data = span.spanData;
    let state: SpanState;
    switch (data.type) {
      case 'task':
        state =
          parent?.toolCallId !== undefined && parent.run !== undefined
            ? { run: undefined, pendingParent: { run: parent.run, toolCallId: parent.toolCallId } }
            : { run: inherited };
        break;
      case 'agent': {
        const link = parent?.pendingParent;
        if (link !== undefined) {
          const run = this.#core.startRun({ runId: span.spanId, agentName: str(data.name), parent: link });
          state = { run, ownsRun: run !== undefined };
        } else state = { run: parent?.run ?? (parent?.pendingParent === undefined ? inherited : undefined) };
        break;
      }
      case 'turn':
        state = { run: inherited, pending: [] };
        break;
      case 'function':
        state = this.#toolStart(inherited, parent, str(data.name) ?? 'tool', data.input, span.spanId);
        break;
      case 'generation':
      case 'response':
        state = { run: inherited, turn: parent };
        if (parent?.pending !== undefined && parent.wrapped !== true) this.#attemptStart(parent, inherited, span);
        break;
      default:
        state = { run: inherited, turn: parent?.pending !== undefined ? parent : parent?.turn };
    }
    if (state.turn === undefined && parent?.pending !== undefined) state.turn = parent;
    this.#spans.set(span.spanId, state);
    let spans = this.#spansByTrace.get(span.traceId);
    if (spans === undefined) this.#spansByTrace.set(span.traceId, (spans = new Set()));
    spans.add(span.spanId);
    return state;
  }

  #toolStart(run: AgentRun | undefined, parent: SpanState | undefined, name: string, input: unknown, spanId: string): SpanState {
    const turn = parent?.pending !== undefined ? parent : parent?.turn;
    if (run === undefined) return { run };
    const pending = turn?.pending ?? [];
    const index = pending.findIndex((call) => call.name === name);
    const call = index >= 0 ? pending.splice(index, 1)[0]! : undefined;
    // No model response seen (a model that is neither wrapped nor traced): the span id stands in.
    const id = call?.id ?? `function:${spanId}`;
    run.toolStart({ id, name, arguments: call?.arguments ?? (str(input) ?? '{}') }, turn?.call?.ids.api_request_id);
    return { run, toolCallId: id, turn };
  }

  #spanEnded(span: SpanLike): void {
    const state = this.#spans.get(span.spanId);
    if (state === undefined) return;
    this.#spans.delete(span.spanId);
    this.#spansByTrace.get(span.traceId)?.delete(span.spanId);
    const data = span.spanData;
    const run = state.run;
    if (run === undefined) return;
    switch (data.type) {
      case 'function':
        if (state.toolCallId === undefined) return;
        if (span.error !== null) run.toolEnd(state.toolCallId, { result: str(data.output), error: toolError(span.error) });
        else run.toolEnd(state.toolCallId, { result: data.output });
        return;
      case 'generation':
      case 'response': {
        const turn = state.turn;
        const call = turn?.call;
        if (turn === undefined || turn.wrapped === true || call === undefined || !call.attemptOpen) return;
        if (span.error !== null) {
          call.attemptError(toolError(span.error));
          return;
        }
        const response = (data.type === 'response' ? (data._response as Loose | undefined) : undefined) ?? {};
        const output = data.type === 'generation' ? data.output : response.output;
        const parts = responseParts(output, data.usage ?? response.usage, str(data.model) ?? str(response.model) ?? run.model, data.response_id ?? response.id);
        this.#remember(turn, parts.toolCalls);
        call.attemptEnd(parts);
        return;
      }
      case 'handoff': {
        const turn = state.turn;
        const to = str(data.to_agent) ?? 'agent';
        const pending = turn?.pending ?? [];
        const index = pending.findIndex((call) => call.name.startsWith('transfer_to'));
        const call = index >= 0 ? pending.splice(index, 1)[0]! : { id: `handoff:${span.spanId}`, name: `transfer_to_${to}`, arguments: '{}' };
        run.toolStart(call, turn?.call?.ids.api_request_id);
        run.toolEnd(call.id, span.error !== null ? { error: toolError(span.error) } : { result: JSON.stringify({ assistant: to }) });
        return;
      }
      case 'agent':
        if (state.ownsRun !== true && span.error !== null) this.#failed.add(span.traceId);
        if (state.ownsRun === true) run.end(span.error !== null ? 'failed' : 'completed', undefined, span.error === null ? undefined : toolError(span.error));
        return;
      default:
        return;
    }
  }

  #remember(turn: SpanState, calls: readonly CallOfTool[]): void {
    turn.pending = [...calls];
  }

  #attemptStart(turn: SpanState, run: AgentRun, span: SpanLike | undefined, request?: () => RequestParts): void {
    if (turn.call === undefined || turn.call.settled) turn.call = run.newApiCall();
    const data = span?.spanData;
    turn.call.attemptStart(
      request ?? (() => ({ messages: chatMessages(undefined, data?.input ?? data?._input), model: str(data?.model) ?? run.model })),
    );
  }

  // ------------------------------------------------------------ wrapped models

  /** Runs one attempt of a wrapped model inside the current turn span. */
  async attempt<T extends Loose>(current: SpanLike | null, modelName: string | undefined, request: Loose, execute: () => Promise<T>): Promise<T> {
    const turn = current === null || this.#disposed ? undefined : this.#core.guard.run('model attempt', () => this.spanStarted(current));
    const run = turn?.run;
    if (turn === undefined || run === undefined || turn.pending === undefined) return await execute();
    this.#wrappedAttemptStart(turn, run, modelName, request);
    let response: T;
    try {
      response = await execute();
    } catch (error) {
      this.#core.guard.run('model attempt', () => turn.call?.attemptError(error));
      throw error;
    }
    this.#core.guard.run('model attempt', () => {
      const parts = responseParts(response.output, response.usage, modelName ?? run.model, response.responseId);
      this.#remember(turn, parts.toolCalls);
      turn.call?.attemptEnd(parts);
    });
    return response;
  }

  #wrappedAttemptStart(turn: SpanState, run: AgentRun, modelName: string | undefined, request: Loose): void {
    this.#core.guard.run('model attempt', () => {
      // From now on this turn's generation/response spans are not attempts: the wrapper reports them.
      turn.wrapped = true;
      if (run.model === undefined && modelName !== undefined) run.model = modelName;
      this.#attemptStart(turn, run, undefined, () => ({
        messages: chatMessages(request.systemInstructions, request.input),
        tools: offeredTools(request.tools, request.handoffs),
        model: modelName ?? run.model,
      }));
    });
  }

  /** The same for a streamed attempt: the `response_done` event carries the response. */
  async *attemptStream(current: SpanLike | null, modelName: string | undefined, request: Loose, stream: () => AsyncIterable<Loose>): AsyncIterable<Loose> {
    const turn = current === null || this.#disposed ? undefined : this.#core.guard.run('model attempt', () => this.spanStarted(current));
    const run = turn?.run;
    if (turn === undefined || run === undefined || turn.pending === undefined) {
      yield* stream();
      return;
    }
    this.#wrappedAttemptStart(turn, run, modelName, request);
    try {
      for await (const event of stream()) {
        if (event.type === 'response_done') {
          this.#core.guard.run('model attempt', () => {
            const response = (event.response ?? {}) as Loose;
            const parts = responseParts(response.output, response.usage, modelName ?? run.model, response.id);
            this.#remember(turn, parts.toolCalls);
            turn.call?.attemptEnd(parts);
          });
        }
        yield event;
      }
    } catch (error) {
      this.#core.guard.run('model attempt', () => {
        if (turn.call?.attemptOpen === true) turn.call.attemptError(error);
      });
      throw error;
    }
  }
}

/** A span error as an `Error` whose message says what the SDK recorded. */
function toolError(error: { message: string; data?: Record<string, unknown> }): Error {
  const detail = error.data?.error;
  const described = new Error(typeof detail === 'string' && detail !== '' ? detail : error.message);
  described.name = 'ToolError';
  return described;
}

