/**
 * A turn that did not complete, in the plugin's own trajectories: a run that
 * threw after every model call in it answered (a structured answer the
 * program could not parse, a tool error that escaped, a host's turn that
 * ended failed) fails no step, so without this the trajectory read as a
 * finished turn while ATOF's `hermes.session.end` said it failed.
 *
 * Where it goes: the turn's last step gets an entry in `extra.turn_ends`
 * (`status` `failed` or `interrupted`, the error's type and message as the
 * program caught them, the end's `timestamp`; a list, because a run resumed
 * after a pause that made no step of this trajectory ends at the same step
 * again), and the trajectory's `notes` say it
 * in a sentence, for readers that skip `extra` (Harbor's tools keep `notes`):
 * a pause a run resumed (an approval answered by the next run of the turn)
 * is said as a pause, not as the turn's end.
 * No step is added: native's step ids, counts and metrics stay as they are.
 * Completed turns add nothing. The plugins.toml (`plugin-host`) files are
 * native's and get none of it.
 *
 * @module
 */

import type { Json, JsonObject } from '../../../shared/json.ts';
import { nonEmptyString } from '../../../shared/text.ts';
import type { AtofEvent } from '../../atof/types.ts';
import { type Instant, compareInstants, parseInstant, readStamp } from '../../instant.ts';
import { asObject } from '../payload/index.ts';
import type { AtifStep, AtifTrajectory } from '../types.ts';

/** How a turn that did not complete ended, as its `hermes.session.end` mark says. */
export interface TurnEnd {
  status: 'failed' | 'interrupted';
  /** The scope the mark was recorded under (the session's agent scope). */
  parent: string | undefined;
  errorType: string | undefined;
  errorMessage: string | undefined;
  instant: Instant;
  /** The end's time as the converter writes step timestamps. */
  timestamp: string;
  /**
   * When the turn started (its scope's last `hermes.turn.start` before the end that brought a user message, or said
   * none), if recorded.
   */
  startedAt: Instant | undefined;
  /** An interrupted turn a later run resumed (its `hermes.turn.start` with an empty message): a pause, not its end. */
  resumed?: boolean;
  /** A turn its session's close cut short (`cut-short.ts`): why the session closed, and the calls that never ended. */
  cut?: { reason: string; calls: string[] };
}

/** One entry of the `turn_ends` a step's `extra` carries. */
export interface AtifTurnEnd {
  status: 'failed' | 'interrupted';
  error_type?: string;
  error_message?: string;
  /** An interrupted turn its session's close cut short: why the session closed (`runtime_shutdown`, `evicted_idle_ttl`, ...). */
  reason?: string;
  timestamp: string;
}

const STAMP: { instant: Instant | undefined; text: string } = { instant: undefined, text: '' };

const resumes = (message: Json | undefined): boolean => message === '' || (Array.isArray(message) && message.length === 0);

/**
 * Reads the turn marks of `events[from..to)`, appending the turns that
 * did not complete to `into`; `starts` keeps each scope's latest turn start
 * between calls (a session's builds read each event once).
 */
export function readTurnEnds(events: readonly AtofEvent[], from: number, to: number, into: TurnEnd[], starts: Map<string, Instant>): void {
  for (let i = from; i < to; i++) {
    const event = events[i] as AtofEvent;
    if (event.kind !== 'mark' || (event.name !== 'hermes.session.end' && event.name !== 'hermes.turn.start')) continue;
    readStamp(event.timestamp, STAMP);
    const instant = STAMP.instant;
    if (instant === undefined) continue;
    const parent = typeof event.parent_uuid === 'string' ? event.parent_uuid : undefined;
    const data = asObject(event.data as Json | undefined) ?? {};
    if (event.name === 'hermes.turn.start') {
      // A run resumed after a pause starts with an empty user message (the adapters'): it goes on with the turn it
      // resumed, whose steps are its steps, as `compare` reads it. A host that sends no message starts a turn.
      if (!resumes(data.user_message) || !starts.has(parent ?? '')) starts.set(parent ?? '', instant);
      else resumedPause(into, parent, starts.get(parent ?? ''));
      continue;
    }
    // As `view` of ATOF reads an end: interrupted wins over failed (a run stopped for an approval is no failure).
    const status = data.interrupted === true ? 'interrupted' : data.failed === true ? 'failed' : undefined;
    if (status === undefined) continue;
    into.push({
      status,
      parent,
      errorType: status === 'failed' ? nonEmptyString(data.error_type) : undefined,
      errorMessage: status === 'failed' ? nonEmptyString(data.error_message) : undefined,
      instant,
      timestamp: STAMP.text,
      startedAt: starts.get(parent ?? ''),
    });
  }
}

/** The scope's last end, when it paused the turn a resuming run just started again (no other turn began since): resumed. */
function resumedPause(ends: TurnEnd[], parent: string | undefined, turnStart: Instant | undefined): void {
  for (let i = ends.length - 1; i >= 0; i--) {
    const end = ends[i] as TurnEnd;
    if (end.parent !== parent) continue;
    const sameTurn = end.startedAt === undefined || turnStart === undefined ? end.startedAt === turnStart : compareInstants(end.startedAt, turnStart) === 0;
    if (end.status === 'interrupted' && sameTurn) end.resumed = true;
    return;
  }
}

