// `compare` of two runs where one records a figure the other does not (one run priced, the other not; a response
// that reported no usage): a difference against "not recorded" is no difference in cost or tokens. A user trial saw
// `−$0.0123` on every step and a cost delta in the totals for two runs that differed only in being priced.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, cliInProcess, EXAMPLES, expectNoStack, tempDir } from './support.ts';

interface Delta { promptTokens: number; completionTokens: number; cachedTokens: number; costUsd: number | null; unrecordedOn?: { tokens?: string; costUsd?: string } }
interface Totals { promptTokens: number; completionTokens: number; cachedTokens: number; costUsd: number | null }
interface Report { equivalent: boolean; pairs: { a: string | null; b: string | null; status: string; delta: Delta; differences: { field: string }[] }[]; onlyRecorded: { fact: string; run: string; values: string[] }[]; totals: { a: Totals; b: Totals; delta: Totals } }

const DEMO = readFileSync(path.join(EXAMPLES, 'agent-session.hooks.jsonl'), 'utf8').trimEnd().split('\n');
type Line = { hook: string; payload: Record<string, unknown> };

/** Replays the demo stream, edited; returns its trajectory. */
async function record(edit: (line: Line) => Line): Promise<string> {
  const dir = tempDir('nrh-compare-unrecorded-');
  const stream = path.join(dir, 'run.hooks.jsonl');
  writeFileSync(stream, `${DEMO.map((text) => JSON.stringify(edit(JSON.parse(text) as Line))).join('\n')}\n`);
  const result = await cliInProcess(['replay', stream, '--out', dir, '--quiet']);
  expect(result.code, result.stderr).toBe(0);
  return path.join(dir, 'atif', 'run-atif-demo-session-7f3a.json');
}

/** Each response reports its cost (`usage.cost_usd`, as OpenRouter's do): the run is priced. */
const priced = (line: Line): Line => {
  if (line.hook !== 'post_api_request') return line;
  const payload = structuredClone(line.payload) as { usage?: Record<string, unknown>; response?: { usage?: Record<string, unknown> } };
  if (payload.usage) payload.usage.cost_usd = 0.01;
  if (payload.response?.usage) payload.response.usage.cost_usd = 0.01;
  return { ...line, payload: payload as Record<string, unknown> };
};

/** The third answer reports no usage (a stream read without `include_usage`). */
const noUsageOnThird = (line: Line): Line => {
  if (line.hook !== 'post_api_request' || line.payload.api_request_id !== 'turn-1:api:3') return line;
  const payload = structuredClone(line.payload) as { usage?: unknown; response?: { usage?: unknown } };
  delete payload.usage;
  if (payload.response) delete payload.response.usage;
  return { ...line, payload: payload as Record<string, unknown> };
};

const plain = await record((line) => line);
const withCost = await record(priced);
const withoutThirdUsage = await record(noUsageOnThird);

async function compareJson(a: string, b: string): Promise<{ code: number; report: Report }> {
  const result = await cliInProcess(['compare', a, b, '--json']);
  expectNoStack(result.stderr);
  return { code: result.code, report: JSON.parse(result.stdout) as Report };
}

describe('compare: a figure one run does not record', () => {
  it('a priced run against an unpriced one: no cost delta, "not recorded on b", runs equivalent (exit 0)', async () => {
    expect(readFileSync(withCost, 'utf8')).toContain('"cost_usd":0.01');
    const { code, report } = await compareJson(withCost, plain);
    expect(code).toBe(0);
    expect(report.equivalent).toBe(true);
    const priced = report.pairs.filter((pair) => pair.delta.unrecordedOn?.costUsd === 'b');
    expect(priced.length).toBeGreaterThan(0);
    for (const pair of priced) expect(pair.delta.costUsd).toBeNull();
    expect(report.totals.a.costUsd).toBeGreaterThan(0);
    expect(report.totals.b.costUsd).toBeNull();
    expect(report.totals.delta.costUsd).toBeNull();
    expect(report.onlyRecorded).toContainEqual({ fact: 'cost', run: 'a', values: priced.map((pair) => pair.a) });
    const text = cli(['compare', withCost, plain]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^cost +\$0\.0\d+ +- +not recorded on b$/m);
    expect(text.stdout).toMatch(/LLM gpt-4o-2024-08-06 → read_file, search_code {2}cost not recorded on b$/m);
    expect(text.stdout).toMatch(new RegExp(`^cost not recorded on b for ${priced.length} steps a records \\(not compared, left out of the delta\\)`, 'm'));
    expect(text.stdout).not.toMatch(/−\$/);
  });

  it('a step whose response reported no usage: no tokens difference, and the totals\' delta leaves the step out', async () => {
    const { code, report } = await compareJson(plain, withoutThirdUsage);
    expect(code).toBe(0);
    expect(report.equivalent).toBe(true);
    const unrecorded = report.pairs.filter((pair) => pair.delta.unrecordedOn?.tokens === 'b');
    expect(unrecorded).toHaveLength(1);
    expect(unrecorded[0]!.differences).toEqual([]);
    expect(unrecorded[0]!.delta).toMatchObject({ promptTokens: 0, completionTokens: 0, cachedTokens: 0 });
    // b's totals lack the step's tokens; the delta says nothing changed where both counted.
    expect(report.totals.b.promptTokens).toBeLessThan(report.totals.a.promptTokens);
    expect(report.totals.delta).toMatchObject({ promptTokens: 0, completionTokens: 0, cachedTokens: 0 });
    expect(report.onlyRecorded).toContainEqual({ fact: 'tokens', run: 'a', values: [unrecorded[0]!.a] });
    const text = cli(['compare', plain, withoutThirdUsage]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('tokens not recorded on b');
    expect(text.stdout).toMatch(/^prompt tokens +[\d,]+ +[\d,]+ +±0$/m);
  });

  it('a real cost change where both runs are priced is still a delta', async () => {
    const dearer = await record((line) => {
      const edited = priced(line);
      return JSON.parse(JSON.stringify(edited).replaceAll('"cost_usd":0.01', '"cost_usd":0.02')) as Line;
    });
    const { report } = await compareJson(withCost, dearer);
    expect(report.totals.delta.costUsd).toBeGreaterThan(0);
    expect(report.pairs.some((pair) => pair.delta.unrecordedOn !== undefined)).toBe(false);
  });
});
