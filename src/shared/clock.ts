/**
 * The microsecond clock every backend stamps events with.
 *
 * ATOF requires `end > start` strictly, and ATIF orders steps by timestamp.
 * `Date.now()` has millisecond resolution and can step backwards, so the
 * clock reads the monotonic `performance.now()` anchored to
 * `performance.timeOrigin` (wall time at process start) and never returns the
 * same value twice: a reading that does not advance is bumped by 1 µs.
 *
 * @module
 */

const origin = performance.timeOrigin;
let last = 0;

/** Current wall time in integer Unix microseconds, strictly increasing per process. */
export function nowMicros(): number {
  let now = Math.floor((origin + performance.now()) * 1000);
  if (now <= last) now = last + 1;
  last = now;
  return now;
}

/**
 * Formats Unix microseconds as RFC 3339 the way the native relay does
 * (chrono's automatic precision with a `+00:00` offset): no fraction for a
 * whole second, 3 digits for whole milliseconds, otherwise 6 digits.
 */
export function formatTimestamp(micros: number): string {
  const seconds = Math.floor(micros / 1_000_000);
  const fraction = micros - seconds * 1_000_000;
  const iso = new Date(seconds * 1000).toISOString(); // 2026-11-29T14:59:29.000Z
  const base = iso.slice(0, 19);
  if (fraction === 0) return `${base}+00:00`;
  if (fraction % 1000 === 0) return `${base}.${String(fraction / 1000).padStart(3, '0')}+00:00`;
  return `${base}.${String(fraction).padStart(6, '0')}+00:00`;
}

/**
 * Parses an RFC 3339 timestamp (any offset, up to nanosecond precision) or
 * integer epoch microseconds to Unix microseconds. Returns `NaN` when it
 * cannot be parsed.
 */
export function parseTimestamp(value: unknown): number {
  if (typeof value === 'number') return Number.isInteger(value) ? value : Number.NaN;
  if (typeof value !== 'string') return Number.NaN;
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/i.exec(value);
  if (!match) return Number.NaN;
  const [, base, fraction = '', offset] = match;
  const millis = Date.parse(`${base}${offset === 'z' ? 'Z' : offset}`);
  if (Number.isNaN(millis)) return Number.NaN;
  const micros = Number((fraction + '000000').slice(0, 6));
  return millis * 1000 + micros;
}
