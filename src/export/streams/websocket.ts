/**
 * `transport = "websocket"`: one connection, one text frame per event (the
 * ATOF JSON object, no newline), the configured headers on the upgrade
 * request, as native sends it.
 *
 * Bun and Deno have a global `WebSocket` that takes headers; on Node (whose
 * global one, where present, cannot send headers) the optional `ws`
 * package is imported the first time a websocket sink connects, so nobody
 * else pays for it.
 *
 * @module
 */

import { detectRuntime } from '../../shared/js-runtime.ts';
import { ConnectionFailedError, connectionFailure, DeliveryClosedError, DeliveryError, DeliveryTimeoutError, DestinationUnusableError } from '../delivery/errors.ts';
import { trustOptions, untrustedCertificateHint } from '../delivery/trust.ts';
import { withoutUserinfo } from '../delivery/credentials.ts';
import { timerDelay, unrefTimer } from '../../shared/timers.ts';
import { displayUrl, withoutUrlSecrets } from '../../shared/secret-text.ts';
import type { StreamTransportImpl } from './transport.ts';

/** The part of both WebSocket APIs the sink uses. */
interface Socket {
  readonly readyState: number;
  send(data: string, callback?: (error?: Error) => void): void;
  close(code?: number): void;
  addEventListener(type: 'open' | 'close' | 'error', listener: (event: unknown) => void): void;
}

type Connect = (url: string, headers: Record<string, string>, timeoutMs: number) => Socket;

const OPEN = 1;

let nodeConnect: Promise<Connect> | null = null;

/** Sockets from `ws`, whose send() reports when the frame was written. */
const reportsWrites = new WeakSet<object>();

/**
 * How this runtime opens a WebSocket with headers. The `ws` package where
 * it can be unref'd (Node; Deno, whose global WebSocket keeps the process
 * alive even while idle), else the global one (Bun, whose `ws` is a shim
 * over it; Deno without `ws` installed).
 */
function connector(): Promise<Connect> {
  const runtime = detectRuntime();
  const global = (globalThis as { WebSocket?: new (url: string, options?: unknown) => Socket }).WebSocket;
  const viaGlobal: Connect | null = global === undefined ? null : (url, headers) => new global(url, { headers });
  if (runtime === 'bun' && viaGlobal !== null) return Promise.resolve(viaGlobal);
  nodeConnect ??= import('ws').then(
    (module): Connect => {
      const WebSocket = (module.default ?? module) as unknown as new (url: string, options: unknown) => Socket;
      return (url, headers, timeoutMs) => {
        // wss: the same authorities as the HTTPS senders (`delivery/trust.ts`); `ws` hands them to `node:tls`.
        const socket = new WebSocket(url, { headers, handshakeTimeout: timeoutMs, ...(url.startsWith('wss:') ? trustOptions() : {}) });
        reportsWrites.add(socket);
        // The upgrade request must not keep the host alive either (a receiver that never answers it).
        (socket as { _req?: { on?(event: 'socket', listener: (s: { unref?(): void }) => void): void } })._req?.on?.('socket', (s) => s.unref?.());
        return socket;
      };
    },
    (error: unknown): Connect => {
      if (runtime !== 'node' && viaGlobal !== null) return viaGlobal;
      nodeConnect = null;
      throw new DestinationUnusableError(
        `the websocket transport needs the optional "ws" package on Node (npm install ws): ${error instanceof Error ? error.message : String(error)}`,
      );
    },
  );
  return nodeConnect;
}

