// The memory relay's HTTPS outputs trust the authorities native trusts: a
// collector whose certificate a company CA signed, that CA given by
// SSL_CERT_FILE or SSL_CERT_DIR (read by native too) or NODE_EXTRA_CA_CERTS,
// gets every remote output (ATOF http_post and ndjson sinks, OTLP/HTTP, ATIF
// uploads) and passes doctor; without it the failure says how to fix it.
// Real loopback https receivers, a real CA made with openssl, the real
// plugin on the memory relay, on Node, Bun and Deno.
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import { buildTrust, resetHttpsTrust } from '../../src/export/delivery/trust.ts';
import { HookRegistry } from '../../src/hooks/registry.ts';
import { createNemoRelayPlugin } from '../../src/index.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { cliInProcess } from '../cli/support.ts';
import { dist, runtime, spawnChild } from '../support/child.ts';
import { nativeAvailable } from '../contract/backends.ts';
import { loopbackAuthority, type LoopbackAuthority } from '../support/loopback-certificate.ts';
import { withProcessEnv } from '../support/process-env.ts';

/** Every variable that names trusted certificates, emptied, so the runner's own settings never leak into a case. */
const NO_TRUST_VARS = { SSL_CERT_FILE: '', SSL_CERT_DIR: '', NODE_EXTRA_CA_CERTS: '' };
const NO_PROXY_VARS = { HTTP_PROXY: '', http_proxy: '', HTTPS_PROXY: '', https_proxy: '', ALL_PROXY: '', all_proxy: '', NO_PROXY: '', no_proxy: '' };

const closers: (() => Promise<void>)[] = [];
const tempDir = (name: string) => fs.mkdtempSync(path.join(os.tmpdir(), `nrh-${name}-`));
afterEach(async () => {
  resetHttpsTrust();
  for (const close of closers.splice(0).reverse()) await close();
});

interface Received {
  path: string;
  body: string;
}

