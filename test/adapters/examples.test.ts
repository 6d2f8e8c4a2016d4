// examples/ai-sdk.mjs, examples/openai-agents.mjs and examples/langchain.mjs
// run as they are (`node examples/ai-sdk.mjs`), importing the package by
// name, on the runtime running the suite (`npm run test:bun` and
// `npm run test:deno` run them there), and each writes a valid trajectory
// with the tool call.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { validateAtif } from '../../src/formats/index.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const runtime = process.versions.deno ? 'deno' : process.versions.bun ? 'bun' : 'node';
const command = (file: string) => (runtime === 'deno' ? ['run', '-A', file] : [file]);

describe('framework adapter examples', () => {
  for (const example of ['ai-sdk', 'openai-agents', 'langchain']) {
    it(`examples/${example}.mjs runs as it is on ${runtime} and writes a valid trajectory with the tool call`, () => {
      const out = mkdtempSync(path.join(tmpdir(), `nrh-example-${example}-`));
      const result = spawnSync(process.execPath, [...command(`examples/${example}.mjs`), out], { cwd: root, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' }, timeout: 120_000 });
      expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
      expect(result.stdout).toContain('agent: It is noon in UTC.');
      expect(result.stdout).toContain('valid ATIF');
      const files = readdirSync(path.join(out, 'atif'));
      expect(files).toHaveLength(1);
      const doc = JSON.parse(readFileSync(path.join(out, 'atif', files[0]!), 'utf8'));
      expect(validateAtif(doc)).toEqual([]);
      const calls = doc.steps.flatMap((step: { tool_calls?: Array<{ tool_call_id: string }> }) => step.tool_calls ?? []);
      expect(calls.map((call: { tool_call_id: string }) => call.tool_call_id)).toEqual(['call_clock_1']);
      expect(readdirSync(path.join(out, 'atof'))).toHaveLength(1);
    }, 130_000);
  }
});
