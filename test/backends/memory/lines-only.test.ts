// The memory relay writes each event straight to its ATOF line while no
// receiver takes event objects (no subscriber, no ATIF builder), and builds
// event objects otherwise. Both paths must write the same bytes for every
// payload, including the awkward ones, and a scope or span that starts on
// one path and ends on the other must still come out right.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/shared/logger.ts';
import type {
  AtifExporter,
  LlmEndOptions,
  LlmHandle,
  LlmStartOptions,
  MarkOptions,
  PopScopeOptions,
  PushScopeOptions,
  RelayBackend,
  ScopeHandle,
  ToolEndOptions,
  ToolHandle,
  ToolStartOptions,
} from '../../../src/relay/contract.ts';
import { createMemoryRelay, type MemoryRelay } from '../../../src/backends/memory/index.ts';
import { copyPayload } from '../../../src/backends/memory/encode/event-parts.ts';
import { payloadJsonText } from '../../../src/backends/memory/encode/event-text.ts';
import { entriesJson, flatEntries, payloadText, writeEntries } from '../../../src/backends/memory/encode/payload-bytes.ts';
import { giveBack, takeBuilder } from '../../../src/shared/utf8-builder.ts';
import { validateAtofEvents } from '../../../src/formats/atof/validate.ts';
import { validateAtif } from '../../../src/formats/atif/validate.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nrh-lines-'));
  dirs.push(dir);
  return dir;
}

/** Payload values of every kind the fast path takes, gives up on, or converts specially. */
function corpus(): Record<string, unknown> {
  const cycle: Record<string, unknown> = { name: 'cycle' };
  cycle.self = cycle;
  const arrayCycle: unknown[] = [1];
  arrayCycle.push(arrayCycle);
  const shared = { shared: true };
  const deep = JSON.parse(`${'{"a":'.repeat(70)}1${'}'.repeat(70)}`) as unknown;
  const deepButFine = JSON.parse(`${'{"a":'.repeat(62)}1${'}'.repeat(62)}`) as unknown;
  class Point {
    constructor(
      readonly y = 2,
      readonly x = 1,
    ) {}
  }
  return {
    flat: { telemetry_schema_version: 'hermes.observer.v1', session_id: 's-1', platform: 'cli', turn_id: 's-1:t1', n: 3, ok: true, none: null },
    nested: { model: 'm', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"q":1}' } }] }], temperature: 0.2 },
    sortedAlready: { a: 1, b: 2, c: { d: 3 } },
    empty: {},
    emptyArray: [],
    arrayTop: [3, 'x', null, undefined, () => 1, Symbol('s'), { b: 1, a: 2 }],
    dropped: { u: undefined, f: () => 1, s: Symbol('s'), kept: 1 },
    onlyDropped: { u: undefined },
    numbers: {
      nan: Number.NaN,
      inf: Number.POSITIVE_INFINITY,
      negZero: -0,
      float: 0.1 + 0.2,
      i32min: -2147483648,
      belowI32: -2147483649,
      u32max: 4294967295,
      aboveU32: 4294967296,
      big: 2 ** 60,
      e16: 1e16,
      e21: 1e21,
      tiny: 5e-324,
      small: 0.000002,
      e5: 0.00001,
      neg: -1.5,
      epoch: 1_764_400_000.25,
    },
    bigint: { count: 10n, negative: -5n },
    integerKeys: { b: 1, '10': 'ten', '9': 'nine', a: { '2': 2, '1': 1, x: 0 } },
    flatIntegerKeys: { b: 1, '10': 'ten', '9': 'nine', '0': null },
    escapes: { 'quote"key': 'a "quoted" \\ back\nslash\t\u0001', 'new\nline': '\u2028\u2029 \u007f' },
    unicode: { text: 'é 漢字 😀 \u0000', emoji: '😀' },
    longStrings: {
      escaped: `${'a'.repeat(60)}"quoted"\n\u0001${'é'.repeat(60)}😀`,
      plain: 'word '.repeat(40),
      cut: `${'long text '.repeat(10)}😀`.slice(0, -1),
      nonAscii: '漢字'.repeat(40),
      quoteOnly: `${'q'.repeat(60)}"`,
      backslashOnly: `${'b'.repeat(60)}\\`,
      tabOnly: `${'t'.repeat(60)}\t`,
      delAndSeparators: `${'d'.repeat(60)}\u007f\u2028\u2029`,
      // Past the length the JS loop takes: encoded natively.
      longNonAscii: '漢字'.repeat(100),
      longCut: `${'x'.repeat(200)}😀`.slice(0, -1),
      longQuote: `${'q'.repeat(200)}"`,
      longControl: `${'c'.repeat(200)}\u0002`,
    },
    loneSurrogates: { cut: 'emoji 😀'.slice(0, -1), low: '\udc00x', list: ['\ud800'] },
    flatLoneSurrogates: { cut: 'emoji 😀'.slice(0, -1), low: '\udc00x', long: `${'x'.repeat(100)}\ud800` },
    surrogateKey: { ['k\ud800']: 1, b: 2 },
    highKeys: { '\uffff': 1, '😀': 2, '\ue000': 3, a: 4 },
    protoKey: JSON.parse('{"__proto__":{"x":1},"a":2}') as unknown,
    flatProtoKey: JSON.parse('{"__proto__":"p","a":2}') as unknown,
    toJSONKey: { toJSON: 'not a function', a: 1 },
    withToJSON: { toJSON: () => ({ replaced: true }), a: 1 },
    nullProto: Object.assign(Object.create(null) as object, { b: 1, a: 2 }),
    classInstance: new Point(),
    date: new Date(0),
    badDate: new Date(Number.NaN),
    map: new Map<unknown, unknown>([['k', 1], [2, 'two']]),
    set: new Set([1, 'a']),
    error: Object.assign(new TypeError('boom'), { code: 'E_BOOM' }),
    bytes: new Uint8Array([1, 2, 3]),
    buffer: new ArrayBuffer(2),
    // Media, left out by the copy's rule: in a nested value (the one-pass writer), flat (entries), and at the top.
    media: { parts: [{ type: 'image', image: Buffer.alloc(300) }, { type: 'image_url', url: `data:image/png;base64,${'A'.repeat(2048)}` }] },
    flatMedia: { data: 'QUJD'.repeat(400), text: 'word '.repeat(400) },
    base64: 'QUJD'.repeat(400),
    cycle,
    arrayCycle,
    repeated: { a: shared, b: shared },
    deep,
    deepButFine,
    throwingGetter: {
      a: 1,
      get secret(): unknown {
        throw new Error('getter throws');
      },
    },
    throwingProxy: new Proxy(
      {},
      {
        ownKeys() {
          throw new Error('no keys');
        },
      },
    ),
    keylessProxy: new Proxy({ a: 1 }, {}),
    string: 'plain text',
    number: 42,
    float: 0.5,
    bool: false,
    nothing: null,
    undef: undefined,
    fn: () => 1,
    symbol: Symbol('s'),
    big: 7n,
  };
}

