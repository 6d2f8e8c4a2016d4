// Which certificates OTLP over gRPC trusts, on the memory relay and on
// native, for the same environment and the same document: each backend runs
// in a child process (native reads the real process environment) against a
// loopback gRPC receiver serving TLS with a certificate a CA of the test's
// own signed; the CA is given by SSL_CERT_FILE, SSL_CERT_DIR or nothing.
//
// Native's gRPC exporter (tonic over rustls) refuses the CA from every
// source measured: SSL_CERT_FILE, SSL_CERT_DIR, and the system bundle with
// the CA appended (bind-mounted over /etc/ssl/certs/ca-certificates.crt in a
// private mount namespace, by hand), each with `invalid peer certificate:
// UnknownIssuer`, where its OTLP/HTTP exporter trusts all three. The memory
// relay's gRPC trusts what its https outputs trust. This file pins that
// documented difference (docs/backends/memory-and-native.md): when native
// starts trusting the CA, the first expectation fails and the row goes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { nativeAvailable, nativeLoadError } from '../contract/backends.ts';
import { dist, spawnChild } from '../support/child.ts';
import { loopbackAuthority } from '../support/loopback-certificate.ts';
import { startGrpcReceiver } from '../support/otlp-receiver.ts';

/** The variables that name trusted certificates or a proxy, unset in each child (the runner's own never leak in). */
const UNSET = ['SSL_CERT_FILE', 'SSL_CERT_DIR', 'NODE_EXTRA_CA_CERTS', 'HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy', 'ALL_PROXY', 'all_proxy', 'NO_PROXY', 'no_proxy', 'GRPC_DEFAULT_SSL_ROOTS_FILE_PATH'];

function document(dir: string, endpoint: string): string {
  const file = path.join(dir, 'plugins.toml');
  fs.writeFileSync(
    file,
    [
      'version = 1', '[[components]]', 'kind = "observability"', 'enabled = true', '[components.config]', 'version = 4',
      '[components.config.opentelemetry]', 'enabled = true', '[[components.config.opentelemetry.endpoints]]', 'type = "full"', `endpoint = "${endpoint}"`, 'transport = "grpc"',
      'scheduled_delay_millis = 10', 'timeout_millis = 3000',
    ].join('\n'),
  );
  return file;
}

interface Outcome {
  /** The span names the receiver decoded. */
  spans: string[];
  /** Whether the OTLP output counts its spans as sent. */
  delivered: boolean;
}

/** One session on `backend` against a TLS gRPC receiver signed by the test CA, with `variables` set (`CA`, `CADIR` stand for the CA's file and a directory holding it). */
async function run(backend: 'native' | 'memory', variables: Record<string, string>): Promise<Outcome | undefined> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `nrh-grpc-trust-${backend}-`));
  const authority = loopbackAuthority(dir, 'grpc-trust-native');
  if (authority === undefined) return undefined;
  const caDir = path.join(dir, 'certs');
  fs.mkdirSync(caDir);
  fs.copyFileSync(authority.caFile, path.join(caDir, 'company.crt'));
  const receiver = await startGrpcReceiver({ tls: { key: authority.key, cert: authority.cert } });
  try {
    const resolved = Object.fromEntries(Object.entries(variables).map(([name, value]) => [name, value.replace('CADIR', caDir).replace('CA', authority.caFile)]));
    const env: Record<string, string | undefined> = Object.fromEntries(UNSET.map((name) => [name, undefined]));
    const child = await spawnChild(
      `const { createNemoRelayPlugin, HookRegistry } = await import(${dist('src/index.js')});
const plugin = createNemoRelayPlugin({ backend: ${JSON.stringify(backend)}, env: { HERMES_NEMO_RELAY_PLUGINS_TOML: ${JSON.stringify(document(dir, receiver.url))} }, logger: { debug() {}, info() {}, warn() {}, error() {} } });
const hooks = new HookRegistry();
plugin.register(hooks);
hooks.emit('on_session_start', { session_id: 's1', model: 'm', platform: 'cli' });
hooks.emit('on_session_end', { session_id: 's1' });
await plugin.shutdown({ timeoutMs: 10000 });
const status = plugin.status();
const otlp = status.outputs.find((o) => o.kind === 'otlp-traces');
console.log('@@RESULT@@' + JSON.stringify({ backend: status.backend.kind, otlp }));`,
      { env: { ...env, ...resolved, DENO_NO_UPDATE_CHECK: '1' } },
    );
    const result = child.result as { backend: string; otlp?: { sent?: number; failed?: number; lastError?: string } } | undefined;
    expect(result?.backend, child.stderr).toBe(backend);
    return { spans: receiver.spans().map((span) => span.name).sort(), delivered: (result?.otlp?.sent ?? 0) > 0 };
  } finally {
    await receiver.close();
  }
}

describe.skipIf(!nativeAvailable)(`OTLP/gRPC certificates on memory and on native${nativeAvailable ? '' : ` (skipped: native cannot load: ${nativeLoadError})`}`, () => {
  it.each([
    ['SSL_CERT_FILE', { SSL_CERT_FILE: 'CA' }, true],
    ['SSL_CERT_DIR', { SSL_CERT_DIR: '/no/such/dir:CADIR' }, true],
    ['nothing', {}, false],
  ] as const)('a CA given by %s', async (_name, variables, memoryTrusts) => {
    const [native, memory] = await Promise.all([run('native', variables), run('memory', variables)]);
    if (native === undefined || memory === undefined) return;
    // Native refuses the certificate whatever names the CA (docs/backends/memory-and-native.md, "gRPC to an https:// collector").
    expect(native).toEqual({ spans: [], delivered: false });
    expect(memory.delivered).toBe(memoryTrusts);
    expect(memory.spans.length > 0).toBe(memoryTrusts);
  }, 60_000);
});
