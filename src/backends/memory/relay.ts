/**
 * The in-memory relay: a pure-JS `RelayBackend` whose events are the ones
 * the native runtime writes for the same calls (see `events.ts` for the
 * byte-level rules), at a fraction of the cost.
 *
 * Design points:
 * - Explicit parents only. A scope pushed without a parent is top-level and
 *   gets its own implicit root uuid, as if it were pushed on a fresh native
 *   scope stack; a mark or span without a parent hangs off one
 *   process-level implicit root. Implicit roots never appear as events.
 *   `propagation_root_uuid` is the tree's outermost Agent scope (below a
 *   non-agent top-level scope, the first Agent), else the implicit root.
 * - Delivery is synchronous, in emission order: ATOF file sinks first (one
 *   serialization per event, shared by all of them), then ATIF builders,
 *   then `subscribe()` callbacks. Every receiver is isolated: a throw or a
 *   rejected promise is counted and logged, never seen by the emitter.
 * - Event objects are built only for receivers that take them (ATIF
 *   builders, subscribers). While there are none, each event goes straight
 *   from the caller's payloads to its ATOF line's bytes (`lines.ts`), the
 *   same bytes without the sorted copies; records keep what a later end
 *   event or ATIF exporter needs (`metadata.ts`, `ScopeRecord.start`).
 * - No call throws into the caller. Misuse (a foreign or ended handle, a
 *   bad timestamp) is ignored or repaired, counted in `stats().errors` and
 *   logged at debug level. Where native differs: a second pop throws
 *   `not found` there and a second LLM end emits a second end event; here
 *   both are ignored.
 * - Strictly `end > start`: an end stamped at or before its start is moved
 *   to start + 1 µs and counted in `stats().adjustedTimestamps` (native
 *   writes it as given).
 * - Managed calls reject with the error the call threw, unchanged (native
 *   re-creates it as `internal error: ...`), and resolve with the call's own
 *   return value; the events carry native's error metadata and the
 *   request headers native injects (`traceparent`, `x-dynamo-session-id`,
 *   `x-dynamo-parent-session-id`).
 *
 * @module
 */

import type { InternalListener, RelayCore } from './core.ts';
import type {
  AtifExporter,
  AtifExporterOptions,
  AtofExporter,
  AtofExporterOptions,
  BackendStats,
  Json,
  JsonObject,
  LlmEndOptions,
  LlmHandle,
  LlmRequest,
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
  PushScopeOptions,
  RelayBackend,
  ScopeHandle,
  ToolEndOptions,
  ToolHandle,
  ToolStartOptions,
} from '../../relay/contract.ts';
import { isScopeCategory } from '../../relay/contract.ts';
import type { AtofCategory, AtofEvent, AtofSubscriber } from '../../formats/atof/types.ts';
import type { Logger } from '../../shared/logger.ts';
import { consoleLogger, safeLog } from '../../shared/logger.ts';
import path from 'node:path';
import { nowMicros } from '../../shared/clock.ts';
import { uuidv7 } from '../../shared/uuid.ts';
import { ScopeRecord, SpanRecord } from './records.ts';
import {
  createTimestampFormatter,
  llmEndMetadata,
  llmProfile,
  llmRequestData,
  managedErrorMetadata,
  managedOkMetadata,
  markEvent,
  mergeMetadata,
  payload,
  recordedHeaders,
  scopeAttributes,
  scopeEvent,
  toolEndProfile,
  toolErrorMetadata,
  toolProfile,
} from './events.ts';
import { isPlainFileName } from '../../shared/safe-path.ts';
import { AtofFileWriter, defaultAtofFilename } from './atof-writer.ts';
import { serializeEvent } from './atof-line.ts';
import { giveBack, takeBuilder, type LineBuilder } from './line-builder.ts';
import { writeMarkLine, writeScopeLine, writeSpanEndLine, writeSpanStartLine, type LineRange } from './lines.ts';
import {
  convertMetadata,
  llmEndMetadataOf,
  managedOkMetadataOf,
  mergedMetadata,
  Metadata,
  toolErrorMetadataOf,
} from './metadata.ts';
import { createAtifExporter } from './atif-exporter.ts';
import { activatePluginConfig, type PluginHost } from './plugin-host.ts';
import { MemoryRelayError, PluginActivationConflictError } from './errors.ts';

