/**
 * One HTTP request, with a timeout, turned into the delivery layer's typed
 * errors.
 *
 * `node:http` (which Node, Bun and Deno all provide) rather than `fetch`:
 * its socket can be unref'd, so a request to a hanging destination never
 * keeps the host's process alive on its own. A host that is shutting down
 * is kept alive by whoever awaits the close (the plugin's bounded
 * shutdown), and no longer than that.
 *
 * @module
 */

import { Buffer } from 'node:buffer';
import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { proxyConnectionHint, proxyCredentialsHint, type ProxyServer } from './proxy.ts';
import { routeTo } from './tunnel.ts';
import { nextRequest, type RedirectPolicy } from './redirect.ts';
import { withUrlCredentials } from './credentials.ts';
import { untrustedCertificateHint } from './trust.ts';
import { ConnectionFailedError, connectionFailure, DeliveryClosedError, type DeliveryError, DeliveryTimeoutError, DestinationUnusableError, HttpStatusError } from './errors.ts';
import { timerDelay, unrefTimer } from '../../shared/timers.ts';
import { displayUrl } from '../../shared/secret-text.ts';

/**
 * Connections are kept alive between requests (one POST per event would
 * otherwise open a connection per event). Node's agent unrefs idle pooled
 * sockets, and each request unrefs its own, so the pool never holds a host.
 * Made at the first request, not at import: a runtime without Node's `http`
 * (an edge runtime) still imports the modules that load this one.
 */
let agents: { 'http:': http.Agent; 'https:': https.Agent } | undefined;

function agentFor(protocol: 'http:' | 'https:'): http.Agent {
  agents ??= { 'http:': new http.Agent({ keepAlive: true, maxSockets: 4 }), 'https:': new https.Agent({ keepAlive: true, maxSockets: 4 }) };
  return agents[protocol];
}

export interface HttpAttempt {
  url: string;
  method: 'POST' | 'PUT';
  headers: Record<string, string>;
  body: string | Uint8Array;
  /** The request path exactly as written (already encoded), when `url`'s own would be normalized (an S3 key with `..`). */
  path?: string;
  timeoutMs: number;
  /** What a redirect does: followed when it may be (stream sinks, uploads), or reported (OTLP, as native). Default `follow`. */
  redirects?: RedirectPolicy;
  /** Aborts the attempt when the output closes. */
  signal: AbortSignal;
}

/**
 * Sends one request; resolves on a 2xx answer, throws a `DeliveryError`
 * otherwise. A redirect is handled by `redirects` (`delivery/redirect.ts`):
 * followed (307/308, the same request to the new location) or reported, and
 * `timeoutMs` bounds the whole exchange, redirects included.
 */
export async function sendHttp(attempt: HttpAttempt): Promise<void> {
  // The URL's user name and password go as a header (`credentials.ts`), on each hop.
  let { url, headers } = withUrlCredentials(parseTarget(attempt.url), attempt.headers);
  let path = attempt.path;
  const deadline = Date.now() + attempt.timeoutMs;
  for (let hops = 0; ; hops++) {
    // Not `attempt.path` after a redirect: spread in, it would send the new host the first URL's path.
    const { path: _written, ...rest } = attempt;
    const answer = await requestOnce(url, { ...rest, headers, ...(path !== undefined ? { path } : {}) }, Math.max(1, deadline - Date.now()));
    if (answer.status >= 200 && answer.status <= 299) return;
    const next = nextRequest({ status: answer.status, location: answer.location, url, headers, what: answer.what, hops, policy: attempt.redirects ?? 'follow' });
    if (next === null) throw new HttpStatusError(answer.status, answer.what, answer.retryAfterMs, answer.hint);
    if (next instanceof Error) throw next;
    ({ url, headers } = withUrlCredentials(next.url, next.headers));
    // The path as written belongs to the first URL only.
    path = undefined;
  }
}

