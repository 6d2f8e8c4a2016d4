/**
 * `transport = "ndjson"`: one long-lived chunked POST
 * (`application/x-ndjson`), one event per line, ended when the sink
 * closes, as native sends it.
 *
 * `node:http` rather than `fetch`: its write callback says when a line has
 * reached the socket, and a broken request fails the lines still waiting,
 * which the queue then sends again on a new request. The socket is unref'd
 * between events so that an idle stream never keeps the host's process
 * alive (a shutting-down host is kept alive by whoever awaits the close).
 *
 * A receiver answers a chunked POST once it has read it, usually when the
 * stream ends: an error status then (a wrong token, a failing backend)
 * means every line it had taken is lost, although each reached the socket
 * and was counted as sent. `onRefused` is told how many, so the sink can
 * count them as failed.
 *
 * @module
 */

import { Buffer } from 'node:buffer';
import type http from 'node:http';
import type { Socket } from 'node:net';
import { ConnectionFailedError, type DeliveryError, DeliveryClosedError, DeliveryTimeoutError, DestinationUnusableError, HttpStatusError } from '../delivery/errors.ts';
import { proxyAnswerHint, requestFailure, retryAfterMs } from '../delivery/http.ts';
import { nextRequest } from '../delivery/redirect.ts';
import { routeTo } from '../delivery/tunnel.ts';
import { withUrlCredentials } from '../delivery/credentials.ts';
import { timerDelay, unrefTimer } from '../../shared/timers.ts';
import { displayUrl } from '../../shared/secret-text.ts';
import type { StreamTransportImpl } from './transport.ts';

/** Lines a receiver refused after they had reached the socket, with their bytes (newline included). */
export type RefusedLines = (lines: number, bytes: number, error: DeliveryError) => void;

interface Pending {
  resolve(): void;
  reject(error: Error): void;
}

/** One chunked POST and the lines waiting for it. */
class Stream {
  readonly request: http.ClientRequest;
  socket: Socket | null = null;
  /** Set once the request cannot take more lines. */
  broken: Error | null = null;
  readonly pending = new Set<Pending>();
  readonly finished: Promise<void>;
  /** Lines that reached the socket on this request (counted as sent), and their bytes. */
  private taken = { lines: 0, bytes: 0 };

  constructor(written: URL, configured: Record<string, string>, onRefused?: RefusedLines) {
    // The URL's user name and password go as a header (`delivery/credentials.ts`).
    const { url, headers } = withUrlCredentials(written, configured);
    const route = routeTo(url);
    const what = `POST ${displayUrl(url.href)}${route.via}`;
    const note = route.note !== undefined ? ` (${route.note})` : '';
    this.request = route.request({
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson', 'transfer-encoding': 'chunked', ...headers },
    });
    this.request.on('socket', (socket: Socket) => {
      this.socket = socket;
      socket.unref?.();
    });
    this.finished = new Promise<void>((resolve) => {
      this.request.on('response', (response) => {
        response.resume();
        if (response.statusCode === undefined || response.statusCode < 200 || response.statusCode > 299) {
          const header = response.headers['retry-after'];
          const status = response.statusCode ?? 0;
          // A chunked stream's lines cannot be sent again elsewhere: a redirect is reported (naming where), never followed.
          const redirect = nextRequest({ status, location: response.headers.location, url, headers, what, hops: 0, policy: 'report' });
          const error = redirect instanceof Error ? redirect : new HttpStatusError(status, what, retryAfterMs(typeof header === 'string' ? header : null), proxyAnswerHint(status, route.proxy));
          const taken = this.taken;
          this.taken = { lines: 0, bytes: 0 };
          if (taken.lines > 0) onRefused?.(taken.lines, taken.bytes, error);
          this.fail(error);
        } else {
          // The receiver ended the stream: lines after this need a new request.
          this.fail(new ConnectionFailedError(`${what}: the receiver ended the stream`));
        }
        response.on('end', resolve);
        response.on('error', () => resolve());
      });
      this.request.on('error', (error) => {
        this.fail(requestFailure(what, error, note, route.proxy));
        resolve();
      });
      this.request.on('close', () => {
        this.fail(new ConnectionFailedError(`${what}: the connection closed`));
        resolve();
      });
    });
  }

  write(line: string, timeoutMs: number, signal: AbortSignal): Promise<void> {
    if (this.broken !== null) return Promise.reject(this.broken);
    return new Promise<void>((resolve, reject) => {
      const entry: Pending = {
        resolve: () => settle(null),
        reject: (error) => settle(error),
      };
      const timer = unrefTimer(
        setTimeout(() => {
          const error = new DeliveryTimeoutError(`POST ${displayUrl(this.request.path)}: a line was not taken within ${timeoutMs} ms`);
          // A stalled stream is given up: the next try opens a new one.
          this.fail(error);
          this.request.destroy();
        }, timerDelay(timeoutMs)),
      );
      const onAbort = () => entry.reject(new DeliveryClosedError('the output closed'));
      signal.addEventListener('abort', onAbort, { once: true });
      const settle = (error: Error | null) => {
        if (!this.pending.delete(entry)) return;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        if (error === null) resolve();
        else reject(error);
      };
      this.pending.add(entry);
      const text = `${line}\n`;
      this.request.write(text, (error) => {
        if (error) {
          // Bun fails the write ("Socket is closed") before the request's own error (a refused certificate)
          // arrives: the line waits a turn so that its failure names the cause.
          setImmediate(() => entry.reject(this.broken ?? new ConnectionFailedError(error.message)));
          return;
        }
        if (this.pending.has(entry)) {
          this.taken.lines++;
          this.taken.bytes += Buffer.byteLength(text, 'utf8');
        }
        entry.resolve();
      });
    });
  }

  fail(error: Error): void {
    if (this.broken === null) this.broken = error;
    for (const entry of [...this.pending]) entry.reject(this.broken);
  }

  async end(timeoutMs: number): Promise<void> {
    const timer = unrefTimer(setTimeout(() => this.request.destroy(), timerDelay(timeoutMs)));
    try {
      if (this.broken === null) this.request.end();
      else this.request.destroy();
      await this.finished;
    } finally {
      clearTimeout(timer);
    }
  }
}

export function ndjsonTransport(url: string, headers: Record<string, string>, timeoutMs: number, onRefused?: RefusedLines): StreamTransportImpl {
  let target: URL | null = null;
  let stream: Stream | null = null;
  return {
    send: (line, signal) => {
      if (target === null) {
        try {
          target = new URL(url);
        } catch {
          return Promise.reject(new DestinationUnusableError(`${displayUrl(url)} is not a URL`));
        }
        if (target.protocol !== 'http:' && target.protocol !== 'https:') {
          return Promise.reject(new DestinationUnusableError(`${displayUrl(url)}: the ndjson transport needs an http(s) URL`));
        }
      }
      if (stream === null || stream.broken !== null) {
        stream?.request.destroy();
        stream = new Stream(target, headers, onRefused);
      }
      return stream.write(line, timeoutMs, signal);
    },
    close: async (budget) => {
      const current = stream;
      stream = null;
      if (current !== null) await current.end(budget);
    },
    destroy: () => {
      const current = stream;
      stream = null;
      current?.fail(new DeliveryClosedError('the output closed'));
      current?.request.destroy();
    },
  };
}
