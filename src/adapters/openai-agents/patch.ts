/**
 * Where the adapter meets the Agents SDK: `Runner.prototype.run` and
 * `Runner.prototype.emit`, wrapped once for every adapter instance, and the
 * models, model providers and MCP servers runs use, wrapped in place. A
 * function tool's `invoke` is left as the SDK made it (`watchTool`).
 *
 * Why the prototype: the global `run()` goes through a `Runner` the SDK keeps
 * to itself, and `agent.asTool()` makes a new `Runner` for every call, so no
 * `runner.on(...)` subscription could see those runs. Every run, whichever
 * runner, goes through `Runner.prototype.run`, and every lifecycle event
 * (`agent_start`, `agent_tool_start`, `agent_handoff`, ...) through
 * `Runner.prototype.emit`; both work with tracing on or off.
 *
 * Each observed run executes inside an `AsyncLocalStorage` frame holding its
 * observers, so an event or a model call is routed to the run it belongs to
 * (a nested run gets its own frame); a function tool call's code is found
 * by the SDK's span current in it (`frameOfCurrentSpan`). Models are wrapped
 * where the runner gets them: from the runner's model provider, from `agent.model` or from
 * `runner.config.model` when that is a `Model` object. A wrapper outside any
 * observed run calls straight through; after the last adapter is removed
 * the prototype is restored and the wrappers left on models stay inert.
 *
 * @module
 */

import { AsyncLocalStorage } from 'node:async_hooks';
import { Runner, getCurrentSpan } from '@openai/agents';
import { addToolFrameFinder, runInApiCall, runOutsideToolFrames, type ToolFrame } from '../core/context.ts';
import type { ApiCall, ResponseParts } from '../core/run.ts';
import type { ProviderUsage } from '../../formats/usage.ts';
import { mcpErrorText } from '../mcp/meta.ts';
import { StreamedReasoning, streamedCacheWrites, streamedCost, streamedFailedUsage, streamedFinish, streamedModel, streamedServedBy, streamedFailedUpstreams, streamedWarnings } from './items.ts';
import { deliveredAnswer } from '../core/delivered.ts';
import { isRecord } from '../../shared/record.ts';

type Loose = Record<string, unknown>;
type AnyFunction = (...args: any[]) => any;

/** What observes one run: its lifecycle events, its model attempts and how it ends. */
export interface RunObserver {
  /** A lifecycle event the runner emitted (`agent_start`, `agent_tool_start`, ...). */
  event(type: string, args: readonly unknown[]): void;
  /** One model attempt; returns what to call when it ends, or nothing. */
  attempt(request: Loose, model: ModelInfo): AttemptObserver | undefined;
  /**
   * An input guardrail is given the input the SDK prepared for the model (a `session`'s items before the run's own):
   * a guardrail that runs an agent of its own opens the run's turn before any event carries that input.
   */
  guardrailInput(input: unknown): void;
  /** `run()` resolved (a `RunResult`, or a `StreamedRunResult` still running). */
  returned(result: unknown): void;
  /** `run()` rejected. */
  failed(error: unknown): void;
  /** The frame a function tool's call runs in (its sub-agents link to it), when the call is one of this run's. */
  toolFrame(callId: string): ToolFrame | undefined;
  /** A function tool's call timed out and the tool's `timeoutErrorFunction` answers for it. */
  toolThrew(callId: string, error: unknown): void;
  /** A tool guardrail of a function tool's call answered (`allow`, `rejectContent` or `throwException`). */
  toolGuardrail(callId: string, verdict: ToolGuardrailVerdict): void;
  /**
   * A tool's own work starts, in the caller's context (an MCP server's `callTool`, an apply_patch editor's method):
   * when it is that of a call of this run by a tool that says in its answer that it failed ({@link reportsFailure}),
   * what to call if the answer says so (with its text: an MCP result's `isError`, an editor's `status: 'failed'`), which
   * the SDK gives the model as an ordinary output.
   */
  reportingCall(): ((text: string) => void) | undefined;
}

