import { describe, expect, it } from 'vitest';
import { dist, runChild } from '../support/child.ts';
import { compareKeys, JSON_LIMITS, JsonTooDeepError, MAX_READ_DEPTH, parseJson, toJson, wellFormed } from '../../src/shared/json.ts';
import { quotedValue } from '../../src/shared/text.ts';
import { seededRandom } from '../support/seeded-random.ts';

describe('toJson', () => {
  it('keeps plain JSON values as they are', () => {
    const value = { a: 1, b: 'x', c: [1, 2, { d: null }], e: true };
    expect(toJson(value)).toEqual(value);
  });

  it('returns a copy, never the input object', () => {
    const value = { a: { b: 1 } };
    const copy = toJson(value) as { a: object };
    expect(copy).not.toBe(value);
    expect(copy.a).not.toBe(value.a);
  });

  it('replaces a cycle with "[Circular]" and keeps shared references', () => {
    const shared = { s: 1 };
    const value: Record<string, unknown> = { left: shared, right: shared };
    value.self = value;
    expect(toJson(value)).toEqual({ left: { s: 1 }, right: { s: 1 }, self: '[Circular]' });
  });

  it('turns BigInt into its decimal string', () => {
    expect(toJson({ n: 12345678901234567890n })).toEqual({ n: '12345678901234567890' });
    expect(toJson(5n)).toBe('5');
  });

  it('drops undefined, functions and symbols from objects and writes null in arrays', () => {
    expect(toJson({ u: undefined, f: () => 1, s: Symbol('x'), k: 1 })).toEqual({ k: 1 });
    expect(toJson([undefined, () => 1, Symbol('x'), 2])).toEqual([null, null, null, 2]);
    expect(toJson(undefined)).toBeNull();
  });

  it('writes NaN and infinities as null', () => {
    expect(toJson([Number.NaN, Infinity, -Infinity, 1.5])).toEqual([null, null, null, 1.5]);
  });

  it('converts dates, maps, sets and typed arrays', () => {
    expect(toJson({ d: new Date('2026-01-02T03:04:05.000Z') })).toEqual({ d: '2026-01-02T03:04:05.000Z' });
    expect(toJson({ d: new Date(Number.NaN) })).toEqual({ d: null });
    expect(toJson(new Map<unknown, unknown>([['a', 1], [2, 'b']]))).toEqual({ a: 1, 2: 'b' });
    expect(toJson(new Set([1, 'x']))).toEqual([1, 'x']);
    expect(toJson(new Uint8Array([1, 2, 3]))).toEqual([1, 2, 3]);
    expect(toJson(new Float64Array([0.5, Number.NaN]))).toEqual([0.5, null]);
    expect(toJson(new BigInt64Array([7n]))).toEqual(['7']);
    expect(toJson(new Uint8Array([9, 8]).buffer)).toEqual([9, 8]);
  });

  it('honours toJSON and survives one that throws', () => {
    expect(toJson({ v: { toJSON: () => ({ ok: true }) } })).toEqual({ v: { ok: true } });
    expect(
      toJson({
        v: {
          toJSON() {
            throw new Error('nope');
          },
        },
      }),
    ).toEqual({ v: '[Unserializable: nope]' });
  });

  it('describes errors with name, message, code and cause', () => {
    const error = Object.assign(new TypeError('bad input', { cause: new Error('root') }), { code: 'E_BAD' });
    expect(toJson(error)).toEqual({
      name: 'TypeError',
      message: 'bad input',
      code: 'E_BAD',
      cause: { name: 'Error', message: 'root' },
    });
  });

  it('keeps own enumerable fields of class instances', () => {
    class Response {
      id = 'r1';
      usage = { tokens: 3 };
      describe(): string {
        return 'method';
      }
    }
    expect(toJson(new Response())).toEqual({ id: 'r1', usage: { tokens: 3 } });
  });

  it('cuts nesting deeper than maxDepth', () => {
    let deep: Record<string, unknown> = {};
    const root = deep;
    for (let i = 0; i < 10_000; i++) {
      const child: Record<string, unknown> = {};
      deep.child = child;
      deep = child;
    }
    const converted = toJson(root, { maxDepth: 3 });
    expect(converted).toEqual({ child: { child: { child: '[MaxDepth]' } } });
    expect(() => toJson(root)).not.toThrow();
  });

  it('survives getters and proxies that throw', () => {
    const withGetter = Object.defineProperty({ ok: 1 }, 'bad', {
      enumerable: true,
      get() {
        throw new Error('getter');
      },
    });
    expect(toJson(withGetter)).toEqual({ ok: 1, bad: '[Unserializable: getter]' });
    const hostile = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error('proxy');
        },
      },
    );
    expect(toJson({ p: hostile })).toEqual({ p: '[Unserializable: proxy]' });
  });

  it('keeps a __proto__ key as data without touching prototypes', () => {
    const value = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as object;
    const converted = toJson(value) as Record<string, unknown>;
    expect(Object.keys(converted)).toEqual(['__proto__', 'a']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(converted)).toBe(Object.prototype);
  });

  it('sorts keys at every level when asked, as the native relay does', () => {
    const converted = toJson({ b: 1, a: { d: 1, c: [{ z: 1, y: 2 }] } }, { sortKeys: true });
    expect(JSON.stringify(converted)).toBe('{"a":{"c":[{"y":2,"z":1}],"d":1},"b":1}');
  });

  // Found by the random-stream differential (test/differential/random-streams.test.ts):
  // keys were sorted as received, then written with U+FFFD, so a key with a
  // lone surrogate landed where native (which sorts the U+FFFD form) does not put it.
  it('sorts a key with a lone surrogate where its written form (U+FFFD) sorts, as native does', () => {
    const keys = ['\ud83dplain', '\ude00', '\ufffd!', '\uffff', 'a\ud83d\ude00', 'a\ud83d'];
    const written = ['a\ufffd', 'a\u{1F600}', '\ufffd', '\ufffd!', '\ufffdplain', '\uffff'];
    const object = Object.fromEntries(keys.map((key, i) => [key, i]));
    expect(Object.keys(toJson(object, { sortKeys: true }) as object)).toEqual(written);
    expect(Object.keys(toJson(new Map(Object.entries(object)), { sortKeys: true }) as object)).toEqual(written);
    expect([...keys].sort(compareKeys).map(wellFormed)).toEqual(written);
  });

  it('keeps a multi-megabyte string whole', () => {
    const big = 'x'.repeat(5 * 1024 * 1024);
    expect((toJson({ big }) as { big: string }).big.length).toBe(big.length);
  });
});

