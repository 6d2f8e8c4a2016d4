/**
 * Which certificate authorities the memory relay's HTTPS senders (stream
 * sinks, OTLP/HTTP, ATIF uploads, each through a proxy or not), OTLP over
 * gRPC to an `https:` endpoint and doctor's reachability check trust: the
 * ones native trusts, so that a collector behind a company CA works on both
 * backends. (Native's gRPC exporter is the exception: it refused a company
 * CA from every source below, measured; doctor warns about it.)
 *
 * Native verifies with the platform's verifier, which on Linux and other
 * Unix systems reads, measured against `nemo-relay-node` with a loopback
 * receiver:
 * - `SSL_CERT_FILE` (a PEM bundle) and `SSL_CERT_DIR` (directories separated
 *   by `:`, every file in them read, hashed names or not) when either is
 *   set; they then replace the system store;
 * - otherwise the system store: the distribution's bundle
 *   (`/etc/ssl/certs/ca-certificates.crt` and its equivalents) and its
 *   certificate directory.
 * On macOS and Windows it asks the system (Keychain, the Windows store),
 * which the memory relay reads through `tls.getCACertificates('system')`
 * where the runtime has it (Node 22.15+, Bun, Deno).
 *
 * Here those certificates are added to the runtime's own roots (never
 * instead of them), with `NODE_EXTRA_CA_CERTS` read by hand: a `ca` given
 * to `node:tls` replaces the roots that variable extends, and Deno's
 * `node:tls` does not read it at all. The set is built once, the first time
 * an `https:` destination connects, as one secure context shared by every
 * connection; a host with no `https:` output never reads a certificate.
 *
 * @module
 */

import fs from 'node:fs';
import path from 'node:path';
import tls from 'node:tls';
import { type Environment, processEnv, readVariable } from '../../shared/env.ts';
import { isUntrustedCertificate } from './errors.ts';

/** The bundle files a Linux or BSD system keeps its roots in; the first that exists is read. */
const SYSTEM_BUNDLES = [
  '/etc/ssl/certs/ca-certificates.crt',
  '/etc/pki/tls/certs/ca-bundle.crt',
  '/etc/ssl/ca-bundle.pem',
  '/etc/pki/tls/cacert.pem',
  '/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem',
  '/etc/ssl/cert.pem',
  '/usr/local/share/certs/ca-root-nss.crt',
];

/** The certificate directories; the first that exists is read. */
const SYSTEM_DIRECTORIES = ['/etc/ssl/certs', '/etc/pki/tls/certs', '/etc/openssl/certs', '/usr/local/share/certs'];

/** A file larger than this in a certificate directory is not a certificate file. */
const MAX_CERT_FILE_BYTES = 4 * 1024 * 1024;

/** What the HTTPS senders connect with. */
export interface HttpsTrust {
  /** Undefined when nothing beyond the runtime's own roots was found: the runtime's defaults are used. */
  secureContext: tls.SecureContext | undefined;
  /** Where the added certificates came from (file names, `system`), for doctor and tests. */
  sources: readonly string[];
}

let built: HttpsTrust | undefined;

/** The trust every HTTPS sender uses, built on first use. Never throws. */
export function httpsTrust(): HttpsTrust {
  built ??= buildTrust(processEnv(), process.platform);
  return built;
}

/** The `node:tls` / `node:https` options that carry `httpsTrust()`. */
export function trustOptions(): { secureContext?: tls.SecureContext } {
  const { secureContext } = httpsTrust();
  return secureContext === undefined ? {} : { secureContext };
}

let builtNative: tls.SecureContext | undefined;

/**
 * What native (`nemo-relay-node`) trusts, for doctor's check of the
 * destinations native sends to itself (OTLP, ATOF streams): the system store
 * or `SSL_CERT_FILE` / `SSL_CERT_DIR`, without `NODE_EXTRA_CA_CERTS`, which
 * native does not read (a CA given only there passed doctor while native's
 * exports to that collector failed). Always an explicit context: the
 * runtime's default one carries `NODE_EXTRA_CA_CERTS` on Node.
 */
export function nativeTrustOptions(): { secureContext?: tls.SecureContext } {
  builtNative ??= nativeSecureContext(processEnv(), process.platform);
  return builtNative === undefined ? {} : { secureContext: builtNative };
}

function nativeSecureContext(env: Environment, platform: string): tls.SecureContext | undefined {
  const certs = platform === 'darwin' || platform === 'win32' ? systemCertificates() : unixCertificates(env).flatMap(([, found]) => found);
  return secureContextOf([...new Set(certs.length > 0 ? certs : runtimeRoots())]);
}

/** Forgets the built trust, so the next connection reads the environment again (tests). */
export function resetHttpsTrust(): void {
  built = undefined;
  builtNative = undefined;
}

