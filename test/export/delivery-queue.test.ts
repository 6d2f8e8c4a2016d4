// The delivery queue every remote output sends through: order, retries and
// their waits (on a fake clock), and the rule that every item ends up
// counted exactly once as sent, failed or dropped.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createDeliveryQueue, type GiveUpReason } from '../../src/export/delivery/queue.ts';
import { ConnectionFailedError, HttpStatusError } from '../../src/export/delivery/errors.ts';
import { retryAfterMs } from '../../src/export/delivery/http.ts';

afterEach(() => {
  vi.useRealTimers();
});

function recorder() {
  const given: [number, GiveUpReason][] = [];
  return { given, onGiveUp: (item: number, reason: GiveUpReason) => given.push([item, reason]) };
}

describe('delivery queue', () => {
  it('sends items one at a time, in the order they were pushed', async () => {
    const seen: number[] = [];
    let inFlight = 0;
    let most = 0;
    const queue = createDeliveryQueue<number>({
      maxItems: 100,
      send: async (item) => {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 1));
        seen.push(item);
        inFlight--;
      },
      sizeOf: () => 10,
    });
    for (let i = 0; i < 20; i++) expect(queue.push(i)).toBe(true);
    expect(await queue.flush(10_000)).toBe(true);
    expect(seen).toEqual([...Array(20).keys()]);
    expect(most).toBe(1);
    expect(queue.counters()).toMatchObject({ pending: 0, sent: 20, failed: 0, dropped: 0, bytes: 200 });
  });

  it('waits out Retry-After before trying again, capped at maxDelayMs', async () => {
    vi.useFakeTimers();
    const attempts: number[] = [];
    const queue = createDeliveryQueue<string>({
      maxItems: 10,
      retry: { maxRetries: 2, initialDelayMs: 1, maxDelayMs: 5_000 },
      send: async () => {
        attempts.push(Date.now());
        if (attempts.length === 1) throw new HttpStatusError(503, 'x', 2_000);
        if (attempts.length === 2) throw new HttpStatusError(429, 'x', 60_000);
      },
    });
    queue.push('a');
    await vi.advanceTimersByTimeAsync(1_999);
    expect(attempts).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(attempts).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(4_999);
    expect(attempts).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(attempts).toHaveLength(3);
    expect(queue.counters()).toMatchObject({ sent: 1, attemptErrors: 2 });
  });

  it('backs off exponentially between retries of a connection failure, then gives up once', async () => {
    vi.useFakeTimers();
    const times: number[] = [];
    const { given, onGiveUp } = recorder();
    const queue = createDeliveryQueue<number>({
      maxItems: 10,
      retry: { maxRetries: 3, initialDelayMs: 1_000, maxDelayMs: 60_000 },
      send: async () => {
        times.push(Date.now());
        throw new ConnectionFailedError('refused');
      },
      onGiveUp,
    });
    const start = Date.now();
    queue.push(7);
    await vi.advanceTimersByTimeAsync(10_000);
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    expect(times[0]).toBe(start);
    // Each wait is between half and all of 1 s, 2 s, 4 s.
    expect(gaps).toHaveLength(3);
    gaps.forEach((gap, i) => {
      expect(gap).toBeGreaterThanOrEqual(500 * 2 ** i);
      expect(gap).toBeLessThanOrEqual(1_000 * 2 ** i);
    });
    expect(given).toEqual([[7, 'failed']]);
    expect(queue.counters()).toMatchObject({ sent: 0, failed: 1, dropped: 0, attemptErrors: 4 });
  });

  it('does not retry what will not get better (a 400, or an error that is not a delivery error)', async () => {
    const { given, onGiveUp } = recorder();
    let calls = 0;
    const queue = createDeliveryQueue<number>({
      maxItems: 10,
      send: async (item) => {
        calls++;
        if (item === 1) throw new HttpStatusError(400, 'x');
        if (item === 2) throw new TypeError('bug');
      },
      onGiveUp,
    });
    queue.push(1);
    queue.push(2);
    queue.push(3);
    await queue.flush(10_000);
    expect(calls).toBe(3);
    expect(given).toEqual([
      [1, 'failed'],
      [2, 'failed'],
    ]);
    expect(queue.counters()).toMatchObject({ sent: 1, failed: 2, dropped: 0 });
  });

  it('drops and counts what does not fit, and everything pushed after close', async () => {
    const { given, onGiveUp } = recorder();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const queue = createDeliveryQueue<number>({ maxItems: 2, send: () => gate, onGiveUp });
    expect([queue.push(1), queue.push(2), queue.push(3)]).toEqual([true, true, false]);
    release();
    await queue.close(1_000);
    expect(queue.push(4)).toBe(false);
    expect(given).toEqual([
      [3, 'dropped'],
      [4, 'dropped'],
    ]);
    const c = queue.counters();
    expect(c.sent + c.failed + c.dropped).toBe(4);
  });

  it('close() aborts the attempt in flight at its deadline and drops what is left', async () => {
    const { given, onGiveUp } = recorder();
    const queue = createDeliveryQueue<number>({
      maxItems: 10,
      send: (_item, signal) => new Promise<void>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
      onGiveUp,
    });
    queue.push(1);
    queue.push(2);
    await queue.close(20);
    expect(given).toEqual([
      [1, 'dropped'],
      [2, 'dropped'],
    ]);
    expect(queue.counters()).toMatchObject({ pending: 0, sent: 0, dropped: 2 });
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-12-01T10:00:00Z');
    expect(retryAfterMs('3', now)).toBe(3_000);
    expect(retryAfterMs('Tue, 01 Dec 2026 10:00:05 GMT', now)).toBe(5_000);
    expect(retryAfterMs('Tue, 01 Dec 2026 09:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs(null, now)).toBeUndefined();
  });
});
