// The object encoder's end metadata: start, end and status keys merged into
// one new object with the package's key order, whether the merge is worked
// out afresh, taken from a plan made for the same key lists, or built by the
// plan's generated literal (after repeated use), never the keys or values of
// another combination of lists.
import { describe, expect, it } from 'vitest';
import { llmEndMetadata, mergeMetadata, withKeys } from '../../../src/backends/memory/encode/metadata.ts';
import { compareKeys, defineKey, type Json, type JsonObject } from '../../../src/shared/json.ts';
import { seededRandom } from '../../support/seeded-random.ts';

const KEYS = ['api_mode', 'model', 'otel.status_code', 'otel.status_description', 'session_id', 'status', 'turn_id', 'a"b', 'é', '__proto__', '7', '10'];

/** A relay-style copy: keys in the package's order, as `copyPayload` leaves them. */
function layer(next: () => number, keys: readonly string[]): JsonObject {
  const out: JsonObject = {};
  for (const key of [...keys].sort(compareKeys)) defineKey(out, key, next() < 0.2 ? { n: Math.floor(next() * 10) } : `v${Math.floor(next() * 100)}`);
  return out;
}

/** The merge written plainly: later layers win, `omit` only from the last, keys sorted. */
function expected(layers: readonly JsonObject[], omit?: string): JsonObject {
  const values = new Map<string, Json>();
  layers.forEach((one, l) => {
    for (const key of Object.keys(one)) if (key !== omit || l === layers.length - 1) values.set(key, one[key]!);
  });
  const out: JsonObject = {};
  for (const key of [...values.keys()].sort(compareKeys)) defineKey(out, key, values.get(key)!);
  return out;
}

function same(actual: Json, wanted: JsonObject): void {
  expect(Object.keys(actual as JsonObject)).toEqual(Object.keys(wanted));
  for (const key of Object.keys(wanted)) expect((actual as JsonObject)[key]).toBe(wanted[key]);
  expect(Object.getPrototypeOf(actual)).toBe(Object.prototype);
}

describe('end metadata merged from start and end', () => {
  it('gives the plain merge for every combination of key lists, however often each is met', () => {
    const next = seededRandom(21);
    // A few combinations of key lists met over and over (as a host's hook kinds are), some seen once.
    const shapes = Array.from({ length: 40 }, () => [0, 1].map(() => KEYS.filter(() => next() < 0.4)));
    for (let call = 0; call < 1500; call++) {
      const [startKeys, endKeys] = shapes[call < 1200 ? Math.floor(next() * 8) : Math.floor(next() * shapes.length)]!;
      const start = layer(next, startKeys!);
      const end = layer(next, endKeys!);
      const merged = mergeMetadata(start, end);
      same(merged, expected([start, end]));
      expect(merged).not.toBe(start);
      expect(merged).not.toBe(end);
      const status = next() < 0.5;
      same(llmEndMetadata(start, end, status), expected([start, end, { 'otel.status_code': status ? 'ERROR' : 'OK' }], 'otel.status_description'));
      same(withKeys(start, { 'otel.status_code': 'OK' }), expected([start, { 'otel.status_code': 'OK' }]));
    }
  });
});
