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
 *   `typeof backend.x === "function"` check.
 * - The backend makes the one copy of each payload it records, when the
 *   call crosses this contract; everything downstream (ATOF lines, ATIF
 *   trajectories, OTLP spans, subscribers) reads that copy. The payload's
 *   whole journey, each change of representation and why:
 *   docs/contributing/payload-journey.md.
 *
 * @module
 */

import type { Json, JsonObject } from '../shared/json.ts';
import type { AtofEvent, AtofMode, ScopeCategory } from '../formats/atof/types.ts';
import type { LlmCallPricer } from '../formats/atif/types.ts';
import type { ConfigDiagnostic } from '../formats/plugins-toml/diagnostic.ts';
import type { DynamicPluginSpec } from '../formats/plugins-toml/document.ts';
import type { PropagationContext } from '../formats/propagation.ts';

export type { Json, JsonObject } from '../shared/json.ts';
export { isScopeCategory, type AtofMode, type ScopeCategory } from '../formats/atof/types.ts';
export type { ConfigDiagnostic } from '../formats/plugins-toml/diagnostic.ts';
export type { PropagationContext } from '../formats/propagation.ts';

/** The key of the brand on scope, LLM and tool handles; type-only (no such value exists at run time). */
export declare const handleBrand: unique symbol;

/**
 * An opaque handle to an open (or closed) scope. Only the backend that
 * returned it can interpret it; callers keep it and pass it back.
 */
export interface ScopeHandle {
  /** Brand: only a backend creates scope handles. */
  readonly [handleBrand]: 'scope';
}

/** An opaque handle to an LLM span started with `llmStart`. */
export interface LlmHandle {
  /** Brand: only a backend creates LLM handles. */
  readonly [handleBrand]: 'llm';
}

/** An opaque handle to a tool span started with `toolStart`. */
export interface ToolHandle {
  /** Brand: only a backend creates tool handles. */
  readonly [handleBrand]: 'tool';
}

/** What `pushScope` needs: the scope's name and category, and optionally its parent, input, metadata and time. */
export interface PushScopeOptions {
  /** The scope's name, written as the events' `name`. */
  name: string;
  /** The ATOF category: `agent`, `function`, `llm`, `tool`, `custom`, ... */
  category: ScopeCategory;
  /** Parent scope. `null`/absent opens a new top-level scope with its own implicit root. */
  parent?: ScopeHandle | null;
  /**
   * A top-level scope only (ignored with a `parent`): the scope continues a
   * context received from another process, as native's
   * `createScopeStackFromPropagation` does. Its `parent_uuid` is the
   * context's parent (the caller's span), and it and everything below it
   * carry the context's root as `propagation_root_uuid`, so OTLP puts them
   * in the caller's trace under the caller's span. A rootless context roots
   * an Agent scope at itself.
   */
  propagation?: PropagationContext;
  /** Emitted as the start event's `data`. */
  input?: unknown;
  /** Emitted as the start event's `metadata`; end metadata is merged over it. */
  metadata?: unknown;
  /** ATOF scope attribute flags (`parallel`, `relocatable`). */
  attributes?: readonly ('parallel' | 'relocatable')[];
  /** Event time in epoch microseconds; default: now. */
  timestampUs?: number;
}

/** What `popScope` may add to the end event. */
export interface PopScopeOptions {
  /** Emitted as the end event's `data`. */
  output?: unknown;
  /** Merged over the start metadata on the end event. */
  metadata?: unknown;
  /** Event time in epoch microseconds; default: now. */
  timestampUs?: number;
}

/** A mark: a point event under a scope (turn starts, approvals, errors). */
export interface MarkOptions {
  /** The mark's name, e.g. `hermes.turn.start`. */
  name: string;
  /** The scope the mark belongs to; absent: the current top-level root. */
  parent?: ScopeHandle | null;
  /** Written as the mark's `data`. */
  data?: unknown;
  /** Written as the mark's `metadata`. */
  metadata?: unknown;
  /** Event time in epoch microseconds; default: now. */
  timestampUs?: number;
}

/** An LLM request as the relay records it. */
export interface LlmRequest {
  /** HTTP-style headers of the request (redacted by the caller). */
  headers: Record<string, string>;
  /** The request body as sent to the provider (converted to JSON). */
  content: unknown;
}

