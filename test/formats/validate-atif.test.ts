/**
 * validateAtif: native's documents validate, and each ATIF v1.7 rule
 * (Harbor's models and validator) reports a stable code at a JSON path.
 */

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateAtif } from '../../src/formats/atif/validate.ts';

const fixtures = path.join(import.meta.dirname, 'fixtures');

type Doc = Record<string, unknown> & { steps: Record<string, unknown>[] };

function doc(): Doc {
  return {
    schema_version: 'ATIF-v1.7',
    session_id: 's',
    trajectory_id: 't',
    agent: { name: 'a', version: '1', model_name: 'm' },
    steps: [
      { step_id: 1, source: 'user', message: 'hi', timestamp: '2026-11-29T14:59:29.159168+00:00' },
      {
        step_id: 2,
        source: 'agent',
        message: [{ type: 'text', text: 'ok' }],
        model_name: 'm',
        tool_calls: [{ tool_call_id: 'c1', function_name: 'ls', arguments: {} }],
        observation: { results: [{ source_call_id: 'c1', content: 'a.txt' }] },
        metrics: { prompt_tokens: 3, completion_tokens: 1, cost_usd: 0.5 },
        llm_call_count: 1,
      },
    ],
    final_metrics: { total_prompt_tokens: 3, total_steps: 2 },
  };
}

const rules = (value: unknown, baseDir?: string): string[] =>
  validateAtif(value, baseDir === undefined ? {} : { baseDir }).map((error) => `${error.path} ${error.rule}`);

function withStep(index: number, patch: Record<string, unknown>): Doc {
  const d = doc();
  d.steps[index] = { ...d.steps[index], ...patch };
  return d;
}

