/**
 * Typed errors of the native adapter, one class per failure kind.
 *
 * Every class extends `NativeRelayError` so a caller can catch the whole
 * family with one `instanceof`, and carries a literal `name` so logs and
 * `status()` stay readable after the error has been serialized.
 *
 * @module
 */

import type { ConfigDiagnostic } from '../src/backends/native-surface.ts';
import { InvalidPluginConfigError, PluginActivationBusyError, RelayError } from '../src/backends/native-surface.ts';

export { AtofExporterError, InvalidPluginConfigError, PluginActivationBusyError } from '../src/backends/native-surface.ts';

/** Base class of the errors only the native adapter throws (the contract's shared ones extend `RelayError`). */
export class NativeRelayError extends RelayError {
  override name: string = 'NativeRelayError';
}

/** Why `nemo-relay-node` could not be used. */
export type NativeUnavailableReason =
  /** The `nemo-relay-node` package is not installed (it is an optional peer dependency). */
  | 'module-missing'
  /** The package is installed but has no prebuilt binary for this platform. */
  | 'binary-missing'
  /** Deno refused a permission the napi loader needs (`--allow-ffi`, `--allow-read`, `--allow-sys`). */
  | 'permission-denied'
  /** The installed version is not one this adapter was written against. */
  | 'version-mismatch'
  /** The module loaded but lacks functions the adapter calls. */
  | 'missing-features'
  /** The module loaded but a first real call failed (e.g. Node 20.0-20.15: `process.getBuiltinModule is not a function`). */
  | 'probe-failed'
  /** Anything else thrown while loading. */
  | 'load-failed';

/** `loadNativeRelay()` could not load or accept the native binding. */
export class NativeUnavailableError extends NativeRelayError {
  /** The class name, kept after serialization (logs, `status()`). */
  override name = 'NativeUnavailableError' as const;
  /** Why the binding could not be used. */
  readonly reason: NativeUnavailableReason;

  /** Builds the error for `reason`, with the load error as `cause`. */
  constructor(reason: NativeUnavailableReason, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.reason = reason;
  }
}

/** A dynamic-plugin spec cannot be expressed or was rejected by native. */
export class DynamicPluginError extends NativeRelayError {
  /** The class name, kept after serialization (logs, `status()`). */
  override name = 'DynamicPluginError' as const;
  /** Native's diagnostics about the rejected plugin specs. */
  readonly diagnostics: ConfigDiagnostic[];

  /** Builds the error with native's diagnostics. */
  constructor(message: string, diagnostics: ConfigDiagnostic[] = [], options?: { cause?: unknown }) {
    super(message, options);
    this.diagnostics = diagnostics;
  }
}

