/**
 * The step state machine: an LLM start may give a `user` step, an LLM end an
 * `agent` step with its tool calls and metrics, a tool end an observation on
 * the step that requested it (or a `system` step when none did).
 *
 * @module
 */

import type { Json } from '../../../shared/json.ts';
import { trajectoryRefOf } from '../../../shared/trajectory-ref.ts';
import { sortJson } from '../../native-text.ts';
import {
  delegationToolCallId,
  extractMetrics,
  extractReasoningContent,
  extractReasoningEffort,
  extractResponseMessage,
  extractToolCalls,
  extractUserMessage,
  mergeMetricsInto,
  orderMetrics,
  requestTurnState,
  responseModel,
  unwrapLlmRequest,
} from '../payload/index.ts';
import type { AtifObservation, AtifObservationResult, AtifStep, AtifSubagentTrajectoryRef, AtifToolCall } from '../types.ts';
import { asObject } from '../payload/index.ts';
import type { AgentNode } from './agent-tree.ts';
import type { Lookups } from './dedupe.ts';
import { type ConvEvent, annotationOf, isFailedEnd, isLlm, metadataString, modelNameOf, toolCallIdOf } from './events.ts';
import { removeProjectedToolCallDuplicates, renumber } from './finish.ts';
import {
  type DeferredObservation,
  insertRefs,
  mergeObservationResult,
  observationContent,
  observationExtra,
} from './observations.ts';
import { PendingAgentStep, type ToolMetadata } from './pending-step.ts';
import {
  ancestryOf,
  compareOptionalText,
  dispatchArguments,
  eventExtra,
  invocationOf,
  newStep,
  reorderStep,
  sortToolCall,
  sortedObject,
  stepExtra,
  subagentRef,
  subagentResult,
} from './step-builders.ts';

/**
 * The trajectories a tool end's metadata names as where its work ran
 * (`subagent_trajectory_ref`, written by the plugin for a call whose work
 * ran in another process): each with a non-blank `trajectory_id` or
 * `trajectory_path`, string fields only.
 */
function remoteTrajectoryRefs(event: ConvEvent): AtifSubagentTrajectoryRef[] | undefined {
  const listed = asObject(event.metadata)?.subagent_trajectory_ref;
  if (!Array.isArray(listed)) return undefined;
  const refs: AtifSubagentTrajectoryRef[] = [];
  for (const entry of listed) {
    const ref = trajectoryRefOf(entry);
    if (ref !== undefined) refs.push(ref);
  }
  return refs.length > 0 ? refs : undefined;
}

const callId = (call: AtifToolCall): string => call.tool_call_id;

/** Whether `calls` has one with the id (a loop: a closure per question was an allocation per tool result). */
function hasToolCall(calls: readonly AtifToolCall[], id: string): boolean {
  for (let i = 0; i < calls.length; i++) if ((calls[i] as AtifToolCall).tool_call_id === id) return true;
  return false;
}

