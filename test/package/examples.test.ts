// The README points users at examples/host.ts; it must run as written.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { validateAtif, validateAtofEvents, parseAtofJsonl } from '../../src/formats/index.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('examples/host.ts', () => {
  for (const [runtime, command] of [
    ['bun', [path.join(root, 'node_modules', '.bin', 'bun'), 'examples/host.ts']],
    ['deno', [path.join(root, 'node_modules', '.bin', 'deno'), 'run', '-A', 'examples/host.ts']],
  ] as const) {
    it(`runs under ${runtime} and writes valid ATOF and ATIF`, () => {
      const out = mkdtempSync(path.join(tmpdir(), `nrh-host-${runtime}-`));
      const [binary, ...args] = command;
      const result = spawnSync(binary, [...args, out], { cwd: root, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
      expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
      expect(result.stdout).toContain('valid ATIF');
      const atif = readdirSync(path.join(out, 'atif'));
      expect(atif).toHaveLength(1);
      const doc = JSON.parse(readFileSync(path.join(out, 'atif', atif[0]!), 'utf8'));
      expect(validateAtif(doc)).toEqual([]);
      // The request middleware redacted the secret before any hook saw it.
      const atofFiles = readdirSync(path.join(out, 'atof'));
      const atofText = readFileSync(path.join(out, 'atof', atofFiles[0]!), 'utf8');
      const parsed = parseAtofJsonl(atofText);
      expect(parsed.errors).toEqual([]);
      expect(validateAtofEvents(parsed.events)).toEqual([]);
      const recorded = readFileSync(path.join(out, 'hooks.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { hook: string; payload: { args?: { token?: string } } });
      const toolCall = recorded.find((line) => line.hook === 'pre_tool_call')!;
      expect(toolCall.payload.args?.token).toBe('[redacted]');
    });
  }
});
