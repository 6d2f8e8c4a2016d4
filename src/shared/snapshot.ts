/**
 * Plain copies of hook payloads, for when a payload cannot be handled where
 * it is:
 *
 * - a hook queued while the backend or plugins.toml starts is replayed
 *   later, and the host may have changed its object by then;
 * - a payload whose getter or Proxy trap throws when a handler reads it
 *   would otherwise cost the whole event.
 *
 * Top-level fields are read the way the handlers read them: own enumerable
 * fields, plus the getters of a class-shaped payload (its prototype chain,
 * short of `Object.prototype`), and not through a top-level `toJSON`, which
 * may hide the ids; a payload whose fields cannot be listed (a Proxy whose
 * `ownKeys` trap throws) is read by the hook payloads' field names
 * (`HOOK_FIELD_NAMES`). A getter's field is copied as a field the handlers read
 * by name but not as data (non-enumerable): the relay's copy of the live
 * payload keeps its own fields only, so a hook queued while the backend
 * starts records the data it would have recorded live. A recorder that
 * writes the copy out asks for them as data (`derivedAsData`). Each value
 * goes through `toJson` (media bytes left out); a field that throws becomes
 * `"[Unserializable: <message>]"`. Never throws.
 *
 * The plugin's copies (`copyToRecord`, `copyToQueue`) and a recording's
 * (`copyToWrite`) also keep what the
 * relay's copy of the payload itself would read: its top-level `toJSON`
 * (the relay records that method's result as the data, as `toJson` does,
 * while the handlers read the ids by name), and, for a queued hook, its
 * fields that could not be read, which throw again when read. A queued hook
 * is then recorded and reported as it would have been live: the same data,
 * and the same warning when a handler reads a field that throws.
 *
 * @module
 */

import { defineKey, MEDIA_LEFT_OUT, toJson, type ToJsonOptions } from './json.ts';
import { errorMessage } from './error-text.ts';
import { withoutSensitiveHeaders } from './credential-headers.ts';
/** A hook payload as the plugin reads it: any object, fields looked up by name. */
export type LoosePayload = Record<string, unknown>;

/**
 * The names a payload's fields are read by when they cannot be listed (a
 * Proxy whose `ownKeys` trap throws): every field of the hook payload types
 * (test/hooks/payloads.test.ts holds the list to src/hooks/payloads.ts) and
 * the ids the plugin's metadata reads beside them. The copy then keeps the
 * ids and every field that reads, as it would from a payload that lists them.
 */
export const HOOK_FIELD_NAMES = [
  'telemetry_schema_version', 'session_id', 'task_id', 'turn_id', 'api_request_id', 'api_call_count', 'tool_call_id',
  'parent_session_id', 'parent_turn_id', 'parent_subagent_id', 'child_session_id', 'child_subagent_id', 'child_role',
  'child_status', 'child_goal', 'child_summary', 'child_trajectory', 'tool_call_history', 'old_session_id', 'new_session_id',
  'model', 'platform', 'provider', 'base_url', 'api_mode', 'agent_name', 'agent_version', 'propagation_context', 'caller',
  'completed', 'failed', 'interrupted', 'turn_exit_reason', 'pending_approvals', 'reason', 'status',
  'user_message', 'conversation_history', 'is_first_turn', 'sender_id', 'assistant_response',
  'retry_count', 'max_retries', 'retryable', 'request_messages', 'message_count', 'tool_count', 'approx_input_tokens',
  'request_char_count', 'max_tokens', 'started_at', 'ended_at', 'api_duration', 'middleware_trace', 'request', 'response',
  'finish_reason', 'response_model', 'usage', 'assistant_message', 'assistant_content_chars', 'assistant_tool_call_count',
  'status_code', 'error',
  'tool_name', 'args', 'result', 'duration_ms', 'error_type', 'error_message', 'routed_to', 'attempt_index', 'failed_attempts',
  'session_key', 'command', 'description', 'pattern_key', 'pattern_keys', 'surface', 'choice', 'decided_by', 'changed_args',
  'request_kind', 'auxiliary_task', 'auxiliary_call_id', 'attempt_reason',
] as const;

const snapshots = new WeakSet<object>();

/** Whether `payload` is already a copy made by `snapshotPayload` (a retry from it would read the same). */
export function isSnapshot(payload: unknown): boolean {
  return typeof payload === 'object' && payload !== null && snapshots.has(payload);
}

