// The mistake a user makes with three file kinds: giving replay (which reads
// a recorded hook stream) an ATOF or ATIF file, or convert (ATOF events) a
// hook stream or a trajectory. Each is refused at once with one line naming
// the command that reads that file, exit 1 and no output folder, where it
// once reported every line malformed and exited 0 having written nothing.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../../src/cli/serve/catalog.ts';
import { cli, cliInProcess, EXAMPLES, expectNoStack, tempDir } from './support.ts';

const HOOKS = path.join(EXAMPLES, 'agent-session.hooks.jsonl');

describe('replay and convert given the wrong kind of file', () => {
  let dir: string;
  let atof: string;
  let atif: string;
  let pretty: string;

  beforeAll(async () => {
    dir = tempDir();
    const replayed = await cliInProcess(['replay', HOOKS, '--out', path.join(dir, 'run'), '--quiet']);
    expect(replayed.code, replayed.stderr).toBe(0);
    atof = path.join(dir, 'run', 'atof', 'agent-session-atof.jsonl');
    const written = readdirSync(path.join(dir, 'run', 'atif'));
    expect(written).toEqual(['agent-session-atif-demo-session-7f3a.json']);
    atif = path.join(dir, 'run', 'atif', written[0]!);
    // Another writer's layout (Harbor's, convert --profile nat): one member per line.
    pretty = path.join(dir, 'pretty.json');
    writeFileSync(pretty, JSON.stringify(JSON.parse(readFileSync(atif, 'utf8')), null, 2));
  });

  const refused = async (args: string[], says: string[]) => {
    const out = path.join(dir, `out-${Math.random().toString(36).slice(2)}`);
    const result = await cliInProcess([...args, '--out', out]);
    expectNoStack(result.stderr);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trim().split('\n');
    expect(lines, result.stderr).toHaveLength(1);
    for (const text of says) expect(lines[0]).toContain(text);
    expect(existsSync(out)).toBe(false);
  };

  it('replay refuses an ATOF event file and points to convert and view', async () => {
    await refused(['replay', atof], [`${atof} is an ATOF event file, not a recorded hook stream`, `"nemo-relay-hooks convert ${atof} --out <dir>"`, `"nemo-relay-hooks view ${atof}"`]);
  });

  it('replay refuses an ATIF trajectory, on one line or pretty-printed', async () => {
    await refused(['replay', atif], [`${atif} is an ATIF trajectory, not a recorded hook stream`, `"nemo-relay-hooks view ${atif}"`]);
    await refused(['replay', pretty], [`${pretty} is an ATIF trajectory, not a recorded hook stream`]);
  });

  it('convert refuses a recorded hook stream and points to replay', async () => {
    await refused(['convert', HOOKS], [`${HOOKS} is a recorded hook stream, not ATOF events`, `"nemo-relay-hooks replay ${HOOKS} --out <dir>"`]);
  });

  it('convert refuses an ATIF trajectory, on one line or pretty-printed', async () => {
    await refused(['convert', atif], [`${atif} is an ATIF trajectory, not ATOF events: there is nothing to convert`, `"nemo-relay-hooks validate ${atif}"`]);
    await refused(['convert', pretty], [`${pretty} is an ATIF trajectory, not ATOF events`]);
  });

  it('convert refuses a JSONL file none of whose lines is an ATOF event, as view does, where it printed every line malformed and exited 0', async () => {
    // A user trial converted a notes file and a README: twenty "not valid JSON" lines, "converted 0 events", exit 0, an empty folder.
    const log = path.join(dir, 'server-log.jsonl');
    writeFileSync(log, '{"at":1,"url":"/v1/responses","kind":"responses"}\n{"at":2,"url":"/v1/chat/completions","kind":"chat"}\n');
    const text = path.join(dir, 'notes.jsonl');
    writeFileSync(text, 'hello\n\nworld\n');
    await refused(['convert', log], [`${log} holds no ATOF events: none of its 2 lines is an ATOF event`]);
    await refused(['convert', text], [`${text} holds no ATOF events: none of its 2 lines is an ATOF event`]);
    // Standard input is read once, not looked at first: its lines are reported, then the same verdict.
    const piped = cli(['convert', '-', '--out', path.join(dir, 'piped-notes')], { input: readFileSync(text) });
    expect(piped.code, piped.stderr).toBe(1);
    expect(piped.stderr.trim().split('\n').at(-1)).toBe('nemo-relay-hooks: (stdin) holds no ATOF events: none of its 2 lines is an ATOF event (one has an atof_version, or a kind "scope" or "mark" and a uuid)');
    // Junk before the events is still skipped and reported, and the events converted.
    const mixed = path.join(dir, 'mixed-convert.jsonl');
    writeFileSync(mixed, `${readFileSync(text, 'utf8')}${readFileSync(atof, 'utf8')}`);
    const converted = await cliInProcess(['convert', mixed, '--out', path.join(dir, 'mixed-out')]);
    expect(converted.code, converted.stderr).toBe(0);
    expect(converted.stdout).toContain('  malformed  2 lines skipped');
    expect(readdirSync(path.join(dir, 'mixed-out'))).toEqual(['agent-atif-demo-session-7f3a.json']);
  });

  it('view given a folder (the plugin\'s nemo-relay-output/) points to view --serve, which lists a folder\'s sessions', async () => {
    const folder = path.join(dir, 'run');
    const result = await cliInProcess(['view', folder]);
    expectNoStack(result.stderr);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim()).toBe(`nemo-relay-hooks: cannot read ${folder}: is a directory; to list and open its sessions, run "nemo-relay-hooks view --serve ${folder}"`);
  });

  it('view and compare refuse a JSONL file that holds no ATOF event (another program\'s log, text) with one line, as a JSON file that is no trajectory is', async () => {
    // A user trial pointed view at its loopback server's own JSONL log: "(no sessions in server-log.jsonl)", exit 0.
    const log = path.join(dir, 'server-log.jsonl');
    writeFileSync(log, '{"at":1,"url":"/v1/responses","kind":"responses"}\n{"at":2,"url":"/v1/chat/completions","kind":"chat"}\n');
    const text = path.join(dir, 'notes.jsonl');
    writeFileSync(text, 'not json\n');
    const cases: Array<[string[], number, string]> = [
      [['view', log], 1, `nemo-relay-hooks: ${log} holds no ATOF events: none of its 2 lines is an ATOF event`],
      [['view', log, '--json'], 1, `nemo-relay-hooks: ${log} holds no ATOF events: none of its 2 lines is an ATOF event`],
      [['view', text], 1, `nemo-relay-hooks: ${text} holds no ATOF events: line 1 is not valid JSON`],
      [['compare', log, atof], 2, `nemo-relay-hooks: ${log} holds no ATOF events: none of its 2 lines is an ATOF event`],
    ];
    for (const [args, code, says] of cases) {
      const result = await cliInProcess(args);
      expectNoStack(result.stderr);
      expect(result.code, result.stderr).toBe(code);
      expect(result.stdout).toBe('');
      expect(result.stderr.trim().split('\n'), result.stderr).toHaveLength(1);
      expect(result.stderr).toContain(says);
    }
    // An empty file is an ATOF file that recorded nothing, and an ATOF file after junk lines is still read.
    const empty = path.join(dir, 'empty.jsonl');
    writeFileSync(empty, '');
    expect(await cliInProcess(['view', empty])).toMatchObject({ code: 0, stdout: `(no sessions in ${empty})\n` });
    const mixed = path.join(dir, 'mixed.jsonl');
    writeFileSync(mixed, `${readFileSync(log, 'utf8')}${readFileSync(atof, 'utf8')}`);
    const read = await cliInProcess(['view', mixed]);
    expect(read.code, read.stderr).toBe(0);
    expect(read.stdout).toMatch(/session demo-session-7f3a .*7 LLM calls, 5 tool calls/);
  });

  it('view --serve lists a trajectory saved as .jsonl as what it is, and the ATIF beside it as a session', () => {
    const folder = path.join(dir, 'served');
    mkdirSync(folder);
    // Ended by a newline, as a JSONL line is: without one the server waits for the line to end.
    writeFileSync(path.join(folder, 'one-line.jsonl'), `${readFileSync(atif, 'utf8')}\n`);
    writeFileSync(path.join(folder, 'pretty.jsonl'), readFileSync(pretty, 'utf8'));
    writeFileSync(path.join(folder, 'trajectory.json'), readFileSync(atif, 'utf8'));
    const catalog = new Catalog([folder]);
    catalog.refresh();
    const why = 'an ATIF trajectory, not ATOF JSONL (name it .json to list its session)';
    expect(catalog.problems().map((problem) => [path.basename(problem.file), problem.problem]).sort()).toEqual([
      ['one-line.jsonl', why],
      ['pretty.jsonl', why],
    ]);
    expect(catalog.sessions().map((session) => [path.basename(session.file), session.session, session.llmCalls, session.promptTokens])).toEqual([['trajectory.json', 'demo-session-7f3a', 7, 6654]]);
  });

  it('still reads the right kind, and a file of junk lines is still reported line by line', async () => {
    const converted = await cliInProcess(['convert', atof, '--out', path.join(dir, 'converted'), '--json']);
    expect(converted.code, converted.stderr).toBe(0);
    expect(JSON.parse(converted.stdout).counters).toMatchObject({ sessions: 1, subagents: 1, steps: 9, promptTokens: 6654, completionTokens: 290, cachedTokens: 4352 });
    const junk = path.join(dir, 'junk.jsonl');
    writeFileSync(junk, '{"a":1}\n{"b":2}\n');
    const replayed = await cliInProcess(['replay', junk, '--out', path.join(dir, 'junk')]);
    expect(replayed.stderr).toContain(`${junk}:1: missing "hook"`);
    expect(replayed.stderr).toContain(`${junk}:2: missing "hook"`);
  });
});
