/**
 * Differential harness for the ATIF builder: drives `nemo-relay-node`
 * directly with scripted scenarios (explicit microsecond timestamps on every
 * manual call, as native-binding.md §0.3 requires for a stable order),
 * captures the raw subscriber events and the native `AtifExporter` output,
 * so a test can feed the same events to `AtifBuilder` and compare.
 *
 * The native runtime is process-global: scenarios must run one at a time,
 * and everything registered here is deregistered before returning.
 */

import { createRequire } from 'node:module';
import { nowMicros } from '../../src/shared/clock.ts';
import type { Json } from '../../src/relay/contract.ts';
import type { AtofEvent } from '../../src/formats/atof/types.ts';

/** An opaque native handle (scope, LLM or tool). */
export interface NativeHandle {
  readonly uuid: string;
  readonly name: string;
}

/** The slice of `nemo-relay-node` the harness uses; arguments are positional, as in the binding. */
export interface NativeLib {
  ScopeType: Record<'Agent' | 'Function' | 'Tool' | 'Llm' | 'Custom' | 'Unknown', number>;
  pushScope(...args: unknown[]): NativeHandle;
  popScope(...args: unknown[]): void;
  event(...args: unknown[]): void;
  llmCall(...args: unknown[]): NativeHandle;
  llmCallEnd(...args: unknown[]): void;
  toolCall(...args: unknown[]): NativeHandle;
  toolCallEnd(...args: unknown[]): void;
  toolCallExecuteAsync(...args: unknown[]): Promise<unknown>;
  llmCallExecuteAsync(...args: unknown[]): Promise<unknown>;
  registerSubscriber(name: string, callback: (event: unknown) => void): void;
  deregisterSubscriber(name: string): boolean;
  flushSubscribers(): Promise<void>;
  AtifExporter: new (sessionId: string, agentName: string, agentVersion: string, modelName?: string | null) => {
    register(name: string): void;
    deregister(name: string): boolean;
    exportJson(): string;
  };
  initialize(config: unknown, tomlPath?: string | null): Promise<{ close(): Promise<void>; isActive: boolean }>;
  createScopeStack(): unknown;
  withScopeStack(stack: unknown, callback: () => unknown): unknown;
}

export interface NativeObservability {
  ComponentSpec(config: unknown): unknown;
  atofConfig(config: unknown): unknown;
  atifConfig(config: unknown): unknown;
}

function load(): { lib?: NativeLib; observability?: NativeObservability; error?: unknown } {
  try {
    const require = createRequire(import.meta.url);
    return {
      lib: require('nemo-relay-node') as NativeLib,
      observability: require('nemo-relay-node/observability') as NativeObservability,
    };
  } catch (error) {
    return { error };
  }
}

const loaded = load();
export const native: NativeLib | undefined = loaded.lib;
export const observability: NativeObservability | undefined = loaded.observability;
export const nativeSkipReason =
  native === undefined ? `nemo-relay-node cannot load here: ${String((loaded.error as Error)?.message ?? loaded.error)}` : '';
if (native === undefined) console.warn(`[atif differential tests] skipped: ${nativeSkipReason}`);

export interface PushOptions {
  metadata?: Json;
  input?: Json;
}

/**
 * The manual API with a strictly increasing wall-clock stamp on every call.
 * Managed calls (`toolExecute`, `llmExecute`) take no stamp: native uses its
 * own clock, which is also wall time, so the order stays consistent.
 */
export class Scenario {
  constructor(readonly lib: NativeLib) {}

  /** Runs `fn` with its own scope stack active, so its top-level scopes are roots of their own. */
  onStack<T>(stack: unknown, fn: () => T): T {
    return this.lib.withScopeStack(stack, fn) as T;
  }

  readonly type = (name: keyof NativeLib['ScopeType']): number => this.lib.ScopeType[name];

  push(name: string, type: keyof NativeLib['ScopeType'], parent: NativeHandle | null, options: PushOptions = {}): NativeHandle {
    return this.lib.pushScope(name, this.type(type), parent, null, null, options.metadata ?? null, options.input ?? null, nowMicros());
  }

  pop(handle: NativeHandle, output: Json = null, metadata: Json = null): void {
    this.lib.popScope(handle, output, nowMicros(), metadata);
  }

