/**
 * `view <atif.json|atof.jsonl>...`: a readable tree and timeline of each
 * session (turns, LLM calls, tool calls, subagents nested under their
 * parents), with durations, tokens and errors; `--html <file>` also writes
 * a self-contained HTML timeline.
 *
 * @module
 */

import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { HELP_FLAG, stringFlag, type CommandSpec, type ParsedArgs } from '../args.ts';
import { atofMajor } from '../../formats/atof/rules/envelope.ts';
import { loadByContent } from '../detect.ts';
import { describeFsError, InputError } from '../errors.ts';
import { readTextFile } from '../files.ts';
import type { CliIo } from '../io.ts';
import { packageVersion } from '../package-info.ts';
import { isTrajectory, treeFromAtif } from '../view/from-atif.ts';
import { treesFromAtof } from '../view/from-atof.ts';
import { renderHtml, type HtmlSource } from '../view/html.ts';
import type { ViewNode } from '../view/model.ts';
import { renderText } from '../view/text.ts';

export const viewSpec: CommandSpec = {
  name: 'view',
  summary: 'Print sessions as a tree and timeline (and write an HTML timeline)',
  usage: '<atif.json|atof.jsonl>... [--html <file>]',
  details: [
    'Shows each session, its turns, the LLM calls and tool calls of each turn and the',
    'subagents under the calls that started them, with start offsets, durations and',
    'tokens. Failed calls are marked with ✗ and ERROR. --html writes one',
    'self-contained page (no network access) that a browser opens directly.',
  ].join('\n'),
  flags: {
    html: { type: 'string', value: '<file>', description: 'Also write an HTML timeline to <file>.' },
    help: HELP_FLAG,
  },
  positionals: { name: '<file>', min: 1, max: Number.POSITIVE_INFINITY },
};

export async function view(args: ParsedArgs, io: CliIo): Promise<number> {
  const sources: HtmlSource[] = [];
  for (const file of args.positionals) {
    const loaded = loadByContent(file, readTextFile(file));
    let roots: ViewNode[];
    switch (loaded.kind) {
      case 'atif':
        if (!isTrajectory(loaded.document)) throw new InputError(`${file} is JSON but not an ATIF trajectory (no "steps" list)`);
        roots = [treeFromAtif(loaded.document)];
        break;
      case 'atof': {
        const major = loaded.events.map((event) => atofMajor(event.atof_version)).find((value) => value !== undefined && value !== 0);
        if (major !== undefined) throw new InputError(`${file}: ATOF major version ${major}; this reader knows ATOF 0.x only`);
        for (const error of loaded.lineErrors) io.err(`nemo-relay-hooks: ${file}: ${error.message}\n`);
        roots = treesFromAtof(loaded.events);
        break;
      }
      case 'hooks':
        throw new InputError(`${file} is a recorded hook stream; run "nemo-relay-hooks replay ${file} --out <dir>" first`);
      case 'unknown':
        throw new InputError(`${file}: ${loaded.reason}`);
    }
    sources.push({ file, roots });
    if (args.positionals.length > 1) io.out(`${io.style.dim(`── ${file}`)}\n`);
    if (roots.length === 0) io.out(`(no sessions in ${file})\n`);
    roots.forEach((root, index) => {
      if (index > 0) io.out('\n');
      io.out(renderText(root, io.style));
    });
    if (args.positionals.length > 1) io.out('\n');
  }
  const html = stringFlag(args, 'html');
  if (html !== undefined) {
    const target = path.resolve(html);
    try {
      writeFileSync(target, renderHtml(sources, `nemo-relay-hooks ${packageVersion()}`), 'utf8');
    } catch (error) {
      throw new InputError(describeFsError(error, 'cannot write', html));
    }
    io.err(`wrote ${html}\n`);
  }
  return 0;
}
