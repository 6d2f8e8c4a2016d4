import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/shared/logger.ts';
import { HookRegistry } from '../../src/hooks/registry.ts';
import { documentChecksNow } from '../../src/plugin/activation.ts';
import { createNemoRelayPlugin } from '../../src/index.ts';
import { createFakeRelay } from '../../src/testing/index.ts';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import { writeObservabilityToml } from '../support/plugins-toml.ts';

function tempDir(): string {
  return mkdtempSync(path.join(tmpdir(), 'nrh-lifecycle-'));
}

function observabilityToml(dir: string): string {
  return writeObservabilityToml(dir, { atofDir: path.join(dir, 'events'), atifDir: path.join(dir, 'trajectories') });
}

describe('plugin lifecycle', () => {
  it('says the backend was never chosen, not that it is loading, after a shutdown before any hook', async () => {
    const plugin = createNemoRelayPlugin({ backend: 'auto', settings: { outputs: false }, logger: silentLogger });
    expect(plugin.status().backend).toEqual({ kind: 'unresolved', reason: 'no hook has been handled yet' });
    await plugin.shutdown();
    expect(plugin.status().state).toBe('shutdown');
    expect(plugin.status().backend).toEqual({ kind: 'unresolved', reason: 'shut down before a backend was chosen' });
  });

  it('queues hooks while plugins.toml activates and replays them in order', async () => {
    const dir = tempDir();
    const fake = createFakeRelay();
    // The activation starts at the first hook once the document checks are loaded (the first plugin with a document loads them).
    const checksLoaded = documentChecksNow() !== undefined;
    const plugin = createNemoRelayPlugin({
      backend: fake,
      env: { HERMES_NEMO_RELAY_PLUGINS_TOML: observabilityToml(dir) },
      logger: silentLogger,
    });
    plugin.handlers.on_session_start({ session_id: 's1' });
    plugin.handlers.pre_llm_call({ session_id: 's1', turn_id: 't1' });
    expect(plugin.status().queuedHooks).toBe(2);
    expect(fake.ops()).toEqual(checksLoaded ? ['initializePluginConfig'] : []);
    await plugin.flush();
    expect(fake.ops()).toEqual(['initializePluginConfig', 'pushScope', 'mark', 'flush']);
    expect(plugin.status().queuedHooks).toBe(0);
  });

  it('records what a queued payload said when it was emitted, not after the host mutated it', async () => {
    const dir = tempDir();
    const fake = createFakeRelay();
    const plugin = createNemoRelayPlugin({
      backend: fake,
      env: { HERMES_NEMO_RELAY_PLUGINS_TOML: observabilityToml(dir) },
      logger: silentLogger,
    });
    const payload = { session_id: 's1', status: 'before' };
    plugin.handlers.pre_approval_request(payload);
    payload.status = 'after';
    await plugin.flush();
    const mark = fake.callsOf('mark')[0]!;
    expect((mark.args.data as { status: string }).status).toBe('before');
  });

  it('activates plugins.toml once per process: the next session after the last one closed records through the same activation', async () => {
    const dir = tempDir();
    const fake = createFakeRelay();
    const plugin = createNemoRelayPlugin({
      backend: fake,
      env: { HERMES_NEMO_RELAY_PLUGINS_TOML: observabilityToml(dir) },
      logger: silentLogger,
    });
    plugin.handlers.on_session_start({ session_id: 'a' });
    plugin.handlers.on_session_finalize({ session_id: 'a' });
    await plugin.flush();
    plugin.handlers.on_session_start({ session_id: 'b' });
    expect(plugin.status().queuedHooks).toBe(0);
    await plugin.shutdown();

    const ops = fake.ops().filter((op) => op !== 'flush');
    expect(ops).toEqual(['initializePluginConfig', 'pushScope', 'popScope', 'pushScope', 'popScope', 'activation.close', 'shutdown']);
    const sinkMode = ((fake.callsOf('initializePluginConfig')[0]!.args.document as any).components[0].config.atof.sinks[0] as { mode: string }).mode;
    expect(sinkMode).toBe('overwrite');
  });

  it('falls back to the env exporters loudly when plugins.toml is rejected', async () => {
    const dir = tempDir();
    const warnings: string[] = [];
    const fake = createFakeRelay({ pluginConfigError: new Error('invalid config: ATIF filename_template must contain {session_id}') });
    const plugin = createNemoRelayPlugin({
      backend: fake,
      env: {
        HERMES_NEMO_RELAY_PLUGINS_TOML: observabilityToml(dir),
        HERMES_NEMO_RELAY_ATOF_ENABLED: 'yes',
        HERMES_NEMO_RELAY_ATOF_OUTPUT_DIRECTORY: dir,
      },
      logger: { ...silentLogger, warn: (message: string) => warnings.push(message) },
    });
    plugin.handlers.on_session_start({ session_id: 's1' });
    await plugin.flush();
    expect(fake.ops()).toContain('registerAtofExporter');
    expect(warnings.some((w) => w.includes('rejected plugins.toml') && w.includes('filename_template'))).toBe(true);
    expect(plugin.status().pluginConfig.active).toBe(false);
  });

  it('reports an unreadable plugins.toml as a diagnostic and keeps working', async () => {
    const fake = createFakeRelay();
    const plugin = createNemoRelayPlugin({
      backend: fake,
      env: { HERMES_NEMO_RELAY_PLUGINS_TOML: '/definitely/not/here/plugins.toml' },
      logger: silentLogger,
    });
    plugin.handlers.on_session_start({ session_id: 's1' });
    await plugin.flush();
    expect(fake.ops()).toContain('pushScope');
    expect(plugin.status().diagnostics.map((d) => d.code)).toContain('plugins_toml.unreadable');
  });

  it('reports invalid TOML with a diagnostic instead of crashing', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'plugins.toml');
    writeFileSync(file, 'version = = 1\n[[components]\n');
    const plugin = createNemoRelayPlugin({ backend: createFakeRelay(), env: { HERMES_NEMO_RELAY_PLUGINS_TOML: file }, logger: silentLogger });
    plugin.handlers.on_session_start({ session_id: 's1' });
    await plugin.flush();
    const diagnostic = plugin.status().diagnostics.find((d) => d.code === 'plugins_toml.invalid_toml');
    expect(diagnostic?.message).toContain(file);
  });

  it('closes the least recently active session when the session cap is reached, writing its partial trajectory', async () => {
    const dir = tempDir();
    const fake = createFakeRelay();
    const plugin = createNemoRelayPlugin({
      backend: fake,
      env: { HERMES_NEMO_RELAY_ATIF_ENABLED: '1', HERMES_NEMO_RELAY_ATIF_OUTPUT_DIRECTORY: dir },
      logger: silentLogger,
      maxSessions: 2,
    });
    plugin.handlers.on_session_start({ session_id: 'a' });
    plugin.handlers.on_session_start({ session_id: 'b' });
    plugin.handlers.pre_llm_call({ session_id: 'a' }); // a is now the most recent
    plugin.handlers.on_session_start({ session_id: 'c' });
    await plugin.flush();
    const popped = fake.callsOf('popScope').map((call) => (call.args.handle as { name: string }).name);
    expect(popped).toEqual(['hermes-session-b']);
    expect(existsSync(path.join(dir, 'hermes-atif-b.json'))).toBe(true);
    expect(plugin.status().sessions).toBe(2);
    expect(plugin.status().counters.evictedSessions).toBe(1);
  });

  it('closes sessions idle longer than the TTL when a new one opens', async () => {
    const fake = createFakeRelay();
    const plugin = createNemoRelayPlugin({ backend: fake, env: {}, logger: silentLogger, sessionIdleTtlMs: 20 });
    plugin.handlers.on_session_start({ session_id: 'old' });
    await new Promise((resolve) => setTimeout(resolve, 40));
    plugin.handlers.on_session_start({ session_id: 'new' });
    const popped = fake.callsOf('popScope').map((call) => (call.args.handle as { name: string }).name);
    expect(popped).toEqual([expect.stringMatching(/-session-old$/)]);
  });

  it('records an event whose payload getter throws from a plain copy instead of losing it', () => {
    const fake = createFakeRelay();
    const warnings: string[] = [];
    const plugin = createNemoRelayPlugin({ backend: fake, env: {}, logger: { ...silentLogger, warn: (message: string) => void warnings.push(message) } });
    const hostile = (id: string) =>
      Object.defineProperty({ session_id: 's1', api_request_id: id, provider: 'openai' }, 'request', {
        enumerable: true,
        get() {
          throw new Error('boom');
        },
      });
    plugin.handlers.pre_api_request(hostile('a1'));
    plugin.handlers.pre_api_request({ session_id: 's1', api_request_id: 'a2', request: { body: { n: 1 } } });
    plugin.handlers.pre_api_request(hostile('a3'));
    expect(fake.ops()).toEqual(['pushScope', 'llmStart', 'llmStart', 'llmStart']);
    expect(fake.callsOf('llmStart')[0]!.args.metadata).toMatchObject({ session_id: 's1', api_request_id: 'a1' });
    expect(plugin.status().counters.errors).toBe(0);
    expect(warnings).toEqual([expect.stringContaining('recorded it from a plain copy')]);
  });

  it('records a payload whose fields cannot be listed from a plain copy read by name: its ids, the readable fields, the unreadable one marked', () => {
    const fake = createFakeRelay();
    const warnings: string[] = [];
    const plugin = createNemoRelayPlugin({ backend: fake, env: {}, logger: { ...silentLogger, warn: (message: string) => void warnings.push(message) } });
    const target = { session_id: 's1', turn_id: 'u1', tool_call_id: 'px', tool_name: 'probe', args: { a: 1 } };
    const hostile = new Proxy(target, {
      ownKeys() {
        throw new Error('ownKeys trap');
      },
      get(object, key) {
        if (key === 'args') throw new Error('get trap');
        return (object as Record<PropertyKey, unknown>)[key];
      },
    });
    plugin.handlers.pre_tool_call(hostile);
    plugin.handlers.post_tool_call({ session_id: 's1', turn_id: 'u1', tool_call_id: 'px', tool_name: 'probe', result: 'done' });
    plugin.handlers.on_session_finalize({ session_id: 's1' });
    expect(fake.ops()).toEqual(['pushScope', 'toolStart', 'toolEnd', 'popScope']);
    const start = fake.callsOf('toolStart')[0]!.args;
    expect(start).toMatchObject({ name: 'probe', metadata: { session_id: 's1', turn_id: 'u1', tool_call_id: 'px' } });
    expect(JSON.stringify(start)).toContain('[Unserializable: get trap]');
    expect(plugin.status().counters).toMatchObject({ unmatchedEnds: 0, abandonedSpans: 0, errors: 0 });
    expect(warnings).toEqual([expect.stringContaining('recorded it from a plain copy')]);
  });

  it('pairs an end whose payload getter throws with its start, through the plain copy', () => {
    const fake = createFakeRelay();
    const plugin = createNemoRelayPlugin({ backend: fake, env: {}, logger: silentLogger });
    const throwing = <T extends object>(payload: T, field: string): T =>
      Object.defineProperty(payload, field, { enumerable: true, get() { throw new Error('boom'); } });
    plugin.handlers.pre_tool_call({ session_id: 's1', tool_call_id: 't1', tool_name: 'x' });
    plugin.handlers.post_tool_call(throwing({ session_id: 's1', tool_call_id: 't1', tool_name: 'x' }, 'status'));
    plugin.handlers.pre_api_request({ session_id: 's1', api_request_id: 'a1' });
    plugin.handlers.post_api_request(throwing({ session_id: 's1', api_request_id: 'a1' }, 'response'));
    plugin.handlers.pre_api_request({ session_id: 's1', api_request_id: 'a2' });
    plugin.handlers.api_request_error(throwing({ session_id: 's1', api_request_id: 'a2' }, 'error'));
    expect(fake.ops()).toEqual(['pushScope', 'toolStart', 'toolEnd', 'llmStart', 'llmEnd', 'llmStart', 'llmEnd']);
    expect(plugin.status().counters.unmatchedEnds).toBe(0);
    expect(plugin.status().openSpans).toEqual({ llm: 0, tool: 0 });
  });

  it('counts an end with no start once when its payload getter throws (the plain copy records it; the failed read counted nothing)', () => {
    const fake = createFakeRelay();
    const plugin = createNemoRelayPlugin({ backend: fake, env: {}, logger: silentLogger });
    const throwing = <T extends object>(payload: T, field: string): T =>
      Object.defineProperty(payload, field, { enumerable: true, get() { throw new Error('boom'); } });
    plugin.handlers.post_tool_call(throwing({ session_id: 's1', tool_call_id: 't1', tool_name: 'x' }, 'platform'));
    plugin.handlers.post_api_request(throwing({ session_id: 's1', api_request_id: 'a1' }, 'platform'));
    plugin.handlers.api_request_error(throwing({ session_id: 's1', api_request_id: 'a2' }, 'platform'));
    expect(fake.callsOf('mark').map((call) => call.args.name)).toEqual(['hermes.tool.response.unmatched', 'hermes.api.response.unmatched', 'hermes.api.error']);
    expect(plugin.status().counters.unmatchedEnds).toBe(3);
  });

  it('files a queued class-shaped payload under the session its getters name, not "default"', async () => {
    const dir = tempDir();
    const fake = createFakeRelay();
    const plugin = createNemoRelayPlugin({ backend: fake, env: { HERMES_NEMO_RELAY_PLUGINS_TOML: observabilityToml(dir) }, logger: silentLogger });
    class Ids {
      readonly #session: string;
      constructor(session: string) {
        this.#session = session;
      }
      get session_id(): string {
        return this.#session;
      }
    }
    const hidden = { session_id: 'hidden', toJSON: () => ({ note: 'no ids here' }) };
    plugin.handlers.on_session_start(new Ids('real') as never);
    plugin.handlers.on_session_start(hidden);
    expect(plugin.status().queuedHooks).toBe(2);
    await plugin.flush();
    const names = fake.callsOf('pushScope').map((call) => call.args.name);
    expect(names).toEqual(['hermes-session-real', 'hermes-session-hidden']);
  });

  it('ends spans still open when their session closes', () => {
    const fake = createFakeRelay();
    const plugin = createNemoRelayPlugin({ backend: fake, env: {}, logger: silentLogger });
    plugin.handlers.pre_api_request({ session_id: 's1', api_request_id: 'r1', provider: 'openai' });
    plugin.handlers.pre_tool_call({ session_id: 's1', tool_call_id: 'c1', tool_name: 'ls' });
    plugin.handlers.on_session_finalize({ session_id: 's1' });
    expect(fake.ops()).toEqual(['pushScope', 'llmStart', 'toolStart', 'llmEnd', 'toolEnd', 'popScope']);
    expect(fake.callsOf('toolEnd')[0]!.args.status).toBe('error');
    expect(plugin.status().counters.abandonedSpans).toBe(2);
  });

  it('ends a span as superseded when a second start reuses its id, so none is left open', () => {
    const fake = createFakeRelay();
    const plugin = createNemoRelayPlugin({ backend: fake, env: {}, logger: silentLogger });
    plugin.handlers.pre_api_request({ session_id: 's1', api_request_id: 't:api:1', retry_count: 0 });
    plugin.handlers.pre_api_request({ session_id: 's1', api_request_id: 't:api:1', retry_count: 1 });
    plugin.handlers.post_api_request({ session_id: 's1', api_request_id: 't:api:1' });
    plugin.handlers.pre_tool_call({ session_id: 's1', tool_call_id: 'c1', tool_name: 'ls' });
    plugin.handlers.pre_tool_call({ session_id: 's1', tool_call_id: 'c1', tool_name: 'ls' });
    plugin.handlers.on_session_finalize({ session_id: 's1' });
    expect(fake.ops()).toEqual(['pushScope', 'llmStart', 'llmEnd', 'llmStart', 'llmEnd', 'toolStart', 'toolEnd', 'toolStart', 'toolEnd', 'popScope']);
    const [superseded] = fake.callsOf('llmEnd');
    expect((superseded!.args.metadata as Record<string, unknown>)['error.type']).toBe('superseded');
    expect((fake.callsOf('toolEnd')[0]!.args.metadata as Record<string, unknown>)['error.type']).toBe('superseded');
    expect(plugin.status().counters.abandonedSpans).toBe(3);
    expect(plugin.status().counters.unmatchedEnds).toBe(0);
  });

  it('handles each hook once when registered twice on the same registry', () => {
    const fake = createFakeRelay();
    const warnings: string[] = [];
    const plugin = createNemoRelayPlugin({ backend: fake, env: {}, logger: { ...silentLogger, warn: (message: string) => void warnings.push(message) } });
    const hooks = new HookRegistry();
    const first = plugin.register(hooks);
    expect(plugin.register(hooks)).toBe(first);
    hooks.emit('pre_tool_call', { session_id: 's1', tool_call_id: 'c1', tool_name: 'ls' });
    hooks.emit('post_tool_call', { session_id: 's1', tool_call_id: 'c1', tool_name: 'ls', result: 'ok' });
    expect(fake.ops()).toEqual(['pushScope', 'toolStart', 'toolEnd']);
    expect(warnings).toEqual([expect.stringContaining('already registered')]);
    first();
    plugin.register(hooks);
    hooks.emit('pre_llm_call', { session_id: 's1' });
    expect(fake.ops().filter((op) => op === 'mark')).toHaveLength(1);
  });

  it('subscribes again when registered after the registry cleared it, and once only', () => {
    const fake = createFakeRelay();
    const warnings: string[] = [];
    const plugin = createNemoRelayPlugin({ backend: fake, env: {}, logger: { ...silentLogger, warn: (message: string) => void warnings.push(message) } });
    const hooks = new HookRegistry();
    const first = plugin.register(hooks);
    hooks.clear();
    expect(hooks.subscribed('pre_tool_call', plugin.handlers.pre_tool_call)).toBe(false);
    const second = plugin.register(hooks);
    expect(second).not.toBe(first);
    expect(warnings).toEqual([]);
    expect(hooks.has('on_session_start')).toBe(true);
    // Registered for real now: a third register() is the no-op, and the first unregister is spent.
    expect(plugin.register(hooks)).toBe(second);
    expect(warnings).toEqual([expect.stringContaining('already registered')]);
    first();
    hooks.emit('pre_tool_call', { session_id: 's1', tool_call_id: 'c1', tool_name: 'ls' });
    hooks.emit('post_tool_call', { session_id: 's1', tool_call_id: 'c1', tool_name: 'ls', result: 'ok' });
    expect(fake.ops()).toEqual(['pushScope', 'toolStart', 'toolEnd']);
    expect(plugin.status().counters.hooks).toBe(2);
    second();
    expect(hooks.has('on_session_start')).toBe(false);
  });

  it('marks failed tool calls with an error status', () => {
    const fake = createFakeRelay();
    const plugin = createNemoRelayPlugin({ backend: fake, env: {}, logger: silentLogger });
    plugin.handlers.pre_tool_call({ session_id: 's1', tool_call_id: 'c1', tool_name: 'ls' });
    plugin.handlers.post_tool_call({ session_id: 's1', tool_call_id: 'c1', tool_name: 'ls', status: 'error', error_type: 'PermissionError', result: 'denied' });
    plugin.handlers.pre_tool_call({ session_id: 's1', tool_call_id: 'c2', tool_name: 'ls' });
    plugin.handlers.post_tool_call({ session_id: 's1', tool_call_id: 'c2', tool_name: 'ls', result: { error: 'boom' } });
    plugin.handlers.pre_tool_call({ session_id: 's1', tool_call_id: 'c3', tool_name: 'ls' });
    plugin.handlers.post_tool_call({ session_id: 's1', tool_call_id: 'c3', tool_name: 'ls', result: 'ok', status: 'ok' });
    const ends = fake.callsOf('toolEnd').map((call) => [call.args.status, (call.args.metadata as Record<string, unknown>)['error.type']]);
    expect(ends).toEqual([
      ['error', 'PermissionError'],
      ['error', 'error'],
      ['ok', undefined],
    ]);
  });

  it('folds usage and the assistant message Hermes passes beside the response into the recorded response', () => {
    const fake = createFakeRelay();
    const plugin = createNemoRelayPlugin({ backend: fake, env: {}, logger: silentLogger });
    plugin.handlers.pre_api_request({ session_id: 's1', api_request_id: 'r1', provider: 'openai' });
    plugin.handlers.post_api_request({
      session_id: 's1',
      api_request_id: 'r1',
      response: { id: 'resp' },
      usage: { prompt_tokens: 3, completion_tokens: 2 },
      assistant_message: { role: 'assistant', content: 'hi' },
      response_model: 'gpt-x',
    });
    expect(fake.callsOf('llmEnd')[0]!.args.response).toEqual({
      id: 'resp',
      usage: { prompt_tokens: 3, completion_tokens: 2 },
      assistant_message: { role: 'assistant', content: 'hi' },
      model: 'gpt-x',
    });
  });

  it('keeps a hostile session id from writing outside the ATIF folder', async () => {
    const dir = tempDir();
    const atifDir = path.join(dir, 'atif');
    const plugin = createNemoRelayPlugin({
      backend: createFakeRelay(),
      env: { HERMES_NEMO_RELAY_ATIF_ENABLED: '1', HERMES_NEMO_RELAY_ATIF_OUTPUT_DIRECTORY: atifDir },
      logger: silentLogger,
    });
    for (const id of ['../../escape', '/etc/passwd', 'a/b', 'a_b', '..']) {
      plugin.handlers.on_session_start({ session_id: id });
      plugin.handlers.on_session_finalize({ session_id: id });
    }
    await plugin.flush();
    expect(readdirSync(dir)).toEqual(['atif']);
    const files = readdirSync(atifDir);
    expect(files).toHaveLength(5);
    for (const file of files) expect(file.startsWith('hermes-atif-')).toBe(true);
    expect(files).toContain('hermes-atif-a_b.json');
    expect(existsSync(path.join(tmpdir(), 'escape'))).toBe(false);
  });

  it('is idempotent on shutdown and drops hooks that arrive afterwards', async () => {
    const fake = createFakeRelay();
    const plugin = createNemoRelayPlugin({ backend: fake, env: {}, logger: silentLogger });
    plugin.handlers.on_session_start({ session_id: 's1' });
    const first = plugin.shutdown();
    const second = plugin.shutdown();
    expect(second).toBe(first);
    await first;
    expect(fake.ops()).toEqual(['pushScope', 'popScope', 'flush', 'shutdown']);
    plugin.handlers.on_session_start({ session_id: 's2' });
    expect(fake.callsOf('pushScope')).toHaveLength(1);
    expect(plugin.status().state).toBe('shutdown');
    expect(plugin.status().counters.dropped).toBe(1);
  });

  it('bounds shutdown by timeoutMs even when the backend never finishes', async () => {
    const fake = createFakeRelay();
    fake.flush = () => new Promise(() => {});
    const plugin = createNemoRelayPlugin({ backend: fake, env: {}, logger: silentLogger });
    plugin.handlers.on_session_start({ session_id: 's1' });
    await plugin.shutdown({ timeoutMs: 50 });
    expect(plugin.status().state).toBe('shutdown');
  });

  it('writes the final trajectory at once and lets it replace a pending partial write', async () => {
    const dir = tempDir();
    const fake = createFakeRelay();
    const plugin = createNemoRelayPlugin({
      backend: fake,
      env: { HERMES_NEMO_RELAY_ATIF_ENABLED: '1', HERMES_NEMO_RELAY_ATIF_OUTPUT_DIRECTORY: dir, HERMES_NEMO_RELAY_ATIF_AGENT_NAME: 'Tester' },
      logger: silentLogger,
      trajectoryWriteDelayMs: 60_000,
    });
    plugin.handlers.on_session_start({ session_id: 's1' });
    plugin.handlers.on_session_end({ session_id: 's1' });
    plugin.handlers.on_session_finalize({ session_id: 's1' });
    await plugin.flush();
    expect(fake.callsOf('atif.exportJson')).toHaveLength(1);
    expect(fake.ops().indexOf('atif.deregister')).toBeGreaterThan(fake.ops().lastIndexOf('atif.exportJson'));
    expect(JSON.parse(readFileSync(path.join(dir, 'hermes-atif-s1.json'), 'utf8'))).toEqual({ session_id: 's1', agent_name: 'Tester' });
    const output = plugin.status().outputs.find((o) => o.kind === 'atif');
    expect(output?.path).toBe(path.join(dir, 'hermes-atif-s1.json'));
    expect(output?.bytes).toBeGreaterThan(0);
    expect(output?.lastWrite).not.toBeNull();
  });

  it('coalesces the partial trajectory writes of many turns into one', async () => {
    const dir = tempDir();
    const fake = createFakeRelay();
    const plugin = createNemoRelayPlugin({
      backend: fake,
      env: { HERMES_NEMO_RELAY_ATIF_ENABLED: '1', HERMES_NEMO_RELAY_ATIF_OUTPUT_DIRECTORY: dir },
      logger: silentLogger,
      trajectoryWriteDelayMs: 20,
    });
    plugin.handlers.on_session_start({ session_id: 's1' });
    for (let turn = 0; turn < 5; turn++) plugin.handlers.on_session_end({ session_id: 's1', turn_id: `t${turn}` });
    expect(existsSync(path.join(dir, 'hermes-atif-s1.json'))).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 60));
    await plugin.flush();
    expect(fake.callsOf('atif.exportJson')).toHaveLength(1);
    expect(existsSync(path.join(dir, 'hermes-atif-s1.json'))).toBe(true);
  });

  it('writes a pending partial trajectory on flush()', async () => {
    const dir = tempDir();
    const plugin = createNemoRelayPlugin({
      backend: createFakeRelay(),
      env: { HERMES_NEMO_RELAY_ATIF_ENABLED: '1', HERMES_NEMO_RELAY_ATIF_OUTPUT_DIRECTORY: dir },
      logger: silentLogger,
      trajectoryWriteDelayMs: 60_000,
    });
    plugin.handlers.on_session_start({ session_id: 's1' });
    plugin.handlers.on_session_end({ session_id: 's1' });
    await plugin.flush();
    expect(existsSync(path.join(dir, 'hermes-atif-s1.json'))).toBe(true);
  });

  it('writes a partial trajectory after every turn when the delay is 0', async () => {
    const fake = createFakeRelay();
    const plugin = createNemoRelayPlugin({
      backend: fake,
      env: { HERMES_NEMO_RELAY_ATIF_ENABLED: '1', HERMES_NEMO_RELAY_ATIF_OUTPUT_DIRECTORY: tempDir() },
      logger: silentLogger,
      trajectoryWriteDelayMs: 0,
    });
    // Each turn's write is done before the next turn ends (flush() waits for it).
    plugin.handlers.on_session_start({ session_id: 's1' });
    plugin.handlers.on_session_end({ session_id: 's1' });
    await plugin.flush();
    plugin.handlers.on_session_end({ session_id: 's1' });
    await plugin.flush();
    plugin.handlers.on_session_finalize({ session_id: 's1' });
    await plugin.flush();
    expect(fake.callsOf('atif.exportJson')).toHaveLength(3);
  });

  it('with the delay 0, a write requested while the previous one is still queued is absorbed by it (a write is owed, not each version)', async () => {
    const dir = tempDir();
    const fake = createFakeRelay();
    const plugin = createNemoRelayPlugin({
      backend: fake,
      env: { HERMES_NEMO_RELAY_ATIF_ENABLED: '1', HERMES_NEMO_RELAY_ATIF_OUTPUT_DIRECTORY: dir },
      logger: silentLogger,
      trajectoryWriteDelayMs: 0,
    });
    // Five turns in one go of the host's: the first turn's write is queued, not started, when the next ones ask.
    plugin.handlers.on_session_start({ session_id: 's1' });
    for (let turn = 0; turn < 5; turn++) plugin.handlers.on_session_end({ session_id: 's1', turn_id: `t${turn}` });
    plugin.handlers.on_session_finalize({ session_id: 's1' });
    await plugin.flush();
    expect(fake.callsOf('atif.exportJson')).toHaveLength(1);
    // The one build started after the session's scope closed (its final state); the exporter is released after it.
    expect(fake.ops().indexOf('atif.exportJson')).toBeGreaterThan(fake.ops().lastIndexOf('popScope'));
    expect(fake.ops().indexOf('atif.deregister')).toBeGreaterThan(fake.ops().lastIndexOf('atif.exportJson'));
    expect(existsSync(path.join(dir, 'hermes-atif-s1.json'))).toBe(true);
  });

  it('gives a session that reuses a closed session id its own ATIF file', async () => {
    const dir = tempDir();
    const plugin = createNemoRelayPlugin({
      backend: createFakeRelay(),
      env: { HERMES_NEMO_RELAY_ATIF_ENABLED: '1', HERMES_NEMO_RELAY_ATIF_OUTPUT_DIRECTORY: dir },
      logger: silentLogger,
    });
    for (let round = 0; round < 3; round++) {
      plugin.handlers.on_session_start({ session_id: 's1' });
      plugin.handlers.on_session_reset({ session_id: 's1', reason: 'new' });
    }
    await plugin.flush();
    expect(readdirSync(dir).sort()).toEqual(['hermes-atif-s1.json', 'hermes-atif-s1~2.json', 'hermes-atif-s1~3.json']);
  });

  it('keeps recording when the ATOF exporter cannot be registered', () => {
    const fake = createFakeRelay();
    fake.registerAtofExporter = () => {
      throw new Error('EACCES: permission denied');
    };
    const warnings: string[] = [];
    // (A file name with a folder part is refused before the backend is asked: test/plugin/settings.test.ts.)
    const plugin = createNemoRelayPlugin({
      backend: fake,
      env: { HERMES_NEMO_RELAY_ATOF_ENABLED: '1', HERMES_NEMO_RELAY_ATOF_FILENAME: 'x.jsonl' },
      logger: { ...silentLogger, warn: (message: string) => warnings.push(message) },
    });
    plugin.handlers.on_session_start({ session_id: 's1' });
    expect(fake.ops()).toEqual(['pushScope']);
    expect(plugin.status().state).toBe('ready');
    expect(warnings.some((w) => w.includes('no ATOF file will be written'))).toBe(true);
  });

  it('still reports the ATOF file and its final size in status() after shutdown', async () => {
    const dir = tempDir();
    const plugin = createNemoRelayPlugin({
      backend: createMemoryRelay({ logger: silentLogger }),
      env: { HERMES_NEMO_RELAY_ATOF_ENABLED: '1', HERMES_NEMO_RELAY_ATOF_OUTPUT_DIRECTORY: dir },
      logger: silentLogger,
    });
    plugin.handlers.on_session_start({ session_id: 's1' });
    plugin.handlers.on_session_finalize({ session_id: 's1' });
    await plugin.shutdown();
    const atof = plugin.status().outputs.find((output) => output.kind === 'atof');
    expect(atof?.path).toBe(path.join(dir, 'hermes-atof.jsonl'));
    expect(atof?.bytes).toBe(statSync(path.join(dir, 'hermes-atof.jsonl')).size);
    expect(atof?.bytes).toBeGreaterThan(0);
  });
});
