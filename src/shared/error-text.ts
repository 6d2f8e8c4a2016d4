/**
 * The text of a thrown value, for logs, diagnostics and `status()`. Never
 * throws: a value whose `message` getter or `toString` throws (a hostile
 * payload, a revoked proxy) still yields a string.
 *
 * @module
 */

/** `error.message` for an Error, else `String(error)`; "unknown error" when neither can be read. */
export function errorMessage(error: unknown): string {
  try {
    return error instanceof Error ? error.message : String(error);
  } catch {
    return 'unknown error';
  }
}

/** `Name: message` for an Error (the class says what failed), else as `errorMessage`. */
export function errorWithName(error: unknown): string {
  try {
    return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  } catch {
    return 'unknown error';
  }
}
