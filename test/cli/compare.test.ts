// `compare`: two runs of the demo agent, recorded by the plugin from hook
// streams edited to differ in known ways (a changed tool result, an inserted
// retry, a removed step, a different model), compared as ATIF and as ATOF.
// Each case checks the pairs and totals against what the edit did.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, cliInProcess, EXAMPLES, expectNoStack, tempDir } from './support.ts';

interface Pair { a: string | null; b: string | null; kind: string; title: string; status: string; differences: { field: string; tool?: string; a: unknown; b: unknown }[]; delta: { durationUs: number | null; promptTokens: number; completionTokens: number; cachedTokens: number; costUsd: number | null } }
interface Totals { steps: number; llmCalls: number; toolCalls: number; errors: number; promptTokens: number; completionTokens: number; cachedTokens: number; costUsd: number | null; durationUs: number | null }
interface Report { command: string; equivalent: boolean; summary: { same: number; changed: number; onlyA: number; onlyB: number }; pairs: Pair[]; onlyRecorded: { fact: string; run: string; values: string[] }[]; totals: { a: Totals; b: Totals; delta: Totals } }

const DEMO = readFileSync(path.join(EXAMPLES, 'agent-session.hooks.jsonl'), 'utf8').trimEnd().split('\n');
type Line = { hook: string; payload: Record<string, unknown> };
const lines = (): Line[] => DEMO.map((line) => JSON.parse(line) as Line);

/** Replays an edited demo stream; returns its ATIF and ATOF files. */
async function record(edit: (stream: Line[]) => Line[]): Promise<{ atif: string; atof: string }> {
  const dir = tempDir('nrh-compare-');
  const stream = path.join(dir, 'run.hooks.jsonl');
  writeFileSync(stream, `${edit(lines()).map((line) => JSON.stringify(line)).join('\n')}\n`);
  const result = await cliInProcess(['replay', stream, '--out', dir, '--quiet']);
  expect(result.code, result.stderr).toBe(0);
  return { atif: path.join(dir, 'atif', 'run-atif-demo-session-7f3a.json'), atof: path.join(dir, 'atof', 'run-atof.jsonl') };
}

async function compareJson(a: string, b: string): Promise<{ code: number; report: Report }> {
  const result = await cliInProcess(['compare', a, b, '--json']);
  expectNoStack(result.stderr);
  return { code: result.code, report: JSON.parse(result.stdout) as Report };
}

const original = await record((stream) => stream);
const withoutRetry = await record((stream) => stream.filter((line, index) => !(index === 2 || line.hook === 'api_request_error')));
const withoutTerminalStep = await record((stream) => stream.filter((line) => line.payload.api_request_id !== 'turn-1:api:2' && line.payload.tool_call_id !== 'call_term_3'));
const changedResult = await record((stream) =>
  stream.map((line) => (line.hook === 'post_tool_call' && line.payload.tool_call_id === 'call_read_1' ? { ...line, payload: { ...line.payload, result: 'export const parseDate = (text: string) => new Date(`${text}Z`);\n' } } : line)),
);
const otherModel = await record((stream) =>
  stream.map((line) => (line.payload.api_request_id === 'turn-1:api:4' ? (JSON.parse(JSON.stringify(line).replaceAll('gpt-4o-2024-08-06', 'gpt-4.1-2025-04-14')) as Line) : line)),
);

// The last answer served less from the prompt cache: the same tokens in and out, 512 fewer cached.
const lessCached = await record((stream) =>
  stream.map((line) => (line.payload.api_request_id === 'turn-1:api:4' ? (JSON.parse(JSON.stringify(line).replaceAll('"cached_tokens":1536', '"cached_tokens":1024')) as Line) : line)),
);

const interrupted = await record((stream) =>
  stream.map((line) => (line.hook === 'on_session_end' && line.payload.session_id === 'demo-session-7f3a' ? { ...line, payload: { ...line.payload, completed: false, interrupted: true, turn_exit_reason: 'interrupted' } } : line)),
);