export class StepConverter {
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
  /** `api_request_id`s whose last attempt failed: the next start with one is a retry of that request. */
  private readonly failedRequests = new Set<string>();
  /** Starts that were such a retry: one that fails without a response (a managed call's error) leaves the request failed. */
  private readonly retryStarts = new Set<string>();

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
    const observations = this.pendingObservations;
    if (observations.length === 0) return;
    const timestamp = this.pendingTimestamp;
    this.pendingTimestamp = undefined;
    // The usual result goes straight onto the current step; only results without a call id make a list of their own.
    let standalone: AtifObservationResult[] | undefined;
    for (let i = 0; i < observations.length; i++) {
      const result = observations[i] as AtifObservationResult;
      const id = result.source_call_id;
      if (id === undefined) (standalone ??= []).push(result);
      else if (this.currentStepHasToolCall(id)) this.attachToCurrentStep(result);
      else this.defer(id, result, timestamp);
    }
    // Emptied for the next tool ends: popped, as setting its length is a runtime call even in optimized code.
    while (observations.length > 0) observations.pop();
    if (standalone !== undefined) this.pushStandalone(standalone, timestamp);
  }

  private attachToCurrentStep(result: AtifObservationResult): void {
    const index = this.current.stepIndex;
    if (index === undefined || this.steps[index] === undefined) return;
    mergeObservationResult(this.ensureObservation(index), result);
  }

  /** The observation of the step at `index`, added in its struct position when the step has none. */
  private ensureObservation(index: number): AtifObservation {
    const step = this.steps[index] as AtifStep;
    if (step.observation !== undefined) return step.observation;
    const observation: AtifObservation = { results: [] };
    // An agent step with tool calls has the slot in struct order already (`llmEnd`): set in place.
    if ('observation' in step) step.observation = observation;
    else this.replaceStep(index, { ...step, observation });
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
    return step?.tool_calls !== undefined && hasToolCall(step.tool_calls, id);
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
    const calls = step?.tool_calls;
    if (calls === undefined) return;
    // By index over the calls as they are now: attaching an observation re-creates the step, never its calls.
    for (let i = 0; i < calls.length; i++) {
      const id = (calls[i] as AtifToolCall).tool_call_id;
      const observations = this.deferredObservations.get(id);
      if (observations !== undefined && step !== undefined) {
        this.deferredObservations.delete(id);
        const observation = this.ensureObservation(stepIndex);
        for (const deferred of observations) mergeObservationResult(observation, deferred.result);
      }
      const metadata = this.deferredToolMetadata.get(id);
      if (metadata !== undefined) {
        this.deferredToolMetadata.delete(id);
        for (const tool of metadata) this.current.pushTool(tool.ancestry, tool.invocation);
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
    this.current.finalizeInto(this.steps, this.lookups.plain);
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
    // A retry of a failed attempt belongs to the request the failed attempt made: no new user step.
    // native: a retry whose request starts a fresh turn repeats the user step.
    const requestId = metadataString(event, 'api_request_id');
    const retry = requestId !== undefined && this.failedRequests.delete(requestId);
    if (retry) this.retryStarts.add(event.uuid);
    if (hasPairedEnd && (retry || requestTurnState(content) === 'continuation')) {
      this.current.llmRequest = content;
      return;
    }
    if (retry) return;
    const step = newStep('user', extractUserMessage(content), event.timestamp);
    step.extra = stepExtra({ ancestry: ancestryOf(event, this.lookups.starts), llmRequest: content }, this.lookups.plain);
    this.steps.push(step);
  }

  private llmEnd(event: ConvEvent): void {
    this.flushObservations();
    const output = event.data;
    const retried = this.retryStarts.delete(event.uuid);
    if (output === undefined) {
      // A retry that failed with no response makes no step: the next attempt is still a retry of the request.
      const requestId = metadataString(event, 'api_request_id');
      if (retried && requestId !== undefined && isFailedEnd(event)) this.failedRequests.add(requestId);
      return;
    }
    const toolCalls = extractToolCalls(output);
    this.lastToolCallByName.clear();
    // The call order at its size: a list grown by pushes starts with room for many more.
    const order = toolCalls === undefined ? [] : toolCalls.map(callId);
    if (toolCalls !== undefined) {
      for (let i = 0; i < toolCalls.length; i++) {
        const call = toolCalls[i] as AtifToolCall;
        if (call.function_name !== '') this.lastToolCallByName.set(call.function_name, call.tool_call_id);
      }
    }
    const reasoningEffort = this.currentReasoningEffort;
    this.currentReasoningEffort = undefined;
    const reasoningContent = extractReasoningContent(output);
    const pairedStartModel = this.lookups.llmStartModels.get(event.uuid);
    const model = responseModel(output) ?? modelNameOf(event) ?? pairedStartModel;
    let metrics = extractMetrics(output, event.name, this.lookups.gemini);
    const supplemental = this.lookups.supplementalMetrics.get(event.uuid);
    if (supplemental !== undefined) {
      if (metrics === undefined) metrics = { ...supplemental };
      else mergeMetricsInto(metrics, supplemental);
      metrics = orderMetrics(metrics);
    }
    const price = this.lookups.price;
    if (price !== undefined && metrics !== undefined && metrics.cost_usd === undefined) {
      // Only a call with usage can be priced; a cost the response reports itself is kept as it is.
      const cost = price({ name: event.name, requestModel: modelNameOf(event) ?? pairedStartModel, response: output });
      if (cost !== undefined) metrics = orderMetrics({ ...metrics, cost_usd: cost });
    }
    const step = newStep('agent', extractResponseMessage(output), event.timestamp);
    if (model !== undefined) step.model_name = model;
    if (reasoningEffort !== undefined) step.reasoning_effort = reasoningEffort;
    if (reasoningContent !== undefined) step.reasoning_content = reasoningContent;
    if (toolCalls !== undefined) {
      // `extractToolCalls` made the list and its calls for this step: sorted in place, not copied.
      for (let i = 0; i < toolCalls.length; i++) sortToolCall(toolCalls[i] as AtifToolCall);
      step.tool_calls = toolCalls;
      // The slot of the observation its tool results will bring, in struct order (written only once set):
      // without it, each step that gets one was re-created with its fields in order.
      step.observation = undefined;
    }
    if (metrics !== undefined) step.metrics = metrics;
    step.llm_call_count = 1;
    this.steps.push(step);
    const failed = isFailedEnd(event);
    const requestId = metadataString(event, 'api_request_id');
    if (requestId !== undefined) {
      if (failed) this.failedRequests.add(requestId);
      else this.failedRequests.delete(requestId);
    }
    this.current.setCurrent(
      this.steps.length - 1,
      ancestryOf(event, this.lookups.starts),
      invocationOf(this.lookups.starts.get(event.uuid)?.instant, event.instant, event.uuid, failed ? 'failed' : 'completed'),
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
    if (hasToolCall(calls, id)) {
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
    const remote = remoteTrajectoryRefs(event);
    if (output !== undefined || annotationOf(event) !== undefined || remote !== undefined) {
      this.pendingTimestamp ??= event.timestamp;
      const result: AtifObservationResult = {};
      if (id !== undefined) result.source_call_id = id;
      const content = output === undefined ? undefined : observationContent(output);
      if (content !== undefined) result.content = content;
      // Not native: a tool call whose work ran in another process references that process's trajectory.
      if (remote !== undefined) result.subagent_trajectory_ref = remote;
      result.extra = observationExtra(event);
      this.pendingObservations.push(result);
    }
    if (this.activeToolCallId === id) this.activeToolCallId = undefined;
    if (id === undefined) return;
    const ancestry = ancestryOf(event, this.lookups.starts);
    const invocation = invocationOf(this.lookups.starts.get(event.uuid)?.instant, event.instant, id);
    if (this.current.hasActiveStep() && this.current.hasToolCallId(id)) {
      this.current.pushTool(ancestry, invocation);
    } else {
      let list = this.deferredToolMetadata.get(id);
      if (list === undefined) this.deferredToolMetadata.set(id, (list = []));
      list.push({ ancestry, invocation });
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
    if (!hasToolCall(step.tool_calls, sourceCallId)) return false;
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
