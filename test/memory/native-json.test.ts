// The ATOF line writer of the memory relay: the fast envelope template must
// equal JSON.stringify of the event object, and the exact writer must
// format numbers and order keys as native does (measured on 0.9.2; the
// native parity tests compare whole files).
import { describe, expect, it } from 'vitest';
import { createMemoryRelay } from '../../src/relay/memory/index.ts';
import { formatNativeNumber, nativeJson, needsNativeJson, serializeEvent } from '../../src/relay/memory/native-json.ts';
import type { AtofEvent } from '../../src/relay/formats/atof.ts';
import { silentLogger } from '../../src/hooks/logger.ts';

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

  it('formats numbers as native: i32/u32 integers plain, other numbers as f64', () => {
    const cases: [number, string][] = [
      [0, '0'],
      [-0, '0'],
      [2147483647, '2147483647'],
      [-2147483648, '-2147483648'],
      [4294967295, '4294967295'],
      [4294967296, '4294967296.0'],
      [-2147483649, '-2147483649.0'],
      [1e15, '1000000000000000.0'],
      [2 ** 53, '9007199254740992.0'],
      [1e16, '1e+16'],
      [99999999999999980, '9.999999999999998e+16'],
      [1e20, '1e+20'],
      [12345678901234567890, '1.2345678901234567e+19'],
      [1.7976931348623157e308, '1.7976931348623157e+308'],
      [1.5, '1.5'],
      [0.1 + 0.2, '0.30000000000000004'],
      [100.5, '100.5'],
      [4294967296.5, '4294967296.5'],
      [1e-5, '0.00001'],
      [0.00001234, '0.00001234'],
      [9.99e-6, '9.99e-6'],
      [1e-6, '1e-6'],
      [1.5e-6, '1.5e-6'],
      [1e-7, '1e-7'],
      [-1.5e-7, '-1.5e-7'],
      [5e-324, '5e-324'],
    ];
    for (const [value, expected] of cases) expect([value, formatNativeNumber(value)]).toEqual([value, expected]);
  });

  it('sorts keys by code point in the exact writer', () => {
    expect(nativeJson({ b: 1, '10': 2, '9': 3, A: 4, _: 5, '\uffff': 6, '😀': 7 })).toBe('{"10":2,"9":3,"A":4,"_":5,"b":1,"\uffff":6,"😀":7}');
  });
});
