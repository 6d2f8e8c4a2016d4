/**
 * The pieces a step is made of, in native's field and key order: ancestry,
 * invocation, `extra`, sorted tool calls, and the subagent dispatch step's
 * call, reference and arguments.
 *
 * @module
 */

import type { Json, JsonObject } from '../../../shared/json.ts';
import { type Instant, epochSecondsWithMillis } from '../../instant.ts';
import { sortJson } from '../../native-text.ts';
import { sortPayload } from '../../native-text/keys.ts';
import {
  type AtifAncestry,
  type AtifInvocation,
  type AtifObservationResult,
  type AtifStep,
  type AtifToolCall,
} from '../types.ts';
import type { AgentNode } from './agent-tree.ts';
import type { ConvEvent } from './events.ts';

/** The event's ancestry; `starts` holds each scope's start event by uuid (`SharedLookups.starts`), which names the parent. */
export function ancestryOf(event: ConvEvent, starts: Map<string, ConvEvent>): AtifAncestry {
  const ancestry: AtifAncestry = { function_id: event.uuid, function_name: event.name };
  if (event.parent !== undefined) {
    ancestry.parent_id = event.parent;
    const parent = starts.get(event.parent);
    if (parent !== undefined) ancestry.parent_name = parent.name;
  }
  return ancestry;
}

export function invocationOf(start: Instant | undefined, end: Instant, invocationId: string, status: 'completed' | 'failed' = 'completed'): AtifInvocation {
  // Keys in native's order after it turns the struct into a (sorted) JSON map.
  // Both stamps are left out when the start event is missing, as native does.
  // native: the status is "completed" even for a failed LLM attempt; ours says "failed".
  const invocation: AtifInvocation = {};
  if (start !== undefined) invocation.end_timestamp = epochSecondsWithMillis(end);
  invocation.framework = 'nemo_relay';
  invocation.invocation_id = invocationId;
  if (start !== undefined) invocation.start_timestamp = epochSecondsWithMillis(start);
  invocation.status = status;
  return invocation;
}

/** `event_uuid`, `event_name`, `parent_event_uuid`, `metadata` in sorted key order. */
export function eventExtra(event: ConvEvent): JsonObject {
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

/** `step.extra` with keys sorted, as native's `serde_json::to_value` leaves them; `plain` as `sortPayload` takes it. */
export function stepExtra(parts: StepExtraParts, plain: Set<object>): Json {
  const extra: JsonObject = { ancestry: parts.ancestry as unknown as Json };
  if (parts.invocation !== undefined) extra.invocation = parts.invocation as unknown as Json;
  // The request and response are a trajectory's largest payloads: one walk checks both their order and their text (`sortPayload`).
  if (parts.llmRequest !== undefined) extra.llm_request = sortPayload(parts.llmRequest, plain);
  if (parts.llmResponse !== undefined) extra.llm_response = sortPayload(parts.llmResponse, plain);
  if (parts.toolAncestry !== undefined && parts.toolAncestry.length > 0) extra.tool_ancestry = parts.toolAncestry as unknown as Json;
  if (parts.toolInvocations !== undefined && parts.toolInvocations.length > 0)
    extra.tool_invocations = parts.toolInvocations as unknown as Json;
  return extra;
}

export function sortedObject(object: JsonObject): JsonObject {
  return sortJson(object) as JsonObject;
}

export function newStep(source: AtifStep['source'], message: Json, timestamp: string | undefined): AtifStep {
  const step: AtifStep = { step_id: 0, source, message };
  if (timestamp !== undefined) step.timestamp = timestamp;
  return step;
}

export function compareOptionalText(a: string | undefined, b: string | undefined): number {
  if (a === b) return 0;
  if (a === undefined) return -1;
  if (b === undefined) return 1;
  return a < b ? -1 : 1;
}

/**
 * `call` with its arguments and `extra` sorted, in place: the calls are the
 * converter's own objects (`extractToolCalls` makes them fresh, with their
 * keys in struct order), so no copy of each is needed.
 */
export function sortToolCall(call: AtifToolCall): AtifToolCall {
  call.arguments = sortJson(call.arguments);
  if (call.extra !== undefined) call.extra = sortJson(call.extra);
  return call;
}

/**
 * `step` re-created with its fields in struct order (`ATIF_STEP_FIELDS`).
 * Written out field by field: a loop over the key list made every read and
 * write a megamorphic keyed access (bench/RESULTS.md, "Figures behind the code").
 */
export function reorderStep(step: AtifStep): AtifStep {
  const out = { step_id: step.step_id, source: step.source } as AtifStep;
  if (step.message !== undefined) out.message = step.message;
  if (step.timestamp !== undefined) out.timestamp = step.timestamp;
  if (step.model_name !== undefined) out.model_name = step.model_name;
  if (step.reasoning_effort !== undefined) out.reasoning_effort = step.reasoning_effort;
  if (step.reasoning_content !== undefined) out.reasoning_content = step.reasoning_content;
  if (step.tool_calls !== undefined) out.tool_calls = step.tool_calls;
  if (step.observation !== undefined) out.observation = step.observation;
  if (step.metrics !== undefined) out.metrics = step.metrics;
  if (step.llm_call_count !== undefined) out.llm_call_count = step.llm_call_count;
  if (step.is_copied_context !== undefined) out.is_copied_context = step.is_copied_context;
  if (step.extra !== undefined) out.extra = step.extra;
  return out;
}

export function subagentRef(child: AgentNode): NonNullable<AtifObservationResult['subagent_trajectory_ref']>[number] {
  const ref: NonNullable<AtifObservationResult['subagent_trajectory_ref']>[number] = { trajectory_id: child.uuid };
  if (child.sessionId !== undefined) ref.session_id = child.sessionId;
  ref.extra = { name: child.name, scope_uuid: child.uuid };
  return ref;
}

export function subagentResult(child: AgentNode, event: ConvEvent, sourceCallId: string): AtifObservationResult {
  return {
    source_call_id: sourceCallId,
    subagent_trajectory_ref: [subagentRef(child)],
    extra: sortedObject(eventExtra(event)),
  };
}

export function dispatchArguments(child: AgentNode, event: ConvEvent): Json {
  const args: JsonObject = { name: child.name };
  if (event.data !== undefined) args.payload = sortJson(event.data);
  if (child.sessionId !== undefined) args.session_id = child.sessionId;
  return args;
}
