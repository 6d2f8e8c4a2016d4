/**
 * The one surface the native adapter (`native/`) imports from `src/`: the
 * relay contract, JSON conversion, the shared clock and logger, and the
 * format pieces both backends build trajectories with. Keeping it to one
 * file makes the direction visible: `native/` depends on this list, and
 * nothing in `src/` but `backends/select.ts` (dynamically) depends on
 * `native/`.
 *
 * @module
 */

export type * from '../relay/contract.ts';
export { isScopeCategory } from '../relay/contract.ts';
export { isJsonObject, toJson } from '../shared/json.ts';
export { isPlainFileName } from '../shared/safe-path.ts';
export { formatTimestamp, nowMicros } from '../shared/clock.ts';
export { consoleLogger, safeLog, type Logger } from '../shared/logger.ts';
export { ATOF_VERSION, type AtofEvent } from '../formats/atof/types.ts';
export { AtifBuilder, createSubtreeFilter, serializeTrajectory } from '../formats/atif/builder.ts';
