/**
 * Managed LLM and tool calls on the in-memory relay: the relay records the
 * span around the host's own call. The call always runs, even when
 * recording failed; it rejects with the error the call threw, unchanged
 * (native re-creates it as `internal error: ...`), and resolves with the
 * call's own return value. The events carry native's error metadata and
 * the request headers native injects (`traceparent`, `x-dynamo-session-id`,
 * `x-dynamo-parent-session-id`).
 *
 * @module
 */

import type { LlmRequest, ManagedLlmCall, ManagedLlmOptions, ManagedToolCall, ManagedToolOptions } from '../../relay/contract.ts';
import type { MemoryRelayCore } from './core.ts';
import type { SpanRecord } from './records.ts';
import { forwardedRequest, sessionHeaders } from './tree.ts';

export async function executeLlm(core: MemoryRelayCore, options: ManagedLlmOptions, call: ManagedLlmCall): Promise<unknown> {
  const o = options ?? ({} as ManagedLlmOptions);
  let record: SpanRecord | null = null;
  let forwarded: LlmRequest = { headers: {}, content: undefined };
  try {
    forwarded = o.request;
    const parent = o.parent == null ? null : core.ownScope(o.parent, 'executeLlm parent');
    const request = core.request(o.request, 'executeLlm');
    const session = sessionHeaders(parent);
    record = core.startLlm(o, parent, request, session);
    forwarded = forwardedRequest(request, session, parent, record.uuid);
  } catch (error) {
    // Telemetry failed, the call itself must still run.
    core.counters.internalError('executeLlm', error);
  }
  return runManaged(core, record, () => call(forwarded));
}

export async function executeTool(core: MemoryRelayCore, options: ManagedToolOptions, call: ManagedToolCall): Promise<unknown> {
  const o = options ?? ({} as ManagedToolOptions);
  let record: SpanRecord | null = null;
  let args: unknown;
  try {
    args = o.args;
    record = core.startTool(o, 'executeTool');
  } catch (error) {
    // Telemetry failed, the call itself must still run.
    core.counters.internalError('executeTool', error);
  }
  return runManaged(core, record, () => call(args));
}

/** Runs the host's call and records its end; its own value and error reach the caller unchanged. */
async function runManaged(core: MemoryRelayCore, record: SpanRecord | null, run: () => unknown): Promise<unknown> {
  let value: unknown;
  try {
    value = await run();
  } catch (error) {
    // Native's error metadata, `data: null`.
    recordEnd(core, record, null, error, true);
    throw error;
  }
  recordEnd(core, record, value, undefined, false);
  return value;
}

function recordEnd(core: MemoryRelayCore, record: SpanRecord | null, value: unknown, thrown: unknown, failed: boolean): void {
  if (record === null) return;
  try {
    core.endSpan(record, value, failed ? 'managed-error' : 'managed-ok', thrown, undefined, undefined);
  } catch (error) {
    core.counters.internalError('recording a managed call', error);
  }
}
