/**
 * Reading correlation fields out of hook payloads.
 *
 * Hook payloads are host-shaped and loosely typed: any field may be absent,
 * null or of an unexpected type. These helpers derive the keys the plugin
 * correlates by, with the same fallbacks as the Hermes plugin, and never
 * throw.
 *
 * @module
 */

import type { LoosePayload } from '../shared/snapshot.ts';
import { isRecord } from '../shared/record.ts';
import { stringOf } from '../shared/text.ts';
import { argumentsObject } from '../shared/tool-arguments.ts';
import { isCredentialHeader } from '../shared/secret-text.ts';

/** A hook payload as the plugin sees it: an open bag of snake_case fields. */
export type { LoosePayload };

/** Hermes' LLM surface names for the relay, keyed by the host's `api_mode`. */
const LLM_SURFACE_BY_API_MODE: Readonly<Record<string, string>> = {
  anthropic_messages: 'anthropic.messages',
  chat_completions: 'openai.chat_completions',
  codex_responses: 'openai.responses',
};

/** Python-style truthiness, which the Hermes fallbacks (`a or b`) rely on. */
export function truthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === 0 || value === '') return false;
  if (typeof value === 'number' && Number.isNaN(value)) return false;
  if (Array.isArray(value)) return value.length > 0;
  if (value instanceof Map || value instanceof Set) return value.size > 0;
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    for (const _ in value) return true;
    return false;
  }
  return true;
}

/**
 * The payload a handler records: the host's object, or an empty one for a
 * value that has no fields to read by name (a primitive, a function, an
 * array, a `Date`, `Map`, `Set` or binary data), as the registry delivers a
 * payload that is not an object. The relay would copy such a value as it is
 * (an array as an array, a `Map` as its entries) when recorded live, and a
 * hook queued while the backend starts as its copied fields: the same hook
 * wrote different data depending on when it came.
 */
export function hookPayloadOf(value: unknown): LoosePayload {
  if (!isRecord(value)) return {};
  if (value instanceof Date || value instanceof Map || value instanceof Set || value instanceof ArrayBuffer || ArrayBuffer.isView(value)) return {};
  return value;
}

/** The session a payload belongs to: `session_id`, else `parent_session_id`, else `"default"`. */
export function sessionIdOf(payload: LoosePayload): string {
  const id = truthy(payload.session_id) ? payload.session_id : payload.parent_session_id;
  return truthy(id) ? stringOf(id) : 'default';
}

/** The child session of a subagent payload, or `""`. */
export function childSessionIdOf(payload: LoosePayload): string {
  return truthy(payload.child_session_id) ? stringOf(payload.child_session_id) : '';
}

/** The key an LLM span is stored under: `api_request_id`, else `<session>:<api_call_count|api>`. */
export function apiKeyOf(payload: LoosePayload): string {
  if (truthy(payload.api_request_id)) return stringOf(payload.api_request_id);
  const count = truthy(payload.api_call_count) ? stringOf(payload.api_call_count) : 'api';
  return `${sessionIdOf(payload)}:${count}`;
}

/** The key a tool span is stored under: `tool_call_id`, else `<session>:<turn>:<tool>`. */
export function toolKeyOf(payload: LoosePayload): string {
  if (truthy(payload.tool_call_id)) return stringOf(payload.tool_call_id);
  const turn = truthy(payload.turn_id) ? stringOf(payload.turn_id) : '';
  const tool = truthy(payload.tool_name) ? stringOf(payload.tool_name) : 'tool';
  return `${sessionIdOf(payload)}:${turn}:${tool}`;
}

/** The relay LLM surface for managed execution: mapped from `api_mode`, else the provider. */
export function llmSurfaceOf(payload: LoosePayload): string {
  const mode = truthy(payload.api_mode) ? stringOf(payload.api_mode).trim().toLowerCase() : '';
  const mapped = LLM_SURFACE_BY_API_MODE[mode];
  if (mapped !== undefined) return mapped;
  return truthy(payload.provider) ? stringOf(payload.provider) : 'llm';
}

