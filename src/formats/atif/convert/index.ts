/**
 * ATOF events → ATIF v1.7 trajectory, step for step the way the native
 * NeMo Relay `AtifExporter` (nemo-relay-node 0.9.2) does it.
 *
 * Outline:
 * 1. Sort the events by timestamp (stable; `sortByInstant`).
 * 2. Find the Agent scopes. When the trajectory has one root agent (or the
 *    session id names one) and every LLM/tool event belongs to some agent,
 *    each agent gets its own steps and nested agents are embedded as
 *    `subagent_trajectories`. Otherwise all events become one flat list.
 * 3. Per agent: an LLM start gives a `user` step when the request starts a
 *    fresh user turn; an LLM end gives an `agent` step with the requested tool
 *    calls and metrics; a tool end gives an observation on the agent step that
 *    requested it (by tool_call_id), or a `system` step when none did. Marks
 *    are not steps.
 *
 * Where native behaves oddly the code still follows it and says so with a
 * "native:" comment: the goal is output indistinguishable from native.
 *
 * @module
 */

import { compareInstants } from '../../instant.ts';
import { ATIF_SCHEMA_VERSION, type AtifAgent, type AtifStep, type AtifTrajectory } from '../types.ts';
import { type AgentNode, AgentTree } from './agent-tree.ts';
import { buildToolCallCorrelations } from './correlate.ts';
import { type SharedLookups, buildSharedLookups } from './dedupe.ts';
import type { GeminiUsageReading } from '../../usage.ts';
import { type ConvEvent, isAgentScope, isStepEvent } from './events.ts';
import { finalMetrics, pruneSubagentRefs } from './finish.ts';
import { StepConverter } from './steps.ts';
import type { LlmCallPricer } from '../types.ts';
import { finishSlices, SliceClock, type Slices } from '../../../shared/slices.ts';

export { readEvents, startOfEvents, toConvEvents } from './events.ts';
export type { ConvEvent } from './events.ts';

function trajectoryFromParts(
  sessionId: string,
  trajectoryId: string,
  agent: AtifAgent,
  steps: AtifStep[],
  subagents: AtifTrajectory[] | undefined,
): AtifTrajectory {
  const trajectory: AtifTrajectory = {
    schema_version: ATIF_SCHEMA_VERSION,
    session_id: sessionId,
    trajectory_id: trajectoryId,
    agent: { ...agent },
    steps,
    final_metrics: finalMetrics(steps),
  };
  if (subagents !== undefined) trajectory.subagent_trajectories = subagents;
  return trajectory;
}

function* stepsForAgent(events: readonly ConvEvent[], tree: AgentTree, agentUuid: string, shared: SharedLookups, clock: SliceClock): Slices<AtifStep[]> {
  // The agent's events: the ones it owns and its direct children's starts, each event's owner found once.
  // A child's start is an agent scope, which the correlations pass over, so they read the owned events alone.
  // A root that owns every event (the usual session) converts the list itself: it is copied only from the first event it does not own.
  let mine: ConvEvent[] | undefined;
  for (let i = 0; i < events.length; i++) {
    const event = events[i] as ConvEvent;
    const isMine = tree.directChildStart(agentUuid, event) !== undefined || tree.ownerAgent(event) === agentUuid;
    if (mine !== undefined) {
      if (isMine) mine.push(event);
    } else if (!isMine) {
      mine = events.slice(0, i);
    }
  }
  yield;
  const owned = mine ?? events;
  // `shared` carries the pricer (when one is set) to every agent's steps.
  const converter = new StepConverter({ ...shared, toolCallIds: buildToolCallCorrelations(owned) });
  // Indexed: a for-of in a generator allocates an iterator result per event (the builder's garbage sets the pace of the scavenges that copy a session's kept events).
  for (let i = 0; i < owned.length; i++) {
    const event = owned[i] as ConvEvent;
    if (clock.tick()) yield;
    const child = tree.directChildStart(agentUuid, event);
    if (child !== undefined) converter.subagentStart(child, event);
    else converter.handle(event);
  }
  yield;
  return converter.finish();
}

/**
 * A sub-agent's `agent`: with `own`, its own name and model where its scope
 * says (an adapter's `child_role` and the child's model), else its parent's.
 * Native gives every sub-agent its parent's; a trajectory that names the
 * wrong model for a child misleads cost and quality reviews, so the
 * plugin's own files do better, while the emulation of native's
 * plugins.toml files keeps native's block (see `AtifBuilderOptions.style`).
 */
function subagentAgent(parent: AtifAgent, node: AgentNode | undefined, own: boolean): AtifAgent {
  if (!own || node === undefined || (node.role === undefined && node.model === undefined)) return parent;
  return { ...parent, ...(node.role === undefined ? {} : { name: node.role }), ...(node.model === undefined ? {} : { model_name: node.model }) };
}

/**
 * The model the first answered agent step reports, else the first agent
 * step's: a failed attempt names only the model its request asked for.
 */
export function firstReportedModel(steps: readonly AtifStep[]): string | undefined {
  const named = steps.filter((step) => step.source === 'agent' && typeof step.model_name === 'string');
  return (named.find((step) => !failedAttempt(step)) ?? named[0])?.model_name;
}

