import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HookRegistry } from '../../src/hooks/registry.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { createNemoRelayPlugin } from '../../src/index.ts';
import { loadSettings, type NemoRelaySettingsOverrides } from '../../src/plugin/config/settings.ts';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';

const tempDir = () => mkdtempSync(path.join(tmpdir(), 'nrh-settings-'));
const diagnosticFields = (overrides: unknown) =>
  loadSettings({}, overrides as NemoRelaySettingsOverrides).diagnostics.map((d) => d.field);

describe('typed settings from the host', () => {
  it('ignores an override of the wrong type with a diagnostic, keeping the default', () => {
    const host = { name: 'my-agent', fileStem: 'my-agent', version: '1.0.0' };
    const loaded = loadSettings({}, { atifEnabled: true, atifFilenameTemplate: 5 } as unknown as NemoRelaySettingsOverrides, { host, processEnv: {} });
    expect(loaded.settings.atifFilenameTemplate).toBe('my-agent-atif-{session_id}.json');
    expect(loaded.settings.atifEnabled).toBe(true);
    expect(loaded.diagnostics).toContainEqual(
      expect.objectContaining({ code: 'settings.invalid_value', field: 'settings.atifFilenameTemplate', message: expect.stringContaining('must be a string, got 5') }),
    );
  });

  it('accepts only the listed words for the ATOF mode and the subagent export mode', () => {
    const loaded = loadSettings({ HERMES_NEMO_RELAY_ATOF_MODE: 'overwrite' }, { atofMode: 'sideways', atifSubagentExportMode: 'some' } as unknown as NemoRelaySettingsOverrides);
    expect(loaded.settings.atofMode).toBe('overwrite');
    expect(loaded.settings.atifSubagentExportMode).toBe('embedded');
    expect(loaded.diagnostics.map((d) => d.field)).toEqual(['settings.atofMode', 'settings.atifSubagentExportMode']);
  });

  it('reports unknown keys, derived fields and settings that are not an object', () => {
    expect(diagnosticFields({ atofEnabeld: true })).toEqual(['settings.atofEnabeld']);
    expect(loadSettings({}, { atofEnabeld: true } as never, { processEnv: {} }).diagnostics[0]?.message).toContain('(did you mean atofEnabled?)');
    expect(diagnosticFields({ adaptiveEnabled: true })).toEqual(['settings.adaptiveEnabled']);
    expect(diagnosticFields('atof')).toEqual(['settings']);
    expect(diagnosticFields(null)).toEqual([]);
    expect(diagnosticFields(new Proxy({}, { ownKeys() { throw new Error('trap'); } }))).toEqual(['settings']);
  });

  it('names a variable with the prefix that it does not read (a typo changes nothing, so it is not silent)', () => {
    const loaded = loadSettings({ NEMO_RELAY_HOOKS_OTLP_ENDPOINT: 'http://collector:4318', HERMES_NEMO_RELAY_ATIF_ENABLE: '1', NEMO_RELAY_HOOKS_ATIF_ENABLED: '1', OTHER_TOOL_VAR: 'x' }, {}, { processEnv: {} });
    expect(loaded.diagnostics.filter((d) => d.code === 'settings.unknown_variable').map((d) => d.field)).toEqual(['NEMO_RELAY_HOOKS_OTLP_ENDPOINT', 'HERMES_NEMO_RELAY_ATIF_ENABLE']);
    expect(loaded.diagnostics.find((d) => d.field === 'NEMO_RELAY_HOOKS_OTLP_ENDPOINT')?.message).toContain('is not a variable the plugin reads, so it changes nothing');
    // The name a typo most likely meant, as for a misspelt option or plugins.toml key.
    expect(loaded.diagnostics.find((d) => d.field === 'HERMES_NEMO_RELAY_ATIF_ENABLE')?.message).toContain('(did you mean HERMES_NEMO_RELAY_ATIF_ENABLED?)');
    expect(loaded.settings.atifEnabled).toBe(true);
  });

  it("names OpenTelemetry's own variable for an OTLP setting given under the plugin's prefix (NEMO_RELAY_HOOKS_OTLP_ENDPOINT)", () => {
    const env = { NEMO_RELAY_HOOKS_OTLP_ENABLED: '1', NEMO_RELAY_HOOKS_OTLP_ENDPOINT: 'http://collector:4318', NEMO_RELAY_HOOKS_OTLP_PROTOCOL: 'grpc', NEMO_RELAY_HOOKS_OTLP_SERVICE_NAME: 'my-agent', HERMES_NEMO_RELAY_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' };
    const messages = Object.fromEntries(loadSettings(env, {}, { processEnv: {} }).diagnostics.filter((d) => d.code === 'settings.unknown_variable').map((d) => [d.field, d.message]));
    expect(Object.keys(messages)).toEqual(['NEMO_RELAY_HOOKS_OTLP_ENDPOINT', 'NEMO_RELAY_HOOKS_OTLP_PROTOCOL', 'NEMO_RELAY_HOOKS_OTLP_SERVICE_NAME', 'HERMES_NEMO_RELAY_OTLP_TRACES_ENDPOINT']);
    expect(messages.NEMO_RELAY_HOOKS_OTLP_ENDPOINT).toContain('(did you mean OTEL_EXPORTER_OTLP_ENDPOINT?)');
    expect(messages.NEMO_RELAY_HOOKS_OTLP_PROTOCOL).toContain('(did you mean OTEL_EXPORTER_OTLP_PROTOCOL?)');
    expect(messages.NEMO_RELAY_HOOKS_OTLP_SERVICE_NAME).toContain('(did you mean OTEL_SERVICE_NAME?)');
    expect(messages.HERMES_NEMO_RELAY_OTLP_TRACES_ENDPOINT).toContain('(did you mean OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?)');
  });

  it('lets register() succeed with bad settings, and records with the good ones', async () => {
    const dir = tempDir();
    for (const settings of [null, 42, { atofEnabled: true, atofOutputDirectory: dir, atofFilename: 'events.jsonl', atofMode: 'sideways', atifFilenameTemplate: 5 }]) {
      const hooks = new HookRegistry();
      const plugin = createNemoRelayPlugin({ backend: createMemoryRelay({ logger: silentLogger }), env: {}, logger: silentLogger, settings: settings as never });
      expect(() => plugin.register(hooks)).not.toThrow();
      hooks.emit('on_session_start', { session_id: 's1' });
      await plugin.shutdown();
    }
    expect(readdirSync(dir)).toEqual(['events.jsonl']);
  });
});

describe('plugins.toml path', () => {
  it('refuses a path that is not a string', () => {
    const loaded = loadSettings({}, { pluginsTomlPath: 42 } as unknown as NemoRelaySettingsOverrides);
    expect(loaded.settings.pluginsConfig).toBeNull();
    expect(loaded.diagnostics.map((d) => d.field)).toEqual(['settings.pluginsTomlPath']);
  });

  it('refuses a folder or a device with a diagnostic instead of reading it', () => {
    for (const target of [tempDir(), '/dev/zero']) {
      const loaded = loadSettings({ HERMES_NEMO_RELAY_PLUGINS_TOML: target });
      expect(loaded.settings.pluginsConfig).toBeNull();
      expect(loaded.diagnostics).toContainEqual(expect.objectContaining({ code: 'plugins_toml.unreadable', message: expect.stringContaining('not a regular file') }));
    }
  });

  const mkfifo = spawnSync('mkfifo', ['--help'], { encoding: 'utf8' });
  if (mkfifo.error) console.info(`[settings tests] FIFO case skipped: mkfifo is not available (${mkfifo.error.message})`);
  it.skipIf(Boolean(mkfifo.error))('refuses a FIFO instead of blocking the host on it', () => {
    const fifo = path.join(tempDir(), 'plugins.toml');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const loaded = loadSettings({ HERMES_NEMO_RELAY_PLUGINS_TOML: fifo });
    expect(loaded.diagnostics).toContainEqual(expect.objectContaining({ code: 'plugins_toml.unreadable', message: expect.stringContaining('not a regular file') }));
  });
});

describe('ATIF filename template', () => {
  it('warns up front about a template with a path in it', () => {
    const codes = (template: string) => loadSettings({ HERMES_NEMO_RELAY_ATIF_ENABLED: '1', HERMES_NEMO_RELAY_ATIF_OUTPUT_DIRECTORY: '/o', HERMES_NEMO_RELAY_ATIF_FILENAME_TEMPLATE: template }).diagnostics.map((d) => d.code);
    expect(codes('../../{session_id}.json')).toEqual(['settings.template_with_path']);
    expect(codes('runs/{session_id}.json')).toEqual(['settings.template_with_path']);
    expect(codes('trajectory-{session_id}.json')).toEqual([]);
  });
});

describe('ATIF file path with a folder part', () => {
  it('refuses a folder part that is a link planted out of the output folder', async () => {
    const { atifFilePath, UnsafeAtifPathError } = await import('../../src/plugin/atif-file.ts');
    const fsm = await import('node:fs');
    const osm = await import('node:os');
    const pathm = await import('node:path');
    const root = fsm.mkdtempSync(pathm.join(osm.tmpdir(), 'nrh-atif-link-'));
    const outside = fsm.mkdtempSync(pathm.join(osm.tmpdir(), 'nrh-atif-outside-'));
    fsm.symlinkSync(outside, pathm.join(root, 'sub'));
    expect(() => atifFilePath(root, 'sub/{session_id}.json', 's1')).toThrow(UnsafeAtifPathError);
    expect(atifFilePath(root, 'other/{session_id}.json', 's1')).toBe(pathm.join(root, 'other', 's1.json'));
  });
});

describe('a plugins.toml that records nothing', () => {
  // docs/operators/pricing.md and cache.md show documents with only a pricing or adaptive
  // component: used alone they turn the default outputs off and record nothing, and doctor said
  // "everything looks fine".
  const pricingOnly = 'version = 1\n\n[[components]]\nkind = "pricing"\n\n[[components.config.sources]]\ntype = "inline"\n\n[components.config.sources.catalog]\nversion = 1\n';
  const withObservability = `${pricingOnly}\n[[components]]\nkind = "observability"\n[components.config]\nversion = 4\n[components.config.atof]\nenabled = true\n[[components.config.atof.sinks]]\ntype = "file"\noutput_directory = "x"\nfilename = "e.jsonl"\n`;
  const write = (text: string): string => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'nrh-records-nothing-')), 'plugins.toml');
    writeFileSync(file, text);
    return file;
  };
  const codes = (env: Record<string, string>) => loadSettings(env).diagnostics.map((d) => `${d.level} ${d.code}`);

  it('gets a warning when nothing else records either', () => {
    expect(codes({ NEMO_RELAY_HOOKS_PLUGINS_TOML: write(pricingOnly) })).toContain('warning plugins_toml.records_nothing');
  });

  it('gets none when it has an observability component or a variable enables an output', () => {
    expect(codes({ NEMO_RELAY_HOOKS_PLUGINS_TOML: write(withObservability) })).not.toContain('warning plugins_toml.records_nothing');
    expect(codes({ NEMO_RELAY_HOOKS_PLUGINS_TOML: write(pricingOnly), NEMO_RELAY_HOOKS_ATOF_ENABLED: '1' })).not.toContain('warning plugins_toml.records_nothing');
  });

  // An operator's trial: `enabled = "yes"` on the observability component got, before the
  // relay's own rejection (`expected a boolean`), a warning that the document had no
  // observability component and should get one.
  it('gets none when its observability component has an enabled that is no boolean: the rejection says why', () => {
    const yes = withObservability.replace('kind = "observability"', 'kind = "observability"\nenabled = "yes"');
    expect(codes({ NEMO_RELAY_HOOKS_PLUGINS_TOML: write(yes) })).not.toContain('warning plugins_toml.records_nothing');
    expect(codes({ NEMO_RELAY_HOOKS_PLUGINS_TOML: write(withObservability.replace('kind = "observability"', 'kind = "observability"\nenabled = false')) })).toContain('warning plugins_toml.records_nothing');
  });
});

