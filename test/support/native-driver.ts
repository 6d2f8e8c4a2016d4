/**
 * Drives the real `nemo-relay-node` runtime with the relay contract's
 * options, so a test can run one scenario against native and against the
 * in-memory relay and compare what each emits.
 *
 * Mapping (what a correct adapter does): every top-level scope gets its own
 * native scope stack (so its own implicit root), children use their
 * parent's stack, every manual call passes its explicit microsecond
 * timestamp, payloads go through `toJson` first, and an error-ended tool
 * passes `otel.status_code: "ERROR"` in its end metadata.
 *
 * The native runtime is process-global: run scenarios one at a time; the
 * helpers deregister everything they register.
 */

import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type {
  Json,
  LlmHandle,
  ScopeHandle,
  ToolHandle,
  LlmEndOptions,
  LlmRequest,
  LlmStartOptions,
  ManagedLlmCall,
  ManagedLlmOptions,
  ManagedToolCall,
  ManagedToolOptions,
  MarkOptions,
  PopScopeOptions,
  PushScopeOptions,
  ToolEndOptions,
  ToolStartOptions,
} from '../../src/relay/contract.ts';
import { isJsonObject, toJson } from '../../src/shared/json.ts';
import { scopeTypeOf } from '../../native/payloads.ts';
import type { AtofEvent } from '../../src/formats/atof/types.ts';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { observabilityDocument } from './plugins-toml.ts';

type Handle = { readonly uuid: string };
type Stack = object;

interface NativeLib {
  ScopeType: Record<string, number>;
  createScopeStack(): Stack;
  withScopeStack<T>(stack: Stack, fn: () => T): T;
  pushScope(...args: unknown[]): Handle;
  popScope(...args: unknown[]): void;
  event(...args: unknown[]): void;
  llmCall(...args: unknown[]): Handle;
  llmCallEnd(...args: unknown[]): void;
  toolCall(...args: unknown[]): Handle;
  toolCallEnd(...args: unknown[]): void;
  llmCallExecuteAsync(...args: unknown[]): Promise<unknown>;
  toolCallExecuteAsync(...args: unknown[]): Promise<unknown>;
  registerSubscriber(name: string, callback: (event: unknown) => void): void;
  deregisterSubscriber(name: string): boolean;
  flushSubscribers(): Promise<void>;
  AtofExporter: new (config: object) => {
    readonly path: string;
    register(name: string): void;
    deregister(name: string): boolean;
    forceFlush(): void;
    shutdown(): void;
  };
}

export interface NativePlugin {
  validate(config: unknown, toml?: string | null): { config: { diagnostics: unknown[] } };
}

