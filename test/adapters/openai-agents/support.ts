// Readers for what the Agents SDK programs recorded: ATIF steps, tool calls
// and observations by call id, token totals, the hooks as emitted; and the
// two tracing set-ups every program runs under.
import { setTraceProcessors, setTracingDisabled, tool } from '@openai/agents';
import { afterEach, expect } from 'vitest';
import * as z from 'zod';
import { instrumentOpenAIAgents } from '../../../src/adapters/openai-agents/index.ts';
import type { HookRegistry } from '../../../src/hooks/registry.ts';
import type { AtifDoc, Recorded } from '../support.ts';

export type Tracing = 'tracing on' | 'tracing off';

/** Both ways users run the SDK: tracing on (nothing exported: no processor) and tracing off. */
export const TRACING: readonly Tracing[] = ['tracing on', 'tracing off'];

export function useTracing(mode: Tracing): void {
  // No exporter: nothing leaves the machine whichever the mode.
  setTraceProcessors([]);
  setTracingDisabled(mode === 'tracing off');
}

/** `instrument(hooks)` in a test: the SDK instrumented for it, and uninstalled after it, also when it failed. */
export function instrumentEachTest(): (hooks: HookRegistry) => void {
  let uninstall: (() => void) | undefined;
  afterEach(() => {
    uninstall?.();
    uninstall = undefined;
  });
  return (hooks) => {
    uninstall = instrumentOpenAIAgents(hooks);
  };
}

/** The docs' weather tool; it answers at once unless the test gives its own `execute`. */
export function weatherTool(execute: (input: { city: string }) => Promise<string> = async ({ city }) => `The weather in ${city} is sunny.`) {
  return tool({ name: 'get_weather', description: 'Get the weather for a given city', parameters: z.object({ city: z.string() }), execute });
}

export type Step = Record<string, any>;

export function stepsOf(doc: AtifDoc): Step[] {
  return doc.steps as Step[];
}

/** The trajectory and every embedded sub-agent trajectory, depth first. */
export function trajectoriesOf(doc: AtifDoc): AtifDoc[] {
  return [doc, ...((doc.subagent_trajectories ?? []) as AtifDoc[]).flatMap(trajectoriesOf)];
}

export function agentSteps(doc: AtifDoc): Step[] {
  return stepsOf(doc).filter((step) => step.source === 'agent' && (step.llm_call_count ?? 0) > 0);
}

export function toolCallIds(doc: AtifDoc): string[] {
  return stepsOf(doc).flatMap((step) => (step.tool_calls ?? []).map((call: Step) => call.tool_call_id));
}

export function observation(doc: AtifDoc, callId: string): Step | undefined {
  return stepsOf(doc)
    .flatMap((step) => step.observation?.results ?? [])
    .find((result: Step) => result.source_call_id === callId);
}

/** Tokens over the trajectory and its sub-agents, from the step metrics. */
export function tokenTotals(doc: AtifDoc): { prompt: number; completion: number; cached: number } {
  const totals = { prompt: 0, completion: 0, cached: 0 };
  for (const trajectory of trajectoriesOf(doc)) {
    for (const step of stepsOf(trajectory)) {
      totals.prompt += step.metrics?.prompt_tokens ?? 0;
      totals.completion += step.metrics?.completion_tokens ?? 0;
      totals.cached += step.metrics?.cached_tokens ?? 0;
    }
  }
  return totals;
}

/** The SDK's own totals (`result.state.usage`), in the same shape: cached is the cache reads and writes (an `aisdk()` Anthropic model's). */
export function sdkTotals(usage: { inputTokens: number; outputTokens: number; inputTokensDetails: Array<Record<string, number>> }): { prompt: number; completion: number; cached: number } {
  return {
    prompt: usage.inputTokens,
    completion: usage.outputTokens,
    cached: usage.inputTokensDetails.reduce((sum, detail) => sum + (detail.cached_tokens ?? 0) + (detail.cache_write_tokens ?? 0), 0),
  };
}

export function hooks(recorded: Recorded, name: string): Array<Record<string, any>> {
  return recorded.log.filter((entry) => entry.hook === name).map((entry) => entry.payload as Record<string, any>);
}

export { onlyTrajectory } from '../support.ts';

/** Every turn the adapter opened was closed, and every session finalized, by the run itself. */
export function expectRunsClosed(recorded: Recorded): void {
  const turns = new Set(hooks(recorded, 'pre_llm_call').map((payload) => payload.turn_id));
  const ended = new Set(hooks(recorded, 'on_session_end').map((payload) => payload.turn_id));
  expect([...turns].filter((turn) => !ended.has(turn)), 'turns left open').toEqual([]);
  const started = hooks(recorded, 'on_session_start').map((payload) => payload.session_id);
  const finalized = hooks(recorded, 'on_session_finalize').map((payload) => payload.session_id);
  expect(finalized.sort()).toEqual(expect.arrayContaining(started.sort()));
}
