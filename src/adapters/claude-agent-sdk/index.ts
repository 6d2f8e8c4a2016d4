/**
 * Claude Agent SDK (`@anthropic-ai/claude-agent-sdk`) adapter:
 * `wrapClaudeAgentSdk(sdk, hooks)` returns the SDK's exports with a `query`
 * that records each query as the observer hooks: one session per query
 * (keyed by the SDK's `session_id`), the prompt as the user's step, each
 * model request as one API call (retries included), the tool calls, and
 * every sub-agent as its own session linked to the Agent call that started
 * it. The SDK module itself is not modified.
 *
 * What the caller gets from `query()` is what the SDK gives: the same
 * messages in the same order, the same result, the same `Query` methods;
 * the caller's own `options.hooks` and `canUseTool` still run. To read each
 * request's final usage the adapter asks the SDK for partial messages and
 * keeps those (and the `requesting` status that comes with them) from a
 * caller who did not ask for them. When no hook has a subscriber, `query()`
 * is the SDK's own, untouched.
 *
 * @module
 */

import { checkAdapterArguments } from '../core/arguments.ts';
import { InvalidArgumentError } from '../../hooks/index.ts';
import type { HookRegistry } from '../../hooks/registry.ts';
import { consoleLogger, safeLog } from '../../shared/logger.ts';
import type { AdapterOptions } from '../core/options.ts';
import { AdapterCore } from '../core/run.ts';
import { changedArgs, isAbortedSignal } from '../core/shapes.ts';
import type { Loose } from './messages.ts';
import { isRecord } from '../../shared/record.ts';
import { nonEmptyString } from '../../shared/text.ts';
import { QueryTrace } from './trace.ts';

export type { AdapterOptions, RunInfo, SessionScope } from '../core/options.ts';

/** Options of `wrapClaudeAgentSdk`: the shared adapter options, and the agent's name. */
export interface ClaudeAgentSdkAdapterOptions extends AdapterOptions {
  /** The main agent's name. Default: the query's `options.agent` when set, else `claude-agent-sdk`. */
  agentName?: string;
}

/** The part of the SDK module the adapter uses: `query({ prompt, options })`. */
export interface ClaudeAgentSdkLike {
  query(params: { prompt: unknown; options?: unknown }): AsyncIterable<unknown>;
}

