/**
 * ATOF events → ATIF v1.7 trajectory, step for step the way the native
 * NeMo Relay `AtifExporter` (nemo-relay-node 0.9.2) does it.
 *
 * Outline:
 * 1. Sort the events by timestamp (stable).
 * 2. Find the Agent scopes. When the trajectory has one root agent (or the
 *    session id names one) and every LLM/tool event belongs to some agent,
 *    each agent gets its own steps and nested agents are embedded as
 *    `subagent_trajectories`. Otherwise all events become one flat list.
 * 3. Per agent: an LLM start gives a `user` step when the request starts a
 *    fresh user turn; an LLM end gives an `agent` step with the requested tool
 *    calls and metrics; a tool end gives an observation on the agent step that
 *    requested it (by tool_call_id), or a `system` step when none did. Marks
 *    are not steps.
 *
 * Where native behaves oddly the code still follows it and says so with a
 * "native:" comment: the goal is output indistinguishable from native.
 *
 * @module
 */

import type { Json, JsonObject } from '../../../shared/json.ts';
import type {
  AtifAgent,
  AtifAncestry,
  AtifInvocation,
  AtifMetrics,
  AtifObservation,
  AtifObservationResult,
  AtifStep,
  AtifToolCall,
  AtifTrajectory,
} from '../types.ts';
import { ATIF_SCHEMA_VERSION, ATIF_STEP_FIELDS } from '../types.ts';
import {
  asObject,
  atifContentValue,
  collectCorrelationKeys,
  delegationToolCallId,
  extractMetrics,
  extractReasoningContent,
  extractReasoningEffort,
  extractResponseMessage,
  extractToolCalls,
  extractUserMessage,
  isAtifContentParts,
  mergeMetricsInto,
  normalizeToolArguments,
  orderMetrics,
  requestModel,
  requestTurnState,
  responseModel,
  unwrapLlmRequest,
} from '../payload.ts';
import type { AtofEvent } from '../../atof/types.ts';
import type { Instant } from '../../instant.ts';
import { compareInstants, epochSecondsWithMillis, parseInstant, rfc3339Of } from '../../instant.ts';
import { canonicalJson, sortJson } from '../../native-text.ts';

/** One event as the converter reads it. */
export interface ConvEvent {
  kind: string;
  phase: 'start' | 'end' | undefined;
  category: string | undefined;
  uuid: string;
  parent: string | undefined;
  name: string;
  /** `undefined` when the event's data is null or absent (native's `Option`). */
  data: Json | undefined;
  metadata: Json | undefined;
  profile: JsonObject | undefined;
  instant: Instant;
  /** The timestamp as native re-formats it. */
  timestamp: string;
}

const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

function normalizeUuid(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  // Relays write lowercase uuids: nothing to lowercase means nothing to check.
  const lower = value.toLowerCase();
  return lower === value || !UUID_RE.test(value) ? value : lower;
}

/** A uuid in any form `Uuid::parse_str` accepts, as the canonical lowercase hyphenated string. */
export function parseUuid(value: string): string | undefined {
  let text = value.trim() === value ? value : '';
  if (/^urn:uuid:/i.test(text)) text = text.slice(9);
  if (text.startsWith('{') && text.endsWith('}')) text = text.slice(1, -1);
  if (/^[0-9a-fA-F]{32}$/.test(text)) {
    text = `${text.slice(0, 8)}-${text.slice(8, 12)}-${text.slice(12, 16)}-${text.slice(16, 20)}-${text.slice(20)}`;
  }
  return UUID_RE.test(text) ? text.toLowerCase() : undefined;
}

/**
 * Reads raw ATOF events into converter events. Events whose timestamp
 * cannot be parsed take their predecessor's instant so they keep their
 * arrival position (native never sees such events).
 */
export function toConvEvents(events: readonly AtofEvent[]): ConvEvent[] {
  const out: ConvEvent[] = new Array(events.length);
  let previous: Instant = { seconds: 0, nanos: 0 };
  for (let i = 0; i < events.length; i++) {
    const event = events[i] as AtofEvent;
    const parsed = parseInstant(event.timestamp);
    const instant = parsed ?? previous;
    previous = instant;
    const scopeCategory = (event as { scope_category?: unknown }).scope_category;
    const profile = asObject(event.category_profile as Json | undefined);
    out[i] = {
      kind: event.kind,
      phase: scopeCategory === 'start' || scopeCategory === 'end' ? scopeCategory : undefined,
      category: typeof event.category === 'string' ? event.category : undefined,
      uuid: normalizeUuid(event.uuid) ?? '',
      parent: normalizeUuid(event.parent_uuid),
      name: typeof event.name === 'string' ? event.name : '',
      data: event.data === null ? undefined : (event.data as Json | undefined),
      metadata: event.metadata === null ? undefined : (event.metadata as Json | undefined),
      profile,
      instant,
      timestamp: parsed !== undefined ? rfc3339Of(event.timestamp, parsed) : String(event.timestamp),
    };
  }
  return out;
}

function toolCallIdOf(event: ConvEvent): string | undefined {
  const id = event.profile?.tool_call_id;
  return typeof id === 'string' ? id : undefined;
}

function modelNameOf(event: ConvEvent): string | undefined {
  const name = event.profile?.model_name;
  return typeof name === 'string' ? name : undefined;
}

function annotationOf(event: ConvEvent): Json | undefined {
  const annotation = event.profile?.tool_result_annotation;
  return annotation === undefined || annotation === null ? undefined : annotation;
}

const isStart = (event: ConvEvent): boolean => event.phase === 'start';
const isAgentScope = (event: ConvEvent): boolean => event.category === 'agent';
const isLlm = (event: ConvEvent): boolean => event.category === 'llm';

function isScope(event: ConvEvent, phase: 'start' | 'end', category: string): boolean {
  return event.kind === 'scope' && event.phase === phase && event.category === category;
}

