// The README points users at examples/ai-sdk.ts, examples/openai-agents.ts and
// examples/langchain.ts; each must run as written and write a valid
// trajectory. Node 20 cannot run TypeScript files, so Bun and Deno run them
// (as for examples/host.ts); the adapters themselves are tested on Node too.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { validateAtif } from '../../src/formats/index.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = (name: string) => path.join(root, 'node_modules', '.bin', name);

describe('framework adapter examples', () => {
  for (const example of ['ai-sdk', 'openai-agents', 'langchain']) {
    for (const [runtime, command] of [
      ['bun', [bin('bun'), `examples/${example}.ts`]],
      ['deno', [bin('deno'), 'run', '-A', `examples/${example}.ts`]],
    ] as const) {
      it(`examples/${example}.ts runs under ${runtime} and writes a valid trajectory with the tool call`, () => {
        const out = mkdtempSync(path.join(tmpdir(), `nrh-example-${example}-${runtime}-`));
        const [binary, ...args] = command;
        const result = spawnSync(binary, [...args, out], { cwd: root, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' }, timeout: 120_000 });
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
  }
});