/** Options of `snapshotPayload`. */
export interface SnapshotOptions {
  /** Copy the fields the payload's prototype getters derive as data (enumerable), not only for reading by name. */
  derivedAsData?: boolean;
  /** Drop credential headers (`shared/credential-headers.ts`), for a copy written out as it is. */
  withoutCredentialHeaders?: boolean;
}

const MEDIA_AND_CREDENTIALS_LEFT_OUT = Object.freeze({ ...MEDIA_LEFT_OUT, withoutCredentialHeaders: true } as const);

/** A plain JSON copy of `payload`'s top-level fields (an empty one for anything that is not an object). */
export function snapshotPayload(payload: unknown, options: SnapshotOptions = {}): LoosePayload {
  return copyFields(payload, options, null);
}

/** A field the copy could not read: what reading it threw, and whether it was data (own and enumerable). */
interface Unreadable {
  key: string;
  error: unknown;
  asData: boolean;
}

function copyFields(payload: unknown, options: SnapshotOptions, unreadable: Unreadable[] | null): LoosePayload {
  const copy: LoosePayload = {};
  snapshots.add(copy);
  if ((typeof payload !== 'object' && typeof payload !== 'function') || payload === null) return copy;
  const { own, derived, listed } = fieldNames(payload);
  const credentials = options.withoutCredentialHeaders === true;
  for (const key of [...own, ...derived]) {
    let value: unknown;
    try {
      value = (payload as Record<string, unknown>)[key];
    } catch (error) {
      // A name read without the payload listing it: an unreadable field only where the payload says it has one.
      if (!listed && !has(payload, key)) continue;
      const asData = own.has(key) || options.derivedAsData === true;
      copyField(copy, key, `[Unserializable: ${errorMessage(error)}]`, asData);
      unreadable?.push({ key, error, asData });
      continue;
    }
    if (value === undefined || typeof value === 'function' || typeof value === 'symbol') continue;
    // A field pointing back at the payload is a cycle through the root, which each toJson call cannot see.
    // Media left out now, as the relay's copy will: made plain JSON, a Buffer is numbers the relay cannot tell from data.
    // A top-level `headers` field is cleaned here: the copy of each field sees only what is under it.
    if (credentials && key.toLowerCase() === 'headers') value = withoutSensitiveHeaders({ headers: value }).headers;
    const copied = value === payload ? '[Circular]' : toJson(value, credentials ? MEDIA_AND_CREDENTIALS_LEFT_OUT : MEDIA_LEFT_OUT);
    copyField(copy, key, copied, own.has(key) || options.derivedAsData === true);
  }
  return copy;
}

function copyField(copy: LoosePayload, key: string, value: unknown, asData: boolean): void {
  if (asData) defineKey(copy, key, value);
  else Object.defineProperty(copy, key, { value, writable: true, configurable: true, enumerable: false });
}

/** Whether `payload` answers that it has `key`; false when asking throws. */
function has(payload: object, key: string): boolean {
  try {
    return key in payload;
  } catch {
    return false;
  }
}

/**
 * The payload's own enumerable field names, and the names its prototype getters derive that are not own. When its
 * names cannot be listed (`listed` false: a Proxy whose `ownKeys` trap throws), the hook payloads' field names, read one
 * by one.
 */
function fieldNames(payload: object): { own: Set<string>; derived: Set<string>; listed: boolean } {
  const own = new Set<string>();
  const derived = new Set<string>();
  try {
    for (const key of Object.keys(payload)) own.add(key);
  } catch {
    return { own: new Set<string>(HOOK_FIELD_NAMES), derived, listed: false };
  }
  try {
    for (let proto = Object.getPrototypeOf(payload); proto !== null && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
      for (const key of Object.getOwnPropertyNames(proto)) {
        if (key === 'constructor' || key === '__proto__' || own.has(key)) continue;
        if (typeof Object.getOwnPropertyDescriptor(proto, key)?.get === 'function') derived.add(key);
      }
    }
  } catch {
    // A hostile prototype chain: the own fields are what there is.
  }
  return { own, derived, listed: true };
}

/**
 * The plain copy a handler records in the payload's place when the payload
 * cannot be read where it is (a getter or Proxy trap threw): its fields as
 * `snapshotPayload` copies them, and its top-level `toJSON`, whose converted
 * result (taken now) the relay's copy records as the data, as it would from
 * the payload. Never throws.
 */
