/**
 * The five ways of recording the same hook events that the per-event case
 * compares. Each setup maps the six operations of a hook stream (mark, LLM
 * start/end, tool start/end, session start/end) onto its own API:
 *
 * - `plugin+memory` / `plugin+native`: `HookRegistry.emit` into the NeMo
 *   Relay plugin over that backend, ATOF file sink on (the whole path:
 *   hook → plugin → backend → ATOF line);
 * - `plugin+off`: the same over the backend that drops everything, which
 *   isolates what the registry and the plugin add;
 * - `bare native`: the same events straight on `nemo-relay-node`, with an
 *   `AtofExporter`, explicit parents and timestamps, and the metadata a
 *   direct caller would build by hand; `bare native, stack per session`
 *   also gives each session its own scope stack, as the adapter must;
 * - `otel sdk` / `otel no-op`: one OpenTelemetry span per scope or span
 *   pair, a zero-length child span per mark, ids as attributes and the
 *   event's payload as one JSON-string attribute (the content ATOF records),
 *   serialised only when the span is recording, as instrumentations do.
 *
 * Every setup is created fresh for each timed batch (`open`), drained inside
 * the timing (`drain`) and torn down outside it (`close`): native's
 * `AtofExporter` is a process-wide subscriber, so two native setups must
 * never be registered at the same time.
 *
 * @module
 */

import { rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { context, trace, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { HookName } from '../../src/hooks/names.ts';
import { HookRegistry } from '../../src/hooks/registry.ts';
import type { Logger } from '../../src/shared/logger.ts';
import { createNemoRelayPlugin, type NemoRelayPlugin } from '../../src/index.ts';
import { nowMicros } from '../../src/shared/clock.ts';
import type { RelayBackend } from '../../src/relay/contract.ts';
import type { AtofEvent } from '../../src/formats/atof/types.ts';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import { createNoopRelay } from '../../src/backends/off.ts';
import {
  loadBinding,
  type NativeAtofExporter,
  type NativeBinding,
  type NativeScopeHandle,
  type NativeScopeStack,
  type NativeSpanHandle,
} from '../../native/binding.ts';
import { loadNativeRelay } from '../../native/index.ts';
import { directMetadata, type Payload } from './payloads.ts';

export interface Setup {
  readonly name: string;
  open(): unknown;
  drain(): unknown;
  close(): unknown;
  mark(p: Payload): void;
  llmStart(p: Payload): void;
  llmEnd(p: Payload): void;
  toolStart(p: Payload): void;
  toolEnd(p: Payload): void;
  sessionStart(p: Payload): void;
  sessionEnd(p: Payload): void;
  /** ATOF bytes written so far (0 for setups without a file). */
  bytesWritten(): number;
}

/**
 * A logger that keeps quiet but counts, and shows the first few problems.
 * `expected` matches warnings a case provokes on purpose (not counted).
 */
export function countingLogger(label: string, expected?: RegExp): Logger & { warnings: number } {
  const logger = {
    warnings: 0,
    debug() {},
    info() {},
    warn(message: string, ...details: unknown[]) {
      if (expected?.test(message)) return;
      logger.warnings += 1;
      if (logger.warnings <= 3) process.stderr.write(`[${label}] warn: ${message} ${details.map(String).join(' ')}\n`);
    },
    error(message: string, ...details: unknown[]) {
      logger.warnings += 1;
      if (logger.warnings <= 3) process.stderr.write(`[${label}] error: ${message} ${details.map(String).join(' ')}\n`);
    },
  };
  return logger;
}

const BASE_SESSION = 'bench-session';

// ------------------------------------------------------------------ plugin

export class PluginSetup implements Setup {
  readonly name: string;
  readonly #makeBackend: (logger: Logger) => RelayBackend;
  readonly #file: string;
  readonly #logger: Logger & { warnings: number };
  #hooks: HookRegistry | null = null;
  #plugin: NemoRelayPlugin | null = null;
  #bytes = 0;

  readonly #writeDelayMs: number | undefined;
  /**
   * The bound of `drain()` (`flush`) and `close()` (`shutdown`); the plugin's default when undefined. A
   * profiler (callgrind) runs the process tens of times slower: with the default bound the last
   * trajectories of a round are still pending at its shutdown and left out of the count.
   */
  lifecycleTimeoutMs: number | undefined = undefined;

  /** `trajectoryWriteDelayMs`: the plugin's option (how long a partial trajectory write waits); its default when undefined. */
  constructor(name: string, dir: string, makeBackend: (logger: Logger) => RelayBackend, atif = false, trajectoryWriteDelayMs?: number) {
    this.name = name;
    this.#makeBackend = makeBackend;
    this.#writeDelayMs = trajectoryWriteDelayMs;
    this.#file = path.join(dir, `${name.replace(/\W+/g, '-')}.jsonl`);
    this.atifDirectory = atif ? path.join(dir, `atif-${name.replace(/\W+/g, '-')}`) : null;
    this.#logger = countingLogger(name);
  }

  /**
   * This setup's own trajectory folder, emptied at every `open()` (untimed): each round's fresh plugin
   * replays the same session ids, and a folder that kept the earlier rounds' files would make every
   * session's first write look past one more file of its id each round (the claim of a free name), a
   * cost that grows with the round count and that no steady host pays.
   */
  readonly atifDirectory: string | null;

  get warnings(): number {
    return this.#logger.warnings;
  }

  open(): void {
    if (this.atifDirectory !== null) rmSync(this.atifDirectory, { recursive: true, force: true });
    const hooks = new HookRegistry({ logger: this.#logger });
    const plugin = createNemoRelayPlugin({
      backend: this.#makeBackend(this.#logger),
      env: {},
      logger: this.#logger,
      ...(this.#writeDelayMs === undefined ? {} : { trajectoryWriteDelayMs: this.#writeDelayMs }),
      settings: {
        atofEnabled: true,
        atofOutputDirectory: path.dirname(this.#file),
        atofFilename: path.basename(this.#file),
        atofMode: 'overwrite',
        // Explicit both ways: with no setting, the plugin records ATIF by default.
        ...(this.atifDirectory !== null ? { atifEnabled: true, atifOutputDirectory: this.atifDirectory } : { atifEnabled: false }),
      },
    });
    plugin.register(hooks);
    hooks.emit('on_session_start', { session_id: BASE_SESSION, model: 'gpt-4o-mini', platform: 'cli' });
    this.#hooks = hooks;
    this.#plugin = plugin;
  }

  drain(): Promise<void> {
    return this.#plugin!.flush(this.#bound());
  }

  async close(): Promise<void> {
    await this.#plugin!.shutdown(this.#bound());
    this.#bytes += fileSize(this.#file);
    this.#hooks = null;
    this.#plugin = null;
  }

  #bound(): { timeoutMs?: number } {
    return this.lifecycleTimeoutMs === undefined ? {} : { timeoutMs: this.lifecycleTimeoutMs };
  }

  /** Any hook, for cases that replay a whole hook stream. */
  emit(name: HookName, p: Payload): void {
    this.#hooks!.emit(name, p as never);
  }
  mark(p: Payload): void {
    this.#hooks!.emit('pre_llm_call', p);
  }
  llmStart(p: Payload): void {
    this.#hooks!.emit('pre_api_request', p);
  }
  llmEnd(p: Payload): void {
    this.#hooks!.emit('post_api_request', p);
  }
  toolStart(p: Payload): void {
    this.#hooks!.emit('pre_tool_call', p as Payload & { tool_name: string });
  }
  toolEnd(p: Payload): void {
    this.#hooks!.emit('post_tool_call', p as Payload & { tool_name: string });
  }
  sessionStart(p: Payload): void {
    this.#hooks!.emit('on_session_start', p);
  }
  sessionEnd(p: Payload): void {
    this.#hooks!.emit('on_session_finalize', p);
  }
  bytesWritten(): number {
    return this.#bytes;
  }
}

export function memoryPluginSetup(dir: string): PluginSetup {
  return new PluginSetup('plugin+memory', dir, (logger) => createMemoryRelay({ logger }));
}

/**
 * plugin+memory with ATIF on as well: one trajectory file per session (the
 * configuration the README recommends). `trajectoryWriteDelayMs` as the
 * plugin takes it (`0`: a partial trajectory after every turn).
 */
export function memoryAtifPluginSetup(dir: string, trajectoryWriteDelayMs?: number, name = 'plugin+memory, ATOF + ATIF'): PluginSetup {
  return new PluginSetup(name, dir, (logger) => createMemoryRelay({ logger }), true, trajectoryWriteDelayMs);
}

/**
 * plugin+memory, ATOF only, on its object encoder (the byte path off): a
 * no-op `subscribe()` callback makes the relay build every event as an
 * object, as it does for any reader of events; the callback itself is one
 * empty call per event. Against `memoryPluginSetup`: what the byte path buys.
 */
export function memoryObjectsPluginSetup(dir: string): PluginSetup {
  return new PluginSetup('plugin+memory, objects', dir, (logger) => {
    const relay = createMemoryRelay({ logger });
    relay.subscribe(() => {});
    return relay;
  });
}

/**
 * plugin+memory with a subscriber that keeps every ATOF event it produces,
 * so a case can time what serialising exactly those events costs.
 */
export function capturingMemorySetup(dir: string, captured: AtofEvent[]): Setup {
  return new PluginSetup('plugin+memory (capturing)', dir, (logger) => {
    const relay = createMemoryRelay({ logger });
    relay.subscribe((event) => {
      captured.push(event);
    });
    return relay;
  });
}

/** The plugin over the `off` backend, which drops every call: what the plugin itself costs. */
export function offPluginSetup(dir: string): Setup & { readonly warnings: number } {
  return new PluginSetup('plugin+off', dir, () => createNoopRelay({ reason: 'bench: plugin overhead only' }));
}

export function nativePluginSetup(dir: string): Setup & { readonly warnings: number } {
  return new PluginSetup('plugin+native', dir, (logger) => loadNativeRelay({ logger }));
}

// ------------------------------------------------------------------ bare native

let exporterSerial = 0;

/**
 * With `isolated`, every session gets its own native scope stack and every
 * call enters it with `withScopeStack`: what a direct caller needs so that
 * concurrent sessions never share a stack, and what the native adapter does.
 */
class BareNativeSetup implements Setup {
  readonly name: string;
  readonly #binding: NativeBinding;
  readonly #agent: number;
  readonly #dir: string;
  readonly #file: string;
  readonly #isolated: boolean;
  #exporter: NativeAtofExporter | null = null;
  #exporterName = '';
  #session: NativeScopeHandle | null = null;
  #stack: NativeScopeStack | null = null;
  readonly #llm = new Map<unknown, NativeSpanHandle>();
  readonly #tools = new Map<unknown, NativeSpanHandle>();
  readonly #sessions = new Map<unknown, { scope: NativeScopeHandle; stack: NativeScopeStack | null }>();
  #bytes = 0;

  constructor(dir: string, isolated: boolean) {
    this.name = isolated ? 'bare native, stack per session' : 'bare native';
    this.#binding = loadBinding().binding;
    this.#agent = this.#binding.ScopeType.Agent!;
    this.#dir = dir;
    this.#isolated = isolated;
    this.#file = isolated ? 'bare-native-isolated.jsonl' : 'bare-native.jsonl';
  }

  open(): void {
    const b = this.#binding;
    this.#exporter = new b.AtofExporter({ type: 'file', outputDirectory: this.#dir, filename: this.#file, mode: 'overwrite' });
    this.#exporterName = `bench-atof-${++exporterSerial}`;
    this.#exporter.register(this.#exporterName);
    this.#stack = this.#isolated ? b.createScopeStack() : null;
    this.#session = this.#in(this.#stack, () =>
      b.pushScope(`hermes-session-${BASE_SESSION}`, this.#agent, null, null, null, { session_id: BASE_SESSION, trajectory_id: BASE_SESSION, nemo_relay_scope_role: 'session' }, { session_id: BASE_SESSION }, nowMicros()),
    );
  }

  async drain(): Promise<void> {
    await this.#binding.flushSubscribers();
    this.#exporter!.forceFlush();
  }

  async close(): Promise<void> {
    this.#in(this.#stack, () => this.#binding.popScope(this.#session!, { session_id: BASE_SESSION }, nowMicros(), null));
    await this.drain();
    this.#exporter!.deregister(this.#exporterName);
    this.#exporter!.shutdown();
    this.#bytes += fileSize(path.join(this.#dir, this.#file));
    this.#exporter = null;
  }

  /** Runs `call` inside `stack`; straight on the shared stack when there is none (no closure cost then). */
  #in<T>(stack: NativeScopeStack | null, call: () => T): T {
    return stack === null ? call() : this.#binding.withScopeStack(stack, call);
  }

  mark(p: Payload): void {
    const b = this.#binding;
    if (this.#stack === null) b.event('hermes.turn.start', this.#session, p as never, directMetadata(p) as never, nowMicros());
    else b.withScopeStack(this.#stack, () => b.event('hermes.turn.start', this.#session, p as never, directMetadata(p) as never, nowMicros()));
  }
  llmStart(p: Payload): void {
    const b = this.#binding;
    const request = p.request as Payload;
    const start = () => b.llmCall(p.provider as string, { headers: {}, content: request.body as never }, this.#session, null, null, directMetadata(p) as never, p.model as string, nowMicros());
    this.#llm.set(p.api_request_id, this.#stack === null ? start() : b.withScopeStack(this.#stack, start));
  }
  llmEnd(p: Payload): void {
    const b = this.#binding;
    const span = this.#llm.get(p.api_request_id)!;
    this.#llm.delete(p.api_request_id);
    const response = { ...(p.response as Payload), usage: p.usage, finish_reason: p.finish_reason, model: p.response_model };
    if (this.#stack === null) b.llmCallEnd(span, response as never, null, directMetadata(p) as never, nowMicros());
    else b.withScopeStack(this.#stack, () => b.llmCallEnd(span, response as never, null, directMetadata(p) as never, nowMicros()));
  }
  toolStart(p: Payload): void {
    const b = this.#binding;
    const start = () => b.toolCall(p.tool_name as string, p.args as never, this.#session, null, null, directMetadata(p) as never, p.tool_call_id as string, nowMicros());
    this.#tools.set(p.tool_call_id, this.#stack === null ? start() : b.withScopeStack(this.#stack, start));
  }
  toolEnd(p: Payload): void {
    const b = this.#binding;
    const span = this.#tools.get(p.tool_call_id)!;
    this.#tools.delete(p.tool_call_id);
    if (this.#stack === null) b.toolCallEnd(span, { result: p.result as never }, null, directMetadata(p) as never, nowMicros());
    else b.withScopeStack(this.#stack, () => b.toolCallEnd(span, { result: p.result as never }, null, directMetadata(p) as never, nowMicros()));
  }
  sessionStart(p: Payload): void {
    const b = this.#binding;
    const metadata = { session_id: p.session_id, model: p.model, platform: p.platform, trajectory_id: p.session_id, nemo_relay_scope_role: 'session' };
    const push = () => b.pushScope(`hermes-session-${p.session_id as string}`, this.#agent, null, null, null, metadata as never, { session_id: p.session_id } as never, nowMicros());
    if (!this.#isolated) {
      this.#sessions.set(p.session_id, { scope: push(), stack: null });
      return;
    }
    const stack = b.createScopeStack();
    this.#sessions.set(p.session_id, { scope: b.withScopeStack(stack, push), stack });
  }
  sessionEnd(p: Payload): void {
    const { scope, stack } = this.#sessions.get(p.session_id)!;
    this.#sessions.delete(p.session_id);
    if (stack === null) this.#binding.popScope(scope, p as never, nowMicros(), null);
    else this.#binding.withScopeStack(stack, () => this.#binding.popScope(scope, p as never, nowMicros(), null));
  }
  bytesWritten(): number {
    return this.#bytes;
  }
}

export function bareNativeSetup(dir: string): Setup {
  return new BareNativeSetup(dir, false);
}

/** Bare native calls with the isolation the native adapter gives: a scope stack per session, entered for every call. */
export function isolatedBareNativeSetup(dir: string): Setup {
  return new BareNativeSetup(dir, true);
}

// ------------------------------------------------------------------ OpenTelemetry

class OtelSetup implements Setup {
  readonly name: string;
  readonly #makeTracer: () => { tracer: Tracer; flush(): Promise<void>; close(): Promise<void> };
  #tracer: Tracer | null = null;
  #flush: () => Promise<void> = async () => {};
  #shutdown: () => Promise<void> = async () => {};
  #session: Span | null = null;
  #ctx: Context = context.active();
  readonly #spans = new Map<unknown, Span>();
  readonly #sessions = new Map<unknown, Span>();

  constructor(name: string, makeTracer: () => { tracer: Tracer; flush(): Promise<void>; close(): Promise<void> }) {
    this.name = name;
    this.#makeTracer = makeTracer;
  }

  open(): void {
    const made = this.#makeTracer();
    this.#tracer = made.tracer;
    this.#flush = made.flush;
    this.#shutdown = made.close;
    this.#session = this.#tracer.startSpan(`hermes-session-${BASE_SESSION}`, { attributes: { session_id: BASE_SESSION } });
    this.#ctx = trace.setSpan(context.active(), this.#session);
  }

  drain(): Promise<void> {
    return this.#flush();
  }

  async close(): Promise<void> {
    this.#session!.end();
    await this.#flush();
    await this.#shutdown();
  }

  mark(p: Payload): void {
    const span = this.#tracer!.startSpan('hermes.turn.start', { attributes: attributesOf(p) }, this.#ctx);
    if (span.isRecording()) span.setAttribute('hermes.data', JSON.stringify(p));
    span.end();
  }
  llmStart(p: Payload): void {
    const span = this.#tracer!.startSpan(p.provider as string, { attributes: attributesOf(p) }, this.#ctx);
    if (span.isRecording()) span.setAttribute('hermes.request', JSON.stringify((p.request as Payload).body));
    this.#spans.set(p.api_request_id, span);
  }
  llmEnd(p: Payload): void {
    const span = this.#spans.get(p.api_request_id)!;
    this.#spans.delete(p.api_request_id);
    if (span.isRecording()) {
      span.setAttributes({ 'gen_ai.usage.input_tokens': 812, 'gen_ai.usage.output_tokens': 18, 'hermes.response': JSON.stringify(p.response) });
    }
    span.end();
  }
  toolStart(p: Payload): void {
    const span = this.#tracer!.startSpan(p.tool_name as string, { attributes: attributesOf(p) }, this.#ctx);
    if (span.isRecording()) span.setAttribute('hermes.args', JSON.stringify(p.args));
    this.#spans.set(p.tool_call_id, span);
  }
  toolEnd(p: Payload): void {
    const span = this.#spans.get(p.tool_call_id)!;
    this.#spans.delete(p.tool_call_id);
    if (span.isRecording()) span.setAttributes({ 'hermes.result': p.result as string, 'hermes.status': p.status as string });
    span.end();
  }
  sessionStart(p: Payload): void {
    const span = this.#tracer!.startSpan(`hermes-session-${p.session_id as string}`, { attributes: attributesOf(p) });
    this.#sessions.set(p.session_id, span);
  }
  sessionEnd(p: Payload): void {
    const span = this.#sessions.get(p.session_id)!;
    this.#sessions.delete(p.session_id);
    if (span.isRecording()) span.setAttribute('hermes.output', JSON.stringify(p));
    span.end();
  }
  bytesWritten(): number {
    return 0;
  }
}

function attributesOf(p: Payload): Record<string, string | number | boolean> {
  const metadata = directMetadata(p);
  const attributes: Record<string, string | number | boolean> = {};
  for (const key in metadata) {
    const value = metadata[key];
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') attributes[key] = value;
  }
  return attributes;
}

/** `BasicTracerProvider` + `SimpleSpanProcessor` + `InMemorySpanExporter`, not registered globally. */
export function otelSdkSetup(): Setup {
  return new OtelSetup('otel sdk', () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    return {
      tracer: provider.getTracer('nemo-relay-bench'),
      flush: () => provider.forceFlush(),
      close: async () => {
        exporter.reset();
        await provider.shutdown();
      },
    };
  });
}

/** The API's no-op tracer: what a host gets when no SDK is registered. */
export function otelNoopSetup(): Setup {
  return new OtelSetup('otel no-op', () => ({
    tracer: trace.getTracer('nemo-relay-bench'),
    flush: async () => {},
    close: async () => {},
  }));
}

function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}
