/**
 * The in-memory relay: a pure-JS `RelayBackend` whose events are the ones
 * the native runtime writes for the same calls, at a fraction of the cost.
 * This file is its facade: the public entry points, each behind one guard,
 * the exporters, the plugins.toml activation, lifecycle and stats. The work
 * is done by:
 * - `core.ts`: the operations, handles, timestamps and the encoder choice;
 * - `tree.ts`: where a scope sits (parents, propagation roots, session ids);
 * - `encode/`: the byte and object encoders behind one seam, and the
 *   end-metadata rules;
 * - `delivery.ts`: listeners, ATOF sinks, subscribers, each isolated;
 * - `managed.ts`: managed LLM and tool calls;
 * - `atif-exporter.ts`, `plugins-toml-activation.ts`, `atof-batcher.ts`: the outputs.
 *
 * Design points:
 * - Explicit parents only (see `tree.ts`).
 * - Delivery is synchronous, in emission order (see `delivery.ts`).
 * - No call throws into the caller. Misuse (a foreign or ended handle, a
 *   bad timestamp) is ignored or repaired, counted in `stats().errors` and
 *   logged at debug level. Where native differs: a second pop throws
 *   `not found` there and a second LLM end emits a second end event; here
 *   both are ignored.
 * - Strictly `end > start`: an end stamped at or before its start is moved
 *   to start + 1 µs and counted in `stats().adjustedTimestamps` (native
 *   writes it as given).
 *
 * @module
 */

import path from 'node:path';
import type {
  AtifExporter,
  AtifExporterOptions,
  AtofExporter,
  AtofExporterOptions,
  BackendStats,
  JsonObject,
  LlmEndOptions,
  LlmHandle,
  LlmStartOptions,
  ManagedLlmCall,
  ManagedLlmOptions,
  ManagedToolCall,
  ManagedToolOptions,
  MarkOptions,
  OutputHealth,
  PluginConfigActivation,
  PluginConfigOptions,
  PopScopeOptions,
  PropagationContext,
  PushScopeOptions,
  RelayBackend,
  ScopeHandle,
  ToolEndOptions,
  ToolHandle,
  ToolStartOptions,
} from '../../relay/contract.ts';
import { settleWithin } from '../../shared/deadline.ts';
import { AtofExporterError, PluginActivationBusyError } from '../../relay/errors.ts';
import { isPlainFileName } from '../../relay/rules.ts';
import type { AtofEvent, AtofSubscriber } from '../../formats/atof/types.ts';
import type { Logger, LoggerLike } from '../../shared/logger.ts';
import { adaptLogger } from '../../shared/logger.ts';
import { MemoryRelayCore } from './core.ts';
import { safeClock } from '../../shared/clock.ts';
import { nonEmptyString } from '../../shared/text.ts';
import { executeLlm, executeTool } from './managed.ts';
import { AtofFileWriter, defaultAtofFilename } from './atof-batcher.ts';
import { createAtifExporter } from './atif-exporter.ts';
import type { PluginHost } from './plugins-toml-activation.ts';

/**
 * The plugins.toml machinery (its validator, the OTLP, stream and storage
 * senders with node:http/https) loads with the first activation: a host
 * that records through settings, or only imports the package, never pays
 * for it. Set once loaded; until then the relay has no remote outputs.
 */
let pluginHostModule: typeof import('./plugins-toml-activation.ts') | undefined;
let pluginHostLoading: Promise<typeof import('./plugins-toml-activation.ts')> | undefined;

/** Loads the plugins.toml machinery ahead of an activation that must not wait for it (a shutdown's stand-in). */
export function preparePluginHost(): Promise<unknown> {
  return loadPluginHost();
}

function loadPluginHost(): Promise<typeof import('./plugins-toml-activation.ts')> {
  pluginHostLoading ??= import('./plugins-toml-activation.ts').then(
    (module) => (pluginHostModule = module),
    (error: unknown) => {
      // Not cached: the next activation tries again.
      pluginHostLoading = undefined;
      throw error;
    },
  );
  return pluginHostLoading;
}

