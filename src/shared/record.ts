/**
 * The one test for "an object a payload field can be read from": not null,
 * not an array. Shared so that every layer means the same by it.
 *
 * @module
 */

/** True for a non-null, non-array object (a class instance included), whose fields can be read by name. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
