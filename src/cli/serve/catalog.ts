/**
 * What `view --serve` knows about its folders: every ATIF (`.json`) and ATOF
 * (`.jsonl`, `.ndjson`) file under them, the sessions each holds, and which
 * files changed since the last look. Files are found by walking the folders
 * (symbolic links are not followed, so nothing outside them is read), and
 * re-read only when their size or modification time changed. A file that
 * is not a session (a `package.json`, a half-written trajectory) is listed
 * as a problem and keeps its last good sessions.
 *
 * @module
 */

import { closeSync, lstatSync, openSync, readdirSync, readFileSync, readSync, statSync, type Stats } from 'node:fs';
import path from 'node:path';
import { atofMajor } from '../../formats/atof/rules/envelope.ts';
import type { AtofEvent } from '../../formats/atof/types.ts';
import { parseAtofJsonl } from '../../formats/atof/validate.ts';
import { treesFromAtof } from '../view/from-atof.ts';
import { sessionsOf } from '../view/load.ts';
import { sessionIdOf, type ViewNode } from '../view/model.ts';
import { rollupOf, type Figures } from '../view/rollup.ts';

/** An ATIF document larger than this is listed as a problem rather than read whole (ATOF files are read in chunks, any size). */
const MAX_FILE_BYTES = 256 * 1024 * 1024;
/** ATOF files are read this many bytes at a time, and only the bytes appended since the last look. */
const CHUNK_BYTES = 4 * 1024 * 1024;
const ATOF_FILE = /\.(jsonl|ndjson)$/i;
const MAX_DEPTH = 6;
const SESSION_FILE = /\.(json|jsonl|ndjson)$/i;

interface CatalogFile {
  /** The file as shown: the folder as given, then the path under it. */
  name: string;
  absolute: string;
  size: number;
  mtimeMs: number;
  kind: 'atif' | 'atof' | null;
  roots: ViewNode[];
  problem?: string;
  /** The index rows of this file's sessions, worked out once per change. */
  entries?: SessionEntry[];
  /** ATOF files: the events read so far and the byte offset after the last complete line. */
  atof?: { events: AtofEvent[]; offset: number };
}

/** One row of the served index (`/api/sessions`). */
export interface SessionEntry extends Figures {
  key: string;
  file: string;
  kind: 'atif' | 'atof';
  session: string;
  title: string;
  note?: string;
  startUs: number | null;
  modifiedMs: number;
}

export class Catalog {
  readonly folders: readonly string[];
  /** Bumped on every change the clients are told about. */
  version = 0;
  private readonly files = new Map<string, CatalogFile>();

  constructor(folders: readonly string[]) {
    this.folders = folders;
  }

  /** Looks at the folders again; returns the names of the files that appeared, changed or went away. */
  refresh(): string[] {
    const seen = new Set<string>();
    const changed: string[] = [];
    this.folders.forEach((folder) => {
      for (const absolute of walk(path.resolve(folder), 0)) {
        const name = path.join(folder, path.relative(path.resolve(folder), absolute));
        if (seen.has(name)) continue;
        seen.add(name);
        let stat: Stats;
        try {
          stat = statSync(absolute);
        } catch {
          continue;
        }
        const known = this.files.get(name);
        if (known && known.size === stat.size && known.mtimeMs === stat.mtimeMs) continue;
        const read = this.read(name, absolute, stat, known);
        read.entries = read.kind === null ? [] : read.roots.map((root) => entryOf(read, root, read.kind!));
        this.files.set(name, read);
        changed.push(name);
      }
    });
    for (const name of [...this.files.keys()]) {
      if (!seen.has(name)) {
        this.files.delete(name);
        changed.push(name);
      }
    }
    if (changed.length > 0) this.version += 1;
    return changed;
  }

