// OTLP without a plugins.toml: HERMES_NEMO_RELAY_OTLP_ENABLED plus the
// standard OTEL_* variables (or typed settings) send traces from the memory
// relay on every runtime, and the same settings give native the same spans.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HookRegistry } from '../../src/hooks/registry.ts';
import type { HookName } from '../../src/hooks/names.ts';
import { createNemoRelayPlugin, type NemoRelaySettingsOverrides } from '../../src/index.ts';
import { loadSettings } from '../../src/plugin/config/settings.ts';
import { validatePluginConfig } from '../../src/formats/plugins-toml/validate.ts';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import { loadNativeRelay } from '../../native/index.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import type { RelayBackend } from '../../src/relay/contract.ts';
import { readStream } from '../differential/replay.ts';
import { nativeAvailable, nativeLoadError, tempDir } from '../contract/backends.ts';
import { startGrpcReceiver, startHttpReceiver, type Receiver } from '../support/otlp-receiver.ts';
import { normalizeSpans, SDK_RESOURCE_KEYS } from '../support/otlp-normalize.ts';

const STREAMS = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../fixtures/streams');
const lines = readStream(path.join(STREAMS, 'subagent.hooks.jsonl'));

const open: Receiver[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((rx) => rx.close()));
});

async function run(backend: RelayBackend, env: Record<string, string>, settings?: NemoRelaySettingsOverrides) {
  const plugin = createNemoRelayPlugin({ backend, env, logger: silentLogger, ...(settings ? { settings } : {}) });
  const hooks = new HookRegistry({ logger: silentLogger });
  const unregister = plugin.register(hooks);
  for (const line of lines) hooks.emit(line.hook as HookName, structuredClone(line.payload) as never);
  await plugin.shutdown();
  unregister();
  const status = plugin.status();
  await backend.shutdown?.();
  return status;
}

