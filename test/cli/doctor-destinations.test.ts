// `doctor` said a plugins.toml was valid, "everything looks fine", while the
// OTLP endpoint it sends to refused every connection: the host then lost its
// spans after retries, and the stream sink's and uploads' receivers could be
// as dead without a word. It now connects to each remote destination (a
// connection only: nothing is sent, no header leaves the process) and
// reports each ok or unreachable, with the reason; an unreachable one is an
// error (exit 1), and --offline skips the check. Real loopback servers: an
// OTLP/HTTP receiver, plain TCP servers that count the bytes they get, a
// port nobody listens on, a TLS server with a self-signed certificate.
import fs from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpReceiver } from '../support/otlp-receiver.ts';
import { loopbackCertificate } from '../support/loopback-certificate.ts';
import { startForwardProxy } from '../support/forward-proxy.ts';
import { withProcessEnv } from '../support/process-env.ts';
import { cliInProcess, expectNoStack, tempDir } from './support.ts';

const SECRET = 'Bearer doctor-must-not-send-this-4711';
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** A TCP server that accepts and never answers, counting the bytes it receives. */
async function silentServer(): Promise<{ url: string; bytes: () => number; connections: () => number }> {
  let bytes = 0;
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('data', (chunk) => (bytes += chunk.length));
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return { url: `127.0.0.1:${(server.address() as net.AddressInfo).port}`, bytes: () => bytes, connections: () => connections };
}