export interface MemoryRelayOptions {
  /** Where failures are reported. Default: `consoleLogger` (warnings and errors only). */
  logger?: Logger;
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
}

/** The in-memory relay backend. */
export interface MemoryRelay extends RelayBackend {
  readonly kind: 'memory';
  /**
   * Delivers every event produced from now on, synchronously and in
   * emission order. The event object is shared with other receivers: treat
   * it as read-only. Returns the unsubscribe function (idempotent).
   */
  subscribe(callback: AtofSubscriber): () => void;
  executeLlm(options: ManagedLlmOptions, call: ManagedLlmCall): Promise<unknown>;
  executeTool(options: ManagedToolOptions, call: ManagedToolCall): Promise<unknown>;
  shutdown(): Promise<void>;
  stats(): MemoryRelayStats;
  outputs(): OutputHealth[];
}

const NO_ATTRIBUTES: string[] = [];

/** Creates an in-memory relay backend. */
export function createMemoryRelay(options?: MemoryRelayOptions): MemoryRelay {
  return new MemoryRelayBackend(options);
}

class MemoryRelayBackend implements MemoryRelay, RelayCore {
  readonly kind = 'memory' as const;
  readonly logger: Logger;
  private readonly clock: () => number;
  private readonly format = createTimestampFormatter();
  /** Parent of marks and spans that have no explicit parent. */
  private readonly processRoot = uuidv7();

  // Copy-on-write arrays: subscribing or unsubscribing during delivery is safe.
  private subscribers: AtofSubscriber[] = [];
  private listeners: InternalListener[] = [];
  private lineSinks: AtofFileWriter[] = [];
  private readonly writers = new Set<AtofFileWriter>();
  private pluginHost: PluginHost | null = null;
  private pluginOutputs: (() => OutputHealth[]) | null = null;

  private eventCount = 0;
  private errorCount = 0;
  private droppedCount = 0;
  private subscriberErrorCount = 0;
  private adjustedCount = 0;

  constructor(options?: MemoryRelayOptions) {
    this.logger = options?.logger ?? consoleLogger;
    const clock = options?.clock;
    this.clock =
      typeof clock === 'function'
        ? () => {
            // A caller's clock must not be able to break an event either.
            try {
              const now = clock();
              if (Number.isFinite(now)) return Math.floor(now);
            } catch {
              // Fall back to the shared clock.
            }
            return nowMicros();
          }
        : nowMicros;
  }

  // ---- guarded public entry points: nothing below them may reach the caller ----

  pushScope(options: PushScopeOptions): ScopeHandle {
    try {
      return this.push(options) as unknown as ScopeHandle;
    } catch (error) {
      this.internalError('pushScope', error);
      return this.detachedScope() as unknown as ScopeHandle;
    }
  }

  popScope(handle: ScopeHandle, options?: PopScopeOptions): void {
    try {
      this.pop(handle, options);
    } catch (error) {
      this.internalError('popScope', error);
    }
  }

  mark(options: MarkOptions): void {
    try {
      this.emitMark(options);
    } catch (error) {
      this.internalError('mark', error);
    }
  }

  llmStart(options: LlmStartOptions): LlmHandle {
    try {
      return this.beginLlm(options) as unknown as LlmHandle;
    } catch (error) {
      this.internalError('llmStart', error);
      return this.detachedSpan('llm') as unknown as LlmHandle;
    }
  }

  llmEnd(handle: LlmHandle, options: LlmEndOptions): void {
    try {
      this.finishLlm(handle, options);
    } catch (error) {
      this.internalError('llmEnd', error);
    }
  }

  toolStart(options: ToolStartOptions): ToolHandle {
    try {
      return this.startTool(options ?? ({} as ToolStartOptions), 'toolStart') as unknown as ToolHandle;
    } catch (error) {
      this.internalError('toolStart', error);
      return this.detachedSpan('tool') as unknown as ToolHandle;
    }
  }

  toolEnd(handle: ToolHandle, options: ToolEndOptions): void {
    try {
      this.finishTool(handle, options);
    } catch (error) {
      this.internalError('toolEnd', error);
    }
  }

  // ---- scopes and marks ---------------------------------------------------

