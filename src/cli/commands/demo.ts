/**
 * `demo`: runs the bundled agent session (`src/demo/`) through
 * `HookRegistry` and the NeMo Relay plugin, writes its ATOF events, ATIF
 * trajectory and the recorded hook stream, checks them with the validators,
 * and prints the trajectory as a tree. `npm start` runs it.
 *
 * Decisions: the default output folder is a fresh folder under the OS temp
 * dir, so trying the demo never litters the working directory (the paths
 * are printed); `--out` picks one. The default backend is `auto`, like a
 * host's: native on Node when it loads, the in-memory relay elsewhere.
 *
 * @module
 */

import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { agentSession, realClock } from '../../demo/index.ts';
import { HookRegistry } from '../../hooks/index.ts';
import { createNemoRelayPlugin } from '../../plugin/plugin.ts';
import { createHookRecorder } from '../../hook-log/hook-recorder.ts';
import { validateAtif } from '../../formats/atif/validate.ts';
import { parseAtofJsonl, validateAtofEvents } from '../../formats/atof/validate.ts';
import type { BackendName } from '../../backends/select.ts';
import { booleanFlag, HELP_FLAG, stringFlag, type CommandSpec, type ParsedArgs } from '../args.ts';
import { describeFsError, InputError } from '../errors.ts';
import { safeForTerminal } from '../terminal-text.ts';
import { ensureOutputDir, ensureOutputSubfolders, refuseLinkedOutputs } from '../files.ts';
import type { CliIo } from '../io.ts';
import { treeFromAtif } from '../view/from-atif.ts';
import { renderText } from '../view/text.ts';
import { cliLogger, withAtofFile } from './replay.ts';
import { cliInvocation } from '../invocation.ts';
import { detectRuntime } from '../../shared/js-runtime.ts';

const ATOF_FILENAME = 'demo-atof.jsonl';

export const demoSpec: CommandSpec = {
  name: 'demo',
  summary: 'Run a bundled agent session through the plugin and show the result',
  usage: '[--out <dir>] [--backend auto|native|memory] [--fast]',
  details: [
    'The session: one turn with a rate-limited API call and its retry (same',
    'api_request_id), parallel tool calls, an approval, and a subagent with its own',
    'LLM calls and a failing tool. Writes <dir>/hooks.jsonl (the recorded hooks),',
    '<dir>/atof/ and <dir>/atif/, validates them and prints the trajectory.',
    'Default <dir>: a new folder under the OS temp dir.',
  ].join('\n'),
  flags: {
    out: { type: 'string', short: 'o', value: '<dir>', description: 'Output folder (default: a new temp folder).' },
    backend: {
      type: 'string',
      short: 'b',
      value: '<name>',
      choices: ['auto', 'native', 'memory'],
      description: 'Relay backend (default auto: native on Node when it loads, else memory).',
    },
    fast: { type: 'boolean', description: 'Skip the pauses that give the timeline realistic durations.' },
    help: HELP_FLAG,
  },
  positionals: { name: '', min: 0, max: 0 },
};

