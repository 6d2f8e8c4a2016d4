/**
 * The one surface the native adapter (`native/`) imports from `src/`: the
 * relay contract, JSON conversion, error text, the shared clock and logger, and the
 * format pieces both backends build trajectories with. Keeping it to one
 * file makes the direction visible: `native/` depends on this list, and
 * nothing in `src/` but `backends/select.ts` (dynamically) depends on
 * `native/`.
 *
 * @module
 */

export type * from '../relay/contract.ts';
export { isScopeCategory } from '../relay/contract.ts';
export { AtofExporterError, InvalidPluginConfigError, PluginActivationBusyError, RelayError } from '../relay/errors.ts';
export * as rules from '../relay/rules.ts';
export { defineKey, isJsonObject, toJson } from '../shared/json.ts';
export { errorMessage } from '../shared/error-text.ts';
export { configuredHeaderValues, displayUrl, withoutValues } from '../shared/secret-text.ts';
export { isPlaintextRemote } from '../shared/destination-rules.ts';
export { openTelemetrySettings, otlpEnvRefusals } from '../formats/plugins-toml/opentelemetry.ts';
export { retryDelay, type RetryPolicy } from '../shared/retry.ts';
export { formatTimestamp, nowMicros } from '../shared/clock.ts';
export { adaptLogger, safeLog, type Logger, type LoggerLike } from '../shared/logger.ts';
export type { AtofCategory, AtofEvent } from '../formats/atof/types.ts';
export { scopeEvent } from '../formats/atof/build.ts';
export { AtifBuilder } from '../formats/atif/builder.ts';
export { serializeTrajectory } from '../formats/atif/serialize.ts';
export { SessionTrajectories, type SessionTrajectory } from './session-trajectories.ts';
export { RemoteOutputLedger } from './remote-output-ledger.ts';
export { errorsText, validatePluginConfig, withoutConfigPrefix } from '../formats/plugins-toml/validate.ts';
export type { AtifStorageSettings } from '../formats/plugins-toml/sinks.ts';
export { createAtifStorage, type AtifStorage, type AtifUpload } from '../export/storage/storage.ts';
export { writeFileAtomic } from '../shared/atomic-file.ts';
export { makeDirectory } from '../shared/directory.ts';
export { OWNER_ONLY } from '../shared/safe-path.ts';
export { settleWithin } from '../shared/deadline.ts';
export { HeldSwitch } from '../shared/held-switch.ts';
export { atExit, atLoopEnd } from '../shared/exit-hook.ts';
