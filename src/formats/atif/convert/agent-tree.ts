/**
 * The tree of Agent scopes: which agent owns each event, which agent is the
 * root, and which nested agents become embedded `subagent_trajectories`.
 *
 * @module
 */

import { type Instant, compareInstants } from '../../instant.ts';
import { delegationToolCallId } from '../payload/index.ts';
import { type ConvEvent, isAgentScope, isStart, metadataString, parseUuid } from './events.ts';

export interface AgentNode {
  uuid: string;
  name: string;
  sessionId: string | undefined;
  referencedByParent: boolean;
  /** The sub-agent's own name and model, from its scope's metadata (`child_role`, `model`). */
  role: string | undefined;
  model: string | undefined;
  parentAgent: string | undefined;
  children: string[];
  instant: Instant;
}

export class AgentTree {
  readonly nodes = new Map<string, AgentNode>();
  readonly roots: string[] = [];
  readonly scopeParents = new Map<string, string>();
  readonly agentUuids = new Set<string>();

  constructor(events: readonly ConvEvent[]) {
    // Indexed passes: this runs once a build, often before it is optimized, where a for-of allocates an iterator result per event.
    const roles = new Map<string, string | undefined>();
    for (let i = 0; i < events.length; i++) {
      const event = events[i] as ConvEvent;
      if (!isStart(event)) continue;
      if (event.parent !== undefined) this.scopeParents.set(event.uuid, event.parent);
      if (isAgentScope(event)) roles.set(event.uuid, metadataString(event, 'nemo_relay_scope_role'));
    }
    for (let i = 0; i < events.length; i++) {
      const event = events[i] as ConvEvent;
      if (!isStart(event) || !isAgentScope(event)) continue;
      // A `turn`-role agent scope is transparent inside a real agent.
      if (metadataString(event, 'nemo_relay_scope_role') !== 'turn' || this.nearestNonTurnAgent(event.parent, roles, event.uuid) === undefined) {
        this.agentUuids.add(event.uuid);
      }
    }
    for (let i = 0; i < events.length; i++) {
      const event = events[i] as ConvEvent;
      if (!isStart(event) || !isAgentScope(event) || !this.agentUuids.has(event.uuid)) continue;
      this.nodes.set(event.uuid, {
        uuid: event.uuid,
        name: event.name,
        sessionId: metadataString(event, 'session_id'),
        referencedByParent:
          metadataString(event, 'nemo_relay_scope_role') === 'subagent' ||
          delegationToolCallId(event.metadata) !== undefined ||
          delegationToolCallId(event.data) !== undefined,
        role: metadataString(event, 'child_role'),
        model: metadataString(event, 'model'),
        parentAgent: this.nearestAgent(event.parent, event.uuid),
        children: [],
        instant: event.instant,
      });
    }
    for (const node of this.nodes.values()) {
      if (node.parentAgent === undefined) this.roots.push(node.uuid);
      else this.nodes.get(node.parentAgent)?.children.push(node.uuid);
    }
    const byStart = (a: string, b: string): number =>
      compareInstants((this.nodes.get(a) as AgentNode).instant, (this.nodes.get(b) as AgentNode).instant);
    this.roots.sort(byStart);
    for (const node of this.nodes.values()) node.children.sort(byStart);
  }

  // The two walks up the scope parents are written out rather than one walk taking a test: asked for nearly
  // every event of a build, a closure per question was an allocation per event.

  nearestAgent(start: string | undefined, excluded?: string): string | undefined {
    const parents = this.scopeParents;
    const agents = this.agentUuids;
    let current = start;
    // A malformed stream could form a parent cycle; never walk further than the map is long.
    for (let steps = 0; current !== undefined && steps <= parents.size; steps++) {
      if (current !== excluded && agents.has(current)) return current;
      current = parents.get(current);
    }
    return undefined;
  }

  private nearestNonTurnAgent(
    start: string | undefined,
    roles: Map<string, string | undefined>,
    excluded: string,
  ): string | undefined {
    const parents = this.scopeParents;
    let current = start;
    for (let steps = 0; current !== undefined && steps <= parents.size; steps++) {
      if (current !== excluded && roles.has(current) && roles.get(current) !== 'turn') return current;
      current = parents.get(current);
    }
    return undefined;
  }

  chooseRoot(sessionId: string): string | undefined {
    const uuid = parseUuid(sessionId);
    if (uuid !== undefined && this.nodes.has(uuid)) return uuid;
    return this.roots.length === 1 ? this.roots[0] : undefined;
  }

  ownerAgent(event: ConvEvent): string | undefined {
    if (isAgentScope(event)) return this.agentUuids.has(event.uuid) ? event.uuid : undefined;
    return this.nearestAgent(event.parent);
  }

  directChildStart(parent: string, event: ConvEvent): AgentNode | undefined {
    if (!isStart(event) || !isAgentScope(event)) return undefined;
    const child = this.nodes.get(event.uuid);
    return child !== undefined && child.parentAgent === parent ? child : undefined;
  }
}
