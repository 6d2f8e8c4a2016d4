// Rollups: each session, turn and subagent carries its own figures and its
// totals through everything below it, checked against sums worked out by
// hand on a trajectory with two levels of nested subagents, and against the
// demo recorded as ATOF and as ATIF (both must roll up the same).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, cliInProcess, EXAMPLES, tempDir } from './support.ts';

interface Figures { llmCalls: number; toolCalls: number; errors: number; promptTokens: number; completionTokens: number; cachedTokens: number; costUsd: number | null; durationUs: number | null }
interface JsonNode { kind: string; title: string; own?: Figures; totals?: Figures; children: JsonNode[] }

const t0 = Date.parse('2026-03-01T10:00:00Z') / 1000;
const at = (seconds: number) => new Date((t0 + seconds) * 1000).toISOString();

function agentStep(id: number, seconds: number, model: string, metrics: Record<string, number>, calls: { id: string; name: string; result: string; ref?: string; error?: boolean }[] = [], span = 1) {
  return {
    step_id: id,
    source: 'agent',
    message: calls.length ? '' : 'done',
    timestamp: at(seconds + span),
    model_name: model,
    metrics,
    ...(calls.length
      ? {
          tool_calls: calls.map((call) => ({ tool_call_id: call.id, function_name: call.name, arguments: { q: call.id } })),
          observation: {
            results: calls.map((call) => ({
              source_call_id: call.id,
              content: call.result,
              ...(call.ref ? { subagent_trajectory_ref: [{ trajectory_id: call.ref }] } : {}),
              ...(call.error ? { extra: { metadata: { 'otel.status_code': 'ERROR', 'error.type': 'ToolError' } } } : {}),
            })),
          },
        }
      : {}),
    extra: { invocation: { start_timestamp: t0 + seconds, end_timestamp: t0 + seconds + span } },
  };
}

/**
 * root (turn 1): LLM 100/10 $0.01 → delegate (to A)    LLM 50/5 cached 20 $0.002
 *   A: LLM 40/4 $0.004 → delegate (to B), search (fails)
 *     B: LLM 30/3 cached 10 (no cost)
 */
function nested() {
  const b = { schema_version: 'ATIF-v1.6', trajectory_id: 'sub-b', session_id: 'sub-b', agent: { name: 'b', version: '1' }, steps: [
    { step_id: 1, source: 'user', message: 'inner task', timestamp: at(3) },
    agentStep(2, 3, 'small', { prompt_tokens: 30, completion_tokens: 3, cached_tokens: 10 }, [], 2),
  ] };
  const a = { schema_version: 'ATIF-v1.6', trajectory_id: 'sub-a', session_id: 'sub-a', agent: { name: 'a', version: '1' }, steps: [
    { step_id: 1, source: 'user', message: 'middle task', timestamp: at(2) },
    agentStep(2, 2, 'mid', { prompt_tokens: 40, completion_tokens: 4, cost_usd: 0.004 }, [
      { id: 'c-b', name: 'delegate', result: 'inner done', ref: 'sub-b' },
      { id: 'c-s', name: 'search', result: 'boom', error: true },
    ]),
  ], subagent_trajectories: [b] };
  return { schema_version: 'ATIF-v1.6', session_id: 'root', agent: { name: 'root', version: '1' }, steps: [
    { step_id: 1, source: 'user', message: 'outer task', timestamp: at(0) },
    agentStep(2, 0, 'big', { prompt_tokens: 100, completion_tokens: 10, cost_usd: 0.01 }, [{ id: 'c-a', name: 'delegate', result: 'middle done', ref: 'sub-a' }]),
    agentStep(3, 8, 'big', { prompt_tokens: 50, completion_tokens: 5, cached_tokens: 20, cost_usd: 0.002 }),
  ], subagent_trajectories: [a] };
}

function find(nodes: JsonNode[], title: string): JsonNode {
  for (const candidate of nodes) {
    if (candidate.title === title) return candidate;
    try {
      return find(candidate.children, title);
    } catch {
      // not under this one
    }
  }
  throw new Error(`no node ${title}`);
}

