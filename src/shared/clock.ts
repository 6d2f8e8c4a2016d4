/**
 * The microsecond clock every backend stamps events with.
 *
 * ATOF requires `end > start` strictly, and ATIF orders steps by timestamp.
 * `Date.now()` has millisecond resolution and can step backwards, so the
 * clock reads the monotonic `performance.now()` and never returns the same
 * value twice: a reading that does not advance is bumped by 1 µs.
 *
 * The monotonic reading is turned into wall time with an offset kept on the
 * wall clock. `performance.timeOrigin` alone is not enough: a fresh Node
 * process can start with it several milliseconds ahead of the wall clock,
 * and it stays off for the process's life. Native stamps its managed spans
 * with the wall clock itself, so an event of ours emitted just before such a
 * span sorted after it in native's files and trajectories (a tool call
 * losing its LLM step). Each reading therefore also reads `Date.now()`
 * before and after: the wall time at the monotonic reading lies between the
 * two millisecond readings (the second plus one millisecond), and the offset
 * is held inside every such window seen. The windows narrow as readings fall
 * at different points of the millisecond, so the clock settles on the wall
 * clock to within microseconds, without a calibration loop at start-up. A
 * window that no longer overlaps the ones before means the wall clock was
 * set: the clock follows it forward, as native's does, and back by up to a
 * second. A bigger step back is not followed: the clock never goes back, so
 * following it would stamp every event 1 µs after the last until the wall
 * clock caught up, and a span's duration would be lost rather than its
 * position against native's (see docs/known-limits.md).
 *
 * @module
 */

/** The largest step back of the wall clock the clock follows (ms). */
const MAX_STEP_BACK_MS = 1000;

/** Reads the clock needs; the defaults are the runtime's own (a test gives others). */
export interface ClockSources {
  /** Milliseconds since `origin`, monotonic (`performance.now()`). */
  monotonicMs(): number;
  /** Wall time in whole Unix milliseconds (`Date.now()`). */
  wallMs(): number;
  /** A first guess of the wall time at monotonic zero (`performance.timeOrigin`). */
  origin: number;
}

/** A clock over `sources`: `nowMicros` reads it. */
export function createClock(sources: ClockSources): () => number {
  // Wall time (ms) = offset + monotonic reading; [low, high) is where the readings so far put it.
  let offset = sources.origin;
  let low = Number.NEGATIVE_INFINITY;
  let high = Number.POSITIVE_INFINITY;
  let last = 0;
  let readings = 0;
  return () => {
    let monotonic: number;
    // The two wall readings cost more than the rest of a reading: every reading checks them while the window
    // narrows, then one in 256 (enough to notice the wall clock being set).
    if (++readings <= 4096 || (readings & 255) === 0) {
      const before = sources.wallMs();
      monotonic = sources.monotonicMs();
      const after = sources.wallMs();
      const lo = before - monotonic;
      const hi = after + 1 - monotonic;
      if (lo >= high || (hi <= low && low - hi <= MAX_STEP_BACK_MS)) {
        // The wall clock was set since the last check: start over from this window.
        low = lo;
        high = hi;
      } else if (hi <= low) {
        // Set back by more than MAX_STEP_BACK_MS: keep the offset (durations stay true).
      } else {
        if (lo > low) low = lo;
        if (hi < high) high = hi;
      }
      if (offset < low) offset = low;
      else if (offset >= high) offset = high - 0.001;
    } else {
      monotonic = sources.monotonicMs();
    }
    let now = Math.floor((offset + monotonic) * 1000);
    if (now <= last) now = last + 1;
    last = now;
    return now;
  };
}

const runtimeClock = createClock({ monotonicMs: () => performance.now(), wallMs: () => Date.now(), origin: performance.timeOrigin });

/** Current wall time in integer Unix microseconds, strictly increasing per process. */
export function nowMicros(): number {
  return runtimeClock();
}

/** Microseconds of 1970-04-27: a host clock's reading below it is most likely milliseconds (`Date.now()`) or seconds. */
const FIRST_LIKELY_MICROS = 1e13;

/**
 * A clock that never breaks an event: a caller's clock (integer Unix
 * microseconds) that throws or answers a non-number falls back to the
 * shared one; a fraction is cut to the microsecond. `onUnlikely` hears of
 * the first reading that looks like milliseconds or seconds (a 1970 date
 * as microseconds); the reading is kept, it is the caller's word.
 */
export function safeClock(clock: unknown, onUnlikely?: (reading: number) => void): () => number {
  if (typeof clock !== 'function') return nowMicros;
  let warn = onUnlikely;
  return () => {
    try {
      const now = (clock as () => unknown)();
      if (typeof now === 'number' && Number.isFinite(now)) {
        if (warn !== undefined && now < FIRST_LIKELY_MICROS) {
          const told = warn;
          warn = undefined;
          told(now);
        }
        return Math.floor(now);
      }
    } catch {
      // Fall back to the shared clock.
    }
    return nowMicros();
  };
}

/** What `safeClock`'s `onUnlikely` says of `reading`, for the option named `option`. */
export function unlikelyClockMessage(option: string, reading: number): string {
  return `${option} answered ${reading}, which as Unix microseconds is ${formatTimestamp(Math.floor(reading))}: a clock in milliseconds or seconds? (Date.now() * 1000 is microseconds); its readings are used as given`;
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
