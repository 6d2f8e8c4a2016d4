/**
 * One input file (ATIF or ATOF, by content) as view trees, for `view`,
 * `compare` and the served viewer. Files that are not sessions (a hook
 * stream, an ATOF major version this reader does not know) are an
 * `InputError` saying what to do instead.
 *
 * @module
 */

import path from 'node:path';
import { ATIF_SCHEMA_VERSIONS } from '../../formats/atif/types.ts';
import { quotedValue } from '../../shared/text.ts';
import { atofMajor } from '../../formats/atof/rules/envelope.ts';
import type { AtofLineError } from '../../formats/atof/validate.ts';
import { firstLineKind, loadByContent, looksLikeAtofEvent, noAtofEventAmong, unreadableEventError } from '../detect.ts';
import { describeFsError, InputError } from '../errors.ts';
import { checkInputFile, inputName, readInputText, STDIN } from '../files.ts';
import { formatCount, type CliIo } from '../io.ts';
import { Progress } from '../progress.ts';
import { AtofIndex } from './atof-index.ts';
import { isTrajectory, treeFromAtif } from './from-atif.ts';
import { treesFromAtof } from './from-atof.ts';
import { sessionIdOf, uniqueSessionIds, type RootList, type ViewNode } from './model.ts';

export interface LoadedSessions {
  kind: 'atif' | 'atof';
  roots: ViewNode[];
  /** ATOF lines that could not be read (reported, not fatal). */
  lineErrors: string[];
  /** What the reader cannot vouch for in what it shows (a trajectory of a schema version it does not know). */
  notes: string[];
}

/** The sessions of `text`, the content of the input named `name` (`detectAs` picks the extension used for ties). */
export function sessionsOf(name: string, text: string, detectAs = name): LoadedSessions {
  const loaded = loadByContent(detectAs, text);
  switch (loaded.kind) {
    case 'atif':
      if (!isTrajectory(loaded.document)) throw new InputError(`${name} is JSON but not an ATIF trajectory (no "steps" list)`);
      return { kind: 'atif', roots: [treeFromAtif(loaded.document)], lineErrors: [], notes: unknownVersionNotes(loaded.document as { schema_version?: unknown }) };
    case 'atof': {
      const major = loaded.events.map((event) => atofMajor(event.atof_version)).find((value) => value !== undefined && value !== 0);
      if (major !== undefined) throw new InputError(`${name}: ATOF major version ${major}; this reader knows ATOF 0.x only`);
      const problem = noAtofEvents(loaded.events, loaded.lineErrors);
      if (problem !== undefined) throw new InputError(`${name} holds no ATOF events: ${problem}`);
      // Events the tree cannot be built from are reported with the lines that are not JSON, in file order.
      const skipped: AtofLineError[] = [];
      const readable = loaded.events.filter((event, i) => {
        const line = loaded.eventLines?.[i];
        const unreadable = unreadableEventError(event as unknown as Record<string, unknown>, line ?? 0, line === undefined ? i + 1 : undefined);
        if (unreadable !== undefined) skipped.push(unreadable);
        return unreadable === undefined;
      });
      const lineErrors = [...loaded.lineErrors, ...skipped].sort((a, b) => a.line - b.line);
      return { kind: 'atof', roots: treesFromAtof(readable), lineErrors: lineErrors.map((error) => error.message), notes: [] };
    }
    case 'hooks':
      throw new InputError(`${name} is a recorded hook stream; run "nemo-relay-hooks replay ${name} --out <dir>" first`);
    case 'unknown':
      throw new InputError(`${name}: ${loaded.reason}`);
  }
}

/**
 * One note when a trajectory declares a `schema_version` this package does not know (a newer `ATIF-v2.0`): it is
 * shown as far as the known fields go, and the reader is told the view may leave out what the new version added.
 * An absent version is Harbor's default (`ATIF-v1.7`), known.
 */
function unknownVersionNotes(document: { schema_version?: unknown }): string[] {
  const declared = document.schema_version;
  if (declared === undefined || declared === null || (ATIF_SCHEMA_VERSIONS as readonly unknown[]).includes(declared)) return [];
  const known = `${ATIF_SCHEMA_VERSIONS[0]} to ${ATIF_SCHEMA_VERSIONS.at(-1)!}`;
  return [`schema_version ${quotedValue(declared, 40)} is not one this version of nemo-relay-hooks knows (${known}): what it shows may be incomplete`];
}

