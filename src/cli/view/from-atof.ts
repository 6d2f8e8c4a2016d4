/**
 * The view trees of ATOF events, one per top-level agent scope.
 *
 * Scopes become nodes (agent: session or subagent; llm; tool; a custom
 * scope with `nemo_relay_scope_role: turn` is a turn). The Hermes plugin
 * has no turn scopes: its turns are `hermes.turn.start` marks, so calls
 * carrying a `metadata.turn_id` are grouped under that turn. A subagent that
 * starts while a tool call of its parent is open (the delegating tool) is
 * nested under that tool call, and an approval under the tool call it
 * approves while that call runs (asked before it starts, it stays in the
 * turn; a call asked about that never starts is shown, not run). A tool call
 * nests under the LLM call whose answer asked for it, found by request id,
 * else by its tool call id (a call run after a resume). A run resumed after a pause is the turn it resumed
 * (`settleTurns`), and a tool call no LLM call asked for is listed where it ended, as the trajectory has them.
 * Errors: a tool end with `otel.status_code: ERROR`, an LLM end with an `error.type` or an `error` in its response.
 *
 * @module
 */

import { parseSessionScopeName } from '../../plugin/session-scope.ts';
import { parseTimestamp } from '../../shared/clock.ts';
import type { Json } from '../../relay/contract.ts';
import type { AtofEvent } from '../../formats/atof/types.ts';
import { extractMetrics, extractToolCalls } from '../../formats/atif/payload/index.ts';
import { approvalNote, denialFailed, denialText, failedToolText, providerApprovalNote, providerRanNote, recordedErrorText, withServedBy } from './from-atif.ts';
import { asRemoteSession, containsNode, costOf, failedAttemptsNote, guardrailsNote, node, noteOnce, preview, spanFromChildren, tokensOf, turnEndLabel, type ViewNode } from './model.ts';
import { nonEmptyString, quotedValue } from '../../shared/text.ts';
import { answeringModel, atofLlmModel, llmTitle } from './llm-model.ts';
import { isRecord } from '../../shared/record.ts';
import { addTurnNote, settleTurns, type TurnNote } from './atof-turns.ts';
import { CutShortCalls } from './atof-cut-short.ts';

type Obj = Record<string, unknown>;


interface Placed {
  node: ViewNode;
  /** The agent scope this node belongs to (itself for agents). */
  agent: AgentState;
}

interface AgentState {
  node: ViewNode;
  /** The session id its title shows. */
  sessionId: string;
  turns: Map<string, ViewNode>;
  /** Its turns in the order they started, with the row each was put in (`settleTurns` numbers them). */
  turnsInOrder: { turn: ViewNode; container: ViewNode }[];
  /** What each turn's ends said (`TurnNote`), written on its row once a resumed run is read as the turn it resumed. */
  turnNotes: Map<ViewNode, TurnNote[]>;
  /** What its row says of the agent, as its trajectory's `agent` block does (`AgentAbout`). */
  about: AgentAbout;
  /** Tool calls started and not yet ended, newest last. */
  openTools: { uuid: string; node: ViewNode; toolCallId?: string }[];
  /** LLM calls by `api_request_id`, so the tool calls they requested nest under them. */
  llmByRequest: Map<string, ViewNode>;
  /**
   * LLM calls by the tool calls their responses asked for: a call run after the run resumed (an approval answered)
   * starts in a later turn, with no request id of the call that asked for it.
   */
  llmByToolCall: Map<string, { llm: ViewNode; call: { function_name: string; arguments: unknown } }>;
  /** Tool calls by `tool_call_id`, ended or not: a handoff's transfer call ends before the agent it hands to starts. */
  toolsByCallId: Map<string, ViewNode>;
  /** Whether a tool call started without a `tool_call_id`: then a call the model asked for cannot be told not to have run. */
  toolWithoutId: boolean;
  /** The subagents it started, by their session id, for the status their stop mark reports. */
  subagentsBySession: Map<string, ViewNode>;
  /**
   * Stop marks' statuses of sessions not seen yet, by session id: a remote session's lines, in the one file its
   * process and its caller's append to, may come after the caller's stop mark of it (the caller flushed first).
   */
  stopsBySession: Map<string, string>;
  /** Denying approval responses by `tool_call_id`: the call they denied may start after them (the OpenAI Agents SDK's). */
  denialsByCallId: Map<string, ViewNode>;
  /**
   * Approval marks asked before their call started (the OpenAI Agents SDK, LangGraph's human in the loop and the AI
   * SDK ask before they run it), by `tool_call_id`, with the row each was put in; they stay there, in time order,
   * unless the call never starts.
   */
  approvalsByCallId: Map<string, { marks: { mark: ViewNode; container: ViewNode }[]; answered: boolean; denied?: boolean }>;
}

