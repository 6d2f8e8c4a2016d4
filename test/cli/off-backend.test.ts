// When the chosen backend cannot record (native failed to load and the
// plugin fell back to off), demo and replay say so and exit 1, instead of
// printing a summary and suggesting files that were never written.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ParsedArgs } from '../../src/cli/args.ts';
import { demo } from '../../src/cli/commands/demo.ts';
import { replay } from '../../src/cli/commands/replay.ts';
import type { CliIo } from '../../src/cli/io.ts';
import { EXAMPLES, tempDir } from './support.ts';

function capture(): CliIo & { stdout: string; stderr: string } {
  const plain = new Proxy({}, { get: () => (text: string) => text });
  const io = {
    stdout: '',
    stderr: '',
    out(text: string) {
      io.stdout += text;
    },
    err(text: string) {
      io.stderr += text;
    },
    stderrIsTty: false,
    style: plain,
    errStyle: plain,
    env: {},
    cwd: process.cwd(),
  };
  return io as unknown as CliIo & { stdout: string; stderr: string };
}

// 'off' is what a failed native load falls back to; the flags only offer it that way.
const args = (strings: Record<string, string>, booleans: string[] = []): ParsedArgs => ({
  positionals: strings.input ? [strings.input] : [],
  strings: new Map(Object.entries(strings).filter(([key]) => key !== 'input').map(([key, value]) => [key, [value]])),
  booleans: new Set(booleans),
});

describe('a backend that records nothing', () => {
  it('makes demo say so and exit 1, with the recorded hooks kept', async () => {
    const out = tempDir();
    const io = capture();
    expect(await demo(args({ backend: 'off', out }, ['fast']), io)).toBe(1);
    expect(io.stderr).toMatch(/^demo: nothing was recorded: the backend is off/);
    expect(io.stdout).not.toContain('Next:');
    expect(readdirSync(out).sort()).toEqual(['atif', 'atof', 'hooks.jsonl']);
    expect(readdirSync(path.join(out, 'atif'))).toEqual([]);
  });

  it('makes replay say so and exit 1', async () => {
    const out = tempDir();
    const io = capture();
    expect(await replay(args({ input: path.join(EXAMPLES, 'tool-loop.hooks.jsonl'), backend: 'off', out }, ['quiet']), io)).toBe(1);
    expect(io.stderr).toContain('nothing was recorded: the backend is off');
    expect(readdirSync(path.join(out, 'atif'))).toEqual([]);
  });
});
