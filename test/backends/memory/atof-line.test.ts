// The ATOF line writer of the memory relay: the fast envelope template must
// equal JSON.stringify of the event object, and payloads JSON.stringify
// would write differently must take the exact writer (its rules are tested
// in test/formats/rust-json.test.ts, and against native in
// test/formats/native-json-differential.test.ts).
import { describe, expect, it } from 'vitest';
import { createMemoryRelay } from '../../../src/backends/memory/index.ts';
import { needsNativeJson, serializeEvent } from '../../../src/backends/memory/encode/event-text.ts';
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
});
