/**
 * Lookups shared by all agents of one build, and LLM de-duplication: when two
 * instrumentations saw one physical request, the one with the higher
 * "fidelity" makes the step and the other only lends its metrics.
 *
 * @module
 */

import type { Json, JsonObject } from '../../../shared/json.ts';
import { compareInstants } from '../../instant.ts';
import { canonicalJson } from '../../native-text.ts';
import {
  asObject,
  collectCorrelationKeys,
  extractMetrics,
  extractResponseMessage,
  extractToolCalls,
  extractUserMessage,
  mergeMetricsInto,
  requestModel,
  responseModel,
  unwrapLlmRequest,
} from '../payload/index.ts';
import type { AtifMetrics } from '../types.ts';
import type { LlmCallPricer } from '../types.ts';
import type { GeminiUsageReading } from '../../usage.ts';
import { type ConvEvent, isLlm, isStart, modelNameOf } from './events.ts';

interface SpanInfo {
  start?: ConvEvent;
  end?: ConvEvent;
}

export interface SharedLookups {
  /** Each scope's start event by uuid (a later start replaces an earlier one): its name and instant. */
  starts: Map<string, ConvEvent>;
  llmEndsWithData: Set<string>;
  llmStartModels: Map<string, string>;
  suppressedLlm: Set<string>;
  supplementalMetrics: Map<string, AtifMetrics>;
  /** Prices an LLM call whose response reports no cost (the `pricing` component). */
  price?: LlmCallPricer;
  /** The payloads found written exactly by `JSON.stringify` (`sortPayload`), for the writer to skip. */
  plain: Set<object>;
  /** How a Gemini answer's tokens are counted (`GeminiUsageReading`). */
  gemini: GeminiUsageReading;
}

export interface Lookups extends SharedLookups {
  toolCallIds: Map<string, string>;
}

export function buildSharedLookups(events: readonly ConvEvent[], plain: Set<object> = new Set(), gemini: GeminiUsageReading = 'billed'): SharedLookups {
  const starts = new Map<string, ConvEvent>();
  const llmEndsWithData = new Set<string>();
  const llmStartModels = new Map<string, string>();
  let fidelity = -1;
  let mixed = false;
  // Indexed: a once-a-build pass, where a for-of allocates an iterator result per event until it is optimized.
  for (let i = 0; i < events.length; i++) {
    const event = events[i] as ConvEvent;
    if (isStart(event)) {
      starts.set(event.uuid, event);
      if (isLlm(event)) {
        const model = startModel(event);
        if (model !== undefined) llmStartModels.set(event.uuid, model);
      }
    }
    if (isLlm(event) && event.data !== undefined && (event.phase === 'start' || event.phase === 'end')) {
      if (event.phase === 'end') llmEndsWithData.add(event.uuid);
      if (!mixed) {
        const score = fidelityScore(event);
        mixed = fidelity !== -1 && score !== fidelity;
        fidelity = score;
      }
    }
  }
  // A span's fidelity is the higher of its start's and its end's, and only spans of different fidelity can be one
  // request seen twice: with one fidelity among all the LLM events (one instrumentation, the usual stream) no span
  // can be suppressed, and the spans need not be paired at all.
  const dedupe = mixed ? buildLlmDedupe(llmSpansOf(events), gemini) : { suppressedLlm: new Set<string>(), supplementalMetrics: new Map<string, AtifMetrics>() };
  return { starts, llmEndsWithData, llmStartModels, ...dedupe, plain, gemini };
}

/** Each LLM span's start and end event, by uuid (a later event of a phase replaces an earlier one). */
function llmSpansOf(events: readonly ConvEvent[]): Map<string, SpanInfo> {
  const llmSpans = new Map<string, SpanInfo>();
  for (const event of events) {
    if (!isLlm(event)) continue;
    let span = llmSpans.get(event.uuid);
    if (span === undefined) llmSpans.set(event.uuid, (span = {}));
    if (event.phase === 'start') span.start = event;
    else if (event.phase === 'end') span.end = event;
  }
  return llmSpans;
}

/** The model of an LLM start: its `category_profile.model_name`, else the request's `model`. */
function startModel(event: ConvEvent): string | undefined {
  return modelNameOf(event) ?? requestModel(event.data);
}

// --- LLM de-duplication: two instrumentations of one physical request ---

interface LlmCandidate {
  uuid: string;
  parent: string | undefined;
  start: ConvEvent;
  end: ConvEvent;
  model: string | undefined;
  fidelity: number;
  hook: boolean;
  gateway: boolean;
  nonExact: boolean;
  requestSignature?: string;
  responseSignature?: string;
  correlationKeys?: Set<string>;
}

function metadataObject(event: ConvEvent): JsonObject | undefined {
  return asObject(event.metadata);
}

function hasKey(object: JsonObject | undefined, key: string): boolean {
  return object !== undefined && Object.prototype.hasOwnProperty.call(object, key);
}

function isHookInstrumented(event: ConvEvent): boolean {
  return hasKey(metadataObject(event), 'hook_event_name');
}

