/**
 * A tool call that failed or was interrupted, in the plugin's own
 * trajectories: its entry in its step's `extra.tool_invocations` says
 * `failed` (as a failed LLM attempt's `invocation` does) or `interrupted`.
 * Native's converter writes `completed` for every tool end, so a reader of
 * the invocations alone took a failed call for a finished one while its
 * observation said `error`, and a run a LangGraph `interrupt()` stopped,
 * which never returned, for one that did. The plugins.toml (`plugin-host`)
 * and exporter files are native's and keep `completed`.
 *
 * A failed end is one the relay marked so (`error.type` in its metadata: a
 * failed status, an `{error}` result, a span its session left open); an
 * interrupted one says `status: "interrupted"` in its metadata (the hook's
 * `status`) and no error. Read from the events as they are recorded, placed
 * on each build.
 *
 * @module
 */

import type { AtofEvent } from '../../atof/types.ts';
import { asObject } from '../payload/index.ts';
import type { AtifTrajectory } from '../types.ts';

/** How a tool call that did not complete ended: its `tool_invocations` entry's status. */
export type ToolEndStatus = 'failed' | 'interrupted';

/** Adds to `into` each tool scope's uuid that ended failed or interrupted among `events[from, to)`, with how. */
export function readToolEnds(events: readonly AtofEvent[], from: number, to: number, into: Map<string, ToolEndStatus>): void {
  for (let i = from; i < to; i++) {
    const event = events[i] as AtofEvent;
    if (event.kind !== 'scope' || event.scope_category !== 'end' || event.category !== 'tool') continue;
    const metadata = asObject(event.metadata);
    if (typeof metadata?.['error.type'] === 'string') into.set(event.uuid, 'failed');
    else if (metadata?.status === 'interrupted') into.set(event.uuid, 'interrupted');
  }
}

/** Writes each tool invocation's status from `ends`, by its scope (its `tool_ancestry` entry, side by side), sub-agents' too. */
export function markToolEnds(trajectory: AtifTrajectory, ends: ReadonlyMap<string, ToolEndStatus>): void {
  if (ends.size === 0) return;
  for (const step of trajectory.steps) {
    const extra = step.extra as { tool_ancestry?: { function_id?: unknown }[]; tool_invocations?: { status?: string }[] } | undefined;
    const ancestry = extra?.tool_ancestry;
    const invocations = extra?.tool_invocations;
    if (ancestry === undefined || invocations === undefined) continue;
    for (let i = 0; i < invocations.length; i++) {
      const id = ancestry[i]?.function_id;
      const status = typeof id === 'string' ? ends.get(id) : undefined;
      if (status !== undefined) invocations[i]!.status = status;
    }
  }
  for (const child of trajectory.subagent_trajectories ?? []) markToolEnds(child, ends);
}