/**
 * `parents`: scopes whose parent scope their start names by span id only (an MCP server's session continuing a caller
 * that came as a W3C `traceparent`), and the scope `linkAtofFiles` found it names; the events themselves are shown as
 * written.
 */
export function treesFromAtof(events: readonly AtofEvent[], parents: ReadonlyMap<string, string> = new Map()): ViewNode[] {
  const roots: ViewNode[] = [];
  const scopes = new Map<string, Placed>();
  const agents = new Map<string, AgentState>();
  const cutShort = new CutShortCalls();

  const turnOf = (agent: AgentState, turnId: string, at?: number): ViewNode => {
    let turn = agent.turns.get(turnId);
    if (!turn) {
      turn = node('turn', 'turn', { id: turnId, ...(at !== undefined ? { startUs: at } : {}) });
      agent.turns.set(turnId, turn);
      agent.node.children.push(turn);
      agent.turnsInOrder.push({ turn, container: agent.node });
    }
    return turn;
  };

  /** Where a child of `parentUuid` with `metadata` goes: its turn, or the parent itself. */
  const containerFor = (parent: Placed, metadata: Obj, at: number | undefined): ViewNode => {
    if (parent.node !== parent.agent.node) return parent.node;
    const turnId = nonEmptyString(metadata.turn_id);
    return turnId ? turnOf(parent.agent, turnId, at) : parent.node;
  };

  /** An agent under the scope it names as its parent: the tool call that started it, else its parent's turn. */
  const placeAgent = (child: AgentState, parent: Placed, metadata: Obj, time: number | undefined): void => {
    // The call that started it: its parent scope when that is the call (a remote session's), else by id (a handoff's
    // transfer call has ended by now), else the tool call still open.
    const startedBy = nonEmptyString(metadata.parent_tool_call_id);
    const delegating = (parent.node.kind === 'tool' ? parent.node : undefined) ?? (startedBy !== undefined ? parent.agent.toolsByCallId.get(startedBy) : undefined) ?? parent.agent.openTools.at(-1)?.node;
    const parentTurn = nonEmptyString(metadata.parent_turn_id);
    const container = delegating ?? (parentTurn ? turnOf(parent.agent, parentTurn, time) : containerFor(parent, metadata, time));
    if (child.node.kind === 'session') asRemoteSession(child.node);
    container.children.push(child.node);
    parent.agent.subagentsBySession.set(child.sessionId, child.node);
    const stopped = parent.agent.stopsBySession.get(child.sessionId);
    if (stopped !== undefined) {
      parent.agent.stopsBySession.delete(child.sessionId);
      showStopStatus(child.node, stopped);
    }
  };

  /**
   * Sessions whose parent scope had not started when they did, by that scope's uuid: an MCP server's session in the
   * one file its process and its caller's both append to, written before the caller's lines when the server flushed
   * first. Each goes under its parent when that starts, unless the parent is inside it.
   */
  const awaiting = new Map<string, { state: AgentState; metadata: Obj; time: number | undefined }[]>();
  const adopt = (uuid: string, parent: Placed): void => {
    const waiting = awaiting.get(uuid);
    if (waiting === undefined) return;
    awaiting.delete(uuid);
    for (const { state, metadata, time } of waiting) {
      if (containsNode(state.node, parent.node)) continue;
      roots.splice(roots.indexOf(state.node), 1);
      placeAgent(state, parent, metadata, time);
    }
  };

  for (const event of events) {
    if (!isRecord(event)) continue;
    const at = parseTimestamp(event.timestamp);
    const time = Number.isNaN(at) ? undefined : at;
    const metadata = isRecord(event.metadata) ? event.metadata : {};
    const parentUuid = (event.kind !== 'mark' && event.scope_category === 'start' ? parents.get(event.uuid) : undefined) ?? event.parent_uuid;
    const parent = typeof parentUuid === 'string' ? scopes.get(parentUuid) : undefined;

    if (event.kind === 'mark') {
      if (!parent) continue;
      placeMark(event, metadata, time, parent, turnOf, containerFor);
      continue;
    }
    if (event.scope_category === 'end') {
      const placed = scopes.get(event.uuid);
      if (placed) {
        finishScope(placed.node, event, metadata, time, placed.agent);
        cutShort.ended(placed.node, metadata, event.data);
      }
      continue;
    }
    // A scope start.
    const category = event.category;
    if (category === 'agent') {
      const sessionId = nonEmptyString(metadata.session_id) ?? event.uuid;
      // A session of its own under a scope of the file continues another process's call (an MCP server's): it is
      // shown as a remote session, as a trajectory another file references is.
      const subagent = parent !== undefined && metadata.nemo_relay_scope_role !== 'session';
      const about = aboutAgent(event, metadata, subagent ? parent.agent.about : undefined);
      const note = aboutText(about);
      const agentNode = node(subagent ? 'subagent' : 'session', `${subagent ? 'subagent' : 'session'} ${sessionId}`, {
        sessionId,
        ...(time !== undefined ? { startUs: time } : {}),
        ...noteOf(note),
        source: { start: event },
      });
      about.shown = note;
      const state: AgentState = { node: agentNode, sessionId, turns: new Map(), turnsInOrder: [], turnNotes: new Map(), about, openTools: [], llmByRequest: new Map(), llmByToolCall: new Map(), toolsByCallId: new Map(), toolWithoutId: false, subagentsBySession: new Map(), stopsBySession: new Map(), denialsByCallId: new Map(), approvalsByCallId: new Map() };
      agents.set(event.uuid, state);
      scopes.set(event.uuid, { node: agentNode, agent: state });
      if (parent) {
        placeAgent(state, parent, metadata, time);
      } else {
        roots.push(agentNode);
        // A remote session's parent may come later: two processes appending to one file write in the order they flush.
        if (continuesCall(event)) {
          const named = parents.get(event.uuid) ?? event.parent_uuid;
          awaiting.set(named, [...(awaiting.get(named) ?? []), { state, metadata, time }]);
        }
      }
      adopt(event.uuid, { node: agentNode, agent: state });
      continue;
    }
    if (!parent) continue;
    let created: ViewNode;
    let again = false;
    const profile = isRecord(event.category_profile) ? event.category_profile : {};
    if (category === 'llm') {
      created = node('llm', llmTitle(nonEmptyString(profile.model_name), event.name), time !== undefined ? { startUs: time } : {});
    } else if (category === 'tool') {
      created = node('tool', `tool ${event.name}`, { ...(time !== undefined ? { startUs: time } : {}), ...noteOf(preview(event.data, 60)) });
      // A call run again under its id (LangGraph runs a tool that called interrupt() again when resumed) is one
      // call, as the trajectory counts it: the later run is counted once with the first.
      again = nonEmptyString(profile.tool_call_id) !== undefined && parent.agent.toolsByCallId.has(nonEmptyString(profile.tool_call_id)!);
      parent.agent.openTools.push({ uuid: event.uuid, node: created, ...(nonEmptyString(profile.tool_call_id) ? { toolCallId: nonEmptyString(profile.tool_call_id)! } : {}) });
      if (nonEmptyString(profile.tool_call_id)) parent.agent.toolsByCallId.set(nonEmptyString(profile.tool_call_id)!, created);
      else parent.agent.toolWithoutId = true;
    } else if (metadata.nemo_relay_scope_role === 'turn') {
      const turnId = nonEmptyString(metadata.turn_id);
      created = node('turn', 'turn', { ...(turnId !== undefined ? { id: turnId } : {}), ...(time !== undefined ? { startUs: time } : {}), ...noteOf(preview(event.data)) });
    } else {
      created = node('scope', `${category ?? 'scope'} ${event.name}`, time !== undefined ? { startUs: time } : {});
    }
    created.source = again ? { start: event, runAgain: true } : { start: event };
    if (created.kind === 'llm' || created.kind === 'tool') cutShort.started(created);
    const requestId = nonEmptyString(metadata.api_request_id);
    const callId = nonEmptyString(profile.tool_call_id);
    const requester = category !== 'tool' ? undefined : (requestId ? parent.agent.llmByRequest.get(requestId) : undefined) ?? (callId ? parent.agent.llmByToolCall.get(callId)?.llm : undefined);
    const container = requester ?? containerFor(parent, metadata, time);
    container.children.push(created);
    if (created.kind === 'turn') parent.agent.turnsInOrder.push({ turn: created, container });
    if (category === 'llm' && requestId) parent.agent.llmByRequest.set(requestId, created);
    scopes.set(event.uuid, { node: created, agent: parent.agent });
    adopt(event.uuid, { node: created, agent: parent.agent });
  }
  // A run resumed from its state reopens the agent that asked (a new scope): its calls may start there.
  const started = new Set([...agents.values()].flatMap((agent) => [...agent.toolsByCallId.keys()]));
  const anyWithoutId = [...agents.values()].some((agent) => agent.toolWithoutId);
  for (const agent of agents.values()) showCallsNeverRun(agent, started, anyWithoutId);
  for (const agent of agents.values()) showAgentModel(agent);
  cutShort.show(agents.values());
  for (const agent of agents.values()) settleTurns(agent.turnsInOrder, agent.turnNotes);
  for (const agent of agents.values()) {
    listRunsWhereTheyEnded(agent.node);
    for (const { turn } of agent.turnsInOrder) listRunsWhereTheyEnded(turn);
  }
  for (const root of roots) spanFromChildren(root);
  return roots;
}

