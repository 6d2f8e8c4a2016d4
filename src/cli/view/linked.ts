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
import { asRemoteSession, containsNode, noteOnce, type ViewNode } from './model.ts';

/** The roots of each input, in input order; moved roots leave their input. */
export interface LinkedSource {
  readonly file: string;
  roots: ViewNode[];
}

/** Where a root was moved: the input, session and tool call now holding it. */
export interface MovedRoot {
  readonly from: string;
  readonly session: string;
  readonly into: string;
  /** The session listed on its own that now shows it, and its input: the top of a chain of such moves (ATOF files'). */
  readonly shownIn: { readonly file: string; readonly session: string };
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
          if (runFailed(target.root, call ?? callerCallId(target.root))) noteOnce(target.root, 'failed');
          moved.push({ from: target.source.file, session: key!, into: source.file, shownIn: { file: source.file, session: root.sessionId ?? root.title }, toolCall: call ?? tool.title });
        }
      });
    }
  }
  return moved;
}

/** The tool call id a remote session's trajectory says it continues (`extra.caller.tool_call_id`). */
function callerCallId(root: ViewNode): string | undefined {
  const extra = isRecord(root.source) && isRecord(root.source.extra) ? root.source.extra : {};
  return isRecord(extra.caller) ? nonEmptyString(extra.caller.tool_call_id) : undefined;
}

/**
 * Whether a remote session's run of the call it continues failed, as its trajectory records that run (a result no
 * step of it asked for, under the caller's tool call id: the server's answer, `isError` a failed one). The caller's
 * ATOF lines say the same in the stop mark of the session (`child_status: failed`), which the trajectories do not keep:
 * the row says `failed` from either file.
 */
function runFailed(root: ViewNode, callId: string | undefined): boolean {
  if (callId === undefined) return false;
  // The session's own rows and its turns', not a sub-agent's.
  const rows = root.children.flatMap((row) => (row.kind === 'turn' ? [row, ...row.children] : [row]));
  return rows.some((row) => row.kind === 'tool' && row.error !== undefined && isRecord(row.source) && isRecord(row.source.result) && row.source.tool_call_id === callId);
}

function visitTools(node: ViewNode, visit: (tool: ViewNode) => void): void {
  for (const child of [...node.children]) {
    if (child.kind === 'tool') visit(child);
    visitTools(child, visit);
  }
}