/** A tool input or output guardrail's answer on one call, as the guardrail returned it. */
export interface ToolGuardrailVerdict {
  readonly kind: 'input' | 'output';
  readonly name: string;
  readonly behavior: 'allow' | 'rejectContent' | 'throwException';
  /** `rejectContent`'s message: what the model is told instead of running the tool, or instead of its output. */
  readonly message?: string;
}

export interface AttemptObserver {
  /** The model call the attempt is of: the model's own code runs inside it (core/context.ts). */
  readonly call: ApiCall;
  /** The attempt answered (for a stream: its `response_done` event's response). */
  response(response: Loose): void;
  error(error: unknown): void;
  /** The stream ended without a `response_done` event (the caller stopped it). */
  streamEnded(): void;
  /** A stream's attempt: what it has handed on so far, asked when the attempt ends without its response. */
  streaming(delivered: () => ResponseParts | undefined): void;
}

/** What the adapter knows of the model an attempt went to. */
export interface ModelInfo {
  /** The name the runner asked its provider for, when the model came from one. */
  readonly requestedName: string | undefined;
  readonly model: object;
}

/** One adapter instance: it decides whether to observe each run. */
export interface RunSource {
  /** A run begins; `parents` are the observers of the run this one runs inside, if any. */
  startRun(runner: Runner, agent: unknown, input: unknown, options: Loose | undefined, parent: RunObserver | undefined): RunObserver | undefined;
}

/** The observers of the current run, one per adapter instance, in their order. */
type Frame = ReadonlyMap<RunSource, RunObserver>;

const frames = new AsyncLocalStorage<Frame>();
const sources: RunSource[] = [];
const EMPTY: Frame = new Map();

/** Models, providers, agents and servers already wrapped, and tools already watched (by any adapter instance: the wrappers serve them all). */
const wrappedModels = new WeakSet<object>();
const wrappedTools = new WeakSet<object>();
const wrappedProviders = new WeakSet<object>();
const wrappedAgents = new WeakSet<object>();
const wrappedServers = new WeakSet<object>();
const wrappedGuardrails = new WeakSet<object>();
const wrappedEditors = new WeakSet<object>();
const wrappedInputGuardrails = new WeakSet<object>();
/** The function tools the SDK made of MCP servers' tools (`agent.getMcpTools()`). */
const mcpTools = new WeakSet<object>();
const modelNames = new WeakMap<object, string>();

let original: { run: AnyFunction; emit: AnyFunction; ownEmit: boolean } | undefined;

function observersOf(frame: Frame | undefined): Iterable<RunObserver> {
  return frame === undefined ? [] : frame.values();
}

/** Runs `fn`, swallowing what it throws: telemetry never breaks the run. The adapters' own guard logs. */
function quietly<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined;
  }
}

function patchedRun(this: Runner, agent: unknown, input: unknown, options?: Loose): unknown {
  const run = original!.run;
  const parentFrame = frames.getStore();
  let frame: Map<RunSource, RunObserver> | undefined;
  prepareRunner(this);
  for (const source of sources) {
    const observer = quietly(() => source.startRun(this, agent, input, options, parentFrame?.get(source)));
    if (observer !== undefined) (frame ??= new Map()).set(source, observer);
  }
  // A run nobody observes still gets a frame of its own, so its events never reach an outer run.
  // Outside any other framework's tool frame: inside the run, a call is found by its span (frameOfCurrentSpan).
  const promise = frames.run(frame ?? EMPTY, () => runOutsideToolFrames(() => run.call(this, agent, input, options))) as Promise<unknown>;
  if (frame === undefined) return promise;
  const observers = [...frame.values()];
  return promise.then(
    (result) => {
      for (const observer of observers) quietly(() => observer.returned(result));
      return result;
    },
    (error: unknown) => {
      for (const observer of observers) quietly(() => observer.failed(error));
      throw error;
    },
  );
}

function patchedEmit(this: Runner, type: string, ...args: unknown[]): unknown {
  const frame = frames.getStore();
  if (frame !== undefined && frame.size > 0) {
    for (const observer of frame.values()) quietly(() => observer.event(type, args));
  }
  return original!.emit.call(this, type, ...args);
}

