/**
 * `NativeRelay`: the `RelayBackend` contract over `nemo-relay-node`.
 *
 * What it adds on top of the binding (whose traps each item answers):
 * - every payload goes through `toJson()` first (payloads.ts), so no value a
 *   host passes can abort, crash or throw;
 * - every manual call carries an explicit microsecond timestamp, so
 *   delivery order equals timestamp order and ATIF steps stay in order;
 * - scopes live on the adapter's own native stacks with explicit parents
 *   (scopes.ts): sessions never share one, concurrent children get their
 *   own, and a parent popped before its child ends right after it, so
 *   interleaved sessions never collide and scopes can close in any order;
 * - double ends and pops, unknown handles and native failures are counted
 *   (`stats()`) and logged once per operation, never thrown;
 * - managed execution hands the host back its own result and its own error
 *   object, not native's JSON copy or its `internal error:` rewrite;
 * - per-session ATIF (atif.ts), ATOF file sinks (atof.ts) and the plugin
 *   host (plugins-toml-activation.ts).
 *
 * @module
 */

import type {
  AtifExporter,
  AtifExporterOptions,
  AtofExporter,
  AtofExporterOptions,
  BackendStats,
  DynamicPluginSpec,
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
  PropagationContext,
  PushScopeOptions,
  RelayBackend,
  ScopeHandle,
  ToolEndOptions,
  ToolHandle,
  ToolStartOptions,
} from '../src/backends/native-surface.ts';
import { isScopeCategory } from '../src/backends/native-surface.ts';
import { safeLog, type Logger } from '../src/backends/native-surface.ts';
import { rules } from '../src/backends/native-surface.ts';
import { atExit, atLoopEnd, errorMessage, HeldSwitch, RemoteOutputLedger, settleWithin } from '../src/backends/native-surface.ts';
import { AtifRouter } from './atif.ts';
import { NativeAtofSink } from './atof.ts';
import type { LoadedBinding, NativeBinding, NativeLlmRequest, NativePropagationContext, NativeScopeHandle, NativeToolResult } from './binding.ts';
import {
  COPY_WITHOUT_CREDENTIALS,
  json,
  nameOf,
  PLAIN_COPY,
  type PayloadCopy,
  WHOLE_COPY,
  WHOLE_COPY_WITHOUT_CREDENTIALS,
  optionalString,
  requestOf,
  scopeAttributesOf,
  scopeTypeOf,
  timestampOf,
  toolErrorMetadata,
  toolResultOf,
} from './payloads.ts';
import { activatePluginHost, type NativePluginActivation, type PluginHostContext } from './plugins-toml-activation.ts';
import { ScopeStacks, ScopeState, SpanState, type Frame, type PendingPop, type PushCall } from './scopes.ts';

/** Counters of the native adapter: the contract's three plus deferred pops. */
export interface NativeRelayStats extends BackendStats {
  /** Scopes the caller popped while child scopes above them were open; ended once those are popped. */
  pendingPops: number;
}

export interface NativeRelayConfig {
  logger: Logger;
  /** Let native layer the user and system `plugins.toml` files (plugins-toml-activation.ts). */
  allowConfigDiscovery: boolean;
}