/**
 * Writes `ends` into the trajectory built from the same events: each on the
 * trajectory of the agent it was recorded under (an embedded sub-agent's
 * own session), else the root's, on that trajectory's last step of the turn.
 */
export function placeTurnEnds(trajectory: AtifTrajectory, ends: readonly TurnEnd[]): void {
  if (ends.length === 0) return;
  const byId = new Map<string, AtifTrajectory>();
  const index = (node: AtifTrajectory): void => {
    for (const child of node.subagent_trajectories ?? []) {
      if (child.trajectory_id !== undefined) byId.set(child.trajectory_id, child);
      index(child);
    }
  };
  index(trajectory);
  const notes = new Map<AtifTrajectory, string[]>();
  for (const end of ends) {
    const target = (end.parent === undefined ? undefined : byId.get(end.parent)) ?? trajectory;
    const before = lastStepBefore(target.steps, end.instant);
    const step = before !== undefined && !startedAfter(before, end) ? before : undefined;
    const turnEnd: AtifTurnEnd = {
      status: end.status,
      ...(end.errorType !== undefined ? { error_type: end.errorType } : {}),
      ...(end.errorMessage !== undefined ? { error_message: end.errorMessage } : {}),
      ...(end.cut !== undefined ? { reason: end.cut.reason } : {}),
      timestamp: end.timestamp,
    };
    if (step !== undefined) step.extra = withTurnEnd(step.extra, turnEnd);
    let lines = notes.get(target);
    if (lines === undefined) notes.set(target, (lines = []));
    lines.push(sentenceOf(turnEnd, step, before, end.resumed === true, end.cut?.calls));
  }
  for (const [target, lines] of notes) setNotes(target, lines.join('\n'));
}

/** The last step at or before `instant`. */
function lastStepBefore(steps: readonly AtifStep[], instant: Instant): AtifStep | undefined {
  for (let i = steps.length - 1; i >= 0; i--) {
    const step = steps[i] as AtifStep;
    const at = parseInstant(step.timestamp);
    if (at !== undefined && compareInstants(at, instant) <= 0) return step;
  }
  return undefined;
}

/** Whether the step came before the ended turn started: an earlier turn's (the ended one has no step). */
function startedAfter(step: AtifStep, end: TurnEnd): boolean {
  const at = parseInstant(step.timestamp);
  return end.startedAt !== undefined && at !== undefined && compareInstants(at, end.startedAt) < 0;
}

/** `extra` with `turnEnd` added to its `turn_ends`, that key in sorted order (native writes a step's `extra` keys sorted). */
function withTurnEnd(extra: Json | undefined, turnEnd: AtifTurnEnd): Json {
  const entries = Object.entries(asObject(extra) ?? {}).filter(([key]) => key !== 'turn_ends');
  const earlier = asObject(extra)?.turn_ends;
  entries.push(['turn_ends', [...(Array.isArray(earlier) ? earlier : []), turnEnd as unknown as Json]]);
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries) as JsonObject;
}

/**
 * The end in a sentence: which step ended the turn (a turn without one: the step before it), how, and with what
 * error; a pause the turn resumed from, where it paused. No time: the step ids place it, and the same run on either
 * backend writes the same sentence.
 */
function sentenceOf(turnEnd: AtifTurnEnd, step: AtifStep | undefined, before: AtifStep | undefined, resumed: boolean, cutCalls: readonly string[] | undefined): string {
  if (resumed) {
    return step !== undefined
      ? `The turn was paused at step ${step.step_id} and resumed.`
      : `A turn without a step (${before === undefined ? 'before step 1' : `after step ${before.step_id}`}) was paused and resumed.`;
  }
  const which =
    step !== undefined
      ? `The turn that ends at step ${step.step_id}`
      : `A turn without a step (${before === undefined ? 'before step 1' : `after step ${before.step_id}`})`;
  if (cutCalls !== undefined) return `${which} was cut short (${turnEnd.reason}): ${cutCalls.join(', ')} never ended.`;
  if (turnEnd.status === 'interrupted') return `${which} was interrupted.`;
  const error = [turnEnd.error_type, turnEnd.error_message].filter((part) => part !== undefined).join(': ');
  return `${which} failed${error === '' ? '.' : `: ${error}`}`;
}

/** `notes` set in the field order native's struct has (after `steps`), for a trajectory that had none. */
function setNotes(trajectory: AtifTrajectory, notes: string): void {
  const rest: Partial<AtifTrajectory> = {};
  for (const key of ['final_metrics', 'continued_trajectory_ref', 'subagent_trajectories', 'extra'] as const) {
    if (trajectory[key] !== undefined) (rest as Record<string, unknown>)[key] = trajectory[key];
    delete trajectory[key];
  }
  Object.assign(trajectory, { notes }, rest);
}
