// createNemoRelayPlugin's own options as a JavaScript host passes them,
// without a compiler: the slips docs/hosts/plugin.md's snippet invites
// (a misspelt option, a count written as text) are named, and the
// defaults apply, instead of being ignored or turning a bound off.
import { describe, expect, it } from 'vitest';
import { createNemoRelayPlugin } from '../../src/index.ts';
import { checkPluginOptions } from '../../src/plugin/config/plugin-options.ts';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Logger } from '../../src/shared/logger.ts';
import { createFakeRelay } from '../../src/testing/index.ts';

// Not test/contract/backends.ts's helpers: that module probes native, which this file's process must not load.
function recordingLogger(): Logger & { lines: { level: string; message: string }[] } {
  const lines: { level: string; message: string }[] = [];
  const at = (level: string) => (message: string) => void lines.push({ level, message });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

describe('createNemoRelayPlugin options a host got wrong', () => {
  it('names a misspelt option (suggesting the right one, never quoting its value) and a count given as text, once each, on the console and in status()', async () => {
    const logger = recordingLogger();
    const dir = mkdtempSync(path.join(tmpdir(), 'nrh-plugin-options-'));
    const options = {
      backend: 'memory',
      env: {},
      logger,
      settings: { atofEnabled: true, atofOutputDirectory: dir, atofFilename: 'events.jsonl' },
      setting: { otlpHeaders: 'authorization=Bearer sk-live-123' },
      maxQueuedHooks: 'lots',
      sessionIdleTTLMs: 1000,
      redact: 'emails',
    } as unknown as Parameters<typeof createNemoRelayPlugin>[0];
    const plugin = createNemoRelayPlugin(options);
    plugin.handlers.on_session_start({ session_id: 's1' });
    plugin.handlers.on_session_start({ session_id: 's2' });
    const messages = plugin.status().diagnostics.map((d) => `${d.field}: ${d.message}`);
    expect(messages).toEqual([
      expect.stringMatching(/^options\.setting: "setting" is not an option of createNemoRelayPlugin \(did you mean settings\?\); ignoring it/),
      expect.stringMatching(/^options\.sessionIdleTTLMs: "sessionIdleTTLMs" is not an option of createNemoRelayPlugin \(did you mean sessionIdleTtlMs\?\)/),
      'options.maxQueuedHooks: options.maxQueuedHooks must be a number, got "lots"; using the default',
      'options.redact: options.redact must be a function, got string; nothing is redacted by it',
    ]);
    const warnings = logger.lines.filter((line) => line.level === 'warn').map((line) => line.message);
    expect(warnings.filter((message) => message.includes('options.') || message.includes('is not an option'))).toHaveLength(4);
    expect(warnings.join('\n')).not.toContain('sk-live-123');
    await plugin.shutdown();
  });

  it('keeps a count that is not a number out of the bounds (NaN would turn the start-up queue and the session limit off)', () => {
    const checked = checkPluginOptions({ maxQueuedHooks: '10', maxSessions: Number.NaN, sessionIdleTtlMs: 0, trajectoryWriteDelayMs: Infinity });
    expect(checked.numbers).toEqual({ sessionIdleTtlMs: 0, trajectoryWriteDelayMs: Infinity });
    expect(checked.diagnostics.map((d) => d.field)).toEqual(['options.maxSessions', 'options.maxQueuedHooks']);
  });

  it('says nothing of options that are right', async () => {
    const logger = recordingLogger();
    const plugin = createNemoRelayPlugin({ backend: 'memory', env: {}, logger, settings: { outputs: false }, maxSessions: 10, sessionIdleTtlMs: 60_000, trajectoryWriteDelayMs: 0, maxQueuedHooks: 5, host: { name: 'x' }, redact: () => undefined });
    plugin.handlers.on_session_start({ session_id: 's1' });
    expect(plugin.status().diagnostics).toEqual([]);
    await plugin.shutdown();
    expect(logger.lines.filter((line) => line.level === 'warn')).toEqual([]);
  });
});

describe("createNemoRelayPlugin's clock", () => {
  it('stamps every call with it, those of the sessions it closes itself too, and falls back per reading', async () => {
    const fake = createFakeRelay();
    let now = 1_764_428_400_000_000;
    let broken = false;
    const clock = () => {
      if (broken) throw new Error('clock broke');
      return (now += 1000);
    };
    const plugin = createNemoRelayPlugin({ backend: fake, env: {}, settings: { outputs: false }, clock });
    await plugin.ready;
    plugin.handlers.on_session_start({ session_id: 's1' });
    plugin.handlers.pre_api_request({ session_id: 's1', api_request_id: 'a', model: 'm' });
    plugin.handlers.post_api_request({ session_id: 's1', api_request_id: 'a', model: 'm' });
    broken = true;
    plugin.handlers.pre_tool_call({ session_id: 's1', tool_call_id: 't', tool_name: 'x' });
    broken = false;
    await plugin.shutdown(); // closes s1 and the open tool call
    const stamped = fake.calls.filter((call) => ['pushScope', 'popScope', 'llmStart', 'llmEnd', 'toolStart', 'toolEnd', 'mark'].includes(call.op));
    const stamps = stamped.map((call) => [call.op, call.args.timestampUs]);
    expect(stamps).toEqual([
      ['pushScope', 1_764_428_400_001_000],
      ['llmStart', 1_764_428_400_002_000],
      ['llmEnd', 1_764_428_400_003_000],
      ['toolStart', expect.any(Number)],
      ['toolEnd', 1_764_428_400_004_000],
      ['popScope', 1_764_428_400_004_000],
    ]);
    // The broken reading: the library's clock, today, not a lost call.
    expect(Math.abs((stamps[3]![1] as number) / 1000 - Date.now())).toBeLessThan(60_000);
  });

  it('warns once of a clock that reads like milliseconds (Date.now), and keeps its readings', async () => {
    const fake = createFakeRelay();
    const logger = recordingLogger();
    let now = 1_764_428_400_000; // Date.now(): milliseconds
    const plugin = createNemoRelayPlugin({ backend: fake, env: {}, logger, settings: { outputs: false }, clock: () => (now += 1) });
    await plugin.ready;
    plugin.handlers.on_session_start({ session_id: 's1' });
    plugin.handlers.pre_llm_call({ session_id: 's1' });
    const warnings = logger.lines.filter((line) => line.level === 'warn' && line.message.includes('options.clock'));
    expect(warnings.map((line) => line.message)).toEqual([
      'NeMo Relay options.clock answered 1764428400001, which as Unix microseconds is 1970-01-21T10:07:08.400001+00:00: a clock in milliseconds or seconds? (Date.now() * 1000 is microseconds); its readings are used as given',
    ]);
    expect(fake.callsOf('pushScope')[0]!.args.timestampUs).toBe(1_764_428_400_001);
    await plugin.shutdown();
  });

  it('stamps with it the hook that starts the backend too (a host that did not await ready)', async () => {
    const fake = createFakeRelay();
    const plugin = createNemoRelayPlugin({ backend: fake, env: {}, settings: { outputs: false }, clock: () => 1_764_428_400_000_000 });
    plugin.handlers.on_session_start({ session_id: 's1' }); // the first hook: it starts the backend
    expect(fake.callsOf('pushScope').map((call) => call.args.timestampUs)).toEqual([1_764_428_400_000_000]);
    await plugin.shutdown();
  });

  it('names a clock that is not a function and uses its own', () => {
    const checked = checkPluginOptions({ clock: 1_764_428_400_000_000 });
    expect(checked.diagnostics.map((d) => d.message)).toEqual(["options.clock must be a function, got number; events carry the library's clock"]);
  });
});
