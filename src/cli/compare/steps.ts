/**
 * The steps `compare` aligns, read from a view tree (so ATIF and ATOF runs
 * compare the same way): each user message, each LLM call with the tool
 * calls it asked for (arguments, results, errors), each subagent start,
 * system message and recorded error mark, in the order the run did them,
 * subagents' steps where the subagent ran.
 *
 * Step ids: an ATIF step's `step_id` (inside a subagent prefixed with the
 * subagent's trajectory id, `sub-1/2`); an ATOF scope's or mark's uuid.
 *
 * @module
 */

import { isRecord } from '../../shared/record.ts';
import { nonEmptyString } from '../../shared/text.ts';
import { extractToolCalls } from '../../formats/atif/payload/index.ts';
import type { Json } from '../../shared/json.ts';
import { atifToolResult } from '../view/atif-tool-result.ts';
import { NEVER_ENDED, cutShortText } from '../../formats/atif/convert/cut-short.ts';
import { answerMessages } from '../view/detail.ts';
import { answeringModel } from '../view/llm-model.ts';
import type { ViewNode } from '../view/model.ts';
import { continuesConversation, textOf, userMessage } from '../view/turn-continues.ts';
import { parseJson } from '../../shared/json.ts';

export type StepKind = 'user' | 'llm' | 'agent' | 'tool' | 'subagent' | 'system' | 'mark';

export interface ToolCallFacts {
  name: string;
  arguments: unknown;
  result: unknown;
  error?: string;
  /**
   * What the call ran with where it is not what the model asked for (a person edited it: LangChain's
   * humanInTheLoopMiddleware `edit`), null where it is; an ATOF file records it, a trajectory has only what was asked.
   */
  input?: unknown;
  /** The approval decisions recorded for the call (`once`, `session by PreToolUse hook`), when the file records approvals. */
  approval?: string;
  /**
   * The file does not say whether the call failed: a trajectory keeps, as the result of a call that ran a sub-agent,
   * the sub-agent's link (its start's event) in place of the call's end, as native's converter writes it.
   */
  failureUnrecorded?: true;
  /**
   * The file does not keep what the call ran with: a trajectory keeps a run no step of it asked for (an MCP server's
   * own record of the call it answered) as its result alone. The caller's call, whose arguments its file keeps, is
   * compared with them.
   */
  argumentsUnrecorded?: true;
}

export interface RunStep {
  id: string;
  kind: StepKind;
  /** What a reader sees in a list: `LLM gpt-4o → read_file`. */
  title: string;
  model?: string;
  /** Full text: the user message, the answer, the system message. */
  message?: string;
  /**
   * How the user's turn ended, as an ATOF file records it (`completed`, `interrupted`, `failed`), with each run
   * resumed from a pause after it (`interrupted, resumed, completed`); a trajectory only the ends that did not complete
   * (`turnEndsUnfinishedOnly`), and native's none.
   */
  turnEnds?: string[];
  /**
   * `turnEnds` from a trajectory, which records only the ends that did not complete (`failed`, `interrupted`): it is
   * compared with the other file's ends of those kinds.
   */
  turnEndsUnfinishedOnly?: true;
  toolCalls: ToolCallFacts[];
  error?: string;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  /** The file records no token counts for the step (its figures above are 0): against counts, not a difference. */
  tokensUnrecorded?: true;
  costUsd?: number;
  durationUs?: number;
  /** The node the step was read from (for the compare page's detail pane). */
  node: ViewNode;
}

type Obj = Record<string, unknown>;