describe('validateAtif', () => {
  it('accepts native documents, embedded subagents included', () => {
    for (const file of ['atif-session.json', 'plugin-atif-trajectory.json']) {
      expect(validateAtif(JSON.parse(fs.readFileSync(path.join(fixtures, file), 'utf8')))).toEqual([]);
    }
    expect(rules(doc())).toEqual([]);
  });

  it('accepts an empty steps list, like NAT and native, and null optional fields', () => {
    expect(rules({ ...doc(), steps: [], notes: null })).toEqual([]);
  });

  it('forbids fields each model does not define', () => {
    expect(rules({ ...doc(), bogus: 1 })).toEqual(['$.bogus atif.extra_field']);
    expect(rules(withStep(1, { thoughts: 'x' }))).toEqual(['$.steps[1].thoughts atif.extra_field']);
    const d = doc();
    (d.agent as Record<string, unknown>)['tools'] = [];
    expect(rules(d)).toEqual(['$.agent.tools atif.extra_field']);
  });

  it('checks the schema version and required fields', () => {
    expect(rules({ ...doc(), schema_version: 'ATIF-v2.0' })).toEqual(['$.schema_version atif.schema_version']);
    expect(rules({ ...doc(), schema_version: 'ATIF-v1.6', session_id: undefined })).toEqual(['$.session_id atif.required']);
    expect(rules({ ...doc(), agent: { name: 'a' } })).toEqual(['$.agent.version atif.required']);
    expect(rules([])).toEqual(['$ atif.type']);
  });

  it('requires step ids 1..n without gaps', () => {
    expect(rules(withStep(1, { step_id: 3 }))).toEqual(['$.steps[1].step_id atif.step_id_sequence']);
  });

  it('keeps agent-only fields off user and system steps', () => {
    expect(rules(withStep(0, { model_name: 'm' }))).toEqual(['$.steps[0].model_name atif.agent_only_field']);
    expect(rules(withStep(0, { source: 'system', metrics: {} }))).toEqual(['$.steps[0].metrics atif.agent_only_field']);
    expect(rules(withStep(0, { observation: { results: [] } }))).toEqual(['$.steps[0].observation atif.agent_only_field']);
    expect(rules(withStep(0, { source: 'system', observation: { results: [{ content: 'x' }] } }))).toEqual([]);
  });

  it('parses timestamps as ISO 8601', () => {
    expect(rules(withStep(0, { timestamp: 'yesterday' }))).toEqual(['$.steps[0].timestamp atif.timestamp']);
    expect(rules(withStep(0, { timestamp: '2026-11-29T14:59:29Z' }))).toEqual([]);
  });

  it('requires object arguments, integer token counts and finite costs', () => {
    const d = doc();
    (d.steps[1]!.tool_calls as Record<string, unknown>[])[0]!.arguments = '{"a":1}';
    expect(rules(d)).toEqual(['$.steps[1].tool_calls[0].arguments atif.arguments']);
    expect(rules(withStep(1, { metrics: { prompt_tokens: 1.5, completion_token_ids: [1, -1] } }))).toEqual([
      '$.steps[1].metrics.prompt_tokens atif.token_count',
      '$.steps[1].metrics.completion_token_ids atif.token_count',
    ]);
    expect(rules({ ...doc(), final_metrics: { total_cost_usd: 'free', total_steps: -1 } })).toEqual([
      '$.final_metrics.total_steps atif.token_count',
      '$.final_metrics.total_cost_usd atif.cost',
    ]);
  });

  it('requires source_call_id to name a tool call of the same step', () => {
    expect(rules(withStep(1, { observation: { results: [{ source_call_id: 'other', content: 'x' }] } }))).toEqual([
      '$.steps[1].observation.results[0].source_call_id atif.source_call_id',
    ]);
  });

  it('forbids metrics and reasoning on steps without an LLM call', () => {
    expect(rules(withStep(1, { llm_call_count: 0, reasoning_content: 'r' }))).toEqual([
      '$.steps[1].metrics atif.llm_call_count_zero',
      '$.steps[1].reasoning_content atif.llm_call_count_zero',
    ]);
  });

  it('checks embedded subagents recursively: trajectory_id required and unique, refs need an id or a path', () => {
    const child = { ...doc(), trajectory_id: 'child' };
    const dupe = { ...doc(), trajectory_id: 'child' };
    const noId = { ...doc(), trajectory_id: undefined, steps: [{ step_id: 2, source: 'user', message: 'x' }] };
    expect(rules({ ...doc(), subagent_trajectories: [child, dupe, noId] })).toEqual([
      '$.subagent_trajectories[1].trajectory_id atif.subagent_trajectory_id',
      '$.subagent_trajectories[2].trajectory_id atif.required',
      '$.subagent_trajectories[2].steps[0].step_id atif.step_id_sequence',
    ]);
    expect(rules(withStep(1, { observation: { results: [{ source_call_id: 'c1', subagent_trajectory_ref: [{ session_id: 's' }] }] } }))).toEqual([
      '$.steps[1].observation.results[0].subagent_trajectory_ref[0] atif.subagent_ref',
    ]);
  });

  it('checks content parts, and image paths only when a base directory is given', () => {
    const image = { type: 'image', source: { media_type: 'image/png', path: 'shot.png' } };
    expect(rules(withStep(0, { message: [image] }))).toEqual([]);
    expect(rules(withStep(0, { message: [{ type: 'text' }] }))).toEqual(['$.steps[0].message[0].text atif.content_part']);
    expect(rules(withStep(0, { message: [{ type: 'text', text: 'x', source: {} }] }))).toEqual(['$.steps[0].message[0].source atif.content_part']);
    expect(rules(withStep(0, { message: [{ type: 'image', source: { media_type: 'image/bmp', path: 'x' } }] }))).toEqual([
      '$.steps[0].message[0].source.media_type atif.content_part',
    ]);
    expect(rules(withStep(0, { message: [{ type: 'video' }] }))).toEqual(['$.steps[0].message[0].type atif.content_part']);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nrh-atif-img-'));
    try {
      expect(rules(withStep(0, { message: [image] }), dir)).toEqual(['$.steps[0].message[0].source.path atif.image_missing']);
      fs.writeFileSync(path.join(dir, 'shot.png'), '');
      expect(rules(withStep(0, { message: [image] }), dir)).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
