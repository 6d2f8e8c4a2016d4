/**
 * Telling ATIF documents, ATOF event files and recorded hook streams apart
 * by their content (the extension only breaks ties), and loading them.
 *
 * @module
 */

import path from 'node:path';
import type { AtofEvent } from '../formats/atof/types.ts';
import { parseAtofJsonl, type AtofLineError } from '../formats/atof/validate.ts';
import { isRecord } from '../shared/record.ts';

export type LoadedFile =
  | { kind: 'atif'; document: unknown }
  | { kind: 'atof'; events: AtofEvent[]; lineErrors: AtofLineError[] }
  | { kind: 'hooks' }
  | { kind: 'unknown'; reason: string };


function looksLikeAtofEvent(value: unknown): boolean {
  return isRecord(value) && ('atof_version' in value || ((value.kind === 'scope' || value.kind === 'mark') && 'uuid' in value));
}

function looksLikeHookLine(value: unknown): boolean {
  return isRecord(value) && typeof value.hook === 'string' && 'payload' in value;
}

function atofOf(text: string): LoadedFile {
  const parsed = parseAtofJsonl(text);
  return { kind: 'atof', events: parsed.events, lineErrors: parsed.errors };
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
  try {
    whole = JSON.parse(trimmed);
    parsedWhole = true;
  } catch {
    parsedWhole = false;
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
    first = JSON.parse(firstLine);
  } catch {
    first = undefined;
  }
  if (looksLikeHookLine(first)) return { kind: 'hooks' };
  if (looksLikeAtofEvent(first)) return atofOf(text);
  const extension = path.extname(file).toLowerCase();
  if (extension === '.jsonl' || extension === '.ndjson') return atofOf(text);
  if (extension === '.json') return parsedWhole ? { kind: 'atif', document: whole } : { kind: 'unknown', reason: 'not valid JSON' };
  return { kind: 'unknown', reason: 'neither an ATIF document nor ATOF JSONL' };
}