function parseTarget(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new DestinationUnusableError(`${displayUrl(text)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new DestinationUnusableError(`${displayUrl(text)}: only http and https URLs are supported`);
  }
  return url;
}

/** One answer's status line and the headers this layer reads. */
interface Answer {
  status: number;
  location: string | undefined;
  retryAfterMs: number | undefined;
  /** `POST https://… via proxy …`, for error texts. */
  what: string;
  /** How to fix a failing answer, when it says (a proxy's 407). */
  hint: string;
}

/**
 * One request to `url` and its answer (read to its end); throws a `DeliveryError` when there is none.
 * It may wait `remainingMs` (what is left of the exchange's budget after earlier hops); a timeout
 * still names the budget the user configured, `attempt.timeoutMs`, not what was left of it.
 */
function requestOnce(url: URL, attempt: HttpAttempt, remainingMs: number): Promise<Answer> {
  const route = routeTo(url);
  const what = `${attempt.method} ${displayUrl(url.href)}${route.via}`;
  const note = route.note !== undefined ? ` (${route.note})` : '';
  return new Promise<Answer>((resolve, reject) => {
    let settled = false;
    let request: http.ClientRequest | null = null;
    const finish = (error: Error | null, answer?: Answer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      attempt.signal.removeEventListener('abort', onClose);
      if (error === null) resolve(answer!);
      else reject(error);
    };
    const timer = unrefTimer(
      setTimeout(() => {
        finish(new DeliveryTimeoutError(`${what} got no answer within ${attempt.timeoutMs} ms`));
        request?.destroy();
      }, timerDelay(remainingMs)),
    );
    const onClose = () => {
      finish(new DeliveryClosedError(`${what} was cut short: the output closed`));
      request?.destroy();
    };
    if (attempt.signal.aborted) {
      onClose();
      return;
    }
    attempt.signal.addEventListener('abort', onClose, { once: true });
    const send = (afterStaleSocket: boolean) => {
      let answered = false;
      const current = route.request({
        ...(attempt.path !== undefined ? { path: attempt.path } : {}),
        method: attempt.method,
        headers: { accept: '*/*', ...attempt.headers, 'content-length': String(Buffer.byteLength(attempt.body)) },
        agent: agentFor(url.protocol as 'http:' | 'https:'),
      });
      request = current;
      current.on('socket', (socket: Socket) => socket.unref?.());
      current.on('error', (error: Error & { code?: string }) => {
        // A kept-alive connection the receiver had closed meanwhile (it closes each one after answering):
        // the request never reached it, so it goes once more on a new connection, as HTTP clients do.
        if (!answered && !afterStaleSocket && !settled && current.reusedSocket && STALE_SOCKET.has(error.code ?? '')) {
          send(true);
          return;
        }
        finish(requestFailure(what, error, note, route.proxy));
      });
      current.on('response', (response) => {
        answered = true;
        // Read the (small) answer to its end so the socket is released.
        response.resume();
        const header = response.headers['retry-after'];
        const answer: Answer = {
          status: response.statusCode ?? 0,
          location: response.headers.location,
          retryAfterMs: retryAfterMs(typeof header === 'string' ? header : null),
          what,
          hint: proxyAnswerHint(response.statusCode, route.proxy),
        };
        response.on('end', () => finish(null, answer));
        response.on('error', (error: Error) => finish(new ConnectionFailedError(`${what}: the answer broke off (${error.message})`)));
      });
      current.end(attempt.body);
    };
    send(false);
  });
}

/**
 * A failed connection as the error the queues read (`connectionFailure`
 * decides whether it is retried): `POST https://… failed: CODE (why)`, with
 * how to fix a certificate the senders do not trust or a proxy not reached.
 */
export function requestFailure(what: string, error: Error & { code?: string }, note = '', proxy: ProxyServer | null = null): DeliveryError {
  const hint = untrustedCertificateHint(error) || proxyConnectionHint(proxy, error);
  return connectionFailure(`${what} failed: ${error.code ?? error.message}${note}${hint === '' ? '' : ` (${hint})`}`, error);
}

/** Errors of a request written to a kept-alive socket the other side had already closed. */
const STALE_SOCKET = new Set(['ECONNRESET', 'EPIPE']);

/** `Retry-After` as milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** How to fix an answer of the proxy itself (its 407 to a request sent through it), or ``. */
export function proxyAnswerHint(status: number | undefined, proxy: ProxyServer | null): string {
  return status === 407 && proxy !== null ? proxyCredentialsHint(proxy) : '';
}