function metadataString(event: ConvEvent, key: string): string | undefined {
  const value = asObject(event.metadata)?.[key];
  return typeof value === 'string' ? value : undefined;
}

// ---------------------------------------------------------------------------
// lookups shared by all agents of one build

interface SpanInfo {
  start?: ConvEvent;
  end?: ConvEvent;
}

interface SharedLookups {
  names: Map<string, string>;
  startInstants: Map<string, Instant>;
  llmEndsWithData: Set<string>;
  llmStartModels: Map<string, string>;
  suppressedLlm: Set<string>;
  supplementalMetrics: Map<string, AtifMetrics>;
}

interface Lookups extends SharedLookups {
  toolCallIds: Map<string, string>;
}

function buildSharedLookups(events: readonly ConvEvent[]): SharedLookups {
  const names = new Map<string, string>();
  const startInstants = new Map<string, Instant>();
  const llmEndsWithData = new Set<string>();
  const llmStartModels = new Map<string, string>();
  const llmSpans = new Map<string, SpanInfo>();
  for (const event of events) {
    if (isStart(event)) {
      names.set(event.uuid, event.name);
      startInstants.set(event.uuid, event.instant);
      if (isLlm(event)) {
        const model = startModel(event);
        if (model !== undefined) llmStartModels.set(event.uuid, model);
      }
    }
    if (isLlm(event)) {
      if (event.phase === 'end' && event.data !== undefined) llmEndsWithData.add(event.uuid);
      let span = llmSpans.get(event.uuid);
      if (span === undefined) llmSpans.set(event.uuid, (span = {}));
      if (event.phase === 'start') span.start = event;
      else if (event.phase === 'end') span.end = event;
    }
  }
  const dedupe = buildLlmDedupe(llmSpans);
  return { names, startInstants, llmEndsWithData, llmStartModels, ...dedupe };
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

function buildLlmDedupe(spans: Map<string, SpanInfo>): Pick<SharedLookups, 'suppressedLlm' | 'supplementalMetrics'> {
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
      const metrics = extractMetrics(suppressed.end.data as Json, suppressed.end.name);
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

// --- tool executions matched to requested tool calls without an explicit id ---

function buildToolCallCorrelations(events: Iterable<ConvEvent>): Map<string, string> {
  const correlations = new Map<string, string>();
  const toolStarts: ConvEvent[] = [];
  const llmEnds: ConvEvent[] = [];
  for (const event of events) {
    if (event.kind !== 'scope') continue;
    if (event.phase === 'start' && event.category === 'tool') {
      const id = toolCallIdOf(event);
      if (id !== undefined) correlations.set(event.uuid, id);
      toolStarts.push(event);
    } else if (event.phase === 'end' && event.category === 'tool') {
      const id = toolCallIdOf(event);
      if (id !== undefined) correlations.set(event.uuid, id);
    } else if (event.phase === 'end' && event.category === 'llm' && event.data !== undefined) {
      llmEnds.push(event);
    }
  }
  // Only executions that end up without an id are matched by name and
  // arguments; usually there are none, and the requested calls need not be read.
  const executionsByKey = new Map<string, string[]>();
  for (const event of toolStarts) {
    if (correlations.has(event.uuid) || event.data === undefined) continue;
    const key = toolMatchKey(event.name, normalizeToolArguments(event.data));
    if (key === undefined) continue;
    let group = executionsByKey.get(key);
    if (group === undefined) executionsByKey.set(key, (group = []));
    group.push(event.uuid);
  }
  if (executionsByKey.size === 0) return correlations;
  const consumed = new Set(correlations.values());
  const requestedByKey = new Map<string, string[]>();
  for (const event of llmEnds) {
    for (const call of extractToolCalls(event.data as Json) ?? []) {
      if (consumed.has(call.tool_call_id)) continue;
      const key = toolMatchKey(call.function_name, call.arguments);
      if (key === undefined) continue;
      let group = requestedByKey.get(key);
      if (group === undefined) requestedByKey.set(key, (group = []));
      group.push(call.tool_call_id);
    }
  }
  for (const [key, uuids] of executionsByKey) {
    const ids = requestedByKey.get(key);
    if (ids === undefined || ids.length !== uuids.length) continue;
    uuids.forEach((uuid, i) => correlations.set(uuid, ids[i] as string));
  }
  return correlations;
}

function toolMatchKey(name: string, args: Json): string | undefined {
  return name === '' ? undefined : `${name}\u0000${canonicalJson(args)}`;
}

// ---------------------------------------------------------------------------
// agent scope tree

interface AgentNode {
  uuid: string;
  name: string;
  sessionId: string | undefined;
  referencedByParent: boolean;
  parentAgent: string | undefined;
  children: string[];
  instant: Instant;
}

class AgentTree {
  readonly nodes = new Map<string, AgentNode>();
  readonly roots: string[] = [];
  readonly scopeParents = new Map<string, string>();
  readonly agentUuids = new Set<string>();

  constructor(events: readonly ConvEvent[]) {
    const roles = new Map<string, string | undefined>();
    for (const event of events) {
      if (!isStart(event)) continue;
      if (event.parent !== undefined) this.scopeParents.set(event.uuid, event.parent);
      if (isAgentScope(event)) roles.set(event.uuid, metadataString(event, 'nemo_relay_scope_role'));
    }
    for (const event of events) {
      if (!isStart(event) || !isAgentScope(event)) continue;
      // A `turn`-role agent scope is transparent inside a real agent.
      if (metadataString(event, 'nemo_relay_scope_role') !== 'turn' || this.nearestNonTurnAgent(event.parent, roles, event.uuid) === undefined) {
        this.agentUuids.add(event.uuid);
      }
    }
    for (const event of events) {
      if (!isStart(event) || !isAgentScope(event) || !this.agentUuids.has(event.uuid)) continue;
      this.nodes.set(event.uuid, {
        uuid: event.uuid,
        name: event.name,
        sessionId: metadataString(event, 'session_id'),
        referencedByParent:
          metadataString(event, 'nemo_relay_scope_role') === 'subagent' ||
          delegationToolCallId(event.metadata) !== undefined ||
          delegationToolCallId(event.data) !== undefined,
        parentAgent: this.nearestAgent(event.parent, event.uuid),
        children: [],
        instant: event.instant,
      });
    }
    for (const node of this.nodes.values()) {
      if (node.parentAgent === undefined) this.roots.push(node.uuid);
      else this.nodes.get(node.parentAgent)?.children.push(node.uuid);
    }
    const byStart = (a: string, b: string): number =>
      compareInstants((this.nodes.get(a) as AgentNode).instant, (this.nodes.get(b) as AgentNode).instant);
    this.roots.sort(byStart);
    for (const node of this.nodes.values()) node.children.sort(byStart);
  }

  private walk(start: string | undefined, visit: (uuid: string) => boolean): string | undefined {
    let current = start;
    // A malformed stream could form a parent cycle; never walk further than the map is long.
    for (let steps = 0; current !== undefined && steps <= this.scopeParents.size; steps++) {
      if (visit(current)) return current;
      current = this.scopeParents.get(current);
    }
    return undefined;
  }

  nearestAgent(start: string | undefined, excluded?: string): string | undefined {
    return this.walk(start, (uuid) => uuid !== excluded && this.agentUuids.has(uuid));
  }

  private nearestNonTurnAgent(
    start: string | undefined,
    roles: Map<string, string | undefined>,
    excluded: string,
  ): string | undefined {
    return this.walk(start, (uuid) => uuid !== excluded && roles.has(uuid) && roles.get(uuid) !== 'turn');
  }

  chooseRoot(sessionId: string): string | undefined {
    const uuid = parseUuid(sessionId);
    if (uuid !== undefined && this.nodes.has(uuid)) return uuid;
    return this.roots.length === 1 ? this.roots[0] : undefined;
  }

  ownerAgent(event: ConvEvent): string | undefined {
    if (isAgentScope(event)) return this.agentUuids.has(event.uuid) ? event.uuid : undefined;
    return this.nearestAgent(event.parent);
  }

  directChildStart(parent: string, event: ConvEvent): AgentNode | undefined {
    if (!isStart(event) || !isAgentScope(event)) return undefined;
    const child = this.nodes.get(event.uuid);
    return child !== undefined && child.parentAgent === parent ? child : undefined;
  }
}

function isStepEvent(event: ConvEvent): boolean {
  return (
    event.kind === 'scope' &&
    ((event.phase === 'start' && event.category === 'llm') ||
      (event.phase === 'end' && (event.category === 'llm' || event.category === 'tool')))
  );
}

// ---------------------------------------------------------------------------
// step conversion state machine

function ancestryOf(event: ConvEvent, names: Map<string, string>): AtifAncestry {
  const ancestry: AtifAncestry = { function_id: event.uuid, function_name: event.name };
  if (event.parent !== undefined) {
    ancestry.parent_id = event.parent;
    const parentName = names.get(event.parent);
    if (parentName !== undefined) ancestry.parent_name = parentName;
  }
  return ancestry;
}

function invocationOf(start: Instant | undefined, end: Instant, invocationId: string): AtifInvocation {
  // Keys in native's order after it turns the struct into a (sorted) JSON map.
  // native: the status is "completed" even for error ends, and both stamps are
  // left out when the start event is missing.
  const invocation: AtifInvocation = {};
  if (start !== undefined) invocation.end_timestamp = epochSecondsWithMillis(end);
  invocation.framework = 'nemo_relay';
  invocation.invocation_id = invocationId;
  if (start !== undefined) invocation.start_timestamp = epochSecondsWithMillis(start);
  invocation.status = 'completed';
  return invocation;
}

/** `event_uuid`, `event_name`, `parent_event_uuid`, `metadata` in sorted key order. */
function eventExtra(event: ConvEvent): JsonObject {
  const extra: JsonObject = { event_name: event.name, event_uuid: event.uuid };
  if (event.metadata !== undefined) extra.metadata = event.metadata;
  if (event.parent !== undefined) extra.parent_event_uuid = event.parent;
  return extra;
}

interface StepExtraParts {
  ancestry: AtifAncestry;
  invocation?: AtifInvocation;
  llmRequest?: Json;
  llmResponse?: Json;
  toolAncestry?: AtifAncestry[];
  toolInvocations?: AtifInvocation[];
}

/** `step.extra` with keys sorted, as native's `serde_json::to_value` leaves them. */
function stepExtra(parts: StepExtraParts): Json {
  const extra: JsonObject = { ancestry: parts.ancestry as unknown as Json };
  if (parts.invocation !== undefined) extra.invocation = parts.invocation as unknown as Json;
  if (parts.llmRequest !== undefined) extra.llm_request = sortJson(parts.llmRequest);
  if (parts.llmResponse !== undefined) extra.llm_response = sortJson(parts.llmResponse);
  if (parts.toolAncestry !== undefined && parts.toolAncestry.length > 0) extra.tool_ancestry = parts.toolAncestry as unknown as Json;
  if (parts.toolInvocations !== undefined && parts.toolInvocations.length > 0)
    extra.tool_invocations = parts.toolInvocations as unknown as Json;
  return extra;
}

interface ToolMetadata {
  ancestry: AtifAncestry;
  invocation: AtifInvocation;
}

class PendingAgentStep {
  stepIndex: number | undefined;
  ancestry: AtifAncestry | undefined;
  invocation: AtifInvocation | undefined;
  llmRequest: Json | undefined;
  llmResponse: Json | undefined;
  tools: ToolMetadata[] = [];
  toolCallOrder: string[] = [];

  finalizeInto(steps: AtifStep[]): void {
    const stepIndex = this.stepIndex;
    const ancestry = this.ancestry;
    this.stepIndex = undefined;
    this.ancestry = undefined;
    if (stepIndex === undefined || ancestry === undefined) return;
    const step = steps[stepIndex];
    if (step === undefined) return;
    this.sortTools();
    const tools = this.tools;
    this.tools = [];
    step.extra = stepExtra({
      ancestry,
      invocation: this.invocation,
      llmRequest: this.llmRequest,
      llmResponse: this.llmResponse,
      toolAncestry: tools.map((tool) => tool.ancestry),
      toolInvocations: tools.map((tool) => tool.invocation),
    });
    this.invocation = undefined;
    this.llmRequest = undefined;
    this.llmResponse = undefined;
  }

  setCurrent(stepIndex: number, ancestry: AtifAncestry, invocation: AtifInvocation, order: string[], response: Json): void {
    this.stepIndex = stepIndex;
    this.ancestry = ancestry;
    this.invocation = invocation;
    this.llmResponse = response;
    this.tools = [];
    this.toolCallOrder = order;
  }

  pushToolCallId(id: string): void {
    if (!this.toolCallOrder.includes(id)) this.toolCallOrder.push(id);
  }

  hasActiveStep(): boolean {
    return this.stepIndex !== undefined;
  }

  hasToolCallId(id: string): boolean {
    return this.toolCallOrder.includes(id);
  }

  private sortTools(): void {
    if (this.toolCallOrder.length === 0 || this.tools.length === 0) return;
    const rank = (tool: ToolMetadata): number => {
      const id = tool.invocation.invocation_id;
      const position = id === undefined ? -1 : this.toolCallOrder.indexOf(id);
      return position === -1 ? Number.MAX_SAFE_INTEGER : position;
    };
    this.tools = this.tools
      .map((tool, index) => ({ tool, index, rank: rank(tool) }))
      .sort((a, b) => a.rank - b.rank || a.index - b.index)
      .map((entry) => entry.tool);
  }
}

interface DeferredObservation {
  result: AtifObservationResult;
  timestamp: string | undefined;
}

function observationContent(value: Json): Json | undefined {
  if (typeof value === 'string') return value;
  return Array.isArray(value) && isAtifContentParts(value) ? value : undefined;
}

function toolResultExtra(value: Json): Json | undefined {
  if (value === null || typeof value === 'string') return undefined;
  if (Array.isArray(value) && isAtifContentParts(value)) return undefined;
  return value;
}

function observationExtra(event: ConvEvent): JsonObject {
  const extra = eventExtra(event);
  const toolResult = event.data === undefined ? undefined : toolResultExtra(event.data);
  if (toolResult !== undefined) extra.tool_result = toolResult;
  const annotation = annotationOf(event);
  if (annotation !== undefined) extra.tool_result_annotation = annotation;
  return sortedObject(extra);
}

function sortedObject(object: JsonObject): JsonObject {
  return sortJson(object) as JsonObject;
}

function mergeObservationResult(observation: AtifObservation, result: AtifObservationResult): void {
  const id = result.source_call_id;
  if (id !== undefined) {
    const existing = observation.results.find((candidate) => candidate.source_call_id === id);
    if (existing !== undefined) {
      if (existing.content === undefined && result.content !== undefined) insertContent(existing, result.content);
      if (result.subagent_trajectory_ref !== undefined) {
        const refs = existing.subagent_trajectory_ref;
        if (refs === undefined) insertRefs(existing, [...result.subagent_trajectory_ref]);
        else refs.push(...result.subagent_trajectory_ref);
      }
      if (result.extra !== undefined) {
        if (existing.extra === undefined) existing.extra = result.extra;
        else {
          const target = asObject(existing.extra);
          const incoming = asObject(result.extra);
          if (target !== undefined && incoming !== undefined) {
            const merged: JsonObject = { ...target };
            for (const key of Object.keys(incoming)) {
              if (!Object.prototype.hasOwnProperty.call(merged, key)) merged[key] = incoming[key] as Json;
            }
            existing.extra = sortedObject(merged);
          }
        }
      }
      return;
    }
  }
  observation.results.push(result);
}

/** Rebuilds a result so `content` sits in its struct position. */
function insertContent(result: AtifObservationResult, content: Json): void {
  const { source_call_id, subagent_trajectory_ref, extra } = result;
  for (const key of Object.keys(result)) delete (result as Record<string, unknown>)[key];
  if (source_call_id !== undefined) result.source_call_id = source_call_id;
  result.content = content;
  if (subagent_trajectory_ref !== undefined) result.subagent_trajectory_ref = subagent_trajectory_ref;
  if (extra !== undefined) result.extra = extra;
}

function insertRefs(result: AtifObservationResult, refs: NonNullable<AtifObservationResult['subagent_trajectory_ref']>): void {
  const { source_call_id, content, extra } = result;
  for (const key of Object.keys(result)) delete (result as Record<string, unknown>)[key];
  if (source_call_id !== undefined) result.source_call_id = source_call_id;
  if (content !== undefined) result.content = content;
  result.subagent_trajectory_ref = refs;
  if (extra !== undefined) result.extra = extra;
}

function newStep(source: AtifStep['source'], message: Json, timestamp: string | undefined): AtifStep {
  const step: AtifStep = { step_id: 0, source, message };
  if (timestamp !== undefined) step.timestamp = timestamp;
  return step;
}

class StepConverter {
  readonly steps: AtifStep[] = [];
  private lastToolCallByName = new Map<string, string>();
  private toolScopeCallIds = new Map<string, string>();
  private activeToolCallId: string | undefined;
  private pendingObservations: AtifObservationResult[] = [];
  private pendingTimestamp: string | undefined;
  private deferredObservations = new Map<string, DeferredObservation[]>();
  private deferredToolMetadata = new Map<string, ToolMetadata[]>();
  private currentReasoningEffort: Json | undefined;
  private readonly current = new PendingAgentStep();

  constructor(private readonly lookups: Lookups) {}

  handle(event: ConvEvent): void {
    if (isLlm(event) && this.lookups.suppressedLlm.has(event.uuid)) return;
    if (event.kind !== 'scope') return;
    if (event.category === 'llm') {
      if (event.phase === 'start') this.llmStart(event);
      else if (event.phase === 'end') this.llmEnd(event);
    } else if (event.category === 'tool') {
      if (event.phase === 'start') this.toolStart(event);
      else if (event.phase === 'end') this.toolEnd(event);
    }
  }

  private flushObservations(): void {
    if (this.pendingObservations.length === 0) return;
    const timestamp = this.pendingTimestamp;
    this.pendingTimestamp = undefined;
    const observations = this.pendingObservations;
    this.pendingObservations = [];
    const attached: AtifObservationResult[] = [];
    const standalone: AtifObservationResult[] = [];
    for (const result of observations) {
      const id = result.source_call_id;
      if (id === undefined) standalone.push(result);
      else if (this.currentStepHasToolCall(id)) attached.push(result);
      else this.defer(id, result, timestamp);
    }
    this.attachToCurrentStep(attached);
    this.pushStandalone(standalone, timestamp);
  }

  private attachToCurrentStep(results: AtifObservationResult[]): void {
    if (results.length === 0) return;
    const index = this.current.stepIndex;
    if (index === undefined || this.steps[index] === undefined) return;
    const observation = this.ensureObservation(index);
    for (const result of results) mergeObservationResult(observation, result);
  }

  /** The observation of the step at `index`, added in its struct position when the step has none. */
  private ensureObservation(index: number): AtifObservation {
    const step = this.steps[index] as AtifStep;
    if (step.observation !== undefined) return step.observation;
    const observation: AtifObservation = { results: [] };
    this.replaceStep(index, { ...step, observation });
    return observation;
  }

  /**
   * Puts a re-created step (fields in struct order) in place of the one at
   * `index`. Deleting and re-adding the old object's keys would leave a
   * slow dictionary-mode object for every later reader and the serializer;
   * steps are only ever reached through `this.steps`, so a new one is safe.
   */
  private replaceStep(index: number, step: AtifStep): AtifStep {
    const rebuilt = reorderStep(step);
    this.steps[index] = rebuilt;
    return rebuilt;
  }

  private pushStandalone(results: AtifObservationResult[], timestamp: string | undefined): void {
    if (results.length === 0) return;
    for (const result of results) delete result.source_call_id;
    const step = newStep('system', '', timestamp);
    step.observation = { results };
    this.steps.push(step);
  }

  private currentStepHasToolCall(id: string): boolean {
    const step = this.current.stepIndex === undefined ? undefined : this.steps[this.current.stepIndex];
    return step?.tool_calls?.some((call) => call.tool_call_id === id) ?? false;
  }

  private defer(id: string, result: AtifObservationResult, timestamp: string | undefined): void {
    let list = this.deferredObservations.get(id);
    if (list === undefined) this.deferredObservations.set(id, (list = []));
    list.push({ result, timestamp });
  }

  private attachDeferredToCurrent(): void {
    const stepIndex = this.current.stepIndex;
    if (stepIndex === undefined) return;
    const step = this.steps[stepIndex];
    const ids = step?.tool_calls?.map((call) => call.tool_call_id) ?? [];
    for (const id of ids) {
      const observations = this.deferredObservations.get(id);
      if (observations !== undefined && step !== undefined) {
        this.deferredObservations.delete(id);
        const observation = this.ensureObservation(stepIndex);
        for (const deferred of observations) mergeObservationResult(observation, deferred.result);
      }
      const metadata = this.deferredToolMetadata.get(id);
      if (metadata !== undefined) {
        this.deferredToolMetadata.delete(id);
        this.current.tools.push(...metadata);
      }
    }
  }

  private flushDeferredAsStandalone(): void {
    if (this.deferredObservations.size === 0) return;
    const deferred: DeferredObservation[] = [];
    for (const list of this.deferredObservations.values()) deferred.push(...list);
    this.deferredObservations.clear();
    // native: sorted by the RFC 3339 text (stable); entries without one sort first.
    deferred.sort((a, b) => compareOptionalText(a.timestamp, b.timestamp));
    const timestamp = deferred.find((entry) => entry.timestamp !== undefined)?.timestamp;
    const results = deferred.map((entry) => {
      delete entry.result.source_call_id;
      return entry.result;
    });
    if (results.length === 0) return;
    this.deferredToolMetadata.clear();
    const step = newStep('system', '', timestamp);
    step.observation = { results };
    this.steps.push(step);
  }

  private finalizeAgent(): void {
    this.current.finalizeInto(this.steps);
  }

  private llmStart(event: ConvEvent): void {
    this.flushObservations();
    this.finalizeAgent();
    this.toolScopeCallIds.clear();
    this.activeToolCallId = undefined;
    if (event.data === undefined) return;
    const content = unwrapLlmRequest(event.data);
    this.currentReasoningEffort = extractReasoningEffort(content);
    const hasPairedEnd = this.lookups.llmEndsWithData.has(event.uuid);
    if (hasPairedEnd && requestTurnState(content) === 'continuation') {
      this.current.llmRequest = content;
      return;
    }
    const step = newStep('user', extractUserMessage(content), event.timestamp);
    step.extra = stepExtra({ ancestry: ancestryOf(event, this.lookups.names), llmRequest: content });
    this.steps.push(step);
  }

  private llmEnd(event: ConvEvent): void {
    this.flushObservations();
    const output = event.data;
    if (output === undefined) return;
    const toolCalls = extractToolCalls(output);
    this.lastToolCallByName.clear();
    const order: string[] = [];
    for (const call of toolCalls ?? []) {
      if (call.function_name !== '') this.lastToolCallByName.set(call.function_name, call.tool_call_id);
      order.push(call.tool_call_id);
    }
    const reasoningEffort = this.currentReasoningEffort;
    this.currentReasoningEffort = undefined;
    const reasoningContent = extractReasoningContent(output);
    const pairedStartModel = this.lookups.llmStartModels.get(event.uuid);
    const model = responseModel(output) ?? modelNameOf(event) ?? pairedStartModel;
    let metrics = extractMetrics(output, event.name);
    const supplemental = this.lookups.supplementalMetrics.get(event.uuid);
    if (supplemental !== undefined) {
      if (metrics === undefined) metrics = { ...supplemental };
      else mergeMetricsInto(metrics, supplemental);
      metrics = orderMetrics(metrics);
    }
    const step = newStep('agent', extractResponseMessage(output), event.timestamp);
    if (model !== undefined) step.model_name = model;
    if (reasoningEffort !== undefined) step.reasoning_effort = reasoningEffort;
    if (reasoningContent !== undefined) step.reasoning_content = reasoningContent;
    if (toolCalls !== undefined) step.tool_calls = toolCalls.map(sortToolCall);
    if (metrics !== undefined) step.metrics = metrics;
    step.llm_call_count = 1;
    this.steps.push(step);
    this.current.setCurrent(
      this.steps.length - 1,
      ancestryOf(event, this.lookups.names),
      invocationOf(this.lookups.startInstants.get(event.uuid), event.instant, event.uuid),
      order,
      output,
    );
    this.attachDeferredToCurrent();
  }

  private toolStart(event: ConvEvent): void {
    const id =
      toolCallIdOf(event) ??
      this.toolScopeCallIds.get(event.uuid) ??
      this.lookups.toolCallIds.get(event.uuid) ??
      this.currentStepToolCallIdByName(event.name) ??
      this.syntheticToolCallId(event);
    if (id === undefined) return;
    this.toolScopeCallIds.set(event.uuid, id);
    if (!this.current.hasActiveStep()) return;
    if (!this.ensureToolCallOnCurrent(event, id)) return;
    this.activeToolCallId = id;
  }

  private currentStepToolCallIds(name: string): string[] {
    const step = this.current.stepIndex === undefined ? undefined : this.steps[this.current.stepIndex];
    return step?.tool_calls?.filter((call) => call.function_name === name).map((call) => call.tool_call_id) ?? [];
  }

  private currentStepToolCallIdByName(name: string): string | undefined {
    if (this.current.stepIndex === undefined) return undefined;
    const ids = this.currentStepToolCallIds(name);
    return ids.length === 1 ? ids[0] : undefined;
  }

  private syntheticToolCallId(event: ConvEvent): string | undefined {
    if (this.current.stepIndex !== undefined && this.currentStepToolCallIds(event.name).length > 1) return undefined;
    return this.current.hasActiveStep() ? event.uuid : undefined;
  }

  private ensureToolCallOnCurrent(event: ConvEvent, id: string): boolean {
    if (this.current.hasToolCallId(id)) {
      this.toolScopeCallIds.set(event.uuid, id);
      return true;
    }
    const index = this.current.stepIndex;
    let step = index === undefined ? undefined : this.steps[index];
    if (index === undefined || step === undefined) return false;
    if (step.tool_calls === undefined) step = this.replaceStep(index, { ...step, tool_calls: [] });
    const calls = step.tool_calls as AtifToolCall[];
    if (calls.some((call) => call.tool_call_id === id)) {
      this.current.pushToolCallId(id);
      return true;
    }
    calls.push({
      tool_call_id: id,
      function_name: event.name,
      // native: a non-object tool input is used as the arguments as is, which ATIF forbids.
      arguments: event.data === undefined ? {} : sortJson(event.data),
      extra: sortedObject(eventExtra(event)),
    });
    this.current.pushToolCallId(id);
    if (event.name !== '') this.lastToolCallByName.set(event.name, id);
    return true;
  }

  private resolveSourceCallId(event: ConvEvent): string | undefined {
    const explicit =
      toolCallIdOf(event) ?? this.toolScopeCallIds.get(event.uuid) ?? this.lookups.toolCallIds.get(event.uuid);
    if (explicit !== undefined) return explicit;
    const candidate = this.currentStepToolCallIdByName(event.name);
    if (candidate === undefined) return undefined;
    const known =
      this.current.hasToolCallId(candidate) ||
      [...this.lastToolCallByName.values()].includes(candidate) ||
      this.deferredObservations.has(candidate) ||
      this.deferredToolMetadata.has(candidate);
    return known ? candidate : undefined;
  }

  private toolEnd(event: ConvEvent): void {
    const id = this.resolveSourceCallId(event);
    const output = event.data;
    if (output !== undefined || annotationOf(event) !== undefined) {
      this.pendingTimestamp ??= event.timestamp;
      const result: AtifObservationResult = {};
      if (id !== undefined) result.source_call_id = id;
      const content = output === undefined ? undefined : observationContent(output);
      if (content !== undefined) result.content = content;
      result.extra = observationExtra(event);
      this.pendingObservations.push(result);
    }
    if (this.activeToolCallId === id) this.activeToolCallId = undefined;
    if (id === undefined) return;
    const tool: ToolMetadata = {
      ancestry: ancestryOf(event, this.lookups.names),
      invocation: invocationOf(this.lookups.startInstants.get(event.uuid), event.instant, id),
    };
    if (this.current.hasActiveStep() && this.current.hasToolCallId(id)) {
      this.current.tools.push(tool);
    } else {
      let list = this.deferredToolMetadata.get(id);
      if (list === undefined) this.deferredToolMetadata.set(id, (list = []));
      list.push(tool);
    }
  }

  subagentStart(child: AgentNode, event: ConvEvent): void {
    const candidate =
      delegationToolCallId(event.metadata) ?? delegationToolCallId(event.data) ?? this.activeToolCallId;
    const sourceCallId = candidate !== undefined && this.current.hasToolCallId(candidate) ? candidate : undefined;
    this.flushObservations();
    if (sourceCallId !== undefined && this.attachSubagentRef(child, event, sourceCallId)) return;
    this.finalizeAgent();
    const id = `subagent:${child.uuid}`;
    const step = newStep('agent', '', event.timestamp);
    step.tool_calls = [
      { tool_call_id: id, function_name: child.name, arguments: dispatchArguments(child, event), extra: sortedObject(eventExtra(event)) },
    ];
    step.observation = { results: [subagentResult(child, event, id)] };
    step.llm_call_count = 0;
    this.steps.push(step);
  }

  private attachSubagentRef(child: AgentNode, event: ConvEvent, sourceCallId: string): boolean {
    const index = this.current.stepIndex;
    const step = index === undefined ? undefined : this.steps[index];
    if (index === undefined || step?.tool_calls === undefined) return false;
    if (!step.tool_calls.some((call) => call.tool_call_id === sourceCallId)) return false;
    const observation = this.ensureObservation(index);
    const existing = observation.results.find((result) => result.source_call_id === sourceCallId);
    if (existing !== undefined) {
      const ref = subagentRef(child);
      if (existing.subagent_trajectory_ref === undefined) insertRefs(existing, [ref]);
      else existing.subagent_trajectory_ref.push(ref);
      return true;
    }
    observation.results.push(subagentResult(child, event, sourceCallId));
    return true;
  }

  finish(): AtifStep[] {
    this.flushObservations();
    this.flushDeferredAsStandalone();
    this.finalizeAgent();
    removeProjectedToolCallDuplicates(this.steps);
    renumber(this.steps);
    return this.steps;
  }
}

function compareOptionalText(a: string | undefined, b: string | undefined): number {
  if (a === b) return 0;
  if (a === undefined) return -1;
  if (b === undefined) return 1;
  return a < b ? -1 : 1;
}

function sortToolCall(call: AtifToolCall): AtifToolCall {
  const sorted: AtifToolCall = {
    tool_call_id: call.tool_call_id,
    function_name: call.function_name,
    arguments: sortJson(call.arguments),
  };
  if (call.extra !== undefined) sorted.extra = sortJson(call.extra);
  return sorted;
}

const STEP_KEYS = ATIF_STEP_FIELDS;

function reorderStep(step: AtifStep): AtifStep {
  const out: Record<string, unknown> = {};
  for (const key of STEP_KEYS) if (step[key] !== undefined) out[key] = step[key];
  return out as unknown as AtifStep;
}

function subagentRef(child: AgentNode): NonNullable<AtifObservationResult['subagent_trajectory_ref']>[number] {
  const ref: NonNullable<AtifObservationResult['subagent_trajectory_ref']>[number] = { trajectory_id: child.uuid };
  if (child.sessionId !== undefined) ref.session_id = child.sessionId;
  ref.extra = { name: child.name, scope_uuid: child.uuid };
  return ref;
}

function subagentResult(child: AgentNode, event: ConvEvent, sourceCallId: string): AtifObservationResult {
  return {
    source_call_id: sourceCallId,
    subagent_trajectory_ref: [subagentRef(child)],
    extra: sortedObject(eventExtra(event)),
  };
}

function dispatchArguments(child: AgentNode, event: ConvEvent): Json {
  const args: JsonObject = { name: child.name };
  if (event.data !== undefined) args.payload = sortJson(event.data);
  if (child.sessionId !== undefined) args.session_id = child.sessionId;
  return args;
}

function renumber(steps: AtifStep[]): void {
  steps.forEach((step, index) => {
    step.step_id = index + 1;
  });
}

/**
 * Drops tool-call-only agent steps whose calls a later agent step (before the
 * next non-agent step) repeats with observations: the same calls seen by two
 * instrumentations.
 */
function removeProjectedToolCallDuplicates(steps: AtifStep[]): void {
  let observedLater = new Set<string>();
  const keep = new Array<boolean>(steps.length).fill(true);
  for (let index = steps.length - 1; index >= 0; index--) {
    const step = steps[index] as AtifStep;
    if (step.source !== 'agent') {
      observedLater = new Set();
      continue;
    }
    const projected = isProjectedCandidate(step);
    const results = step.observation?.results ?? [];
    // The keys (canonical JSON of every call's arguments) only matter to a candidate or a step with observed calls.
    if (!projected && !results.some((result) => result.source_call_id !== undefined)) continue;
    const keys = dedupeKeys(step);
    if (projected && keys.length > 0 && keys.every((key) => observedLater.has(key.key))) keep[index] = false;
    for (const result of results) {
      if (result.source_call_id === undefined) continue;
      for (const key of keys) if (key.id === result.source_call_id) observedLater.add(key.key);
    }
  }
  let write = 0;
  for (let index = 0; index < steps.length; index++) {
    if (keep[index]) steps[write++] = steps[index] as AtifStep;
  }
  steps.length = write;
}

function isProjectedCandidate(step: AtifStep): boolean {
  return (
    step.source === 'agent' &&
    step.message === '' &&
    step.observation === undefined &&
    step.reasoning_content === undefined &&
    step.reasoning_effort === undefined &&
    step.llm_call_count === 1 &&
    step.tool_calls !== undefined &&
    step.tool_calls.length > 0
  );
}

function dedupeKeys(step: AtifStep): { id: string; key: string }[] {
  return (step.tool_calls ?? [])
    .filter((call) => call.tool_call_id !== '')
    .map((call) => ({
      id: call.tool_call_id,
      key: `${call.tool_call_id}\u0000${call.function_name}\u0000${canonicalJson(call.arguments)}`,
    }));
}

/** Removes refs to subagents that were not embedded, and steps left empty by that. */
function pruneSubagentRefs(steps: AtifStep[], childIds: Set<string>): AtifStep[] {
  for (const step of steps) {
    const observation = step.observation;
    if (observation === undefined) continue;
    observation.results = observation.results.filter((result) => {
      if (result.subagent_trajectory_ref !== undefined) {
        const kept = result.subagent_trajectory_ref.filter(
          (ref) => ref.trajectory_id !== undefined && childIds.has(ref.trajectory_id),
        );
        if (kept.length === 0) delete result.subagent_trajectory_ref;
        else result.subagent_trajectory_ref = kept;
      }
      const extra = asObject(result.extra);
      return (
        result.content !== undefined ||
        result.subagent_trajectory_ref !== undefined ||
        (extra !== undefined && ('tool_result' in extra || 'tool_result_annotation' in extra))
      );
    });
    if (observation.results.length === 0) delete step.observation;
  }
  const kept = steps.filter(
    (step) =>
      !(step.source === 'system' && step.observation === undefined && step.message === '' && step.extra === undefined) &&
      !(
        step.source === 'agent' &&
        step.llm_call_count === 0 &&
        step.observation === undefined &&
        step.message === '' &&
        step.extra === undefined
      ),
  );
  renumber(kept);
  return kept;
}

// ---------------------------------------------------------------------------
// trajectory assembly

function finalMetrics(steps: readonly AtifStep[]): AtifTrajectory['final_metrics'] {
  let prompt: number | undefined;
  let completion: number | undefined;
  let cached: number | undefined;
  let cost: number | undefined;
  for (const step of steps) {
    const metrics = step.metrics;
    if (metrics === undefined) continue;
    if (metrics.prompt_tokens !== undefined) prompt = (prompt ?? 0) + metrics.prompt_tokens;
    if (metrics.completion_tokens !== undefined) completion = (completion ?? 0) + metrics.completion_tokens;
    if (metrics.cached_tokens !== undefined) cached = (cached ?? 0) + metrics.cached_tokens;
    if (metrics.cost_usd !== undefined) cost = (cost ?? 0) + metrics.cost_usd;
  }
  const totals: NonNullable<AtifTrajectory['final_metrics']> = {};
  if (prompt !== undefined) totals.total_prompt_tokens = prompt;
  if (completion !== undefined) totals.total_completion_tokens = completion;
  if (cached !== undefined) totals.total_cached_tokens = cached;
  if (cost !== undefined) totals.total_cost_usd = cost;
  totals.total_steps = steps.length;
  return totals;
}

function trajectoryFromParts(
  sessionId: string,
  trajectoryId: string,
  agent: AtifAgent,
  steps: AtifStep[],
  subagents: AtifTrajectory[] | undefined,
): AtifTrajectory {
  const trajectory: AtifTrajectory = {
    schema_version: ATIF_SCHEMA_VERSION,
    session_id: sessionId,
    trajectory_id: trajectoryId,
    agent: { ...agent },
    steps,
    final_metrics: finalMetrics(steps),
  };
  if (subagents !== undefined) trajectory.subagent_trajectories = subagents;
  return trajectory;
}

function stepsForAgent(events: readonly ConvEvent[], tree: AgentTree, agentUuid: string, shared: SharedLookups): AtifStep[] {
  const owned = events.filter((event) => tree.ownerAgent(event) === agentUuid);
  const converter = new StepConverter({ ...shared, toolCallIds: buildToolCallCorrelations(owned) });
  for (const event of events) {
    const child = tree.directChildStart(agentUuid, event);
    if (child !== undefined) {
      converter.subagentStart(child, event);
      continue;
    }
    if (tree.ownerAgent(event) !== agentUuid) continue;
    converter.handle(event);
  }
  return converter.finish();
}

function agentTrajectory(
  tree: AgentTree,
  agentUuid: string,
  sessionId: string,
  agent: AtifAgent,
  events: readonly ConvEvent[],
  shared: SharedLookups,
  isRoot: boolean,
): AtifTrajectory {
  const steps = stepsForAgent(events, tree, agentUuid, shared);
  const node = tree.nodes.get(agentUuid);
  let subagents: AtifTrajectory[] | undefined;
  if (node !== undefined) {
    const children = node.children
      .map((child) => agentTrajectory(tree, child, sessionId, agent, events, shared, false))
      .filter((child) => {
        if (child.steps.length > 0) return true;
        const childNode = child.trajectory_id === undefined ? undefined : tree.nodes.get(child.trajectory_id);
        return childNode !== undefined && !childNode.referencedByParent;
      });
    if (children.length > 0) subagents = children;
  }
  const childIds = new Set((subagents ?? []).map((child) => child.trajectory_id as string));
  const pruned = pruneSubagentRefs(steps, childIds);
  const trajectoryId = isRoot ? sessionId : agentUuid;
  const trajectorySessionId = isRoot ? sessionId : (node?.sessionId ?? sessionId);
  return trajectoryFromParts(trajectorySessionId, trajectoryId, agent, pruned, subagents);
}

/** Converts events (any order) into one ATIF trajectory, as native's exporter does. */
export function convertEvents(sessionId: string, agent: AtifAgent, events: readonly ConvEvent[]): AtifTrajectory {
  const sorted = events
    .map((event, index) => ({ event, index }))
    .sort((a, b) => compareInstants(a.event.instant, b.event.instant) || a.index - b.index)
    .map((entry) => entry.event);
  const tree = new AgentTree(sorted);
  const shared = buildSharedLookups(sorted);
  const root = tree.chooseRoot(sessionId);
  if (root !== undefined && sorted.every((event) => isAgentScope(event) || !isStepEvent(event) || tree.ownerAgent(event) !== undefined)) {
    return agentTrajectory(tree, root, sessionId, agent, sorted, shared, true);
  }
  const converter = new StepConverter({ ...shared, toolCallIds: buildToolCallCorrelations(sorted) });
  for (const event of sorted) converter.handle(event);
  return trajectoryFromParts(sessionId, sessionId, agent, converter.finish(), undefined);
}

/** Re-exported for the payload-level unit tests. */
export { atifContentValue };
