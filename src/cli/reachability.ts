/**
 * `doctor`'s reachability check: whether each remote destination a
 * plugins.toml configures (OTLP trace and log endpoints, ATOF stream sinks,
 * ATIF uploads) answers a connection from here.
 *
 * Only a connection is made: a TCP connect for `http:`/`ws:`, a TLS
 * handshake (certificate verified as the senders verify it, against the
 * same authorities: `export/delivery/trust.ts`) for
 * `https:`/`wss:`. Nothing is sent over it, so neither telemetry nor the
 * configured credential headers leave the process; the only name sent is the
 * destination's own host (TLS SNI). Each attempt is bounded by the
 * destination's `timeout_millis` and at most `REACH_TIMEOUT_MS`, and they all
 * run at once, so the check adds at most that much to `doctor`.
 *
 * A destination the senders reach through a proxy (`HTTP_PROXY`,
 * `HTTPS_PROXY`, `ALL_PROXY`, `NO_PROXY`, decided as the senders decide:
 * `delivery/proxy.ts`) is checked through it: a TCP connect to the proxy
 * for `http:`, a `CONNECT` tunnel and the TLS handshake through it for
 * `https:`. WebSocket sinks and gRPC go direct, as they are sent.
 *
 * CLI only: nothing in the library imports this.
 *
 * @module
 */

import net from 'node:net';
import tls from 'node:tls';
import type { ObservabilitySettings } from '../formats/plugins-toml/validate.ts';
import { s3EndpointOf } from '../export/storage/s3.ts';
import { PROXY_CREDENTIALS_FIX, PROXY_UNREACHABLE_FIX, proxyFor, proxyUnreachableHint, type ProxyServer } from '../export/delivery/proxy.ts';
import { openTunnel } from '../export/delivery/tunnel.ts';
import { nativeTrustOptions, trustOptions, UNTRUSTED_CERTIFICATE_FIX, untrustedCertificateHint } from '../export/delivery/trust.ts';
import { errorMessage } from '../shared/error-text.ts';
import { displayUrl } from '../shared/secret-text.ts';

/** The longest one connection attempt may take, whatever the destination's `timeout_millis`. */
export const REACH_TIMEOUT_MS = 3000;

/** One remote destination of the document, as doctor reports it. */
export interface RemoteDestination {
  /** What it receives, in `status().outputs`' words. */
  kind: 'otlp-traces' | 'otlp-logs' | 'atof-stream' | 'atif-storage';
  /** Its address as it may be printed (no userinfo, no secret query value). */
  url: string;
  /** Where in the observability component it is configured, when it has one place. */
  field?: string;
  /** The address connected to (never printed: it may carry userinfo). */
  target: string;
  /** The destination's `timeout_millis`. */
  timeoutMillis: number;
  /** gRPC over TLS offers HTTP/2 in the handshake, as a gRPC client does. */
  grpc: boolean;
}

/** What the check found for one destination. */
export interface DestinationCheck {
  kind: RemoteDestination['kind'];
  url: string;
  status: 'ok' | 'unreachable' | 'not checked';
  /** Why it is unreachable. */
  reason?: string;
  /** The proxy it was checked through, as it may be printed, when the senders use one. */
  via?: string;
}

