// Behaviour of the in-memory relay that has no native counterpart to compare
// with: misuse handling, timestamps, subscribers, managed-call errors.
import { describe, expect, it, vi } from 'vitest';
import { createMemoryRelay } from '../../../src/backends/memory/index.ts';
import type { AtofEvent, AtofScopeEvent } from '../../../src/formats/atof/types.ts';
import type { LlmHandle, ScopeHandle, ToolHandle } from '../../../src/relay/contract.ts';
import type { Logger } from '../../../src/shared/logger.ts';
import { parseTimestamp } from '../../../src/shared/clock.ts';
import { uuidv7 } from '../../../src/shared/uuid.ts';
import { copyPayload } from '../../../src/backends/memory/encode/event-parts.ts';
import { toJson } from '../../../src/shared/json.ts';

function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const log = (level: string) => (message: string) => lines.push(`${level}: ${message}`);
  return { lines, debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

function relayWithEvents(options: { clock?: () => number } = {}) {
  const logger = recordingLogger();
  const relay = createMemoryRelay({ logger, ...options });
  const events: AtofEvent[] = [];
  relay.subscribe((event) => {
    events.push(event);
  });
  return { relay, events, logger };
}

describe('uuidv7', () => {
  it('returns RFC 9562 version-7 ids that sort in creation order', () => {
    const ids = Array.from({ length: 5000 }, () => uuidv7());
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('encodes the current Unix millisecond in the first 48 bits', () => {
    const before = Date.now();
    const id = uuidv7();
    const after = Date.now();
    const ms = parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(after + 1);
  });
});

describe('memory relay timestamps', () => {
  it('stamps events with the clock when no timestamp is given', () => {
    let now = 1_700_000_000_000_000;
    const { relay, events } = relayWithEvents({ clock: () => (now += 7) });
    const scope = relay.pushScope({ name: 's', category: 'agent' });
    relay.popScope(scope);
    expect(events.map((e) => parseTimestamp(e.timestamp))).toEqual([1_700_000_000_000_007, 1_700_000_000_000_014]);
  });

  it('moves an end stamped at or before its start to start + 1 µs and counts it', () => {
    const { relay, events } = relayWithEvents();
    const scope = relay.pushScope({ name: 's', category: 'function', timestampUs: 1_700_000_000_000_500 });
    relay.popScope(scope, { timestampUs: 1_700_000_000_000_500 });
    const llm = relay.llmStart({ name: 'p', request: { headers: {}, content: null }, timestampUs: 1_700_000_000_001_000 });
    relay.llmEnd(llm, { response: null, timestampUs: 1_600_000_000_000_000 });
    const tool = relay.toolStart({ name: 't', args: null, timestampUs: 1_700_000_000_002_000 });
    relay.toolEnd(tool, { result: null, timestampUs: 1_700_000_000_002_001 });
    const stamps = events.map((e) => parseTimestamp(e.timestamp));
    expect(stamps).toEqual([
      1_700_000_000_000_500, 1_700_000_000_000_501, 1_700_000_000_001_000, 1_700_000_000_001_001, 1_700_000_000_002_000,
      1_700_000_000_002_001,
    ]);
    expect(relay.stats().adjustedTimestamps).toBe(2);
  });

  it('uses the clock for a timestamp that is not a number, and floors fractional microseconds', () => {
    const { relay, events } = relayWithEvents({ clock: () => 1_700_000_000_000_000 });
    relay.mark({ name: 'bad', timestampUs: 'yesterday' as unknown as number });
    relay.mark({ name: 'fraction', timestampUs: 1_700_000_000_000_001.5 });
    expect(events.map((e) => e.timestamp)).toEqual(['2023-11-14T22:13:20+00:00', '2023-11-14T22:13:20.000001+00:00']);
    expect(relay.stats().errors).toBe(1);
  });
});

describe('memory relay misuse', () => {
  it('ignores a second pop or end, counts it and logs at debug level', () => {
    const { relay, events, logger } = relayWithEvents();
    const scope = relay.pushScope({ name: 's', category: 'agent' });
    const llm = relay.llmStart({ name: 'p', parent: scope, request: { headers: {}, content: 1 } });
    const tool = relay.toolStart({ name: 't', parent: scope, args: 1 });
    relay.llmEnd(llm, { response: 1 });
    relay.llmEnd(llm, { response: 2 });
    relay.toolEnd(tool, { result: 1 });
    relay.toolEnd(tool, { result: 2 });
    relay.popScope(scope);
    expect(() => relay.popScope(scope)).not.toThrow();
    expect(events.filter((e) => (e as AtofScopeEvent).scope_category === 'end')).toHaveLength(3);
    expect(relay.stats().errors).toBe(3);
    expect(logger.lines.filter((l) => l.startsWith('debug:'))).toHaveLength(3);
  });

  it('never throws on handles it did not mint, and parents to nothing instead', () => {
    const { relay, events } = relayWithEvents();
    const other = createMemoryRelay({ logger: recordingLogger() });
    const foreign = other.pushScope({ name: 'elsewhere', category: 'agent' });
    const garbage = { uuid: 'x' } as unknown as ScopeHandle;
    expect(() => {
      relay.popScope(foreign);
      relay.popScope(garbage);
      relay.popScope(undefined as unknown as ScopeHandle);
      relay.llmEnd({} as LlmHandle, { response: 1 });
      relay.toolEnd(null as unknown as ToolHandle, { result: 1 });
      relay.mark({ name: 'm', parent: garbage });
      relay.pushScope({ name: 'child', category: 'function', parent: foreign });
    }).not.toThrow();
    // The mark and the scope were still recorded, as top-level.
    expect(events.map((e) => e.name)).toEqual(['m', 'child']);
    expect(events[1]!.parent_uuid).not.toBe((foreign as unknown as { uuid: string }).uuid);
    expect(relay.stats().errors).toBe(7);
  });

  it('records odd inputs instead of throwing: unknown category, missing name, non-object request, cyclic payloads', () => {
    const { relay, events } = relayWithEvents();
    const cyclic: Record<string, unknown> = { big: 10n };
    cyclic.self = cyclic;
    const scope = relay.pushScope({ name: undefined as unknown as string, category: 'planet' as never, input: cyclic });
    const llm = relay.llmStart({ name: 'p', parent: scope, request: 'just text' as never });
    relay.llmEnd(llm, { response: cyclic });
    relay.popScope(scope, undefined);
    relay.mark(undefined as never);
    expect(events[0]).toMatchObject({ name: '', category: 'unknown', data: { big: '10', self: '[Circular]' } });
    expect(events[1]).toMatchObject({ data: { content: 'just text', headers: {} } });
    expect(events).toHaveLength(5);
  });

  it('lets spans end after their parent scope was popped, and pops in any order', () => {
    const { relay, events } = relayWithEvents();
    const a = relay.pushScope({ name: 'a', category: 'agent' });
    const b = relay.pushScope({ name: 'b', category: 'function', parent: a });
    const tool = relay.toolStart({ name: 't', parent: b, args: null });
    relay.popScope(a);
    relay.popScope(b);
    relay.toolEnd(tool, { result: 'late' });
    expect(events.map((e) => `${e.name}:${(e as AtofScopeEvent).scope_category}`)).toEqual(['a:start', 'b:start', 't:start', 'a:end', 'b:end', 't:end']);
    expect(relay.stats().errors).toBe(0);
  });
});

describe('memory relay subscribers', () => {
  it('delivers every event synchronously, in order, to every subscriber', () => {
    const relay = createMemoryRelay({ logger: recordingLogger() });
    const first: string[] = [];
    const second: string[] = [];
    relay.subscribe((e) => void first.push(e.name));
    relay.subscribe((e) => void second.push(e.name));
    relay.mark({ name: 'one' });
    expect(first).toEqual(['one']);
    relay.mark({ name: 'two' });
    expect(second).toEqual(['one', 'two']);
  });

  it('isolates a subscriber that throws or rejects: others still receive, the emitter never sees it, failures are counted', async () => {
    const relay = createMemoryRelay({ logger: recordingLogger() });
    const received: string[] = [];
    relay.subscribe(() => {
      throw new Error('sync boom');
    });
    relay.subscribe(async () => {
      throw new Error('async boom');
    });
    relay.subscribe((e) => void received.push(e.name));
    expect(() => relay.mark({ name: 'm' })).not.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(received).toEqual(['m']);
    expect(relay.stats()).toMatchObject({ events: 1, subscriberErrors: 2, errors: 2 });
  });

  it('stops delivering after unsubscribe, and unsubscribe is idempotent, even from inside a delivery', () => {
    const relay = createMemoryRelay({ logger: recordingLogger() });
    const seen: string[] = [];
    const unsubscribe = relay.subscribe((e) => {
      seen.push(e.name);
      unsubscribe();
    });
    const other: string[] = [];
    relay.subscribe((e) => void other.push(e.name));
    relay.mark({ name: 'a' });
    relay.mark({ name: 'b' });
    unsubscribe();
    expect(seen).toEqual(['a']);
    expect(other).toEqual(['a', 'b']);
  });

  it('hands subscribers events whose keys are already sorted, so JSON.stringify gives native key order', () => {
    const { relay, events } = relayWithEvents();
    const scope = relay.pushScope({ name: 's', category: 'agent', metadata: { z: 1, a: { y: 2, b: 3 } } });
    relay.mark({ name: 'm', parent: scope });
    for (const event of events) {
      const keys = Object.keys(event);
      expect(keys).toEqual([...keys].sort());
    }
    expect(JSON.stringify(events[0]!.metadata)).toBe('{"a":{"b":3,"y":2},"z":1}');
    expect(Object.keys(events[1]!)).not.toContain('attributes');
    expect(Object.keys(events[1]!)).not.toContain('scope_category');
  });
});

describe('memory relay managed execution', () => {
  it('rejects with the exact error the call threw, and records the failure like native', async () => {
    const { relay, events } = relayWithEvents();
    class QuotaError extends Error {
      override name = 'QuotaError';
      readonly code = 'E_QUOTA';
    }
    const thrown = new QuotaError('quota exceeded');
    const scope = relay.pushScope({ name: 'agent', category: 'agent' });
    const llm = relay.executeLlm({ name: 'p', parent: scope, request: { headers: {}, content: 1 } }, () => {
      throw thrown;
    });
    await expect(llm).rejects.toBe(thrown);
    const rejected = { reason: 'not an error' };
    await expect(relay.executeTool({ name: 't', parent: scope, args: 1 }, () => Promise.reject(rejected))).rejects.toBe(rejected);
    const ends = events.filter((e) => (e as AtofScopeEvent).scope_category === 'end');
    expect(ends.map((e) => e.metadata)).toEqual([
      {
        'error.type': 'internal_error',
        'exception.type': 'QuotaError',
        'otel.status_code': 'ERROR',
        'otel.status_description': 'internal error: quota exceeded',
      },
      {
        'error.type': 'internal_error',
        'exception.type': 'Error',
        'otel.status_code': 'ERROR',
        'otel.status_description': 'internal error: unknown error',
      },
    ]);
    expect(ends.every((e) => e.data === null)).toBe(true);
  });

  it('records a thrown error whose name or message holds a lone surrogate with U+FFFD, as native receives the texts', async () => {
    // Found by the random managed-stream differential (test/differential/random-managed.ts).
    const { relay, events } = relayWithEvents();
    const thrown = Object.assign(new Error('cut \uDE00 in two \uD83D'), { name: 'Bad\uD800Name' });
    const scope = relay.pushScope({ name: 'agent', category: 'agent' });
    await expect(relay.executeTool({ name: 't', parent: scope, args: 1 }, () => Promise.reject(thrown))).rejects.toBe(thrown);
    const end = events.find((e) => (e as AtofScopeEvent).scope_category === 'end')!;
    expect(end.metadata).toMatchObject({ 'exception.type': 'Bad\uFFFDName', 'otel.status_description': 'internal error: cut \uFFFD in two \uFFFD' });
  });

  it('resolves with the original result object, while the event records its JSON form', async () => {
    const { relay, events } = relayWithEvents();
    class Response {
      constructor(readonly text: string) {}
      upper() {
        return this.text.toUpperCase();
      }
    }
    const response = new Response('hi');
    const result = await relay.executeLlm({ name: 'p', request: { headers: {}, content: 1 } }, async () => response);
    expect(result).toBe(response);
    const toolResult = await relay.executeTool({ name: 't', args: { a: 1 } }, (args) => ({ got: args }));
    expect(toolResult).toEqual({ got: { a: 1 } });
    expect(events.map((e) => e.data)).toEqual([{ content: 1, headers: {} }, { text: 'hi' }, { a: 1 }, { got: { a: 1 } }]);
  });

  it('forwards the request with traceparent and session headers as native does, credentials included', async () => {
    const { relay, events } = relayWithEvents();
    const session = relay.pushScope({ name: 'session', category: 'agent', metadata: { session_id: 'S-1' } });
    const sub = relay.pushScope({ name: 'subagent-a', category: 'agent', parent: session });
    const fn = relay.pushScope({ name: 'step', category: 'function', parent: sub });
    const content = { messages: [] };
    const call = vi.fn(async (_request: unknown) => 'ok');
    await relay.executeLlm(
      { name: 'p', parent: fn, request: { headers: { authorization: 'Bearer s', TraceParent: 'stale' }, content } },
      call,
    );
    const forwarded = call.mock.calls[0]![0] as { headers: Record<string, string>; content: unknown };
    const start = events.find((e) => e.name === 'p')!;
    const hex = (uuid: string) => uuid.replaceAll('-', '');
    expect(forwarded.content).toBe(content);
    expect(forwarded.headers).toEqual({
      authorization: 'Bearer s',
      traceparent: `00-${hex(events[0]!.uuid)}-${hex(start.uuid).slice(16)}-01`,
      'x-dynamo-parent-session-id': 'S-1',
      'x-dynamo-session-id': 'subagent-a',
    });
    expect(start.data).toEqual({
      content: { messages: [] },
      headers: { TraceParent: 'stale', 'x-dynamo-parent-session-id': 'S-1', 'x-dynamo-session-id': 'subagent-a' },
    });
  });
});

describe('memory relay payload conversion', () => {
  it('converts payloads exactly as toJson(value, { sortKeys: true }) does, on its fast path too', () => {
    class Point {
      constructor(
        readonly y: number,
        readonly x: number,
      ) {}
    }
    const cyclic: Record<string, unknown> = { b: 1 };
    cyclic.a = cyclic;
    const values: unknown[] = [
      { z: 'z', a: 1, m: true, n: null, u: undefined, nan: Number.NaN, inf: -Infinity },
      { b: { d: 1, c: 2 }, a: [3, { f: 1, e: 2 }] },
      { toJSON: () => ({ replaced: true }) },
      { fn: () => 1, sym: Symbol('s'), big: 5n },
      Object.assign(Object.create(null), { b: 1, a: 2 }),
      new Point(2, 1),
      cyclic,
      { get boom(): number {
        throw new Error('getter failed');
      } },
      {},
      [],
      'text',
      42,
      null,
      undefined,
    ];
    for (const value of values) expect(copyPayload(value, false)).toEqual(toJson(value, { sortKeys: true }));
    const flat = copyPayload({ b: 1, a: 2 }, false) as Record<string, unknown>;
    expect(Object.keys(flat)).toEqual(['a', 'b']);
  });
});

describe('memory relay resilience', () => {
  it('never throws when an options object or the clock itself throws, and counts it', async () => {
    const logger = recordingLogger();
    let calls = 0;
    const relay = createMemoryRelay({
      logger,
      clock: () => {
        if (++calls % 2 === 0) throw new Error('clock broke');
        return 1_700_000_000_000_000 + calls;
      },
    });
    const hostile = new Proxy({}, {
      get() {
        throw new Error('hostile options');
      },
    }) as never;
    const scope = relay.pushScope({ name: 'ok', category: 'agent' });
    relay.mark({ name: 'ok', parent: scope });
    expect(() => {
      const detached = relay.pushScope(hostile);
      relay.popScope(detached);
      relay.mark(hostile);
      relay.llmEnd(relay.llmStart(hostile), hostile);
      relay.toolEnd(relay.toolStart(hostile), hostile);
      relay.popScope(scope, hostile);
      relay.registerAtifExporter(hostile);
    }).not.toThrow();
    expect(relay.registerAtofExporter(hostile).path).toBe('');
    const result = await relay.executeLlm(hostile, () => 'still called');
    expect(result).toBe('still called');
    await expect(relay.executeTool(hostile, () => 'tool still called')).resolves.toBe('tool still called');
    expect(relay.stats().errors).toBeGreaterThanOrEqual(8);
    expect(logger.lines.some((line) => line.startsWith('warn: memory relay: pushScope failed'))).toBe(true);
  });
});