/**
 * Whether an agent scope is a session of its own that names a parent scope: one that continues another process's
 * call (an MCP server's session under its caller's tool call), whose parent may be written after it. `AtofIndex`
 * groups a file's lines into sessions by the same rule.
 */
export function continuesCall(event: AtofEvent): event is AtofEvent & { parent_uuid: string } {
  return event.category === 'agent' && typeof event.parent_uuid === 'string' && isRecord(event.metadata) && event.metadata.nemo_relay_scope_role === 'session';
}

/**
 * A tool call no LLM call asked for, in a session or its turn (an MCP server's own call), listed where it ended: its
 * trajectory keeps its result in a step at the moment it ended, not when it started, so the rows before it are
 * those that began (an LLM call: ended) by then, read from either file. Its row keeps its start and duration.
 */
function listRunsWhereTheyEnded(row: ViewNode): void {
  for (const run of row.children.filter((child) => child.kind === 'tool' && child.endUs !== undefined)) {
    const from = row.children.indexOf(run);
    row.children.splice(from, 1);
    let at = from;
    while (at < row.children.length && (stepTime(row.children[at]!) ?? Number.POSITIVE_INFINITY) <= run.endUs!) at++;
    row.children.splice(at, 0, run);
  }
}

/** When a row's trajectory step is stamped: an LLM or tool call's when it ended, any other row's when it began. */
function stepTime(row: ViewNode): number | undefined {
  return row.kind === 'llm' || row.kind === 'tool' ? (row.endUs ?? row.startUs) : row.startUs;
}

