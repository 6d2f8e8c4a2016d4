/**
 * The contract's rules that every backend applies, written once. Each
 * backend encodes the results its own way (the memory relay as bytes or
 * sorted objects, the native adapter as native call arguments), but what the
 * rule says lives here.
 *
 * @module
 */

import { defineKey, isJsonObject, type Json, type JsonObject } from '../shared/json.ts';

// ---- file names ------------------------------------------------------------

/**
 * True for a name that stays inside its folder when joined to it: not
 * empty, no path separator of any platform, not `.` or `..`, no NUL. Both
 * backends refuse an ATOF file name that is not one (native's own check
 * was `path.basename(name) === name`, which let `..` and backslashes pass).
 * The rule itself is the package's one file-name rule in
 * `shared/safe-path.ts`, where the hook recorder (which may import only
 * shared/ and hooks/) and the CLI use it too; it is re-exported here so
 * backends find every shared rule in one place.
 */
export { isPlainFileName } from '../shared/safe-path.ts';

// ---- scope attribute flags ---------------------------------------------------

const NO_FLAGS: string[] = [];

/**
 * A scope's attribute flags as ATOF records them: the known ones, sorted and
 * de-duplicated. Unknown flags are dropped, as native's bitmask drops them;
 * a hostile array (a throwing Proxy) keeps the flags read before it threw.
 */
export function scopeAttributeFlags(attributes: unknown): string[] {
  return scopeAttributeNames(scopeAttributeMask(attributes));
}

/** The flags as native's bitmask (1 = parallel, 2 = relocatable), null for none. */
export function scopeAttributeMask(attributes: unknown): number | null {
  let mask = 0;
  try {
    if (!Array.isArray(attributes)) return null;
    for (const flag of attributes) {
      if (flag === 'parallel') mask |= 1;
      else if (flag === 'relocatable') mask |= 2;
    }
  } catch {
    // Keep the flags read so far.
  }
  return mask === 0 ? null : mask;
}

/** The sorted flag names of a bitmask. */
export function scopeAttributeNames(mask: number | null): string[] {
  if (mask === null || mask === 0) return NO_FLAGS;
  const names: string[] = [];
  if ((mask & 1) !== 0) names.push('parallel');
  if ((mask & 2) !== 0) names.push('relocatable');
  return names;
}

// ---- timestamps --------------------------------------------------------------

/**
 * An end timestamp strictly after its start: ATOF requires end > start, and
 * native writes whatever it is given (an equal or earlier stamp made an
 * invalid file), so both backends move such an end to start + 1 µs.
 */
export function endAfterStart(startUs: number, endUs: number): number {
  return endUs > startUs ? endUs : startUs + 1;
}

// ---- end metadata --------------------------------------------------------------

/** The status key native adds to a failed tool's or call's end metadata. */
export const STATUS_CODE_KEY = 'otel.status_code';
/** Where an error-ended tool's non-object metadata goes. */
export const NON_OBJECT_METADATA_KEY = 'metadata';

/**
 * End metadata of a tool ended with `status: 'error'`, before any merge with
 * its start metadata: the caller's metadata (an `error.type` it gives is
 * kept) with `otel.status_code: "ERROR"`; a non-object value goes under
 * `metadata`, null gives just the status. Nothing is inferred from the
 * result, so native and in-memory files stay identical. Keys in insertion
 * order (the status last unless the caller set it); backends sort.
 */
export function toolErrorEndMetadata(converted: Json): JsonObject {
  const out: JsonObject = {};
  if (isJsonObject(converted)) {
    for (const key in converted) defineKey(out, key, converted[key]!);
  } else if (converted !== null) {
    out[NON_OBJECT_METADATA_KEY] = converted;
  }
  out[STATUS_CODE_KEY] = 'ERROR';
  return out;
}

/**
 * Start metadata merged with end metadata, as native does: a shallow merge
 * (end wins) when both are objects, otherwise a non-null end value replaces
 * the start value, and a null end keeps the start. The result is a new
 * object (keys in merge order); neither input is changed.
 */
export function mergeEndMetadata(start: Json, end: Json): Json {
  if (end === null) return start;
  if (isJsonObject(start) && isJsonObject(end)) {
    const merged: JsonObject = {};
    for (const key in start) defineKey(merged, key, start[key]!);
    for (const key in end) defineKey(merged, key, end[key]!);
    return merged;
  }
  return end;
}