async function httpsReceiver(authority: LoopbackAuthority): Promise<{ origin: string; received: Received[] }> {
  const received: Received[] = [];
  const server = https.createServer({ key: authority.key, cert: authority.cert }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ path: request.url ?? '', body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(200, { 'content-type': request.url?.startsWith('/v1/') ? 'application/x-protobuf' : 'application/json' });
      response.end(request.url?.startsWith('/v1/') ? undefined : '{}');
    });
  });
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { origin: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

/** An ATOF stream sink of `transport` to `url`, as plugins.toml writes one. */
const streamSink = (url: string, transport: string) => `[[components.config.atof.sinks]]
type = "stream"
url = "${url}"
transport = "${transport}"
timeout_millis = 3000
`;

/** `dir`/plugins.toml: the observability component with ATOF on, its sinks and the rest `more` says. */
function writeDocument(dir: string, more: string): string {
  const file = path.join(dir, 'plugins.toml');
  fs.writeFileSync(file, `version = 1\n[[components]]\nkind = "observability"\nenabled = true\n[components.config]\nversion = 4\n[components.config.atof]\nenabled = true\n${more}`);
  return file;
}

function document(dir: string, origin: string): string {
  return writeDocument(
    dir,
    `${streamSink(`${origin}/atof/post`, 'http_post')}${streamSink(`${origin}/atof/ndjson`, 'ndjson')}[components.config.atif]
enabled = true
output_directory = ${JSON.stringify(path.join(dir, 'atif'))}
[[components.config.atif.storage]]
type = "http"
endpoint = "${origin}/atif/upload"
timeout_millis = 3000
[components.config.opentelemetry]
enabled = true
[[components.config.opentelemetry.endpoints]]
type = "full"
endpoint = "${origin}"
transport = "http_binary"
scheduled_delay_millis = 10
`,
  );
}

interface Output {
  kind: string;
  sent?: number;
  failed?: number;
  dropped?: number;
  lastError?: string;
}

/** One session through a memory-relay plugin on `toml`, shut down; its outputs. */
async function runSession(toml: string): Promise<Output[]> {
  const plugin = createNemoRelayPlugin({ backend: createMemoryRelay({ logger: silentLogger }), env: { HERMES_NEMO_RELAY_PLUGINS_TOML: toml }, logger: silentLogger });
  const hooks = new HookRegistry({ logger: silentLogger });
  plugin.register(hooks);
  hooks.emit('on_session_start', { session_id: 's1', model: 'm', platform: 'cli' });
  hooks.emit('on_session_end', { session_id: 's1' });
  await plugin.shutdown!({ timeoutMs: 8000 });
  return plugin.status!().outputs as Output[];
}

const REMOTE = ['atof-stream', 'atof-stream', 'atif-storage', 'otlp-traces'];

async function setUp(name: string) {
  const dir = tempDir(name);
  const authority = loopbackAuthority(dir, `https-trust ${name}`);
  if (authority === undefined) return undefined;
  const receiver = await httpsReceiver(authority);
  return { dir, authority, receiver, toml: document(dir, receiver.origin) };
}

function expectDelivered(outputs: Output[], received: Received[]): void {
  const remote = outputs.filter((o) => REMOTE.includes(o.kind));
  expect(remote.map((o) => o.kind).sort()).toEqual([...REMOTE].sort());
  for (const output of remote) expect(output, JSON.stringify(output)).toMatchObject({ failed: 0 });
  const paths = new Set(received.map((r) => r.path));
  expect(paths).toEqual(new Set(['/atof/post', '/atof/ndjson', '/atif/upload', '/v1/traces']));
  expect(received.find((r) => r.path === '/atof/ndjson')?.body).toBe(received.filter((r) => r.path === '/atof/post').map((r) => r.body).join(''));
}

describe('the memory relay trusts the certificate authorities native trusts', () => {
  it('a CA named by SSL_CERT_FILE (as native reads it): every https output delivers', async () => {
    const setup = await setUp('trust-file');
    if (setup === undefined) return;
    withProcessEnv({ ...NO_PROXY_VARS, ...NO_TRUST_VARS, SSL_CERT_FILE: setup.authority.caFile });
    expectDelivered(await runSession(setup.toml), setup.receiver.received);
  });

  it('a CA in a directory of SSL_CERT_DIR (a `:`-separated list, any file name, as native reads it): every https output delivers', async () => {
    const setup = await setUp('trust-dir');
    if (setup === undefined) return;
    const certs = path.join(setup.dir, 'company-certs');
    fs.mkdirSync(certs);
    fs.copyFileSync(setup.authority.caFile, path.join(certs, 'company-ca.crt'));
    withProcessEnv({ ...NO_PROXY_VARS, ...NO_TRUST_VARS, SSL_CERT_DIR: `${path.join(setup.dir, 'absent')}:${certs}` });
    expectDelivered(await runSession(setup.toml), setup.receiver.received);
  });

  it('NODE_EXTRA_CA_CERTS keeps working, Deno included (whose node:tls does not read it)', async () => {
    const setup = await setUp('trust-extra');
    if (setup === undefined) return;
    withProcessEnv({ ...NO_PROXY_VARS, ...NO_TRUST_VARS, NODE_EXTRA_CA_CERTS: setup.authority.caFile });
    expectDelivered(await runSession(setup.toml), setup.receiver.received);
  });

  it('a CA nobody names: nothing is delivered, not retried (counted as failed, not dropped), and each lastError says which variables fix it', async () => {
    const setup = await setUp('trust-none');
    if (setup === undefined) return;
    withProcessEnv({ ...NO_PROXY_VARS, ...NO_TRUST_VARS });
    const outputs = (await runSession(setup.toml)).filter((o) => REMOTE.includes(o.kind));
    expect(outputs).toHaveLength(REMOTE.length);
    for (const output of outputs) {
      expect(output.sent ?? 0).toBe(0);
      expect(output.lastError, JSON.stringify(output)).toMatch(/certificate is not signed by a trusted CA: add its CA to the system store, or name it in SSL_CERT_FILE or SSL_CERT_DIR \(read by both backends\) or NODE_EXTRA_CA_CERTS \(memory only\)/);
      // The same handshake fails until the host's trust changes: failed at once, no retry held the shutdown.
      expect(output.failed, JSON.stringify(output)).toBeGreaterThan(0);
      expect(output.dropped ?? 0, JSON.stringify(output)).toBe(0);
      expect(output.lastError).not.toMatch(/retry/);
      // Named once, not again by each layer the failure passes through.
      expect(output.lastError?.match(/not signed by a trusted CA/g), output.lastError).toHaveLength(1);
    }
    expect(setup.receiver.received).toEqual([]);
  });

  it('SSL_CERT_FILE or SSL_CERT_DIR set replaces the system store, as native (the runtime\'s own roots stay)', () => {
    const dir = tempDir('trust-sources');
    const authority = loopbackAuthority(dir, 'https-trust sources');
    if (authority === undefined) return;
    const pem = authority.caFile;
    expect(buildTrust({ SSL_CERT_FILE: pem }, 'linux').sources).toEqual([pem]);
    expect(buildTrust({ SSL_CERT_DIR: `${dir}:/no/such/dir` }, 'linux').sources).toEqual([dir]);
    expect(buildTrust({ SSL_CERT_FILE: path.join(dir, 'absent.pem') }, 'linux')).toEqual({ secureContext: undefined, sources: [] });
    expect(buildTrust({ NODE_EXTRA_CA_CERTS: pem, SSL_CERT_FILE: pem }, 'linux').sources).toEqual([pem, pem]);
  });
});

/** A wss:// receiver (the `ws` package on an https server) whose certificate `authority` signed; the lines it got. */
async function wssReceiver(authority: LoopbackAuthority): Promise<{ url: string; lines: string[] }> {
  const lines: string[] = [];
  const server = https.createServer({ key: authority.key, cert: authority.cert });
  server.on('tlsClientError', () => {});
  const sockets = new WebSocketServer({ server });
  sockets.on('connection', (socket) => socket.on('message', (data) => lines.push(String(data))));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    for (const client of sockets.clients) client.terminate();
    sockets.close();
    await new Promise((resolve) => server.close(() => resolve(undefined)));
  });
  return { url: `wss://127.0.0.1:${(server.address() as AddressInfo).port}/atof/ws`, lines };
}


