/**
 * The view tree of an ATIF trajectory. A user step opens a turn (a retry
 * that repeats the same user message stays in its turn), each agent step is
 * an LLM call with its tool calls under it, and an embedded subagent
 * trajectory hangs under the tool call whose observation refers to it. A
 * tool's run no step asked for (an MCP server's call) is a tool call of its
 * own, from the system step that holds its result. Durations come from Relay's `step.extra.invocation` and
 * `extra.tool_invocations` (epoch seconds); a trajectory from another
 * writer has only step timestamps, so an agent step lasts from the step
 * before it to its own timestamp. Approvals come from the plugin-host
 * file's `extra.observed_events`, under the tool call they were asked for.
 *
 * @module
 */

import { SESSION_CLOSED, cutShortText } from '../../formats/atif/convert/cut-short.ts';
import { costOf, failedAttemptsNote, node, noteOnce, preview, spanFromChildren, tokensOf, turnEndLabel, type ViewNode } from './model.ts';
import { nonEmptyString } from '../../shared/text.ts';
import { isRecord } from '../../shared/record.ts';
import { parseTimestamp } from '../../shared/clock.ts';
import { CHANGED_INPUT } from '../../adapters/core/shapes.ts';
import { llmModelLabel, llmTitle } from './llm-model.ts';
import { atifToolResult } from './atif-tool-result.ts';

type Obj = Record<string, unknown>;

const arr = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

export function treeFromAtif(doc: unknown): ViewNode {
  return trajectoryNode(doc, 'session');
}

/** Whether a parsed JSON document is an ATIF trajectory at all (an object with a steps list). */
export function isTrajectory(doc: unknown): boolean {
  return isRecord(doc) && Array.isArray(doc.steps);
}

/** The approval marks a plugin-host file observed, by the tool call they were asked for ('' when none). */
function approvalsOf(trajectory: Obj): Map<string, ViewNode[]> {
  const byCall = new Map<string, ViewNode[]>();
  const extra = isRecord(trajectory.extra) ? trajectory.extra : {};
  for (const event of arr(extra.observed_events).filter(isRecord)) {
    if (event.kind !== 'mark' || (event.name !== 'hermes.approval.request' && event.name !== 'hermes.approval.response')) continue;
    const data = isRecord(event.data) ? event.data : {};
    const metadata = isRecord(event.metadata) ? event.metadata : {};
    const request = event.name === 'hermes.approval.request';
    const mark = node('mark', request ? 'approval requested' : `approval: ${nonEmptyString(data.choice) ?? '?'}`, {
      ...timeOf(event.timestamp),
      ...noteOf(approvalNote(event.name as string, data)),
      source: { event },
    });
    if (!request && (data.choice === 'deny' || data.choice === 'timeout')) mark.error = denialText(data.choice, mark.note);
    const key = nonEmptyString(metadata.tool_call_id) ?? nonEmptyString(data.tool_call_id) ?? '';
    let list = byCall.get(key);
    if (list === undefined) byCall.set(key, (list = []));
    list.push(mark);
  }
  return byCall;
}