  private read(name: string, absolute: string, stat: Stats, previous: CatalogFile | undefined): CatalogFile {
    const entry: CatalogFile = { name, absolute, size: stat.size, mtimeMs: stat.mtimeMs, kind: previous?.kind ?? null, roots: previous?.roots ?? [] };
    if (ATOF_FILE.test(absolute)) return readAtof(entry, previous?.atof);
    if (stat.size > MAX_FILE_BYTES) return { ...entry, problem: `larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB; open it with "view" instead` };
    try {
      const text = readFileSync(absolute, 'utf8');
      const loaded = sessionsOf(name, text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
      return { ...entry, kind: loaded.kind, roots: loaded.roots };
    } catch (error) {
      return { ...entry, problem: error instanceof Error ? error.message : String(error) };
    }
  }

  /** Every session, newest file first. */
  sessions(): SessionEntry[] {
    const entries: SessionEntry[] = [];
    for (const file of this.files.values()) for (const entry of file.entries ?? []) entries.push(entry);
    return entries.sort((a, b) => b.modifiedMs - a.modifiedMs || (b.startUs ?? 0) - (a.startUs ?? 0) || a.key.localeCompare(b.key));
  }

  /** Files that could not be read as sessions (not counting files that hold none). */
  problems(): { file: string; problem: string }[] {
    return [...this.files.values()].filter((file) => file.problem !== undefined).map((file) => ({ file: file.name, problem: file.problem! }));
  }

  /** The session a key names, only ever from the catalog: a key is never turned into a path. */
  find(key: string): { file: string; session: string; root: ViewNode } | undefined {
    const hash = key.lastIndexOf('#');
    if (hash === -1) return undefined;
    const file = this.files.get(key.slice(0, hash));
    const session = key.slice(hash + 1);
    const root = file?.roots.find((candidate) => sessionIdOf(candidate) === session);
    return file && root ? { file: file.name, session, root } : undefined;
  }
}

/**
 * An ATOF file, read from where the last look stopped (from the start when
 * it shrank: rewritten), in chunks, up to its last complete line: a file
 * that grows by lines is never read again from the beginning, and no file
 * is held as one string.
 */
function readAtof(entry: CatalogFile, previous: CatalogFile['atof']): CatalogFile {
  const grown = previous !== undefined && entry.size >= previous.offset;
  const events = grown ? previous.events : [];
  let offset = grown ? previous.offset : 0;
  let descriptor: number;
  try {
    descriptor = openSync(entry.absolute, 'r');
  } catch (error) {
    return { ...entry, problem: error instanceof Error ? error.message : String(error) };
  }
  try {
    const buffer = Buffer.alloc(CHUNK_BYTES);
    let carry = Buffer.alloc(0);
    while (offset + carry.length < entry.size) {
      const read = readSync(descriptor, buffer, 0, Math.min(CHUNK_BYTES, entry.size - offset - carry.length), offset + carry.length);
      if (read === 0) break;
      const bytes = carry.length > 0 ? Buffer.concat([carry, buffer.subarray(0, read)]) : buffer.subarray(0, read);
      const end = bytes.lastIndexOf(0x0a);
      if (end === -1) {
        carry = Buffer.from(bytes);
        continue;
      }
      const text = bytes.subarray(0, end).toString('utf8');
      if (offset === 0 && events.length === 0) {
        const problem = firstLineProblem(text);
        if (problem !== undefined) return { ...entry, kind: null, roots: [], problem };
      }
      const parsed = parseAtofJsonl(text);
      for (const event of parsed.events) events.push(event);
      offset += end + 1;
      carry = Buffer.from(bytes.subarray(end + 1));
    }
  } finally {
    closeSync(descriptor);
  }
  const major = events.map((event) => atofMajor(event.atof_version)).find((value) => value !== undefined && value !== 0);
  if (major !== undefined) return { ...entry, kind: null, roots: [], problem: `ATOF major version ${major}; this reader knows ATOF 0.x only` };
  return { ...entry, kind: 'atof', roots: treesFromAtof(events), atof: { events, offset } };
}

/** Why a .jsonl file is not ATOF, judged by its first line (a hook stream says what to do instead); undefined when it may be. */
function firstLineProblem(text: string): string | undefined {
  const first = text.slice(0, text.indexOf('\n') === -1 ? undefined : text.indexOf('\n')).trim();
  if (first === '') return undefined;
  try {
    const value = JSON.parse(first) as { hook?: unknown };
    if (typeof value === 'object' && value !== null && typeof value.hook === 'string') return 'a recorded hook stream; run "nemo-relay-hooks replay" on it first';
    return undefined;
  } catch {
    return 'not ATOF JSONL (the first line is not JSON)';
  }
}

function entryOf(file: CatalogFile, root: ViewNode, kind: 'atif' | 'atof'): SessionEntry {
  const { totals } = rollupOf(root);
  const session = sessionIdOf(root);
  return {
    key: `${file.name}#${session}`,
    file: file.name,
    kind,
    session,
    title: root.title,
    ...(root.note !== undefined ? { note: root.note } : {}),
    startUs: root.startUs ?? null,
    durationUs: totals.durationUs,
    llmCalls: totals.llmCalls,
    toolCalls: totals.toolCalls,
    errors: totals.errors,
    promptTokens: totals.promptTokens,
    completionTokens: totals.completionTokens,
    cachedTokens: totals.cachedTokens,
    costUsd: totals.costUsd,
    modifiedMs: file.mtimeMs,
  };
}

/** Session files under `folder` (or `folder` itself when it is a file); links, dot folders and node_modules are skipped. */
function* walk(folder: string, depth: number): Generator<string> {
  let stat: Stats;
  try {
    stat = lstatSync(folder);
  } catch {
    return;
  }
  if (stat.isFile()) {
    if (depth === 0 || SESSION_FILE.test(folder)) yield folder;
    return;
  }
  if (!stat.isDirectory() || depth > MAX_DEPTH) return;
  let names: string[];
  try {
    names = readdirSync(folder).sort();
  } catch {
    return;
  }
  for (const name of names) {
    if (name.startsWith('.') || name === 'node_modules') continue;
    const child = path.join(folder, name);
    let childStat: Stats;
    try {
      childStat = lstatSync(child);
    } catch {
      continue;
    }
    if (childStat.isSymbolicLink()) continue;
    if (childStat.isDirectory()) yield* walk(child, depth + 1);
    else if (childStat.isFile() && SESSION_FILE.test(name)) yield child;
  }
}
