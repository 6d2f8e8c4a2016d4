// The start-up window: a backend that needs no loading records the very
// first hook; hooks that must wait (native loading, plugins.toml
// activating) are bounded, keep the time they were emitted at, and are not
// lost when the process exits before they could be replayed.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createNemoRelayPlugin } from '../../src/index.ts';
import { resolveBackendNow } from '../../src/backends/select.ts';
import { documentChecksNow } from '../../src/plugin/activation.ts';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import type { RelayBackend } from '../../src/relay/contract.ts';
import { createFakeRelay } from '../../src/testing/index.ts';
import { HookRegistry } from '../../src/hooks/index.ts';
import { nowMicros, parseTimestamp } from '../../src/shared/clock.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { readValidAtif, readValidAtof } from '../contract/files.ts';
import { nativeAvailable, nativeLoadError, recordingLogger, tempDir } from '../contract/backends.ts';
import { runScript } from '../native/support.ts';
import { writeObservabilityToml } from '../support/plugins-toml.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ENTRY = pathToFileURL(path.join(ROOT, 'dist', 'src', 'index.js')).href;

describe('a backend that needs no loading', () => {
  it('records the first hook on backend "memory" at once, with nothing queued or copied', () => {
    const dir = tempDir('sync-memory');
    const plugin = createNemoRelayPlugin({ backend: 'memory', env: {}, logger: silentLogger, settings: { atofEnabled: true, atofOutputDirectory: dir, atofFilename: 'hermes-atof.jsonl' } });
    plugin.handlers.on_session_start({ session_id: 's1' });
    const status = plugin.status();
    expect(status.state).toBe('ready');
    expect(status.queuedHooks).toBe(0);
    expect(status.sessions).toBe(1);
    expect(status.backend.kind).toBe('memory');
    void plugin.shutdown();
  });

  it('is chosen synchronously for memory, off, a backend object, and auto on Bun and Deno, but not for native or auto on Node', () => {
    expect(resolveBackendNow('memory', { env: {}, logger: silentLogger })?.kind).toBe('memory');
    expect(resolveBackendNow('off', { env: {}, logger: silentLogger })?.kind).toBe('off');
    expect(resolveBackendNow('auto', { env: {}, logger: silentLogger, runtime: 'bun' })?.kind).toBe('memory');
    expect(resolveBackendNow('auto', { env: {}, logger: silentLogger, runtime: 'deno' })?.kind).toBe('memory');
    expect(resolveBackendNow('auto', { env: {}, logger: silentLogger, runtime: 'node' })).toBeUndefined();
    expect(resolveBackendNow('native', { env: {}, logger: silentLogger })).toBeUndefined();
    // The operator's override wins, both ways.
    expect(resolveBackendNow('native', { env: { NEMO_RELAY_HOOKS_BACKEND: 'memory' }, logger: silentLogger })?.kind).toBe('memory');
    expect(resolveBackendNow('memory', { env: { NEMO_RELAY_HOOKS_BACKEND: 'native' }, logger: silentLogger })).toBeUndefined();
  });
});

/** The backend with only the asynchronous plugins.toml activation, so hooks wait for it. */
function withAsyncActivationOnly<T extends RelayBackend>(backend: T): T {
  return new Proxy(backend, { get: (target, key) => (key === 'initializePluginConfigSync' ? undefined : Reflect.get(target, key, target)) });
}

describe('plugins.toml on a backend that activates synchronously', () => {
  it('records the first hook through the document at once once the document checks are loaded, with nothing queued', async () => {
    const syncBackend = () => {
      const fake = createFakeRelay();
      const backend: RelayBackend = Object.assign(Object.create(null) as object, fake, {
        initializePluginConfigSync: () => ({ report: { diagnostics: [], configPaths: [] }, close: async () => {} }),
      }) as RelayBackend;
      return { fake, backend };
    };
    const dir = tempDir('sync-activation');
    const file = writeObservabilityToml(dir, { atofDir: path.join(dir, 'events'), atifDir: path.join(dir, 'trajectories') });
    // The checks load with the first plugin of the process that has a document (not with the package): until they are, hooks queue.
    const loadedBefore = documentChecksNow() !== undefined;
    const first = syncBackend();
    const loading = createNemoRelayPlugin({ backend: first.backend, env: { HERMES_NEMO_RELAY_PLUGINS_TOML: file }, logger: silentLogger });
    loading.handlers.on_session_start({ session_id: 's0' });
    expect(loading.status().queuedHooks).toBe(loadedBefore ? 0 : 1);
    await loading.ready;
    expect(loading.status().pluginConfig.active).toBe(true);
    // Without the checks at its first hook, the first plugin activated through the asynchronous path.
    expect(first.fake.ops()).toEqual(loadedBefore ? ['pushScope'] : ['initializePluginConfig', 'pushScope']);
    await loading.shutdown();

    const { fake, backend } = syncBackend();
    const plugin = createNemoRelayPlugin({ backend, env: { HERMES_NEMO_RELAY_PLUGINS_TOML: file }, logger: silentLogger });
    plugin.handlers.on_session_start({ session_id: 's1' });
    expect(plugin.status().queuedHooks).toBe(0);
    expect(plugin.status().pluginConfig.active).toBe(true);
    expect(fake.ops()).toEqual(['pushScope']);
    await plugin.shutdown();
  });
});

