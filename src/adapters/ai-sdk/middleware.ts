/**
 * `wrapLanguageModel` middleware that reports provider attempts.
 *
 * With `instrumentAiSdk` installed, the integration already reports every
 * attempt of the text runs it sees, and the middleware steps aside for them,
 * as it does for the attempts another framework's adapter records (an Agents
 * SDK run's model made with `aisdk()` from this wrapped model);
 * for `generateObject`/`streamObject`, whose retries the SDK does not report
 * to telemetry, it adds each failed attempt and its retry to the call the
 * integration opened. On its own (the integration not installed, or a model
 * called outside `generateText`/`streamText`), it records each logical model
 * call with its retries: the SDK passes the same prompt array to every
 * attempt of one call, so attempts are grouped by it. Those calls belong to
 * one session per middleware (`options.sessionId`, else a new id); tools and
 * turns are not visible to a model middleware.
 *
 * A streamed attempt is recorded when its stream ends: the text, reasoning
 * and tool calls are collected from the parts as they pass (untouched), and
 * the usage from the `finish` part. A stream the SDK cancels after an error
 * part is one `streamText` gives up to rerun its step (`streamRetries`):
 * the rerun, asked with the same prompt, is its retry. A stream cut short
 * (the program's abort, a broken connection, the provider's error part) is
 * a failed attempt with what it had delivered, as the integration records
 * it (streamed.ts): the abort when the signal fires, not when the cancel
 * reaches the model's stream, which may come after the program's `onAbort`.
 *
 * @module
 */

import type { LanguageModelMiddleware } from 'ai';
import type { HookRegistry } from '../../hooks/registry.ts';
import { newSessionId } from '../../hooks/index.ts';
import { currentAttempt, objectCallOf } from './attempt.ts';
import { answerMediumOfPart, chatMessages, deferredResultTools, finishReasonOf, chargedCostUsd, groundingCallsOf, modelVersionOf, servedByOf, failedUpstreamsOf, offeredTools, providerApprovalAnswersOfPrompt, providerCall, responseOf, toolOutputValue, tokenCounts } from './messages.ts';
import { isRecord } from '../../shared/record.ts';
import { checkAdapterArguments } from '../core/arguments.ts';
import { AdapterCore, type AgentRun, type ApiCall, type RequestParts, type ResponseParts } from '../core/run.ts';
import type { AdapterOptions } from '../core/options.ts';
import { nonEmptyString } from '../../shared/text.ts';
import { MAX_PENDING_APPROVALS } from '../core/holds.ts';
import { completionServedBy } from '../core/upstream.ts';
import { abortErrorOf, laterHostedResult, linkApprovedCalls, type AnswerMedium, type CallOfTool } from '../core/shapes.ts';
import { StreamedSoFar } from './streamed.ts';

type Params = Record<string, unknown>;

/** Given-up streamed calls kept for their rerun; past this the oldest is forgotten (it was answered by a retry that never came). */
const MAX_RERUNS = 100;

/** A prompt's JSON text, what a rerun is found by (its prompt is built again, equal); undefined when it has none. */
function promptKey(prompt: unknown): string | undefined {
  try {
    return JSON.stringify(prompt);
  } catch {
    return undefined;
  }
}
type Model = { modelId?: unknown; provider?: unknown };
type Part = Record<string, unknown>;

/**
 * The SDK's `LanguageModelMiddleware` (spec v4): `wrapGenerate` and
 * `wrapStream` report each attempt (or step aside when `instrumentAiSdk`
 * already does), passing results, streams and errors through untouched.
 */
export type AiSdkMiddleware = LanguageModelMiddleware;

function requestOf(params: Params, model: Model): () => RequestParts {
  return () => ({ messages: chatMessages(undefined, params.prompt), tools: offeredTools(params.tools), model: nonEmptyString(model.modelId) });
}

/** A `doGenerate` result as a response. */
function responseOfResult(result: unknown, model: Model, deferred: ReadonlySet<string>): ResponseParts {
  const record = isRecord(result) ? result : {};
  const response = isRecord(record.response) ? record.response : {};
  return responseOf(record.content, { usage: record.usage, finishReason: record.finishReason, model: nonEmptyString(response.modelId) ?? modelVersionOf(response.body) ?? model.modelId, id: response.id, providerMetadata: record.providerMetadata, body: response.body }, deferred);
}

