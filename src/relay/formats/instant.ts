/**
 * Nanosecond-precise ATOF timestamps for ordering and re-formatting.
 *
 * Native parses every event timestamp into a UTC instant and writes it back
 * with chrono's `to_rfc3339()`: `+00:00` offset and 0, 3, 6 or 9 fractional
 * digits, whichever is shortest without loss. Runtime-stamped events carry
 * nanoseconds, which do not fit a JS number next to the epoch seconds, so an
 * instant is kept as whole seconds plus nanoseconds.
 *
 * @module
 */

export interface Instant {
  /** Whole seconds since the Unix epoch (floor). */
  seconds: number;
  /** 0..999_999_999. */
  nanos: number;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})$/;

/** Parses an RFC 3339 string (any offset) or integer epoch microseconds. */
export function parseInstant(value: unknown): Instant | undefined {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) return undefined;
    const seconds = Math.floor(value / 1_000_000);
    return { seconds, nanos: (value - seconds * 1_000_000) * 1000 };
  }
  if (typeof value !== 'string') return undefined;
  const match = RFC3339.exec(value);
  if (match === null) return undefined;
  const [, y, mo, d, h, mi, s, fraction = '', offset = 'Z'] = match;
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return undefined;
  let millis = Date.UTC(Number(y), month - 1, day, hour, minute, second);
  if (offset !== 'Z' && offset !== 'z') {
    const sign = offset.startsWith('-') ? -1 : 1;
    millis -= sign * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(4, 6))) * 60_000;
  }
  if (Number.isNaN(millis)) return undefined;
  const nanos = Number((fraction + '000000000').slice(0, 9));
  return { seconds: millis / 1000, nanos };
}

/** Orders two instants. */
export function compareInstants(a: Instant, b: Instant): number {
  return a.seconds - b.seconds || a.nanos - b.nanos;
}

/** chrono's `DateTime<Utc>::to_rfc3339()`. */
export function formatInstant(instant: Instant): string {
  const base = new Date(instant.seconds * 1000).toISOString().slice(0, 19);
  const nanos = instant.nanos;
  if (nanos === 0) return `${base}+00:00`;
  if (nanos % 1_000_000 === 0) return `${base}.${String(nanos / 1_000_000).padStart(3, '0')}+00:00`;
  if (nanos % 1000 === 0) return `${base}.${String(nanos / 1000).padStart(6, '0')}+00:00`;
  return `${base}.${String(nanos).padStart(9, '0')}+00:00`;
}

/** chrono's `timestamp_millis() as f64 / 1000.0`: epoch seconds, millisecond precision. */
export function epochSecondsWithMillis(instant: Instant): number {
  return (instant.seconds * 1000 + Math.floor(instant.nanos / 1_000_000)) / 1000;
}
