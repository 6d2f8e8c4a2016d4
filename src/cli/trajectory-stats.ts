/**
 * Totals of ATIF trajectories, for the summaries `replay`, `convert` and
 * `demo` print: steps, LLM calls, tool calls and tokens, counted through
 * embedded subagent trajectories (each trajectory's own steps once, so a
 * subagent's tokens are not counted twice).
 *
 * @module
 */

import { isRecord } from '../shared/record.ts';

export interface TrajectoryTotals {
  trajectories: number;
  subagents: number;
  steps: number;
  llmCalls: number;
  toolCalls: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
}

export function emptyTotals(): TrajectoryTotals {
  return { trajectories: 0, subagents: 0, steps: 0, llmCalls: 0, toolCalls: 0, promptTokens: 0, completionTokens: 0, cachedTokens: 0 };
}

type Obj = Record<string, unknown>;

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/** Adds one trajectory document (and its embedded subagents) to `totals`. */
export function addTrajectory(totals: TrajectoryTotals, doc: unknown, embedded = false): TrajectoryTotals {
  if (!isRecord(doc)) return totals;
  if (embedded) totals.subagents += 1;
  else totals.trajectories += 1;
  const steps = Array.isArray(doc.steps) ? doc.steps : [];
  for (const step of steps) {
    if (!isRecord(step)) continue;
    totals.steps += 1;
    if (step.source === 'agent') {
      totals.llmCalls += typeof step.llm_call_count === 'number' ? step.llm_call_count : 1;
    }
    if (Array.isArray(step.tool_calls)) totals.toolCalls += step.tool_calls.length;
    const metrics = step.metrics;
    if (isRecord(metrics)) {
      totals.promptTokens += count(metrics.prompt_tokens);
      totals.completionTokens += count(metrics.completion_tokens);
      totals.cachedTokens += count(metrics.cached_tokens);
    }
  }
  if (Array.isArray(doc.subagent_trajectories)) {
    for (const child of doc.subagent_trajectories) addTrajectory(totals, child, true);
  }
  return totals;
}