describe('payload text in one pass', () => {
  it('writes what the copy (toJson, its media left out) and the exact writer write, for every kind of value', () => {
    for (const [label, value] of Object.entries(corpus())) {
      expect([label, payloadText(value)]).toEqual([label, payloadJsonText(copyPayload(value, false))]);
    }
  });

  it('writes what the copy writes with media whole (a managed call\'s content), for every kind of value', () => {
    for (const [label, value] of Object.entries(corpus())) {
      expect([label, payloadText(value, false, true)]).toEqual([label, payloadJsonText(copyPayload(value, false, true))]);
    }
    expect(payloadText(corpus().base64, false, true)).toBe(JSON.stringify('QUJD'.repeat(400)));
  });

  it('keeps flat objects as sorted entries that write and convert like the object itself, and nothing else', () => {
    const values = corpus();
    const flat = ['flat', 'dropped', 'flatIntegerKeys', 'escapes', 'flatLoneSurrogates', 'longStrings', 'numbers', 'bigint', 'onlyDropped', 'empty', 'nullProto', 'classInstance', 'flatProtoKey', 'toJSONKey', 'flatMedia'];
    for (const label of flat) {
      const entries = flatEntries(values[label], false);
      expect(entries, label).toBeDefined();
      const out = takeBuilder();
      writeEntries(out, entries!);
      expect([label, out.text()]).toEqual([label, payloadJsonText(copyPayload(values[label], false))]);
      giveBack(out);
      expect([label, entriesJson(entries!)]).toEqual([label, copyPayload(values[label], false)]);
    }
    for (const label of ['nested', 'sortedAlready', 'integerKeys', 'loneSurrogates', 'protoKey', 'arrayTop', 'string', 'nothing', 'date', 'map', 'withToJSON', 'cycle', 'deep', 'throwingGetter', 'highKeys', 'surrogateKey']) {
      expect(flatEntries(values[label], false), label).toBeUndefined();
    }
  });

  it('reuses a key order it has seen without mixing up objects whose keys differ', () => {
    expect(payloadText({ b: 1, a: 2 })).toBe('{"a":2,"b":1}');
    expect(payloadText({ b: 1, c: 2 })).toBe('{"b":1,"c":2}');
    expect(payloadText({ b: 1, a: 2, c: 3 })).toBe('{"a":2,"b":1,"c":3}');
    expect(payloadText({ b: 'x', a: undefined })).toBe('{"b":"x"}');
    expect(payloadText({ b: 1, a: 2 })).toBe('{"a":2,"b":1}');
  });
});

