/**
 * AtifBuilder without the native runtime: the recorded native samples, the
 * event-shape tolerance the memory relay relies on, the subtree filter and
 * native's JSON text rules.
 */

import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Json } from '../../src/relay/contract.ts';
import { AtifBuilder } from '../../src/formats/atif/builder.ts';
import { serializeTrajectory } from '../../src/formats/atif/serialize.ts';
import { createSubtreeFilter } from '../../src/formats/atif/subtree.ts';
import type { AtifTrajectory } from '../../src/formats/atif/types.ts';
import type { AtofEvent } from '../../src/formats/atof/types.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { parseAtofJsonl } from '../../src/formats/atof/validate.ts';

const fixtures = path.join(import.meta.dirname, 'fixtures');
const readJson = <T>(name: string): T => JSON.parse(fs.readFileSync(path.join(fixtures, name), 'utf8')) as T;

const ROOT = '01a22800-0000-7000-8000-000000000000';
const IMPLICIT = '01a22800-0000-7000-8000-0000000000ff';
let counter = 0;
const uuid = (): string => `01a22800-0000-7000-8000-${String(++counter).padStart(12, '0')}`;

function scope(
  phase: 'start' | 'end',
  fields: { uuid: string; parent: string; name: string; category: AtofEvent['category']; ts: number | string; data?: Json; metadata?: Json; profile?: Json },
): AtofEvent {
  return {
    atof_version: '0.1',
    attributes: [],
    category: fields.category as 'agent',
    category_profile: (fields.profile ?? null) as AtofEvent['category_profile'],
    data: fields.data ?? null,
    data_schema: null,
    kind: 'scope',
    metadata: fields.metadata ?? null,
    name: fields.name,
    parent_uuid: fields.parent,
    propagation_root_uuid: ROOT,
    scope_category: phase,
    timestamp: fields.ts,
    uuid: fields.uuid,
  };
}

function mark(name: string, parent: string, ts: number): AtofEvent {
  return {
    atof_version: '0.1',
    category: null,
    category_profile: null,
    data: { note: true },
    data_schema: null,
    kind: 'mark',
    metadata: null,
    name,
    parent_uuid: parent,
    timestamp: ts,
    uuid: uuid(),
  };
}

/** A small session: root agent, one LLM call requesting one tool, the tool. Timestamps are integer µs. */
function session(base = 1_800_000_000_000_000): AtofEvent[] {
  const llm = uuid();
  const tool = uuid();
  return [
    scope('start', { uuid: ROOT, parent: IMPLICIT, name: 'session', category: 'agent', ts: base, metadata: { session_id: 'logical', user_id: 'u' } }),
    mark('session.start', ROOT, base + 1),
    scope('start', { uuid: llm, parent: ROOT, name: 'openai', category: 'llm', ts: base + 10, data: { headers: {}, content: { messages: [{ role: 'user', content: 'hi' }] } }, profile: { model_name: 'gpt' } }),
    scope('end', {
      uuid: llm,
      parent: ROOT,
      name: 'openai',
      category: 'llm',
      ts: base + 1_500_020,
      // Unsorted keys on purpose: native sorts every payload object.
      data: { usage: { prompt_tokens: 3, cost_usd: 1 }, choices: [{ message: { tool_calls: [{ id: 'c1', function: { name: 'ls', arguments: '{"z":1,"a":2}' } }], content: 'ok' } }] },
      profile: { model_name: 'gpt' },
    }),
    scope('start', { uuid: tool, parent: ROOT, name: 'ls', category: 'tool', ts: base + 1_500_030, data: { a: 2, z: 1 }, profile: { tool_call_id: 'c1' } }),
    scope('end', { uuid: tool, parent: ROOT, name: 'ls', category: 'tool', ts: base + 1_500_040, data: 'a.txt', profile: { tool_call_id: 'c1' } }),
    scope('end', { uuid: ROOT, parent: IMPLICIT, name: 'session', category: 'agent', ts: base + 2_000_000, metadata: { session_id: 'logical', user_id: 'u' } }),
  ];
}

const OPTIONS = { sessionId: 'sid', agentName: 'agent', agentVersion: '1', modelName: 'm' };

