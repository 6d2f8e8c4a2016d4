// The ATOF line writer of the memory relay: the fast envelope template must
// equal JSON.stringify of the event object, and payloads JSON.stringify
// would write differently must take the exact writer (its rules are tested
// in test/formats/rust-json.test.ts, and against native in
// test/formats/native-json-differential.test.ts).
import { describe, expect, it } from 'vitest';
import { createMemoryRelay } from '../../../src/backends/memory/index.ts';
import { needsNativeJson, serializeEvent, writeEventLine } from '../../../src/backends/memory/encode/event-text.ts';
import { giveBack, takeBuilder } from '../../../src/shared/utf8-builder.ts';
import type { AtofEvent } from '../../../src/formats/atof/types.ts';
import { silentLogger } from '../../../src/shared/logger.ts';

function sampleEvents(): AtofEvent[] {
  const relay = createMemoryRelay({ logger: silentLogger });
  const events: AtofEvent[] = [];
  relay.subscribe((event) => void events.push(event));
  const scope = relay.pushScope({ name: 'name "with" quotes\n', category: 'agent', attributes: ['parallel'], input: { a: [1, 'x'] }, metadata: 'plain' });
  relay.mark({ name: 'mark', parent: scope, data: 'text', metadata: { n: 1.5 } });
  relay.mark({ name: 'bare' });
  const llm = relay.llmStart({ name: 'p', parent: scope, request: { headers: { a: 'b' }, content: [true, null] }, modelName: 'm' });
  relay.llmEnd(llm, { response: 42 });
  const tool = relay.toolStart({ name: 't', parent: scope, args: -7, toolCallId: 'id' });
  relay.toolEnd(tool, { result: false, annotation: { ms: 3 } });
  relay.popScope(scope, { output: 0.5 });
  return events;
}

describe('ATOF line serialization', () => {
  it('builds the same text as JSON.stringify for every kind of event', () => {
    const events = sampleEvents();
    expect(events).toHaveLength(8);
    for (const event of events) {
      expect(needsNativeJson(event)).toBe(false);
      expect(serializeEvent(event)).toBe(JSON.stringify(event));
    }
  });

  it('takes the exact path for numbers and keys JSON.stringify writes differently', () => {
    expect(needsNativeJson({ data: { usage: { tokens: 12 } }, metadata: null, category_profile: null })).toBe(false);
    expect(needsNativeJson({ data: { at: 1_764_000_000_000 }, metadata: null, category_profile: null })).toBe(true);
    expect(needsNativeJson({ data: null, metadata: { cost: 0.000002 }, category_profile: null })).toBe(true);
    expect(needsNativeJson({ data: null, metadata: null, category_profile: { tool_result_annotation: { '2': 'b', '10': 'a' } } })).toBe(true);
    const [scope] = sampleEvents();
    const event = { ...scope!, data: { '10': 1, '9': 2, b: 2 ** 40 } } as AtofEvent;
    expect(serializeEvent(event)).toContain('"data":{"10":1,"9":2,"b":1099511627776.0}');
  });

  it('writes an event object as bytes exactly as serializeEvent writes it, whatever its payloads hold', () => {
    class Point {
      x = 1;
    }
    const odd: unknown[] = [
      null,
      'text',
      'cut 😀'.slice(0, -1),
      `${'long '.repeat(40)}\udc00`,
      `${'long '.repeat(40)}"quoted"\n`,
      `${'漢字'.repeat(80)}`,
      0,
      -0,
      2 ** 40,
      0.000002,
      1e-7,
      1e21,
      Number.NaN,
      true,
      [],
      {},
      [1, 'x', null, undefined, () => 1, { b: 1 }],
      { b: 1, a: { d: [0.5, 'é'], c: null } },
      { '10': 1, '9': 2, b: 3 },
      { a: { '2': 'b' } },
      { a: 4294967296 },
      { ['k\ud800']: 1, '😀': 2, 'quote"key': '\u0001\u2028' },
      { u: undefined, f: () => 1, s: Symbol('s'), kept: 1 },
      JSON.parse('{"__proto__":{"x":1},"a":2}') as unknown,
      Object.assign(Object.create(null) as object, { b: 1 }),
      { toJSON: () => ({ replaced: true }) },
      { nested: new Point() },
      { when: new Date(0) },
      { deep: JSON.parse(`${'{"a":'.repeat(140)}1${'}'.repeat(140)}`) as unknown },
    ];
    const [scope, mark] = sampleEvents();
    const check = (event: AtofEvent) => {
      const out = takeBuilder();
      writeEventLine(out, event);
      expect(out.text()).toBe(`${serializeEvent(event)}\n`);
      giveBack(out);
    };
    for (const value of odd) {
      check({ ...scope!, data: value, metadata: value } as AtofEvent);
      check({ ...scope!, category_profile: { tool_call_id: 'c\ud800', tool_result_annotation: value } } as AtofEvent);
      check({ ...mark!, data: value, metadata: value } as AtofEvent);
    }
    for (const name of ['quote " and \\ and \n', 'cut 😀'.slice(0, -1), `${'x'.repeat(200)}\udc00`]) {
      check({ ...scope!, name } as AtofEvent);
      check({ ...mark!, name } as AtofEvent);
    }
    // Name and parents are kept encoded once a triple repeats: many parents in flight, names shared across
    // them, more names under one parent than it keeps, and one name and parent under two roots; each line
    // still says its own.
    const parents = Array.from({ length: 40 }, (_, i) => `0190f0a0-0000-7000-8000-${String(i).padStart(12, '0')}`);
    const names = ['openai', 'search_notes', 'read_file', 'quote " name', ...Array.from({ length: 10 }, (_, i) => `tool_${i}`)];
    for (let round = 0; round < 6; round++) {
      for (let p = 0; p < parents.length; p++) {
        const own = p === 0 ? names.slice(0, 2) : p === 1 ? names : names.slice(0, 3);
        for (const name of own) {
          for (const root of p === 0 ? [parents[0]!, parents[1]!] : [parents[p]!]) {
            check({ ...scope!, name, parent_uuid: parents[p]!, propagation_root_uuid: root } as AtofEvent);
            check({ ...mark!, name, parent_uuid: parents[p]!, propagation_root_uuid: root } as AtofEvent);
          }
        }
      }
    }
    // Two parents under one root, one name: a session's scopes at two depths.
    for (let round = 0; round < 6; round++) {
      for (const parent of [parents[2]!, parents[3]!]) check({ ...mark!, name: 'openai', parent_uuid: parent, propagation_root_uuid: parents[4]! } as AtofEvent);
    }
    // A key inherited from Object.prototype: JSON.stringify skips it, the exact-writer check reads it.
    const polluted = Object.prototype as Record<string, unknown>;
    try {
      polluted['7'] = 1;
      check({ ...scope!, data: { a: 1 } } as AtofEvent);
      delete polluted['7'];
      polluted.extra = 2 ** 40;
      check({ ...scope!, data: { a: 1 } } as AtofEvent);
    } finally {
      delete polluted['7'];
      delete polluted.extra;
    }
  });
});

