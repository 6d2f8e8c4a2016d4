/**
 * Managed execution, in one place: whether it applies, the middleware the
 * plugin installs on `llm_execution`/`tool_execution`, the calls that
 * crossed it unmanaged (so their hooks record them instead), and running a
 * host call through the relay without letting the relay change what the
 * host sees.
 *
 * Managed execution lets relay plugins (adaptive components, dynamic
 * plugins) observe and intercept the real LLM or tool call. The native relay
 * re-creates errors thrown by the wrapped call as `internal error: ...`,
 * which would defeat the host's retry classification, and it converts
 * results to JSON. So the original error and the original result are kept
 * here and handed back whenever the relay's answer is just a copy of them.
 *
 * A call that crosses the middleware while the backend loads or plugins.toml
 * activates waits for it (bounded), then runs managed if managed execution
 * applies: activation happens once per process, so only a call that waited
 * past the bound runs unmanaged, and its hooks record it.
 *
 * @module
 */

import type { Logger } from '../shared/logger.ts';
import { safeLog } from '../shared/logger.ts';
import type { RelayBackend } from '../relay/contract.ts';
import type { NemoRelaySettings } from './config/settings.ts';
import { shapeLlmResponse } from './llm-response.ts';
import { jsonEqual } from '../shared/json.ts';
import type { LoosePayload } from './payload.ts';
import { apiKeyOf, isRecord, llmSurfaceOf, metadataOf, requestHeadersOf, toolArgsOf, toolKeyOf, toolNameOf, truthy } from './payload.ts';
import type { SessionTable } from './sessions.ts';
import type { PluginCounters } from './status.ts';
import { stringOf } from '../shared/text.ts';
import { errorMessage } from '../shared/error-text.ts';

/** Unmanaged calls remembered until their end hook; more means ends that never came. */
const MAX_UNMANAGED_CALLS = 10_000;
/** How long a call waits for the backend and plugins.toml before it runs unmanaged. */
const ACTIVATION_WAIT_MS = 2_000;

export type ExecutionKind = 'llm_execution' | 'tool_execution';
type Next = (payload?: LoosePayload) => unknown;

export interface ManagedExecutionOptions {
  backend: RelayBackend;
  sessions: SessionTable;
  settings: NemoRelaySettings;
  /** Whether dynamic plugins are active (they make managed execution apply). */
  dynamic(): boolean;
  /** Told when a call is about to run managed (its hooks then record nothing). */
  started?(kind: ExecutionKind, payload: LoosePayload): void;
}

/** Managed execution over one live backend. */
export class ManagedExecution {
  constructor(private readonly options: ManagedExecutionOptions) {}

  private allowed(): boolean {
    return this.options.settings.adaptiveEnabled || this.options.dynamic();
  }

  llmEnabled(): boolean {
    return this.allowed() && typeof this.options.backend.executeLlm === 'function';
  }

  toolEnabled(): boolean {
    return this.allowed() && typeof this.options.backend.executeTool === 'function';
  }

  enabled(kind: ExecutionKind): boolean {
    return kind === 'llm_execution' ? this.llmEnabled() : this.toolEnabled();
  }

  execute(kind: ExecutionKind, payload: LoosePayload, next: Next): Promise<unknown> {
    try {
      this.options.started?.(kind, payload);
    } catch {
      // Bookkeeping only: the call runs managed either way.
    }
    return kind === 'llm_execution' ? this.executeLlm(payload, next) : this.executeTool(payload, next);
  }

  /** Runs an `llm_execution` payload through the relay's managed LLM execution. */
  executeLlm(payload: LoosePayload, next: Next): Promise<unknown> {
    const state = this.options.sessions.ensure(payload);
    const body = truthy(payload.request) ? payload.request : {};
    const metadata = metadataOf(payload);
    const modelName = truthy(payload.model) ? stringOf(payload.model) : '';
    // The request's headers (the host's `headers`, credentials left out): the response cache keys the allowlisted ones.
    return runManaged({
      start: (wrapped) =>
        this.options.backend.executeLlm!(
          { name: llmSurfaceOf(payload), parent: state.handle, request: { headers: requestHeadersOf(payload), content: body }, metadata, modelName },
          (request) => wrapped(request),
        ),
      normalizeInput: (request) => {
        const content = isRecord(request) && 'content' in request ? request.content : request;
        return { ...payload, request: isRecord(content) ? content : body };
      },
      callDownstream: (input) => next(input as LoosePayload),
      shapeResult: shapeLlmResponse,
      fallbackInput: payload,
    });
  }

  /** Runs a `tool_execution` payload through the relay's managed tool execution. */
  executeTool(payload: LoosePayload, next: Next): Promise<unknown> {
    const state = this.options.sessions.ensure(payload);
    // The host's tool gets its arguments as the host gave them; the span records them as an object (`toolArgsOf`), as
    // a hooked call's does. Both backends hand the recorded value back to the call, which is told apart by identity.
    const given = truthy(payload.args) ? payload.args : {};
    const recorded = toolArgsOf(payload);
    return runManaged({
      start: (wrapped) =>
        this.options.backend.executeTool!(
          {
            name: toolNameOf(payload),
            parent: state.handle,
            args: recorded,
            metadata: metadataOf(payload),
            toolCallId: truthy(payload.tool_call_id) ? stringOf(payload.tool_call_id) : '',
          },
          (nextArgs) => wrapped(nextArgs),
        ),
      normalizeInput: (nextArgs) => ({ ...payload, args: nextArgs === recorded || !isRecord(nextArgs) ? given : nextArgs }),
      callDownstream: (input) => next(input as LoosePayload),
      shapeResult: (raw) => raw,
      fallbackInput: payload,
    });
  }
}