/** A port on 127.0.0.1 nobody listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function writeToml(body: string): string {
  const file = path.join(tempDir('nrh-doctor-destinations-'), 'plugins.toml');
  fs.writeFileSync(
    file,
    ['version = 1', '[[components]]', 'kind = "observability"', '[components.config]', 'version = 4', body].join('\n'),
  );
  return file;
}

const streamSink = (url: string, extra = '') => ['[[components.config.atof.sinks]]', 'type = "stream"', `url = "${url}"`, extra].join('\n');
const otlpEndpoint = (url: string, extra = '') => ['[components.config.opentelemetry]', 'enabled = true', '[[components.config.opentelemetry.endpoints]]', 'type = "gen_ai"', `endpoint = "${url}"`, extra].join('\n');

interface Report {
  ok: boolean;
  destinations: { kind: string; url: string; status: string; reason?: string; via?: string }[];
  problems: { level: string; code: string; field?: string; message: string }[];
}

async function doctor(file: string, ...flags: string[]): Promise<{ code: number; text: string; report: Report }> {
  const env = { NEMO_RELAY_HOOKS_BACKEND: 'memory' };
  const text = await cliInProcess(['doctor', '--plugins-toml', file, ...flags], { env });
  const json = await cliInProcess(['doctor', '--plugins-toml', file, '--json', ...flags], { env });
  expectNoStack(text.stderr + json.stderr);
  expect(json.code).toBe(text.code);
  return { code: text.code, text: text.stdout, report: JSON.parse(json.stdout) as Report };
}

describe('doctor connects to the destinations a plugins.toml sends to', () => {
  it('an OTLP receiver that is up is ok, a closed port is unreachable (connection refused): exit 1, and nothing is sent to either', async () => {
    const rx = await startHttpReceiver();
    closers.push(() => rx.close());
    const silent = await silentServer();
    const port = await closedPort();
    const file = writeToml(
      [
        '[components.config.atof]',
        'enabled = true',
        streamSink(`http://127.0.0.1:${port}/events`),
        streamSink(`http://${silent.url}/events`, `headers = { Authorization = "${SECRET}" }`),
        otlpEndpoint(rx.url, `headers = { Authorization = "${SECRET}" }`),
      ].join('\n'),
    );
    const { code, text, report } = await doctor(file);

    expect(code).toBe(1);
    expect(report.ok).toBe(false);
    expect(report.destinations).toEqual([
      { kind: 'otlp-traces', url: `${rx.url}/v1/traces`, status: 'ok' },
      { kind: 'atof-stream', url: `http://127.0.0.1:${port}/events`, status: 'unreachable', reason: 'connection refused' },
      { kind: 'atof-stream', url: `http://${silent.url}/events`, status: 'ok' },
    ]);
    expect(report.problems).toEqual([
      expect.objectContaining({ level: 'error', code: 'destination.unreachable', field: 'atof.sinks[0]', message: expect.stringContaining(`ATOF stream http://127.0.0.1:${port}/events cannot be reached from here (connection refused)`) }),
    ]);
    expect(text).toContain(`destinations  OTLP traces ${rx.url}/v1/traces: ok\n`);
    expect(text).toContain(`ATOF stream http://127.0.0.1:${port}/events: unreachable (connection refused)\n`);
    expect(text).toContain('✗ 1 error, 0 warnings');

    // A connection only: the receiver got no request, the TCP server not one byte, and the header went nowhere.
    expect(rx.requests).toHaveLength(0);
    expect(silent.connections()).toBeGreaterThan(0);
    expect(silent.bytes()).toBe(0);
    expect(text + JSON.stringify(report)).not.toContain('doctor-must-not-send-this');
  });

  it('every destination up: everything looks fine, exit 0', async () => {
    const rx = await startHttpReceiver();
    closers.push(() => rx.close());
    const file = writeToml(
      ['[components.config.atif]', 'enabled = true', `output_directory = ${JSON.stringify(tempDir())}`, '[[components.config.atif.storage]]', 'type = "http"', `endpoint = "${rx.url}/upload"`, otlpEndpoint(rx.url)].join('\n'),
    );
    const { code, text, report } = await doctor(file);
    expect(report.destinations.map((d) => [d.kind, d.status])).toEqual([
      ['otlp-traces', 'ok'],
      ['atif-storage', 'ok'],
    ]);
    expect(code).toBe(0);
    expect(text.trimEnd().endsWith('✓ everything looks fine')).toBe(true);
    expect(rx.requests).toHaveLength(0);
  });

  it('checks the OTLP endpoint the environment configures (no plugins.toml) as well', async () => {
    const port = await closedPort();
    const env = { NEMO_RELAY_HOOKS_BACKEND: 'memory', NEMO_RELAY_HOOKS_OTLP_ENABLED: '1', OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` };
    const result = await cliInProcess(['doctor', '--json'], { env });
    const report = JSON.parse(result.stdout) as Report;
    expect(result.code).toBe(1);
    expect(report.destinations).toEqual([{ kind: 'otlp-traces', url: `http://127.0.0.1:${port}/v1/traces`, status: 'unreachable', reason: 'connection refused' }]);
  });

  it('--offline connects to nothing: the destinations are listed as not checked, and a closed port is no error', async () => {
    const port = await closedPort();
    const file = writeToml(otlpEndpoint(`http://127.0.0.1:${port}`));
    const { code, text, report } = await doctor(file, '--offline');
    expect(code).toBe(0);
    expect(report.destinations).toEqual([{ kind: 'otlp-traces', url: `http://127.0.0.1:${port}/v1/traces`, status: 'not checked' }]);
    expect(text).toContain(`destinations  OTLP traces http://127.0.0.1:${port}/v1/traces: not checked (--offline)`);
    expect(report.problems).toEqual([]);
  });

  it('a server that accepts and never answers the TLS handshake is unreachable after the destination\'s timeout_millis, not a hang', async () => {
    const silent = await silentServer();
    const file = writeToml(['[components.config.atof]', 'enabled = true', streamSink(`https://${silent.url}/events`, 'timeout_millis = 300')].join('\n'));
    const started = Date.now();
    const { code, report } = await doctor(file);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(code).toBe(1);
    expect(report.destinations).toEqual([{ kind: 'atof-stream', url: `https://${silent.url}/events`, status: 'unreachable', reason: 'no answer within 300 ms' }]);
  });

  it('a TLS certificate the senders would refuse (self-signed) is unreachable, with the TLS reason', async () => {
    const certificate = loopbackCertificate(tempDir(), 'doctor-destinations TLS case');
    if (certificate === undefined) return;
    const server = https.createServer(certificate, (_request, response) => response.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => server.close(resolve)));
    const url = `https://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    const file = writeToml(otlpEndpoint(url));
    const { code, report } = await doctor(file);
    expect(code).toBe(1);
    expect(report.destinations[0]).toEqual({ kind: 'otlp-traces', url: `${url}/v1/traces`, status: 'unreachable', reason: expect.stringMatching(/^TLS handshake failed: self[- ]signed certificate/) });
  });

  it('a host name that does not resolve is unreachable, the DNS failure named; the URL\'s credentials are not printed', async () => {
    const file = writeToml(['[components.config.atof]', 'enabled = true', streamSink('http://user:pass-4711@no-such-host.invalid/events')].join('\n'));
    const { code, text, report } = await doctor(file);
    expect(code).toBe(1);
    expect(report.destinations[0]).toEqual({ kind: 'atof-stream', url: 'http://***@no-such-host.invalid/events', status: 'unreachable', reason: expect.stringMatching(/^DNS lookup of no-such-host\.invalid failed \(E[A-Z_]+\)$|^no answer within \d+ ms$/) });
    expect(text + JSON.stringify(report)).not.toContain('pass-4711');
  });
});

describe('doctor checks a destination the senders reach through a proxy through that proxy', () => {
  const none = { HTTP_PROXY: '', http_proxy: '', HTTPS_PROXY: '', https_proxy: '', ALL_PROXY: '', all_proxy: '', NO_PROXY: '', no_proxy: '' };

  it('http: a TCP connect to the proxy only (the destination is not contacted, nothing is sent), the row saying via which proxy', async () => {
    const destination = await silentServer();
    const proxy = await silentServer();
    withProcessEnv({ ...none, HTTP_PROXY: `http://user:proxy-pass-4711@${proxy.url}` });
    const file = writeToml(['[components.config.atof]', 'enabled = true', streamSink(`http://${destination.url}/events`, 'timeout_millis = 1000')].join('\n'));
    const { code, text, report } = await doctor(file);
    expect(code).toBe(0);
    expect(report.destinations).toEqual([{ kind: 'atof-stream', url: `http://${destination.url}/events`, status: 'ok', via: `http://***@${proxy.url}/` }]);
    expect(text).toContain(`ATOF stream http://${destination.url}/events via proxy http://***@${proxy.url}/: ok`);
    expect(text + JSON.stringify(report)).not.toContain('proxy-pass-4711');
    expect(proxy.connections()).toBeGreaterThan(0);
    expect(proxy.bytes()).toBe(0);
    expect(destination.connections()).toBe(0);
  });

  it('https: a CONNECT tunnel, then the TLS handshake through it with the certificate checked (no request sent); NO_PROXY goes direct', async () => {
    const certificate = loopbackCertificate(tempDir('nrh-doctor-proxy-'), 'doctor-destinations proxy TLS case');
    if (certificate === undefined) return;
    let requests = 0;
    const server = https.createServer(certificate, (_request, response) => {
      requests += 1;
      response.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => server.close(resolve)));
    const authority = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    const proxy = await startForwardProxy();
    closers.push(() => proxy.close());
    withProcessEnv({ ...none, HTTPS_PROXY: proxy.url });
    const file = writeToml(otlpEndpoint(`https://${authority}`));
    const { code, report } = await doctor(file);
    expect(code).toBe(1);
    expect(report.destinations).toEqual([{ kind: 'otlp-traces', url: `https://${authority}/v1/traces`, status: 'unreachable', via: `${proxy.url}/`, reason: expect.stringMatching(/^TLS handshake failed: self[- ]signed certificate/) }]);
    expect(proxy.log.map((entry) => `${entry.method} ${entry.target}`)).toEqual([`CONNECT ${authority}`, `CONNECT ${authority}`]);
    expect(requests).toBe(0);

    withProcessEnv({ NO_PROXY: '127.0.0.1' });
    const direct = await doctor(file);
    expect(direct.report.destinations[0]).not.toHaveProperty('via');
    expect(proxy.log).toHaveLength(2);
  });

  it('a proxy refusing the CONNECT makes the destination unreachable, the proxy (without credentials) and its answer named', async () => {
    const proxy = await startForwardProxy({ refuseConnect: 407 });
    closers.push(() => proxy.close());
    withProcessEnv({ ...none, HTTPS_PROXY: `http://user:proxy-pass-4711@127.0.0.1:${proxy.port}` });
    const file = writeToml(['[components.config.atof]', 'enabled = true', streamSink('https://collector.example.test/events')].join('\n'));
    const { code, text, report } = await doctor(file);
    expect(code).toBe(1);
    expect(report.destinations[0]).toEqual({
      kind: 'atof-stream',
      url: 'https://collector.example.test/events',
      status: 'unreachable',
      via: `http://***@127.0.0.1:${proxy.port}/`,
      reason: `the proxy http://***@127.0.0.1:${proxy.port}/ refused CONNECT collector.example.test:443: HTTP 407 (the proxy wants other credentials: set the user and password in HTTPS_PROXY (http://user:password@host:port, reserved characters percent-encoded))`,
    });
    // The reason says what to do; the problem does not add advice that contradicts it.
    expect(report.problems.find((p) => p.code === 'destination.unreachable')?.message).not.toContain('start the receiver');
    expect(text + JSON.stringify(report)).not.toContain('proxy-pass-4711');
  });
});
