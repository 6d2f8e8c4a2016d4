// plugins.toml activates once per process (until shutdown()): a rejected
// document is reported once, calls crossing the execution middleware are
// managed in every session, and a close that fails cannot leave later
// sessions without their outputs, because nothing closes between sessions.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createNemoRelayPlugin } from '../../src/index.ts';
import { loadSettings } from '../../src/plugin/config/settings.ts';
import { HookRegistry } from '../../src/hooks/index.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import type { PluginConfigActivation, RelayBackend } from '../../src/relay/contract.ts';
import { createFakeRelay } from '../../src/testing/index.ts';
import { tempDir } from '../contract/backends.ts';
import { writeObservabilityToml } from '../support/plugins-toml.ts';

function observabilityToml(dir: string, extraToml = ''): string {
  return writeObservabilityToml(dir, { atofDir: path.join(dir, 'events'), atifDir: path.join(dir, 'trajectories'), extraToml });
}

describe('plugins.toml activation, once per process', () => {
  it('warns once about a rejected document, however many sessions follow', async () => {
    const warnings: string[] = [];
    const fake = createFakeRelay({ pluginConfigError: new Error('invalid config: nope') });
    const plugin = createNemoRelayPlugin({
      backend: fake,
      env: { HERMES_NEMO_RELAY_PLUGINS_TOML: observabilityToml(tempDir('rejected-once')) },
      logger: { ...silentLogger, warn: (message: string) => void warnings.push(message) },
    });
    for (const id of ['a', 'b', 'c']) {
      plugin.handlers.on_session_start({ session_id: id });
      plugin.handlers.on_session_finalize({ session_id: id });
      await plugin.flush();
    }
    await plugin.shutdown();
    expect(warnings.filter((message) => message.includes('rejected plugins.toml'))).toHaveLength(1);
    expect(fake.callsOf('initializePluginConfig')).toHaveLength(1);
    expect(fake.callsOf('pushScope')).toHaveLength(3);
  });

  it('a rejected document leaves none of the folders it named behind; a folder something was written into stays', async () => {
    const dir = tempDir('rejected-folders');
    const fake = createFakeRelay({ pluginConfigError: new Error('invalid config: nope') });
    const toml = writeObservabilityToml(dir, { atofDir: path.join(dir, 'out', 'events'), atifDir: path.join(dir, 'out', 'trajectories') });
    const plugin = createNemoRelayPlugin({ backend: fake, env: { HERMES_NEMO_RELAY_PLUGINS_TOML: toml }, logger: silentLogger });
    plugin.handlers.on_session_start({ session_id: 's' });
    await plugin.shutdown();
    expect(fake.callsOf('initializePluginConfig')).toHaveLength(1);
    expect(existsSync(path.join(dir, 'out'))).toBe(false);

    // A folder that existed before, or one a failed activation wrote into, is not the plugin's to remove.
    mkdirSync(path.join(dir, 'out', 'trajectories'), { recursive: true });
    const writer = createFakeRelay({ pluginConfigError: new Error('invalid config: nope') });
    const original = writer.initializePluginConfig.bind(writer);
    writer.initializePluginConfig = async (document, options) => {
      writeFileSync(path.join(dir, 'out', 'events', 'events.jsonl'), '');
      return original(document, options);
    };
    const second = createNemoRelayPlugin({ backend: writer, env: { HERMES_NEMO_RELAY_PLUGINS_TOML: toml }, logger: silentLogger });
    second.handlers.on_session_start({ session_id: 's' });
    await second.shutdown();
    expect(existsSync(path.join(dir, 'out', 'events', 'events.jsonl'))).toBe(true);
    expect(existsSync(path.join(dir, 'out', 'trajectories'))).toBe(true);
  });

  it('an active document keeps the folders it named', async () => {
    await import('../../src/plugin/document-checks.ts');
    const dir = tempDir('active-folders');
    const plugin = createNemoRelayPlugin({ backend: 'memory', env: { HERMES_NEMO_RELAY_PLUGINS_TOML: observabilityToml(dir) }, logger: silentLogger });
    plugin.handlers.on_session_start({ session_id: 's' });
    await plugin.flush();
    expect(plugin.status().pluginConfig.active).toBe(true);
    await plugin.shutdown();
    expect(existsSync(path.join(dir, 'events'))).toBe(true);
    expect(existsSync(path.join(dir, 'trajectories'))).toBe(true);
  });

  it('runs every call that crosses tool_execution managed, in every session, the first ones included', async () => {
    // The checks a document needs load with the first plugin that has one; loaded from dist/ that is quick, but
    // vitest transforms them inside the activation's wait, which on a loaded machine exceeded its bound.
    await import('../../src/plugin/document-checks.ts');
    const dir = tempDir('managed-every-session');
    const file = observabilityToml(dir, '\n[[components]]\nkind = "adaptive"\nenabled = true\n');
    const hooks = new HookRegistry();
    const plugin = createNemoRelayPlugin({ backend: 'memory', env: { HERMES_NEMO_RELAY_PLUGINS_TOML: file }, logger: silentLogger });
    plugin.register(hooks);
    // A host that relies on managed execution emits no tool hooks: the middleware is the only record.
    for (const session of ['s1', 's2', 's3']) {
      hooks.emit('on_session_start', { session_id: session });
      for (let i = 0; i < 3; i++) {
        const result = await hooks.execute('tool_execution', { session_id: session, tool_call_id: `${session}-tc${i}`, tool_name: 'read_file', args: { i } }, () => ({ content: 'ok' }));
        expect(result).toEqual({ content: 'ok' });
      }
      hooks.emit('on_session_finalize', { session_id: session });
    }
    await plugin.shutdown();
    const events = readFileSync(path.join(dir, 'events', 'events.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    const toolStarts = events.filter((e) => e.category === 'tool' && e.scope_category === 'start');
    expect(toolStarts).toHaveLength(9);
  });

  it('counts and says the calls that waited past the bound for an activation and ran unmanaged', async () => {
    const fake = createFakeRelay();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const backend: RelayBackend = Object.assign(Object.create(null) as object, fake, {
      async initializePluginConfig(...args: Parameters<RelayBackend['initializePluginConfig']>): Promise<PluginConfigActivation> {
        await held;
        return fake.initializePluginConfig(...args);
      },
    }) as RelayBackend;
    const warnings: string[] = [];
    const file = observabilityToml(tempDir('unmanaged-counted'), '\n[[components]]\nkind = "adaptive"\nenabled = true\n');
    const hooks = new HookRegistry();
    const plugin = createNemoRelayPlugin({ backend, env: { HERMES_NEMO_RELAY_PLUGINS_TOML: file }, logger: { ...silentLogger, warn: (message: string) => void warnings.push(message) } });
    plugin.register(hooks);
    hooks.emit('on_session_start', { session_id: 's' });
    const results = await Promise.all([0, 1].map((i) => hooks.execute('tool_execution', { session_id: 's', tool_call_id: `tc${i}`, tool_name: 'read_file', args: { i } }, () => ({ content: `ok${i}` }))));
    expect(results).toEqual([{ content: 'ok0' }, { content: 'ok1' }]);
    expect(plugin.status().counters.unmanagedCalls).toBe(2);
    expect(warnings.filter((message) => message.includes('ran unmanaged'))).toHaveLength(1);
    release();
    await plugin.shutdown();
  });

  it('keeps recording later sessions when closing the activation would fail: it is closed only at shutdown', async () => {
    const fake = createFakeRelay();
    let closes = 0;
    const backend: RelayBackend = Object.assign(Object.create(null) as object, fake, {
      async initializePluginConfig(...args: Parameters<RelayBackend['initializePluginConfig']>): Promise<PluginConfigActivation> {
        const activation = await fake.initializePluginConfig(...args);
        return {
          report: activation.report,
          close: async () => {
            closes += 1;
            await activation.close();
            throw new Error('native close failed');
          },
        };
      },
    }) as RelayBackend;
    const plugin = createNemoRelayPlugin({ backend, env: { HERMES_NEMO_RELAY_PLUGINS_TOML: observabilityToml(tempDir('close-fails')) }, logger: silentLogger });
    plugin.handlers.on_session_start({ session_id: 'a' });
    plugin.handlers.on_session_finalize({ session_id: 'a' });
    await plugin.flush();
    plugin.handlers.on_session_start({ session_id: 'b' });
    plugin.handlers.pre_llm_call({ session_id: 'b', turn_id: 't1' });
    expect(closes).toBe(0);
    expect(plugin.status().pluginConfig.active).toBe(true);
    expect(plugin.status().queuedHooks).toBe(0);
    expect(fake.callsOf('pushScope')).toHaveLength(2);
    await plugin.shutdown();
    expect(closes).toBe(1);
    expect(fake.callsOf('initializePluginConfig')).toHaveLength(1);
  });
});

describe('an ATIF table in plugins.toml that writes nothing', () => {
  function tomlWithEmptyAtif(dir: string): string {
    const file = path.join(dir, 'plugins.toml');
    writeFileSync(
      file,
      `version = 1\n\n[[components]]\nkind = "observability"\nenabled = true\n\n[components.config]\nversion = 4\n\n[components.config.atof]\nenabled = true\n\n[[components.config.atof.sinks]]\ntype = "file"\noutput_directory = ${JSON.stringify(path.join(dir, 'events'))}\nfilename = "events.jsonl"\nmode = "overwrite"\n\n[components.config.atif]\n`,
    );
    return file;
  }

  it('gets a diagnostic', () => {
    const dir = tempDir('empty-atif');
    const { diagnostics } = loadSettings({ HERMES_NEMO_RELAY_PLUGINS_TOML: tomlWithEmptyAtif(dir) });
    expect(diagnostics).toContainEqual(expect.objectContaining({ code: 'plugins_toml.atif_writes_nothing', level: 'warning' }));
  });

  it('enabled without an output_directory but with storage: the warning says the recovery copies go to the working directory', () => {
    const dir = tempDir('atif-storage-no-folder');
    const file = path.join(dir, 'plugins.toml');
    writeFileSync(file, `version = 1\n\n[[components]]\nkind = "observability"\n\n[components.config]\nversion = 4\n\n[components.config.atif]\nenabled = true\n\n[[components.config.atif.storage]]\ntype = "http"\nendpoint = "http://127.0.0.1:9/upload"\n`);
    const { diagnostics } = loadSettings({ NEMO_RELAY_HOOKS_PLUGINS_TOML: file });
    const warning = diagnostics.find((d) => d.code === 'plugins_toml.atif_in_working_directory');
    expect(warning?.message).toContain(`keeps the recovery copy of each trajectory whose upload fails in the working directory (${process.cwd()})`);
    expect(diagnostics.map((d) => d.code)).not.toContain('plugins_toml.atif_writes_nothing');
  });

  it('does not take ATIF from the HERMES_NEMO_RELAY_ATIF_* settings', async () => {
    const dir = tempDir('empty-atif-env');
    const fake = createFakeRelay();
    const plugin = createNemoRelayPlugin({
      backend: fake,
      env: { HERMES_NEMO_RELAY_PLUGINS_TOML: tomlWithEmptyAtif(dir) },
      settings: { atifEnabled: true, atifOutputDirectory: path.join(dir, 'atif') },
      logger: silentLogger,
    });
    plugin.handlers.on_session_start({ session_id: 's1' });
    await plugin.flush();
    expect(plugin.status().pluginConfig.active).toBe(true);
    expect(fake.callsOf('registerAtifExporter')).toHaveLength(1);
    await plugin.shutdown();
  });
});

describe('the plugin writes ATIF only where atifTarget() names a folder', () => {
  it('registers no ATIF exporter when ATIF is enabled without an output folder', async () => {
    const fake = createFakeRelay();
    const plugin = createNemoRelayPlugin({ backend: fake, env: {}, settings: { atifEnabled: true, atifOutputDirectory: '' }, logger: silentLogger });
    plugin.handlers.on_session_start({ session_id: 's1' });
    plugin.handlers.on_session_finalize({ session_id: 's1' });
    await plugin.shutdown();
    expect(fake.callsOf('registerAtifExporter')).toEqual([]);
  });
});

describe('the idle TTL', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('closes an idle session on a timer, without waiting for another session to open', async () => {
    vi.useFakeTimers();
    const fake = createFakeRelay();
    const plugin = createNemoRelayPlugin({ backend: fake, env: {}, logger: silentLogger, sessionIdleTtlMs: 1_000 });
    plugin.handlers.on_session_start({ session_id: 'idle' });
    vi.advanceTimersByTime(500);
    expect(fake.callsOf('popScope')).toEqual([]);
    vi.advanceTimersByTime(2_500);
    expect(fake.callsOf('popScope').map((call) => (call.args.handle as { name: string }).name)).toEqual([expect.stringMatching(/-session-idle$/)]);
    expect(plugin.status().counters.evictedSessions).toBe(1);
    expect(plugin.status().sessions).toBe(0);
    vi.useRealTimers();
    await plugin.shutdown();
  });
});
