/**
 * Trajectories a trajectory references by file rather than embeds: Harbor's
 * context summarization writes each summarization run to its own file beside
 * the main one (`trajectory.summarization-1-summary.json`) and references it
 * from a system step's observation (`subagent_trajectory_ref` with a
 * `trajectory_path`). The main file's `final_metrics` count those runs; a
 * view that did not read them would total less than the file says. Each
 * reference found beside the file (its session id checked) is shown under
 * the row that references it (a subagent; from a tool call, another
 * process's session, as `linked.ts` shows one); the others are returned, for
 * the caller to say the totals leave them out.
 *
 * @module
 */

import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { isRecord } from '../../shared/record.ts';
import { nonEmptyString } from '../../shared/text.ts';
import { parseJson } from '../../shared/json.ts';
import { isTrajectory, subagentFromAtif, treeFromAtif } from './from-atif.ts';
import { asRemoteSession, type ViewNode } from './model.ts';

/** A referenced trajectory more than this is not read for a view (a referenced run is a few steps). */
const MAX_REFERENCED_BYTES = 64 * 1024 * 1024;

/** A reference no file beside the input answered: its `trajectory_path`, else its session id. */
export interface MissingReference {
  readonly session: string;
  readonly reference: string;
}

/**
 * Follows the file references of `root` (read from `file`; undefined for standard input, which has no folder) and
 * of the trajectories it reads, each once. `shown`: session ids the inputs show already (given on the command line,
 * embedded), never read again.
 */
export function followReferencedFiles(root: ViewNode, file: string | undefined, shown: ReadonlySet<string>): MissingReference[] {
  const seen = new Set(shown);
  const missing: MissingReference[] = [];
  const visit = (current: ViewNode, folder: string | undefined, prefix: string | undefined): void => {
    for (const ref of referencesOf(current)) {
      const session = nonEmptyString(ref.session_id) ?? nonEmptyString(ref.trajectory_id);
      const where = nonEmptyString(ref.trajectory_path);
      if (session === undefined || seen.has(session) || current.children.some((child) => child.sessionId === session)) continue;
      seen.add(session);
      const found = folder !== undefined && where !== undefined ? readBeside(folder, prefix, where, session) : undefined;
      if (found === undefined) {
        if (where !== undefined) missing.push({ session, reference: where });
        continue;
      }
      // From a tool call, another process's session (an MCP server's), shown as when both files are given.
      const shown = current.kind === 'tool' ? treeFromAtif(found) : subagentFromAtif(found);
      if (current.kind === 'tool') asRemoteSession(shown);
      current.children.push(shown);
      visit(shown, folder, prefix);
    }
    for (const child of [...current.children]) visit(child, folder, prefix);
  };
  const folder = file === undefined ? undefined : path.dirname(path.resolve(file));
  visit(root, folder, file === undefined ? undefined : namePrefix(path.basename(file)));
  return missing;
}

/** The references a row's record holds: a tool call's result, a system step's observation. */
function referencesOf(current: ViewNode): Record<string, unknown>[] {
  const result = isRecord(current.source) && isRecord(current.source.result) ? current.source.result : undefined;
  return Array.isArray(result?.subagent_trajectory_ref) ? result.subagent_trajectory_ref.filter(isRecord) : [];
}

/**
 * What a copied trial folder prefixes its file names with: `run-7.trajectory.json` keeps its references as
 * `run-7.trajectory.summarization-1-summary.json` beside it (Harbor's golden files are named so).
 */
function namePrefix(base: string): string | undefined {
  const at = base.lastIndexOf('trajectory.');
  return at > 0 ? base.slice(0, at) : undefined;
}

/** The trajectory document `where` names, beside the input (as written, else with the input's name prefix), if its session is `session`. */
function readBeside(folder: string, prefix: string | undefined, where: string, session: string): Record<string, unknown> | undefined {
  // Only a name beside the input: a reference never reaches another folder.
  if (path.basename(where) !== where) return undefined;
  for (const name of prefix !== undefined ? [where, `${prefix}${where}`] : [where]) {
    const candidate = path.join(folder, name);
    try {
      const stat = statSync(candidate);
      if (!stat.isFile() || stat.size > MAX_REFERENCED_BYTES) continue;
      const doc = parseJson(readFileSync(candidate, 'utf8').replace(/^\uFEFF/, ''));
      if (!isTrajectory(doc) || !isRecord(doc)) continue;
      const id = nonEmptyString(doc.session_id) ?? nonEmptyString(doc.trajectory_id);
      if (id === session) return doc;
    } catch {
      // Unreadable or not JSON: not the trajectory referenced.
    }
  }
  return undefined;
}