if (runtime !== 'node') console.info(`[https-trust] the wss:// cases run on Node, where the websocket stream uses the ws package (on ${runtime} it is the runtime's own WebSocket, whose trust is the runtime's)`);

describe.runIf(runtime === 'node')('a websocket stream to wss:// trusts what the https outputs trust', () => {
  async function setUpWss(name: string) {
    const dir = tempDir(name);
    const authority = loopbackAuthority(dir, `https-trust ${name}`);
    if (authority === undefined) return undefined;
    const receiver = await wssReceiver(authority);
    return { authority, receiver, toml: writeDocument(dir, streamSink(receiver.url, 'websocket')) };
  }

  it('delivers with the CA named by SSL_CERT_FILE', async () => {
    const setup = await setUpWss('trust-wss-file');
    if (setup === undefined) return;
    withProcessEnv({ ...NO_PROXY_VARS, ...NO_TRUST_VARS, SSL_CERT_FILE: setup.authority.caFile });
    const [output] = (await runSession(setup.toml)).filter((o) => o.kind === 'atof-stream');
    expect(output, JSON.stringify(output)).toMatchObject({ failed: 0 });
    expect(output!.sent).toBeGreaterThan(0);
    expect(setup.receiver.lines).toHaveLength(output!.sent!);
  });

  it('a CA nobody names: not retried (failed, not dropped), and lastError says which variables fix it', async () => {
    const setup = await setUpWss('trust-wss-none');
    if (setup === undefined) return;
    withProcessEnv({ ...NO_PROXY_VARS, ...NO_TRUST_VARS });
    const [output] = (await runSession(setup.toml)).filter((o) => o.kind === 'atof-stream');
    expect(output!.sent ?? 0).toBe(0);
    expect(output!.failed, JSON.stringify(output)).toBeGreaterThan(0);
    expect(output!.dropped ?? 0, JSON.stringify(output)).toBe(0);
    expect(output!.lastError, JSON.stringify(output)).toMatch(/WebSocket connection failed.*not signed by a trusted CA: add its CA to the system store, or name it in SSL_CERT_FILE/);
    expect(setup.receiver.lines).toEqual([]);
  });
});

if (runtime !== 'deno') console.info('[https-trust] the Deno child without --allow-sys runs only when the suite runs on Deno');