  private push(options: PushScopeOptions): ScopeRecord {
    const o = options ?? ({} as PushScopeOptions);
    const parent = o.parent == null ? null : this.ownScope(o.parent, 'pushScope parent');
    let category = o.category as AtofCategory;
    if (!isScopeCategory(category)) {
      this.misuse(`pushScope: unknown category ${String(category)}; recorded as "unknown"`);
      category = 'unknown';
    }
    // A top-level scope's implicit root is minted first, so it sorts before the scope (as native's stack root does).
    const implicitRoot = parent === null ? uuidv7() : '';
    const uuid = uuidv7();
    const startUs = this.stamp(o.timestampUs);
    let parentUuid: string;
    let root: string;
    let agentRooted: boolean;
    if (parent !== null) {
      parentUuid = parent.uuid;
      // The propagation root is the outermost Agent scope; below a non-agent
      // top-level scope the first Agent claims it (as native does).
      if (parent.agentRooted) {
        root = parent.propagationRootUuid;
        agentRooted = true;
      } else if (category === 'agent') {
        root = uuid;
        agentRooted = true;
      } else {
        root = parent.propagationRootUuid;
        agentRooted = false;
      }
    } else {
      parentUuid = implicitRoot;
      agentRooted = category === 'agent';
      root = agentRooted ? uuid : parentUuid;
    }
    const attributes = o.attributes === undefined ? NO_ATTRIBUTES : scopeAttributes(o.attributes);
    const name = text(o.name);
    if (this.linesOnly()) {
      const out = this.openLine();
      try {
        const meta = convertMetadata(o.metadata);
        const scope = { uuid, parentUuid, propagationRootUuid: root, name };
        const input: LineRange = { start: 0, end: 0 };
        writeScopeLine(out, 'start', scope, category, attributes, o.input, meta, startUs, input);
        // The input's text is kept for `record.start` (the rest of the start event is in the record).
        const inputText = out.text(out.start + input.start, out.start + input.end);
        const record = new ScopeRecord(this, uuid, name, category, parent, parentUuid, root, agentRooted, attributes, meta, startUs, inputText);
        this.closeLine(out);
        return record;
      } catch {
        // A line past the engine's limits: the event path below records it and counts the line as dropped.
        this.abandonLine(out);
      }
    }
    const metadata = payload(o.metadata);
    const start = scopeEvent('start', uuid, parentUuid, root, name, category, attributes, null, payload(o.input), metadata, this.format(startUs));
    const record = new ScopeRecord(
      this,
      uuid,
      name,
      category,
      parent,
      parentUuid,
      root,
      agentRooted,
      attributes,
      Metadata.ofJson(metadata),
      startUs,
      start,
    );
    this.emit(start, record.top);
    return record;
  }

  private pop(handle: ScopeHandle, options?: PopScopeOptions): void {
    const record = this.ownScope(handle, 'popScope');
    if (record === null) return;
    if (record.ended) {
      this.misuse(`popScope: scope "${record.name}" (${record.uuid}) was already popped; ignored`);
      return;
    }
    record.ended = true;
    const endUs = this.endStamp(options?.timestampUs, record.startUs);
    if (this.linesOnly()) {
      const out = this.openLine();
      try {
        const output = options?.output;
        const meta = mergedMetadata(record.meta, convertMetadata(options?.metadata));
        writeScopeLine(out, 'end', record, record.category, record.attributes, output, meta, endUs);
        this.closeLine(out);
        return;
      } catch {
        // Past the limits: recorded below (see `push`).
        this.abandonLine(out);
      }
    }
    const event = scopeEvent(
      'end',
      record.uuid,
      record.parentUuid,
      record.propagationRootUuid,
      record.name,
      record.category,
      record.attributes,
      null,
      payload(options?.output),
      mergeMetadata(record.metadata, payload(options?.metadata)),
      this.format(endUs),
    );
    this.emit(event, record.top);
  }

  private emitMark(options: MarkOptions): void {
    const o = options ?? ({} as MarkOptions);
    const parent = o.parent == null ? null : this.ownScope(o.parent, 'mark parent');
    const uuid = uuidv7();
    const parentUuid = parent === null ? this.processRoot : parent.uuid;
    const root = parent === null ? this.processRoot : parent.propagationRootUuid;
    const name = text(o.name);
    const timestampUs = this.stamp(o.timestampUs);
    if (this.linesOnly()) {
      const out = this.openLine();
      try {
        writeMarkLine(out, uuid, parentUuid, root, name, o.data, o.metadata, timestampUs);
        this.closeLine(out);
        return;
      } catch {
        // Past the limits: recorded below (see `push`).
        this.abandonLine(out);
      }
    }
    const event = markEvent(uuid, parentUuid, root, name, payload(o.data), payload(o.metadata), this.format(timestampUs));
    this.emit(event, parent === null ? null : parent.top);
  }

