/**
 * Typed errors of the native adapter, one class per failure kind.
 *
 * Every class extends `NativeRelayError` so a caller can catch the whole
 * family with one `instanceof`, and carries a literal `name` so logs and
 * `status()` stay readable after the error has been serialized.
 *
 * @module
 */

import type { ConfigDiagnostic } from '../src/backends/kit.ts';

/** Base class of every error the native adapter throws or rejects with. */
export class NativeRelayError extends Error {
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
  override name = 'NativeUnavailableError' as const;
  readonly reason: NativeUnavailableReason;

  constructor(reason: NativeUnavailableReason, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.reason = reason;
  }
}

/** A plugin-config document was rejected by native validation or activation. */
export class PluginConfigError extends NativeRelayError {
  override name = 'PluginConfigError' as const;
  /** Native's diagnostics (errors first), empty when native only gave a message. */
  readonly diagnostics: ConfigDiagnostic[];

  constructor(message: string, diagnostics: ConfigDiagnostic[], options?: { cause?: unknown }) {
    super(message, options);
    this.diagnostics = diagnostics;
  }
}

/**
 * A plugin-config activation is already live. Native allows one per process;
 * close the first (`activation.close()`) before initializing again.
 */
export class PluginHostBusyError extends NativeRelayError {
  override name = 'PluginHostBusyError' as const;
}

/** A dynamic-plugin spec cannot be expressed or was rejected by native. */
export class DynamicPluginError extends NativeRelayError {
  override name = 'DynamicPluginError' as const;
  readonly diagnostics: ConfigDiagnostic[];

  constructor(message: string, diagnostics: ConfigDiagnostic[] = [], options?: { cause?: unknown }) {
    super(message, options);
    this.diagnostics = diagnostics;
  }
}

/** An ATOF exporter could not be created (bad options or an unwritable location). */
export class AtofExporterError extends NativeRelayError {
  override name = 'AtofExporterError' as const;
}

/** Best-effort message of an unknown thrown value; never throws. */
export function messageOf(error: unknown): string {
  try {
    if (error instanceof Error) return error.message;
    if (typeof error === 'string') return error;
    return String(error);
  } catch {
    return 'unknown error';
  }
}
