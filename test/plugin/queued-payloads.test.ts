// A hook the plugin queues while its backend starts (native loading, a
// plugins.toml activating) must record what the same hook records live: the
// host cannot choose when its first hooks arrive. The queue keeps a plain
// copy of each payload; that copy wrote a class payload's getters as data
// (live, the relay's copy keeps own fields only: on native, a `task_id`
// getter was in the events of the first moments of a run and in no later
// one), and turned a value with no fields into its copied properties (an
// array `[1, 2]` into `{"0": 1, "1": 2}`, a `Map` into `{"size": 1}`, a
// thunk handed to a handler into its `arguments`, `caller`, ...), where the
// live path recorded the array, the Map's entries or `null`.
//
// Then a host's payloads the relay cannot simply copy, on both backends,
// read back from the ATOF file: a getter that throws (queued, the copy
// turned it into "[Unserializable: ...]" where no handler saw it fail, so
// the warning the live path gives was never given) and a top-level `toJSON`
// returning another object (live, the relay records that object; queued,
// the copy's own fields were recorded instead).
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/shared/logger.ts';
import { toJson } from '../../src/shared/json.ts';
import { HookRegistry } from '../../src/hooks/registry.ts';
import { TurnIds } from '../../src/hooks/ids.ts';
import { recordingLogger } from '../hooks/helpers.ts';
import { backends } from '../adapters/support.ts';
import { createNemoRelayPlugin } from '../../src/index.ts';
import { createFakeRelay } from '../../src/testing/index.ts';
import { writeObservabilityToml } from '../support/plugins-toml.ts';

class TurnPayload {
  readonly session_id = 'q1';
  readonly turn_id = 't1';
  constructor(readonly user_message: string) {}
  get task_id(): string {
    return `task-of-${this.turn_id}`;
  }
}

/** The same hooks, through a registry and through the handlers; what each relay call was handed, as the relay copies it. */
async function recorded(queued: boolean): Promise<{ queuedHooks: number; calls: unknown[] }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'nrh-queued-'));
  const fake = createFakeRelay();
  const env = queued ? { NEMO_RELAY_HOOKS_PLUGINS_TOML: writeObservabilityToml(dir, { atofDir: path.join(dir, 'atof'), atifDir: path.join(dir, 'atif') }) } : {};
  const plugin = createNemoRelayPlugin({ backend: fake, env, logger: silentLogger });
  const hooks = new HookRegistry({ logger: silentLogger });
  plugin.register(hooks);
  hooks.emit('on_session_start', { session_id: 'q1' });
  hooks.emit('pre_llm_call', new TurnPayload('Hi') as never);
  hooks.emit('pre_approval_request', [1, 2] as never);
  plugin.handlers.pre_approval_request(new Map([['session_id', 'q1']]));
  plugin.handlers.pre_approval_request(new Date(0));
  plugin.handlers.pre_approval_request((() => ({ session_id: 'q1' })) as never);
  plugin.handlers.pre_approval_request(42 as never);
  const queuedHooks = plugin.status().queuedHooks;
  await plugin.flush();
  const calls = fake.calls
    .filter((call) => call.op === 'mark' || call.op === 'pushScope')
    .map((call) => ({ op: call.op, name: call.args.name, data: toJson(call.args.data ?? call.args.input), metadata: toJson(call.args.metadata) }));
  await plugin.shutdown();
  return { queuedHooks, calls };
}

describe('a hook queued while the backend starts records what it records live', () => {
  it('class payloads, arrays, Maps, Dates, functions and primitives: the same data and metadata either way', async () => {
    const live = await recorded(false);
    const queued = await recorded(true);
    expect(live.queuedHooks).toBe(0);
    expect(queued.queuedHooks).toBe(7);
    expect(queued.calls).toEqual(live.calls);
    // Live, a class payload's getter is read for the metadata, and its own fields are the data.
    const turn = live.calls.find((call) => (call as { name: string }).name === 'hermes.turn.start') as { data: unknown; metadata: unknown };
    expect(turn.data).toEqual({ session_id: 'q1', turn_id: 't1', user_message: 'Hi', telemetry_schema_version: 'hermes.observer.v1' });
    expect(turn.metadata).toMatchObject({ session_id: 'q1', task_id: 'task-of-t1', turn_id: 't1' });
    // A value with no fields to read is an empty payload, as the registry delivers one that is not an object.
    expect(live.calls.filter((call) => (call as { name: string }).name === 'hermes.approval.request').map((call) => (call as { data: unknown }).data)).toEqual([{}, {}, {}, {}, {}]);
  });
});

class GuardedTurn {
  readonly session_id = 'q2';
  readonly turn_id = 'turn-guarded';
  readonly user_message = 'Hi';
  get task_id(): string {
    throw new Error('no task here');
  }
}