describe('an ATOF file name with a folder part', () => {
  // An operator's trial: NEMO_RELAY_HOOKS_ATOF_FILENAME=../x.jsonl wrote no ATOF file, which
  // status().diagnostics did not say (only a log line from the relay's registration).
  it('is an error diagnostic, said once, and nothing lands outside the folder', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'nrh-atof-name-'));
    const out = path.join(root, 'out');
    const lines: string[] = [];
    const logger = { debug() {}, info() {}, warn: (m: string) => void lines.push(m), error: (m: string) => void lines.push(m) };
    const plugin = createNemoRelayPlugin({
      backend: createMemoryRelay({ logger }),
      env: { NEMO_RELAY_HOOKS_ATOF_ENABLED: '1', NEMO_RELAY_HOOKS_ATOF_OUTPUT_DIRECTORY: out, NEMO_RELAY_HOOKS_ATOF_FILENAME: '../x.jsonl', NEMO_RELAY_HOOKS_ATIF_ENABLED: '0' },
      logger,
    });
    const hooks = new HookRegistry();
    plugin.register(hooks);
    hooks.emit('on_session_start', { session_id: 's1' });
    hooks.emit('on_session_finalize', { session_id: 's1' });
    await plugin.shutdown();
    expect(plugin.status().diagnostics).toContainEqual(expect.objectContaining({ level: 'error', code: 'settings.invalid_value', field: 'NEMO_RELAY_HOOKS_ATOF_FILENAME' }));
    expect(lines.filter((line) => line.includes('x.jsonl'))).toHaveLength(1);
    expect(readdirSync(root)).toEqual([]);
  });
});

