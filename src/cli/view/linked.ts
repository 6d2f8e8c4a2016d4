/**
 * Trajectories of one story recorded in several processes: an MCP client's
 * tool call whose observation references (`subagent_trajectory_ref`) the
 * trajectory the server wrote in its own folder. When `view` is given both
 * files, the server's session is shown under the client's tool call, as an
 * embedded sub-agent would be, and not again on its own.
 *
 * @module
 */

import { isRecord } from '../../shared/record.ts';
import { nonEmptyString } from '../../shared/text.ts';
import { asRemoteSession, containsNode, type ViewNode } from './model.ts';

/** The roots of each input, in input order; moved roots leave their input. */
export interface LinkedSource {
  readonly file: string;
  roots: ViewNode[];
}

/** Where a root was moved: the input and tool call now holding it. */
export interface MovedRoot {
  readonly from: string;
  readonly session: string;
  readonly into: string;
  readonly toolCall: string;
}

/** The session id of an ATIF root (`trajectoryNode` keeps it in `source`). */
function sessionIdOf(root: ViewNode): string | undefined {
  return root.kind === 'session' && isRecord(root.source) ? nonEmptyString(root.source.session_id) : undefined;
}

/**
 * Moves each session root that another input's tool call references under
 * that tool call (each root once; never under itself or its own subtree).
 * Returns what moved, for the caller to say so.
 */
export function linkRemoteTrajectories(sources: LinkedSource[]): MovedRoot[] {
  const byId = new Map<string, { source: LinkedSource; root: ViewNode }>();
  for (const source of sources) {
    for (const root of source.roots) {
      const id = sessionIdOf(root);
      if (id !== undefined && !byId.has(id)) byId.set(id, { source, root });
    }
  }
  if (byId.size < 2) return [];
  const moved: MovedRoot[] = [];
  const taken = new Set<ViewNode>();
  for (const source of sources) {
    for (const root of [...source.roots]) {
      if (taken.has(root)) continue;
      visitTools(root, (tool) => {
        const result = isRecord(tool.source) && isRecord(tool.source.result) ? tool.source.result : undefined;
        const refs = Array.isArray(result?.subagent_trajectory_ref) ? result.subagent_trajectory_ref.filter(isRecord) : [];
        for (const ref of refs) {
          const key = nonEmptyString(ref.session_id) ?? nonEmptyString(ref.trajectory_id);
          const target = key === undefined ? undefined : byId.get(key);
          if (target === undefined || target.root === root || taken.has(target.root) || containsNode(target.root, tool)) continue;
          taken.add(target.root);
          target.source.roots = target.source.roots.filter((candidate) => candidate !== target.root);
          asRemoteSession(target.root);
          tool.children.push(target.root);
          const call = isRecord(tool.source) && isRecord(tool.source.call) ? nonEmptyString(tool.source.call.tool_call_id) : undefined;
          moved.push({ from: target.source.file, session: key!, into: source.file, toolCall: call ?? tool.title });
        }
      });
    }
  }
  return moved;
}

function visitTools(node: ViewNode, visit: (tool: ViewNode) => void): void {
  for (const child of [...node.children]) {
    if (child.kind === 'tool') visit(child);
    visitTools(child, visit);
  }
}