function failedAttempt(step: AtifStep): boolean {
  const invocation = (step.extra as { invocation?: { status?: unknown } } | undefined)?.invocation;
  return invocation?.status === 'failed';
}

/**
 * A sub-agent whose scope names no model (adapters often learn it only from
 * the provider's answer) takes the model its first agent step reports;
 * else it keeps the one it inherited.
 */
function withReportedModel(agent: AtifAgent, steps: readonly AtifStep[]): AtifAgent {
  const reported = firstReportedModel(steps);
  return reported === undefined || reported === agent.model_name ? agent : { ...agent, model_name: reported };
}

function* agentTrajectory(
  tree: AgentTree,
  agentUuid: string,
  sessionId: string,
  agent: AtifAgent,
  events: readonly ConvEvent[],
  shared: SharedLookups,
  isRoot: boolean,
  ownSubagentAgents: boolean,
  clock: SliceClock,
): Slices<AtifTrajectory> {
  const steps = yield* stepsForAgent(events, tree, agentUuid, shared, clock);
  yield;
  const node = tree.nodes.get(agentUuid);
  if (!isRoot && ownSubagentAgents && node?.model === undefined) agent = withReportedModel(agent, steps);
  let subagents: AtifTrajectory[] | undefined;
  if (node !== undefined) {
    const children: AtifTrajectory[] = [];
    for (const uuid of node.children) {
      const childAgent = subagentAgent(agent, tree.nodes.get(uuid), ownSubagentAgents);
      const child = yield* agentTrajectory(tree, uuid, sessionId, childAgent, events, shared, false, ownSubagentAgents, clock);
      if (child.steps.length > 0) {
        children.push(child);
        continue;
      }
      const childNode = child.trajectory_id === undefined ? undefined : tree.nodes.get(child.trajectory_id);
      if (childNode !== undefined && !childNode.referencedByParent) children.push(child);
    }
    if (children.length > 0) subagents = children;
  }
  const childIds = new Set((subagents ?? []).map((child) => child.trajectory_id as string));
  const pruned = pruneSubagentRefs(steps, childIds, tree.nodes);
  const trajectoryId = isRoot ? sessionId : agentUuid;
  const trajectorySessionId = isRoot ? sessionId : (node?.sessionId ?? sessionId);
  return trajectoryFromParts(trajectorySessionId, trajectoryId, agent, pruned, subagents);
}

/**
 * `events` ordered by instant, equal instants in arrival order (a stable
 * sort). Events usually arrive in order: that is checked in one pass, and
 * the list itself returned.
 */
export function sortByInstant(events: readonly ConvEvent[]): readonly ConvEvent[] {
  let inOrder = true;
  for (let i = 1; i < events.length && inOrder; i++) {
    inOrder = compareInstants((events[i - 1] as ConvEvent).instant, (events[i] as ConvEvent).instant) <= 0;
  }
  if (inOrder) return events;
  return events
    .map((event, index) => ({ event, index }))
    .sort((a, b) => compareInstants(a.event.instant, b.event.instant) || a.index - b.index)
    .map((entry) => entry.event);
}

/**
 * Converts events, in `sortByInstant` order, into one ATIF trajectory, as
 * native's exporter does (the builder keeps its events sorted between builds).
 * `ownSubagentAgents`: each embedded sub-agent gets its own name and model
 * (from its scope) instead of its parent's `agent` block, as native writes it.
 */
export function convertSortedEvents(
  sessionId: string,
  agent: AtifAgent,
  sorted: readonly ConvEvent[],
  ownSubagentAgents = false,
  price?: LlmCallPricer,
): AtifTrajectory {
  return finishSlices(convertInSlices(sessionId, agent, sorted, ownSubagentAgents, price));
}

/**
 * `convertSortedEvents` as work that yields every `SLICE_UNITS` events converted (`shared/slices.ts`).
 * `plain` gathers the payloads found written exactly by `JSON.stringify` (`sortPayload`): give the
 * same set to the text writer, and to the next build of the same events.
 */
export function* convertInSlices(
  sessionId: string,
  agent: AtifAgent,
  sorted: readonly ConvEvent[],
  ownSubagentAgents = false,
  price?: LlmCallPricer,
  plain: Set<object> = new Set(),
  gemini: GeminiUsageReading = 'billed',
): Slices<AtifTrajectory> {
  // Each pass over every event is a slice of its own (a long session's passes are what would stop the host).
  const clock = new SliceClock();
  const tree = new AgentTree(sorted);
  yield;
  const shared = buildSharedLookups(sorted, plain, gemini);
  if (price !== undefined) shared.price = price;
  yield;
  const root = tree.chooseRoot(sessionId);
  if (root !== undefined && sorted.every((event) => isAgentScope(event) || !isStepEvent(event) || tree.ownerAgent(event) !== undefined)) {
    yield;
    return yield* agentTrajectory(tree, root, sessionId, agent, sorted, shared, true, ownSubagentAgents, clock);
  }
  const converter = new StepConverter({ ...shared, toolCallIds: buildToolCallCorrelations(sorted) });
  for (let i = 0; i < sorted.length; i++) {
    if (clock.tick()) yield;
    converter.handle(sorted[i] as ConvEvent);
  }
  return trajectoryFromParts(sessionId, sessionId, agent, converter.finish(), undefined);
}
