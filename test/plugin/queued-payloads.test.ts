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
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/shared/logger.ts';
import { toJson } from '../../src/shared/json.ts';
import { HookRegistry } from '../../src/hooks/registry.ts';
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