/** Wraps the runner's model provider (and its `Model` object default) once. */
function prepareRunner(runner: Runner): void {
  // The runner's own input guardrails: the SDK made their definitions when the runner was made.
  const definitions = (runner as unknown as Loose).inputGuardrailDefs;
  if (Array.isArray(definitions)) for (const definition of definitions) watchInputGuardrail(definition, 'run');
  const config = runner.config as unknown as Loose;
  const model = config.model;
  if (typeof model === 'object' && model !== null) wrapModel(model, undefined);
  const provider = config.modelProvider;
  if (typeof provider !== 'object' || provider === null || wrappedProviders.has(provider)) return;
  const getModel = (provider as Loose).getModel;
  if (typeof getModel !== 'function') return;
  const wrapped = async function getModel_(this: unknown, name?: string): Promise<unknown> {
    const found = await getModel.call(provider, name);
    if (typeof found === 'object' && found !== null) {
      // An agent without a model asks for '': the provider answers with its default model, whose object names it.
      const asked = name === '' ? undefined : name;
      if (asked !== undefined && !modelNames.has(found)) modelNames.set(found, asked);
      wrapModel(found, asked);
    }
    return found;
  };
  if (defineMethod(provider, 'getModel', wrapped)) {
    wrappedProviders.add(provider);
    return;
  }
  // A frozen provider: the runner gets a stand-in that wraps what it returns.
  const standIn = new Proxy(provider, { get: (target, key) => (key === 'getModel' ? wrapped : Reflect.get(target, key)) });
  wrappedProviders.add(standIn);
  config.modelProvider = standIn;
}

/**
 * Wraps an agent's `Model` object (a string model comes from the provider, wrapped above), its function tools and its
 * MCP servers (through `getMcpTools`, which the runner calls each turn: the servers it lists then, and the tools it
 * makes of theirs are known as MCP tools).
 */
export function prepareAgent(agent: unknown): void {
  if (typeof agent !== 'object' || agent === null) return;
  const model = (agent as Loose).model;
  if (typeof model === 'object' && model !== null) wrapModel(model, undefined);
  const tools = (agent as Loose).tools;
  if (Array.isArray(tools)) for (const tool of tools) watchTool(tool);
  // The SDK makes a definition of each one per turn, reading its `execute` then.
  const guardrails = (agent as Loose).inputGuardrails;
  if (Array.isArray(guardrails)) for (const guardrail of guardrails) watchInputGuardrail(guardrail, 'execute');
  const getMcpTools = (agent as Loose).getMcpTools;
  if (wrappedAgents.has(agent) || typeof getMcpTools !== 'function') return;
  const wrapped = async function getMcpTools_(this: unknown, ...args: unknown[]): Promise<unknown> {
    const servers = (agent as Loose).mcpServers;
    if (Array.isArray(servers)) for (const server of servers) wrapMcpServer(server);
    const made: unknown = await getMcpTools.apply(this, args);
    // Not wrapped: the SDK knows an MCP tool by its `invoke` (its server and tool name are keyed on it).
    if (Array.isArray(made)) for (const tool of made) if (typeof tool === 'object' && tool !== null) mcpTools.add(tool);
    return made;
  };
  if (defineMethod(agent, 'getMcpTools', wrapped)) wrappedAgents.add(agent);
}

/** A function tool the SDK made of an MCP server's tool. */
function isMcpTool(tool: unknown): boolean {
  return typeof tool === 'object' && tool !== null && mcpTools.has(tool);
}

/** A tool whose answer can say it failed while the SDK takes it as an output: an MCP server's tool, an apply_patch tool. */
export function reportsFailure(tool: unknown): boolean {
  return isMcpTool(tool) || (typeof tool === 'object' && tool !== null && (tool as Loose).type === 'apply_patch');
}

