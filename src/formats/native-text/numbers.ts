/**
 * Native's number text: which numbers cross the binding as integers, and
 * the shortest round-trip f64 text serde writes.
 *
 * @module
 */



export const I32_MIN = -2147483648;
export const U32_MAX = 4294967295;

/** True when the binding hands `value` to Rust as an integer (an integer in the i32/u32 range). */
export function isNativeInteger(value: number): boolean {
  return Number.isInteger(value) && value >= I32_MIN && value <= U32_MAX;
}

/** Native's text of an `f64`: shortest round-trip digits, always a fraction or an exponent. */
export function formatF64(value: number): string {
  if (!Number.isFinite(value)) return 'null';
  if (value === 0) return Object.is(value, -0) ? '-0.0' : '0.0';
  const negative = value < 0;
  // toExponential() without an argument gives the shortest round-trip digits.
  const exponential = Math.abs(value).toExponential();
  const e = exponential.indexOf('e');
  const digits = exponential.slice(0, e).replace('.', '');
  const exponent = Number(exponential.slice(e + 1));
  const point = exponent + 1; // digits before the decimal point
  let text: string;
  if (point > -5 && point <= 16) {
    if (point <= 0) text = `0.${'0'.repeat(-point)}${digits}`;
    else if (digits.length <= point) text = `${digits}${'0'.repeat(point - digits.length)}.0`;
    else text = `${digits.slice(0, point)}.${digits.slice(point)}`;
  } else {
    const mantissa = digits.length === 1 ? digits : `${digits[0]}.${digits.slice(1)}`;
    text = `${mantissa}e${exponent < 0 ? '-' : '+'}${Math.abs(exponent)}`;
  }
  return negative ? `-${text}` : text;
}

/** Native's text of a payload number (one that crossed the binding). */
export function formatPayloadNumber(value: number): string {
  if (isNativeInteger(value)) return value === 0 ? '0' : String(value);
  return formatF64(value);
}

/** Native's text of a number in a field it types as an unsigned integer. */
export function formatIntegerField(value: number): string {
  if (Number.isSafeInteger(value)) return String(value);
  return Number.isInteger(value) ? BigInt(value).toString() : formatF64(value);
}

/** Orders keys like a Rust `BTreeMap<String, _>`: by UTF-8 bytes, i.e. by code point. */
