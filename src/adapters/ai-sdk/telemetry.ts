/**
 * The AI SDK `Telemetry` integration: run, step, model-call and tool events
 * become hooks, and the two execution wrappers the SDK offers integrations do
 * the rest. `executeLanguageModelCall` runs once per provider attempt, inside
 * the SDK's retry loop, so every attempt is seen on every runtime (the
 * `ai:telemetry` tracing channel is not needed, and on Bun it drops
 * messages). `executeTool` runs the tool's `execute` inside our tool frame,
 * so a `generateText`/`streamText`/`ToolLoopAgent` run started by the tool
 * becomes that tool call's sub-agent.
 *
 * @module
 */

import { runAttempt } from './attempt.ts';
import { approvalRequests, approvalResponses, chatMessages, offeredTools, responseOfCallEnd } from './messages.ts';
import type { AdapterCore, AgentRun, ApiCall, RequestParts } from '../core/run.ts';
import { currentToolFrame, runInToolFrame } from '../core/context.ts';
import { lastUserMessage } from '../core/shapes.ts';

type Event = Record<string, unknown>;

interface RunState {
  readonly run: AgentRun;
  call: ApiCall | undefined;
}

const TEXT_OPERATIONS = new Set(['ai.generateText', 'ai.streamText']);
const CONVERSATION_KEYS = ['sessionId', 'session_id', 'conversationId', 'conversation_id', 'threadId', 'thread_id'];

const str = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

function conversationIdOf(event: Event): string | undefined {
  for (const source of [event.runtimeContext, event.metadata]) {
    if (typeof source !== 'object' || source === null) continue;
    for (const key of CONVERSATION_KEYS) {
      const id = str((source as Record<string, unknown>)[key]);
      if (id !== undefined) return id;
    }
  }
  return undefined;
}

function requestOf(event: Event): () => RequestParts {
  return () => {
    const settings: Record<string, unknown> = {};
    for (const key of ['temperature', 'topP', 'maxOutputTokens', 'seed']) if (typeof event[key] === 'number') settings[key] = event[key];
    return {
      messages: chatMessages(event.instructions, event.messages),
      tools: offeredTools(event.tools),
      model: str(event.modelId),
      settings,
    };
  };
}

/** The integration object `registerTelemetry` takes; `dispose()` makes it inert. */
export class AiSdkTelemetry {
  readonly #core: AdapterCore;
  readonly #runs = new Map<string, RunState>();
  #disposed = false;

  constructor(core: AdapterCore) {
    this.#core = core;
  }

  dispose(): void {
    this.#disposed = true;
  }