/**
 * An MCP server's `callTool` and `callToolResult` (the SDK's MCP tool calls one, as its options ask), wrapped in place:
 * a result with `isError` is reported to the run's observers, which know the call by the caller's context. The SDK
 * keeps a result's `isError` on the content list `callTool` returns.
 */
function wrapMcpServer(server: unknown): void {
  if (typeof server !== 'object' || server === null || wrappedServers.has(server)) return;
  wrappedServers.add(server);
  for (const key of ['callTool', 'callToolResult'] as const) reportFailures(server, key, mcpErrorText);
}

/**
 * `target[key]`, wrapped in place for a tool whose answer can say it failed while the SDK takes it as an output: called
 * in a call of a run that asks to know ({@link RunObserver.reportingCall}), its answer (or what its promise resolves
 * to) is read by `failure`, and the text it finds is reported to those runs. The method is called as it was, its
 * answer returned as it is.
 */
function reportFailures(target: object, key: string, failure: (value: unknown) => string | undefined): void {
  const method = (target as Loose)[key];
  if (typeof method !== 'function') return;
  defineMethod(target, key, function reported_(this: unknown, ...args: unknown[]): unknown {
    const frame = frames.getStore();
    if (frame === undefined || frame.size === 0) return method.apply(this, args);
    let reporters: Array<(text: string) => void> | undefined;
    for (const observer of frame.values()) {
      const report = quietly(() => observer.reportingCall());
      if (report !== undefined) (reporters ??= []).push(report);
    }
    const answer: unknown = method.apply(this, args);
    if (reporters === undefined) return answer;
    const check = (value: unknown): unknown => {
      const text = quietly(() => failure(value));
      if (text !== undefined) for (const report of reporters!) quietly(() => report(text));
      return value;
    };
    return answer instanceof Promise ? answer.then(check) : check(answer);
  });
}

/**
 * A function tool is never wrapped: the SDK keys its input parser on the tool's own `invoke` (a dynamic `needsApproval`
 * gets the parsed input, invalid input is caught before approvals), so a replaced `invoke` changes what the program
 * does. What the adapter needs of a call it reads from what the SDK does per call: its `function` span, made current
 * for the call (the call's frame, below), and the tool's `timeoutErrorFunction`, which only a timeout calls. That one,
 * where the program gave one, is wrapped in place to report the timeout; it is called as it was and its answer
 * returned as it is.
 */
function watchTool(tool: unknown): void {
  if (typeof tool !== 'object' || tool === null || wrappedTools.has(tool)) return;
  const record = tool as Loose;
  if (record.type === 'apply_patch') {
    wrappedTools.add(tool);
    return watchEditor(record.editor);
  }
  if (record.type !== 'function') return;
  wrappedTools.add(tool);
  for (const [key, kind] of [['inputGuardrails', 'input'], ['outputGuardrails', 'output']] as const) {
    const guardrails = record[key];
    if (Array.isArray(guardrails)) for (const guardrail of guardrails) watchToolGuardrail(guardrail, kind);
  }
  const onTimeout = record.timeoutErrorFunction;
  if (typeof onTimeout !== 'function') return;
  defineMethod(tool, 'timeoutErrorFunction', function timeoutErrorFunction_(this: unknown, runContext: unknown, error: unknown, details?: Loose): unknown {
    const frame = frames.getStore();
    const call = details !== null && typeof details === 'object' && typeof details.toolCall === 'object' && details.toolCall !== null ? (details.toolCall as Loose) : undefined;
    const callId = typeof call?.callId === 'string' ? call.callId : undefined;
    if (frame !== undefined && callId !== undefined) for (const observer of frame.values()) quietly(() => observer.toolThrew(callId, error));
    return onTimeout.call(this, runContext, error, details);
  });
}

/**
 * An apply_patch tool's editor, its methods wrapped in place (as an MCP server's `callTool` is): an answer with
 * `status: 'failed'` (the patch did not apply) is reported to the run's observers, which know the call by the caller's
 * context; the SDK tells the model that status, and its tool events carry only the output's text. Each method is
 * called as it was, its answer returned as it is.
 */
