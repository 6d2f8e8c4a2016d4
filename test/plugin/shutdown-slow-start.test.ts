// A shutdown({ timeoutMs }) whose budget runs out while the plugin is still
// starting: native took longer to load than the budget (seconds on a busy
// machine; an activation that finishes late is in default-outputs.test.ts). Native's load is held here by the test (a mock of the native adapter whose
// load resolves when the test says), so "slower than the budget" is
// certain, not a race with the machine's load; nemo-relay-node is never
// loaded.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { createNemoRelayPlugin } from '../../src/index.ts';
import { createFakeRelay } from '../../src/testing/index.ts';
import { readValidAtif, readValidAtof } from '../contract/files.ts';
import type { Logger } from '../../src/shared/logger.ts';

const held = vi.hoisted(() => {
  let release!: () => void;
  const loaded = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { loaded, release, relays: [] as { calls: unknown[] }[] };
});

vi.mock('../../native/index.ts', () => ({
  loadNativeRelay: async () => {
    await held.loaded;
    const relay = createFakeRelay();
    held.relays.push(relay);
    return relay;
  },
}));

// Not contract/backends.ts's helpers: importing it probes native, which here is the mock.
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

describe('shutdown({ timeoutMs }) before the backend loaded', () => {
  it('records the start-up queue through the in-memory relay, counts nothing as dropped, says so, and leaves the late native backend unused', async () => {
    const dir = tempDir('slow-start');
    const logger = recordingLogger();
    const settings = { atofEnabled: true, atofOutputDirectory: dir, atofFilename: 'events.jsonl', atifEnabled: true, atifOutputDirectory: dir, atifFilenameTemplate: 'atif-{session_id}.json' };
    const plugin = createNemoRelayPlugin({ backend: 'native', env: {}, logger, settings });
    oneSession(plugin);
    expect(plugin.status()).toMatchObject({ state: 'starting', queuedHooks: 7 });

    // Native never loads within it (held); the second the stand-in gets is ample for seven hooks and two files.
    await plugin.shutdown({ timeoutMs: 2_000 });

    const status = plugin.status();
    expect(status.counters).toMatchObject({ hooks: 7, dropped: 0 });
    expect(status.backend.kind).toBe('memory');
    expect(status.backend.reason).toContain('shutdown() ran short of its budget before the backend loaded');
    expect(logger.lines.some((line) => line.level === 'warn' && line.message.includes('the 7 hooks queued at start-up are recorded by the in-memory relay'))).toBe(true);
    expect(logger.lines.some((line) => line.message.includes('still queued; they were not recorded'))).toBe(false);
    const { events } = readValidAtof(path.join(dir, 'events.jsonl'));
    expect(events.filter((e) => e.category === 'llm').map((e) => e.scope_category)).toEqual(['start', 'end']);
    expect(readValidAtif(path.join(dir, 'atif-s1.json')).steps.map((step) => [step.source, step.message])).toEqual([
      ['user', 'What time is it?'],
      ['agent', 'Noon.'],
    ]);

    // Native finishes loading after all: the plugin is over, and nothing is recorded into it.
    held.release();
    await vi.waitFor(() => expect(held.relays.length).toBeGreaterThan(0));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(held.relays.every((relay) => relay.calls.length === 0)).toBe(true);
    expect(plugin.status().backend.kind).toBe('memory');
  });
});
