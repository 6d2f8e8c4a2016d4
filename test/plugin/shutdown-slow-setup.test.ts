// A shutdown({ timeoutMs }) whose budget runs out while native has loaded
// but is still activating plugins.toml (price sources fetched, OTLP
// exporters set up, a busy machine: seconds), or is still loading with a
// plugins.toml that owns the file outputs. Native's load and activation are
// held here by the test (a mock of the native adapter whose load and
// activation resolve when the test says), so "slower than the budget" is
// certain, not a race with the machine's load; nemo-relay-node is never
// loaded. The in-memory relay stands in, and its files must be what a run
// where nothing was slow writes (the memory relay writing native's bytes
// is the differential suite's job).
import { writeObservabilityToml } from '../support/plugins-toml.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { createNemoRelayPlugin } from '../../src/index.ts';
import type { FakeRelay } from '../../src/testing/index.ts';
import { readValidAtif, readValidAtof } from '../contract/files.ts';
import { normalizeText, UuidLabels } from '../differential/normalize.ts';
import type { Logger } from '../../src/shared/logger.ts';
// Native's load, and its plugins.toml activation, wait on a gate each.
import { gate } from '../support/gate.ts';

const held = vi.hoisted(() => ({ load: null as Promise<void> | null, activation: null as Promise<void> | null, relays: [] as FakeRelay[] }));

vi.mock('../../native/index.ts', async () => {
  const { createFakeRelay: fake } = await import('../../src/testing/index.ts');
  return {
    loadNativeRelay: async () => {
      await held.load;
      const relay = fake();
      const activate = relay.initializePluginConfig!.bind(relay);
      relay.initializePluginConfig = async (...args) => {
        const activation = activate(...args);
        await held.activation;
        return activation;
      };
      held.relays.push(relay);
      return relay;
    },
  };
});

function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `nrh-${prefix}-`));
}