function trajectoryNode(doc: unknown, kind: 'session' | 'subagent'): ViewNode {
  const trajectory = isRecord(doc) ? doc : {};
  const agent = isRecord(trajectory.agent) ? trajectory.agent : {};
  const id = nonEmptyString(trajectory.session_id) ?? nonEmptyString(trajectory.trajectory_id) ?? '(no session id)';
  const about = [nonEmptyString(agent.name), nonEmptyString(agent.model_name)].filter(Boolean).join(', ');
  const root = node(kind, `${kind === 'session' ? 'session' : 'subagent'} ${id}`, { sessionId: id, ...(about ? { note: about } : {}) });
  root.source = { session_id: trajectory.session_id, agent: trajectory.agent, final_metrics: trajectory.final_metrics, notes: trajectory.notes, extra: trajectory.extra };
  const subagents = new Map<string, Obj>();
  for (const child of arr(trajectory.subagent_trajectories)) {
    if (isRecord(child)) subagents.set(nonEmptyString(child.trajectory_id) ?? nonEmptyString(child.session_id) ?? '', child);
  }
  const used = new Set<string>();
  const approvals = approvalsOf(trajectory);
  const ran = approvedAndRan(arr(trajectory.steps));
  const requests = requestsByCall(arr(trajectory.steps));
  const ends = new TurnEnds();
  let turn: ViewNode | null = null;
  let turnMessage: string | undefined;
  let turns = 0;
  let previousAt: number | undefined;
  for (const raw of arr(trajectory.steps)) {
    if (!isRecord(raw)) continue;
    const step = raw;
    const at = timeOf(step.timestamp).startUs;
    const since = previousAt;
    if (at !== undefined) previousAt = at;
    if (step.source === 'user') {
      const message = preview(step.message, 200);
      if (turn !== null && message === turnMessage) continue;
      turns += 1;
      turnMessage = message;
      turn = node('turn', `turn ${turns}`, { ...(message ? { note: `“${preview(step.message)}”` } : {}), ...timeOf(step.timestamp), source: { step } });
      root.children.push(turn);
      ends.step(turn, step);
      continue;
    }
    const parent = turn ?? root;
    if (step.source === 'system') {
      systemStep(step, at, parent, root, subagents, used);
      ends.results(parent, step);
      continue;
    }
    const llm = llmStep(step, subagents, used, approvals, ran, requests);
    // No span from the writer: the step took from the step before it to its own timestamp. With no earlier
    // stamp (or the same one) it is an instant: a zero made up from one stamp is no measured duration.
    // A step that only starts sub-agents took no time of its own: it is an instant at its stamp (when they started).
    if (llm.startUs === undefined && llm.endUs === undefined && at !== undefined) {
      const instant = llm.source?.startsAgents === true;
      llm.startUs = instant ? at : (since ?? at);
      if (!instant && since !== undefined && since < at) llm.endUs = at;
    }
    parent.children.push(llm);
    ends.step(parent, step);
  }
  ends.show();
  for (const marks of approvals.values()) root.children.push(...marks);
  for (const [id, child] of subagents) {
    if (!used.has(id)) root.children.push(trajectoryNode(child, 'subagent'));
  }
  spanFromChildren(root);
  return root;
}

/**
 * The turns the plugin's trajectory says did not complete (`extra.turn_ends`
 * on a turn's last step). Each such end is kept in order on its turn's
 * `endings`, for `compare` (a turn resumed after a pause ends more than
 * once); the row (the turn's, or the trajectory's when no user step opened
 * one: a sub-agent handed the conversation) says how it ended, as `view` of
 * ATOF shows it (`failed: <error type>`, `interrupted`), only when that end
 * was its last step: one the run resumed from went on to end otherwise.
 */
class TurnEnds {
  readonly #pending = new Map<ViewNode, string>();

  /** A step under `row`: it ended the turn, or a turn that had ended went on. */
  step(row: ViewNode, step: Obj): void {
    if (!this.results(row, step)) this.#pending.delete(row);
  }

  /**
   * A step of tool results only (a system step): it may end the turn, but a tool's result that comes after its turn
   * ended is no run going on (an MCP server's call ends after the turn it ran inside it). Whether it ended the turn.
   */
  results(row: ViewNode, step: Obj): boolean {
    const ends = arr(isRecord(step.extra) ? step.extra.turn_ends : undefined).filter((end): end is Obj => isRecord(end) && (end.status === 'failed' || end.status === 'interrupted'));
    const end = ends.at(-1);
    if (end === undefined) return false;
    this.#pending.set(row, turnEndLabel(end.status, end.error_type, end.reason)!);
    const endings = Array.isArray(row.source?.endings) ? (row.source.endings as string[]) : [];
    row.source = { ...row.source, endings: [...endings, ...ends.map((each) => each.status as string)] };
    return true;
  }

