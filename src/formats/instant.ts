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
  if (typeof value === 'string') {
    const utc = parseUtc(value);
    if (utc !== undefined) return utc;
  }
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

/**
 * The common case of `parseInstant`, without a regex or a `Date`: a UTC
 * stamp (`Z` or `+00:00`) with a four-digit year from 1000 and fields in
 * range, as every relay writes them. Anything else is left to the general
 * parser (`undefined`), so both always agree.
 */
function parseUtc(value: string): Instant | undefined {
  return readUtc(value, UTC) ? { seconds: UTC.seconds, nanos: UTC.nanos } : undefined;
}

/** What `readUtc` read from a stamp. */
interface UtcStamp {
  seconds: number;
  nanos: number;
  /**
   * The stamp is chrono's `to_rfc3339()` text of its instant, so
   * `formatInstant(parseInstant(value))` is `value`: `+00:00`, a real date,
   * and 0, 3, 6 or 9 fraction digits, the fewest that keep the value.
   */
  chrono: boolean;
}

/** `readUtc`'s answer, reused from stamp to stamp. */
const UTC: UtcStamp = { seconds: 0, nanos: 0, chrono: false };

/**
 * `parseUtc` into `into`, which also learns whether the text is chrono's
 * own, from the same reading (a trajectory reads every event's stamp).
 * False when `parseUtc` would give `undefined`.
 */
function readUtc(value: string, into: UtcStamp): boolean {
  const length = value.length;
  if (length < 20) return false;
  const year = digits(value, 0, 4);
  const month = digits(value, 5, 2);
  const day = digits(value, 8, 2);
  const hour = digits(value, 11, 2);
  const minute = digits(value, 14, 2);
  const second = digits(value, 17, 2);
  if (
    year < 1000 ||
    month < 1 ||
    month > 12 ||
    day < 1 ||
    day > 31 ||
    hour > 23 ||
    minute > 59 ||
    second > 59 ||
    value.charCodeAt(4) !== 45 ||
    value.charCodeAt(7) !== 45 ||
    value.charCodeAt(10) !== 84 ||
    value.charCodeAt(13) !== 58 ||
    value.charCodeAt(16) !== 58
  ) {
    return false;
  }
  let at = 19;
  let nanos = 0;
  if (value.charCodeAt(at) === 46) {
    let scale = 100_000_000;
    for (at++; at < length; at++) {
      const code = value.charCodeAt(at);
      if (code < 48 || code > 57) break;
      nanos += (code - 48) * scale;
      scale = Math.floor(scale / 10);
    }
    if (at === 20) return false;
  }
  const rest = length - at;
  const offset = rest === 6 && value.endsWith('+00:00');
  if (!(rest === 1 && value.charCodeAt(at) === 90) && !offset) return false;
  // Days from 1970-01-01 (proleptic Gregorian); a day past the month's end runs on into the next month, as in Date.UTC.
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const days = era * 146_097 + yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear - 719_468;
  into.seconds = days * 86_400 + hour * 3600 + minute * 60 + second;
  into.nanos = nanos;
  // chrono writes `+00:00`, a real date, and 0, 3, 6 or 9 fraction digits, the fewest that keep the value.
  const fraction = at === 19 ? 0 : at - 20;
  into.chrono =
    offset &&
    (fraction === 0 || ((fraction === 3 || fraction === 6 || fraction === 9) && !value.endsWith('000+00:00'))) &&
    day <= daysInMonth(year, month);
  return true;
}

/** The decimal number of `count` ASCII digits at `at`, or -1. */
function digits(value: string, at: number, count: number): number {
  let number = 0;
  for (let i = at; i < at + count; i++) {
    const code = value.charCodeAt(i);
    if (code < 48 || code > 57) return -1;
    number = number * 10 + code - 48;
  }
  return number;
}

/**
 * `formatInstant(instant)` for the instant parsed from `value`: `value`
 * itself when it already is chrono's text (every stamp a relay wrote),
 * which spares formatting every event of a trajectory anew.
 */
export function rfc3339Of(value: unknown, instant: Instant): string {
  return typeof value === 'string' && readUtc(value, UTC) && UTC.chrono ? value : formatInstant(instant);
}

/**
 * `parseInstant` and `rfc3339Of` of one stamp, reading its text once: the
 * instant (undefined when it does not parse) and native's text of it, set
 * on `into`. Reading a trajectory's events does this for every event.
 */
export function readStamp(value: unknown, into: { instant: Instant | undefined; text: string }): void {
  if (typeof value === 'string' && readUtc(value, UTC)) {
    const utc = { seconds: UTC.seconds, nanos: UTC.nanos };
    into.instant = utc;
    into.text = UTC.chrono ? value : formatInstant(utc);
    return;
  }
  const instant = parseInstant(value);
  into.instant = instant;
  into.text = instant === undefined ? String(value) : rfc3339Of(value, instant);
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
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