/** The trust `env` and the files on `platform` give. */
export function buildTrust(env: Environment, platform: string): HttpsTrust {
  const sources: string[] = [];
  const added: string[] = [];
  const take = (source: string, certs: readonly string[]) => {
    if (certs.length === 0) return;
    sources.push(source);
    added.push(...certs);
  };
  const extra = readVariable(env, 'NODE_EXTRA_CA_CERTS').value;
  if (extra !== undefined && extra !== '') take(extra, readPemFile(extra));
  if (platform === 'darwin' || platform === 'win32') take('system', systemCertificates());
  else for (const [source, certs] of unixCertificates(env)) take(source, certs);
  if (added.length === 0) return { secureContext: undefined, sources };
  const ca = [...new Set([...runtimeRoots(), ...added])];
  return { secureContext: secureContextOf(ca), sources };
}

/** Where native reads on Linux and other Unix systems: the variables when set, else the system store. */
function unixCertificates(env: Environment): Array<[string, string[]]> {
  const file = readVariable(env, 'SSL_CERT_FILE').value;
  const dirs = readVariable(env, 'SSL_CERT_DIR').value;
  const out: Array<[string, string[]]> = [];
  if ((file !== undefined && file !== '') || (dirs !== undefined && dirs !== '')) {
    if (file !== undefined && file !== '') out.push([file, readPemFile(file)]);
    for (const dir of (dirs ?? '').split(':')) if (dir !== '') out.push([dir, readPemDirectory(dir)]);
    return out;
  }
  const bundle = SYSTEM_BUNDLES.find(isFile);
  if (bundle !== undefined) out.push([bundle, readPemFile(bundle)]);
  const dir = SYSTEM_DIRECTORIES.find(isDirectory);
  if (dir !== undefined) out.push([dir, readPemDirectory(dir)]);
  return out;
}

function systemCertificates(): string[] {
  try {
    const get = (tls as { getCACertificates?: (type: string) => string[] }).getCACertificates;
    return get?.('system') ?? [];
  } catch {
    return [];
  }
}

/**
 * The runtime's bundled roots, copied here: Deno's `tls.rootCertificates` is
 * a lazy list whose first read asks for `--allow-sys`, and a refusal thrown
 * while the list is spread into the secure context, in a socket's callback,
 * killed the host. Without that permission the bundled roots are left out
 * (the system store or `SSL_CERT_FILE` still count).
 */
function runtimeRoots(): readonly string[] {
  try {
    return [...(tls.rootCertificates ?? [])];
  } catch {
    return [];
  }
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The PEM certificates in `file`; none when it cannot be read (absent, a refused read on Deno). */
function readPemFile(file: string): string[] {
  try {
    return pemCertificates(fs.readFileSync(file, 'latin1'));
  } catch {
    return [];
  }
}

function readPemDirectory(dir: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const name of names) {
    const file = path.join(dir, name);
    try {
      const stat = fs.statSync(file);
      if (stat.isFile() && stat.size <= MAX_CERT_FILE_BYTES) out.push(...pemCertificates(fs.readFileSync(file, 'latin1')));
    } catch {
      // An unreadable entry (a dangling link) is skipped, as native skips it.
    }
  }
  return out;
}

function pemCertificates(text: string): string[] {
  return (text.match(PEM_CERTIFICATE) ?? []).map((pem) => pem.replace(/\r\n/g, '\n'));
}

function isFile(file: string): boolean {
  try {
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function isDirectory(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/**
 * One secure context for `ca`. A certificate the runtime cannot parse fails
 * the whole list, so then each is tried alone and the unreadable ones left
 * out; when even that fails the runtime's defaults are used.
 */
function secureContextOf(ca: string[]): tls.SecureContext | undefined {
  try {
    return tls.createSecureContext({ ca });
  } catch {
    const readable = ca.filter((pem) => {
      try {
        tls.createSecureContext({ ca: [pem] });
        return true;
      } catch {
        return false;
      }
    });
    try {
      return tls.createSecureContext({ ca: readable });
    } catch {
      return undefined;
    }
  }
}

/** How the hint below begins, so that doctor can tell a reason that already says what to do. */
export const UNTRUSTED_CERTIFICATE_FIX = "the destination's certificate is not signed by a trusted CA";

/**
 * How to make an untrusted certificate trusted, for a failure's text, or ``
 * when `error` is not about trust.
 */
export function untrustedCertificateHint(error: unknown): string {
  if (!isUntrustedCertificate(error)) return '';
  return `${UNTRUSTED_CERTIFICATE_FIX}: add its CA to the system store, or name it in SSL_CERT_FILE or SSL_CERT_DIR (read by both backends) or NODE_EXTRA_CA_CERTS (memory only)`;
}