/** A path as the user can type it here: relative to the working directory when inside it, shell-quoted when needed. */
function shownFrom(cwd: string): (file: string) => string {
  return (file) => {
    const relative = path.relative(cwd, file);
    const text = relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : file;
    // Terminal-safe too: the --out folder is the user's name, and a control character in it must not act on the terminal.
    return safeForTerminal(/^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`);
  };
}

export async function demo(args: ParsedArgs, io: CliIo): Promise<number> {
  const shown = shownFrom(io.cwd);
  const out = stringFlag(args, 'out');
  let outDir: string;
  if (out === undefined) {
    try {
      outDir = mkdtempSync(path.join(os.tmpdir(), 'nemo-relay-demo-'));
    } catch (error) {
      throw new InputError(describeFsError(error, 'cannot create a folder in', os.tmpdir()));
    }
  } else {
    outDir = ensureOutputDir(out);
  }
  const [atofDir, atifDir] = ensureOutputSubfolders(outDir, out ?? outDir, ['atof', 'atif']) as [string, string];
  refuseLinkedOutputs(outDir, ['hooks.jsonl']);
  refuseLinkedOutputs(atofDir, [ATOF_FILENAME]);
  const backend = stringFlag(args, 'backend', 'auto') as BackendName;
  const logger = cliLogger(io, false);

  const registry = new HookRegistry({ logger });
  const plugin = createNemoRelayPlugin({
    backend,
    env: {},
    logger,
    settings: {
      atofEnabled: true,
      atofOutputDirectory: atofDir,
      atofFilename: ATOF_FILENAME,
      atofMode: 'overwrite',
      atifEnabled: true,
      atifOutputDirectory: atifDir,
      atifFilenameTemplate: 'demo-atif-{session_id}.json',
      atifAgentName: 'Demo Agent',
      atifAgentVersion: '1.0.0',
    },
  });
  // The recorder first: it stamps each hook as it is emitted, before the plugin's work on it, so a replay of
  // hooks.jsonl keeps the times this run's files have.
  const recorder = createHookRecorder(registry, path.join(outDir, 'hooks.jsonl'), { logger });
  plugin.register(registry);
  await plugin.ready;
  await agentSession({ hooks: registry, clock: realClock(booleanFlag(args, 'fast') ? 0 : 0.5) });
  recorder.close();
  await plugin.shutdown({ timeoutMs: 30_000 });

  const status = plugin.status();
  if (status.backend.kind === 'off') {
    io.err(`demo: nothing was recorded: the backend is off (${status.backend.reason}). The hooks are in ${recorder.path}; try --backend memory.\n`);
    return 1;
  }
  const { style } = io;
  io.out(`${style.bold('NeMo Relay demo')} (backend ${status.backend.kind}${status.backend.version ? ` ${status.backend.version}` : ''}): ${recorder.lines} hooks\n\n`);
  let invalid = 0;
  const atifFiles: string[] = [];
  for (const output of withAtofFile(status.outputs, path.join(atofDir, ATOF_FILENAME))) {
    const text = readFileSync(output.path, 'utf8');
    let recorded: number;
    let errors;
    if (output.kind === 'atif') {
      const document = JSON.parse(text) as { steps?: unknown };
      errors = validateAtif(document);
      recorded = Array.isArray(document.steps) ? document.steps.length : 0;
    } else {
      const parsed = parseAtofJsonl(text);
      errors = [...parsed.errors, ...validateAtofEvents(parsed.events)];
      recorded = parsed.events.length;
    }
    if (output.kind === 'atif') atifFiles.push(output.path);
    // The demo session always records something: an empty file means the backend lost it, not a valid run.
    const empty = recorded === 0;
    if (errors.length > 0 || empty) invalid += 1;
    const what = output.kind === 'atif' ? 'steps' : 'events';
    const mark = empty
      ? style.red(`✗ empty (0 ${what}: the backend recorded nothing)`)
      : errors.length === 0
        ? style.green('✓ valid')
        : style.red(`✗ ${errors.length} errors`);
    io.out(`  ${output.kind.toUpperCase()}  ${shown(output.path)}  ${mark}\n`);
    for (const error of errors.slice(0, 5)) io.out(`        ${error.path}: ${error.rule}: ${error.message}\n`);
  }
  io.out(`  hooks ${shown(recorder.path)}\n\n`);
  for (const file of atifFiles) {
    io.out(renderText(treeFromAtif(JSON.parse(readFileSync(file, 'utf8'))), style));
    io.out('\n');
  }
  const atif = shown(atifFiles[0] ?? path.join(atifDir, '*.json'));
  // Commands that work as printed, in the folder the demo ran in, on the runtime it ran on.
  const again = cliInvocation(detectRuntime(), process.argv[1], io.cwd, process.execPath);
  io.out(
    [
      'Next:',
      `  ${again} view ${atif} --html ${shown(path.join(outDir, 'timeline.html'))}`,
      `  ${again} replay ${shown(recorder.path)} --out ${shown(path.join(outDir, 'replayed'))}`,
      `  ${again} validate ${shown(path.join(atofDir, ATOF_FILENAME))} ${atif}`,
      '',
    ].join('\n'),
  );
  return invalid > 0 ? 1 : 0;
}
