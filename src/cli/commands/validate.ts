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
import { booleanFlag, HELP_FLAG, JSON_FLAG, stringFlag, type CommandSpec, type ParsedArgs } from '../args.ts';
import { CliError, UsageError } from '../errors.ts';
import { checkInputFile, inputName, readInputText, readLines, STDIN } from '../files.ts';
import { validateAtofFile } from '../validate-stream.ts';
import { loadByContent } from '../detect.ts';
import { formatCount, type CliIo, type Style } from '../io.ts';
import { safeForTerminal } from '../terminal-text.ts';

export const validateSpec: CommandSpec = {
  name: 'validate',
  summary: 'Check ATIF (.json) and ATOF (.jsonl) files against their specs',
  usage: '<file|->... [--json]',
  details: [
    'ATIF v1.7 rules (Harbor\'s models: no unknown fields, step ids 1..n, agent-only',
    'fields, tool-call references, token types, ...) and ATOF 0.1 rules (envelope,',
    'categories, start/end pairing, end after start). The kind is detected from the',
    'content. Prints "<file>: <json path>: <rule>: <message>" per problem and a',
    'summary line per file; exits 1 when any file has a problem. A file that is valid',
    'but records nothing (no events, no steps) is reported as "valid but empty". "-"',
    'reads standard input; --json prints per-file verdicts with errors and warnings.',
  ].join('\n'),
  flags: {
    'stream-above': { type: 'string', value: '<bytes>', hidden: true, description: 'ATOF files larger than this are validated streaming (default 64 MiB).' },
    json: JSON_FLAG,
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

/** One file's verdict in `validate --json` (documented in the README). */
export interface FileVerdict {
  file: string;
  kind: 'atif' | 'atof' | 'hooks' | 'unknown' | 'unreadable';
  /** `schema_version` of an ATIF document, `atof_version` of the first ATOF event (or "0.1"). */
  version: string | null;
  valid: boolean;
  /** Valid but records nothing (no events, no steps). */
  empty: boolean;
  /** Events (ATOF) or steps (ATIF). */
  count: number;
  streamed: boolean;
  errors: ValidationError[];
  warnings: ValidationError[];
}

/** What `validate --json` prints. */
export interface ValidateReport {
  command: 'validate';
  ok: boolean;
  files: FileVerdict[];
  counters: { files: number; valid: number; invalid: number; empty: number };
}

const isWarning = (error: ValidationError): boolean => (error as { level?: unknown }).level === 'warning';

export async function validate(args: ParsedArgs, io: CliIo): Promise<number> {
  const json = booleanFlag(args, 'json');
  const streamAbove = Number(stringFlag(args, 'stream-above', String(STREAM_ABOVE_BYTES)));
  if (!Number.isFinite(streamAbove) || streamAbove < 0) throw new UsageError('--stream-above must be a number of bytes', 'validate');
  if (args.positionals.filter((file) => file === STDIN).length > 1) throw new UsageError('standard input ("-") can be read only once', 'validate');
  const verdicts: FileVerdict[] = [];
  for (const file of args.positionals) {
    const verdict = await check(file, streamAbove);
    verdicts.push(verdict);
    if (!json) io.out(renderVerdict(verdict, io.style));
  }
  const invalid = verdicts.filter((verdict) => !verdict.valid).length;
  if (json) {
    const report: ValidateReport = {
      command: 'validate',
      ok: invalid === 0,
      files: verdicts,
      counters: { files: verdicts.length, valid: verdicts.length - invalid, invalid, empty: verdicts.filter((verdict) => verdict.empty).length },
    };
    io.out(`${JSON.stringify(report, null, 2)}\n`);
  }
  return invalid > 0 ? 1 : 0;
}

async function check(file: string, streamAbove: number): Promise<FileVerdict> {
  const name = inputName(file);
  const verdict = (kind: FileVerdict['kind'], version: string | null, count: number, problems: ValidationError[], streamed = false): FileVerdict => {
    const errors = problems.filter((problem) => !isWarning(problem));
    const warnings = problems.filter(isWarning);
    const empty = errors.length === 0 && count === 0 && (kind === 'atif' || kind === 'atof');
    if (empty) {
      warnings.push({
        path: '$',
        rule: 'file.empty',
        message: kind === 'atof' ? 'no events: the file is valid ATOF but records nothing' : 'no steps: the trajectory is valid but records nothing',
      });
    }
    return { file: name, kind, version, valid: errors.length === 0, empty, count, streamed, errors, warnings };
  };
  let text: string;
  try {
    if (file !== STDIN && checkInputFile(file) > streamAbove && (await firstLineIsAtof(file))) {
      // Too large to load whole: stream it (same rules, bounded memory).
      const streamed = await validateAtofFile(file);
      return verdict('atof', '0.1', streamed.events, streamed.errors, true);
    }
    text = await readInputText(file);
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    return { ...verdict('unreadable', null, 0, [{ path: '$', rule: 'file.unreadable', message: error.message }]) };
  }
  const loaded = loadByContent(file === STDIN ? 'stdin.jsonl' : file, text);
  switch (loaded.kind) {
    case 'atif': {
      const baseDir = file === STDIN ? process.cwd() : path.dirname(path.resolve(file));
      const doc = loaded.document as { schema_version?: unknown; steps?: unknown };
      const steps = Array.isArray(doc.steps) ? doc.steps.length : 0;
      return verdict('atif', typeof doc.schema_version === 'string' ? doc.schema_version : null, steps, validateAtif(loaded.document, { baseDir }));
    }
    case 'atof': {
      const first = loaded.events[0] as { atof_version?: unknown } | undefined;
      const version = typeof first?.atof_version === 'string' ? first.atof_version : '0.1';
      return verdict('atof', version, loaded.events.length, [...loaded.lineErrors, ...validateAtofEvents(loaded.events)]);
    }
    case 'hooks':
      return verdict('hooks', null, 0, [{ path: '$', rule: 'file.hook_stream', message: 'this is a recorded hook stream, not ATOF/ATIF; turn it into files with "nemo-relay-hooks replay"' }]);
    case 'unknown':
      return verdict('unknown', null, 0, [{ path: '$', rule: 'file.unrecognised', message: loaded.reason }]);
  }
}

function renderVerdict(verdict: FileVerdict, style: Style): string {
  // Messages quote file content; a terminal must not act on escape sequences in it.
  const file = safeForTerminal(verdict.file);
  const safe = (error: ValidationError, level = '') => `${safeForTerminal(error.path)}: ${error.rule}: ${level}${safeForTerminal(error.message)}`;
  if (verdict.kind === 'unreadable') return `${style.red('✗')} ${file}: ${safeForTerminal(verdict.errors[0]?.message ?? 'cannot read')}\n`;
  const lines: string[] = [];
  for (const error of verdict.errors) lines.push(`${file}: ${safe(error)}`);
  for (const warning of verdict.warnings) if (warning.rule !== 'file.empty') lines.push(`${file}: ${safe(warning, 'warning: ')}`);
  const unit = verdict.kind === 'atif' ? 'step' : 'event';
  const what =
    verdict.kind === 'atif'
      ? `ATIF ${verdict.version ?? '(no schema_version)'}, ${formatCount(verdict.count)} ${unit}${verdict.count === 1 ? '' : 's'}`
      : verdict.kind === 'atof'
        ? `ATOF ${verdict.version}, ${formatCount(verdict.count)} ${unit}${verdict.count === 1 ? '' : 's'}${verdict.streamed ? ', streamed' : ''}`
        : verdict.kind === 'hooks'
          ? 'hook stream'
          : 'unrecognised';
  const errors = verdict.errors.length;
  if (errors > 0) lines.push(`${style.red('✗')} ${file}: ${formatCount(errors)}${verdict.streamed && errors >= 1000 ? '+' : ''} error${errors === 1 ? '' : 's'} (${what})`);
  else if (verdict.empty) lines.push(`${style.yellow('!')} ${file}: valid but empty (${what}): nothing was recorded`);
  else lines.push(`${style.green('✓')} ${file}: valid (${what})`);
  return `${lines.join('\n')}\n`;
}
