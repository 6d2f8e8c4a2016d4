/**
 * Requests through an `http://` proxy, for every HTTP sender of the memory
 * relay (one POST/PUT, the ndjson stream) and doctor's reachability check.
 *
 * An `http:` target is asked of the proxy with its absolute URI (the proxy
 * connection kept alive). An `https:` target goes through a `CONNECT`
 * tunnel, opened here with `node:net` and then TLS to the target (its host
 * as the server name, its certificate checked as a direct request checks
 * it, against the same authorities: `trust.ts`): the tunnel is an HTTP agent's connection, so tunnels are kept alive
 * and reused per target, on Node, Bun and Deno alike.
 *
 * @module
 */

import { Buffer } from 'node:buffer';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { ConnectionFailedError } from './errors.ts';
import { proxyCredentialsHint, proxyFor, type ProxyServer } from './proxy.ts';
import { trustOptions } from './trust.ts';
import { timerDelay, unrefTimer } from '../../shared/timers.ts';

/** The longest a proxy may take to open a tunnel (each request's own timeout usually ends it sooner). */
const TUNNEL_TIMEOUT_MS = 60_000;

/** How a request reaches its target. */
export interface Route {
  /** Starts the request; `path` is the request path exactly as written when `url`'s own would be normalized. */
  request(options: { method: string; headers: Record<string, string>; path?: string; agent?: http.Agent }): http.ClientRequest;
  /** ` via proxy http://proxy:3128/` when proxied, else ``: for error texts. */
  via: string;
  /** The proxy it goes through, null when direct: for the fixes error texts give. */
  proxy: ProxyServer | null;
  /** Why a proxy the environment may name was not used, for failure texts. */
  note?: string;
}

/** The route to `url` (`http:` or `https:`) under the process environment's proxy variables. */
export function routeTo(url: URL): Route {
  const decision = proxyFor(url);
  const proxy = decision.proxy;
  const note = decision.note !== undefined ? { note: decision.note } : {};
  if (proxy === null) {
    const secure = url.protocol === 'https:';
    const client = secure ? https : http;
    return {
      via: '',
      proxy: null,
      ...note,
      request: ({ method, headers, path, agent }) =>
        client.request(url, { ...(secure ? trustOptions() : {}), ...(path !== undefined ? { path } : {}), method, headers, ...(agent !== undefined ? { agent } : {}) }),
    };
  }
  const via = ` via proxy ${proxy.display}`;
  const authorization: Record<string, string> = proxy.authorization !== undefined ? { 'proxy-authorization': proxy.authorization } : {};
  if (url.protocol === 'http:') {
    return {
      via,
      proxy,
      request: ({ method, headers, path, agent }) =>
        http.request({
          host: proxy.host,
          port: proxy.port,
          path: `${url.origin}${path ?? `${url.pathname}${url.search}`}`,
          method,
          headers: { ...headers, host: url.host, ...authorization },
          agent: agent !== undefined ? (proxyAgent ??= new http.Agent({ keepAlive: true, maxSockets: 4 })) : undefined,
        }),
    };
  }
  const agent = tunnelAgent(proxy);
  return {
    via,
    proxy,
    request: ({ method, headers, path }) =>
      http.request({
        host: url.hostname,
        port: url.port === '' ? 443 : Number(url.port),
        path: path ?? `${url.pathname}${url.search}`,
        method,
        headers: { ...headers, host: url.host },
        agent,
      }),
  };
}

/** Connections to proxies for `http:` targets, kept alive; Node's agent unrefs idle ones. Made at first use (see `agentFor` in http.ts). */
let proxyAgent: http.Agent | undefined;

/** One agent per proxy for `https:` targets: its connections are tunnels, pooled per target. */
const tunnelAgents = new Map<string, http.Agent>();

function tunnelAgent(proxy: ProxyServer): http.Agent {
  const key = `${proxy.host} ${proxy.port} ${proxy.authorization ?? ''}`;
  let agent = tunnelAgents.get(key);
  if (agent === undefined) {
    agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
    (agent as unknown as { createConnection: unknown }).createConnection = (options: { host?: string; port?: number | string }, done: (error: Error | null, socket?: net.Socket) => void) => {
      openTunnel(proxy, String(options.host), Number(options.port), TUNNEL_TIMEOUT_MS).then(
        (socket) => done(null, socket),
        (error: Error) => done(error),
      );
      return undefined;
    };
    tunnelAgents.set(key, agent);
  }
  return agent;
}

/**
 * A TLS connection to `host:port` through `proxy`'s CONNECT tunnel, its
 * handshake done. Rejects with a `ConnectionFailedError` naming the proxy
 * (never its credentials) when the proxy answers other than 200.
 */
export function openTunnel(proxy: ProxyServer, host: string, port: number, timeoutMs: number, tlsOptions: tls.ConnectionOptions = {}): Promise<tls.TLSSocket> {
  const authority = `${net.isIPv6(host) ? `[${host}]` : host}:${port}`;
  return new Promise((resolve, reject) => {
    let settled = false;
    let secure: tls.TLSSocket | null = null;
    const raw = net.connect({ host: proxy.host, port: proxy.port });
    raw.unref?.();
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      secure?.destroy();
      raw.destroy();
      reject(error);
    };
    const timer = unrefTimer(setTimeout(() => fail(new ConnectionFailedError(`the proxy ${proxy.display} did not open a tunnel to ${authority} within ${timeoutMs} ms`)), timerDelay(timeoutMs)));
    raw.once('connect', () => {
      const lines = [`CONNECT ${authority} HTTP/1.1`, `Host: ${authority}`, ...(proxy.authorization !== undefined ? [`Proxy-Authorization: ${proxy.authorization}`] : [])];
      raw.write(`${lines.join('\r\n')}\r\n\r\n`);
    });
    raw.on('error', fail);
    const onClose = () => fail(new ConnectionFailedError(`the proxy ${proxy.display} closed the connection before opening a tunnel to ${authority}`));
    raw.once('close', onClose);
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > 64 * 1024) fail(new ConnectionFailedError(`the proxy ${proxy.display} sent an unreadable answer to CONNECT ${authority}`));
        return;
      }
      raw.off('data', onData);
      raw.pause();
      const statusLine = head.subarray(0, head.indexOf('\r\n')).toString('latin1');
      const status = /^HTTP\/\d(?:\.\d)? (\d{3})/.exec(statusLine)?.[1];
      if (status !== '200') {
        const hint = status === '407' ? ` (${proxyCredentialsHint(proxy)})` : '';
        fail(new ConnectionFailedError(`the proxy ${proxy.display} refused CONNECT ${authority}: ${status === undefined ? 'an unreadable answer' : `HTTP ${status}`}${hint}`));
        return;
      }
      const rest = head.subarray(end + 4);
      if (rest.length > 0) raw.unshift(rest);
      raw.off('close', onClose);
      secure = tls.connect({ ...trustOptions(), ...tlsOptions, socket: raw, host, ...(net.isIP(host) === 0 ? { servername: host } : {}) });
      secure.once('secureConnect', () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        raw.off('error', fail);
        secure!.off('error', fail);
        resolve(secure!);
      });
      secure.on('error', fail);
    };
    raw.on('data', onData);
  });
}