/** The remote destinations an observability component sends to (skipped ones are not among them). */
export function remoteDestinations(observability: ObservabilitySettings): RemoteDestination[] {
  const out: RemoteDestination[] = [];
  for (const trace of observability.opentelemetry.traces) {
    out.push({ kind: 'otlp-traces', url: displayUrl(trace.url), field: `opentelemetry.endpoints[${trace.index}]`, target: trace.url, timeoutMillis: trace.timeoutMillis, grpc: trace.transport === 'grpc' });
  }
  for (const logs of observability.opentelemetry.logs) {
    out.push({ kind: 'otlp-logs', url: displayUrl(logs.url), field: 'opentelemetry.logs', target: logs.url, timeoutMillis: logs.timeoutMillis, grpc: logs.transport === 'grpc' });
  }
  for (const sink of observability.streamSinks) {
    out.push({ kind: 'atof-stream', url: displayUrl(sink.url), field: `atof.sinks[${sink.index}]`, target: sink.url, timeoutMillis: sink.timeoutMillis, grpc: false });
  }
  for (const storage of observability.storage) {
    const target = storage.type === 'http' ? storage.endpoint : s3EndpointOf(storage);
    const url = storage.type === 'http' ? displayUrl(target) : `s3://${storage.bucket}/${storage.keyPrefix} via ${displayUrl(target)}`;
    out.push({ kind: 'atif-storage', url, field: `atif.storage[${storage.index}]`, target, timeoutMillis: storage.timeoutMillis, grpc: false });
  }
  return out;
}

/**
 * Tries every destination at once; one attempt per address, shared by the destinations on it. Never rejects.
 * With `native`, the destinations native sends itself (all but ATIF uploads, which this library sends on both
 * backends) are checked against the authorities native trusts.
 */
export async function checkReachability(destinations: readonly RemoteDestination[], options: { native?: boolean } = {}): Promise<DestinationCheck[]> {
  const attempts = new Map<string, Promise<string | null>>();
  return Promise.all(
    destinations.map(async (destination) => {
      const address = addressOf(destination.target);
      if (typeof address === 'string') return { kind: destination.kind, url: destination.url, status: 'unreachable' as const, reason: address };
      const timeoutMs = Math.max(1, Math.min(destination.timeoutMillis, REACH_TIMEOUT_MS));
      const decision = address.proxied && !destination.grpc ? proxyFor(new URL(destination.target)) : { proxy: null };
      const proxy = decision.proxy;
      const native = options.native === true && destination.kind !== 'atif-storage';
      const trust = !address.secure ? undefined : native ? nativeTrustOptions() : trustOptions();
      const key = `${address.secure} ${address.host} ${address.port} ${destination.grpc} ${timeoutMs} ${native} ${proxy === null ? '' : `${proxy.host} ${proxy.port}`}`;
      let attempt = attempts.get(key);
      if (attempt === undefined) {
        attempt = proxy === null ? connect(address, destination.grpc, timeoutMs, trust) : connectVia(proxy, address, timeoutMs, trust);
        attempts.set(key, attempt);
      }
      const reason = await attempt;
      const row = { kind: destination.kind, url: destination.url, ...(proxy !== null ? { via: proxy.display } : {}) };
      const note = 'note' in decision && decision.note !== undefined ? ` (${decision.note})` : '';
      return reason === null ? { ...row, status: 'ok' as const } : { ...row, status: 'unreachable' as const, reason: `${reason}${note}` };
    }),
  );
}

interface Address {
  host: string;
  port: number;
  secure: boolean;
  /** Sent through the proxy variables' proxy (HTTP, not WebSocket). */
  proxied: boolean;
}

const DEFAULT_PORTS: Record<string, { port: number; secure: boolean; proxied: boolean }> = {
  'http:': { port: 80, secure: false, proxied: true },
  'ws:': { port: 80, secure: false, proxied: false },
  'https:': { port: 443, secure: true, proxied: true },
  'wss:': { port: 443, secure: true, proxied: false },
};

/** The host and port a destination's URL names, or why there is none. */
function addressOf(target: string): Address | string {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return 'not a URL';
  }
  const scheme = DEFAULT_PORTS[url.protocol];
  if (scheme === undefined) return `${url.protocol} is not a scheme doctor can connect to`;
  // `[::1]` names an IPv6 host; the socket takes it without brackets.
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return { host, port: url.port === '' ? scheme.port : Number(url.port), secure: scheme.secure, proxied: scheme.proxied };
}

/**
 * Through `proxy`: a TCP connect to it for an `http:` destination (the request would go to it), a CONNECT
 * tunnel and the destination's TLS handshake through it for `https:`. Nothing else is sent.
 */
