/**
 * `nemo-relay-hooks/memory`: the pure-JS in-memory NeMo Relay backend.
 *
 * It implements the whole `RelayBackend` contract without the native
 * binding: scopes, marks, LLM and tool spans (manual and managed), ATOF
 * JSONL files, per-session ATIF trajectories and the observability
 * component of `plugins.toml`, with output that is byte-compatible with
 * what `nemo-relay-node` writes for the same calls.
 *
 * Inside: `relay.ts` (the facade: one guard per entry point, exporters,
 * lifecycle) over `core.ts` (operations, handles, timestamps, the encoder
 * choice); `encode/` (one `Encoder` seam: `bytes.ts` writes each ATOF line
 * straight from the payloads and serves every configuration without a
 * `subscribe()` callback, ATIF included; `objects.ts` builds event objects
 * for subscribers and takes any line the byte encoder cannot write;
 * `metadata.ts` holds the end-metadata rules); `delivery.ts`, `tree.ts`,
 * `managed.ts`; and the outputs `atof-batcher.ts` (lines batched into few writes; `atof-file.ts` is the file itself), `atif-exporter.ts`
 * (through the router both backends share, `../session-trajectories.ts`)
 * and `plugins-toml-activation.ts`. The contract's rules and errors are in
 * `src/relay/rules.ts` and `src/relay/errors.ts`.
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
export type { MemoryPluginActivation } from './plugins-toml-activation.ts';
/** NeMo Relay's propagation context and its wire forms, as native's propagation API writes and reads them. */
export {
  PropagationContextError,
  propagationContextFromJson,
  propagationContextFromTraceparent,
  propagationContextToJson,
  propagationContextToTraceparent,
  type PropagationContext,
} from '../../formats/propagation.ts';
