/**
 * What the MCP adapters put in a request's and a result's `_meta`, and how
 * they read it back. `traceparent` is W3C trace context, the key MCP is
 * converging on (and OpenInference's MCP instrumentation uses); the
 * `nemo-relay/…` keys carry what a traceparent cannot: NeMo Relay's
 * propagation context (native's `propagationContextToJson` text, so a
 * native server can read it with native's own function), who called, and
 * where the server's trajectory was written.
 *
 * @module
 */

import type { TrajectoryRef } from '../../hooks/index.ts';
import { isRecord } from '../../shared/record.ts';
import { isNonBlank } from '../../shared/text.ts';

/** `params._meta` key: NeMo Relay's propagation context, as JSON text. */
export const PROPAGATION_META_KEY = 'nemo-relay/propagation';
/** `params._meta` key: the caller's session, tool call and trajectory. */
export const CALLER_META_KEY = 'nemo-relay/caller';
/** The result's `_meta` key: the server's session and trajectory. */
export const TRAJECTORY_META_KEY = 'nemo-relay/trajectory';
/** `params._meta` key: W3C trace context. */
export const TRACEPARENT_META_KEY = 'traceparent';

/** Who made an MCP tool call, as the client adapter sends it. */
export interface McpCaller extends TrajectoryRef {
  /** The caller's tool call the MCP call does the work of. */
  tool_call_id?: string;
}

const CALLER_KEYS = ['session_id', 'tool_call_id', 'trajectory_id', 'trajectory_path'] as const;
const REF_KEYS = ['session_id', 'trajectory_id', 'trajectory_path'] as const;

/** The non-blank string fields `keys` of `value`; undefined when it is not an object or has none. */
function strings<K extends string>(value: unknown, keys: readonly K[]): Partial<Record<K, string>> | undefined {
  if (!isRecord(value)) return undefined;
  const out: Partial<Record<K, string>> = {};
  let any = false;
  for (const key of keys) {
    const field = value[key];
    if (typeof field === 'string' && isNonBlank(field)) {
      out[key] = field;
      any = true;
    }
  }
  return any ? out : undefined;
}

/** The caller a request's `_meta` names. */
export function callerOf(meta: unknown): McpCaller | undefined {
  return strings(isRecord(meta) ? meta[CALLER_META_KEY] : undefined, CALLER_KEYS);
}

/** The server's trajectory a result's `_meta` names (it needs an id or a path). */
export function trajectoryOf(result: unknown): TrajectoryRef | undefined {
  const meta = isRecord(result) ? result._meta : undefined;
  const ref = strings(isRecord(meta) ? meta[TRAJECTORY_META_KEY] : undefined, REF_KEYS);
  return ref !== undefined && (ref.trajectory_id !== undefined || ref.trajectory_path !== undefined) ? ref : undefined;
}

/** A string field of `_meta`, when it is one. */
export function metaString(meta: unknown, key: string): string | undefined {
  const value = isRecord(meta) ? meta[key] : undefined;
  return typeof value === 'string' && value !== '' ? value : undefined;
}