/** Options of `createMemoryRelay`. */
export interface MemoryRelayOptions {
  /** Where failures are reported. Default: `consoleLogger` (warnings and errors only). */
  logger?: LoggerLike;
  /**
   * Integer Unix-microsecond clock for calls without `timestampUs`.
   * Default: the shared strictly increasing `nowMicros`.
   */
  clock?: () => number;
}

/** Counters of the in-memory relay: the contract's three plus where they came from. */
export interface MemoryRelayStats extends BackendStats {
  /** Subscriber and internal-sink callbacks that threw or rejected (also counted in `errors`). */
  subscriberErrors: number;
  /** End events stamped at or before their start and moved to start + 1 µs. */
  adjustedTimestamps: number;
  /** Event parts a redaction failed on: each was written as `null` instead (fail closed). */
  redactionFailures: number;
}

/** The in-memory relay backend. */
export interface MemoryRelay extends RelayBackend {
  /** Always `memory`. */
  readonly kind: 'memory';
  /**
   * Delivers every event produced from now on, synchronously and in
   * emission order. The event object is shared with other receivers: treat
   * it as read-only. Returns the unsubscribe function (idempotent).
   */
  subscribe(callback: AtofSubscriber): () => void;
  /**
   * Runs `transform` on every event before any output receives it, after
   * the plugins.toml `pii_redaction` component. It must not throw (a throw
   * drops the event's payloads: fail closed). Returns its removal.
   */
  addEventTransform(transform: (event: AtofEvent) => AtofEvent): () => void;
  /**
   * Drops credential headers from every payload recorded from now on (the
   * plugin's rule), inside the relay's own copy and line writer, until the
   * returned function is called (idempotent).
   */
  dropCredentialHeaders(): () => void;
  /** Managed LLM execution: records the span around `call`. */
  executeLlm(options: ManagedLlmOptions, call: ManagedLlmCall): Promise<unknown>;
  /** Managed tool execution: records the span around `call`. */
  executeTool(options: ManagedToolOptions, call: ManagedToolCall): Promise<unknown>;
  /** Flushes every output and closes them. Idempotent, never rejects. */
  shutdown(): Promise<void>;
  /** Counters of events, errors and drops. */
  stats(): MemoryRelayStats;
  /** The health of every output file. */
  outputs(): OutputHealth[];
}

/** Creates an in-memory relay backend. */
export function createMemoryRelay(options?: MemoryRelayOptions): MemoryRelay {
  return new MemoryRelayBackend(options);
}

const inertAtofExporter = (): AtofExporter => {
  const done = async () => {};
  return { path: '', flush: done, close: done };
};

class MemoryRelayBackend implements MemoryRelay {
  readonly kind = 'memory' as const;
  private readonly core: MemoryRelayCore;
  private pluginHost: PluginHost | null = null;
  /** An activation is between its call and its host (the plugins-toml-activation module is loading). */
  private activating = false;

  constructor(options?: MemoryRelayOptions) {
    this.core = new MemoryRelayCore(adaptLogger(options?.logger), safeClock(options?.clock));
  }

  /**
   * Runs one entry point: nothing below it may reach the caller. A failure
   * is counted and logged, and the caller gets `fallback()` (an inert
   * handle) instead.
   */
  private guard<T>(operation: string, run: () => T, fallback: () => T): T {
    try {
      return run();
    } catch (error) {
      this.core.counters.internalError(operation, error);
      return fallback();
    }
  }

  // ---- events -------------------------------------------------------------

  // The event entry points catch in place (the guard's rule, without its
  // two closures per event): a failure is counted and logged, and the
  // caller gets an inert handle.

  pushScope(options: PushScopeOptions): ScopeHandle {
    try {
      return this.core.push(options) as unknown as ScopeHandle;
    } catch (error) {
      this.core.counters.internalError('pushScope', error);
      return this.core.detachedScope() as unknown as ScopeHandle;
    }
  }