/** The span name for a manual LLM call: the provider, else `"llm"`. */
export function providerOf(payload: LoosePayload): string {
  return truthy(payload.provider) ? stringOf(payload.provider) : 'llm';
}

/** The tool name, else `"tool"`. */
export function toolNameOf(payload: LoosePayload): string {
  return truthy(payload.tool_name) ? stringOf(payload.tool_name) : 'tool';
}

/**
 * The arguments a tool span records, hooked (`pre_tool_call`) or managed (`tool_execution`): an object, as ATIF's tool
 * calls need, whatever form the host gave them in (the JSON text, a command line: docs/hosts/emitting-hooks.md).
 */
export function toolArgsOf(payload: LoosePayload): Record<string, unknown> {
  return truthy(payload.args) ? argumentsObject(payload.args) : {};
}

/**
 * The request headers of an `llm_execution` payload (`headers`), as the relay's `{headers, content}` request takes
 * them: a plain object of text values, read from a plain object or from `[name, value]` pairs in any iterable (a
 * fetch `Headers`, a `Map`, an array). Numbers and booleans become text, a list of strings is joined with `, `,
 * anything else is left out. So are credential headers (`isCredentialHeader`): they never enter a cache key or an
 * output. The response cache keys the ones its `header_allowlist` names (docs/operators/cache.md).
 */
export function requestHeadersOf(payload: LoosePayload): Record<string, string> {
  const headers: Record<string, string> = {};
  const given = payload.headers;
  if (given === null || typeof given !== 'object') return headers;
  const add = (name: unknown, value: unknown): void => {
    if (typeof name !== 'string' || name === '' || isCredentialHeader(name)) return;
    const text = headerText(value);
    // defineProperty: a header may be called `__proto__`.
    if (text !== undefined) Object.defineProperty(headers, name, { value: text, enumerable: true, writable: true, configurable: true });
  };
  try {
    if (typeof (given as Partial<Iterable<unknown>>)[Symbol.iterator] === 'function') {
      // A fetch `Headers`, a `Map`, an array of pairs.
      for (const pair of given as Iterable<unknown>) if (Array.isArray(pair) && pair.length === 2) add(pair[0], pair[1]);
    } else {
      for (const name of Object.keys(given)) add(name, (given as Record<string, unknown>)[name]);
    }
  } catch {
    // A getter or Proxy that throws: the headers read so far.
  }
  return headers;
}

function headerText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === 'string')) return value.join(', ');
  return undefined;
}

/**
 * Correlation metadata for a relay call: the allowlisted fields present and
 * not null (the Hermes plugin's allowlist, plus the attempt/auxiliary fields
 * later Hermes versions add; all are ids or short enums, never content, so
 * metadata stays safe to export; test/plugin/metadata.test.ts pins the list
 * and its order), plus `trajectory_id`, `parent_trajectory_id` and
 * `child_trajectory_id` promoted from the session ids (ATIF consumers join
 * trajectories on them).
 */
