/**
 * Work cut short, in the plugin's own trajectories: a tool or LLM call still
 * open when its session closed (`shutdown()`, a signal, an exit, the idle TTL
 * or the session cap evicting it). The relay ends such a span as failed with
 * `error.type: session_closed`, and the session's end says why it closed
 * (`reason`: `runtime_shutdown`, `evicted_idle_ttl`, ...). Native's converter
 * writes a cut tool call with no result at all and no end of its turn, so the
 * trajectory read as an agent that simply stopped after asking for a tool.
 *
 * What is written (exporter style with `turnEnds`; the plugins.toml files are
 * native's and get none of it):
 * - a cut tool call gets an observation result saying so (`cut short: <reason>`,
 *   `extra.cut_short` the reason); its invocation is `failed` already
 *   (`tool-ends.ts`);
 * - the turn the cut calls were in ends `interrupted` with the reason, on its
 *   last step (`turn-ends.ts`), and the `notes` name the calls that never ended.
 *
 * No step is added: native's step ids, counts and metrics stay as they are.
 *
 * @module
 */

import type { Json, JsonObject } from '../../../shared/json.ts';
import { nonEmptyString } from '../../../shared/text.ts';
import type { AtofEvent } from '../../atof/types.ts';
import { type Instant, compareInstants, readStamp } from '../../instant.ts';
import { asObject } from '../payload/index.ts';
import type { AtifObservationResult, AtifStep, AtifTrajectory } from '../types.ts';
import { mergeObservationResult } from './observations.ts';
import type { TurnEnd } from './turn-ends.ts';

/** The `error.type` the relay ends a span with when its session closed while it was open. */
export const SESSION_CLOSED = 'session_closed';

/** What a reader is shown for a call its session's close cut short: `cut short: runtime_shutdown`. */
export function cutShortText(reason: string): string {
  return `cut short: ${reason}`;
}

/** A span the relay ended because its session closed, waiting for that session's end (which says why). */
interface CutCall {
  uuid: string;
  category: 'tool' | 'llm';
  name: string;
  parent: string | undefined;
  instant: Instant;
  timestamp: string;
  /** A call that never ended: its `tool_call_id`, since the trajectory has no run of it to find it by. */
  callId?: string;
}

/** What the reading keeps between builds: the cut calls whose session end is not read yet, and each cut tool's reason. */
export interface CutShortState {
  pending: CutCall[];
  /** Tool scope uuid → why its session closed; a call that never ended is keyed `call:<tool_call_id>`. */
  tools: Map<string, string>;
}

export function cutShortState(): CutShortState {
  return { pending: [], tools: new Map() };
}

const STAMP: { instant: Instant | undefined; text: string } = { instant: undefined, text: '' };

/**
 * Reads `events[from..to)`: each span ended `session_closed` waits for the next agent scope's end (the relay ends a
 * closing session's open spans, then the session: `plugin/span-recorder.ts`), whose `reason` it takes; the cut calls
 * of one close, per scope they ran under, end that turn as interrupted (appended to `ends`).
 */
export function readCutShort(events: readonly AtofEvent[], from: number, to: number, state: CutShortState, ends: TurnEnd[]): void {
  for (let i = from; i < to; i++) {
    const event = events[i] as AtofEvent;
    if (event.kind !== 'scope' || event.scope_category !== 'end') continue;
    if (event.category === 'tool' || event.category === 'llm') {
      if (asObject(event.metadata)?.['error.type'] !== SESSION_CLOSED) continue;
      readStamp(event.timestamp, STAMP);
      if (STAMP.instant === undefined) continue;
      const parent = typeof event.parent_uuid === 'string' ? event.parent_uuid : undefined;
      state.pending.push({ uuid: event.uuid, category: event.category, name: event.name, parent, instant: STAMP.instant, timestamp: STAMP.text });
    } else if (event.category === 'agent' && state.pending.length > 0) {
      const reason = nonEmptyString(asObject(event.data as Json | undefined)?.reason) ?? SESSION_CLOSED;
      closeCut(state, reason, ends);
    }
  }
}

/**
 * The reason given to calls with no end at all, in a trajectory written for a session that never closed (the
 * process exited without closing it, or `convert` of a file it left so): the ATOF file has no reason for them.
 */
export const NEVER_ENDED = 'never_ended';

/**
 * The calls of `events` that started and never ended, cut as a close for `NEVER_ENDED` would cut them: their turn
 * ends (appended to `ends`) and the tool calls among them (in `tools`). For a build that is the session's last.
 */