  popScope(handle: ScopeHandle, options?: PopScopeOptions): void {
    try {
      this.core.pop(handle, options);
    } catch (error) {
      this.core.counters.internalError('popScope', error);
    }
  }

  mark(options: MarkOptions): void {
    try {
      this.core.mark(options);
    } catch (error) {
      this.core.counters.internalError('mark', error);
    }
  }

  llmStart(options: LlmStartOptions): LlmHandle {
    const core = this.core;
    try {
      const o = options ?? ({} as LlmStartOptions);
      const parent = o.parent == null ? null : core.ownScope(o.parent, 'llmStart parent');
      return core.startLlm(o, parent, core.request(o.request, 'llmStart'), undefined) as unknown as LlmHandle;
    } catch (error) {
      core.counters.internalError('llmStart', error);
      return core.detachedSpan('llm') as unknown as LlmHandle;
    }
  }

  llmEnd(handle: LlmHandle, options: LlmEndOptions): void {
    const core = this.core;
    try {
      const record = core.ownSpan(handle, 'llm', 'llmEnd');
      // A failed call (status 'error') ends as an error span; native cannot say so (it forces OK).
      if (record !== null) core.endSpan(record, options?.response, options?.status === 'error' ? 'llm-error' : 'llm', options?.metadata, undefined, options?.timestampUs);
    } catch (error) {
      core.counters.internalError('llmEnd', error);
    }
  }

  toolStart(options: ToolStartOptions): ToolHandle {
    const core = this.core;
    try {
      return core.startTool(options ?? ({} as ToolStartOptions), 'toolStart') as unknown as ToolHandle;
    } catch (error) {
      core.counters.internalError('toolStart', error);
      return core.detachedSpan('tool') as unknown as ToolHandle;
    }
  }

  toolEnd(handle: ToolHandle, options: ToolEndOptions): void {
    const core = this.core;
    try {
      const record = core.ownSpan(handle, 'tool', 'toolEnd');
      if (record === null) return;
      const failed = options?.status === 'error';
      // An error-ended tool records no annotation.
      const annotation = failed ? undefined : options?.annotation;
      core.endSpan(record, options?.result, failed ? 'tool-error' : 'merge', options?.metadata, annotation, options?.timestampUs);
    } catch (error) {
      core.counters.internalError('toolEnd', error);
    }
  }

  executeLlm(options: ManagedLlmOptions, call: ManagedLlmCall): Promise<unknown> {
    return executeLlm(this.core, options, call);
  }

  propagationContext(handle: ScopeHandle | LlmHandle | ToolHandle): PropagationContext | null {
    return this.guard('propagationContext', () => this.core.propagationContext(handle), () => null);
  }

  executeTool(options: ManagedToolOptions, call: ManagedToolCall): Promise<unknown> {
    return executeTool(this.core, options, call);
  }

  dropCredentialHeaders(): () => void {
    return this.core.dropCredentialHeaders();
  }

  addEventTransform(transform: (event: AtofEvent) => AtofEvent): () => void {
    if (typeof transform !== 'function') {
      this.core.counters.misuse('addEventTransform: transform is not a function; ignored');
      return () => {};
    }
    return this.core.addEventTransform(transform, 'host');
  }

  subscribe(callback: AtofSubscriber): () => void {
    if (typeof callback !== 'function') {
      this.core.counters.misuse('subscribe: callback is not a function; ignored');
      return () => {};
    }
    return this.core.subscribe(callback);
  }

  // ---- exporters and plugin host -------------------------------------------------

  registerAtofExporter(options: AtofExporterOptions): AtofExporter {
    return this.guard('registerAtofExporter', () => this.addAtofExporter(options), inertAtofExporter);
  }