/** The hook events the adapter listens to. */
const OBSERVED_HOOKS = ['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'SubagentStart', 'SubagentStop', 'UserPromptSubmit', 'PostCompact'] as const;

/**
 * Returns the SDK's exports with `query` recording every query into `hooks`.
 * Use the result where you would use the SDK: `wrapClaudeAgentSdk(sdk,
 * hooks).query({ prompt, options })`.
 */
export function wrapClaudeAgentSdk<S extends ClaudeAgentSdkLike>(sdk: S, hooks: HookRegistry, options: ClaudeAgentSdkAdapterOptions = {}): S {
  if ((typeof sdk !== 'object' && typeof sdk !== 'function') || sdk === null || typeof sdk.query !== 'function') {
    const got = typeof sdk === 'function' ? "a function (the SDK's query itself?)" : undefined;
    throw new InvalidArgumentError('wrapClaudeAgentSdk', 'the first argument (sdk)', "the SDK module (import * as sdk from '@anthropic-ai/claude-agent-sdk'), whose query() it wraps", sdk, got);
  }
  checkAdapterArguments('wrapClaudeAgentSdk', 'the second argument', hooks, options);
  const core = new AdapterCore(hooks, options, 'claude-agent-sdk');
  const original = sdk.query.bind(sdk);
  let warnedProvisional = false;
  const provisionalUsage = (): void => {
    if (warnedProvisional) return;
    warnedProvisional = true;
    safeLog(options.logger ?? consoleLogger, 'warn', 'claude-agent-sdk adapter: a sub-agent has no transcript (persistSession: false?); its steps carry the usage the stream reported, whose output tokens are provisional');
  };
  const query = (params: { prompt: unknown; options?: unknown }): unknown => {
    if (!core.listening() || !isRecord(params)) return original(params);
    const callerOptions: Loose = isRecord(params.options) ? params.options : {};
    const trace = new QueryTrace(core, {
      agentName: options.agentName ?? nonEmptyString(callerOptions.agent) ?? 'claude-agent-sdk',
      callerWantsPartials: callerOptions.includePartialMessages === true,
      provisionalUsage,
      transcripts: callerOptions.persistSession !== false,
      aborted: () => callerAborted(callerOptions),
      abortSignal: callerSignal(callerOptions),
      resumes: nonEmptyString(callerOptions.resume) !== undefined || callerOptions.continue === true ? { startedAt: Date.now(), at: nonEmptyString(callerOptions.resumeSessionAt), session: nonEmptyString(callerOptions.resume) } : undefined,
    });
    let inner: AsyncIterable<unknown>;
    try {
      inner = original({ ...params, prompt: observedPrompt(params.prompt, trace), options: observedOptions(callerOptions, trace) });
    } catch (error) {
      trace.finish('failed', error);
      throw error;
    }
    return observedQuery(inner, trace, () => (callerAborted(callerOptions) ? 'interrupted' : 'failed'));
  };
  // A new object: the SDK's module namespace stays as it is.
  return { ...sdk, query } as S;
}

/**
 * The caller aborted the query (`options.abortController`): the SDK then
 * throws, and what it ends is interrupted, not failed.
 */
function callerAborted(callerOptions: Loose): boolean {
  const controller = callerOptions.abortController;
  return isRecord(controller) && isAbortedSignal(controller.signal);
}

/** The caller's abort signal (`options.abortController.signal`), when it gave one. */
function callerSignal(callerOptions: Loose): AbortSignal | undefined {
  const controller = callerOptions.abortController;
  const signal = isRecord(controller) ? controller.signal : undefined;
  return signal instanceof AbortSignal ? signal : undefined;
}

/** The string prompt is the first user message; an iterable's messages are each seen as the SDK takes them. */
function observedPrompt(prompt: unknown, trace: QueryTrace): unknown {
  if (isAsyncIterable(prompt)) return observedMessages(prompt, trace);
  trace.userMessage(prompt);
  return prompt;
}

function observedMessages(messages: AsyncIterable<unknown>, trace: QueryTrace): AsyncIterable<unknown> {
  return (async function* observed() {
    for await (const message of messages) {
      trace.userMessage(message);
      yield message;
    }
  })();
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function';
}

/** The caller's options plus partial messages and this adapter's hook callbacks (after the caller's). */
function observedOptions(callerOptions: Loose, trace: QueryTrace): Loose {
  const callback = async (input: unknown): Promise<Record<string, never>> => {
    trace.hook(input);
    return {};
  };
  const callerHooks: Loose = isRecord(callerOptions.hooks) ? callerOptions.hooks : {};
  const hooks: Loose = { ...callerHooks };
  for (const event of DECIDING_HOOKS) {
    const matchers = callerHooks[event];
    if (Array.isArray(matchers)) hooks[event] = matchers.map((matcher) => decidingMatcher(matcher, trace));
  }
  for (const event of OBSERVED_HOOKS) {
    const mine = { hooks: [callback] };
    hooks[event] = Array.isArray(hooks[event]) ? [...(hooks[event] as unknown[]), mine] : [mine];
  }
  const observed: Loose = { ...callerOptions, includePartialMessages: true, hooks };
  const canUseTool = callerOptions.canUseTool;
  if (typeof canUseTool === 'function') observed.canUseTool = observedCanUseTool(canUseTool as CanUseTool, trace);
  return observed;
}

type CanUseTool = (toolName: string, input: unknown, options: Loose) => Promise<unknown>;

/** The caller's approval callback, its question and answer recorded as an approval request and response. */
function observedCanUseTool(canUseTool: CanUseTool, trace: QueryTrace): CanUseTool {
  return async (toolName, input, options) => {
    const id = isRecord(options) ? nonEmptyString(options.toolUseID) : undefined;
    const description = isRecord(options) ? (nonEmptyString(options.description) ?? nonEmptyString(options.title) ?? nonEmptyString(options.decisionReason)) : undefined;
    if (id !== undefined) trace.approval(id, { kind: 'request', description: description ?? toolName });
    const decision = await canUseTool(toolName, input, options);
    if (id !== undefined && isRecord(decision)) {
      const approved = decision.behavior === 'allow';
      const lasting = approved ? allowedFromNowOn(toolName, decision.updatedPermissions) : undefined;
      const changed = approved ? changedArgs(input, decision.updatedInput) : undefined;
      trace.approval(id, {
        kind: 'response',
        approved,
        description: nonEmptyString(decision.message),
        ...(lasting === undefined ? {} : { lasting }),
        ...(changed === undefined ? {} : { changedArgs: changed }),
      });
    }
    return decision;
  };
}

/**
 * How long an allowing decision lasts, from the permission updates it
 * returns (`updatedPermissions`, the "always allow" of the SDK's permission
 * docs): a rule allowing `toolName` kept for the session (`session`, or the
 * process's own arguments, `cliArg`), or written to a settings file
 * (`always`). `undefined`: this call only.
 */
function allowedFromNowOn(toolName: string, updates: unknown): 'session' | 'always' | undefined {
  let lasting: 'session' | 'always' | undefined;
  for (const update of Array.isArray(updates) ? updates : []) {
    if (!isRecord(update) || (update.type !== 'addRules' && update.type !== 'replaceRules') || update.behavior !== 'allow') continue;
    const rules = Array.isArray(update.rules) ? update.rules : [];
    if (!rules.some((rule) => isRecord(rule) && rule.toolName === toolName)) continue;
    if (update.destination === 'session' || update.destination === 'cliArg') lasting ??= 'session';
    else if (update.destination === 'userSettings' || update.destination === 'projectSettings' || update.destination === 'localSettings') lasting = 'always';
  }
  return lasting;
}

/** Hooks of the caller's that may decide a tool call's permission: what they decide is recorded as an approval. */
const DECIDING_HOOKS = ['PreToolUse', 'PermissionRequest'] as const;

type HookCallback = (input: unknown, toolUseId: unknown, options: unknown) => Promise<unknown>;

/** A matcher of the caller's with each callback's output read for a permission decision; the output is returned as it is. */
function decidingMatcher(matcher: unknown, trace: QueryTrace): unknown {
  if (!isRecord(matcher) || !Array.isArray(matcher.hooks)) return matcher;
  const callbacks = matcher.hooks.map((callback: unknown) =>
    typeof callback !== 'function'
      ? callback
      : async (input: unknown, toolUseId: unknown, options: unknown): Promise<unknown> => {
          const output = await (callback as HookCallback)(input, toolUseId, options);
          trace.hookDecision(input, toolUseId, output);
          return output;
        },
  );
  return { ...matcher, hooks: callbacks };
}

type Step = IteratorResult<unknown, unknown>;

/**
 * The SDK's `Query` as the caller uses it: every method is the SDK's, on the
 * SDK's object; only iteration goes through the trace, which drops the
 * partial messages the caller did not ask for and ends the query's sessions
 * however the iteration ends.
 */
function observedQuery(inner: AsyncIterable<unknown>, trace: QueryTrace, thrown: () => 'failed' | 'interrupted'): unknown {
  const iterator = inner as AsyncIterator<unknown, unknown, unknown> & AsyncIterable<unknown>;
  const next = async (...args: [] | [unknown]): Promise<Step> => {
    for (;;) {
      let step: Step;
      try {
        step = await iterator.next(...args);
      } catch (error) {
        trace.finish(thrown(), error);
        throw error;
      }
      if (step.done === true) {
        trace.finish();
        return step;
      }
      if (trace.message(step.value)) return step;
    }
  };
  const stop = (method: 'return' | 'throw') => async (value?: unknown): Promise<Step> => {
    try {
      const own = iterator[method];
      if (typeof own !== 'function') return { done: true, value };
      return await own.call(iterator, value);
    } finally {
      trace.finish(method === 'throw' ? 'failed' : 'interrupted', method === 'throw' ? value : undefined);
    }
  };
  const overrides: Record<PropertyKey, unknown> = {
    next,
    return: stop('return'),
    throw: stop('throw'),
  };
  // More user messages sent into a running query are seen as the SDK takes them, like the prompt's.
  const streamInput = (inner as { streamInput?: unknown }).streamInput;
  if (typeof streamInput === 'function') overrides.streamInput = (stream: unknown) => streamInput.call(inner, isAsyncIterable(stream) ? observedMessages(stream, trace) : stream);
  const proxy: object = new Proxy(iterator as object, {
    get(target, key) {
      if (key === Symbol.asyncIterator) return () => proxy;
      if (Object.prototype.hasOwnProperty.call(overrides, key)) return overrides[key];
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return proxy;
}
