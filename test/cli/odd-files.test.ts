// Files the CLI meets in the wild: a byte order mark from an editor, an
// empty ATOF file from a run that recorded nothing, and paths that are not
// regular files (a device would never end, a FIFO would block).
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
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