export function websocketTransport(url: string, headers: Record<string, string>, timeoutMs: number): StreamTransportImpl {
  const shown = displayUrl(url);
  const target = withoutWrittenUserinfo(url);
  let current: Promise<Socket> | null = null;
  /** The socket being opened, so that close() can abandon a handshake that hangs. */
  let connecting: Socket | null = null;

  const open = async (): Promise<Socket> => {
    const connect = await connector();
    let socket: Socket;
    try {
      socket = connect(target, headers, timeoutMs);
    } catch (error) {
      throw new DestinationUnusableError(`${shown}: ${withoutUrlSecrets(error instanceof Error ? error.message : String(error))}`);
    }
    connecting = socket;
    await new Promise<void>((resolve, reject) => {
      const timer = unrefTimer(
        setTimeout(() => {
          reject(new DeliveryTimeoutError(`${shown}: no WebSocket handshake within ${timeoutMs} ms`));
          try {
            socket.close();
          } catch {
            // already gone
          }
        }, timerDelay(timeoutMs)),
      );
      socket.addEventListener('open', () => {
        if (connecting === socket) connecting = null;
        clearTimeout(timer);
        unrefSocket(socket);
        resolve();
      });
      socket.addEventListener('error', (event) => {
        if (connecting === socket) connecting = null;
        clearTimeout(timer);
        const cause = (event as { error?: unknown }).error;
        const hint = untrustedCertificateHint(cause);
        reject(connectionFailure(`${shown}: WebSocket connection failed${describeEvent(event)}${hint === '' ? '' : ` (${hint})`}`, cause));
      });
    });
    socket.addEventListener('close', () => {
      if (current !== null) current = null;
    });
    return socket;
  };

  return {
    send: async (line, signal) => {
      current ??= open();
      let socket: Socket;
      try {
        socket = await current;
      } catch (error) {
        current = null;
        throw error;
      }
      if (socket.readyState !== OPEN) {
        current = null;
        throw new ConnectionFailedError(`${shown}: the WebSocket connection closed`);
      }
      await new Promise<void>((resolve, reject) => {
        // `ws` reports when the frame was written; the global API returns at once.
        let settled = false;
        const done = (error?: Error) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          if (error) reject(error instanceof DeliveryError ? error : new ConnectionFailedError(`${shown}: ${error.message}`));
          else resolve();
        };
        // A receiver that stops reading fills the socket's buffers and the frame is never written: the
        // connection is given up (the next event opens a new one) and the event counted by the queue.
        const timer = unrefTimer(
          setTimeout(() => {
            done(new DeliveryTimeoutError(`${shown}: an event was not written within ${timeoutMs} ms (the receiver is not reading)`));
            if (current !== null) current = null;
            terminate(socket);
          }, timerDelay(timeoutMs)),
        );
        const onAbort = () => done(new DeliveryClosedError(`${shown}: the output closed`));
        signal.addEventListener('abort', onAbort, { once: true });
        if (reportsWrites.has(socket)) {
          socket.send(line, done);
        } else {
          socket.send(line);
          done();
        }
      });
    },
    close: async (budget) => {
      const pending = current;
      current = null;
      if (pending === null) return;
      const handshake = connecting;
      connecting = null;
      if (handshake !== null) {
        // Still connecting at close: nothing was sent on it; give the handshake up now.
        try {
          handshake.close();
        } catch {
          (handshake as { terminate?(): void }).terminate?.();
        }
        return;
      }
      const socket = await pending.catch(() => null);
      if (socket === null || socket.readyState !== OPEN) return;
      await new Promise<void>((resolve) => {
        const timer = unrefTimer(
          setTimeout(() => {
            // No closing handshake within the budget (a receiver that stopped reading): the connection goes now,
            // or `ws` would hold the process for its own 30-second close timer.
            terminate(socket);
            resolve();
          }, timerDelay(budget)),
        );
        socket.addEventListener('close', () => {
          clearTimeout(timer);
          resolve();
        });
        // No code, as native closes (the receiver sees 1005).
        socket.close();
      });
    },
    destroy: () => {
      const pending = current;
      current = null;
      const handshake = connecting;
      connecting = null;
      if (handshake !== null) terminate(handshake);
      void pending?.then(terminate, () => {});
    },
  };
}

/** Ends a connection at once: `ws` has terminate(), the global API only close(). Never throws. */
function terminate(socket: Socket): void {
  try {
    const hard = (socket as { terminate?(): void }).terminate;
    if (typeof hard === 'function') hard.call(socket);
    else socket.close();
  } catch {
    // already gone
  }
}

/** An idle connection must not keep the host alive (`ws` exposes its TCP socket; the globals differ by runtime). */
function unrefSocket(socket: unknown): void {
  (socket as { _socket?: { unref?(): void } })._socket?.unref?.();
  (socket as { unref?(): void }).unref?.();
}

function describeEvent(event: unknown): string {
  const message = (event as { message?: unknown; error?: { message?: unknown } } | null)?.message ?? (event as { error?: { message?: unknown } })?.error?.message;
  // The runtime's text may quote the URL, query credentials and all (Bun's does).
  return typeof message === 'string' && message !== '' ? `: ${withoutUrlSecrets(message)}` : '';
}

/**
 * The URL without its user name and password: native's WebSocket upgrade
 * sends no URL credentials (`ws` and the global WebSocket would send them
 * as `Authorization: Basic`). Left as written when it is not a URL, for the
 * connect's own error.
 */
function withoutWrittenUserinfo(url: string): string {
  try {
    const parsed = new URL(url);
    return parsed.username === '' && parsed.password === '' ? url : withoutUserinfo(parsed).href;
  } catch {
    return url;
  }
}
