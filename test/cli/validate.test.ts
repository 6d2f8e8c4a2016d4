import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, cliInProcess, EXAMPLES, tempDir } from './support.ts';
import { validateAtofFile } from '../../src/cli/validate-stream.ts';

const NATIVE = path.join(EXAMPLES, 'native');

async function replayedAtif(dir: string): Promise<string> {
  expect((await cliInProcess(['replay', path.join(EXAMPLES, 'tool-loop.hooks.jsonl'), '--out', dir, '--quiet'])).code).toBe(0);
  return path.join(dir, 'atif', 'tool-loop-atif-loop-session-4e19.json');
}

describe('nemo-relay-hooks validate', () => {
  it('accepts valid ATIF and ATOF files with one summary line each (warnings listed before it) and exit code 0', async () => {
    const atif = await replayedAtif(tempDir());
    const atof = path.join(NATIVE, 'claude-code-session.atof.jsonl');
    const result = cli(['validate', atif, atof]);
    expect(result.code).toBe(0);
    // Native writes custom scopes without the spec's category_profile.subtype: a warning each, not an error.
    expect(result.stdout).toBe(
      [
        `✓ ${atif}: valid (ATIF ATIF-v1.7, 5 steps)`,
        `${atof}: $[2].category_profile: atof.custom_subtype (warning): a custom event needs category_profile.subtype (accepted: native writes none; an error under --strict)`,
        `${atof}: $[19].category_profile: atof.custom_subtype (warning): a custom event needs category_profile.subtype (accepted: native writes none; an error under --strict)`,
        `✓ ${atof}: valid (ATOF 0.1, 22 events, 2 warnings)`,
        '',
      ].join('\n'),
    );
    const strict = await cliInProcess(['validate', '--strict', atof]);
    expect(strict.code).toBe(1);
    expect(strict.stdout).toContain(`${atof}: $[2].category_profile: atof.custom_subtype: a custom event needs category_profile.subtype\n`);
  });

  it('validates the recorded files in a folder it is given (the plugin says it records to ./nemo-relay-output/), not its dot files or sub-folders', async () => {
    const dir = tempDir();
    const atif = await replayedAtif(path.join(dir, 'replayed'));
    const folder = path.join(dir, 'nemo-relay-output');
    mkdirSync(path.join(folder, 'sub'), { recursive: true });
    copyFileSync(atif, path.join(folder, 'agent-atif-s1.json'));
    copyFileSync(path.join(NATIVE, 'plugin-session.atof.jsonl'), path.join(folder, 'agent-atof.jsonl'));
    writeFileSync(path.join(folder, '.agent-atif-s2.json.123.tmp'), '{');
    writeFileSync(path.join(folder, 'notes.txt'), 'not recorded');
    copyFileSync(atif, path.join(folder, 'sub', 'other-atif.json'));
    const result = cli(['validate', folder]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const verdicts = result.stdout.split('\n').filter((line) => /^[✓✗!]/.test(line));
    expect(verdicts).toHaveLength(2);
    expect(verdicts[0]).toBe(`✓ ${path.join(folder, 'agent-atif-s1.json')}: valid (ATIF ATIF-v1.7, 5 steps)`);
    expect(verdicts[1]).toMatch(/^✓ .*agent-atof\.jsonl: valid \(ATOF 0\.1, \d+ events/);
    // A folder with nothing recorded directly in it says so, and that its sub-folders are not read.
    const empty = cli(['validate', dir]);
    expect(empty.code).toBe(1);
    expect(empty.stdout).toContain(`${dir}: a folder without a .json or .jsonl file in it (its sub-folders are not read: name one)`);
  });

  it('prints each ATIF error as <file>: <json path>: <rule>: <message> and exits 1', async () => {
    const dir = tempDir();
    const good = await replayedAtif(dir);
    const doc = JSON.parse(readFileSync(good, 'utf8'));
    doc.steps[1].step_id = 7;
    doc.steps[0].colour = 'blue';
    const broken = path.join(dir, 'broken.json');
    writeFileSync(broken, JSON.stringify(doc));
    const result = await cliInProcess(['validate', broken, good]);
    expect(result.code).toBe(1);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toContain(`${broken}: $.steps[0].colour: atif.extra_field: Step does not allow the field "colour"`);
    expect(lines.some((line) => line.startsWith(`${broken}: $.steps[1].step_id: `))).toBe(true);
    for (const line of lines.filter((l) => l.startsWith(`${broken}: $`))) expect(line).toMatch(/^\S+: \$\S*: [a-z_.]+: .+$/);
    expect(lines).toContain(`✗ ${broken}: ${lines.filter((l) => l.startsWith(`${broken}: $`)).length} errors (ATIF ATIF-v1.7, 5 steps)`);
    expect(lines.at(-1)).toBe(`✓ ${good}: valid (ATIF ATIF-v1.7, 5 steps)`);
  });

  it('reports ATOF problems: a malformed line, an end without start, an end before its start', () => {
    const dir = tempDir();
    const events = readFileSync(path.join(NATIVE, 'plugin-session.atof.jsonl'), 'utf8').trim().split('\n');
    const bashEnd = JSON.parse(events[6]!);
    bashEnd.timestamp = '2020-01-01T00:00:00+00:00';
    const broken = path.join(dir, 'broken.jsonl');
    writeFileSync(broken, [events[0], 'not json', ...events.slice(2, 6), JSON.stringify(bashEnd), ...events.slice(7)].join('\n'));
    const result = cli(['validate', broken]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`${broken}: line 2: atof.malformed_line: line 2 is not valid JSON`);
    expect(result.stdout).toMatch(/: \$\[\d+\]\S*: atof\.\w+: .*(end|before|after)/);
    expect(result.stdout).toMatch(new RegExp(`✗ ${broken.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: \\d+ errors \\(ATOF 0\\.1, 13 events, \\d+ warnings?\\)`));
  });

  it('detects the kind by content, not by extension', async () => {
    const dir = tempDir();
    const atofAsTxt = path.join(dir, 'events.txt');
    copyFileSync(path.join(NATIVE, 'plugin-session.atof.jsonl'), atofAsTxt);
    const atifAsJsonl = path.join(dir, 'trajectory.jsonl');
    copyFileSync(await replayedAtif(path.join(dir, 'r')), atifAsJsonl);
    const result = await cliInProcess(['validate', atofAsTxt, atifAsJsonl]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`✓ ${atofAsTxt.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: valid \\(ATOF 0\\.1, 14 events, \\d+ warnings?\\)`));
    expect(result.stdout).toContain(`✓ ${atifAsJsonl}: valid (ATIF ATIF-v1.7`);
  });

  it('tells a recorded hook stream apart and points to replay', async () => {
    const file = path.join(EXAMPLES, 'plain-chat.hooks.jsonl');
    const result = await cliInProcess(['validate', file]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`${file}: $: file.hook_stream: this is a recorded hook stream`);
  });

  it('reports a missing file among others and still checks the rest', async () => {
    const dir = tempDir();
    const missing = path.join(dir, 'nope.json');
    const good = path.join(NATIVE, 'plugin-session.atof.jsonl');
    const result = await cliInProcess(['validate', missing, good]);
    expect(result.code).toBe(1);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toBe(`✗ ${missing}: cannot read ${missing}: no such file or directory`);
    expect(lines.at(-1)).toMatch(/valid \(ATOF 0\.1, 14 events, \d+ warnings?\)$/);
    expect(lines.slice(1, -1).every((line) => line.includes(' (warning): '))).toBe(true);
  });

  it('calls a .json file holding null not a trajectory and still checks the rest, where it ended the run in an internal TypeError', async () => {
    const dir = tempDir();
    const nullFile = path.join(dir, 'null.json');
    writeFileSync(nullFile, 'null\n');
    const good = path.join(NATIVE, 'plugin-session.atof.jsonl');
    const result = await cliInProcess(['validate', nullFile, good]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(1);
    const lines = result.stdout.trim().split('\n');
    expect(lines.slice(0, 2)).toEqual([
      `${nullFile}: $: atif.type: Trajectory must be an object`,
      `✗ ${nullFile}: 1 error (ATIF (no schema_version: read as ATIF-v1.7, Harbor's default), 0 steps)`,
    ]);
    expect(lines.at(-1)).toMatch(/^✓ .*plugin-session\.atof\.jsonl: valid \(ATOF 0\.1, 14 events/);
    const json = JSON.parse((await cliInProcess(['validate', nullFile, good, '--json'])).stdout) as { files: { valid: boolean }[] };
    expect(json.files.map((file) => file.valid)).toEqual([false, true]);
  });

  it('reports an empty file and a .json file that is not JSON', async () => {
    const dir = tempDir();
    const empty = path.join(dir, 'empty.json');
    writeFileSync(empty, '');
    const garbage = path.join(dir, 'garbage.json');
    writeFileSync(garbage, '{"schema_version": ');
    const result = await cliInProcess(['validate', empty, garbage]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`${empty}: $: file.unrecognised: the file is empty`);
    expect(result.stdout).toContain(`${garbage}: $: file.unrecognised: not valid JSON`);
  });
});

describe('nemo-relay-hooks validate, streaming large ATOF files', () => {
  it('streams a valid file to the same verdict', async () => {
    const file = path.join(NATIVE, 'claude-code-session.atof.jsonl');
    const whole = (await cliInProcess(['validate', file])).stdout;
    const streamed = (await cliInProcess(['validate', file, '--stream-above', '0'])).stdout;
    expect(streamed).toBe(whole.replace('22 events, 2 warnings)', '22 events, streamed, 2 warnings)'));
    expect(streamed.endsWith(`✓ ${file}: valid (ATOF 0.1, 22 events, streamed, 2 warnings)\n`)).toBe(true);
  });

  it('says a file is out of timestamp order once, where it is read whole, however many stretches it is streamed in', async () => {
    // A user trial streamed a 200 MB file of sessions appended one after another: nine atof.unsorted warnings where
    // the same file read whole had one; and a file out of order only where a stretch began had none.
    const dir = tempDir();
    expect((await cliInProcess(['replay', path.join(EXAMPLES, 'agent-session.hooks.jsonl'), '--out', dir, '--quiet'])).code).toBe(0);
    const demo = readFileSync(path.join(dir, 'atof', 'agent-session-atof.jsonl'), 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    const micros = (stamp: string) => Date.parse(stamp) * 1000 + Number((/\.\d{3}(\d{0,3})/.exec(stamp)?.[1] ?? '').padEnd(3, '0'));
    /** `copies` copies of the demo session, each with its own uuids, copy k shifted by `shiftSeconds(k)`. */
    const copiesOf = (copies: number, shiftSeconds: (k: number) => number) => {
      const lines: string[] = [];
      for (let k = 0; k < copies; k++) {
        const suffix = k.toString(16).padStart(6, '0');
        for (const event of demo) {
          const text = JSON.stringify({ ...event, timestamp: micros(event.timestamp as string) + shiftSeconds(k) * 1_000_000 });
          lines.push(text.replace(/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-)[0-9a-f]{6}/g, `$1${suffix}`));
        }
      }
      return `${lines.join('\n')}\n`;
    };
    // 110 copies of 38 events, read in stretches of 500 events or more, each ending after a whole session (a
    // stretch's first session is a multiple of 14); the CLI's stretches are of 20,000, the rule the same.
    const appended = path.join(dir, 'appended.jsonl');
    writeFileSync(appended, copiesOf(110, () => 0));
    // In order, except the session that opens the third stretch (copy 28: 28 × 38 = 1,064 events before it).
    const seam = path.join(dir, 'seam.jsonl');
    writeFileSync(seam, copiesOf(110, (k) => (k === 28 ? k * 10 - 8 : k * 10)));
    for (const [file, at] of [[appended, 38], [seam, 1_064]] as const) {
      const whole = (await cliInProcess(['validate', file])).stdout;
      const unsorted = (text: string) => text.split('\n').filter((line) => line.includes('atof.unsorted'));
      expect(unsorted(whole), file).toEqual([`${file}: $[${at}].timestamp: atof.unsorted (warning): lines are not in timestamp order (accepted: events are sorted by timestamp before pairing)`]);
      const streamed = await validateAtofFile(file, 1000, {}, undefined, 500);
      expect(streamed.events, file).toBe(4_180);
      expect(streamed.errors, file).toEqual([]);
      expect(streamed.warnings.filter((warning) => warning.rule === 'atof.unsorted').map((warning) => warning.path), file).toEqual([`$[${at}].timestamp`]);
      // The CLI's own streamed read says what the whole read says.
      const cliStreamed = (await cliInProcess(['validate', file, '--stream-above', '0'])).stdout;
      expect(cliStreamed, file).toBe(whole.replace('4,180 events, ', '4,180 events, streamed, '));
    }
  });
});

describe('nemo-relay-hooks validate, bytes that are not UTF-8', () => {
  it('calls a file invalid where its bytes stop being UTF-8 (line and byte), whole, streamed and from standard input; text split across reads stays valid', async () => {
    const dir = tempDir();
    expect((await cliInProcess(['replay', path.join(EXAMPLES, 'tool-loop.hooks.jsonl'), '--out', dir, '--quiet'])).code).toBe(0);
    const lines = readFileSync(path.join(dir, 'atof', 'tool-loop-atof.jsonl'), 'utf8').trimEnd().split('\n');
    // Over 600 KB of two-, three- and four-byte characters: the 256 KiB reads of the streamed path end inside some of them.
    const event = JSON.parse(lines[1]!) as { data: Record<string, unknown> };
    event.data = { ...event.data, note: 'é€😀'.repeat(70_000) };
    lines[1] = JSON.stringify(event);
    const good = Buffer.from(`${lines.join('\n')}\n`);
    const valid = path.join(dir, 'valid.jsonl');
    writeFileSync(valid, good);
    for (const args of [['validate', valid], ['validate', valid, '--stream-above', '0']]) {
      const result = await cliInProcess(args);
      expect(result.code, `${args.join(' ')}\n${result.stdout}`).toBe(0);
    }

    // A lone continuation byte and a truncated sequence inside a string of line 5, past the first read: all else is valid.
    const at = good.indexOf('"name":"', good.indexOf('\n', good.indexOf('\n', good.indexOf('\n', good.indexOf('\n') + 1) + 1) + 1)) + 8;
    const bad = Buffer.concat([good.subarray(0, at), Buffer.from([0x80, 0xe2, 0x82]), good.subarray(at)]);
    const invalid = path.join(dir, 'invalid.jsonl');
    writeFileSync(invalid, bad);
    const expected = `line 5: file.utf8: not valid UTF-8 at byte ${at} (line 5): JSON text must be UTF-8, and readers that decode strictly refuse the file`;
    for (const args of [['validate', invalid], ['validate', invalid, '--stream-above', '0']]) {
      const result = await cliInProcess(args);
      expect(result.code, args.join(' ')).toBe(1);
      expect(result.stdout).toContain(`${invalid}: ${expected}`);
    }
    const piped = cli(['validate', '-'], { input: bad });
    expect(piped.code).toBe(1);
    expect(piped.stdout).toContain(`(stdin): ${expected}`);

    // An ATIF document: the path is the document's.
    const atif = path.join(dir, 'atif', 'tool-loop-atif-loop-session-4e19.json');
    const document = readFileSync(atif);
    const cut = document.indexOf('"message":"') + 11;
    const brokenAtif = path.join(dir, 'invalid.json');
    // An encoded surrogate: well-formed UTF-8 has none.
    writeFileSync(brokenAtif, Buffer.concat([document.subarray(0, cut), Buffer.from([0xed, 0xa0, 0x80]), document.subarray(cut)]));
    const checked = await cliInProcess(['validate', brokenAtif]);
    expect(checked.code).toBe(1);
    expect(checked.stdout).toBe(`${brokenAtif}: $: file.utf8: not valid UTF-8 at byte ${cut} (line 1): JSON text must be UTF-8, and readers that decode strictly refuse the file\n✗ ${brokenAtif}: 1 error (ATIF ATIF-v1.7, 5 steps)\n`);
  });
});
