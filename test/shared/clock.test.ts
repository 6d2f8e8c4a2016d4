import { describe, expect, it } from 'vitest';
import { createClock, formatTimestamp, nowMicros, parseTimestamp } from '../../src/shared/clock.ts';

/**
 * A machine whose wall clock reads `wall` µs (moved by the test) and whose
 * monotonic clock started at `start` µs of wall time, with a time origin
 * `originError` µs off the wall clock: what a fresh Node process can start with.
 */
function machine(originError: number, start = 1_795_964_369_000_000) {
  // `wall` is true time; `set` is how far someone set the wall clock off it (the monotonic clock does not see that).
  const state = { wall: start + 123_456, start, set: 0, seed: 7 };
  const clock = createClock({
    monotonicMs: () => (state.wall - state.start) / 1000,
    wallMs: () => Math.floor((state.wall + state.set) / 1000),
    origin: (state.start + originError) / 1000,
  });
  /** Moves the wall clock on by 1 to 97 µs, irregularly, as the time between a host's events is. */
  const tick = () => {
    state.seed = (state.seed * 1_103_515_245 + 12_345) % 2 ** 31;
    state.wall += 1 + (state.seed % 97);
  };
  return { state, clock, tick };
}

describe('microsecond clock', () => {
  it('never returns the same reading twice', () => {
    let previous = nowMicros();
    for (let i = 0; i < 10_000; i++) {
      const next = nowMicros();
      expect(next).toBeGreaterThan(previous);
      previous = next;
    }
  });

  it('tracks wall time', () => {
    expect(Math.abs(nowMicros() / 1000 - Date.now())).toBeLessThan(5_000);
  });

  it('settles on the wall clock when the time origin is milliseconds off', () => {
    // Native stamps managed spans with the wall clock: ours must agree, or an event emitted just before such a span sorts after it.
    for (const originError of [18_000, -18_000, 700, -3]) {
      const { state, clock, tick } = machine(originError);
      // The first reading is already within the millisecond Date.now() allows.
      const first = clock();
      expect(first - state.wall, `origin off by ${originError} µs`).toBeLessThan(1_000);
      expect(first - state.wall).toBeGreaterThan(-1_000);
      // Readings at different points of the millisecond narrow it down to a few microseconds (a 20 ms run of readings here);
      // native's managed spans follow the events before them by tens of microseconds at the least.
      const errors: number[] = [];
      for (let i = 0; i < 400; i++) {
        tick();
        errors.push(clock() - state.wall);
      }
      expect(Math.max(...errors.slice(-100).map(Math.abs)), `origin off by ${originError} µs`).toBeLessThanOrEqual(5);
    }
  });

  it('follows the wall clock when it is set, and never repeats or goes back', () => {
    const { state, clock, tick } = machine(5_000);
    for (let i = 0; i < 200; i++) {
      tick();
      clock();
    }
    state.set += 2_000_000; // set forward by 2 s
    for (let i = 0; i < 200; i++) {
      tick();
      clock();
    }
    expect(Math.abs(clock() - (state.wall + state.set))).toBeLessThanOrEqual(5);
    const before = clock();
    state.set -= 3_000; // set back by 3 ms: readings keep increasing until the wall clock passes them, then follow it
    let previous = before;
    for (let i = 0; i < 400; i++) {
      tick();
      const reading = clock();
      expect(reading).toBeGreaterThan(previous);
      previous = reading;
    }
    expect(Math.abs(previous - (state.wall + state.set))).toBeLessThanOrEqual(5);
  });

  it('keeps true durations when the wall clock is set back by more than a second', () => {
    const { state, clock, tick } = machine(0);
    for (let i = 0; i < 200; i++) {
      tick();
      clock();
    }
    state.set -= 60_000_000; // set back by a minute
    const start = clock();
    state.wall += 250; // a 250 µs span, the monotonic clock moving with it
    const end = clock();
    // Following the wall clock back would have frozen the clock: every reading 1 µs after the last.
    expect(end - start).toBeGreaterThanOrEqual(249);
    expect(end - start).toBeLessThanOrEqual(251);
  });

  it('formats like the native relay: no fraction, milliseconds or microseconds', () => {
    expect(formatTimestamp(1_700_000_000_000_000)).toBe('2023-11-14T22:13:20+00:00');
    expect(formatTimestamp(1_700_000_000_500_000)).toBe('2023-11-14T22:13:20.500+00:00');
    expect(formatTimestamp(1_795_964_369_157_292)).toBe('2026-11-29T14:59:29.157292+00:00');
    expect(formatTimestamp(1_795_964_369_000_010)).toBe('2026-11-29T14:59:29.000010+00:00');
  });

  it('parses RFC 3339 at any precision and integer microseconds', () => {
    expect(parseTimestamp('2026-11-29T14:59:29.157292+00:00')).toBe(1_795_964_369_157_292);
    expect(parseTimestamp('2026-11-29T14:59:29.160184956+00:00')).toBe(1_795_964_369_160_184);
    expect(parseTimestamp('2023-11-14T22:13:20Z')).toBe(1_700_000_000_000_000);
    expect(parseTimestamp('2023-11-14T23:13:20.5+01:00')).toBe(1_700_000_000_500_000);
    expect(parseTimestamp(42)).toBe(42);
    expect(parseTimestamp('yesterday')).toBeNaN();
    expect(parseTimestamp(1.5)).toBeNaN();
  });

  it('round-trips its own format', () => {
    const now = nowMicros();
    expect(parseTimestamp(formatTimestamp(now))).toBe(now);
  });
});
