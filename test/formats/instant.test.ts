import { describe, expect, it } from 'vitest';
import { formatInstant, parseInstant, readStamp, rfc3339Of, type Instant } from '../../src/formats/instant.ts';

const utcSeconds = (...parts: [number, number, number, number, number, number]) => Date.UTC(...parts) / 1000;

describe('parseInstant', () => {
  it.each([
    ['2026-11-29T17:20:40.206003+00:00', utcSeconds(2026, 10, 29, 17, 20, 40), 206_003_000],
    ['2026-11-29T17:20:40Z', utcSeconds(2026, 10, 29, 17, 20, 40), 0],
    ['2026-11-29T17:20:40.123456789123Z', utcSeconds(2026, 10, 29, 17, 20, 40), 123_456_789],
    ['2024-02-29T23:59:59.5+00:00', utcSeconds(2024, 1, 29, 23, 59, 59), 500_000_000],
    ['1970-01-01T00:00:00+00:00', 0, 0],
    ['1969-12-31T23:59:59.999Z', -1, 999_000_000],
    ['2026-02-31T00:00:00Z', utcSeconds(2026, 2, 3, 0, 0, 0), 0],
    ['2026-11-29t17:20:40z', utcSeconds(2026, 10, 29, 17, 20, 40), 0],
    ['2026-11-29 17:20:40.1+01:30', utcSeconds(2026, 10, 29, 15, 50, 40), 100_000_000],
    ['2026-11-29T23:59:60Z', utcSeconds(2026, 10, 30, 0, 0, 0), 0],
  ])('reads %s as the instant Date.UTC gives', (text, seconds, nanos) => {
    expect(parseInstant(text)).toEqual({ seconds, nanos });
  });

  it.each(['2026-11-29T17:20:40', '2026-11-29T17:20:40.Z', '2026-13-01T00:00:00Z', '2026-11-29T24:00:00Z', '2026-11-29T17:20:40+00:00 ', 'x'])(
    'rejects %s',
    (text) => {
      expect(parseInstant(text)).toBeUndefined();
    },
  );
});

describe('rfc3339Of', () => {
  it('gives back a stamp already in chrono form unchanged', () => {
    for (const text of ['2026-11-29T17:20:40.206003+00:00', '2026-11-29T17:20:40.206+00:00', '2026-11-29T17:20:40+00:00', '2024-02-29T00:00:00.000000001+00:00']) {
      expect(rfc3339Of(text, parseInstant(text)!)).toBe(text);
      expect(formatInstant(parseInstant(text)!)).toBe(text);
    }
  });

  it.each([
    ['2026-11-29T17:20:40.206000+00:00', '2026-11-29T17:20:40.206+00:00'],
    ['2026-11-29T17:20:40.000+00:00', '2026-11-29T17:20:40+00:00'],
    ['2026-11-29T17:20:40.2+00:00', '2026-11-29T17:20:40.200+00:00'],
    ['2026-11-29T17:20:40.206003000+00:00', '2026-11-29T17:20:40.206003+00:00'],
    ['2026-11-29T17:20:40Z', '2026-11-29T17:20:40+00:00'],
    ['2026-02-31T00:00:00+00:00', '2026-03-03T00:00:00+00:00'],
    ['2026-11-29T18:20:40+01:00', '2026-11-29T17:20:40+00:00'],
  ])('re-formats %s as native does: %s', (text, native) => {
    expect(rfc3339Of(text, parseInstant(text)!)).toBe(native);
  });

  it('formats an instant read from epoch microseconds', () => {
    expect(rfc3339Of(1_764_000_000_123_456, parseInstant(1_764_000_000_123_456)!)).toBe('2025-11-24T16:00:00.123456+00:00');
  });
});

describe('readStamp', () => {
  it('gives what parseInstant and rfc3339Of give, reading the text once', () => {
    const stamps: unknown[] = [
      '2026-11-29T17:20:40.206003+00:00', '2026-11-29T17:20:40.206+00:00', '2026-11-29T17:20:40+00:00', '2024-02-29T00:00:00.000000001+00:00',
      '2026-11-29T17:20:40.206000+00:00', '2026-11-29T17:20:40.000+00:00', '2026-11-29T17:20:40.2+00:00', '2026-11-29T17:20:40Z',
      '2026-02-31T00:00:00+00:00', '2026-02-29T00:00:00.123+00:00', '2026-11-29T18:20:40+01:00', '2026-11-29t17:20:40z', '2026-11-29T23:59:60Z',
      '2026-11-29T17:20:40', 'x', '', 1_764_000_000_123_456, 1.5, null, undefined, { t: 1 },
      '2026-11-29T17:20:40.123456000+00:00', '2026-11-29T17:20:40.1234567890123+00:00', '2026-11-29T17:20:40.+00:00', '2026-04-31T00:00:00+00:00',
      '1900-02-29T00:00:00+00:00', '2000-02-29T00:00:00.120+00:00', '2026-11-29T17:20:40.120000+00:00', '2026-11-29T17:20:40.123456Z',
    ];
    for (const value of stamps) {
      const read: { instant: Instant | undefined; text: string } = { instant: undefined, text: '' };
      readStamp(value, read);
      const instant = parseInstant(value);
      expect(read.instant).toEqual(instant);
      expect(read.text).toBe(instant === undefined ? String(value) : rfc3339Of(value, instant));
      // The shortcut (the stamp kept as it is) must give what formatting the instant gives.
      if (instant !== undefined) expect(read.text).toBe(formatInstant(instant));
    }
  });
});
