/**
 * One input file (ATIF or ATOF, by content) as view trees, for `view`,
 * `compare` and the served viewer. Files that are not sessions (a hook
 * stream, an ATOF major version this reader does not know) are an
 * `InputError` saying what to do instead.
 *
 * @module
 */

import { atofMajor } from '../../formats/atof/rules/envelope.ts';
import { loadByContent } from '../detect.ts';
import { InputError } from '../errors.ts';
import { isTrajectory, treeFromAtif } from './from-atif.ts';
import { treesFromAtof } from './from-atof.ts';
import type { ViewNode } from './model.ts';

export interface LoadedSessions {
  kind: 'atif' | 'atof';
  roots: ViewNode[];
  /** ATOF lines that could not be read (reported, not fatal). */
  lineErrors: string[];
}

/** The sessions of `text`, the content of the input named `name` (`detectAs` picks the extension used for ties). */
export function sessionsOf(name: string, text: string, detectAs = name): LoadedSessions {
  const loaded = loadByContent(detectAs, text);
  switch (loaded.kind) {
    case 'atif':
      if (!isTrajectory(loaded.document)) throw new InputError(`${name} is JSON but not an ATIF trajectory (no "steps" list)`);
      return { kind: 'atif', roots: [treeFromAtif(loaded.document)], lineErrors: [] };
    case 'atof': {
      const major = loaded.events.map((event) => atofMajor(event.atof_version)).find((value) => value !== undefined && value !== 0);
      if (major !== undefined) throw new InputError(`${name}: ATOF major version ${major}; this reader knows ATOF 0.x only`);
      return { kind: 'atof', roots: treesFromAtof(loaded.events), lineErrors: loaded.lineErrors.map((error) => error.message) };
    }
    case 'hooks':
      throw new InputError(`${name} is a recorded hook stream; run "nemo-relay-hooks replay ${name} --out <dir>" first`);
    case 'unknown':
      throw new InputError(`${name}: ${loaded.reason}`);
  }
}