/** `count` hooks (sessions of ten model calls) straight into the handlers, before the backend could load. */
function burst(plugin: ReturnType<typeof createNemoRelayPlugin>, count: number): void {
  for (let i = 0, s = 0; i < count; s++) {
    const session_id = `burst-${s}`;
    plugin.handlers.on_session_start({ session_id, model: 'gpt-4o' });
    i++;
    for (let k = 0; k < 10 && i < count - 1; k++, i += 2) {
      const ids = { session_id, turn_id: `t${k}`, api_request_id: `r${k}` };
      plugin.handlers.pre_api_request({ ...ids, model: 'gpt-4o' });
      plugin.handlers.post_api_request({ ...ids, model: 'gpt-4o', response: { usage: { input_tokens: 1, output_tokens: 1 } } });
    }
    plugin.handlers.on_session_end({ session_id, completed: true });
    i++;
  }
}

/** Resolves once `file` ends with a newline and has not grown for 100 ms, or after `limitMs` (the caller's check then fails). */
async function settledOnLineEnd(file: string, limitMs: number): Promise<void> {
  const until = Date.now() + limitMs;
  let last = -1;
  while (Date.now() < until) {
    const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    if (text.length === last && text.endsWith('\n')) return;
    last = text.length;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function burstPlugin(dir: string, logger = silentLogger) {
  const env = { NEMO_RELAY_HOOKS_ATOF_ENABLED: 'true', NEMO_RELAY_HOOKS_ATOF_OUTPUT_DIRECTORY: dir, NEMO_RELAY_HOOKS_ATOF_FILENAME: 'events.jsonl', NEMO_RELAY_HOOKS_ATIF_ENABLED: 'false' };
  return createNemoRelayPlugin({ backend: 'native', env, logger, maxQueuedHooks: 200_000 });
}

describe.skipIf(!nativeAvailable)(`a long start-up queue on native${nativeAvailable ? '' : ` (skipped: ${nativeLoadError})`}`, () => {
  it('is replayed in slices: the host gets turns while it is replayed, and every hook is recorded', async () => {
    const dir = tempDir('long-queue');
    const plugin = burstPlugin(dir);
    burst(plugin, 5_000);
    // A turn of the event loop seen with the backend live and hooks still queued: the replay yielded.
    let turnsMidReplay = 0;
    const timer = setInterval(() => {
      const status = plugin.status();
      if (status.state === 'ready' && status.queuedHooks > 0) turnsMidReplay++;
    }, 1);
    await plugin.ready;
    clearInterval(timer);
    expect(plugin.status().queuedHooks).toBe(0);
    expect(turnsMidReplay).toBeGreaterThan(0);
    await plugin.shutdown({ timeoutMs: 60_000 });
    expect(plugin.status().counters).toMatchObject({ hooks: 5_000, dropped: 0 });
    expect(readValidAtof(path.join(dir, 'events.jsonl')).events.length).toBeGreaterThan(5_000);
  });

  it('shutdown({ timeoutMs }) stops replaying at its budget: the hooks left are counted as dropped and said, not recorded past the budget', async () => {
    const dir = tempDir('long-queue-shutdown');
    const logger = recordingLogger();
    const plugin = burstPlugin(dir, logger);
    // Far more than native records in the budget (tens of microseconds each, at best).
    burst(plugin, 30_000);
    await plugin.shutdown({ timeoutMs: 300 });
    const { counters } = plugin.status();
    expect(counters.hooks).toBe(30_000);
    expect(counters.dropped).toBeGreaterThan(0);
    expect(logger.lines.some((line) => line.level === 'warn' && line.message.includes(`with ${counters.dropped} hooks from start-up still queued`))).toBe(true);
    // What was replayed is whole: every line of the file is valid ATOF. Native's file writer runs on its own
    // thread and flushes its buffer at any byte, so right after a shutdown cut short by its budget the file may
    // still end inside a line that native has yet to finish; wait (bounded) until it ends on a line's end.
    const file = path.join(dir, 'events.jsonl');
    if (counters.dropped < 30_000) {
      await settledOnLineEnd(file, 10_000);
      expect(readValidAtof(file).events.length).toBeGreaterThan(0);
    }
  });
});

describe('the start-up queue', () => {
  it('holds at most maxQueuedHooks while the backend loads, and counts what overflows', async () => {
    // `native` always loads asynchronously (and falls back to off when it cannot).
    const plugin = createNemoRelayPlugin({ backend: 'native', env: {}, logger: silentLogger, maxQueuedHooks: 10 });
    for (let i = 0; i < 25; i++) plugin.handlers.pre_llm_call({ session_id: 's1', turn_id: `t${i}` });
    const status = plugin.status();
    expect(status.state).toBe('starting');
    expect(status.queuedHooks).toBe(10);
    expect(status.counters.queueOverflow).toBe(15);
    expect(status.counters.dropped).toBe(15);
    await plugin.shutdown();
  });

  it('replays a hook queued while plugins.toml activates with the time it was emitted at', async () => {
    const dir = tempDir('queued-time');
    const file = writeObservabilityToml(dir, { atofDir: path.join(dir, 'events'), atifDir: path.join(dir, 'trajectories') });
    const plugin = createNemoRelayPlugin({ backend: withAsyncActivationOnly(createMemoryRelay({ logger: silentLogger })), env: { HERMES_NEMO_RELAY_PLUGINS_TOML: file }, logger: silentLogger });
    const before = nowMicros();
    plugin.handlers.on_session_start({ session_id: 's1' });
    plugin.handlers.pre_tool_call({ session_id: 's1', tool_call_id: 'c1', tool_name: 'ls', args: {} });
    const after = nowMicros();
    expect(plugin.status().queuedHooks).toBe(2);
    await plugin.ready;
    plugin.handlers.post_tool_call({ session_id: 's1', tool_call_id: 'c1', tool_name: 'ls', result: 'ok' });
    plugin.handlers.on_session_finalize({ session_id: 's1' });
    await plugin.shutdown();
    const { events } = readValidAtof(path.join(dir, 'events', 'events.jsonl'));
    const stamped = (predicate: (e: (typeof events)[number]) => boolean) => parseTimestamp(events.find(predicate)!.timestamp);
    const sessionStart = stamped((e) => e.category === 'agent' && e.scope_category === 'start');
    const toolStart = stamped((e) => e.category === 'tool' && e.scope_category === 'start');
    const toolEnd = stamped((e) => e.category === 'tool' && e.scope_category === 'end');
    // ATOF timestamps are microseconds since the epoch, the clock nowMicros() reads.
    for (const queued of [sessionStart, toolStart]) {
      expect(queued).toBeGreaterThanOrEqual(before);
      expect(queued).toBeLessThanOrEqual(after);
    }
    expect(toolEnd).toBeGreaterThan(after);
  });
});

function exitingChild(dir: string, backend: string, ending: string): string {
  return `
import { createNemoRelayPlugin, HookRegistry } from ${JSON.stringify(ENTRY)};
const plugin = createNemoRelayPlugin({
  backend: ${JSON.stringify(backend)},
  env: {},
  logger: { debug() {}, info() {}, warn() {}, error() {} },
  settings: { atofFilename: 'hermes-atof.jsonl', atifFilenameTemplate: 'hermes-atif-{session_id}.json', atofEnabled: true, atofOutputDirectory: ${JSON.stringify(dir)}, atifEnabled: true, atifOutputDirectory: ${JSON.stringify(dir)} },
});
const hooks = new HookRegistry();
plugin.register(hooks);
const ids = { session_id: 'early', turn_id: 't1' };
hooks.emit('on_session_start', { session_id: 'early', model: 'gpt-4o' });
hooks.emit('pre_llm_call', { ...ids, user_message: 'hello?' });
hooks.emit('pre_api_request', { ...ids, api_request_id: 't1:api:1', provider: 'openai', request: { body: { messages: [{ role: 'user', content: 'hello?' }] } } });
hooks.emit('post_api_request', { ...ids, api_request_id: 't1:api:1', response: { choices: [{ message: { role: 'assistant', content: 'hi.' } }] } });
${ending}
`;
}

describe('a process that ends before the backend could replay its first hooks', () => {
  const { NEMO_RELAY_HOOKS_BACKEND: _ignored, ...childEnv } = process.env;
  for (const backend of ['memory', 'auto'] as const) {
    for (const [label, ending, status] of [
      ['process.exit(0) right after the hooks', 'process.exit(0);', 0],
      ['an uncaught exception right after the hooks', "throw new Error('host crashed');", 1],
    ] as const) {
      it(`keeps every hook on backend "${backend}" through ${label}`, () => {
        const dir = tempDir('startup-exit');
        const result = runScript(exitingChild(dir, backend, ending), childEnv);
        expect(result.status).toBe(status);
        const { events } = readValidAtof(path.join(dir, 'hermes-atof.jsonl'));
        expect(events.filter((e) => e.category === 'llm').map((e) => e.scope_category)).toEqual(['start', 'end']);
        expect(events.filter((e) => e.category === 'agent').map((e) => e.scope_category)).toEqual(['start']);
        const trajectory = readValidAtif(path.join(dir, 'hermes-atif-early.json'));
        expect(trajectory.steps.map((step) => [step.source, step.message])).toEqual([
          ['user', 'hello?'],
          ['agent', 'hi.'],
        ]);
      });
    }
  }
});