  /** Writes each row's last end, once every step is read. */
  show(): void {
    for (const [row, label] of this.#pending) noteOnce(row, label);
  }
}

/**
 * An LLM row's title with the upstream a router says served the call (the response's `served_by`), when it says, and
 * the upstreams it says failed first (`failed_upstreams`).
 */
export function withServedBy(title: string, servedBy: unknown, failedUpstreams?: unknown): string {
  const upstream = nonEmptyString(servedBy);
  if (upstream === undefined) return title;
  const failed = Array.isArray(failedUpstreams) ? failedUpstreams.map((name) => nonEmptyString(name)).filter((name) => name !== undefined) : [];
  return `${title} (served by ${upstream}${failed.length > 0 ? ` after ${failed.join(', ')} failed` : ''})`;
}

/**
 * The requests a trajectory keeps (`extra.llm_request`), by the LLM call they were made for (`extra.ancestry.function_id`):
 * the converter keeps the request of a call that opened a turn on the user step, not on the call's own step.
 */
function requestsByCall(steps: readonly unknown[]): Map<string, unknown> {
  const requests = new Map<string, unknown>();
  for (const step of steps) {
    const extra = isRecord(step) && isRecord(step.extra) ? step.extra : {};
    const call = isRecord(extra.ancestry) ? nonEmptyString(extra.ancestry.function_id) : undefined;
    if (call !== undefined && extra.llm_request !== undefined && !requests.has(call)) requests.set(call, extra.llm_request);
  }
  return requests;
}

/** The request an agent step's LLM call made: its own `extra.llm_request`, else the one its call's user step keeps. */
function requestOf(extra: Obj, requests: ReadonlyMap<string, unknown>): unknown {
  if (extra.llm_request !== undefined) return extra.llm_request;
  const call = (isRecord(extra.ancestry) ? nonEmptyString(extra.ancestry.function_id) : undefined) ?? (isRecord(extra.invocation) ? nonEmptyString(extra.invocation.invocation_id) : undefined);
  return call === undefined ? undefined : requests.get(call);
}

function llmStep(step: Obj, subagents: Map<string, Obj>, used: Set<string>, approvals: Map<string, ViewNode[]>, ran: ReadonlySet<string>, requests: ReadonlyMap<string, unknown>): ViewNode {
  const extra = isRecord(step.extra) ? step.extra : {};
  const invocation = isRecord(extra.invocation) ? extra.invocation : {};
  const calls = arr(step.tool_calls).filter(isRecord);
  const response = isRecord(extra.llm_response) ? extra.llm_response : {};
  const failure = response.error;
  const answer = preview(step.message);
  // llm_call_count 0: a deterministic agent step (e.g. dispatching a subagent), not an LLM call.
  const callName = isRecord(extra.ancestry) ? extra.ancestry.function_name : undefined;
  const title = step.llm_call_count === 0 ? 'agent step (no LLM call)' : withServedBy(llmTitle(llmModelLabel(nonEmptyString(step.model_name), requestOf(extra, requests)), callName), response.served_by, response.failed_upstreams);
  const llm = node(step.llm_call_count === 0 ? 'scope' : 'llm', title, {
    ...spanOf(invocation),
    ...(tokensOf(step.metrics) ? { tokens: tokensOf(step.metrics)! } : {}),
    ...(costOf(step.metrics) !== undefined ? { costUsd: costOf(step.metrics)! } : {}),
    ...(failure !== undefined ? { error: cutShortOf(failure, extra) ?? recordedErrorText(failure) } : {}),
    source: { step },
    ...noteOf(failure !== undefined ? undefined : calls.length > 0 ? `→ ${calls.map((call) => nonEmptyString(call.function_name) ?? '?').join(', ')}${answer ? ` · ${answer}` : ''}` : answer),
  });
  const results = arr(isRecord(step.observation) ? step.observation.results : undefined).filter(isRecord);
  const invocations = arr(extra.tool_invocations).filter(isRecord);
  if (step.llm_call_count === 0) {
    // A step without an LLM call whose calls start sub-agents is the converter's link to agents no tool call started
    // (a LangGraph `Send` worker, a resumed handoff): its calls are no tool calls, so the sub-agents hang under the step itself.
    const started = calls.map((call) => subagentOf(results.find((candidate) => candidate.source_call_id === call.tool_call_id), subagents, used));
    if (calls.length > 0 && started.every((child) => child !== undefined)) {
      for (const child of started as Obj[]) {
        used.add(subagentKey(child));
        llm.children.push(trajectoryNode(child, 'subagent'));
      }
      const names = (started as Obj[]).map((child) => (isRecord(child.agent) ? nonEmptyString(child.agent.name) : undefined) ?? 'subagent');
      llm.note = `starts ${names.join(', ')}`;
      llm.source = { ...llm.source, startsAgents: true };
      return llm;
    }
  }
  // Runs name their call (`invocation_id` is its tool_call_id): a call none names did not run, though another's run
  // sits at its index (the calls that ran were fewer than those asked for). Only runs that name none pair by index.
  const byId = invocations.some((candidate) => calls.some((call) => nonEmptyString(call.tool_call_id) !== undefined && candidate.invocation_id === call.tool_call_id));
  // Results name their call (`source_call_id`, optional in ATIF); when none does (Harbor's Terminus writes its
  // terminal output so), they pair with the calls by index, as runs do: the call ran, it was not "not run".
  const resultsById = results.some((candidate) => calls.some((call) => nonEmptyString(call.tool_call_id) !== undefined && candidate.source_call_id === call.tool_call_id));
  calls.forEach((call, index) => {
    const id = nonEmptyString(call.tool_call_id);
    // A call run again (LangGraph reruns a tool that called interrupt() when resumed) has a run per attempt: the
    // result is the last one's.
    const timing = invocations.findLast((candidate) => id !== undefined && candidate.invocation_id === id) ?? (byId ? undefined : invocations[index]) ?? {};
    const result = results.find((candidate) => id !== undefined && candidate.source_call_id === id) ?? (resultsById ? undefined : unnamedResult(results[index]));
    const resultMeta = metadataOfResult(result);
    // A call cut short that never ended has no run: its result alone says it failed.
    const failed = resultMeta['otel.status_code'] === 'ERROR' || timing.status === 'error' || timing.status === 'failed' || cutResultText(result) !== undefined;
    const tool = node('tool', `tool ${nonEmptyString(call.function_name) ?? '?'}`, {
      ...spanOf(timing),
      source: { call, result, timing },
      ...noteOf(preview(call.arguments, 60)),
      ...(failed ? { error: cutResultText(result) ?? failedToolText(resultMeta['error.type'], atifToolResult(result)) } : {}),
    });
    const retried = failedAttemptsNote(resultMeta);
    if (retried !== undefined) noteOnce(tool, retried);
    const asked = id === undefined ? undefined : approvals.get(id);
    // Neither a result nor a run: the call never ran (the run stopped first, e.g. while its approval was pending).
    if (result === undefined && timing.start_timestamp === undefined) {
      const waiting = asked !== undefined && !asked.some((mark) => mark.title.startsWith('approval: '));
      const denied = asked?.some((mark) => mark.error !== undefined) === true;
      const provider = providerApprovalNote(call, id !== undefined && ran.has(id) ? 'ran' : denied ? 'denied' : waiting ? 'waiting' : 'unknown');
      tool.note = [tool.note, provider ?? (waiting ? 'not run: waiting for approval' : (providerRanNote(call) ?? 'not run'))].filter(Boolean).join(' · ');
    }
    if (asked !== undefined) {
      // One failure, as the ATOF file shows it: on the call when the call failed, else on the deny that stopped it.
      for (const mark of asked) if (mark.error !== undefined && (tool.error !== undefined || !denialFailed(mark, tool))) delete mark.error;
      tool.children.push(...asked);
      approvals.delete(id as string);
    }
    addReferencedSubagents(tool, result, subagents, used);
    llm.children.push(tool);
  });
  return llm;
}

/** A call its session's close cut short (`convert/cut-short.ts`), as `view` of the ATOF file says it: `cut short: <reason>`. */
function cutResultText(result: Obj | undefined): string | undefined {
  const reason = isRecord(result?.extra) ? nonEmptyString(result.extra.cut_short) : undefined;
  return reason === undefined ? undefined : cutShortText(reason);
}

/** An LLM call the relay ended because its session closed: cut short, for the reason its turn's end on the step gives. */
function cutShortOf(failure: unknown, extra: Obj): string | undefined {
  if (!isRecord(failure) || failure.type !== SESSION_CLOSED) return undefined;
  const reason = arr(extra.turn_ends).filter(isRecord).map((end) => nonEmptyString(end.reason)).findLast((each) => each !== undefined);
  return cutShortText(reason ?? SESSION_CLOSED);
}

/** The embedded trajectories a tool call's result refers to, under the call (each once). */
function addReferencedSubagents(tool: ViewNode, result: Obj | undefined, subagents: Map<string, Obj>, used: Set<string>): void {
  for (const ref of arr(result?.subagent_trajectory_ref).filter(isRecord)) {
    const key = nonEmptyString(ref.trajectory_id) ?? nonEmptyString(ref.session_id) ?? '';
    const child = subagents.get(key);
    if (child && !used.has(key)) {
      used.add(key);
      tool.children.push(trajectoryNode(child, 'subagent'));
    }
  }
}

/**
 * A system step. A result a tool's run left (its `extra.event_name`: the converter writes one here when no agent
 * step of the trajectory asked for the call, as for an MCP server's call, which the caller's model asked for) is a
 * tool call, as the ATOF file shows it: the session's, or its turn's when its metadata names a turn; the trajectory
 * keeps its result and when it ended, not when it started, so it is an instant. The step's message and any other
 * result are a `system` row with its observations.
 */
function systemStep(step: Obj, at: number | undefined, turn: ViewNode, session: ViewNode, subagents: Map<string, Obj>, used: Set<string>): void {
  const results = arr(isRecord(step.observation) ? step.observation.results : undefined).filter(isRecord);
  const runs = results.filter(isToolRun);
  for (const result of runs) {
    const tool = standaloneTool(result, at);
    addReferencedSubagents(tool, result, subagents, used);
    (nonEmptyString(metadataOfResult(result).turn_id) !== undefined ? turn : session).children.push(tool);
  }
  const others = results.filter((result) => !isToolRun(result));
  if (runs.length > 0 && others.length === 0 && preview(step.message) === undefined) return;
  const mark = node('mark', 'system', { ...noteOf(preview(step.message)), ...(at !== undefined ? { startUs: at } : {}), source: { step } });
  for (const result of others) {
    const observation = node('mark', 'observation', { ...noteOf(preview(result.content)), source: { result } });
    // A system step's references (Harbor's context summarization runs) are followed as a tool call's are.
    addReferencedSubagents(observation, result, subagents, used);
    mark.children.push(observation);
  }
  turn.children.push(mark);
}

/** `result` when it names no call and is no tool run of its own (`isToolRun`), else undefined. */
function unnamedResult(result: Obj | undefined): Obj | undefined {
  return result !== undefined && result.source_call_id === undefined && !isToolRun(result) ? result : undefined;
}

/** Whether an observation result is a tool run's that no tool call of the trajectory asked for (no `source_call_id`). */
const isToolRun = (result: Obj): boolean => result.source_call_id === undefined && isRecord(result.extra) && nonEmptyString(result.extra.event_name) !== undefined;

const metadataOfResult = (result: Obj | undefined): Obj => (isRecord(result?.extra) && isRecord(result.extra.metadata) ? result.extra.metadata : {});

/** The tool call of a run no step asked for: what it returned, failed as its end says, at the moment it ended. */
function standaloneTool(result: Obj, at: number | undefined): ViewNode {
  const metadata = metadataOfResult(result);
  const tool = node('tool', `tool ${nonEmptyString((result.extra as Obj).event_name)}`, {
    ...(at !== undefined ? { startUs: at } : {}),
    source: { result, ...(nonEmptyString(metadata.tool_call_id) !== undefined ? { tool_call_id: metadata.tool_call_id } : {}) },
    ...noteOf(preview(atifToolResult(result), 60)),
    ...(metadata['otel.status_code'] === 'ERROR' ? { error: failedToolText(metadata['error.type'], atifToolResult(result)) } : {}),
  });
  const retried = failedAttemptsNote(metadata);
  if (retried !== undefined) noteOnce(tool, retried);
  return tool;
}

/** The embedded trajectory an observation result refers to, when it is one not shown yet. */
function subagentOf(result: Obj | undefined, subagents: Map<string, Obj>, used: Set<string>): Obj | undefined {
  const ref = arr(result?.subagent_trajectory_ref).find(isRecord);
  const key = ref === undefined ? undefined : nonEmptyString(ref.trajectory_id) ?? nonEmptyString(ref.session_id);
  return key !== undefined && !used.has(key) ? subagents.get(key) : undefined;
}

const subagentKey = (child: Obj): string => nonEmptyString(child.trajectory_id) ?? nonEmptyString(child.session_id) ?? '';

function spanOf(invocation: Obj): Partial<ViewNode> {
  const start = invocation.start_timestamp;
  const end = invocation.end_timestamp;
  const span: Partial<ViewNode> = {};
  if (typeof start === 'number' && Number.isFinite(start)) span.startUs = Math.round(start * 1e6);
  if (typeof end === 'number' && Number.isFinite(end)) span.endUs = Math.round(end * 1e6);
  return span;
}

function timeOf(timestamp: unknown): Partial<ViewNode> {
  // The step's own stamp keeps its microseconds (Date.parse would drop them).
  const micros = typeof timestamp === 'string' ? parseTimestamp(timestamp) : Number.NaN;
  return Number.isNaN(micros) ? {} : { startUs: micros };
}

function noteOf(text: string | undefined): Partial<ViewNode> {
  return text === undefined ? {} : { note: text };
}

/**
 * What a call the provider ran inside the model call says instead of "not run" (it has no run of the program's):
 * how it failed, when the provider said so, or the number of results it returned when they are a list or a list of
 * `sources` (a web search) or `results` (a file search) or `groundingChunks` (Gemini's Google Search: the pages).
 */
export function providerRanNote(call: unknown): string | undefined {
  const extra = isRecord(call) && isRecord(call.extra) ? call.extra : undefined;
  if (extra?.provider_executed !== true) return undefined;
  if (typeof extra.provider_error === 'string') return `run by the provider, failed: ${preview(extra.provider_error, 80)}`;
  const result = extra.provider_result;
  const found = Array.isArray(result)
    ? result
    : isRecord(result) && isRecord(result.action) && Array.isArray(result.action.sources)
      ? result.action.sources
      : isRecord(result) && Array.isArray(result.sources)
        ? result.sources
        : isRecord(result) && Array.isArray(result.results)
          ? result.results
          : isRecord(result) && Array.isArray(result.groundingChunks)
            ? result.groundingChunks
            : undefined;
  return found === undefined ? 'run by the provider' : `run by the provider: ${found.length} ${found.length === 1 ? 'result' : 'results'}`;
}

/** How a call the provider asked the program to approve ended, as far as the file says. */
export type ProviderApprovalState = 'ran' | 'denied' | 'waiting' | 'unknown';

/**
 * What a call the provider asked the program to approve before running it (`provider_approval_request`: OpenAI's
 * hosted MCP under `require_approval`) says instead of "not run": approved and run by the provider in the next model
 * call (an approval of `once`, or a later call whose `approval_request_id` names it), denied, still waiting, or, where
 * the file keeps no decision (a default ATIF file), that approval was asked. `undefined`: not such a call.
 */
export function providerApprovalNote(call: unknown, state: ProviderApprovalState): string | undefined {
  const extra = isRecord(call) && isRecord(call.extra) ? call.extra : undefined;
  if (extra?.provider_approval_request !== true) return undefined;
  if (state === 'ran') return 'approved: run by the provider in the next model call';
  if (state === 'denied') return 'not run: approval denied';
  if (state === 'waiting') return 'not run: waiting for approval';
  return 'not run: the provider asked for approval';
}

/** The approval requests a later call the provider ran answers (its `approval_request_id`), among a trajectory's steps. */
function approvedAndRan(steps: readonly unknown[]): Set<string> {
  const ids = new Set<string>();
  for (const step of steps) {
    for (const call of arr(isRecord(step) ? step.tool_calls : undefined).filter(isRecord)) {
      const id = isRecord(call.extra) ? nonEmptyString(call.extra.approval_request_id) : undefined;
      if (id !== undefined) ids.add(id);
    }
  }
  return ids;
}

/**
 * Whether an approval's deny or timeout failed the call it answered: not when it came after the call had run and
 * ended well (a tool output guardrail replacing what the tool returned decides about the output, not the run; the
 * trajectory's call is ok and the model got the replacement).
 */
export function denialFailed(mark: ViewNode, call: ViewNode | undefined): boolean {
  const ranFirst = call !== undefined && call.error === undefined && call.endUs !== undefined && mark.startUs !== undefined && mark.startUs >= call.endUs;
  return !ranFirst;
}

/** A failing deny or timeout's error text: the decision with who made it and what they said (its note), not only its kind. */
export function denialText(choice: 'deny' | 'timeout', note: string | undefined): string {
  const decision = choice === 'deny' ? 'denied' : 'timed out';
  if (note === undefined) return decision;
  return note.startsWith('by ') ? `${decision} ${note}` : `${decision} · ${note}`;
}

/**
 * The line an approval mark shows after its title: what the request asks to
 * run; who answered (`decided_by`: a hook, a policy, a permission mode; a
 * person when unnamed), what they said (the denial the model was told, a
 * reason) and the input the call ran with when it was not the model's
 * (`changed_args`: the call's arguments, shown elsewhere, are the model's).
 */
export function approvalNote(name: string, data: Record<string, unknown>): string | undefined {
  if (name === 'hermes.approval.request') return preview(data.command, 60);
  const by = nonEmptyString(data.decided_by);
  const changed = isRecord(data.changed_args) ? `ran with changed input: ${preview(data.changed_args, 80)}` : undefined;
  // The adapters' own words for a change without a reason say nothing the changed input does not.
  const said = changed !== undefined && data.description === CHANGED_INPUT ? undefined : preview(data.description, 80);
  return [by !== undefined ? `by ${preview(by, 40)}` : undefined, said, changed].filter(Boolean).join(' · ') || undefined;
}

/**
 * What the viewer shows for a failed tool call: its error type and what the tool answered, the type once where the
 * answer already starts with it (the adapters record a thrown error's answer as `AbortError: …`).
 */
export function failedToolText(errorType: unknown, content: unknown): string {
  const type = nonEmptyString(errorType) ?? 'error';
  const answer = content === undefined || content === null ? undefined : preview(content, 80);
  if (answer === undefined) return type;
  return answer.startsWith(`${type}: `) ? answer : `${type}: ${answer}`;
}

/** What the viewer shows for an error a trajectory or event recorded (`type: message`), not for a thrown one. */
export function recordedErrorText(error: unknown): string {
  if (isRecord(error)) {
    const type = nonEmptyString(error.type) ?? nonEmptyString(error.code);
    const message = nonEmptyString(error.message);
    if (type || message) return [type, message].filter(Boolean).join(': ');
  }
  return preview(error, 100) ?? 'error';
}