async function connectVia(proxy: ProxyServer, address: Address, timeoutMs: number, trust?: tls.ConnectionOptions): Promise<string | null> {
  const proxyAddress = { host: proxy.host, port: proxy.port, secure: false, proxied: false };
  if (!address.secure) {
    const reason = await connect(proxyAddress, false, timeoutMs);
    return reason === null ? null : `the proxy: ${reason} (${proxyUnreachableHint(proxy)})`;
  }
  // The tunnel's sockets and timer never hold a process (they serve the senders too): doctor waits for its answer.
  const hold = setTimeout(() => {}, timeoutMs + 1000);
  try {
    (await openTunnel(proxy, address.host, address.port, timeoutMs, trust)).destroy();
    return null;
  } catch (error) {
    const code = String((error as { code?: unknown } | null)?.code ?? '');
    return code === 'ECONNREFUSED' || code.startsWith('EAI_') || code === 'ENOTFOUND' ? `the proxy: ${reasonOf(error, proxy.host)} (${proxyUnreachableHint(proxy)})` : reasonOf(error, address.host);
  } finally {
    clearTimeout(hold);
  }
}

/** Connects (and, over TLS, completes the handshake), then closes: null when that worked, else why not. */
function connect(address: Address, grpc: boolean, timeoutMs: number, trust?: tls.ConnectionOptions): Promise<string | null> {
  return new Promise((resolve) => {
    let settled = false;
    const socket = address.secure
      ? tls.connect({
          ...(trust ?? trustOptions()),
          host: address.host,
          port: address.port,
          // SNI takes a name, never an address.
          ...(net.isIP(address.host) === 0 ? { servername: address.host } : {}),
          ...(grpc ? { ALPNProtocols: ['h2'] } : {}),
        })
      : net.connect({ host: address.host, port: address.port });
    const finish = (reason: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(reason);
    };
    const timer = setTimeout(() => finish(`no answer within ${timeoutMs} ms`), timeoutMs);
    socket.once(address.secure ? 'secureConnect' : 'connect', () => finish(null));
    socket.once('error', (error) => finish(reasonOf(error, address.host)));
    // A server that closes before the handshake ends gives no error on some runtimes.
    socket.once('close', () => finish('the connection was closed before it was established'));
  });
}

/** A failed connection in a few words: refused, a name that does not resolve, a TLS failure, or the system's own text. */
function reasonOf(error: unknown, host: string): string {
  const code = String((error as { code?: unknown } | null)?.code ?? '');
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME' || code === 'EAI_FAIL') return `DNS lookup of ${host} failed (${code})`;
  if (code === 'EHOSTUNREACH') return 'host unreachable';
  if (code === 'ENETUNREACH') return 'network unreachable';
  if (code === 'ECONNRESET') return 'connection reset';
  if (code === 'ETIMEDOUT') return 'the connection timed out';
  // OpenSSL's own errors carry a short `reason` ("wrong version number": not TLS there) besides a long message.
  const opensslReason = (error as { reason?: unknown } | null)?.reason;
  if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY|HOSTNAME|ALTNAME/i.test(code)) {
    const hint = untrustedCertificateHint(error);
    return `TLS handshake failed: ${typeof opensslReason === 'string' && opensslReason !== '' ? opensslReason : firstLine(errorMessage(error))}${hint === '' ? '' : ` (${hint})`}`;
  }
  return firstLine(errorMessage(error));
}

function firstLine(text: string): string {
  return text.split('\n')[0]!.trim();
}

/** Whether an unreachable destination's reason already says what to do (trust its CA, fix the proxy). */
export function reasonSaysFix(reason: string): boolean {
  return [UNTRUSTED_CERTIFICATE_FIX, PROXY_CREDENTIALS_FIX, PROXY_UNREACHABLE_FIX].some((fix) => reason.includes(fix));
}