describe('AtifBuilder', () => {
  it('keeps a request failed through a retry that failed with no response (a managed call), so the next retry adds no user step', () => {
    // Found by the random managed-stream differential (test/differential/random-managed.ts): the third attempt
    // of one request, after a failed attempt and a failed managed one, started a second user step.
    const base = 1_800_000_000_000_000;
    const content = { messages: [{ role: 'user', content: 'hi' }] };
    const at = { api_request_id: 't1:api:1' };
    const [a, b, c] = [uuid(), uuid(), uuid()];
    const llm = (phase: 'start' | 'end', id: string, ts: number, data: Json, metadata: Json = at) => scope(phase, { uuid: id, parent: ROOT, name: 'openai', category: 'llm', ts, data, metadata });
    const events = [
      scope('start', { uuid: ROOT, parent: IMPLICIT, name: 'session', category: 'agent', ts: base }),
      llm('start', a, base + 10, { headers: {}, content }),
      llm('end', a, base + 20, { error: { message: 'busy', type: 'overloaded' } }, { ...at, 'error.type': 'overloaded' }),
      llm('start', b, base + 30, { headers: {}, content }),
      llm('end', b, base + 40, null, { ...at, 'error.type': 'internal_error', 'exception.type': 'ProviderError', 'otel.status_code': 'ERROR' }),
      llm('start', c, base + 50, { headers: {}, content }),
      llm('end', c, base + 60, { choices: [{ message: { role: 'assistant', content: 'ok' } }] }),
      scope('end', { uuid: ROOT, parent: IMPLICIT, name: 'session', category: 'agent', ts: base + 100 }),
    ];
    const builder = new AtifBuilder(OPTIONS);
    for (const event of events) builder.add(event);
    const steps = builder.build().steps;
    expect(steps.map((step) => [step.source, (step.extra as { invocation?: { status?: string } } | undefined)?.invocation?.status])).toEqual([
      ['user', undefined],
      ['agent', 'failed'],
      ['agent', 'completed'],
    ]);
  });

  it('reproduces the recorded native exporter sample byte for byte', () => {
    const builder = new AtifBuilder({ sessionId: 'probe-session-1', agentName: 'probe-agent', agentVersion: '0.0.1', modelName: 'claude-probe-model' });
    for (const event of readJson<AtofEvent[]>('subscriber-events-session.json')) builder.add(event);
    expect(JSON.stringify(builder.build())).toBe(JSON.stringify(readJson('atif-session.json')));
  });

  it('reproduces the recorded native plugin-managed file from its ATOF events', () => {
    const expected = readJson<AtifTrajectory>('plugin-atif-trajectory.json');
    const { events, errors } = parseAtofJsonl(fs.readFileSync(path.join(fixtures, 'plugin-atof-events.jsonl'), 'utf8'));
    expect(errors).toEqual([]);
    const builder = new AtifBuilder({ sessionId: expected.trajectory_id as string, agentName: 'probe-agent', agentVersion: '0.0.1', modelName: 'm', style: 'plugin-host' });
    for (const event of events) builder.add(event);
    expect(JSON.stringify(builder.build())).toBe(JSON.stringify(expected));
  });

  it('orders events by timestamp, not by arrival, and re-formats integer-microsecond stamps as RFC 3339', () => {
    const events = session();
    const builder = new AtifBuilder(OPTIONS);
    for (const event of [...events].reverse()) builder.add(event);
    const trajectory = builder.build();
    expect(trajectory.steps.map((step) => step.source)).toEqual(['user', 'agent']);
    expect(trajectory.steps[0]?.timestamp).toBe('2027-01-15T08:00:00.000010+00:00');
    expect(trajectory.steps[1]?.extra).toMatchObject({ invocation: { start_timestamp: 1800000000, end_timestamp: 1800000001.5 } });
    expect(validateAtif(trajectory)).toEqual([]);
  });

  it('writes payload keys sorted even when the events carry them unsorted', () => {
    const builder = new AtifBuilder(OPTIONS);
    for (const event of session()) builder.add(event);
    const step = builder.build().steps[1];
    expect(Object.keys((step?.extra as { llm_response: object }).llm_response)).toEqual(['choices', 'usage']);
    expect(Object.keys(step?.tool_calls?.[0]?.arguments as object)).toEqual(['a', 'z']);
  });

  it('writes typed floats the way serde does: whole costs and timestamps keep ".0"', () => {
    const builder = new AtifBuilder(OPTIONS);
    for (const event of session()) builder.add(event);
    const text = builder.toJson();
    expect(text).toContain('"cost_usd":1.0');
    expect(text).toContain('"start_timestamp":1800000000.0');
    expect(text).toContain('"total_cost_usd":1.0');
    // Payload integers stay integers.
    expect(text).toContain('"usage":{"cost_usd":1,"prompt_tokens":3}');
    expect(JSON.parse(text)).toEqual(builder.build());
  });


  it('reads no mark, yet an event with an unparsable timestamp after one still takes the mark\'s instant', () => {
    const base = 1_800_000_000_000_000;
    const first = uuid();
    const second = uuid();
    const llm = (id: string, phase: 'start' | 'end', ts: number | string, text: string): AtofEvent =>
      scope(phase, {
        uuid: id,
        parent: ROOT,
        name: 'openai',
        category: 'llm',
        ts,
        data: phase === 'start' ? { headers: {}, content: { messages: [{ role: 'user', content: text }] } } : { choices: [{ message: { content: text } }] },
      });
    const events = [
      scope('start', { uuid: ROOT, parent: IMPLICIT, name: 'session', category: 'agent', ts: base }),
      llm(first, 'start', base + 30, 'first'),
      llm(first, 'end', base + 31, 'first answer'),
      mark('between', ROOT, base + 15),
      // Unparsable: it takes its predecessor's instant, the mark's, so it sorts before the first call.
      llm(second, 'start', 'not a time', 'second'),
      llm(second, 'end', base + 40, 'second answer'),
    ];
    const whole = new AtifBuilder(OPTIONS);
    for (const event of events) whole.add(event);
    expect(whole.build().steps.map((step) => step.message)).toEqual(['second', 'first', 'first answer', 'second answer']);
    // Read across builds, the mark last before one: the instant carries over to the next build's reading.
    const split = new AtifBuilder(OPTIONS);
    for (const event of events.slice(0, 4)) split.add(event);
    split.toJson();
    for (const event of events.slice(4)) split.add(event);
    expect(split.toJson()).toBe(whole.toJson());
    expect(split.size).toBe(events.length);
  });
  it('builds repeatedly, partially, and from scratch after clear()', () => {
    const builder = new AtifBuilder(OPTIONS);
    const events = session();
    for (const event of events.slice(0, 3)) builder.add(event);
    expect(builder.build().steps.map((step) => step.source)).toEqual(['user']);
    for (const event of events.slice(3)) builder.add(event);
    expect(builder.toJson()).toBe(builder.toJson());
    expect(builder.size).toBe(events.length);
    builder.clear();
    expect(builder.build().steps).toEqual([]);
  });

  it('uses the root scope\'s propagation root as the plugin-host session id, and its metadata for nemo_relay', () => {
    const builder = new AtifBuilder({ ...OPTIONS, sessionId: ROOT, style: 'plugin-host', toolDefinitions: [{ name: 'ls' }], extra: { k: 1 } });
    const events = session();
    for (const event of events) builder.add(event);
    const trajectory = builder.build();
    expect(trajectory.session_id).toBe(ROOT);
    expect(trajectory.trajectory_id).toBe(ROOT);
    expect(trajectory.agent).toEqual({ extra: { k: 1 }, model_name: 'm', name: 'agent', tool_definitions: [{ name: 'ls' }], version: '1' });
    expect(trajectory.extra).toEqual({ nemo_relay: { session_id: 'logical', session_instance_id: ROOT, user_id: 'u' }, observed_events: events });
    expect(Object.keys(trajectory)).toEqual([...Object.keys(trajectory)].sort());
    expect(builder.toJson().startsWith('{\n  "agent": {')).toBe(true);
  });

  it('names a root-level turn scope\'s file by its uuid and its session by the implicit root, given either id or rootUuid', () => {
    const turn = uuid();
    const llm = uuid();
    const events = [
      scope('start', { uuid: turn, parent: IMPLICIT, name: 'turn', category: 'custom', ts: 1, metadata: { nemo_relay_scope_role: 'turn', session_id: 'logical' } }),
      scope('start', { uuid: llm, parent: turn, name: 'openai', category: 'llm', ts: 2, data: { headers: {}, content: { messages: [{ role: 'user', content: 'q' }] } } }),
      scope('end', { uuid: llm, parent: turn, name: 'openai', category: 'llm', ts: 3, data: { choices: [{ message: { content: 'a' } }] } }),
      scope('end', { uuid: turn, parent: IMPLICIT, name: 'turn', category: 'custom', ts: 4, metadata: { nemo_relay_scope_role: 'turn', session_id: 'logical' } }),
    ].map((event) => ({ ...event, propagation_root_uuid: IMPLICIT }));
    const byRoot = new AtifBuilder({ ...OPTIONS, sessionId: turn, style: 'plugin-host' });
    const byPropagationRoot = new AtifBuilder({ ...OPTIONS, sessionId: IMPLICIT, trajectoryId: turn, style: 'plugin-host' });
    const byRootUuid = new AtifBuilder({ agentName: OPTIONS.agentName, agentVersion: OPTIONS.agentVersion, modelName: OPTIONS.modelName, rootUuid: turn, style: 'plugin-host' });
    for (const event of events) {
      byRoot.add(event);
      byPropagationRoot.add(event);
      byRootUuid.add(event);
    }
    const trajectory = byRoot.build();
    expect(trajectory.session_id).toBe(IMPLICIT);
    expect(trajectory.trajectory_id).toBe(turn);
    expect(trajectory.extra?.nemo_relay).toEqual({ session_id: 'logical', session_instance_id: IMPLICIT });
    expect(byPropagationRoot.toJson()).toBe(byRoot.toJson());
    expect(byRootUuid.toJson()).toBe(byRoot.toJson());
  });

  it('ignores agent tool definitions and extra in exporter style, as the manual exporter cannot take them', () => {
    const builder = new AtifBuilder({ ...OPTIONS, toolDefinitions: [{ name: 'x' }], extra: { k: 1 } });
    expect(builder.build().agent).toEqual({ name: 'agent', version: '1', model_name: 'm' });
  });

  it('survives malformed events without throwing', () => {
    const builder = new AtifBuilder(OPTIONS);
    builder.add({ kind: 'scope', uuid: 'not-a-uuid', timestamp: 'yesterday' } as unknown as AtofEvent);
    builder.add({} as unknown as AtofEvent);
    for (const event of session()) builder.add(event);
    expect(() => builder.toJson()).not.toThrow();
    expect(builder.build().steps).toHaveLength(2);
  });
});

