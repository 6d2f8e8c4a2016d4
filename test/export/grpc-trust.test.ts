// OTLP over gRPC to an https:// collector checks its certificate against the
// authorities every other https output of the memory relay trusts
// (delivery/trust.ts): a CA given by SSL_CERT_FILE, SSL_CERT_DIR or
// NODE_EXTRA_CA_CERTS gets traces and logs delivered; without it nothing is,
// and each output's lastError says what to set. grpc-js alone checked its own
// roots and refused the company CA whatever was set. A real loopback gRPC
// receiver serving TLS with a certificate a CA made with openssl signed, the
// real exporters on @grpc/grpc-js, the real plugin on the memory relay, on
// Node, Bun and Deno.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import { resetHttpsTrust } from '../../src/export/delivery/trust.ts';
import type { HookName } from '../../src/hooks/names.ts';
import { HookRegistry } from '../../src/hooks/registry.ts';
import { createNemoRelayPlugin } from '../../src/index.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { streamFileName } from '../fixtures/streams/streams.ts';
import type { HookLine } from '../fixtures/streams/script.ts';
import { cliInProcess } from '../cli/support.ts';
import { nativeAvailable } from '../contract/backends.ts';
import { dist, spawnChild } from '../support/child.ts';
import { loopbackAuthority } from '../support/loopback-certificate.ts';
import { startGrpcReceiver, type Receiver } from '../support/otlp-receiver.ts';
import { withProcessEnv } from '../support/process-env.ts';

const STREAMS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/streams');
/** Every variable that names trusted certificates, emptied, so the runner's own settings never leak into a case. */
const NO_TRUST_VARS = { SSL_CERT_FILE: '', SSL_CERT_DIR: '', NODE_EXTRA_CA_CERTS: '', GRPC_DEFAULT_SSL_ROOTS_FILE_PATH: '' };
const TRUST_HINT = /certificate is not signed by a trusted CA: add its CA to the system store, or name it in SSL_CERT_FILE or SSL_CERT_DIR \(read by both backends\) or NODE_EXTRA_CA_CERTS \(memory only\)/;

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  resetHttpsTrust();
  for (const close of closers.splice(0).reverse()) await close();
});

interface Output {
  errors?: number;
  kind: string;
  sent?: number;
  failed?: number;
  dropped?: number;
  lastError?: string;
}

/** A TLS gRPC receiver whose certificate a CA of the test's own signed, and a document sending traces and logs to it; undefined without openssl. */
async function setUp(name: string) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `nrh-${name}-`));
  const authority = loopbackAuthority(dir, `grpc-trust ${name}`);
  if (authority === undefined) return undefined;
  const receiver = await startGrpcReceiver({ tls: { key: authority.key, cert: authority.cert } });
  closers.push(() => receiver.close());
  const toml = path.join(dir, 'plugins.toml');
  fs.writeFileSync(
    toml,
    [
      'version = 1', '[[components]]', 'kind = "observability"', 'enabled = true', '[components.config]', 'version = 4',
      '[components.config.opentelemetry]', 'enabled = true', '[[components.config.opentelemetry.endpoints]]', 'type = "full"', `endpoint = "${receiver.url}"`, 'transport = "grpc"',
      'scheduled_delay_millis = 10', 'timeout_millis = 3000', '[components.config.opentelemetry.logs]', 'enabled = true',
    ].join('\n'),
  );
  return { dir, authority, receiver, toml };
}

/** One recorded chat through a memory-relay plugin on `toml`, shut down; its OTLP outputs. */
async function runChat(toml: string): Promise<Output[]> {
  const plugin = createNemoRelayPlugin({ backend: createMemoryRelay({ logger: silentLogger }), env: { HERMES_NEMO_RELAY_PLUGINS_TOML: toml }, logger: silentLogger });
  const hooks = new HookRegistry({ logger: silentLogger });
  plugin.register(hooks);
  const lines = fs.readFileSync(path.join(STREAMS_DIR, streamFileName('plain-chat')), 'utf8').split('\n').filter((line) => line.trim() !== '');
  for (const line of lines.map((text) => JSON.parse(text) as HookLine)) hooks.emit(line.hook as HookName, structuredClone(line.payload) as never);
  await plugin.shutdown!({ timeoutMs: 8000 });
  return (plugin.status!().outputs as Output[]).filter((o) => o.kind.startsWith('otlp-'));
}

