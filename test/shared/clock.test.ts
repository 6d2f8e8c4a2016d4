import { describe, expect, it } from 'vitest';
import { formatTimestamp, nowMicros, parseTimestamp } from '../../src/shared/clock.ts';

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