  // ---- LLM spans ------------------------------------------------------------

  private beginLlm(options: LlmStartOptions): SpanRecord {
    const o = options ?? ({} as LlmStartOptions);
    const parent = o.parent == null ? null : this.ownScope(o.parent, 'llmStart parent');
    const request = this.request(o.request, 'llmStart');
    return this.startLlm(o, parent, request, undefined);
  }

  private finishLlm(handle: LlmHandle, options: LlmEndOptions): void {
    const record = this.ownSpan(handle, 'llm', 'llmEnd');
    if (record === null) return;
    const endUs = this.endStamp(options?.timestampUs, record.startUs);
    const failed = options?.status === 'error';
    if (this.linesOnly()) {
      const metadata = llmEndMetadataOf(record.meta, convertMetadata(options?.metadata), failed);
      if (this.endSpanLine(record, options?.response, metadata, undefined, endUs)) return;
    }
    this.endSpan(record, payload(options?.response), llmEndMetadata(record.metadata, payload(options?.metadata), failed), record.profile, endUs);
  }

  async executeLlm(options: ManagedLlmOptions, call: ManagedLlmCall): Promise<unknown> {
    const o = options ?? ({} as ManagedLlmOptions);
    let record: SpanRecord | null = null;
    let forwarded: LlmRequest = { headers: {}, content: undefined };
    try {
      forwarded = o.request;
      const parent = o.parent == null ? null : this.ownScope(o.parent, 'executeLlm parent');
      const request = this.request(o.request, 'executeLlm');
      const session = sessionHeaders(parent);
      record = this.startLlm(o, parent, request, session);
      forwarded = forwardedRequest(request, session, parent, record.uuid);
    } catch (error) {
      // Telemetry failed, the call itself must still run.
      this.internalError('executeLlm', error);
    }
    return this.runManaged(record, () => call(forwarded));
  }

  // ---- tool spans -----------------------------------------------------------

  private finishTool(handle: ToolHandle, options: ToolEndOptions): void {
    const record = this.ownSpan(handle, 'tool', 'toolEnd');
    if (record === null) return;
    const endUs = this.endStamp(options?.timestampUs, record.startUs);
    const failed = options?.status === 'error';
    if (this.linesOnly()) {
      const end = convertMetadata(options?.metadata);
      const metadata = failed ? toolErrorMetadataOf(record.meta, end) : mergedMetadata(record.meta, end);
      if (this.endSpanLine(record, options?.result, metadata, failed ? undefined : options?.annotation, endUs)) return;
    }
    const endMetadata = payload(options?.metadata);
    const annotation = failed || options?.annotation == null ? undefined : payload(options.annotation);
    this.endSpan(
      record,
      payload(options?.result),
      failed ? toolErrorMetadata(record.metadata, endMetadata) : mergeMetadata(record.metadata, endMetadata),
      toolEndProfile(record.profile, annotation),
      endUs,
    );
  }

  async executeTool(options: ManagedToolOptions, call: ManagedToolCall): Promise<unknown> {
    const o = options ?? ({} as ManagedToolOptions);
    let record: SpanRecord | null = null;
    let args: unknown;
    try {
      args = o.args;
      record = this.startTool(o, 'executeTool');
    } catch (error) {
      // Telemetry failed, the call itself must still run.
      this.internalError('executeTool', error);
    }
    return this.runManaged(record, () => call(args));
  }

  /** Runs the host's call and records its end; its own value and error reach the caller unchanged. */
  private async runManaged(record: SpanRecord | null, run: () => unknown): Promise<unknown> {
    let value: unknown;
    try {
      value = await run();
    } catch (error) {
      this.managedFailed(record, error);
      throw error;
    }
    this.managedOk(record, value);
    return value;
  }

  /** Records the end of a managed call that returned `value`. */
  private managedOk(record: SpanRecord | null, value: unknown): void {
    if (record === null) return;
    try {
      const endUs = this.endStamp(undefined, record.startUs);
      if (this.linesOnly() && this.endSpanLine(record, value, managedOkMetadataOf(record.meta), undefined, endUs)) return;
      this.endSpan(record, payload(value), managedOkMetadata(record.metadata), record.profile, endUs);
    } catch (error) {
      this.internalError('recording a managed call', error);
    }
  }

