/**
 * `wrapLanguageModel` middleware that reports provider attempts.
 *
 * With `instrumentAiSdk` installed, the integration already reports every
 * attempt of the runs it sees, and the middleware steps aside for them. On its
 * own (the integration not installed, or a model called outside
 * `generateText`/`streamText`), it records each logical model call with its
 * retries: the SDK passes the same prompt array to every attempt of one call,
 * so attempts are grouped by it. Those calls belong to one session per
 * middleware (`options.sessionId`, else a new id); tools and turns are not
 * visible to a model middleware.
 *
 * @module
 */

import type { HookRegistry } from '../../hooks/registry.ts';
import { newSessionId } from '../../hooks/index.ts';
import { currentAttempt } from './attempt.ts';
import { chatMessages, offeredTools, responseOfContent, tokenCounts } from './messages.ts';
import { AdapterCore, type AgentRun, type ApiCall, type RequestParts } from '../core/run.ts';
import type { AdapterOptions } from '../core/options.ts';

type Params = Record<string, unknown>;
type Model = { modelId?: unknown; provider?: unknown };

/** The subset of the SDK's `LanguageModelMiddleware` (spec v4) this returns. */
export interface AiSdkMiddleware {
  /** The middleware spec this object implements; the SDK refuses middleware of another version. */
  readonly specificationVersion: 'v4';
  /** Runs one `doGenerate` attempt and reports it as an LLM call (skipped when `instrumentAiSdk` already sees it). */
  wrapGenerate(options: {
    doGenerate: () => PromiseLike<unknown>;
    params: Record<string, unknown>;
    model: { modelId?: unknown; provider?: unknown };
  }): Promise<unknown>;
  /** Runs one `doStream` attempt and reports it as an LLM call once the stream ends (skipped when `instrumentAiSdk` already sees it). */
  wrapStream(options: {
    doStream: () => PromiseLike<unknown>;
    params: Record<string, unknown>;
    model: { modelId?: unknown; provider?: unknown };
  }): Promise<unknown>;
}

const str = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

function requestOf(params: Params, model: Model): () => RequestParts {
  return () => ({ messages: chatMessages(undefined, params.prompt), tools: offeredTools(params.tools), model: str(model.modelId) });
}

/**
 * Middleware for `wrapLanguageModel` that emits the LLM hooks for each
 * provider attempt of the wrapped model, grouping retries of one call.
 */
export function aiSdkMiddleware(hooks: HookRegistry, options: AdapterOptions = {}): AiSdkMiddleware {
  const core = new AdapterCore(hooks, { ...options, sessionScope: 'host' }, options.platform ?? 'ai-sdk');
  const sessionId = typeof options.sessionId === 'string' && options.sessionId !== '' ? options.sessionId : newSessionId();
  let run: AgentRun | undefined;
  const calls = new WeakMap<object, ApiCall>();

  const callFor = (params: Params, model: Model): ApiCall | undefined => {
    if (currentAttempt() !== undefined) return undefined; // the integration reports this attempt
    if (run === undefined || run.ended) {
      run = core.startRun({ runId: sessionId, model: str(model.modelId), provider: str(model.provider) });
      if (run === undefined) return undefined;
    }
    const key = Array.isArray(params.prompt) ? params.prompt : params;
    let call = calls.get(key);
    if (call === undefined || call.settled) {
      call = run.newApiCall();
      calls.set(key, call);
    }
    return call;
  };

  const attempt = async (params: Params, model: Model, execute: () => PromiseLike<unknown>, streaming: boolean): Promise<unknown> => {
    const call = core.guard.run('middleware attempt', () => callFor(params, model));
    if (call === undefined) return await execute();
    core.guard.run('middleware attempt', () => call.attemptStart(requestOf(params, model)));
    let result: unknown;
    try {
      result = await execute();
    } catch (error) {
      core.guard.run('middleware attempt', () => call.attemptError(error));
      throw error;
    }
    core.guard.run('middleware attempt', () => {
      const record = (result ?? {}) as Record<string, unknown>;
      if (streaming) {
        // The stream's content arrives later; the attempt is recorded as opened.
        call.attemptEnd({ text: '', toolCalls: [], model: str(model.modelId) });
        return;
      }
      const parts = responseOfContent(Array.isArray(record.content) ? record.content : []);
      const response = (record.response ?? {}) as Record<string, unknown>;
      const finish = record.finishReason as Record<string, unknown> | string | undefined;
      call.attemptEnd({
        text: parts.text,
        reasoning: parts.reasoning === '' ? undefined : parts.reasoning,
        toolCalls: parts.toolCalls,
        usage: tokenCounts(record.usage),
        finishReason: typeof finish === 'string' ? finish : str(finish?.unified),
        model: str(response.modelId) ?? str(model.modelId),
        id: str(response.id),
      });
    });
    return result;
  };

  return {
    specificationVersion: 'v4',
    wrapGenerate: ({ doGenerate, params, model }) => attempt(params, model, doGenerate, false),
    wrapStream: ({ doStream, params, model }) => attempt(params, model, doStream, true),
  };
}