/** The steps of one session tree, in run order. */
export function stepsOf(root: ViewNode): RunStep[] {
  const steps: RunStep[] = [];
  const decisions = approvalDecisions(root);
  const recordsApprovals = keepsApprovals(root);
  const recordsInputs = isRecord(sourceOf(root).start);
  const toolFacts = (tool: ViewNode, asked?: ReadonlyMap<string, unknown>): ToolCallFacts => {
    const facts = callFacts(tool, asked);
    if (recordsInputs) facts.input ??= null;
    const decided = decisions.get(toolCallIdOf(tool) ?? '');
    // A call nobody was asked about (a rule let it through, no approval needed) is `none`, where the file would say.
    return recordsApprovals ? { ...facts, approval: decided?.join(', ') ?? 'none' } : facts;
  };
  /** The last user step of each agent (by step id prefix), which a resumed run's turn continues. */
  const lastUser = new Map<string, RunStep>();
  const walk = (current: ViewNode, prefix: string): void => {
    for (const child of current.children) visit(child, prefix);
  };
  const visit = (current: ViewNode, prefix: string): void => {
    switch (current.kind) {
      case 'turn': {
        // An agent handed the conversation (a handoff) starts with no user step in its trajectory: its turn, which
        // goes on with the conversation, is no step. (A run resumed after a pause is the turn it resumed: `view`
        // reads it so, with how each of its runs ended.)
        if (continuesConversation(current, lastUser.get(prefix)?.message)) {
          walk(current, prefix);
          return;
        }
        const step = base(current, 'user', prefix, { message: userMessage(current) ?? current.note ?? '' });
        if (recordsTurnEnds(current)) step.turnEnds = turnEnds(current);
        else if (trajectoryEndings(current) !== undefined) {
          step.turnEnds = trajectoryEndings(current);
          step.turnEndsUnfinishedOnly = true;
        }
        lastUser.set(prefix, step);
        steps.push(step);
        walk(current, prefix);
        return;
      }
      case 'subagent': {
        // One that made no model call and ran no tool (a sub-agent stopped before its first request was recorded): a
        // trajectory holds nothing of it, as the converter writes no empty one, so neither side shows it.
        if (!didAnything(current)) return;
        const id = subagentId(current);
        steps.push(base(current, 'subagent', prefix, { id }));
        walk(current, `${prefix}${id}/`);
        return;
      }
      case 'llm':
      case 'scope': {
        // A trajectory's link to sub-agents no tool call started (LangGraph `Send` workers, an input guardrail's
        // agent): no step of the run, which an ATOF file has no counterpart of; the sub-agents are the steps.
        if (current.source?.startsAgents === true) {
          walk(current, prefix);
          return;
        }
        const tools = current.children.filter((child) => child.kind === 'tool');
        const calls = inAskedOrder(current, lastRuns(tools));
        const asked = askedArguments(current);
        const step = base(current, current.kind === 'llm' ? 'llm' : 'agent', prefix, { toolCalls: calls.map((tool) => toolFacts(tool, asked)) });
        const message = answerText(current);
        if (message !== undefined) step.message = message;
        const model = modelOf(current);
        if (model !== undefined) step.model = model;
        if (calls.length > 0) step.title = `${step.title} → ${calls.map((tool) => toolName(tool)).join(', ')}`;
        steps.push(step);
        // Subagents (and anything else) the tool calls started.
        for (const tool of tools) walk(tool, prefix);
        for (const other of current.children) if (other.kind !== 'tool') visit(other, prefix);
        return;
      }
      case 'tool':
        steps.push(base(current, 'tool', prefix, { toolCalls: [toolFacts(current)] }));
        walk(current, prefix);
        return;
      case 'mark':
        if (current.title === 'system') steps.push(base(current, 'system', prefix, { message: systemText(current) ?? current.note ?? '' }));
        else if (current.error !== undefined) steps.push(base(current, 'mark', prefix));
        walk(current, prefix);
        return;
      case 'session':
        walk(current, prefix);
        return;
    }
  };
  walk(root, '');
  return steps;
}

/**
 * One node per tool call: a call run again with its id (LangGraph runs a tool that called interrupt() again from
 * its start when resumed) is the call the trajectory lists once, with its last run's result, where it first ran.
 */
function lastRuns(tools: readonly ViewNode[]): ViewNode[] {
  const byId = new Map<string, number>();
  const out: ViewNode[] = [];
  for (const tool of tools) {
    const id = toolCallIdOf(tool);
    const seen = id === undefined ? undefined : byId.get(id);
    if (seen !== undefined) out[seen] = tool;
    else {
      if (id !== undefined) byId.set(id, out.length);
      out.push(tool);
    }
  }
  return out;
}

/**
 * An LLM call's tool calls in the order its answer asked for them, as the trajectory lists them: an ATOF file has
 * them in the order they started (a call run after a resume, or after the others, comes later).
 */
function inAskedOrder(llm: ViewNode, calls: readonly ViewNode[]): ViewNode[] {
  const source = sourceOf(llm);
  const asked = isRecord(source.step)
    ? (Array.isArray(source.step.tool_calls) ? source.step.tool_calls : []).map((call) => (isRecord(call) ? nonEmptyString(call.tool_call_id) : undefined))
    : isRecord(source.end)
      ? (extractToolCalls(source.end.data as Json) ?? []).map((call) => call.tool_call_id)
      : [];
  const rank = (tool: ViewNode) => {
    const index = asked.indexOf(toolCallIdOf(tool));
    return index === -1 ? asked.length : index;
  };
  return calls.map((tool, index) => ({ tool, index })).sort((x, y) => rank(x.tool) - rank(y.tool) || x.index - y.index).map(({ tool }) => tool);
}

