/**
 * The relay adapter contract.
 *
 * `RelayBackend` is the one seam between the NeMo Relay plugin and a relay
 * runtime. It is deliberately smaller and more idiomatic than the native
 * binding: named options instead of positional arguments, explicit parent
 * handles instead of an implicit scope stack, and opaque handles that only
 * the backend that minted them can read.
 *
 * Three implementations exist:
 * - the in-memory relay (`nemo-relay-hooks/memory`), pure JS;
 * - the native adapter (`nemo-relay-hooks/native`) over `nemo-relay-node`;
 * - the recording fake (`nemo-relay-hooks/testing`).
 *
 * Rules every backend follows:
 * - Every method may receive arbitrary JS values as payloads (cycles, BigInt,
 *   functions, class instances). A backend converts them to plain JSON itself
 *   and never crashes or throws because of a payload's shape.
 * - Manual calls (`pushScope`, `mark`, `llmStart`, ...) are synchronous; the
 *   backend stamps them with the shared microsecond clock unless the caller
 *   passes `timestampUs`.
 * - Optional capabilities are feature-detected by the caller with a plain
 *   `typeof backend.x === "function"` check, like the seed's `getattr`.
 *
 * @module
 */

import type { Json, JsonObject } from '../shared/json.ts';
import type { AtofMode, ScopeCategory } from '../formats/atof/types.ts';
import type { ConfigDiagnostic } from '../formats/plugins-toml/diagnostic.ts';

export type { Json, JsonObject } from '../shared/json.ts';
export { SCOPE_CATEGORIES, isScopeCategory, type ScopeCategory, type AtofMode } from '../formats/atof/types.ts';
export type { ConfigDiagnostic } from '../formats/plugins-toml/diagnostic.ts';

declare const handleBrand: unique symbol;

/**
 * An opaque handle to an open (or closed) scope. Only the backend that
 * returned it can interpret it; callers keep it and pass it back.
 */
export interface ScopeHandle {
  readonly [handleBrand]: 'scope';
}

/** An opaque handle to an LLM span started with `llmStart`. */
export interface LlmHandle {
  readonly [handleBrand]: 'llm';
}

/** An opaque handle to a tool span started with `toolStart`. */
export interface ToolHandle {
  readonly [handleBrand]: 'tool';
}

export interface PushScopeOptions {
  name: string;
  category: ScopeCategory;
  /** Parent scope. `null`/absent opens a new top-level scope with its own implicit root. */
  parent?: ScopeHandle | null;
  /** Emitted as the start event's `data`. */
  input?: unknown;
  /** Emitted as the start event's `metadata`; end metadata is merged over it. */
  metadata?: unknown;
  /** ATOF scope attribute flags (`parallel`, `relocatable`). */
  attributes?: readonly ('parallel' | 'relocatable')[];
  timestampUs?: number;
}

export interface PopScopeOptions {
  /** Emitted as the end event's `data`. */
  output?: unknown;
  /** Merged over the start metadata on the end event. */
  metadata?: unknown;
  timestampUs?: number;
}

export interface MarkOptions {
  name: string;
  parent?: ScopeHandle | null;
  data?: unknown;
  metadata?: unknown;
  timestampUs?: number;
}

/** An LLM request as the relay records it. */
export interface LlmRequest {
  headers: Record<string, string>;
  content: unknown;
}

export interface LlmStartOptions {
  /** Span name: the provider or the relay LLM surface. */
  name: string;
  parent?: ScopeHandle | null;
  request: LlmRequest;
  metadata?: unknown;
  modelName?: string;
  timestampUs?: number;
}

export interface LlmEndOptions {
  /** The provider response; becomes the end event's `data`. */
  response: unknown;
  /**
   * `'error'`: the call failed. The memory relay records `otel.status_code:
   * "ERROR"`; native forces `"OK"` on a manual LLM end (its binding has no
   * way to mark one failed), so there the failure lives in the response and
   * `error.type` only.
   */
  status?: 'ok' | 'error';
  metadata?: unknown;
  timestampUs?: number;
}

