/**
 * `validate <file>...`: checks ATIF v1.7 documents and ATOF 0.1 event files
 * with the library's validators, telling them apart by content.
 *
 * Each problem is one line, `<file>: <json path>: <rule>: <message>`,
 * followed by a summary line per file. Exit code 1 when any file has a
 * problem (or cannot be read), 0 otherwise.
 *
 * @module
 */

import path from 'node:path';
import { validateAtif } from '../../formats/atif/validate.ts';
import { validateAtofEvents } from '../../formats/atof/validate.ts';
import type { ValidationError } from '../../formats/validation.ts';
import { booleanFlag, HELP_FLAG, stringFlag, type CommandSpec, type ParsedArgs } from '../args.ts';
import { CliError, UsageError } from '../errors.ts';
import { checkInputFile, readLines, readTextFile } from '../files.ts';
import { validateAtofFile } from '../validate-stream.ts';
import { loadByContent } from '../detect.ts';
import { formatCount, type CliIo } from '../io.ts';

export const validateSpec: CommandSpec = {
  name: 'validate',
  summary: 'Check ATIF (.json) and ATOF (.jsonl) files against their specs',
  usage: '<file>...',
  details: [
    'ATIF v1.0-v1.8 rules (Harbor\'s models: no unknown fields, step ids 1..n, agent-only',
    'fields, tool-call references, token types, ...) and ATOF 0.1 rules (the spec\'s MUST',
    'as errors, its SHOULD as warnings; lines sorted by timestamp before pairing). The kind',
    'is detected from the content. Prints "<file>: <json path>: <rule>: <message>" per',
    'error, the same with "(warning)" after the rule per warning, and a summary line per',
    'file with the version read; exits 1 when any file has an error.',
  ].join('\n'),
  flags: {
    strict: { type: 'boolean', description: 'Also reject what the ATOF spec requires but native omits (custom events without category_profile.subtype).' },
    'stream-above': { type: 'string', value: '<bytes>', hidden: true, description: 'ATOF files larger than this are validated streaming (default 64 MiB).' },
    help: HELP_FLAG,
  },
  positionals: { name: '<file>', min: 1, max: Number.POSITIVE_INFINITY },
};

/** ATOF files above this size are validated streaming rather than loaded whole. */
const STREAM_ABOVE_BYTES = 64 * 1024 * 1024;

async function firstLineIsAtof(file: string): Promise<boolean> {
  for await (const line of readLines(file)) {
    if (line.text.trim() === '') continue;
    try {
      const value = JSON.parse(line.text) as Record<string, unknown> | null;
      return typeof value === 'object' && value !== null && !Array.isArray(value) && ('atof_version' in value || value.kind === 'scope' || value.kind === 'mark');
    } catch {
      return false;
    }
  }
  return false;
}

export async function validate(args: ParsedArgs, io: CliIo): Promise<number> {
  const { style } = io;
  let failed = 0;
  const streamAbove = Number(stringFlag(args, 'stream-above', String(STREAM_ABOVE_BYTES)));
  if (!Number.isFinite(streamAbove) || streamAbove < 0) throw new UsageError('--stream-above must be a number of bytes', 'validate');
  const atofOptions = { strict: booleanFlag(args, 'strict') };
  for (const file of args.positionals) {
    let text: string;
    try {
      if (checkInputFile(file) > streamAbove && (await firstLineIsAtof(file))) {
        // Too large to load whole: stream it (same rules, bounded memory).
        const streamed = await validateAtofFile(file, 1000, atofOptions);
        printFindings(io, file, streamed.errors, streamed.warnings);
        const what = `${atofVersion(streamed.version)}, ${formatCount(streamed.events)} event${streamed.events === 1 ? '' : 's'}, streamed${warningCount(streamed.warnings)}`;
        if (streamed.errors.length === 0) io.out(`${style.green('✓')} ${file}: valid (${what})\n`);
        else {
          failed += 1;
          io.out(`${style.red('✗')} ${file}: ${formatCount(streamed.errors.length)}${streamed.errors.length >= 1000 ? '+' : ''} errors (${what})\n`);
        }
        continue;
      }
      text = readTextFile(file);
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      failed += 1;
      io.out(`${style.red('✗')} ${file}: ${error.message}\n`);
      continue;
    }
    const loaded = loadByContent(file, text);
    let errors: ValidationError[];
    let warnings: ValidationError[] = [];
    let what: string;
    switch (loaded.kind) {
      case 'atif': {
        const result = validateAtif(loaded.document, { baseDir: path.dirname(path.resolve(file)) });
        errors = result.errors;
        warnings = result.warnings;
        const doc = loaded.document as { steps?: unknown };
        const steps = Array.isArray(doc.steps) ? doc.steps.length : 0;
        what = `ATIF ${result.version ?? '(no schema_version: read as ATIF-v1.7, Harbor\'s default)'}, ${formatCount(steps)} step${steps === 1 ? '' : 's'}${warningCount(warnings)}`;
        break;
      }
      case 'atof': {
        const result = validateAtofEvents(loaded.events, atofOptions);
        errors = [...loaded.lineErrors, ...result.errors];
        warnings = result.warnings;
        what = `${atofVersion(result.version)}, ${formatCount(loaded.events.length)} event${loaded.events.length === 1 ? '' : 's'}${warningCount(warnings)}`;
        break;
      }
      case 'hooks':
        errors = [{ path: '$', rule: 'file.hook_stream', message: 'this is a recorded hook stream, not ATOF/ATIF; turn it into files with "nemo-relay-hooks replay"' }];
        what = 'hook stream';
        break;
      case 'unknown':
        errors = [{ path: '$', rule: 'file.unrecognised', message: loaded.reason }];
        what = 'unrecognised';
        break;
    }
    printFindings(io, file, errors, warnings);
    if (errors.length === 0) {
      io.out(`${style.green('✓')} ${file}: valid (${what})\n`);
    } else {
      failed += 1;
      io.out(`${style.red('✗')} ${file}: ${formatCount(errors.length)} error${errors.length === 1 ? '' : 's'} (${what})\n`);
    }
  }
  return failed > 0 ? 1 : 0;
}

/** One line per error, then one per warning (marked, so a reader or grep tells them apart). */
function printFindings(io: CliIo, file: string, errors: readonly ValidationError[], warnings: readonly ValidationError[]): void {
  for (const error of errors) io.out(`${file}: ${error.path}: ${error.rule}: ${error.message}\n`);
  for (const warning of warnings) io.out(`${file}: ${warning.path}: ${warning.rule} (warning): ${warning.message}\n`);
}

function atofVersion(version: string | undefined): string {
  return version === undefined ? 'ATOF (no atof_version)' : `ATOF ${version}`;
}

function warningCount(warnings: readonly ValidationError[]): string {
  return warnings.length === 0 ? '' : `, ${formatCount(warnings.length)} warning${warnings.length === 1 ? '' : 's'}`;
}
