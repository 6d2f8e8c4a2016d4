// Native's JSON text rules without the native runtime (the same rules are
// checked against nemo-relay-node in native-json-differential.test.ts).
import { describe, expect, it } from 'vitest';
import type { Json } from '../../src/relay/contract.ts';
import {
  canonicalJson,
  formatF64,
  formatPayloadNumber,
  isNativeInteger,
  parseJsonAsNative,
  sameJson,
  sortJson,
  stringifyMayDiffer,
  toRustJson,
  type FieldTypes,
  type NumberFieldType,
} from '../../src/formats/native-text.ts';
import { sortPayload } from '../../src/formats/native-text/keys.ts';
import { writeStringifiedBytes } from '../../src/formats/native-text/write.ts';
import { giveBack, takeBuilder } from '../../src/shared/utf8-builder.ts';

describe('native number text', () => {
  it.each([
    [0, '0.0'],
    [-0, '-0.0'],
    [1, '1.0'],
    [-2.5, '-2.5'],
    [0.1, '0.1'],
    [123456.789, '123456.789'],
    [1795964369.159, '1795964369.159'],
    [4294967296, '4294967296.0'],
    [1e15, '1000000000000000.0'],
    [9999999999999998, '9999999999999998.0'],
    [1e16, '1e+16'],
    [1e20, '1e+20'],
    [1.2345e22, '1.2345e+22'],
    [1.7976931348623157e308, '1.7976931348623157e+308'],
    [0.00001, '0.00001'],
    [0.00001234, '0.00001234'],
    [9.99e-6, '9.99e-6'],
    [1.5e-6, '1.5e-6'],
    [-1e-7, '-1e-7'],
    [5e-324, '5e-324'],
    [Number.NaN, 'null'],
  ])('writes the f64 %d as %s', (value, text) => {
    expect(formatF64(value)).toBe(text);
  });

  it.each([
    [0, '0'],
    [-0, '0'],
    [-1, '-1'],
    [2147483647, '2147483647'],
    [2147483648, '2147483648'],
    [-2147483648, '-2147483648'],
    [4294967295, '4294967295'],
    [4294967296, '4294967296.0'],
    [-2147483649, '-2147483649.0'],
    [2 ** 53 - 1, '9007199254740991.0'],
    [1e16, '1e+16'],
    [1.5, '1.5'],
    [4294967296.5, '4294967296.5'],
    [1e-6, '1e-6'],
  ])('writes the payload number %d as %s', (value, text) => {
    expect(formatPayloadNumber(value)).toBe(text);
    expect(isNativeInteger(value)).toBe(!text.includes('.') && !text.includes('e'));
  });
});

describe('key order', () => {
  it('sorts keys by code point, integer-like keys as text', () => {
    expect(canonicalJson({ b: 1, '10': 2, '9': 3, A: 4, _: 5, '\uffff': 6, '😀': 7 })).toBe('{"10":2,"9":3,"A":4,"_":5,"b":1,"\uffff":6,"😀":7}');
  });

  it('keeps a document\'s own order but sorts an object with integer-like keys, which no JS object can hold in order', () => {
    expect(toRustJson({ z: 1, a: { '2': 'x', '10': 'y', b: 'z' } })).toBe('{"z":1,"a":{"10":"y","2":"x","b":"z"}}');
    expect(toRustJson({ z: 1, a: 2 }, { sortKeys: true })).toBe('{"a":2,"z":1}');
  });

  it('sortJson leaves sorted input (and objects only integer-like keys keep out of order) untouched', () => {
    const sorted = { a: 1, b: { c: [{ d: 1, e: 2 }] }, n: { '2': 1, '10': 2, a: 3 } };
    expect(sortJson(sorted)).toBe(sorted);
    expect(Object.keys(sortJson({ '\uffff': 1, '😀': 2, b: 3 }) as object)).toEqual(['b', '\uffff', '😀']);
    expect(Object.keys(sortJson({ z: 1, '2': 2, a: 3 }) as object)).toEqual(['2', 'a', 'z']);
  });

  it('sortJson copies only the path down to an unsorted object and shares every sorted subtree', () => {
    const shared: Json = { a: [1, { b: 2, c: 3 }] };
    const input = { a: shared, b: [{ x: 1 }, { z: 1, y: { q: 1, p: 2 } }] as Json[], c: shared };
    const sorted = sortJson(input) as typeof input;
    expect(sorted).not.toBe(input);
    expect(sorted.a).toBe(shared);
    expect(sorted.c).toBe(shared);
    expect(sorted.b[0]).toBe(input.b[0]);
    expect(JSON.stringify(sorted.b[1])).toBe('{"y":{"p":2,"q":1},"z":1}');
    expect(Object.keys(input.b[1] as object)).toEqual(['z', 'y']);
  });

  it('writes undefined array items as null and skips undefined object values', () => {
    expect(canonicalJson([1, undefined, { a: undefined, b: 2 }] as unknown as Json)).toBe('[1,null,{"b":2}]');
    expect(canonicalJson(undefined)).toBe('null');
  });
});

