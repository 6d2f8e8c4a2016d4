// Files cut short (a copy that stopped, a disk that filled): every command
// says where the JSON stopped, in the runtime's own words, with one line and
// no stack. A trajectory cut in half was only "not valid JSON", which did not
// tell a truncated file from one that never was JSON.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cliInProcess, EXAMPLES, expectNoStack, tempDir } from './support.ts';

/** What this runtime's JSON.parse says about `text`. */
function parserSays(text: string): string {
  try {
    JSON.parse(text);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('the text parsed');
}

describe('files cut short', () => {
  let dir: string;
  let atif: string;
  let atof: string;
  let whole: string;

  beforeAll(async () => {
    dir = tempDir();
    expect((await cliInProcess(['replay', path.join(EXAMPLES, 'agent-session.hooks.jsonl'), '--out', path.join(dir, 'run'), '--quiet'])).code).toBe(0);
    whole = path.join(dir, 'run', 'atif', readdirSync(path.join(dir, 'run', 'atif'))[0]!);
    const text = readFileSync(whole, 'utf8');
    atif = path.join(dir, 'cut.json');
    writeFileSync(atif, text.slice(0, Math.floor(text.length / 2)));
    const events = readFileSync(path.join(dir, 'run', 'atof', 'agent-session-atof.jsonl'), 'utf8');
    atof = path.join(dir, 'cut.jsonl');
    // Four whole events and half of the fifth.
    const lines = events.split('\n');
    writeFileSync(atof, `${lines.slice(0, 4).join('\n')}\n${lines[4]!.slice(0, 100)}`);
  });

  it('a trajectory cut in half: view, compare and validate give the parser\'s reason', async () => {
    const why = `not valid JSON (${parserSays(readFileSync(atif, 'utf8').trim())})`;
    const view = await cliInProcess(['view', atif]);
    expectNoStack(view.stderr);
    expect(view.code).toBe(1);
    expect(view.stderr.trim()).toBe(`nemo-relay-hooks: ${atif}: ${why}`);
    const compare = await cliInProcess(['compare', atif, whole]);
    expect(compare.code).toBe(2);
    expect(compare.stderr.trim()).toBe(`nemo-relay-hooks: ${atif}: ${why}`);
    const validate = await cliInProcess(['validate', atif]);
    expect(validate.code).toBe(1);
    expect(validate.stdout).toContain(`${atif}: $: file.unrecognised: ${why}`);
  });

  it('an event file (or hook log) whose last line was cut: the line is named as cut short, the events before it are read', async () => {
    const cut = 'line 5 is cut short: the file ends inside it, with no newline (as a writer stopped mid-line leaves it)';
    const view = await cliInProcess(['view', atof, '--json']);
    expect(view.stderr).toContain(`${atof}: ${cut}`);
    const tree = JSON.parse(view.stdout) as { files: { sessions: { title: string; totals: { llmCalls: number; errors: number } }[] }[] };
    expect(tree.files[0]!.sessions.map((session) => [session.title, session.totals.llmCalls, session.totals.errors])).toEqual([['session demo-session-7f3a', 1, 1]]);
    const validate = await cliInProcess(['validate', atof]);
    expect(validate.code).toBe(1);
    expect(validate.stdout).toContain(`${atof}: line 5: atof.malformed_line: ${cut}`);
    // Streamed (as a file above --stream-above is read): the same words.
    expect((await cliInProcess(['validate', '--stream-above', '1', atof])).stdout).toContain(`${atof}: line 5: atof.malformed_line: ${cut}`);
    const convert = await cliInProcess(['convert', atof, '--out', path.join(dir, 'converted')]);
    expect(convert.code).toBe(0);
    expect(convert.stdout).toMatch(/malformed\s+1 line skipped/);
    // convert said "not valid JSON (Unterminated string …)" of the line validate and view call cut short.
    expect(convert.stderr).toContain(`nemo-relay-hooks: ${atof}:5: ${cut.replace('line 5 is ', '')}\n`);
    // A hook log still being written, replayed: its last line is named the same way.
    const hookLines = readFileSync(path.join(EXAMPLES, 'agent-session.hooks.jsonl'), 'utf8').split('\n');
    const hooks = path.join(dir, 'cut.hooks.jsonl');
    writeFileSync(hooks, `${hookLines.slice(0, 4).join('\n')}\n${hookLines[4]!.slice(0, 60)}`);
    const replay = await cliInProcess(['replay', hooks, '--out', path.join(dir, 'replayed')]);
    expect(replay.code).toBe(0);
    expect(replay.stderr).toBe(`nemo-relay-hooks: ${hooks}:5: ${cut.replace('line 5 is ', '')}\n`);
    // The same line with its newline was written whole, and is simply not JSON.
    const ended = path.join(dir, 'ended.jsonl');
    writeFileSync(ended, `${readFileSync(atof, 'utf8')}\n`);
    expect((await cliInProcess(['validate', ended])).stdout).toContain(`${ended}: line 5: atof.malformed_line: line 5 is not valid JSON`);
  });
});
