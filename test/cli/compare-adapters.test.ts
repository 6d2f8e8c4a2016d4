// `compare` on trajectories an adapter wrote: the AI SDK example
// (examples/ai-sdk.mjs, a ToolLoopAgent through instrumentAiSdk) run twice as
// it is, then once with its tool returning another time and its model
// answering otherwise. The copy lives in .tmp/ inside the checkout so it
// imports the package by name, as the example does.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, cliInProcess, EXAMPLES, ROOT, runtime, tempDir } from './support.ts';

function run(program: string): string {
  const out = tempDir('nrh-compare-ai-sdk-');
  const args = runtime === 'deno' ? ['run', '-A', program, out] : [program, out];
  const result = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', timeout: 120_000, env: { ...process.env, NEMO_RELAY_HOOKS_OUTPUTS: 'off' } });
  expect(result.status, result.stderr).toBe(0);
  const [file] = readdirSync(path.join(out, 'atif'));
  return path.join(out, 'atif', file!);
}

interface Report { equivalent: boolean; pairs: { a: string | null; b: string | null; status: string; title: string; differences: { field: string; tool?: string; a: unknown; b: unknown }[] }[] }

describe('compare on an adapter\'s trajectories (AI SDK)', () => {
  it('finds two runs of the same program equivalent and names what an edited program changed', async () => {
    const example = path.join(EXAMPLES, 'ai-sdk.mjs');
    const first = run(example);
    const second = run(example);
    const same = await cliInProcess(['compare', first, second, '--json']);
    expect(same.code, same.stdout).toBe(0);
    const sameReport = JSON.parse(same.stdout) as Report;
    expect(sameReport.pairs.length).toBeGreaterThanOrEqual(3);

    const source = readFileSync(example, 'utf8');
    const edited = source.replace("time: '12:00'", "time: '13:00'").replace("'It is noon in UTC.'", "'It is one in the afternoon in UTC.'");
    expect(edited).not.toBe(source);
    mkdirSync(path.join(ROOT, '.tmp'), { recursive: true });
    const variant = path.join(ROOT, '.tmp', `compare-ai-sdk-variant-${process.pid}.mjs`);
    writeFileSync(variant, edited);
    let changed: string;
    try {
      changed = run(variant);
    } finally {
      rmSync(variant, { force: true });
    }
    const result = await cliInProcess(['compare', first, changed, '--json']);
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as Report;
    const differences = report.pairs.flatMap((pair) => pair.differences.map((difference) => ({ ...difference, step: pair.title })));
    expect(differences).toEqual([
      { field: 'tool.result', tool: 'clock', a: expect.stringContaining('12:00'), b: expect.stringContaining('13:00'), step: expect.stringMatching(/→ clock$/) },
      { field: 'message', a: 'It is noon in UTC.', b: 'It is one in the afternoon in UTC.', step: expect.stringMatching(/^LLM/) },
    ]);
    expect(report.pairs.every((pair) => pair.a !== null && pair.b !== null)).toBe(true);
  });
});