/** The host's awkward payloads: which each handler reads by name, and what the relay copies. */
function awkwardPayloads(): Array<[name: 'pre_llm_call' | 'pre_approval_request', payload: object]> {
  const turn = new TurnIds({ sessionId: 'q2', taskId: 'task-1', turnId: 'turn-1' });
  // An own field that throws and that no handler reads: the relay's copy writes it as unreadable, silently.
  const secret = Object.defineProperty({ ...turn, user_message: 'Hello' }, 'secret', { enumerable: true, get: () => { throw new Error('vault locked'); } });
  // A correlation field (read by name for the metadata) that throws: recorded from a plain copy, with one warning.
  const approval = Object.defineProperty({ session_id: 'q2', turn_id: 'turn-1', tool_call_id: 'call_1', command: 'rm a.txt' }, 'task_id', { enumerable: true, get: () => { throw new Error('no task id'); } });
  // A top-level toJSON returning another object: its result is the data, the ids are read by name.
  const described = { ...turn, turn_id: 'turn-2', user_message: 'Bonjour', toJSON: () => ({ summary: 'a greeting', session_id: 'q2' }) };
  return [['pre_llm_call', secret], ['pre_llm_call', new GuardedTurn()], ['pre_approval_request', approval], ['pre_llm_call', described]];
}

/** One run of a host emitting them, live (the backend ready) or queued (emitted while it starts); its ATOF lines and warnings. */
async function hostRun(backend: 'memory' | 'native', queued: boolean) {
  const dir = mkdtempSync(path.join(tmpdir(), `nrh-queued-${backend}-`));
  const atofDir = path.join(dir, 'atof');
  const logger = recordingLogger();
  // Memory starts at once unless a plugins.toml activates; native loads asynchronously, so its first hooks queue.
  const env = queued && backend === 'memory' ? { NEMO_RELAY_HOOKS_PLUGINS_TOML: writeObservabilityToml(dir, { atofDir, atifDir: path.join(dir, 'atif') }) } : {};
  const plugin = createNemoRelayPlugin({ backend, env, logger, settings: { atofEnabled: true, atofOutputDirectory: atofDir, atifEnabled: false } });
  const hooks = new HookRegistry({ logger });
  plugin.register(hooks);
  hooks.emit('on_session_start', { session_id: 'q2', model: 'gpt-4o' });
  if (!queued) await plugin.flush();
  for (const [name, payload] of awkwardPayloads()) hooks.emit(name, payload as never);
  const queuedHooks = plugin.status().queuedHooks;
  hooks.emit('on_session_finalize', { session_id: 'q2' });
  await plugin.shutdown({ timeoutMs: 60_000 });
  const lines = readdirSync(atofDir)
    .flatMap((file) => readFileSync(path.join(atofDir, file), 'utf8').split('\n'))
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as { kind: string; name: string; data?: unknown; metadata?: Record<string, unknown> })
    .filter((event) => event.kind === 'mark' && event.metadata?.session_id === 'q2' && event.name !== 'hermes.session.finalize')
    .map((event) => ({ name: event.name, data: event.data, metadata: event.metadata }));
  return { queuedHooks, lines, warnings: logger.at('warn').map((record) => record.message), counters: plugin.status().counters };
}

describe.each(backends())('a host payload queued while the backend starts writes the ATOF lines and warnings it writes live (%s)', (backend) => {
  it('getters that throw and a top-level toJSON returning another object', async () => {
    const live = await hostRun(backend, false);
    const queued = await hostRun(backend, true);
    expect(live.queuedHooks).toBe(0);
    expect(queued.queuedHooks).toBeGreaterThanOrEqual(4);
    expect(queued.lines).toEqual(live.lines);
    expect(queued.warnings).toEqual(live.warnings);
    expect(queued.counters).toEqual(live.counters);

    // What live writes: the unread field as unreadable data, no warning for it.
    const [secret, guarded, approval, described] = live.lines;
    expect(secret!.data).toMatchObject({ secret: '[Unserializable: vault locked]', user_message: 'Hello' });
    expect(secret!.metadata).toMatchObject({ task_id: 'task-1', turn_id: 'turn-1' });
    // The getters a handler reads: recorded from a plain copy, the field unreadable in the metadata.
    expect(guarded!.data).toEqual({ session_id: 'q2', turn_id: 'turn-guarded', user_message: 'Hi', telemetry_schema_version: 'hermes.observer.v1' });
    expect(guarded!.metadata).toMatchObject({ task_id: '[Unserializable: no task here]', turn_id: 'turn-guarded' });
    expect(approval!.name).toBe('hermes.approval.request');
    expect(approval!.data).toMatchObject({ task_id: '[Unserializable: no task id]', tool_call_id: 'call_1' });
    // One warning per hook, with the first reason.
    expect(live.warnings.filter((message) => message.includes('reading the payload failed'))).toEqual([
      expect.stringContaining('pre_llm_call: reading the payload failed (no task here)'),
      expect.stringContaining('pre_approval_request: reading the payload failed (no task id)'),
    ]);
    // toJSON's result is the data; the ids are the fields, read by name.
    expect(described!.data).toEqual({ summary: 'a greeting', session_id: 'q2' });
    expect(described!.metadata).toMatchObject({ task_id: 'task-1', turn_id: 'turn-2' });
  });
});
