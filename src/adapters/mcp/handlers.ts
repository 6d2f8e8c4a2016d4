/**
 * The request handlers of an `@modelcontextprotocol/sdk` `Protocol` (a
 * low-level `Server`, an `McpServer`'s `.server`, or a `Client`): the SDK
 * keeps them in a map, `_requestHandlers`, and every request the other side
 * sends goes through the handler set there for its method, whether it was
 * set before the adapter came or after. The one place both sides wrap them.
 *
 * @module
 */

import { isRecord } from '../../shared/record.ts';

/** A handler as the SDK keeps it: the raw JSON-RPC request, and the SDK's `extra`. */
export type RequestHandler = (request: unknown, extra: unknown) => Promise<unknown>;

/** The request handler map of `protocol`, when it has one (it is an SDK `Protocol`). */
export function requestHandlersOf(protocol: unknown): Map<string, RequestHandler> | undefined {
  return isRecord(protocol) && protocol._requestHandlers instanceof Map ? (protocol._requestHandlers as Map<string, RequestHandler>) : undefined;
}

/**
 * Wraps the handlers of `handlers` for which `wrap` returns a handler: the
 * ones set now, and each one set later, when it is set. `wrap` is given
 * each handler once; a handler it returned is never wrapped again.
 */
export function wrapRequestHandlers(handlers: Map<string, RequestHandler>, wrap: (method: string, handler: RequestHandler) => RequestHandler | undefined): void {
  const wrapped = new WeakSet<RequestHandler>();
  const wrapOne = (method: string, handler: RequestHandler): RequestHandler => {
    if (wrapped.has(handler)) return handler;
    const around = wrap(method, handler);
    if (around === undefined) return handler;
    wrapped.add(around);
    return around;
  };
  const set = handlers.set;
  Object.defineProperty(handlers, 'set', {
    configurable: true,
    writable: true,
    value: function (this: Map<string, RequestHandler>, method: string, handler: RequestHandler) {
      return set.call(this, method, wrapOne(method, handler));
    },
  });
  for (const [method, handler] of [...handlers]) set.call(handlers, method, wrapOne(method, handler));
}