describe('parseJsonAsNative', () => {
  const args = (text: string): string | undefined => {
    const parsed = parseJsonAsNative(text);
    return parsed === undefined ? undefined : canonicalJson(parsed);
  };

  it('keeps the text serde gives each number literal', () => {
    expect(args('{"a":1.0,"b":1e2,"c":-0,"d":123456789012,"e":9007199254740993,"f":18446744073709551615,"g":18446744073709551616}')).toBe(
      '{"value":{"a":1.0,"b":100.0,"c":-0.0,"d":123456789012,"e":9007199254740993,"f":18446744073709551615,"g":1.8446744073709552e+19}}',
    );
    expect(args('{"h":-9223372036854775808,"i":-9223372036854775809,"j":[1,2.0,3e0],"k":1e16,"l":0.1,"m":7}')).toBe(
      '{"value":{"h":-9223372036854775808,"i":-9.223372036854776e+18,"j":[1,2.0,3.0],"k":1e+16,"l":0.1,"m":7}}',
    );
    expect(args('5.0')).toBe('{"value":5.0}');
    expect(args('12345678901234')).toBe('{"value":12345678901234}');
  });

  it('sorts keys, lets a later duplicate win and keeps its number text', () => {
    const parsed = parseJsonAsNative(' {"b":1,"a":{"y":1,"x":2},"d":1.0,"d":2} ')!;
    expect(Object.keys(parsed.value as object)).toEqual(['a', 'b', 'd']);
    expect(canonicalJson(parsed.value)).toBe('{"a":{"x":2,"y":1},"b":1,"d":2}');
    expect(canonicalJson(parseJsonAsNative('{"d":2,"d":2.0}')!.value)).toBe('{"d":2.0}');
  });

  it('reads number-free text (its quick path) with sorted maps, a later duplicate winning and __proto__ as a plain key', () => {
    const parsed = parseJsonAsNative('{"b":"x","a":{"d":[true,null,{"z":"1","y":[]}],"c":"y"},"b":"z","__proto__":"p"}')!;
    expect(Object.keys(parsed.value as object)).toEqual(['__proto__', 'a', 'b']);
    expect(Object.getPrototypeOf(parsed.value)).toBe(Object.prototype);
    expect(canonicalJson(parsed.value)).toBe('{"__proto__":"p","a":{"c":"y","d":[true,null,{"y":[],"z":"1"}]},"b":"z"}');
    expect(args('"just text"')).toBe('{"value":"just text"}');
    expect(args('[]')).toBe('{"value":[]}');
    expect(args(' {} ')).toBe('{"value":{}}');
  });

  it('keeps the number text through sortJson copies and pretty writing', () => {
    const parsed = parseJsonAsNative('{"b":[1.0],"a":10000000000}')!.value;
    expect(toRustJson({ z: 0, args: parsed }, { pretty: true })).toBe('{\n  "z": 0,\n  "args": {\n    "a": 10000000000,\n    "b": [\n      1.0\n    ]\n  }\n}');
    const wrapped = { b: parsed, a: 1 };
    expect(canonicalJson(sortJson(wrapped))).toBe('{"a":1,"b":{"a":10000000000,"b":[1.0]}}');
  });

  it('rejects what serde rejects, including what JSON.parse accepts', () => {
    const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
    expect(parseJsonAsNative(deep(127))).toBeDefined();
    for (const text of [deep(128), '{"a":"\\ud800"}', '1e400', '{"big":-1e400}', '[1,]', '{"a":01}', '\u00a0{}', '', 'nul', '{"a" 1}', '"\u0001"']) {
      expect([text.slice(0, 20), parseJsonAsNative(text)]).toEqual([text.slice(0, 20), undefined]);
    }
    expect(parseJsonAsNative('{"a":"\\ud83d\\ude00","b":"\\n\\u0041"}')!.value).toEqual({ a: '😀', b: '\nA' });
  });
});