describe.runIf(runtime === 'deno')('on Deno with the permissions the docs give the memory relay (no --allow-sys)', () => {
  // Deno's bundled roots ask for --allow-sys when first read; a user trial
  // behind a company CA saw that refusal thrown from a socket's callback
  // kill the host ("Uncaught NotCapable: Requires sys access to \"ca\"").
  it('every https output delivers with the CA in SSL_CERT_FILE, and the host lives', async () => {
    const setup = await setUp('trust-deno-sys');
    if (setup === undefined) return;
    const child = await spawnChild(
      `import { createNemoRelayPlugin } from ${dist('src/index.js')};
const plugin = createNemoRelayPlugin({ backend: 'memory', settings: { pluginsTomlPath: ${JSON.stringify(setup.toml)} }, logger: { debug() {}, info() {}, warn() {}, error() {} } });
plugin.handlers.on_session_start({ session_id: 's1', model: 'm', platform: 'cli' });
plugin.handlers.on_session_end({ session_id: 's1' });
await plugin.shutdown({ timeoutMs: 8000 });
console.log('@@RESULT@@' + JSON.stringify(plugin.status().outputs));`,
      { env: { ...NO_PROXY_VARS, ...NO_TRUST_VARS, SSL_CERT_FILE: setup.authority.caFile }, denoPermissions: ['--allow-env', '--allow-read', '--allow-write', '--allow-net'] },
    );
    expect(child.stderr).not.toMatch(/Uncaught/);
    expect(child.status).toBe(0);
    expectDelivered(child.result as Output[], setup.receiver.received);
  });
});

describe('doctor checks an https destination against the same authorities', () => {
  it('ok with the CA in SSL_CERT_FILE; without it, unreachable with the fix named', async () => {
    const setup = await setUp('trust-doctor');
    if (setup === undefined) return;
    const env = { NEMO_RELAY_HOOKS_BACKEND: 'memory' };
    withProcessEnv({ ...NO_PROXY_VARS, ...NO_TRUST_VARS, SSL_CERT_FILE: setup.authority.caFile });
    const trusted = JSON.parse((await cliInProcess(['doctor', '--plugins-toml', setup.toml, '--json'], { env })).stdout) as { destinations: { status: string; reason?: string }[] };
    expect(trusted.destinations.map((d) => d.status)).toEqual(['ok', 'ok', 'ok', 'ok']);
    resetHttpsTrust();
    process.env.SSL_CERT_FILE = '';
    const refused = JSON.parse((await cliInProcess(['doctor', '--plugins-toml', setup.toml, '--json'], { env })).stdout) as { destinations: { status: string; reason?: string }[]; problems: { message: string }[] };
    expect(refused.destinations.map((d) => d.status)).toEqual(['unreachable', 'unreachable', 'unreachable', 'unreachable']);
    expect(refused.destinations[0]?.reason).toMatch(/^TLS handshake failed: .*name it in SSL_CERT_FILE or SSL_CERT_DIR/);
    // The receiver is up at the right address: the problem says to trust its CA, not to start it or fix the address.
    for (const problem of refused.problems) expect(problem.message).not.toContain('start the receiver');
  });

  // A user trial gave the CA in NODE_EXTRA_CA_CERTS alone on native: doctor said everything looked fine, and
  // native's exports to the collector failed (native reads SSL_CERT_FILE and SSL_CERT_DIR, not that variable).
  it.skipIf(!nativeAvailable)('on native, checks what native sends against what native trusts: NODE_EXTRA_CA_CERTS alone does not pass', async () => {
    const setup = await setUp('trust-doctor-native');
    if (setup === undefined) return;
    const env = { NEMO_RELAY_HOOKS_BACKEND: 'native' };
    type Report = { backend: { kind: string }; destinations: { kind: string; url: string; status: string; reason?: string }[] };
    const run = async () => JSON.parse((await cliInProcess(['doctor', '--plugins-toml', setup.toml, '--json'], { env })).stdout) as Report;
    withProcessEnv({ ...NO_PROXY_VARS, ...NO_TRUST_VARS, NODE_EXTRA_CA_CERTS: setup.authority.caFile });
    const extraOnly = await run();
    expect(extraOnly.backend.kind).toBe('native');
    const statuses = Object.fromEntries(extraOnly.destinations.map((d) => [d.url.replace(setup.receiver.origin, ''), d.status]));
    // The upload is sent by this library on both backends, which reads NODE_EXTRA_CA_CERTS; the others by native.
    expect(statuses).toEqual({ '/atof/post': 'unreachable', '/atof/ndjson': 'unreachable', '/atif/upload': 'ok', '/v1/traces': 'unreachable' });
    expect(extraOnly.destinations.find((d) => d.kind === 'otlp-traces')?.reason).toMatch(/name it in SSL_CERT_FILE or SSL_CERT_DIR \(read by both backends\)/);
    resetHttpsTrust();
    withProcessEnv({ ...NO_PROXY_VARS, ...NO_TRUST_VARS, SSL_CERT_FILE: setup.authority.caFile });
    expect((await run()).destinations.map((d) => d.status)).toEqual(['ok', 'ok', 'ok', 'ok']);
  });
});
