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
 * stream ends: a line that reached the socket has arrived only when that
 * answer is a 2xx. So each line a request took waits for its end
 * (`RequestLines`): a 2xx settles them as sent; an error status (a wrong
 * token, a failing backend), a connection that dropped before the answer
 * (the receiver died), or no answer at all (cut at the close's deadline,
 * or by the process exiting) settles them as lost. They are not sent again:
 * a receiver may have acted on lines it read before it failed, and a
 * duplicate is not ours to make; they are counted as failed.
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

/** What the sink is told of the lines a request took, with their bytes (newline included). */
export interface RequestLines {
  /** A line reached the socket: it waits for its request's answer. */
  taken(bytes: number): void;
  /** Its request ended: `error` null for a 2xx answer (its lines arrived), else why they are lost. */
  settled(lines: number, bytes: number, error: DeliveryError | null): void;
}

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
  /** Lines that reached the socket on this request and wait for its answer, and their bytes. */
  private taken = { lines: 0, bytes: 0 };
  /** Why the request is being torn down (a stall, the close's deadline): the cause its lines are lost for. */
  private cut: DeliveryError | null = null;
  private readonly what: string;

  constructor(
    written: URL,
    configured: Record<string, string>,
    private readonly lines?: RequestLines,
  ) {
    // The URL's user name and password go as a header (`delivery/credentials.ts`).
    const { url, headers } = withUrlCredentials(written, configured);
    const route = routeTo(url);
    const what = `POST ${displayUrl(url.href)}${route.via}`;
    this.what = what;
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
          this.settle(error);
          this.fail(error);
        } else {
          // The lines it took arrived; the receiver ended the stream: lines after this need a new request.
          this.settle(null);
          this.fail(new ConnectionFailedError(`${what}: the receiver ended the stream`));
        }
        response.on('end', resolve);
        response.on('error', () => resolve());
      });
      this.request.on('error', (error) => {
        const failure = this.cut ?? requestFailure(what, error, note, route.proxy);
        this.settle(failure);
        this.fail(failure);
        resolve();
      });
      this.request.on('close', () => {
        // Closed before any answer (a 2xx or an error settled the lines already): what it took did not arrive.
        const failure = this.cut ?? new ConnectionFailedError(`${what}: the connection closed before the receiver answered`);
        this.settle(failure);
        this.fail(failure);
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
          this.tearDown(error);
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
          const bytes = Buffer.byteLength(text, 'utf8');
          this.taken.lines++;
          this.taken.bytes += bytes;
          this.lines?.taken(bytes);
        }
        entry.resolve();
      });
    });
  }

  fail(error: Error): void {
    if (this.broken === null) this.broken = error;
    for (const entry of [...this.pending]) entry.reject(this.broken);
  }

  /** Settles the lines this request took: arrived (`null`, a 2xx answer) or lost. Once per request. */
  settle(error: DeliveryError | null): void {
    const taken = this.taken;
    this.taken = { lines: 0, bytes: 0 };
    if (taken.lines > 0) this.lines?.settled(taken.lines, taken.bytes, error);
  }

  /** Destroys the request, its lines lost for `cause` (named in place of the socket error the destroy raises). */
  tearDown(cause: DeliveryError): void {
    this.cut ??= cause;
    this.request.destroy();
  }

  /** Tears the request down now, its lines settled as lost before this returns (the sink is being abandoned). */
  abandon(reason: string): void {
    const error = new DeliveryClosedError(`${this.what}: no answer (${reason})`);
    this.cut ??= error;
    this.settle(error);
    this.fail(error);
    this.request.destroy();
  }

  async end(timeoutMs: number): Promise<void> {
    const timer = unrefTimer(setTimeout(() => this.tearDown(new DeliveryTimeoutError(`${this.what}: no answer within ${timeoutMs} ms of the stream's end`)), timerDelay(timeoutMs)));
    try {
      if (this.broken === null) this.request.end();
      else this.request.destroy();
      await this.finished;
    } finally {
      clearTimeout(timer);
    }
  }
}

export function ndjsonTransport(url: string, headers: Record<string, string>, timeoutMs: number, lines?: RequestLines): StreamTransportImpl {
  let target: URL | null = null;
  let stream: Stream | null = null;
  /** Requests not closed yet (a broken one is replaced before its close event settles it). */
  const open = new Set<Stream>();
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
        const created = new Stream(target, headers, lines);
        open.add(created);
        void created.finished.then(() => open.delete(created));
        stream = created;
      }
      return stream.write(line, timeoutMs, signal);
    },
    close: async (budget) => {
      const current = stream;
      stream = null;
      if (current !== null) await current.end(budget);
    },
    destroy: (reason = 'the output closed') => {
      stream = null;
      for (const each of [...open]) each.abandon(reason);
      open.clear();
    },
  };
}