/** Collects a stream's response from its parts as they pass; its text, reasoning and error part by the integration's rule (`StreamedSoFar`). */
class StreamedResponse {
  readonly soFar = new StreamedSoFar();
  readonly toolCalls: CallOfTool[] = [];
  readonly media: AnswerMedium[] = [];
  /** What the provider returned for the calls it ran, by call id. */
  readonly #providerResults = new Map<string, unknown>();
  readonly #resultNames = new Map<string, string>();
  /** The names of the call's provider tools whose results may come in a later response (`deferredResultTools`). */
  readonly #deferred: ReadonlySet<string>;
  /** The approval ids of the provider's calls it asks the program to approve first, by call id. */
  readonly #approvalIds = new Map<string, string>();
  usage: unknown;
  finishReason: string | undefined;
  model: string | undefined;
  id: string | undefined;
  costUsd: number | undefined;
  servedBy: string | undefined;
  /** Gemini's searches and page reads, from the finish part's metadata (`groundingCallsOf`). */
  grounding: CallOfTool[] = [];
  failedUpstreams: string[] | undefined;

  constructor(deferred: ReadonlySet<string>) {
    this.#deferred = deferred;
  }

  see(part: Part): void {
    this.soFar.note(part);
    switch (part.type) {
      case 'tool-call':
        this.toolCalls.push({ id: nonEmptyString(part.toolCallId) ?? '', name: nonEmptyString(part.toolName) ?? 'tool', arguments: part.input, ...(part.providerExecuted === true ? { providerExecuted: true } : {}) });
        break;
      case 'file': {
        const medium = answerMediumOfPart(part);
        if (medium !== undefined) this.media.push(medium);
        break;
      }
      case 'tool-result':
        // A model's stream carries results only of the calls its provider ran (the packages do not all mark them).
        if (typeof part.toolCallId === 'string') {
          this.#providerResults.set(part.toolCallId, toolOutputValue(part.result ?? part.output));
          this.#resultNames.set(part.toolCallId, nonEmptyString(part.toolName) ?? 'tool');
        }
        break;
      case 'tool-approval-request':
        if (typeof part.toolCallId === 'string' && typeof part.approvalId === 'string') this.#approvalIds.set(part.toolCallId, part.approvalId);
        break;
      case 'raw':
        // Only with `includeRawChunks`: Gemini's chunks name the model that answered, which @ai-sdk/google does not pass on.
        this.model ??= modelVersionOf(part.rawValue);
        // An OpenAI-compatible server's chunks as OpenRouter sends them name the upstream serving the call.
        this.servedBy ??= completionServedBy(part.rawValue);
        break;
      case 'response-metadata':
        this.model = nonEmptyString(part.modelId) ?? this.model;
        this.id = nonEmptyString(part.id) ?? this.id;
        break;
      case 'finish':
        this.usage = part.usage;
        this.finishReason = finishReasonOf(part.finishReason);
        this.costUsd = chargedCostUsd(part.providerMetadata, part.usage);
        this.servedBy = servedByOf(part.providerMetadata) ?? this.servedBy;
        this.grounding = groundingCallsOf(part.providerMetadata, this.id);
        this.failedUpstreams = failedUpstreamsOf(part.providerMetadata);
        break;
    }
  }

  /** The results of calls an earlier response made: a result whose call is not in this stream (`laterProviderResult`). */
  #laterResults(): CallOfTool[] {
    const out: CallOfTool[] = [];
    for (const [id, result] of this.#providerResults) if (!this.toolCalls.some((call) => call.id === id)) out.push(laterHostedResult(id, this.#resultNames.get(id) ?? 'tool', result));
    return out;
  }