function base(current: ViewNode, kind: StepKind, prefix: string, extra: Partial<RunStep> = {}): RunStep {
  const step: RunStep = {
    id: `${prefix}${extra.id ?? idOf(current)}`,
    kind,
    title: current.title,
    toolCalls: [],
    promptTokens: current.tokens?.prompt ?? 0,
    completionTokens: current.tokens?.completion ?? 0,
    cachedTokens: current.tokens?.cached ?? 0,
    node: current,
    ...extra,
  };
  if (extra.id !== undefined) step.id = `${prefix}${extra.id}`;
  if (current.error !== undefined) step.error = current.error;
  if (current.tokens === undefined) step.tokensUnrecorded = true;
  if (current.costUsd !== undefined) step.costUsd = current.costUsd;
  if (current.startUs !== undefined && current.endUs !== undefined) step.durationUs = Math.max(0, current.endUs - current.startUs);
  return step;
}

const sourceOf = (current: ViewNode): Obj => current.source ?? {};

function idOf(current: ViewNode): string {
  const source = sourceOf(current);
  if (isRecord(source.step) && source.step.step_id !== undefined) return String(source.step.step_id);
  for (const key of ['start', 'event'] as const) {
    const record = source[key];
    if (isRecord(record) && nonEmptyString(record.uuid)) return String(record.uuid);
  }
  return current.title;
}

/** Whether anything below a node is a step of its own (a model call, a tool, a system message or error). */
function didAnything(current: ViewNode): boolean {
  return current.children.some((child) => (child.kind !== 'turn' && child.kind !== 'session' && child.kind !== 'subagent') || didAnything(child));
}

function subagentId(current: ViewNode): string {
  const source = sourceOf(current);
  if (isRecord(source.start) && nonEmptyString(source.start.uuid)) return String(source.start.uuid);
  return current.sessionId ?? current.title.replace(/^subagent /, '');
}

function toolName(tool: ViewNode): string {
  return tool.title.replace(/^tool /, '');
}

/**
 * The approval decisions in a tree by the tool call they answered: under the call, or in the turn when the
 * framework asked before the call started. A file that records no approvals (an exporter ATIF file) has none.
 */
function approvalDecisions(root: ViewNode): Map<string, string[]> {
  const byCall = new Map<string, string[]>();
  const walk = (current: ViewNode): void => {
    const event = sourceOf(current).event;
    if (current.kind === 'mark' && current.title.startsWith('approval: ') && isRecord(event)) {
      const data = isRecord(event.data) ? event.data : {};
      const metadata = isRecord(event.metadata) ? event.metadata : {};
      const id = nonEmptyString(metadata.tool_call_id) ?? nonEmptyString(data.tool_call_id);
      const by = nonEmptyString(data.decided_by);
      if (id !== undefined) byCall.set(id, [...(byCall.get(id) ?? []), `${current.title.slice('approval: '.length)}${by !== undefined ? ` by ${by}` : ''}`]);
    }
    for (const child of current.children) walk(child);
  };
  walk(root);
  return byCall;
}

/** Whether the file a tree came from records approvals: an ATOF file, an ATIF file with `observed_events` (plugin-host). */
function keepsApprovals(root: ViewNode): boolean {
  const source = sourceOf(root);
  return isRecord(source.start) || (isRecord(source.extra) && Array.isArray(source.extra.observed_events));
}

function toolCallIdOf(tool: ViewNode): string | undefined {
  const source = sourceOf(tool);
  if (isRecord(source.call)) return nonEmptyString(source.call.tool_call_id);
  const start = isRecord(source.start) ? source.start : {};
  return isRecord(start.category_profile) ? nonEmptyString(start.category_profile.tool_call_id) : nonEmptyString(source.tool_call_id);
}

/** The arguments an ATOF LLM call's answer asked its tool calls to run with, by tool call id (as the trajectory lists them). */
function askedArguments(llm: ViewNode): ReadonlyMap<string, unknown> | undefined {
  const end = sourceOf(llm).end;
  if (!isRecord(end)) return undefined;
  return new Map((extractToolCalls(end.data as Json) ?? []).map((call) => [call.tool_call_id, call.arguments as unknown]));
}

const isEmpty = (value: unknown) => value === undefined || value === null || value === '' || (isRecord(value) && Object.keys(value).length === 0);