  mark(name: string, parent: NativeHandle | null, data: Json = null, metadata: Json = null): void {
    this.lib.event(name, parent, data, metadata, nowMicros());
  }

  llm(name: string, content: Json, parent: NativeHandle | null, options: { metadata?: Json; model?: string | null } = {}): NativeHandle {
    return this.lib.llmCall(name, { headers: {}, content }, parent, null, null, options.metadata ?? null, options.model ?? null, nowMicros());
  }

  llmEnd(handle: NativeHandle, response: Json, metadata: Json = null): void {
    this.lib.llmCallEnd(handle, response, null, metadata, nowMicros());
  }

  /** An LLM start and end in one go. */
  chat(name: string, content: Json, response: Json, parent: NativeHandle | null, options: { metadata?: Json; model?: string | null } = {}): NativeHandle {
    const handle = this.llm(name, content, parent, options);
    this.llmEnd(handle, response, options.metadata ?? null);
    return handle;
  }

  tool(name: string, args: Json, parent: NativeHandle | null, toolCallId: string | null, metadata: Json = null): NativeHandle {
    return this.lib.toolCall(name, args, parent, null, null, metadata, toolCallId, nowMicros());
  }

  toolEnd(handle: NativeHandle, result: Json, options: { annotation?: Json; metadata?: Json } = {}): void {
    const payload = options.annotation === undefined ? { result } : { result, annotation: options.annotation };
    this.lib.toolCallEnd(handle, payload, null, options.metadata ?? null, nowMicros());
  }

  /** A managed tool call whose implementation throws: the end event has `data: null`. */
  async failingToolExecute(name: string, args: Json, parent: NativeHandle | null, toolCallId: string | null): Promise<void> {
    await this.lib
      .toolCallExecuteAsync(name, args, async () => {
        throw new Error('tool failed');
      }, parent, null, null, null, toolCallId)
      .catch(() => undefined);
  }

  async toolExecute(name: string, args: Json, result: Json, parent: NativeHandle | null, toolCallId: string | null): Promise<void> {
    await this.lib.toolCallExecuteAsync(name, args, async () => ({ result }), parent, null, null, null, toolCallId);
  }

  /** A managed LLM call whose implementation throws. */
  async failingLlmExecute(name: string, content: Json, parent: NativeHandle | null, model: string | null): Promise<void> {
    await this.lib
      .llmCallExecuteAsync(name, { headers: {}, content }, async () => {
        throw new Error('provider 500');
      }, parent, null, null, null, model)
      .catch(() => undefined);
  }

  async llmExecute(name: string, content: Json, response: Json, parent: NativeHandle | null, model: string | null): Promise<void> {
    await this.lib.llmCallExecuteAsync(name, { headers: {}, content }, async () => response, parent, null, null, null, model);
  }
}

let serial = 0;

export interface ExporterRun {
  /** The raw subscriber events, in delivery order. */
  events: AtofEvent[];
  /** `AtifExporter.exportJson()` text. */
  nativeJson: string;
}

export interface ExporterOptions {
  sessionId: string;
  agentName: string;
  agentVersion: string;
  modelName?: string;
}

/**
 * Runs `script` with a raw subscriber and a manual `AtifExporter`
 * registered, flushes, and returns both captures. `exportBeforeEnd` lets a
 * script export a partial trajectory itself (the returned `nativeJson` is
 * then what the script passed to `capture`).
 */
export async function runExporterScenario(
  lib: NativeLib,
  options: ExporterOptions,
  script: (scenario: Scenario) => void | Promise<void>,
): Promise<ExporterRun> {
  const id = ++serial;
  const subscriberName = `atif-diff-raw-${id}`;
  const exporterName = `atif-diff-exporter-${id}`;
  const events: AtofEvent[] = [];
  lib.registerSubscriber(subscriberName, (event) => {
    events.push(event as AtofEvent);
  });
  const exporter = new lib.AtifExporter(options.sessionId, options.agentName, options.agentVersion, options.modelName ?? null);
  exporter.register(exporterName);
  try {
    await script(new Scenario(lib));
    await lib.flushSubscribers();
    return { events, nativeJson: exporter.exportJson() };
  } finally {
    exporter.deregister(exporterName);
    lib.deregisterSubscriber(subscriberName);
  }
}