describe('stringifyMayDiffer', () => {
  it('is false when JSON.stringify already writes native text, and true for numbers and keys it writes differently', () => {
    const same: Json[] = [{ a: 1, b: [0.5, -3, 'x', null, true] }, 4294967295, -2147483648, 0.00001, 1e-7, 123.25, 'text'];
    const different: Json[] = [{ a: 4294967296 }, [1e-6], -2147483649, 2 ** 53, { '2': 1, '10': 2 }, { a: { '9': null, '10': 1 } }];
    for (const value of same) {
      expect(stringifyMayDiffer(value)).toBe(false);
      expect(canonicalJson(value)).toBe(JSON.stringify(value));
    }
    for (const value of different) {
      expect(stringifyMayDiffer(value)).toBe(true);
      expect(canonicalJson(value)).not.toBe(JSON.stringify(value));
    }
  });
});

describe('writeStringifiedBytes (an ATOF line payload in one pass)', () => {
  /** What it writes after a line's first bytes, or false when it gave up (those bytes then stand alone). */
  const written = (value: object): string | false => {
    const out = takeBuilder();
    try {
      out.ascii('{"data":');
      const wrote = writeStringifiedBytes(out, value);
      const text = out.text();
      if (wrote) return text.slice('{"data":'.length);
      expect(text).toBe('{"data":');
      return false;
    } finally {
      giveBack(out);
    }
  };
  /** `levels` objects nested one in the other. */
  const nested = (levels: number): object => {
    let value: object = { leaf: 1 };
    for (let i = 1; i < levels; i++) value = { a: value };
    return value;
  };

  it("writes JSON.stringify's text where it is native's: plain data, skipped members, lone surrogates as escapes", () => {
    const plain: object[] = [
      {},
      [],
      { a: 1, b: [true, null, 'x', 0.5] },
      { zero: -0, u32: 4294967295, i32: -2147483648, tiny: 1e-7, f: 123.25, nan: Number.NaN, inf: Number.POSITIVE_INFINITY },
      { cut: 'cut 😀'.slice(0, -1), lone: `${'long '.repeat(40)}\udc00`, escapes: 'a "q" \\ \n \u0001 \u2028', ['k\ud800']: 'é 漢字' },
      [undefined, () => 1, Symbol('s'), 1],
      { u: undefined, f: () => 1, s: Symbol('s'), kept: 1 },
      Object.assign(Object.create(null) as object, { b: 1 }),
      JSON.parse('{"__proto__":{"x":1},"a":2}') as object,
      nested(128),
    ];
    for (const value of plain) expect(written(value)).toBe(JSON.stringify(value));
  });

  it('gives up, writing nothing, where native writes a number or key differently or JSON.stringify would do more than walk plain data', () => {
    class Point {
      x = 1;
    }
    const given: [string, object][] = [
      ['an integer beyond u32', { a: 2 ** 40 }],
      ['an integer below i32', [-2147483649]],
      ['a number native writes with an exponent', { a: { b: [0.000002] } }],
      ['integer-like keys', { '10': 1, '9': 2, b: 3 }],
      ['a key starting with a digit, deeper', { a: [{ '1a': null }] }],
      ['toJSON', { a: { toJSON: () => 'replaced' } }],
      ['a class instance', { nested: new Point() }],
      ['a Date', { when: new Date(0) }],
      ['a BigInt', { n: 1n }],
      ['nesting past the bound', nested(129)],
    ];
    for (const [label, value] of given) expect([label, written(value)]).toEqual([label, false]);
    // A key inherited from Object.prototype: JSON.stringify skips it, stringifyMayDiffer reads it.
    const polluted = Object.prototype as Record<string, unknown>;
    try {
      polluted.inherited = 1;
      expect(written({ a: 1 })).toBe(false);
    } finally {
      delete polluted.inherited;
    }
    expect(written({ a: 1 })).toBe('{"a":1}');
  });
});

