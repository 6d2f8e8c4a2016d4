/**
 * `nemo-relay-hooks/memory`: the pure-JS in-memory NeMo Relay backend.
 *
 * It implements the whole `RelayBackend` contract without the native
 * binding: scopes, marks, LLM and tool spans (manual and managed), ATOF
 * JSONL files, per-session ATIF trajectories and the observability
 * component of `plugins.toml`, with output that is byte-compatible with
 * what `nemo-relay-node` writes for the same calls.
 *
 * ```ts
 * import { createMemoryRelay } from 'nemo-relay-hooks/memory';
 *
 * const relay = createMemoryRelay();
 * const atof = relay.registerAtofExporter({ outputDirectory: './out', filename: 'events.jsonl', mode: 'append' });
 * const session = relay.pushScope({ name: 'my-agent', category: 'agent' });
 * relay.mark({ name: 'session.start', parent: session });
 * relay.popScope(session);
 * await relay.shutdown();
 * ```
 *
 * @module
 */

export { createMemoryRelay } from './relay.ts';
export type { MemoryRelay, MemoryRelayOptions, MemoryRelayStats } from './relay.ts';
export type { MemoryPluginActivation } from './plugin-host.ts';
export { validatePluginConfig } from '../../formats/plugins-toml/validate.ts';
export type { ObservabilitySettings, PluginConfigValidation } from '../../formats/plugins-toml/validate.ts';
export {
  AtofExporterError,
  InvalidPluginConfigError,
  MemoryRelayError,
  PluginActivationBusyError,
  PluginActivationConflictError,
  RelayError,
} from './errors.ts';
