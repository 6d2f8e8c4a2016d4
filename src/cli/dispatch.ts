/**
 * The command dispatcher: picks the command, parses its flags, runs it and
 * turns every failure into one `nemo-relay-hooks: <message>` line and an
 * exit code. Nothing here exits the process; `main.ts` does.
 *
 * @module
 */

import { parseArgs, type CommandSpec, type ParsedArgs } from './args.ts';
import { compare, compareSpec } from './commands/compare.ts';
import { convert, convertSpec } from './commands/convert.ts';
import { demo, demoSpec } from './commands/demo.ts';
import { doctor, doctorSpec } from './commands/doctor.ts';
import { replay, replaySpec } from './commands/replay.ts';
import { validate, validateSpec } from './commands/validate.ts';
import { view, viewSpec } from './commands/view.ts';
import { CliError, UsageError } from './errors.ts';
import { commandHelp, PROGRAM, programHelp } from './help.ts';
import type { CliIo } from './io.ts';
import { packageVersion } from './package-info.ts';
import { safeForTerminal } from './terminal-text.ts';
import { debugEnabled } from '../shared/logger.ts';

interface Command {
  spec: CommandSpec;
  run(args: ParsedArgs, io: CliIo): Promise<number>;
}

const COMMANDS: readonly Command[] = [
  { spec: replaySpec, run: replay },
  { spec: convertSpec, run: convert },
  { spec: validateSpec, run: validate },
  { spec: viewSpec, run: view },
  { spec: compareSpec, run: compare },
  { spec: doctorSpec, run: doctor },
  { spec: demoSpec, run: demo },
];

/** Every command's spec, in the order `--help` lists them (the docs' flag tables are generated from these). */
export const COMMAND_SPECS: readonly CommandSpec[] = COMMANDS.map((command) => command.spec);

/** Runs the CLI for `argv` (without the runtime and script) and returns the exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const specs = COMMANDS.map((command) => command.spec);
  const [first, ...rest] = argv;
  try {
    if (first === undefined || first === '-h' || first === '--help') {
      io.out(programHelp(specs, packageVersion()));
      return first === undefined ? 2 : 0;
    }
    if (first === '-V' || first === '--version') {
      io.out(`${packageVersion()}\n`);
      return 0;
    }
    if (first === 'help') {
      const target = rest[0];
      if (target === undefined) {
        io.out(programHelp(specs, packageVersion()));
        return 0;
      }
      const command = COMMANDS.find((candidate) => candidate.spec.name === target);
      if (!command) throw new UsageError(`unknown command ${JSON.stringify(target)}; run "${PROGRAM} --help" for the list`);
      io.out(commandHelp(command.spec));
      return 0;
    }
    const command = COMMANDS.find((candidate) => candidate.spec.name === first);
    if (!command) {
      if (first.startsWith('-')) throw new UsageError(`unknown option ${first}; run "${PROGRAM} --help"`);
      throw new UsageError(`unknown command ${JSON.stringify(first)}; run "${PROGRAM} --help" for the list`);
    }
    const args = parseArgs(rest, command.spec);
    if (args.booleans.has('help')) {
      io.out(commandHelp(command.spec));
      return 0;
    }
    return await command.run(args, io);
  } catch (error) {
    return report(error, io);
  }
}

function report(error: unknown, io: CliIo): number {
  // Messages name files and quote their content (a parser's "Unexpected token" shows the bytes it met): escaped
  // here, where every one is printed, so none can drive the terminal (already escaped text stays as it is).
  if (error instanceof CliError) {
    const hint = error instanceof UsageError && error.command ? ` (see "${PROGRAM} ${error.command} --help")` : '';
    io.err(`${PROGRAM}: ${safeForTerminal(error.message)}${hint}\n`);
    return error.exitCode;
  }
  // A bug, not a user mistake: still one line, with a way to get the stack.
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  const debug = debugEnabled(io.env);
  io.err(`${PROGRAM}: internal error: ${safeForTerminal(message)}${debug ? '' : ' (set NEMO_RELAY_HOOKS_DEBUG=1 for the stack)'}\n`);
  if (debug && error instanceof Error && error.stack) io.err(`${error.stack}\n`);
  return 1;
}