export interface ToolStartOptions {
  name: string;
  parent?: ScopeHandle | null;
  args: unknown;
  metadata?: unknown;
  /** The external tool call id; omitted from `category_profile` when empty. */
  toolCallId?: string;
  timestampUs?: number;
}

export interface ToolEndOptions {
  result: unknown;
  /** `'error'` records the end with `otel.status_code: "ERROR"`. */
  status?: 'ok' | 'error';
  /** Becomes `category_profile.tool_result_annotation` on a successful end. */
  annotation?: unknown;
  metadata?: unknown;
  timestampUs?: number;
}

export interface ManagedLlmOptions {
  name: string;
  parent?: ScopeHandle | null;
  request: LlmRequest;
  metadata?: unknown;
  modelName?: string;
}

export interface ManagedToolOptions {
  name: string;
  parent?: ScopeHandle | null;
  args: unknown;
  metadata?: unknown;
  toolCallId?: string;
}

/**
 * The real call wrapped by managed LLM execution. It receives the request
 * as the relay forwards it (headers may gain `traceparent`) and returns the
 * response to record.
 */
export type ManagedLlmCall = (request: LlmRequest) => unknown | Promise<unknown>;

/** The real call wrapped by managed tool execution. It returns the tool result. */
export type ManagedToolCall = (args: unknown) => unknown | Promise<unknown>;


export interface AtofExporterOptions {
  /** Folder for the file; created when missing. Defaults to the working directory. */
  outputDirectory?: string;
  filename: string;
  mode: AtofMode;
}

/** A registered ATOF JSONL file sink. */
export interface AtofExporter {
  /** The file being written. */
  readonly path: string;
  /** Writes everything buffered so far. */
  flush(): Promise<void>;
  /** Flushes and stops receiving events. Idempotent. */
  close(): Promise<void>;
}

export interface AtifExporterOptions {
  /** The root scope whose subtree this trajectory covers (the session scope). */
  scope: ScopeHandle;
  /** Written as the trajectory's `session_id` and `trajectory_id`. */
  sessionId: string;
  agentName: string;
  agentVersion: string;
  modelName?: string;
}

/** A per-session ATIF trajectory builder. */
export interface AtifExporter {
  /**
   * The ATIF-v1.7 document for everything seen so far, as JSON text.
   * Callable repeatedly and while scopes are still open (partial trajectory).
   * Backends with asynchronous delivery drain it before building.
   */
  exportJson(): Promise<string>;
  /**
   * The document for the events delivered so far, synchronously: for a write
   * at process exit, where nothing can be awaited. Optional; without it a
   * trajectory not yet written when the process exits is lost.
   */
  exportJsonNow?(): string;
  /** Stops receiving events and frees the builder. Idempotent. */
  deregister(): void;
}

/** A plugin-config validation diagnostic, the same shape native reports. */
export interface PluginConfigReport {
  diagnostics: ConfigDiagnostic[];
  /** The `plugins.toml` files that contributed to the active document. */
  configPaths: string[];
}

/** A live plugin-config activation (the `plugins.toml` observability component). */
export interface PluginConfigActivation {
  readonly report: PluginConfigReport;
  /** Flushes and tears the activation down, writing any partial trajectories. Idempotent. */
  close(): Promise<void>;
}

export interface PluginConfigOptions {
  /** The physical `plugins.toml` the document came from, for diagnostics and relative paths. */
  tomlPath?: string;
}

/** A Hermes `[[dynamic_plugins]]` activation spec, already validated. */
export interface DynamicPluginSpec {
  plugin_id: string;
  kind: 'rust_dynamic' | 'worker';
  manifest_ref: string;
  environment_ref?: string;
  config: JsonObject;
}

