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

import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { validateAtif } from '../../formats/atif/validate.ts';
import { validateAtofEvents } from '../../formats/atof/validate.ts';
import type { ValidationError } from '../../formats/validation-result.ts';
import { booleanFlag, HELP_FLAG, JSON_FLAG, stringFlag, type CommandSpec, type ParsedArgs } from '../args.ts';
import { CliError, UsageError } from '../errors.ts';
import { checkInputFile, inputName, readInputText, readLines, STDIN, type InvalidUtf8 } from '../files.ts';
import { validateAtofFile } from '../validate-stream.ts';
import { loadByContent } from '../detect.ts';
import { formatCount, type CliIo, type Style } from '../io.ts';
import { safeForTerminal } from '../terminal-text.ts';
import { parseJson } from '../../shared/json.ts';
import { isRecord } from '../../shared/record.ts';

export const validateSpec: CommandSpec = {
  name: 'validate',
  summary: 'Check ATIF (.json) and ATOF (.jsonl) files against their specs',
  usage: '<file|->... [--json]',
  details: [
    'ATIF v1.0-v1.8 rules (Harbor\'s models: no unknown fields, step ids 1..n, agent-only',
    'fields, tool-call references, token types, ...) and ATOF 0.1 rules (the spec\'s MUST',
    'as errors, its SHOULD as warnings; lines sorted by timestamp before pairing). The kind',
    'is detected from the content. Prints "<file>: <json path>: <rule>: <message>" per',
    'error, the same with "(warning)" after the rule per warning, and a summary line per',
    'file with the version read; exits 1 when any file has an error. A file that is valid',
    'but records nothing (no events, no steps) is reported as "valid but empty". "-"',
    'reads standard input; --json prints per-file verdicts with errors and warnings. A',
    'folder (the plugin\'s nemo-relay-output/) stands for the .json and .jsonl files in it',
    '(not in its sub-folders).',
  ].join('\n'),
  flags: {
    'stream-above': { type: 'string', value: '<bytes>', hidden: true, description: 'ATOF files larger than this are validated streaming (default 64 MiB).' },
    strict: { type: 'boolean', description: 'Also reject what the ATOF spec requires but native omits (custom events without category_profile.subtype).' },
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
      const value = parseJson(line.text) as Record<string, unknown> | null;
      return typeof value === 'object' && value !== null && !Array.isArray(value) && ('atof_version' in value || value.kind === 'scope' || value.kind === 'mark');
    } catch {
      return false;
    }
  }
  return false;
}

