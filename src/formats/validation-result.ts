/**
 * The diagnostic shape shared by the ATOF and ATIF validators, and the
 * result both return: the errors as an array (so `result.length === 0`
 * still means valid), with the warnings and the version read alongside.
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

/** A validator's verdict. The array itself holds the errors; an empty array means valid. */
export interface ValidationResult extends Array<ValidationError> {
  /** What makes the input invalid (the same items as the array). */
  readonly errors: ValidationError[];
  /** What a reader tolerates but a writer should fix; never makes the input invalid. */
  readonly warnings: ValidationError[];
  /** The format version the input declares (`atof_version`, or ATIF's `schema_version`), when it declares one. */
  readonly version: string | undefined;
}

/**
 * Wraps errors and warnings as a `ValidationResult`. The extra fields are not
 * enumerable, so callers comparing the result to an array of errors (the
 * shape before warnings existed) see exactly that array.
 */
export function validationResult(
  errors: readonly ValidationError[],
  warnings: readonly ValidationError[],
  version: string | undefined,
): ValidationResult {
  const result = [...errors] as ValidationError[];
  Object.defineProperties(result, {
    errors: { value: [...errors], enumerable: false },
    warnings: { value: [...warnings], enumerable: false },
    version: { value: version, enumerable: false },
  });
  return result as ValidationResult;
}

/** Appends a property to a JSON path, quoting names that are not identifiers. */
export function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** Collects what a validator finds: errors (the input is invalid) and warnings (worth fixing, still valid). */
export class Findings {
  readonly errors: ValidationError[] = [];
  readonly warnings: ValidationError[] = [];

  /** A rule the input must follow is broken. */
  error(path: string, rule: string, message: string): void {
    this.errors.push({ path, rule, message });
  }

  /** Something readers tolerate (a SHOULD, or input a reader repairs). */
  warn(path: string, rule: string, message: string): void {
    this.warnings.push({ path, rule, message });
  }
}
