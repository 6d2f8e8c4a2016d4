// How relay payloads become OTLP attributes: one level spread under a prefix, nested values as JSON text.
import { describe, expect, it } from 'vitest';
import { spread, spreadTwice } from '../../src/export/otlp/attributes.ts';
import type { Attributes } from '../../src/export/otlp/model.ts';
import type { Json } from '../../src/shared/json.ts';

const PAYLOADS: (Json | undefined)[] = [
  { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], temperature: 0.2, stream: false, stop: null, nested: { a: { b: 1 } } },
  'plain text',
  42,
  true,
  null,
  undefined,
  [1, 'two'],
  {},
];

describe('OTLP attributes', () => {
  it('spreads a payload under two prefixes exactly as two spreads do, keys in the same order', () => {
    for (const payload of PAYLOADS) {
      const twice: Attributes = { before: 'x' };
      spreadTwice(twice, 'p.data', 'p.input', payload);
      const apart: Attributes = { before: 'x' };
      spread(apart, 'p.data', payload);
      spread(apart, 'p.input', payload);
      expect(Object.entries(twice)).toEqual(Object.entries(apart));
    }
  });

  it('reuses prefixed keys across spans and still builds keys past the cache bound', () => {
    const wide: { [key: string]: Json } = {};
    for (let i = 0; i < 600; i++) wide[`k${i}`] = i;
    const first: Attributes = {};
    const second: Attributes = {};
    spread(first, 'wide', wide);
    spread(second, 'wide', wide);
    expect(Object.keys(first)).toHaveLength(600);
    expect(first).toEqual(second);
    expect(first['wide.k599']).toBe(599);
  });
});
