/**
 * ATOF JSONL text to events: one JSON object a line, blank lines skipped,
 * every other line that is not an object reported with its number.
 *
 * @module
 */

import type { AtofEvent } from './types.ts';
import type { ValidationError } from '../validation-result.ts';
import { isRecord } from '../../shared/record.ts';
import { JsonTooDeepError, parseJson } from '../../shared/json.ts';


/** A JSONL line that is not a JSON object. */
export interface AtofLineError extends ValidationError {
  /** 1-based line number. */
  line: number;
}

/** What `parseAtofJsonl` read: the events of the well-formed lines and an error for each other one. */
export interface AtofParseResult {
  /** Every line that parsed to a JSON object, in file order. */
  events: AtofEvent[];
  /** Lines that did not; blank lines are skipped silently. */
  errors: AtofLineError[];
  /** `eventLines[i]`: the 1-based line `events[i]` was read from (a reader that skips an event names its line). */
  eventLines: number[];
}

/** Parses ATOF JSONL text. Never throws; malformed lines are reported with their line numbers. */
export function parseAtofJsonl(text: string): AtofParseResult {
  const events: AtofEvent[] = [];
  const errors: AtofLineError[] = [];
  const eventLines: number[] = [];
  const lines = text.split('\n');
  lines.forEach((raw, i) => {
    const parsed = parseAtofLine(raw, i + 1, i === lines.length - 1);
    if (parsed?.error) errors.push(parsed.error);
    else if (parsed?.event) {
      events.push(parsed.event);
      eventLines.push(i + 1);
    }
  });
  return { events, errors, eventLines };
}

/** What a last line that does not parse, with no newline after it, is: what a writer killed (or still writing) leaves. */
export const CUT_SHORT = 'cut short: the file ends inside it, with no newline (as a writer stopped mid-line leaves it)';

/**
 * One line of ATOF JSONL (`lineNumber` 1-based, for the error): the event,
 * the error saying why it is not one, or undefined for a blank line. The
 * rule of `parseAtofJsonl`, for readers that go line by line. `unterminated`:
 * the file ends inside this line (no newline after it), so a line that does
 * not parse is named as cut short, what a writer killed mid-line leaves.
 */
export function parseAtofLine(raw: string, lineNumber: number, unterminated = false): { event?: AtofEvent; error?: AtofLineError } | undefined {
  const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
  if (line.trim() === '') return undefined;
  let value: unknown;
  try {
    value = parseJson(line);
  } catch (error) {
    const message =
      error instanceof JsonTooDeepError
        ? `line ${lineNumber} is ${error.message}`
        : unterminated
          ? `line ${lineNumber} is ${CUT_SHORT}`
          : `line ${lineNumber} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`;
    return { error: { line: lineNumber, path: `line ${lineNumber}`, rule: 'atof.malformed_line', message } };
  }
  if (!isRecord(value)) return { error: { line: lineNumber, path: `line ${lineNumber}`, rule: 'atof.malformed_line', message: `line ${lineNumber} is not a JSON object` } };
  return { event: value as unknown as AtofEvent };
}
