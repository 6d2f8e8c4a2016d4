// The credential-header rule (src/shared/credential-headers.ts): the plugin's
// walk over every payload, and the same rule inside toJson's copy
// (`withoutCredentialHeaders`), which a backend that drops the headers itself
// uses instead of the walk. The copy must give exactly what the walk and then
// the copy give, for every value.
import { describe, expect, it } from 'vitest';
import { withoutSensitiveHeaders } from '../../src/shared/credential-headers.ts';
import { JSON_LIMITS, toJson, type ToJsonOptions } from '../../src/shared/json.ts';
import { seededRandom } from '../support/seeded-random.ts';
import { valueWithHeaders } from '../support/header-values.ts';

describe('withoutSensitiveHeaders', () => {
  it('drops credential headers under a headers key in any case, and leaves ids of the same length alone', () => {
    const payload = {
      task_id: { authorization: 'kept: not a headers object' },
      turn_id: 't1',
      Headers: { Authorization: 'Bearer a', 'X-Team': 'agents' },
      nested: [{ HEADERS: { cookie: 'c', accept: 'json' } }, { hEaDeRs: { 'x-api-key': 'k' } }],
    };
    const cleaned = withoutSensitiveHeaders(payload);
    expect(cleaned).toEqual({
      task_id: { authorization: 'kept: not a headers object' },
      turn_id: 't1',
      Headers: { 'X-Team': 'agents' },
      nested: [{ HEADERS: { accept: 'json' } }, { hEaDeRs: {} }],
    });
    expect(payload.Headers).toEqual({ Authorization: 'Bearer a', 'X-Team': 'agents' });
    const plain = { task_id: 'a', turn_id: 'b', request: { headers: { accept: 'json' } } };
    expect(withoutSensitiveHeaders(plain)).toBe(plain);
  });

  it('drops credentials from headers in every form a program holds them in, copying only on a change', () => {
    const pairs = [['Authorization', 'Bearer a'], ['accept', 'json']];
    const flat = ['x-api-key', 'k', 'accept', 'json'];
    const har = [{ name: 'Cookie', value: 'c' }, { name: 'accept', value: 'json' }];
    const map = new Map([['Proxy-Authorization', 'p'], ['accept', 'json']]);
    const text = 'Authorization: Bearer a\r\naccept: json\r\n';
    const fetchHeaders = new Headers({ authorization: 'Bearer a', accept: 'json' });
    fetchHeaders.append('__proto__', 'a valid header name');
    const cleaned = withoutSensitiveHeaders({ a: { headers: pairs }, b: { headers: flat }, c: { headers: har }, d: { headers: map }, e: { headers: text }, f: { headers: fetchHeaders } });
    expect(cleaned.a.headers).toEqual([['accept', 'json']]);
    expect(cleaned.b.headers).toEqual(['accept', 'json']);
    expect(cleaned.c.headers).toEqual([{ name: 'accept', value: 'json' }]);
    expect([...(cleaned.d.headers as Map<string, string>)]).toEqual([['accept', 'json']]);
    expect(cleaned.e.headers).toBe('accept: json\r\n');
    // A Headers keeps its entries behind methods: recorded as a plain object of them.
    expect(Object.getPrototypeOf(cleaned.f.headers)).toBe(Object.prototype);
    expect(Object.entries(cleaned.f.headers)).toEqual([['__proto__', 'a valid header name'], ['accept', 'json']]);
    // The host's own values are untouched.
    expect(pairs).toHaveLength(2);
    expect(map.size).toBe(2);
    // Nothing to drop: the same values come back, no copy.
    const clean = { headers: [['accept', 'json']], other: { headers: 'accept: json' }, list: { headers: ['accept', 'json'] } };
    expect(withoutSensitiveHeaders(clean)).toBe(clean);
    // Text that is not under a headers key is never read as headers.
    const prose = { note: 'Authorization: Bearer kept, not a headers value' };
    expect(withoutSensitiveHeaders(prose)).toBe(prose);
  });

  it('cleans class instances and null-prototype objects, and never turns an inherited key into an own one', () => {
    class Request {
      headers = { Cookie: 'c', accept: 'json' };
    }
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { headers: { 'api-key': 'k', accept: 'json' } });
    expect(withoutSensitiveHeaders({ request: new Request(), bare })).toEqual({ request: { headers: { accept: 'json' } }, bare: { headers: { accept: 'json' } } });
    // A host that gave Object.prototype an enumerable key: the walk sees it, the cleaned copy does not gain it.
    const proto = Object.prototype as Record<string, unknown>;
    proto.polluted = { headers: { authorization: 'x' } };
    try {
      const payload = { request: { headers: { authorization: 'y', accept: 'json' } } };
      const cleaned = withoutSensitiveHeaders(payload);
      expect(Object.keys(cleaned)).toEqual(['request']);
      expect(Object.keys(cleaned.request.headers)).toEqual(['accept']);
      const untouched = { a: 1 };
      expect(withoutSensitiveHeaders(untouched)).toBe(untouched);
    } finally {
      delete proto.polluted;
    }
  });
});