/** What `llmStart` needs to open an LLM span. */
export interface LlmStartOptions {
  /** Span name: the provider or the relay LLM surface. */
  name: string;
  /** The scope the span belongs to. */
  parent?: ScopeHandle | null;
  /** The request, recorded as the start event's `data`. */
  request: LlmRequest;
  /** Written as the span's `metadata`. */
  metadata?: unknown;
  /** The model, recorded as `category_profile.model_name`. */
  modelName?: string;
  /** Event time in epoch microseconds; default: now. */
  timestampUs?: number;
}

/** What `llmEnd` records when an LLM span ends. */
export interface LlmEndOptions {
  /** The provider response; becomes the end event's `data`. */
  response: unknown;
  /** Merged over the start metadata on the end event. */
  /**
   * `'error'`: the call failed. The memory relay records `otel.status_code:
   * "ERROR"`; native forces `"OK"` on a manual LLM end (its binding has no
   * way to mark one failed), so there the failure lives in the response and
   * `error.type` only.
   */
  status?: 'ok' | 'error';
  /** Merged over the start metadata on the end event. */
  metadata?: unknown;
  /** Event time in epoch microseconds; default: now. */
  timestampUs?: number;
}

/** What `toolStart` needs to open a tool span. */
export interface ToolStartOptions {
  /** The tool's name. */
  name: string;
  /** The scope the span belongs to. */
  parent?: ScopeHandle | null;
  /** The tool arguments, recorded as the start event's `data`. */
  args: unknown;
  /** Written as the span's `metadata`. */
  metadata?: unknown;
  /** The external tool call id; omitted from `category_profile` when empty. */
  toolCallId?: string;
  /** Event time in epoch microseconds; default: now. */
  timestampUs?: number;
}

/** What `toolEnd` records when a tool span ends. */
export interface ToolEndOptions {
  /** The tool result, recorded as the end event's `data`. */
  result: unknown;
  /** `'error'` records the end with `otel.status_code: "ERROR"`. */
  status?: 'ok' | 'error';
  /** Becomes `category_profile.tool_result_annotation` on a successful end. */
  annotation?: unknown;
  /** Merged over the start metadata on the end event. */
  metadata?: unknown;
  /** Event time in epoch microseconds; default: now. */
  timestampUs?: number;
}

/** A managed LLM call: the relay opens the span, runs the call and closes the span with its response. */
export interface ManagedLlmOptions {
  /** Span name: the provider or the relay LLM surface. */
  name: string;
  /** The scope the span belongs to. */
  parent?: ScopeHandle | null;
  /** The request the call is made with. */
  request: LlmRequest;
  /** Written as the span's `metadata`. */
  metadata?: unknown;
  /** The model, recorded as `category_profile.model_name`. */
  modelName?: string;
}