/** Replaces uuids with labels in order of first appearance, so two runs compare. */
function labelled(text: string): string {
  const labels = new Map<string, string>();
  return text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (uuid) => {
    let label = labels.get(uuid);
    if (label === undefined) labels.set(uuid, (label = `uuid-${labels.size}`));
    return label;
  });
}

/** Every call of the contract with every payload slot set to `value`; explicit timestamps. */
function drive(relay: RelayBackend, values: Record<string, unknown>): void {
  let t = 1_800_000_000_000_000;
  const at = () => (t += 7);
  const session = relay.pushScope({ name: 'session', category: 'agent', metadata: { session_id: 'lines' }, timestampUs: at() });
  // Names, model names and tool call ids are written as given: escapes, long text, lone surrogates.
  for (const name of ['quote " and \\ and \n', `${'long name '.repeat(8)}é`, 'cut 😀'.slice(0, -1), `${'x'.repeat(60)}\udc00`]) {
    const scope = relay.pushScope({ name, category: 'custom', parent: session, timestampUs: at() });
    relay.mark({ name, parent: scope, timestampUs: at() });
    const llm = relay.llmStart({ name, parent: scope, request: { headers: {}, content: null }, modelName: name, timestampUs: at() });
    relay.llmEnd(llm, { response: null, timestampUs: at() });
    const tool = relay.toolStart({ name, parent: scope, args: null, toolCallId: name, timestampUs: at() });
    relay.toolEnd(tool, { result: null, annotation: { ok: 1 }, timestampUs: at() });
    relay.popScope(scope, { timestampUs: at() });
  }
  for (const [label, value] of Object.entries(values)) {
    const scope = relay.pushScope({ name: `scope-${label}`, category: 'function', parent: session, input: value, metadata: value, attributes: ['parallel'], timestampUs: at() });
    relay.mark({ name: `mark-${label}`, parent: scope, data: value, metadata: value, timestampUs: at() });
    const llm = relay.llmStart({ name: `llm-${label}`, parent: scope, request: { headers: { 'x-label': label, authorization: 'secret' }, content: value }, metadata: value, modelName: 'm', timestampUs: at() });
    relay.llmEnd(llm, { response: value, metadata: value, timestampUs: at() });
    const plain = relay.llmStart({ name: `llm-plain-${label}`, parent: scope, request: { headers: {}, content: 'x' }, metadata: { 'otel.status_description': 'd', a: 1 }, timestampUs: at() });
    relay.llmEnd(plain, { response: value, metadata: value, timestampUs: at() });
    const failed = relay.toolStart({ name: `tool-${label}`, parent: scope, args: value, metadata: value, toolCallId: `call-${label}`, timestampUs: at() });
    relay.toolEnd(failed, { result: value, metadata: value, status: 'error', timestampUs: at() });
    const objectStart = relay.toolStart({ name: `tool-object-${label}`, parent: scope, args: value, metadata: { a: 1, z: 'z' }, timestampUs: at() });
    relay.toolEnd(objectStart, { result: value, metadata: value, status: 'error', timestampUs: at() });
    const ok = relay.toolStart({ name: `tool-ok-${label}`, parent: scope, args: value, toolCallId: `call-ok-${label}`, timestampUs: at() });
    relay.toolEnd(ok, { result: value, annotation: value, metadata: value, timestampUs: at() });
    const annotated = relay.toolStart({ name: `tool-annotated-${label}`, parent: scope, args: value, timestampUs: at() });
    relay.toolEnd(annotated, { result: null, annotation: value, timestampUs: at() });
    relay.popScope(scope, { output: value, metadata: value, timestampUs: at() });
    const mixed = relay.pushScope({ name: `mixed-${label}`, category: 'custom', parent: session, metadata: value, timestampUs: at() });
    relay.popScope(mixed, { metadata: { end: true }, timestampUs: at() });
  }
  relay.popScope(session, { output: { done: true }, timestampUs: at() });
}

