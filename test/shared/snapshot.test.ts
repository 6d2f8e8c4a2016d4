import { describe, expect, it } from 'vitest';
import { copyToQueue, copyToRecord, copyToRetry, isSnapshot, snapshotPayload } from '../../src/shared/snapshot.ts';
import { toJson } from '../../src/shared/json.ts';

describe('snapshotPayload', () => {
  it('copies own fields as plain JSON, dropping undefined, functions and symbols', () => {
    const copy = snapshotPayload({ session_id: 's', n: 1n, when: new Date(0), skip: undefined, fn: () => 1, sym: Symbol('x'), nested: { a: [1, undefined] } });
    expect(copy).toEqual({ session_id: 's', n: '1', when: '1970-01-01T00:00:00.000Z', nested: { a: [1, null] } });
    expect(isSnapshot(copy)).toBe(true);
    expect(isSnapshot({ session_id: 's' })).toBe(false);
  });

  it('reads the getters of a class-shaped payload, and ignores a top-level toJSON', () => {
    class Payload {
      readonly turn_id = 't1';
      get session_id(): string {
        return 'from-getter';
      }
      toJSON(): unknown {
        return {};
      }
    }
    // A getter's field is read by name, as the handlers read it, but is not data: the relay's copy of the live
    // payload has its own fields only, so a queued hook records what it would have recorded live.
    const copy = snapshotPayload(new Payload());
    expect(copy.session_id).toBe('from-getter');
    expect(JSON.parse(JSON.stringify(copy))).toEqual({ turn_id: 't1' });
    // A recorder writes it out as data, so a replay reads the field where the live plugin did.
    expect(JSON.parse(JSON.stringify(snapshotPayload(new Payload(), { derivedAsData: true })))).toEqual({ turn_id: 't1', session_id: 'from-getter' });
  });

  it('marks a field that throws instead of failing the copy', () => {
    const payload = Object.defineProperty({ session_id: 's' }, 'request', {
      enumerable: true,
      get() {
        throw new Error('boom');
      },
    });
    expect(snapshotPayload(payload)).toEqual({ session_id: 's', request: '[Unserializable: boom]' });
  });

  it('reads a payload whose fields cannot be listed by the hook fields\' names: the ids and readable fields kept, an unreadable one marked', () => {
    const target = { session_id: 's', tool_call_id: 'c1', tool_name: 'probe', args: { a: 1 }, not_a_hook_field: 'x' };
    const hostile = new Proxy(target, {
      ownKeys() {
        throw new Error('ownKeys trap');
      },
      get(object, key) {
        if (key === 'args' || key === 'result') throw new Error('get trap');
        return (object as Record<PropertyKey, unknown>)[key];
      },
    });
    // `result` threw too, but the payload has none: not a field of the copy.
    const expected = { session_id: 's', tool_call_id: 'c1', tool_name: 'probe', args: '[Unserializable: get trap]' };
    expect(snapshotPayload(hostile)).toEqual(expected);
    expect(copyToRecord(hostile)).toEqual(expected);
    expect(copyToRetry(copyToQueue(hostile))).toEqual(expected);
    expect(() => copyToQueue(hostile).args).toThrow('get trap');
  });

  it('keeps a __proto__ field as data, and answers for unreadable or non-object payloads', () => {
    const copy = snapshotPayload(JSON.parse('{"__proto__": {"polluted": true}, "session_id": "s"}'));
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(['__proto__', 'session_id']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const revocable = Proxy.revocable({}, {});
    revocable.revoke();
    for (const odd of [revocable.proxy, new Proxy({}, { ownKeys() { throw new Error('trap'); } }), null, 42, 'text', undefined]) {
      expect(snapshotPayload(odd)).toEqual({});
    }
  });
});

describe('the plugin\'s copies: what the relay would copy from the payload', () => {
  it('keeps a top-level toJSON\'s result as the data, and the fields to read by name', () => {
    const payload = { session_id: 's', turn_id: 't', toJSON: () => ({ summary: 'x' }) };
    for (const copy of [copyToRecord(payload), copyToQueue(payload)]) {
      expect(copy.turn_id).toBe('t');
      expect(toJson(copy)).toEqual({ summary: 'x' });
      expect(Object.keys(copy)).toEqual(['session_id', 'turn_id']);
    }
  });

  it('a queued copy throws again where the payload threw; its retry copy reads', () => {
    const error = new Error('no task');
    class Turn {
      readonly session_id = 's';
      get task_id(): string {
        throw error;
      }
    }
    const queued = copyToQueue(new Turn());
    expect(isSnapshot(queued)).toBe(false);
    expect(() => queued.task_id).toThrow(error);
    expect(Object.keys(queued)).toEqual(['session_id']);
    const retry = copyToRetry(queued);
    expect(isSnapshot(retry)).toBe(true);
    expect(retry.task_id).toBe('[Unserializable: no task]');
    expect(toJson(retry)).toEqual({ session_id: 's' });
    // A payload whose fields all read is queued as its plain copy.
    expect(isSnapshot(copyToQueue({ session_id: 's' }))).toBe(true);
  });
});
