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
 * the caller to say the totals leave them out (`missingReferencesText`).
 * `view` reads the files from the disk; `view --serve` from its catalog of
 * the served folders (which follows no link), by the same rule.
 *
 * @module
 */

import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { isRecord } from '../../shared/record.ts';
import { nonEmptyString } from '../../shared/text.ts';
import { parseJson } from '../../shared/json.ts';
import { isTrajectory, treeFromAtif } from './from-atif.ts';
import { asRemoteSession, asSubagent, type ViewNode } from './model.ts';

/** A referenced trajectory more than this is not read for a view (a referenced run is a few steps). */
const MAX_REFERENCED_BYTES = 64 * 1024 * 1024;

/** A reference no file beside the input answered: its `trajectory_path`, else its session id. */
export interface MissingReference {
  readonly session: string;
  readonly reference: string;
}

/**
 * How a referenced file is read, by its absolute path: the session tree of the trajectory there (`treeFromAtif`), or
 * undefined when there is none to read.
 */
export type ReferencedTrajectoryReader = (absolute: string) => ViewNode | undefined;

/**
 * Follows the file references of `root` (read from `file`; undefined for standard input, which has no folder) and
 * of the trajectories it reads, each once. `shown`: session ids the inputs show already (given on the command line,
 * embedded), never read again. `read`: from the disk when not given.
 */
export function followReferencedFiles(root: ViewNode, file: string | undefined, shown: ReadonlySet<string>, read: ReferencedTrajectoryReader = readFromDisk): MissingReference[] {
  const seen = new Set(shown);
  const missing: MissingReference[] = [];
  const visit = (current: ViewNode, folder: string | undefined, prefix: string | undefined): void => {
    for (const ref of referencesOf(current)) {
      const session = nonEmptyString(ref.session_id) ?? nonEmptyString(ref.trajectory_id);
      const where = nonEmptyString(ref.trajectory_path);
      if (session === undefined || seen.has(session) || current.children.some((child) => child.sessionId === session)) continue;
      seen.add(session);
      const shown = folder !== undefined && where !== undefined ? readBeside(folder, prefix, where, session, read) : undefined;
      if (shown === undefined) {
        if (where !== undefined) missing.push({ session, reference: where });
        continue;
      }
      // From a tool call, another process's session (an MCP server's), shown as when both files are given.
      if (current.kind === 'tool') asRemoteSession(shown);
      else asSubagent(shown);
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

/** The session tree of the trajectory `where` names, beside the input (as written, else with the input's name prefix), if its session is `session`. */
function readBeside(folder: string, prefix: string | undefined, where: string, session: string, read: ReferencedTrajectoryReader): ViewNode | undefined {
  // Only a name beside the input: a reference never reaches another folder.
  if (path.basename(where) !== where) return undefined;
  for (const name of prefix !== undefined ? [where, `${prefix}${where}`] : [where]) {
    const tree = read(path.join(folder, name));
    if (tree?.sessionId === session) return tree;
  }
  return undefined;
}

/** The trajectory at `absolute` on the disk, unless it is not a file, is too large, or is not a trajectory. */
function readFromDisk(absolute: string): ViewNode | undefined {
  try {
    const stat = statSync(absolute);
    if (!stat.isFile() || stat.size > MAX_REFERENCED_BYTES) return undefined;
    const doc = parseJson(readFileSync(absolute, 'utf8').replace(/^\uFEFF/, ''));
    return isTrajectory(doc) ? treeFromAtif(doc) : undefined;
  } catch {
    return undefined; // Unreadable or not JSON: not the trajectory referenced.
  }
}

/** Session ids the trees show (their roots', embedded and linked subagents'): references to them are not read again. */
export function sessionIdsShown(roots: readonly ViewNode[]): Set<string> {
  const shown = new Set<string>();
  const collect = (current: ViewNode): void => {
    if (current.sessionId !== undefined) shown.add(current.sessionId);
    current.children.forEach(collect);
  };
  roots.forEach(collect);
  return shown;
}

/**
 * What a session whose references were not all found says: its totals leave them out. `beside`: false for standard
 * input, which has no folder to look in.
 */
export function missingReferencesText(session: string, missing: readonly MissingReference[], beside = true): string {
  const count = missing.length === 1 ? 'a trajectory' : `${missing.length} trajectories`;
  const where = beside ? 'not found beside it' : '(standard input has no folder to look in)';
  return `session ${session}'s totals leave out ${count} it references, ${where}: ${missing.map((entry) => entry.reference).join(', ')}`;
}

/**
 * The absolute paths `followReferencedFiles` would read `root`'s own references from (both names it tries for each),
 * whether or not a file is there: what a reader of a folder that changes (`view --serve`) watches for the session.
 */
export function referencedFilePaths(root: ViewNode, file: string): string[] {
  const asked: string[] = [];
  followReferencedFiles(root, file, new Set(), (absolute) => {
    asked.push(absolute);
    return undefined;
  });
  return [...new Set(asked)];
}
