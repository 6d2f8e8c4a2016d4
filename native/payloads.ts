/**
 * Conversion of contract arguments into what the native binding accepts.
 *
 * Native kills the process on a BigInt or a cyclic object and throws on
 * functions, symbols, `NaN`, `undefined` inside arrays and many class
 * instances (test/slow/native-hostile.test.ts). Every payload therefore goes through
 * `toJson()` (src/shared/json.ts, whose table says where each kind of value
 * ends up) before it crosses. The helpers here add the few shape rules native
 * imposes on top of "plain JSON": string-only headers, the `{result}` tool
 * shape, safe-integer timestamps and error metadata on tool ends.
 *
 * None of these functions throws.
 *
 * @module
 */

import type { Json, JsonObject, LlmRequest, ScopeCategory } from '../src/backends/native-surface.ts';
import { defineKey, isJsonObject, toJson } from '../src/backends/native-surface.ts';
import { nowMicros } from '../src/backends/native-surface.ts';
import { rules } from '../src/backends/native-surface.ts';
import type { NativeLlmRequest, NativeToolResult } from './binding.ts';

/**
 * Deepest nesting kept in a payload; deeper values become `"[MaxDepth]"`.
 * Native converts values recursively and segfaults on very deep ones
 * (observed at 100 000 levels), and no real payload nests this far.
 */
const MAX_DEPTH = 64;

/**
 * What a payload's keys become: native takes keys as C strings and drops
 * the whole event (it throws `nul byte found in provided data`) for a key
 * with a NUL, so a NUL in a key becomes U+FFFD. NULs in values cross fine.
 * Media bytes are left out as the memory relay's copy leaves them out
 * (`toJson`'s `withoutBlobs`): native would reject a `Buffer` (the whole
 * event lost), write a `Uint8Array` as an object of byte numbers, an
 * `ArrayBuffer` as `{}`, and base64 whole.
 */
export const PLAIN_COPY = { maxDepth: MAX_DEPTH, noNulInKeys: true, withoutBlobs: true } as const;
/** The copy with credential headers dropped in the same walk (`RelayBackend.dropCredentialHeaders`). */
export const COPY_WITHOUT_CREDENTIALS = { ...PLAIN_COPY, withoutCredentialHeaders: true } as const;
/**
 * The copy of a managed call's request content, tool arguments and result: media whole. Native keys its
 * response cache on what it is handed and answers a hit with what the call returned, so a copy with media
 * left out would give two requests that differ only in an image's bytes one answer, and a hit its answer
 * without the bytes the miss had.
 */
export const WHOLE_COPY = { maxDepth: MAX_DEPTH, noNulInKeys: true } as const;
/** `WHOLE_COPY` with credential headers dropped. */
export const WHOLE_COPY_WITHOUT_CREDENTIALS = { ...WHOLE_COPY, withoutCredentialHeaders: true } as const;
/** How a relay copies payloads: one of the four above. */
export type PayloadCopy = typeof PLAIN_COPY | typeof COPY_WITHOUT_CREDENTIALS | typeof WHOLE_COPY | typeof WHOLE_COPY_WITHOUT_CREDENTIALS;

/** Any value as plain JSON; `undefined` becomes `null` (native's "absent"). */
export function json(value: unknown, copy: PayloadCopy = PLAIN_COPY): Json {
  if (value === undefined) return null;
  return toJson(value, copy);
}

/** A name native accepts: always a string. */
export function nameOf(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return String(value);
  } catch {
    return 'unnamed';
  }
}

/** An optional string argument, or `null` when absent or empty. */
export function optionalString(value: unknown): string | null {
  if (typeof value === 'string') return value === '' ? null : value;
  if (value === undefined || value === null) return null;
  const converted = json(value);
  return typeof converted === 'string' ? converted : converted === null ? null : JSON.stringify(converted);
}