describe('OTLP settings from the environment', () => {
  it('expresses them as a plugins.toml opentelemetry section: gen_ai by default, /v1/traces added to the base URL, headers and resource parsed', () => {
    const { settings, diagnostics } = loadSettings({
      HERMES_NEMO_RELAY_OTLP_ENABLED: '1',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector:4318/',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc, x-team=agents',
      OTEL_SERVICE_NAME: 'my-agent',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod,service.name=ignored',
    });
    expect(diagnostics).toEqual([]);
    const validation = validatePluginConfig(settings.pluginsConfig);
    expect(validation.diagnostics).toEqual([]);
    expect(validation.observability?.opentelemetry.traces).toMatchObject([
      {
        type: 'gen_ai',
        transport: 'http_binary',
        url: 'https://collector:4318/v1/traces',
        headers: { authorization: 'Bearer abc', 'x-team': 'agents' },
        serviceName: 'my-agent',
        resourceAttributes: { 'deployment.environment': 'prod' },
      },
    ]);
  });

  it('uses OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as is, grpc from OTEL_EXPORTER_OTLP_PROTOCOL, and reports bad values', () => {
    const { settings, diagnostics } = loadSettings({
      HERMES_NEMO_RELAY_OTLP_ENABLED: 'true',
      HERMES_NEMO_RELAY_OTLP_TYPE: 'phoenix',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://collector:4317',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
    });
    expect(diagnostics.map((d) => d.field)).toEqual(['HERMES_NEMO_RELAY_OTLP_TYPE']);
    expect(validatePluginConfig(settings.pluginsConfig).observability?.opentelemetry.traces).toMatchObject([
      { type: 'gen_ai', transport: 'grpc', url: 'https://collector:4317' },
    ]);
    const json = loadSettings({ HERMES_NEMO_RELAY_OTLP_ENABLED: '1', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
    expect(json.diagnostics.map((d) => d.field)).toEqual(['OTEL_EXPORTER_OTLP_PROTOCOL']);
  });

  it('leaves out a header entry native would refuse the whole document for, and keeps the later of two names differing in case, with warnings that quote nothing', () => {
    const { settings, diagnostics } = loadSettings({
      HERMES_NEMO_RELAY_OTLP_ENABLED: '1',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector:4318/base?tenant=a',
      HERMES_NEMO_RELAY_OTLP_HEADERS: 'x-team=agents,bad name=SECRET-1,x-line=a%0Ab%20SECRET-2,X-Team=final,x-empty=',
    });
    expect(diagnostics.map((d) => d.message)).toEqual([
      expect.stringContaining('entry 2: its name is not an HTTP header name'),
      expect.stringContaining('entry 3: its value has a control character'),
      expect.stringContaining('entry 4 names the header of entry 1 again'),
    ]);
    expect(JSON.stringify(diagnostics)).not.toMatch(/SECRET/);
    // Each warning names the variable the headers were read from, not OTEL_EXPORTER_OTLP_HEADERS, which is unset.
    expect(diagnostics.map((d) => d.field)).toEqual(['HERMES_NEMO_RELAY_OTLP_HEADERS', 'HERMES_NEMO_RELAY_OTLP_HEADERS', 'HERMES_NEMO_RELAY_OTLP_HEADERS']);
    for (const d of diagnostics) expect(d.message).toMatch(/^HERMES_NEMO_RELAY_OTLP_HEADERS entry \d/);
    const validation = validatePluginConfig(settings.pluginsConfig);
    expect(validation.diagnostics).toEqual([]);
    expect(validation.observability?.opentelemetry.traces).toMatchObject([{ url: 'https://collector:4318/base/v1/traces?tenant=a', headers: { 'X-Team': 'final', 'x-empty': '' } }]);
  });

  it('names OTEL_EXPORTER_OTLP_TRACES_HEADERS, or the otlpHeaders setting, in a warning about an entry they gave (and otlpResourceAttributes)', () => {
    const traces = loadSettings({ HERMES_NEMO_RELAY_OTLP_ENABLED: '1', OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'bad name=SECRET', OTEL_EXPORTER_OTLP_HEADERS: 'x=1' });
    expect(traces.diagnostics.map((d) => [d.field, d.message.split(':')[0]])).toEqual([['OTEL_EXPORTER_OTLP_TRACES_HEADERS', 'OTEL_EXPORTER_OTLP_TRACES_HEADERS entry 1']]);
    const typed = loadSettings({ HERMES_NEMO_RELAY_OTLP_ENABLED: '1', OTEL_EXPORTER_OTLP_HEADERS: 'x=1' }, { otlpHeaders: 'bad name=SECRET' });
    expect(typed.diagnostics.map((d) => [d.field, d.message.split(':')[0]])).toEqual([['otlpHeaders', 'otlpHeaders entry 1']]);
    expect(JSON.stringify([traces.diagnostics, typed.diagnostics])).not.toMatch(/SECRET/);
    const resource = loadSettings({ HERMES_NEMO_RELAY_OTLP_ENABLED: '1' }, { otlpResourceAttributes: 'no-equals-sign' });
    expect(resource.diagnostics.map((d) => [d.field, d.message.split(' is ')[0]])).toEqual([['otlpResourceAttributes', 'otlpResourceAttributes entry 1']]);
  });

  it.skipIf(!nativeAvailable)(`sends those headers on native too, where the entries left out would have refused the document${nativeAvailable ? '' : ` (skipped: ${nativeLoadError})`}`, async () => {
    const rx = await startHttpReceiver();
    open.push(rx);
    const env = { HERMES_NEMO_RELAY_OTLP_ENABLED: '1', OTEL_EXPORTER_OTLP_ENDPOINT: rx.url, HERMES_NEMO_RELAY_OTLP_HEADERS: 'x-team=agents,bad name=1,X-Team=final' };
    await run(loadNativeRelay({ logger: silentLogger }), env);
    expect(rx.requests.length).toBeGreaterThan(0);
    expect(rx.requests[0]!.headers['x-team']).toBe('final');
    rx.requests.length = 0;
    await run(createMemoryRelay({ logger: silentLogger }), env);
    expect(rx.requests[0]!.headers['x-team']).toBe('final');
  });

  it('leaves a plugins.toml in charge, with a diagnostic', () => {
    const { diagnostics } = loadSettings({ HERMES_NEMO_RELAY_OTLP_ENABLED: '1', HERMES_NEMO_RELAY_PLUGINS_TOML: '/nonexistent/plugins.toml' });
    expect(diagnostics.map((d) => d.code)).toContain('settings.otlp_with_plugins_toml');
  });

  it('sends traces from the memory relay with only environment variables, and still writes the ATOF file', async () => {
    const rx = await startHttpReceiver();
    open.push(rx);
    const dir = tempDir('otlp-env');
    const status = await run(createMemoryRelay({ logger: silentLogger }), {
      HERMES_NEMO_RELAY_OTLP_ENABLED: '1',
      OTEL_EXPORTER_OTLP_ENDPOINT: rx.url,
      HERMES_NEMO_RELAY_OTLP_HEADERS: 'x-api-key=k-1',
      OTEL_SERVICE_NAME: 'env-agent',
      HERMES_NEMO_RELAY_ATOF_ENABLED: '1',
      HERMES_NEMO_RELAY_ATOF_OUTPUT_DIRECTORY: dir,
    });
    const spans = rx.spans();
    expect(spans.map((s) => s.name)).toContain('invoke_agent hermes-session-parent-1');
    expect(spans.every((s) => s.resource['service.name'] === 'env-agent')).toBe(true);
    expect(rx.requests[0]!.headers['x-api-key']).toBe('k-1');
    expect(rx.requests[0]!.path).toBe('/v1/traces');
    const atof = fs.readFileSync(path.join(dir, 'hermes-atof.jsonl'), 'utf8').trim().split('\n');
    expect(atof.filter((l) => l.includes('"scope_category":"end"')).length).toBe(spans.length);
    expect(status.outputs.find((o) => o.kind === 'otlp-traces')).toMatchObject({ sent: spans.length, failed: 0, dropped: 0 });
  });

  it('sends over gRPC with typed settings', async () => {
    const rx = await startGrpcReceiver();
    open.push(rx);
    await run(createMemoryRelay({ logger: silentLogger }), {}, { otlpEnabled: true, otlpType: 'full', otlpProtocol: 'grpc', otlpEndpoint: rx.url });
    // Typed settings, no HERMES_NEMO_RELAY_* variable: the session scope says the agent (the host's package name here).
    expect(rx.spans().map((s) => s.name)).toContain('nemo-relay-hooks-session-parent-1');
  });

  it.skipIf(!nativeAvailable)(`gives native the same spans from the same settings${nativeAvailable ? '' : ` (skipped: ${nativeLoadError})`}`, async () => {
    const rx = await startHttpReceiver();
    open.push(rx);
    const env = { HERMES_NEMO_RELAY_OTLP_ENABLED: '1', HERMES_NEMO_RELAY_OTLP_TYPE: 'openinference', OTEL_EXPORTER_OTLP_ENDPOINT: rx.url, OTEL_RESOURCE_ATTRIBUTES: 'team=agents' };
    await run(loadNativeRelay({ logger: silentLogger }), env);
    const theirs = [...rx.spans()];
    rx.requests.length = 0;
    await run(createMemoryRelay({ logger: silentLogger }), env);
    const ours = rx.spans();
    expect(ours.length).toBeGreaterThan(0);
    expect(normalizeSpans(ours, { ignoreResourceKeys: SDK_RESOURCE_KEYS })).toEqual(normalizeSpans(theirs, { ignoreResourceKeys: SDK_RESOURCE_KEYS }));
  });
});