function watchEditor(editor: unknown): void {
  if (typeof editor !== 'object' || editor === null || wrappedEditors.has(editor)) return;
  wrappedEditors.add(editor);
  for (const key of ['createFile', 'updateFile', 'deleteFile'] as const) {
    reportFailures(editor, key, (value) => {
      const record = typeof value === 'object' && value !== null ? (value as Loose) : undefined;
      if (record?.status !== 'failed') return undefined;
      return typeof record.output === 'string' && record.output !== '' ? record.output : `${key} failed`;
    });
  }
}

/**
 * An input guardrail of an agent (its `execute`) or of a runner (its definition's `run`), wrapped in place to tell the
 * run's observers the input it is given ({@link RunObserver.guardrailInput}). Called as it was, its answer returned
 * as it is.
 */
function watchInputGuardrail(guardrail: unknown, key: 'execute' | 'run'): void {
  if (typeof guardrail !== 'object' || guardrail === null || wrappedInputGuardrails.has(guardrail)) return;
  const check = (guardrail as Loose)[key];
  if (typeof check !== 'function') return;
  wrappedInputGuardrails.add(guardrail);
  defineMethod(guardrail, key, function inputGuardrail_(this: unknown, args: Loose | undefined, ...rest: unknown[]): unknown {
    const frame = frames.getStore();
    if (frame !== undefined && frame.size > 0 && typeof args === 'object' && args !== null) {
      for (const observer of frame.values()) quietly(() => observer.guardrailInput(args.input));
    }
    return check.call(this, args, ...rest);
  });
}

/**
 * A tool guardrail's `run`, wrapped in place to report its answer on each call: the SDK tells the model a refused
 * call's or a replaced output's text as if the tool answered it, through the same tool events as a call that ran.
 * Called as it was, its answer returned as it is.
 */
function watchToolGuardrail(guardrail: unknown, kind: 'input' | 'output'): void {
  if (typeof guardrail !== 'object' || guardrail === null || wrappedGuardrails.has(guardrail)) return;
  const record = guardrail as Loose;
  const runGuardrail = record.run;
  if (typeof runGuardrail !== 'function') return;
  wrappedGuardrails.add(guardrail);
  defineMethod(guardrail, 'run', function run_(this: unknown, args: Loose | undefined, ...rest: unknown[]): unknown {
    const answer: unknown = runGuardrail.call(this, args, ...rest);
    const frame = frames.getStore();
    const call = typeof args?.toolCall === 'object' && args.toolCall !== null ? (args.toolCall as Loose) : undefined;
    const callId = typeof call?.callId === 'string' ? call.callId : undefined;
    if (frame === undefined || frame.size === 0 || callId === undefined) return answer;
    const report = (output: unknown): void => {
      const verdict = quietly(() => toolGuardrailVerdict(kind, record.name, output));
      if (verdict !== undefined) for (const observer of frame.values()) quietly(() => observer.toolGuardrail(callId, verdict));
    };
    if (!(answer instanceof Promise)) {
      report(answer);
      return answer;
    }
    return answer.then((output: unknown) => {
      report(output);
      return output;
    });
  });
}

/** A guardrail's answer as the SDK reads it (no `behavior` is `allow`); undefined for one it would not accept. */
function toolGuardrailVerdict(kind: 'input' | 'output', name: unknown, output: unknown): ToolGuardrailVerdict | undefined {
  if (typeof output !== 'object' || output === null) return undefined;
  const behavior = ((output as Loose).behavior ?? { type: 'allow' }) as Loose;
  const type = behavior.type;
  if (type !== 'allow' && type !== 'rejectContent' && type !== 'throwException') return undefined;
  return { kind, name: typeof name === 'string' && name !== '' ? name : 'guardrail', behavior: type, ...(typeof behavior.message === 'string' ? { message: behavior.message } : {}) };
}

/** The function tool call whose `function` span the caller runs in, by the observer that saw it start. */
const spanCalls = new WeakMap<object, { observer: RunObserver; callId: string }>();