  /** Records the end of a managed call that threw `thrown` (native's error metadata, `data: null`). */
  private managedFailed(record: SpanRecord | null, thrown: unknown): void {
    if (record === null) return;
    try {
      const endUs = this.endStamp(undefined, record.startUs);
      const metadata = managedErrorMetadata(record.metadata, thrown);
      if (this.linesOnly() && this.endSpanLine(record, null, Metadata.ofJson(metadata), undefined, endUs)) return;
      this.endSpan(record, null, metadata, record.profile, endUs);
    } catch (error) {
      this.internalError('recording a managed call', error);
    }
  }

  // ---- exporters and plugin host -------------------------------------------------

  registerAtofExporter(options: AtofExporterOptions): AtofExporter {
    try {
      return this.addAtofExporter(options);
    } catch (error) {
      this.internalError('registerAtofExporter', error);
      const done = async () => {};
      return { path: '', flush: done, close: done };
    }
  }

  private addAtofExporter(options: AtofExporterOptions): AtofExporter {
    const o = options ?? ({} as AtofExporterOptions);
    let mode = o.mode;
    if (mode !== 'append' && mode !== 'overwrite') {
      this.misuse(`registerAtofExporter: mode must be 'append' or 'overwrite', got ${String(mode)}; using 'append'`);
      mode = 'append';
    }
    const filename = typeof o.filename === 'string' && o.filename !== '' ? o.filename : defaultAtofFilename();
    // A separator or a dot name would put the file outside its folder; native refuses it too.
    if (!isPlainFileName(filename)) {
      throw new MemoryRelayError(`ATOF filename must be a plain file name, got ${JSON.stringify(filename)}`);
    }
    const writer = new AtofFileWriter({
      path: joinPath(typeof o.outputDirectory === 'string' ? o.outputDirectory : '', filename),
      mode,
      logger: this.logger,
    });
    const remove = this.addLineSink(writer);
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
    try {
      return createAtifExporter(this, options);
    } catch (error) {
      this.internalError('registerAtifExporter', error);
      // An inert exporter (unknown scope): the caller still gets the interface.
      return createAtifExporter(this, { scope: undefined as unknown as ScopeHandle, sessionId: '', agentName: '', agentVersion: '' });
    }
  }

  async initializePluginConfig(document: JsonObject, options?: PluginConfigOptions): Promise<PluginConfigActivation> {
    if (this.pluginHost !== null) throw new PluginActivationConflictError();
    const host = activatePluginConfig(this, document, options, () => {
      if (this.pluginHost === host) {
        this.pluginHost = null;
        this.pluginOutputs = null;
      }
    });
    this.pluginHost = host;
    this.pluginOutputs = () => host.outputs();
    return host.activation;
  }

  async flush(): Promise<void> {
    for (const writer of this.writers) writer.flushSync();
  }

  async shutdown(): Promise<void> {
    const host = this.pluginHost;
    if (host !== null) {
      try {
        await host.activation.close();
      } catch (error) {
        this.internalError('closing the plugin activation', error);
      }
    }
    for (const writer of this.writers) {
      writer.close();
      this.droppedCount += writer.droppedLines;
    }
    this.writers.clear();
    this.lineSinks = [];
  }

  stats(): MemoryRelayStats {
    let dropped = this.droppedCount;
    for (const writer of this.writers) dropped += writer.droppedLines;
    return {
      events: this.eventCount,
      errors: this.errorCount,
      dropped,
      subscriberErrors: this.subscriberErrorCount,
      adjustedTimestamps: this.adjustedCount,
    };
  }

  outputs(): OutputHealth[] {
    const out: OutputHealth[] = [];
    for (const writer of this.writers) out.push(writer.health());
    if (this.pluginOutputs !== null) {
      for (const health of this.pluginOutputs()) if (health.kind !== 'atof') out.push(health);
    }
    return out;
  }

