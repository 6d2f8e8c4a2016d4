/**
 * Telling ATIF documents, ATOF event files and recorded hook streams apart
 * by their content (the extension only breaks ties), and loading them.
 *
 * @module
 */

import { closeSync, readSync } from 'node:fs';
import { InputError } from './errors.ts';
import { openRegularFile, STDIN } from './files.ts';
import path from 'node:path';
import type { AtofEvent } from '../formats/atof/types.ts';
import { parseAtofJsonl, type AtofLineError } from '../formats/atof/validate.ts';
import { isRecord } from '../shared/record.ts';
import { JsonTooDeepError, parseJson, whyNotJson } from '../shared/json.ts';
import { quotedValue } from '../shared/text.ts';

export type LoadedFile =
  | { kind: 'atif'; document: unknown }
  /** `eventLines[i]`: the 1-based line `events[i]` was read from; absent when the events came as one JSON list. */
  | { kind: 'atof'; events: AtofEvent[]; lineErrors: AtofLineError[]; eventLines?: number[] }
  | { kind: 'hooks' }
  | { kind: 'unknown'; reason: string };


/** An ATOF event as readers tell one: its `atof_version`, or a scope or mark with its `uuid`. */
export function looksLikeAtofEvent(value: unknown): boolean {
  return isRecord(value) && ('atof_version' in value || ((value.kind === 'scope' || value.kind === 'mark') && 'uuid' in value));
}

/**
 * Why a JSONL input of `lines` non-blank lines, none of them an ATOF event,
 * is not an ATOF file (another program's log, text): `view` and `convert`
 * refuse it with this, as a JSON file that is not a trajectory is refused.
 */
export function noAtofEventAmong(lines: number): string {
  return `${lines === 1 ? 'its one line is not' : `none of its ${lines} lines is`} an ATOF event (one has an atof_version, or a kind "scope" or "mark" and a uuid)`;
}

/**
 * Why a JSON object read from an ATOF file is no event the readers can use,
 * or undefined when it is one. `convert`, `view`, `compare` and the served
 * viewer take their events' kind, uuid and name as given (a scope's end is
 * matched to its start by uuid, an LLM call's name picks how its usage is
 * read), so a line where one of them is missing or of another type is
 * reported and skipped, as a line that is not JSON is; `validate` calls the
 * same line an error (`atof.type`, `atof.required`). `anyMarkName`: a mark whose name
 * is no string is kept (the viewer only shows a mark's name, by its JSON text then).
 */
export function whyNotReadableEvent(event: Readonly<Record<string, unknown>>, { anyMarkName = false }: { anyMarkName?: boolean } = {}): string | undefined {
  if (event.kind !== 'scope' && event.kind !== 'mark') return `not an ATOF event (kind ${quotedValue(event.kind)})`;
  for (const field of anyMarkName && event.kind === 'mark' ? (['uuid'] as const) : (['uuid', 'name'] as const)) {
    const value = event[field];
    if (value === undefined) return `ATOF event without a ${field}`;
    if (typeof value !== 'string') return `ATOF event whose ${field} is ${quotedValue(value, 40)}, not a string`;
  }
  return undefined;
}

/**
 * `whyNotReadableEvent` as the error of the viewer, which skips the event and reports it with the lines that are not
 * JSON (a mark's name may be anything there): `line` is where it was read, or, for events given as one JSON list, 0
 * with `item` its place in the list.
 */
export function unreadableEventError(event: Readonly<Record<string, unknown>>, line: number, item?: number): AtofLineError | undefined {
  const why = whyNotReadableEvent(event, { anyMarkName: true });
  if (why === undefined) return undefined;
  const where = item !== undefined ? `item ${item} of the list` : `line ${line}`;
  return { line, path: where, rule: 'atof.malformed_line', message: `${where}: ${why}` };
}

function looksLikeHookLine(value: unknown): boolean {
  return isRecord(value) && typeof value.hook === 'string' && 'payload' in value;
}

/** An ATIF document: an object with a `steps` list and the trajectory's own fields. */
function looksLikeTrajectory(value: unknown): boolean {
  return isRecord(value) && Array.isArray(value.steps) && ('schema_version' in value || 'agent' in value || 'session_id' in value);
}

/** The first member of a pretty-printed trajectory (the writers put one of these first). */
const TRAJECTORY_FIRST_MEMBER = /^\s*"(schema_version|session_id|trajectory_id|agent|steps)"\s*:/;

function atofOf(text: string): LoadedFile {
  const parsed = parseAtofJsonl(text);
  return { kind: 'atof', events: parsed.events, lineErrors: parsed.errors, eventLines: parsed.eventLines };
}

