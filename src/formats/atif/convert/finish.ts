/**
 * Post-processing of one agent's steps: numbering, dropping tool-call steps a
 * second instrumentation repeated, pruning refs to subagents not embedded,
 * and the trajectory's `final_metrics`.
 *
 * @module
 */

import { canonicalJson } from '../../native-text.ts';
import { asObject } from '../payload/index.ts';
import type { AtifObservationResult, AtifStep, AtifSubagentTrajectoryRef, AtifTrajectory } from '../types.ts';

export function renumber(steps: AtifStep[]): void {
  steps.forEach((step, index) => {
    step.step_id = index + 1;
  });
}

/**
 * Drops tool-call-only agent steps whose calls a later agent step (before the
 * next non-agent step) repeats with observations: the same calls seen by two
 * instrumentations.
 */
export function removeProjectedToolCallDuplicates(steps: AtifStep[]): void {
  // Only a candidate followed by another agent step can be dropped: the set of calls observed later is emptied
  // at every non-agent step. Without one (the usual case: a turn's agent steps each follow a user step) no
  // call's key need be written.
  if (!hasDroppableCandidate(steps)) return;
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

/** Whether some projected candidate has an agent step right after it, before any non-agent step. */
function hasDroppableCandidate(steps: readonly AtifStep[]): boolean {
  for (let index = 0; index < steps.length - 1; index++) {
    if ((steps[index + 1] as AtifStep).source === 'agent' && isProjectedCandidate(steps[index] as AtifStep)) return true;
  }
  return false;
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

/**
 * Removes refs to subagents of this tree (`localAgents`) that were not
 * embedded, and steps left empty by that. A ref to a trajectory recorded
 * elsewhere (another process's, named by a tool end) is kept.
 */
export function pruneSubagentRefs(steps: AtifStep[], childIds: Set<string>, localAgents: { has(uuid: string): boolean }): AtifStep[] {
  // In place, lists filtered only where something goes: most results keep everything, and most steps stay.
  for (let index = 0; index < steps.length; index++) {
    const observation = (steps[index] as AtifStep).observation;
    if (observation === undefined) continue;
    const results = observation.results;
    let write = 0;
    for (let read = 0; read < results.length; read++) {
      const result = results[read] as AtifObservationResult;
      if (result.subagent_trajectory_ref !== undefined) pruneRefs(result, result.subagent_trajectory_ref, childIds, localAgents);
      if (keepsResult(result)) results[write++] = result;
    }
    // Setting an array's length is a runtime call even in optimized code: only when something went.
    if (write < results.length) results.length = write;
    if (write === 0) delete (steps[index] as AtifStep).observation;
  }
  let write = 0;
  for (let read = 0; read < steps.length; read++) {
    const step = steps[read] as AtifStep;
    if (!isEmptyStep(step)) steps[write++] = step;
  }
  if (write < steps.length) steps.length = write;
  renumber(steps);
  return steps;
}

/** The result's refs without those to local subagents that were not embedded, and without refs that name nothing. */
function pruneRefs(result: AtifObservationResult, refs: AtifSubagentTrajectoryRef[], childIds: Set<string>, localAgents: { has(uuid: string): boolean }): void {
  let write = 0;
  for (let read = 0; read < refs.length; read++) {
    const ref = refs[read] as AtifSubagentTrajectoryRef;
    const kept =
      ref.trajectory_id !== undefined && localAgents.has(ref.trajectory_id)
        ? childIds.has(ref.trajectory_id)
        : ref.trajectory_id !== undefined || ref.trajectory_path !== undefined;
    if (kept) refs[write++] = ref;
  }
  if (write < refs.length) refs.length = write;
  if (write === 0) delete result.subagent_trajectory_ref;
}

function keepsResult(result: AtifObservationResult): boolean {
  if (result.content !== undefined || result.subagent_trajectory_ref !== undefined) return true;
  const extra = asObject(result.extra);
  return extra !== undefined && ('tool_result' in extra || 'tool_result_annotation' in extra);
}

/** A system step or a sub-agent dispatch step left with nothing to say. */
function isEmptyStep(step: AtifStep): boolean {
  return (
    (step.source === 'system' && step.observation === undefined && step.message === '' && step.extra === undefined) ||
    (step.source === 'agent' && step.llm_call_count === 0 && step.observation === undefined && step.message === '' && step.extra === undefined)
  );
}

export function finalMetrics(steps: readonly AtifStep[]): AtifTrajectory['final_metrics'] {
  let prompt: number | undefined;
  let completion: number | undefined;
  let cached: number | undefined;
  let cost: number | undefined;
  for (let i = 0; i < steps.length; i++) {
    const metrics = (steps[i] as AtifStep).metrics;
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
