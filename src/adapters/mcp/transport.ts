/**
 * The client side for MCP clients that are not an `@modelcontextprotocol/sdk`
 * `Client` (the AI SDK's `createMCPClient` has its own):
 * `instrumentMcpTransport(transport, hooks)` does what `instrumentMcpClient`
 * does, on the transport the client is given, which is the extension point
 * such clients document (`transport: MCPTransport`). Each `tools/call`
 * request it sends carries the trace context of the host's tool call, and
 * the answer to it is read for the server's trajectory before the client
 * sees it. The rules are `McpCallLinker`'s, the same as the `Client`'s.
 * The AI SDK's `{ type: 'http' | 'sse', url }` transports are made inside
 * its client: their one extension point is the `fetch` they take, which
 * carries the same messages as request and response bodies.
 *
 * @module
 */

import { checkAdapterArguments } from '../core/arguments.ts';
import type { HookRegistry } from '../../hooks/registry.ts';
import { jsonIfReadable } from '../../shared/json.ts';
import { isRecord } from '../../shared/record.ts';
import { McpCallLinker, type McpCallLink, type McpClientOptions } from './client.ts';
import { messagesIn, withTraceHeaders, type FetchLike } from './http-headers.ts';
import { instrumentedBefore, markInstrumented } from './instrumented.ts';

/**
 * The part of an MCP client transport the adapter uses: JSON-RPC messages
 * out through `send`, in through the `onmessage` the client sets. The AI
 * SDK's `MCPTransport` (and its `Experimental_StdioMCPTransport`) and the
 * `@modelcontextprotocol/sdk` transports are such.
 */
export interface McpTransportLike {
  send(message: any, ...rest: any[]): Promise<void>;
  onmessage?: ((message: any, ...rest: any[]) => void) | undefined;
  close(...rest: any[]): Promise<void>;
}

/**
 * A `createMCPClient` configuration for a transport the AI SDK makes inside
 * the client (`{ type: 'http' | 'sse', url }`): out of reach but for the
 * `fetch` it is given, through which every message goes (a POST's body
 * out; a response's JSON or event stream in).
 */
export interface McpHttpTransportConfig {
  type: 'http' | 'sse';
  url: string | URL;
  fetch?: FetchLike | undefined;
}

type Handler = (message: unknown, ...rest: unknown[]) => void;
type RequestId = string | number;

const INSTRUMENTED = Symbol.for('nemo-relay-hooks.mcp.transport');

/** A JSON-RPC request (a method and an id): one the server sends its client. */
function isServerRequest(message: unknown): boolean {
  return isRecord(message) && typeof message.method === 'string' && (typeof message.id === 'string' || typeof message.id === 'number');
}

/**
 * The one rule of both forms, on JSON-RPC messages: a `tools/call` going
 * out is tied to a host tool call and carries its `_meta`; the answer
 * coming in is read for the server's trajectory and handed on without it.
 */
class MessageLinks {
  readonly #linker: McpCallLinker;
  readonly #pending = new Map<RequestId, McpCallLink>();

  constructor(hooks: HookRegistry, options: McpClientOptions) {
    this.#linker = new McpCallLinker(hooks, options);
  }

  /** Requests out whose answer has not come. */
  get waiting(): boolean {
    return this.#pending.size > 0;
  }

  /** `message` as it goes out: a `tools/call` tied to a host tool call with its `_meta`, anything else as it is. */
  async outgoing(message: unknown): Promise<unknown> {
    const cancelled = cancelledId(message);
    if (cancelled !== undefined) this.settle(cancelled);
    const id = toolsCallId(message);
    if (id === undefined) return message;
    const request = message as { params: Record<string, unknown> };
    const link = await this.#linker.link(request.params);
    if (link === undefined) return message;
    this.#pending.set(id, link);
    return { ...request, params: link.params };
  }

  /** `message` did not go out (its send failed): nothing will answer it. */
  unsent(message: unknown): void {
    const id = toolsCallId(message);
    if (id !== undefined) this.settle(id);
  }

  /**
   * `message` as the client gets it: the answer to a linked request without
   * what the server added for the adapter, a request of the server's without
   * the caller it names (`McpCallLinker.serverRequest`).
   */
  incoming(message: unknown): unknown {
    if (isServerRequest(message)) return this.#linker.serverRequest(message, (plain) => plain);
    const id = responseId(message);
    const link = id === undefined ? undefined : this.settle(id);
    return link !== undefined && isRecord(message) && 'result' in message ? { ...message, result: link.answered(message.result) } : message;
  }

  /**
   * Hands `message` to the client's handler (`receive`) as `incoming` gives
   * it; a request of the server's is handled as code of the tool call whose
   * request it serves, as `McpCallLinker.serverRequest` says (a transport
   * object calls the client's handler: the fetch of an HTTP configuration
   * only passes the message on, and the client handles it later).
   */
  receive(message: unknown, receive: (message: unknown) => void): void {
    if (isServerRequest(message)) return this.#linker.serverRequest(message, receive);
    receive(this.incoming(message));
  }

