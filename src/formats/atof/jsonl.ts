/**
 * ATOF JSONL text to events: one JSON object a line, blank lines skipped,
 * every other line that is not an object reported with its number.
 *
 * @module
 */

import type { AtofEvent } from './types.ts';
import type { ValidationError } from '../validation-result.ts';
import { isRecord } from '../../shared/record.ts';


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
}

/** Parses ATOF JSONL text. Never throws; malformed lines are reported with their line numbers. */
export function parseAtofJsonl(text: string): AtofParseResult {
  const events: AtofEvent[] = [];
  const errors: AtofLineError[] = [];
  const lines = text.split('\n');
  lines.forEach((raw, i) => {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') return;
    const lineNumber = i + 1;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      errors.push({
        line: lineNumber,
        path: `line ${lineNumber}`,
        rule: 'atof.malformed_line',
        message: `line ${lineNumber} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
      });
      return;
    }
    if (!isRecord(value)) {
      errors.push({ line: lineNumber, path: `line ${lineNumber}`, rule: 'atof.malformed_line', message: `line ${lineNumber} is not a JSON object` });
      return;
    }
    events.push(value as unknown as AtofEvent);
  });
  return { events, errors };
}