  subscribe(callback: AtofSubscriber): () => void {
    if (typeof callback !== 'function') {
      this.misuse('subscribe: callback is not a function; ignored');
      return () => {};
    }
    this.subscribers = [...this.subscribers, callback];
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      const index = this.subscribers.indexOf(callback);
      if (index >= 0) this.subscribers = this.subscribers.filter((_, i) => i !== index);
    };
  }

  // ---- RelayCore ----------------------------------------------------------------

  addListener(listener: InternalListener): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  addLineSink(writer: AtofFileWriter): () => void {
    this.lineSinks = [...this.lineSinks, writer];
    this.writers.add(writer);
    return () => {
      this.lineSinks = this.lineSinks.filter((w) => w !== writer);
      // Keep the writer's drop count in the totals once it leaves the set.
      if (this.writers.delete(writer)) this.droppedCount += writer.droppedLines;
    };
  }

  ownScope(handle: unknown, what = 'scope handle'): ScopeRecord | null {
    if (handle instanceof ScopeRecord && handle.owner === this) return handle;
    this.misuse(`${what}: not a scope handle of this relay; ignored`);
    return null;
  }

  // ---- internals -------------------------------------------------------------------

  private startLlm(
    o: ManagedLlmOptions,
    parent: ScopeRecord | null,
    request: LlmRequest,
    session: JsonObject | undefined,
  ): SpanRecord {
    const headers = recordedHeaders(request.headers, session);
    const record = this.newSpan('llm', o.name, parent, llmProfile(o.modelName), (o as LlmStartOptions).timestampUs);
    if (this.linesOnly() && this.startSpanLine(record, request.content, headers, o.metadata)) return record;
    this.startSpanEvent(record, llmRequestData(request.content, headers), o.metadata);
    return record;
  }

  private startTool(o: ManagedToolOptions, what: string): SpanRecord {
    const parent = o.parent == null ? null : this.ownScope(o.parent, `${what} parent`);
    const record = this.newSpan('tool', o.name, parent, toolProfile(o.toolCallId), (o as ToolStartOptions).timestampUs);
    if (this.linesOnly() && this.startSpanLine(record, o.args, undefined, o.metadata)) return record;
    this.startSpanEvent(record, payload(o.args), o.metadata);
    return record;
  }

  /** The record (the handle) of a span about to start; its start metadata is set when its start is emitted. */
  private newSpan(
    kind: 'llm' | 'tool',
    name: unknown,
    parent: ScopeRecord | null,
    profile: SpanRecord['profile'],
    timestampUs: number | undefined,
  ): SpanRecord {
    const uuid = uuidv7();
    const startUs = this.stamp(timestampUs);
    const parentUuid = parent === null ? this.processRoot : parent.uuid;
    const root = parent === null ? this.processRoot : parent.propagationRootUuid;
    return new SpanRecord(this, kind, uuid, text(name), parentUuid, root, parent === null ? null : parent.top, profile, startUs);
  }

  /**
   * Writes the start line of an LLM or tool span (`data` is the LLM request
   * content when `headers` are given). False when it could not be written
   * as a line; the caller then takes the event path.
   */
  private startSpanLine(record: SpanRecord, data: unknown, headers: JsonObject | undefined, metadata: unknown): boolean {
    const out = this.openLine();
    try {
      const meta = convertMetadata(metadata);
      writeSpanStartLine(out, record, data, headers, meta, record.startUs);
      record.meta = meta;
      this.closeLine(out);
      return true;
    } catch {
      // Past the limits: recorded on the event path (see `push`).
      this.abandonLine(out);
      return false;
    }
  }

  /** Emits the start event of an LLM or tool span. */
  private startSpanEvent(record: SpanRecord, data: Json, metadata: unknown): void {
    const converted = payload(metadata);
    record.meta = Metadata.ofJson(converted);
    const event = scopeEvent(
      'start',
      record.uuid,
      record.parentUuid,
      record.propagationRootUuid,
      record.name,
      record.kind,
      NO_ATTRIBUTES,
      record.profile,
      data,
      converted,
      this.format(record.startUs),
    );
    this.emit(event, record.top);
  }

  /**
   * Writes the end line of an LLM or tool span (the lines-only counterpart
   * of `endSpan`). False when it could not be written as a line; the
   * caller then takes the event path.
   */
  private endSpanLine(record: SpanRecord, data: unknown, metadata: Metadata, annotation: unknown, endUs: number): boolean {
    const out = this.openLine();
    try {
      writeSpanEndLine(out, record, data, metadata, annotation, endUs);
      record.ended = true;
      this.closeLine(out);
      return true;
    } catch {
      // Past the limits: recorded on the event path (see `push`).
      this.abandonLine(out);
      return false;
    }
  }

  private endSpan(record: SpanRecord, data: Json, metadata: Json, profile: SpanRecord['profile'], endUs: number): void {
    record.ended = true;
    const event = scopeEvent(
      'end',
      record.uuid,
      record.parentUuid,
      record.propagationRootUuid,
      record.name,
      record.kind,
      NO_ATTRIBUTES,
      profile,
      data,
      metadata,
      this.format(endUs),
    );
    this.emit(event, record.top);
  }

  /** A scope handle that emits nothing, returned when a push failed internally; ending it is a counted no-op. */
  private detachedScope(): ScopeRecord {
    const uuid = uuidv7();
    const start = scopeEvent('start', uuid, this.processRoot, this.processRoot, '', 'unknown', NO_ATTRIBUTES, null, null, null, '');
    const record = new ScopeRecord(this, uuid, '', 'unknown', null, this.processRoot, this.processRoot, false, NO_ATTRIBUTES, Metadata.NULL, 0, start);
    record.ended = true;
    return record;
  }

  /** The span counterpart of `detachedScope`. */
  private detachedSpan(kind: 'llm' | 'tool'): SpanRecord {
    const record = new SpanRecord(this, kind, uuidv7(), '', this.processRoot, this.processRoot, null, {}, 0);
    record.ended = true;
    return record;
  }

  private ownSpan(handle: unknown, kind: 'llm' | 'tool', what: string): SpanRecord | null {
    if (!(handle instanceof SpanRecord) || handle.owner !== this || handle.kind !== kind) {
      this.misuse(`${what}: not a ${kind} handle of this relay; ignored`);
      return null;
    }
    if (handle.ended) {
      this.misuse(`${what}: ${kind} span "${handle.name}" (${handle.uuid}) already ended; ignored`);
      return null;
    }
    return handle;
  }

  private request(value: unknown, what: string): LlmRequest {
    if (typeof value === 'object' && value !== null) {
      const request = value as Partial<LlmRequest>;
      return { headers: request.headers ?? {}, content: request.content };
    }
    this.misuse(`${what}: request is not an object {headers, content}; recorded as content`);
    return { headers: {}, content: value };
  }

  /**
   * True while no receiver takes event objects: events are then written as
   * lines straight away. Checked once per call; nothing between the check
   * and the write runs a receiver, so it cannot change in between.
   */
  private linesOnly(): boolean {
    return this.listeners.length === 0 && this.subscribers.length === 0;
  }

  /**
   * Where a lines-only event is written: straight into the staging buffer
   * of the only ATOF sink (no copy), else into a builder of its own. Hand
   * it to `closeLine` when the line is complete, or to `abandonLine`.
   */
  private openLine(): LineBuilder {
    const sinks = this.lineSinks;
    if (sinks.length === 1) {
      const out = sinks[0]!.beginLine();
      if (out !== null) return out;
    }
    return takeBuilder();
  }

  /** Delivers an event written as a line only (no receiver takes objects). */
  private closeLine(out: LineBuilder): void {
    this.eventCount++;
    const sinks = this.lineSinks;
    const owner = out.owner;
    if (owner === null) {
      for (let i = 0; i < sinks.length; i++) sinks[i]!.appendBytes(out.bytes, out.length);
      giveBack(out);
      return;
    }
    if (sinks.length === 1 && sinks[0] === owner) {
      owner.endLine(true);
      return;
    }
    // The sinks changed while the line was written (a payload getter that registered or closed one).
    const line = out.bytes.slice(out.start, out.length);
    owner.endLine(false);
    for (let i = 0; i < sinks.length; i++) sinks[i]!.appendBytes(line, line.length);
  }

  /** Gives up a line begun with `openLine` (the event path records the event instead). */
  private abandonLine(out: LineBuilder): void {
    if (out.owner === null) giveBack(out);
    else out.owner.endLine(false);
  }

  private emit(event: AtofEvent, top: ScopeRecord | null): void {
    this.eventCount++;
    const sinks = this.lineSinks;
    if (sinks.length > 0) {
      let line: string | undefined;
      try {
        line = serializeEvent(event) + '\n';
      } catch (error) {
        // Only a pathological payload (a string past the engine's limit) gets here.
        this.droppedCount += sinks.length;
        this.internalError('serializing an event', error);
      }
      if (line !== undefined) for (let i = 0; i < sinks.length; i++) sinks[i]!.append(line);
    }
    const listeners = this.listeners;
    for (let i = 0; i < listeners.length; i++) {
      try {
        listeners[i]!(event, top);
      } catch (error) {
        this.receiverFailed('internal sink', error);
      }
    }
    const subscribers = this.subscribers;
    for (let i = 0; i < subscribers.length; i++) {
      try {
        const result: unknown = subscribers[i]!(event);
        if (typeof result === 'object' && result !== null && typeof (result as PromiseLike<unknown>).then === 'function') {
          (result as PromiseLike<unknown>).then(undefined, (error: unknown) => this.receiverFailed('subscriber', error));
        }
      } catch (error) {
        this.receiverFailed('subscriber', error);
      }
    }
  }

  private stamp(timestampUs: unknown): number {
    if (timestampUs == null) return this.clock();
    if (typeof timestampUs === 'number' && Number.isFinite(timestampUs) && Math.abs(timestampUs) <= Number.MAX_SAFE_INTEGER) {
      return Math.floor(timestampUs);
    }
    this.misuse(`timestampUs must be integer Unix microseconds, got ${String(timestampUs)}; using the clock`);
    return this.clock();
  }

  private endStamp(timestampUs: unknown, startUs: number): number {
    const endUs = this.stamp(timestampUs);
    if (endUs > startUs) return endUs;
    this.adjustedCount++;
    safeLog(this.logger, 'debug', `end timestamp ${endUs} is not after start ${startUs}; recorded as start + 1 µs`);
    return startUs + 1;
  }

  private misuse(message: string): void {
    this.errorCount++;
    safeLog(this.logger, 'debug', `memory relay: ${message}`);
  }

  private receiverFailed(what: string, error: unknown): void {
    this.errorCount++;
    this.subscriberErrorCount++;
    safeLog(this.logger, 'debug', `memory relay: ${what} failed: ${describeError(error)}`);
  }

  private internalError(what: string, error: unknown): void {
    this.errorCount++;
    safeLog(this.logger, 'warn', `memory relay: ${what} failed: ${describeError(error)}`);
  }
}

