/**
 * Native's deterministic OTLP ids and times: the trace id is the 32 hex
 * digits of the tree's propagation root uuid, a span id the low 64 bits of
 * the ATOF uuid, and times are the ATOF timestamps (microseconds).
 *
 * @module
 */

import type { HrTime } from './model.ts';

/** `01a2307e-6c26-7b21-b8f6-c45210d5b294` → `01a2307e6c267b21b8f6c45210d5b294`. */
export function traceIdOf(uuid: string): string {
  // Hot path: slicing the canonical form is cheaper than a regex.
  if (uuid.length === 36) return (uuid.slice(0, 8) + uuid.slice(9, 13) + uuid.slice(14, 18) + uuid.slice(19, 23) + uuid.slice(24)).toLowerCase();
  return uuid.replace(/-/g, '').toLowerCase();
}

/** The low 64 bits of a uuid as 16 hex digits. */
export function spanIdOf(uuid: string): string {
  if (uuid.length === 36) return (uuid.slice(19, 23) + uuid.slice(24)).toLowerCase();
  return traceIdOf(uuid).slice(16);
}

/**
 * An ATOF timestamp (integer epoch microseconds, or RFC 3339 with up to 9
 * fractional digits) as `HrTime`; null when it cannot be read.
 */
export function hrTimeOf(timestamp: string | number): HrTime | null {
  if (typeof timestamp === 'number') {
    if (!Number.isFinite(timestamp)) return null;
    const seconds = Math.floor(timestamp / 1e6);
    return [seconds, Math.round(timestamp - seconds * 1e6) * 1000];
  }
  const cached = timestamp.length === 32 && timestamp.endsWith('+00:00') ? fastUtc(timestamp) : null;
  if (cached !== null) return cached;
  const match = /^(.*?T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/i.exec(timestamp);
  if (match === null) return null;
  const millis = Date.parse(`${match[1]}${match[3]}`);
  if (!Number.isFinite(millis)) return null;
  const nanos = Number((match[2] ?? '').padEnd(9, '0'));
  return [Math.floor(millis / 1000), nanos];
}

let lastSecondText = '';
let lastSecond = 0;

/**
 * `YYYY-MM-DDTHH:MM:SS.ffffff+00:00`, the relay's own stamp: the seconds
 * part rarely changes between events, so its parse is reused.
 */
function fastUtc(timestamp: string): HrTime | null {
  if (timestamp.charCodeAt(19) !== 46 /* . */) return null;
  // The digits read in place: no slices for the common case of a second already parsed.
  let micros = 0;
  for (let i = 20; i < 26; i++) {
    const digit = timestamp.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return null;
    micros = micros * 10 + digit;
  }
  if (lastSecondText.length !== 19 || !timestamp.startsWith(lastSecondText)) {
    const secondText = timestamp.slice(0, 19);
    const millis = Date.parse(`${secondText}Z`);
    if (!Number.isFinite(millis)) return null;
    lastSecondText = secondText;
    lastSecond = millis / 1000;
  }
  return [lastSecond, micros * 1000];
}

/** `b - a` (both `HrTime`), never negative. */
export function hrDuration(a: HrTime, b: HrTime): HrTime {
  let seconds = b[0] - a[0];
  let nanos = b[1] - a[1];
  if (nanos < 0) {
    seconds -= 1;
    nanos += 1e9;
  }
  return seconds < 0 ? [0, 0] : [seconds, nanos];
}

/** Now, as `HrTime` (the log records' observed time). */
export function hrNow(): HrTime {
  const millis = Date.now();
  return [Math.floor(millis / 1000), (millis % 1000) * 1e6];
}