/** The native backend: the `RelayBackend` contract over `nemo-relay-node`. */
export class NativeRelay implements RelayBackend {
  readonly kind = 'native' as const;
  readonly version: string;
  readonly #binding: NativeBinding;
  readonly #stacks: ScopeStacks;
  readonly #logger: Logger;
  readonly #allowConfigDiscovery: boolean;
  readonly #atif: AtifRouter;
  readonly #sinks = new Set<NativeAtofSink>();
  readonly #activations = new Set<NativePluginActivation>();
  readonly #warned = new Set<string>();
  /** Popped by the caller, waiting for scopes above them on their stack. */
  readonly #pending = new Set<ScopeState>();
  /** The ATIF uploads this adapter sends for native's activations (atif-uploads.ts), across activations. */
  readonly #remote = new RemoteOutputLedger();
  /** How payloads are copied: credential headers dropped while `dropCredentialHeaders` callers hold it. */
  #copy: PayloadCopy = PLAIN_COPY;
  /** The copy of a managed call's content, arguments and result (the response cache's key and answer): media whole. */
  #wholeCopy: PayloadCopy = WHOLE_COPY;
  readonly #credentialDrops = new HeldSwitch((drop) => {
    this.#copy = drop ? COPY_WITHOUT_CREDENTIALS : PLAIN_COPY;
    this.#wholeCopy = drop ? WHOLE_COPY_WITHOUT_CREDENTIALS : WHOLE_COPY;
  });
  #events = 0;
  #errors = 0;
  #dropped = 0;
  #shutdown: Promise<void> | null = null;
  /** The event count when native last confirmed delivery of everything sent (a drain). */
  #drainedAt = 0;
  /** The event count when each live activation started: what its OTLP exporter may still hold at exit. */
  readonly #activationStarts = new Map<NativePluginActivation, number>();
  /** The activations closed because the event loop ran dry, and the event count then. */
  readonly #closedAtLoopEnd = new Map<NativePluginActivation, number>();
  readonly #removeExitTasks: (() => void)[];

  /** Wraps a loaded binding; use `loadNativeRelay()` rather than this constructor. */
  constructor(loaded: LoadedBinding, config: NativeRelayConfig) {
    this.#binding = loaded.binding;
    this.version = loaded.version;
    this.#logger = config.logger;
    this.#allowConfigDiscovery = config.allowConfigDiscovery;
    this.#stacks = new ScopeStacks(loaded.binding);
    this.#atif = new AtifRouter(loaded.binding, (operation, error) => this.#fail(operation, error), () => this.#events);
    // A host that calls process.exit() right after its last hook: native's queue is delivered first (its files
    // and trajectories written, then collected by the uploads), and what its OTLP exporter cannot send is said.
    this.#removeExitTasks = [atExit(() => this.#deliverAtExit(), 'deliver'), atExit(() => this.#sayUnsentAtExit(), 'write'), atLoopEnd(() => this.#closeAtLoopEnd())];
  }

  // ---- scopes and marks ---------------------------------------------------

  /** Opens a native scope. Never throws. */
  pushScope(options: PushScopeOptions): ScopeHandle {
    let parent: ScopeState | null = null;
    try {
      const timestamp = timestampOf(options.timestampUs);
      parent = this.#scopeOf(options.parent, 'pushScope');
      const name = nameOf(options.name);
      const category = options.category;
      const scopeType = scopeTypeOf(this.#binding.ScopeType, category);
      const attributes = scopeAttributesOf(options.attributes);
      const metadata = json(options.metadata, this.#copy);
      const input = json(options.input, this.#copy);
      const binding = this.#binding;
      const push = (nativeParent: NativeScopeHandle | null) => binding.pushScope(name, scopeType, nativeParent, attributes, null, metadata, input, timestamp);
      const received = parent === null ? read(() => options.propagation) : undefined;
      const state = (received !== undefined && received !== null ? this.#pushReceived(received, scopeType, push) : null) ?? this.#stacks.push(parent, scopeType, push);
      state.start = { name, category: categoryOf(category), attributes: attributeNames(attributes), input, metadata, timestampUs: timestamp };
      this.#events += 1;
      return state as unknown as ScopeHandle;
    } catch (error) {
      this.#drop('pushScope', error);
      return new ScopeState(null, parent, null, false, null) as unknown as ScopeHandle;
    }
  }

  /**
   * A top-level scope continuing a received context, on native's own stack
   * seeded from it; null (an ordinary top-level scope is pushed instead, and
   * the failure counted) when native refuses the context or cannot seed stacks.
   */
  #pushReceived(context: PropagationContext, scopeType: number, push: PushCall): ScopeState | null {
    let state: ScopeState | null;
    try {
      state = this.#stacks.pushReceived(nativeContext(context), scopeType, push);
    } catch (error) {
      this.#fail('pushScope (propagation context)', error);
      return null;
    }
    if (state === null) this.#fail('pushScope (propagation context)', new Error('this nemo-relay-node has no createScopeStackFromPropagation; the scope opens as an ordinary top-level one'));
    return state;
  }

  /** Closes a native scope. Never throws. */
  popScope(handle: ScopeHandle, options?: PopScopeOptions): void {
    const state = this.#scopeOf(handle, 'popScope');
    if (state === null) return;
    if (state.ended) {
      this.#fail('popScope', new Error('scope already popped'));
      return;
    }
    state.ended = true;
    if (state.native === null) return; // never reached native; its start was already counted as dropped
    try {
      // Read defensively: an unreadable options object must not leave the scope open forever.
      const args = {
        output: json(read(() => options?.output), this.#copy),
        metadata: json(read(() => options?.metadata), this.#copy),
        timestampUs: endAfter(state.start?.timestampUs ?? 0, timestampOf(read(() => options?.timestampUs))),
      };
      // A scope with open children above it on its stack is popped when they are (scopes.ts).
      if (this.#stacks.pop(state, args, this.#nativePop) === 'deferred') this.#pending.add(state);
    } catch (error) {
      this.#drop('popScope', error);
    }
  }

  readonly #nativePop = (scope: ScopeState, native: NativeScopeHandle, pop: PendingPop): void => {
    this.#pending.delete(scope);
    try {
      this.#binding.popScope(native, pop.output, pop.timestampUs, pop.metadata);
      this.#events += 1;
    } catch (error) {
      this.#drop('popScope', error);
    }
  };

  /** Records a native mark. Never throws. */
  mark(options: MarkOptions): void {
    try {
      const timestamp = timestampOf(options.timestampUs);
      const parent = this.#scopeOf(options.parent, 'mark');
      const name = nameOf(options.name);
      const data = json(options.data, this.#copy);
      const metadata = json(options.metadata, this.#copy);
      const { frame, handle } = this.#stacks.emitContext(parent);
      const binding = this.#binding;
      this.#stacks.run(frame, () => binding.event(name, handle, data, metadata, timestamp));
      this.#events += 1;
    } catch (error) {
      this.#drop('mark', error);
    }
  }

  // ---- LLM and tool spans -------------------------------------------------

  /** Opens a native LLM span. Never throws. */
  llmStart(options: LlmStartOptions): LlmHandle {
    let frame = null;
    try {
      const timestamp = timestampOf(options.timestampUs);
      const parent = this.#scopeOf(options.parent, 'llmStart');
      const name = nameOf(options.name);
      const request = requestOf(options.request, this.#copy);
      const metadata = json(options.metadata, this.#copy);
      const modelName = optionalString(options.modelName);
      const context = this.#stacks.emitContext(parent);
      frame = context.frame;
      const binding = this.#binding;
      const native = this.#stacks.run(context.frame, () =>
        binding.llmCall(name, request, context.handle, null, null, metadata, modelName, timestamp),
      );
      this.#events += 1;
      return new SpanState('llm', native, context.frame, timestamp, parent) as unknown as LlmHandle;
    } catch (error) {
      this.#drop('llmStart', error);
      return deadSpan('llm', frame) as unknown as LlmHandle;
    }
  }

  /** Closes a native LLM span. Never throws. */
  llmEnd(handle: LlmHandle, options: LlmEndOptions): void {
    const span = this.#spanOf(handle, 'llm', 'llmEnd');
    if (span === null || span.native === null) return;
    const native = span.native;
    try {
      const timestamp = endAfter(span.startUs, timestampOf(read(() => options?.timestampUs)));
      const response = json(read(() => options?.response), this.#copy);
      const metadata = json(read(() => options?.metadata), this.#copy);
      const binding = this.#binding;
      // Native forces otel.status_code "OK" on a manual LLM end: an error can only live in response and metadata.
      this.#stacks.run(span.frame, () => binding.llmCallEnd(native, response, null, metadata, timestamp));
      this.#events += 1;
    } catch (error) {
      this.#drop('llmEnd', error);
    }
  }

  /** Opens a native tool span. Never throws. */
  toolStart(options: ToolStartOptions): ToolHandle {
    let frame = null;
    try {
      const timestamp = timestampOf(options.timestampUs);
      const parent = this.#scopeOf(options.parent, 'toolStart');
      const name = nameOf(options.name);
      const args = json(options.args, this.#copy);
      const metadata = json(options.metadata, this.#copy);
      const toolCallId = optionalString(options.toolCallId);
      const context = this.#stacks.emitContext(parent);
      frame = context.frame;
      const binding = this.#binding;
      const native = this.#stacks.run(context.frame, () =>
        binding.toolCall(name, args, context.handle, null, null, metadata, toolCallId, timestamp),
      );
      this.#events += 1;
      return new SpanState('tool', native, context.frame, timestamp, parent) as unknown as ToolHandle;
    } catch (error) {
      this.#drop('toolStart', error);
      return deadSpan('tool', frame) as unknown as ToolHandle;
    }
  }

  /** Closes a native tool span. Never throws. */
  toolEnd(handle: ToolHandle, options: ToolEndOptions): void {
    const span = this.#spanOf(handle, 'tool', 'toolEnd');
    if (span === null || span.native === null) return;
    const native = span.native;
    try {
      const timestamp = endAfter(span.startUs, timestampOf(read(() => options?.timestampUs)));
      const failed = read(() => options?.status) === 'error';
      // The annotation describes a successful result; an error end carries none, as in managed execution.
      const result = toolResultOf(read(() => options?.result), failed ? undefined : read(() => options?.annotation), this.#copy);
      const rawMetadata = read(() => options?.metadata);
      const metadata = failed ? toolErrorMetadata(rawMetadata, this.#copy) : json(rawMetadata, this.#copy);
      const binding = this.#binding;
      this.#stacks.run(span.frame, () => binding.toolCallEnd(native, result, null, metadata, timestamp));
      this.#events += 1;
    } catch (error) {
      this.#drop('toolEnd', error);
    }
  }

  /** Drops credential headers from every payload from now on, in the copy each payload gets (the contract's rule), until removed. */
  dropCredentialHeaders(): () => void {
    return this.#credentialDrops.hold();
  }

  // ---- propagation --------------------------------------------------------

  /** The context of work continuing `handle` in another process. Never throws. */
  propagationContext(handle: ScopeHandle | LlmHandle | ToolHandle): PropagationContext | null {
    try {
      if (isInstance(handle, ScopeState)) {
        const uuid = handle.uuid;
        const rootUuid = handle.rootUuid;
        return uuid === undefined ? null : rootUuid === null ? { version: 1, parentUuid: uuid } : { version: 1, rootUuid, parentUuid: uuid };
      }
      if (isInstance(handle, SpanState)) {
        if (handle.native === null) return null;
        const rootUuid = handle.scope?.rootUuid ?? this.#capturedRoot(handle.frame);
        const parentUuid = handle.native.uuid;
        return rootUuid === null ? { version: 1, parentUuid } : { version: 1, rootUuid, parentUuid };
      }
      this.#fail('propagationContext', new TypeError('not a handle of the native backend'));
    } catch (error) {
      this.#fail('propagationContext', error);
    }
    return null;
  }

  /** The root native writes on events of `frame`'s stack now, by its own capture. */
  #capturedRoot(frame: Frame | null): string | null {
    const capture = this.#binding.capturePropagationContext;
    if (frame === null || typeof capture !== 'function') return null;
    return this.#stacks.run(frame, () => capture.call(this.#binding)).rootUuid ?? null;
  }

  // ---- managed execution --------------------------------------------------

  /**
   * Runs `call` inside native `llmCallExecuteAsync`. Resolves with what `call`
   * returned (the same object, not native's JSON copy) and rejects with what
   * it threw (the same object, not native's `internal error:` rewrite). If
   * native fails before `call` ran, `call` is run directly: telemetry never
   * keeps the host from making its call.
   */
  async executeLlm(options: ManagedLlmOptions, call: ManagedLlmCall): Promise<unknown> {
    const hostRequest = read(() => options.request) as LlmRequest;
    const outcome = new CallOutcome();
    const copy = this.#copy;
    const whole = this.#wholeCopy;
    // The host's call gets native's headers (its trace headers injected) and the host's own content, as the memory
    // relay hands it over: native's copy holds a Buffer as JSON numbers.
    const func = async (request: NativeLlmRequest): Promise<unknown> => {
      const value = await outcome.run(() => call({ ...request, content: read(() => hostRequest?.content) } as unknown as LlmRequest));
      return json(value, whole); // a BigInt or a cycle returned into native would kill the process
    };
    let pending: Promise<unknown>;
    try {
      const parent = this.#scopeOf(options.parent, 'executeLlm');
      const name = nameOf(options.name);
      const request = requestOf(hostRequest, whole);
      const metadata = json(options.metadata, copy);
      const modelName = optionalString(options.modelName);
      const { frame, handle } = this.#stacks.emitContext(parent);
      const binding = this.#binding;
      pending = this.#stacks.runWithScopeStack(frame, () =>
        binding.llmCallExecuteAsync(name, request, func as never, handle, null, null, metadata, modelName),
      );
    } catch (error) {
      this.#dropped += 2; // start and end
      this.#fail('executeLlm', error);
      return call(hostRequest);
    }
    return this.#settle('executeLlm', pending, outcome, (result) => result, () => call(hostRequest));
  }

  /** Managed tool execution; same guarantees as `executeLlm`. */
  async executeTool(options: ManagedToolOptions, call: ManagedToolCall): Promise<unknown> {
    const hostArgs = read(() => options.args);
    const outcome = new CallOutcome();
    const copy = this.#copy;
    const whole = this.#wholeCopy;
    // The host's own arguments, as the memory relay hands them over: native's copy holds a Buffer as JSON numbers.
    const func = async (): Promise<NativeToolResult> => {
      const value = await outcome.run(() => call(hostArgs));
      return { result: json(value, whole) }; // native requires the ToolExecutionResult shape
    };
    let pending: Promise<unknown>;
    try {
      const parent = this.#scopeOf(options.parent, 'executeTool');
      const name = nameOf(options.name);
      const args = json(hostArgs, whole);
      const metadata = json(options.metadata, copy);
      const toolCallId = optionalString(options.toolCallId);
      const { frame, handle } = this.#stacks.emitContext(parent);
      const binding = this.#binding;
      pending = this.#stacks.runWithScopeStack(frame, () =>
        binding.toolCallExecuteAsync(name, args, func as never, handle, null, null, metadata, toolCallId),
      );
    } catch (error) {
      this.#dropped += 2; // start and end
      this.#fail('executeTool', error);
      return call(hostArgs);
    }
    return this.#settle(
      'executeTool',
      pending,
      outcome,
      (result) => (result !== null && typeof result === 'object' && 'result' in result ? (result as { result: unknown }).result : result),
      () => call(hostArgs),
    );
  }

  async #settle(
    operation: string,
    pending: Promise<unknown>,
    outcome: CallOutcome,
    unwrap: (result: unknown) => unknown,
    direct: () => unknown,
  ): Promise<unknown> {
    let result: unknown;
    try {
      result = await pending;
    } catch (error) {
      if (outcome.state === 'threw') {
        this.#events += 2;
        throw outcome.error;
      }
      this.#fail(operation, error);
      if (outcome.state === 'returned') return outcome.value;
      if (outcome.state === 'running') return outcome.settled; // native gave up while the call was still running
      this.#dropped += 2;
      return direct();
    }
    this.#events += 2;
    if (outcome.state === 'threw') throw outcome.error;
    // The host's own object when its call ran; native's result when an intercept answered instead.
    return outcome.state === 'returned' ? outcome.value : unwrap(result);
  }

  // ---- exporters ----------------------------------------------------------

  registerAtofExporter(options: AtofExporterOptions): AtofExporter {
    const sink = new NativeAtofSink(
      this.#binding,
      options,
      (closed) => {
        if (this.#sinks.delete(closed)) this.#dropped += closed.droppedEvents;
      },
      () => this.#events,
      (message) => safeLog(this.#logger, 'warn', message),
    );
    this.#sinks.add(sink);
    return sink;
  }

  registerAtifExporter(options: AtifExporterOptions): AtifExporter {
    const state = this.#scopeOf(read(() => options.scope), 'registerAtifExporter');
    return this.#atif.register(options, state);
  }

  // ---- plugin host --------------------------------------------------------

  async initializePluginConfig(document: JsonObject, options?: PluginConfigOptions): Promise<PluginConfigActivation> {
    return this.#track(await activatePluginHost(this.#pluginHostContext(), document, options, null));
  }

  async activateDynamicPlugins(
    document: JsonObject,
    specs: readonly DynamicPluginSpec[],
    options?: PluginConfigOptions,
  ): Promise<PluginConfigActivation> {
    return this.#track(await activatePluginHost(this.#pluginHostContext(), document, options, Array.isArray(specs) ? specs : []));
  }

  #pluginHostContext(): PluginHostContext {
    return {
      binding: this.#binding,
      allowConfigDiscovery: this.#allowConfigDiscovery,
      drain: async () => void (await this.#drain()),
      onError: (operation, error) => this.#fail(operation, error),
      logger: this.#logger,
      remoteOutputs: this.#remote,
    };
  }

  #track(activation: NativePluginActivation): PluginConfigActivation {
    this.#activations.add(activation);
    this.#activationStarts.set(activation, this.#events);
    return activation;
  }

  /**
   * At process exit: native's serial queue delivered now, synchronously
   * (`AtifExporter.exportJson()` waits for it; nothing else in 0.9.x can be
   * called from an `exit` listener), so that its ATOF files and the
   * trajectories of the scopes that ended are written before the process
   * goes; then the ATOF sinks' buffers and counts. Subscribers in
   * JavaScript get nothing more: their callbacks need the event loop.
   */
  #deliverAtExit(): void {
    const sent = this.#events;
    if (sent !== this.#drainedAt && typeof this.#binding.AtifExporter === 'function') {
      try {
        new this.#binding.AtifExporter('nemo-relay-hooks-exit-drain', 'nemo-relay-hooks', '0').exportJson();
        this.#drainedAt = sent;
      } catch (error) {
        this.#fail('exit drain', error);
      }
    }
    for (const sink of [...this.#sinks]) sink.flushAtExit(sent);
  }

  /**
   * The event loop ran dry without a shutdown (a script that simply ends):
   * native's OpenTelemetry exporter would die with the process, its batch
   * unsent (nothing in 0.9.x flushes it but an activation's close). So the
   * activations with collectors are closed now, as a shutdown would, each
   * within its collectors' longest `timeout_millis`: native sends what it
   * holds, and a failed delivery shows in `outputs()`. Hooks after it (a host
   * that goes on from its own `beforeExit`) reach none of that activation's
   * outputs: the exit says how many.
   */
  #closeAtLoopEnd(): Promise<unknown> | undefined {
    const closing = [...this.#activationStarts.keys()].filter((activation) => !activation.closed && activation.collectors().length > 0 && !this.#closedAtLoopEnd.has(activation));
    if (closing.length === 0) return undefined;
    return Promise.all(
      closing.map((activation) => {
        this.#closedAtLoopEnd.set(activation, this.#events);
        const budget = Math.max(...activation.collectors().map((collector) => collector.timeoutMillis));
        return settleWithin(activation.close(), budget, { unref: true });
      }),
    );
  }

  /**
   * At process exit: native's OpenTelemetry exporter sends its batches on
   * its own threads, which only an activation's close waits for; the events
   * recorded since each live activation started that have OTLP collectors
   * may not have gone out. Said once per activation, with their number.
   */
  #sayUnsentAtExit(): void {
    for (const [activation, start] of this.#activationStarts) {
      const closedAt = this.#closedAtLoopEnd.get(activation);
      if (closedAt !== undefined && this.#events > closedAt) {
        safeLog(
          this.#logger,
          'warn',
          `NeMo Relay: ${this.#events - closedAt} event(s) were recorded after the event loop ran dry and plugins.toml's activation was closed (so that native's OpenTelemetry exporter sent what it held); they reached none of its outputs: call plugin.shutdown() when the host is done`,
        );
      }
      const events = this.#events - start;
      const collectors = activation.collectors().map((collector) => collector.url);
      if (activation.closed || events <= 0 || collectors.length === 0) continue;
      safeLog(
        this.#logger,
        'warn',
        `NeMo Relay: the process exited before native's OpenTelemetry exporter confirmed delivery to ${collectors.join(', ')}: up to ${events} event(s) recorded since plugins.toml was activated may not have been sent (native sends on its own threads, which only plugin.shutdown() waits for; await it before process.exit())`,
      );
    }
  }

  // ---- lifecycle and health -----------------------------------------------

  async flush(): Promise<void> {
    // One drain serves every sink: each one's count starts from what was sent before it.
    const sent = this.#events;
    const drained = await this.#drain();
    for (const sink of [...this.#sinks]) await (drained ? sink.flushDrained(sent) : sink.flush());
    // Uploads: what native wrote so far goes out (each destination within its timeout_millis).
    await this.#remote.flush();
  }

  /**
   * Closes the activations and sinks. With `timeoutMs`, the uploads still
   * pending when it runs out are given up (each kept as its local recovery
   * copy, counted as dropped) before this returns.
   */
  shutdown(options: { timeoutMs?: number } = {}): Promise<void> {
    const timeoutMs = read(() => options?.timeoutMs);
    this.#shutdown ??= this.#close(typeof timeoutMs === 'number' && timeoutMs >= 0 ? Date.now() + timeoutMs : Number.POSITIVE_INFINITY);
    return this.#shutdown;
  }

  async #close(deadline: number): Promise<void> {
    if (this.#pending.size > 0) {
      // Their children were never popped, so native cannot end them: their end events are lost.
      this.#dropped += this.#pending.size;
      this.#fail('shutdown', new Error(`${this.#pending.size} popped scope(s) still wait for child scopes that were never popped`));
      this.#pending.clear();
    }
    await this.#drain();
    for (const activation of [...this.#activations]) {
      // An activation's close waits for its uploads (each within its timeout_millis): no longer than the budget.
      const closing = activation.close();
      await settleWithin(closing, deadline - Date.now(), { unref: true });
    }
    for (const sink of [...this.#sinks]) await sink.close();
    this.#atif.close();
    await this.#remote.settle(deadline - Date.now());
    for (const remove of this.#removeExitTasks) remove();
  }

  stats(): NativeRelayStats {
    // Events a live sink found missing from its file are dropped too (closed sinks were added on close).
    let dropped = this.#dropped;
    for (const sink of this.#sinks) dropped += sink.droppedEvents;
    return { events: this.#events, errors: this.#errors, dropped, pendingPops: this.#pending.size };
  }

  outputs(): OutputHealth[] {
    const outputs: OutputHealth[] = [];
    for (const sink of this.#sinks) outputs.push(sink.health());
    // A collector is listed once, whichever activations sent to it; a closed activation still says a delivery it lost.
    // One closed because the event loop ran dry keeps every output listed: no shutdown() retired them into status().
    const collectors = new Map<string, OutputHealth>();
    for (const activation of this.#activations) {
      const listsAll = !activation.closed || this.#closedAtLoopEnd.has(activation);
      for (const health of listsAll ? activation.outputs() : activation.failedCollectors()) {
        if (health.kind !== 'otlp-traces' && health.kind !== 'otlp-logs') {
          outputs.push(health);
          continue;
        }
        const key = `${health.kind} ${health.path}`;
        const listed = collectors.get(key);
        if (listed === undefined) {
          collectors.set(key, health);
          outputs.push(health);
        } else {
          listed.errors += health.errors;
          if (health.lastError !== undefined) listed.lastError = health.lastError;
        }
      }
    }
    outputs.push(...this.#remote.outputs());
    return outputs;
  }

  // ---- internals ----------------------------------------------------------

  /** Waits for native's delivery of everything sent; false when native failed to drain. */
  async #drain(): Promise<boolean> {
    const sent = this.#events;
    try {
      await this.#binding.flushSubscribers();
      this.#drainedAt = Math.max(this.#drainedAt, sent);
      return true;
    } catch (error) {
      this.#fail('flush', error);
      return false;
    }
  }

  #scopeOf(handle: unknown, operation: string): ScopeState | null {
    if (handle === undefined || handle === null) return null;
    if (isInstance(handle, ScopeState)) return handle;
    this.#fail(operation, new TypeError('not a scope handle of the native backend'));
    return null;
  }

  #spanOf(handle: unknown, kind: 'llm' | 'tool', operation: string): SpanState | null {
    if (!isInstance(handle, SpanState) || handle.kind !== kind) {
      this.#fail(operation, new TypeError(`not an ${kind} handle of the native backend`));
      return null;
    }
    if (handle.ended) {
      this.#fail(operation, new Error(`${kind} span already ended`));
      return null;
    }
    handle.ended = true;
    return handle;
  }

  /** A call that lost its event. */
  #drop(operation: string, error: unknown): void {
    this.#dropped += 1;
    this.#fail(operation, error);
  }

  /** A failure the caller must not see: counted, and logged once per operation. */
  #fail(operation: string, error: unknown): void {
    this.#errors += 1;
    const first = !this.#warned.has(operation);
    if (first) this.#warned.add(operation);
    safeLog(
      this.#logger,
      first ? 'warn' : 'debug',
      `native relay ${operation} failed: ${errorMessage(error)}${first ? ' (further failures of this kind are logged at debug level)' : ''}`,
    );
  }
}

/** The ATOF category native writes for a contract category (unknown ones become `unknown`). */
function categoryOf(category: unknown): string {
  return isScopeCategory(category) ? category : 'unknown';
}

/** The ATOF attribute names native writes for a scope bitmask, sorted. */
const attributeNames = rules.scopeAttributeNames;

/** Reads a field of a caller's object; a throwing getter or Proxy trap reads as `undefined`. */
function read<T>(get: () => T): T | undefined {
  try {
    return get();
  } catch {
    return undefined;
  }
}

/** `instanceof` that survives a Proxy whose `getPrototypeOf` trap throws. */
function isInstance<T>(value: unknown, type: abstract new (...args: never[]) => T): value is T {
  try {
    return value instanceof type;
  } catch {
    return false;
  }
}

/** A span whose start never reached native; ending it is a no-op. */
/** An end stamped at or before its start is written 1 µs after it (the contract's rule; native writes it as given). */
const endAfter = rules.endAfterStart;

/** The context as native's JS API takes it: only its three fields (a caller's object may carry more, or getters). */
function nativeContext(context: PropagationContext): NativePropagationContext {
  const rootUuid = context.rootUuid;
  return rootUuid === undefined ? { version: context.version, parentUuid: context.parentUuid } : { version: context.version, rootUuid, parentUuid: context.parentUuid };
}

function deadSpan(kind: 'llm' | 'tool', frame: Frame | null): SpanState {
  return new SpanState(kind, null, frame);
}

/**
 * What happened to the host's call inside managed execution. Native rejects
 * with a re-created `Error` (message prefixed `internal error:`, subclass and
 * properties lost), so the original is captured here and rethrown instead.
 */
class CallOutcome {
  state: 'pending' | 'running' | 'returned' | 'threw' = 'pending';
  value: unknown;
  error: unknown;
  settled: Promise<unknown> | undefined;

  async run(call: () => unknown): Promise<unknown> {
    this.state = 'running';
    const settled = (async () => call())();
    this.settled = settled;
    try {
      this.value = await settled;
      this.state = 'returned';
      return this.value;
    } catch (error) {
      this.error = error;
      this.state = 'threw';
      // Native reads name and message off what it receives: hand it a plain Error, never a hostile object.
      throw plainError(error);
    }
  }
}

function plainError(error: unknown): Error {
  const plain = new Error(errorMessage(error));
  try {
    const name = error instanceof Error ? error.name : undefined;
    if (typeof name === 'string' && name !== '') plain.name = name;
  } catch {
    // Keep "Error".
  }
  return plain;
}
