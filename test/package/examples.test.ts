// examples/host.mjs runs as it is (`node examples/host.mjs`), importing the
// package by name, on the runtime running the suite (`npm run test:bun` and
// `npm run test:deno` run it there).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { validateAtif, validateAtofEvents, parseAtofJsonl } from '../../src/formats/index.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const runtime = process.versions.deno ? 'deno' : process.versions.bun ? 'bun' : 'node';

describe('examples/host.mjs', () => {
  {
    const command = [process.execPath, ...(runtime === 'deno' ? ['run', '-A'] : []), 'examples/host.mjs'];
    it(`runs as it is on ${runtime} and writes valid ATOF and ATIF`, () => {
      const out = mkdtempSync(path.join(tmpdir(), `nrh-host-${runtime}-`));
      const [binary, ...args] = command;
      const result = spawnSync(binary, [...args, out], { cwd: root, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
      expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
      expect(result.stdout).toContain('valid ATIF');
      const atif = readdirSync(path.join(out, 'atif'));
      expect(atif).toHaveLength(1);
      const doc = JSON.parse(readFileSync(path.join(out, 'atif', atif[0]!), 'utf8'));
      expect(validateAtif(doc)).toEqual([]);
      const atofFiles = readdirSync(path.join(out, 'atof'));
      const atofText = readFileSync(path.join(out, 'atof', atofFiles[0]!), 'utf8');
      const parsed = parseAtofJsonl(atofText);
      expect(parsed.errors).toEqual([]);
      expect(validateAtofEvents(parsed.events)).toEqual([]);
      // The secret is in the model's tool call (the LLM response) and the host's arguments: the plugin's redact hook
      // keeps it out of the telemetry, the model's request (ATOF LLM end, ATIF tool_calls) included.
      const atifText = readFileSync(path.join(out, 'atif', atif[0]!), 'utf8');
      expect([atofText, atifText, result.stdout].filter((text) => text.includes('s3cret'))).toEqual([]);
      const calls = (doc.steps as { tool_calls?: { arguments: unknown }[] }[]).flatMap((step) => step.tool_calls ?? []);
      expect(calls.map((call) => call.arguments)).toEqual([{ zone: 'UTC', token: '[redacted]' }]);
      // The request middleware rewrote the arguments before any hook saw them: what the ATOF tool span records.
      const toolStart = parsed.events.find((event) => event.kind === 'scope' && event.category === 'tool' && event.scope_category === 'start')!;
      expect(toolStart.data).toEqual({ zone: 'UTC', token: '[redacted]' });
      const recorded = readFileSync(path.join(out, 'hooks.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { hook: string; payload: { args?: { token?: string } } });
      const toolCall = recorded.find((line) => line.hook === 'pre_tool_call')!;
      expect(toolCall.payload.args?.token).toBe('[redacted]');
    });
  }
});