describe('a plugins.toml the relay rejects', () => {
  // docs/cli/doctor.md's bad.plugins.toml: the warning said "falling back to the environment's
  // exporters" when the environment enabled none, so nothing at all was recorded.
  const rejectedToml = 'version = 1\n[[components]]\nkind = "observability"\n[components.config]\nversion = 4\n[components.config.atof]\nenabled = true\n[[components.config.atof.sinks]]\ntype = "file"\noutput_directory = "x"\nmode = "sideways"\n';
  async function warnings(env: Record<string, string>): Promise<string[]> {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'nrh-rejected-')), 'plugins.toml');
    writeFileSync(file, rejectedToml);
    const lines: string[] = [];
    const logger = { debug() {}, info() {}, warn: (m: string) => void lines.push(m), error: (m: string) => void lines.push(m) };
    const plugin = createNemoRelayPlugin({ backend: createMemoryRelay({ logger: silentLogger }), env: { NEMO_RELAY_HOOKS_PLUGINS_TOML: file, ...env }, logger });
    const hooks = new HookRegistry();
    plugin.register(hooks);
    hooks.emit('on_session_start', { session_id: 's1' });
    await plugin.shutdown();
    return lines.filter((line) => line.includes('rejected plugins.toml'));
  }

  it('says nothing is recorded when the environment enables no output either', async () => {
    const [line] = await warnings({});
    expect(line).toContain("falling back to the environment's exporters, which are off: nothing is recorded");
  });

  it('names no such loss when the environment enables an output', async () => {
    const [line] = await warnings({ NEMO_RELAY_HOOKS_ATOF_ENABLED: '1', NEMO_RELAY_HOOKS_ATOF_OUTPUT_DIRECTORY: mkdtempSync(path.join(tmpdir(), 'nrh-rejected-out-')) });
    expect(line).toContain("falling back to the environment's exporters:");
  });
});
