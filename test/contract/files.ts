/**
 * Reading back the files a backend wrote, validating each one on the way:
 * every ATOF file must parse line by line and pass `validateAtofEvents`,
 * every ATIF file must pass `validateAtif`.
 */

import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import type { AtifTrajectory } from '../../src/formats/atif/types.ts';
import type { AtofEvent, AtofScopeCategory } from '../../src/formats/atof/types.ts';
import { atifErrorLines, expectedNativeErrors } from '../support/harbor.ts';
import { parseAtofJsonl, validateAtofEvents } from '../../src/formats/atof/validate.ts';

/** An ATOF record as read back: scope fields optional, so marks and scopes filter alike. */
export type ReadEvent = AtofEvent & { scope_category?: AtofScopeCategory; attributes?: string[] };

export interface AtofFile {
  events: ReadEvent[];
  /** The raw lines, for textual comparisons. */
  lines: string[];
}

/** Reads an ATOF JSONL file; fails the test if a line is malformed or an event invalid. */
export function readValidAtof(file: string): AtofFile {
  expect(fs.existsSync(file), `${file} exists`).toBe(true);
  const text = fs.readFileSync(file, 'utf8');
  const parsed = parseAtofJsonl(text);
  expect(parsed.errors, `${file} parses`).toEqual([]);
  expect(validateAtofEvents(parsed.events), `${file} is valid ATOF`).toEqual([]);
  return { events: parsed.events as ReadEvent[], lines: text.split('\n').filter((line) => line.trim() !== '') };
}

/**
 * Parses ATIF JSON text; fails the test if it is not a valid ATIF document,
 * apart from the one Harbor rule native breaks on purpose (`steps: []` for a
 * session without LLM calls), which must then be the only error.
 */
export function parseValidAtif(text: string, label = 'ATIF document'): AtifTrajectory {
  const doc = JSON.parse(text) as AtifTrajectory;
  expect(atifErrorLines(doc), `${label} is valid ATIF`).toEqual(expectedNativeErrors(doc));
  return doc;
}

/** Reads an ATIF file; fails the test if it is missing or invalid. */
export function readValidAtif(file: string): AtifTrajectory {
  expect(fs.existsSync(file), `${file} exists`).toBe(true);
  return parseValidAtif(fs.readFileSync(file, 'utf8'), file);
}

/** Every ATIF file in `dir` by file name, each validated. */
export function readAtifDir(dir: string): Map<string, AtifTrajectory> {
  const docs = new Map<string, AtifTrajectory>();
  if (!fs.existsSync(dir)) return docs;
  for (const name of fs.readdirSync(dir).sort()) {
    if (name.endsWith('.json')) docs.set(name, readValidAtif(path.join(dir, name)));
  }
  return docs;
}

/** The start and end event of each scope, by uuid. */
export function pairsByUuid(events: readonly ReadEvent[]): Map<string, { start?: ReadEvent; ends: ReadEvent[] }> {
  const pairs = new Map<string, { start?: ReadEvent; ends: ReadEvent[] }>();
  for (const event of events) {
    if (event.kind !== 'scope') continue;
    const pair = pairs.get(event.uuid) ?? { ends: [] };
    if (event.scope_category === 'start') pair.start = event;
    else pair.ends.push(event);
    pairs.set(event.uuid, pair);
  }
  return pairs;
}