  private addAtofExporter(options: AtofExporterOptions): AtofExporter {
    const o = options ?? ({} as AtofExporterOptions);
    let mode = o.mode;
    if (mode !== 'append' && mode !== 'overwrite') {
      this.core.counters.misuse(`registerAtofExporter: mode must be 'append' or 'overwrite', got ${String(mode)}; using 'append'`);
      mode = 'append';
    }
    const filename = nonEmptyString(o.filename) ?? defaultAtofFilename();
    // A separator or a dot name would put the file outside its folder; native refuses it too.
    if (!isPlainFileName(filename)) throw new AtofExporterError(`ATOF filename must be a plain file name, got ${JSON.stringify(filename)}`);
    const directory = typeof o.outputDirectory === 'string' ? o.outputDirectory : '';
    const writer = new AtofFileWriter({ path: path.join(directory === '' ? '.' : directory, filename), mode, logger: this.core.logger });
    const remove = this.core.addLineSink(writer);
    return {
      path: writer.path,
      flush: async () => {
        writer.flushSync();
      },
      close: async () => {
        writer.close();
        remove();
      },
    };
  }

  registerAtifExporter(options: AtifExporterOptions): AtifExporter {
    return this.guard(
      'registerAtifExporter',
      () => createAtifExporter(this.core, options),
      // An inert exporter (unknown scope): the caller still gets the interface.
      () => createAtifExporter(this.core, { scope: undefined as unknown as ScopeHandle, sessionId: '', agentName: '', agentVersion: '' }),
    );
  }

  async initializePluginConfig(document: JsonObject, options?: PluginConfigOptions): Promise<PluginConfigActivation> {
    if (this.pluginHost !== null || this.activating) throw new PluginActivationBusyError();
    this.activating = true;
    try {
      const { activatePluginConfig } = pluginHostModule ?? (await loadPluginHost());
      const host = activatePluginConfig(this.core, document, options, () => {
        if (this.pluginHost === host) this.pluginHost = null;
      });
      this.pluginHost = host;
      return host.activation;
    } finally {
      this.activating = false;
    }
  }

  // ---- lifecycle and health ------------------------------------------------------

  async flush(): Promise<void> {
    for (const writer of this.core.delivery.writers) writer.flushSync();
    // Trajectories of ended plugins.toml roots are built in slices: written (or handed to their storage) before this settles.
    await this.pluginHost?.flush();
    // Remote outputs: what is queued goes out (each destination within its timeout_millis), so that
    // flush() / forceFlush() means the same for an OTLP collector as for a file.
    await pluginHostModule?.remoteOutputs.flush(this.core);
  }

  async shutdown(options: { timeoutMs?: number } = {}): Promise<void> {
    const deadline = Date.now() + (options.timeoutMs ?? Number.POSITIVE_INFINITY);
    const host = this.pluginHost;
    if (host !== null) {
      // Closing waits for the stream sinks and uploads, each up to its timeout_millis: no longer than the budget.
      const closing = host.activation.close();
      closing.catch((error: unknown) => this.core.counters.internalError('closing the plugin activation', error));
      await settleWithin(closing, deadline - Date.now(), { unref: true });
    }
    const delivery = this.core.delivery;
    for (const writer of delivery.writers) {
      writer.close();
      this.core.counters.dropped += writer.droppedLines;
    }
    delivery.writers.clear();
    delivery.lineSinks = [];
    // The OTLP destinations are keyed by the core the plugins.toml activation was given.
    await pluginHostModule?.remoteOutputs.shutdown(this.core, deadline - Date.now());
  }

  stats(): MemoryRelayStats {
    const counters = this.core.counters;
    let dropped = counters.dropped;
    for (const writer of this.core.delivery.writers) dropped += writer.droppedLines;
    return {
      events: counters.events,
      errors: counters.errors,
      dropped,
      subscriberErrors: counters.receiverErrors,
      adjustedTimestamps: counters.adjustedTimestamps,
      redactionFailures: counters.redactionFailures,
    };
  }

  outputs(): OutputHealth[] {
    const out: OutputHealth[] = [];
    for (const writer of this.core.delivery.writers) out.push(writer.health());
    if (this.pluginHost !== null) {
      for (const health of this.pluginHost.outputs()) if (health.kind !== 'atof') out.push(health);
    }
    if (pluginHostModule !== undefined) out.push(...pluginHostModule.remoteOutputs.outputs(this.core));
    return out;
  }
}
