/**
 * The `nat` convert profile on small streams written from the reference
 * converter's rules (the published examples are checked in
 * upstream-conformance.test.ts when ../shared/peers is present).
 */

import { describe, expect, it } from 'vitest';
import { convertNatEvents, serializeNatTrajectory } from '../../src/formats/atif/convert/nat/index.ts';
import type { AtofEvent } from '../../src/formats/atof/types.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';

let clock = 0;
function scope(phase: 'start' | 'end', category: string, uuid: string, parent: string | null, data: unknown, extra: Record<string, unknown> = {}): AtofEvent {
  clock += 1;
  return {
    atof_version: '0.1',
    kind: 'scope',
    scope_category: phase,
    category,
    category_profile: null,
    uuid,
    parent_uuid: parent,
    data,
    data_schema: null,
    metadata: null,
    name: uuid,
    attributes: [],
    timestamp: `2026-01-01T00:00:${String(clock).padStart(2, '0')}Z`,
    ...extra,
  } as unknown as AtofEvent;
}

const openAi = { data_schema: { name: 'openai/chat-completions', version: '1' } };

function toolLoop(): AtofEvent[] {
  clock = 0;
  const profile = { category_profile: { model_name: 'gpt-x' }, ...openAi };
  return [
    scope('start', 'agent', 'a', null, { input: 'sum' }),
    scope('start', 'llm', 'l1', 'a', { messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'sum 3 4' }] }, profile),
    scope('end', 'llm', 'l1', 'a', { content: '', tool_calls: [{ id: 'c1', name: 'add', arguments: '{"a":3,"b":4}' }] }, profile),
    scope('start', 'tool', 't1', 'a', { a: 3, b: 4 }, { category_profile: { tool_call_id: 'c1' }, name: 'add' }),
    scope('end', 'tool', 't1', 'a', { result: 7 }, { category_profile: { tool_call_id: 'c1' }, name: 'add' }),
    scope('start', 'llm', 'l2', 'a', { messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'sum 3 4' }, { role: 'tool', content: '7' }] }, profile),
    scope('end', 'llm', 'l2', 'a', { content: '7' }, profile),
    scope('end', 'agent', 'a', null, { response: '7' }),
  ];
}

describe('convert --profile nat', () => {
  it('gives each new system and user input a step, each LLM end an agent step, and each tool result an observation on the step that called it', () => {
    const trajectory = convertNatEvents(toolLoop());
    expect(trajectory.session_id).toBe('a');
    expect(trajectory.agent).toEqual({ name: 'a', version: '1.0.0', model_name: 'gpt-x' });
    expect(trajectory.steps.map((step) => [step.source, step.message])).toEqual([
      ['system', 'be brief'],
      ['user', 'sum 3 4'],
      ['agent', ''],
      ['agent', '7'],
    ]);
    const call = trajectory.steps[2]!;
    expect(call.tool_calls).toEqual([
      {
        tool_call_id: 'c1',
        function_name: 'add',
        arguments: { a: 3, b: 4 },
        extra: {
          ancestry: { function_id: 't1', function_name: 'add', parent_id: 'a', parent_name: 'a' },
          invocation: { invocation_id: 'c1', framework: 'nat', status: 'completed', start_timestamp: 1767225604, end_timestamp: 1767225605 },
        },
      },
    ]);
    expect(call.observation).toEqual({ results: [{ source_call_id: 'c1', content: '7' }] });
    expect(call.extra).toMatchObject({ data_schema: { name: 'openai/chat-completions', version: '1' } });
    expect(validateAtif(trajectory)).toEqual([]);
    expect(serializeNatTrajectory(trajectory)).toContain('"start_timestamp": 1767225604.0');
  });

  it('sorts the events by timestamp first', () => {
    expect(convertNatEvents([...toolLoop()].reverse())).toEqual(convertNatEvents(toolLoop()));
  });

  it('makes a system step of a mark, and of a tool result no agent step asked for', () => {
    clock = 0;
    const steps = convertNatEvents([
      scope('start', 'agent', 'a', null, null),
      { ...scope('start', 'x', 'm', 'a', null), kind: 'mark', data: { check: 'ok', note: 'é' } } as unknown as AtofEvent,
      scope('start', 'tool', 't', 'a', {}, { category_profile: { tool_call_id: 'lost' } }),
      scope('end', 'tool', 't', 'a', 'plain', { category_profile: { tool_call_id: 'lost' } }),
      scope('end', 'agent', 'a', null, null),
    ]).steps;
    expect(steps.map((step) => [step.source, step.message, step.observation])).toEqual([
      ['system', '{"check":"ok","note":"\\u00e9"}', undefined],
      ['system', '', { results: [{ source_call_id: 'lost', content: 'plain' }] }],
    ]);
  });

  it('reads a tier-1 stream: the root\'s start and end are the question and the answer, inner scopes system steps', () => {
    clock = 0;
    const steps = convertNatEvents([
      scope('start', 'unknown', 'r', null, { q: 'why?' }),
      scope('start', 'unknown', 'i', 'r', { raw: 'req' }),
      scope('end', 'unknown', 'i', 'r', { raw: 'resp' }),
      scope('end', 'unknown', 'r', null, { a: 'because' }),
    ]).steps;
    expect(steps.map((step) => [step.source, step.message])).toEqual([
      ['user', 'why?'],
      ['system', '{"raw":"resp"}'],
      ['agent', 'because'],
    ]);
    expect((steps[0]!.extra as { invocation: unknown }).invocation).toMatchObject({ start_timestamp: 1767225601, end_timestamp: 1767225601 });
  });

  it('reads Anthropic and Gemini payloads by data_schema: block text, tool_result echoes skipped, Gemini call ids name__n', () => {
    clock = 0;
    const anthropic = { data_schema: { name: 'anthropic/messages', version: '1' } };
    const gemini = { data_schema: { name: 'gemini/generate-content', version: '1' } };
    const steps = convertNatEvents([
      scope('start', 'agent', 'a', null, null),
      scope('start', 'llm', 'l1', 'a', { system: 'sys', messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x', content: 'r' }] }] }, anthropic),
      scope('end', 'llm', 'l1', 'a', { content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }, { type: 'tool_use', id: 'tu', name: 'f', input: { k: 1 } }] }, anthropic),
      scope('start', 'llm', 'l2', 'a', { contents: [{ role: 'user', parts: [{ text: 'hi ' }, { text: 'there' }] }] }, gemini),
      scope('end', 'llm', 'l2', 'a', { candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'g', args: {} } }, { functionCall: { name: 'g', args: { n: 2 } } }] } }] }, gemini),
      scope('end', 'agent', 'a', null, null),
    ]).steps;
    expect(steps.map((step) => [step.source, step.message, step.tool_calls?.map((call) => call.tool_call_id)])).toEqual([
      ['system', 'sys', undefined],
      ['agent', 'ab', ['tu']],
      ['user', 'hi there', undefined],
      ['agent', '', ['g__1', 'g__2']],
    ]);
  });

  it('treats a scope of a category it does not know, carrying a tool_call_id, as the tool it is', () => {
    const events = toolLoop().map((event) => (event.category === 'tool' ? ({ ...event, category: 'vendor_tool' } as unknown as AtofEvent) : event));
    expect(convertNatEvents(events)).toEqual(convertNatEvents(toolLoop()));
  });
});