async function atofText(run: (relay: MemoryRelay) => void | Promise<void>, withSubscriber: boolean): Promise<string> {
  const relay = createMemoryRelay({ logger: silentLogger });
  const sink = relay.registerAtofExporter({ outputDirectory: tempDir(), filename: 'events.jsonl', mode: 'overwrite' });
  if (withSubscriber) relay.subscribe(() => {});
  await run(relay);
  await relay.shutdown();
  const text = fs.readFileSync(sink.path, 'utf8');
  expect(validateAtofEvents(text.trimEnd().split('\n').map((line) => JSON.parse(line) as unknown))).toEqual([]);
  return labelled(text);
}

describe('memory relay without event receivers', () => {
  it('writes the same ATOF bytes as with a subscriber, for every payload kind and call', async () => {
    const lines = await atofText((relay) => drive(relay, corpus()), false);
    const events = await atofText((relay) => drive(relay, corpus()), true);
    expect(lines.split('\n').length).toBeGreaterThan(500);
    expect(lines).toBe(events);
  });

  it('renders explicit timestamps the same: whole seconds, milliseconds, microseconds, before 1970, the extremes', async () => {
    const stamps = [
      1_800_000_000_000_000, 1_800_000_000_123_000, 1_800_000_000_000_001, 1_800_000_000_999_999, 1_800_000_001_000_000,
      0, 1, 999, 1000, -1, -1_000_000, -1_500_000, -9_000_000_000_000_000, 9_000_000_000_000_000,
    ];
    const run = (relay: MemoryRelay) => {
      const scope = relay.pushScope({ name: 'agent', category: 'agent', timestampUs: stamps[0] });
      for (const timestampUs of stamps) {
        relay.mark({ name: 'm', parent: scope, timestampUs });
        const tool = relay.toolStart({ name: 't', parent: scope, args: null, timestampUs });
        relay.toolEnd(tool, { result: null, timestampUs: timestampUs + 250_000 });
      }
      relay.popScope(scope, { timestampUs: stamps[4] });
    };
    const lines = await atofText(run, false);
    expect(lines).toContain('"timestamp":"1969-12-31T23:59:58.500+00:00"');
    expect(lines).toBe(await atofText(run, true));
  });

  it('writes the same bytes for managed calls, successful and failed', async () => {
    const run = async (relay: MemoryRelay) => {
      const session = relay.pushScope({ name: 'agent', category: 'agent', metadata: { session_id: 'managed' } });
      const media = corpus().media;
      for (const metadata of [{ b: 1, a: 'x' }, 'text', undefined, new Map([['k', 1]])]) {
        await relay.executeLlm({ name: 'openai', parent: session, request: { headers: { 'x-h': '1' }, content: { q: 1, media } }, metadata, modelName: 'm' }, async () => ({ answer: 2 ** 40, media }));
        await relay.executeTool({ name: 'grep', parent: session, args: { p: 'x', media }, metadata, toolCallId: 'c' }, async () => ({ found: media })).catch(() => {});
        await relay.executeTool({ name: 'fail', parent: session, args: [1], metadata }, async () => {
          throw new RangeError('bad "range"');
        }).catch(() => {});
      }
      relay.popScope(session);
    };
    // Managed events carry wall-clock stamps: compare them without.
    const strip = (text: string) => text.replace(/"timestamp":"[^"]*"/g, '"timestamp":""');
    const lines = strip(await atofText(run, false));
    expect(lines).toBe(strip(await atofText(run, true)));
    // A managed call's content and result keep their media whole (the response cache's key and answer).
    expect(lines).not.toContain('[left out:');
    expect(lines.split(`data:image/png;base64,${'A'.repeat(2048)}`).length - 1).toBe(4 * 4);
  });

  it('ends scopes and spans right when a subscriber comes or goes between their start and end', async () => {
    const run = (subscribeFirst: boolean) => async (relay: MemoryRelay) => {
      let t = 1_800_000_000_000_000;
      const at = () => (t += 3);
      let unsubscribe = subscribeFirst ? relay.subscribe(() => {}) : () => {};
      const values = corpus();
      const open: [ScopeHandle, unknown][] = [];
      const spans: [ReturnType<MemoryRelay['llmStart']>, ReturnType<MemoryRelay['toolStart']>, unknown][] = [];
      for (const value of Object.values(values)) {
        open.push([relay.pushScope({ name: 's', category: 'function', metadata: value, timestampUs: at() }), value]);
        spans.push([
          relay.llmStart({ name: 'l', request: { headers: {}, content: value }, metadata: value, timestampUs: at() }),
          relay.toolStart({ name: 't', args: value, metadata: value, toolCallId: 'c', timestampUs: at() }),
          value,
        ]);
      }
      if (subscribeFirst) unsubscribe();
      else unsubscribe = relay.subscribe(() => {});
      for (const [scope, value] of open) relay.popScope(scope, { metadata: value, timestampUs: at() });
      for (const [llm, tool, value] of spans) {
        relay.llmEnd(llm, { response: value, metadata: value, timestampUs: at() });
        relay.toolEnd(tool, { result: value, metadata: value, status: 'error', timestampUs: at() });
      }
      unsubscribe();
    };
    const always = async (relay: MemoryRelay) => {
      relay.subscribe(() => {});
      await run(true)(relay);
    };
    const reference = await atofText(always, false);
    expect(await atofText(run(false), false)).toBe(reference);
    expect(await atofText(run(true), false)).toBe(reference);
  });

  it('keeps lines whole and in the same order when a payload getter emits, flushes, adds or closes an exporter', async () => {
    const files = async (withSubscriber: boolean) => {
      const dir = tempDir();
      const relay = createMemoryRelay({ logger: silentLogger });
      const first = relay.registerAtofExporter({ outputDirectory: dir, filename: 'first.jsonl', mode: 'overwrite' });
      if (withSubscriber) relay.subscribe(() => {});
      let t = 1_800_000_000_000_000;
      const at = () => (t += 5);
      const scope = relay.pushScope({ name: 'agent', category: 'agent', timestampUs: at() });
      // Each getter acts on its first read only: the event path may read a value twice.
      const once = (action: () => void) => {
        let done = false;
        return () => {
          if (!done) {
            done = true;
            action();
          }
          return 'value';
        };
      };
      const emits = once(() => relay.mark({ name: 'nested', parent: scope, data: { n: 1 }, timestampUs: at() }));
      relay.mark({ name: 'outer', parent: scope, data: { a: 1, get b() { return emits(); }, c: 'x'.repeat(100) }, timestampUs: at() });
      const flushes = once(() => void relay.flush());
      const tool = relay.toolStart({ name: 't', parent: scope, args: { get f() { return flushes(); } }, timestampUs: at() });
      // A flush, then a throwing getter: the fast path gives up after the open line moved.
      const flushesAgain = once(() => void relay.flush());
      const request = {
        a: 'x',
        get f() {
          return flushesAgain();
        },
        get g(): string {
          throw new Error('getter throws');
        },
      };
      const llm = relay.llmStart({ name: 'l', parent: scope, request: { headers: {}, content: request }, timestampUs: at() });
      const flushesOnceMore = once(() => void relay.flush());
      relay.llmEnd(llm, {
        response: {
          get f() {
            return flushesOnceMore();
          },
          get g(): string {
            throw new Error('getter throws');
          },
        },
        timestampUs: at(),
      });
      relay.toolEnd(tool, { result: 'done', timestampUs: at() });
      let second: ReturnType<MemoryRelay['registerAtofExporter']> | undefined;
      const adds = once(() => (second = relay.registerAtofExporter({ outputDirectory: dir, filename: 'second.jsonl', mode: 'overwrite' })));
      relay.mark({ name: 'adding', parent: scope, metadata: { get m() { return adds(); } }, timestampUs: at() });
      relay.mark({ name: 'after adding', parent: scope, timestampUs: at() });
      const closes = once(() => void first.close());
      relay.mark({ name: 'closing', parent: scope, data: { get d() { return closes(); } }, timestampUs: at() });
      relay.popScope(scope, { timestampUs: at() });
      await relay.shutdown();
      return [first.path, second!.path].map((file) => labelled(fs.readFileSync(file, 'utf8')));
    };
    const [first, second] = await files(false);
    expect(first!.split('\n').map((line) => /"name":"([^"]*)"/.exec(line)?.[1])).toEqual(['agent', 'nested', 'outer', 't', 'l', 'l', 't', 'adding', 'after adding', undefined]);
    expect(first).toContain('"content":{"a":"x","f":"value","g":"[Unserializable: getter throws]"}');
    expect(first).toContain('"data":{"f":"value","g":"[Unserializable: getter throws]"}');
    expect(second!.split('\n').map((line) => /"name":"([^"]*)"/.exec(line)?.[1])).toEqual(['adding', 'after adding', 'closing', 'agent', undefined]);
    expect([first, second]).toEqual(await files(true));
  });

  it('writes the same ATOF bytes with only an ATIF exporter listening (scopes as objects, marks as lines)', async () => {
    const withExporter = await atofText((relay) => {
      let exporter: AtifExporter | undefined;
      const watched = new Proxy(relay, {
        get(target, key) {
          if (key === 'pushScope') {
            return (options: PushScopeOptions) => {
              const handle = target.pushScope(options);
              exporter ??= target.registerAtifExporter({ scope: handle, sessionId: 'lines', agentName: 'a', agentVersion: '1' });
              return handle;
            };
          }
          const value = Reflect.get(target, key) as unknown;
          return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
        },
      });
      drive(watched, corpus());
      expect(exporter).toBeDefined();
    }, false);
    const events = await atofText((relay) => drive(relay, corpus()), true);
    expect(withExporter.split('\n').filter((line) => line.includes('"kind":"mark"')).length).toBeGreaterThan(10);
    expect(withExporter).toBe(events);
  });

  it('builds the same ATIF trajectory from its lines as from event objects, for every payload kind and call', async () => {
    const trajectory = async (withSubscriber: boolean) => {
      const relay = createMemoryRelay({ logger: silentLogger });
      if (withSubscriber) relay.subscribe(() => {});
      let exporter: AtifExporter | undefined;
      // The session's exporter is registered right after its push, as the plugin does.
      const watched = {
        pushScope: (options: PushScopeOptions) => {
          const handle = relay.pushScope(options);
          exporter ??= relay.registerAtifExporter({ scope: handle, sessionId: 'lines', agentName: 'a', agentVersion: '1' });
          return handle;
        },
        popScope: (handle: ScopeHandle, options?: PopScopeOptions) => relay.popScope(handle, options),
        mark: (options: MarkOptions) => relay.mark(options),
        llmStart: (options: LlmStartOptions) => relay.llmStart(options),
        llmEnd: (handle: LlmHandle, options: LlmEndOptions) => relay.llmEnd(handle, options),
        toolStart: (options: ToolStartOptions) => relay.toolStart(options),
        toolEnd: (handle: ToolHandle, options: ToolEndOptions) => relay.toolEnd(handle, options),
      } as unknown as RelayBackend;
      drive(watched, corpus());
      const text = await exporter!.exportJson();
      await relay.shutdown();
      return labelled(text);
    };
    const lines = await trajectory(false);
    expect(JSON.parse(lines).steps.length).toBeGreaterThan(50);
    expect(lines).toBe(await trajectory(true));
  });

  it('gives an ATIF exporter registered after a lines-only push the same start event', async () => {
    const trajectory = async (withSubscriber: boolean) => {
      const relay = createMemoryRelay({ logger: silentLogger });
      if (withSubscriber) relay.subscribe(() => {});
      let nested = true;
      const session = relay.pushScope({
        name: 'agent',
        category: 'agent',
        input: {
          cwd: '/w',
          n: 2 ** 40,
          list: [1, 'x'],
          // A scope pushed while this start line is written (its own input placed in the same way).
          get z() {
            if (nested) {
              nested = false;
              relay.popScope(relay.pushScope({ name: 'nested', category: 'custom', input: { inner: 'input' }, timestampUs: 1_800_000_000_000_001 }));
            }
            return 'last';
          },
        },
        metadata: { session_id: 's-1', user_id: 'u-1', cost: 0.000002 },
        timestampUs: 1_800_000_000_000_000,
      });
      const exporter = relay.registerAtifExporter({ scope: session, sessionId: 's-1', agentName: 'a', agentVersion: '1' });
      const llm = relay.llmStart({ name: 'openai', parent: session, request: { headers: {}, content: { messages: [{ role: 'user', content: 'hi' }] } }, modelName: 'm', timestampUs: 1_800_000_000_000_010 });
      relay.llmEnd(llm, { response: { choices: [{ message: { role: 'assistant', content: 'hello' } }] }, timestampUs: 1_800_000_000_000_020 });
      relay.popScope(session, { timestampUs: 1_800_000_000_000_030 });
      const text = await exporter.exportJson();
      await relay.shutdown();
      return text;
    };
    const lines = await trajectory(false);
    expect(validateAtif(JSON.parse(lines))).toEqual([]);
    expect(labelled(lines)).toBe(labelled(await trajectory(true)));
  });
});