describe('rollups in view', () => {
  it('sums own figures and totals up the tree through nested subagents (hand-computed)', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'nested.json');
    writeFileSync(file, JSON.stringify(nested()));
    const result = cli(['view', file, '--json']);
    expect(result.code, result.stderr).toBe(0);
    const [session] = (JSON.parse(result.stdout) as { files: { sessions: JsonNode[] }[] }).files[0]!.sessions;
    const subA = find([session!], 'subagent sub-a');
    const subB = find([session!], 'subagent sub-b');
    expect(subB.own).toEqual({ llmCalls: 1, toolCalls: 0, errors: 0, promptTokens: 30, completionTokens: 3, cachedTokens: 10, costUsd: null, durationUs: 2_000_000 });
    expect(subB.totals).toEqual(subB.own);
    // A: its own LLM call and two tool calls (one failed); totals add B.
    expect(subA.own).toMatchObject({ llmCalls: 1, toolCalls: 2, errors: 1, promptTokens: 40, completionTokens: 4, cachedTokens: 0, costUsd: 0.004 });
    expect(subA.totals).toMatchObject({ llmCalls: 2, toolCalls: 2, errors: 1, promptTokens: 70, completionTokens: 7, cachedTokens: 10, costUsd: 0.004 });
    expect(session!.own).toMatchObject({ llmCalls: 2, toolCalls: 1, errors: 0, promptTokens: 150, completionTokens: 15, cachedTokens: 20, costUsd: 0.012 });
    expect(session!.totals).toMatchObject({ llmCalls: 4, toolCalls: 3, errors: 1, promptTokens: 220, completionTokens: 22, cachedTokens: 30, costUsd: 0.016 });
    // The session spans 0s..9s; A runs from 2s (its LLM call) to 5s (B's end), so 3s of it is not the root's own time.
    expect(session!.totals!.durationUs).toBe(9_000_000);
    expect(session!.own!.durationUs).toBe(6_000_000);
    // The turn rolls up like its session (everything is in turn 1).
    const turn = session!.children.find((child) => child.kind === 'turn')!;
    expect(turn.totals).toMatchObject({ promptTokens: 220, costUsd: 0.016, toolCalls: 3, errors: 1 });
    // Calls carry no rollup.
    expect(find([session!], 'LLM big')).not.toHaveProperty('totals');

    const text = (await cliInProcess(['view', file])).stdout.split('\n');
    expect(text[0]).toMatch(/session root .*4 LLM calls, 3 tool calls {2}220 in \(30 cached\) \/ 22 out {2}\$0\.016 {2}1 error {2}\(own: 150 in \(20 cached\) \/ 15 out, \$0\.012, 1 tool call, 0 errors\)/);
    expect(text.find((line) => line.includes('subagent sub-a'))).toMatch(/70 in \(10 cached\) \/ 7 out \$0\.004 {2}Σ 1 error {2}\(own: 40 in \/ 4 out, \$0\.004, 2 tool calls, 1 error\)/);
  });

  it('rolls up the demo the same from its ATOF and its ATIF', async () => {
    const out = tempDir();
    expect((await cliInProcess(['replay', path.join(EXAMPLES, 'agent-session.hooks.jsonl'), '--out', out, '--quiet'])).code).toBe(0);
    const rollups = async (file: string) => {
      const [session] = (JSON.parse((await cliInProcess(['view', file, '--json'])).stdout) as { files: { sessions: JsonNode[] }[] }).files[0]!.sessions;
      const sub = find([session!], 'subagent demo-subagent-91b2');
      const strip = (figures: Figures) => ({ ...figures, durationUs: undefined });
      return { own: strip(session!.own!), totals: strip(session!.totals!), sub: strip(sub.totals!) };
    };
    const atof = await rollups(path.join(out, 'atof', 'agent-session-atof.jsonl'));
    const atif = await rollups(path.join(out, 'atif', 'agent-session-atif-demo-session-7f3a.json'));
    expect(atif).toEqual(atof);
    // The parent's own figures are what its ATIF file's final_metrics say; totals add the subagent's.
    expect(atif.own).toMatchObject({ promptTokens: 5972, completionTokens: 223, cachedTokens: 4096 });
    expect(atif.sub).toMatchObject({ promptTokens: 682, completionTokens: 67, cachedTokens: 256, llmCalls: 2, toolCalls: 1, errors: 1 });
    expect(atif.totals).toMatchObject({ promptTokens: 6654, completionTokens: 290, cachedTokens: 4352, llmCalls: 7, toolCalls: 5, errors: 2 });
  });
});