export function metadataOf(payload: LoosePayload): Record<string, unknown> {
  // One named read and store per key. A loop of computed-key stores into a
  // fresh object costs more on V8, and this runs on every hook (bench/RESULTS.md, "Figures behind the code").
  const metadata: Record<string, unknown> = {};
  let value: unknown;
  if ((value = payload.telemetry_schema_version) !== undefined && value !== null) metadata.telemetry_schema_version = value;
  if ((value = payload.session_id) !== undefined && value !== null) metadata.session_id = value;
  if ((value = payload.platform) !== undefined && value !== null) metadata.platform = value;
  if ((value = payload.task_id) !== undefined && value !== null) metadata.task_id = value;
  if ((value = payload.turn_id) !== undefined && value !== null) metadata.turn_id = value;
  if ((value = payload.api_request_id) !== undefined && value !== null) metadata.api_request_id = value;
  if ((value = payload.tool_call_id) !== undefined && value !== null) metadata.tool_call_id = value;
  if ((value = payload.parent_session_id) !== undefined && value !== null) metadata.parent_session_id = value;
  if ((value = payload.parent_turn_id) !== undefined && value !== null) metadata.parent_turn_id = value;
  if ((value = payload.parent_subagent_id) !== undefined && value !== null) metadata.parent_subagent_id = value;
  if ((value = payload.child_session_id) !== undefined && value !== null) metadata.child_session_id = value;
  if ((value = payload.child_subagent_id) !== undefined && value !== null) metadata.child_subagent_id = value;
  if ((value = payload.child_role) !== undefined && value !== null) metadata.child_role = value;
  if ((value = payload.child_status) !== undefined && value !== null) metadata.child_status = value;
  if ((value = payload.provider) !== undefined && value !== null) metadata.provider = value;
  if ((value = payload.model) !== undefined && value !== null) metadata.model = value;
  if ((value = payload.api_mode) !== undefined && value !== null) metadata.api_mode = value;
  if ((value = payload.request_kind) !== undefined && value !== null) metadata.request_kind = value;
  if ((value = payload.auxiliary_task) !== undefined && value !== null) metadata.auxiliary_task = value;
  if ((value = payload.auxiliary_call_id) !== undefined && value !== null) metadata.auxiliary_call_id = value;
  if ((value = payload.attempt_index) !== undefined && value !== null) metadata.attempt_index = value;
  if ((value = payload.attempt_reason) !== undefined && value !== null) metadata.attempt_reason = value;
  if ((value = payload.failed_attempts) !== undefined && value !== null) metadata.failed_attempts = value;
  if ((value = payload.status) !== undefined && value !== null) metadata.status = value;
  if ((value = payload.reason) !== undefined && value !== null) metadata.reason = value;
  if ('session_id' in metadata && !('trajectory_id' in metadata)) metadata.trajectory_id = metadata.session_id;
  if ('parent_session_id' in metadata && !('parent_trajectory_id' in metadata)) {
    metadata.parent_trajectory_id = metadata.parent_session_id;
  }
  if ('child_session_id' in metadata && !('child_trajectory_id' in metadata)) {
    metadata.child_trajectory_id = metadata.child_session_id;
  }
  return metadata;
}

/** Subagent metadata fields copied onto the child's session scope: `[target, source]`. */
const SUBAGENT_CHILD_FIELDS: readonly (readonly [string, string])[] = [
  ['subagent_id', 'child_subagent_id'],
  ['child_session_id', 'child_session_id'],
  ['child_subagent_id', 'child_subagent_id'],
  ['child_role', 'child_role'],
  ['parent_session_id', 'parent_session_id'],
  ['parent_turn_id', 'parent_turn_id'],
  ['parent_subagent_id', 'parent_subagent_id'],
  ['parent_trajectory_id', 'parent_trajectory_id'],
  // The tool call that started the child, when the host names it: the ATIF
  // builder links the child's trajectory to exactly that call, which matters
  // when sibling sub-agents run in parallel (its fallback, the latest open
  // tool call, cannot tell them apart).
  ['parent_tool_call_id', 'tool_call_id'],
  ['telemetry_schema_version', 'telemetry_schema_version'],
];

/**
 * The metadata a child session scope carries when it opens under its parent:
 * its own session and trajectory ids, the `subagent` scope role, and the
 * lineage fields from the `subagent_start` payload.
 */
export function subagentChildMetadata(
  childSessionId: string,
  parentMetadata: Record<string, unknown>,
): Record<string, unknown> {
  const metadata: Record<string, unknown> = {
    session_id: childSessionId,
    trajectory_id: childSessionId,
    nemo_relay_scope_role: 'subagent',
  };
  for (const [target, source] of SUBAGENT_CHILD_FIELDS) {
    const value = parentMetadata[source];
    if (value !== undefined && value !== null) metadata[target] = value;
  }
  return metadata;
}

/** Reads `key` from a plain object or an instance property, like Python's `getattr`/`dict.get`. */
export function field(source: unknown, key: string): unknown {
  if (source === null || source === undefined) return undefined;
  if (typeof source !== 'object' && typeof source !== 'function') return undefined;
  try {
    return (source as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

export { isRecord };