/**
 * Why a JSONL input with lines holds no ATOF event at all (another program's
 * log, text), else undefined: such a file is the wrong file, refused as a JSON
 * file that is not a trajectory is, not an ATOF file that recorded nothing
 * (an empty file is that, and shows no sessions).
 */
function noAtofEvents(events: readonly unknown[], lineErrors: readonly AtofLineError[]): string | undefined {
  if (events.some(looksLikeAtofEvent) || events.length + lineErrors.length === 0) return undefined;
  if (events.length === 0) return lineErrors[0]!.message;
  return noAtofEventAmong(events.length + lineErrors.length);
}

/** A file's sessions, each built when asked: `roots.at(i)` of a streamed ATOF file reads that session's lines back. */
export interface OpenedSessions {
  name: string;
  kind: 'atif' | 'atof';
  roots: RootList;
  /** The session ids, in order, made unique (`uniqueSessionIds`). */
  ids: string[];
  /** Whether the sessions are built on demand (an indexed ATOF input): each `at` builds a fresh tree. */
  streamed: boolean;
  /** An indexed ATOF input's index (`linkAtofFiles` joins another input's sessions to its own through it). */
  index?: AtofIndex;
  lineErrors: string[];
  /** `LoadedSessions.notes`: said once per input. */
  notes: string[];
}

/**
 * The sessions of an input: an ATOF file on disk is streamed line by line
 * and indexed (`AtofIndex`), never read whole; anything else (an ATIF
 * document, standard input, a file whose first line is not an ATOF event)
 * is read whole and judged by its content, as `sessionsOf` does; standard
 * input that is ATOF is then indexed from the bytes read, as a file is.
 */
export async function openSessions(file: string, io?: CliIo): Promise<OpenedSessions> {
  const name = inputName(file);
  if (file !== STDIN) {
    const size = checkInputFile(file);
    let kind: ReturnType<typeof firstLineKind>;
    try {
      kind = firstLineKind(file);
    } catch (error) {
      throw new InputError(describeFsError(error, 'cannot read', file));
    }
    if (kind === 'atof') {
      const index = new AtofIndex(file, { summaries: false });
      // A line on a terminal while a large file is indexed (after half a second), gone when done.
      const progress = io ? new Progress(io, { label: `reading ${path.basename(file)}`, unit: 'lines', totalBytes: size }) : undefined;
      try {
        index.readOn(size, true, progress ? (lines, offset) => progress.update(lines, offset, `${formatCount(index.sessions.length)} sessions`) : undefined);
      } catch (error) {
        throw new InputError(describeFsError(error, 'cannot read', file));
      } finally {
        progress?.clear();
      }
      if (index.unknownMajor !== undefined) throw new InputError(`${name}: ATOF major version ${index.unknownMajor}; this reader knows ATOF 0.x only`);
      return { name, kind: 'atof', roots: index.roots(), ids: index.sessions.map((indexed) => indexed.session), streamed: true, index, lineErrors: index.lineErrors.map((error) => error.message), notes: [] };
    }
  }
  const text = await readInputText(file);
  const loaded = sessionsOf(name, text, file === STDIN ? 'stdin.jsonl' : file);
  if (file === STDIN && loaded.kind === 'atof') {
    // Indexed as a file is (from the bytes read): its sessions are then joined to another input's as a file's are.
    const bytes = Buffer.from(text);
    const index = new AtofIndex(name, { summaries: false, bytes });
    index.readOn(bytes.length, true);
    return { name, kind: 'atof', roots: index.roots(), ids: index.sessions.map((indexed) => indexed.session), streamed: true, index, lineErrors: loaded.lineErrors, notes: [] };
  }
  return { name, kind: loaded.kind, roots: loaded.roots, ids: uniqueSessionIds(loaded.roots.map(sessionIdOf)), streamed: false, lineErrors: loaded.lineErrors, notes: loaded.notes };
}