/** The marks, out of the rows they were put in. */
function takeMarks(marks: readonly { mark: ViewNode; container: ViewNode }[]): ViewNode[] {
  for (const { mark, container } of marks) container.children.splice(container.children.indexOf(mark), 1);
  return marks.map(({ mark }) => mark);
}

/**
 * A call the model asked for that never started (the run stopped first: while its approval was pending and was not
 * resumed, or the middleware ran none of the calls of an answer it interrupted for others): under the LLM call that
 * asked for it, it says it did not run, and why when an approval was asked, as the trajectory lists it among the
 * step's tool calls without a result. Its approval marks go under it. Where a call started without an id, which
 * call it was cannot be told, and only the calls asked about are shown.
 */
function showCallsNeverRun(agent: AgentState, started: ReadonlySet<string>, anyWithoutId: boolean): void {
  for (const [toolCallId, asked] of agent.approvalsByCallId) {
    if (started.has(toolCallId)) continue;
    const asker = agent.llmByToolCall.get(toolCallId);
    const [requester, call] = [asker?.llm, asker?.call];
    // A provider's request: approved, the provider runs the call itself in the next model call (a call of its own).
    const provider = providerApprovalNote(call, !asked.answered ? 'waiting' : asked.denied === true ? 'denied' : 'ran');
    const tool = notRun(toolCallId, call, provider ?? (asked.answered ? 'not run' : 'not run: waiting for approval'));
    const container = asked.marks[0]!.container;
    tool.children.push(...takeMarks(asked.marks));
    (requester ?? container).children.push(tool);
  }
  if (!anyWithoutId) {
    for (const [toolCallId, { llm, call }] of agent.llmByToolCall) {
      if (!started.has(toolCallId) && !agent.approvalsByCallId.has(toolCallId)) llm.children.push(notRun(toolCallId, call, providerApprovalNote(call, 'unknown') ?? providerRanNote(call) ?? 'not run'));
    }
  }
  agent.approvalsByCallId.clear();
}

