/**
 * Which proxy an HTTP request goes through, decided from the environment
 * as native decides it (reqwest's system proxy), so that a host behind a
 * corporate proxy keeps its remote outputs on the memory relay too.
 *
 * The rules, each checked against native with a loopback proxy:
 * - `HTTP_PROXY` then `http_proxy` for `http:` targets, `HTTPS_PROXY` then
 *   `https_proxy` for `https:` targets, then `ALL_PROXY`, `all_proxy` for
 *   both; an empty value counts as unset. An `https:` target never falls
 *   back to `HTTP_PROXY`.
 * - A proxy written without a scheme is an `http://` proxy; `user:pass@`
 *   (percent-decoded) is sent to the proxy as `Proxy-Authorization: Basic`.
 * - `NO_PROXY` (else `no_proxy`), comma-separated: `*` matches every host
 *   name but no IP address; an IP address or a CIDR block (`10.0.0.0/8`,
 *   IPv6 without brackets) matches IP hosts; anything else is a domain that
 *   matches itself and its subdomains, with or without a leading dot, in any
 *   case. An entry with a port, `*.x` or a trailing dot matches nothing.
 * - With `REQUEST_METHOD` set (a CGI script, where `HTTP_PROXY` may come
 *   from a request header) no proxy is used at all.
 *
 * Only `http://` proxies are spoken here: a `socks5://` or `https://` proxy
 * (which native speaks) is not used, and the request goes direct, with a
 * note in its failure text.
 *
 * @module
 */

import net from 'node:net';
import { type Environment, processEnv, readVariable, refusedReadText } from '../../shared/env.ts';
import { displayUrl } from '../../shared/secret-text.ts';
import { basicAuthorization } from './credentials.ts';

/** An `http://` proxy a request goes through. */
export interface ProxyServer {
  host: string;
  port: number;
  /** The proxy's URL as it may be printed (no credentials). */
  display: string;
  /** `Basic …` for a proxy URL with credentials. */
  authorization?: string;
  /** The variable it was read from (`HTTPS_PROXY`, ...), for the fixes failure texts give. */
  variable?: string;
}

/** What the environment says about one target. */
export interface ProxyDecision {
  proxy: ProxyServer | null;
  /** Why a proxy the environment may name is not used (a refused read, an unsupported scheme); said in failure texts. */
  note?: string;
}

const PROXY_VARIABLES = {
  'http:': ['HTTP_PROXY', 'http_proxy', 'ALL_PROXY', 'all_proxy'],
  'https:': ['HTTPS_PROXY', 'https_proxy', 'ALL_PROXY', 'all_proxy'],
} as const;

const NO_PROXY_VARIABLES = ['NO_PROXY', 'no_proxy'] as const;

/** The proxy for `target` (an `http:` or `https:` URL) under `env`; never throws. */
export function proxyFor(target: URL, env: Environment = processEnv()): ProxyDecision {
  const names = PROXY_VARIABLES[target.protocol as keyof typeof PROXY_VARIABLES];
  if (names === undefined) return { proxy: null };
  const refused: string[] = [];
  const read = (name: string): string | undefined => {
    const variable = readVariable(env, name);
    if (variable.refused !== undefined) refused.push(refusedReadText(name, variable.refused));
    return variable.value;
  };
  const direct = (): ProxyDecision => (refused.length > 0 ? { proxy: null, note: `no proxy used: ${refused[0]}` } : { proxy: null });
  // The proxy variables first, so that a refusal names one of them (Deno without --allow-env).
  const written = firstSet(names, read);
  if (written === undefined) return direct();
  if (readVariable(env, 'REQUEST_METHOD').value !== undefined) return { proxy: null };
  const noProxy = firstSet(NO_PROXY_VARIABLES, read);
  if (noProxy !== undefined && bypasses(noProxy.value, target)) return direct();
  const decision = parseProxy(written.value);
  if (decision.proxy !== null) decision.proxy.variable = written.name;
  return decision;
}

function firstSet(names: readonly string[], read: (name: string) => string | undefined): { name: string; value: string } | undefined {
  for (const name of names) {
    const value = read(name);
    if (value !== undefined && value !== '') return { name, value };
  }
  return undefined;
}

