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
import { toJson } from '../../shared/json.ts';
import { isRecord } from '../../shared/record.ts';
import { nonEmptyString } from '../../shared/text.ts';
import { chargedCostUsd, servedByOf, tokenCounts } from './messages.ts';

type Event = Record<string, unknown>;

/**
 * The shared state as the text the model read: a string as it is, a JSON object as JSON, an array of parts with its
 * text parts' text, its JSON parts as JSON and its files named by media type (their bytes are not the trajectory's).
 */
export function stateText(state: unknown): string | undefined {
  if (typeof state === 'string') return state;
  if (!Array.isArray(state)) return state === undefined ? undefined : JSON.stringify(toJson(state));
  const parts: string[] = [];
  for (const part of state) {
    if (!isRecord(part)) continue;
    if (part.type === 'text' && typeof part.text === 'string') parts.push(part.text);
    else if (part.type === 'json') parts.push(JSON.stringify(toJson(part.value ?? null)));
    else if (part.type === 'file') parts.push(`[file ${nonEmptyString(part.mediaType) ?? 'unknown'}]`);
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
  const text = stateText(event.state);
  return { messages: text === undefined ? [] : [{ role: 'user', content: text }], model: nonEmptyString(event.modelId), settings };
}

/**
 * The usage as the provider sent it, where the package hands it on and it states the SDK's own counts: the SDK keeps
 * only input and output of a decision or extraction, and drops the cache reads and reasoning it says more about.
 * @ai-sdk/openai's decision model puts the Decisions API's usage in `providerMetadata.openai.usage`; an extraction
 * adapted from a language model keeps the response body. A body whose counts differ (an Anthropic extraction sent as
 * several calls: the SDK sums them, the body is the first's) is not this call's usage.
 */
function providerUsage(event: Event, sdk: unknown): ProviderUsage | undefined {
  const metadata = isRecord(event.providerMetadata) ? Object.values(event.providerMetadata) : [];
  const response = isRecord(event.response) ? event.response : {};
  const candidates = [...metadata.map((entry) => (isRecord(entry) ? entry.usage : undefined)), isRecord(response.body) ? response.body.usage : undefined];
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
    model: nonEmptyString(response.modelId) ?? nonEmptyString(event.modelId),
    id: nonEmptyString(response.id),
    ...(costUsd === undefined ? {} : { costUsd }),
    ...(servedBy === undefined ? {} : { servedBy }),
  };
}