/** A call's `function` span (a real one with tracing on, a no-op one with tracing off): code running in it is the call's. */
export function bindCallSpan(span: object, observer: RunObserver, callId: string): void {
  if (!spanCalls.has(span)) spanCalls.set(span, { observer, callId });
}

/** The SDK's current span (a no-op one with tracing off), or `null`: reading it never throws into the adapter. */
export function sdkCurrentSpan(): unknown {
  try {
    return getCurrentSpan();
  } catch {
    return null;
  }
}

/** The frame of the function tool call the caller runs in, found by the SDK's current span; none for a runner that makes no spans. */
function frameOfCurrentSpan(): ToolFrame | undefined {
  const span = sdkCurrentSpan();
  const bound = typeof span === 'object' && span !== null ? spanCalls.get(span) : undefined;
  return bound === undefined ? undefined : quietly(() => bound.observer.toolFrame(bound.callId));
}

let removeFinder: (() => void) | undefined;

/** What to call as a streamed run ends, each before the caller's loop over its stream resumes. */
export interface StreamEnd {
  /** The runner finished the run. */
  done(): void;
  /** The runner failed it. */
  failed(error: unknown): void;
  /** Its stream was cancelled: the caller's loop broke out of it, or the run's signal aborted. */
  cancelled(): void;
}

/**
 * Calls `end.done` or `end.failed` as a streamed run's result ends, before
 * the SDK ends its stream and settles `completed`: the runner ends it by
 * calling the result's `_done()` or `_raiseError(error)`, wrapped here on
 * that one result. Calls `end.cancelled` as its stream is cancelled: the SDK
 * closes the stream at once, so the caller's loop is over, but calls
 * `_done()` only once the run has wound down, after a program that shuts
 * down right after its loop has done so. A result without these is left as
 * it is.
 */
export function onStreamEnd(result: object, end: StreamEnd): void {
  const record = result as Loose;
  const finish = record._done;
  const raise = record._raiseError;
  if (typeof finish !== 'function' || typeof raise !== 'function') return;
  const stopWatching = watchCancel(record, end.cancelled);
  defineMethod(result, '_done', function done_(this: unknown, ...args: unknown[]): unknown {
    stopWatching();
    quietly(() => end.done());
    return finish.apply(this, args);
  });
  defineMethod(result, '_raiseError', function raiseError_(this: unknown, error: unknown, ...rest: unknown[]): unknown {
    stopWatching();
    quietly(() => end.failed(error));
    return raise.call(this, error, ...rest);
  });
}

/**
 * Calls `cancelled` when the result's stream is cancelled, and returns what
 * stops watching. A `break` out of the caller's loop cancels the stream,
 * which aborts the result's own signal (`_getAbortSignal()`) in the same
 * call, before the loop exits; the caller's signal aborts it too. The SDK's
 * listener on it runs first and marks the result `cancelled`. The listener
 * is removed as the run ends, as the SDK removes its own: a caller's
 * long-lived signal must not keep the run.
 */
function watchCancel(result: Loose, cancelled: () => void): () => void {
  const signal = quietly(() => (typeof result._getAbortSignal === 'function' ? (result._getAbortSignal() as unknown) : undefined));
  if (!isRecord(signal) || typeof signal.addEventListener !== 'function' || typeof signal.removeEventListener !== 'function') return () => {};
  const target = signal as unknown as AbortSignal;
  const onAbort = (): void => {
    if (result.cancelled === true) quietly(cancelled);
  };
  if (target.aborted) {
    onAbort();
    return () => {};
  }
  target.addEventListener('abort', onAbort, { once: true });
  return () => target.removeEventListener('abort', onAbort);
}

/** Puts `value` in place of the method, keeping whether it was enumerable: a spread copy of a tool must keep its `invoke`. */
function defineMethod(target: object, key: string, value: AnyFunction): boolean {
  try {
    const own = Object.getOwnPropertyDescriptor(target, key);
    Object.defineProperty(target, key, { value, configurable: true, writable: true, enumerable: own?.enumerable ?? false });
    return true;
  } catch {
    return false;
  }
}

