/**
 * JSON text exactly as the native relay writes it (Rust `serde_json` over
 * the napi binding's values): the one place that knows native's number and
 * key rules, shared by the ATOF line writer and the ATIF builder.
 *
 * Rules, measured on `nemo-relay-node@0.9.2` in ATOF files, manual
 * `AtifExporter.exportJson()` text and plugin-managed ATIF files alike
 * (test/formats/native-text.test.ts):
 * - A number that crossed the binding stays an integer only when it is an
 *   integer in the i32/u32 range (-2^31 .. 2^32-1); every other number
 *   becomes an f64 (`formatPayloadNumber`). `-0` becomes `0`.
 * - An f64 is written with its shortest round-trip digits, always with a
 *   fraction or an exponent: decimal for 1e-5 <= |x| < 1e16 (`1.0`,
 *   `4294967296.0`, `0.00001`), else exponent notation with a sign
 *   (`1e+16`, `1.5e-6`) (`formatF64`). ATIF fields native types `f64`
 *   (costs, log probabilities, invocation timestamps) follow it too.
 * - ATIF fields native types as unsigned integers (token counts, step ids)
 *   are plain integers at any size.
 * - Numbers native parsed from JSON text itself (tool-call argument
 *   strings) follow serde's parser instead: an integer literal that fits
 *   i64/u64 stays an exact integer, any other literal is an f64 (`1.0`
 *   stays `1.0`). `parseJsonAsNative` remembers those texts for the writers.
 * - Object keys of payloads are in code-point (UTF-8 byte) order, where a
 *   JS object always lists integer-like keys (`"2"`, `"10"`) first; the
 *   writers sort such objects as they write them.
 *
 * The rules live in `native-text/`: `numbers.ts`, `keys.ts` (key order and
 * sorted copies), `write.ts` and `parse.ts`; what native's `trim` strips is
 * `shared/whitespace.ts` (the rust-regex reader and the redaction detectors
 * need it too), re-exported here.
 *
 * @module
 */

export { formatF64, formatPayloadNumber, isNativeInteger } from './native-text/numbers.ts';
export { setExactText, sortJson, stringifyMayDiffer } from './native-text/keys.ts';
export { canonicalJson, toRustJson, type FieldTypes, type NumberFieldType } from './native-text/write.ts';
export { parseJsonAsNative, parsedNumberText } from './native-text/parse.ts';
export { sameJson } from './native-text/same.ts';
export { isNativeBlank, nativeTrim } from '../shared/whitespace.ts';