describe('toJson bounds work and size for any input', () => {
  it('keeps a sparse array with a length of four billion bounded (in a child process: it used to exhaust memory)', () => {
    // Through the public memory relay, which converts every payload with toJson before recording it.
    const result = runChild(`
      import { createMemoryRelay } from ${dist('src/backends/memory/index.js')};
      const relay = createMemoryRelay();
      const events = [];
      relay.subscribe((event) => events.push(event));
      const a = []; a[2 ** 32 - 2] = 1;
      relay.popScope(relay.pushScope({ name: 'sparse', category: 'function', input: { payload: a, nested: [[a]] } }));
      await relay.flush();
      const out = events[0].data;
      const text = JSON.stringify(out);
      console.log(JSON.stringify({ length: text.length, head: out.payload.slice(0, 2), tail: out.payload.at(-1) }));
    `);
    expect(result.signal, result.stderr).toBeNull();
    expect(result.status, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as { length: number; head: unknown[]; tail: unknown };
    expect(report.head).toEqual([null, null]);
    expect(report.tail).toBe(`[Truncated: ${2 ** 32 - 1 - JSON_LIMITS.maxItems} more items]`);
    expect(report.length).toBeLessThan(64 * 1024 * 1024);
  });

  it('cuts one array at maxItems with a marker saying how many were left out', () => {
    expect(toJson([1, 2, 3, 4, 5], { maxItems: 2 })).toEqual([1, 2, '[Truncated: 3 more items]']);
    const holes = new Array(10);
    expect(toJson(holes, { maxItems: 3 })).toEqual([null, null, null, '[Truncated: 7 more items]']);
  });

  it('cuts objects, maps, sets and typed arrays at maxItems', () => {
    expect(toJson({ a: 1, b: 2, c: 3 }, { maxItems: 1, sortKeys: true })).toEqual({ a: 1, '[Truncated]': '[Truncated: 2 more items]' });
    expect(toJson(new Map([['a', 1], ['b', 2]]), { maxItems: 1 })).toEqual({ a: 1, '[Truncated]': '[Truncated: 1 more items]' });
    expect(toJson(new Set([1, 2, 3]), { maxItems: 2 })).toEqual([1, 2, '[Truncated: 1 more items]']);
    expect(toJson(new Uint8Array(5), { maxItems: 2 })).toEqual([0, 0, '[Truncated: 3 more items]']);
  });

  it('stops converting when the value budget of the call is spent', () => {
    const wide = Array.from({ length: 50 }, (_, i) => [i, i, i]);
    const out = toJson(wide, { maxValues: 20 }) as unknown[];
    expect(JSON.stringify(out)).toContain('Truncated');
    expect(JSON.stringify(out).length).toBeLessThan(200);
  });

  it('bounds the total characters of strings and keys in one call', () => {
    const out = toJson({ a: 'x'.repeat(100), b: 'y'.repeat(100) }, { maxChars: 150 }) as Record<string, string>;
    expect(out.a).toBe('x'.repeat(100));
    expect(out.b).toBe(`${'y'.repeat(48)}[Truncated: 52 more chars]`);
    expect(toJson('z'.repeat(10), { maxChars: 4 })).toBe('zzzz[Truncated: 6 more chars]');
  });

  it('keeps a huge typed array bounded', () => {
    const out = toJson({ bytes: new Uint8Array(50_000_000) }) as { bytes: unknown[] };
    expect(out.bytes).toHaveLength(JSON_LIMITS.maxItems + 1);
  });
});

describe('toJson on plain values: the fast copy gives what the general walk gives', () => {
  // A bound other than the default makes toJson take its general walk (this one is far from every value here).
  const general = (value: unknown, options: { sortKeys?: boolean; noNulInKeys?: boolean }) => toJson(value, { ...options, maxItems: JSON_LIMITS.maxItems + 1 });
  const same = (value: unknown, options: { sortKeys?: boolean; noNulInKeys?: boolean } = {}) => {
    const fast = toJson(value, options);
    const slow = general(value, options);
    expect(fast).toStrictEqual(slow);
    // Key order included (toStrictEqual ignores it).
    expect(JSON.stringify(fast)).toBe(JSON.stringify(slow));
    return fast;
  };

  // Not `constructor`: toStrictEqual compares that property as the object's class.
  const KEYS = ['a', 'b', 'zeta', 'Alpha', '10', '2', '0', 'é', 'k\u0000nul', 'emoji\ud83d\ude00', 'lone\ud83d', 'toString', 'model', 'session_id'];
  const LEAVES: (() => unknown)[] = [
    () => 'text',
    () => 'cut \ud83d emoji',
    () => '',
    () => 0,
    () => -0,
    () => 1.5,
    () => 1e21,
    () => 0.000001234,
    () => 2 ** 53 + 2,
    () => Number.NaN,
    () => Infinity,
    () => true,
    () => null,
    () => undefined,
    () => 12345678901234567890n,
    () => () => 1,
    () => Symbol('s'),
    () => new Date('2026-01-02T03:04:05.000Z'),
    () => new Map([['m', 1]]),
    () => ({ toJSON: () => ({ replaced: true }) }),
    () => new (class Point {
      x = 1;
    })(),
  ];
  /** Keys and leaves the fast copy takes whole (the rest send it to the general walk). */
  const PLAIN_KEYS = KEYS.slice(0, 8);
  const PLAIN_LEAVES = LEAVES.slice(0, 17);
  function generate(next: () => number, depth: number, plain = false): unknown {
    const roll = next();
    const keys = plain ? PLAIN_KEYS : KEYS;
    const leaves = plain ? PLAIN_LEAVES : LEAVES;
    if (depth > 4 || roll < 0.45) return leaves[Math.floor(next() * leaves.length)]!();
    if (roll < 0.7) return Array.from({ length: Math.floor(next() * 5) }, () => generate(next, depth + 1, plain));
    const object: Record<string, unknown> = next() < 0.1 ? Object.create(null) : {};
    const count = Math.floor(next() * 7);
    for (let i = 0; i < count; i++) object[keys[Math.floor(next() * keys.length)]!] = generate(next, depth + 1, plain);
    return object;
  }

  it('on 2,000 generated values, sorted and unsorted, with and without noNulInKeys', () => {
    const next = seededRandom(21);
    for (let i = 0; i < 2000; i++) {
      const value = generate(next, 0, i % 2 === 0);
      same(value);
      same(value, { sortKeys: true });
      same(value, { sortKeys: true, noNulInKeys: true });
    }
  });

  it('on the shapes the fast copy leaves to the general walk', () => {
    const withProto = JSON.parse('{"__proto__": {"x": 1}, "b": 2}') as unknown;
    expect(same(withProto, { sortKeys: true })).toStrictEqual(withProto);
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = { back: cyclic };
    expect(same(cyclic, { sortKeys: true })).toStrictEqual({ name: 'loop', self: { back: '[Circular]' } });
    let deep: unknown = 'bottom';
    for (let i = 0; i < 70; i++) deep = { d: deep };
    same(deep, { sortKeys: true });
    const throwing = {
      ok: 1,
      get bad(): never {
        throw new Error('getter');
      },
    };
    expect(same(throwing)).toStrictEqual({ ok: 1, bad: '[Unserializable: getter]' });
    same(new Proxy({ a: 1 }, {}), { sortKeys: true });
    same([new Array(3), { n: [1, [2, [3]]] }]);
  });

  it('gives the same from the copy generated for a key list seen often: omitted values, getters, integer-like keys, quotes in keys', () => {
    // A key list copied often enough gets a generated copy (json.ts, "generated copies"): 40 rounds pass that point.
    const next = seededRandom(7);
    let reads = 0;
    for (let round = 0; round < 40; round++) {
      const leaf = () => PLAIN_LEAVES[Math.floor(next() * PLAIN_LEAVES.length)]!();
      const object: Record<string, unknown> = { gen_b: leaf(), '10': leaf(), gen_a: { inner: leaf(), 'quote"\\\n\u2028': leaf() }, '2': leaf(), gen_c: [leaf(), leaf()] };
      same(object);
      same(object, { sortKeys: true });
      same(object, { sortKeys: true, noNulInKeys: true });
      const withGetter = {
        gen_x: 1,
        get gen_y() {
          reads += 1;
          return round % 3 === 0 ? undefined : 'read';
        },
      };
      const copied = toJson(withGetter);
      expect(copied).toStrictEqual(round % 3 === 0 ? { gen_x: 1 } : { gen_x: 1, gen_y: 'read' });
    }
    // Each getter was read once per copy.
    expect(reads).toBe(40);
  });

  it('sorts keys as the general walk does, integer-like keys included, and reuses the sort across calls', () => {
    const first = same({ zeta: 1, '10': 2, alpha: { y: 1, x: 2 }, '2': 3 }, { sortKeys: true });
    expect(Object.keys(first as object)).toEqual(['2', '10', 'alpha', 'zeta']);
    const second = same({ zeta: 'again', '10': 0, alpha: { y: 0, x: 0 }, '2': 0 }, { sortKeys: true }) as Record<string, unknown>;
    expect(Object.keys(second.alpha as object)).toEqual(['x', 'y']);
  });
});

describe("toJson's withoutBlobs: the adapters' media rule inside the copy", () => {
  const BLOBS = { withoutBlobs: true } as const;
  const base64 = Buffer.alloc(3000, 7).toString('base64');
  const dataUrl = `data:image/png;base64,${base64}`;
  const leftOut = `[left out: ${base64.length} characters of base64]`;
  // The general walk: a bound other than the default (far from every value here).
  const general = (value: unknown, options: object) => toJson(value, { ...options, maxItems: JSON_LIMITS.maxItems + 1 });

  it('leaves out bytes of every kind, before a toJSON (a Buffer), wherever they sit', () => {
    const bytes = new Uint8Array(2048);
    class Upload {
      file = Buffer.alloc(5);
    }
    const value = {
      buffer: Buffer.alloc(10),
      data: bytes,
      raw: bytes.buffer,
      view: new DataView(bytes.buffer, 8),
      words: new Float32Array(4),
      upload: new Upload(),
      byName: new Map([['image', Buffer.alloc(3)]]),
      replaced: { toJSON: () => ({ inner: Buffer.alloc(4), url: dataUrl }) },
    };
    const expected = {
      buffer: '[left out: 10 bytes]',
      data: '[left out: 2048 bytes]',
      raw: '[left out: 2048 bytes]',
      view: '[left out: 2040 bytes]',
      words: '[left out: 16 bytes]',
      upload: { file: '[left out: 5 bytes]' },
      byName: { image: '[left out: 3 bytes]' },
      replaced: { inner: '[left out: 4 bytes]', url: `data:image/png;base64,${leftOut}` },
    };
    expect(toJson(value, BLOBS)).toStrictEqual(expected);
    expect(toJson(value, { ...BLOBS, sortKeys: true, withoutCredentialHeaders: true })).toStrictEqual(expected);
    expect(toJson(Buffer.alloc(7), BLOBS)).toBe('[left out: 7 bytes]');
    // Without the option a copy is what it always was.
    expect(toJson({ buffer: Buffer.from([1, 2]), data: new Uint8Array([3]) })).toStrictEqual({ buffer: { type: 'Buffer', data: [1, 2] }, data: [3] });
  });

  it('the same on the fast copy and the general walk, top-level strings included; short base64, text and non-base64 data URLs stay', () => {
    const text = 'word '.repeat(400);
    const plainDataUrl = `data:text/plain,${'a'.repeat(2000)}`;
    const value = { messages: [{ role: 'user', content: [{ type: 'text', text }, { type: 'image_url', image_url: { url: dataUrl } }, { type: 'input_file', file_data: base64, note: base64.slice(0, 1000) }, plainDataUrl] }] };
    const expected = {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${leftOut}` } },
            { type: 'input_file', file_data: leftOut, note: base64.slice(0, 1000) },
            plainDataUrl,
          ],
        },
      ],
    };
    for (const options of [{ ...BLOBS, sortKeys: false }, { ...BLOBS, sortKeys: true }, { ...BLOBS, sortKeys: true, noNulInKeys: true }]) {
      expect(toJson(value, options)).toStrictEqual(options.sortKeys === true ? toJson(expected, { sortKeys: true }) : expected);
      expect(JSON.stringify(toJson(value, options))).toBe(JSON.stringify(general(value, options)));
    }
    expect(toJson(dataUrl, BLOBS)).toBe(`data:image/png;base64,${leftOut}`);
    expect(toJson(base64, BLOBS)).toBe(leftOut);
    expect(toJson(base64)).toBe(base64);
  });

  it('changes nothing in a value without media', () => {
    const next = seededRandom(5);
    // Long text, none of it base64 (a space, an accent, a cut emoji): only a length test each.
    const words = ['a ', 'model: ', 'session_id, ', 'é', '\ud83d'];
    const make = (depth: number): unknown => {
      const roll = next();
      if (depth > 3 || roll < 0.4) return roll < 0.2 ? words[Math.floor(next() * words.length)]!.repeat(Math.floor(next() * 600)) : Math.floor(next() * 1000);
      if (roll < 0.7) return Array.from({ length: Math.floor(next() * 4) }, () => make(depth + 1));
      const object: Record<string, unknown> = {};
      for (let i = Math.floor(next() * 5); i > 0; i--) object[words[Math.floor(next() * words.length)]!] = make(depth + 1);
      return object;
    };
    for (let i = 0; i < 500; i++) {
      const value = make(0);
      expect(toJson(value, { ...BLOBS, sortKeys: true })).toStrictEqual(toJson(value, { sortKeys: true }));
      expect(general(value, BLOBS)).toStrictEqual(toJson(value));
    }
  });
});

describe('parseJson', () => {
  const nested = (levels: number, open = '[', close = ']') => open.repeat(levels) + close.repeat(levels);

  it('reads what JSON.parse reads up to MAX_READ_DEPTH levels, arrays and objects alike', () => {
    expect(parseJson('{"a":[1,{"b":null}]}')).toEqual({ a: [1, { b: null }] });
    expect(() => parseJson(nested(MAX_READ_DEPTH))).not.toThrow();
    expect(() => parseJson(`${'{"a":'.repeat(MAX_READ_DEPTH - 1)}[]${'}'.repeat(MAX_READ_DEPTH - 1)}`)).not.toThrow();
  });

  it('refuses one level more with JsonTooDeepError, a SyntaxError as for text that is not JSON', () => {
    for (const text of [nested(MAX_READ_DEPTH + 1), nested(100_000), `{"ok":1,"deep":${nested(MAX_READ_DEPTH)}}`]) {
      expect(() => parseJson(text)).toThrow(JsonTooDeepError);
      expect(() => parseJson(text)).toThrow(SyntaxError);
    }
    expect(() => parseJson('{')).toThrow(SyntaxError);
  });
});

describe('quotedValue', () => {
  it('quotes a value as JSON, cut at max characters with the whole length', () => {
    expect(quotedValue('abc')).toBe('"abc"');
    expect(quotedValue({ a: [1] })).toBe('{"a":[1]}');
    expect(quotedValue(undefined)).toBe('undefined');
    expect(quotedValue('x'.repeat(500), 10)).toBe(`"${'x'.repeat(9)}… (502 characters)`);
  });
});