function wrapModel(model: object, requestedName: string | undefined): void {
  if (wrappedModels.has(model)) return;
  const getResponse = (model as Loose).getResponse;
  const getStreamedResponse = (model as Loose).getStreamedResponse;
  if (typeof getResponse !== 'function' || typeof getStreamedResponse !== 'function') return;
  const info = (): ModelInfo => ({ requestedName: modelNames.get(model) ?? requestedName, model });
  const wrappedGet = function getResponse_(this: unknown, request: Loose): unknown {
    const attempts = startAttempts(request, info);
    if (attempts === undefined) return getResponse.call(model, request);
    return Promise.resolve()
      .then(() => runInApiCall(attempts[0]!.call, () => getResponse.call(model, request)))
      .then(
        (response: Loose) => {
          for (const attempt of attempts) quietly(() => attempt.response(response));
          return response;
        },
        (error: unknown) => {
          for (const attempt of attempts) quietly(() => attempt.error(error));
          throw error;
        },
      );
  };
  const wrappedStream = function getStreamedResponse_(this: unknown, request: Loose): AsyncIterable<unknown> {
    const attempts = startAttempts(request, info);
    if (attempts === undefined) return getStreamedResponse.call(model, request) as AsyncIterable<unknown>;
    const stream = runInApiCall(attempts[0]!.call, () => getStreamedResponse.call(model, request)) as AsyncIterable<unknown>;
    return observedStream(inApiCall(stream, attempts[0]!.call), attempts);
  };
  if (defineMethod(model, 'getResponse', wrappedGet) && defineMethod(model, 'getStreamedResponse', wrappedStream)) wrappedModels.add(model);
}

function startAttempts(request: Loose, info: () => ModelInfo): AttemptObserver[] | undefined {
  const frame = frames.getStore();
  if (frame === undefined || frame.size === 0) return undefined;
  let attempts: AttemptObserver[] | undefined;
  const model = info();
  for (const observer of observersOf(frame)) {
    const attempt = quietly(() => observer.attempt(request, model));
    if (attempt !== undefined) (attempts ??= []).push(attempt);
  }
  return attempts;
}

/**
 * A model's stream, each step of it taken inside `call`: a model that makes its request as the stream is read (an
 * async generator, as `aisdk()`'s is) makes it inside the call, as a model answering at once does.
 */
function inApiCall<T>(stream: AsyncIterable<T>, call: ApiCall): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator]() {
      const iterator = stream[Symbol.asyncIterator]();
      return {
        next: (...args: [] | [unknown]) => runInApiCall(call, () => iterator.next(...args)),
        return: (value?: unknown) => (iterator.return === undefined ? Promise.resolve({ done: true as const, value: value as T }) : runInApiCall(call, () => iterator.return!(value))),
      };
    },
  };
}