describe('toRustJson with typed fields', () => {
  const types: FieldTypes = {
    fields: {
      id: 'integer',
      cost: 'f64',
      rows: { items: { fields: { at: 'f64', n: 'integer', scores: { items: 'f64' } } } },
    },
  };

  /** The rules written out piece by piece: the text every document must get, whichever way the writer takes. */
  function reference(value: Json | undefined, type: FieldTypes | NumberFieldType | undefined, newline: string): string {
    if (value === undefined || value === null) return 'null';
    if (typeof value === 'number') {
      if (type === 'f64') return formatF64(value);
      if (type === 'integer') return Number.isInteger(value) ? BigInt(value).toString() : formatF64(value);
      return formatPayloadNumber(value);
    }
    if (typeof value !== 'object') return JSON.stringify(value);
    const node = typeof type === 'object' ? type : undefined;
    const inner = newline === '' ? '' : `${newline}  `;
    if (Array.isArray(value)) {
      if (value.length === 0) return '[]';
      return `[${value.map((item) => inner + reference(item, node?.items, inner)).join(',')}${newline}]`;
    }
    const keys = Object.keys(value).filter((key) => value[key] !== undefined);
    if (keys.length > 0 && /^\d/.test(keys[0]!)) keys.sort((a, b) => (a < b ? -1 : 1));
    if (keys.length === 0) return '{}';
    const separator = newline === '' ? ':' : ': ';
    const field = (key: string) => (node?.fields !== undefined && Object.hasOwn(node.fields, key) ? node.fields[key] : undefined);
    return `{${keys.map((key) => `${inner}${JSON.stringify(key)}${separator}${reference(value[key], field(key), inner)}`).join(',')}${newline}}`;
  }

  it('writes every mix of plain and awkward numbers, typed fields, integer-like keys and nesting as the rules say, compact and pretty', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const pick = <T,>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const numbers = [0, -0, 1, 7, 2.5, 0.25, 4294967296, -2147483649, 2 ** 53, 1e16, 3e-6, 1e-7, 1_764_000_000, 1_764_000_000.125];
    const payload = (depth: number): Json => {
      const roll = random();
      if (depth > 3 || roll < 0.35) return pick<Json>([pick(numbers), 'text "quoted"\n', null, true]);
      if (roll < 0.55) return Array.from({ length: Math.floor(random() * 3) }, () => payload(depth + 1));
      const object: { [key: string]: Json } = {};
      for (const key of ['b', pick(['a', '10', '2', 'c']), 'd'].slice(0, 1 + Math.floor(random() * 3))) object[key] = payload(depth + 1);
      return object;
    };
    const row = (): Json => ({ at: pick(numbers), n: pick(numbers), scores: [pick(numbers), pick(numbers)], data: payload(0) });
    for (let i = 0; i < 400; i++) {
      const document: Json = { id: pick(numbers), cost: pick(numbers), rows: [row(), row()], payload: payload(0) };
      expect(toRustJson(document, { fieldTypes: types })).toBe(reference(document, types, ''));
      expect(toRustJson(document, { fieldTypes: types, pretty: true })).toBe(reference(document, types, '\n'));
    }
  });

  it('hands a document whose numbers JSON.stringify writes natively to it whole', () => {
    const document = { id: 3, cost: 0.5, rows: [{ at: 1_764_000_000.125, n: 2, scores: [0.25], data: { b: [1, 'x', null] } }] };
    expect(toRustJson(document, { fieldTypes: types })).toBe(JSON.stringify(document));
    expect(toRustJson(document, { fieldTypes: types, pretty: true })).toBe(JSON.stringify(document, null, 2));
  });

  it('keeps parsed number text when the rest of the document would go to JSON.stringify, and indents subtrees it hands over', () => {
    const parsed = parseJsonAsNative('{"b":[1.0],"a":10000000000}')!.value;
    const document = { id: 1, rows: [{ at: 0.5, data: { args: parsed, list: [{ x: 1 }] } }], payload: { z: [true] } };
    expect(toRustJson(document, { fieldTypes: types })).toBe(
      '{"id":1,"rows":[{"at":0.5,"data":{"args":{"a":10000000000,"b":[1.0]},"list":[{"x":1}]}}],"payload":{"z":[true]}}',
    );
    expect(toRustJson(document, { fieldTypes: types, pretty: true })).toBe(
      JSON.stringify({ ...document, rows: [{ at: 0.5, data: { args: { a: 10000000000, b: ['@1.0'] }, list: [{ x: 1 }] } }] }, null, 2).replace('"@1.0"', '1.0'),
    );
  });
});

