/**
 * The errors of the relay contract, one class per failure kind, shared by
 * every backend: a caller (the plugin included) tells failures apart with
 * `instanceof`, whichever backend threw. Messages follow native's
 * `<kind>: <detail>` style, so code and logs that match on native's text
 * keep working.
 *
 * Only configuration calls throw or reject (exporter registration,
 * `initializePluginConfig`, dynamic plugins); event calls never do.
 *
 * @module
 */

import type { ConfigDiagnostic } from './contract.ts';

/** Base class of every error a relay backend throws or rejects with. */
export class RelayError extends Error {
  /** The class name, so logs and `error.name` checks tell the kind apart without `instanceof`. */
  override name: string = 'RelayError';
}

/**
 * A `plugins.toml` document rejected by validation or activation. The
 * message is native's (`invalid config: ...`); `diagnostics` holds every
 * diagnostic (errors first where the backend orders them), empty when the
 * backend only gave a message.
 */
export class InvalidPluginConfigError extends RelayError {
  /** The class name, so logs and `error.name` checks tell the kind apart without `instanceof`. */
  override name: string = 'InvalidPluginConfigError';
  /** Every diagnostic the backend reported for the document; empty when it gave only a message. */
  readonly diagnostics: readonly ConfigDiagnostic[];

  /** Wraps the backend's message and diagnostics; `cause` carries the native error when there is one. */
  constructor(message: string, diagnostics: readonly ConfigDiagnostic[], options?: { cause?: unknown }) {
    super(message, options);
    this.diagnostics = diagnostics;
  }
}

/** A second plugin activation while one is live (native allows one per process; close the first). */
export class PluginActivationBusyError extends RelayError {
  /** The class name, so logs and `error.name` checks tell the kind apart without `instanceof`. */
  override name: string = 'PluginActivationBusyError';

  /** Defaults to native's own conflict message, so text matches keep working across backends. */
  constructor(message = 'conflict: plugin configuration is owned by an active plugin activation; close it first', options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** An ATOF exporter could not be created: bad options (a file name that is not plain, a bad mode) or an unwritable location. */
export class AtofExporterError extends RelayError {
  /** The class name, so logs and `error.name` checks tell the kind apart without `instanceof`. */
  override name: string = 'AtofExporterError';
}
