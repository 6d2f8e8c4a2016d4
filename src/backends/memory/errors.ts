/**
 * Typed errors of the in-memory relay, one class per failure kind.
 *
 * Only configuration calls reject (`initializePluginConfig`); event calls
 * never throw. Messages follow native's `<kind>: <detail>` style so code
 * and logs that match on native's text keep working.
 *
 * @module
 */

import type { ConfigDiagnostic } from '../../relay/contract.ts';

/** Base class of the in-memory relay's errors. */
export class MemoryRelayError extends Error {
  /** The class name, kept after serialization (logs, `status()`). */
  override readonly name: string = 'MemoryRelayError';
}

/**
 * A `plugins.toml` document that fails validation. The message is native's
 * `invalid config: <error messages joined by "; ">` (or `invalid plugin
 * config: <detail>` for a document that does not have the expected shape);
 * `diagnostics` holds every diagnostic, warnings included.
 */
export class InvalidPluginConfigError extends MemoryRelayError {
  /** The class name, kept after serialization (logs, `status()`). */
  override readonly name = 'InvalidPluginConfigError' as const;
  /** What the validator found, errors first. */
  readonly diagnostics: readonly ConfigDiagnostic[];

  /** Builds the error with the validator's diagnostics. */
  constructor(message: string, diagnostics: readonly ConfigDiagnostic[]) {
    super(message);
    this.diagnostics = diagnostics;
  }
}

/** A second plugin activation while one is still active on the same relay (native: `conflict: ...`). */
export class PluginActivationConflictError extends MemoryRelayError {
  /** The class name, kept after serialization (logs, `status()`). */
  override readonly name = 'PluginActivationConflictError' as const;

  constructor() {
    super('conflict: plugin configuration is owned by an active plugin activation; close it first');
  }
}