describe("toJson's withoutCredentialHeaders: what the walk and then the copy give, in one walk", () => {
  /** The copy with the option against the walk followed by the copy without it, key order included. */
  const same = (value: unknown, options: ToJsonOptions = {}) => {
    const once = toJson(value, { ...options, withoutCredentialHeaders: true });
    const twice = toJson(withoutSensitiveHeaders(value), options);
    expect(once).toStrictEqual(twice);
    expect(JSON.stringify(once)).toBe(JSON.stringify(twice));
    return once;
  };
  // The plain copy, sorted as the memory relay copies, native's (NUL-free keys), and a bound that takes the general walk.
  const OPTIONS: ToJsonOptions[] = [{}, { sortKeys: true }, { maxDepth: 64, noNulInKeys: true }, { sortKeys: true, maxItems: JSON_LIMITS.maxItems + 1 }];

  it('on 2,000 generated values, headers in every form at any depth, with each of the copies the backends make', () => {
    const next = seededRandom(42);
    let dropped = 0;
    for (let i = 0; i < 2000; i++) {
      const value = valueWithHeaders(next);
      for (const options of OPTIONS) {
        const copied = JSON.stringify(same(value, options));
        if (options === OPTIONS[0] && /Bearer|"(k|c|s|g|p)"/.test(JSON.stringify(toJson(value))) && !/Bearer a|"x-api-key"|"cookie"/i.test(copied)) dropped += 1;
      }
    }
    // The generated values did carry credentials, and the copies dropped them.
    expect(dropped).toBeGreaterThan(100);
  });

  it('gives the same from the copy generated for a key list seen often, with a headers key below it', () => {
    // 40 rounds pass the point where a key list gets a generated copy (json.ts, "generated copies").
    for (let round = 0; round < 40; round++) {
      const value = { session_id: 's', turn: round, request: { method: 'POST', headers: round % 2 === 0 ? { authorization: 'Bearer a', accept: 'json' } : [['cookie', 'c']] }, body: { a: [1, { headers: { 'api-key': 'k' } }] } };
      for (const options of OPTIONS) expect(JSON.stringify(same(value, options))).not.toMatch(/Bearer|cookie|api-key/);
    }
  });

  it('reads a payload with no headers key once, and never copies a credential a getter hands out on a second read', () => {
    let reads = 0;
    const payload = {
      model: 'm',
      get request() {
        reads += 1;
        // Clean on the first read, credentials on every later one.
        return reads === 1 ? { body: 'hi' } : { headers: { authorization: 'Bearer late' } };
      },
    };
    expect(toJson(payload, { withoutCredentialHeaders: true })).toStrictEqual({ model: 'm', request: { body: 'hi' } });
    expect(reads).toBe(1);
  });

  it('leaves primitives and payloads without credentials as the plain copy has them', () => {
    for (const value of ['Authorization: x', 3, null, undefined, { headers: { accept: 'json' } }, [{ a: 1 }]]) {
      for (const options of OPTIONS) expect(toJson(value, { ...options, withoutCredentialHeaders: true })).toStrictEqual(toJson(value, options));
    }
  });
});