function isGatewayInstrumented(event: ConvEvent): boolean {
  const metadata = metadataObject(event);
  return hasKey(metadata, 'gateway_path') || hasKey(metadata, 'llm_correlation_source');
}

function isNonExact(event: ConvEvent): boolean {
  return metadataObject(event)?.provider_payload_exact === false;
}

function fidelityScore(event: ConvEvent): number {
  const metadata = metadataObject(event);
  if (metadata === undefined) return 50;
  if (metadata.projection === true) return 10;
  if (isNonExact(event)) return 30;
  if (metadata.provider_payload_exact === true) return 100;
  if (hasKey(metadata, 'fidelity_source') || hasKey(metadata, 'api_call_id')) return 95;
  if (hasKey(metadata, 'hook_event_name')) return 90;
  return 50;
}

function pairModel(start: ConvEvent, end: ConvEvent): string | undefined {
  return responseModel(end.data) ?? modelNameOf(start) ?? modelNameOf(end) ?? startModel(start) ?? modelNameOf(end);
}

function buildLlmDedupe(spans: Map<string, SpanInfo>, gemini: GeminiUsageReading): Pick<SharedLookups, 'suppressedLlm' | 'supplementalMetrics'> {
  const suppressedLlm = new Set<string>();
  const supplementalMetrics = new Map<string, AtifMetrics>();
  const candidates: LlmCandidate[] = [];
  for (const [uuid, span] of spans) {
    const { start, end } = span;
    if (start === undefined || end === undefined || start.data === undefined || end.data === undefined) continue;
    candidates.push({
      uuid,
      parent: start.parent ?? end.parent,
      start,
      end,
      model: pairModel(start, end),
      fidelity: Math.max(fidelityScore(start), fidelityScore(end)),
      hook: isHookInstrumented(start) || isHookInstrumented(end),
      gateway: isGatewayInstrumented(start) || isGatewayInstrumented(end),
      nonExact: isNonExact(start) || isNonExact(end),
    });
  }
  if (candidates.length < 2) return { suppressedLlm, supplementalMetrics };
  for (let i = 0; i < candidates.length; i++) {
    const left = candidates[i] as LlmCandidate;
    for (let j = i + 1; j < candidates.length; j++) {
      const right = candidates[j] as LlmCandidate;
      if (left.fidelity === right.fidelity || !samePhysicalRequest(left, right)) continue;
      const [suppressed, canonical] = left.fidelity > right.fidelity ? [right, left] : [left, right];
      suppressedLlm.add(suppressed.uuid);
      const metrics = extractMetrics(suppressed.end.data as Json, suppressed.end.name, gemini);
      if (metrics !== undefined) {
        let entry = supplementalMetrics.get(canonical.uuid);
        if (entry === undefined) supplementalMetrics.set(canonical.uuid, (entry = {}));
        mergeMetricsInto(entry, metrics);
      }
    }
  }
  return { suppressedLlm, supplementalMetrics };
}

function requestSignature(candidate: LlmCandidate): string {
  candidate.requestSignature ??= canonicalJson(extractUserMessage(unwrapLlmRequest(candidate.start.data as Json)));
  return candidate.requestSignature;
}

function responseSignature(candidate: LlmCandidate): string {
  if (candidate.responseSignature === undefined) {
    const output = candidate.end.data as Json;
    const calls = extractToolCalls(output);
    candidate.responseSignature = canonicalJson({
      message: extractResponseMessage(output),
      tool_calls: calls === undefined ? null : (calls as unknown as Json),
    });
  }
  return candidate.responseSignature;
}

function correlationKeys(candidate: LlmCandidate): Set<string> {
  if (candidate.correlationKeys === undefined) {
    const keys = new Set<string>();
    for (const event of [candidate.start, candidate.end]) {
      collectCorrelationKeys(event.metadata, keys);
      if (event.data !== undefined) {
        collectCorrelationKeys(event.data, keys);
        collectCorrelationKeys(unwrapLlmRequest(event.data), keys);
      }
    }
    candidate.correlationKeys = keys;
  }
  return candidate.correlationKeys;
}

function samePhysicalRequest(left: LlmCandidate, right: LlmCandidate): boolean {
  if (left.parent === undefined || left.parent !== right.parent) return false;
  if (left.model !== undefined && right.model !== undefined && left.model !== right.model) return false;
  const overlap =
    compareInstants(left.start.instant, right.end.instant) <= 0 && compareInstants(right.start.instant, left.end.instant) <= 0;
  if (!overlap) return false;
  const sameRequest = requestSignature(left) === requestSignature(right);
  if (sameRequest && responseSignature(left) === responseSignature(right)) return true;
  const complementary = (left.nonExact && left.hook && right.gateway) || (right.nonExact && right.hook && left.gateway);
  if (!complementary) return false;
  if (sameRequest) return true;
  const rightKeys = correlationKeys(right);
  for (const key of correlationKeys(left)) if (rightKeys.has(key)) return true;
  return false;
}
