import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SCENARIOS, virtualClock } from '../../src/demo/index.ts';
import { HOOK_NAMES, HookRegistry, silentLogger } from '../../src/hooks/index.ts';
import { createHookRecorder } from '../../src/hook-log/hook-recorder.ts';
import { parseTimestamp } from '../../src/shared/clock.ts';
import { cliInProcess, EXAMPLES, tempDir } from '../cli/support.ts';
import { createNemoRelayPlugin } from '../../src/index.ts';
import { backends } from '../adapters/support.ts';

if (!existsSync('/dev/full')) console.info('[skip] recorder write-failure test: needs /dev/full (Linux)');

const linesOf = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));

describe('createHookRecorder', () => {
  it('records every one of the 15 hooks as {"timestamp", "hook", "payload"} lines, in emit order', () => {
    const registry = new HookRegistry();
    const file = path.join(tempDir(), 'nested', 'hooks.jsonl');
    const recorder = createHookRecorder(registry, file);
    HOOK_NAMES.forEach((hook, index) => registry.emit(hook, { session_id: 's', index } as never));
    expect(recorder.lines).toBe(15);
    recorder.close();
    const lines = linesOf(file);
    expect(lines.map((line) => line.hook)).toEqual([...HOOK_NAMES]);
    expect(lines[3]).toEqual({ timestamp: expect.any(String), hook: HOOK_NAMES[3], payload: { session_id: 's', index: 3, telemetry_schema_version: 'hermes.observer.v1' } });
    // When each hook was emitted, in emit order, on the wall clock.
    const times = lines.map((line) => parseTimestamp(line.timestamp));
    expect(times.every((time, index) => Number.isSafeInteger(time) && (index === 0 || time > times[index - 1]!))).toBe(true);
    expect(Math.abs(times[0]! / 1000 - Date.now())).toBeLessThan(60_000);
    expect(recorder.path).toBe(path.resolve(file));
  });

  it('buffers whole lines and writes them on flush()', () => {
    const registry = new HookRegistry();
    const file = path.join(tempDir(), 'hooks.jsonl');
    const recorder = createHookRecorder(registry, file);
    registry.emit('on_session_start', { session_id: 'a' });
    expect(readFileSync(file, 'utf8')).toBe('');
    recorder.flush();
    expect(readFileSync(file, 'utf8')).toMatch(/^\{"timestamp":"[^"]+","hook":"on_session_start",.*\}\n$/);
    recorder.close();
  });

  it('writes as soon as the buffer limit is reached, never half a line', () => {
    const registry = new HookRegistry();
    const file = path.join(tempDir(), 'hooks.jsonl');
    const recorder = createHookRecorder(registry, file, { bufferBytes: 200 });
    for (let i = 0; i < 50; i++) registry.emit('pre_tool_call', { session_id: 's', tool_name: 'read_file', args: { i } });
    const written = readFileSync(file, 'utf8');
    expect(written.length).toBeGreaterThan(0);
    expect(written.endsWith('\n')).toBe(true);
    recorder.close();
    expect(linesOf(file)).toHaveLength(50);
  });

  it('writes no credential header: a host\'s API key in a request\'s headers stays out of the file, as the plugin records none', () => {
    const registry = new HookRegistry({ logger: silentLogger });
    const file = path.join(tempDir(), 'hooks.jsonl');
    const recorder = createHookRecorder(registry, file);
    const secret = 'sk-live-0123456789abcdef';
    const headers = { Authorization: `Bearer ${secret}`, 'x-api-key': secret, 'content-type': 'application/json' };
    registry.emit('pre_api_request', { session_id: 's', api_request_id: 'a1', provider: 'openai', request: { headers, body: { messages: [] } } });
    registry.emit('api_request_error', { session_id: 's', api_request_id: 'a1', headers: new Headers(headers), error: { type: 'RateLimitError' } } as never);
    recorder.close();
    expect(readFileSync(file, 'utf8')).not.toContain(secret);
    const [pre, failed] = linesOf(file);
    expect(pre.payload.request.headers).toEqual({ 'content-type': 'application/json' });
    expect(failed.payload.headers).toEqual({ 'content-type': 'application/json' });
  });

  it('records cyclic, BigInt and class-instance payloads without throwing into the host', () => {
    const registry = new HookRegistry({ logger: silentLogger });
    const file = path.join(tempDir(), 'hooks.jsonl');
    const recorder = createHookRecorder(registry, file);
    const cyclic: Record<string, unknown> = { session_id: 'c', big: 10n ** 20n, when: new Date(0), tags: new Set(['a']) };
    cyclic.self = cyclic;
    expect(() => registry.emit('on_session_start', cyclic)).not.toThrow();
    recorder.close();
    expect(linesOf(file)[0].payload).toMatchObject({ session_id: 'c', big: '100000000000000000000', when: '1970-01-01T00:00:00.000Z', tags: ['a'], self: '[Circular]' });
  });

  it('stops receiving hooks after close(), which is idempotent', () => {
    const registry = new HookRegistry();
    const file = path.join(tempDir(), 'hooks.jsonl');
    const recorder = createHookRecorder(registry, file);
    registry.emit('on_session_start', { session_id: 'a' });
    recorder.close();
    recorder.close();
    registry.emit('on_session_start', { session_id: 'b' });
    expect(registry.has('on_session_start')).toBe(false);
    expect(linesOf(file)).toHaveLength(1);
    expect(recorder.lines).toBe(1);
  });

  it('appends with { append: true } and truncates by default', () => {
    const file = path.join(tempDir(), 'hooks.jsonl');
    for (const append of [false, true]) {
      const registry = new HookRegistry();
      const recorder = createHookRecorder(registry, file, { append });
      registry.emit('on_session_start', { session_id: String(append) });
      recorder.close();
    }
    expect(linesOf(file).map((line) => line.payload.session_id)).toEqual(['false', 'true']);
    const registry = new HookRegistry();
    createHookRecorder(registry, file).close();
    expect(readFileSync(file, 'utf8')).toBe('');
  });

  it('records only the hooks asked for', () => {
    const registry = new HookRegistry();
    const file = path.join(tempDir(), 'hooks.jsonl');
    const recorder = createHookRecorder(registry, file, { hooks: ['pre_tool_call'] });
    registry.emit('on_session_start', { session_id: 'a' });
    registry.emit('pre_tool_call', { tool_name: 't' });
    recorder.close();
    expect(linesOf(file).map((line) => line.hook)).toEqual(['pre_tool_call']);
  });

  it.skipIf(!existsSync('/dev/full'))('counts a failed write, reports it once and stops, without throwing into the host (needs /dev/full)', () => {
    const registry = new HookRegistry();
    const warnings: string[] = [];
    const logger = { ...silentLogger, warn: (message: string) => warnings.push(message) };
    const recorder = createHookRecorder(registry, '/dev/full', { bufferBytes: 0, logger });
    expect(() => registry.emit('on_session_start', { session_id: 'a' })).not.toThrow();
    expect(() => registry.emit('on_session_start', { session_id: 'b' })).not.toThrow();
    expect(recorder.errors).toBe(1);
    // No line reached the file: none is counted.
    expect(recorder.lines).toBe(0);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('recording stopped');
    expect(() => recorder.close()).not.toThrow();
  });

  it('throws at creation when the file cannot be opened', () => {
    const registry = new HookRegistry();
    expect(() => createHookRecorder(registry, tempDir())).toThrow(/EISDIR/);
  });

  it('records the bundled scenarios the same way twice (reproducible examples)', async () => {
    const dir = tempDir();
    const record = async (name: string) => {
      const registry = new HookRegistry();
      const clock = virtualClock();
      const recorder = createHookRecorder(registry, path.join(dir, `${name}.jsonl`), { clock: () => Math.round(clock.now() * 1e6) });
      await SCENARIOS['agent-session']!({ hooks: registry, clock });
      recorder.close();
      return readFileSync(recorder.path, 'utf8');
    };
    const first = await record('a');
    expect(await record('b')).toBe(first);
    expect(first).toBe(readFileSync(path.join(EXAMPLES, 'agent-session.hooks.jsonl'), 'utf8'));
  });
});

describe('createHookRecorder times', () => {
  it("stamps each line with the host's clock when given one, and with the library's when that clock fails", () => {
    const registry = new HookRegistry();
    const file = path.join(tempDir(), 'hooks.jsonl');
    const readings: unknown[] = [1_764_428_400_040_000, 1_764_428_400_040_001.7, Number.NaN, 'soon'];
    let next = 0;
    const recorder = createHookRecorder(registry, file, {
      clock: () => {
        if (next === readings.length) throw new Error('clock broke');
        return readings[next++] as number;
      },
    });
    for (let i = 0; i < 5; i++) registry.emit('pre_tool_call', { session_id: 's', tool_name: 'read_file', args: { i } });
    recorder.close();
    const times = linesOf(file).map((line: { timestamp: string }) => line.timestamp);
    expect(times.slice(0, 2)).toEqual(['2025-11-29T15:00:00.040+00:00', '2025-11-29T15:00:00.040001+00:00']);
    // NaN, a string and a throw: the library's clock instead, never a line lost.
    for (const time of times.slice(2)) expect(Math.abs(parseTimestamp(time) / 1000 - Date.now())).toBeLessThan(60_000);
    expect(times).toHaveLength(5);
  });
});

describe('createHookRecorder clock slips', () => {
  it('warns once of a clock in seconds and records what it reads', () => {
    const registry = new HookRegistry();
    const file = path.join(tempDir(), 'hooks.jsonl');
    const warnings: string[] = [];
    const logger = { debug() {}, info() {}, warn: (message: string) => void warnings.push(message), error() {} };
    const recorder = createHookRecorder(registry, file, { clock: () => 1_764_428_400, logger });
    registry.emit('on_session_start', { session_id: 'a' });
    registry.emit('on_session_start', { session_id: 'b' });
    recorder.close();
    expect(warnings).toEqual([expect.stringMatching(/^hook recorder: options\.clock answered 1764428400, which as Unix microseconds is 1970-01-01T00:29:24\.428400\+00:00: a clock in milliseconds or seconds\?/)]);
    expect(linesOf(file).map((line: { timestamp: string }) => line.timestamp)).toEqual(['1970-01-01T00:29:24.428400+00:00', '1970-01-01T00:29:24.428400+00:00']);
  });
});

describe('createHookRecorder fidelity', () => {
  it('records a payload the way the plugin reads it, so a replay files it under the same session, and with what the relay records of it', () => {
    const registry = new HookRegistry({ logger: silentLogger });
    const file = path.join(tempDir(), 'hooks.jsonl');
    const recorder = createHookRecorder(registry, file);
    class Ids {
      get session_id(): string {
        return 'from-getter';
      }
    }
    registry.emit('on_session_start', { session_id: 'S', toJSON: () => ({ text: 'no ids', headers: { authorization: 'Bearer sk-secret', accept: 'json' } }) });
    registry.emit('on_session_start', new Ids() as never);
    recorder.close();
    const lines = linesOf(file) as Array<{ payload: Record<string, unknown>; data?: unknown }>;
    // The ids the plugin reads by name; a top-level toJSON's result as `data` (credential headers dropped, as the
    // plugin drops them), which the plugin records in the payload's place; none for a payload without one.
    expect(lines.map((line) => line.payload.session_id)).toEqual(['S', 'from-getter']);
    expect(lines.map((line) => line.data)).toEqual([{ text: 'no ids', headers: { accept: 'json' } }, undefined]);
    expect('data' in lines[1]!).toBe(false);
  });

  // A host's payload with a top-level toJSON: live, the plugin reads its ids by name and records toJSON's result as
  // the data; a replay of its recording recorded the payload's fields instead.
  it.each(backends())('a replay of a payload with a top-level toJSON writes the ATOF lines the live run wrote (%s)', async (backend) => {
    const dir = tempDir();
    const file = path.join(dir, 'described.hooks.jsonl');
    const liveAtof = path.join(dir, 'live');
    const plugin = createNemoRelayPlugin({ backend, env: {}, logger: silentLogger, settings: { atofEnabled: true, atofOutputDirectory: liveAtof, atifEnabled: false } });
    const hooks = new HookRegistry({ logger: silentLogger });
    const recorder = createHookRecorder(hooks, file);
    plugin.register(hooks);
    await plugin.ready;
    hooks.emit('on_session_start', { session_id: 'd1', model: 'gpt-4o' });
    hooks.emit('pre_llm_call', { session_id: 'd1', task_id: 'task-1', turn_id: 'turn-1', user_message: 'Bonjour', toJSON: () => ({ summary: 'a greeting', session_id: 'd1' }) } as never);
    hooks.emit('pre_approval_request', { session_id: 'd1', turn_id: 'turn-1', tool_call_id: 'call_1', command: 'rm a.txt', toJSON: () => 'an approval asked' } as never);
    hooks.emit('on_session_finalize', { session_id: 'd1' });
    await plugin.shutdown({ timeoutMs: 60_000 });
    recorder.close();
    const out = path.join(dir, 'replayed');
    expect((await cliInProcess(['replay', file, '--out', out, '--backend', backend])).code).toBe(0);
    const live = marksOf(liveAtof);
    expect(live.map((mark) => [mark.name, mark.data])).toEqual([
      ['hermes.turn.start', { summary: 'a greeting', session_id: 'd1' }],
      ['hermes.approval.request', 'an approval asked'],
    ]);
    expect(live[0]!.metadata).toMatchObject({ task_id: 'task-1', turn_id: 'turn-1' });
    expect(marksOf(path.join(out, 'atof'))).toEqual(live);
  });
});

/** The marks of a folder's ATOF files other than the session's own, without their times and uuids. */
function marksOf(dir: string): Array<{ name: string; data: unknown; metadata: Record<string, unknown> }> {
  return readdirSync(dir)
    .flatMap((name) => readFileSync(path.join(dir, name), 'utf8').split('\n'))
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as { kind: string; name: string; data: unknown; metadata: Record<string, unknown> })
    .filter((event) => event.kind === 'mark' && !event.name.startsWith('hermes.session.'))
    .map((event) => ({ name: event.name, data: event.data, metadata: event.metadata }));
}
