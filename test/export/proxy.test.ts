// The memory relay's remote outputs behind a forward proxy (HTTP_PROXY,
// HTTPS_PROXY, NO_PROXY), as native sends them: every HTTP output (ATOF
// http_post and ndjson sinks, OTLP/HTTP traces and logs, ATIF uploads over
// HTTP and S3) through a real loopback proxy in front of real receivers;
// WebSocket direct; https through a CONNECT tunnel. The env rules
// themselves are compared with native's in test/slow/proxy-native.test.ts.
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import { HookRegistry } from '../../src/hooks/registry.ts';
import type { HookName } from '../../src/hooks/names.ts';
import { createNemoRelayPlugin } from '../../src/index.ts';
import { createAtofStreamSink } from '../../src/export/streams/sink.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { streamFileName } from '../fixtures/streams/streams.ts';
import type { HookLine } from '../fixtures/streams/script.ts';
import { dist, runChild, runtime, spawnChild } from '../support/child.ts';
import { startForwardProxy, type ForwardProxy } from '../support/forward-proxy.ts';
import { loopbackCertificate } from '../support/loopback-certificate.ts';
import { withProcessEnv } from '../support/process-env.ts';
import { startReceiver, type Receiver } from '../support/receivers.ts';

const STREAMS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/streams');
const S3 = { accessKeyId: 'AKIDPROXY', secretAccessKey: 'proxy-test-secret', region: 'us-east-1' };
const SECRET_VAR = 'NRH_PROXY_TEST_S3_SECRET';
/** Every proxy variable, emptied, so the runner's own settings never leak into a case. */
const NO_PROXY_VARS = { HTTP_PROXY: '', http_proxy: '', HTTPS_PROXY: '', https_proxy: '', ALL_PROXY: '', all_proxy: '', NO_PROXY: '', no_proxy: '' };

const closers: (() => Promise<void>)[] = [];
const tempDir = (name: string) => fs.mkdtempSync(path.join(os.tmpdir(), `nrh-${name}-`));
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function receiver(): Promise<Receiver> {
  const started = await startReceiver({ s3: S3 });
  closers.push(() => started.close());
  return started;
}

async function proxy(options: Parameters<typeof startForwardProxy>[0] = {}): Promise<ForwardProxy> {
  const started = await startForwardProxy(options);
  closers.push(() => started.close());
  return started;
}

function document(dir: string, origin: string, wsOrigin: string): string {
  const file = path.join(dir, 'plugins.toml');
  fs.writeFileSync(
    file,
    `version = 1
[[components]]
kind = "observability"
enabled = true
[components.config]
version = 4
[components.config.atof]
enabled = true
[[components.config.atof.sinks]]
type = "file"
output_directory = ${JSON.stringify(path.join(dir, 'atof'))}
filename = "events.jsonl"
[[components.config.atof.sinks]]
type = "stream"
url = "${origin}/atof/post"
transport = "http_post"
timeout_millis = 3000
[[components.config.atof.sinks]]
type = "stream"
url = "${origin}/atof/ndjson"
transport = "ndjson"
timeout_millis = 3000
[[components.config.atof.sinks]]
type = "stream"
url = "${wsOrigin}/atof/ws"
transport = "websocket"
timeout_millis = 3000
[components.config.atif]
enabled = true
output_directory = ${JSON.stringify(path.join(dir, 'atif'))}
filename_template = "trajectory-{session_id}.json"
[[components.config.atif.storage]]
type = "http"
endpoint = "${origin}/atif/upload"
timeout_millis = 3000
[[components.config.atif.storage]]
type = "s3"
bucket = "proxy-bucket"
key_prefix = "trajectories/"
access_key_id = "${S3.accessKeyId}"
secret_access_key_var = "${SECRET_VAR}"
region = "${S3.region}"
endpoint_url = "${origin}"
allow_http = true
timeout_millis = 3000
[components.config.opentelemetry]
enabled = true
[[components.config.opentelemetry.endpoints]]
type = "full"
endpoint = "${origin}"
transport = "http_binary"
scheduled_delay_millis = 10
[components.config.opentelemetry.logs]
enabled = true
`,
  );
  return file;
}