function notRun(toolCallId: string, call: { function_name: string; arguments: unknown } | undefined, why: string): ViewNode {
  return node('tool', `tool ${call?.function_name ?? '?'}`, {
    note: [preview(call?.arguments, 60), why].filter(Boolean).join(' · '),
    source: { tool_call_id: toolCallId, ...(call !== undefined ? { call } : {}) },
  });
}

function finishScope(target: ViewNode, event: AtofEvent, metadata: Obj, time: number | undefined, agent: AgentState): void {
  if (time !== undefined) target.endUs = time;
  target.source = { ...target.source, end: event };
  const data = event.data as Json;
  if (target.kind === 'llm') {
    // Started, the row names the model its start names; ended, the model that answered (and the one asked where
    // different), as the call's trajectory step does.
    const start = isRecord(target.source?.start) ? (target.source.start as Obj) : {};
    target.title = llmTitle(atofLlmModel(start, event as unknown as Obj), start.name);
    agent.about.answers.push({ model: answeringModel(start, event as unknown as Obj), failed: nonEmptyString(metadata['error.type']) !== undefined });
    target.title = isRecord(data) ? withServedBy(target.title, data.served_by, data.failed_upstreams) : target.title;
    const metrics = extractMetrics(data, event.name);
    const tokens = tokensOf(metrics);
    if (tokens) target.tokens = tokens;
    const cost = costOf(metrics) ?? usageCost(data);
    if (cost !== undefined) target.costUsd = cost;
    for (const call of extractToolCalls(data) ?? []) agent.llmByToolCall.set(call.tool_call_id, { llm: target, call });
    const failure = isRecord(data) ? data.error : undefined;
    if (failure !== undefined && failure !== null) target.error = recordedErrorText(failure);
    else if (nonEmptyString(metadata['error.type'])) target.error = nonEmptyString(metadata['error.type'])!;
    else target.note = preview(answerOf(data));
  } else if (target.kind === 'tool') {
    // A call cut short (LangGraph's interrupt() inside the tool, run again when resumed) says so.
    if (metadata.status === 'interrupted') target.note = [target.note, 'interrupted'].filter(Boolean).join(' · ');
    const retried = failedAttemptsNote(metadata);
    if (retried !== undefined) noteOnce(target, retried);
    const index = agent.openTools.findIndex((open) => open.node === target);
    const toolCallId = index === -1 ? undefined : agent.openTools[index]!.toolCallId;
    if (index !== -1) agent.openTools.splice(index, 1);
    if (metadata['otel.status_code'] === 'ERROR') {
      target.error = failedToolText(metadata['error.type'], data);
      // A denied approval and the call it denied are one failure, as the trajectory counts it: the call carries it.
      const denial = toolCallId === undefined ? undefined : agent.denialsByCallId.get(toolCallId);
      if (denial !== undefined) {
        delete denial.error;
        agent.denialsByCallId.delete(toolCallId!);
      }
    }
  }
}