function recordingLogger(): Logger & { lines: { level: string; message: string }[] } {
  const lines: { level: string; message: string }[] = [];
  const at = (level: string) => (message: string) => {
    lines.push({ level, message });
  };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** A plugins.toml whose observability component writes the ATOF and ATIF files into `dir`. */
function pluginsToml(dir: string, atofMode: 'append' | 'overwrite' = 'append'): string {
  const out = path.join(dir, 'out');
  return writeObservabilityToml(dir, { atofDir: out, atifDir: out, atofMode, extraToml: 'agent_name = "my-agent"\n' });
}

function oneSession(plugin: ReturnType<typeof createNemoRelayPlugin>): void {
  const ids = { session_id: 's1', turn_id: 't1' };
  plugin.handlers.on_session_start({ session_id: 's1', model: 'gpt-4o' });
  plugin.handlers.pre_llm_call({ ...ids, user_message: 'What time is it?' });
  plugin.handlers.pre_api_request({ ...ids, api_request_id: 't1:api:1', provider: 'openai', request: { body: { messages: [{ role: 'user', content: 'What time is it?' }] } } });
  plugin.handlers.post_api_request({ ...ids, api_request_id: 't1:api:1', response: { choices: [{ message: { role: 'assistant', content: 'Noon.' } }] } });
  plugin.handlers.post_llm_call({ ...ids, assistant_response: 'Noon.' });
  plugin.handlers.on_session_end({ ...ids, completed: true });
  plugin.handlers.on_session_finalize({ session_id: 's1' });
}

/** The files under `dir`/out, by name (the ATIF one named `trajectory.json`: its name holds a uuid), uuids and clocks made comparable. */
function outputs(dir: string): Record<string, string> {
  const folder = path.join(dir, 'out');
  const out: Record<string, string> = {};
  for (const name of fs.readdirSync(folder).sort()) {
    const text = fs.readFileSync(path.join(folder, name), 'utf8');
    const key = name.startsWith('trajectory-') ? 'trajectory.json' : name;
    out[key] = key === 'events.jsonl' ? ((labels) => text.split('\n').map((line) => normalizeText(line, labels)).join('\n'))(new UuidLabels()) : normalizeText(text);
  }
  return out;
}

/** What the same session writes when nothing is slow: the in-memory relay, the document activated before the first hook is recorded. */
async function unhurried(): Promise<Record<string, string>> {
  const dir = tempDir('slow-setup-reference');
  const plugin = createNemoRelayPlugin({ backend: 'memory', env: { NEMO_RELAY_HOOKS_PLUGINS_TOML: pluginsToml(dir) }, logger: recordingLogger() });
  oneSession(plugin);
  await plugin.shutdown();
  expect(plugin.status().counters).toMatchObject({ hooks: 7, dropped: 0 });
  return outputs(dir);
}

describe('shutdown({ timeoutMs }) while native starts with a plugins.toml', () => {
  it("native loaded, its activation still under way: the in-memory relay records the start-up queue into the document's files, the same bytes as a run where nothing was slow, and the late activation is closed unused", async () => {
    // First, so that the stand-in finds the memory relay's plugins.toml modules loaded (on a busy machine their
    // first load under vitest's transform can outlast the budget's second half; the product loads them then).
    const reference = await unhurried();
    const load = gate();
    const activation = gate();
    held.load = load.opened;
    held.activation = activation.opened;
    load.open();
    const dir = tempDir('slow-setup');
    const logger = recordingLogger();
    const plugin = createNemoRelayPlugin({ backend: 'native', env: { NEMO_RELAY_HOOKS_PLUGINS_TOML: pluginsToml(dir) }, logger });
    oneSession(plugin);
    // Native has loaded and is activating the document (held): the hooks wait in the start-up queue.
    await vi.waitFor(() => expect(held.relays.at(-1)?.ops()).toContain('initializePluginConfig'));
    const native = held.relays.at(-1)!;
    expect(plugin.status()).toMatchObject({ queuedHooks: 7 });

    await plugin.shutdown({ timeoutMs: 2_000 });

    const status = plugin.status();
    expect(status.counters).toMatchObject({ hooks: 7, dropped: 0 });
    expect(status.backend.kind).toBe('memory');
    expect(status.backend.reason).toContain('while the backend was still activating its configuration');
    expect(logger.lines.filter((line) => line.level === 'warn').map((line) => line.message)).toContainEqual(
      expect.stringContaining("had loaded but was still activating its configuration when shutdown()'s budget was running out: the 7 hooks queued at start-up are recorded by the in-memory relay, rather than dropped, into plugins.toml's files"),
    );
    expect(logger.lines.some((line) => line.message.includes('still queued; they were not recorded'))).toBe(false);
    const { events } = readValidAtof(path.join(dir, 'out', 'events.jsonl'));
    expect(events.filter((e) => e.category === 'llm').map((e) => e.scope_category)).toEqual(['start', 'end']);
    const [trajectory] = fs.readdirSync(path.join(dir, 'out')).filter((name) => name.startsWith('trajectory-'));
    expect(readValidAtif(path.join(dir, 'out', trajectory!)).steps.map((step) => [step.source, step.message])).toEqual([
      ['user', 'What time is it?'],
      ['agent', 'Noon.'],
    ]);
    expect(outputs(dir)).toEqual(reference);

    // Native's activation finishes after all: released (closed), and nothing recorded into native.
    activation.open();
    await vi.waitFor(() => expect(native.ops()).toContain('activation.close'));
    expect(native.ops()).toEqual(['initializePluginConfig', 'activation.close']);
    expect(plugin.status().pluginConfig.active).toBe(false);
  });

  it("native still loading: the stand-in writes the document's files (a configured plugins.toml turns the default outputs off, so the environment's outputs recorded nothing)", async () => {
    const reference = await unhurried();
    const load = gate();
    held.load = load.opened;
    held.activation = null;
    const relays = held.relays.length;
    const dir = tempDir('slow-load-toml');
    const logger = recordingLogger();
    const plugin = createNemoRelayPlugin({ backend: 'native', env: { NEMO_RELAY_HOOKS_PLUGINS_TOML: pluginsToml(dir) }, logger });
    oneSession(plugin);

    await plugin.shutdown({ timeoutMs: 2_000 });

    expect(plugin.status().counters).toMatchObject({ hooks: 7, dropped: 0 });
    expect(plugin.status().backend.reason).toContain('before the backend loaded');
    expect(outputs(dir)).toEqual(reference);
    load.open();
    await vi.waitFor(() => expect(held.relays.length).toBe(relays + 1));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(held.relays.at(-1)!.calls).toEqual([]);
  });

  it('native activating a document that truncates its ATOF file (mode = "overwrite"): no stand-in (the late activation would empty the file it wrote), the hooks dropped, counted and warned about', async () => {
    const load = gate();
    const activation = gate();
    held.load = load.opened;
    held.activation = activation.opened;
    load.open();
    const dir = tempDir('slow-setup-overwrite');
    const logger = recordingLogger();
    const plugin = createNemoRelayPlugin({ backend: 'native', env: { NEMO_RELAY_HOOKS_PLUGINS_TOML: pluginsToml(dir, 'overwrite') }, logger });
    oneSession(plugin);
    await vi.waitFor(() => expect(held.relays.at(-1)?.ops()).toContain('initializePluginConfig'));

    await plugin.shutdown({ timeoutMs: 300 });

    expect(plugin.status().counters).toMatchObject({ hooks: 7, dropped: 7 });
    expect(plugin.status().backend.kind).not.toBe('memory');
    expect(logger.lines.some((line) => line.level === 'warn' && line.message.includes("shutdown's budget ran out with 7 hooks from start-up still queued"))).toBe(true);
    activation.open();
    await vi.waitFor(() => expect(held.relays.at(-1)!.ops()).toContain('activation.close'));
  });
});