/** A managed tool call: the relay opens the span, runs the call and closes the span with its result. */
export interface ManagedToolOptions {
  /** The tool's name. */
  name: string;
  /** The scope the span belongs to. */
  parent?: ScopeHandle | null;
  /** The tool arguments the call is made with. */
  args: unknown;
  /** Written as the span's `metadata`. */
  metadata?: unknown;
  /** The external tool call id. */
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


/** Where and how an ATOF JSONL file sink writes. */
export interface AtofExporterOptions {
  /** Folder for the file; created when missing. Defaults to the working directory. */
  outputDirectory?: string;
  /** The file name inside `outputDirectory`. */
  filename: string;
  /** `append` to an existing file, or `overwrite` it. */
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

/** What an ATIF trajectory exporter covers and how it names the agent. */
export interface AtifExporterOptions {
  /** The root scope whose subtree this trajectory covers (the session scope). */
  scope: ScopeHandle;
  /** Written as the trajectory's `session_id`, and as its `trajectory_id` unless `trajectoryId` is given. */
  sessionId: string;
  /** Written as the trajectory's `trajectory_id` (default: `sessionId`). */
  trajectoryId?: string;
  /** Written as `agent.name`. */
  agentName: string;
  /** Written as `agent.version`. */
  agentVersion: string;
  /** Written as `agent.model_name` when the session has no model of its own. */
  modelName?: string;
  /**
   * Without `modelName`: `agent.model_name` is the model the trajectory's
   * first agent step reports, else this (each embedded sub-agent likewise).
   */
  fallbackModelName?: string;
  /**
   * `own`: each embedded sub-agent's `agent` block names the sub-agent
   * (its `child_role`) and its own model (its scope's, else the one its first
   * step reports). Default `parent`: every sub-agent repeats the root's
   * block, as native's `AtifExporter` writes it.
   */
  subagentAgents?: 'own' | 'parent';
  /**
   * A turn that failed or was interrupted (its `on_session_end` says so)
   * says so in the trajectory: `extra.turn_ends` on the turn's last step and
   * a sentence in `notes`; and a tool call that failed says `failed` in its
   * step's `extra.tool_invocations`. Default false: native's `AtifExporter`
   * writes no turn's end, and `completed` for every tool call.
   */
  turnEnds?: boolean;
  /**
   * Prices each agent step whose response reports no cost (`metrics.cost_usd`,
   * summed in `final_metrics.total_cost_usd`): the plugins.toml `pricing`
   * component's catalogs, on both backends.
   */
  priceLlmCall?: LlmCallPricer;
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
  /**
   * `exportJson()`'s text as UTF-8 bytes, for a backend that can write them
   * without making the string first (what a file writer takes). Optional;
   * without it, callers encode `exportJson()`'s text.
   */
  exportBytes?(): Promise<Uint8Array>;
  /** `exportJsonNow()`'s text as UTF-8 bytes; optional as `exportBytes`. */
  exportBytesNow?(): Uint8Array;
  /** Stops receiving events and frees the builder. Idempotent. */
  deregister(): void;
}

/** A plugin-config validation diagnostic, the same shape native reports. */
export interface PluginConfigReport {
  /** Errors and warnings, errors first. */
  diagnostics: ConfigDiagnostic[];
  /** The `plugins.toml` files that contributed to the active document. */
  configPaths: string[];
}

/** A live plugin-config activation (the `plugins.toml` observability component). */
export interface PluginConfigActivation {
  /** What the activation accepted and reported. */
  readonly report: PluginConfigReport;
  /** Flushes and tears the activation down, writing any partial trajectories. Idempotent. */
  close(): Promise<void>;
  /**
   * Whether the activation still writes to its outputs: false once it is
   * closed, by `close()` or by the backend itself (native closes its
   * activations with OTLP collectors when the event loop runs dry, so that
   * its exporter sends its batch). Absent: active until `close()`.
   */
  readonly isActive?: boolean;
}

/** Options of `initializePluginConfig`. */
export interface PluginConfigOptions {
  /** The physical `plugins.toml` the document came from, for diagnostics and relative paths. */
  tomlPath?: string;
}

/** A Hermes `[[dynamic_plugins]]` activation spec, already validated (the plugins.toml document model's). */
export type { DynamicPluginSpec } from '../formats/plugins-toml/document.ts';

/**
 * Health of one output: a file the backend writes, or a remote destination it
 * sends to (an OTLP endpoint, an ATOF stream, an ATIF upload target).
 */
export interface OutputHealth {
  /** What the output is: a local ATOF or ATIF file, or a remote destination. */
  kind: 'atof' | 'atif' | 'otlp-traces' | 'otlp-logs' | 'atof-stream' | 'atif-storage';
  /** The file path, or for a remote output its destination (URL or bucket/key prefix). */
  path: string;
  /** ISO timestamp of the last successful write or send, or null. */
  lastWrite: string | null;
  /** Bytes written or sent so far (remote outputs: the encoded request bodies delivered). */
  bytes: number;
  /** Writes or sends that failed. */
  errors: number;
  /** The most recent failure's message. */
  lastError?: string;
  /** Why nothing was written although nothing failed (an ATIF trajectory without a step, which would not be valid). */
  skipped?: string;
  /** Remote outputs: items (spans, log records, events, trajectories) delivered. */
  sent?: number;
  /** Remote outputs: items whose delivery failed for good (after retries). */
  failed?: number;
  /** Remote outputs: items dropped without a try (queue full, shut down). */
  dropped?: number;
  /**
   * OTLP outputs: of `failed`, the items the receiver refused for their size
   * even in a request of their own (HTTP 413, gRPC RESOURCE_EXHAUSTED): its
   * request size cap, not an outage. A batch refused for its size is sent
   * again in halves, so only such items are lost.
   */
  tooLarge?: number;
  /** Remote outputs: items waiting to be sent or in flight now (so sent + failed + dropped + queued is every item). */
  queued?: number;
  /**
   * Why the counts stay at zero although the output is in use: native sends
   * a plugins.toml OTLP collector with its own exporter, which reports none.
   */
  unobserved?: string;
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

/** Which backend runs: `native`, `memory`, `fake`, `off`, or a custom backend's own name. */
export type BackendKind = 'native' | 'memory' | 'fake' | 'off' | (string & {});

/**
 * The operations the plugin needs from a relay runtime.
 */
export interface RelayBackend {
  /** What this backend is, for `status()`. */
  readonly kind: BackendKind;
  /** The runtime version when known (for native, the `nemo-relay-node` version). */
  readonly version?: string;