/**
 * The timestamp native gets: the caller's when it is a usable integer of Unix
 * microseconds, otherwise the shared clock. Explicit stamps on every manual
 * call keep native's delivery order equal to timestamp order (its default
 * LLM end stamp lags and reorders ATIF steps).
 */
export function timestampOf(value: number | undefined): number {
  if (typeof value === 'number' && Number.isFinite(value)) {
    const integer = Math.floor(value);
    if (Number.isSafeInteger(integer)) return integer;
  }
  return nowMicros();
}

/**
 * LLM request headers as a string→string object. Numbers and booleans are
 * stringified, arrays joined with `, ` (the HTTP list form), other objects
 * JSON-encoded; `null`/`undefined` entries are dropped.
 */
function headersOf(value: unknown, copy: PayloadCopy): Record<string, string> {
  const converted = json(value, copy);
  const out: Record<string, string> = {};
  if (!isJsonObject(converted)) return out;
  for (const key of Object.keys(converted)) {
    const item = converted[key];
    if (item === null || item === undefined) continue;
    let text: string;
    if (typeof item === 'string') text = item;
    else if (typeof item === 'number' || typeof item === 'boolean') text = String(item);
    else if (Array.isArray(item)) text = item.map((part) => (typeof part === 'string' ? part : JSON.stringify(part))).join(', ');
    else text = JSON.stringify(item);
    defineKey(out, key, text);
  }
  return out;
}

/** An LLM request in the `{headers, content}` shape native requires. */
export function requestOf(request: LlmRequest | undefined, copy: PayloadCopy = PLAIN_COPY): NativeLlmRequest {
  let headers: unknown;
  let content: unknown;
  try {
    headers = request?.headers;
    content = request?.content;
  } catch {
    // A throwing getter on the request object itself: record what we can.
  }
  return { headers: headersOf(headers, copy), content: json(content, copy) };
}

/** Tool end payload in native's `ToolExecutionResult` shape. */
export function toolResultOf(result: unknown, annotation: unknown, copy: PayloadCopy = PLAIN_COPY): NativeToolResult {
  const out: NativeToolResult = { result: json(result, copy) };
  if (annotation !== undefined && annotation !== null) out.annotation = json(annotation, copy);
  return out;
}

/**
 * End metadata of an error-ended tool: the caller's metadata (whose
 * `error.type`, when given, is kept) with `otel.status_code: "ERROR"`, which
 * a manual native tool end preserves. A non-object caller metadata is kept
 * under `metadata`. Nothing is inferred from the result, so native and
 * in-memory files stay identical.
 */
export function toolErrorMetadata(metadata: unknown, copy: PayloadCopy = PLAIN_COPY): JsonObject {
  return rules.toolErrorEndMetadata(json(metadata, copy));
}

/** ATOF scope attribute flags → native bitmask (1 = parallel, 2 = relocatable): the contract's rule. */
export const scopeAttributesOf: (flags: readonly string[] | undefined) => number | null = rules.scopeAttributeMask;

const SCOPE_TYPE_NAMES: Record<ScopeCategory, string> = {
  agent: 'Agent',
  function: 'Function',
  tool: 'Tool',
  llm: 'Llm',
  retriever: 'Retriever',
  embedder: 'Embedder',
  reranker: 'Reranker',
  guardrail: 'Guardrail',
  evaluator: 'Evaluator',
  custom: 'Custom',
  unknown: 'Unknown',
};

/**
 * Native `ScopeType` number of a contract category, read from the loaded
 * module (its `const enum` typings cannot be used). Unknown categories map
 * to `Unknown`.
 */
export function scopeTypeOf(scopeTypes: Readonly<Record<string, number>>, category: unknown): number {
  const name = typeof category === 'string' ? SCOPE_TYPE_NAMES[category as ScopeCategory] : undefined;
  const value = name === undefined ? undefined : scopeTypes[name];
  return typeof value === 'number' ? value : (scopeTypes.Unknown ?? 10);
}