  settle(id: RequestId): McpCallLink | undefined {
    const link = this.#pending.get(id);
    this.#pending.delete(id);
    link?.release();
    return link;
  }

  settleAll(): void {
    for (const id of [...this.#pending.keys()]) this.settle(id);
  }
}

/**
 * Instruments an MCP client transport so that each `tools/call` request
 * tied to one of the host's open tool calls carries its trace context and
 * caller in `params._meta`, and the host's tool call references the
 * trajectory the server names in its answer (the answer reaches the client
 * without that reference). A request that already names its caller (an
 * instrumented `Client` on this transport) is left to that client.
 *
 * - A transport object (`send`, `onmessage`, `close`): instrumented in
 *   place, before the client is given it; returns it. A second call does
 *   nothing.
 * - The AI SDK's `{ type: 'http' | 'sse', url }` configuration: returns a
 *   copy whose `fetch` (yours, else the global one) does the same on the
 *   messages the client's own transport sends and receives through it.
 */
export function instrumentMcpTransport<T extends McpTransportLike>(transport: T, hooks: HookRegistry, options?: McpClientOptions): T;
export function instrumentMcpTransport<T extends McpHttpTransportConfig>(config: T, hooks: HookRegistry, options?: McpClientOptions): T;
export function instrumentMcpTransport<T extends McpTransportLike | McpHttpTransportConfig>(transport: T, hooks: HookRegistry, options: McpClientOptions = {}): T {
  checkAdapterArguments('instrumentMcpTransport', 'the second argument', hooks, options);
  if (typeof (transport as Partial<McpTransportLike>).send !== 'function') return instrumentConfig(transport as McpHttpTransportConfig, hooks, options) as T;
  return instrumentObject(transport as McpTransportLike, hooks, options) as T;
}

function instrumentObject<T extends McpTransportLike>(transport: T, hooks: HookRegistry, options: McpClientOptions): T {
  if (instrumentedBefore(transport, INSTRUMENTED, hooks, options.logger, 'instrumentMcpTransport', "this transport's requests are tied only to the tool calls of the hooks it was first instrumented with")) return transport;
  const links = new MessageLinks(hooks, options);
  const send = transport.send.bind(transport);
  const close = transport.close.bind(transport);
  let handler = transport.onmessage as Handler | undefined;

  // One per handler, bound to it: the SDK's Client reads the handler already set and calls it from its own, so a
  // wrapper that called whatever handler is current would call itself.
  const receivers = new WeakMap<Handler, Handler>();
  const receiverOf = (target: Handler): Handler => {
    let receiver = receivers.get(target);
    if (receiver === undefined) {
      receiver = (message, ...rest) => links.receive(message, (received) => target.call(transport, received, ...rest));
      receivers.set(target, receiver);
    }
    return receiver;
  };

  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    enumerable: true,
    // The transport calls `this.onmessage(message)`: it gets the receiver, which hands the message on to the client's handler.
    get: () => (handler === undefined ? undefined : receiverOf(handler)),
    set: (value: Handler | undefined) => {
      handler = value;
    },
  });
  Object.defineProperty(transport, 'send', {
    configurable: true,
    writable: true,
    value: async (message: unknown, ...rest: unknown[]): Promise<void> => {
      const out = await links.outgoing(message);
      if (out === message) return send(message, ...rest);
      try {
        return await send(out, ...rest);
      } catch (error) {
        links.unsent(message);
        throw error;
      }
    },
  });
  Object.defineProperty(transport, 'close', {
    configurable: true,
    writable: true,
    value: (...rest: unknown[]): Promise<void> => {
      links.settleAll();
      return close(...rest);
    },
  });
  markInstrumented(transport, INSTRUMENTED, hooks);
  return transport;
}

function instrumentConfig<T extends McpHttpTransportConfig>(config: T, hooks: HookRegistry, options: McpClientOptions): T {
  const given = config.fetch as FetchLike | undefined;
  if (given !== undefined && instrumentedBefore(given, INSTRUMENTED, hooks, options.logger, 'instrumentMcpTransport', "its requests are tied only to the tool calls of the hooks it was first instrumented with")) return config;
  // The global fetch as it is when each request goes out, as the SDK's default (a program or test may replace it).
  const base: FetchLike = given ?? ((input, init) => globalThis.fetch(input, init));
  const links = new MessageLinks(hooks, options);
  const linked: FetchLike = async (input, init) => {
    const sent = messagesIn(init?.body);
    let request = init;
    if (sent !== undefined) {
      const out = await Promise.all(sent.messages.map((message) => links.outgoing(message)));
      if (out.some((message, i) => message !== sent.messages[i])) request = withTraceHeaders(input, { ...init, body: JSON.stringify(sent.batch ? out : out[0]) }, out);
    }
    let response: Response;
    try {
      response = await base(input, request);
    } catch (error) {
      for (const message of sent?.messages ?? []) links.unsent(message);
      throw error;
    }
    const answered = await answeredResponse(response, links);
    // A request the server refused (no JSON-RPC answer in the body) is never answered.
    if (!response.ok) for (const message of sent?.messages ?? []) links.unsent(message);
    return answered;
  };
  markInstrumented(linked, INSTRUMENTED, hooks);
  return { ...config, fetch: linked };
}

