/**
 * Generated payloads for the credential-header property tests: values with
 * `headers` keys in every case, at every position and depth, holding
 * headers in every form a program holds them in (with and without
 * credentials) and values that are not headers at all. Each test compares
 * dropping the headers inside a copy or writer against the plugin's walk
 * (`withoutSensitiveHeaders`) followed by the plain copy.
 */

/** Keys the generator uses: `headers` in three cases, near misses, ids of the same length, an integer-like key and a NUL. */
export const HEADER_TEST_KEYS = ['headers', 'Headers', 'HEADERS', 'request', 'a', 'task_id', 'headerz', 'authorization', '10', 'k\u0000nul'];

/** What a `headers` key may hold: every form, with and without credentials, and values that are not headers. */
export const HEADER_VALUES: readonly (() => unknown)[] = [
  () => ({ Authorization: 'Bearer a', accept: 'json' }),
  () => ({ accept: 'json' }),
  () => [['x-api-key', 'k'], ['accept', 'json']],
  () => ['cookie', 'c', 'accept', 'json'],
  () => [{ name: 'Set-Cookie', value: 's' }, { name: 'accept', value: 'json' }],
  () => new Map([['proxy-authorization', 'p'], ['accept', 'json']]),
  () => 'Authorization: Bearer a\r\naccept: json\r\n',
  () => new Headers({ 'x-goog-api-key': 'g', accept: 'json' }),
  () => 7,
  () => null,
];

const LEAVES: readonly (() => unknown)[] = [
  () => 'text',
  () => 'authorization: not under a headers key',
  () => 1.5,
  () => true,
  () => null,
  () => undefined,
  () => 12n,
  () => new Date('2026-01-02T03:04:05.000Z'),
  () =>
    new (class Request {
      headers = { cookie: 'c', accept: 'json' };
    })(),
  ...HEADER_VALUES,
];

/** One generated value (`next` a seeded generator, `test/support/seeded-random.ts`). */
export function valueWithHeaders(next: () => number, depth = 0): unknown {
  const roll = next();
  if (depth > 4 || roll < 0.4) return LEAVES[Math.floor(next() * LEAVES.length)]!();
  if (roll < 0.6) return Array.from({ length: Math.floor(next() * 4) }, () => valueWithHeaders(next, depth + 1));
  const object: Record<string, unknown> = next() < 0.1 ? Object.create(null) : {};
  const count = Math.floor(next() * 6);
  for (let i = 0; i < count; i++) {
    const key = HEADER_TEST_KEYS[Math.floor(next() * HEADER_TEST_KEYS.length)]!;
    object[key] = key.toLowerCase() === 'headers' ? HEADER_VALUES[Math.floor(next() * HEADER_VALUES.length)]!() : valueWithHeaders(next, depth + 1);
  }
  return object;
}
