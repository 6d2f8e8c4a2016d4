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
import { validateAtif } from '../../relay/formats/validate-atif.ts';
import { validateAtofEvents } from '../../relay/formats/validate-atof.ts';
import type { ValidationError } from '../../relay/formats/validation.ts';
import { HELP_FLAG, type CommandSpec, type ParsedArgs } from '../args.ts';
import { CliError } from '../errors.ts';
import { readTextFile } from '../files.ts';
import { loadByContent } from '../detect.ts';
import { formatCount, type CliIo } from '../io.ts';

export const validateSpec: CommandSpec = {
  name: 'validate',
  summary: 'Check ATIF (.json) and ATOF (.jsonl) files against their specs',
  usage: '<file>...',
  details: [
    'ATIF v1.7 rules (Harbor\'s models: no unknown fields, step ids 1..n, agent-only',
    'fields, tool-call references, token types, ...) and ATOF 0.1 rules (envelope,',
    'categories, start/end pairing, end after start). The kind is detected from the',
    'content. Prints "<file>: <json path>: <rule>: <message>" per problem and a',
    'summary line per file; exits 1 when any file has a problem.',
  ].join('\n'),
  flags: { help: HELP_FLAG },
  positionals: { name: '<file>', min: 1, max: Number.POSITIVE_INFINITY },
};

export async function validate(args: ParsedArgs, io: CliIo): Promise<number> {
  const { style } = io;
  let failed = 0;
  for (const file of args.positionals) {
    let text: string;
    try {
      text = readTextFile(file);
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      failed += 1;
      io.out(`${style.red('✗')} ${file}: ${error.message}\n`);
      continue;
    }
    const loaded = loadByContent(file, text);
    let errors: ValidationError[];
    let what: string;
    switch (loaded.kind) {
      case 'atif': {
        errors = validateAtif(loaded.document, { baseDir: path.dirname(path.resolve(file)) });
        const doc = loaded.document as { schema_version?: unknown; steps?: unknown };
        const steps = Array.isArray(doc.steps) ? doc.steps.length : 0;
        what = `ATIF ${typeof doc.schema_version === 'string' ? doc.schema_version : '(no schema_version)'}, ${formatCount(steps)} step${steps === 1 ? '' : 's'}`;
        break;
      }
      case 'atof':
        errors = [...loaded.lineErrors, ...validateAtofEvents(loaded.events)];
        what = `ATOF 0.1, ${formatCount(loaded.events.length)} event${loaded.events.length === 1 ? '' : 's'}`;
        break;
      case 'hooks':
        errors = [{ path: '$', rule: 'file.hook_stream', message: 'this is a recorded hook stream, not ATOF/ATIF; turn it into files with "nemo-relay-hooks replay"' }];
        what = 'hook stream';
        break;
      case 'unknown':
        errors = [{ path: '$', rule: 'file.unrecognised', message: loaded.reason }];
        what = 'unrecognised';
        break;
    }
    for (const error of errors) io.out(`${file}: ${error.path}: ${error.rule}: ${error.message}\n`);
    if (errors.length === 0) {
      io.out(`${style.green('✓')} ${file}: valid (${what})\n`);
    } else {
      failed += 1;
      io.out(`${style.red('✗')} ${file}: ${formatCount(errors.length)} error${errors.length === 1 ? '' : 's'} (${what})\n`);
    }
  }
  return failed > 0 ? 1 : 0;
}
