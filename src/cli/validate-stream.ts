/**
 * ATOF validation of files too large to load whole (a replay of millions of
 * hooks writes hundreds of megabytes). The file is streamed and validated in
 * stretches that end where no scope is open, so every start/end pair falls
 * inside one stretch and the pairing rules hold exactly as for the whole
 * file. Paths keep their file-wide event index.
 *
 * One check is weaker than the whole-file one: a uuid reused in a later
 * stretch, after its scope closed, is not reported (remembering every uuid
 * would cost the memory this avoids). A file whose scopes never all close
 * (unpaired starts left by a crash) is held until they do, or to its end.
 *
 * @module
 */

import type { ValidationError } from '../formats/validation-result.ts';
import { parseAtofLine, validateAtofStretch, type TimestampOrder, type ValidateAtofOptions } from '../formats/atof/validate.ts';
import { readLines, type InvalidUtf8 } from './files.ts';

/** Events per stretch before it is validated at the next point where no scope is open. */
const STRETCH_EVENTS = 20_000;

export interface StreamedAtofResult {
  events: number;
  errors: ValidationError[];
  warnings: ValidationError[];
  /** The `atof_version` of the first event that has one. */
  version: string | undefined;
}

/** `stretchEvents`: the stretch size (the CLI's; a test reads a file in many stretches without writing a large one). */
export async function validateAtofFile(
  file: string,
  maxErrors = 1000,
  options: ValidateAtofOptions = {},
  onInvalidUtf8?: (at: InvalidUtf8) => void,
  stretchEvents = STRETCH_EVENTS,
): Promise<StreamedAtofResult> {
  const errors: ValidationError[] = [];
  const warnings: ValidationError[] = [];
  let version: string | undefined;
  let batch: unknown[] = [];
  let offset = 0;
  let events = 0;
  const open = new Set<string>();
  // One `atof.unsorted` for the file, as read whole, also where only a stretch's first events are earlier than the last one's.
  const order: TimestampOrder = { latest: undefined, reported: false };
  const push = (error: ValidationError): void => {
    if (errors.length < maxErrors) errors.push(error);
  };
  const flush = (): void => {
    // Paths and messages (which name the paired event) use file-wide indexes.
    const shift = (text: string) => text.replace(/\$\[(\d+)\]/g, (_match, index: string) => `$[${offset + Number(index)}]`);
    const result = validateAtofStretch(batch, options, order);
    version ??= result.version;
    for (const error of result) push({ ...error, path: shift(error.path), message: shift(error.message) });
    for (const warning of result.warnings) {
      if (warnings.length < maxErrors) warnings.push({ ...warning, path: shift(warning.path), message: shift(warning.message) });
    }
    offset += batch.length;
    batch = [];
  };
  for await (const line of readLines(file, { onInvalidUtf8 })) {
    // The whole-file reader's rule for a line (`parseAtofJsonl`): the same errors, streamed or not.
    const parsed = parseAtofLine(line.text, line.number, line.unterminated);
    if (parsed === undefined) continue;
    if (parsed.error !== undefined) {
      push(parsed.error);
      continue;
    }
    const value = parsed.event!;
    events += 1;
    batch.push(value);
    const event = value as { kind?: unknown; scope_category?: unknown; uuid?: unknown };
    if (event.kind === 'scope' && typeof event.uuid === 'string') {
      if (event.scope_category === 'start') open.add(event.uuid);
      else if (event.scope_category === 'end') open.delete(event.uuid);
    }
    if (open.size === 0 && batch.length >= stretchEvents) flush();
  }
  flush();
  return { events, errors, warnings, version };
}
