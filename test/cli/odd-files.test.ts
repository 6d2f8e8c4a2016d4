// Files the CLI meets in the wild: a byte order mark from an editor, an
// empty ATOF file from a run that recorded nothing, and paths that are not
// regular files (a device would never end, a FIFO would block).
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { cli, cliInProcess, EXAMPLES, expectNoStack, tempDir } from './support.ts';

const BOM = '\uFEFF';

describe('odd input files', () => {
  it('reads ATOF and hook logs that start with a byte order mark', async () => {
    const dir = tempDir();
    const replayed = await cliInProcess(['replay', path.join(EXAMPLES, 'tool-loop.hooks.jsonl'), '--out', path.join(dir, 'first'), '--quiet']);
    expect(replayed.code).toBe(0);
    const atof = path.join(dir, 'bom.jsonl');
    writeFileSync(atof, BOM + readFileSync(path.join(dir, 'first', 'atof', 'tool-loop-atof.jsonl'), 'utf8'));
    expect((await cliInProcess(['validate', atof])).code).toBe(0);
    const converted = await cliInProcess(['convert', atof, '--out', path.join(dir, 'converted')]);
    expect(converted.code).toBe(0);
    expect(converted.stdout).not.toContain('left out');
    expect(readdirSync(path.join(dir, 'converted'))).toEqual(['agent-atif-loop-session-4e19.json']);
    const hooks = path.join(dir, 'bom.hooks.jsonl');
    writeFileSync(hooks, BOM + readFileSync(path.join(EXAMPLES, 'tool-loop.hooks.jsonl'), 'utf8'));
    const replay = await cliInProcess(['replay', hooks, '--out', path.join(dir, 'second'), '--strict', '--quiet']);
    expect(replay.code, replay.stderr).toBe(0);
  });

  it('accepts an empty .jsonl as an ATOF file with no events', async () => {
    const file = path.join(tempDir(), 'hermes-atof.jsonl');
    writeFileSync(file, '');
    const result = await cliInProcess(['validate', file]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('0 events');
  });

  it('refuses values nested 10,000 levels deep in one line per file or line, where they once ended in a RangeError', async () => {
    const dir = tempDir();
    expect((await cliInProcess(['replay', path.join(EXAMPLES, 'tool-loop.hooks.jsonl'), '--out', dir, '--quiet'])).code).toBe(0);
    const deep = '['.repeat(10_000) + ']'.repeat(10_000);
    const atifFile = path.join(dir, 'atif', 'tool-loop-atif-loop-session-4e19.json');
    const atif = JSON.parse(readFileSync(atifFile, 'utf8')) as { steps: Array<Record<string, unknown>> };
    atif.steps[1]!.extra = { deep: '@deep' };
    const deepAtif = path.join(dir, 'deep.json');
    writeFileSync(deepAtif, JSON.stringify(atif).replace('"@deep"', deep));
    const atofLines = readFileSync(path.join(dir, 'atof', 'tool-loop-atof.jsonl'), 'utf8').trimEnd().split('\n');
    const event = JSON.parse(atofLines[3]!) as Record<string, unknown>;
    event.data = '@deep';
    atofLines[3] = JSON.stringify(event).replace('"@deep"', deep);
    const deepAtof = path.join(dir, 'deep.jsonl');
    writeFileSync(deepAtof, `${atofLines.join('\n')}\n`);
    const hookLines = readFileSync(path.join(EXAMPLES, 'tool-loop.hooks.jsonl'), 'utf8').trimEnd().split('\n');
    hookLines[2] = hookLines[2]!.replace(/\}$/, `,"deep":${deep}}`);
    const deepHooks = path.join(dir, 'deep.hooks.jsonl');
    writeFileSync(deepHooks, `${hookLines.join('\n')}\n`);

    const tooDeepAtif = `${deepAtif}: valid JSON, but nested more than 1000 levels deep (arrays and objects), more than this reader takes`;
    for (const args of [['view', deepAtif, '--html', path.join(dir, 'page.html')], ['compare', deepAtif, atifFile]]) {
      const result = await cliInProcess(args);
      expect(result.stderr, args.join(' ')).toBe(`nemo-relay-hooks: ${tooDeepAtif}\n`);
      expect(result.code).toBe(args[0] === 'compare' ? 2 : 1);
    }
    const validated = await cliInProcess(['validate', deepAtif]);
    expect(validated.code).toBe(1);
    expect(validated.stdout).toContain('nested more than 1000 levels deep');

    const lineFour = 'line 4 is nested more than 1000 levels deep (arrays and objects)';
    const converted = await cliInProcess(['convert', deepAtof, '--out', path.join(dir, 'converted')]);
    expect(converted.code).toBe(0);
    expect(converted.stderr).toBe(`nemo-relay-hooks: ${deepAtof}:4: nested more than 1000 levels deep (arrays and objects)\n`);
    const checked = await cliInProcess(['validate', deepAtof]);
    expect(checked.code).toBe(1);
    expect(checked.stdout).toContain(`${deepAtof}: line 4: atof.malformed_line: ${lineFour}`);
    const viewed = await cliInProcess(['view', deepAtof, '--html', path.join(dir, 'atof.html')]);
    expect(viewed.code).toBe(0);
    expect(viewed.stderr).toContain(`${deepAtof}: ${lineFour}`);
    const replayed = await cliInProcess(['replay', deepHooks, '--out', path.join(dir, 'replayed'), '--quiet']);
    expect(replayed.code).toBe(0);
    expect(replayed.stderr).toBe(`nemo-relay-hooks: ${deepHooks}:3: nested more than 1000 levels deep (arrays and objects)\n`);
  });

  it('quotes a megabyte field in a message by its first characters and its length', async () => {
    const dir = tempDir();
    expect((await cliInProcess(['replay', path.join(EXAMPLES, 'tool-loop.hooks.jsonl'), '--out', dir, '--quiet'])).code).toBe(0);
    const big = 'x'.repeat(1_000_000);
    const atofLines = readFileSync(path.join(dir, 'atof', 'tool-loop-atof.jsonl'), 'utf8').trimEnd().split('\n');
    for (const field of ['timestamp', 'kind']) {
      const lines = [...atofLines];
      lines[1] = JSON.stringify({ ...(JSON.parse(lines[1]!) as object), [field]: big });
      const file = path.join(dir, `long-${field}.jsonl`);
      writeFileSync(file, `${lines.join('\n')}\n`);
      const result = await cliInProcess(['convert', file, '--out', path.join(dir, field)]);
      expect(result.code).toBe(0);
      expect(result.stderr.length, field).toBeLessThan(500);
      expect(result.stderr).toContain(`"${'x'.repeat(119)}… (1000002 characters)`);
    }
    const hookLines = readFileSync(path.join(EXAMPLES, 'tool-loop.hooks.jsonl'), 'utf8').trimEnd().split('\n');
    hookLines[0] = JSON.stringify({ ...(JSON.parse(hookLines[0]!) as object), hook: big });
    const hooks = path.join(dir, 'long.hooks.jsonl');
    writeFileSync(hooks, `${hookLines.join('\n')}\n`);
    const replayed = await cliInProcess(['replay', hooks, '--out', path.join(dir, 'replayed'), '--quiet']);
    expect(replayed.stderr).toBe(`nemo-relay-hooks: ${hooks}:1: unknown hook "${'x'.repeat(119)}… (1000002 characters)\n`);
  });

  it('shows an ATOF mark whose name is not a string by its JSON text (it ended in an internal TypeError)', async () => {
    const dir = tempDir();
    expect((await cliInProcess(['replay', path.join(EXAMPLES, 'tool-loop.hooks.jsonl'), '--out', dir, '--quiet'])).code).toBe(0);
    const lines = readFileSync(path.join(dir, 'atof', 'tool-loop-atof.jsonl'), 'utf8').trimEnd().split('\n');
    const index = lines.findIndex((line) => (JSON.parse(line) as { kind: string }).kind === 'mark');
    const names: unknown[] = [0, { a: 1 }, null, ['x']];
    for (const name of names) {
      const copy = [...lines];
      copy[index] = JSON.stringify({ ...(JSON.parse(copy[index]!) as object), name });
      const file = path.join(dir, 'odd-name.jsonl');
      writeFileSync(file, `${copy.join('\n')}\n`);
      for (const args of [['view', file], ['view', file, '--json'], ['view', file, '--html', path.join(dir, 'odd.html')]]) {
        const result = await cliInProcess(args);
        expect(result.stderr, `${JSON.stringify(name)}: ${args.join(' ')}`).not.toContain('internal error');
        expect(result.code).toBe(0);
      }
      expect((await cliInProcess(['view', file])).stdout).toContain(JSON.stringify(name));
    }
  });

  it('skips an ATOF event whose name or uuid is no string, naming its line, as convert does, where view and compare ended in an internal TypeError (compare exiting 1, "the runs differ")', async () => {
    const dir = tempDir();
    expect((await cliInProcess(['replay', path.join(EXAMPLES, 'plain-chat.hooks.jsonl'), '--out', dir, '--quiet'])).code).toBe(0);
    const good = path.join(dir, 'atof', 'plain-chat-atof.jsonl');
    const lines = readFileSync(good, 'utf8').trimEnd().split('\n');
    // The second LLM call's end: its name picks how the usage it carries is read.
    const index = lines.findLastIndex((line) => {
      const event = JSON.parse(line) as { category?: string; scope_category?: string };
      return event.category === 'llm' && event.scope_category === 'end';
    });
    const cases: [string, unknown, string][] = [
      ['name', null, 'name is null, not a string'],
      ['name', 5, 'name is 5, not a string'],
      ['name', { a: 1 }, 'name is {"a":1}, not a string'],
      ['uuid', ['x'], 'uuid is ["x"], not a string'],
    ];
    for (const [field, value, why] of cases) {
      const copy = [...lines];
      copy[index] = JSON.stringify({ ...(JSON.parse(copy[index]!) as object), [field]: value });
      const file = path.join(dir, 'odd-field.jsonl');
      writeFileSync(file, `${copy.join('\n')}\n`);
      const said = `nemo-relay-hooks: ${file}: line ${index + 1}: ATOF event whose ${why}\n`;
      const label = `${field} ${JSON.stringify(value)}`;
      const html = path.join(dir, 'odd.html');
      for (const args of [['view', file], ['view', file, '--json'], ['view', file, '--html', html]]) {
        const result = await cliInProcess(args);
        expect(result.stderr, `${label}: ${args.join(' ')}`).toBe(args.includes(html) ? `${said}wrote ${html}\n` : said);
        expect(result.code).toBe(0);
      }
      // The call whose end was skipped is shown as never ended: the runs differ, and compare says why.
      expect((await cliInProcess(['view', file])).stdout).toContain('never ended');
      const compared = await cliInProcess(['compare', file, good]);
      expect(compared.stderr, label).toBe(said);
      expect(compared.code).toBe(1);
      expect(compared.stdout).toContain('runs differ: 1 changed step');
      // Read whole (a first line that is not an event) the file names the same line.
      const late = path.join(dir, 'late.jsonl');
      writeFileSync(late, `not json\n${copy.join('\n')}\n`);
      expect((await cliInProcess(['view', late])).stderr).toContain(`nemo-relay-hooks: ${late}: line ${index + 2}: ATOF event whose ${why}\n`);
      const converted = await cliInProcess(['convert', file, '--out', path.join(dir, 'converted'), '--quiet']);
      expect(converted.stderr).toBe(`nemo-relay-hooks: ${file}:${index + 1}: ATOF event whose ${why}\n`);
    }
  });

  it('refuses a gzip-compressed file in one line naming gunzip, where every line of it was "not valid JSON" and convert exited 0', async () => {
    const dir = tempDir();
    expect((await cliInProcess(['replay', path.join(EXAMPLES, 'tool-loop.hooks.jsonl'), '--out', dir, '--quiet'])).code).toBe(0);
    const atof = path.join(dir, 'run.jsonl.gz');
    writeFileSync(atof, gzipSync(readFileSync(path.join(dir, 'atof', 'tool-loop-atof.jsonl'))));
    const atif = path.join(dir, 'run.json.gz');
    writeFileSync(atif, gzipSync(readFileSync(path.join(dir, 'atif', 'tool-loop-atif-loop-session-4e19.json'))));
    const hooks = path.join(dir, 'run.hooks.jsonl.gz');
    writeFileSync(hooks, gzipSync(readFileSync(path.join(EXAMPLES, 'tool-loop.hooks.jsonl'))));
    const refused = (file: string) => `cannot read ${file}: it is gzip-compressed, and this command reads JSON text; decompress it first ("gunzip -k ${file}") and give the file it writes`;
    const cases: Array<[string[], string, number]> = [
      [['convert', atof, '--out', path.join(dir, 'converted')], atof, 1],
      [['replay', hooks, '--out', path.join(dir, 'replayed')], hooks, 1],
      [['view', atof], atof, 1],
      [['view', atif, '--html', path.join(dir, 'page.html')], atif, 1],
      [['compare', atif, atof], atif, 2],
    ];
    for (const [args, file, code] of cases) {
      const result = await cliInProcess(args);
      expect(result.stderr, args.join(' ')).toBe(`nemo-relay-hooks: ${refused(file)}\n`);
      expect(result.code, args.join(' ')).toBe(code);
    }
    expect(existsSync(path.join(dir, 'converted'))).toBe(false);
    expect(existsSync(path.join(dir, 'replayed'))).toBe(false);
    const validated = await cliInProcess(['validate', atof, atif]);
    expect(validated.stdout).toBe(`✗ ${atof}: ${refused(atof)}\n✗ ${atif}: ${refused(atif)}\n`);
    expect(validated.code).toBe(1);
    const piped = cli(['convert', '-', '--out', path.join(dir, 'piped')], { input: readFileSync(atof) });
    expect(piped.stderr).toBe('nemo-relay-hooks: cannot read (stdin): it is gzip-compressed, and this command reads JSON text; decompress it on the way in ("gunzip -c <file> | nemo-relay-hooks …")\n');
    expect(piped.code).toBe(1);
  });

  const device = '/dev/zero';
  if (!existsSync(device)) console.info(`[odd-files tests] device case skipped: no ${device} here`);
  it.skipIf(!existsSync(device))('refuses a device with a one-line error instead of reading it forever', () => {
    for (const command of [['validate', device], ['view', device], ['convert', device, '--out', tempDir()], ['replay', device, '--out', tempDir()]]) {
      const result = cli(command, { timeoutMs: 20_000 });
      expect(result.code, command.join(' ')).toBe(1);
      expect(result.stdout + result.stderr).toContain('not a regular file');
      expectNoStack(result.stderr);
    }
  });
});