export function copyToRecord(payload: unknown): LoosePayload {
  return copyWithToJson(payload, copyFields(payload, {}, null));
}

/** The copy `copyToRecord` keeps for each `copyToQueue` copy whose fields do not all read. */
const recordedCopies = new WeakMap<object, LoosePayload>();

/**
 * The copy a hook queued while the backend starts keeps, to be recorded
 * later: `copyToRecord`'s, except that a field that could not be read
 * throws the same error again when read (own data as such, a getter's field
 * by name only). Replayed, the hook then meets what it would have met live:
 * a handler that reads such a field fails and is retried from the plain
 * copy (`copyToRetry`), with the same warning; a field no handler reads is
 * left to the relay's copy, which writes it as `"[Unserializable: ...]"`,
 * silently, as live. Never throws.
 */
export function copyToQueue(payload: unknown): LoosePayload {
  const unreadable: Unreadable[] = [];
  const recorded = copyWithToJson(payload, copyFields(payload, {}, unreadable));
  if (unreadable.length === 0) return recorded;
  const queued: LoosePayload = {};
  for (const key of Reflect.ownKeys(recorded)) Object.defineProperty(queued, key, Object.getOwnPropertyDescriptor(recorded, key)!);
  for (const { key, error, asData } of unreadable) {
    Object.defineProperty(queued, key, {
      get() {
        throw error;
      },
      enumerable: asData,
      configurable: true,
    });
  }
  recordedCopies.set(queued, recorded);
  return queued;
}

/** The plain copy to record `payload` from when reading it failed: a queued copy's own, else `copyToRecord`'s. */
export function copyToRetry(payload: object): LoosePayload {
  return recordedCopies.get(payload) ?? copyToRecord(payload);
}

function copyWithToJson(payload: unknown, copy: LoosePayload): LoosePayload {
  const data = toJsonData(payload, MEDIA_LEFT_OUT);
  return data === undefined ? copy : withData(copy, data.value);
}

/**
 * What the relay's copy of a payload with a top-level `toJSON` records as its data: that method's converted result
 * (taken now); `undefined` for a payload without one, whose data is its fields.
 */
function toJsonData(payload: unknown, options: ToJsonOptions): { value: unknown } | undefined {
  if ((typeof payload !== 'object' && typeof payload !== 'function') || payload === null) return undefined;
  let toJSON: unknown;
  try {
    toJSON = (payload as { toJSON?: unknown }).toJSON;
  } catch {
    // toJson reads it too, and records the error as the relay's copy would.
    return { value: toJson(payload, options) };
  }
  return typeof toJSON === 'function' ? { value: toJson(payload, options) } : undefined;
}

/** A hook as a recording writes it (`createHookRecorder`), for a replay to record what the live plugin recorded. */
export interface WrittenPayload {
  /** The fields the handlers read by name, a class payload's getters as data; credential headers dropped. */
  readonly payload: LoosePayload;
  /** A top-level `toJSON`'s converted result, the data the relay's copy records in the payload's place; absent without one. */
  readonly data?: unknown;
}

/**
 * The copy a recording writes out: the fields the plugin reads by name, and, for a payload with a top-level `toJSON`,
 * what the relay's copy records as the data (`copyToRecord`'s rule). A replay hands the plugin the fields with that
 * data (`withWrittenData`), so it records what it recorded live. Never throws.
 */
export function copyToWrite(payload: unknown): WrittenPayload {
  const fields = snapshotPayload(payload, { derivedAsData: true, withoutCredentialHeaders: true });
  const data = toJsonData(payload, MEDIA_AND_CREDENTIALS_LEFT_OUT);
  // toJson drops credential headers before it calls toJSON, so not from what toJSON returns: dropped here, as a
  // recording never holds them.
  return data === undefined ? { payload: fields } : { payload: fields, data: withoutSensitiveHeaders(data.value) };
}

/** A replayed payload (`copyToWrite`'s fields, as read back) whose relay copy is the written `data`, as it was live. */
export function withWrittenData(payload: LoosePayload, data: unknown): LoosePayload {
  return withData(payload, data);
}

/** `copy` whose relay copy (through `toJSON`, not enumerable: never a field) is `data`. */
function withData(copy: LoosePayload, data: unknown): LoosePayload {
  Object.defineProperty(copy, 'toJSON', { value: () => data, writable: true, configurable: true, enumerable: false });
  return copy;
}