/**
 * Calls that crossed the execution middleware unmanaged while managed
 * execution may apply: their hooks record them (a manual span), or they
 * would be recorded nowhere.
 */
export class UnmanagedCalls {
  private readonly llm = new Set<string>();
  private readonly tool = new Set<string>();

  note(kind: ExecutionKind, payload: LoosePayload): void {
    const calls = kind === 'llm_execution' ? this.llm : this.tool;
    calls.add(kind === 'llm_execution' ? apiKeyOf(payload) : toolKeyOf(payload));
    // Calls whose end hook never comes must not pile up: forget the oldest.
    if (calls.size > MAX_UNMANAGED_CALLS) calls.delete(calls.values().next().value as string);
  }

  /**
   * Whether this hook's LLM call is recorded from the hooks rather than by
   * managed execution: always when managed execution is off, else only for
   * a call noted as unmanaged. `ends` forgets the call.
   */
  recordsLlm(managed: ManagedExecution, payload: LoosePayload, ends: boolean): boolean {
    if (!managed.llmEnabled()) return true;
    return ranUnmanaged(this.llm, apiKeyOf(payload), ends);
  }

  recordsTool(managed: ManagedExecution, payload: LoosePayload, ends: boolean): boolean {
    if (!managed.toolEnabled()) return true;
    return ranUnmanaged(this.tool, toolKeyOf(payload), ends);
  }
}

function ranUnmanaged(calls: Set<string>, key: string, ends: boolean): boolean {
  if (!calls.has(key)) return false;
  if (ends) calls.delete(key);
  return true;
}

/** What the middleware needs from the gate. */
export interface ManagedGate {
  /** The managed execution to use now, or null when the backend is not live yet (or never will be). */
  managedNow(): ManagedExecution | null;
  /** True while the backend loads or plugins.toml activates. */
  settling(): boolean;
  /** Settles with the managed execution once live (null: failed, shut down, or not within `timeoutMs`). */
  whenLive(timeoutMs: number): Promise<ManagedExecution | null>;
}

export interface MiddlewareOptions {
  gate: ManagedGate;
  unmanaged: UnmanagedCalls;
  counters: PluginCounters;
  logger: Logger;
}

/** The `llm_execution`/`tool_execution` middleware: managed execution when it applies, else a pass-through. */
export function executionMiddleware(kind: ExecutionKind, options: MiddlewareOptions): (payload: LoosePayload, next: Next) => unknown {
  const run = (managed: ManagedExecution | null, payload: LoosePayload, next: Next): unknown => {
    try {
      if (managed?.enabled(kind)) return managed.execute(kind, payload, next);
    } catch (error) {
      options.counters.errors += 1;
      safeLog(options.logger, 'warn', `NeMo Relay ${kind} failed before the call; running it unmanaged: ${errorMessage(error)}`);
    }
    return next(payload);
  };
  return (payload, next) => {
    const managed = options.gate.managedNow();
    if (managed !== null || !options.gate.settling()) return run(managed, payload, next);
    return options.gate.whenLive(ACTIVATION_WAIT_MS).then((live) => {
      // Still not live: managed execution may apply to later calls, so this one is noted for its hooks.
      if (live === null && options.gate.settling()) {
        options.unmanaged.note(kind, payload);
        // A host that relies on managed execution emits no hooks for this call: say so, once, and count every one.
        if (options.counters.unmanagedCalls++ === 0) {
          safeLog(options.logger, 'warn', `NeMo Relay: a ${kind} call waited ${ACTIVATION_WAIT_MS} ms for plugins.toml to activate and ran unmanaged; such calls are recorded only if the host also emits their hooks (counted in status().counters.unmanagedCalls)`);
        }
      }
      return run(live, payload, next);
    });
  };
}

export interface ManagedRun {
  /** Starts managed execution with the wrapped call; may throw synchronously. */
  start(wrapped: (input: unknown) => Promise<unknown>): Promise<unknown>;
  /** The real host call (the next middleware or the terminal). */
  callDownstream(input: unknown): unknown;
  /** Maps the relay's view of the input to what the host call takes. */
  normalizeInput(input: unknown): unknown;
  /** Shapes the host's raw result into what the relay records. */
  shapeResult(raw: unknown): unknown;
  /** The input to use when the relay cannot be used at all. */
  fallbackInput: unknown;
}

/**
 * Runs `run` and returns what the host should see:
 * - the host call's own error object when it failed, never the relay's rewrite;
 * - the host call's raw result when the relay's result is the same JSON;
 * - the host call's raw result when the relay failed after the call succeeded;
 * - a direct host call when the backend throws before it could start (fail open);
 * - the relay's error when it rejected the call without running it (a policy decision).
 */
export async function runManaged(run: ManagedRun): Promise<unknown> {
  let succeeded = false;
  let failed = false;
  let raw: unknown;
  let shaped: unknown;
  let downstreamError: unknown;

  const wrapped = async (input: unknown): Promise<unknown> => {
    try {
      raw = await run.callDownstream(run.normalizeInput(input));
    } catch (error) {
      failed = true;
      downstreamError = error;
      throw error;
    }
    succeeded = true;
    shaped = run.shapeResult(raw);
    return shaped;
  };

  let pending: Promise<unknown>;
  try {
    pending = run.start(wrapped);
  } catch {
    // The backend is broken, not deciding: the host call must still happen.
    return run.callDownstream(run.fallbackInput);
  }

  let managed: unknown;
  try {
    managed = await pending;
  } catch (relayError) {
    if (failed) throw downstreamError;
    if (succeeded) return raw;
    throw relayError;
  }
  if (succeeded && jsonEqual(managed, shaped)) return raw;
  return managed;
}