/**
 * Health of one output: a file the backend writes, or a remote destination it
 * sends to (an OTLP endpoint, an ATOF stream, an ATIF upload target).
 */
export interface OutputHealth {
  kind: 'atof' | 'atif' | 'otlp-traces' | 'otlp-logs' | 'atof-stream' | 'atif-storage';
  /** The file path, or for a remote output its destination (URL or bucket/key prefix). */
  path: string;
  /** ISO timestamp of the last successful write or send, or null. */
  lastWrite: string | null;
  bytes: number;
  errors: number;
  lastError?: string;
  /** Remote outputs: items (spans, log records, events, trajectories) delivered. */
  sent?: number;
  /** Remote outputs: items whose delivery failed for good (after retries). */
  failed?: number;
  /** Remote outputs: items dropped without a try (queue full, shut down). */
  dropped?: number;
  /** Remote outputs: where a failed item was kept instead (an ATIF recovery copy). */
  recoveryPath?: string;
  /** ATOF files: torn lines (an earlier writer cut off, a write stopped mid-line) ended with a newline; their events were written again whole when they were ours. */
  tornLines?: number;
  /** ATOF files: times the file was found deleted or replaced while open and reopened. */
  reopens?: number;
}

/** Counters a backend keeps about itself. */
export interface BackendStats {
  /** Events produced. */
  events: number;
  /** Calls that failed inside the backend. */
  errors: number;
  /** Events that could not be delivered or written. */
  dropped: number;
}

export type BackendKind = 'native' | 'memory' | 'fake' | 'off' | (string & {});

/**
 * The operations the plugin needs from a relay runtime.
 */
export interface RelayBackend {
  /** What this backend is, for `status()`. */
  readonly kind: BackendKind;
  /** The runtime version when known (for native, the `nemo-relay-node` version). */
  readonly version?: string;

  pushScope(options: PushScopeOptions): ScopeHandle;
  popScope(handle: ScopeHandle, options?: PopScopeOptions): void;
  mark(options: MarkOptions): void;

  llmStart(options: LlmStartOptions): LlmHandle;
  llmEnd(handle: LlmHandle, options: LlmEndOptions): void;

  toolStart(options: ToolStartOptions): ToolHandle;
  toolEnd(handle: ToolHandle, options: ToolEndOptions): void;

  /**
   * Managed LLM execution: records start and end around `call` and resolves
   * with the recorded response. Rejects with the error `call` threw, unchanged.
   */
  executeLlm?(options: ManagedLlmOptions, call: ManagedLlmCall): Promise<unknown>;
  /** Managed tool execution, the tool counterpart of `executeLlm`. */
  executeTool?(options: ManagedToolOptions, call: ManagedToolCall): Promise<unknown>;

  /** Registers an ATOF JSONL file sink for every event from now on. */
  registerAtofExporter(options: AtofExporterOptions): AtofExporter;
  /** Registers an ATIF builder for one session's scope subtree. */
  registerAtifExporter(options: AtifExporterOptions): AtifExporter;

  /**
   * Activates a `plugins.toml` document (observability component and friends).
   * Rejects with a clear error when the document is invalid.
   */
  initializePluginConfig(document: JsonObject, options?: PluginConfigOptions): Promise<PluginConfigActivation>;
  /** Optional: activates Hermes `[[dynamic_plugins]]` specs together with the static document. */
  activateDynamicPlugins?(
    document: JsonObject,
    specs: readonly DynamicPluginSpec[],
    options?: PluginConfigOptions,
  ): Promise<PluginConfigActivation>;

  /** Delivers and writes everything emitted so far. Never rejects. */
  flush(): Promise<void>;
  /** Optional: flushes and releases the backend's resources. Idempotent. */
  shutdown?(): Promise<void>;

  /** Optional: counters for `status()`. */
  stats?(): BackendStats;
  /** Optional: per-output health for `status()`. */
  outputs?(): OutputHealth[];
}
