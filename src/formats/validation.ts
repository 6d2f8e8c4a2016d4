/**
 * The diagnostic shape shared by the ATOF and ATIF validators.
 *
 * @module
 */

export interface ValidationError {
  /** JSON path of the offending value, e.g. `$.steps[2].tool_calls[0].arguments` or `$[12].timestamp`. */
  path: string;
  /** Stable machine-readable code, e.g. `atif.extra_field`. */
  rule: string;
  /** What is wrong, in one sentence. */
  message: string;
}

/** Appends a property to a JSON path, quoting names that are not identifiers. */
export function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}