/** A call's facts; from an ATOF file its arguments are those the model asked for, and what it ran with where that differs. */
function callFacts(tool: ViewNode, asked?: ReadonlyMap<string, unknown>): ToolCallFacts {
  const source = sourceOf(tool);
  let args: unknown;
  let result: unknown;
  let input: unknown;
  let failureUnrecorded = false;
  let argumentsUnrecorded = false;
  // A trajectory's call, or a run no step of it asked for (an MCP server's call): its result alone.
  if (isRecord(source.call) || isRecord(source.result)) {
    args = isRecord(source.call) ? source.call.arguments : undefined;
    result = atifToolResult(source.result);
    failureUnrecorded = isRecord(source.result) && keepsSubagentLinkAsEnd(source.result);
    argumentsUnrecorded = !isRecord(source.call);
  } else {
    const ran = isRecord(source.start) ? source.start.data : undefined;
    const id = toolCallIdOf(tool);
    const wanted = id === undefined ? undefined : asked?.get(id);
    args = wanted ?? ran;
    if (wanted !== undefined && canonical(ran) !== canonical(wanted) && !(isEmpty(ran) && isEmpty(wanted))) input = ran;
    result = isRecord(source.end) ? source.end.data : undefined;
  }
  return {
    name: toolName(tool),
    arguments: args ?? null,
    ...(input !== undefined ? { input } : {}),
    result: result ?? null,
    ...(tool.error !== undefined ? { error: tool.error } : source.neverEnded === true ? { error: cutShortText(NEVER_ENDED) } : {}),
    ...(failureUnrecorded ? { failureUnrecorded: true } : {}),
    ...(argumentsUnrecorded ? { argumentsUnrecorded: true } : {}),
  };
}

/** Whether a trajectory's result holds the event of the sub-agent it links to (the call's own end, and its status, merged away). */
function keepsSubagentLinkAsEnd(result: Obj): boolean {
  const uuid = isRecord(result.extra) ? nonEmptyString(result.extra.event_uuid) : undefined;
  const refs = Array.isArray(result.subagent_trajectory_ref) ? result.subagent_trajectory_ref : [];
  return uuid !== undefined && refs.some((ref) => isRecord(ref) && ref.trajectory_id === uuid);
}

/**
 * The model of an LLM call as the trajectory names it: the model the response reports (`gpt-4o-2024-08-06`), else
 * the one the request named (`gpt-4o`), so one call read from either file names one model.
 */
function modelOf(current: ViewNode): string | undefined {
  const source = sourceOf(current);
  if (isRecord(source.step)) return nonEmptyString(source.step.model_name);
  return answeringModel(isRecord(source.start) ? source.start : {}, isRecord(source.end) ? source.end : {});
}

/** Whether a turn comes from an ATOF file's turn marks, which record how each turn ended. */
function recordsTurnEnds(turn: ViewNode): boolean {
  const event = sourceOf(turn).event;
  return isRecord(event) && event.name === 'hermes.turn.start';
}

/** An end of a turn that did not complete: the kinds a trajectory records (`turnEndsUnfinishedOnly`). */
export const isUnfinishedEnd = (end: string): boolean => end === 'failed' || end === 'interrupted';

/** The ends a trajectory recorded for a turn that did not complete (`extra.turn_ends`), in order; undefined: none. */
function trajectoryEndings(turn: ViewNode): string[] | undefined {
  const endings = sourceOf(turn).endings;
  return Array.isArray(endings) && endings.length > 0 ? (endings as string[]) : undefined;
}

/**
 * How an ATOF turn ended, each run of it (`completed`, `interrupted`, `failed`; `no end recorded`), with each run
 * resumed after a pause that `view` read as the same turn (`interrupted, resumed, completed`).
 */
function turnEnds(turn: ViewNode): string[] {
  const source = sourceOf(turn);
  const resumed = Array.isArray(source.resumedRuns) ? source.resumedRuns.filter(isRecord) : [];
  const end = (ending: unknown) => nonEmptyString(ending) ?? 'no end recorded';
  // A turn whose calls never ended, its session never closed (a process that died): the plugin's trajectory of it
  // says it was cut short (`formats/atif/convert/cut-short.ts`), and so it reads here.
  const last = source.ending === undefined && source.callsNeverEnded === true ? 'interrupted' : end(source.ending);
  return [last, ...resumed.flatMap((run) => ['resumed', end(run.ending)])];
}

function answerText(current: ViewNode): string | undefined {
  const source = sourceOf(current);
  if (isRecord(source.step)) return textOf(source.step.message) ?? '';
  if (!isRecord(source.end)) return undefined;
  const answer = answerMessages(source.end.data);
  return answer ? answer.map((message) => message.text).join('\n') : textOf(source.end.data);
}

function systemText(current: ViewNode): string | undefined {
  const source = sourceOf(current);
  return isRecord(source.step) ? textOf(source.step.message) : undefined;
}

/** JSON with object keys sorted, so `{a,b}` and `{b,a}` compare equal; a JSON string argument compares as what it encodes. */
export function canonical(value: unknown): string {
  if (typeof value === 'string') {
    const trimmed = value.trim();
    if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
      try {
        return canonical(parseJson(trimmed) as unknown);
      } catch {
        // Not JSON: compared as the text it is.
      }
    }
    return JSON.stringify(value);
  }
  return JSON.stringify(value, (_key, inner: unknown) => {
    if (inner === null || typeof inner !== 'object' || Array.isArray(inner)) return inner;
    return Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));
  }) ?? 'undefined';
}