function expectDelivered(outputs: Output[], receiver: Receiver): void {
  expect(outputs.map((o) => o.kind).sort()).toEqual(['otlp-logs', 'otlp-traces']);
  for (const output of outputs) expect(output, JSON.stringify(output)).toMatchObject({ failed: 0, dropped: 0 });
  for (const output of outputs) expect(output.sent, JSON.stringify(output)).toBeGreaterThan(0);
  expect(receiver.spans().length).toBe(outputs.find((o) => o.kind === 'otlp-traces')!.sent);
  expect(receiver.logs().length).toBe(outputs.find((o) => o.kind === 'otlp-logs')!.sent);
}

describe('OTLP over gRPC trusts the certificate authorities the https outputs trust', () => {
  it('a CA named by SSL_CERT_FILE: traces and logs are delivered', async () => {
    const setup = await setUp('grpc-trust-file');
    if (setup === undefined) return;
    withProcessEnv({ ...NO_TRUST_VARS, SSL_CERT_FILE: setup.authority.caFile });
    expectDelivered(await runChat(setup.toml), setup.receiver);
  });

  it('a CA in a directory of SSL_CERT_DIR: traces and logs are delivered', async () => {
    const setup = await setUp('grpc-trust-dir');
    if (setup === undefined) return;
    const certs = path.join(setup.dir, 'company-certs');
    fs.mkdirSync(certs);
    fs.copyFileSync(setup.authority.caFile, path.join(certs, 'company-ca.crt'));
    withProcessEnv({ ...NO_TRUST_VARS, SSL_CERT_DIR: `${path.join(setup.dir, 'absent')}:${certs}` });
    expectDelivered(await runChat(setup.toml), setup.receiver);
  });

  it('NODE_EXTRA_CA_CERTS, Deno included (whose node:tls does not read it): traces and logs are delivered', async () => {
    const setup = await setUp('grpc-trust-extra');
    if (setup === undefined) return;
    withProcessEnv({ ...NO_TRUST_VARS, NODE_EXTRA_CA_CERTS: setup.authority.caFile });
    expectDelivered(await runChat(setup.toml), setup.receiver);
  });

  it('a CA nobody names: nothing is delivered, not retried (counted as failed, not dropped), and each lastError says which variables fix it', async () => {
    const setup = await setUp('grpc-trust-none');
    if (setup === undefined) return;
    withProcessEnv({ ...NO_TRUST_VARS });
    const outputs = await runChat(setup.toml);
    expect(outputs.map((o) => o.kind).sort()).toEqual(['otlp-logs', 'otlp-traces']);
    for (const output of outputs) {
      expect(output.sent ?? 0).toBe(0);
      expect(output.lastError, JSON.stringify(output)).toMatch(TRUST_HINT);
      // The same handshake fails until the host's trust changes: failed at once, no retry held the shutdown.
      expect(output.failed, JSON.stringify(output)).toBeGreaterThan(0);
      expect(output.dropped ?? 0, JSON.stringify(output)).toBe(0);
      expect(output.lastError).not.toMatch(/retry/);
      // The session's items go in one batch: one attempt (its retries were three more).
      expect(output.errors, JSON.stringify(output)).toBe(1);
      // Named once, not again by each layer the failure passes through.
      expect(output.lastError?.match(/not signed by a trusted CA/g), output.lastError).toHaveLength(1);
    }
    expect(setup.receiver.requests).toEqual([]);
  });

  it('GRPC_DEFAULT_SSL_ROOTS_FILE_PATH set: grpc-js\'s own roots, that file, as before (grpc-js reads it when it loads: a process of its own)', async () => {
    const setup = await setUp('grpc-trust-grpc-roots');
    if (setup === undefined) return;
    const child = await spawnChild(
      `const { createNemoRelayPlugin, HookRegistry } = await import(${dist('src/index.js')});
const plugin = createNemoRelayPlugin({ backend: 'memory', env: { HERMES_NEMO_RELAY_PLUGINS_TOML: ${JSON.stringify(setup.toml)} }, logger: { debug() {}, info() {}, warn() {}, error() {} } });
const hooks = new HookRegistry();
plugin.register(hooks);
hooks.emit('on_session_start', { session_id: 's1', model: 'm', platform: 'cli' });
hooks.emit('on_session_end', { session_id: 's1' });
await plugin.shutdown({ timeoutMs: 8000 });
console.log('@@RESULT@@' + JSON.stringify(plugin.status().outputs.find((o) => o.kind === 'otlp-traces')));`,
      { env: { SSL_CERT_FILE: undefined, SSL_CERT_DIR: undefined, NODE_EXTRA_CA_CERTS: undefined, GRPC_DEFAULT_SSL_ROOTS_FILE_PATH: setup.authority.caFile, DENO_NO_UPDATE_CHECK: '1' } },
    );
    expect(child.result, child.stderr).toMatchObject({ failed: 0, dropped: 0 });
    expect(setup.receiver.spans().length).toBeGreaterThan(0);
  });
});