function parseProxy(written: string): ProxyDecision {
  const text = written.trim();
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`);
  } catch {
    return { proxy: null, note: `the proxy ${displayUrl(text)} is not a URL; sent direct` };
  }
  if (url.protocol !== 'http:') return { proxy: null, note: `the proxy ${displayUrl(url.href)} is not an http:// proxy (the memory relay speaks only those); sent direct` };
  const proxy: ProxyServer = { host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port: url.port === '' ? 80 : Number(url.port), display: displayUrl(url.href) };
  const authorization = basicAuthorization(url);
  if (authorization !== undefined) proxy.authorization = authorization;
  return { proxy };
}


/** Whether `NO_PROXY`'s `list` sends `target` direct. */
export function bypasses(list: string, target: URL): boolean {
  const host = target.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  const hostIsIp = net.isIP(host) !== 0;
  for (const raw of list.split(',')) {
    const entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    if (entry === '*') {
      if (!hostIsIp) return true;
      continue;
    }
    if (hostIsIp) {
      if (ipMatches(entry, host)) return true;
      continue;
    }
    const domain = entry.startsWith('.') ? entry.slice(1) : entry;
    if (host === domain || host.endsWith(`.${domain}`)) return true;
  }
  return false;
}

/** An IP entry (`10.1.2.3`, `::5`) or a CIDR block (`10.0.0.0/8`) against an IP host. */
function ipMatches(entry: string, host: string): boolean {
  const [address, prefixText] = entry.split('/', 2) as [string, string | undefined];
  const family = net.isIP(address);
  if (family === 0 || family !== net.isIP(host)) return false;
  const bits = family === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? bits : Number(prefixText);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > bits) return false;
  const shift = BigInt(bits - prefix);
  return ipValue(address) >> shift === ipValue(host) >> shift;
}

function ipValue(address: string): bigint {
  if (net.isIP(address) === 4) return address.split('.').reduce((value, part) => (value << 8n) | BigInt(Number(part)), 0n);
  // IPv6: expand `::`, and an embedded IPv4 tail into two groups.
  let text = address;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4 !== null) {
    const value = ipValue(v4[1]!);
    text = `${text.slice(0, -v4[1]!.length)}${(value >> 16n).toString(16)}:${(value & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? (text.split('::') as [string, string]) : [text, undefined];
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? headGroups : [...headGroups, ...Array<string>(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups];
  return groups.reduce((value, group) => (value << 16n) | BigInt(parseInt(group, 16)), 0n);
}

/** How the proxy hints begin, so that doctor can tell a reason that already says what to do. */
export const PROXY_CREDENTIALS_FIX = 'the proxy wants other credentials';
export const PROXY_UNREACHABLE_FIX = 'the proxy cannot be reached';

/**
 * How to fix a proxy that asked for credentials (HTTP 407): they will not
 * be right on the next try, so the failure says where they are set.
 */
export function proxyCredentialsHint(proxy: ProxyServer): string {
  return `${PROXY_CREDENTIALS_FIX}: set the user and password in ${proxy.variable ?? 'the proxy variable'} (http://user:password@host:port, reserved characters percent-encoded)`;
}

/** How to fix a proxy nobody answers at its address. */
export function proxyUnreachableHint(proxy: ProxyServer): string {
  return `${PROXY_UNREACHABLE_FIX}: start it or fix ${proxy.variable ?? 'the proxy variable'}, or list the destination in NO_PROXY to send it direct`;
}

/** Connection errors that say the proxy itself was not reached. */
const PROXY_UNREACHED = /^(ECONNREFUSED|ENOTFOUND|EAI_\w+|EHOSTUNREACH|ENETUNREACH)$/;

/** `proxyUnreachableHint` when `error` is a failed connection to the proxy, else ``. */
export function proxyConnectionHint(proxy: ProxyServer | null, error: unknown): string {
  const code = String((error as { code?: unknown } | null | undefined)?.code ?? '');
  return proxy !== null && PROXY_UNREACHED.test(code) ? proxyUnreachableHint(proxy) : '';
}
