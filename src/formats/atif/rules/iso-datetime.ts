/**
 * Whether a timestamp is one Harbor accepts: Harbor replaces `Z` with
 * `+00:00` and hands the text to Python's `datetime.fromisoformat`, which
 * (since Python 3.11) reads most of ISO 8601: basic or extended dates, ISO
 * week dates, any one-character date/time separator, hours alone, `.` or
 * `,` before a fraction, and offsets of hours, minutes and seconds. It does
 * not read ordinal dates, reduced dates (`2025-10`), or a lowercase `z`.
 *
 * @module
 */

const DATE_EXTENDED = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_BASIC = /^(\d{4})(\d{2})(\d{2})$/;
const WEEK = /^(\d{4})-?W(\d{2})(?:-?([1-7]))?$/;
const TIME = /^(\d{2})(?::?(\d{2})(?::?(\d{2})(?:[.,](\d+))?)?)?$/;
const OFFSET = /^[+-](\d{2})(?::?(\d{2})(?::?(\d{2})(?:[.,]\d+)?)?)?$/;

/** `true` when `datetime.fromisoformat(text.replace("Z", "+00:00"))` would return a datetime. */
export function isPythonIsoDatetime(text: string): boolean {
  const value = text.replaceAll('Z', '+00:00');
  const dateLength = dateLengthOf(value);
  if (dateLength === undefined) return false;
  if (!validDate(value.slice(0, dateLength))) return false;
  if (value.length === dateLength) return true;
  // Any single character separates the date from the time.
  const rest = value.slice(dateLength + 1);
  if (rest === '') return false;
  const offsetAt = rest.search(/[+-]/);
  const time = offsetAt === -1 ? rest : rest.slice(0, offsetAt);
  const offset = offsetAt === -1 ? undefined : rest.slice(offsetAt);
  const match = TIME.exec(time);
  if (match === null) return false;
  // A basic-format time comes in pairs of digits: HH, HHMM, HHMMSS.
  const [, hh, mm = '0', ss = '0'] = match;
  if (Number(hh) > 23 || Number(mm) > 59 || Number(ss) > 59) return false;
  if (offset === undefined) return true;
  const zone = OFFSET.exec(offset);
  return zone !== null && Number(zone[1]) <= 23 && Number(zone[2] ?? '0') <= 59 && Number(zone[3] ?? '0') <= 59;
}

/** How many leading characters form the date, trying the forms Python tries. */
function dateLengthOf(value: string): number | undefined {
  if (/^\d{4}-\d{2}-\d{2}/.test(value)) return 10;
  if (/^\d{4}-W\d{2}-[1-7]/.test(value)) return 10;
  if (/^\d{4}W\d{2}[1-7]/.test(value)) return 8;
  if (/^\d{4}-W\d{2}/.test(value)) return 8;
  if (/^\d{4}W\d{2}/.test(value)) return 7;
  if (/^\d{8}/.test(value)) return 8;
  return undefined;
}

function validDate(date: string): boolean {
  const week = WEEK.exec(date);
  if (week !== null) return Number(week[1]) >= 1 && Number(week[2]) >= 1 && Number(week[2]) <= weeksIn(Number(week[1]));
  const match = DATE_EXTENDED.exec(date) ?? DATE_BASIC.exec(date);
  if (match === null) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate() || (month === 2 && day === 29 && isLeap(year));
}

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/** ISO years have 53 weeks when they start on a Thursday, or on a Wednesday in a leap year. */
function weeksIn(year: number): number {
  const jan1 = new Date(Date.UTC(year, 0, 1)).getUTCDay();
  return jan1 === 4 || (jan1 === 3 && isLeap(year)) ? 53 : 52;
}