/** One file's verdict in `validate --json` (documented in docs/cli/README.md). */
interface FileVerdict {
  file: string;
  kind: 'atif' | 'atof' | 'hooks' | 'unknown' | 'unreadable';
  /** The version read: an ATIF document's `schema_version`, the ATOF events' `atof_version`; null when absent. */
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
interface ValidateReport {
  command: 'validate';
  ok: boolean;
  files: FileVerdict[];
  counters: { files: number; valid: number; invalid: number; empty: number };
}

export async function validate(args: ParsedArgs, io: CliIo): Promise<number> {
  const json = booleanFlag(args, 'json');
  const streamAbove = Number(stringFlag(args, 'stream-above', String(STREAM_ABOVE_BYTES)));
  if (!Number.isFinite(streamAbove) || streamAbove < 0) throw new UsageError('--stream-above must be a number of bytes', 'validate');
  if (args.positionals.filter((file) => file === STDIN).length > 1) throw new UsageError('standard input ("-") can be read only once', 'validate');
  const verdicts: FileVerdict[] = [];
  for (const file of args.positionals.flatMap(filesOf)) {
    const verdict = await check(file, streamAbove, { strict: booleanFlag(args, 'strict') });
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

/** The ATIF and ATOF files a folder holds; its dot files are the plugin's half-written temporaries. */
const RECORDED_FILE = /^[^.].*\.(json|jsonl|ndjson)$/;

/**
 * A folder argument stands for the recorded files directly in it: the
 * plugin says it records to ./nemo-relay-output/, and that folder is what a
 * user checks first. A folder without one stays itself, and its verdict
 * says why it cannot be read.
 */
function filesOf(argument: string): string[] {
  if (argument === STDIN) return [argument];
  try {
    if (!statSync(argument).isDirectory()) return [argument];
    const files = readdirSync(argument)
      .filter((name) => RECORDED_FILE.test(name))
      .sort()
      .map((name) => path.join(argument, name))
      .filter((file) => statSync(file).isFile());
    return files.length > 0 ? files : [argument];
  } catch {
    return [argument];
  }
}

function isFolder(file: string): boolean {
  try {
    return statSync(file).isDirectory();
  } catch {
    return false;
  }
}

async function check(file: string, streamAbove: number, atofOptions: { strict: boolean }): Promise<FileVerdict> {
  const name = inputName(file);
  // Bytes that are not UTF-8 read as U+FFFD, so the rest of the checks see text; the file is still invalid (RFC 8259 §8.1).
  let encoding: InvalidUtf8 | undefined;
  const onInvalidUtf8 = (at: InvalidUtf8): void => void (encoding = at);
  const verdict = (
    kind: FileVerdict['kind'],
    version: string | null,
    count: number,
    found: ValidationError[],
    foundWarnings: readonly ValidationError[] = [],
    streamed = false,
  ): FileVerdict => {
    const errors = [...found];
    if (encoding !== undefined) {
      errors.unshift({
        path: kind === 'atof' ? `line ${encoding.line}` : '$',
        rule: 'file.utf8',
        message: `not valid UTF-8 at byte ${encoding.offset} (line ${encoding.line}): JSON text must be UTF-8, and readers that decode strictly refuse the file`,
      });
    }
    const warnings = [...foundWarnings];
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
  if (file !== STDIN && isFolder(file)) {
    // filesOf left it: nothing recorded is in it.
    return verdict('unreadable', null, 0, [{ path: '$', rule: 'file.unreadable', message: `cannot read ${file}: a folder without a .json or .jsonl file in it (its sub-folders are not read: name one)` }]);
  }
  let text: string;
  try {
    if (file !== STDIN && checkInputFile(file) > streamAbove && (await firstLineIsAtof(file))) {
      // Too large to load whole: stream it (same rules, bounded memory).
      const streamed = await validateAtofFile(file, 1000, atofOptions, onInvalidUtf8);
      return verdict('atof', streamed.version ?? null, streamed.events, streamed.errors, streamed.warnings, true);
    }
    text = await readInputText(file, { onInvalidUtf8 });
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    return { ...verdict('unreadable', null, 0, [{ path: '$', rule: 'file.unreadable', message: error.message }]) };
  }
  const loaded = loadByContent(file === STDIN ? 'stdin.jsonl' : file, text);
  switch (loaded.kind) {
    case 'atif': {
      const baseDir = file === STDIN ? process.cwd() : path.dirname(path.resolve(file));
      // A .json file holding JSON that is no object (null, a number) is read as a trajectory too, for validateAtif to say so.
      const doc = loaded.document;
      const steps = isRecord(doc) && Array.isArray(doc.steps) ? doc.steps.length : 0;
      const result = validateAtif(loaded.document, { baseDir });
      return verdict('atif', result.version ?? null, steps, result.errors, result.warnings);
    }
    case 'atof': {
      const result = validateAtofEvents(loaded.events, atofOptions);
      return verdict('atof', result.version ?? null, loaded.events.length, [...loaded.lineErrors, ...result.errors], result.warnings);
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
  const safe = (error: ValidationError) => `${safeForTerminal(error.path)}: ${error.rule}: ${safeForTerminal(error.message)}`;
  if (verdict.kind === 'unreadable') return `${style.red('✗')} ${file}: ${safeForTerminal(verdict.errors[0]?.message ?? 'cannot read')}\n`;
  const lines: string[] = [];
  for (const error of verdict.errors) lines.push(`${file}: ${safe(error)}`);
  for (const warning of verdict.warnings) {
    if (warning.rule !== 'file.empty') lines.push(`${file}: ${safeForTerminal(warning.path)}: ${warning.rule} (warning): ${safeForTerminal(warning.message)}`);
  }
  const unit = verdict.kind === 'atif' ? 'step' : 'event';
  const what =
    verdict.kind === 'atif'
      ? `ATIF ${verdict.version ?? '(no schema_version: read as ATIF-v1.7, Harbor\'s default)'}, ${formatCount(verdict.count)} ${unit}${verdict.count === 1 ? '' : 's'}${warningCount(verdict.warnings)}`
      : verdict.kind === 'atof'
        ? `${verdict.version === null ? 'ATOF (no atof_version)' : `ATOF ${verdict.version}`}, ${formatCount(verdict.count)} ${unit}${verdict.count === 1 ? '' : 's'}${verdict.streamed ? ', streamed' : ''}${warningCount(verdict.warnings)}`
        : verdict.kind === 'hooks'
          ? 'hook stream'
          : 'unrecognised';
  const errors = verdict.errors.length;
  if (errors > 0) lines.push(`${style.red('✗')} ${file}: ${formatCount(errors)}${verdict.streamed && errors >= 1000 ? '+' : ''} error${errors === 1 ? '' : 's'} (${what})`);
  else if (verdict.empty) lines.push(`${style.yellow('!')} ${file}: valid but empty (${what}): nothing was recorded`);
  else lines.push(`${style.green('✓')} ${file}: valid (${what})`);
  return `${lines.join('\n')}\n`;
}

function warningCount(warnings: readonly ValidationError[]): string {
  const shown = warnings.filter((warning) => warning.rule !== 'file.empty').length;
  return shown === 0 ? '' : `, ${formatCount(shown)} warning${shown === 1 ? '' : 's'}`;
}