/** Classifies `text` (the content of `file`) and parses it accordingly. */
export function loadByContent(file: string, text: string): LoadedFile {
  const trimmed = text.trim();
  // An empty .jsonl is what a run that recorded nothing leaves: a valid ATOF file with no events.
  if (trimmed === '') {
    return path.extname(file).toLowerCase() === '.jsonl' ? { kind: 'atof', events: [], lineErrors: [] } : { kind: 'unknown', reason: 'the file is empty' };
  }
  let whole: unknown;
  let parsedWhole = false;
  let tooDeep: string | undefined;
  // The parser's own words (where it stopped): a file cut short says "Unexpected end of JSON input".
  let notJson = 'not valid JSON';
  try {
    whole = parseJson(trimmed);
    parsedWhole = true;
  } catch (error) {
    parsedWhole = false;
    if (error instanceof JsonTooDeepError) tooDeep = `valid JSON, but ${error.message}, more than this reader takes`;
    else notJson = whyNotJson(error);
  }
  if (parsedWhole) {
    if (isRecord(whole) && ('schema_version' in whole || 'steps' in whole || 'agent' in whole)) return { kind: 'atif', document: whole };
    if (looksLikeHookLine(whole)) return { kind: 'hooks' };
    if (looksLikeAtofEvent(whole)) return atofOf(text);
    if (Array.isArray(whole) && whole.every(looksLikeAtofEvent)) return { kind: 'atof', events: whole as AtofEvent[], lineErrors: [] };
  }
  const firstLine = trimmed.slice(0, trimmed.indexOf('\n') === -1 ? undefined : trimmed.indexOf('\n'));
  let first: unknown;
  try {
    first = parseJson(firstLine);
  } catch {
    first = undefined;
  }
  if (looksLikeHookLine(first)) return { kind: 'hooks' };
  if (looksLikeAtofEvent(first)) return atofOf(text);
  const extension = path.extname(file).toLowerCase();
  if (extension === '.jsonl' || extension === '.ndjson') return atofOf(text);
  if (extension === '.json') return parsedWhole ? { kind: 'atif', document: whole } : { kind: 'unknown', reason: tooDeep ?? notJson };
  return { kind: 'unknown', reason: 'neither an ATIF document nor ATOF JSONL' };
}

/** Bytes `firstLineKind` reads at most: a first line longer than this is not sniffed (the file is read whole instead). */
const SNIFF_BYTES = 1024 * 1024;

/**
 * What the first non-blank line of a file is, read without reading the
 * file: `atof` when it is an ATOF event (the file can be streamed line by
 * line), `hooks` for a recorded hook stream, `atif` for an ATIF document
 * (on one line, or pretty-printed), `not-json` when it is not JSON (another
 * pretty-printed document's `{` line too), `other` otherwise (an empty file,
 * a first line too long to sniff, or not ended yet in a `growing` file). `followLinks: false` refuses a link
 * (`openRegularFile`); what is not a regular file is an `InputError`.
 */
export function firstLineKind(file: string, { growing = false, followLinks = true }: { growing?: boolean; followLinks?: boolean } = {}): 'atof' | 'hooks' | 'atif' | 'not-json' | 'other' {
  const descriptor = openRegularFile(file, { followLinks });
  let text: string;
  let whole: boolean;
  try {
    const buffer = Buffer.alloc(SNIFF_BYTES);
    const read = readSync(descriptor, buffer, 0, SNIFF_BYTES, 0);
    text = buffer.toString('utf8', 0, read);
    whole = read < SNIFF_BYTES;
  } finally {
    closeSync(descriptor);
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const start = text.search(/\S/);
  if (start === -1) return 'other';
  let end = text.indexOf('\n', start);
  // A file being written (`growing`) may hold half its first line: it is judged once the line ends.
  if (end === -1 && (growing || !whole)) return 'other';
  if (end === -1) end = text.length;
  let first: unknown;
  try {
    first = parseJson(text.slice(start, end));
  } catch {
    return text.slice(start, end).trim() === '{' && prettyTrajectory(text.slice(start), whole) ? 'atif' : 'not-json';
  }
  if (looksLikeHookLine(first)) return 'hooks';
  if (looksLikeTrajectory(first)) return 'atif';
  return looksLikeAtofEvent(first) ? 'atof' : 'other';
}

/**
 * Whether `text`, which opens with a line holding only `{`, is a
 * pretty-printed ATIF document: parsed whole when the sniff read all of it,
 * else judged by its first member's name.
 */
function prettyTrajectory(text: string, whole: boolean): boolean {
  if (whole) {
    try {
      return looksLikeTrajectory(parseJson(text));
    } catch {
      return false;
    }
  }
  const second = text.split('\n', 2)[1];
  return second !== undefined && TRAJECTORY_FIRST_MEMBER.test(second);
}

/**
 * Stops `replay` (which reads a hook stream) or `convert` (ATOF events) at
 * once when the file holds another kind, naming the command that reads it:
 * read line by line, every line of it would be reported malformed and the
 * run would end "successfully" with nothing written. Standard input, read
 * once, is not sniffed.
 */
export function refuseOtherKind(file: string, wanted: 'hooks' | 'atof'): void {
  if (file === STDIN) return;
  let kind: ReturnType<typeof firstLineKind>;
  try {
    kind = firstLineKind(file);
  } catch {
    return; // The read that follows says what is wrong with the file.
  }
  const view = `"nemo-relay-hooks view ${file}"`;
  if (kind === 'atif') {
    throw new InputError(`${file} is an ATIF trajectory, not ${wanted === 'hooks' ? 'a recorded hook stream' : 'ATOF events'}: there is nothing to ${wanted === 'hooks' ? 'replay' : 'convert'}; look at it with ${view}, or check it with "nemo-relay-hooks validate ${file}"`);
  }
  if (wanted === 'hooks' && kind === 'atof') {
    throw new InputError(`${file} is an ATOF event file, not a recorded hook stream: turn it into ATIF trajectories with "nemo-relay-hooks convert ${file} --out <dir>", or look at it with ${view}`);
  }
  if (wanted === 'atof' && kind === 'hooks') {
    throw new InputError(`${file} is a recorded hook stream, not ATOF events: "nemo-relay-hooks replay ${file} --out <dir>" writes its ATOF events and ATIF trajectories`);
  }
}