describe('createSubtreeFilter', () => {
  it('accepts the root, its descendants and marks under them, and rejects other trees', () => {
    const filter = createSubtreeFilter(ROOT);
    const child = uuid();
    const grandchild = uuid();
    const other = uuid();
    const accepted = [
      scope('start', { uuid: ROOT, parent: IMPLICIT, name: 'root', category: 'agent', ts: 1 }),
      scope('start', { uuid: child, parent: ROOT, name: 'turn', category: 'custom', ts: 2 }),
      scope('start', { uuid: grandchild, parent: child, name: 'llm', category: 'llm', ts: 3 }),
      mark('m', grandchild, 4),
    ];
    const rejected = [scope('start', { uuid: other, parent: IMPLICIT, name: 'other', category: 'agent', ts: 5 }), mark('m2', other, 6)];
    expect(accepted.map(filter)).toEqual([true, true, true, true]);
    expect(rejected.map(filter)).toEqual([false, false]);
    // The root's end and late events under an ended child still belong.
    expect(filter(scope('end', { uuid: ROOT, parent: IMPLICIT, name: 'root', category: 'agent', ts: 7 }))).toBe(true);
    expect(filter(mark('late', child, 8))).toBe(true);
  });
});

describe('serializeTrajectory', () => {
  it('serializes a hand-made trajectory with serde spacing in plugin-host style', () => {
    const trajectory = { schema_version: 'ATIF-v1.7', agent: { name: 'a', version: 'v' }, steps: [], final_metrics: { total_steps: 0 } };
    expect(serializeTrajectory(trajectory as AtifTrajectory, 'plugin-host')).toBe(JSON.stringify(trajectory, null, 2));
  });

  it('writes f64 fields with a fraction, integer fields plain at any size, and payload numbers as the binding passed them', () => {
    const trajectory = {
      steps: [
        {
          step_id: 1,
          metrics: { prompt_tokens: 5_000_000_000, cost_usd: 2, logprobs: [0, 1e20], prompt_token_ids: [2 ** 40], extra: { total_tokens: 2 ** 32 } },
          extra: { invocation: { start_timestamp: 1_764_000_000 }, llm_response: { at: 1_764_000_000_000, n: 3 } },
        },
      ],
      final_metrics: { total_prompt_tokens: 5_000_000_000, total_cost_usd: 2, total_steps: 1 },
    };
    expect(serializeTrajectory(trajectory as unknown as AtifTrajectory)).toBe(
      '{"steps":[{"step_id":1,"metrics":{"prompt_tokens":5000000000,"cost_usd":2.0,"logprobs":[0.0,1e+20],"prompt_token_ids":[1099511627776],' +
        '"extra":{"total_tokens":4294967296.0}},"extra":{"invocation":{"start_timestamp":1764000000.0},"llm_response":{"at":1764000000000.0,"n":3}}}],' +
        '"final_metrics":{"total_prompt_tokens":5000000000,"total_cost_usd":2.0,"total_steps":1}}',
    );
  });
});