  /** Opens a scope and returns its handle. Never throws. */
  pushScope(options: PushScopeOptions): ScopeHandle;
  /** Closes a scope. Never throws. */
  popScope(handle: ScopeHandle, options?: PopScopeOptions): void;
  /** Records a mark. Never throws. */
  mark(options: MarkOptions): void;

  /** Opens an LLM span. Never throws. */
  llmStart(options: LlmStartOptions): LlmHandle;
  /** Closes an LLM span with its response. Never throws. */
  llmEnd(handle: LlmHandle, options: LlmEndOptions): void;

  /** Opens a tool span. Never throws. */
  toolStart(options: ToolStartOptions): ToolHandle;
  /** Closes a tool span with its result. Never throws. */
  toolEnd(handle: ToolHandle, options: ToolEndOptions): void;

  /**
   * Managed LLM execution: records start and end around `call` and resolves
   * with the recorded response. Rejects with the error `call` threw, unchanged.
   */
  executeLlm?(options: ManagedLlmOptions, call: ManagedLlmCall): Promise<unknown>;
  /** Managed tool execution, the tool counterpart of `executeLlm`. */
  executeTool?(options: ManagedToolOptions, call: ManagedToolCall): Promise<unknown>;

  /**
   * Optional: runs `transform` on every event before any output (files,
   * trajectories, OTLP, streams, uploads, subscribers) receives it, after
   * the backend's own plugins.toml redaction. The host's `redact` hook
   * uses it; a backend without it gets the hook applied to each call's
   * payloads instead (native: before its own component). Returns its removal.
   */
  addEventTransform?(transform: (event: AtofEvent) => AtofEvent): () => void;
  /**
   * Optional: from now on, drop credential headers from every payload
   * recorded (the plugin's rule, `shared/credential-headers.ts`), in the
   * copy the backend makes of each payload anyway, until the returned
   * function is called. The plugin asks for it when it has no redact hook
   * to run first, and then does not walk each payload itself; a backend
   * without it gets the plugin's walk before each call.
   */
  dropCredentialHeaders?(): () => void;
  /**
   * Optional: the propagation context of work that continues `handle` in
   * another process: its parent is the scope or span itself, its root the
   * tree's propagation root (the session's). Null for a handle this backend
   * did not mint or that never reached it. Never throws.
   */
  propagationContext?(handle: ScopeHandle | LlmHandle | ToolHandle): PropagationContext | null;

  /** Registers an ATOF JSONL file sink for every event from now on. */
  registerAtofExporter(options: AtofExporterOptions): AtofExporter;
  /** Registers an ATIF builder for one session's scope subtree. */
  registerAtifExporter(options: AtifExporterOptions): AtifExporter;

  /**
   * Activates a `plugins.toml` document (observability component and friends).
   * Rejects with a clear error when the document is invalid.
   */
  initializePluginConfig(document: JsonObject, options?: PluginConfigOptions): Promise<PluginConfigActivation>;
  /**
   * Optional: the same activation, done synchronously (throwing instead of
   * rejecting), for a backend that has nothing to wait for (the in-memory
   * relay). The plugin then records the first hooks with nothing queued.
   */
  initializePluginConfigSync?(document: JsonObject, options?: PluginConfigOptions): PluginConfigActivation;
  /** Optional: activates Hermes `[[dynamic_plugins]]` specs together with the static document. */
  activateDynamicPlugins?(
    document: JsonObject,
    specs: readonly DynamicPluginSpec[],
    options?: PluginConfigOptions,
  ): Promise<PluginConfigActivation>;

  /** Delivers and writes everything emitted so far. Never rejects. */
  flush(): Promise<void>;
  /**
   * Optional: flushes and releases the backend's resources. Idempotent.
   * `timeoutMs` is the caller's budget: remote destinations stop trying
   * within it and count what they could not send.
   */
  shutdown?(options?: { timeoutMs?: number }): Promise<void>;

  /** Optional: counters for `status()`. */
  stats?(): BackendStats;
  /** Optional: per-output health for `status()`. */
  outputs?(): OutputHealth[];
}
