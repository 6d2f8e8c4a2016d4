/**
 * A tool call that failed, in the plugin's own trajectories: its entry in its
 * step's `extra.tool_invocations` says `failed`, as a failed LLM attempt's
 * `invocation` does. Native's converter writes `completed` for every tool
 * end, so a reader of the invocations alone took a failed call for a
 * finished one while its observation said `error`. The plugins.toml
 * (`plugin-host`) and exporter files are native's and keep `completed`.
 *
 * A failed end is one the relay marked so (`error.type` in its metadata: a
 * failed status, an `{error}` result, a span its session left open). Read
 * from the events as they are recorded, placed on each build.
 *
 * @module
 */

import type { AtofEvent } from '../../atof/types.ts';
import { asObject } from '../payload/index.ts';
import type { AtifTrajectory } from '../types.ts';

/** Adds to `into` the uuid of each tool scope that ended failed among `events[from, to)`. */
export function readFailedTools(events: readonly AtofEvent[], from: number, to: number, into: Set<string>): void {
  for (let i = from; i < to; i++) {
    const event = events[i] as AtofEvent;
    if (event.kind !== 'scope' || event.scope_category !== 'end' || event.category !== 'tool') continue;
    if (typeof asObject(event.metadata)?.['error.type'] === 'string') into.add(event.uuid);
  }
}

/** Marks `failed` each tool invocation whose scope (its `tool_ancestry` entry, side by side) is in `failed`, sub-agents' too. */
export function markFailedTools(trajectory: AtifTrajectory, failed: ReadonlySet<string>): void {
  if (failed.size === 0) return;
  for (const step of trajectory.steps) {
    const extra = step.extra as { tool_ancestry?: { function_id?: unknown }[]; tool_invocations?: { status?: string }[] } | undefined;
    const ancestry = extra?.tool_ancestry;
    const invocations = extra?.tool_invocations;
    if (ancestry === undefined || invocations === undefined) continue;
    for (let i = 0; i < invocations.length; i++) {
      const id = ancestry[i]?.function_id;
      if (typeof id === 'string' && failed.has(id)) invocations[i]!.status = 'failed';
    }
  }
  for (const child of trajectory.subagent_trajectories ?? []) markFailedTools(child, failed);
}
