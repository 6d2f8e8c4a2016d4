/**
 * The trace context of an MCP request over HTTP (Streamable HTTP, the older
 * SSE transport) in the W3C headers, where HTTP tracing looks for it: an
 * OpenTelemetry HTTP instrumentation, a gateway or a proxy reads
 * `traceparent` from the request, not from the JSON-RPC body. The client
 * side adds the `traceparent` (and `tracestate`) a linked request already
 * carries in `params._meta`; the server side reads them back when `_meta`
 * has none (a client that is not ours, behind an instrumented `fetch`).
 *
 * The MCP SDK's HTTP client transports send each message through the
 * `fetch` they are given, with no per-request headers of their own: that
 * `fetch` is the one place a header per request can be set.
 *
 * @module
 */

import { jsonIfReadable } from '../../shared/json.ts';
import { isRecord } from '../../shared/record.ts';
import { CALLER_META_KEY, TRACEPARENT_META_KEY, metaString } from './meta.ts';

/** The W3C trace-context header (and `_meta` key) naming the caller's trace and span. */
export const TRACEPARENT_HEADER = 'traceparent';
/** The W3C header (and `_meta` key) carrying vendor trace state beside it. */
export const TRACESTATE_HEADER = 'tracestate';

/** A `fetch` as the MCP clients take it. */
export type FetchLike = (input: any, init?: any) => Promise<Response>;

/** The trace-context headers a request is to carry. */
interface TraceHeaders {
  readonly traceparent: string;
  readonly tracestate?: string;
}

/** The JSON-RPC message(s) a request body carries (a POST of an MCP client's transport), else undefined. */
export function messagesIn(body: unknown): { messages: unknown[]; batch: boolean } | undefined {
  if (typeof body !== 'string' || body === '') return undefined;
  const read = jsonIfReadable(body);
  if (read === undefined) return undefined;
  const parsed = read.value;
  const messages = Array.isArray(parsed) ? parsed : [parsed];
  return messages.every((message) => isRecord(message) && message.jsonrpc === '2.0') ? { messages, batch: Array.isArray(parsed) } : undefined;
}

/**
 * The headers of the requests among `messages` that an MCP client adapter
 * linked (their `_meta` names the caller, `nemo-relay/caller`): the
 * `traceparent` (and `tracestate`) that `_meta` carries. One HTTP request
 * has one set of headers: a batch whose linked requests name different
 * contexts gets none. A request nobody linked gets none either: nothing
 * goes in a header that the adapter did not put on the wire.
 */
function traceHeadersOf(messages: readonly unknown[]): TraceHeaders | undefined {
  let found: TraceHeaders | undefined;
  for (const message of messages) {
    const meta = isRecord(message) && isRecord(message.params) ? message.params._meta : undefined;
    if (!isRecord(meta) || meta[CALLER_META_KEY] === undefined) continue;
    const traceparent = metaString(meta, TRACEPARENT_META_KEY);
    if (traceparent === undefined) continue;
    const tracestate = metaString(meta, TRACESTATE_HEADER);
    if (found !== undefined && (found.traceparent !== traceparent || found.tracestate !== tracestate)) return undefined;
    found = { traceparent, ...(tracestate !== undefined ? { tracestate } : {}) };
  }
  return found;
}

/**
 * `init` for a request (to `input`) carrying `messages`, with the trace
 * headers of the linked ones added; `init` itself when there are none, or
 * when the request already has a `traceparent` (the program's own, through
 * `requestInit.headers` or its fetch's): the program's headers are never
 * changed, only added to. The headers keep the shape they were given in.
 */
export function withTraceHeaders(input: unknown, init: Record<string, unknown> | undefined, messages: readonly unknown[]): Record<string, unknown> | undefined {
  try {
    return addedTo(input, init, messages);
  } catch {
    // Headers the platform would not take (it would refuse the request the same way): the request goes as it was.
    return init;
  }
}

function addedTo(input: unknown, init: Record<string, unknown> | undefined, messages: readonly unknown[]): Record<string, unknown> | undefined {
  const trace = traceHeadersOf(messages);
  if (trace === undefined) return init;
  // Without headers of its own in `init`, a `Request` given as `input` says what the request sends.
  const own: unknown = init?.headers ?? (typeof Request !== 'undefined' && input instanceof Request ? input.headers : undefined);
  const present = new Headers(own as ConstructorParameters<typeof Headers>[0]);
  if (present.has(TRACEPARENT_HEADER)) return init;
  const added: [string, string][] = [[TRACEPARENT_HEADER, trace.traceparent]];
  if (trace.tracestate !== undefined && !present.has(TRACESTATE_HEADER)) added.push([TRACESTATE_HEADER, trace.tracestate]);
  return { ...init, headers: headersWith(own, added) };
}

/** `headers` (a `Headers`, a list of pairs or a record, or none) with `added`, in the same shape. */
function headersWith(headers: unknown, added: readonly [string, string][]): unknown {
  if (headers instanceof Headers) {
    const copy = new Headers(headers);
    for (const [name, value] of added) copy.set(name, value);
    return copy;
  }
  if (Array.isArray(headers)) return [...headers, ...added];
  return { ...(isRecord(headers) ? headers : {}), ...Object.fromEntries(added) };
}

/**
 * `fetch` (else the global one, as it is when each request goes out) for an
 * `@modelcontextprotocol/sdk` HTTP client transport
 * (`new StreamableHTTPClientTransport(url, { fetch: traceparentFetch() })`,
 * `SSEClientTransport` the same): a request the client adapter linked also
 * carries its `traceparent` (and `tracestate`) as HTTP headers, the ones
 * its `_meta` holds, unless the request has a `traceparent` already. Every
 * other request goes out as it was.
 */
export function traceparentFetch(fetch?: FetchLike): FetchLike {
  const base: FetchLike = fetch ?? ((input, init) => globalThis.fetch(input, init));
  return (input, init) => {
    const sent = messagesIn(isRecord(init) ? init.body : undefined);
    return base(input, sent === undefined ? init : withTraceHeaders(input, init, sent.messages));
  };
}

/**
 * The `traceparent` of the HTTP request an MCP server got a message in: the
 * SDK's `extra.requestInfo.headers` (its Streamable HTTP and SSE server
 * transports give them; stdio has none). One value: a header sent twice
 * names no one context.
 */
export function receivedTraceparent(extra: unknown): string | undefined {
  const info = isRecord(extra) ? extra.requestInfo : undefined;
  const headers = isRecord(info) ? info.headers : undefined;
  const value = headers instanceof Headers ? headers.get(TRACEPARENT_HEADER) : isRecord(headers) ? headers[TRACEPARENT_HEADER] : undefined;
  return typeof value === 'string' && value !== '' ? value : undefined;
}