describe('doctor checks an https gRPC endpoint against the same authorities', () => {
  interface DoctorReport {
    destinations: { kind: string; status: string; reason?: string }[];
    problems: { level: string; code: string; field?: string; message: string }[];
  }
  const doctor = async (toml: string, backend: string) =>
    JSON.parse((await cliInProcess(['doctor', '--plugins-toml', toml, '--json'], { env: { NEMO_RELAY_HOOKS_BACKEND: backend } })).stdout) as DoctorReport;

  it('memory: ok with the CA in SSL_CERT_FILE, with no warning; without it, unreachable with the fix named', async () => {
    const setup = await setUp('grpc-trust-doctor');
    if (setup === undefined) return;
    withProcessEnv({ ...NO_TRUST_VARS, SSL_CERT_FILE: setup.authority.caFile });
    const trusted = await doctor(setup.toml, 'memory');
    expect(trusted.destinations.map((d) => [d.kind, d.status])).toEqual([['otlp-traces', 'ok'], ['otlp-logs', 'ok']]);
    expect(trusted.problems.filter((p) => p.code.startsWith('destination.'))).toEqual([]);
    resetHttpsTrust();
    process.env.SSL_CERT_FILE = '';
    const refused = await doctor(setup.toml, 'memory');
    expect(refused.destinations.map((d) => d.status)).toEqual(['unreachable', 'unreachable']);
    expect(refused.destinations[0]?.reason).toMatch(/^TLS handshake failed: .*name it in SSL_CERT_FILE or SSL_CERT_DIR/);
  });

  it.skipIf(!nativeAvailable)('native: the handshake is ok, and a warning says native\'s gRPC refuses such a CA and names http_binary', async () => {
    const setup = await setUp('grpc-trust-doctor-native');
    if (setup === undefined) return;
    withProcessEnv({ ...NO_TRUST_VARS, SSL_CERT_FILE: setup.authority.caFile });
    const report = await doctor(setup.toml, 'native');
    expect(report.destinations.map((d) => d.status)).toEqual(['ok', 'ok']);
    const warnings = report.problems.filter((p) => p.code === 'destination.native_grpc_certificate');
    expect(warnings.map((w) => [w.level, w.field])).toEqual([['warning', 'opentelemetry.endpoints[0]'], ['warning', 'opentelemetry.logs']]);
    expect(warnings[0]!.message).toMatch(/native's gRPC exporter does not trust the system store, SSL_CERT_FILE or SSL_CERT_DIR .*transport = "http_binary"/);
  });
});
