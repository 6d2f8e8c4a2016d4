// Which certificates the HTTPS outputs trust, and what a redirect does, on
// the memory relay and on native, for the same environment and the same
// document: each backend runs in a child process (native reads the real
// process environment) against one loopback receiver; what the receiver was
// sent must be the same. The receiver's certificate is signed by a CA of the
// test's own, given by SSL_CERT_FILE, SSL_CERT_DIR or nothing. A redirect's
// 301/302/303 is the one deliberate difference: native re-sends the event as
// a GET without its body, memory sends nothing more (its lastError names the
// location), so the GETs are set aside there.
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { nativeAvailable, nativeLoadError } from '../contract/backends.ts';
import { dist, spawnChild } from '../support/child.ts';
import { loopbackAuthority } from '../support/loopback-certificate.ts';

/** The variables that name trusted certificates or a proxy, unset in each child (the runner's own never leak in). */
const UNSET = ['SSL_CERT_FILE', 'SSL_CERT_DIR', 'NODE_EXTRA_CA_CERTS', 'HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy', 'ALL_PROXY', 'all_proxy', 'NO_PROXY', 'no_proxy'];

function document(dir: string, origin: string): string {
  const file = path.join(dir, 'plugins.toml');
  fs.writeFileSync(
    file,
    [
      'version = 1', '[[components]]', 'kind = "observability"', 'enabled = true', '[components.config]', 'version = 4', '[components.config.atof]', 'enabled = true',
      '[[components.config.atof.sinks]]', 'type = "stream"', `url = "${origin}/atof"`, 'transport = "http_post"', 'timeout_millis = 2000',
      '[components.config.opentelemetry]', 'enabled = true', '[[components.config.opentelemetry.endpoints]]', 'type = "full"', `endpoint = "${origin}"`, 'scheduled_delay_millis = 10',
    ].join('\n'),
  );
  return file;
}

/** Runs one session on `backend` against `origin` with `variables` set. */
async function run(backend: 'native' | 'memory', origin: string, variables: Record<string, string>): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `nrh-trust-${backend}-`));
  const env: Record<string, string | undefined> = Object.fromEntries(UNSET.map((name) => [name, undefined]));
  const child = await spawnChild(
    `const { createNemoRelayPlugin, HookRegistry } = await import(${dist('src/index.js')});
const plugin = createNemoRelayPlugin({ backend: ${JSON.stringify(backend)}, env: { HERMES_NEMO_RELAY_PLUGINS_TOML: ${JSON.stringify(document(dir, origin))} }, logger: { debug() {}, info() {}, warn() {}, error() {} } });
const hooks = new HookRegistry();
plugin.register(hooks);
hooks.emit('on_session_start', { session_id: 's1', model: 'm', platform: 'cli' });
hooks.emit('on_session_end', { session_id: 's1' });
await plugin.shutdown({ timeoutMs: 10000 });
console.log('@@RESULT@@' + JSON.stringify(plugin.status().backend.kind));`,
    { env: { ...env, ...variables, DENO_NO_UPDATE_CHECK: '1' } },
  );
  expect(child.result, child.stderr).toBe(backend);
}

/** What an https receiver signed by the test CA saw while `backend` ran with `variables` (`CA` and `CADIR` stand for the CA's file and a directory holding it). */
async function trusted(backend: 'native' | 'memory', variables: Record<string, string>): Promise<string[] | undefined> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `nrh-trust-ca-${backend}-`));
  const authority = loopbackAuthority(dir, 'trust-redirect-native');
  if (authority === undefined) return undefined;
  const caDir = path.join(dir, 'certs');
  fs.mkdirSync(caDir);
  fs.copyFileSync(authority.caFile, path.join(caDir, 'company.crt'));
  const seen = new Set<string>();
  const server = https.createServer({ key: authority.key, cert: authority.cert }, (request, response) => {
    seen.add(`${request.method} ${request.url}`);
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  server.on('tlsClientError', () => seen.add('refused'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const resolved = Object.fromEntries(Object.entries(variables).map(([name, value]) => [name, value.replace('CADIR', caDir).replace('CA', authority.caFile)]));
    await run(backend, `https://localhost:${(server.address() as AddressInfo).port}`, resolved);
    return [...seen].sort();
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** The requests a receiver that redirects every first request with `status` saw while `backend` ran. */
async function redirected(backend: 'native' | 'memory', status: number): Promise<string[]> {
  const seen: string[] = [];
  const server = http.createServer((request, response) => {
    let bytes = 0;
    request.on('data', (chunk: Buffer) => (bytes += chunk.length));
    request.on('end', () => {
      const url = request.url ?? '';
      seen.push(`${request.method} ${url} ${bytes > 0 ? 'with body' : 'no body'}`);
      if (url.startsWith('/moved')) response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      else response.writeHead(status, { location: `/moved${url}` }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await run(backend, `http://127.0.0.1:${(server.address() as AddressInfo).port}`, {});
    return [...new Set(seen)].sort();
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

describe.skipIf(!nativeAvailable)(`certificates and redirects on memory as on native${nativeAvailable ? '' : ` (skipped: native cannot load: ${nativeLoadError})`}`, () => {
  it.each([
    ['SSL_CERT_FILE', { SSL_CERT_FILE: 'CA' }],
    ['SSL_CERT_DIR', { SSL_CERT_DIR: '/no/such/dir:CADIR' }],
    ['nothing', {}],
  ] as const)('a CA given by %s', async (_name, variables) => {
    const [native, memory] = await Promise.all([trusted('native', variables), trusted('memory', variables)]);
    if (native === undefined || memory === undefined) return;
    expect(memory).toEqual(native);
  }, 60_000);

  it('a 307 and a 308: the same requests (stream sinks follow with the body, OTLP follows nothing)', async () => {
    for (const status of [307, 308]) {
      const [native, memory] = await Promise.all([redirected('native', status), redirected('memory', status)]);
      expect(native).toEqual(['POST /atof with body', 'POST /moved/atof with body', 'POST /v1/traces with body']);
      expect(memory).toEqual(native);
    }
  }, 60_000);

  it('a 302: native re-sends the event as a GET without its body; memory sends the same POSTs and nothing else', async () => {
    const [native, memory] = await Promise.all([redirected('native', 302), redirected('memory', 302)]);
    expect(native).toContain('GET /moved/atof no body');
    expect(memory).toEqual(native.filter((request) => !request.startsWith('GET ')));
  }, 60_000);
});
