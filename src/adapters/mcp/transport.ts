/**
 * The client side for MCP clients that are not an `@modelcontextprotocol/sdk`
 * `Client` (the AI SDK's `createMCPClient` has its own):
 * `instrumentMcpTransport(transport, hooks)` does what `instrumentMcpClient`
 * does, on the transport the client is given, which is the extension point
 * such clients document (`transport: MCPTransport`). Each `tools/call`
 * request it sends carries the trace context of the host's tool call, and
 * the answer to it is read for the server's trajectory before the client
 * sees it. The rules are `McpCallLinker`'s, the same as the `Client`'s.
 *
 * @module
 */

import type { HookRegistry } from '../../hooks/registry.ts';
import { isRecord } from '../../shared/record.ts';
import { McpCallLinker, type McpCallLink, type McpClientOptions } from './client.ts';

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

type Handler = (message: unknown, ...rest: unknown[]) => void;
type RequestId = string | number;

const INSTRUMENTED = Symbol.for('nemo-relay-hooks.mcp.transport');

/**
 * Instruments `transport` (in place, before the client is given it; a
 * second call does nothing) so that each `tools/call` request tied to one
 * of the host's open tool calls carries its trace context and caller in
 * `params._meta`, and the host's tool call references the trajectory the
 * server names in its answer (the answer reaches the client without that
 * reference). A request that already names its caller (an instrumented
 * `Client` on this transport) is left to that client. Returns `transport`.
 */
export function instrumentMcpTransport<T extends McpTransportLike>(transport: T, hooks: HookRegistry, options: McpClientOptions = {}): T {
  const marked = transport as T & { [INSTRUMENTED]?: true };
  if (marked[INSTRUMENTED] === true) return transport;
  const linker = new McpCallLinker(hooks, options);
  const pending = new Map<RequestId, McpCallLink>();
  const send = transport.send.bind(transport);
  const close = transport.close.bind(transport);
  let handler = transport.onmessage as Handler | undefined;

  const settle = (id: RequestId): McpCallLink | undefined => {
    const link = pending.get(id);
    pending.delete(id);
    link?.release();
    return link;
  };
  // One per handler, bound to it: the SDK's Client reads the handler already set and calls it from its own, so a
  // wrapper that called whatever handler is current would call itself.
  const receivers = new WeakMap<Handler, Handler>();
  const receiverOf = (target: Handler): Handler => {
    let receiver = receivers.get(target);
    if (receiver === undefined) {
      receiver = (message, ...rest) => {
        const id = responseId(message);
        const link = id === undefined ? undefined : settle(id);
        const forwarded = link !== undefined && isRecord(message) && 'result' in message ? { ...message, result: link.answered(message.result) } : message;
        target.call(transport, forwarded, ...rest);
      };
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
      const cancelled = cancelledId(message);
      if (cancelled !== undefined) settle(cancelled);
      const id = toolsCallId(message);
      if (id === undefined) return send(message, ...rest);
      const request = message as { params: Record<string, unknown> };
      const link = await linker.link(request.params);
      if (link === undefined) return send(message, ...rest);
      pending.set(id, link);
      try {
        return await send({ ...request, params: link.params }, ...rest);
      } catch (error) {
        settle(id);
        throw error;
      }
    },
  });
  Object.defineProperty(transport, 'close', {
    configurable: true,
    writable: true,
    value: (...rest: unknown[]): Promise<void> => {
      for (const id of [...pending.keys()]) settle(id);
      return close(...rest);
    },
  });
  Object.defineProperty(transport, INSTRUMENTED, { value: true });
  return transport;
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