export function cutOpenCalls(events: readonly AtofEvent[], ends: TurnEnd[], tools: Map<string, string>): void {
  const open = new Map<string, AtofEvent>();
  for (const event of events) {
    if (event.kind !== 'scope' || (event.category !== 'tool' && event.category !== 'llm')) continue;
    if (event.scope_category === 'start') open.set(event.uuid, event);
    else if (event.scope_category === 'end') open.delete(event.uuid);
  }
  if (open.size === 0) return;
  const state: CutShortState = { pending: [], tools };
  for (const event of open.values()) {
    readStamp(event.timestamp, STAMP);
    if (STAMP.instant === undefined) continue;
    const parent = typeof event.parent_uuid === 'string' ? event.parent_uuid : undefined;
    const callId = nonEmptyString(asObject(event.category_profile as Json | undefined)?.tool_call_id) ?? nonEmptyString(asObject(event.metadata)?.tool_call_id);
    state.pending.push({ uuid: event.uuid, category: event.category as 'tool' | 'llm', name: event.name, parent, instant: STAMP.instant, timestamp: STAMP.text, ...(callId !== undefined ? { callId } : {}) });
  }
  closeCut(state, NEVER_ENDED, ends);
}

/** The pending cut calls, cut by a close for `reason`: one interrupted turn end per scope they ran under. */
function closeCut(state: CutShortState, reason: string, ends: TurnEnd[]): void {
  const byParent = new Map<string | undefined, CutCall[]>();
  for (const call of state.pending) {
    if (call.category === 'tool') state.tools.set(call.callId !== undefined ? `call:${call.callId}` : call.uuid, reason);
    const group = byParent.get(call.parent);
    if (group === undefined) byParent.set(call.parent, [call]);
    else group.push(call);
  }
  state.pending = [];
  for (const [parent, calls] of byParent) {
    const last = calls.reduce((latest, call) => (compareInstants(call.instant, latest.instant) > 0 ? call : latest));
    ends.push({
      status: 'interrupted',
      parent,
      errorType: undefined,
      errorMessage: undefined,
      instant: last.instant,
      timestamp: last.timestamp,
      startedAt: undefined,
      cut: { reason, calls: calls.map((call) => `${call.category === 'tool' ? 'tool' : 'LLM call'} ${call.name}`) },
    });
  }
}

/** Gives each cut tool call (its `tool_ancestry` entry names its scope) a result saying it was cut short, sub-agents' too. */
export function markCutTools(trajectory: AtifTrajectory, tools: ReadonlyMap<string, string>): void {
  if (tools.size === 0) return;
  for (const step of trajectory.steps) {
    // A call that never ended has no run in the trajectory: the step that asked for it names it.
    for (const call of step.tool_calls ?? []) {
      const reason = tools.get(`call:${call.tool_call_id}`);
      if (reason !== undefined) {
        addResult(step, { source_call_id: call.tool_call_id, content: resultText(reason), extra: { cut_short: reason } as JsonObject });
      }
    }
    const extra = step.extra as { tool_ancestry?: { function_id?: unknown }[]; tool_invocations?: { invocation_id?: unknown }[] } | undefined;
    const ancestry = extra?.tool_ancestry;
    if (ancestry === undefined) continue;
    for (let i = 0; i < ancestry.length; i++) {
      const id = ancestry[i]?.function_id;
      const reason = typeof id === 'string' ? tools.get(id) : undefined;
      if (reason === undefined) continue;
      const callId = nonEmptyString(extra?.tool_invocations?.[i]?.invocation_id) ?? nonEmptyString(step.tool_calls?.[i]?.tool_call_id);
      if (callId === undefined) continue;
      addResult(step, { source_call_id: callId, content: resultText(reason), extra: { cut_short: reason } as JsonObject });
    }
  }
  for (const child of trajectory.subagent_trajectories ?? []) markCutTools(child, tools);
}

/** What a cut call's result says: why, and what that means for the call. */
function resultText(reason: string): string {
  return reason === NEVER_ENDED
    ? `${cutShortText(reason)} (the tool call has no end: the process ended before its session closed)`
    : `${cutShortText(reason)} (the tool call never ended: its session closed first)`;
}

/** The step's fields after `observation` in native's struct order: a new `observation` is set before them. */
const AFTER_OBSERVATION = ['metrics', 'llm_call_count', 'is_copied_context', 'extra'] as const;

/**
 * Adds `result` to the step's observation; merged into the call's result when it has one (a call that ran a
 * sub-agent has its link there): the cut's text becomes its content when it has none, `cut_short` joins its `extra`.
 */
function addResult(step: AtifStep, result: AtifObservationResult): void {
  if (step.observation !== undefined) {
    mergeObservationResult(step.observation, result);
    return;
  }
  const rest: Partial<AtifStep> = {};
  for (const key of AFTER_OBSERVATION) {
    if (step[key] !== undefined) (rest as Record<string, unknown>)[key] = step[key];
    delete step[key];
  }
  Object.assign(step, { observation: { results: [result] } }, rest);
}