describe('nemo-relay-hooks compare', () => {
  it('finds two recordings of the same run equivalent, ATIF against ATIF and ATOF against ATIF (exit 0)', async () => {
    const again = await record((stream) => stream);
    for (const [a, b] of [[original.atif, again.atif], [original.atof, again.atif]] as const) {
      const { code, report } = await compareJson(a, b);
      expect(code).toBe(0);
      expect(report.equivalent).toBe(true);
      expect(report.pairs.every((pair) => pair.status === 'same' && pair.a !== null && pair.b !== null)).toBe(true);
      // 1 turn + 5 LLM calls, the subagent, its turn and 2 LLM calls.
      expect(report.pairs).toHaveLength(10);
      expect(report.totals.a).toMatchObject({ llmCalls: 7, toolCalls: 5, errors: 2, promptTokens: 6654, completionTokens: 290, cachedTokens: 4352 });
      expect(report.totals.delta).toMatchObject({ steps: 0, toolCalls: 0, errors: 0, promptTokens: 0, completionTokens: 0, cachedTokens: 0 });
    }
    // ATIF step ids on both sides, the subagent's steps under its trajectory id.
    const { report } = await compareJson(original.atif, again.atif);
    expect(report.pairs.map((pair) => pair.a)).toEqual(['1', '2', '3', '4', '5', 'demo-subagent-91b2', 'demo-subagent-91b2/1', 'demo-subagent-91b2/2', 'demo-subagent-91b2/3', '6']);
  });

  it('reports a changed tool result on the step that made the call, and nothing else', async () => {
    const { code, report } = await compareJson(original.atif, changedResult.atif);
    expect(code).toBe(1);
    const changed = report.pairs.filter((pair) => pair.status === 'changed');
    expect(changed).toHaveLength(1);
    expect(changed[0]).toMatchObject({ a: '3', b: '3', title: 'LLM gpt-4o-2024-08-06 → read_file, search_code' });
    expect(changed[0]!.differences).toEqual([
      { field: 'tool.result', tool: 'read_file', a: 'export function parseDate(text: string): Date {\n  return new Date(text);\n}\n', b: 'export const parseDate = (text: string) => new Date(`${text}Z`);\n' },
    ]);
    expect(report.summary).toEqual({ same: 9, changed: 1, onlyA: 0, onlyB: 0 });
  });

  it('shows an inserted retry as one step only in b, without shifting the pairs after it', async () => {
    const { code, report } = await compareJson(withoutRetry.atif, original.atif);
    expect(code).toBe(1);
    const only = report.pairs.filter((pair) => pair.status !== 'same');
    expect(only).toHaveLength(1);
    expect(only[0]).toMatchObject({ a: null, b: '2', status: 'only-b', kind: 'llm' });
    // The failed attempt: its error, no tokens.
    expect(report.totals.delta).toMatchObject({ steps: 1, llmCalls: 1, errors: 1, toolCalls: 0, promptTokens: 0 });
    // Every later step of b pairs with its counterpart in a (ids shifted by one in b only).
    expect(report.pairs.filter((pair) => pair.status === 'same').map((pair) => [pair.a, pair.b]).slice(0, 5)).toEqual([['1', '1'], ['2', '3'], ['3', '4'], ['4', '5'], ['demo-subagent-91b2', 'demo-subagent-91b2']]);
  });

  it('shows a removed step (an LLM call and its tool call) as only in a, with its tokens in the totals delta', async () => {
    const { code, report } = await compareJson(original.atif, withoutTerminalStep.atif);
    expect(code).toBe(1);
    const removed = report.pairs.filter((pair) => pair.status !== 'same');
    expect(removed).toHaveLength(1);
    expect(removed[0]).toMatchObject({ a: '4', b: null, status: 'only-a', title: 'LLM gpt-4o-2024-08-06 → terminal', delta: { promptTokens: -1420, completionTokens: -41, cachedTokens: -1152 } });
    expect(report.totals.delta).toMatchObject({ steps: -1, llmCalls: -1, toolCalls: -1, promptTokens: -1420, completionTokens: -41, cachedTokens: -1152 });
  });

  it('pairs a step whose model changed with its counterpart and names the model difference', async () => {
    const { code, report } = await compareJson(original.atif, otherModel.atif);
    expect(code).toBe(1);
    const changed = report.pairs.filter((pair) => pair.status !== 'same');
    expect(changed).toHaveLength(1);
    expect(changed[0]).toMatchObject({ a: '6', b: '6', status: 'changed' });
    expect(changed[0]!.differences).toEqual([{ field: 'model', a: 'gpt-4o-2024-08-06', b: 'gpt-4.1-2025-04-14' }]);
  });

  it('names a turn that ended interrupted against one that completed where both files record it (ATOF), and says which file alone does', async () => {
    const { code, report } = await compareJson(original.atof, interrupted.atof);
    expect(code).toBe(1);
    const changed = report.pairs.filter((pair) => pair.status !== 'same');
    expect(changed).toHaveLength(1);
    expect(changed[0]).toMatchObject({ kind: 'user', differences: [{ field: 'turn', a: 'completed', b: 'interrupted' }] });
    expect(report.onlyRecorded).toEqual([]);
    // A trajectory records no turn's end (nor approvals): against one, the ATOF file's say so and compare nothing.
    const across = await compareJson(original.atif, interrupted.atof);
    expect(across.code).toBe(0);
    expect(across.report.onlyRecorded).toEqual([
      { fact: 'approval', run: 'b', values: ['terminal: once'] },
      { fact: 'turn', run: 'b', values: ['“The date parser test is flaky. Find out…”: interrupted'] },
    ]);
    expect((await compareJson(interrupted.atof, original.atif)).report.onlyRecorded).toEqual([
      { fact: 'approval', run: 'a', values: ['terminal: once'] },
      { fact: 'turn', run: 'a', values: ['“The date parser test is flaky. Find out…”: interrupted'] },
    ]);
  });

  it('leaves out a subagent that made no model call and ran no tool: the trajectory has none, the ATOF file its start and turn', async () => {
    // A Claude Agent SDK background agent the query ended before its first request was recorded (found by the random wire).
    const idle = await record((stream) => stream.filter((line) => !(line.payload.session_id === 'demo-subagent-91b2' && ['pre_api_request', 'post_api_request', 'pre_tool_call', 'post_tool_call'].includes(line.hook))));
    const { code, report } = await compareJson(idle.atof, idle.atif);
    expect(report.pairs.filter((pair) => pair.status !== 'same')).toEqual([]);
    expect(report.pairs.map((pair) => pair.kind).filter((kind) => kind === 'subagent')).toEqual([]);
    expect(code).toBe(0);
  });

  it('compares ATOF runs the same way (scope uuids as ids) and prints the text report', async () => {
    const { code, report } = await compareJson(original.atof, withoutRetry.atof);
    expect(code).toBe(1);
    const only = report.pairs.filter((pair) => pair.status !== 'same');
    expect(only).toHaveLength(1);
    expect(only[0]).toMatchObject({ b: null, status: 'only-a', kind: 'llm' });
    expect(only[0]!.a).toMatch(/^[0-9a-f-]{36}$/);

    const text = cli(['compare', original.atif, changedResult.atif]);
    expect(text.code).toBe(1);
    const out = text.stdout.split('\n');
    expect(out).toContain(`a: ${original.atif} (session demo-session-7f3a)`);
    expect(out.find((line) => line.startsWith('~ 3'))).toMatch(/^~ 3 +3 +LLM gpt-4o-2024-08-06 → read_file, search_code/);
    expect(out).toContainEqual(expect.stringMatching(/^ +read_file result: export function parseDate\(text: string\): Date \{ return new … → export const parseDate = /));
    expect(out.filter((line) => line.startsWith('= '))).toHaveLength(9);
    expect(out).toContainEqual(expect.stringMatching(/^= demo-subagent-91b2\/2 +demo-subagent-91b2\/2 +LLM gpt-4o-mini-2024-07-18 → read_file/));
    expect(out).toContainEqual(expect.stringMatching(/^prompt tokens +6,654 +6,654 +±0$/));
    expect(out.at(-2)).toBe('runs differ: 1 changed step, 0 only in a, 0 only in b (9 the same)');
  });

  it('writes a step\'s cached tokens as the timeline does, in the text and HTML rows, its difference and its delta', async () => {
    const { report } = await compareJson(original.atif, lessCached.atif);
    expect(report.pairs.filter((pair) => pair.status !== 'same')).toMatchObject([{ a: '6', b: '6', status: 'changed', delta: { promptTokens: 0, completionTokens: 0, cachedTokens: -512 } }]);
    const text = cli(['compare', original.atif, lessCached.atif]);
    const out = text.stdout.split('\n');
    expect(out.find((line) => line.startsWith('~ 6'))).toMatch(/^~ 6 +6 +LLM gpt-4o-2024-08-06 +±0 tokens \(−512 cached\)$/);
    expect(out).toContainEqual(expect.stringMatching(/^ +tokens: 1,702 in \(1,536 cached\) \/ 88 out → 1,702 in \(1,024 cached\) \/ 88 out$/));
    // The timeline's own words for the same step.
    expect(cli(['view', original.atif]).stdout).toContain('1,702 in (1,536 cached) / 88 out');
    const page = path.join(tempDir(), 'compare.html');
    expect(cli(['compare', original.atif, lessCached.atif, '--html', page]).code).toBe(1);
    const html = readFileSync(page, 'utf8');
    expect(html).toContain('<span class="dur">910ms · 1,702 in (1,536 cached) / 88 out</span>');
    expect(html).toContain('<span class="dur">910ms · 1,702 in (1,024 cached) / 88 out</span>');
    expect(html).toContain('<span class="delta">±0 tok (−512 cached)</span>');
    expect(html).toContain('<li>tokens: 1,702 in (1,536 cached) / 88 out → 1,702 in (1,024 cached) / 88 out</li>');
  });

  it('picks sessions of a multi-session ATOF file with file#session, and says which exist when none is picked', async () => {
    const dir = tempDir();
    expect((await cliInProcess(['replay', path.join(EXAMPLES, '..', 'test', 'fixtures', 'streams', 'interleaved-sessions.hooks.jsonl'), '--out', dir, '--quiet'])).code).toBe(0);
    const atof = path.join(dir, 'atof', 'interleaved-sessions-atof.jsonl');
    const { code, report } = await compareJson(`${atof}#session-A`, `${atof}#session-B`);
    expect(code).toBe(1);
    expect(report.pairs.some((pair) => pair.differences.some((difference) => difference.field === 'model'))).toBe(true);
    const none = await cliInProcess(['compare', atof, original.atif]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^nemo-relay-hooks: .*interleaved-sessions-atof\.jsonl has 2 sessions \(session-A, session-B\); pick one with .*#<session id>\n$/);
    const unknown = await cliInProcess(['compare', `${atof}#nope`, original.atif]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no session "nope" \(it has session-A, session-B\)\n$/);
  });

  it('gives one error line and exit 2 for a missing file, a hook stream, a wrong argument count', async () => {
    const missing = cli(['compare', '/nonexistent/run.json', original.atif]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe('nemo-relay-hooks: cannot read /nonexistent/run.json: no such file or directory\n');
    const hooks = await cliInProcess(['compare', path.join(EXAMPLES, 'agent-session.hooks.jsonl'), original.atif]);
    expect(hooks.code).toBe(2);
    expect(hooks.stderr).toMatch(/is a recorded hook stream; run "nemo-relay-hooks replay .*" first\n$/);
    const one = await cliInProcess(['compare', original.atif]);
    expect(one.code).toBe(2);
    expect(one.stderr.trim().split('\n')).toHaveLength(1);
    for (const result of [missing, hooks, one]) expectNoStack(result.stderr);
  });
});