/** A subagent that did not complete (paused for an approval, failed) says so on its row; its failed calls are errors already. */
function showStopStatus(child: ViewNode, status: string): void {
  if (status !== 'completed') child.note = [child.note, status].filter(Boolean).join(' · ');
}

function placeMark(
  event: AtofEvent,
  metadata: Obj,
  time: number | undefined,
  parent: Placed,
  turnOf: (agent: AgentState, turnId: string, at?: number) => ViewNode,
  containerFor: (parent: Placed, metadata: Obj, at: number | undefined) => ViewNode,
): void {
  const data = isRecord(event.data) ? event.data : {};
  const turnId = nonEmptyString(metadata.turn_id) ?? nonEmptyString(data.turn_id);
  const at = time !== undefined ? { startUs: time } : {};
  switch (event.name) {
    case 'hermes.turn.start': {
      if (!turnId) return;
      const turn = turnOf(parent.agent, turnId, time);
      // A resumed run's turn has an empty user message: no note, not “undefined”.
      const message = preview(data.user_message);
      if (turn.note === undefined && message !== undefined) turn.note = `“${message}”`;
      // The turn's record (its user message, whole) for the detail pane and `compare`.
      if (turn.source === undefined) turn.source = { event };
      return;
    }
    case 'hermes.turn.end':
    case 'hermes.session.end': {
      if (!turnId || time === undefined) return;
      const turn = turnOf(parent.agent, turnId, time);
      if (turn.endUs === undefined || time > turn.endUs) turn.endUs = time;
      // A turn cut short (paused for an approval, stopped by the user) says so, as a sub-agent's row does; one that
      // failed after its model calls answered (an answer the program could not parse, a run the framework stopped) has
      // no failed call or tool to show it: its row says so, with the error's type.
      const ending = data.interrupted === true ? 'interrupted' : data.failed === true ? 'failed' : data.completed === true ? 'completed' : undefined;
      const label = turnEndLabel(ending, data.error_type);
      if (label !== undefined) addTurnNote(parent.agent.turnNotes, turn, { text: label, ending: true });
      const guardrails = guardrailsNote(data.guardrails);
      if (guardrails !== undefined) addTurnNote(parent.agent.turnNotes, turn, { text: guardrails, ending: false });
      // How it ended, for `compare` (the last end that says).
      if (ending !== undefined) turn.source = { ...turn.source, ending };
      return;
    }
    case 'hermes.subagent.stop': {
      const status = nonEmptyString(data.child_status);
      const childId = nonEmptyString(data.child_session_id);
      if (status === undefined || childId === undefined) return;
      const child = parent.agent.subagentsBySession.get(childId);
      if (child !== undefined) showStopStatus(child, status);
      else parent.agent.stopsBySession.set(childId, status);
      return;
    }
    case 'hermes.subagent.start':
    case 'session.start':
    case 'session.end':
      return;
    case 'hermes.approval.request':
    case 'hermes.approval.response': {
      const toolCallId = nonEmptyString(metadata.tool_call_id) ?? nonEmptyString(data.tool_call_id);
      const tool = parent.agent.openTools.find((open) => open.toolCallId !== undefined && open.toolCallId === toolCallId);
      const title = event.name === 'hermes.approval.request' ? 'approval requested' : `approval: ${nonEmptyString(data.choice) ?? '?'}`;
      const mark = node('mark', title, { ...at, ...noteOf(approvalNote(event.name, data)), source: { event } });
      const call = toolCallId === undefined ? undefined : parent.agent.toolsByCallId.get(toolCallId);
      if (event.name === 'hermes.approval.response' && (data.choice === 'deny' || data.choice === 'timeout') && denialFailed(mark, call)) {
        mark.error = denialText(data.choice, mark.note);
        if (toolCallId !== undefined) parent.agent.denialsByCallId.set(toolCallId, mark);
      }
      if (tool !== undefined) {
        tool.node.children.push(mark);
        return;
      }
      // A call that has run already (a decision recorded after it) keeps the mark where it falls.
      const container = containerFor(parent, metadata, time);
      container.children.push(mark);
      if (toolCallId === undefined || parent.agent.toolsByCallId.has(toolCallId)) return;
      let asked = parent.agent.approvalsByCallId.get(toolCallId);
      if (asked === undefined) parent.agent.approvalsByCallId.set(toolCallId, (asked = { marks: [], answered: false }));
      asked.marks.push({ mark, container });
      if (event.name === 'hermes.approval.response') asked.answered = true;
      if (mark.error !== undefined) asked.denied = true;
      return;
    }
    case 'hermes.api.error': {
      const mark = node('mark', 'API error (no open request)', { ...at, error: recordedErrorText(data.error ?? data.reason), source: { event } });
      containerFor(parent, metadata, time).children.push(mark);
      return;
    }
    default:
      // The title is the name as written; a name that is not a string (the validator's atof.type) is shown as its JSON text.
      containerFor(parent, metadata, time).children.push(node('mark', typeof event.name === 'string' ? event.name : quotedValue(event.name), { ...at, source: { event } }));
  }
}

