import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../.ci/docs.ts';
import { cli, cliInProcess, EXAMPLES, expectNoStack, tempDir } from './support.ts';

// The executable itself (a child process) for the program's own help, version and
// first usage and file errors; the per-command cases run the same dispatcher in
// this process (cliInProcess), where a child per case would only add its start-up.

const COMMANDS = ['replay', 'convert', 'validate', 'view', 'compare', 'doctor', 'demo'];

describe('nemo-relay-hooks usage', () => {
  it('lists every command with --help and exits 0', () => {
    const result = cli(['--help']);
    expect(result.code).toBe(0);
    for (const command of COMMANDS) expect(result.stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
  });

  it('prints the overview and exits 2 when no command is given', () => {
    const result = cli([]);
    expect(result.code).toBe(2);
    expect(result.stdout).toContain('Usage: nemo-relay-hooks <command>');
  });

  it.each(COMMANDS.filter((command) => command !== 'demo'))('"%s --help" names the page that documents its --json shape, and that page does', async (command) => {
    // The shapes moved from the README to docs/cli/README.md; a help text that
    // still sent readers to the README sent them to a page without them.
    const help = (await cliInProcess([command, '--help'])).stdout;
    const named = /--json\s+.*\(shape: (\S+?)[,;)]/.exec(help)?.[1];
    expect(named, help).toBeDefined();
    const page = readFileSync(path.join(ROOT, named!), 'utf8');
    expect(page).toContain(`\`${command} --json\``);
  });

  it('prints the package version with --version', () => {
    const result = cli(['--version']);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it.each(COMMANDS)('prints the usage and options of "%s" with --help, -h and "help <command>"', async (command) => {
    for (const args of [[command, '--help'], [command, '-h'], ['help', command]]) {
      const result = await cliInProcess(args);
      expect(result.code, args.join(' ')).toBe(0);
      expect(result.stdout).toContain(`Usage: nemo-relay-hooks ${command}`);
      expect(result.stdout).toContain('--help');
      expect(result.stderr).toBe('');
    }
  });

  it('--help wins over missing required arguments (the executable)', () => {
    const result = cli(['replay', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('--strict');
  });

  it('rejects an unknown command with one line and exit code 2', () => {
    const result = cli(['frobnicate']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('nemo-relay-hooks: unknown command "frobnicate"; run "nemo-relay-hooks --help" for the list\n');
  });

  it.each([
    [['replay', 'x.jsonl', '--out'], /flag --out needs a value/],
    [['replay', 'x.jsonl', '--out', 'o', '--bogus'], /unknown flag --bogus for "replay"/],
    [['replay', 'x.jsonl', '--out', 'o', '--backend', 'quantum'], /--backend must be one of memory, native, auto/],
    [['replay', 'x.jsonl'], /"replay" needs --out <dir>/],
    [['replay', '--out', 'o'], /"replay" needs a <hooks.jsonl> argument/],
    [['convert', 'a.jsonl', 'b.jsonl', '--out', 'o'], /unexpected argument "b.jsonl" for "convert"/],
    [['validate'], /"validate" needs a <file> argument/],
    [['doctor', 'extra'], /"doctor" takes no arguments/],
    [['view', 'x.json', '--strict'], /unknown flag --strict for "view"/],
    [['replay', 'x.jsonl', '--out', 'o', '--strict=yes'], /flag --strict takes no value/],
    [['replay', 'x.jsonl', '--out', 'o', '-Z'], /unknown flag -Z for "replay"/],
  ])('reports the usage error in %j on one line with exit code 2', async (args, message) => {
    const result = await cliInProcess(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^nemo-relay-hooks: .*\(see "nemo-relay-hooks \w+ --help"\)\n$/);
    expectNoStack(result.stderr);
  });

  it.each([
    ['replay', ['replay', 'missing.jsonl', '--out']],
    ['convert', ['convert', 'missing.jsonl', '--out']],
    ['view', ['view', 'missing.json']],
  ])('%s: a missing input file is one line and exit code 1, never a stack trace', async (name, args) => {
    const dir = tempDir();
    const full = args.includes('--out') ? [...args, path.join(dir, 'out')] : args;
    // replay through the executable, the others in process.
    const run = name === 'replay' ? async (argv: string[]) => cli(argv) : cliInProcess;
    const result = await run(full.map((arg) => (arg === 'missing.jsonl' || arg === 'missing.json' ? path.join(dir, arg) : arg)));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^nemo-relay-hooks: cannot read .*missing\.jsonl?: no such file or directory\n$/);
    expectNoStack(result.stderr);
  });

  it('reports a folder given as the input file', async () => {
    const dir = tempDir();
    const result = await cliInProcess(['validate', dir]);
    expect(result.code).toBe(1);
    // validate reads the recorded files in a folder (validate.test.ts): an empty one has none, and it says so.
    expect(result.stdout).toBe(`✗ ${dir}: cannot read ${dir}: a folder without a .json or .jsonl file in it (its sub-folders are not read: name one)\n`);
    const replayed = await cliInProcess(['replay', dir, '--out', path.join(dir, 'out')]);
    expect(replayed.code).toBe(1);
    expect(replayed.stderr).toBe(`nemo-relay-hooks: cannot read ${dir}: is a directory\n`);
    // view also says what reads a folder.
    const viewed = await cliInProcess(['view', dir]);
    expect(viewed.code).toBe(1);
    expect(viewed.stderr).toBe(`nemo-relay-hooks: cannot read ${dir}: is a directory; to list and open its sessions, run "nemo-relay-hooks view --serve ${dir}"\n`);
  });

  it('reports an output folder that cannot be created', () => {
    const dir = tempDir();
    const blocker = path.join(dir, 'file');
    writeFileSync(blocker, 'not a folder');
    const result = cli(['replay', path.join(EXAMPLES, 'plain-chat.hooks.jsonl'), '--out', path.join(blocker, 'out')]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`nemo-relay-hooks: cannot write to ${path.join(blocker, 'out')}: a parent is not a directory\n`);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expectNoStack(result.stderr);
  });

  it('reports an output folder that holds a file where a subfolder must go', async () => {
    const dir = tempDir();
    const locked = path.join(dir, 'locked');
    mkdirSync(locked);
    writeFileSync(path.join(locked, 'atif'), 'a file where the atif folder should be');
    const result = await cliInProcess(['replay', path.join(EXAMPLES, 'plain-chat.hooks.jsonl'), '--out', locked]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^nemo-relay-hooks: cannot write to .*atif: /);
    expectNoStack(result.stderr);
  });
});
