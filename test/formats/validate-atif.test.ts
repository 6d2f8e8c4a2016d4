/**
 * validateAtif: each rule follows Harbor's ATIF models (v1.0-v1.7 share the
 * v1.7 model; v1.8 adds its own rules) and reports a stable code at a JSON
 * path; warnings are kept apart from errors.
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
const warned = (value: unknown, baseDir?: string): string[] =>
  validateAtif(value, baseDir === undefined ? {} : { baseDir }).warnings.map((warning) => `${warning.path} ${warning.rule}`);
const v18 = (d: Doc): Doc => ({ ...d, schema_version: 'ATIF-v1.8' });

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

  it('rejects an empty steps list, as Harbor does (at least one step), and accepts null optional fields', () => {
    expect(rules({ ...doc(), steps: [] })).toEqual(['$.steps atif.steps_empty']);
    expect(rules({ ...doc(), notes: null })).toEqual([]);
  });

  it('defaults a missing schema_version to ATIF-v1.7, on the root and on embedded subagents', () => {
    const { schema_version: _version, ...bare } = doc();
    expect(rules(bare)).toEqual([]);
    expect(validateAtif(bare).version).toBeUndefined();
    expect(validateAtif(doc()).version).toBe('ATIF-v1.7');
    expect(rules({ ...doc(), subagent_trajectories: [{ ...bare, trajectory_id: 'child' }] })).toEqual([]);
  });

  it('makes session_id optional for every version (Harbor\'s v1.7 model), v1.5 included', () => {
    expect(rules({ ...doc(), schema_version: 'ATIF-v1.5', session_id: undefined })).toEqual([]);
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
    expect(rules({ ...doc(), agent: { name: 'a' } })).toEqual(['$.agent.version atif.required']);
    expect(rules([])).toEqual(['$ atif.type']);
  });

  it('requires step ids 1..n without gaps, coercing an integer string as Pydantic\'s lax mode does', () => {
    expect(rules(withStep(1, { step_id: 3 }))).toEqual(['$.steps[1].step_id atif.step_id_sequence']);
    expect(rules(withStep(0, { step_id: '1' }))).toEqual([]);
    expect(rules(withStep(0, { step_id: 'one' }))).toEqual(['$.steps[0].step_id atif.step_id_sequence']);
  });

  it('keeps agent-only fields off user and system steps', () => {
    expect(rules(withStep(0, { model_name: 'm' }))).toEqual(['$.steps[0].model_name atif.agent_only_field']);
    expect(rules(withStep(0, { source: 'system', metrics: {} }))).toEqual(['$.steps[0].metrics atif.agent_only_field']);
    // Harbor has no rule against an observation on a user step.
    expect(rules(withStep(0, { observation: { results: [] } }))).toEqual([]);
    expect(rules(withStep(0, { source: 'system', observation: { results: [{ content: 'x' }] } }))).toEqual([]);
  });

  it('reads timestamps as Python\'s datetime.fromisoformat does once Z is replaced', () => {
    expect(rules(withStep(0, { timestamp: 'yesterday' }))).toEqual(['$.steps[0].timestamp atif.timestamp']);
    for (const accepted of [
      '2026-11-29T14:59:29Z',
      '20251011T103000Z',
      '2025-W41-6T10:30:00Z',
      '2025-10-11T10:30:00,5Z',
      '2025-10-11T10Z',
      '2025-10-11 10:30',
      '2025-10-11',
    ]) {
      expect(rules(withStep(0, { timestamp: accepted })), accepted).toEqual([]);
    }
    for (const rejected of ['2025-10-11T10:30:00z', '2025-10', '2025-284', '2025-02-30T00:00:00Z', '2025-10-11T25:00Z']) {
      expect(rules(withStep(0, { timestamp: rejected })), rejected).toEqual(['$.steps[0].timestamp atif.timestamp']);
    }
  });

  it('requires object arguments, integer token counts and finite costs', () => {
    const d = doc();
    (d.steps[1]!.tool_calls as Record<string, unknown>[])[0]!.arguments = '{"a":1}';
    expect(rules(d)).toEqual(['$.steps[1].tool_calls[0].arguments atif.arguments']);
    expect(rules(withStep(1, { metrics: { prompt_tokens: 1.5, completion_token_ids: [1, 0.5] } }))).toEqual([
      '$.steps[1].metrics.prompt_tokens atif.token_count',
      '$.steps[1].metrics.completion_token_ids atif.token_count',
    ]);
    // Harbor puts no lower bound on token counts; only total_steps has one.
    expect(rules(withStep(1, { metrics: { prompt_tokens: -3, completion_token_ids: [-1] } }))).toEqual([]);
    expect(rules({ ...doc(), final_metrics: { total_prompt_tokens: -1 } })).toEqual([]);
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
      // Harbor never opens the files: a missing one is a warning, not an error.
      expect(rules(withStep(0, { message: [image] }), dir)).toEqual([]);
      expect(warned(withStep(0, { message: [image] }), dir)).toEqual(['$.steps[0].message[0].source.path atif.image_missing']);
      fs.writeFileSync(path.join(dir, 'shot.png'), '');
      expect(warned(withStep(0, { message: [image] }), dir)).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('accepts ATIF-v1.8 audio parts with MIME aliases and duration_sec, and only in v1.8', () => {
    const audio = { type: 'audio', source: { media_type: 'audio/mp3', path: 'clip.mp3', duration_sec: 2.5 } };
    expect(rules(v18(withStep(0, { message: [audio] })))).toEqual([]);
    expect(rules(v18(withStep(0, { message: [{ ...audio, source: { media_type: 'audio/x-wav', path: 'a.wav' } }] })))).toEqual([]);
    expect(rules(v18(withStep(0, { message: [{ ...audio, source: { ...audio.source, duration_sec: -1 } }] })))).toEqual([
      '$.steps[0].message[0].source.duration_sec atif.content_part',
    ]);
    expect(rules(v18(withStep(0, { message: [{ ...audio, source: { media_type: 'audio/midi', path: 'a.mid' } }] })))).toEqual([
      '$.steps[0].message[0].source.media_type atif.content_part',
    ]);
    expect(rules(withStep(0, { message: [audio] }))).toEqual(['$.steps[0].message[0].type atif.content_part']);
  });

  it('rejects in ATIF-v1.8 a tool_call_id repeated within a step, and blank ids and paths', () => {
    const calls = [
      { tool_call_id: 'c1', function_name: 'ls', arguments: {} },
      { tool_call_id: 'c1', function_name: 'cat', arguments: {} },
    ];
    expect(rules(v18(withStep(1, { tool_calls: calls })))).toEqual(['$.steps[1].tool_calls[1].tool_call_id atif.duplicate_tool_call_id']);
    expect(rules(withStep(1, { tool_calls: calls }))).toEqual([]);
    expect(rules(v18({ ...doc(), session_id: ' ' }))).toEqual(['$.session_id atif.blank']);
    expect(rules(v18(withStep(1, { tool_calls: [{ tool_call_id: '', function_name: 'ls', arguments: {} }], observation: undefined })))).toEqual([
      '$.steps[1].tool_calls[0].tool_call_id atif.blank',
    ]);
  });

  it('requires in ATIF-v1.8 a subagent ref without a path to name an embedded trajectory', () => {
    const withRef = (ref: Record<string, unknown>): Doc =>
      withStep(1, { observation: { results: [{ source_call_id: 'c1', subagent_trajectory_ref: [ref] }] } });
    const child = { ...doc(), schema_version: 'ATIF-v1.8', trajectory_id: 'child' };
    expect(rules(v18(withRef({ trajectory_id: 'child' })))).toEqual([
      '$.steps[1].observation.results[0].subagent_trajectory_ref[0].trajectory_id atif.subagent_ref_unresolved',
    ]);
    expect(rules({ ...v18(withRef({ trajectory_id: 'child' })), subagent_trajectories: [child] })).toEqual([]);
    expect(rules(v18(withRef({ trajectory_id: 'elsewhere', trajectory_path: 'child.json' })))).toEqual([]);
    expect(rules(withRef({ trajectory_id: 'child' }))).toEqual([]);
    expect(rules(v18(withRef({ trajectory_path: '' })))).toEqual(['$.steps[1].observation.results[0].subagent_trajectory_ref[0].trajectory_path atif.blank']);
  });
});
