/**
 * The in-memory relay's errors: the contract's shared classes
 * (`src/relay/errors.ts`), under the names this module exported before.
 *
 * @module
 */

import { PluginActivationBusyError, RelayError } from '../../relay/errors.ts';

export { AtofExporterError, InvalidPluginConfigError, PluginActivationBusyError, RelayError } from '../../relay/errors.ts';

/** @deprecated Use `RelayError`, the base class every backend's errors share. */
export const MemoryRelayError: typeof RelayError = RelayError;
/** @deprecated Use `RelayError`. */
export type MemoryRelayError = RelayError;

/** @deprecated Use `PluginActivationBusyError`, which both backends throw. */
export const PluginActivationConflictError: typeof PluginActivationBusyError = PluginActivationBusyError;
/** @deprecated Use `PluginActivationBusyError`. */
export type PluginActivationConflictError = PluginActivationBusyError;
