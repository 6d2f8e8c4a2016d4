// The memory relay's LLM request copies share the parts a session's previous
// request repeats (`shareRepeats`): the same values and the same text as a
// copy of their own, never a part that differs.
import { describe, expect, it } from 'vitest';
import { createMemoryRelay } from '../../../src/backends/memory/index.ts';
import { copyPayload, shareRepeats } from '../../../src/backends/memory/encode/event-parts.ts';
import type { AtofEvent, AtofScopeEvent } from '../../../src/formats/atof/types.ts';
import type { Json, JsonObject } from '../../../src/shared/json.ts';
import { silentLogger } from '../../../src/shared/logger.ts';
import { seededRandom } from '../../support/seeded-random.ts';

const KEYS = ['a', 'b', 'c', '10', '2', '__proto__', 'content', 'role', 'tools', 'é'];
const LEAVES: Json[] = [0, -0, 1, 1.5, 'x', 'y', '', true, false, null];

function value(next: () => number, depth: number): Json {
  const roll = next();
  if (depth <= 0 || roll < 0.4) return LEAVES[Math.floor(next() * LEAVES.length)]!;
  if (roll < 0.7) return Array.from({ length: Math.floor(next() * 4) }, () => value(next, depth - 1));
  const out: JsonObject = {};
  for (const key of KEYS) if (next() < 0.35) Object.defineProperty(out, key, { value: value(next, depth - 1), enumerable: true, writable: true, configurable: true });
  return out;
}

/** A variant of `base`: some parts replaced, some keys or items added or dropped. */
function variant(base: Json, next: () => number, depth: number): Json {
  if (next() < 0.15) return value(next, depth);
  if (Array.isArray(base)) {
    const items = base.map((item) => variant(item, next, depth - 1));
    if (next() < 0.2) items.push(value(next, depth - 1));
    if (next() < 0.2) items.pop();
    return items;
  }
  if (typeof base !== 'object' || base === null) return base;
  const out: JsonObject = {};
  for (const key of Object.keys(base)) {
    if (next() < 0.1) continue;
    Object.defineProperty(out, key, { value: variant(base[key]!, next, depth - 1), enumerable: true, writable: true, configurable: true });
  }
  if (next() < 0.2) Object.defineProperty(out, 'added', { value: value(next, depth - 1), enumerable: true, writable: true, configurable: true });
  return out;
}

describe('shareRepeats', () => {
  it('gives the value of a copy of its own (same text, key order included) on random and near-equal payloads', () => {
    for (let seed = 1; seed <= 3000; seed++) {
      const next = seededRandom(seed);
      const base = value(next, 4);
      const previous = copyPayload(base, false);
      const host = next() < 0.3 ? base : variant(base, next, 4);
      const expected = JSON.stringify(copyPayload(host, false));
      const shared = shareRepeats(copyPayload(host, false), previous);
      expect(JSON.stringify(shared), `seed ${seed}`).toBe(expected);
      // The previous copy is never changed.
      expect(JSON.stringify(previous), `seed ${seed}`).toBe(JSON.stringify(copyPayload(base, false)));
    }
  });

  it('returns the previous copy itself when equal, and shares only the equal parts otherwise', () => {
    const system = { content: 'You are terse.', role: 'system' };
    const tools = [{ function: { name: 'search' }, type: 'function' }];
    const first = copyPayload({ messages: [system, { content: 'hi', role: 'user' }], model: 'm', tools }, false) as JsonObject;
    expect(shareRepeats(copyPayload({ messages: [system, { content: 'hi', role: 'user' }], model: 'm', tools }, false), first)).toBe(first);
    const second = shareRepeats(copyPayload({ messages: [system, { content: 'hi', role: 'user' }, { content: 'more', role: 'user' }], model: 'm', tools }, false), first) as JsonObject;
    expect(second).not.toBe(first);
    expect(second.tools).toBe(first.tools);
    expect((second.messages as Json[])[0]).toBe((first.messages as Json[])[0]);
    expect((second.messages as Json[])[1]).toBe((first.messages as Json[])[1]);
    expect(second.messages).not.toBe(first.messages);
    expect(JSON.stringify(second)).toBe(JSON.stringify(copyPayload({ messages: [system, { content: 'hi', role: 'user' }, { content: 'more', role: 'user' }], model: 'm', tools }, false)));
  });

  it('keeps parts that differ only in -0, a key or an item count', () => {
    const previous = copyPayload({ n: 0, list: [1, 2], o: { a: 1 } }, false) as JsonObject;
    const shared = shareRepeats(copyPayload({ n: -0, list: [1, 2, 3], o: { a: 1, b: 2 } }, false), previous) as JsonObject;
    expect(Object.is(shared.n, -0)).toBe(true);
    expect(shared.list).toEqual([1, 2, 3]);
    expect(shared.o).toEqual({ a: 1, b: 2 });
    expect(shareRepeats(copyPayload({ o: {} }, false), copyPayload({ o: { a: 1 } }, false))).toEqual({ o: {} });
  });
});

describe('the memory relay shares the repeated parts of a session\'s LLM requests', () => {
  function llmStarts(redact: boolean): AtofScopeEvent[] {
    const relay = createMemoryRelay({ logger: silentLogger });
    if (redact) relay.addEventTransform((event) => event);
    const events: AtofEvent[] = [];
    relay.subscribe((event) => void events.push(event));
    const session = relay.pushScope({ name: 'session', category: 'agent' });
    const body = { messages: [{ content: 'sys', role: 'system' }], model: 'm', tools: [{ type: 'function' }] };
    for (let i = 0; i < 3; i++) {
      const llm = relay.llmStart({ name: 'openai', parent: session, request: { headers: {}, content: i === 2 ? { ...body, model: 'other' } : body } });
      relay.llmEnd(llm, { response: { ok: i } });
    }
    relay.popScope(session);
    return events.filter((event): event is AtofScopeEvent => event.kind === 'scope' && event.category === 'llm' && event.scope_category === 'start');
  }

  it('gives a repeated request the previous copy and a changed one the unchanged parts', () => {
    const [first, second, third] = llmStarts(false).map((event) => (event.data as JsonObject).content as JsonObject);
    expect(second).toBe(first);
    expect(third).not.toBe(first);
    expect(third!.tools).toBe(first!.tools);
    expect(third!.model).toBe('other');
  });

  it('copies every request on its own while a transform runs (it may rewrite the objects it is given)', () => {
    const [first, second] = llmStarts(true).map((event) => (event.data as JsonObject).content as JsonObject);
    expect(second).not.toBe(first);
    expect(second).toEqual(first);
  });
});