  response(model: Model): ResponseParts {
    return {
      text: this.soFar.text,
      reasoning: this.soFar.reasoning === '' ? undefined : this.soFar.reasoning,
      toolCalls: [...this.grounding, ...this.toolCalls.map((call) => (call.providerExecuted === true ? providerCall(call, this.#providerResults.get(call.id), this.#approvalIds.get(call.id), this.#deferred.has(call.name) && !this.#providerResults.has(call.id)) : call)), ...this.#laterResults()],
      ...(this.media.length > 0 ? { media: this.media } : {}),
      usage: tokenCounts(this.usage),
      finishReason: this.finishReason,
      model: this.model ?? nonEmptyString(model.modelId),
      id: this.id,
      ...(this.costUsd === undefined ? {} : { costUsd: this.costUsd }),
      ...(this.servedBy === undefined ? {} : { servedBy: this.servedBy }),
      ...(this.failedUpstreams === undefined ? {} : { failedUpstreams: this.failedUpstreams }),
    };
  }
}

/**
 * Middleware for `wrapLanguageModel` that emits the LLM hooks for each
 * provider attempt of the wrapped model, grouping retries of one call.
 */
export function aiSdkMiddleware(hooks: HookRegistry, options: AdapterOptions = {}): AiSdkMiddleware {
  checkAdapterArguments('aiSdkMiddleware', 'the first argument', hooks, options);
  const core = new AdapterCore(hooks, { ...options, sessionScope: 'host' }, options.platform ?? 'ai-sdk');
  const sessionId = typeof options.sessionId === 'string' && options.sessionId !== '' ? options.sessionId : newSessionId();
  let run: AgentRun | undefined;
  const calls = new WeakMap<object, ApiCall>();
  /** The provider's approval requests of this middleware's responses, by id, until answered (the prompt does not keep them). */
  const providerAsked = new Map<string, CallOfTool>();
  /** Each call's approved requests, whose calls the provider runs in its response. */
  const approvedFor = new WeakMap<ApiCall, CallOfTool[]>();
  /** A response, its hosted calls linked to the requests approved in the call's prompt (the package drops the id); its own requests noted. */
  const answered = (call: ApiCall, response: ResponseParts): ResponseParts => {
    for (const asked of response.toolCalls) if (asked.providerApproval === true) providerAsked.set(asked.id, asked);
    while (providerAsked.size > MAX_PENDING_APPROVALS) providerAsked.delete(providerAsked.keys().next().value as string);
    const approved = approvedFor.get(call);
    return approved === undefined ? response : { ...response, toolCalls: linkApprovedCalls(response.toolCalls, approved) };
  };
  /** Streamed calls given up after an error part, by their prompt's JSON, until their rerun comes. */
  const reruns = new Map<string, ApiCall>();

  /** The call this attempt reruns, if a stream of the same prompt was given up. */
  const rerunOf = (params: Params): ApiCall | undefined => {
    if (reruns.size === 0) return undefined;
    const key = promptKey(params.prompt);
    const call = key === undefined ? undefined : reruns.get(key);
    if (call === undefined) return undefined;
    reruns.delete(key!);
    return call.settled ? undefined : call;
  };

  /** The call this attempt belongs to, and whether this middleware reports its response (`owned`). */
  const callFor = (params: Params, model: Model): { call: ApiCall; owned: boolean } | undefined => {
    if (currentAttempt() !== undefined) return undefined; // the integration, or the adapter of the framework calling this model (aisdk()), reports this attempt
    const joined = objectCallOf(params.prompt);
    if (joined !== undefined) return joined.settled ? undefined : { call: joined, owned: false };
    if (run === undefined || run.ended) {
      run = core.startRun({ runId: sessionId, model: nonEmptyString(model.modelId), provider: nonEmptyString(model.provider) });
      if (run === undefined) return undefined;
    }
    const key = Array.isArray(params.prompt) ? params.prompt : params;
    let call = calls.get(key);
    if (call === undefined || call.settled) {
      call = rerunOf(params) ?? run.newApiCall();
      calls.set(key, call);
    }
    return { call, owned: true };
  };

  const begin = (params: Params, model: Model): { call: ApiCall; owned: boolean } | undefined =>
    core.guard.run('middleware attempt', () => {
      const found = callFor(params, model);
      if (found === undefined) return undefined;
      // The answers to the provider's approval requests go to it with this prompt.
      if (found.owned) {
        const approved: CallOfTool[] = [];
        for (const answer of providerApprovalAnswersOfPrompt(params.prompt)) {
          found.call.run.providerApprovalAnswer(answer);
          const asked = providerAsked.get(answer.id);
          providerAsked.delete(answer.id);
          if (answer.approved && asked !== undefined) approved.push(asked);
        }
        if (approved.length > 0) approvedFor.set(found.call, approved);
      }
      // A joined object call's first attempt was opened by the integration's step start.
      if (found.owned) found.call.attemptStart(requestOf(params, model));
      else if (!found.call.attemptOpen) found.call.attemptStart();
      return found;
    });

  const failed = (call: ApiCall, error: unknown): void => {
    core.guard.run('middleware attempt', () => call.attemptError(error));
  };

  const middleware = {
    specificationVersion: 'v4',
    async wrapGenerate({ doGenerate, params, model }: { doGenerate: () => PromiseLike<unknown>; params: Params; model: Model }): Promise<unknown> {
      const found = begin(params, model);
      if (found === undefined) return await doGenerate();
      let result: unknown;
      try {
        result = await doGenerate();
      } catch (error) {
        failed(found.call, error);
        throw error;
      }
      if (found.owned) core.guard.run('middleware attempt', () => found.call.attemptEnd(answered(found.call, responseOfResult(result, model, deferredResultTools(params.tools)))));
      return result;
    },
    async wrapStream({ doStream, params, model }: { doStream: () => PromiseLike<unknown>; params: Params; model: Model }): Promise<unknown> {
      const found = begin(params, model);
      if (found === undefined) return await doStream();
      let result: unknown;
      try {
        result = await doStream();
      } catch (error) {
        failed(found.call, error);
        throw error;
      }
      if (!found.owned || !isRecord(result) || !(result.stream instanceof ReadableStream)) return result;
      const call = found.call;
      const seen = new StreamedResponse(deferredResultTools(params.tools));
      const signal = params.abortSignal as AbortSignal | undefined;
      let settled = false;
      const settle = (error: unknown): void => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener('abort', aborted);
        core.guard.run('middleware stream end', () => {
          const failed = seen.soFar;
          // An error part, then the consumer cancelled or the stream finished for that error: streamText gives such an
          // attempt up, and reruns the step under streamRetries. Which of the two the middleware sees depends on how far
          // the runtime reads the stream ahead (Node 26 reads it to its end before the SDK cancels). The attempt failed
          // with the error part, as the program's `onError` got it (retryable when the SDK cancelled it: it reruns it),
          // and the answer that came before it.
          if (failed.failed && (error !== undefined || seen.finishReason === 'error')) {
            call.attemptError(error === undefined ? failed.error : failed.retriedError, false, seen.response(model));
            const key = promptKey(params.prompt);
            if (key !== undefined) reruns.set(key, call);
            if (reruns.size > MAX_RERUNS) reruns.delete(reruns.keys().next().value as string);
          } else if (error !== undefined) call.attemptError(error, true, failed.delivered());
          else if (failed.failed && seen.finishReason === undefined) call.attemptError(failed.error, true, seen.response(model));
          else call.attemptEnd(answered(call, seen.response(model)));
        });
      };
      // The program's abort ends the attempt as it fires: the SDK reports its `onAbort` before the cancel it sends
      // down reaches this stream, and a program that shuts the plugin down then would lose the call.
      const aborted = (): void => settle(abortErrorOf(signal?.reason, 'the stream was aborted'));
      signal?.addEventListener('abort', aborted, { once: true });
      const observed = result.stream.pipeThrough(
        new TransformStream<unknown, unknown>({
          transform(part, controller) {
            if (isRecord(part)) core.guard.run('middleware stream part', () => seen.see(part));
            controller.enqueue(part);
          },
          flush() {
            settle(undefined);
          },
        }),
      );
      // A consumer that stops reading cancels the stream: the attempt ends as cut short.
      const reader = observed.getReader();
      const stream = new ReadableStream<unknown>({
        async pull(controller) {
          try {
            const next = await reader.read();
            if (next.done) controller.close();
            else controller.enqueue(next.value);
          } catch (error) {
            settle(error);
            controller.error(error);
          }
        },
        async cancel(reason) {
          settle(reason ?? (signal?.aborted === true ? signal.reason : undefined) ?? new Error('the consumer stopped reading the stream'));
          await reader.cancel(reason);
        },
      });
      return { ...result, stream };
    },
  };
  // The hooks read the SDK's values loosely (any provider's shapes); the SDK's types describe the same functions.
  return middleware as unknown as AiSdkMiddleware;
}