describe('sameJson', () => {
  it('is true for equal values with keys in the same order, and for one object against itself', () => {
    const payload = { b: [1, { c: null }], a: 'x' };
    expect(sameJson({ s: payload, n: 1.5, t: true }, { s: payload, n: 1.5, t: true })).toBe(true);
    expect(sameJson({ s: { b: [1, { c: null }], a: 'x' } }, { s: { b: [1, { c: null }], a: 'x' } })).toBe(true);
    expect(sameJson([Number.NaN], [Number.NaN])).toBe(true);
    expect(sameJson(undefined, undefined)).toBe(true);
  });

  it('is false where any writer may write the two differently', () => {
    expect(sameJson({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(false);
    expect(sameJson({ a: 0 }, { a: -0 })).toBe(false);
    expect(sameJson(0, -0)).toBe(false);
    expect(sameJson([], {})).toBe(false);
    expect(sameJson({}, [])).toBe(false);
    expect(sameJson([1, 2], [1])).toBe(false);
    expect(sameJson({ a: 1 }, { a: 1, b: undefined } as unknown as Json)).toBe(false);
    expect(sameJson({ a: '1' }, { a: 1 })).toBe(false);
    expect(sameJson(null, {})).toBe(false);
    // Kept number texts are not compared: different containers holding them are never the same.
    const one = parseJsonAsNative('{"a":1.0}')!.value;
    const other = parseJsonAsNative('{"a":1}')!.value;
    expect(sameJson({ x: one }, { x: other })).toBe(false);
    expect(sameJson({ x: one }, { x: one })).toBe(true);
  });
});

describe('sortPayload', () => {
  const types: FieldTypes = { fields: { payload: { fields: {} } as FieldTypes } };
  it('returns a sorted payload itself, notes it in the set, and the writer given the set still writes it as native does', () => {
    const plain = { a: 1, b: [0.5, 'x'] };
    const noted = new Set<object>();
    expect(sortPayload(plain, noted)).toBe(plain);
    expect(noted.has(plain)).toBe(true);
    expect(sortPayload(plain, noted)).toBe(plain);
    expect(toRustJson({ payload: plain, cost: 2 }, { fieldTypes: { fields: { cost: 'f64' } }, plain: noted })).toBe('{"payload":{"a":1,"b":[0.5,"x"]},"cost":2.0}');
  });
  it('sorts an unsorted payload, and leaves sorted payloads whose numbers or keys JSON.stringify writes differently to the exact writer', () => {
    const noted = new Set<object>();
    expect(JSON.stringify(sortPayload({ b: 1, a: 2 }, noted))).toBe('{"a":2,"b":1}');
    const awkward = { a: 3e-6, b: 4294967296 };
    expect(sortPayload(awkward, noted)).toBe(awkward);
    expect(toRustJson({ payload: awkward }, { fieldTypes: types, plain: noted })).toBe('{"payload":{"a":3e-6,"b":4294967296.0}}');
    const indexKeys = { '10': 1, '9': 2 } as Json;
    sortPayload(indexKeys, noted);
    expect(toRustJson({ payload: indexKeys }, { fieldTypes: types, plain: noted })).toBe('{"payload":{"10":1,"9":2}}');
    const parsed = parseJsonAsNative('{"a":1.0,"b":9007199254740993}')!.value;
    expect(sortPayload(parsed, noted)).toBe(parsed);
    expect(toRustJson({ payload: parsed }, { fieldTypes: types, plain: noted })).toBe('{"payload":{"a":1.0,"b":9007199254740993}}');
    expect(noted.size).toBe(0);
  });
});

describe('toRustJson with one integral f64', () => {
  it('writes the parts without one as JSON.stringify does and the part holding it with native number text, compact and pretty', () => {
    const step: FieldTypes = { fields: { id: 'integer', extra: { fields: { invocation: { fields: { start: 'f64' } } } } } };
    const types: FieldTypes = { fields: { steps: { items: step } } };
    const document = { steps: [{ id: 1, extra: { invocation: { start: 1.5 }, payload: { n: 2 } } }, { id: 2, extra: { invocation: { start: 1796214873 }, payload: [0.25] } }] };
    expect(toRustJson(document, { fieldTypes: types })).toBe(
      '{"steps":[{"id":1,"extra":{"invocation":{"start":1.5},"payload":{"n":2}}},{"id":2,"extra":{"invocation":{"start":1796214873.0},"payload":[0.25]}}]}',
    );
    expect(toRustJson(document, { fieldTypes: types, pretty: true })).toBe(JSON.stringify(document, null, 2).replace('1796214873', '1796214873.0'));
  });
});
