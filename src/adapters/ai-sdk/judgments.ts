/**
 * `experimental_decide` and `experimental_extract`: one model call each, which the SDK reports to telemetry with
 * events of their own (`experimental_onDecisionModelCallStart`/`End`, `experimental_onExtractionModelCallStart`/`End`),
 * not as a language-model call. Here they become the request and response of one API call: the shared state as
 * the user's message, the questions or fields as the request's settings, the answers as the reply.
 *
 * @module
 */

import type { RequestParts, ResponseParts } from '../core/run.ts';
import { rawCounts, tokenUsage, usageShapeOf, type ProviderUsage } from '../../formats/usage.ts';
import { toJson, type Json } from '../../shared/json.ts';
import { recordedValue } from '../core/shapes.ts';
import { isRecord } from '../../shared/record.ts';
import { nonEmptyString } from '../../shared/text.ts';
import { chargedCostUsd, finishReasonOf, modelVersionOf, servedByOf, tokenCounts } from './messages.ts';

type Event = Record<string, unknown>;

/**
 * The shared state as the user's message the model read: a string as it is, a JSON object as JSON, an array of text
 * and JSON parts as their text joined. An array holding files is a message of parts like any prompt's (chatMessages'
 * rule): the parts as given, their media left out ({@link recordedValue}), so the trajectory says a file was read and
 * of what type, and keeps no bytes.
 */
export function stateContent(state: unknown): string | readonly Json[] | undefined {
  if (typeof state === 'string') return state;
  if (!Array.isArray(state)) return state === undefined ? undefined : JSON.stringify(toJson(state));
  if (state.some((part) => isRecord(part) && part.type !== 'text' && part.type !== 'json')) {
    const parts = recordedValue(state);
    return Array.isArray(parts) ? parts : JSON.stringify(parts);
  }
  const parts: string[] = [];
  for (const part of state) {
    if (!isRecord(part)) continue;
    if (part.type === 'text' && typeof part.text === 'string') parts.push(part.text);
    else if (part.type === 'json') parts.push(JSON.stringify(toJson(part.value ?? null)));
  }
  return parts.join('\n');
}

/** The model call's request: the state as the user's message, what was asked of it as settings. */
export function judgmentRequest(event: Event): RequestParts {
  const settings: Record<string, unknown> = {};
  if (event.operationId === 'ai.decide.doDecide') settings.questions = toJson(event.questions);
  else {
    settings.fields = toJson(event.fields);
    if (typeof event.referenceDate === 'string') settings.reference_date = event.referenceDate;
  }
  const content = stateContent(event.state);
  return { messages: content === undefined ? [] : [{ role: 'user', content }], model: nonEmptyString(event.modelId), settings };
}

/**
 * The usage as the provider sent it, where the package hands it on and it states the SDK's own counts: the SDK keeps
 * only input and output of a decision or extraction, and drops the cache reads and reasoning it says more about.
 * @ai-sdk/openai's decision model puts the Decisions API's usage in `providerMetadata.openai.usage`, @ai-sdk/anthropic's
 * language model the Messages usage in `providerMetadata.anthropic.usage`, @ai-sdk/google's the Gemini
 * `usageMetadata` (its continuations summed) in `providerMetadata.google.usageMetadata`; an extraction adapted from a
 * language model keeps the response body. A usage whose counts differ (an Anthropic extraction sent as several calls:
 * the SDK sums them, the metadata is the first's) is not this call's usage.
 */
function providerUsage(event: Event, sdk: unknown): ProviderUsage | undefined {
  const metadata = isRecord(event.providerMetadata) ? Object.values(event.providerMetadata).filter(isRecord) : [];
  const response = isRecord(event.response) ? event.response : {};
  const body = isRecord(response.body) ? response.body : {};
  const candidates = [...metadata.flatMap((entry) => [entry.usage, entry.usageMetadata]), body.usage, body.usageMetadata];
  const counts = isRecord(sdk) ? rawCounts('ai_sdk', sdk) : undefined;
  for (const usage of candidates) {
    const shape = usageShapeOf(usage);
    if (shape === undefined || shape === 'ai_sdk') continue;
    const read = tokenUsage(shape, usage);
    if (read !== undefined && read.prompt === counts?.input && read.completion === counts?.output) return { shape, usage };
  }
  return tokenCounts(sdk);
}

/** The model call's end event as its response: the answers as the reply's text, with the provider's usage. */
export function responseOfJudgment(event: Event): ResponseParts {
  const response = isRecord(event.response) ? event.response : {};
  const costUsd = chargedCostUsd(event.providerMetadata, event.usage);
  const servedBy = servedByOf(event.providerMetadata);
  return {
    text: JSON.stringify(toJson(event.answers ?? null)),
    toolCalls: [],
    usage: providerUsage(event, event.usage),
    // @ai-sdk/google's response names no model: the answer's `modelVersion` is the model that answered.
    model: nonEmptyString(response.modelId) ?? modelVersionOf(response.body) ?? nonEmptyString(event.modelId),
    id: nonEmptyString(response.id),
    ...(costUsd === undefined ? {} : { costUsd }),
    ...(servedBy === undefined ? {} : { servedBy }),
  };
}

/**
 * A decision or extraction whose model call answered but not with answers: `Experimental_DecisionLanguageModel` and
 * `Experimental_ExtractionLanguageModel` (@ai-sdk/provider-utils, the adapters @ai-sdk/anthropic and @ai-sdk/google's
 * extraction use) throw `InvalidResponseDataError` with the language model's whole result as its `data` when the call
 * did not finish with `stop` (Anthropic's `refusal` is `content-filter`, a cut answer `length`). The provider billed
 * that call: it is the call's response, with its usage and finish reason, and the run still fails with the error.
 * Undefined for any other error (a refusal the SDK raises itself after the answers came, `DecisionRefusalError` or
 * `ExtractionRefusalError`, carries no usage).
 */
export function unansweredJudgment(error: unknown, modelId: unknown): ResponseParts | undefined {
  if (!isRecord(error) || error.name !== 'AI_InvalidResponseDataError') return undefined;
  const result = error.data;
  if (!isRecord(result) || !isRecord(result.usage) || !isRecord(result.finishReason) || !Array.isArray(result.content)) return undefined;
  const usage = result.usage;
  const sdk = { inputTokens: isRecord(usage.inputTokens) ? usage.inputTokens.total : undefined, outputTokens: isRecord(usage.outputTokens) ? usage.outputTokens.total : undefined };
  const text = result.content.filter((part) => isRecord(part) && part.type === 'text' && typeof part.text === 'string').map((part) => (part as { text: string }).text).join('');
  const answered = responseOfJudgment({ modelId, usage: sdk, providerMetadata: result.providerMetadata, response: result.response });
  return { ...answered, text, finishReason: finishReasonOf(result.finishReason) };
}
