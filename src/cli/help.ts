/**
 * Help text: the program overview and each command's `--help`, generated
 * from the command specs so flags and help cannot drift apart.
 *
 * @module
 */

import type { CommandSpec } from './args.ts';

export const PROGRAM = 'nemo-relay-hooks';

export function commandHelp(spec: CommandSpec): string {
  const lines = [`Usage: ${PROGRAM} ${spec.name} ${spec.usage}`, '', spec.summary + '.'];
  if (spec.details) lines.push('', spec.details);
  const flags = Object.entries(spec.flags).filter(([, flag]) => !flag.hidden);
  if (flags.length > 0) {
    lines.push('', 'Options:');
    const labels = flags.map(([name, flag]) => `${flag.short ? `-${flag.short}, ` : '    '}--${name}${flag.type === 'string' ? ` ${flag.value ?? '<value>'}` : ''}`);
    const width = Math.max(...labels.map((label) => label.length)) + 2;
    flags.forEach(([, flag], index) => lines.push(`  ${labels[index]!.padEnd(width)}${flag.description}`));
  }
  return `${lines.join('\n')}\n`;
}

export function programHelp(specs: readonly CommandSpec[], version: string): string {
  const width = Math.max(...specs.map((spec) => spec.name.length)) + 2;
  return [
    `${PROGRAM} ${version}: turn agent hook logs into NeMo Relay ATOF events and ATIF trajectories.`,
    '',
    `Usage: ${PROGRAM} <command> [options]`,
    '',
    'Commands:',
    ...specs.map((spec) => `  ${spec.name.padEnd(width)}${spec.summary}`),
    '',
    'Options:',
    '  -h, --help     Show help (also after any command: replay --help)',
    '  -V, --version  Print the version',
    '',
    'Exit codes: 0 success, 1 failure (invalid files, unreadable input, --strict), 2 usage error;',
    'compare (like diff): 0 equivalent, 1 different, 2 usage or input error.',
    '',
  ].join('\n');
}