function load(): { lib: NativeLib; plugin: NativePlugin } | { error: string } {
  try {
    const require = createRequire(import.meta.url);
    return { lib: require('nemo-relay-node') as NativeLib, plugin: require('nemo-relay-node/plugin') as NativePlugin };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

const loaded = load();
export const native: NativeLib | null = 'lib' in loaded ? loaded.lib : null;
export const nativePlugin: NativePlugin | null = 'plugin' in loaded ? loaded.plugin : null;
/** Why the native comparisons are skipped, or null when they run. */
export const nativeUnavailable: string | null = 'error' in loaded ? `nemo-relay-node cannot be loaded: ${loaded.error}` : null;
if (nativeUnavailable !== null) console.warn(`[memory parity tests] skipped: ${nativeUnavailable}`);

/** The contract calls a scenario uses; both drivers implement them. */
export interface Driver {
  pushScope(options: PushScopeOptions): ScopeHandle;
  popScope(handle: ScopeHandle, options?: PopScopeOptions): void;
  mark(options: MarkOptions): void;
  llmStart(options: LlmStartOptions): LlmHandle;
  llmEnd(handle: LlmHandle, options: LlmEndOptions): void;
  toolStart(options: ToolStartOptions): ToolHandle;
  toolEnd(handle: ToolHandle, options: ToolEndOptions): void;
  executeLlm(options: ManagedLlmOptions, call: ManagedLlmCall): Promise<unknown>;
  executeTool(options: ManagedToolOptions, call: ManagedToolCall): Promise<unknown>;
}

const json = (value: unknown) => toJson(value);
const opt = (value: string | undefined) => (value === undefined || value === '' ? null : value);

// Native handles stand in for the contract's opaque handles.
class NativeDriver {
  private readonly stacks = new Map<unknown, Stack>();
  /** Spans end inside their parent's stack, as they started: native takes the propagation root from the current stack. */
  private readonly spanParents = new Map<unknown, unknown>();
  constructor(private readonly lib: NativeLib) {}

  private stackOf(handle: unknown): Stack | undefined {
    return handle == null ? undefined : this.stacks.get(handle);
  }

  private inStack<T>(handle: unknown, fn: () => T): T {
    const stack = this.stackOf(handle);
    return stack === undefined ? fn() : this.lib.withScopeStack(stack, fn);
  }

  pushScope(o: PushScopeOptions): unknown {
    const stack = o.parent == null ? this.lib.createScopeStack() : this.stackOf(o.parent)!;
    let mask = 0;
    for (const flag of o.attributes ?? []) mask |= flag === 'parallel' ? 1 : 2;
    const handle = this.lib.withScopeStack(stack, () =>
      this.lib.pushScope(
        o.name,
        scopeTypeOf(this.lib.ScopeType, o.category),
        o.parent ?? null,
        mask === 0 ? null : mask,
        null,
        json(o.metadata),
        json(o.input),
        o.timestampUs ?? null,
      ),
    );
    this.stacks.set(handle, stack);
    return handle;
  }

  popScope(handle: unknown, o?: PopScopeOptions): void {
    this.inStack(handle, () => this.lib.popScope(handle, json(o?.output), o?.timestampUs ?? null, json(o?.metadata)));
  }

  mark(o: MarkOptions): void {
    this.inStack(o.parent, () => this.lib.event(o.name, o.parent ?? null, json(o.data), json(o.metadata), o.timestampUs ?? null));
  }

  llmStart(o: LlmStartOptions): unknown {
    const handle = this.inStack(o.parent, () =>
      this.lib.llmCall(o.name, request(o.request), o.parent ?? null, null, null, json(o.metadata), opt(o.modelName), o.timestampUs ?? null),
    );
    this.spanParents.set(handle, o.parent);
    return handle;
  }

  llmEnd(handle: unknown, o: LlmEndOptions): void {
    this.inStack(this.spanParents.get(handle), () =>
      this.lib.llmCallEnd(handle, json(o.response), null, json(o.metadata), o.timestampUs ?? null),
    );
  }

  toolStart(o: ToolStartOptions): unknown {
    const handle = this.inStack(o.parent, () =>
      this.lib.toolCall(o.name, json(o.args), o.parent ?? null, null, null, json(o.metadata), opt(o.toolCallId), o.timestampUs ?? null),
    );
    this.spanParents.set(handle, o.parent);
    return handle;
  }

  toolEnd(handle: unknown, o: ToolEndOptions): void {
    const failed = o.status === 'error';
    const result: Record<string, unknown> = { result: json(o.result) };
    if (!failed && o.annotation != null) result.annotation = json(o.annotation);
    let metadata: Json = json(o.metadata);
    if (failed) {
      const base: { [key: string]: Json } = isJsonObject(metadata) ? { ...metadata } : metadata === null ? {} : { metadata };
      metadata = { ...base, 'otel.status_code': 'ERROR' };
    }
    this.inStack(this.spanParents.get(handle), () => this.lib.toolCallEnd(handle, result, null, metadata, o.timestampUs ?? null));
  }

  executeLlm(o: ManagedLlmOptions, call: ManagedLlmCall): Promise<unknown> {
    return this.inStack(o.parent, () =>
      this.lib.llmCallExecuteAsync(
        o.name,
        request(o.request),
        async (forwarded: LlmRequest) => json(await call(forwarded)),
        o.parent ?? null,
        null,
        null,
        json(o.metadata),
        opt(o.modelName),
      ),
    );
  }

  executeTool(o: ManagedToolOptions, call: ManagedToolCall): Promise<unknown> {
    return this.inStack(o.parent, () =>
      this.lib.toolCallExecuteAsync(
        o.name,
        json(o.args),
        async (args: unknown) => ({ result: json(await call(args)) }),
        o.parent ?? null,
        null,
        null,
        json(o.metadata),
        opt(o.toolCallId),
      ),
    );
  }
}

function request(value: LlmRequest): { headers: unknown; content: unknown } {
  return { headers: json(value.headers ?? {}), content: json(value.content) };
}

export type Scenario = (driver: Driver) => void | Promise<void>;

export interface ScenarioRun {
  /** Subscriber events, JSON-serialized one per entry. */
  events: string[];
  /** The ATOF file's lines. */
  lines: string[];
}

let counter = 0;

/** Runs a scenario on native with a raw subscriber and an ATOF exporter. */
export async function runNative(scenario: Scenario): Promise<ScenarioRun> {
  const lib = native!;
  const name = `memory-parity-${process.pid}-${++counter}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nrh-native-'));
  const events: string[] = [];
  lib.registerSubscriber(name, (event) => events.push(JSON.stringify(event)));
  const exporter = new lib.AtofExporter({ outputDirectory: dir, filename: 'events.jsonl', mode: 'overwrite' });
  exporter.register(`${name}-atof`);
  try {
    await scenario(new NativeDriver(lib) as unknown as Driver);
    await lib.flushSubscribers();
    exporter.forceFlush();
  } finally {
    exporter.deregister(`${name}-atof`);
    exporter.shutdown();
    lib.deregisterSubscriber(name);
  }
  const lines = readLines(exporter.path);
  fs.rmSync(dir, { recursive: true, force: true });
  return { events, lines };
}

/** Runs a scenario on a fresh in-memory relay with a subscriber and an ATOF exporter. */
export async function runMemory(scenario: Scenario): Promise<ScenarioRun & { relay: ReturnType<typeof createMemoryRelay> }> {
  const relay = createMemoryRelay({ logger: silentLogger });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nrh-memory-'));
  const events: string[] = [];
  relay.subscribe((event: AtofEvent) => {
    events.push(JSON.stringify(event));
  });
  const exporter = relay.registerAtofExporter({ outputDirectory: dir, filename: 'events.jsonl', mode: 'overwrite' });
  await scenario(relay as unknown as Driver);
  await relay.flush();
  await exporter.close();
  const lines = readLines(exporter.path);
  fs.rmSync(dir, { recursive: true, force: true });
  return { events, lines, relay };
}

function readLines(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  return text === '' ? [] : text.replace(/\n$/, '').split('\n');
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/g;
const TIMESTAMP = /"timestamp":"[^"]*"/g;

/**
 * Replaces uuids by labels in order of first appearance (so the same
 * structure gives the same labels), and optionally every timestamp.
 */
export function normalize(texts: readonly string[], options: { timestamps?: boolean } = {}): string[] {
  const labels = new Map<string, string>();
  return texts.map((text) => {
    let out = text.replace(UUID, (uuid) => {
      let label = labels.get(uuid);
      if (label === undefined) {
        label = `<uuid-${labels.size + 1}>`;
        labels.set(uuid, label);
      }
      return label;
    });
    if (options.timestamps) out = out.replace(TIMESTAMP, '"timestamp":"<ts>"');
    return out;
  });
}

interface NativeAtifLib {
  AtifExporter: new (sessionId: string, agentName: string, agentVersion: string, modelName?: string | null) => {
    register(name: string): void;
    deregister(name: string): boolean;
    exportJson(): string;
  };
}

/** Runs a scenario on native with a manual `AtifExporter` registered first; returns its `exportJson()`. */
export async function runNativeAtif(
  scenario: Scenario,
  args: { sessionId: string; agentName: string; agentVersion: string; modelName?: string },
): Promise<string> {
  const lib = native! as unknown as NativeLib & NativeAtifLib;
  const name = `memory-parity-atif-${process.pid}-${++counter}`;
  const exporter = new lib.AtifExporter(args.sessionId, args.agentName, args.agentVersion, args.modelName ?? null);
  exporter.register(name);
  try {
    await scenario(new NativeDriver(lib) as unknown as Driver);
    await lib.flushSubscribers();
    return exporter.exportJson();
  } finally {
    exporter.deregister(name);
  }
}

interface NativePluginLib {
  initialize(config: unknown, tomlPath?: string | null): Promise<{ close(): Promise<void>; readonly isActive: boolean }>;
}

/** Every file under `dir`, by relative path. */
export function readTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of fs.readdirSync(dir, { recursive: true }) as string[]) {
    const full = path.join(dir, entry);
    if (fs.statSync(full).isFile()) out[entry.split(path.sep).join('/')] = fs.readFileSync(full, 'utf8');
  }
  return out;
}

/**
 * A plugins.toml document (as an object) whose observability component
 * writes ATOF to `events.jsonl` and plugin-managed ATIF into `dir`;
 * `atif` overrides or adds ATIF settings.
 */
export const pluginDocument =
  (atif: Record<string, unknown> = {}) =>
  (dir: string) =>
    observabilityDocument({
      atof: { enabled: true, sinks: [{ type: 'file', output_directory: dir, filename: 'events.jsonl', mode: 'overwrite' }] },
      atif: { enabled: true, agent_name: 'probe-agent', agent_version: '0.0.1', model_name: 'm', output_directory: dir, ...atif },
    });

/**
 * Activates a plugins.toml document on native (with `XDG_CONFIG_HOME`
 * pointed at an empty folder, so no ambient plugins.toml leaks in), runs
 * the scenario, closes the activation and returns the files in `dir`.
 */
export async function runNativePlugin(document: (dir: string) => unknown, scenario: Scenario): Promise<Record<string, string>> {
  const lib = native! as unknown as NativeLib & NativePluginLib;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nrh-native-plugin-'));
  const xdg = fs.mkdtempSync(path.join(os.tmpdir(), 'nrh-xdg-'));
  const previous = process.env.XDG_CONFIG_HOME;
  process.env.XDG_CONFIG_HOME = xdg;
  try {
    const activation = await lib.initialize(document(dir));
    try {
      await scenario(new NativeDriver(lib) as unknown as Driver);
      await lib.flushSubscribers();
    } finally {
      await activation.close();
    }
    return readTree(dir);
  } finally {
    if (previous === undefined) delete process.env.XDG_CONFIG_HOME;
    else process.env.XDG_CONFIG_HOME = previous;
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(xdg, { recursive: true, force: true });
  }
}

/** The error message native's `initialize` rejects with for `document`, or null when it activates. */
export async function nativeInitializeError(document: unknown): Promise<string | null> {
  const lib = native! as unknown as NativePluginLib;
  const xdg = fs.mkdtempSync(path.join(os.tmpdir(), 'nrh-xdg-'));
  const previous = process.env.XDG_CONFIG_HOME;
  process.env.XDG_CONFIG_HOME = xdg;
  try {
    const activation = await lib.initialize(document);
    await activation.close();
    return null;
  } catch (error) {
    return (error as Error).message;
  } finally {
    if (previous === undefined) delete process.env.XDG_CONFIG_HOME;
    else process.env.XDG_CONFIG_HOME = previous;
    fs.rmSync(xdg, { recursive: true, force: true });
  }
}

/** Activates the document on a fresh memory relay, runs the scenario, closes, and returns the files in `dir`. */
export async function runMemoryPlugin(document: (dir: string) => unknown, scenario: Scenario): Promise<Record<string, string>> {
  const relay = createMemoryRelay({ logger: silentLogger });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nrh-memory-plugin-'));
  try {
    const activation = await relay.initializePluginConfig(document(dir) as never);
    try {
      await scenario(relay as unknown as Driver);
    } finally {
      await activation.close();
    }
    return readTree(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Normalizes a file tree: uuids labelled across names and contents (names first, in sorted order of their normalized form). */
export function normalizeTree(tree: Record<string, string>): Record<string, string> {
  const names = Object.keys(tree).sort();
  const all = normalize([...names, ...names.map((name) => tree[name]!)]);
  const out: Record<string, string> = {};
  names.forEach((_, i) => {
    out[all[i]!] = all[names.length + i]!;
  });
  return out;
}