/** One recorded chat through a memory-relay plugin on `toml`, shut down. */
async function runChat(toml: string) {
  const plugin = createNemoRelayPlugin({ backend: createMemoryRelay({ logger: silentLogger }), env: { HERMES_NEMO_RELAY_PLUGINS_TOML: toml }, logger: silentLogger });
  const hooks = new HookRegistry({ logger: silentLogger });
  plugin.register(hooks);
  const lines = fs.readFileSync(path.join(STREAMS_DIR, streamFileName('plain-chat')), 'utf8').split('\n').filter((line) => line.trim() !== '');
  for (const line of lines.map((text) => JSON.parse(text) as HookLine)) hooks.emit(line.hook as HookName, structuredClone(line.payload) as never);
  await plugin.shutdown({ timeoutMs: 20_000 });
  return plugin.status();
}

const HTTP_PATHS = ['/atof/post', '/atof/ndjson', '/atif/upload', '/v1/traces', '/v1/logs'];

describe('the memory relay behind HTTP_PROXY', () => {
  it('sends every HTTP output through the proxy as absolute-URI requests, and the WebSocket sink direct', async () => {
    const target = await receiver();
    const forward = await proxy();
    withProcessEnv({ ...NO_PROXY_VARS, HTTP_PROXY: forward.url, [SECRET_VAR]: S3.secretAccessKey });
    const dir = tempDir('proxy-all');
    const status = await runChat(document(dir, target.origin, `ws://127.0.0.1:${target.port}`));

    for (const output of status.outputs.filter((o) => o.kind !== 'atof' && o.kind !== 'atif')) expect(output, output.path).toMatchObject({ failed: 0, dropped: 0 });
    const atof = fs.readFileSync(path.join(dir, 'atof', 'events.jsonl'), 'utf8');
    // The receiver got each output's data, and each request went through the proxy, by its absolute URI.
    expect(target.requests.filter((r) => r.path === '/atof/post').map((r) => r.body).join('')).toBe(atof);
    expect(target.requests.filter((r) => r.path === '/atof/ndjson').map((r) => r.body).join('')).toBe(atof);
    const s3 = target.requests.filter((r) => r.path.startsWith('/proxy-bucket/trajectories/'));
    expect(s3.map((r) => r.signatureValid)).toEqual([true]);
    for (const wanted of HTTP_PATHS) expect(target.requests.some((r) => r.path === wanted), wanted).toBe(true);
    const proxied = target.requests.filter((r) => r.path !== '/atof/ws').map((r) => `${r.method} ${target.origin}${r.path}`);
    expect(forward.log.map((entry) => `${entry.method} ${entry.target}`).sort()).toEqual(proxied.sort());
    // The WebSocket sink went direct (as native sends it): the proxy never saw it, the receiver did.
    expect(target.sockets.filter((s) => s.path === '/atof/ws').flatMap((s) => s.messages).length).toBeGreaterThan(0);
    expect(forward.log.some((entry) => entry.target.includes('/atof/ws'))).toBe(false);
  });

  it('sends direct to a host NO_PROXY names', async () => {
    const target = await receiver();
    const forward = await proxy();
    withProcessEnv({ ...NO_PROXY_VARS, HTTP_PROXY: forward.url, NO_PROXY: 'example.test, 127.0.0.1', [SECRET_VAR]: S3.secretAccessKey });
    const dir = tempDir('proxy-none');
    await runChat(document(dir, target.origin, `ws://127.0.0.1:${target.port}`));
    for (const wanted of HTTP_PATHS) expect(target.requests.some((r) => r.path === wanted), wanted).toBe(true);
    expect(forward.log).toEqual([]);
  });

  it('sends the proxy URL\'s credentials to the proxy as Proxy-Authorization, never to the receiver, never in status', async () => {
    const target = await receiver();
    const forward = await proxy();
    const [, port] = forward.url.split(':').slice(1);
    withProcessEnv({ ...NO_PROXY_VARS, http_proxy: `http://proxy%40user:pa%3Ass-4711@127.0.0.1:${port}`, [SECRET_VAR]: S3.secretAccessKey });
    const dir = tempDir('proxy-auth');
    const status = await runChat(document(dir, target.origin, `ws://127.0.0.1:${target.port}`));
    expect(forward.log.length).toBeGreaterThan(0);
    const basic = `Basic ${Buffer.from('proxy@user:pa:ss-4711').toString('base64')}`;
    expect(new Set(forward.log.map((entry) => entry.authorization))).toEqual(new Set([basic]));
    for (const request of target.requests) expect(request.headers['proxy-authorization']).toBeUndefined();
    expect(JSON.stringify(status)).not.toContain('4711');
  });

  // Native (reqwest) sends a target URL's user:password as Basic whatever the route; node:http dropped them through a proxy.
  it.each(['http_post', 'ndjson'] as const)('%s: a target URL\'s user and password reach the receiver through the proxy as Basic, in place of a configured authorization', async (transport) => {
    const target = await receiver();
    const forward = await proxy();
    withProcessEnv({ ...NO_PROXY_VARS, HTTP_PROXY: forward.url });
    const sink = createAtofStreamSink(
      { index: 0, name: undefined, url: `http://us%40r:pw-4711@127.0.0.1:${target.port}/atof/creds`, transport, headers: { Authorization: 'Bearer conf-4711' }, timeoutMillis: 2000, fieldNamePolicy: 'preserve' },
      { logger: silentLogger, retry: { initialDelayMs: 5, maxDelayMs: 20, maxRetries: 1 } },
    );
    sink.accept(JSON.stringify({ atof_version: '0.1', kind: 'mark', name: 'm' }));
    await sink.close();
    expect(forward.log.map((entry) => entry.target)).toEqual([`${target.origin}/atof/creds`]);
    const sent = target.requests.filter((r) => r.path === '/atof/creds');
    // Compared, never printed: a failure shows only whether each matched.
    expect(sent.map((r) => r.headers.authorization === `Basic ${Buffer.from('us@r:pw-4711').toString('base64')}`)).toEqual([true]);
  });

  it('counts the events a proxy refusing CONNECT could not carry as failed, its lastError naming the proxy (without credentials) and its answer', async () => {
    const forward = await proxy({ refuseConnect: 403 });
    withProcessEnv({ ...NO_PROXY_VARS, HTTPS_PROXY: `http://user:hunter-4711@127.0.0.1:${forward.port}` });
    const sink = createAtofStreamSink(
      { index: 0, name: undefined, url: 'https://collector.example.test/atof', transport: 'http_post', headers: {}, timeoutMillis: 2000, fieldNamePolicy: 'preserve' },
      { logger: silentLogger, retry: { initialDelayMs: 5, maxDelayMs: 20, maxRetries: 1 } },
    );
    sink.accept(JSON.stringify({ atof_version: '0.1', kind: 'mark', name: 'm' }));
    await sink.close();
    expect(sink.health()).toMatchObject({ sent: 0, failed: 1 });
    expect(sink.health().lastError).toBe(
      `POST https://collector.example.test/atof via proxy http://***@127.0.0.1:${forward.port}/ failed: the proxy http://***@127.0.0.1:${forward.port}/ refused CONNECT collector.example.test:443: HTTP 403`,
    );
    expect(forward.log.length).toBeGreaterThan(0);
    expect(forward.log.every((entry) => entry.method === 'CONNECT' && entry.target === 'collector.example.test:443')).toBe(true);
  });

  // A user trial behind a proxy saw "answered HTTP 407" and "failed: ECONNREFUSED" with nothing saying what to change.
  it('a proxy that wants other credentials (407), or that is not running: each lastError says which variable to fix', async () => {
    const forward = await proxy({ requireAuthorization: `Basic ${Buffer.from('corp:right').toString('base64')}` });
    const wrong = `http://corp:wrong-4711@127.0.0.1:${forward.port}`;
    withProcessEnv({ ...NO_PROXY_VARS, HTTP_PROXY: wrong, HTTPS_PROXY: wrong });
    const sinkTo = (url: string, index: number) =>
      createAtofStreamSink(
        { index, name: undefined, url, transport: 'http_post', headers: {}, timeoutMillis: 2000, fieldNamePolicy: 'preserve' },
        { logger: silentLogger, retry: { initialDelayMs: 5, maxDelayMs: 20, maxRetries: 1 } },
      );
    const deliver = async (url: string, index: number) => {
      const sink = sinkTo(url, index);
      sink.accept(JSON.stringify({ atof_version: '0.1', kind: 'mark', name: 'm' }));
      await sink.close();
      return sink.health();
    };
    const absolute = await deliver('http://collector.example.test/atof', 0);
    expect(absolute).toMatchObject({ sent: 0, failed: 1 });
    expect(absolute.lastError).toBe(
      `POST http://collector.example.test/atof via proxy http://***@127.0.0.1:${forward.port}/ answered HTTP 407 (the proxy wants other credentials: set the user and password in HTTP_PROXY (http://user:password@host:port, reserved characters percent-encoded))`,
    );
    const tunnelled = await deliver('https://collector.example.test/atof', 1);
    expect(tunnelled.lastError).toBe(
      `POST https://collector.example.test/atof via proxy http://***@127.0.0.1:${forward.port}/ failed: the proxy http://***@127.0.0.1:${forward.port}/ refused CONNECT collector.example.test:443: HTTP 407 (the proxy wants other credentials: set the user and password in HTTPS_PROXY (http://user:password@host:port, reserved characters percent-encoded))`,
    );
    expect(forward.log.map((entry) => entry.method)).toContain('CONNECT');

    await forward.close();
    const down = await deliver('https://collector.example.test/atof', 2);
    expect(down.lastError).toBe(
      `POST https://collector.example.test/atof via proxy http://***@127.0.0.1:${forward.port}/ failed: ECONNREFUSED (the proxy cannot be reached: start it or fix HTTPS_PROXY, or list the destination in NO_PROXY to send it direct)`,
    );
    expect(JSON.stringify([absolute, tunnelled, down])).not.toContain('4711');
  });

  it('reaches an https receiver through a CONNECT tunnel, its certificate checked (a self-signed one the process trusts)', async () => {
    const dir = tempDir('proxy-tls');
    const certificate = loopbackCertificate(dir, 'proxy TLS case');
    if (certificate === undefined) return;
    const bodies: { path: string; body: string; proxyAuthorization: unknown }[] = [];
    const server = https.createServer(certificate, (request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      request.on('end', () => {
        bodies.push({ path: request.url ?? '', body, proxyAuthorization: request.headers['proxy-authorization'] });
        response.end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const forward = await proxy();
    const toml = path.join(dir, 'plugins.toml');
    fs.writeFileSync(
      toml,
      [
        'version = 1', '[[components]]', 'kind = "observability"', 'enabled = true', '[components.config]', 'version = 4', '[components.config.atof]', 'enabled = true',
        '[[components.config.atof.sinks]]', 'type = "file"', `output_directory = ${JSON.stringify(dir)}`, 'filename = "events.jsonl"',
        '[[components.config.atof.sinks]]', 'type = "stream"', `url = "${origin}/atof/post"`, 'transport = "http_post"',
        '[[components.config.atof.sinks]]', 'type = "stream"', `url = "${origin}/atof/ndjson"`, 'transport = "ndjson"',
      ].join('\n'),
    );
    const certFile = path.join(dir, 'loopback-cert.pem');
    const child = await spawnChild(
      `const { createNemoRelayPlugin, HookRegistry } = await import(${dist('src/index.js')});
const plugin = createNemoRelayPlugin({ backend: 'memory', env: { HERMES_NEMO_RELAY_PLUGINS_TOML: ${JSON.stringify(toml)} } });
const hooks = new HookRegistry();
plugin.register(hooks);
hooks.emit('on_session_start', { session_id: 's1', model: 'm', platform: 'cli' });
hooks.emit('on_session_end', { session_id: 's1' });
await plugin.shutdown({ timeoutMs: 10000 });
console.log('@@RESULT@@' + JSON.stringify(plugin.status().outputs));`,
      {
        env: {
          ...NO_PROXY_VARS,
          HTTPS_PROXY: `http://u:tunnel-4711@127.0.0.1:${forward.port}`,
          NODE_EXTRA_CA_CERTS: certFile,
          DENO_NO_UPDATE_CHECK: '1',
          NEMO_RELAY_HOOKS_BACKEND: 'memory',
        },
      },
    );
    expect(child.stderr).not.toContain('4711');
    const outputs = child.result as { kind: string; sent?: number; failed?: number; lastError?: string }[];
    const streams = outputs.filter((o) => o.kind === 'atof-stream');
    // Every runtime, Deno included (whose own node:tls ignores NODE_EXTRA_CA_CERTS: the senders read it, delivery/trust.ts).
    expect(streams, child.stderr).toEqual([expect.objectContaining({ failed: 0 }), expect.objectContaining({ failed: 0 })]);
    const atof = fs.readFileSync(path.join(dir, 'events.jsonl'), 'utf8');
    expect(bodies.filter((b) => b.path === '/atof/post').map((b) => b.body).join('')).toBe(atof);
    expect(bodies.filter((b) => b.path === '/atof/ndjson').map((b) => b.body).join('')).toBe(atof);
    expect(bodies.every((b) => b.proxyAuthorization === undefined)).toBe(true);
    const authority = origin.slice('https://'.length);
    // (Deno's own update check, when it runs, goes through the proxy too.)
    const ours = forward.log.filter((entry) => entry.target.includes('127.0.0.1'));
    expect(ours.length).toBeGreaterThan(0);
    expect(new Set(ours.map((entry) => `${entry.method} ${entry.target} ${entry.authorization}`))).toEqual(new Set([`CONNECT ${authority} Basic ${Buffer.from('u:tunnel-4711').toString('base64')}`]));
  });

  if (runtime !== 'deno') console.info('[proxy] the Deno child without --allow-env runs only when the suite runs on Deno');
  it.runIf(runtime === 'deno')('on Deno without --allow-env, goes direct, and a failure says the proxy variables could not be read', () => {
    const dir = tempDir('proxy-refused-env');
    fs.writeFileSync(
      path.join(dir, 'plugins.toml'),
      ['version = 1', '[[components]]', 'kind = "observability"', '[components.config]', 'version = 4', '[components.config.atof]', 'enabled = true',
        '[[components.config.atof.sinks]]', 'type = "stream"', 'url = "http://127.0.0.1:9/post"', 'timeout_millis = 2000'].join('\n'),
    );
    const child = runChild(
      `import { createNemoRelayPlugin, HookRegistry } from ${dist('src/index.js')};
const plugin = createNemoRelayPlugin({ backend: 'memory', settings: { pluginsTomlPath: 'plugins.toml' }, logger: { debug() {}, info() {}, warn() {}, error() {} } });
const hooks = new HookRegistry();
plugin.register(hooks);
hooks.emit('on_session_start', { session_id: 's1' });
hooks.emit('on_session_end', { session_id: 's1' });
await plugin.shutdown({ timeoutMs: 5000 });
console.log(JSON.stringify(plugin.status().outputs));`,
      { cwd: dir, env: { HTTP_PROXY: 'http://127.0.0.1:1' }, denoPermissions: ['--allow-read', '--allow-write', '--allow-net'] },
    );
    const outputs = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as { kind: string; lastError?: string }[];
    const stream = outputs.find((o) => o.kind === 'atof-stream');
    expect(stream?.lastError, child.stderr).toMatch(/^POST http:\/\/127\.0\.0\.1:9\/post failed: ECONNREFUSED \(no proxy used: the runtime refused to read HTTP_PROXY \(.*Deno: run with --allow-env\)\)$/);
  });
});
