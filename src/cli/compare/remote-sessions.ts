/**
 * Another process's sessions in a compared run (an MCP server's, each call it answers a session of its own): an
 * ATOF file of a run whose server ran on the agent's hooks nests the server's session under the agent's tool call,
 * where the agent's trajectory only references the server's trajectory, a file of its own that the plugin wrote
 * beside it. So that one run read from either file is the same run:
 *
 * - a trajectory's reference is read from the trajectory's folder when the file is there (its `trajectory_path`, the
 *   plugin's, relative to that folder), and the server's session shown under the call, as `view` of both files does;
 * - a remote session one run references and does not show (its trajectory not beside the run's, the server's ATOF
 *   lines in a file of their own) is left out of the other run, and said: it is compared on neither side.
 *
 * @module
 */

import { readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { isRecord } from '../../shared/record.ts';
import { nonEmptyString } from '../../shared/text.ts';
import { isTrajectory, treeFromAtif } from '../view/from-atif.ts';
import { linkRemoteTrajectories } from '../view/linked.ts';
import type { ViewNode } from '../view/model.ts';
import { followReferencedFiles, missingReferencesText, sessionIdsShown } from '../view/referenced-files.ts';
import type { OnlyRecorded } from './compare-runs.ts';

/** A trajectory read whole: one larger than this is not read as a reference (`view --serve` skips such files too). */
const MAX_REFERENCED_BYTES = 256 * 1024 * 1024;

/** A reference of a tool call's result: the session it names and its file, as written. */
interface RemoteRef {
  session: string;
  trajectoryPath: string | undefined;
}

/** A run to compare: its tree (changed in place), the file it was read from (none: standard input) and its kind. */
export interface RemoteRun {
  root: ViewNode;
  path: string | undefined;
  kind: 'atif' | 'atof';
}

/**
 * How a referenced trajectory is read, by its absolute path (undefined: not there, or not to be read): from the disk
 * for `compare`, from the served folders' catalog for `view --serve`'s compare page.
 */
export type TrajectoryReader = (file: string) => ViewNode | undefined;

/** What `sameRemoteSessions` found: what one run alone holds, and what `view` says of each run's references not found. */
export interface SameRemoteSessions {
  onlyRecorded: OnlyRecorded[];
  /** Per run, what `view` says of its references not found (`missingReferencesText`); empty when all were found. */
  missing: { a: string[]; b: string[] };
}

/**
 * Makes another process's sessions read the same from either run (the rules above), after reading the trajectories
 * each run references by file. Returns what one run alone holds, for the comparison to say, and the references not
 * found.
 */
export function sameRemoteSessions(a: RemoteRun, b: RemoteRun, read?: TrajectoryReader): SameRemoteSessions {
  const missing = { a: readReferences(a, read), b: readReferences(b, read) };
  const onlyRecorded: OnlyRecorded[] = [];
  for (const [run, mine, other] of [['b', a, b], ['a', b, a]] as const) {
    const left = leaveOutRemoteSessions(other.root, unreadRemoteSessions(mine.root));
    if (left.length > 0) onlyRecorded.push({ fact: 'remote', run, values: left });
  }
  return { onlyRecorded, missing };
}

/**
 * Reads what an ATIF run references by file: its tool calls' trajectories from its folder
 * (`readReferencedTrajectories`), then, as `view` does, the others from beside it (`followReferencedFiles`: a system
 * step's). Before any remote session is left out: one read either way is one the run holds. Returns what `view` says
 * of the references not found (a run from standard input has no folder to read any from).
 */
function readReferences(run: RemoteRun, read: TrajectoryReader | undefined): string[] {
  if (run.kind !== 'atif') return [];
  if (run.path !== undefined) readReferencedTrajectories(run.root, run.path, read);
  // From the disk by the rule above (nothing through a link out of the folder), as the tool calls' are read.
  const readAt = read ?? (run.path === undefined ? undefined : fromFolderOf(run.path));
  const missing = followReferencedFiles(run.root, run.path, sessionIdsShown([run.root]), readAt);
  return missing.length === 0 ? [] : [missingReferencesText(run.root.sessionId ?? run.root.title, missing, run.path !== undefined)];
}

/**
 * Reads the trajectories the run of `file` (an ATIF file) references from its tool calls and does not embed, from
 * the file's folder (never outside it), and shows each under its call; then those they reference, in turn. `read`:
 * from the disk when not given.
 */
export function readReferencedTrajectories(root: ViewNode, file: string, read?: TrajectoryReader): void {
  const readAt = read ?? fromFolderOf(file);
  const tried = new Set<string>();
  for (;;) {
    const found: { file: string; roots: ViewNode[] }[] = [];
    for (const target of referencedTrajectoryFiles(root, file)) {
      if (tried.has(target)) continue;
      tried.add(target);
      const referenced = readAt(target);
      if (referenced !== undefined) found.push({ file: target, roots: [referenced] });
    }
    if (found.length === 0) return;
    linkRemoteTrajectories([{ file, roots: [root] }, ...found]);
  }
}

/** Reads a trajectory from the disk only from `file`'s folder (`readTrajectory`). */
function fromFolderOf(file: string): TrajectoryReader {
  const folder = path.dirname(path.resolve(file));
  return (target) => readTrajectory(target, folder);
}

/** The files of the trajectories the run of `file` references and does not show, under the file's folder only. */
export function referencedTrajectoryFiles(root: ViewNode, file: string): string[] {
  const folder = path.dirname(path.resolve(file));
  const targets = unresolvedRefs(root).flatMap((ref) => (ref.trajectoryPath === undefined ? [] : [path.resolve(folder, ref.trajectoryPath)]));
  return [...new Set(targets.filter((target) => inside(folder, target)))];
}

/** The sessions the run's tool calls reference that it does not show (neither embedded nor read). */
export function unreadRemoteSessions(root: ViewNode): string[] {
  return [...new Set(unresolvedRefs(root).map((ref) => ref.session))];
}

/** Leaves the remote sessions `ids` out of the run (each where it is shown); returns those it left out. */
export function leaveOutRemoteSessions(root: ViewNode, ids: readonly string[]): string[] {
  const wanted = new Set(ids);
  const left: string[] = [];
  const visit = (row: ViewNode): void => {
    row.children = row.children.filter((child) => {
      const id = child.remote === true ? child.sessionId : undefined;
      if (id === undefined || !wanted.has(id)) return true;
      left.push(id);
      return false;
    });
    for (const child of row.children) visit(child);
  };
  visit(root);
  return [...new Set(left)];
}

/** The references of the run's tool calls to sessions not shown under the call. */
function unresolvedRefs(root: ViewNode): RemoteRef[] {
  const out: RemoteRef[] = [];
  const visit = (row: ViewNode): void => {
    if (row.kind === 'tool') {
      const refs = refsOf(row);
      const shown = new Set(row.children.filter((child) => child.kind === 'subagent').map((child) => child.sessionId));
      for (const ref of refs) {
        const session = nonEmptyString(ref.session_id) ?? nonEmptyString(ref.trajectory_id);
        if (session === undefined || shown.has(session) || (nonEmptyString(ref.trajectory_id) !== undefined && shown.has(ref.trajectory_id as string))) continue;
        out.push({ session, trajectoryPath: nonEmptyString(ref.trajectory_path) });
      }
    }
    for (const child of row.children) visit(child);
  };
  visit(root);
  return out;
}

/**
 * The references a tool call's row keeps: a trajectory's in its result, an ATOF file's in the call's end (its
 * metadata's `subagent_trajectory_ref`, which the plugin writes when the server named its session back).
 */
function refsOf(row: ViewNode): Record<string, unknown>[] {
  const source = isRecord(row.source) ? row.source : {};
  const end = isRecord(source.end) && isRecord(source.end.metadata) ? source.end.metadata : undefined;
  const refs = isRecord(source.result) ? source.result.subagent_trajectory_ref : end?.subagent_trajectory_ref;
  return (Array.isArray(refs) ? refs : [refs]).filter(isRecord);
}

/** Whether `target` is a file under `folder` (a reference never reads outside the run's folder). */
function inside(folder: string, target: string): boolean {
  const relative = path.relative(folder, target);
  return relative !== '' && !path.isAbsolute(relative) && relative.split(path.sep)[0] !== '..';
}

/**
 * The trajectory in `file`, or undefined when it is not there, too large, not a trajectory, or, through a link, outside
 * `folder` (as the served viewer, which follows no link, never reads it either).
 */
function readTrajectory(file: string, folder: string): ViewNode | undefined {
  try {
    if (!inside(realpathSync(folder), realpathSync(file))) return undefined;
    const stat = statSync(file);
    if (!stat.isFile() || stat.size > MAX_REFERENCED_BYTES) return undefined;
    const document: unknown = JSON.parse(readFileSync(file, 'utf8'));
    return isTrajectory(document) ? treeFromAtif(document) : undefined;
  } catch {
    return undefined; // Missing, unreadable or not JSON: the reference stays unread, as when it is absent.
  }
}