  #guard(label: string, fn: () => void): void {
    this.#core.guard.run(label, fn);
  }

  readonly onStart = (event: Event): void => {
    if (this.#disposed || !TEXT_OPERATIONS.has(str(event.operationId) ?? '')) return;
    this.#guard('onStart', () => {
      const callId = str(event.callId);
      if (callId === undefined) return;
      const frame = currentToolFrame();
      const run = this.#core.startRun({
        runId: callId,
        conversationId: conversationIdOf(event),
        agentName: str(event.functionId),
        model: str(event.modelId),
        provider: str(event.provider),
        userMessage: () => lastUserMessage(chatMessages(undefined, event.messages)) ?? str(event.prompt),
        parent: frame === undefined || frame.run.ended ? undefined : { run: frame.run, toolCallId: frame.toolCallId },
      });
      if (run === undefined) return;
      this.#runs.set(callId, { run, call: undefined });
      for (const [toolCallId, approved] of approvalResponses(event.messages)) run.approvalResponse(toolCallId, approved);
    });
  };

  readonly onLanguageModelCallStart = (event: Event): void => {
    const state = this.#state(event);
    if (state === undefined) return;
    this.#guard('onLanguageModelCallStart', () => {
      const call = state.run.newApiCall();
      call.describe(requestOf(event));
      state.call = call;
    });
  };

  /** Once per provider attempt, inside the SDK's retry loop. The result and the error pass through untouched. */
  readonly executeLanguageModelCall = async <T>(options: { callId: string; execute: () => PromiseLike<T> }): Promise<T> => {
    const state = this.#runs.get(options.callId);
    const call = state?.call;
    if (call === undefined || call.settled) return await options.execute();
    this.#guard('executeLanguageModelCall', () => call.attemptStart());
    try {
      return await runAttempt(call, options.execute);
    } catch (error) {
      this.#guard('executeLanguageModelCall', () => call.attemptError(error));
      throw error;
    }
  };

  readonly onLanguageModelCallEnd = (event: Event): void => {
    const state = this.#state(event);
    const call = state?.call;
    if (call === undefined) return;
    this.#guard('onLanguageModelCallEnd', () => call.attemptEnd(responseOfCallEnd(event)));
  };

  readonly onToolExecutionStart = (event: Event): void => {
    const state = this.#state(event);
    if (state === undefined) return;
    this.#guard('onToolExecutionStart', () => {
      const call = (event.toolCall ?? {}) as Event;
      const id = str(call.toolCallId);
      if (id === undefined) return;
      state.run.toolStart({ id, name: str(call.toolName) ?? 'tool', arguments: call.input }, state.call?.ids.api_request_id);
    });
  };

  /** Runs the tool's `execute` inside its tool frame, so a run it starts is its sub-agent. */
  readonly executeTool = async <T>(options: { callId: string; toolCallId: string; execute: () => PromiseLike<T> }): Promise<T> => {
    const state = this.#runs.get(options.callId);
    if (state === undefined) return await options.execute();
    return await runInToolFrame({ run: state.run, toolCallId: options.toolCallId }, () => options.execute());
  };

  readonly onToolExecutionEnd = (event: Event): void => {
    const state = this.#state(event);
    if (state === undefined) return;
    this.#guard('onToolExecutionEnd', () => {
      const call = (event.toolCall ?? {}) as Event;
      const id = str(call.toolCallId);
      if (id === undefined) return;
      const output = (event.toolOutput ?? {}) as Event;
      if (output.type === 'tool-error') state.run.toolEnd(id, { error: output.error, name: str(call.toolName) });
      else state.run.toolEnd(id, { result: output.output, name: str(call.toolName) });
    });
  };

  readonly onStepEnd = (event: Event): void => {
    const state = this.#state(event);
    if (state === undefined) return;
    this.#guard('onStepEnd', () => {
      for (const [toolCallId, reason] of approvalRequests(event.content)) state.run.approvalRequest(toolCallId, reason);
    });
  };

  readonly onStepError = (event: Event): void => {
    const state = this.#state(event);
    if (state === undefined) return;
    this.#guard('onStepError', () => this.#failOpenCall(state, event.error));
  };

  readonly onEnd = (event: Event): void => {
    const state = this.#take(event);
    if (state === undefined) return;
    this.#guard('onEnd', () => state.run.end('completed', str(event.text)));
  };

  readonly onAbort = (event: Event): void => {
    const state = this.#take(event);
    if (state === undefined) return;
    this.#guard('onAbort', () => {
      this.#failOpenCall(state, new Error('aborted'));
      state.run.end('interrupted');
    });
  };

  readonly onError = (event: unknown): void => {
    const record = (typeof event === 'object' && event !== null ? event : {}) as Event;
    const state = this.#take(record);
    if (state === undefined) return;
    this.#guard('onError', () => {
      this.#failOpenCall(state, record.error);
      state.run.end('failed', undefined, record.error);
    });
  };

  /** A model call that never got a response (a stream that broke, an abort) ends as an error. */
  #failOpenCall(state: RunState, error: unknown): void {
    const call = state.call;
    if (call === undefined || call.settled) return;
    // An attempt that already failed was reported by executeLanguageModelCall.
    if (call.attemptOpen || call.attempts === 0) call.attemptError(error, true);
    else call.settle();
  }

  #state(event: Event): RunState | undefined {
    if (this.#runs.size === 0) return undefined;
    const callId = str(event.callId);
    return callId === undefined ? undefined : this.#runs.get(callId);
  }

  #take(event: Event): RunState | undefined {
    const state = this.#state(event);
    if (state !== undefined) this.#runs.delete(str(event.callId)!);
    return state;
  }
}

