/**
 * The backend contract: what a relay backend implements (`RelayBackend`),
 * the handles and options it passes, the errors every backend throws, and
 * the scope categories. The in-memory relay (`nemo-relay-hooks/memory`), the
 * native adapter (`nemo-relay-hooks/native`) and the recording fake
 * (`nemo-relay-hooks/testing`) implement it; a custom backend does too, and
 * is passed as `createNemoRelayPlugin({ backend })`.
 *
 * @module
 */

export type * from './contract.ts';
// SCOPE_CATEGORIES and isScopeCategory are ATOF's: nemo-relay-hooks/formats.
export { AtofExporterError, InvalidPluginConfigError, PluginActivationBusyError, RelayError } from './errors.ts';