/**
 * `response` with the answers to linked requests read, as the client's transport reads them: a JSON body (one
 * message or a batch), or an event stream whose `message` events each carry one (the answer to a POST, or the SSE
 * transport's stream every answer comes down). Anything else, and a JSON body when nothing is waiting, as it is.
 */
async function answeredResponse(response: Response, links: MessageLinks): Promise<Response> {
  const type = response.headers.get('content-type') ?? '';
  if (type.includes('text/event-stream') && response.body !== null) return withBody(response, answeredEvents(response.body, links));
  if (!type.includes('application/json') || !links.waiting) return response;
  const body = jsonIfReadable(await response.clone().text());
  if (body === undefined) return response;
  const parsed = body.value;
  const messages = Array.isArray(parsed) ? parsed : [parsed];
  const read = messages.map((message) => links.incoming(message));
  if (read.every((message, i) => message === messages[i])) return response;
  return withBody(response, JSON.stringify(Array.isArray(parsed) ? read : read[0]));
}

function withBody(response: Response, body: string | ReadableStream<Uint8Array>): Response {
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/**
 * The event stream with each `message` event whose data answers a linked request written again with the answer
 * as the client is to get it; every other event passes as its bytes came, each as soon as its blank line has.
 */
function answeredEvents(body: ReadableStream<Uint8Array>, links: MessageLinks): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let pending = '';
  let event: string[] = [];
  const eventText = (lines: string[]): string => {
    const raw = lines.join('');
    if (!links.waiting) return raw;
    const fields = lines.map((line) => line.replace(/\r?\n$|\r$/, ''));
    const name = fields.find((line) => line.startsWith('event:'))?.slice(6).trim();
    if (name !== undefined && name !== 'message') return raw;
    const data = fields.filter((line) => line.startsWith('data:')).map((line) => line.slice(line.startsWith('data: ') ? 6 : 5));
    if (data.length === 0) return raw;
    const parsed = jsonIfReadable(data.join('\n'));
    if (parsed === undefined) return raw;
    const message = parsed.value;
    const read = links.incoming(message);
    if (read === message) return raw;
    const kept = fields.filter((line) => line !== '' && !line.startsWith('data:'));
    return [...kept, `data: ${JSON.stringify(read)}`, '', ''].join('\n');
  };
  const take = (text: string, end: boolean): string => {
    pending += text;
    let out = '';
    // A line ends at \n, \r\n or \r; a \r last in the chunk may be the first half of a \r\n.
    const line = /[^\r\n]*(?:\r\n|\n|\r(?=[^\n]))/y;
    let at = 0;
    for (let found = line.exec(pending); found !== null; found = line.exec(pending)) {
      at = line.lastIndex;
      event.push(found[0]);
      if (/^(?:\r\n|\n|\r)$/.test(found[0])) {
        out += eventText(event);
        event = [];
      }
    }
    pending = pending.slice(at);
    if (end) {
      out += event.join('') + pending;
      event = [];
      pending = '';
    }
    return out;
  };
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        const out = take(decoder.decode(chunk, { stream: true }), false);
        if (out !== '') controller.enqueue(encoder.encode(out));
      },
      flush(controller) {
        const out = take(decoder.decode(), true);
        if (out !== '') controller.enqueue(encoder.encode(out));
      },
    }),
  );
}

function requestId(value: unknown): RequestId | undefined {
  return typeof value === 'string' || typeof value === 'number' ? value : undefined;
}

/** The id of a `tools/call` request with params, else undefined. */
function toolsCallId(message: unknown): RequestId | undefined {
  return isRecord(message) && message.method === 'tools/call' && isRecord(message.params) ? requestId(message.id) : undefined;
}

/** The id a response (a result or an error) answers, else undefined. */
function responseId(message: unknown): RequestId | undefined {
  return isRecord(message) && message.method === undefined && ('result' in message || 'error' in message) ? requestId(message.id) : undefined;
}

/** The request a `notifications/cancelled` gives up, else undefined. */
function cancelledId(message: unknown): RequestId | undefined {
  return isRecord(message) && message.method === 'notifications/cancelled' && isRecord(message.params) ? requestId(message.params.requestId) : undefined;
}
