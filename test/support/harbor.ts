// What Harbor's ATIF rules say about a trajectory native writes: native
// writes `steps: []` for a session (or an unreferenced subagent) without LLM
// calls, and Harbor's model needs at least one step. Tests that validate
// native's own files expect exactly these errors and no other.

import { validateAtif } from '../../src/formats/atif/validate.ts';

/** `<path>.steps atif.steps_empty` for the root and every embedded subagent whose steps are empty. */
export function emptyStepsErrors(doc: unknown, path = '$'): string[] {
  if (typeof doc !== 'object' || doc === null) return [];
  const trajectory = doc as { steps?: unknown; subagent_trajectories?: unknown };
  const out = Array.isArray(trajectory.steps) && trajectory.steps.length === 0 ? [`${path}.steps atif.steps_empty`] : [];
  if (Array.isArray(trajectory.subagent_trajectories)) {
    trajectory.subagent_trajectories.forEach((sub, i) => out.push(...emptyStepsErrors(sub, `${path}.subagent_trajectories[${i}]`)));
  }
  return out;
}

/** validateAtif's errors as `path rule` lines, sorted. */
export function atifErrorLines(doc: unknown, options?: Parameters<typeof validateAtif>[1]): string[] {
  return validateAtif(doc, options).map((error) => `${error.path} ${error.rule}`).sort();
}

/** The errors a native-written trajectory gets: its empty step lists, and the known ones given. */
export function expectedNativeErrors(doc: unknown, known: readonly string[] = []): string[] {
  return [...known, ...emptyStepsErrors(doc)].sort();
}
