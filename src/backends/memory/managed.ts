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
import type { ScopeRecord, SpanRecord } from './records.ts';
import type { Lookup } from '../../components/cache/response-cache.ts';
import { toJson, type ToJsonOptions } from '../../shared/json.ts';
import { forwardedRequest, sessionHeaders } from './tree.ts';

export async function executeLlm(core: MemoryRelayCore, options: ManagedLlmOptions, call: ManagedLlmCall): Promise<unknown> {
  const o = options ?? ({} as ManagedLlmOptions);
  let record: SpanRecord | null = null;
  let forwarded: LlmRequest = { headers: {}, content: undefined };
  let lookup: Lookup | null = null;
  try {
    forwarded = o.request;
    const parent = o.parent == null ? null : core.ownScope(o.parent, 'executeLlm parent');
    const request = core.request(o.request, 'executeLlm');
    const session = sessionHeaders(parent);
    record = core.startLlm(o, parent, request, session, true);
    forwarded = forwardedRequest(request, session, parent, record.uuid);
    // The response cache (plugins.toml `adaptive`), between the span's start and its end, as native.
    const cache = core.responseCache;
    const copy = cacheCopy(core);
    if (cache !== null) lookup = decide(core, parent, () => cache.llm(String(o.name ?? ''), { headers: toJson(forwarded.headers, copy), content: toJson(request.content, copy) }));
  } catch (error) {
    // Telemetry failed, the call itself must still run.
    core.counters.internalError('executeLlm', error);
  }
  return runManaged(core, record, () => call(forwarded), lookup);
}

export async function executeTool(core: MemoryRelayCore, options: ManagedToolOptions, call: ManagedToolCall): Promise<unknown> {
  const o = options ?? ({} as ManagedToolOptions);
  let record: SpanRecord | null = null;
  let args: unknown;
  let lookup: Lookup | null = null;
  try {
    args = o.args;
    record = core.startTool(o, 'executeTool', true);
    const cache = core.responseCache;
    if (cache !== null) {
      const parent = o.parent == null ? null : core.ownScope(o.parent, 'executeTool parent');
      lookup = decide(core, parent, () => cache.tool(String(o.name ?? ''), toJson(args, cacheCopy(core))));
    }
  } catch (error) {
    // Telemetry failed, the call itself must still run.
    core.counters.internalError('executeTool', error);
  }
  return runManaged(core, record, () => call(args), lookup);
}

const WITHOUT_CREDENTIALS: ToJsonOptions = { withoutCredentialHeaders: true };

/**
 * How the cache's keys and stored values are copied: as the events record them, credential headers dropped
 * while the relay drops them (the plugin then hands its values over unwalked), and media whole. A cache must
 * never change what the program gets: with media left out, two requests that differ only in the bytes of
 * equally large images would share a key (one gets the answer about the other's image), and a hit would hand
 * back an answer without the bytes the miss had. Native keys and keeps what it is handed, which for a managed
 * call is its content whole too (native/payloads.ts `WHOLE_COPY`).
 */
function cacheCopy(core: MemoryRelayCore): ToJsonOptions | undefined {
  return core.dropsCredentialHeaders ? WITHOUT_CREDENTIALS : undefined;
}

/** The cache's decision, with its `response_cache` mark recorded under the call's parent; null when it has none. */
function decide(core: MemoryRelayCore, parent: ScopeRecord | null, look: () => Lookup | null): Lookup | null {
  const lookup = look();
  if (lookup === null) return null;
  core.mark({ name: 'response_cache', parent, data: { status: lookup.mark.status }, metadata: lookup.mark.metadata });
  return lookup;
}

/**
 * Runs the host's call and records its end; its own value and error reach
 * the caller unchanged. On a cache hit the call does not run: the stored
 * value is recorded and returned (a copy, so the cache keeps its own; its
 * keys sorted, as native's JSON value lists them).
 */
async function runManaged(core: MemoryRelayCore, record: SpanRecord | null, run: () => unknown, lookup: Lookup | null = null): Promise<unknown> {
  if (lookup?.hit) {
    const value = structuredClone(lookup.hit.value);
    recordEnd(core, record, value, undefined, false);
    // Native hands a stored answer back as its JSON value, whose objects list their keys sorted.
    return toJson(value, { sortKeys: true });
  }
  let value: unknown;
  try {
    value = await run();
  } catch (error) {
    // Native's error metadata, `data: null`.
    recordEnd(core, record, null, error, true);
    throw error;
  }
  if (lookup !== null && lookup.hit === null && lookup.store !== null) {
    try {
      lookup.store(toJson(value, cacheCopy(core)));
    } catch (error) {
      // A store failure never breaks the live call.
      core.counters.internalError('storing a response in the cache', error);
    }
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