async function* observedStream(stream: AsyncIterable<unknown>, attempts: readonly AttemptObserver[]): AsyncIterable<unknown> {
  let answered = false;
  // A streamed Chat Completions (or aisdk()) response_done names no model, no finish reason and no charge: the chunks
  // (parts) do, the charge and the cache writes in the usage of the last (OpenRouter's `usage.cost` and
  // `prompt_tokens_details.cache_write_tokens`), the upstream serving it in each (OpenRouter's `provider`); an aisdk()
  // stream's first part the provider package's warnings (the settings it did not send).
  let model: string | undefined;
  let finish: string | undefined;
  let cost: number | undefined;
  let writes: number | undefined;
  let servedBy: string | undefined;
  let failed: string[] | undefined;
  let warnings: unknown[] | undefined;
  // A Responses stream's response_done keeps the SDK's own usage only; the raw finishing event the SDK yields right
  // after it has the usage as the server sent it (xAI's `cost_in_usd_ticks`): the answer waits for that event.
  let held: Loose | undefined;
  // The answer's text and reasoning as the stream handed them on, for a stream that stops before its response: what
  // the caller showed.
  let text = '';
  const reasoning = new StreamedReasoning();
  let spent: ProviderUsage | undefined;
  const delivered = (): ResponseParts | undefined => deliveredAnswer({ text, reasoning: reasoning.text, model, usage: spent });
  for (const attempt of attempts) quietly(() => attempt.streaming(delivered));
  const answer = (done: Loose): void => {
    answered = true;
    held = undefined;
    // The chunks' reasoning, which the SDK's Chat Completions model reads only as `delta.reasoning`.
    const chatReasoning = reasoning.chatText;
    const response = { ...done, ...(done.model === undefined && model !== undefined ? { model } : {}), ...(finish === undefined ? {} : { finish_reason: finish }), ...(chatReasoning === '' ? {} : { reasoning_content: chatReasoning }), ...(cost === undefined ? {} : { cost_usd: cost }), ...(writes === undefined ? {} : { cache_write_tokens: writes }), ...(servedBy === undefined ? {} : { served_by: servedBy }), ...(failed === undefined ? {} : { failed_upstreams: failed }), ...(warnings === undefined ? {} : { warnings }) };
    for (const attempt of attempts) quietly(() => attempt.response(response));
  };
  try {
    for await (const event of stream) {
      const record = event as Loose | null;
      if (record !== null && typeof record === 'object') {
        if (model === undefined && record.type === 'response_started') model = streamedModel(record.providerData);
        else if (record.type === 'model') {
          model ??= streamedModel(record.event);
          finish = streamedFinish(record.event) ?? finish;
          cost = streamedCost(record.event) ?? cost;
          writes = streamedCacheWrites(record.event) ?? writes;
          servedBy ??= streamedServedBy(record.event);
          failed = streamedFailedUpstreams(record.event) ?? failed;
          warnings ??= streamedWarnings(record.event);
          spent = streamedFailedUsage(record.event) ?? spent;
          reasoning.note(record.event);
        }
        else if (record.type === 'output_text_delta' && typeof record.delta === 'string') text += record.delta;
        if (held !== undefined) answer(held);
        if (record.type === 'response_done' && !answered && held === undefined) {
          const done = (record.response ?? {}) as Loose;
          if (rawFinishFollows(record.providerData)) held = done;
          else answer(done);
        }
      }
      yield event;
    }
  } catch (error) {
    if (!answered && held === undefined) for (const attempt of attempts) quietly(() => attempt.error(error));
    throw error;
  } finally {
    if (held !== undefined) answer(held);
    // The consumer stopped early, or the stream ended without a response.
    if (!answered) for (const attempt of attempts) quietly(() => attempt.streamEnded());
  }
}

/** Whether a response_done came from a Responses stream's finishing event (its `providerData`), which the SDK yields next. */
function rawFinishFollows(providerData: unknown): boolean {
  const type = isRecord(providerData) ? providerData.type : undefined;
  return type === 'response.completed' || type === 'response.incomplete';
}

/** Adds an adapter instance; the first one patches the prototype. Returns its removal. */
export function addRunSource(source: RunSource): () => void {
  sources.push(source);
  if (original === undefined) {
    const proto = Runner.prototype as unknown as Loose;
    original = { run: proto.run as AnyFunction, emit: proto.emit as AnyFunction, ownEmit: Object.prototype.hasOwnProperty.call(proto, 'emit') };
    proto.run = patchedRun;
    proto.emit = patchedEmit;
  }
  removeFinder ??= addToolFrameFinder(frameOfCurrentSpan);
  let removed = false;
  return () => {
    if (removed) return;
    removed = true;
    const index = sources.indexOf(source);
    if (index >= 0) sources.splice(index, 1);
    if (sources.length > 0) return;
    removeFinder?.();
    removeFinder = undefined;
    if (original === undefined) return;
    const proto = Runner.prototype as unknown as Loose;
    // Restored only if nobody patched over us meanwhile; otherwise ours stays, with no source, inert.
    if (proto.run === patchedRun) proto.run = original.run;
    if (proto.emit === patchedEmit) {
      if (original.ownEmit) proto.emit = original.emit;
      else delete proto.emit;
    }
    if (proto.run !== patchedRun && proto.emit !== patchedEmit) original = undefined;
  };
}