/**
 * The session headers native adds to a managed LLM request: the nearest
 * Agent scope's `metadata.session_id` (or its name) as `x-dynamo-session-id`,
 * and the next Agent above it as `x-dynamo-parent-session-id`.
 */
function sessionHeaders(parent: ScopeRecord | null): JsonObject | undefined {
  let agent = parent;
  while (agent !== null && agent.category !== 'agent') agent = agent.parent;
  if (agent === null) return undefined;
  let above = agent.parent;
  while (above !== null && above.category !== 'agent') above = above.parent;
  return above === null
    ? { 'x-dynamo-session-id': sessionKey(agent) }
    : { 'x-dynamo-parent-session-id': sessionKey(above), 'x-dynamo-session-id': sessionKey(agent) };
}

function sessionKey(scope: ScopeRecord): string {
  const metadata = scope.metadata;
  if (typeof metadata === 'object' && metadata !== null && !Array.isArray(metadata)) {
    const id = metadata.session_id;
    if (typeof id === 'string') return id;
  }
  return scope.name;
}

/**
 * The request a managed LLM call receives: the caller's headers (credentials
 * included: they are only dropped from the record) with a W3C `traceparent`
 * (trace id = the top-level scope's uuid, span id = the low 64 bits of the
 * LLM span's uuid, as native) and the session headers; the content is the
 * caller's own object.
 */
function forwardedRequest(
  request: LlmRequest,
  session: JsonObject | undefined,
  parent: ScopeRecord | null,
  spanUuid: string,
): LlmRequest {
  const headers: Record<string, string> = {};
  const source = request.headers;
  if (typeof source === 'object' && source !== null) {
    for (const key of Object.keys(source)) {
      if (key.toLowerCase() !== 'traceparent') headers[key] = (source as Record<string, string>)[key]!;
    }
  }
  const spanHex = spanUuid.replaceAll('-', '');
  const traceHex = parent === null ? spanHex : parent.top.uuid.replaceAll('-', '');
  headers.traceparent = `00-${traceHex}-${spanHex.slice(16)}-01`;
  if (session !== undefined) for (const key in session) headers[key] = session[key] as string;
  return { headers, content: request.content };
}

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value == null) return '';
  try {
    return String(value);
  } catch {
    return '';
  }
}

function describeError(error: unknown): string {
  try {
    return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  } catch {
    return 'unknown error';
  }
}

function joinPath(directory: string, filename: string): string {
  return path.join(directory === '' ? '.' : directory, filename);
}