/** A cost a response's `usage` states directly (`usage.cost` as a number, `usage.cost_usd`). */
function usageCost(data: Json): number | undefined {
  const usage = isRecord(data) && isRecord(data.usage) ? data.usage : {};
  const value = typeof usage.cost === 'number' ? usage.cost : usage.cost_usd;
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** The assistant text of a provider response, for the preview. */
function answerOf(data: Json): unknown {
  if (!isRecord(data)) return undefined;
  const choices = Array.isArray(data.choices) ? data.choices : [];
  // A chat completion's first choice, or the assistant message an adapter recorded as such (`assistant_message`).
  const first = isRecord(choices[0]) && isRecord(choices[0].message) ? choices[0].message : isRecord(data.assistant_message) ? data.assistant_message : undefined;
  if (first) {
    const calls = Array.isArray(first.tool_calls) ? first.tool_calls : [];
    const names = calls.map((call) => (isRecord(call) && isRecord(call.function) ? nonEmptyString(call.function.name) : undefined)).filter(Boolean);
    // An answer that held media (an image the model drew) is content parts: its text and a tag for each medium.
    const text = Array.isArray(first.content) ? preview(first.content, 200) : nonEmptyString(first.content);
    if (names.length > 0) return `→ ${names.join(', ')}${text ? ` · ${text}` : ''}`;
    return text;
  }
  if (Array.isArray(data.content)) {
    const parts = (data.content as unknown[]).filter(isRecord);
    const names = parts.filter((part) => part.type === 'tool_use').map((part) => nonEmptyString(part.name));
    const text = parts.filter((part) => part.type === 'text').map((part) => nonEmptyString(part.text)).join(' ');
    if (names.length > 0) return `→ ${names.join(', ')}${text ? ` · ${text}` : ''}`;
    return text || undefined;
  }
  return undefined;
}

function noteOf(text: string | undefined): Partial<ViewNode> {
  return text === undefined ? {} : { note: text };
}

/**
 * What an agent's row says of it, read as the trajectory of its session names it in its `agent` block (the plugin
 * writes it, `convert` reads it back so), so the row reads the same from either file. A session is named by its scope:
 * the plugin's `<agent>-session-<id>` names its agent (Hermes' `hermes-session-<id>` none), another writer's scope by
 * its own name. Its model is the one its scope names (`metadata.model`), else, in the plugin's `<agent>` form, the one
 * its first answered call reports (any call's when none answered). Under a plugin's session a sub-agent is named by its
 * role (`child_role`) and its model, each else as the agent that started it, the model after its own calls' report;
 * under another writer's, a sub-agent is its parent's.
 */
interface AgentAbout {
  name: string | undefined;
  /** The model its scope names. */
  model: string | undefined;
  /** The agent that started it (a sub-agent's). */
  parent: AgentAbout | undefined;
  /** Its session's scope is the plugin's: each sub-agent names itself. */
  plugin: boolean;
  /** A session in the plugin's `<agent>` form: the model its calls report names it when its scope names none. */
  reportsModel: boolean;
  /** Its own LLM calls as they ended: the model each reports, and whether it failed. */
  answers: { model: string | undefined; failed: boolean }[];
  /** The text its row's note starts with. */
  shown: string | undefined;
}

function aboutAgent(event: AtofEvent, metadata: Obj, parent: AgentAbout | undefined): AgentAbout {
  const about = { model: nonEmptyString(metadata.model), parent, answers: [], shown: undefined };
  if (parent !== undefined) return { ...about, name: parent.plugin ? (nonEmptyString(metadata.child_role) ?? parent.name) : parent.name, plugin: parent.plugin, reportsModel: false };
  const scopeName = typeof event.name === 'string' ? event.name : undefined;
  const parts = scopeName === undefined ? undefined : parseSessionScopeName(scopeName, nonEmptyString(metadata.session_id));
  const name = parts === undefined ? nonEmptyString(scopeName) : parts.form === 'agent' ? parts.agentName : undefined;
  return { ...about, name, plugin: parts !== undefined, reportsModel: parts?.form === 'agent' };
}

/**
 * The model an agent's trajectory names (`firstReportedModel` for the one its calls report). A sub-agent's parent's is
 * that one's as its block has it when the sub-agent's is built: a session's own scope's (the one its calls report is
 * filled in after), a sub-agent's with its calls' report.
 */
function agentModel(about: AgentAbout): string | undefined {
  const { parent } = about;
  if (parent !== undefined && !about.plugin) return agentModel(parent);
  const named = about.answers.filter((answer) => answer.model !== undefined);
  const reported = (named.find((answer) => !answer.failed) ?? named[0])?.model;
  if (parent === undefined) return about.model ?? (about.reportsModel ? reported : undefined);
  return about.model ?? reported ?? (parent.parent === undefined ? parent.model : agentModel(parent));
}

function aboutText(about: AgentAbout): string | undefined {
  return [about.name, agentModel(about)].filter(Boolean).join(', ') || undefined;
}

/** Once its calls have ended, the row names the model they report where its scope named none. */
function showAgentModel(agent: AgentState): void {
  const { about, node: row } = agent;
  const text = aboutText(about);
  if (text === undefined || text === about.shown) return;
  const rest = about.shown === undefined ? row.note : row.note?.slice(about.shown.length).replace(/^ · /, '');
  row.note = [text, rest].filter(Boolean).join(' · ');
}
